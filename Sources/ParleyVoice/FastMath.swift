// Small, deterministic math kernels in pure Swift (no libm): the VAD's output must be the same
// bit for bit for the same input, and these are faster than libm's in the per-frame loops.

/// log2(x) for x > 0 (|error| < 1e-4); returns -126 for x <= 0 or subnormal, and 128 for +inf/NaN.
@inline(__always)
func fastLog2(_ x: Float) -> Float {
    guard x >= Float.leastNormalMagnitude else { return -126 }
    guard x.isFinite else { return 128 }
    let bits = x.bitPattern
    let exponent = Float(Int32(bitPattern: (bits >> 23) & 0xFF) - 127)
    // Mantissa m in [1, 2); map to [sqrt(1/2), sqrt(2)) around 1 for a better polynomial.
    var m = Float(bitPattern: (bits & 0x007F_FFFF) | 0x3F80_0000)
    var e = exponent
    if m > 1.41421356 { m *= 0.5; e += 1 }
    // log2(m) = 2/ln2 * atanh(t), t = (m - 1)/(m + 1), |t| < 0.1716
    let t = (m - 1) / (m + 1)
    let t2 = t * t
    let series = t * (2.885390081777927 + t2 * (0.961796693925976 + t2 * (0.577078016355585 + t2 * 0.412198583111771)))
    return e + series
}

/// 10 * log10(x), in dB, via ``fastLog2``.
@inline(__always)
func decibels(_ x: Float) -> Float { 3.0102999566 * fastLog2(x) }

/// 2^x, |relative error| < 2e-7 in [-126, 127]; clamps outside.
@inline(__always)
func fastExp2(_ x: Float) -> Float {
    let c = min(max(x, -126), 127)
    let fl = c.rounded(.down)
    let f = c - fl
    // 2^f on [0, 1): degree-6 polynomial (Taylor of e^(f ln2), enough for Float)
    let l = f * 0.6931471805599453
    let p = 1 + l * (1 + l * (0.5 + l * (0.16666667 + l * (0.041666668 + l * (0.008333334 + l * 0.0013888889)))))
    return Float(bitPattern: UInt32(Int32(fl) + 127) << 23) * p
}

/// e^x.
@inline(__always)
func fastExp(_ x: Float) -> Float { fastExp2(x * 1.4426950408889634) }

/// The logistic function 1 / (1 + e^-x).
@inline(__always)
func sigmoid(_ x: Float) -> Float { 1 / (1 + fastExp(-x)) }

/// tanh(x) = 2 sigmoid(2x) - 1.
@inline(__always)
func fastTanh(_ x: Float) -> Float { 2 / (1 + fastExp(-2 * x)) - 1 }

/// ``fastExp2`` of eight values: the same clamping, polynomial and exponent bits per lane.
@inline(__always)
func fastExp2x8(_ x: SIMD8<Float>) -> SIMD8<Float> {
    // Clamp and floor with plain SSE2 comparisons and adds: `clamped` and `rounded(.down)` on
    // SIMD8 compile to out-of-line generic code and a libm floorf call per lane on baseline x86-64.
    var c = x.replacing(with: -126, where: x .< -126)
    c.replace(with: 127, where: c .> 127)
    let fl = floor8(c)
    let f = c - fl
    let l = f * 0.6931471805599453
    var p = l * 0.0013888889 + 0.008333334
    p = l * p + 0.041666668
    p = l * p + 0.16666667
    p = l * p + 0.5
    p = l * p + 1
    p = l * p + 1
    // The integer fl as bits without a lane-by-lane conversion: adding 1.5 * 2^23 puts it in
    // the low mantissa bits (exact for |fl| <= 2^22).
    let magic = SIMD8<Float>(repeating: 12_582_912)
    let n = unsafeBitCast(fl + magic, to: SIMD8<Int32>.self) &- unsafeBitCast(magic, to: SIMD8<Int32>.self)
    let bits = (n &+ 127) &<< 23
    return unsafeBitCast(bits, to: SIMD8<Float>.self) * p
}

/// floor(x) of eight values for |x| < 2^22: round to nearest by the 1.5 * 2^23 trick, minus
/// one where that rounded up. Equal to `rounded(.down)` (at most the sign of a zero differs).
@inline(__always)
func floor8(_ x: SIMD8<Float>) -> SIMD8<Float> {
    let magic = SIMD8<Float>(repeating: 12_582_912)
    let r = (x + magic) - magic
    return r.replacing(with: r - 1, where: r .> x)
}

/// ``fastTanh`` of eight values.
@inline(__always)
func fastTanh8(_ x: SIMD8<Float>) -> SIMD8<Float> {
    2 / (1 + fastExp2x8(-2 * x * 1.4426950408889634)) - 1
}

/// `a[0..<n] . b[0..<n]` for `n` a multiple of 8, in two SIMD8 accumulators (a fixed order
/// of operations, so the same inputs give the same result everywhere).
@inline(__always)
func dot8(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ n: Int) -> Float {
    let r = UnsafeRawPointer(a), v = UnsafeRawPointer(b)
    var a0 = SIMD8<Float>(), a1 = SIMD8<Float>()
    var o = 0
    let end = n * 4
    while o + 64 <= end {
        a0 += r.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self) * v.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
        a1 += r.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self) * v.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self)
        o += 64
    }
    if o < end {
        a0 += r.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self) * v.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
    }
    return (a0 + a1).sum()
}

/// sqrt for x >= 0 (the stdlib's `squareRoot` is an IEEE instruction, exact and portable).
@inline(__always)
func root(_ x: Float) -> Float { max(x, 0).squareRoot() }

