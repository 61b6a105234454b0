import Foundation
import Testing
import ParleyDevices
import ParleyMedia
import ParleyVoice
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

@Test func toneSourceThroughTheSimulatedNetworkIsWrittenToAWAVFile() throws {
    let clock = VirtualMediaClock(start: MonotonicTime(seconds: 1))
    var tone = ToneSource<Int16>(format: AudioFormat(sampleRate: 16_000, channels: 1), frequency: 440, amplitude: 0.3,
                                 seconds: 2, framesPerRead: 320, clock: clock)
    var sender = try AudioSendPipeline()
    var link = SimulatedLink(scenario: .room(lossPercent: 0, jitterMs: 10), seed: 1)
    var configuration = AudioReceiveConfiguration()
    configuration.callStartNTP = sender.ntpOffset + 1
    var receiver = try AudioReceivePipeline(configuration: configuration,
                                            decoder: try OpusJitterDecoder(sampleRate: 16_000, channels: 1))
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-call-tone-\(getpid()).wav").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    var writer = try WAVWriter(path: path, format: WAVFormat(sampleRate: 16_000, channels: 1))
    var frame = AudioFrame<Int16>(format: AudioFormat(sampleRate: 16_000, channels: 1), samplesPerChannel: 320)
    let scheduler = MediaScheduler(clock: clock)
    var ended = false
    var written = 0
    scheduler.add("capture", pacer: FramePacer(periodNanoseconds: 20_000_000, origin: clock.now(), policy: .catchUp)) { frames, _ in
        for _ in frames where !ended {
            ended = !sender.captureAndSend(from: &tone, into: &frame, over: &link) { _ in }
        }
    }
    let playout = FramePacer(periodNanoseconds: 10_000_000, origin: clock.now(), policy: .catchUp)
    scheduler.add("playout", pacer: playout) { frames, _ in
        for k in frames {
            let t = playout.deadline(ofFrame: k)
            link.receive(until: t) { bytes, arrival in receiver.receive(bytes, at: arrival) }
            receiver.playout(at: t, sink: { pcm in try? writer.write(pcm); written += pcm.count },
                             onDecision: { _ in }, onTalk: { _ in })
        }
    }
    scheduler.runUntil(clock.now().advanced(bySeconds: 2.5))
    try writer.close()
    #expect(sender.statistics.framesCaptured == 100)
    #expect(receiver.statistics.packetsPlayed == 100)
    var reader = try WAVReader(source: FileByteSource(path: path))
    var samples = [Float](repeating: 0, count: 48_000)
    let n = try reader.read(into: &samples)
    #expect(n == written && n > 30_000)
    // The tone survives Opus and the jitter buffer: about 440 Hz by zero crossings, 0.3 peak.
    let body = samples[8_000..<28_000]
    var crossings = 0
    for i in body.indices.dropFirst() where (body[i - 1] < 0) != (body[i] < 0) { crossings += 1 }
    let frequency = Double(crossings) / 2 / (Double(body.count) / 16_000)
    #expect(abs(frequency - 440) < 10, "measured \(frequency) Hz")
    let peak = body.map(abs).max() ?? 0
    #expect(peak > 0.2 && peak < 0.4)
}

