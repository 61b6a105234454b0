/// Estimates the playout delay a jitter buffer needs, from packet arrival delays.
///
/// Each packet gives a relative delay `d = arrival - media` (receiver clock minus sender
/// media time, both in ms; the unknown clock offset cancels later). Two parts:
/// - a **drift line** `baseline(m) = intercept + slope * m` fitted (Theil-Sen, robust to
///   spikes) through the per-window minima of `d` over the last `windows` windows, so a sender
///   clock running +-2.5 % fast or slow does not look like growing jitter;
/// - a **forgetting histogram** of the residuals `d - baseline(m)` in 1 ms bins (as NetEq's
///   DelayManager, but finer), whose `quantile` is the target buffering delay. Old samples are
///   forgotten by `forgetFactor` per packet (0.998 = a memory of about 500 packets, 10 s of
///   20 ms packets); instead of decaying every bin per packet, each new sample weighs
///   `1/forgetFactor` more than the previous one (O(1) per packet, renormalised rarely).
///
/// Storage is allocated once; `add` and `quantile` allocate nothing. Not thread-safe.
public struct DelayEstimator: Sendable {
    /// Residuals below this (ms) go to bin 0.
    static let lowestResidualMs = -100.0
    /// Number of 1 ms bins.
    static let binCount = 4096

    private var bins: [Double]
    /// Sums of `blockSize` consecutive bins, so a quantile scans 64 blocks + 64 bins.
    private var blocks: [Double]
    static let blockSize = 64
    private var total = 0.0
    private var weight = 1.0
    private var samples = 0
    /// Memory of the histogram: weight of a sample decays by this per later sample.
    public var forgetFactor: Double

    // Drift line.
    private let windowMs: Double
    private var windowCenters: [Double]
    private var windowMinima: [Double]
    private var windowCount = 0
    private var windowNext = 0
    private var currentWindowStart = Double.nan
    private var currentWindowMin = Double.infinity
    private var scratch: [Double]
    /// Slope of the drift line: receiver ms gained per media ms (+0.025 = receiver 2.5 % fast).
    public private(set) var slope = 0.0
    /// Intercept of the drift line, ms.
    public private(set) var intercept = Double.nan

    /// Creates an estimator with the defaults: a forget factor of 0.998 and the drift line fitted
    /// over 16 minimum windows of 500 ms (8 s, long enough to separate drift from jitter, short
    /// enough to follow it).
    public init() {
        self.init(validForgetFactor: 0.998, windowMs: 500, windows: 16)
    }

    /// Creates an estimator. `windowMs` is the length of one minimum window (media ms) and
    /// `windows` how many of them the drift line is fitted over (see ``init()`` for the defaults).
    ///
    /// - Throws: ``JitterConfigurationError`` when `forgetFactor` is not in the open interval
    ///   (0, 1), `windowMs` is not positive or `windows` is less than 2.
    public init(forgetFactor: Double, windowMs: Double = 500, windows: Int = 16) throws(JitterConfigurationError) {
        guard forgetFactor > 0 && forgetFactor < 1 else {
            throw .outOfRange(parameter: "forgetFactor", value: "\(forgetFactor)", allowed: "0 < forgetFactor < 1")
        }
        guard windowMs > 0 else { throw .outOfRange(parameter: "windowMs", value: "\(windowMs)", allowed: "> 0") }
        guard windows >= 2 else { throw .outOfRange(parameter: "windows", value: "\(windows)", allowed: ">= 2") }
        self.init(validForgetFactor: forgetFactor, windowMs: windowMs, windows: windows)
    }

    /// For a buffer whose configuration passed ``JitterBufferConfiguration/validate()``.
    init(validated c: JitterBufferConfiguration) {
        self.init(validForgetFactor: c.forgetFactor, windowMs: 500, windows: 16)
    }

    private init(validForgetFactor forgetFactor: Double, windowMs: Double, windows: Int) {
        self.forgetFactor = forgetFactor
        self.windowMs = windowMs
        bins = [Double](repeating: 0, count: Self.binCount)
        blocks = [Double](repeating: 0, count: Self.binCount / Self.blockSize)
        windowCenters = [Double](repeating: 0, count: windows)
        windowMinima = [Double](repeating: 0, count: windows)
        scratch = [Double](repeating: 0, count: windows * (windows - 1) / 2)
    }

    /// Number of delays added since creation or the last `reset`.
    public var count: Int { samples }

    /// The baseline relative delay (ms) expected for a packet of media time `mediaMs`.
    @inlinable public func baseline(atMedia mediaMs: Double) -> Double {
        intercept.isNaN ? 0 : intercept + slope * mediaMs
    }

