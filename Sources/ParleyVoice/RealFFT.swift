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
    // The inverse's rebuilt Z in natural order, before the complex transform.
    private let tr: UnsafeMutablePointer<Float>
    private let ti: UnsafeMutablePointer<Float>

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
        tr = .allocate(capacity: half)
        ti = .allocate(capacity: half)
    }

    deinit {
        bitReverse.deallocate(); cosTable.deallocate(); sinTable.deallocate()
        splitCos.deallocate(); splitSin.deallocate(); zr.deallocate(); zi.deallocate()
        tr.deallocate(); ti.deallocate()
    }

    /// Complex FFT of length N/2 into `zr`/`zi`, sign -1 or +1; `load(k)` gives the input that
    /// belongs at bit-reversed position `k` (it is read before position `k` is written).
    ///
    /// The first two radix-2 stages run together on groups of four points in registers, stages
    /// h and 2h (h = 4, 16, ...) together on four SIMD4 vectors in registers, a last odd stage
    /// four butterflies at a time. Every lane does exactly the scalar butterfly's operations in the
    /// same order (`x * w - y * w'` etc., no fused multiply-add), so the result is the same bit
    /// for bit as a scalar radix-2 loop.
    @inline(__always)
    private func complexFFT(sign: Float, _ load: (Int) -> (Float, Float)) {
        let zr = self.zr, zi = self.zi, half = self.half
        if half < 8 {
            for k in 0..<half { (zr[k], zi[k]) = load(k) }
            scalarStages(sign: sign)
            return
        }
        // Stages h = 1 and h = 2 on each group of four.
        let w1r = cosTable[1 + 1], w1i = sign * sinTable[1 + 1]   // twiddle j = 1 of stage h = 2
        let w0r = cosTable[1], w0i = sign * sinTable[1]           // twiddle j = 0 of stage h = 2
        var a = 0
        while a < half {
            let (r0, i0) = load(a), (r1, i1) = load(a + 1), (r2, i2) = load(a + 2), (r3, i3) = load(a + 3)
            // h = 1
            let s0r = r0 + r1, s0i = i0 + i1, s1r = r0 - r1, s1i = i0 - i1
            let s2r = r2 + r3, s2i = i2 + i3, s3r = r2 - r3, s3i = i2 - i3
            // h = 2: (s0, s2) with twiddle 0, (s1, s3) with twiddle 1
            let t0r = s2r * w0r - s2i * w0i, t0i = s2r * w0i + s2i * w0r
            let t1r = s3r * w1r - s3i * w1i, t1i = s3r * w1i + s3i * w1r
            zr[a] = s0r + t0r; zi[a] = s0i + t0i
            zr[a + 2] = s0r - t0r; zi[a + 2] = s0i - t0i
            zr[a + 1] = s1r + t1r; zi[a + 1] = s1i + t1i
            zr[a + 3] = s1r - t1r; zi[a + 3] = s1i - t1i
            a += 4
        }
        let rr = UnsafeMutableRawPointer(zr), ri = UnsafeMutableRawPointer(zi)
        let cr = UnsafeRawPointer(cosTable), sr = UnsafeRawPointer(sinTable)
        @inline(__always) func butterfly(_ ur: inout SIMD4<Float>, _ ui: inout SIMD4<Float>,
                                         _ xr: inout SIMD4<Float>, _ xi: inout SIMD4<Float>,
                                         _ wr: SIMD4<Float>, _ wi: SIMD4<Float>) {
            let tr = xr * wr - xi * wi
            let ti = xr * wi + xi * wr
            xr = ur - tr; xi = ui - ti
            ur = ur + tr; ui = ui + ti
        }
        // Four complex points at byte offset `o` of (zr, zi); twiddles at byte offset `o` of the tables.
        @inline(__always) func points(_ o: Int) -> (SIMD4<Float>, SIMD4<Float>) {
            (rr.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self),
             ri.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self))
        }
        @inline(__always) func storePoints(_ vr: SIMD4<Float>, _ vi: SIMD4<Float>, _ o: Int) {
            rr.storeBytes(of: vr, toByteOffset: o, as: SIMD4<Float>.self)
            ri.storeBytes(of: vi, toByteOffset: o, as: SIMD4<Float>.self)
        }
        @inline(__always) func twiddle(_ o: Int) -> (SIMD4<Float>, SIMD4<Float>) {
            (cr.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self),
             sign * sr.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self))
        }
        // Pairs of stages h and 2h (h = 4, 16, 64, ...) fused: within each group of 4h points the
        // four SIMD4 vectors at j, h + j, 2h + j, 3h + j (j a multiple of 4) only meet each other
        // in those two stages: stage h pairs (0, 1) and (2, 3) with twiddle j of stage h, stage 2h
        // pairs (0, 2) with twiddle j and (1, 3) with twiddle h + j of stage 2h.
        var h = 4
        while 4 * h <= half {
            var g = 0
            while g < half {
                var j = 0
                while j < h {
                    let o0 = (g + j) * 4, o1 = o0 + h * 4, o2 = o0 + 2 * h * 4, o3 = o0 + 3 * h * 4
                    let wh = (h - 1 + j) * 4, w2a = (2 * h - 1 + j) * 4, w2b = (3 * h - 1 + j) * 4
                    var (v0r, v0i) = points(o0), (v1r, v1i) = points(o1)
                    var (v2r, v2i) = points(o2), (v3r, v3i) = points(o3)
                    let (whr, whi) = twiddle(wh)
                    butterfly(&v0r, &v0i, &v1r, &v1i, whr, whi)
                    butterfly(&v2r, &v2i, &v3r, &v3i, whr, whi)
                    let (war, wai) = twiddle(w2a)
                    butterfly(&v0r, &v0i, &v2r, &v2i, war, wai)
                    let (wbr, wbi) = twiddle(w2b)
                    butterfly(&v1r, &v1i, &v3r, &v3i, wbr, wbi)
                    storePoints(v0r, v0i, o0); storePoints(v1r, v1i, o1)
                    storePoints(v2r, v2i, o2); storePoints(v3r, v3i, o3)
                    j += 4
                }
                g += 4 * h
            }
            h *= 4
        }
        // A last single stage when log2(N/2) is odd.
        while 2 * h <= half {
            var start = 0
            while start < half {
                var j = 0
                while j < h {
                    let oa = (start + j) * 4, ob = (start + h + j) * 4, ow = (h - 1 + j) * 4
                    let (wr, wi) = twiddle(ow)
                    var (xr, xi) = points(ob), (ur, ui) = points(oa)
                    butterfly(&ur, &ui, &xr, &xi, wr, wi)
                    storePoints(xr, xi, ob); storePoints(ur, ui, oa)
                    j += 4
                }
                start += 2 * h
            }
            h <<= 1
        }
    }

    /// The plain radix-2 stages (lengths below 8, where the SIMD path does not apply).
    private func scalarStages(sign: Float) {
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
        let bitReverse = self.bitReverse
        complexFFT(sign: 1) { k in
            let i = Int(bitReverse[k])
            return (input[2 * i], input[2 * i + 1])
        }
        split(re: re, im: im)
    }

    /// Forward transform of `input[i] * window[i]`, i < n: the same as ``forward(_:re:im:)`` on
    /// the product, without a windowed copy.
    func forward(_ input: UnsafePointer<Float>, windowedBy window: UnsafePointer<Float>,
                 re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        let bitReverse = self.bitReverse
        complexFFT(sign: 1) { k in
            let i = Int(bitReverse[k])
            return (input[2 * i] * window[2 * i], input[2 * i + 1] * window[2 * i + 1])
        }
        split(re: re, im: im)
    }

    /// For bins k...k+3 of a half-length spectrum (re, im) and their mirrors half-k...half-k-3:
    /// the even part (A + conj B) / 2 and the difference (A - conj B) / 2, four lanes at a time
    /// (the common first step of the real-FFT split and of its inverse).
    @inline(__always)
    private static func halves4(_ re: UnsafeRawPointer, _ im: UnsafeRawPointer, k: Int, half: Int)
        -> (er: SIMD4<Float>, ei: SIMD4<Float>, dr: SIMD4<Float>, di: SIMD4<Float>) {
        let o = k * 4, ob = (half - k - 3) * 4
        let ar = re.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
        let ai = im.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
        let brv = re.loadUnaligned(fromByteOffset: ob, as: SIMD4<Float>.self)
        let biv = im.loadUnaligned(fromByteOffset: ob, as: SIMD4<Float>.self)
        let br = SIMD4(brv[3], brv[2], brv[1], brv[0])
        let bi = -SIMD4(biv[3], biv[2], biv[1], biv[0])
        return (0.5 * (ar + br), 0.5 * (ai + bi), 0.5 * (ar - br), 0.5 * (ai - bi))
    }

    /// The split step of the forward transform, four bins at a time (each lane the scalar
    /// formula's operations in order).
    @inline(__always)
    private func split(re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        let zr = self.zr, zi = self.zi, half = self.half
        // Split: X[k] = (Z[k] + conj Z[N/2-k]) / 2 + W^k (Z[k] - conj Z[N/2-k]) / (2i)
        re[0] = zr[0] + zi[0]; im[0] = 0
        re[half] = zr[0] - zi[0]; im[half] = 0
        var k = 1
        if half >= 8 {
            let rr = UnsafeRawPointer(zr), ri = UnsafeRawPointer(zi)
            let cr = UnsafeRawPointer(splitCos), sr = UnsafeRawPointer(splitSin)
            let outR = UnsafeMutableRawPointer(re), outI = UnsafeMutableRawPointer(im)
            while k + 4 <= half {
                let o = k * 4
                let (er, ei, dr, di) = Self.halves4(rr, ri, k: k, half: half)
                let or_ = di, oi = -dr
                let wr = cr.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
                let wi = sr.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
                outR.storeBytes(of: er + (or_ * wr - oi * wi), toByteOffset: o, as: SIMD4<Float>.self)
                outI.storeBytes(of: ei + (or_ * wi + oi * wr), toByteOffset: o, as: SIMD4<Float>.self)
                k += 4
            }
        }
        while k < half {
            let ar = zr[k], ai = zi[k]
            let br = zr[half - k], bi = -zi[half - k]
            let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)      // even part
            let dr = 0.5 * (ar - br), di = 0.5 * (ai - bi)      // (Z - conj Z') / 2
            // odd part = -i * d
            let or_ = di, oi = -dr
            let wr = splitCos[k], wi = splitSin[k]
            re[k] = er + (or_ * wr - oi * wi)
            im[k] = ei + (or_ * wi + oi * wr)
            k += 1
        }
    }

    /// Inverse transform of a half spectrum into `output[0..<count]` (the first `count` of the n
    /// samples; all by default), scaled by 1/n so that `inverse(forward(x)) == x` up to rounding.
    func inverse(re: UnsafePointer<Float>, im: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>,
                 count: Int? = nil) {
        // Rebuild Z[k] = E[k] + i O[k], E[k] = (X[k] + conj X[N/2-k]) / 2,
        // O[k] = (X[k] - conj X[N/2-k]) * conj(W^k) / 2.
        var k = 0
        if half >= 8 {
            let rr = UnsafeRawPointer(re), ri = UnsafeRawPointer(im)
            let cr = UnsafeRawPointer(splitCos), sr = UnsafeRawPointer(splitSin)
            let tr = UnsafeMutableRawPointer(self.tr), ti = UnsafeMutableRawPointer(self.ti)
            while k + 4 <= half {
                let o = k * 4
                let (er, ei, dr, di) = Self.halves4(rr, ri, k: k, half: half)
                let wr = cr.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
                let wi = -sr.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
                let or_ = dr * wr - di * wi, oi = dr * wi + di * wr
                tr.storeBytes(of: er - oi, toByteOffset: o, as: SIMD4<Float>.self)
                ti.storeBytes(of: ei + or_, toByteOffset: o, as: SIMD4<Float>.self)
                k += 4
            }
        }
        while k < half {
            let ar = re[k], ai = im[k]
            let br = re[half - k], bi = -im[half - k]
            let er = 0.5 * (ar + br), ei = 0.5 * (ai + bi)
            let dr = 0.5 * (ar - br), di = 0.5 * (ai - bi)
            let wr = splitCos[k], wi = -splitSin[k]
            let or_ = dr * wr - di * wi, oi = dr * wi + di * wr
            tr[k] = er - oi
            ti[k] = ei + or_
            k += 1
        }
        // The complex transform reads Z in bit-reversed order straight from the scratch.
        let bitReverse = self.bitReverse, tr = self.tr, ti = self.ti
        complexFFT(sign: -1) { k in
            let i = Int(bitReverse[k])
            return (tr[i], ti[i])
        }
        let scale = 1 / Float(half)
        let m = min(count ?? n, n)
        for i in 0..<(m / 2) {
            output[2 * i] = zr[i] * scale
            output[2 * i + 1] = zi[i] * scale
        }
        if m & 1 == 1 { output[m - 1] = zr[m / 2] * scale }
    }
}

@inline(__always) func _cos(_ x: Double) -> Double { cosApprox(x) }
@inline(__always) func _sin(_ x: Double) -> Double { cosApprox(x - Double.pi / 2) }
