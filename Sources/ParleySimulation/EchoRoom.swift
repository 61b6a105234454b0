// Simulated loudspeaker-to-microphone rooms for echo cancellation: impulse responses with a
// direct path and an exponentially decaying reverberant tail, the echo of what was played, the
// near end's speech and noise, a change of echo path, and drift between the two clocks.

import ParleyCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One loudspeaker-to-microphone path.
public struct EchoPath: Sendable, Hashable {
    /// Delay of the direct path, ms (device buffers and the air).
    public var delayMs: Double
    /// Reverberation time: the tail decays by 60 dB in this many seconds.
    public var rt60: Double
    /// Seed of the tail's noise.
    public var seed: UInt64

    public init(delayMs: Double, rt60: Double, seed: UInt64 = 1) {
        self.delayMs = delayMs; self.rt60 = rt60; self.seed = seed
    }

    /// The impulse response at `sampleRate` as sparse taps (sample index, gain): the direct path
    /// (gain 1) at the delay, then reflections every 0.5 ms (random signs and gains, Gaussian-like)
    /// whose energy starts 3 dB under the direct path's and decays by 60 dB over ``rt60``; taps
    /// more than 50 dB down are left out.
    public func taps(sampleRate: Int) -> [(index: Int, gain: Float)] {
        let direct = Int((delayMs * Double(sampleRate) / 1000).rounded())
        var out: [(index: Int, gain: Float)] = [(direct, 1)]
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        func uniform() -> Double {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Double(state >> 11) / Double(1 << 53)
        }
        let step = max(1, sampleRate / 2000)
        let length = Int(rt60 * 50 / 60 * Double(sampleRate))
        // Per-tap amplitude so that the tail's first 10 ms carry about half the direct energy.
        let startGain = (0.5 / Double(sampleRate / 100 / step)).squareRoot()
        var k = step
        while k < length {
            let decay = pow10(-3 * Double(k) / (rt60 * Double(sampleRate)))   // amplitude: -60 dB energy at rt60
            let gaussian = (uniform() + uniform() + uniform() - 1.5) * 2
            out.append((direct + k, Float(startGain * decay * gaussian)))
            k += step
        }
        return out
    }
}

private func pow10(_ x: Double) -> Double { exp(x * 2.302_585_092_994_046) }

/// Recipes of simulated microphone signals: what a laptop's microphone hears when its
/// loudspeaker plays the far end, the near end talks, and the room adds noise.
public enum EchoRoom {
    /// `signal` through `path` (same length as `signal`).
    public static func echo(of signal: [Float], through path: EchoPath, sampleRate: Int) -> [Float] {
        var out = [Float](repeating: 0, count: signal.count)
        let taps = path.taps(sampleRate: sampleRate)
        signal.withUnsafeBufferPointer { x in
            out.withUnsafeMutableBufferPointer { y in
                for (index, gain) in taps where index < x.count {
                    for n in 0..<(x.count - index) { y[n + index] += gain * x[n] }
                }
            }
        }
        return out
    }

    /// The active level of `signal`, dBFS: the RMS of its 10 ms frames within 30 dB of the loudest.
    public static func activeLevelDb(_ signal: [Float], sampleRate: Int) -> Double {
        let n = sampleRate / 100
        let frames = signal.count / n
        guard frames > 0 else { return -120 }
        var energies = [Double](repeating: 0, count: frames)
        for f in 0..<frames {
            var e = 0.0
            for i in (f * n)..<((f + 1) * n) { e += Double(signal[i]) * Double(signal[i]) }
            energies[f] = e / Double(n)
        }
        let peak = energies.max() ?? 0
        let active = energies.filter { $0 > peak * 1e-3 && $0 > 0 }
        guard !active.isEmpty else { return -120 }
        return 10 * log10(active.reduce(0, +) / Double(active.count))
    }

    /// What the microphone hears (floats, full scale 1): `far` through `path` (then through
    /// `changedPath` from sample `changeAt`, the device moved), scaled so that its active level is
    /// `echoDb` relative to the near end's (relative to -20 dBFS without near-end speech), plus
    /// `near`, plus white noise at `noiseDb` dBFS (seeded), the whole resampled by `driftPpm` (the
    /// capture clock runs that much fast: positive, more samples; within ±1,000,000). Same length
    /// as `far`.
    public static func microphone(far: [Float], near: [Float], path: EchoPath, changedPath: EchoPath? = nil,
                                  changeAt: Int = 0, echoDb: Double, noiseDb: Double = -70, driftPpm: Double = 0,
                                  sampleRate: Int) -> [Float] {
        var echo = Self.echo(of: far, through: path, sampleRate: sampleRate)
        if let changedPath {
            let second = Self.echo(of: far, through: changedPath, sampleRate: sampleRate)
            for i in max(0, changeAt)..<echo.count { echo[i] = second[i] }
        }
        let nearLevel = near.contains { $0 != 0 } ? activeLevelDb(near, sampleRate: sampleRate) : -20
        let gain = Float(pow10((nearLevel + echoDb - activeLevelDb(echo, sampleRate: sampleRate)) / 20))
        let noiseAmplitude = pow10(noiseDb / 20) * 3.0.squareRoot()   // uniform noise of that RMS
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        var mic = [Float](repeating: 0, count: far.count)
        for i in 0..<mic.count {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            let u = Double(state >> 11) / Double(1 << 53) * 2 - 1
            mic[i] = gain * echo[i] + (i < near.count ? near[i] : 0) + Float(u * noiseAmplitude)
        }
        // The capture clock's sample k falls at the true time k / (1 + ppm): the band-limited
        // resampler at that ratio (in steps of 0.1 ppm), as a device's clock would sample it.
        guard driftPpm != 0, abs(driftPpm) < 1_000_000, !mic.isEmpty else { return mic }
        let scale = 10_000_000
        let outputRate = Int((Double(scale) * (1 + driftPpm * 1e-6)).rounded())
        guard var resampler = try? Resampler(inputRate: scale, outputRate: outputRate, maxInputFrames: mic.count) else { return mic }
        var drifted: [Float] = []
        var tail = [Float](repeating: 0, count: resampler.maxFlushFrames)
        guard let produced = try? resampler.process(mic, into: &drifted),
              let flushed = try? tail.withUnsafeMutableBufferPointer({ (t) throws(ResamplerBlockError) -> Int in try resampler.flush(into: t) })
        else { return mic }
        drifted.removeSubrange(produced...)
        drifted += tail[0..<flushed]
        if drifted.count < mic.count { drifted += [Float](repeating: 0, count: mic.count - drifted.count) }
        return Array(drifted[0..<mic.count])
    }
}
