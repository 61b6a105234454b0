// The network's input vector: per 10 ms frame, 32 mel band levels of the front end's 512-point
// spectrum, the same levels over a per-band floor, and the 31 hand-made features.

/// Layout of the input vector the front end hands the network (and dumps for training).
@_spi(Training) public enum SpectralInput {
    /// Mel band levels in dBov (`0..<32`), then the levels over their floors in dB (`32..<64`),
    /// then the ``VADFeature``s (`64..<95`).
    public static let count = 2 * MelBands.count + VADFeature.count
    /// Index of the first hand-made feature.
    public static let handFeatures = 2 * MelBands.count
    /// `count` rounded up to a multiple of 8 (the padding lane is always 0).
    public static let stride = (count + 7) / 8 * 8
}

/// A triangular mel filterbank over the 257 bins (31.25 Hz apart) of the 512-point spectrum.
enum MelBands {
    static let count = 32
    static let lowHz = 60.0
    static let highHz = 8_000.0
    /// How fast a band's floor may rise, in dB per 10 ms frame (3 dB/s); it falls at once.
    static let floorRise: Float = 0.03

    struct Table: Sendable {
        var firstBin: [Int] = []
        var binCount: [Int] = []
        var weights: [Float] = []
    }

    /// Band `m` rises from centre `m - 1` to centre `m` and falls to centre `m + 1`, the centres
    /// evenly spaced on the mel scale (`2595 log10(1 + f / 700)`) from 60 Hz to 8 kHz; a band
    /// narrower than a bin keeps its nearest bin at weight 1, so no band is empty.
    static let table: Table = {
        func mel(_ f: Double) -> Double { 2595 * log10Approx(1 + f / 700) }
        func hz(_ m: Double) -> Double { 700 * (pow10Approx(m / 2595) - 1) }
        let lo = mel(lowHz), hi = mel(highHz)
        let edges = (0..<(count + 2)).map { hz(lo + (hi - lo) * Double($0) / Double(count + 1)) }
        var t = Table()
        let binHz = 16_000.0 / 512
        for m in 0..<count {
            let left = edges[m], centre = edges[m + 1], right = edges[m + 2]
            var first = -1
            var w: [Float] = []
            for k in 0..<FrontEnd.bins {
                let f = Double(k) * binHz
                let v = f <= centre ? (f - left) / (centre - left) : (right - f) / (right - centre)
                if v > 0 {
                    if first < 0 { first = k }
                    w.append(Float(v))
                } else if first >= 0 {
                    break
                }
            }
            if first < 0 {
                first = min(Int((centre / binHz).rounded()), FrontEnd.bins - 1)
                w = [1]
            }
            t.firstBin.append(first)
            t.binCount.append(w.count)
            t.weights += w
        }
        return t
    }()

    static let weightCount = table.weights.count
}

/// log10 for x > 0 without libm (the tables must come out the same everywhere): the binary
/// exponent plus a series for the mantissa's logarithm.
func log10Approx(_ x: Double) -> Double {
    var m = x, e = 0.0
    while m >= 2 { m /= 2; e += 1 }
    while m < 1 { m *= 2; e -= 1 }
    // ln(m) = 2 atanh((m - 1) / (m + 1)), |t| <= 1/3: the series converges fast.
    let t = (m - 1) / (m + 1), t2 = t * t
    var term = t, sum = 0.0
    var n = 1.0
    for _ in 0..<30 { sum += term / n; term *= t2; n += 2 }
    return (e * 0.6931471805599453 + 2 * sum) / 2.302585092994046
}

/// 10^x without libm: e^(x ln 10) by range reduction to a power of two and a Taylor series.
func pow10Approx(_ x: Double) -> Double {
    let y = x * 2.302585092994046 / 0.6931471805599453    // log2 of the result
    let whole = y.rounded(.down)
    let r = (y - whole) * 0.6931471805599453                // e^r, 0 <= r < ln 2
    var term = 1.0, sum = 1.0
    for n in 1..<30 { term *= r / Double(n); sum += term }
    var scale = 1.0
    if whole >= 0 { for _ in 0..<Int(whole) { scale *= 2 } } else { for _ in 0..<Int(-whole) { scale /= 2 } }
    return sum * scale
}
