// A simulated call room: every participant's audio through the full pipeline over a simulated
// network, to one receiving client that shows who is talking.

import ParleyCall
import ParleyCore
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

    /// A participant without video (attach a camera with ``attachVideo(path:)``).
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
    /// Cadence of `CallEvent/Kind/statistics` events, seconds. Default 1 s.
    public var statisticsInterval = 1.0
    /// Cadence of the dominant-speaker decision, seconds. Default 0.1 s.
    public var dominantInterval = 0.1
    /// Send-side settings (rate and payload type are per room).
    public var send = AudioSendConfiguration()
    /// Receive-side settings.
    public var receive = AudioReceiveConfiguration()
    /// Dominant-speaker settings.
    public var activeSpeaker = ActiveSpeakerConfiguration()

    /// A room over `network` (default: 40 ms one way, no jitter, no loss), seeded with `seed`.
    public init(network: NetworkScenario = try! .room(lossPercent: 0, jitterMs: 0),   // no loss: cannot throw
                seed: UInt64 = 1, duration: Double? = nil) {
        self.network = network; self.seed = seed; self.duration = duration
    }
}

/// The end-of-call figures of one participant.
public struct RoomParticipantReport: Sendable {
    /// The participant.
    public var name: ParticipantID
    /// Talk time, seconds, and talks started (by the receiver's analysis).
    public var talkTime: Double
    public var turns: Int
    /// The receiver's audio figures, refined with what only the simulation knows (frames sent
    /// and lost).
    public var audio: ParticipantAudioStatistics
    /// The capture clock's drift measured at the sender, ppm.
    public var measuredDriftPpm: Double?
    /// Send and receive stage counters.
    public var send: AudioSendStatistics
    public var receive: AudioReceiveStatistics
    /// The participant's audio link.
    public var link: LinkStatistics
    /// The receiver's jitter buffer for the participant.
    public var jitter: JitterBufferStatistics
    /// Video counters, for a participant with video.
    public var video: VideoStatistics?
}

/// One simulated participant's video sender and the link its packets cross.
final class RoomVideoStream {
    var sender: VideoSendPipeline
    var link: SimulatedLink?
    /// The link the session's RTCP feedback (receiver reports, NACKs, PLIs) comes back on,
    /// until the session takes it, and the sender's handle on it (reading it).
    var feedbackLink: SimulatedLink?
    var feedbackHandle: TransportHandle?
    let ssrc: UInt32
    let width: Int
    let height: Int

    init(spec: RoomParticipant, index: Int, configuration: RoomConfiguration, ntpOffset: Double) throws {
        let first = spec.video[0]
        ssrc = 0x2000 &+ UInt32(index)
        width = first.width
        height = first.height
        sender = try VideoSendPipeline(width: first.width, height: first.height,
                                       framesPerSecond: Int(spec.videoFramesPerSecond.rounded()),
                                       ssrc: ssrc, firstTimestamp: 0x0BAD_CAFE &* UInt32(index + 1),
                                       ntpOffset: ntpOffset)
        var network = configuration.network
        network.packetMs = 1000 / spec.videoFramesPerSecond
        link = try SimulatedLink(scenario: network, seed: configuration.seed &+ 0x5649_4445 &+ UInt64(index))
        var back = configuration.network
        back.packetMs = 20
        feedbackLink = try SimulatedLink(scenario: back, seed: configuration.seed &+ 0x4642_434B &+ UInt64(index))
    }
}

/// One simulated participant's sending side (a class: the pipelines are `~Copyable`).
final class RoomStream {
    let spec: RoomParticipant
    var sender: AudioSendPipeline
    /// The participant's link, until the session takes it (its receiving end).
    var link: SimulatedLink?
    /// The session's handle on the link (sending into it).
    var handle: TransportHandle?
    var videoHandle: TransportHandle?
    let capture: DriftingCaptureClock
    var frame: [Int16]
    var video: RoomVideoStream?
    var ended = false
    var muted = false
    var talkingWhileMuted = false

    /// The counters of the participant's audio link.
    var linkStatistics: LinkStatistics {
        link?.statistics ?? (handle?.box as? BoxedTransport<SimulatedLink>)?.base.statistics ?? LinkStatistics()
    }

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
        link = try SimulatedLink(scenario: network, seed: configuration.seed &+ UInt64(index))
        capture = try DriftingCaptureClock(origin: start, driftPpm: spec.driftPpm, sampleRate: spec.sampleRate)
        frame = [Int16](repeating: 0, count: send.packetSamples)
        if !spec.video.isEmpty {
            video = try RoomVideoStream(spec: spec, index: index, configuration: configuration, ntpOffset: ntpOffset)
        }
    }
}

