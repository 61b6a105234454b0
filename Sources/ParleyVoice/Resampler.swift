// Band-limited rational resampling (L/M polyphase FIR) from the input rate to the VAD's
// internal 16 kHz stream. Pure Swift; taps designed once in `init` (windowed sinc, Blackman).

/// Streams samples at `inputRate` to 16 kHz. Supports 8, 12, 16, 24, 32 and 48 kHz inputs
/// (L/M = 2/1, 4/3, 1/1, 2/3, 1/2, 1/3). 16 kHz passes through untouched.
///
/// The low-pass (Blackman-windowed sinc, 32 x max(L, M) taps at the upsampled rate) is centred
/// at 0.45 of the lower of the two Nyquist rates (7.2 kHz when decimating to 16 kHz, 3.6 kHz when
/// interpolating from 8 kHz); components that would alias are attenuated by at least about 45 dB.
/// Linear phase, group delay 1 ms at 16 kHz output. Causal.
final class Resampler {
    let inputRate: Int
    let outputRate: Int
    let up: Int
    let down: Int
    private let tapsPerPhase: Int
    /// Per phase, the taps in reverse order (`[phase * tapsPerPhase + j]` weighs the input
    /// `tapsPerPhase - 1 - j` samples before the newest), so each output is a forward dot product
    /// over contiguous history; `tapsPerPhase` is a multiple of 8 for the SIMD loop.
    private let taps: UnsafeMutablePointer<Float>
    /// Linear history: the last `keep = tapsPerPhase - 1` inputs, then room for a block of up to
    /// ``maxBlock`` new ones at ``input``; after a block the newest `keep` move to the front.
    private let keep: Int
    private let buffer: UnsafeMutablePointer<Float>
    /// Where the caller writes a block of new inputs (up to ``maxBlock``) before ``run(_:into:)``.
    let input: UnsafeMutablePointer<Float>
    /// Room for the outputs of one block (at most `2 * maxBlock + 1`).
    let output: UnsafeMutablePointer<Float>
    /// Per output of the block being run: its filter phase and the start of its window in `buffer`.
    private let phases: UnsafeMutablePointer<Int32>
    private let starts: UnsafeMutablePointer<Int32>
    private var acc: Int                                 // next output position relative to newest input
    /// The taps again, each repeated in four lanes (a broadcast is then one aligned load).
    private let taps4: UnsafeMutablePointer<SIMD4<Float>>

    /// The most inputs one ``run(_:into:)`` takes.
    static let maxBlock = 960

    var isPassThrough: Bool { up == 1 && down == 1 }

    init(inputRate: Int, outputRate: Int) {
        self.inputRate = inputRate
        self.outputRate = outputRate
        var a = inputRate, b = outputRate
        while b != 0 { (a, b) = (b, a % b) }
        up = outputRate / a
        down = inputRate / a
        tapsPerPhase = (up == 1 && down == 1) ? 1 : 32 * max(up, down) / up
        let total = up * tapsPerPhase
        taps = .allocate(capacity: total)
        keep = tapsPerPhase - 1
        buffer = .allocate(capacity: keep + Self.maxBlock)
        buffer.initialize(repeating: 0, count: keep + Self.maxBlock)
        input = buffer + keep
        output = .allocate(capacity: 2 * Self.maxBlock + 2)
        output.initialize(repeating: 0, count: 2 * Self.maxBlock + 2)
        phases = .allocate(capacity: 2 * Self.maxBlock + 2)
        starts = .allocate(capacity: 2 * Self.maxBlock + 2)
        acc = up
        // Prototype low-pass at the upsampled rate: cutoff (cycles per upsampled sample).
        let cutoff = 0.45 / Double(max(up, down))
        let centre = Double(total - 1) / 2
        var proto = [Double](repeating: 0, count: total)
        for i in 0..<total {
            let t = Double(i) - centre
            let x = 2 * cutoff * t
            let sinc = t == 0 ? 1 : cosApprox(Double.pi * x - Double.pi / 2) / (Double.pi * x)
            let w = 0.42 - 0.5 * cosApprox(2 * Double.pi * Double(i) / Double(total - 1))
                + 0.08 * cosApprox(4 * Double.pi * Double(i) / Double(total - 1))
            proto[i] = 2 * cutoff * sinc * w
        }
        // Normalise each polyphase branch to unit DC gain (the zero-stuffing gain L included).
        for p in 0..<up {
            var s = 0.0
            for k in 0..<tapsPerPhase { s += proto[p + k * up] }
            for k in 0..<tapsPerPhase {
                taps[p * tapsPerPhase + (tapsPerPhase - 1 - k)] = total == 1 ? 1 : Float(proto[p + k * up] / s)
            }
        }
        precondition(total == 1 || tapsPerPhase % 8 == 0, "the SIMD filter loop needs a multiple of 8 taps")
        taps4 = .allocate(capacity: total)
        for i in 0..<total { taps4[i] = SIMD4(repeating: taps[i]) }
    }

