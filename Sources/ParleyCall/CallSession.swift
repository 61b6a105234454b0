// A call as a client sees it: a local participant sending, remote participants demultiplexed by
// SSRC from any number of transports, and the call's events and state.

import ParleyCodecs
import ParleyEcho
import ParleyJitter
import ParleyRTP
import ParleyVoice

/// One call as a client app sees it: the grid of participants and who is talking.
///
/// - **Remote participants** arrive over any number of `PacketTransport`s (a
///   `UDPTransport` in a real call, ParleySimulation's `SimulatedLink`s in a simulation),
///   demultiplexed by SSRC: each is declared with ``addRemote(_:)`` from signalling or created on its first
///   packet. Each gets its own receive pipeline (jitter buffer, Opus decoding with PLC/FEC,
///   talking detection) and video pipeline, and an RTCP BYE, ``remoteEnded(_:)`` or
///   ``CallSessionConfiguration/remoteTimeout`` of silence makes it leave once its audio has
///   played out. Its SSRCs are then free: if it sends again, it joins again as an undeclared
///   remote (or, with undeclared remotes not admitted, its packets are counted and dropped
///   until it is declared again).
///   Everything else of it is released then (its receiver, the roles of its transports), so a
///   call where people come and go stays the same size; its final counters are kept
///   (``CallSessionConfiguration/departedRemotesKept``).
/// - **The local participant** (``addLocal(id:displayName:source:configuration:sendingOn:)``) is captured
///   from any `AudioCaptureSource` (ALSA, a file, a test source), analysed, encoded and sent;
///   its talking and talking-while-muted come from its own capture. When the playout is heard by
///   its microphone (``CallSessionConfiguration/playout``, ``CallSessionConfiguration/echoCancellation``),
///   the capture goes through an `EchoCanceller` fed with every playout frame (the sum of the
///   remote participants' audio handed to ``onAudio``, clamped to 16 bits as a device's mixer
///   does), and the far end's echo starts no local talk.
/// - **The local participant's video** (``addLocalVideo(source:configuration:sendingOn:)``):
///   pictures from any `VideoCaptureSource` at its frame rate, VP8 over RTP on its own SSRC,
///   answering the RTCP feedback that comes back about it (NACKs with resends, PLIs with
///   keyframes, receiver reports with the bitrate) on any of the session's transports.
/// - **Events**: joined/left, muted/unmuted, video on/off, talking started/stopped (with
///   level and reason), the dominant speaker (among the remote participants: the one a grid
///   enlarges), statistics, through ``events`` (an async sequence
///   per subscriber that never loses a talking edge; see ``CallEventHub``), ``onEvent`` on the
///   call's thread, and ``state``, the ``CallState`` a UI renders.
///
/// Driven by a ``MediaScheduler`` on an injected `MediaClock`: ``attach(to:)`` adds the
/// session's streams to a scheduler (with a `VirtualMediaClock` a call runs as fast as the
/// machine allows and is deterministic), or ``run(until:)`` runs one of its own. No allocation
/// per packet or frame on the media path once every participant has joined.
///
/// Threading: one thread (the scheduler's) calls everything but ``events`` and the hub, which
/// any task may consume.
public final class CallSession {
    public let configuration: CallSessionConfiguration
    public let clock: any MediaClock
    /// The call's media time zero.
    public let start: MonotonicTime
    /// Every event, as async sequences.
    public let events = CallEventHub()
    /// Called synchronously for every event before it is published (a UI on this thread).
    public var onEvent: ((CallEvent) -> Void)?
    /// Called after every playout frame with the media time (a UI's redraw cadence).
    public var onFrame: ((Double) -> Void)?
    /// Called with every remote participant's played-out audio (10 ms frames at
    /// ``AudioReceiveConfiguration/sampleRate``), e.g. to mix it to a speaker or a file.
    public var onAudio: ((ParticipantID, UnsafeBufferPointer<Int16>) -> Void)?
    /// Called with every remote participant's video picture when it is shown (in sync with
    /// its audio), e.g. to draw it or write it to a file. The picture is the receiver's: copy
    /// it to keep it.
    public var onVideo: ((ParticipantID, VideoFrame) -> Void)?
    /// Called before each statistics event is published, so that a harness that knows the
    /// sender's side (a simulation) can fill in the figures a receiver cannot see.
    public var refineStatistics: ((ParticipantID, inout ParticipantAudioStatistics) -> Void)?
    /// The state folded from the events so far.
    public private(set) var state = CallState()
    /// Demultiplexer counters.
    public private(set) var statistics = CallSessionStatistics()
    /// Media seconds played out so far.
    public private(set) var mediaTime = 0.0
    /// Why the local participant's capture stopped, if its source failed (an ALSA error, an
    /// unreadable file); the local participant then sends no more.
    public private(set) var localFailure: (any Error)?
    /// Why the local video stopped, if its source failed; the call goes on without it.
    public private(set) var localVideoFailure: (any Error)?
    /// Whether the session has ended (``stop()``, or everyone left with
    /// ``CallSessionConfiguration/endsWhenEveryoneLeft``).
    public private(set) var isFinished = false
    /// The session's thread-safe inlet: what other threads and tasks hand to the call's thread
    /// (``post(_:)`` forwards to it). Keep it, not the session, in a task that signals.
    public let inlet = CallSessionInlet()