/// A call simulated end to end: each participant's audio is captured on its own (possibly
/// drifting) clock, analysed, Opus-encoded and sent as RTP over its own ``SimulatedLink`` to one
/// receiving client, a `CallSession` that buffers, decodes and analyses every stream, and
/// publishes `CallEvent`s: joined/left, muted/unmuted, talking started/stopped (receiver's
/// analysis; talking-while-muted from the sender's), dominant speaker, statistics.
///
/// The room is a harness around that session: it declares the participants as remotes, feeds
/// their links from their samples, reports their mutes and talking-while-muted as signalling
/// would, tells the session when a participant's audio has ended, and fills the statistics
/// with what only the simulation knows (frames the sender produced, what the network lost).
///
/// Driven by a `MediaScheduler` on the given clock: with a `VirtualMediaClock` it runs as fast
/// as the machine allows and is deterministic (same inputs and seed, same events); with
/// `SystemMediaClock` it runs in real time.
///
/// Threading: ``run()`` blocks the calling thread; ``onEvent`` and ``onFrame`` are called on it.
/// Subscribers of ``events`` may consume from any task.
public final class CallRoom {
    /// The room's settings.
    public let configuration: RoomConfiguration
    /// The clock the room runs on.
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
    private var session: CallSession?

    /// A room of `participants` (their names must be unique).
    /// - Throws: `CallSessionError/duplicateID(_:)` for a name given twice.
    public init(participants: [RoomParticipant], configuration: RoomConfiguration, clock: any MediaClock) throws(CallSessionError) {
        var seen = Set<ParticipantID>()
        for p in participants where !seen.insert(p.name).inserted { throw .duplicateID(p.name) }
        self.participants = participants
        self.configuration = configuration
        self.clock = clock
    }

    /// Runs the call to its end (every participant left and every stream drained).
    /// - Throws: an `OpusError` or `VADError` if a participant's rate is unsupported.
    public func run() throws {
        let start = clock.now()
        let ntpOffset = 3_900_000_000.0
        streams = try participants.enumerated().map { i, p in
            try RoomStream(spec: p, index: i, configuration: configuration, start: start, ntpOffset: ntpOffset)
        }
        var settings = CallSessionConfiguration()
        settings.receive = configuration.receive
        settings.receive.payloadType = configuration.send.payloadType
        settings.receive.callStartNTP = ntpOffset + start.seconds
        settings.activeSpeaker = configuration.activeSpeaker
        settings.statisticsInterval = configuration.statisticsInterval
        settings.dominantInterval = configuration.dominantInterval
        settings.admitsUndeclaredRemotes = false
        settings.maximumRemotes = max(1, streams.count)
        settings.departedRemotesKept = streams.count   // every participant's final report
        settings.remoteTimeout = .infinity
        settings.endsWhenEveryoneLeft = true
        let session = CallSession(configuration: settings, clock: clock, start: start)
        self.session = session
        session.onEvent = { [unowned self] e in
            self.state.apply(e)
            self.onEvent?(e)
            self.events.publish(e)
        }
        session.onFrame = { [unowned self] t in self.onFrame?(t) }
        session.refineStatistics = { [unowned self] name, a in
            guard let s = self.streams.first(where: { $0.spec.name == name }) else { return }
            self.refine(&a, of: s)
        }
        for s in streams {
            let v = s.video.map { RemoteVideo(ssrc: $0.ssrc, width: $0.width, height: $0.height) }
            try session.addRemote(RemoteParticipant(id: s.spec.name, audioSSRC: s.sender.configuration.ssrc, video: v))
        }
        for s in streams {
            let audio = session.addTransport(s.link.take()!, role: .audio(of: s.spec.name))
            s.handle = session.transportHandle(audio)
            if let v = s.video {
                let video = session.addTransport(v.link.take()!, role: .video(of: s.spec.name))
                s.videoHandle = session.transportHandle(video)
                let feedback = session.addTransport(v.feedbackLink.take()!, role: .videoFeedback(of: s.spec.name))
                v.feedbackHandle = session.transportHandle(feedback)
            }
        }
        let scheduler = MediaScheduler(clock: clock)
        for s in streams {
            let period = Double(s.sender.configuration.packetMs) * 1e6 / (1 + s.spec.driftPpm * 1e-6)
            var sendID: MediaScheduler.StreamID?
            sendID = scheduler.add("send-\(s.spec.name)",
                                   pacer: try FramePacer(periodNanoseconds: period, origin: start, policy: .catchUp)) { [unowned self] frames, _ in
                for k in frames where !s.ended {
                    self.sendFrame(s, index: Int(k), start: start)
                }
                if s.ended, let id = sendID { scheduler.remove(id) }
            }
        }
        for s in streams where s.video != nil {
            let v = s.video!
            let fps = s.spec.videoFramesPerSecond
            let period = 1e9 / fps / (1 + s.spec.driftPpm * 1e-6)
            var videoID: MediaScheduler.StreamID?
            var next: Int64 = 0
            videoID = scheduler.add("video-\(s.spec.name)",
                                    pacer: try FramePacer(periodNanoseconds: period, origin: start, policy: .dropLate)) { frames, now in
                if s.ended {
                    if let id = videoID { scheduler.remove(id) }
                    return
                }
                // The receiver's feedback that has come back: resends, a keyframe, the bitrate.
                v.feedbackHandle?.receive(until: now) { bytes, _ in
                    v.sender.receiveFeedback(bytes, at: now, over: &s.videoHandle!)
                }
                // Pictures the pacer skipped (the room was late) are not captured.
                if frames.lowerBound > next { v.sender.skipped(Int(frames.lowerBound - next)) }
                next = frames.upperBound
                let k = frames.upperBound - 1
                let captured = start.advanced(byNanoseconds: Int64((Double(k) * period).rounded()))
                let ticks = UInt32(truncatingIfNeeded: Int64((Double(k) * 90_000 / fps).rounded()))
                v.sender.send(s.spec.video[Int(k) % s.spec.video.count], mediaTicks: ticks, capturedAt: captured,
                              over: &s.videoHandle!)
            }
        }
        try session.attach(to: scheduler)
        scheduler.runUntil(MonotonicTime(nanoseconds: .max), shouldStop: { session.isFinished })
        session.stop()
        events.finish()
    }