    deinit {
        taps.deallocate(); buffer.deallocate(); output.deallocate(); phases.deallocate(); starts.deallocate()
        taps4.deallocate()
    }

    func copy() -> Resampler {
        let c = Resampler(inputRate: inputRate, outputRate: outputRate)
        c.buffer.update(from: buffer, count: keep)
        c.acc = acc
        return c
    }

    func reset() {
        buffer.update(repeating: 0, count: keep)
        acc = up
    }

    /// Resamples the `count` (<= ``maxBlock``) inputs written at ``input`` into `out`; returns
    /// how many outputs it wrote (at most `2 * count + 1`).
    ///
    /// Each output is the same ``dot8`` of one filter phase with the window of the last
    /// `tapsPerPhase` inputs that a sample-by-sample filter would compute: when interpolating,
    /// eight outputs of one phase at a time in SIMD lanes (``group(_:_:)``), otherwise (and the
    /// rest) in interleaved pairs.
    func run(_ count: Int, into out: UnsafeMutablePointer<Float>) -> Int {
        precondition(count <= Self.maxBlock)
        if up == 1 && down == 1 {
            out.update(from: input, count: count)
            return count
        }
        // Which outputs this block completes: input i (newest at buffer[keep + i]) completes the
        // outputs at upsampled positions i * L + acc, 0 <= acc < L, through phase `acc`; the window
        // oldest...newest is buffer[i ..< i + tapsPerPhase].
        var n = 0
        var a = acc
        for i in 0..<count {
            a -= up
            while a < up {
                phases[n] = Int32(truncatingIfNeeded: a)
                starts[n] = Int32(truncatingIfNeeded: i)
                n += 1
                a += down
            }
        }
        acc = a
        let t = tapsPerPhase
        var q = 0
        if down == 1 {
            // Interpolation (8 kHz): outputs q + r + up * lane (lane < 8) share phase phases[q + r]
            // and their windows start one input apart, so eight of them are one SIMD8 group.
            // (With down > 1 the windows are `down` apart and regrouping the inputs costs more
            // than it saves.)
            while q + 8 * up <= n {
                for r in 0..<up {
                    let v = group(Int(phases[q + r]), Int(starts[q + r]))
                    for lane in 0..<8 { out[q + r + up * lane] = v[lane] }
                }
                q += 8 * up
            }
        }
        while q + 2 <= n {
            let r = dot8x2(taps + Int(phases[q]) * t, buffer + Int(starts[q]),
                           taps + Int(phases[q + 1]) * t, buffer + Int(starts[q + 1]), t)
            out[q] = r.0; out[q + 1] = r.1
            q += 2
        }
        while q < n {
            out[q] = dot8(taps + Int(phases[q]) * t, buffer + Int(starts[q]), t)
            q += 1
        }
        buffer.update(from: buffer + count, count: keep)
        return n
    }

    /// Eight outputs of phase `phase` whose windows start at `start`, `start + 1`, ... (down == 1): in each
    /// lane the same products and additions, in the same order, as ``dot8`` of that output's taps
    /// and window (chunks of eight taps alternating between two sums, the sums added, then the
    /// eight positions in order), without the horizontal sum per output.
    @inline(__always)
    private func group(_ phase: Int, _ start: Int) -> SIMD8<Float> {
        let t = tapsPerPhase, chunks = t / 8
        let base = UnsafeRawPointer(buffer + start)
        let h = taps4 + phase * t
        // SIMD8 as two SIMD4 halves so each broadcast tap is loaded once for both.
        @inline(__always) func x(_ k: Int, _ half: Int) -> SIMD4<Float> {
            base.loadUnaligned(fromByteOffset: 4 &* k &+ 16 &* half, as: SIMD4<Float>.self)
        }
        var lo = SIMD4<Float>(), hi = SIMD4<Float>()
        for l in 0..<8 {
            var a0l = SIMD4<Float>(), a0h = SIMD4<Float>(), a1l = SIMD4<Float>(), a1h = SIMD4<Float>()
            var c = 0
            while c &+ 2 <= chunks {       // wrapping index arithmetic: no overflow checks in the loop
                let k = c &* 8 &+ l
                let w0 = h[k], w1 = h[k &+ 8]
                a0l += w0 * x(k, 0); a0h += w0 * x(k, 1)
                a1l += w1 * x(k &+ 8, 0); a1h += w1 * x(k &+ 8, 1)
                c &+= 2
            }
            if c < chunks {
                let k = c &* 8 &+ l
                let w0 = h[k]
                a0l += w0 * x(k, 0); a0h += w0 * x(k, 1)
            }
            lo += a0l + a1l
            hi += a0h + a1h
        }
        return SIMD8(lowHalf: lo, highHalf: hi)
    }

    /// Pushes one input sample; calls `emit` for each output sample it completes (0, 1 or 2).
    /// (Sample-by-sample convenience over ``run(_:into:)``; the detector feeds blocks.)
    func push(_ x: Float, _ emit: (Float) -> Void) {
        input[0] = x
        let n = run(1, into: output)
        for i in 0..<n { emit(output[i]) }
    }
}
