import Testing
import ParleyRTP

private func isRTCP(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { RTPMultiplexing.isRTCP($0) } }

private func parse(_ bytes: [UInt8], reducedSize: Bool = false) -> Result<[RTCPPacket], RTPError> {
    bytes.withUnsafeBytes { b in
        do throws(RTPError) { return .success(try RTCPCompound.parse(b, reducedSize: reducedSize)) } catch { return .failure(error) }
    }
}

/// The one RTP/RTCP classifier (RFC 5761 4) and the packets it must tell apart.
@Suite struct RTPMultiplexingTests {
    @Test func secondByteRangeIsRTCPExactly() {
        for byte in 0...255 {
            let b = UInt8(byte)
            #expect(RTPMultiplexing.isRTCP(secondByte: b) == (192...223).contains(byte), "second byte \(byte)")
            #expect(isRTCP([0x80, b]) == (192...223).contains(byte))
            var buffer: [UInt8] = [0x80, b, 0, 0]
            buffer.withUnsafeMutableBytes { m in
                #expect(RTPMultiplexing.isRTCP(m, length: 4) == (192...223).contains(byte))
                #expect(!RTPMultiplexing.isRTCP(m, length: 1))
            }
        }
        #expect(RTPMultiplexing.rtcpSecondBytes == 192...223)
        #expect(!isRTCP([]) && !isRTCP([0x80]))
    }

    @Test func rtpIsRTPUnlessItsPayloadTypeCollides() throws {
        // Payload types 64...95 with the marker bit read as RTCP (72...79 as SR...XR): RFC 5761
        // keeps them off a multiplexed port. Every other payload type, marker or not, is RTP.
        for pt in UInt8(0)...127 {
            for marker in [false, true] {
                let bytes = try RTPHeader(marker: marker, payloadType: pt, sequenceNumber: 1, timestamp: 2, ssrc: 3)
                    .marshalled(payload: [0xF8])
                #expect(isRTCP(bytes) == (marker && (64...95).contains(pt)), "payload type \(pt), marker \(marker)")
            }
        }
        let collides = try RTPHeader(marker: true, payloadType: 72, sequenceNumber: 1, timestamp: 2, ssrc: 3).marshalled(payload: [])
        #expect(collides[1] == RTCPPacket.senderReportType)
        let opus = try RTPHeader(marker: true, payloadType: 111, sequenceNumber: 1, timestamp: 2, ssrc: 3).marshalled(payload: [])
        #expect(!isRTCP(opus))
    }

    @Test func compoundPacketIsRTCPAndParses() throws {
        let packets: [RTCPPacket] = [
            .senderReport(RTCPSenderReport(ssrc: 7, ntpTimestamp: NTPTimestamp(rawValue: 1 << 32), rtpTimestamp: 9,
                                           packetCount: 1, octetCount: 2)),
            .other(packetType: 202, count: 1, body: [0, 0, 0, 7, 1, 1, 0x61, 0]),
            .bye(RTCPBye(ssrcs: [7])),
        ]
        let bytes = try RTCPCompound.marshalled(packets)
        #expect(isRTCP(bytes))
        #expect(try parse(bytes).get() == packets)
    }

    @Test func reducedSizeFeedbackFirstIsRTCP() throws {
        // RFC 5506: a lone PLI (206) or generic NACK (205), no report first.
        let pli = try RTCPCompound.marshalled([.pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: 2))])
        let nack = try RTCPCompound.marshalled([.genericNACK(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, lost: [10, 12]))])
        #expect(pli[1] == 206 && nack[1] == 205)
        #expect(isRTCP(pli) && isRTCP(nack))
        #expect(parse(pli) == .failure(.badCompoundStart(packetType: 206)))
        #expect(parse(nack) == .failure(.badCompoundStart(packetType: 205)))
        #expect(try parse(pli, reducedSize: true).get()
                == [.pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: 2))])
        #expect(try parse(nack, reducedSize: true).get()
                == [.genericNACK(RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 2, lost: [10, 12]))])
        // A reduced-size packet still starts with an RTCP type; an RTP header is refused.
        #expect(parse(hex("80 60 00 01 00 00 00 01"), reducedSize: true) == .failure(.badCompoundStart(packetType: 0x60)))
        // A compound packet parses the same either way.
        let rr = try RTCPCompound.marshalled([.receiverReport(RTCPReceiverReport(ssrc: 1))] + [.pictureLossIndication(
            RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: 2))])
        #expect(try parse(rr).get() == parse(rr, reducedSize: true).get())
    }

    @Test func byeRoundTripsWithReason() throws {
        let bye = RTCPBye(ssrcs: [0x1122_3344, 0x5566_7788], reason: "camera off")
        let packets: [RTCPPacket] = [.receiverReport(RTCPReceiverReport(ssrc: 0x1122_3344)), .bye(bye)]
        let bytes = try RTCPCompound.marshalled(packets)
        // RR (8) + BYE header (4) + 2 SSRCs (8) + length byte and 10 bytes of reason, padded to 12.
        #expect(bytes.count == 8 + 4 + 8 + 12)
        #expect(Array(bytes[8..<12]) == [0x82, 203, 0, 5])
        #expect(bytes[20] == 10 && Array(bytes[21..<31]) == Array("camera off".utf8) && bytes[31] == 0)
        #expect(try parse(bytes).get() == packets)
        var seen: [UInt32] = []
        try bytes.withUnsafeBytes { b in
            try RTCPCompound.forEachPacket(in: b) { v in
                if v.isBye { v.forEachByeSSRC { seen.append($0) } }
            }
        }
        #expect(seen == [0x1122_3344, 0x5566_7788])
        // No reason: only the sources; an empty reason sends none either.
        let bare = try RTCPCompound.marshalled([.bye(RTCPBye(ssrcs: [5]))])
        #expect(bare == [0x81, 203, 0, 1, 0, 0, 0, 5])
        #expect(try RTCPCompound.marshalled([.bye(RTCPBye(ssrcs: [5], reason: ""))]) == bare)
        #expect(try parse(bare, reducedSize: true).get() == [.bye(RTCPBye(ssrcs: [5]))])
    }

    @Test func malformedByeIsRefused() throws {
        let rr = hex("80 c9 00 01 00 00 00 01")
        // Three sources announced, two present.
        #expect(parse(rr + hex("83 cb 00 02 00 00 00 05 00 00 00 06")) == .failure(.badReportCount(count: 3, length: 12)))
        // A reason of 9 bytes where 3 follow its length byte.
        #expect(parse(rr + hex("81 cb 00 02 00 00 00 05 09 61 62 63")) == .failure(.badByeReason(length: 9, available: 3)))
        // Too many sources or too long a reason cannot be written.
        #expect(throws: RTPError.self) { try RTCPCompound.marshalled([.bye(RTCPBye(ssrcs: Array(0..<32)))]) }
        #expect(throws: RTPError.self) {
            try RTCPCompound.marshalled([.bye(RTCPBye(ssrcs: [1], reason: String(repeating: "x", count: 256)))])
        }
        // 255 bytes is the longest reason.
        let longest = RTCPBye(ssrcs: [1], reason: String(repeating: "x", count: 255))
        #expect(try parse(RTCPCompound.marshalled([.bye(longest)]), reducedSize: true).get() == [.bye(longest)])
    }
}
