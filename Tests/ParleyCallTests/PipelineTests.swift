import Foundation
import Testing
import ParleyCodecs
import ParleyDevices
import ParleyMedia
import ParleyRTP
import ParleyVoice
@testable import ParleyCall
import ParleyDetect
import ParleySimulation

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
            _ = frame.withUnsafeBufferPointer { sender.send($0, capturedAt: t, muted: false, over: &sendSide) { _ in } }
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

@Test func aSendFrameOfTheWrongShapeIsRefusedOrReshapedNotATrap() throws {
    let clock = VirtualMediaClock(start: MonotonicTime(seconds: 1))
    var sender = try AudioSendPipeline()
    var link = try SimulatedLink(scenario: try .room(lossPercent: 0, jitterMs: 0), seed: 1)
    let n = sender.configuration.packetSamples
    let short = [Int16](repeating: 0, count: n - 1)
    let refused = short.withUnsafeBufferPointer { sender.send($0, capturedAt: clock.now(), muted: false, over: &link) { _ in } }
    #expect(!refused && sender.statistics.framesRefused == 1 && sender.statistics.framesCaptured == 0)
    // captureAndSend replaces a frame of another rate with one that fits, then sends.
    var tone = ToneSource<Int16>(format: try AudioFormat(sampleRate: 16_000, channels: 1), frequency: 440, amplitude: 0.3,
                                 seconds: 1, framesPerRead: n, clock: clock)
    var frame = AudioFrame<Int16>(format: try AudioFormat(sampleRate: 8_000, channels: 2), samplesPerChannel: 7)
    let sent = sender.captureAndSend(from: &tone, into: &frame, over: &link) { _ in }
    #expect(sent)
    #expect(frame.format == (try AudioFormat(sampleRate: 16_000, channels: 1)) && frame.samplesPerChannel == n)
    #expect(sender.statistics.framesCaptured == 1 && sender.statistics.packetsSent == 1)
}