    /// Adds one packet's relative delay `delayMs` (arrival ms - media ms) for media time `mediaMs`.
    public mutating func add(delayMs: Double, mediaMs: Double) {
        guard delayMs.isFinite, mediaMs.isFinite else { return }
        updateLine(delayMs: delayMs, mediaMs: mediaMs)
        let residual = delayMs - baseline(atMedia: mediaMs)
        let b = Int((residual - Self.lowestResidualMs).rounded(.down))
        let bin = min(max(b, 0), Self.binCount - 1)
        // Warm-up: average uniformly until the memory is full, then forget geometrically.
        let n = Double(samples)
        let f = min(forgetFactor, (n + 1) / (n + 2))
        weight /= f
        bins[bin] += weight
        blocks[bin / Self.blockSize] += weight
        total += weight
        samples += 1
        if weight > 1e100 {
            let s = 1 / weight
            for i in 0..<bins.count { bins[i] *= s }
            for i in 0..<blocks.count { blocks[i] *= s }
            total *= s
            weight = 1
        }
    }

    /// The `q`-quantile (0...1) of the residual delays above the baseline, ms; 0 when empty.
    public func quantile(_ q: Double) -> Double {
        guard total > 0 else { return 0 }
        let goal = q * total
        var acc = 0.0
        var b = 0
        while b < blocks.count - 1 && acc + blocks[b] < goal {
            acc += blocks[b]
            b += 1
        }
        var i = b * Self.blockSize
        let end = i + Self.blockSize
        while i < end - 1 {
            acc += bins[i]
            if acc >= goal { break }
            i += 1
        }
        return Double(i) + 1 + Self.lowestResidualMs
    }

    /// Forgets every delay (after a stream restart on another path).
    public mutating func reset() {
        for i in 0..<bins.count { bins[i] = 0 }
        for i in 0..<blocks.count { blocks[i] = 0 }
        total = 0; weight = 1; samples = 0
        windowCount = 0; windowNext = 0
        currentWindowStart = .nan; currentWindowMin = .infinity
        slope = 0; intercept = .nan
    }

    /// Moves the whole delay picture by `ms` (after a timeline re-base), keeping its shape.
    public mutating func shift(byMs ms: Double) {
        if !intercept.isNaN { intercept += ms }
        for i in 0..<windowCount { windowMinima[i] += ms }
        currentWindowMin += ms
    }

    private mutating func updateLine(delayMs: Double, mediaMs: Double) {
        if currentWindowStart.isNaN { currentWindowStart = mediaMs }
        if mediaMs >= currentWindowStart + windowMs {
            if currentWindowMin.isFinite {
                windowCenters[windowNext] = currentWindowStart + windowMs / 2
                windowMinima[windowNext] = currentWindowMin
                windowNext = (windowNext + 1) % windowCenters.count
                windowCount = min(windowCount + 1, windowCenters.count)
                fitLine()
            }
            // Skip whole empty windows (DTX) so the next one starts at this packet.
            let skipped = ((mediaMs - currentWindowStart) / windowMs).rounded(.down)
            currentWindowStart += skipped * windowMs
            currentWindowMin = .infinity
        }
        if mediaMs >= currentWindowStart { currentWindowMin = min(currentWindowMin, delayMs) }
        if intercept.isNaN || windowCount == 0 {
            // Before the first window closes: a flat line through the lowest delay seen.
            slope = 0
            intercept = min(intercept.isNaN ? .infinity : intercept, delayMs)
        }
    }

    private mutating func fitLine() {
        let n = windowCount
        guard n >= 4 else {
            var lo = Double.infinity
            for i in 0..<n { lo = min(lo, windowMinima[i]) }
            slope = 0
            intercept = lo
            return
        }
        var m = 0
        for i in 0..<n {
            for j in (i + 1)..<n {
                let dc = windowCenters[j] - windowCenters[i]
                if dc != 0 {
                    scratch[m] = (windowMinima[j] - windowMinima[i]) / dc
                    m += 1
                }
            }
        }
        guard m > 0 else { return }
        var s = median(count: m)
        s = min(max(s, -0.06), 0.06)
        for i in 0..<n { scratch[i] = windowMinima[i] - s * windowCenters[i] }
        slope = s
        intercept = median(count: n)
    }

    /// Median of `scratch[0..<count]` (sorts that prefix in place; insertion sort, count <= 120).
    private mutating func median(count: Int) -> Double {
        for i in 1..<max(count, 1) {
            let v = scratch[i]
            var j = i - 1
            while j >= 0 && scratch[j] > v {
                scratch[j + 1] = scratch[j]
                j -= 1
            }
            scratch[j + 1] = v
        }
        return count % 2 == 1 ? scratch[count / 2] : (scratch[count / 2 - 1] + scratch[count / 2]) / 2
    }
}
