import Testing
@testable import ParleyRTP

private func parseRTCP(_ bytes: [UInt8]) throws(RTPError) -> [RTCPPacket] {
    let r: Result<[RTCPPacket], RTPError> = bytes.withUnsafeBytes { b in
        do throws(RTPError) { return .success(try RTCPCompound.parse(b)) } catch { return .failure(error) }
    }
    return try r.get()
}

private func rtcpError(_ bytes: [UInt8]) -> RTPError? {
    do { _ = try parseRTCP(bytes); return nil } catch { return error }
}

/// What the allocation-free walk sees in `bytes`.
private struct Walked {
    var kinds: [String] = []
    var lost: [UInt16] = []
    var blocks: [RTCPReceptionReport] = []
    var feedbackSSRCs: [UInt32] = []
    var error: RTPError?
}

private func walk(_ bytes: [UInt8]) -> Walked {
    var w = Walked()
    bytes.withUnsafeBytes { b in
        do {
            try RTCPCompound.forEachPacket(in: b) { v in
                w.kinds.append(v.isGenericNACK ? "nack" : v.isPictureLossIndication ? "pli" : "\(v.packetType)")
                v.forEachNACKItem { $0.forEachLost { w.lost.append($0) } }
                v.forEachReportBlock { w.blocks.append($0) }
                if v.isGenericNACK || v.isPictureLossIndication { w.feedbackSSRCs += [v.senderSSRC ?? 0, v.mediaSSRC ?? 0] }
            }
        } catch {
            w.error = error as? RTPError
        }
    }
    return w
}

@Suite struct RTCPFeedbackMessages {
    /// An empty RR (as a feedback-only compound packet starts) from SSRC 0x11223344.
    let emptyRR = hex("80 c9 00 01 11 22 33 44")

    @Test func genericNACKParsesFromItsRFC4585Layout() throws {
        // PT 205, FMT 1, length 3: sender, media, PID 0x1234 with BLP 0b1000_0000_0000_0101.
        let bytes = emptyRR + hex("81 cd 00 03 11 22 33 44 55 66 77 88 12 34 80 05")
        let packets = try parseRTCP(bytes)
        #expect(packets.count == 2)
        let nack = RTCPGenericNACK(senderSSRC: 0x1122_3344, mediaSSRC: 0x5566_7788,
                                   items: [RTCPNACKItem(packetID: 0x1234, lostBitmask: 0x8005)])
        #expect(packets[1] == .genericNACK(nack))
        #expect(nack.lostSequenceNumbers == [0x1234, 0x1235, 0x1237, 0x1244])
        #expect(try RTCPCompound.marshalled(packets) == bytes)
    }

