/// Time-scale modification of decoded PCM by whole pitch periods (WSOLA-style overlap-add),
/// used by ``AudioJitterBuffer`` to shrink or grow its delay during speech without a gap.
///
/// `accelerate` removes one pitch period `L` from a block: `x[0..<a] + fade(x[a..<a+L] ->
/// x[a+L..<a+2L]) + x[a+2L...]`; `decelerate` repeats one: `x[0..<a+L] + fade(x[a+L..<a+2L]
/// -> x[a..<a+L]) + x[a+L...]`. `L` maximises the normalised correlation between the two
/// segments (searched at 4 kHz, refined at full rate) between 2.5 ms and half the block.
/// Quiet blocks (below about -50 dBFS) are shortened or lengthened by up to half their
/// length without a pitch search. Works in place on interleaved `Int16` (the search uses
/// channel 0). Allocates nothing.
enum TimeStretch {
    /// Minimum normalised correlation for a speech block to be stretched (below it the block
    /// is noise-like and a splice would be audible; NetEq uses a similar gate).
    static let minimumCorrelation = 0.5
    /// Mean absolute amplitude under which a block counts as quiet.
    static let quietAmplitude = 100.0

    /// Picks the period to splice in `x[0..<n*channels]`; returns 0 when none is acceptable.
    /// `wantedSamples` (per channel) is how far the delay is from its target.
    static func chooseLength(_ x: UnsafeMutableBufferPointer<Int16>, count n: Int, channels: Int,
                             sampleRate: Int, wantedSamples: Int, minimumCorrelation: Double = minimumCorrelation) -> Int {
        guard n >= 8, wantedSamples > 0 else { return 0 }
        let half = n / 2
        var energy: UInt = 0
        for i in 0..<n { energy += Int(x[i * channels]).magnitude }
        if Double(energy) / Double(n) < quietAmplitude {
            return min(wantedSamples, half)
        }
        let minLag = max(2, sampleRate * 25 / 10_000)       // 2.5 ms
        let maxLag = min(half, sampleRate * 15 / 1000)      // 15 ms, at most half the block
        guard maxLag >= minLag else { return 0 }
        let step = max(1, sampleRate / 4000)
        var bestLag = 0
        var bestCorr = -1.0
        var lag = minLag
        while lag <= maxLag {
            let c = correlation(x, lag: lag, channels: channels, stride: step)
            if c > bestCorr { bestCorr = c; bestLag = lag }
            lag += step
        }
        guard bestLag > 0 else { return 0 }
        // Refine around the coarse lag at full rate; gate on the full-rate correlation only
        // (a coarse one over a few points can look periodic in noise).
        let lo = max(minLag, bestLag - step + 1), hi = min(maxLag, bestLag + step - 1)
        bestCorr = -1
        if lo <= hi {
            for l in lo...hi {
                let c = correlation(x, lag: l, channels: channels, stride: 1)
                if c > bestCorr { bestCorr = c; bestLag = l }
            }
        }
        return bestCorr >= minimumCorrelation ? bestLag : 0
    }

    /// Normalised correlation of `x[0..<lag]` with `x[lag..<2*lag]` (channel 0).
    private static func correlation(_ x: UnsafeMutableBufferPointer<Int16>, lag: Int, channels: Int, stride: Int) -> Double {
        // Int16 products fit in Int32; sums of up to 2^31 of them fit in Int64.
        var xy: Int64 = 0, xx: Int64 = 0, yy: Int64 = 0
        let base = x.baseAddress!
        var i = 0
        while i < lag {
            let a = Int64(base[i * channels]), b = Int64(base[(i + lag) * channels])
            xy &+= a * b; xx &+= a * a; yy &+= b * b
            i += stride
        }
        let d = (Double(xx) * Double(yy)).squareRoot()
        return d > 0 ? Double(xy) / d : 0
    }

    /// Removes `length` samples per channel from `x[0..<n]` by crossfading; returns the new count.
    static func accelerate(_ x: UnsafeMutableBufferPointer<Int16>, count n: Int, channels: Int, length l: Int) -> Int {
        guard l > 0, 2 * l <= n else { return n }
        for i in 0..<l {
            let w = Double(i) / Double(l)
            for c in 0..<channels {
                let a = Double(x[i * channels + c]), b = Double(x[(i + l) * channels + c])
                x[i * channels + c] = Int16(clamping: Int((a * (1 - w) + b * w).rounded()))
            }
        }
        // Shift the tail left by l.
        var i = l
        while i < n - l {
            for c in 0..<channels { x[i * channels + c] = x[(i + l) * channels + c] }
            i += 1
        }
        return n - l
    }

    /// Inserts `length` samples per channel into `x[0..<n]` (capacity permitting); returns the new count.
    static func decelerate(_ x: UnsafeMutableBufferPointer<Int16>, count n: Int, channels: Int, length l: Int) -> Int {
        guard l > 0, 2 * l <= n, (n + l) * channels <= x.count else { return n }
        // Shift x[l..<n] right by l (from the end), leaving x[0..<2l] to build the splice.
        var i = n - 1
        while i >= l {
            for c in 0..<channels { x[(i + l) * channels + c] = x[i * channels + c] }
            i -= 1
        }
        // Now x[2l..<n+l] = old x[l..<n]; old x[l..<2l] is at x[2l..<3l]... build the fade
        // into x[l..<2l]: from old x[l..<2l] (now at x[2l+i]) to old x[0..<l] (still x[i]).
        for i in 0..<l {
            let w = Double(i) / Double(l)
            for c in 0..<channels {
                let a = Double(x[(2 * l + i) * channels + c]), b = Double(x[i * channels + c])
                x[(l + i) * channels + c] = Int16(clamping: Int((a * (1 - w) + b * w).rounded()))
            }
        }
        return n + l
    }
}
