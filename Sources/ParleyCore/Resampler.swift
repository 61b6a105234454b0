// Pure Swift, no libm: the filter is designed with ``cosApprox``, so its coefficients (and so
// every output) are the same bit for bit on every platform.

/// Band-limited sample-rate converter: a polyphase windowed-sinc (Kaiser) filter, streaming,
/// any rate pair, any channel count, interleaved Float samples.
///
/// Design (per the lower of the two Nyquist frequencies, "Nyquist" below): passband flat to
/// 0.9 Nyquist, stopband from 1.0 Nyquist with at least 80 dB attenuation (designed for 90 dB:
/// Kaiser beta 8.96). The filter length follows from the transition width: about 115 taps
/// per input sample at unity ratio, 3x that when decimating by 3. The ratio is exact
/// (rational): for `L/M = out/in` in lowest terms with L <= 2048, each of the L phases has
/// its own coefficient set; larger L interpolate linearly between 2048 precomputed phases.
///
/// Latency: the output is aligned with the input (output sample k is the signal at input
/// time `k * in / out`); the filter looks ahead ``latencyFrames`` input frames, which
/// ``flush(into:)`` drains at the end.
///
/// Hot path: ``process(_:into:)-(UnsafeBufferPointer<Float>,_)`` allocates nothing; all buffers are sized in `init` for
/// at most `maxInputFrames` per call. Deterministic: the same input gives the same output bit
/// for bit, however it is split into blocks and on every platform.
///
/// Threading: a value type; use each converter from one thread at a time. Copies are
/// independent (copy-on-write).
public struct Resampler: Sendable {
    /// Input rate in Hz.
    public let inputRate: Int
    /// Output rate in Hz.
    public let outputRate: Int
    /// Interleaved channels.
    public let channels: Int
    /// Largest input block per ``process(_:into:)-(UnsafeBufferPointer<Float>,_)`` call, in frames.
    public let maxInputFrames: Int
    /// Input frames the filter needs beyond an output's time before it can produce it.
    public var latencyFrames: Int { half }
    /// Input frames of one whole step of the rational ratio (`inputRate` over the two rates'
    /// greatest common divisor): after a multiple of it, the output is at a whole sample.
    public var inputFramesPerStep: Int { down }

    private let up: Int            // L
    private let down: Int          // M
    private let phases: Int        // P (== L when exact)
    private let taps: Int          // coefficients per phase, a multiple of 32
    private let half: Int
    private var coefficients: [Float]   // (phases + 1) * taps
    private var scratch: [Float]        // taps (interpolated coefficients)
    private var history: [Float]        // channels * capacity, deinterleaved
    private let capacity: Int
    private var count: Int              // valid samples per channel in history
    private var center: Int             // n0: input index (in history) of the next output
    private var remainder: Int          // fractional position numerator over `up`
    private var inputTotal = 0          // frames given since the start (or reset)
    private var outputTotal = 0         // frames produced since the start (or reset)

    /// Creates a converter.
    /// - Parameters:
    ///   - inputRate: the input's sample rate, Hz.
    ///   - outputRate: the output's sample rate, Hz.
    ///   - channels: interleaved channels, the same in and out.
    ///   - maxInputFrames: the largest block ``process(_:into:)-(UnsafeBufferPointer<Float>,_)``
    ///     will be given (default 4800, 100 ms at 48 kHz).
    ///   - stopbandAttenuation: design attenuation in dB (default 90, at least 60; the tests
    ///     measure at least 80 dB with the default).
    ///   - aliasIntoTransitionBand: when decimating, start the stopband at 1.1 instead of 1.0
    ///     output Nyquist. Input between 1.0 and 1.1 Nyquist then folds into 0.9-1.0 Nyquist
    ///     (above the passband, which stays clean), and the filter is half as long, so it runs
    ///     about twice as fast. Default false (nothing aliases). No effect when upsampling.
    /// - Throws: ``ResamplerConfigurationError`` when a rate, `channels` or `maxInputFrames` is
    ///   not positive.
    public init(inputRate: Int, outputRate: Int, channels: Int = 1, maxInputFrames: Int = 4800,
                stopbandAttenuation: Double = 90, aliasIntoTransitionBand: Bool = false)
        throws(ResamplerConfigurationError) {
        for (name, value) in [("input rate", inputRate), ("output rate", outputRate), ("channels", channels),
                              ("maxInputFrames", maxInputFrames)] where value <= 0 {
            throw .notPositive(parameter: name, value: value)
        }
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channels = channels
        self.maxInputFrames = maxInputFrames
        var a = inputRate, b = outputRate
        while b != 0 { (a, b) = (b, a % b) }
        up = outputRate / a
        down = inputRate / a
        phases = min(up, 2048)
        // Cutoffs as fractions of the input Nyquist frequency.
        let scale = min(1.0, Double(outputRate) / Double(inputRate))
        let pass = 0.9 * scale
        let stop = (aliasIntoTransitionBand && scale < 1 ? 1.1 : 1.0) * scale
        let cutoff = (pass + stop) / 2
        let attenuation: Double = max(60, stopbandAttenuation)
        let beta: Double = 0.1102 * (attenuation - 8.7)
        let length = (attenuation - 8) / (2.285 * Double.pi * (stop - pass))
        half = Int(length / 2) + 1
        taps = (2 * half + 31) / 32 * 32
        // Phase p is the filter for an output at fractional time f = p / phases after input
        // `center`; tap j (0..<2*half) weighs input center - half + 1 + j, at distance
        // tau = f - (j - half + 1).
        var c = [Float](repeating: 0, count: (phases + 1) * taps)
        let i0beta = besselI0(beta)
        for p in 0...phases {
            let f = Double(p) / Double(phases)
            var sum = 0.0
            var row = [Double](repeating: 0, count: 2 * half)
            for j in 0..<(2 * half) {
                let tau = f - Double(j - half + 1)
                let x = tau / Double(half)
                if abs(x) >= 1 { continue }
                let window = besselI0(beta * (1 - x * x).squareRoot()) / i0beta
                let arg = Double.pi * cutoff * tau
                let sinc = tau == 0 ? 1.0 : cosApprox(arg - Double.pi / 2) / arg   // sin(arg) / arg
                row[j] = cutoff * sinc * window
                sum += row[j]
            }
            for j in 0..<(2 * half) { c[p * taps + j] = Float(row[j] / sum) }   // unity gain at DC
        }
        coefficients = c
        scratch = [Float](repeating: 0, count: taps)
        capacity = taps + maxInputFrames + 8
        history = [Float](repeating: 0, count: channels * capacity)
        count = half - 1
        center = half - 1
        remainder = 0
    }

