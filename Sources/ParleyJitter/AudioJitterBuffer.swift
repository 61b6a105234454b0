#if canImport(ParleyRTP)
import ParleyRTP
#endif

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
/// **Costs.** All storage is allocated in `init` (about `capacity * maximumPayloadBytes`
/// bytes of payload slots, 384 KB with the defaults, plus 32 KB of delay histogram); `put` and
/// `get` allocate nothing in steady state (about 0.5-0.8 us per 20 ms packet with L16 in
/// `parley-bench`). Not thread-safe: one owner calls `put` and `get` (a receive thread hands packets
/// to the playout thread, which owns the buffer).
public struct AudioJitterBuffer: Sendable {
    /// The settings it was created with.
    public let configuration: JitterBufferConfiguration
    private var stats = JitterBufferStatistics()

    // Packet ring, indexed by unwrapped sequence & mask. slotSeq == -1: empty.
    private let mask: Int
    private var slotSeq: [Int64]
    private var slotMedia: [Int64]
    private var slotDuration: [Int64]
    private var slotArrival: [Double]
    private var slotLength: [Int]
    private var slotTag: [Int]
    private var slotSeq16: [UInt16]
    private var payloads: [UInt8]
    private var stored = 0
    // Sequence numbers seen recently (duplicate detection), indexed by unwrapped seq & seenMask.
    private let seenMask: Int
    private var seen: [Int64]

    // Stream anchors (the newest packet), for unwrapping.
    private var hasStream = false
    // RFC 3550 A.1 sequence validation without probation (the first packet starts the stream);
    // a jump restarts only when the jumped-to packet's successor is the very next arrival.
    private var sequenceValidator: RTPSequenceValidator
    private var highestSeq: Int64 = 0
    private var highestTs32: UInt32 = 0
    private var highestMedia: Int64 = 0
    private var highestArrival = 0.0
    private var firstSeq: Int64 = 0
    private var uniqueReceived = 0
    private var expectedEW = 0.0
    private var receivedEW = 0.0

    // Playout state.
    private var playing = false
    private var nextSeq: Int64 = 0
    private var nextTS: Int64 = 0
    private var inConcealment = false
    private var concealedInFrame = false

    // Decoded PCM waiting to be emitted (interleaved), and what each run of it came from.
    private var pcm: [Int16]
    private var pcmCount = 0
    private var segments: [Segment]
    private var playedPackets: [JitterPlayedPacket]

    private var estimator: DelayEstimator
    private var targetDirty = true
    private var targetMs: Double
    private var waitMs: Double

    private struct Segment: Sendable {
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
        sequenceValidator = RTPSequenceValidator(maxDropout: c.maximumDropout, maxMisorder: c.maximumMisorder,
                                                 probationPackets: 0, restartConfirmation: .nextArrival)
        mask = c.capacity - 1
        slotSeq = [Int64](repeating: -1, count: c.capacity)
        slotMedia = [Int64](repeating: 0, count: c.capacity)
        slotDuration = [Int64](repeating: 0, count: c.capacity)
        slotArrival = [Double](repeating: 0, count: c.capacity)
        slotLength = [Int](repeating: 0, count: c.capacity)
        slotTag = [Int](repeating: 0, count: c.capacity)
        slotSeq16 = [UInt16](repeating: 0, count: c.capacity)
        payloads = [UInt8](repeating: 0, count: c.capacity * c.maximumPayloadBytes)
        let seenCount = max(4096, c.capacity * 4)
        seenMask = seenCount - 1
        seen = [Int64](repeating: -1, count: seenCount)
        // Room for: a frame still pending, the longest packet stretched by half, a frame more.
        let pcmSamples = (c.frameMs * 2 + c.maximumPacketMs * 2 + 20) * c.sampleRate / 1000
        pcm = [Int16](repeating: 0, count: pcmSamples * c.channels)
        segments = []
        segments.reserveCapacity(64)
        playedPackets = []
        playedPackets.reserveCapacity(16)
        estimator = DelayEstimator(validated: c)
        targetMs = c.initialDelayMs
        waitMs = c.initialDelayMs
    }