    private func sendFrame(_ s: RoomStream, index: Int, start: MonotonicTime) {
        let n = s.frame.count
        let captureStart = Int64(index) * Int64(n)
        let mediaStart = Double(captureStart) / Double(s.spec.sampleRate)
        let total = s.spec.samples.count
        if let limit = configuration.duration {
            if mediaStart >= limit { end(s); return }
        } else if Int(captureStart) >= total {
            end(s)
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
            session?.publish(CallEvent(time: mediaTime, participant: s.spec.name, kind: shouldMute ? .muted : .unmuted))
        }
        let name = s.spec.name
        let muted = s.muted
        let rate = Double(s.spec.sampleRate)
        _ = s.frame.withUnsafeBufferPointer { f in
            s.sender.send(f, capturedAt: captured, muted: muted, over: &s.handle!) { e in
                // The sender's own analysis matters only as talking-while-muted (the receiver
                // hears silence then); everything else comes from the receiver's analysis.
                if e.kind == .started ? !e.muted : !s.talkingWhileMuted { return }
                s.talkingWhileMuted = e.kind == .started
                func media(_ streamSeconds: Double) -> Double {
                    Double(start.nanoseconds(to: s.capture.time(ofSample: Int64(streamSeconds * rate)))) / 1e9
                }
                let change = TalkingChange(levelDbov: e.levelDbov, reason: e.reason, whileMuted: true,
                                           segmentTime: media(e.segmentTime), probability: e.probability)
                self.session?.publish(CallEvent(time: media(e.time), participant: name,
                                                kind: e.kind == .started ? .talkingStarted(change) : .talkingStopped(change)))
            }
        }
    }

    private func end(_ s: RoomStream) {
        s.ended = true
        session?.remoteEnded(s.spec.name)
    }

    /// The figures only the simulation knows: what the sender produced and the network lost.
    private func refine(_ a: inout ParticipantAudioStatistics, of s: RoomStream) {
        a.framesSent = s.sender.statistics.framesCaptured
        a.framesLost = s.linkStatistics.mediaLost + s.sender.statistics.packetsRefused + s.sender.statistics.encodeErrors
        a.framesPending += s.handle?.inFlight ?? 0
    }

    /// The end-of-call figures, in join order (valid after ``run()``).
    public var reports: [RoomParticipantReport] {
        streams.compactMap { s in
            guard let session, let received = session.receiveStatistics(of: s.spec.name) else { return nil }
            let st = state[s.spec.name]
            var video = received.video
            if let sent = s.video?.sender.statistics { video?.takeSenderCounters(from: sent) }
            return RoomParticipantReport(name: s.spec.name, talkTime: st?.talkTime(at: session.mediaTime) ?? 0,
                                         turns: st?.turns ?? 0, audio: received.audio,
                                         measuredDriftPpm: s.sender.drift.driftPpm,
                                         send: s.sender.statistics, receive: received.receive,
                                         link: s.linkStatistics, jitter: received.jitter, video: video)
        }
    }
}
