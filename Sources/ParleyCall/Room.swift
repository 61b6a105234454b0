// A simulated call room: every participant's audio through the full pipeline over a simulated
// network, to one receiving client that shows who is talking.

import ParleyJitter
import ParleyRTP
import ParleyVoice

/// One participant of a ``CallRoom``: its audio and how its side behaves.
public struct RoomParticipant: Sendable {
    /// Unique name (for `parley room`, the file's stem).
    public var name: ParticipantID
    /// Mono 16-bit samples at ``sampleRate``: what the participant's microphone captures.
    public var samples: [Int16]
    /// Capture rate, Hz (8, 12, 16, 24 or 48 kHz).
    public var sampleRate: Int
    /// The capture clock's rate error against the monotonic clock, ppm.
    public var driftPpm: Double
    /// Media-time intervals (seconds) during which the participant is muted.
    public var mutedIntervals: [ClosedRange<Double>]
    /// The camera's pictures (looped while the audio lasts); empty: no video.
    public var video: [VideoFrame] = []
    /// Frame rate of ``video``.
    public var videoFramesPerSecond = 30.0

    public init(name: ParticipantID, samples: [Int16], sampleRate: Int = 16_000, driftPpm: Double = 0,
                mutedIntervals: [ClosedRange<Double>] = []) {
        self.name = name; self.samples = samples; self.sampleRate = sampleRate
        self.driftPpm = driftPpm; self.mutedIntervals = mutedIntervals
    }

    /// Duration of the audio, seconds.
    public var duration: Double { Double(samples.count) / Double(sampleRate) }
}

/// Settings of a ``CallRoom``.
public struct RoomConfiguration: Sendable {
    /// The network between each participant and the receiving client.
    public var network: NetworkScenario
    /// Seed of the network simulation (participant `i` uses `seed + i`).
    public var seed: UInt64
    /// When set, every participant's audio loops until this many media seconds (soak runs);
    /// otherwise each participant leaves when its audio ends.
    public var duration: Double?
    /// Cadence of ``CallEvent/Kind/statistics`` events, seconds. Default 1 s.
    public var statisticsInterval = 1.0
    /// Cadence of the dominant-speaker decision, seconds. Default 0.1 s.
    public var dominantInterval = 0.1
    /// Send-side settings (rate and payload type are per room).
    public var send = AudioSendConfiguration()
    /// Receive-side settings.
    public var receive = AudioReceiveConfiguration()
    /// Dominant-speaker settings.
    public var activeSpeaker = ActiveSpeakerConfiguration()

    public init(network: NetworkScenario = .room(lossPercent: 0, jitterMs: 0), seed: UInt64 = 1, duration: Double? = nil) {
        self.network = network; self.seed = seed; self.duration = duration
    }
}

/// The end-of-call figures of one participant.
public struct RoomParticipantReport: Sendable {
    public var name: ParticipantID
    /// Talk time, seconds, and talks started (by the receiver's analysis).
    public var talkTime: Double
    public var turns: Int
    public var audio: ParticipantAudioStatistics
    /// The capture clock's drift measured at the sender, ppm.
    public var measuredDriftPpm: Double?
    /// Send and receive stage counters.
    public var send: AudioSendStatistics
    public var receive: AudioReceiveStatistics
    public var link: LinkStatistics
    public var jitter: JitterBufferStatistics
    /// Video counters, for a participant with video.
    public var video: VideoStatistics?
}

/// One participant's video pipelines.
final class RoomVideoStream {
    var sender: VideoSendPipeline
    var link: SimulatedLink
    var receiver: VideoReceivePipeline
    var shownAny = false
    var lastAudioPlayed: UInt32?