    // MARK: - Observers

    /// The counters so far (`packetsLost` computed from the sequence span).
    public var statistics: JitterBufferStatistics {
        var s = stats
        s.packetsLost = hasStream ? max(0, Int(highestSeq - firstSeq + 1) - uniqueReceived) : 0
        return s
    }

    /// The current target buffering delay above the fastest packets, ms.
    public var targetDelayMs: Double { targetMs }

    /// Packets held, not yet played.
    public var bufferedPackets: Int { stored }

    /// Packets whose first sample the last `get` emitted, in order.
    public var lastPlayedPackets: [JitterPlayedPacket] { playedPackets }

    /// The delay estimator (drift line and histogram), for inspection.
    public var delayEstimator: DelayEstimator { estimator }

    // MARK: - Input

    /// Stores one packet.
    ///
    /// - Parameters:
    ///   - sequence, timestamp: from the RTP header (may wrap).
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
        let dur = min(max(Int64(duration ?? c.packetMs * c.clockRate / 1000), Int64(c.clockRate / 400)), maxDur)

        let useq: Int64
        var media: Int64
        let verdict = sequenceValidator.validate(sequence)
        switch verdict {
        case .started:
            hasStream = true
            useq = 1 << 32
            media = 0
            firstSeq = useq
            highestSeq = useq; highestTs32 = timestamp
            highestMedia = 0; highestArrival = arr
            nextSeq = useq; nextTS = 0
        case .inOrder, .misordered:
            let delta = verdict.offset ?? 0
            useq = highestSeq + Int64(delta)
            let tsDelta = Int64(Int32(bitPattern: timestamp &- highestTs32))
            media = highestMedia + tsDelta
            if delta > 0 {
                let tsMs = Double(tsDelta) * 1000 / Double(c.clockRate)
                let elapsedMs = arr - highestArrival
                let nominalMs = Double(Int64(delta) * dur) * 1000 / Double(c.clockRate)
                if abs(tsMs - elapsedMs) > c.timestampJumpToleranceMs && abs(tsMs - nominalMs) > c.timestampJumpToleranceMs {
                    media = highestMedia + max(Int64(delta) * dur, Int64(elapsedMs * Double(c.clockRate) / 1000))
                    stats.resyncs += 1
                }
            }
        case .restarted:
            // RFC 3550 A.1: two packets in a row in the new sequence space: a restart.
            useq = highestSeq + 1
            let elapsed = Int64(max(0, arr - highestArrival) * Double(c.clockRate) / 1000)
            media = highestMedia + max(dur, elapsed)
            stats.resyncs += 1
        case .jump, .probation:
            stats.packetsDiscarded += 1
            return .discarded(.strayPacket)
        }

        let seenIndex = Int(useq & Int64(seenMask))
        if seen[seenIndex] == useq {
            stats.packetsDuplicated += 1
            return .duplicate
        }
        if !playing && useq < nextSeq {
            if highestSeq - useq >= Int64(c.capacity) {
                stats.packetsDiscarded += 1
                return .discarded(.overflow)
            }
        }
        seen[seenIndex] = useq
        uniqueReceived += 1
        // Loss-rate estimate (RTP style, forgetting): expected advances with the highest seq.
        let advance = max(0, min(useq - highestSeq, 1_000))
        let decay = 0.999
        expectedEW = expectedEW * _pow(decay, Double(advance)) + Double(advance)
        receivedEW = receivedEW * (advance > 0 ? _pow(decay, Double(advance)) : 1) + 1
        if receivedEW > expectedEW { receivedEW = expectedEW }
        if useq < firstSeq { firstSeq = useq }
        if useq > highestSeq || (highestSeq == useq) {
            highestSeq = useq; highestTs32 = timestamp
            highestMedia = media; highestArrival = arr
        }
        let mediaMs = self.mediaMs(media)
        estimator.add(delayMs: arr - mediaMs, mediaMs: mediaMs)
        targetDirty = true

