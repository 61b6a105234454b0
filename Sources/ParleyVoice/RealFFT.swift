// A small radix-2 real FFT in pure Swift, with preallocated twiddles and scratch.
//
// A real sequence of length N is transformed through a complex FFT of length N/2 (the even
// samples as real parts, the odd ones as imaginary parts) followed by the usual split step.
// Everything is allocated in `init`; `forward` and `inverse` allocate nothing.

/// Forward and inverse real FFT of a fixed power-of-two length.
///
/// Layout of the half spectrum: `re[k]`, `im[k]` for k in 0...N/2 (`im[0]` and `im[N/2]` are 0).
/// Not thread-safe: one instance per stream (it owns scratch memory). Reference semantics:
/// the owner (``VoiceActivityDetector``'s storage) copies it explicitly.
final class RealFFT {
    let n: Int
    private let half: Int
    private let logHalf: Int
    private let bitReverse: UnsafeMutablePointer<Int32>
    // Twiddles of the complex FFT of length N/2, per stage: the stage whose butterflies span
    // 2h points uses exp(-2 pi i j / 2h), j < h, stored contiguously at offset h - 1.
    private let cosTable: UnsafeMutablePointer<Float>
    private let sinTable: UnsafeMutablePointer<Float>
    // Twiddles of the split step: exp(-2 pi i k / N), k <= N/2.
    private let splitCos: UnsafeMutablePointer<Float>
    private let splitSin: UnsafeMutablePointer<Float>
    private let zr: UnsafeMutablePointer<Float>
    private let zi: UnsafeMutablePointer<Float>

    init(length: Int) {
        precondition(length >= 4 && length & (length - 1) == 0, "FFT length must be a power of two >= 4")
        n = length
        half = length / 2
        logHalf = half.trailingZeroBitCount
        bitReverse = .allocate(capacity: half)
        for i in 0..<half {
            var r = 0
            var v = i
            for _ in 0..<logHalf { r = (r << 1) | (v & 1); v >>= 1 }
            bitReverse[i] = Int32(r)
        }
        cosTable = .allocate(capacity: max(half, 1))
        sinTable = .allocate(capacity: max(half, 1))
        var h = 1
        while h < half {
            for j in 0..<h {
                let a = -2.0 * Double.pi * Double(j) / Double(2 * h)
                cosTable[h - 1 + j] = Float(_cos(a)); sinTable[h - 1 + j] = Float(_sin(a))
            }
            h <<= 1
        }
        splitCos = .allocate(capacity: half + 1)
        splitSin = .allocate(capacity: half + 1)
        for k in 0...half {
            let a = -2.0 * Double.pi * Double(k) / Double(length)
            splitCos[k] = Float(_cos(a)); splitSin[k] = Float(_sin(a))
        }
        zr = .allocate(capacity: half)
        zi = .allocate(capacity: half)
    }

    deinit {
        bitReverse.deallocate(); cosTable.deallocate(); sinTable.deallocate()
        splitCos.deallocate(); splitSin.deallocate(); zr.deallocate(); zi.deallocate()
    }

    /// In-place complex FFT of `zr`/`zi` (already in bit-reversed order), sign -1 or +1.
    private func complexFFT(inverse: Bool) {
        let sign: Float = inverse ? -1 : 1
        // First stage: twiddle 1.
        var a = 0
        while a < half {
            let br = zr[a + 1], bi = zi[a + 1]
            zr[a + 1] = zr[a] - br; zi[a + 1] = zi[a] - bi
            zr[a] += br; zi[a] += bi
            a += 2
        }
        var h = 2
        while 2 * h <= half {
            let wrs = cosTable + (h - 1), wis = sinTable + (h - 1)
            var start = 0
            while start < half {
                let ar = zr + start, ai = zi + start
                let br = ar + h, bi = ai + h
                for j in 0..<h {
                    let wr = wrs[j], wi = sign * wis[j]
                    let xr = br[j], xi = bi[j]
                    let tr = xr * wr - xi * wi
                    let ti = xr * wi + xi * wr
                    let ur = ar[j], ui = ai[j]
                    br[j] = ur - tr; bi[j] = ui - ti
                    ar[j] = ur + tr; ai[j] = ui + ti
                }
                start += 2 * h
            }
            h <<= 1
        }
    }

    /// Forward transform of `input[0..<n]` into `re[0...n/2]`, `im[0...n/2]` (unnormalised).
    func forward(_ input: UnsafePointer<Float>, re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        for i in 0..<half {
            let r = Int(bitReverse[i])
            zr[r] = input[2 * i]
            zi[r] = input[2 * i + 1]
        }
        complexFFT(inverse: false)
        // Split: X[k] = (Z[k] + conj Z[N/2-k]) / 2 + W^k (Z[k] - conj Z[N/2-k]) / (2i)
        re[0] = zr[0] + zi[0]; im[0] = 0
        re[half] = zr[0] - zi[0]; im[half] = 0
        if half > 1 {
            for k in 1..<half {
                let ar = zr[k], ai = zi[k]
                let br = zr[half - k], bi = -zi[half - k]
                let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)      // even part
                let dr = 0.5 * (ar - br), di = 0.5 * (ai - bi)      // (Z - conj Z') / 2
                // odd part = -i * d
                let or_ = di, oi = -dr
                let wr = splitCos[k], wi = splitSin[k]
                re[k] = er + (or_ * wr - oi * wi)
                im[k] = ei + (or_ * wi + oi * wr)
            }
        }
    }

    /// Inverse transform of a half spectrum into `output[0..<n]`, scaled by 1/n so that
    /// `inverse(forward(x)) == x` up to rounding.
    func inverse(re: UnsafePointer<Float>, im: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        // Rebuild Z[k] = E[k] + i O[k], E[k] = (X[k] + conj X[N/2-k]) / 2,
        // O[k] = (X[k] - conj X[N/2-k]) * conj(W^k) / 2.
        for k in 0..<half {
            let ar = re[k], ai = im[k]
            let br = re[half - k], bi = -im[half - k]
            let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)
            let dr = 0.5 * (ar - br), di = 0.5 * (ai - bi)
            let wr = splitCos[k], wi = -splitSin[k]
            let or_ = dr * wr - di * wi, oi = dr * wi + di * wr
            let r = Int(bitReverse[k])
            zr[r] = er - oi
            zi[r] = ei + or_
        }
        complexFFT(inverse: true)
        let scale = 1 / Float(half)
        for i in 0..<half {
            output[2 * i] = zr[i] * scale
            output[2 * i + 1] = zi[i] * scale
        }
    }
}

@inline(__always) func _cos(_ x: Double) -> Double { cosApprox(x) }
@inline(__always) func _sin(_ x: Double) -> Double { cosApprox(x - Double.pi / 2) }

/// cos(x) by argument reduction and a Taylor series to double precision, so that tables do not
/// depend on the platform's libm (bit-for-bit identical tables everywhere). Init-time only.
func cosApprox(_ x: Double) -> Double {
    let twoPi = 2 * Double.pi
    var r = x - (x / twoPi).rounded(.down) * twoPi          // [0, 2pi)
    if r > Double.pi { r = twoPi - r }                       // cos is even about pi
    var sign = 1.0
    if r > Double.pi / 2 { r = Double.pi - r; sign = -1 }    // [0, pi/2]
    let r2 = r * r
    var term = 1.0, sum = 1.0
    for i in 1...14 {
        term *= -r2 / Double((2 * i - 1) * (2 * i))
        sum += term
    }
    return sign * sum
}