    init(spec: RoomParticipant, index: Int, configuration: RoomConfiguration, ntpOffset: Double) throws {
        let first = spec.video[0]
        sender = try VideoSendPipeline(width: first.width, height: first.height,
                                       framesPerSecond: Int(spec.videoFramesPerSecond.rounded()),
                                       ssrc: 0x2000 &+ UInt32(index), firstTimestamp: 0x0BAD_CAFE &* UInt32(index + 1),
                                       ntpOffset: ntpOffset)
        var network = configuration.network
        network.packetMs = 1000 / spec.videoFramesPerSecond
        link = SimulatedLink(scenario: network, seed: configuration.seed &+ 0x5649_4445 &+ UInt64(index))
        receiver = try VideoReceivePipeline(width: first.width, height: first.height)
    }
}

/// One participant's pipelines (a class: the pipelines are `~Copyable` and live in an array).
final class RoomStream {
    let spec: RoomParticipant
    var sender: AudioSendPipeline
    var link: SimulatedLink
    var receiver: AudioReceivePipeline<OpusJitterDecoder>
    let capture: DriftingCaptureClock
    var frame: [Int16]
    var video: RoomVideoStream?
    var sentFrames = 0
    var ended = false
    var left = false
    var muted = false
    var talkingWhileMuted = false
    var drainFrames = 0

    init(spec: RoomParticipant, index: Int, configuration: RoomConfiguration, start: MonotonicTime,
         ntpOffset: Double) throws {
        self.spec = spec
        var send = configuration.send
        send.sampleRate = spec.sampleRate
        send.ssrc = 0x1000 &+ UInt32(index)
        send.firstSequence = UInt16(truncatingIfNeeded: 1000 &* (index + 1))
        send.firstTimestamp = 0x1234_5678 &* UInt32(index + 1)
        sender = try AudioSendPipeline(configuration: send, ntpOffset: ntpOffset)
        var network = configuration.network
        network.packetMs = Double(send.packetMs)
        link = SimulatedLink(scenario: network, seed: configuration.seed &+ UInt64(index))
        var receive = configuration.receive
        receive.payloadType = send.payloadType
        receive.callStartNTP = ntpOffset + start.seconds
        let decoder = try OpusJitterDecoder(sampleRate: receive.sampleRate, channels: 1)
        receiver = try AudioReceivePipeline(configuration: receive, decoder: decoder)
        capture = DriftingCaptureClock(origin: start, driftPpm: spec.driftPpm, sampleRate: spec.sampleRate)
        frame = [Int16](repeating: 0, count: send.packetSamples)
        if !spec.video.isEmpty {
            video = try RoomVideoStream(spec: spec, index: index, configuration: configuration, ntpOffset: ntpOffset)
        }
    }
}

/// A call simulated end to end: each participant's audio is captured on its own (possibly
/// drifting) clock, analysed, Opus-encoded and sent as RTP over its own ``SimulatedLink`` to one
/// receiving client, which buffers, decodes and analyses every stream, and publishes
/// ``CallEvent``s: joined/left, muted/unmuted, talking started/stopped (receiver's analysis;
/// talking-while-muted from the sender's), dominant speaker, statistics.
///
/// Driven by a ``MediaScheduler`` on the given clock: with a ``VirtualMediaClock`` it runs as fast
/// as the machine allows and is deterministic (same inputs and seed, same events); with
/// ``SystemMediaClock`` it runs in real time.
///
/// Threading: ``run()`` blocks the calling thread; ``onEvent`` and ``onFrame`` are called on it.
/// Subscribers of ``events`` may consume from any task.
public final class CallRoom {
    public let configuration: RoomConfiguration
    public let clock: any MediaClock
    /// Every event, as async sequences.
    public let events = CallEventHub()
    /// Called synchronously for every event, before it is published (for a UI on this thread).
    public var onEvent: ((CallEvent) -> Void)?
    /// Called after every playout frame with the media time (for a UI redraw cadence).
    public var onFrame: ((Double) -> Void)?
    /// The state folded from the events so far.
    public private(set) var state = CallState()

