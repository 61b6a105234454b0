import Foundation
import ParleyRTP
import ParleySRTP
import Testing

/// An RTP packet of `payloadBytes` bytes (a counting pattern) with sequence number `seq`.
func rtpPacket(seq: UInt16, ssrc: UInt32 = 0x1234_5678, payloadBytes: Int = 80,
               extensions: [RTPHeaderExtension] = []) throws -> [UInt8] {
    let header = RTPHeader(payloadType: 111, sequenceNumber: seq, timestamp: UInt32(seq) &* 960, ssrc: ssrc,
                           extensions: extensions)
    return try header.marshalled(payload: (0..<payloadBytes).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seq)) })
}

/// A fixed key for `suite` (bytes 1, 2, 3, ...).
func fixedKey(_ suite: SRTPSuite) throws -> SRTPKey {
    try SRTPKey(suite: suite, material: (0..<suite.keyMaterialLength).map { UInt8($0 + 1) })
}

/// Runs `body` on `packet` copied into a buffer with SRTP's trailer room; returns the new length
/// and the buffer's first bytes up to it.
func inBuffer(_ packet: [UInt8], _ body: (UnsafeMutableRawBufferPointer, Int) throws(SRTPError) -> Int) throws(SRTPError) -> [UInt8] {
    var buffer = packet + [UInt8](repeating: 0, count: SRTPContext.trailerRoom)
    let r: Result<Int, SRTPError> = buffer.withUnsafeMutableBytes { raw in
        do throws(SRTPError) { return .success(try body(raw, packet.count)) } catch { return .failure(error) }
    }
    let n = try r.get()
    return Array(buffer[0..<n])
}

func protect(_ ctx: inout SRTPContext, _ packet: [UInt8], rtcp: Bool = false) throws(SRTPError) -> [UInt8] {
    try inBuffer(packet) { (raw, n) throws(SRTPError) in rtcp ? try ctx.protectRTCP(raw, length: n) : try ctx.protectRTP(raw, length: n) }
}

func unprotect(_ ctx: inout SRTPContext, _ packet: [UInt8], rtcp: Bool = false) throws(SRTPError) -> [UInt8] {
    try inBuffer(packet) { (raw, n) throws(SRTPError) in rtcp ? try ctx.unprotectRTCP(raw, length: n) : try ctx.unprotectRTP(raw, length: n) }
}

/// The SRTPError `body` throws, or nil when it returns (another error is recorded as an issue).
func srtpError(_ body: () throws -> Void) -> SRTPError? {
    do { try body(); return nil } catch let e as SRTPError { return e } catch {
        Issue.record("not an SRTPError: \(error)")
        return nil
    }
}

@Suite struct SRTPKeyTests {
    @Test(arguments: SRTPSuite.allCases)
    func base64RoundTripsAndIsRFC4568Sized(_ suite: SRTPSuite) throws {
        let key = try SRTPKey.generate(suite: suite)
        #expect(key.material.count == suite.keyMaterialLength)
        // 30 bytes of AES-CM key and salt are 40 base64 characters (RFC 4568's examples); 44
        // bytes of AES-256-GCM key and salt are 60 (RFC 7714).
        if !suite.isAEAD { #expect(key.base64.count == 40) }
        if suite == .aeadAES256GCM { #expect(key.base64.count == 60) }
        #expect(try SRTPKey(suite: suite, base64: key.base64) == key)
    }

    @Test func generatedKeysDiffer() throws {
        let a = try SRTPKey.generate(), b = try SRTPKey.generate()
        #expect(a.material != b.material)
        #expect(Set(a.material).count > 8)
    }

    @Test func descriptionNeverShowsTheKey() throws {
        let key = try SRTPKey(suite: .aesCM128HMACSHA1_80, base64: "WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz")
        for text in [key.description, String(describing: key), String(reflecting: key), "\(key)"] {
            #expect(!text.contains(key.base64))
            #expect(!text.contains("WVNf"))
        }
    }

    @Test func badKeysAreTypedErrors() throws {
        #expect(srtpError { _ = try SRTPKey(suite: .aesCM128HMACSHA1_80, base64: "not base64!") } == .malformedKey)
        #expect(srtpError { _ = try SRTPKey(suite: .aesCM128HMACSHA1_80, base64: "AAAA") }
            == .wrongKeyLength(suite: .aesCM128HMACSHA1_80, expected: 30, got: 3))
        #expect(srtpError { _ = try SRTPKey(suite: .aeadAES128GCM, material: [UInt8](repeating: 1, count: 30)) }
            == .wrongKeyLength(suite: .aeadAES128GCM, expected: 28, got: 30))
        #expect(srtpError { _ = try SRTPSuite(name: "AES_CM_128_HMAC_SHA1_81") } == .unknownSuite("AES_CM_128_HMAC_SHA1_81"))
        #expect(try SRTPSuite(name: "AEAD_AES_128_GCM") == .aeadAES128GCM)
        #expect(try SRTPSuite(name: "AEAD_AES_256_GCM") == .aeadAES256GCM)
        #expect(srtpError { _ = try SRTPKey(suite: .aeadAES256GCM, material: [UInt8](repeating: 1, count: 28)) }
            == .wrongKeyLength(suite: .aeadAES256GCM, expected: 44, got: 28))
    }
}

