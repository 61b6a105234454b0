/// An adaptive audio jitter buffer: packets go in as they arrive (`put`), audio comes out on
/// the receiver's clock (`get`, a pull model, one 10 or 20 ms frame per call).
///
/// **Timeline.** Packets are kept in a preallocated ring indexed by their (unwrapped) RTP
/// sequence number & `capacity - 1`, and placed on an internal media timeline: the RTP
/// timestamp unwrapped (32-bit wrap), re-based on timestamp jumps and sender restarts so it
/// stays continuous. Playout walks this timeline: the packet at the playout point is decoded;
/// a missing one is recovered from the next packet's FEC or concealed (PLC); a timestamp gap
/// with the packets in sequence (DTX, silence) is filled with concealment.
///
/// **Delay.** Every arrival gives a relative delay (arrival minus media time). A
/// ``DelayEstimator`` fits a drift line through recent minima (sender/receiver clock drift)
/// and keeps a forgetting histogram of the delays above it; the target delay is its
/// ``JitterBufferConfiguration/quantile``. When the playout delay is above the target, the
/// buffer removes whole pitch periods from decoded speech (acceleration) or shortens silence;
/// below it, it repeats pitch periods or lengthens silence: no gaps, no clicks. When the
/// packet due is missing and nothing later has arrived, the buffer waits (conceals without
/// advancing) up to a higher delay quantile, so a delay spike stretches the audio instead of
/// losing it; a packet that arrives after its slot was concealed is counted late.
///
/// **Decide, then act.** Each step of playout first decides what to do, a
/// ``PlayoutOperation`` (decode as is, accelerate, preemptively expand, fill a silence gap,
/// wait, conceal a lost packet, ...), from the packet due, the packets held and the delay
/// against its targets, then carries it out; the steps of the last `get` are listed in
/// ``lastOperations``.
///
/// **Costs.** All storage is allocated in `init` (about `capacity * maximumPayloadBytes`
/// bytes of payload slots, 384 KB with the defaults, plus 32 KB of delay histogram); `put` and
/// `get` allocate nothing in steady state (about 0.5-0.8 us per 20 ms packet with L16 in
/// `parley-bench`). Not thread-safe: one owner calls `put` and `get` (a receive thread hands packets
/// to the playout thread, which owns the buffer).
public struct AudioJitterBuffer: Sendable {
    /// The settings it was created with.
    public let configuration: JitterBufferConfiguration
    var stats = JitterBufferStatistics()

    var store: JitterPacketStore
    var timeline: StreamTimeline
    var targets: DelayTargets

    // Playout state: whether playout started, and the playout point (the sequence number due
    // and the media time of the next sample).
    var playing = false
    var nextSeq: Int64 = 0
    var nextTS: Int64 = 0
    var inConcealment = false
    var concealedInFrame = false
    /// The receiver time of the current `get`, ms.
    var frameStartMs = 0.0

    // Decoded PCM waiting to be emitted (interleaved), and what each run of it came from.
    var pcm: [Int16]
    var pcmCount = 0
    var segments: [Segment]
    var playedPackets: [JitterPlayedPacket]
    /// The steps of the current `get`: the first `operationCount` (the array only grows).
    var operations: [PlayoutOperation]
    var operationCount = 0

    /// Room in the PCM queue beyond a pending frame and the longest packet stretched by
    /// half, ms.
    static let pcmHeadroomMs = 20
    /// Playout steps a `get` may take before it is a bug (each normally produces audio).
    static let maximumStepsPerFrame = 10_000
    /// Playout steps of one `get` recorded without growing storage (more are recorded too).
    static let recordedOperations = 16

    struct Segment: Sendable {
        var start: Int          // samples per channel from the head of `pcm`
        var decoded: Bool
        var packetStart: Bool
        var tag: Int
        var seq16: UInt16
        var arrivalMs: Double
    }

    /// Creates a buffer with the default settings; all memory it will use is allocated here.
    public init() {
        self.init(validated: JitterBufferConfiguration())
    }

    /// Creates a buffer; all memory it will use is allocated here.
    ///
    /// - Throws: ``JitterConfigurationError`` when a setting is out of range (see
    ///   ``JitterBufferConfiguration/validate()``).
    public init(configuration: JitterBufferConfiguration) throws(JitterConfigurationError) {
        try configuration.validate()
        self.init(validated: configuration)
    }