    private let participants: [RoomParticipant]
    private var streams: [RoomStream] = []
    private var speaker: ActiveSpeakerDetector<ParticipantID>
    private var start = MonotonicTime.zero
    private var mediaNow = 0.0
    private var finished = false

    public init(participants: [RoomParticipant], configuration: RoomConfiguration, clock: any MediaClock) {
        precondition(Set(participants.map(\.name)).count == participants.count, "participant names must be unique")
        self.participants = participants
        self.configuration = configuration
        self.clock = clock
        speaker = ActiveSpeakerDetector(configuration: configuration.activeSpeaker)
    }

    private func emit(_ event: CallEvent) {
        state.apply(event)
        onEvent?(event)
        events.publish(event)
    }

    /// Runs the call to its end (every participant left and every stream drained).
    /// - Throws: an ``OpusError`` or ``VADError`` if a participant's rate is unsupported.
    public func run() throws {
        start = clock.now()
        let ntpOffset = 3_900_000_000.0
        streams = try participants.enumerated().map { i, p in
            try RoomStream(spec: p, index: i, configuration: configuration, start: start, ntpOffset: ntpOffset)
        }
        for s in streams {
            speaker.join(s.spec.name)
            emit(CallEvent(time: 0, participant: s.spec.name, kind: .joined))
        }
        let scheduler = MediaScheduler(clock: clock)
        for s in streams {
            let period = Double(s.sender.configuration.packetMs) * 1e6 / (1 + s.spec.driftPpm * 1e-6)
            var sendID: MediaScheduler.StreamID?
            sendID = scheduler.add("send-\(s.spec.name)",
                                   pacer: FramePacer(periodNanoseconds: period, origin: start, policy: .catchUp)) { [unowned self] frames, _ in
                for k in frames where !s.ended {
                    self.sendFrame(s, index: Int(k))
                }
                if s.ended, let id = sendID { scheduler.remove(id) }
            }
        }
        for s in streams where s.video != nil {
            let v = s.video!
            let fps = s.spec.videoFramesPerSecond
            let period = 1e9 / fps / (1 + s.spec.driftPpm * 1e-6)
            var videoID: MediaScheduler.StreamID?
            videoID = scheduler.add("video-\(s.spec.name)",
                                    pacer: FramePacer(periodNanoseconds: period, origin: start, policy: .dropLate)) { frames, _ in
                if s.ended {
                    if let id = videoID { scheduler.remove(id) }
                    return
                }
                v.sender.skipped(frames.count - 1)
                let k = frames.upperBound - 1
                if v.receiver.takeKeyframeRequest() { v.sender.requestKeyframe() }
                let captured = self.start.advanced(byNanoseconds: Int64((Double(k) * period).rounded()))
                let ticks = UInt32(truncatingIfNeeded: Int64((Double(k) * 90_000 / fps).rounded()))
                v.sender.send(s.spec.video[Int(k) % s.spec.video.count], mediaTicks: ticks, capturedAt: captured, over: &v.link)
            }
        }
        let frameMs = configuration.receive.frameMs
        let playout = FramePacer(periodNanoseconds: Double(frameMs) * 1e6, origin: start, policy: .catchUp)
        let framesPerDecision = max(1, Int((configuration.dominantInterval * 1000).rounded()) / frameMs)
        let framesPerStats = max(1, Int((configuration.statisticsInterval * 1000).rounded()) / frameMs)
        var playoutID: MediaScheduler.StreamID?
        playoutID = scheduler.add("playout", pacer: playout) { [unowned self] frames, _ in
            for k in frames {
                let t = playout.deadline(ofFrame: k)
                self.playoutFrame(at: t)
                if (k + 1) % Int64(framesPerDecision) == 0 { self.decideDominant() }
                if (k + 1) % Int64(framesPerStats) == 0 { self.publishStatistics() }
                self.onFrame?(self.mediaNow)
                if self.streams.allSatisfy(\.left) {
                    self.finished = true
                    if let id = playoutID { scheduler.remove(id) }
                    return
                }
            }
        }
        scheduler.runUntil(MonotonicTime(nanoseconds: .max), shouldStop: { self.finished })
        publishStatistics()
        events.finish()
    }