    /// Each transport with one of its roles (a transport with two roles is here twice), by the
    /// ``CallTransportID/index`` it was added as.
    private var transports: [(id: Int, box: SessionTransport, role: CallTransportRole)] = []
    private var transportsAdded = 0
    /// Display names that differ from the participant's id, by id (present participants only).
    private var displayNames: [ParticipantID: String] = [:]
    /// The remotes present, in join order (a remote that leaves is released at the end of
    /// that playout frame).
    private var remotes: [SessionRemote] = []
    private var remotesJoined = 0
    /// The final counters of the most recent remotes that left, oldest first.
    private var departed: [DepartedRemote] = []
    /// SSRC -> (remote, is video), for the demultiplexer; capacity reserved up front.
    private var bySSRC: [UInt32: (remote: SessionRemote, video: Bool)] = [:]
    private var local: SessionLocal?
    private var localVideo: SessionLocalVideo?
    private var videoID: MediaScheduler.StreamID?
    private var speaker: ActiveSpeakerDetector<ParticipantID>
    private var scheduler: MediaScheduler?
    private var playoutID: MediaScheduler.StreamID?
    private var sendID: MediaScheduler.StreamID?
    /// The local capture's echo canceller and the playout frame it is fed (summed, then clamped).
    private var echo: EchoCanceller?
    private var playoutMix: [Int32] = []
    private var playoutFrameSamples: [Int16] = []

    /// A session whose media time zero is `start` (default: the clock's now).
    public init(configuration: CallSessionConfiguration = .init(), clock: any MediaClock, start: MonotonicTime? = nil) {
        self.configuration = configuration
        self.clock = clock
        self.start = start ?? clock.now()
        speaker = ActiveSpeakerDetector(configuration: configuration.activeSpeaker)
        bySSRC.reserveCapacity(2 * max(1, configuration.maximumRemotes) + 2)
        remotes.reserveCapacity(max(1, configuration.maximumRemotes))
    }

    /// The name a remote created on its first packet gets: `ssrc-` and its SSRC in hex.
    public static func defaultName(ofSSRC ssrc: UInt32) -> ParticipantID { "ssrc-" + hex(ssrc) }