@Suite struct SRTPContextTests {
    @Test(arguments: SRTPSuite.allCases)
    func rtpRoundTripsAndIsEncrypted(_ suite: SRTPSuite) throws {
        let key = try fixedKey(suite)
        var tx = try SRTPContext(key: key, direction: .outbound)
        var rx = try SRTPContext(key: key, direction: .inbound)
        for seq in UInt16(65530)...UInt16(65535) {
            let plain = try rtpPacket(seq: seq)
            let secured = try protect(&tx, plain)
            #expect(secured.count == plain.count + suite.rtpOverhead)
            #expect(Array(secured[0..<12]) == Array(plain[0..<12]))      // the header stays readable
            #expect(Array(secured[12..<plain.count]) != Array(plain[12...]))   // the payload does not
            #expect(try unprotect(&rx, secured) == plain)
        }
        // Past the sequence wrap (the rollover counter advances on both sides).
        let wrapped = try rtpPacket(seq: 2)
        #expect(try unprotect(&rx, try protect(&tx, wrapped)) == wrapped)
    }

    @Test func aes256GCMKeysAllTheirBytes() throws {
        // A key that differs only in the last of AES-256's 32 key bytes (past AES-128's 16)
        // does not open the packet; the key itself does.
        let key = try fixedKey(.aeadAES256GCM)
        var near = key.material
        near[31] ^= 0x01
        var tx = try SRTPContext(key: key, direction: .outbound)
        var rx = try SRTPContext(key: key, direction: .inbound)
        var wrong = try SRTPContext(key: try SRTPKey(suite: .aeadAES256GCM, material: near), direction: .inbound)
        let plain = try rtpPacket(seq: 42)
        let secured = try protect(&tx, plain)
        #expect(secured.count == plain.count + 16)
        #expect(srtpError { _ = try unprotect(&wrong, secured) } == .authenticationFailed)
        #expect(try unprotect(&rx, secured) == plain)
    }

    @Test func headerExtensionsAndCSRCsStayInTheClearAndAuthenticated() throws {
        let key = try fixedKey(.aesCM128HMACSHA1_80)
        var tx = try SRTPContext(key: key, direction: .outbound)
        var rx = try SRTPContext(key: key, direction: .inbound)
        let plain = try rtpPacket(seq: 7, extensions: [RTPHeaderExtension(id: 1, bytes: [0x80 | 40])])
        var secured = try protect(&tx, plain)
        #expect(try unprotect(&rx, secured) == plain)
        var rx2 = try SRTPContext(key: key, direction: .inbound)
        secured[17] ^= 0x01   // the audio level in the extension
        #expect(srtpError { _ = try unprotect(&rx2, secured) } == .authenticationFailed)
    }

    @Test(arguments: SRTPSuite.allCases)
    func tamperedReplayedAndWrongKeyPacketsAreRejected(_ suite: SRTPSuite) throws {
        let key = try fixedKey(suite)
        var tx = try SRTPContext(key: key, direction: .outbound)
        var rx = try SRTPContext(key: key, direction: .inbound)
        let secured = try (0..<4).map { try protect(&tx, try rtpPacket(seq: UInt16(100 + $0))) }

        // Every single-bit flip anywhere in the packet fails authentication (or, for the
        // version bits, the header check).
        for byte in 0..<secured[0].count {
            var bad = secured[0]
            bad[byte] ^= 0x04
            let e = srtpError { _ = try unprotect(&rx, bad) }
            #expect(e == .authenticationFailed || e == .malformedPacket(length: bad.count), "byte \(byte): \(String(describing: e))")
        }
        // The untouched packet still verifies after all those failures, then never again.
        #expect(srtpError { _ = try unprotect(&rx, secured[0]) } == nil)
        #expect(srtpError { _ = try unprotect(&rx, secured[0]) } == .replayed)
        // Out of order inside the window is fine; a second copy is not.
        #expect(srtpError { _ = try unprotect(&rx, secured[2]) } == nil)
        #expect(srtpError { _ = try unprotect(&rx, secured[1]) } == nil)
        #expect(srtpError { _ = try unprotect(&rx, secured[2]) } == .replayed)

        var other = try SRTPContext(key: try SRTPKey.generate(suite: suite), direction: .inbound)
        #expect(srtpError { _ = try unprotect(&other, secured[3]) } == .authenticationFailed)
    }