    private func sendFrame(_ s: RoomStream, index: Int) {
        let n = s.frame.count
        let captureStart = Int64(index) * Int64(n)
        let mediaStart = Double(captureStart) / Double(s.spec.sampleRate)
        let total = s.spec.samples.count
        if let limit = configuration.duration {
            if mediaStart >= limit { s.ended = true; return }
        } else if Int(captureStart) >= total {
            s.ended = true
            return
        }
        // Fill the frame (looping for soak runs; the file's tail padded with silence).
        s.spec.samples.withUnsafeBufferPointer { src in
            for i in 0..<n {
                let j = Int(captureStart) + i
                s.frame[i] = total == 0 ? 0 : (configuration.duration == nil ? (j < total ? src[j] : 0) : src[j % total])
            }
        }
        let captured = s.capture.time(ofSample: captureStart)
        let callTime = start.nanoseconds(to: captured)
        let mediaTime = Double(callTime) / 1e9
        let shouldMute = s.spec.mutedIntervals.contains { $0.contains(mediaTime) }
        if shouldMute != s.muted {
            s.muted = shouldMute
            emit(CallEvent(time: mediaTime, participant: s.spec.name, kind: shouldMute ? .muted : .unmuted))
        }
        let name = s.spec.name
        let muted = s.muted
        let rate = Double(s.spec.sampleRate)
        s.frame.withUnsafeBufferPointer { f in
            s.sender.send(f, capturedAt: captured, muted: muted, over: &s.link) { e in
                // The sender's own analysis matters only as talking-while-muted (the receiver
                // hears silence then); everything else comes from the receiver's analysis.
                if e.kind == .started ? !e.muted : !s.talkingWhileMuted { return }
                s.talkingWhileMuted = e.kind == .started
                func media(_ streamSeconds: Double) -> Double {
                    Double(self.start.nanoseconds(to: s.capture.time(ofSample: Int64(streamSeconds * rate)))) / 1e9
                }
                let change = TalkingChange(levelDbov: e.levelDbov, reason: e.reason, whileMuted: true,
                                           segmentTime: media(e.segmentTime), probability: e.probability)
                self.emit(CallEvent(time: media(e.time), participant: name,
                                    kind: e.kind == .started ? .talkingStarted(change) : .talkingStopped(change)))
            }
        }
        s.sentFrames += 1
    }

    private func playoutFrame(at t: MonotonicTime) {
        for s in streams where !s.left {
            s.link.receive(until: t) { bytes, arrival in s.receiver.receive(bytes, at: arrival) }
            let name = s.spec.name
            s.receiver.playout(at: t, sink: { _ in }, onDecision: { d in
                self.speaker.update(name, decision: d)
                self.mediaNow = max(self.mediaNow, d.time + VoiceActivityDetector.frameDuration)
            }, onTalk: { e in
                self.emitTalk(e, for: name)
            })
            if let v = s.video {
                v.link.receive(until: t) { bytes, arrival in v.receiver.receive(bytes, at: arrival) }
                if let played = s.receiver.lastPlayed, played.timestamp != v.lastAudioPlayed {
                    v.lastAudioPlayed = played.timestamp
                    v.receiver.sync.useAudioMapping(s.receiver.mapping)
                    v.receiver.sync.audioPlayed(rtpTimestamp: played.timestamp, at: played.at)
                }
                v.receiver.render(at: t) { _ in }
                if !v.shownAny && v.receiver.statistics.framesShown > 0 {
                    v.shownAny = true
                    emit(CallEvent(time: mediaNow, participant: name, kind: .videoOn))
                }
            }
            if s.ended && s.link.inFlight == 0 && s.receiver.bufferedPackets == 0 {
                s.drainFrames += 1
                if s.drainFrames >= 30 {       // 300 ms: the last decoded audio has played out
                    s.receiver.finish { e in self.emitTalk(e, for: name) }
                    s.left = true
                    if let v = s.video, v.shownAny { emit(CallEvent(time: mediaNow, participant: name, kind: .videoOff)) }
                    if let e = speaker.leave(name, at: mediaNow) { emitDominant(e) }
                    emit(CallEvent(time: mediaNow, participant: name, kind: .left))
                }
            }
        }
    }

