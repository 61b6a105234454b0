import Foundation
import Testing
import ParleyCall
import ParleyCore
import ParleyDevices
import ParleyEcho
import ParleyNetwork
import ParleySimulation

// A call on a laptop without a headset: the session plays a remote participant, and the local
// microphone hears only that playout through a room (ParleySimulation's EchoPath), fed back in a
// closed loop on a virtual clock.

private let conversationDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia/conversation")

/// What the loudspeaker played (the session's playout, mixed), shared with the microphone.
private final class Loudspeaker {
    var played: [Float] = []
}

/// A microphone that hears the loudspeaker through a room and nothing else: 20 ms reads.
private struct RoomMicrophone: AudioCaptureSource {
    typealias Sample = Int16
    let speaker: Loudspeaker
    let taps: [(index: Int, gain: Float)]
    let format = try! AudioFormat(sampleRate: 16_000, channels: 1)
    var framesPerRead: Int { 320 }
    var position = 0
    let length: Int

    mutating func read(into frame: inout AudioFrame<Int16>) throws(Never) -> Bool {
        guard position < length else { return false }
        let played = speaker.played
        for i in 0..<320 {
            var v: Float = 0
            for (d, g) in taps {
                let k = position + i - d
                if k >= 0 && k < played.count { v += g * played[k] }
            }
            frame.samples[i] = Int16(max(-32_768, min(32_767, (0.3 * v).rounded())))
        }
        frame.captureTime = MonotonicTime(nanoseconds: Int64(position) * 62_500)
        position += 320
        return true
    }
}

private func loadSamples(_ name: String) throws -> [Int16] {
    try RoomParticipant.load(path: conversationDirectory.appendingPathComponent(name + ".wav").path, name: name).samples
}

/// Runs the loop for 16 s with the session's playout `playout`; returns the local participant's
/// talk onsets, the remote's, and the canceller's counters.
private func runCall(playout: AudioPlayout) throws -> (local: Int, remote: Int, echo: EchoCancellerStatistics?) {
    let armelle = try loadSamples("armelle"), carlo = try loadSamples("carlo")
    let far = zip(armelle, carlo).map { Int16(clamping: Int32($0) + Int32($1)) }
    let clock = VirtualMediaClock()
    var settings = CallSessionConfiguration()
    settings.playout = playout
    // The link carries the local participant's packets too: only the declared remote is heard.
    settings.admitsUndeclaredRemotes = false
    let session = CallSession(configuration: settings, clock: clock)
    try session.addRemote(RemoteParticipant(id: "far", audioSSRC: 0x2222))
    let link = try SimulatedLink(scenario: try .room(lossPercent: 0, jitterMs: 5), seed: 4)
    let id = session.addTransport(link)
    let speaker = Loudspeaker()
    session.onAudio = { _, pcm in speaker.played.append(contentsOf: pcm.map { Float($0) }) }
    // The playout reaches the microphone 60 ms later, through a room of RT60 0.3 s.
    let taps = EchoPath(delayMs: 60, rt60: 0.3, seed: 5).taps(sampleRate: 16_000)
    var send = AudioSendConfiguration()
    send.ssrc = 0x1111
    try session.addLocal(id: "me", source: RoomMicrophone(speaker: speaker, taps: taps, length: far.count),
                         configuration: send, sendingOn: id)
    var handle = session.transportHandle(id)!
    var remote = try AudioSendPipeline(configuration: { var c = AudioSendConfiguration(); c.ssrc = 0x2222; return c }())
    var events: [CallEvent] = []
    session.onEvent = { events.append($0) }
    let scheduler = MediaScheduler(clock: clock)
    scheduler.add("remote", pacer: try FramePacer(periodNanoseconds: 20e6, origin: session.start, policy: .catchUp)) { frames, now in
        for k in frames where Int(k + 1) * 320 <= far.count {
            _ = far.withUnsafeBufferPointer { f in
                remote.send(UnsafeBufferPointer(rebasing: f[(Int(k) * 320)..<(Int(k + 1) * 320)]), capturedAt: now, muted: false,
                            over: &handle) { _ in }
            }
        }
    }
    try session.attach(to: scheduler)
    scheduler.runUntil(session.start.advanced(bySeconds: Double(far.count) / 16_000))
    let echo = session.localEchoStatistics
    session.stop()
    func starts(_ who: (ParticipantID) -> Bool) -> Int {
        events.filter { e in if case .talkingStarted = e.kind, let p = e.participant, who(p) { return true } else { return false } }.count
    }
    return (starts { $0 == "me" }, starts { $0 != "me" }, echo)
}

@Test func theFarEndsEchoStartsNoLocalTalkWithALoudspeaker() throws {
    let heard = try runCall(playout: .loudspeaker)
    let echo = try #require(heard.echo)
    let unprotected = try runCall(playout: .file)
    print("loudspeaker: local talks \(heard.local), remote \(heard.remote), \(echo); file: local talks \(unprotected.local)")
    #expect(heard.remote >= 3)
    #expect(heard.local == 0)
    #expect(echo.framesProcessed >= 1_500 && echo.samplesPlayed >= 16_000 * 15)
    #expect(echo.farEndFrames > 300 && echo.echoOnlyFrames > 300)
    // Without the canceller (a file playout), the same echo is taken for the local user's talk.
    #expect(unprotected.echo == nil)
    #expect(unprotected.local >= 2)
}

@Test func echoCancellationNeedsTheCaptureAtThePlayoutRate() throws {
    var settings = CallSessionConfiguration()
    settings.echoCancellation = true
    settings.receive.sampleRate = 48_000
    let session = CallSession(configuration: settings, clock: VirtualMediaClock())
    let id = session.addTransport(try SimulatedLink(scenario: try .room(lossPercent: 0, jitterMs: 0), seed: 1))
    #expect(throws: EchoCancellerError.sampleRate(48_000)) {
        try session.addLocal(id: "me", source: ToneSource<Int16>(format: try AudioFormat(sampleRate: 16_000, channels: 1)), sendingOn: id)
    }
    #expect(CallSessionConfiguration().cancelsEcho == false)
    var loud = CallSessionConfiguration()
    loud.playout = .loudspeaker
    #expect(loud.cancelsEcho)
    loud.echoCancellation = false
    #expect(!loud.cancelsEcho)
}