    @Test func truncatedAndMalformedPacketsAreTypedErrors() throws {
        let key = try fixedKey(.aesCM128HMACSHA1_80)
        var tx = try SRTPContext(key: key, direction: .outbound)
        var rx = try SRTPContext(key: key, direction: .inbound)
        let secured = try protect(&tx, try rtpPacket(seq: 1))
        for n in [0, 1, 11, 12, 21] {
            #expect(srtpError { _ = try unprotect(&rx, Array(secured[0..<n])) } == .malformedPacket(length: n))
        }
        // Cut inside the tag: authentication fails.
        #expect(srtpError { _ = try unprotect(&rx, Array(secured.dropLast(3))) } == .authenticationFailed)
        // An extension header claiming more words than the packet has.
        var overrun = try rtpPacket(seq: 2, payloadBytes: 4)
        overrun[0] |= 0x10
        overrun.replaceSubrange(12..<16, with: [0xBE, 0xDE, 0x00, 0x40])
        #expect(srtpError { _ = try protect(&tx, overrun) } == .malformedPacket(length: overrun.count))
        #expect(srtpError { _ = try unprotect(&rx, overrun + [UInt8](repeating: 0, count: 10)) }
            == .malformedPacket(length: overrun.count + 10))
        // No room for the tag.
        var small = try rtpPacket(seq: 3)
        let n = small.count
        let e = small.withUnsafeMutableBytes { raw in srtpError { _ = try tx.protectRTP(raw, length: n) } }
        #expect(e == .bufferTooSmall(needed: n + SRTPContext.trailerRoom, capacity: n))
    }

    @Test(arguments: SRTPSuite.allCases)
    func rtcpRoundTripsAndRejectsTampering(_ suite: SRTPSuite) throws {
        let key = try fixedKey(suite)
        var tx = try SRTPContext(key: key, direction: .outbound)
        var rx = try SRTPContext(key: key, direction: .inbound)
        let report = RTCPPacket.receiverReport(RTCPReceiverReport(ssrc: 0xCAFE, reports: [
            RTCPReceptionReport(ssrc: 0x1234_5678, fractionLost: 12, cumulativeLost: 3, extendedHighestSequence: 1000,
                                jitter: 40, lastSenderReport: 0, delaySinceLastSenderReport: 0),
        ]))
        var plain = [UInt8](repeating: 0, count: report.marshalSize)
        _ = try plain.withUnsafeMutableBytes { try report.marshal(into: $0) }
        let secured = try protect(&tx, plain, rtcp: true)
        #expect(secured.count == plain.count + suite.rtcpOverhead)
        #expect(try unprotect(&rx, secured, rtcp: true) == plain)
        #expect(srtpError { _ = try unprotect(&rx, secured, rtcp: true) } == .replayed)
        var bad = try protect(&tx, plain, rtcp: true)
        bad[10] ^= 0x80
        #expect(srtpError { _ = try unprotect(&rx, bad, rtcp: true) } == .authenticationFailed)
        #expect(srtpError { _ = try unprotect(&rx, Array(secured[0..<7]), rtcp: true) } == .malformedPacket(length: 7))
    }

    @Test func plainResendNeedsAllowRetransmission() throws {
        let key = try fixedKey(.aesCM128HMACSHA1_80)
        var strict = try SRTPContext(key: key, direction: .outbound)
        let p = try rtpPacket(seq: 9)
        _ = try protect(&strict, p)
        #expect(srtpError { _ = try protect(&strict, p) } == .replayed)
        var lenient = try SRTPContext(key: key, direction: .outbound, allowRetransmission: true)
        let first = try protect(&lenient, p)
        #expect(try protect(&lenient, p) == first)
    }

    @Test func replayWindowOutOfRangeIsAnError() throws {
        let key = try fixedKey(.aesCM128HMACSHA1_80)
        #expect(srtpError { _ = try SRTPContext(key: key, direction: .inbound, replayWindow: 10) } != nil)
        let old = try (0..<200).map { try rtpPacket(seq: UInt16($0)) }
        var tx = try SRTPContext(key: key, direction: .outbound)
        let secured = try old.map { try protect(&tx, $0) }
        var rx = try SRTPContext(key: key, direction: .inbound, replayWindow: 64)
        _ = try unprotect(&rx, secured[199])
        // 100 packets behind with a window of 64: too old.
        #expect(srtpError { _ = try unprotect(&rx, secured[99]) } == .replayed)
        #expect(srtpError { _ = try unprotect(&rx, secured[150]) } == nil)
    }
}
