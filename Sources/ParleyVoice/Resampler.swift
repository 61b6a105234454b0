// Band-limited rational resampling (L/M polyphase FIR) from the input rate to the VAD's
// internal 16 kHz stream. Pure Swift; taps designed once in `init` (windowed sinc, Blackman).

/// Streams samples at `inputRate` to 16 kHz. Supports 8, 16, 24, 32 and 48 kHz inputs
/// (L/M = 2/1, 1/1, 2/3, 1/2, 1/3). 16 kHz passes through untouched.
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
    private let ring: Int                                // ring length: tapsPerPhase + 1
    private let history: UnsafeMutablePointer<Float>   // double-written ring of 2 * ring
    private var head = 0                                 // index of the newest sample in the ring
    private var acc: Int                                 // next output position relative to newest input

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
        ring = tapsPerPhase + 1
        history = .allocate(capacity: 2 * ring)
        history.initialize(repeating: 0, count: 2 * ring)
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
    }

    deinit { taps.deallocate(); history.deallocate() }

    func copy() -> Resampler {
        let c = Resampler(inputRate: inputRate, outputRate: outputRate)
        c.history.update(from: history, count: 2 * ring)
        c.head = head
        c.acc = acc
        return c
    }

    func reset() {
        history.update(repeating: 0, count: 2 * ring)
        head = 0
        acc = up
    }

    /// Pushes one input sample; calls `emit` for each output sample it completes (0, 1 or 2).
    @inline(__always)
    func push(_ x: Float, _ emit: (Float) -> Void) {
        if up == 1 && down == 1 { emit(x); return }
        head += 1
        if head == ring { head = 0 }
        history[head] = x
        history[head + ring] = x
        acc -= up
        while acc < up {
            // Output at upsampled position newest * L + acc (0 <= acc < L): it uses inputs up to
            // the newest, through the filter phase `acc`.
            // x[newest - k] for k in 0..<tapsPerPhase; newest sits at head and head + ring, so
            // the window oldest...newest is contiguous from head + ring - tapsPerPhase + 1.
            emit(dot8(taps + acc * tapsPerPhase, history + (head + ring - tapsPerPhase + 1), tapsPerPhase))
            acc += down
        }
    }
}
