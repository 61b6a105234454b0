import Testing
import ParleyRTP

@Suite struct SequenceAndTimestampUnwrapping {
    @Test func sequenceNumbersUnwrapAcrossTheWrapAndKeepReorderedOrder() {
        var u = SequenceNumberUnwrapper()
        #expect([65534, 65535, 0, 65535, 1, 2].map { u.unwrap($0) } == [65534, 65535, 65536, 65535, 65537, 65538])
        var down = SequenceNumberUnwrapper()
        #expect([1, 0, 65535].map { down.unwrap($0) } == [1, 0, -1])
    }

    @Test func timestampsUnwrapAcrossTheWrap() {
        var u = TimestampUnwrapper()
        let ts: [UInt32] = [0xFFFF_FC40, 0xFFFF_FFFF &- 100, 860, 1820]
        #expect(ts.map { u.unwrap($0) } == [0xFFFF_FC40, 0xFFFF_FF9B, 0x1_0000_035C, 0x1_0000_071C])
    }
}

@Suite struct RFC3550SourceValidation {
    /// Feeds sequence numbers with 20 ms spacing and constant transit; returns the verdicts.
    func feed(_ stats: inout RTPSourceStatistics, _ seqs: [UInt16]) -> [RTPSequenceVerdict] {
        seqs.map { s in
            stats.update(sequenceNumber: s, timestamp: UInt32(s) &* 960,
                         arrivalNanoseconds: Int64(s) * 20_000_000, payloadBytes: 100)
        }
    }

    @Test func aClockRateThatIsNotPositiveIsAnError() throws {
        for rate in [0, -90_000] {
            #expect(throws: RTPError.fieldOutOfRange("clock rate \(rate) Hz is not positive")) {
                try RTPSourceStatistics(clockRate: rate)
            }
        }
        #expect(try RTPSourceStatistics(clockRate: 8_000).counters == RTPReceiveCounters())
    }

    @Test func newSourceIsOnProbationUntilTwoSequentialPackets() throws {
        var s = try RTPSourceStatistics(clockRate: 48_000)
        #expect(feed(&s, [100, 101, 102]) == [.probation, .accepted, .accepted])
        #expect(s.counters.probation == 1)
        #expect(s.received == 2)
        var t = try RTPSourceStatistics(clockRate: 48_000)
        #expect(feed(&t, [100, 200, 201]) == [.probation, .probation, .accepted])
    }

    @Test func lossAndFractionLostAreReportedPerInterval() throws {
        var s = try RTPSourceStatistics(clockRate: 48_000)
        _ = feed(&s, Array(0...9))              // 9 accepted after probation
        _ = feed(&s, [12, 13, 14, 15, 16, 17, 18, 19])  // 10 and 11 lost
        #expect(s.cumulativeLost == 2)
        let r = s.makeReceptionReport(ssrc: 1, nowNanoseconds: 0)
        #expect(r.cumulativeLost == 2)
        #expect(r.extendedHighestSequence == 19)
        #expect(r.fractionLost == UInt8((2 << 8) / 19))
        _ = feed(&s, [20, 21, 22, 23])
        #expect(s.makeReceptionReport(ssrc: 1, nowNanoseconds: 0).fractionLost == 0)
    }

    @Test func wrapIncrementsCyclesAndDuplicatesAreCountedNotAccepted() throws {
        var s = try RTPSourceStatistics(clockRate: 48_000)
        let v = feed(&s, [65533, 65534, 65535, 0, 0, 1, 65535])
        #expect(v == [.probation, .accepted, .accepted, .accepted, .duplicate, .accepted, .duplicate])
        #expect(s.cycles == 65536)
        #expect(s.extendedHighestSequence == 65537)
        #expect(s.counters.duplicates == 2)
        #expect(s.cumulativeLost == 0)
    }

    @Test func reorderedPacketsWithinMisorderAreAcceptedOnce() throws {
        var s = try RTPSourceStatistics(clockRate: 48_000)
        let v = feed(&s, [1, 2, 3, 5, 6, 4, 4, 7])
        #expect(v == [.probation, .accepted, .accepted, .accepted, .accepted, .accepted, .duplicate, .accepted])
        #expect(s.counters.reordered == 1)
        #expect(s.cumulativeLost == 0)
    }

    @Test func aLargeJumpIsDroppedUnlessConfirmedByASequentialPacket() throws {
        var s = try RTPSourceStatistics(clockRate: 48_000)
        _ = feed(&s, [1, 2, 3])
        #expect(feed(&s, [30_000]) == [.badSequence])
        #expect(feed(&s, [4]) == [.accepted])  // the jump was a stray packet
        #expect(feed(&s, [40_000, 40_001]) == [.badSequence, .restarted])
        #expect(s.counters.restarts == 1)
        #expect(s.baseSequence == 40_001)
        #expect(s.cumulativeLost == 0)
    }

    @Test func constantTransitGivesZeroJitterAndAlternatingDelayConverges() throws {
        var s = try RTPSourceStatistics(clockRate: 48_000)
        _ = feed(&s, Array(0..<50))
        #expect(s.jitter == 0)
        // Every other packet 10 ms late: |D| = 480 timestamp units each time; J -> 480.
        var t = try RTPSourceStatistics(clockRate: 48_000)
        for i in 0..<400 {
            let late: Int64 = i % 2 == 1 ? 10_000_000 : 0
            t.update(sequenceNumber: UInt16(i), timestamp: UInt32(i * 960),
                     arrivalNanoseconds: Int64(i) * 20_000_000 + late, payloadBytes: 10)
        }
        #expect(abs(t.jitter - 480) < 1)
        #expect(abs(t.jitterMilliseconds - 10) < 0.05)
    }

    @Test func receptionReportCarriesLSRAndDLSR() throws {
        var s = try RTPSourceStatistics(clockRate: 90_000)
        _ = feed(&s, [1, 2])
        let ntp = NTPTimestamp(secondsSince1900: 3_900_000_000.5)
        s.noteSenderReport(ntp: ntp, arrivalNanoseconds: 1_000_000_000)
        let r = s.makeReceptionReport(ssrc: 9, nowNanoseconds: 1_500_000_000)
        #expect(r.lastSenderReport == ntp.middle32)
        #expect(r.delaySinceLastSenderReport == 32768)  // 0.5 s in 1/65536 s
    }

    @Test func floodOfRandomSequenceNumbersNeverTrapsAndStateStaysBounded() throws {
        var s = try RTPSourceStatistics(clockRate: 48_000)
        var x: UInt32 = 12345
        for _ in 0..<100_000 {
            x = x &* 1_664_525 &+ 1_013_904_223
            s.update(sequenceNumber: UInt16(truncatingIfNeeded: x >> 8), timestamp: x,
                     arrivalNanoseconds: Int64(x), payloadBytes: 1)
        }
        let c = s.counters
        #expect(c.packets + c.duplicates + c.probation + c.badSequence == 100_000)
    }
}