    private init(validated configuration: JitterBufferConfiguration) {
        let c = configuration
        self.configuration = c
        store = JitterPacketStore(capacity: c.capacity, maximumPayloadBytes: c.maximumPayloadBytes)
        timeline = StreamTimeline(c)
        targets = DelayTargets(c)
        // Room for: a frame still pending, the longest packet stretched by half, a frame more.
        let pcmSamples = (c.frameMs * 2 + c.maximumPacketMs * 2 + Self.pcmHeadroomMs) * c.sampleRate / 1000
        pcm = [Int16](repeating: 0, count: pcmSamples * c.channels)
        segments = []
        segments.reserveCapacity(64)
        playedPackets = []
        playedPackets.reserveCapacity(16)
        operations = [PlayoutOperation](repeating: .buffer, count: Self.recordedOperations)
    }

    // MARK: - Observers

    /// The counters so far (`packetsLost` computed from the sequence span).
    public var statistics: JitterBufferStatistics {
        var s = stats
        s.packetsLost = timeline.packetsLost
        return s
    }

    /// The current target buffering delay above the fastest packets, ms.
    public var targetDelayMs: Double { targets.targetMs }

    /// Packets held, not yet played.
    public var bufferedPackets: Int { store.count }

    /// Packets whose first sample the last `get` emitted, in order.
    public var lastPlayedPackets: [JitterPlayedPacket] { playedPackets }

    /// The playout steps the last `get` took, in order (one ``PlayoutOperation/buffer`` while
    /// playout has not started).
    /// Reading it copies them (an allocation); playout itself records them in place.
    public var lastOperations: [PlayoutOperation] { Array(operations[0..<operationCount]) }

    /// The delay estimator (drift line and histogram), for inspection.
    public var delayEstimator: DelayEstimator { targets.delay }

    // MARK: - Input

    /// Shortest packet duration assumed, µs (Opus's shortest frame, 2.5 ms); shorter stated
    /// durations are raised to it.
    static let shortestPacketMicroseconds = 2_500

    /// Stores one packet.
    ///
    /// - Parameters:
    ///   - sequence: from the RTP header (may wrap).
    ///   - timestamp: from the RTP header (may wrap).
    ///   - arrival: when it arrived, on the receiver's clock (the one `get` is called with).
    ///   - payload: the codec payload; copied, so the caller may reuse its buffer.
    ///   - duration: in RTP clock units (Opus: from the TOC); `nil` = ``JitterBufferConfiguration/packetMs``.
    ///   - tag: returned in ``lastPlayedPackets`` when it plays (e.g. an index into a trace).
    @discardableResult
    public mutating func put(sequence: UInt16, timestamp: UInt32, arrival: MonotonicTime,
                             payload: UnsafeRawBufferPointer, duration: Int? = nil, tag: Int = 0) -> JitterPutOutcome {
        let c = configuration
        stats.packetsReceived += 1
        let arr = arrival.milliseconds
        guard payload.count > 0, payload.count <= c.maximumPayloadBytes else {
            stats.packetsDiscarded += 1
            return .discarded(.badPayloadSize)
        }
        let maxDur = Int64(c.maximumPacketMs * c.clockRate / 1000)
        let minDur = Int64(c.clockRate * Self.shortestPacketMicroseconds / 1_000_000)
        let dur = min(max(Int64(duration ?? c.packetMs * c.clockRate / 1000), minDur), maxDur)

        guard let placed = timeline.place(sequence: sequence, timestamp: timestamp, arrivalMs: arr, duration: dur) else {
            stats.packetsDiscarded += 1
            return .discarded(.strayPacket)
        }
        if placed.rebased { stats.resyncs += 1 }
        let useq = placed.sequence, media = placed.media
        if timeline.hasReceived(useq) {
            stats.packetsDuplicated += 1
            return .duplicate
        }
        if !playing && useq < nextSeq && timeline.highestSequence - useq >= Int64(c.capacity) {
            stats.packetsDiscarded += 1
            return .discarded(.overflow)
        }
        let advance = timeline.accept(placed, timestamp: timestamp, arrivalMs: arr)
        let mediaMs = timeline.milliseconds(media)
        targets.add(delayMs: arr - mediaMs, mediaMs: mediaMs, advance: advance)

        if playing {
            if useq < nextSeq || media + dur <= nextTS {
                stats.late += 1
                stats.packetsDiscarded += 1
                return .late
            }
        } else if useq < nextSeq || store.count == 0 {
            nextSeq = useq
            nextTS = media
        }
        if useq >= nextSeq + Int64(c.capacity) { dropOldest(toFit: useq, duration: dur) }
        store.insert(sequence: useq, media: media, duration: dur, arrivalMs: arr, tag: tag, sequence16: sequence,
                     payload: payload)
        return .accepted
    }