/// ``fastLog2`` of four values: the same guards, reduction and polynomial per lane, so each lane
/// is the scalar function's result bit for bit.
@inline(__always)
func fastLog2x4(_ x: SIMD4<Float>) -> SIMD4<Float> {
    let bits = unsafeBitCast(x, to: SIMD4<UInt32>.self)
    let exponent = SIMD4<Float>(SIMD4<Int32>(truncatingIfNeeded: (bits &>> 23) & 0xFF) &- 127)
    var m = unsafeBitCast((bits & 0x007F_FFFF) | 0x3F80_0000, to: SIMD4<Float>.self)
    var e = exponent
    let high = m .> 1.41421356
    m.replace(with: m * 0.5, where: high)
    e.replace(with: e + 1, where: high)
    let t = (m - 1) / (m + 1)
    let t2 = t * t
    let series = t * (2.885390081777927 + t2 * (0.961796693925976 + t2 * (0.577078016355585 + t2 * 0.412198583111771)))
    var r = e + series
    // The scalar guards, in the same priority: not normal (or NaN compares false) -> -126
    // unless NaN/inf -> 128. x >= leastNormal fails for NaN, so the scalar returns -126 for NaN.
    let notFinite = (bits & 0x7F80_0000) .== 0x7F80_0000
    r.replace(with: 128, where: notFinite)
    r.replace(with: -126, where: .!(x .>= Float.leastNormalMagnitude))
    return r
}

/// Two independent ``dot8``s of length `n`, interleaved; each the same bit for bit as ``dot8``.
@inline(__always)
func dot8x2(_ a0: UnsafePointer<Float>, _ b0: UnsafePointer<Float>, _ a1: UnsafePointer<Float>, _ b1: UnsafePointer<Float>,
            _ n: Int) -> (Float, Float) {
    let r0 = UnsafeRawPointer(a0), v0 = UnsafeRawPointer(b0), r1 = UnsafeRawPointer(a1), v1 = UnsafeRawPointer(b1)
    var p0 = SIMD8<Float>(), q0 = SIMD8<Float>(), p1 = SIMD8<Float>(), q1 = SIMD8<Float>()
    @inline(__always) func l(_ p: UnsafeRawPointer, _ o: Int) -> SIMD8<Float> { p.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self) }
    var o = 0
    let end = n * 4
    while o + 64 <= end {
        p0 += l(r0, o) * l(v0, o); q0 += l(r0, o + 32) * l(v0, o + 32)
        p1 += l(r1, o) * l(v1, o); q1 += l(r1, o + 32) * l(v1, o + 32)
        o += 64
    }
    if o < end { p0 += l(r0, o) * l(v0, o); p1 += l(r1, o) * l(v1, o) }
    return ((p0 + q0).sum(), (p1 + q1).sum())
}

/// One dense layer, eight neurons at a time, from weights transposed in blocks of eight neurons
/// (`wt[(block * inputStride + i) * 8 + lane]` weighs input `i` in neuron `8 * block + lane`): `out[j] = bias[j] + x . w_j` over the padded
/// input width. Each lane adds its products exactly as ``dot8`` does for one neuron (chunks
/// of eight inputs alternating between two partial sums, the two summed, then the eight
/// positions in order, then the bias), so the result is the same bit for bit as a ``dot8``
/// per neuron, without a horizontal sum per neuron.
@inline(__always)
func denseLayer8(_ wt: UnsafePointer<Float>, _ bias: UnsafePointer<Float>, _ x: UnsafePointer<Float>,
                 inputStride: Int, blocks: Int, _ out: UnsafeMutablePointer<Float>) {
    let chunks = inputStride / 8
    for block in 0..<blocks {
        let wb = UnsafeRawPointer(wt) + block * inputStride * 32
        var total = SIMD8<Float>()
        for lane in 0..<8 {
            var a0 = SIMD8<Float>(), a1 = SIMD8<Float>()
            var c = 0
            while c + 2 <= chunks {
                let i = c * 8 + lane
                a0 += x[i] * wb.loadUnaligned(fromByteOffset: i * 32, as: SIMD8<Float>.self)
                a1 += x[i + 8] * wb.loadUnaligned(fromByteOffset: (i + 8) * 32, as: SIMD8<Float>.self)
                c += 2
            }
            if c < chunks {
                let i = c * 8 + lane
                a0 += x[i] * wb.loadUnaligned(fromByteOffset: i * 32, as: SIMD8<Float>.self)
            }
            total += a0 + a1
        }
        let b = UnsafeRawPointer(bias).loadUnaligned(fromByteOffset: block * 32, as: SIMD8<Float>.self)
        UnsafeMutableRawPointer(out).storeBytes(of: b + total, toByteOffset: block * 32, as: SIMD8<Float>.self)
    }
}

/// One zero-filled allocation carved into consecutive blocks of `sizes` floats (a model's
/// weights, copied once at start-up): the allocation to free, and each block's start.
func allocateWeightBlocks(_ sizes: [Int]) -> (memory: UnsafeMutablePointer<Float>, blocks: [UnsafeMutablePointer<Float>]) {
    let total = sizes.reduce(0, +)
    let memory = UnsafeMutablePointer<Float>.allocate(capacity: total)
    memory.initialize(repeating: 0, count: total)
    var blocks: [UnsafeMutablePointer<Float>] = []
    var offset = 0
    for n in sizes { blocks.append(memory + offset); offset += n }
    return (memory, blocks)
}

/// Where the weight of neuron `row` for input `input` goes in the layout ``denseLayer8`` reads:
/// rows in blocks of eight, each block `inputStride` inputs long with its eight rows interleaved.
@inline(__always)
func interleaved8Index(row: Int, input: Int, inputStride: Int) -> Int {
    ((row / 8) * inputStride + input) * 8 + row % 8
}