@Suite struct RTCPReports {
    /// A receiver report as pion/rtcp's tests carry it (one report block).
    @Test func receiverReportGoldenVectorParsesAndReserialises() throws {
        let bytes = hex("81c90007 902f9e2e bc5e9a40 00000000 000046e1 00000111 09f36432 00024a79")
        let packets = try bytes.withUnsafeBytes { try RTCPCompound.parse($0) }
        let expected = RTCPPacket.receiverReport(RTCPReceiverReport(ssrc: 0x902F_9E2E, reports: [
            RTCPReceptionReport(ssrc: 0xBC5E_9A40, fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0x46E1,
                                jitter: 273, lastSenderReport: 0x09F3_6432, delaySinceLastSenderReport: 150_137),
        ]))
        #expect(packets == [expected])
        #expect(try RTCPCompound.marshalled(packets) == bytes)
    }

    @Test func senderReportWithNegativeLossAndCompoundRoundTrip() throws {
        let sr = RTCPSenderReport(ssrc: 0x1234_5678, ntpTimestamp: NTPTimestamp(rawValue: 0xE1A2_B3C4_8000_0000),
                                  rtpTimestamp: 960_000, packetCount: 1000, octetCount: 80_000, reports: [
            RTCPReceptionReport(ssrc: 7, fractionLost: 64, cumulativeLost: -3, extendedHighestSequence: 0x1_0005,
                                jitter: 120, lastSenderReport: 0, delaySinceLastSenderReport: 0),
        ])
        let sdes = RTCPPacket.other(packetType: 202, count: 1, body: [0, 0, 0, 7, 1, 3, 0x61, 0x62, 0x63, 0])
        let bytes = try RTCPCompound.marshalled([.senderReport(sr), sdes])
        #expect(Array(bytes[0..<4]) == [0x81, 200, 0, 12])
        #expect(Array(bytes[33..<36]) == [0xFF, 0xFF, 0xFD])  // -3 in 24 bits
        let back = try bytes.withUnsafeBytes { try RTCPCompound.parse($0) }
        #expect(back == [.senderReport(sr), .other(packetType: 202, count: 1, body: [0, 0, 0, 7, 1, 3, 0x61, 0x62, 0x63, 0, 0, 0])])
    }

    @Test func ntpRtpMappingAndRoundTripTime() {
        let sr = RTCPSenderReport(ssrc: 1, ntpTimestamp: NTPTimestamp(secondsSince1900: 1000), rtpTimestamp: 0xFFFF_FF00,
                                  packetCount: 0, octetCount: 0)
        #expect(abs(sr.ntpSeconds(ofRTPTimestamp: 0xFFFF_FF00 &+ 48_000, clockRate: 48_000) - 1001) < 1e-9)
        #expect(abs(sr.ntpSeconds(ofRTPTimestamp: 0xFFFF_FF00 &- 24_000, clockRate: 48_000) - 999.5) < 1e-9)
        let lsr = NTPTimestamp(secondsSince1900: 1000).middle32
        let rr = RTCPReceptionReport(ssrc: 1, fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0,
                                     jitter: 0, lastSenderReport: lsr, delaySinceLastSenderReport: 65536 / 4)
        let rtt = rr.roundTripTime(arrival: NTPTimestamp(secondsSince1900: 1000.35))!
        #expect(abs(rtt - 0.1) < 1e-4)
    }

    @Test func malformedCompoundPacketsThrow() {
        func err(_ s: String) -> RTPError? {
            do { _ = try hex(s).withUnsafeBytes { try RTCPCompound.parse($0) }; return nil } catch { return error as? RTPError }
        }
        #expect(err("81c9") == .truncatedHeader(needed: 4, available: 2))
        #expect(err("41c90001 00000000") == .badVersion(1))
        #expect(err("81c90007 902f9e2e") == .badRTCPLength(declared: 32, available: 8))
        #expect(err("80ca0001 00000000") == .badCompoundStart(packetType: 202))
        #expect(err("82c90001 00000000") == .badReportCount(count: 2, length: 8))
        #expect(err("80c90001 00000000 81") == .truncatedHeader(needed: 4, available: 1))
    }
}
