// Math that gives the same bits on every platform (no libm): tables designed from it (the
// resampler's filters, the VAD's FFT twiddles and windows) are reproducible everywhere.

/// cos(x) by argument reduction and a Taylor series to double precision, so that tables do not
/// depend on the platform's libm (bit-for-bit identical tables everywhere). Init-time only.
package func cosApprox(_ x: Double) -> Double {
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