@Test func toneSourceThroughTheSimulatedNetworkIsWrittenToAWAVFile() throws {
    let clock = VirtualMediaClock(start: MonotonicTime(seconds: 1))
    var tone = ToneSource<Int16>(format: try AudioFormat(sampleRate: 16_000, channels: 1), frequency: 440, amplitude: 0.3,
                                 seconds: 2, framesPerRead: 320, clock: clock)
    var sender = try AudioSendPipeline()
    var link = try SimulatedLink(scenario: try .room(lossPercent: 0, jitterMs: 10), seed: 1)
    var configuration = AudioReceiveConfiguration()
    configuration.callStartNTP = sender.ntpOffset + 1
    var receiver = try AudioReceivePipeline(configuration: configuration,
                                            decoder: try OpusJitterDecoder(sampleRate: 16_000, channels: 1))
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-call-tone-\(getpid()).wav").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    var writer = try WAVWriter(path: path, format: WAVFormat(sampleRate: 16_000, channels: 1))
    var frame = AudioFrame<Int16>(format: try AudioFormat(sampleRate: 16_000, channels: 1), samplesPerChannel: 320)
    let scheduler = MediaScheduler(clock: clock)
    var ended = false
    var written = 0
    scheduler.add("capture", pacer: try FramePacer(periodNanoseconds: 20_000_000, origin: clock.now(), policy: .catchUp)) { frames, _ in
        for _ in frames where !ended {
            ended = !sender.captureAndSend(from: &tone, into: &frame, over: &link) { _ in }
        }
    }
    let playout = try FramePacer(periodNanoseconds: 10_000_000, origin: clock.now(), policy: .catchUp)
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
    var link = try SimulatedLink(scenario: try .room(lossPercent: 3, jitterMs: 20), seed: 5)
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
            _ = frame.withUnsafeBufferPointer { sender.send($0, capturedAt: t, muted: false, over: &link) { _ in } }
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
    var link = try SimulatedLink(scenario: try .room(lossPercent: 5, jitterMs: 30), seed: seed)
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
            _ = frame.withUnsafeBufferPointer { sender.send($0, capturedAt: t, muted: false, over: &link) { _ in } }
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

/// A sender without the RFC 6464 audio level (ffmpeg, GStreamer): with the default talking
/// source (the sender's V bits) the receiver falls back to its own VAD, and finds the same
/// talks as a receiver set to `.local`.
@Test func aStreamWithoutTheAudioLevelFallsBackToTheLocalVAD() throws {
    let speech = try RoomParticipant.load(path: speechFile.path, name: "speech")
    var encoder = try OpusEncoder(sampleRate: 16_000, channels: 1, application: .voip)
    var header = RTPHeader(payloadType: OpusRTP.defaultPayloadType, sequenceNumber: 1, timestamp: 0, ssrc: 7)
    var packets: [[UInt8]] = []
    var payload = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
    var datagram = [UInt8](repeating: 0, count: 1_500)
    for start in stride(from: 0, to: speech.samples.count - 320, by: 320) {
        let n = try speech.samples[start..<(start + 320)].withUnsafeBufferPointer { p in
            try payload.withUnsafeMutableBytes { try encoder.encode(p, into: $0) }
        }
        let length = try payload.withUnsafeBytes { p in
            try datagram.withUnsafeMutableBytes { try header.marshal(payload: UnsafeRawBufferPointer(rebasing: p[0..<n]), into: $0) }
        }
        packets.append(Array(datagram[0..<length]))
        header.sequenceNumber &+= 1
        header.timestamp &+= 960
    }
    func talks(_ source: VoiceActivitySource?) throws -> [Double] {
        var c = AudioReceiveConfiguration()
        if let source { c.voiceActivitySource = source }
        var receiver = try AudioReceivePipeline(configuration: c, decoder: try OpusJitterDecoder(sampleRate: 16_000, channels: 1))
        var starts: [Double] = []
        for f in 0..<(packets.count * 2 + 100) {
            let t = MonotonicTime(seconds: 1 + Double(f) * 0.01)
            if f % 2 == 0, f / 2 < packets.count { packets[f / 2].withUnsafeBytes { receiver.receive($0, at: t) } }
            receiver.playout(at: t, sink: { _ in }, onDecision: { _ in }, onTalk: { e in if e.kind == .started { starts.append(e.time) } })
        }
        return starts
    }
    #expect(AudioReceiveConfiguration().voiceActivitySource == .senderAudioLevel)
    let byDefault = try talks(nil)
    #expect(!byDefault.isEmpty, "no talk found on a stream without the audio level")
    #expect(byDefault == (try talks(.local)))
}

/// Datagrams a pipeline sent, kept in order.
private struct CollectingTransport: PacketTransport {
    var datagrams: [[UInt8]] = []
    mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool { datagrams.append(Array(bytes)); return true }
    mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {}
    var inFlight: Int { 0 }
}

/// With DTX, silence is not sent (the timestamps jump over it, the sequence numbers do not)
/// and the first packet after it carries the marker; a stereo sender encodes both channels.
@Test func dtxSkipsSilenceAndMarksTheNextTalkspurtAndStereoIsEncoded() throws {
    let speech = try RoomParticipant.load(path: speechFile.path, name: "speech")
    for channels in [1, 2] {
        var c = AudioSendConfiguration()
        c.dtx = true
        c.channels = channels
        var sender = try AudioSendPipeline(configuration: c)
        var transport = CollectingTransport()
        let n = c.packetSamples
        var frame = [Int16](repeating: 0, count: n * channels)
        // 2 s of silence, then 2 s of speech.
        for k in 0..<200 {
            for i in 0..<n {
                let v = k < 100 ? 0 : speech.samples[(k - 100) * n + i + 16_000]
                for ch in 0..<channels { frame[i * channels + ch] = v }
            }
            _ = frame.withUnsafeBufferPointer { sender.send($0, capturedAt: MonotonicTime(seconds: Double(k) * 0.02), muted: false,
                                                        over: &transport) { _ in } }
        }
        let rtp = transport.datagrams.filter { !RTPMultiplexing.isRTCP(secondByte: $0[1]) }   // RTCP sender reports aside
        let views = rtp.map { d in d.withUnsafeBytes { b in (try! RTPPacketView(parsing: b)).headerFields } }
        #expect(sender.statistics.dtxFrames > 50, "channels \(channels): \(sender.statistics)")
        #expect(sender.statistics.packetsSent + sender.statistics.dtxFrames == 200)
        #expect(views.first?.marker == true)
        // Consecutive sequence numbers; a timestamp jump with the marker where silence was skipped.
        for (a, b) in zip(views, views.dropFirst()) {
            #expect(b.sequence == a.sequence &+ 1)
            if b.timestamp &- a.timestamp > 960 { #expect(b.marker, "channels \(channels)") }
        }
        #expect(views.contains { $0.marker && $0.timestamp != views[0].timestamp })
        // The Opus TOC's stereo flag (RFC 6716 3.1) follows the channels.
        let stereoFlags = rtp.compactMap { d in d.withUnsafeBytes { b in (try? RTPPacketView(parsing: b)).map { $0.payload[0] & 0x04 != 0 } } }
        #expect(stereoFlags.allSatisfy { $0 == (channels == 2) })
    }
}

extension RTPPacketView {
    fileprivate var headerFields: (sequence: UInt16, timestamp: UInt32, marker: Bool) { (sequenceNumber, timestamp, marker) }
}