    private func emitTalk(_ e: TalkEvent, for name: ParticipantID) {
        let change = TalkingChange(levelDbov: e.levelDbov, reason: e.reason, whileMuted: false,
                                   segmentTime: e.segmentTime, probability: e.probability)
        emit(CallEvent(time: e.time, participant: name,
                       kind: e.kind == .started ? .talkingStarted(change) : .talkingStopped(change)))
    }

    private func decideDominant() {
        if let e = speaker.decide(at: mediaNow) { emitDominant(e) }
    }

    private func emitDominant(_ e: ActiveSpeakerEvent<ParticipantID>) {
        emit(CallEvent(time: e.time, participant: e.dominant, kind: .dominantSpeakerChanged(previous: e.previous)))
    }

    private func publishStatistics() {
        for s in streams {
            emit(CallEvent(time: mediaNow, participant: s.spec.name, kind: .statistics(statistics(of: s))))
        }
    }

    private func statistics(of s: RoomStream) -> ParticipantAudioStatistics {
        let j = s.receiver.jitterStatistics
        let r = s.receiver.statistics
        var a = ParticipantAudioStatistics()
        a.framesSent = s.sender.statistics.framesCaptured
        a.framesPlayed = r.packetsPlayed
        a.framesRecovered = j.fecRecovered
        a.framesLate = j.late
        a.framesLost = s.link.statistics.mediaLost + s.sender.statistics.packetsRefused + s.sender.statistics.encodeErrors
        a.framesDiscarded = j.packetsDiscarded - j.late + r.malformed + r.unexpectedPayloadType
        a.framesPending = s.link.inFlight + s.receiver.bufferedPackets
        a.concealedSamples = j.concealedSamples
        a.playedSamples = j.jitterBufferEmittedCount
        a.meanJitterBufferDelayMs = j.jitterBufferEmittedCount == 0 ? 0
            : j.jitterBufferDelay / Double(j.jitterBufferEmittedCount) * 1000
        a.targetDelayMs = s.receiver.targetDelayMs
        a.maximumTargetDelayMs = r.maximumTargetDelayMs
        return a
    }

    private static func videoStatistics(_ v: RoomVideoStream) -> VideoStatistics {
        var st = v.receiver.statistics
        let sent = v.sender.statistics
        st.framesCaptured = sent.framesCaptured
        st.framesSkippedLate = sent.framesSkippedLate
        st.framesEncoded = sent.framesEncoded
        st.encodeErrors = sent.encodeErrors
        st.packetsSent = sent.packetsSent
        st.packetsRefused = sent.packetsRefused
        return st
    }

    /// The end-of-call figures, in join order (valid after ``run()``).
    public var reports: [RoomParticipantReport] {
        streams.map { s in
            let st = state[s.spec.name]
            return RoomParticipantReport(name: s.spec.name, talkTime: st?.talkTime(at: mediaNow) ?? 0,
                                         turns: st?.turns ?? 0, audio: statistics(of: s),
                                         measuredDriftPpm: s.sender.drift.driftPpm,
                                         send: s.sender.statistics, receive: s.receiver.statistics,
                                         link: s.link.statistics, jitter: s.receiver.jitterStatistics,
                                         video: s.video.map(Self.videoStatistics))
        }
    }
}
