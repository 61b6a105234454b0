// A call's thread that is late now and then (preempted on a busy machine): its scheduler
// catches up the frames it owes, reading the packets that came meanwhile before the frames
// they are due in, so every packet is played and none is lost or late.

import Foundation
import Testing
import ParleyCall
import ParleyCore
import ParleyRTP
import ParleySimulation

private let carloFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia/conversation/carlo.wav")

/// One RTP stream of recorded speech over UDP, sent from the call's own scheduler.
private final class SpeechSender {
    let samples: [Int16]
    var pipeline: AudioSendPipeline
    var transport: UDPTransport
    var frame: [Int16]

    init(samples: [Int16], ssrc: UInt32, to port: UInt16, clock: any MediaClock) throws {
        self.samples = samples
        var c = AudioSendConfiguration()
        c.ssrc = ssrc
        pipeline = try AudioSendPipeline(configuration: c)
        transport = try UDPTransport(peerPort: port, clock: clock)
        frame = [Int16](repeating: 0, count: c.packetSamples)
    }

    /// Sends packet `k` (captured at `start + k * 20 ms`); false past the end of the samples.
    func send(_ k: Int64, start: MonotonicTime) -> Bool {
        let first = Int(k) * frame.count
        guard first + frame.count <= samples.count else { return false }
        for i in frame.indices { frame[i] = samples[first + i] }
        let at = start.advanced(byNanoseconds: k * 20_000_000)
        _ = frame.withUnsafeBufferPointer { pipeline.send($0, capturedAt: at, muted: false, over: &transport) { _ in } }
        return true
    }
}

/// The call's one thread stalls for `stallMs` once a second; returns the remote's statistics
/// and the packets sent.
private func callWithAStallingThread(stallMs: Int64, samples: [Int16]) throws -> (ParticipantAudioStatistics, Int) {
    let clock = VirtualMediaClock()
    let session = CallSession(clock: clock)
    let socket = try UDPTransport(peerPort: 9, clock: clock)
    let sender = try SpeechSender(samples: samples, ssrc: 0xCA71_0001, to: socket.localPort, clock: clock)
    session.addTransport(socket)
    try session.addRemote(RemoteParticipant(id: "carlo", audioSSRC: 0xCA71_0001))
    let scheduler = MediaScheduler(clock: clock)
    var sent = 0
    scheduler.add("send", pacer: try FramePacer(periodNanoseconds: 20e6, origin: session.start, policy: .catchUp)) { frames, _ in
        for k in frames where sender.send(k, start: session.start) { sent += 1 }
    }
    // Once a second, half a second in: the thread is descheduled for `stallMs`.
    scheduler.add("stall", pacer: try FramePacer(periodNanoseconds: 1e9, origin: session.start.advanced(bySeconds: 0.5),
                                                 policy: .dropLate)) { _, _ in
        clock.advance(byNanoseconds: stallMs * 1_000_000)
    }
    try session.attach(to: scheduler)
    scheduler.runUntil(session.start.advanced(bySeconds: Double(samples.count) / 16_000 + 1))
    session.stop()
    return (try #require(session.receiveStatistics(of: "carlo")).audio, sent)
}

@Test func lateTicksOfTheCallsThreadLoseNoAudio() throws {
    let carlo = try RoomParticipant.load(path: carloFile.path, name: "carlo")
    #expect(carlo.sampleRate == 16_000)
    let samples = Array(carlo.samples.prefix(10 * 16_000))
    let (onTime, sentOnTime) = try callWithAStallingThread(stallMs: 0, samples: samples)
    for stallMs: Int64 in [60, 150, 300] {
        let (late, sent) = try callWithAStallingThread(stallMs: stallMs, samples: samples)
        print("a call's thread late by \(stallMs) ms once a second: \(late.framesPlayed) of \(sent) packets played, "
              + "\(late.framesLate) late, \(late.framesLost) lost, concealed "
              + String(format: "%.4f", late.concealmentFraction) + " (on time: "
              + String(format: "%.4f", onTime.concealmentFraction) + "), target delay up to "
              + String(format: "%.0f", late.maximumTargetDelayMs) + " ms")
        #expect(sent == sentOnTime && onTime.framesPlayed == sentOnTime)
        // Every packet plays: the late ones are read before the frames they are due in.
        #expect(late.framesPlayed == sent && late.framesLate == 0 && late.framesLost == 0, "\(stallMs) ms: \(late)")
        #expect(late.isBalanced, "\(late)")
    }
}
