// Carrying out AudioJitterBuffer's playout operations: decoding, concealing, stretching,
// and emitting the queued PCM.

extension AudioJitterBuffer {
    /// Far from the target (this many times ``JitterBufferConfiguration/stretchThresholdMs``)
    /// a weaker periodicity is accepted for stretching: an audible splice beats a
    /// long-lasting excess delay.
    static let farFromTargetFactor = 4.0
    /// The fraction of ``JitterBufferConfiguration/stretchMinimumCorrelation`` needed when
    /// far from the target.
    static let farFromTargetCorrelationScale = 0.6
    /// Concealment whose peak stays below this counts as silent.
    static let silentPeak: Int16 = 64

    /// RTP clock units per decoded sample.
    var ratio: Int64 { Int64(configuration.clockRate / configuration.sampleRate) }

    /// Carries out `operation`, decided at `p`.
    @inline(__always) mutating func perform<D: JitterBufferDecoder & ~Copyable>(_ operation: PlayoutOperation, at p: PlayoutPosition,
                                                              decoder: inout D) {
        let c = configuration
        switch operation {
        case .buffer:
            break
        case .normal, .accelerate, .preemptiveExpand:
            decodeDue(p, stretch: operation, decoder: &decoder)
        case .silence, .silenceShortened, .silenceLengthened:
            fillSilenceGap(p, operation: operation, decoder: &decoder)
        case .expandWaiting:
            appendConcealment(c.frameSamples, decoder: &decoder, silence: false)
        case .expandAdvancing:
            appendConcealment(c.frameSamples, decoder: &decoder, silence: false)
            nextTS += Int64(c.frameSamples) * ratio
        case .skipMissing:
            nextSeq = p.nextHeld ?? nextSeq
        case .recoverFEC, .expandLost:
            guard let q = p.nextHeld else { return }
            let qs = store.slot(of: q)
            let length = min(store.media[qs] - nextTS, Int64(c.packetMs * c.clockRate / 1000))
            if operation == .recoverFEC && appendFEC(from: qs, samples: Int(length / ratio), decoder: &decoder) {
                // Rebuilt from the next packet's FEC.
            } else {
                appendConcealment(Int(length / ratio), decoder: &decoder, silence: false)
            }
            nextTS += length
            nextSeq += 1
        }
    }

    /// Conceals (as silence) up to one frame of the timestamp gap before the packet due,
    /// moving the playout point by that much, plus up to the excess delay
    /// (``PlayoutOperation/silenceShortened``) or minus up to the shortfall
    /// (``PlayoutOperation/silenceLengthened``).
    private mutating func fillSilenceGap<D: JitterBufferDecoder & ~Copyable>(_ p: PlayoutPosition, operation: PlayoutOperation,
                                                                             decoder: inout D) {
        let c = configuration
        let gap = store.media[p.dueSlot] - nextTS
        let chunk = min(gap, Int64(c.frameSamples) * ratio)
        var advance = chunk
        if operation == .silenceShortened {
            let extra = min(gap - chunk, Int64(p.errorMs * Double(c.clockRate) / 1000))
            advance += extra
            stats.removedSamplesForAcceleration += Int(extra / ratio)
        } else if operation == .silenceLengthened {
            let inserted = min(chunk, Int64(-p.errorMs * Double(c.clockRate) / 1000)) / ratio * ratio
            advance -= inserted
            stats.insertedSamplesForDeceleration += Int(inserted / ratio)
        }
        appendConcealment(Int(chunk / ratio), decoder: &decoder, silence: true)
        nextTS += advance
    }

    /// Decodes the packet due into the PCM queue and, for ``PlayoutOperation/accelerate`` or
    /// ``PlayoutOperation/preemptiveExpand``, removes or repeats a pitch period toward the
    /// target; a payload that does not decode is concealed for its duration.
    private mutating func decodeDue<D: JitterBufferDecoder & ~Copyable>(_ p: PlayoutPosition, stretch: PlayoutOperation,
                                                                        decoder: inout D) {
        let c = configuration
        let s = p.dueSlot
        let errorMs = p.errorMs
        let ch = c.channels
        let media = store.media[s]
        let start = pcmCount * ch
        let maxSamples = c.maximumPacketMs * c.sampleRate / 1000
        let wanted = Int(abs(errorMs) * Double(c.sampleRate) / 1000)
        let threshold = c.stretchThresholdMs
        let rate = c.sampleRate
        let gate = abs(errorMs) > Self.farFromTargetFactor * threshold
            ? c.stretchMinimumCorrelation * Self.farFromTargetCorrelationScale : c.stretchMinimumCorrelation
        var removed = 0, inserted = 0
        let bytes = store.payloadRange(of: s)
        let decoded: Int? = store.payloads.withUnsafeBytes { src in
            pcm.withUnsafeMutableBufferPointer { dst in
                let out = UnsafeMutableBufferPointer(rebasing: dst[start..<min(dst.count, start + maxSamples * ch)])
                return decoder.decode(UnsafeRawBufferPointer(rebasing: src[bytes]), into: out)
            }
        }
        let arrival = store.arrivalMs[s], tag = store.tag[s], seq16 = store.sequence16[s]
        let duration = store.duration[s]
        nextSeq += 1
        store.release(s)
        guard var n = decoded, n > 0 else {
            // Corrupt payload: conceal its duration.
            stats.decodeFailures += 1
            appendConcealment(Int(duration / ratio), decoder: &decoder, silence: false)
            nextTS = media + duration
            return
        }
        nextTS = media + Int64(n) * ratio
        // Time-scale modification toward the target delay.
        if stretch != .normal {
            let accelerate = stretch == .accelerate
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

    /// Rebuilds `samples` from the in-band FEC of the packet in slot `s`; false when the
    /// decoder has none.
    private mutating func appendFEC<D: JitterBufferDecoder & ~Copyable>(from s: Int, samples: Int, decoder: inout D) -> Bool {
        let ch = configuration.channels
        let start = pcmCount * ch
        let bytes = store.payloadRange(of: s)
        let got: Int? = store.payloads.withUnsafeBytes { src in
            pcm.withUnsafeMutableBufferPointer { dst in
                let out = UnsafeMutableBufferPointer(rebasing: dst[start..<min(dst.count, start + samples * ch)])
                return decoder.decodeFEC(fromNext: UnsafeRawBufferPointer(rebasing: src[bytes]), into: out,
                                         samplesPerChannel: samples)
            }
        }
        guard let n = got, n > 0 else { return false }
        segments.append(Segment(start: pcmCount, decoded: true, packetStart: false, tag: 0, seq16: 0,
                                arrivalMs: store.arrivalMs[s]))
        pcmCount += n
        stats.fecRecovered += 1
        inConcealment = false
        return true
    }

    /// Appends `samples` of the decoder's concealment (padded with silence when it gives
    /// less); `silence` counts them as silent whatever they sound like.
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
            return (samples, peak < Self.silentPeak)
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

    /// Moves the first `n` queued samples per channel to `output`, accounting what they came
    /// from (played packets, emitted samples, delays).
    @inline(__always) mutating func emit(_ n: Int, now: Double, into output: UnsafeMutableBufferPointer<Int16>) {
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
                stats.jitterBufferTargetDelay += Double(count) * targets.targetMs / 1000
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