    static func hex(_ v: UInt32) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 8 - s.count) + s
    }

    // MARK: Set-up

    /// Adds a transport; every datagram it receives goes through the SSRC demultiplexer.
    @discardableResult
    public func addTransport<T: PacketTransport & ~Copyable>(_ transport: consuming T,
                                                             role: CallTransportRole = .shared) -> CallTransportID {
        let id = transportsAdded
        transportsAdded += 1
        transports.append((id, BoxedTransport(transport), role))
        attachTransports(role)
        return CallTransportID(index: id)
    }

    /// Declares a remote participant: it joins now (a `joined` event) under its id and display
    /// name, and packets of its SSRCs are its media.
    /// - Throws: ``CallSessionError`` for an id or SSRC already in the call, or a video
    ///   decoder that cannot be created; a `VADError` if the receive rate is unsupported.
    public func addRemote(_ remote: RemoteParticipant) throws {
        guard !remotes.contains(where: { $0.name == remote.id }), local?.name != remote.id else {
            throw CallSessionError.duplicateID(remote.id)
        }
        for ssrc in [remote.audioSSRC] + (remote.video.map { [$0.ssrc] } ?? []) where bySSRC[ssrc] != nil {
            throw CallSessionError.duplicateSSRC(ssrc)
        }
        for ssrc in [remote.audioSSRC] + (remote.video.map { [$0.ssrc] } ?? [])
        where local?.sender.configuration.ssrc == ssrc || localVideo?.sender.ssrc == ssrc {
            throw CallSessionError.duplicateSSRC(ssrc)
        }
        let r = try SessionRemote(name: remote.id, serial: remotesJoined, audioSSRC: remote.audioSSRC,
                                  configuration: configuration.receive)
        if let v = remote.video {
            do { r.video = try SessionRemoteVideo(v) } catch { throw CallSessionError.video("\(error)") }
        }
        if remote.displayName != remote.id { displayNames[remote.id] = remote.displayName }
        join(r)
    }

    private func join(_ r: SessionRemote) {
        if r.lastArrival == nil { r.lastArrival = clock.now() }
        remotes.append(r)
        remotesJoined += 1
        bySSRC[r.audioSSRC] = (r, false)
        if let v = r.video { bySSRC[v.ssrc] = (r, true) }
        attach(r)
        speaker.join(r.name)
        emit(CallEvent(time: mediaTime, participant: r.name, kind: .joined))
    }

    /// Gives a transport already added another role as well: a real call's one UDP socket
    /// carries the remote's media (``CallTransportRole/shared``) and takes the feedback about
    /// its video (``CallTransportRole/videoFeedback(of:)``). The session reads each transport
    /// once per playout frame whatever its roles.
    /// - Throws: ``CallSessionError/unknownTransport``.
    public func addRole(_ role: CallTransportRole, to transport: CallTransportID) throws(CallSessionError) {
        guard let box = box(of: transport) else { throw .unknownTransport }
        transports.append((transport.index, box, role))
        attachTransports(role)
    }

    /// The transport added as `id`, while it has a role.
    private func box(of id: CallTransportID) -> SessionTransport? {
        transports.first { $0.id == id.index }?.box
    }

    /// The participant a role ties its transport to, if any.
    private static func owner(of role: CallTransportRole) -> ParticipantID? {
        switch role {
        case .shared: nil
        case .audio(let name), .video(let name), .videoFeedback(let name): name
        }
    }

    /// Ties the transports with a remote's roles to that remote.
    private func attach(_ r: SessionRemote) {
        r.audioTransports = transports.compactMap { t in t.role == .audio(of: r.name) ? t.box : nil }
        r.videoTransports = transports.compactMap { t in t.role == .video(of: r.name) ? t.box : nil }
        r.videoFeedbackTransports = transports.compactMap { t in t.role == .videoFeedback(of: r.name) ? t.box : nil }
    }

    /// Ties a transport given `role` to the remote that role names, if it is present.
    private func attachTransports(_ role: CallTransportRole) {
        guard let name = Self.owner(of: role) else { return }
        for r in remotes where r.name == name { attach(r) }
    }

    /// Adds the local participant `id` (shown as `displayName`, default: the id): frames of ``AudioSendConfiguration/packetSamples`` are read
    /// from `source` every packet interval, analysed (its talking events), encoded and sent on
    /// the transport `sendingOn`. It joins now (a `joined` event).
    /// - Throws: ``CallSessionError`` (a second local participant, an id in use, an unknown
    ///   transport, a session already started, a source that is not mono at the send rate);
    ///   `OpusError` or `VADError` for a rate they do not take; `EchoCancellerError` when echo
    ///   cancellation is on and the capture is not mono at the receive rate, or its settings are
    ///   out of range.
    ///
    /// A paced source (a device, ParleyDevices' file and test sources) is read when its packet
    /// is due and returns once the packet's samples are captured.
    public func addLocal<S: AudioCaptureSource<Int16> & ~Copyable>(
        id name: ParticipantID, displayName: String? = nil, source: consuming S,
        configuration send: AudioSendConfiguration = .init(),
        sendingOn transport: CallTransportID
    ) throws {
        guard local == nil else { throw CallSessionError.localAlreadyAdded }
        guard sendID == nil else { throw CallSessionError.alreadyStarted }
        guard let transportBox = box(of: transport) else { throw CallSessionError.unknownTransport }
        guard !remotes.contains(where: { $0.name == name }) else { throw CallSessionError.duplicateID(name) }
        guard bySSRC[send.ssrc] == nil, localVideo?.sender.ssrc != send.ssrc else { throw CallSessionError.duplicateSSRC(send.ssrc) }
        let format = try AudioFormat(sampleRate: send.sampleRate, channels: 1)
        guard source.format == format else { throw CallSessionError.localFormat(expected: format, got: source.format) }
        var sender = try AudioSendPipeline(configuration: send)
        var canceller: EchoCanceller?
        if configuration.cancelsEcho {
            guard send.sampleRate == configuration.receive.sampleRate else {
                throw EchoCancellerError.sampleRate(configuration.receive.sampleRate)
            }
            var settings = configuration.echoCanceller
            settings.sampleRate = send.sampleRate
            canceller = try EchoCanceller(configuration: settings)
            try sender.useEchoCanceller(canceller)
        }
        echo = canceller
        playoutMix = [Int32](repeating: 0, count: canceller == nil ? 0 : configuration.receive.frameSamples)
        playoutFrameSamples = [Int16](repeating: 0, count: playoutMix.count)
        let box = CaptureBox(source, frame: AudioFrame<Int16>(format: format, samplesPerChannel: send.packetSamples))
        if let displayName, displayName != name { displayNames[name] = displayName }
        local = SessionLocal(name: name, sender: sender, transport: transportBox) { pipeline, handle, muted, onTalk in
            try pipeline.captureAndSend(from: &box.source, into: &box.frame, muted: muted, over: &handle, onTalk: onTalk)
        }
        emit(CallEvent(time: mediaTime, participant: name, kind: .joined))
    }

    /// Adds the local participant's video: pictures are read from `source` at its frame rate
    /// (the newest due picture when the call is late: a late picture is skipped, not queued),
    /// VP8-encoded and sent over RTP (RFC 7741) on the transport `sendingOn`, with RTCP sender
    /// reports on the same NTP clock as the audio so that the receiver can put them in sync.
    /// RTCP feedback about the video's SSRC that arrives on any transport (generic NACKs, PLIs,
    /// report blocks) is taken from the demultiplexer and answered by the sender after the
    /// transports are read (see ``VideoSendPipeline``). The video stops when its source ends or
    /// fails (``localVideoFailure``) and when the local participant's audio ends.
    ///
    /// The session paces the reads, so a source that returns at once and stamps the picture
    /// when read (ParleyDevices' `ClockedVideoSource` over a file or generator) suits it best. A
    /// source that paces itself (its `PacedVideoSource`, a camera) holds the call's thread until its picture
    /// is captured or due.
    ///
    /// Over ParleySRTP's `SRTPTransport` the send context must allow retransmission (its
    /// `allowRetransmission`) for the resends to go out.
    /// - Throws: ``CallSessionError`` (a second local video, a session already started, an
    ///   unknown transport, an SSRC in use, a source without a valid size or rate, or an
    ///   encoder that cannot be set up).
    public func addLocalVideo<S: VideoCaptureSource & ~Copyable>(
        source: consuming S, configuration video: LocalVideoConfiguration = .init(), sendingOn transport: CallTransportID
    ) throws(CallSessionError) {
        guard localVideo == nil else { throw .localVideoAlreadyAdded }
        guard scheduler == nil else { throw .alreadyStarted }
        guard let transportBox = box(of: transport) else { throw .unknownTransport }
        guard bySSRC[video.ssrc] == nil, local?.sender.configuration.ssrc != video.ssrc else { throw .duplicateSSRC(video.ssrc) }
        let width = source.width, height = source.height, fps = source.framesPerSecond
        guard width > 0, height > 0, width <= 16_384, height <= 16_384 else {
            throw .video("the source's picture size \(width)x\(height) is not valid")
        }
        guard fps.isFinite, fps >= 1, fps <= 240 else { throw .video("the source's frame rate \(fps) is not within 1...240") }
        let sender: VideoSendPipeline
        do {
            sender = try VideoSendPipeline(width: width, height: height, framesPerSecond: Int(fps.rounded()),
                                           bitrateKbps: max(10, video.bitrateKbps), ssrc: video.ssrc, payloadType: video.payloadType,
                                           firstTimestamp: video.firstTimestamp, ntpOffset: local?.sender.ntpOffset ?? Self.ntpOffset,
                                           feedback: video.feedback)
        } catch {
            throw .video("\(error)")
        }
        let box = VideoCaptureBox(source)
        localVideo = SessionLocalVideo(sender: sender, transport: transportBox, framesPerSecond: fps,
                                       frame: VideoFrame(validatedWidth: width, height: height),  // checked above
                                       slots: Self.feedbackSlots) { frame in
            try box.source.read(into: &frame)
        }
    }

    /// Feedback datagrams about the local video held per playout frame (more are dropped and
    /// counted in ``CallSessionStatistics/videoFeedbackDropped``).
    public static let feedbackSlots = 32

    /// The NTP offset of the local audio sender (``AudioSendPipeline``'s default), which the
    /// local video's sender reports share.
    static let ntpOffset = 3_900_000_000.0

    /// The local video's send counters (capture, encoding, feedback answered), if it has one.
    public var localVideoStatistics: VideoStatistics? { localVideo?.sender.statistics }

    /// Mutes or unmutes the local participant (a `muted` / `unmuted` event): while muted,
    /// silence is sent and its talking shows as talking-while-muted.
    public func setLocalMuted(_ muted: Bool) {
        guard let l = local, l.muted != muted else { return }
        l.muted = muted
        emit(CallEvent(time: mediaTime, participant: l.name, kind: muted ? .muted : .unmuted))
    }

    /// Whether the local participant's media has ended (its source ran out, failed, or the
    /// session stopped); true without a local participant.
    public var localHasEnded: Bool { local?.ended ?? true }

    /// The local participant's send counters, if it has one.
    public var localStatistics: AudioSendStatistics? { local?.sender.statistics }

    /// The local capture's echo canceller's counters and delay estimate, if it has one.
    public var localEchoStatistics: EchoCancellerStatistics? { echo?.statistics }

    /// Marks a remote participant as ended (its signalling said it left): it leaves once its
    /// audio has played out. Unknown names are ignored.
    public func remoteEnded(_ name: ParticipantID) {
        for r in remotes where r.name == name { r.end(drainFrames: configuration.drainFrames) }
    }

    /// Publishes an event that comes from signalling rather than media (a server saying a
    /// participant muted, a participant's own talking-while-muted), folded into ``state``.
    public func publish(_ event: CallEvent) { emit(event) }

    // MARK: Running

    /// Adds the session's streams to `scheduler`: the local participant's capture (every
    /// packet interval, catching up late frames) and its video (at the source's rate, late
    /// pictures skipped), both from now (a paced source starts its own clock at its first read,
    /// so the two agree and a read never waits behind the schedule), and the playout of every
    /// remote (every ``AudioReceiveConfiguration/frameMs``) from ``start``. Call once.
    /// - Throws: ``FramePacerError/periodNotPositive(_:)`` when the send configuration's
    ///   `packetMs` or the receive configuration's `frameMs` is not positive; nothing is added then.
    public func attach(to scheduler: MediaScheduler) throws(FramePacerError) {
        guard self.scheduler == nil else { return }
        // The pacers first, so a bad period leaves the scheduler untouched.
        let captureOrigin = max(start, clock.now())
        let frameMs = configuration.receive.frameMs
        let playout = try FramePacer(periodNanoseconds: Double(frameMs) * 1e6, origin: start, policy: .catchUp)
        var sendPacer: FramePacer?
        if let l = local {
            sendPacer = try FramePacer(periodNanoseconds: Double(l.sender.configuration.packetMs) * 1e6,
                                       origin: captureOrigin, policy: .catchUp)
        }
        self.scheduler = scheduler
        if let l = local, let sendPacer {
            sendID = scheduler.add("send-\(l.name)", pacer: sendPacer) {
                [unowned self] frames, _ in
                for _ in frames where !l.ended { self.sendLocalFrame(l) }
            }
        }
        if let v = localVideo {
            var next: Int64 = 0
            let pacer = try FramePacer(framesPerSecond: v.framesPerSecond, origin: captureOrigin, policy: .dropLate)
            videoID = scheduler.add("video", pacer: pacer) {
                [unowned self] frames, _ in
                guard !v.ended else { return }
                // Pictures the pacer skipped (the call was late) are not captured.
                if frames.lowerBound > next { v.sender.skipped(Int(frames.lowerBound - next)) }
                next = frames.upperBound
                self.sendLocalVideoFrame(v)
            }
        }
        let framesPerDecision = max(1, Int((configuration.dominantInterval * 1000).rounded()) / frameMs)
        let framesPerStats = max(1, Int((configuration.statisticsInterval * 1000).rounded()) / frameMs)
        playoutID = scheduler.add("playout", pacer: playout) { [unowned self] frames, _ in
            for k in frames where !self.isFinished {
                self.playoutFrame(at: playout.deadline(ofFrame: k))
                if (k + 1) % Int64(framesPerDecision) == 0 { self.decideDominant() }
                if (k + 1) % Int64(framesPerStats) == 0 { self.publishStatistics() }
                self.onFrame?(self.mediaTime)
                if self.configuration.endsWhenEveryoneLeft, self.remotesJoined > 0, self.remotes.isEmpty {
                    self.stop()
                }
            }
        }
    }

    /// Runs the call on a scheduler of its own until `end` (default: until ``stop()`` or, with
    /// ``CallSessionConfiguration/endsWhenEveryoneLeft``, everyone left), then stops it.
    /// - Throws: ``FramePacerError`` as ``attach(to:)`` does; the call has not run then.
    public func run(until end: MonotonicTime = MonotonicTime(nanoseconds: .max)) throws(FramePacerError) {
        let scheduler = self.scheduler ?? MediaScheduler(clock: clock)
        try attach(to: scheduler)
        scheduler.runUntil(end, shouldStop: { self.isFinished })
        stop()
    }

    /// Ends the session: the local participant's RTCP BYE goes out (if its media had not ended
    /// already), its streams leave the scheduler, the final statistics are published and every
    /// event stream finishes. Calling it again does nothing.
    public func stop() {
        guard !isFinished else { return }
        isFinished = true
        if let l = local { endLocal(l) }
        if let s = scheduler {
            if let id = playoutID { s.remove(id) }
            if let id = sendID { s.remove(id) }
            if let id = videoID { s.remove(id) }
        }
        publishStatistics()
        events.finish()
    }

    // MARK: Media path

    private func emit(_ event: CallEvent) {
        var event = event
        if event.name == nil, let id = event.participant { event.name = displayNames[id] ?? id }
        state.apply(event)
        onEvent?(event)
        events.publish(event)
    }

    private func sendLocalFrame(_ l: SessionLocal) {
        var handle = TransportHandle(box: l.transport)
        let name = l.name
        let muted = l.muted
        do {
            let more = try l.read(&l.sender, &handle, muted) { e in
                let change = TalkingChange(levelDbov: e.levelDbov, reason: e.reason, whileMuted: e.muted,
                                           segmentTime: e.segmentTime, probability: e.probability)
                self.emit(CallEvent(time: e.time, participant: name,
                                    kind: e.kind == .started ? .talkingStarted(change) : .talkingStopped(change)))
            }
            if !more { endLocal(l) }
        } catch {
            endLocal(l)
            localFailure = error
        }
    }

    /// Reads and sends the local video's next picture; its end or failure stops the video.
    private func sendLocalVideoFrame(_ v: SessionLocalVideo) {
        do {
            guard try v.read(&v.frame) else { endLocalVideo(v); return }
        } catch {
            localVideoFailure = error
            endLocalVideo(v)
            return
        }
        var handle = TransportHandle(box: v.transport)
        v.sender.send(v.frame, mediaTicks: v.frame.timestamp, capturedAt: v.frame.captureTime, over: &handle)
    }

    private func endLocalVideo(_ v: SessionLocalVideo) {
        v.ended = true
        if let s = scheduler, let id = videoID { s.remove(id) }
    }

    /// Answers the feedback about the local video held during the transports' reads.
    private func answerVideoFeedback(_ v: SessionLocalVideo) {
        var handle = TransportHandle(box: v.transport)
        let size = RTPLimits.maximumDatagramSize
        for i in 0..<v.heldCount {
            let n = v.heldLength[i], arrival = v.heldArrival[i]
            v.held.withUnsafeBytes { all in
                v.sender.receiveFeedback(UnsafeRawBufferPointer(rebasing: all[(i * size)..<(i * size + n)]), at: arrival, over: &handle)
            }
        }
        v.heldCount = 0
    }

    /// What an RTCP datagram (compound or reduced-size) holds for the demultiplexer: feedback
    /// about `ssrc` (a feedback message whose media SSRC it is, a report block or a REMB about it), and
    /// a BYE. Nil for a malformed datagram.
    static func inspect(_ bytes: UnsafeRawBufferPointer, feedbackAbout ssrc: UInt32?) -> (feedback: Bool, bye: Bool)? {
        var feedback = false, bye = false
        do throws(RTPError) {
            try RTCPCompound.forEachPacket(in: bytes, reducedSize: true) { view in
                if view.isBye { bye = true }
                guard let ssrc, !feedback else { return }
                if view.mediaSSRC == ssrc { feedback = true }
                view.forEachReportBlock { block in if block.ssrc == ssrc { feedback = true } }
                view.forEachREMBSSRC { if $0 == ssrc { feedback = true } }
            }
        } catch {
            return nil
        }
        return (feedback, bye)
    }

    /// The local participant's media ended (its source, an error, or ``stop()``): an RTCP BYE
    /// (RFC 3550 6.6, after an empty receiver report as a compound packet must start) for its
    /// audio and video SSRCs tells the peers at once, instead of their silence timeout; its
    /// video stops too.
    private func endLocal(_ l: SessionLocal) {
        guard !l.ended else { return }
        l.ended = true
        let ssrc = l.sender.configuration.ssrc
        var ssrcs = [ssrc]
        if let v = localVideo {
            ssrcs.append(v.sender.ssrc)
            endLocalVideo(v)
        }
        let packets: [RTCPPacket] = [.receiverReport(RTCPReceiverReport(ssrc: ssrc)), .bye(RTCPBye(ssrcs: ssrcs))]
        guard let bytes = try? RTCPCompound.marshalled(packets) else { return }
        _ = bytes.withUnsafeBytes { l.transport.send($0, at: clock.now()) }
    }

    /// Routes one datagram to its remote by SSRC (RTP: bytes 8-11; RTCP: the sender's SSRC,
    /// bytes 4-7; an RTCP BYE ends the remotes it names).
    private func demultiplex(_ bytes: UnsafeRawBufferPointer, at arrival: MonotonicTime) {
        statistics.datagrams += 1
        let rtcp = RTPMultiplexing.isRTCP(bytes)
        guard bytes.count >= (rtcp ? 8 : 12), bytes[0] >> 6 == 2 else { statistics.malformed += 1; return }
        let at = rtcp ? 4 : 8
        let ssrc = UInt32(bytes[at]) << 24 | UInt32(bytes[at + 1]) << 16 | UInt32(bytes[at + 2]) << 8 | UInt32(bytes[at + 3])
        var route = bySSRC[ssrc]
        var bye = false
        // Feedback about the local video goes to its sender (answered once the transports are
        // read); it still shows that its sender is there. A sender report carrying it also goes
        // on to its remote (its audio or video mapping).
        if rtcp, let seen = Self.inspect(bytes, feedbackAbout: localVideo?.sender.ssrc) {
            bye = seen.bye
            if seen.feedback, let v = localVideo {
                statistics.videoFeedback += 1
                if v.heldCount < v.heldLength.count, bytes.count <= RTPLimits.maximumDatagramSize {
                    let i = v.heldCount, size = RTPLimits.maximumDatagramSize
                    v.held.withUnsafeMutableBytes { all in
                        UnsafeMutableRawBufferPointer(rebasing: all[(i * size)..<(i * size + bytes.count)]).copyMemory(from: bytes)
                    }
                    v.heldLength[i] = bytes.count
                    v.heldArrival[i] = arrival
                    v.heldCount += 1
                } else {
                    statistics.videoFeedbackDropped += 1
                }
                if bytes[1] != RTCPPacket.senderReportType || route == nil {
                    route?.remote.lastArrival = arrival
                    return
                }
            }
        }
        if route == nil {
            guard configuration.admitsUndeclaredRemotes else { statistics.unknownSSRC += 1; return }
            guard remotes.count < configuration.maximumRemotes else { statistics.refusedRemotes += 1; return }
            // Only audio creates a remote (its video cannot be received without its size from
            // signalling): another payload type is not a new participant's audio.
            guard !rtcp, bytes[1] & 0x7F == configuration.receive.payloadType, let r = try? SessionRemote(name: configuration.undeclaredRemoteName ?? Self.defaultName(ofSSRC: ssrc),
                                                    serial: remotesJoined, audioSSRC: ssrc, configuration: configuration.receive) else {
                statistics.unknownSSRC += 1
                return
            }
            join(r)
            route = bySSRC[ssrc]
        }
        let r = route!.remote
        if rtcp, bytes[1] == RTCPPacket.senderReportType, bytes.count >= 24 {
            // A server in between (an SFU) keeps reporting on a stream whose sender has gone:
            // only a report of new packets shows the sender is there.
            let sent = UInt32(bytes[20]) << 24 | UInt32(bytes[21]) << 16 | UInt32(bytes[22]) << 8 | UInt32(bytes[23])
            if route!.video {
                if r.reportedVideoPackets != sent { r.lastArrival = arrival }
                r.reportedVideoPackets = sent
            } else {
                if r.reportedAudioPackets != sent { r.lastArrival = arrival }
                r.reportedAudioPackets = sent
            }
        } else {
            r.lastArrival = arrival
        }
        if bye {
            statistics.byes += 1
            r.end(drainFrames: configuration.drainFrames)
        }
        if route!.video {
            r.video?.receiver.receive(bytes, at: arrival)
        } else {
            r.receiver.receive(bytes, at: arrival)
        }
    }

    /// Hands `body` to the call's thread: it runs there, with this session, at the start of the
    /// next playout frame, in the order posted. Safe from any thread (signalling tasks, a UI);
    /// what is posted after the session finished never runs.
    public func post(_ body: @escaping @Sendable (CallSession) -> Void) { inlet.post(body) }

    private func playoutFrame(at t: MonotonicTime) {
        inlet.run(on: self)
        for tr in transports where tr.role == .shared {
            tr.box.receive(until: t) { bytes, arrival in demultiplex(bytes, at: arrival) }
        }
        var anyLeft = false
        for r in remotes {
            for tr in r.audioTransports {
                tr.receive(until: t) { bytes, arrival in demultiplex(bytes, at: arrival) }
            }
            let name = r.name
            r.receiver.playout(at: t, sink: { pcm in
                if self.echo != nil {
                    for i in 0..<min(pcm.count, self.playoutMix.count) { self.playoutMix[i] += Int32(pcm[i]) }
                }
                self.onAudio?(name, pcm)
            }, onDecision: { d in
                self.speaker.update(name, decision: d)
                self.mediaTime = max(self.mediaTime, d.time + VoiceActivityDetector.frameDuration)
            }, onTalk: { e in
                self.emitTalk(e, for: name)
            })
            if let v = r.video {
                for tr in r.videoTransports {
                    tr.receive(until: t) { bytes, arrival in demultiplex(bytes, at: arrival) }
                }
                if let played = r.receiver.lastPlayed, played.timestamp != v.lastAudioPlayed {
                    v.lastAudioPlayed = played.timestamp
                    v.receiver.sync.useAudioMapping(r.receiver.mapping)
                    v.receiver.sync.audioPlayed(rtpTimestamp: played.timestamp, at: played.at)
                }
                v.receiver.render(at: t) { picture in self.onVideo?(name, picture) }
                if let feedback = r.videoFeedbackTransports.first {
                    var handle = TransportHandle(box: feedback)
                    v.receiver.sendFeedback(at: t, over: &handle)
                }
                if !v.shownAny && v.receiver.statistics.framesShown > 0 {
                    v.shownAny = true
                    emit(CallEvent(time: mediaTime, participant: name, kind: .videoOn))
                }
            }
            if r.lifecycle == .active, configuration.remoteTimeout.isFinite, let last = r.lastArrival,
               Double(last.nanoseconds(to: t)) > configuration.remoteTimeout * 1e9 {
                r.end(drainFrames: configuration.drainFrames)
            }
            if case .ending(let framesLeft) = r.lifecycle, r.receiver.bufferedPackets == 0,
               r.audioTransports.allSatisfy({ $0.inFlight == 0 }) {
                if framesLeft <= 1 {
                    leave(r)
                    anyLeft = true
                } else {
                    r.lifecycle = .ending(drainFramesLeft: framesLeft - 1)
                }
            }
        }
        if anyLeft { prune() }
        if let echo { feedPlayout(to: echo) }
        if let v = localVideo, v.heldCount > 0 { answerVideoFeedback(v) }
    }

    /// Hands the playout frame, as the device plays it, to the echo canceller (silence when no
    /// one was heard), and clears the mix for the next frame.
    private func feedPlayout(to canceller: EchoCanceller) {
        for i in 0..<playoutMix.count {
            playoutFrameSamples[i] = Int16(clamping: playoutMix[i])
            playoutMix[i] = 0
        }
        playoutFrameSamples.withUnsafeBufferPointer { canceller.playedOut($0) }
    }

    /// A remote's audio has played out: its talking ends, its SSRCs are free, its final
    /// statistics are published and kept, and it leaves (released by ``prune()``).
    private func leave(_ r: SessionRemote) {
        let name = r.name
        r.receiver.finish { e in self.emitTalk(e, for: name) }
        r.lifecycle = .left
        bySSRC[r.audioSSRC] = nil
        if let v = r.video {
            bySSRC[v.ssrc] = nil
            if v.shownAny { emit(CallEvent(time: mediaTime, participant: name, kind: .videoOff)) }
        }
        if let e = speaker.leave(name, at: mediaTime) { emitDominant(e) }
        let counters = Self.receiveStatistics(r)
        var refined = counters.audio
        refineStatistics?(name, &refined)
        emit(CallEvent(time: mediaTime, participant: name, kind: .statistics(refined)))
        if configuration.departedRemotesKept > 0 {
            if departed.count >= configuration.departedRemotesKept { departed.removeFirst(departed.count - configuration.departedRemotesKept + 1) }
            departed.append(DepartedRemote(serial: r.serial, name: name, statistics: counters))
        }
        emit(CallEvent(time: mediaTime, participant: name, kind: .left))
    }

    /// Releases the remotes that left in this playout frame, and the transport roles tied to
    /// them that no remote present shares the name of (a transport without a role goes).
    private func prune() {
        for r in remotes where r.lifecycle == .left { displayNames[r.name] = nil }
        remotes.removeAll { $0.lifecycle == .left }
        transports.removeAll { t in
            guard let name = Self.owner(of: t.role) else { return false }
            return !remotes.contains { $0.name == name }
        }
    }

    private func emitTalk(_ e: TalkEvent, for name: ParticipantID) {
        let change = TalkingChange(levelDbov: e.levelDbov, reason: e.reason, whileMuted: false,
                                   segmentTime: e.segmentTime, probability: e.probability)
        emit(CallEvent(time: e.time, participant: name,
                       kind: e.kind == .started ? .talkingStarted(change) : .talkingStopped(change)))
    }

    private func decideDominant() {
        if let e = speaker.decide(at: mediaTime) { emitDominant(e) }
    }

    private func emitDominant(_ e: ActiveSpeakerEvent<ParticipantID>) {
        emit(CallEvent(time: e.time, participant: e.dominant, kind: .dominantSpeakerChanged(previous: e.previous)))
    }

    /// A statistics event for every remote present.
    private func publishStatistics() {
        for r in remotes {
            var a = Self.receiveStatistics(r).audio
            refineStatistics?(r.name, &a)
            emit(CallEvent(time: mediaTime, participant: r.name, kind: .statistics(a)))
        }
    }

    /// A remote's receiver's counters, and what they tell of its audio (before
    /// ``refineStatistics``): frames sent are those it accounts for (played, late, lost by
    /// sequence gaps, discarded, still buffered).
    private static func receiveStatistics(_ r: SessionRemote) -> RemoteReceiveStatistics {
        let j = r.receiver.jitterStatistics
        let s = r.receiver.statistics
        var a = ParticipantAudioStatistics()
        a.framesPlayed = s.packetsPlayed
        a.framesRecovered = j.fecRecovered
        a.framesLate = j.late
        a.framesLost = j.packetsLost
        a.framesDiscarded = j.packetsDiscarded - j.late + s.malformed + s.unexpectedPayloadType
        a.framesPending = r.receiver.bufferedPackets
        a.framesSent = a.framesPlayed + a.framesLate + a.framesLost + a.framesDiscarded + a.framesPending
        a.concealedSamples = j.concealedSamples
        a.playedSamples = j.jitterBufferEmittedCount
        a.meanJitterBufferDelayMs = j.jitterBufferEmittedCount == 0 ? 0
            : j.jitterBufferDelay / Double(j.jitterBufferEmittedCount) * 1000
        a.targetDelayMs = r.receiver.targetDelayMs
        a.maximumTargetDelayMs = s.maximumTargetDelayMs
        return (s, j, a, r.video?.receiver.statistics)
    }

    /// A transport's box as a value the send pipelines take (for a harness that sends into a
    /// simulated link the session receives from).
    /// Nil once the transport has no role in the call.
    package func transportHandle(_ id: CallTransportID) -> TransportHandle? { box(of: id).map { TransportHandle(box: $0) } }

    /// Remotes the session holds now (those present), and transport roles: what every
    /// playout frame walks.
    package var residentRemotes: Int { remotes.count }
    package var residentTransports: Int { transports.count }

    // MARK: Reading back

    /// The remote participants in join order: those present and those that left (the last
    /// ``CallSessionConfiguration/departedRemotesKept`` of them).
    public var remoteNames: [ParticipantID] {
        (departed.map { ($0.serial, $0.name) } + remotes.map { ($0.serial, $0.name) }).sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// A remote's receive-side counters, by name (the latest of that name): live for a remote
    /// present, final for one that left (if still kept, see
    /// ``CallSessionConfiguration/departedRemotesKept``).
    public func receiveStatistics(of name: ParticipantID) -> (receive: AudioReceiveStatistics, jitter: JitterBufferStatistics,
                                                              audio: ParticipantAudioStatistics, video: VideoStatistics?)? {
        let present = remotes.last { $0.name == name }
        let gone = departed.last { $0.name == name }
        var statistics: RemoteReceiveStatistics
        if let r = present, r.serial > gone?.serial ?? -1 {
            statistics = Self.receiveStatistics(r)
        } else if let d = gone {
            statistics = d.statistics
        } else {
            return nil
        }
        refineStatistics?(name, &statistics.audio)
        return statistics
    }

    /// Whether a present remote's video receiver asked for a keyframe since the last call (then cleared).
    public func takeKeyframeRequest(of name: ParticipantID) -> Bool {
        guard let v = remotes.last(where: { $0.name == name })?.video else { return false }
        return v.receiver.takeKeyframeRequest()
    }
}
