import Foundation
import Testing
@testable import ParleyCall

private let speechFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia/speech/speech-16k.wav")

@Test func audioPipelineOverRealUDPSocketsPlaysEveryFrameAndDetectsTalking() throws {
    let speech = try RoomParticipant.load(path: speechFile.path, name: "speech")
    let clock = VirtualMediaClock(start: MonotonicTime(seconds: 10))
    var receiveSide = try UDPTransport(peerPort: 9, clock: clock)          // only receives
    var sendSide = try UDPTransport(peerPort: receiveSide.localPort, clock: clock)
    var sender = try AudioSendPipeline()
    var configuration = AudioReceiveConfiguration()
    configuration.callStartNTP = sender.ntpOffset + 10
    var receiver = try AudioReceivePipeline(configuration: configuration,
                                            decoder: try OpusJitterDecoder(sampleRate: 16_000, channels: 1))
    let n = sender.configuration.packetSamples
    let packets = speech.samples.count / n
    var frame = [Int16](repeating: 0, count: n)
    var talks: [Double] = []
    var played = 0
    for f in 0..<(packets * 2 + 30) {
        let t = MonotonicTime(seconds: 10 + Double(f) * 0.01)
        clock.advance(to: t)
        if f % 2 == 0, f / 2 < packets {
            let k = f / 2
            for i in 0..<n { frame[i] = speech.samples[k * n + i] }
            frame.withUnsafeBufferPointer { sender.send($0, capturedAt: t, muted: false, over: &sendSide) { _ in } }
        }
        receiveSide.receive(until: t) { bytes, arrival in receiver.receive(bytes, at: arrival) }
        receiver.playout(at: t, sink: { played += $0.count }, onDecision: { _ in },
                         onTalk: { e in if e.kind == .started { talks.append(e.segmentTime) } })
    }
    #expect(sendSide.sent == sender.statistics.packetsSent + sender.statistics.senderReports)
    #expect(receiveSide.received == sendSide.sent)
    #expect(receiver.statistics.packetsPlayed == packets)
    #expect(receiver.statistics.senderReports == sender.statistics.senderReports)
    #expect(receiver.statistics.malformed == 0)
    #expect(receiver.statistics.lastAudioLevel != nil)
    #expect(!talks.isEmpty, "real speech should start a talk")
    // Media times come from the RTCP mapping: the first talk starts within the audio's span.
    #expect(talks.allSatisfy { $0 >= 0 && $0 < speech.duration })
}

@Test func udpTransportReportsABadAddress() {
    #expect(throws: UDPTransportError.self) {
        _ = try UDPTransport(bindHost: "not-an-address", peerPort: 1, clock: SystemMediaClock())
    }
}