    /// Output frames that `inputFrames` more input can produce at most (size the output
    /// buffer with this).
    public func maxOutputFrames(forInput inputFrames: Int) -> Int {
        (inputFrames + half + 2) * up / down + 2
    }

    /// Converts a block of interleaved input (at most ``maxInputFrames`` frames) and writes
    /// the output frames now available into `output`; returns how many frames were written.
    /// `output` must hold ``maxOutputFrames(forInput:)`` frames. Allocates nothing.
    /// - Throws: ``ResamplerBlockError`` when `input` is not whole frames, holds more than
    ///   ``maxInputFrames`` frames, or `output` is too small; nothing is consumed then.
    public mutating func process(_ input: UnsafeBufferPointer<Float>,
                                 into output: UnsafeMutableBufferPointer<Float>) throws(ResamplerBlockError) -> Int {
        let ch = channels
        guard input.count % ch == 0 else { throw .partialFrame(samples: input.count, channels: ch) }
        let frames = input.count / ch
        guard frames <= maxInputFrames else { throw .inputTooLarge(frames: frames, maxInputFrames: maxInputFrames) }
        let needed = maxOutputFrames(forInput: frames) * ch
        guard output.count >= needed else { throw .outputTooSmall(samples: output.count, needed: needed) }
        let cap = capacity, start = count
        history.withUnsafeMutableBufferPointer { h in
            for c in 0..<ch {
                let dst = h.baseAddress! + c * cap + start
                for i in 0..<frames { dst[i] = input[i * ch + c] }
            }
        }
        count += frames
        inputTotal += frames
        let n = produce(into: output)
        outputTotal += n
        return n
    }

    /// Convenience over arrays; `output` is resized (once, if too small) and the produced
    /// frame count returned.
    /// - Throws: ``ResamplerBlockError`` when `input` is not whole frames or holds more than
    ///   ``maxInputFrames`` frames.
    public mutating func process(_ input: [Float], into output: inout [Float]) throws(ResamplerBlockError) -> Int {
        let need = maxOutputFrames(forInput: input.count / channels) * channels
        if output.count < need { output = [Float](repeating: 0, count: need) }
        return try input.withUnsafeBufferPointer { (i) throws(ResamplerBlockError) -> Int in
            try output.withUnsafeMutableBufferPointer { (o) throws(ResamplerBlockError) -> Int in try process(i, into: o) }
        }
    }

    /// Output frames ``flush(into:)`` writes at most (size its buffer with this).
    public var maxFlushFrames: Int { maxOutputFrames(forInput: half + 1) }