/// Talking from the sender's RFC 6464 V bits follows detection on the clean audio, over a
/// lossy, jittery link, and the sender-bit path produces one decision per 10 ms like the VAD.
@Test func talkingFromTheSendersVoiceActivityBitsFollowsTheCleanAudio() throws {
    let speech = try RoomParticipant.load(path: speechFile.path, name: "speech")
    let clock = VirtualMediaClock(start: MonotonicTime(seconds: 1))
    var sender = try AudioSendPipeline()
    var link = SimulatedLink(scenario: .room(lossPercent: 3, jitterMs: 20), seed: 5)
    var local = AudioReceiveConfiguration()
    local.callStartNTP = sender.ntpOffset + 1
    var remote = local
    remote.voiceActivitySource = .senderAudioLevel
    var byVAD = try AudioReceivePipeline(configuration: local, decoder: try OpusJitterDecoder(sampleRate: 16_000, channels: 1))
    var byBits = try AudioReceivePipeline(configuration: remote, decoder: try OpusJitterDecoder(sampleRate: 16_000, channels: 1))
    let n = sender.configuration.packetSamples
    let packets = speech.samples.count / n
    var frame = [Int16](repeating: 0, count: n)
    var vadTalks: [TalkEvent] = [], bitTalks: [TalkEvent] = []
    var vadDecisions = 0, bitDecisions = 0
    for f in 0..<(packets * 2 + 60) {
        let t = MonotonicTime(seconds: 1 + Double(f) * 0.01)
        clock.advance(to: t)
        if f % 2 == 0, f / 2 < packets {
            let k = f / 2
            for i in 0..<n { frame[i] = speech.samples[k * n + i] }
            frame.withUnsafeBufferPointer { sender.send($0, capturedAt: t, muted: false, over: &link) { _ in } }
        }
        link.receive(until: t) { bytes, arrival in
            byVAD.receive(bytes, at: arrival)
            byBits.receive(bytes, at: arrival)
        }
        byVAD.playout(at: t, sink: { _ in }, onDecision: { _ in vadDecisions += 1 }, onTalk: { vadTalks.append($0) })
        byBits.playout(at: t, sink: { _ in }, onDecision: { _ in bitDecisions += 1 }, onTalk: { bitTalks.append($0) })
    }
    #expect(bitDecisions == vadDecisions)
    #expect(bitTalks.contains { $0.kind == .started }, "the sender's bits should start a talk on real speech")
    // Talking from the bits follows what detection finds on the clean audio on at least 90%
    // of the 10 ms frames (the sender judged the clean capture).
    let frames = packets * 2 + 60
    func timeline(_ events: [TalkEvent]) -> [Bool] {
        var on = [Bool](repeating: false, count: frames)
        var start: Double?
        for e in events {
            if e.kind == .started { start = e.segmentTime; continue }
            guard let s = start else { continue }
            for k in max(0, Int(s * 100))..<min(frames, Int(e.segmentTime * 100)) { on[k] = true }
            start = nil
        }
        if let s = start { for k in max(0, Int(s * 100))..<frames { on[k] = true } }
        return on
    }
    // Reference: what offline detection finds on the clean file (media time = file time + 0).
    var tracker = try ParticipantTalkTracker(sampleRate: 16_000)
    var offline: [TalkEvent] = []
    let floats = speech.samples.map { Float($0) / 32768 }
    floats.withUnsafeBufferPointer { tracker.process($0, onEvent: { offline.append($0) }) }
    tracker.finish(onEvent: { offline.append($0) })
    let clean = timeline(offline), byBitsLine = timeline(bitTalks), byVADLine = timeline(vadTalks)
    func agreement(_ x: [Bool], _ y: [Bool]) -> Double { Double(zip(x, y).filter { $0 == $1 }.count) / Double(frames) }
    print("sender bits vs clean offline: \(agreement(byBitsLine, clean)); receiver VAD vs clean offline: \(agreement(byVADLine, clean))")
    #expect(agreement(byBitsLine, clean) >= 0.9, "sender bits agree with the clean-file detection on \(agreement(byBitsLine, clean)) of frames")
    let startLevels: [Float] = bitTalks.filter { $0.kind == .started }.map(\.levelDbov)
    #expect(startLevels.allSatisfy { $0 > -90 && $0 < 0 }, "levels \(startLevels)")
}

/// Over a lossy, jittery link the jitter buffer stretches and conceals; between packet starts
/// the media time of the played stream is extrapolated, which runs ahead when the buffer was
/// waiting or stretching. The next packet corrects it: media times never run backwards, so
/// talking segments map to the right media time.
@Test(arguments: [3, 7, 11])
func mediaTimesStayMonotonicOverAJitteryLink(seed: UInt64) throws {
    let speech = try RoomParticipant.load(path: speechFile.path, name: "speech")
    let clock = VirtualMediaClock(start: MonotonicTime(seconds: 1))
    var sender = try AudioSendPipeline()
    var link = SimulatedLink(scenario: .room(lossPercent: 5, jitterMs: 30), seed: seed)
    var configuration = AudioReceiveConfiguration()
    configuration.callStartNTP = sender.ntpOffset + 1
    var receiver = try AudioReceivePipeline(configuration: configuration,
                                            decoder: try OpusJitterDecoder(sampleRate: 16_000, channels: 1))
    let n = sender.configuration.packetSamples
    let packets = speech.samples.count / n
    var frame = [Int16](repeating: 0, count: n)
    let frames = packets * 2 + 60
    for f in 0..<frames {
        let t = MonotonicTime(seconds: 1 + Double(f) * 0.01)
        clock.advance(to: t)
        if f % 2 == 0, f / 2 < packets {
            for i in 0..<n { frame[i] = speech.samples[(f / 2) * n + i] }
            frame.withUnsafeBufferPointer { sender.send($0, capturedAt: t, muted: false, over: &link) { _ in } }
        }
        link.receive(until: t) { bytes, arrival in receiver.receive(bytes, at: arrival) }
        receiver.playout(at: t, sink: { _ in }, onDecision: { _ in }, onTalk: { _ in })
    }
    let stretched = receiver.jitterStatistics.insertedSamplesForDeceleration + receiver.jitterStatistics.concealedSamples
    #expect(stretched > 0, "the link should have made the buffer stretch or conceal")
    var previous = -Double.infinity
    var backwards: [String] = []
    for k in 0..<min(frames, 1_000) {
        let m = receiver.mediaTime(ofStreamTime: Double(k) * 0.01)
        if m < previous - 1e-6 { backwards.append("frame \(k): -\(previous - m) s") }
        previous = m
    }
    #expect(backwards.isEmpty, "media time ran backwards: \(backwards)")
}