    /// Stores one packet given as bytes (see the raw-buffer form).
    @discardableResult
    public mutating func put(sequence: UInt16, timestamp: UInt32, arrival: MonotonicTime,
                             payload: [UInt8], duration: Int? = nil, tag: Int = 0) -> JitterPutOutcome {
        payload.withUnsafeBytes { put(sequence: sequence, timestamp: timestamp, arrival: arrival,
                                      payload: $0, duration: duration, tag: tag) }
    }

    /// Overflow: drops the oldest packets (moving the playout point past them) so `useq` fits
    /// in the ring; latency stays bounded.
    private mutating func dropOldest(toFit useq: Int64, duration dur: Int64) {
        let newStart = useq - Int64(configuration.capacity) + 1
        while nextSeq < newStart {
            let s = store.slot(of: nextSeq)
            if store.holds(nextSeq) {
                nextTS = max(nextTS, store.media[s] + store.duration[s])
                store.release(s)
                stats.packetsDiscarded += 1
            } else {
                nextTS += dur
            }
            nextSeq += 1
        }
        if store.holds(nextSeq) { nextTS = store.media[store.slot(of: nextSeq)] }
    }

    // MARK: - Output

    /// Emits one frame (``JitterBufferConfiguration/frameSamples`` samples per channel,
    /// interleaved) into `output`, decoding, concealing and stretching with `decoder`.
    ///
    /// Call it every frame period with the receiver's current time. Packets whose first
    /// sample was emitted are listed in ``lastPlayedPackets``, the steps taken in
    /// ``lastOperations``.
    /// - Throws: ``JitterBufferError/outputTooSmall(needed:given:)`` when `output` holds less
    ///   than one frame (nothing is played then).
    public mutating func get<D: JitterBufferDecoder & ~Copyable>(
        at time: MonotonicTime, into output: UnsafeMutableBufferPointer<Int16>, decoder: inout D
    ) throws(JitterBufferError) -> JitterFrameKind {
        let needed = configuration.frameSamples * configuration.channels
        guard output.count >= needed else { throw .outputTooSmall(needed: needed, given: output.count) }
        return getFrame(at: time, into: output, decoder: &decoder)
    }

    /// ``get(at:into:decoder:)`` for a caller whose `output` is known to hold a frame.
    package mutating func getFrame<D: JitterBufferDecoder & ~Copyable>(
        at time: MonotonicTime, into output: UnsafeMutableBufferPointer<Int16>, decoder: inout D
    ) -> JitterFrameKind {
        let c = configuration
        let n = c.frameSamples
        playedPackets.removeAll(keepingCapacity: true)
        operationCount = 0
        frameStartMs = time.milliseconds
        concealedInFrame = false
        var steps = 0
        while pcmCount < n {
            targets.refresh()
            let position = measure()
            let operation = decide(position)
            record(operation)
            if operation == .buffer {
                for i in 0..<(n * c.channels) { output[i] = 0 }
                return .buffering
            }
            playing = true
            perform(operation, at: position, decoder: &decoder)
            steps += 1
            precondition(steps < Self.maximumStepsPerFrame, "jitter buffer playout made no progress")
        }
        emit(n, now: frameStartMs, into: output)
        return concealedInFrame ? .concealed : .normal
    }

    private mutating func record(_ operation: PlayoutOperation) {
        if operationCount < operations.count {
            operations[operationCount] = operation
        } else {
            operations.append(operation)
        }
        operationCount += 1
    }

    /// Drops every packet and all playout state, keeping the settings and the delay history.
    public mutating func flush() {
        store.removeAll()
        playing = false
        pcmCount = 0
        segments.removeAll(keepingCapacity: true)
        inConcealment = false
    }
}
