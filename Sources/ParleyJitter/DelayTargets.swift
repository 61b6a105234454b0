/// A forgetting estimate of the packet loss rate, RTP style: packets expected (the advance of
/// the highest sequence number) against packets received, both decaying per sequence number.
/// Allocates nothing.
struct LossRateEstimator: Sendable {
    /// Weight kept per sequence number of advance (0.999: a memory of about 1000 packets).
    static let forgetFactor = 0.999
    /// A larger advance (a sequence jump) counts as this many sequence numbers.
    static let maximumAdvance: Int64 = 1_000
    /// The estimate is capped here: past it, waiting for a missing packet is not worth it anyway.
    static let maximumRate = 0.5

    private var expected = 0.0
    private var received = 0.0

    /// Adds one received packet `advance` sequence numbers ahead of the previous highest
    /// (0 or negative: a reordered or repeated one).
    mutating func add(advance: Int64) {
        let a = max(0, min(advance, Self.maximumAdvance))
        let decay = Self.forgetFactor
        expected = expected * _pow(decay, Double(a)) + Double(a)
        received = received * (a > 0 ? _pow(decay, Double(a)) : 1) + 1
        if received > expected { received = expected }
    }

    /// The loss rate, 0 ... ``maximumRate``; 0 before any advance.
    var rate: Double {
        expected > 0 ? min(Self.maximumRate, max(0, 1 - received / expected)) : 0
    }
}

/// The two delays an ``AudioJitterBuffer`` plays toward, from its ``DelayEstimator`` and
/// ``LossRateEstimator``: the target buffering delay and how long a missing packet is waited
/// for, both in ms above the drift line. Recomputed lazily: `add` marks them stale, `refresh`
/// recomputes them once. Allocates only in `init`.
struct DelayTargets: Sendable {
    /// Below this many measured delays the target is at least
    /// ``JitterBufferConfiguration/initialDelayMs`` (the histogram says little yet).
    static let targetWarmUpPackets = 20
    /// Below this many measured delays a missing packet is waited for at least
    /// ``JitterBufferConfiguration/startupWaitMs``.
    static let waitWarmUpPackets = 100

    private(set) var delay: DelayEstimator
    private var loss = LossRateEstimator()
    private var stale = true
    /// The target buffering delay above the drift line, ms.
    private(set) var targetMs: Double
    /// How far above the drift line a missing packet is still waited for, ms.
    private(set) var waitMs: Double

    // The settings it reads (copied so a refresh reads a few scalars, not the configuration).
    private let quantile: Double
    private let initialDelayMs: Double
    private let minimumDelayMs: Double
    private let maximumDelayMs: Double
    private let waitQuantile: Double
    private let lossWaitOdds: Double
    private let waitMarginFactor: Double
    private let startupWaitMs: Double

    init(_ c: JitterBufferConfiguration) {
        delay = DelayEstimator(validated: c)
        targetMs = c.initialDelayMs
        waitMs = c.initialDelayMs
        quantile = c.quantile
        initialDelayMs = c.initialDelayMs
        minimumDelayMs = c.minimumDelayMs
        maximumDelayMs = c.maximumDelayMs
        waitQuantile = c.waitQuantile
        lossWaitOdds = c.lossWaitOdds
        waitMarginFactor = c.waitMarginFactor
        startupWaitMs = c.startupWaitMs
    }

    /// Adds a received packet: its relative delay (arrival ms - media ms) at media time
    /// `mediaMs`, and its sequence advance (see ``LossRateEstimator/add(advance:)``).
    mutating func add(delayMs: Double, mediaMs: Double, advance: Int64) {
        loss.add(advance: advance)
        delay.add(delayMs: delayMs, mediaMs: mediaMs)
        stale = true
    }

    /// The drift line's relative delay at media time `mediaMs`.
    @inline(__always) func baseline(atMedia mediaMs: Double) -> Double {
        delay.baseline(atMedia: mediaMs)
    }

    /// Recomputes ``targetMs`` and ``waitMs`` when a packet was added since the last call.
    mutating func refresh() {
        guard stale else { return }
        stale = false
        var t = delay.count > 0 ? delay.quantile(quantile) : initialDelayMs
        if delay.count < Self.targetWarmUpPackets { t = max(t, initialDelayMs) }
        targetMs = min(max(t, minimumDelayMs), maximumDelayMs)
        // How long to wait for a missing packet: while it is still likely to arrive rather
        // than be lost. With loss rate L and survival S(w) of the delays, the odds it arrives
        // are (1-L)S(w) / L; wait while they exceed `lossWaitOdds`, i.e. up to the quantile
        // 1 - odds*L/(1-L), capped by `waitQuantile` (no loss: wait long).
        let l = loss.rate
        let q = min(waitQuantile, max(quantile, 1 - lossWaitOdds * l / (1 - l)))
        var w = delay.count > 0 ? delay.quantile(q) * waitMarginFactor : initialDelayMs
        if delay.count < Self.waitWarmUpPackets { w = max(w, startupWaitMs) }
        waitMs = min(max(w, targetMs), maximumDelayMs)
    }
}

// `pow` without Foundation (ParleyJitter stays dependency-free).
#if canImport(Glibc)
import Glibc
@inline(__always) private func _pow(_ x: Double, _ y: Double) -> Double { Glibc.pow(x, y) }
#elseif canImport(Darwin)
import Darwin
@inline(__always) private func _pow(_ x: Double, _ y: Double) -> Double { Darwin.pow(x, y) }
#endif
