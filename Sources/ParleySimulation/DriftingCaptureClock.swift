// Capture clocks that drift against the monotonic clock (simulated sound cards).

/// A capture clock that runs at a rate off the monotonic clock by `driftPpm` parts per million
/// (positive: it runs fast, so its nominal 20 ms elapse in less than 20 ms of monotonic time).
///
/// It models a sound card's crystal: the monotonic time at which sample `n` of a nominal rate
/// `sampleRate` is captured. Used by simulated participants; `DriftEstimator` measures the
/// same quantity from real capture timestamps.
public struct DriftingCaptureClock: Sendable, Hashable {
    /// Monotonic time of sample 0.
    public var origin: MonotonicTime
    /// Rate error, ppm (+25 000 = 2.5 % fast).
    public var driftPpm: Double
    /// Nominal samples per second.
    public var sampleRate: Int

    /// A clock whose sample 0 is captured at `origin`, running `driftPpm` off (within +-50 %).
    /// - Throws: ``SimulationConfigurationError/sampleRateNotPositive(_:)`` or
    ///   ``SimulationConfigurationError/driftOutOfRange(_:)``.
    public init(origin: MonotonicTime, driftPpm: Double = 0, sampleRate: Int) throws(SimulationConfigurationError) {
        guard sampleRate > 0 else { throw .sampleRateNotPositive(sampleRate) }
        guard driftPpm > -500_000 && driftPpm < 500_000 else { throw .driftOutOfRange(driftPpm) }
        self.origin = origin; self.driftPpm = driftPpm; self.sampleRate = sampleRate
    }

    /// Monotonic time at which sample `index` is captured.
    @inlinable public func time(ofSample index: Int64) -> MonotonicTime {
        let seconds = Double(index) / Double(sampleRate) / (1 + driftPpm * 1e-6)
        return origin.advanced(byNanoseconds: Int64((seconds * 1e9).rounded()))
    }
}
