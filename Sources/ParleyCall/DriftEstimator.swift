// Capture-clock drift against the monotonic clock: measured, and absorbed.

/// A drift estimator setting that cannot work.
public enum DriftEstimatorError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The sample rate or the time constant is not positive.
    case notPositive(sampleRate: Int, timeConstant: Double)

    public var description: String {
        switch self {
        case let .notPositive(rate, tau):
            "a drift estimator needs a positive sample rate and time constant (given \(rate) Hz, \(tau) s)"
        }
    }
}

/// Measures how fast a capture clock (a sound card delivering samples at a nominal rate) runs
/// against the monotonic clock, from the (sample count, capture time) pairs its frames carry.
///
/// A least-squares line through the pairs, with exponential forgetting (time constant
/// ``timeConstant`` seconds, default 60 s: long enough to average out scheduling jitter of a
/// few ms per frame down to a few ppm, short enough to follow a crystal warming up). The slope
/// gives the drift in ppm; the line gives a smoothed capture time for any sample
/// (``smoothedTime(ofSample:)``), which is what the sender stamps in RTCP sender reports so
/// that the receiver's NTP/RTP mapping (and so lip sync) holds despite the drift.
///
/// The drift itself is absorbed downstream: RTP timestamps count captured samples, so a fast
/// sender simply sends packets a little faster and the receiver's jitter buffer, which fits
/// its own drift line through the arrival delays, shortens the audio by time-compression
/// (or lengthens it for a slow sender) without gaps.
///
/// Threading: a value type; one per capture stream. Allocation-free.
public struct DriftEstimator: Sendable {
    /// Forgetting time constant, seconds.
    public let timeConstant: Double
    /// Nominal sample rate, Hz.
    public let sampleRate: Int
    private var origin: MonotonicTime?
    private var originSample: Int64 = 0
    // Weighted sums over (x = nominal seconds, y = monotonic seconds), both from the origin.
    private var sw = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0
    private var lastX = 0.0
    /// Pairs fed.
    public private(set) var observations = 0

    /// An estimator for a capture clock of nominal `sampleRate`, forgetting with `timeConstant`.
    /// - Throws: ``DriftEstimatorError/notPositive(sampleRate:timeConstant:)`` unless both are
    ///   positive (and the time constant finite).
    public init(sampleRate: Int, timeConstant: Double = 60) throws(DriftEstimatorError) {
        guard sampleRate > 0, timeConstant > 0, timeConstant.isFinite else {
            throw .notPositive(sampleRate: sampleRate, timeConstant: timeConstant)
        }
        self.init(checkedSampleRate: sampleRate, timeConstant: timeConstant)
    }

    /// An estimator whose rate the caller has already checked (a send pipeline's codec rate).
    package init(checkedSampleRate sampleRate: Int, timeConstant: Double = 60) {
        self.sampleRate = sampleRate
        self.timeConstant = timeConstant
    }

    /// Feeds one frame: its first sample's index (samples since the stream started, unwrapped)
    /// and the monotonic time it was captured.
    public mutating func observe(sample: Int64, capturedAt time: MonotonicTime) {
        if origin == nil { origin = time; originSample = sample }
        let x = Double(sample - originSample) / Double(sampleRate)
        let y = Double(origin!.nanoseconds(to: time)) / 1e9
        let decay = observations == 0 ? 1 : _exp(-(x - lastX) / timeConstant)
        sw = sw * decay + 1
        sx = sx * decay + x
        sy = sy * decay + y
        sxx = sxx * decay + x * x
        sxy = sxy * decay + x * y
        lastX = x
        observations += 1
    }

    /// Monotonic seconds per nominal second (1.0 = no drift), or nil before two distinct points.
    private var slope: Double? {
        let det = sw * sxx - sx * sx
        guard observations >= 2, det > 1e-12 * max(1, sw * sxx) else { return nil }
        return (sw * sxy - sx * sy) / det
    }

    /// The capture clock's rate error in ppm (+: it runs fast, delivering more than the nominal
    /// rate per monotonic second), or nil before enough data.
    public var driftPpm: Double? {
        guard let s = slope, s > 0 else { return nil }
        return (1 / s - 1) * 1e6
    }

    /// The capture time of `sample` on the fitted line (jitter of individual frames removed).
    public func smoothedTime(ofSample sample: Int64) -> MonotonicTime? {
        guard let origin, let s = slope else { return nil }
        let mx = sx / sw, my = sy / sw
        let x = Double(sample - originSample) / Double(sampleRate)
        let y = my + s * (x - mx)
        return origin.advanced(byNanoseconds: Int64((y * 1e9).rounded()))
    }
}

#if canImport(Glibc)
import Glibc
@inline(__always) func _exp(_ x: Double) -> Double { Glibc.exp(x) }
#endif
