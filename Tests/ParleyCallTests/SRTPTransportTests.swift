import ParleyCodecs
import Foundation
import Testing
import ParleyRTP
import ParleySRTP
@testable import ParleyCall
import ParleySimulation

private let speechPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia/speech/speech-16k.wav").path

/// Sends through `inner` and keeps a copy of every datagram it sent (what an eavesdropper sees).
private struct Tap: PacketTransport, ~Copyable {
    var inner: UDPTransport
    var seen: [[UInt8]] = []
    mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool {
        seen.append(Array(bytes))
        return inner.send(bytes, at: time)
    }
    mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {
        inner.receive(until: time, body)
    }
    var inFlight: Int { inner.inFlight }
}

/// A call over real UDP with SRTP on both ends while an attacker on the same port replays,
/// tampers with, forges (wrong key) and sends plain packets: every bad datagram is dropped and
/// counted by reason, and the receiver plays exactly the sender's packets.
@Test(arguments: [SRTPSuite.aesCM128HMACSHA1_80, .aeadAES128GCM])
func srtpCallOverUDPDropsEveryInjectedPacketBeforeTheReceiver(_ suite: SRTPSuite) throws {
    let speech = try RoomParticipant.load(path: speechPath, name: "speech")
    let clock = VirtualMediaClock(start: MonotonicTime(seconds: 10))
    let key = try SRTPKey.generate(suite: suite)
    let receiveSide = try SRTPTransport(try UDPTransport(peerPort: 9, clock: clock), sendKey: try SRTPKey.generate(suite: suite),
                                        receiveKey: key)
    let port = receiveSide.base.localPort
    var sendSide = try SRTPTransport(Tap(inner: try UDPTransport(peerPort: port, clock: clock)),
                                     sendKey: key, receiveKey: try SRTPKey.generate(suite: suite))
    var attacker = try UDPTransport(peerPort: port, clock: clock)
    var forger = try SRTPContext(key: try SRTPKey.generate(suite: suite), direction: .outbound)

    var sender = try AudioSendPipeline()
    var configuration = AudioReceiveConfiguration()
    configuration.callStartNTP = sender.ntpOffset + 10
    var receiver = try AudioReceivePipeline(configuration: configuration,
                                            decoder: try OpusJitterDecoder(sampleRate: 16_000, channels: 1))
    let n = sender.configuration.packetSamples
    let packets = min(speech.samples.count / n, 150)
    var frame = [Int16](repeating: 0, count: n)
    var reached = 0
    var injected = (replay: 0, tamper: 0, forged: 0, plain: 0)
    var scratch = [UInt8](repeating: 0, count: 1600)
    for f in 0..<(packets * 2 + 30) {
        let t = MonotonicTime(seconds: 10 + Double(f) * 0.01)
        clock.advance(to: t)
        if f % 2 == 0, f / 2 < packets {
            let k = f / 2
            for i in 0..<n { frame[i] = speech.samples[k * n + i] }
            _ = frame.withUnsafeBufferPointer { sender.send($0, capturedAt: t, muted: false, over: &sendSide) { _ in } }
            // The attacker's datagrams arrive beside the real ones.
            if k >= 5, k % 5 == 0,
               let old = sendSide.base.seen.dropLast().last(where: { !RTPMultiplexing.isRTCP(secondByte: $0[1]) }) {
                old.withUnsafeBytes { _ = attacker.send($0, at: t) }                 // a replay
                injected.replay += 1
                // A tampered copy under a sequence number not seen yet (a bare copy of a
                // received packet is a replay, caught before its tag is checked).
                var bad = old
                let seq = (UInt16(bad[2]) << 8 | UInt16(bad[3])) &+ 1000
                bad[2] = UInt8(seq >> 8)
                bad[3] = UInt8(seq & 0xFF)
                bad[bad.count - 12] ^= 0x20
                bad.withUnsafeBytes { _ = attacker.send($0, at: t) }
                injected.tamper += 1
            }
            if k % 7 == 3 {
                // A well-formed packet protected under another key, and one in the clear, both
                // with the sender's SSRC and the next sequence numbers.
                let plain = try RTPHeader(payloadType: sender.configuration.payloadType, sequenceNumber: UInt16(k + 1),
                                          timestamp: UInt32(k) * 960, ssrc: sender.configuration.ssrc)
                    .marshalled(payload: [UInt8](repeating: 0xFC, count: 40))
                plain.withUnsafeBytes { _ = attacker.send($0, at: t) }
                injected.plain += 1
                scratch.replaceSubrange(0..<plain.count, with: plain)
                let m = try scratch.withUnsafeMutableBytes { try forger.protectRTP($0, length: plain.count) }
                scratch.withUnsafeBytes { _ = attacker.send(UnsafeRawBufferPointer(rebasing: $0[0..<m]), at: t) }
                injected.forged += 1
            }
        }
        receiveSide.receive(until: t) { bytes, arrival in
            reached += 1
            receiver.receive(bytes, at: arrival)
        }
        receiver.playout(at: t, sink: { _ in }, onDecision: { _ in }, onTalk: { _ in })
    }
    let s = receiveSide.statistics
    #expect(reached == sendSide.statistics.protected, "only the sender's datagrams reach the receiver")
    #expect(s.unprotected == sendSide.statistics.protected)
    #expect(s.droppedReplay == injected.replay)
    // A plain packet has no valid tag either: it fails authentication like a tampered or
    // forged one.
    #expect(s.droppedAuthentication == injected.tamper + injected.forged + injected.plain)
    #expect(s.droppedMalformed == 0 && s.droppedOther == 0)
    #expect(receiver.statistics.packetsPlayed == packets)
    #expect(receiver.statistics.malformed == 0)
    #expect(receiver.statistics.senderReports == sender.statistics.senderReports)
}

@Test func srtpTransportDropsMalformedAndOversizedDatagrams() throws {
    let key = try SRTPKey.generate()
    let link = try SRTPTransport(SimulatedLink(scenario: try .room(lossPercent: 0, jitterMs: 0), seed: 1),
                                 sendKey: key, receiveKey: key, maximumDatagram: 200)
    let t = MonotonicTime(seconds: 1)
    // Too large to protect within the transport's limit: refused, not sent.
    let big = [UInt8](repeating: 0x80, count: 300)
    #expect(!big.withUnsafeBytes { link.send($0, at: t) })
    #expect(link.statistics.protectFailures == 1)
    // Garbage and a truncated header reach the link unprotected (sent by the base directly).
    for junk in [[UInt8](), [0x80, 0x60, 0x00], [UInt8](repeating: 0x12, count: 40)] {
        _ = junk.withUnsafeBytes { link.base.send($0, at: t) }
    }
    var reached = 0
    link.receive(until: t.advanced(bySeconds: 1)) { _, _ in reached += 1 }
    #expect(reached == 0)
    #expect(link.statistics.dropped == 3)
    #expect(link.statistics.droppedMalformed == 3)
}