        if playing {
            if useq < nextSeq || media + dur <= nextTS {
                stats.late += 1
                stats.packetsDiscarded += 1
                return .late
            }
        } else if useq < nextSeq || stored == 0 {
            nextSeq = useq
            nextTS = media
        }
        if useq >= nextSeq + Int64(c.capacity) {
            // Overflow: drop the oldest packets so the newest fits (latency stays bounded).
            let newStart = useq - Int64(c.capacity) + 1
            while nextSeq < newStart {
                let s = Int(nextSeq & Int64(mask))
                if slotSeq[s] == nextSeq {
                    nextTS = max(nextTS, slotMedia[s] + slotDuration[s])
                    release(s)
                    stats.packetsDiscarded += 1
                } else {
                    nextTS += dur
                }
                nextSeq += 1
            }
            let s = Int(nextSeq & Int64(mask))
            if slotSeq[s] == nextSeq { nextTS = slotMedia[s] }
        }
        let s = Int(useq & Int64(mask))
        slotSeq[s] = useq
        slotMedia[s] = media
        slotDuration[s] = dur
        slotArrival[s] = arr
        slotLength[s] = payload.count
        slotTag[s] = tag
        slotSeq16[s] = sequence
        let base = s * c.maximumPayloadBytes
        payloads.withUnsafeMutableBytes { dst in
            dst.baseAddress!.advanced(by: base).copyMemory(from: payload.baseAddress!, byteCount: payload.count)
        }
        stored += 1
        return .accepted
    }

    /// Stores one packet given as bytes (see the raw-buffer form).
    @discardableResult
    public mutating func put(sequence: UInt16, timestamp: UInt32, arrival: MonotonicTime,
                             payload: [UInt8], duration: Int? = nil, tag: Int = 0) -> JitterPutOutcome {
        payload.withUnsafeBytes { put(sequence: sequence, timestamp: timestamp, arrival: arrival,
                                      payload: $0, duration: duration, tag: tag) }
    }

    // MARK: - Output

    /// Emits one frame (``JitterBufferConfiguration/frameSamples`` samples per channel,
    /// interleaved) into `output`, decoding, concealing and stretching with `decoder`.
    ///
    /// Call it every frame period with the receiver's current time. Packets whose first
    /// sample was emitted are listed in ``lastPlayedPackets``.
    public mutating func get<D: JitterBufferDecoder & ~Copyable>(
        at time: MonotonicTime, into output: UnsafeMutableBufferPointer<Int16>, decoder: inout D
    ) -> JitterFrameKind {
        let c = configuration
        let n = c.frameSamples
        precondition(output.count >= n * c.channels, "output holds less than one frame")
        playedPackets.removeAll(keepingCapacity: true)
        let now = time.milliseconds
        if !playing {
            refreshTarget()
            let startMs = mediaMs(nextTS)
            guard hasStream, stored > 0,
                  now - startMs - estimator.baseline(atMedia: startMs) >= targetMs else {
                for i in 0..<(n * c.channels) { output[i] = 0 }
                return .buffering
            }
            playing = true
        }
        concealedInFrame = false
        var guardCount = 0
        while pcmCount < n {
            refill(now: now, decoder: &decoder)
            guardCount += 1
            precondition(guardCount < 10_000, "jitter buffer refill made no progress")
        }
        emit(n, now: now, into: output)
        return concealedInFrame ? .concealed : .normal
    }

    /// Drops every packet and all playout state, keeping the settings and the delay history.
    public mutating func flush() {
        for s in 0..<slotSeq.count where slotSeq[s] >= 0 { release(s) }
        playing = false
        pcmCount = 0
        segments.removeAll(keepingCapacity: true)
        inConcealment = false
    }

    // MARK: - Internals

    @inline(__always) private func mediaMs(_ media: Int64) -> Double {
        Double(media) * 1000 / Double(configuration.clockRate)
    }

    private var ratio: Int64 { Int64(configuration.clockRate / configuration.sampleRate) }

    private mutating func release(_ s: Int) {
        slotSeq[s] = -1
        stored -= 1
    }

    private mutating func refreshTarget() {
        guard targetDirty else { return }
        targetDirty = false
        let c = configuration
        var t = estimator.count > 0 ? estimator.quantile(c.quantile) : c.initialDelayMs
        if estimator.count < 20 { t = max(t, c.initialDelayMs) }
        targetMs = min(max(t, c.minimumDelayMs), c.maximumDelayMs)
        // How long to wait for a missing packet: while it is still likely to arrive rather
        // than be lost. With loss rate L and survival S(w) of the delays, the odds it arrives
        // are (1-L)S(w) / L; wait while they exceed `lossWaitOdds`, i.e. up to the quantile
        // 1 - odds*L/(1-L), capped by `waitQuantile` (no loss: wait long).
        let loss = expectedEW > 0 ? min(0.5, max(0, 1 - receivedEW / expectedEW)) : 0
        let q = min(c.waitQuantile, max(c.quantile, 1 - c.lossWaitOdds * loss / (1 - loss)))
        var w = estimator.count > 0 ? estimator.quantile(q) * c.waitMarginFactor : c.initialDelayMs
        if estimator.count < 100 { w = max(w, c.startupWaitMs) }
        waitMs = min(max(w, targetMs), c.maximumDelayMs)
    }

    private mutating func refill<D: JitterBufferDecoder & ~Copyable>(now: Double, decoder: inout D) {
        refreshTarget()
        let c = configuration
        let playAtMs = now + Double(pcmCount) * 1000 / Double(c.sampleRate)
        let nextMs = mediaMs(nextTS)
        let aboveBaseline = playAtMs - nextMs - estimator.baseline(atMedia: nextMs)
        let errorMs = aboveBaseline - targetMs
        let frameClock = Int64(c.frameSamples) * ratio
        let s = Int(nextSeq & Int64(mask))

        if slotSeq[s] == nextSeq {
            let media = slotMedia[s]
            if media > nextTS {
                // A timestamp gap with the packets in sequence: silence (DTX) or a re-base.
                let gap = media - nextTS
                let chunk = min(gap, frameClock)
                var advance = chunk
                if errorMs > c.stretchThresholdMs {
                    let extra = min(gap - chunk, Int64(errorMs * Double(c.clockRate) / 1000))
                    advance += extra
                    stats.removedSamplesForAcceleration += Int(extra / ratio)
                } else if errorMs < -c.stretchThresholdMs {
                    let inserted = min(chunk, Int64(-errorMs * Double(c.clockRate) / 1000)) / ratio * ratio
                    advance -= inserted
                    stats.insertedSamplesForDeceleration += Int(inserted / ratio)
                }
                appendConcealment(Int(chunk / ratio), decoder: &decoder, silence: true)
                nextTS += advance
                return
            }
            decodeSlot(s, errorMs: errorMs, decoder: &decoder)
            return
        }

        // The first packet held after the missing one (all held packets lie in
        // nextSeq ..< nextSeq + capacity).
        var q = nextSeq + 1
        if stored > 0 {
            let limit = nextSeq + Int64(c.capacity)
            while q < limit && slotSeq[Int(q & Int64(mask))] != q { q += 1 }
        }
        if stored > 0 && q < nextSeq + Int64(c.capacity) {
            // The packet due is missing but later ones are here: it is lost (or very late).
            let qs = Int(q & Int64(mask))
            if slotMedia[qs] <= nextTS {
                nextSeq = q
                return
            }
            if errorMs < -c.stretchThresholdMs || (c.waitForReordered && aboveBaseline < waitMs) {
                // Reordered rather than lost (its delay is still within the wait quantile):
                // wait for it, concealing, instead of giving it up.
                appendConcealment(c.frameSamples, decoder: &decoder, silence: false)
                return
            }
            let gap = slotMedia[qs] - nextTS
            let nominal = Int64(c.packetMs * c.clockRate / 1000)
            let length = min(gap, nominal)
            if q == nextSeq + 1 && gap <= slotDuration[qs] {
                let lengthSamples = Int(length / ratio)
                if appendFEC(from: qs, samples: lengthSamples, decoder: &decoder) {
                    nextTS += length
                    nextSeq += 1
                    return
                }
            }
            appendConcealment(Int(length / ratio), decoder: &decoder, silence: false)
            nextTS += length
            nextSeq += 1
            return
        }

        // Nothing buffered: wait (conceal without advancing) while the missing packet may
        // still come, then let media time run on.
        appendConcealment(c.frameSamples, decoder: &decoder, silence: false)
        if aboveBaseline >= waitMs {
            nextTS += frameClock
        }
    }

    private mutating func decodeSlot<D: JitterBufferDecoder & ~Copyable>(_ s: Int, errorMs: Double, decoder: inout D) {
        let c = configuration
        let ch = c.channels
        let media = slotMedia[s]
        let length = slotLength[s]
        let base = s * c.maximumPayloadBytes
        let start = pcmCount * ch
        let maxSamples = c.maximumPacketMs * c.sampleRate / 1000
        let wanted = Int(abs(errorMs) * Double(c.sampleRate) / 1000)
        let threshold = c.stretchThresholdMs
        let rate = c.sampleRate
        // Far from the target, accept a weaker periodicity (an audible splice beats a
        // long-lasting excess delay); near it, only clean pitch periods.
        let gate = abs(errorMs) > 4 * threshold ? c.stretchMinimumCorrelation * 0.6 : c.stretchMinimumCorrelation
        var removed = 0, inserted = 0
        let decoded: Int? = payloads.withUnsafeBytes { src in
            pcm.withUnsafeMutableBufferPointer { dst in
                let out = UnsafeMutableBufferPointer(rebasing: dst[start..<min(dst.count, start + maxSamples * ch)])
                return decoder.decode(UnsafeRawBufferPointer(rebasing: src[base..<(base + length)]), into: out)
            }
        }
        let arrival = slotArrival[s], tag = slotTag[s], seq16 = slotSeq16[s]
        let duration = slotDuration[s]
        nextSeq += 1
        release(s)
        guard var n = decoded, n > 0 else {
            // Corrupt payload: conceal its duration.
            stats.decodeFailures += 1
            appendConcealment(Int(duration / ratio), decoder: &decoder, silence: false)
            nextTS = media + duration
            return
        }
        nextTS = media + Int64(n) * ratio
        // Time-scale modification toward the target delay.
        if errorMs > threshold || errorMs < -threshold {
            let accelerate = errorMs > 0
            n = pcm.withUnsafeMutableBufferPointer { dst in
                let region = UnsafeMutableBufferPointer(rebasing: dst[start..<dst.count])
                let l = TimeStretch.chooseLength(region, count: n, channels: ch, sampleRate: rate, wantedSamples: wanted,
                                                 minimumCorrelation: gate)
                guard l > 0 else { return n }
                if accelerate {
                    let m = TimeStretch.accelerate(region, count: n, channels: ch, length: l)
                    removed = n - m
                    return m
                }
                let m = TimeStretch.decelerate(region, count: n, channels: ch, length: l)
                inserted = m - n
                return m
            }
        }
        stats.removedSamplesForAcceleration += removed
        stats.insertedSamplesForDeceleration += inserted
        segments.append(Segment(start: pcmCount, decoded: true, packetStart: true, tag: tag, seq16: seq16, arrivalMs: arrival))
        pcmCount += n
        inConcealment = false
    }

    private mutating func appendFEC<D: JitterBufferDecoder & ~Copyable>(from s: Int, samples: Int, decoder: inout D) -> Bool {
        let c = configuration
        let ch = c.channels
        let start = pcmCount * ch
        let base = s * c.maximumPayloadBytes
        let length = slotLength[s]
        let got: Int? = payloads.withUnsafeBytes { src in
            pcm.withUnsafeMutableBufferPointer { dst in
                let out = UnsafeMutableBufferPointer(rebasing: dst[start..<min(dst.count, start + samples * ch)])
                return decoder.decodeFEC(fromNext: UnsafeRawBufferPointer(rebasing: src[base..<(base + length)]),
                                         into: out, samplesPerChannel: samples)
            }
        }
        guard let n = got, n > 0 else { return false }
        segments.append(Segment(start: pcmCount, decoded: true, packetStart: false, tag: 0, seq16: 0,
                                arrivalMs: slotArrival[s]))
        pcmCount += n
        stats.fecRecovered += 1
        inConcealment = false
        return true
    }

    private mutating func appendConcealment<D: JitterBufferDecoder & ~Copyable>(_ samples: Int, decoder: inout D, silence: Bool) {
        let ch = configuration.channels
        let start = pcmCount * ch
        let (n, silent): (Int, Bool) = pcm.withUnsafeMutableBufferPointer { dst in
            let out = UnsafeMutableBufferPointer(rebasing: dst[start..<min(dst.count, start + samples * ch)])
            let got = min(max(0, decoder.conceal(into: out, samplesPerChannel: samples)), samples)
            // A decoder that returns less (or nothing) is padded with silence.
            for i in (got * ch)..<(samples * ch) { out[i] = 0 }
            var peak: Int16 = 0
            for i in 0..<(samples * ch) { peak = max(peak, out[i] == Int16.min ? Int16.max : abs(out[i])) }
            return (samples, peak < 64)
        }
        segments.append(Segment(start: pcmCount, decoded: false, packetStart: false, tag: 0, seq16: 0, arrivalMs: 0))
        pcmCount += n
        stats.concealedSamples += n
        if silent || silence { stats.silentConcealedSamples += n }
        if !inConcealment {
            stats.concealmentEvents += 1
            inConcealment = true
        }
        concealedInFrame = true
    }

    private mutating func emit(_ n: Int, now: Double, into output: UnsafeMutableBufferPointer<Int16>) {
        let c = configuration
        let ch = c.channels
        let perSampleMs = 1000 / Double(c.sampleRate)
        // Account each segment's overlap with [0, n).
        var i = 0
        while i < segments.count {
            let seg = segments[i]
            guard seg.start < n else { break }
            let end = i + 1 < segments.count ? min(segments[i + 1].start, n) : n
            let count = end - seg.start
            if seg.packetStart {
                playedPackets.append(JitterPlayedPacket(tag: seg.tag, sequence: seg.seq16, offsetInFrame: seg.start))
            }
            if seg.decoded && count > 0 {
                stats.jitterBufferEmittedCount += count
                // Sum of (emission - arrival) over the samples, in seconds.
                let first = now + Double(seg.start) * perSampleMs - seg.arrivalMs
                let sumMs = Double(count) * first + perSampleMs * Double(count * (count - 1)) / 2
                stats.jitterBufferDelay += sumMs / 1000
                stats.jitterBufferTargetDelay += Double(count) * targetMs / 1000
            }
            i += 1
        }
        // Drop consumed segments; the one straddling n continues at 0 as a non-start.
        var keepFrom = segments.count
        for j in 0..<segments.count where (j + 1 < segments.count ? segments[j + 1].start : pcmCount) > n {
            keepFrom = j
            break
        }
        if keepFrom > 0 { segments.removeFirst(min(keepFrom, segments.count)) }
        for j in 0..<segments.count {
            if segments[j].start < n {
                segments[j].start = 0
                segments[j].packetStart = false
            } else {
                segments[j].start -= n
            }
        }
        pcm.withUnsafeMutableBufferPointer { buf in
            for k in 0..<(n * ch) { output[k] = buf[k] }
            let rest = (pcmCount - n) * ch
            if rest > 0 {
                (buf.baseAddress! + 0).update(from: buf.baseAddress! + n * ch, count: rest)
            }
        }
        pcmCount -= n
    }
}

// `pow` without Foundation (ParleyJitter stays dependency-free).
#if canImport(Glibc)
import Glibc
@inline(__always) private func _pow(_ x: Double, _ y: Double) -> Double { Glibc.pow(x, y) }
#elseif canImport(Darwin)
import Darwin
@inline(__always) private func _pow(_ x: Double, _ y: Double) -> Double { Darwin.pow(x, y) }
#endif