    @Test func pictureLossIndicationRoundTrips() throws {
        let bytes = emptyRR + hex("81 ce 00 02 11 22 33 44 55 66 77 88")
        let packets = try parseRTCP(bytes)
        #expect(packets == [.receiverReport(RTCPReceiverReport(ssrc: 0x1122_3344)),
                            .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 0x1122_3344, mediaSSRC: 0x5566_7788))])
        #expect(try RTCPCompound.marshalled(packets) == bytes)
    }

    @Test func compoundWithReportNACKAndPLIRoundTrips() throws {
        let block = RTCPReceptionReport(ssrc: 9, fractionLost: 26, cumulativeLost: 12, extendedHighestSequence: 0x1_0010,
                                        jitter: 300, lastSenderReport: 0xABCD_0000, delaySinceLastSenderReport: 0x8000)
        let packets: [RTCPPacket] = [
            .receiverReport(RTCPReceiverReport(ssrc: 5, reports: [block])),
            .genericNACK(RTCPGenericNACK(senderSSRC: 5, mediaSSRC: 9, lost: [65_535, 0, 3, 40, 41])),
            .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 5, mediaSSRC: 9)),
        ]
        let bytes = try RTCPCompound.marshalled(packets)
        #expect(bytes.count == 32 + 12 + 2 * 4 + 12)
        #expect(try parseRTCP(bytes) == packets)
        // The allocation-free walk sees the same packets.
        let w = walk(bytes)
        #expect(w.error == nil)
        let (kinds, lost, blocks) = (w.kinds, w.lost, w.blocks)
        #expect(w.feedbackSSRCs == [5, 9, 5, 9])
        #expect(kinds == ["201", "nack", "pli"])
        #expect(lost == [65_535, 0, 3, 40, 41])
        #expect(blocks == [block])
    }

    @Test func paddedFeedbackParsesAndOtherFormatsStayOther() throws {
        // PLI as the last packet with 4 bytes of padding (P bit, pad count 4).
        let padded = emptyRR + hex("a1 ce 00 03 00 00 00 01 00 00 00 02 00 00 00 04")
        #expect(try parseRTCP(padded)[1] == .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: 2)))
        // FIR (PT 206, FMT 4) and TMMBR (PT 205, FMT 3) are not parsed further.
        let fir = emptyRR + hex("84 ce 00 04 00 00 00 01 00 00 00 00 00 00 00 02 07 00 00 00")
        #expect(try parseRTCP(fir)[1] == .other(packetType: 206, count: 4, body: hex("00 00 00 01 00 00 00 00 00 00 00 02 07 00 00 00")))
        let tmmbr = emptyRR + hex("83 cd 00 02 00 00 00 01 00 00 00 02")
        if case .other(205, 3, _) = try parseRTCP(tmmbr)[1] {} else { Issue.record("TMMBR should stay .other") }
    }

    @Test func malformedFeedbackThrowsTypedErrors() {
        // NACK without FCI.
        #expect(rtcpError(emptyRR + hex("81 cd 00 02 00 00 00 01 00 00 00 02"))
                == .badFeedbackLength(packetType: 205, format: 1, length: 8))
        // NACK shorter than its SSRCs.
        #expect(rtcpError(emptyRR + hex("81 cd 00 01 00 00 00 01"))
                == .badFeedbackLength(packetType: 205, format: 1, length: 4))
        // NACK whose padding leaves half an FCI entry.
        #expect(rtcpError(emptyRR + hex("a1 cd 00 03 00 00 00 01 00 00 00 02 00 07 00 02"))
                == .badFeedbackLength(packetType: 205, format: 1, length: 10))
        // PLI with FCI.
        #expect(rtcpError(emptyRR + hex("81 ce 00 03 00 00 00 01 00 00 00 02 00 00 00 00"))
                == .badFeedbackLength(packetType: 206, format: 1, length: 12))
        // PLI with no body at all.
        #expect(rtcpError(emptyRR + hex("81 ce 00 00")) == .badFeedbackLength(packetType: 206, format: 1, length: 0))
        // A NACK first in the compound.
        #expect(rtcpError(hex("81 cd 00 03 00 00 00 01 00 00 00 02 00 07 00 00")) == .badCompoundStart(packetType: 205))
        // Length past the datagram.
        #expect(rtcpError(emptyRR + hex("81 cd 00 09 00 00 00 01 00 00 00 02 00 07 00 00"))
                == .badRTCPLength(declared: 40, available: 16))
        // A bad packet later in the compound hides the whole datagram from the walk.
        let bad = emptyRR + hex("81 ce 00 02 00 00 00 01 00 00 00 02") + hex("81 cd 00 02 00 00 00 01 00 00 00 02")
        let w = walk(bad)
        #expect(w.error == .badFeedbackLength(packetType: 205, format: 1, length: 8) && w.kinds.isEmpty)
    }

    @Test func marshallingRefusesNACKsWithoutEntriesAndSmallBuffers() {
        let empty = RTCPPacket.genericNACK(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, items: []))
        #expect(throws: RTPError.fieldOutOfRange("generic NACK without entries")) { try RTCPCompound.marshalled([empty]) }
        var small = [UInt8](repeating: 0, count: 11)
        let r: RTPError? = small.withUnsafeMutableBytes { b in
            do throws(RTPError) { _ = try RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: 2).marshal(into: b); return nil }
            catch { return error }
        }
        #expect(r == .bufferTooSmall(needed: 12, available: 11))
        let huge = RTCPPacket.other(packetType: 204, count: 0, body: [UInt8](repeating: 1, count: 4 * 65_536))
        #expect(throws: RTPError.self) { try RTCPCompound.marshalled([huge]) }
    }
}

@Suite struct NACKItemCovering {
    @Test func runsWithin16PacketsShareOneEntry() {
        #expect(RTCPGenericNACK.items(covering: [100]) == [RTCPNACKItem(packetID: 100)])
        #expect(RTCPGenericNACK.items(covering: [100, 116]) == [RTCPNACKItem(packetID: 100, lostBitmask: 0x8000)])
        #expect(RTCPGenericNACK.items(covering: [100, 117]) == [RTCPNACKItem(packetID: 100), RTCPNACKItem(packetID: 117)])
        #expect(RTCPGenericNACK.items(covering: Array(100...133)).count == 2)
        #expect(RTCPGenericNACK.items(covering: Array(100...134)).count == 3)
        #expect(RTCPGenericNACK.items(covering: []) == [])
    }

    @Test func orderAndRepeatsDoNotMatterAndWrapsAreOneRun() {
        #expect(RTCPGenericNACK.items(covering: [5, 3, 3, 1]) == RTCPGenericNACK.items(covering: [1, 3, 5]))
        #expect(RTCPGenericNACK.items(covering: [0, 65_535, 2, 65_534])
                == [RTCPNACKItem(packetID: 65_534, lostBitmask: 0b1011)])
    }

    @Test func randomSetsRoundTripWithTheFewestEntries() {
        var seeded = SplitMix(seed: 42)
        for _ in 0..<500 {
            let base = UInt16(truncatingIfNeeded: seeded.next())
            let span = 1 + Int(seeded.next() % 300)
            let count = 1 + Int(seeded.next() % UInt64(span))
            var lost = Set<UInt16>()
            for _ in 0..<count { lost.insert(base &+ UInt16(seeded.next() % UInt64(span))) }
            let items = RTCPGenericNACK.items(covering: lost)
            let nack = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, items: items)
            #expect(Set(nack.lostSequenceNumbers) == lost)
            // Lower bound: a greedy sweep over the ordered offsets is optimal for fixed spans.
            let offsets = lost.map { Int($0 &- base) }.sorted()
            var optimal = 0
            var coveredTo = -1
            for o in offsets where o > coveredTo { optimal += 1; coveredTo = o + 16 }
            #expect(items.count == optimal)
            let back = try? parseRTCP(RTCPCompound.marshalled([.receiverReport(RTCPReceiverReport(ssrc: 1)), .genericNACK(nack)]))
            #expect(back?.last == .genericNACK(nack))
        }
    }
}

/// SplitMix64: a seeded generator for the tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