    /// Feeds zeros to drain the filter's look-ahead, writing the last outputs up to the time
    /// of the last input frame (so the stream has `ceil(inputFrames * out / in)` frames in all);
    /// call once at the end of the stream, then ``reset()`` before reuse. Returns the frames
    /// written. Allocates (once per stream).
    /// - Throws: ``ResamplerBlockError/outputTooSmall(samples:needed:)`` when `output` holds
    ///   fewer than ``maxFlushFrames`` frames; nothing is drained then.
    public mutating func flush(into output: UnsafeMutableBufferPointer<Float>) throws(ResamplerBlockError) -> Int {
        let needed = maxFlushFrames * channels
        guard output.count >= needed else { throw .outputTooSmall(samples: output.count, needed: needed) }
        let target = (inputTotal * up + down - 1) / down
        var written = 0
        var left = half + 1
        while left > 0 && outputTotal < target {
            let m = min(maxInputFrames, left)
            let zeros = [Float](repeating: 0, count: m * channels)
            var tmp = [Float](repeating: 0, count: maxOutputFrames(forInput: m) * channels)
            let saved = inputTotal
            // Whole frames, at most maxInputFrames, into a buffer of maxOutputFrames: cannot throw.
            let n = zeros.withUnsafeBufferPointer { z in
                tmp.withUnsafeMutableBufferPointer { try! process(z, into: $0) }
            }
            inputTotal = saved
            let keep = min(n, target - (outputTotal - n))
            for i in 0..<(keep * channels) { output[written * channels + i] = tmp[i] }
            written += keep
            outputTotal = outputTotal - n + keep
            left -= m
        }
        return written
    }

    /// Restarts the stream (history cleared), keeping the filter.
    public mutating func reset() {
        for i in history.indices { history[i] = 0 }
        count = half - 1
        center = half - 1
        remainder = 0
        inputTotal = 0
        outputTotal = 0
    }

    private mutating func produce(into output: UnsafeMutableBufferPointer<Float>) -> Int {
        let ch = channels, cap = capacity, tapCount = taps, halfTaps = half
        let L = up, P = phases, stepInt = down / up, stepFrac = down % up
        var produced = 0
        var n0 = center, r = remainder
        let available = count
        coefficients.withUnsafeBufferPointer { coef in
            scratch.withUnsafeMutableBufferPointer { tmp in
                history.withUnsafeBufferPointer { h in
                    while n0 + halfTaps < available {
                        let k: UnsafePointer<Float>
                        if P == L {
                            k = coef.baseAddress! + r * tapCount
                        } else {
                            let pos = Double(r) * Double(P) / Double(L)
                            let p = Int(pos)
                            let a = Float(pos - Double(p))
                            let c0 = coef.baseAddress! + p * tapCount, c1 = c0 + tapCount
                            for j in 0..<tapCount { tmp[j] = c0[j] + a * (c1[j] - c0[j]) }
                            k = UnsafePointer(tmp.baseAddress!)
                        }
                        for c in 0..<ch {
                            let x = h.baseAddress! + c * cap + (n0 - halfTaps + 1)
                            output[produced * ch + c] = dot8(x, k, tapCount)
                        }
                        produced += 1
                        // Advance by M/L input samples without dividing per output.
                        r += stepFrac
                        n0 += stepInt
                        if r >= L { r -= L; n0 += 1 }
                    }
                }
            }
        }
        // Keep only what future outputs need: from n0 - half + 1 on.
        let drop = max(0, min(n0 - halfTaps + 1, available))
        if drop > 0 {
            let keep = available - drop
            history.withUnsafeMutableBufferPointer { h in
                for c in 0..<ch {
                    let base = h.baseAddress! + c * cap
                    if keep > 0 { base.update(from: base + drop, count: keep) }
                }
            }
            count = keep
            n0 -= drop
        }
        center = n0
        remainder = r
        return produced
    }
}

/// Dot product of `n` (a multiple of 32) floats: four independent 8-lane accumulators so
/// the additions do not wait on each other.
@inline(__always)
private func dot8(_ x: UnsafePointer<Float>, _ k: UnsafePointer<Float>, _ n: Int) -> Float {
    var a0 = SIMD8<Float>(), a1 = SIMD8<Float>(), a2 = SIMD8<Float>(), a3 = SIMD8<Float>()
    var i = 0
    let xr = UnsafeRawPointer(x), kr = UnsafeRawPointer(k)
    while i < n {
        let o = i * 4
        a0 += xr.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
            * kr.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
        a1 += xr.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self)
            * kr.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self)
        a2 += xr.loadUnaligned(fromByteOffset: o + 64, as: SIMD8<Float>.self)
            * kr.loadUnaligned(fromByteOffset: o + 64, as: SIMD8<Float>.self)
        a3 += xr.loadUnaligned(fromByteOffset: o + 96, as: SIMD8<Float>.self)
            * kr.loadUnaligned(fromByteOffset: o + 96, as: SIMD8<Float>.self)
        i += 32
    }
    return ((a0 + a1) + (a2 + a3)).sum()
}

/// Modified Bessel function of the first kind, order 0 (series; for the Kaiser window).
private func besselI0(_ x: Double) -> Double {
    var sum = 1.0, term = 1.0
    let q = x * x / 4
    for k in 1..<64 {
        term *= q / Double(k * k)
        sum += term
        if term < sum * 1e-17 { break }
    }
    return sum
}
