/// xoshiro256** (Blackman and Vigna): a small, fast, seedable generator. Seeded through
/// SplitMix64 so every 64-bit seed gives a good state. Same seed, same numbers, everywhere.
/// The simulator's generator; package-visible for Parley's tests.
package struct Xoshiro256: RandomNumberGenerator, Sendable {
    private var s0, s1, s2, s3: UInt64

    /// Creates a generator from `seed`.
    package init(seed: UInt64) {
        var x = seed
        func splitMix(_ x: inout UInt64) -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s0 = splitMix(&x); s1 = splitMix(&x); s2 = splitMix(&x); s3 = splitMix(&x)
    }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        let result = ((s1 &* 5) << 7 | (s1 &* 5) >> 57) &* 9
        let t = s1 << 17
        s2 ^= s0; s3 ^= s1; s1 ^= s2; s0 ^= s3
        s2 ^= t
        s3 = s3 << 45 | s3 >> 19
        return result
    }

    /// Uniform in [0, 1).
    package mutating func uniform() -> Double { Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0) }

    /// Standard normal (Box-Muller).
    package mutating func gaussian() -> Double {
        let u1 = max(uniform(), 1e-300), u2 = uniform()
        return (-2 * _log(u1)).squareRoot() * _cos(2 * Double.pi * u2)
    }

    /// Pareto with minimum `scale` and tail index `shape`.
    package mutating func pareto(scale: Double, shape: Double) -> Double {
        scale / _pow(max(1 - uniform(), 1e-300), 1 / shape)
    }
}

/// Gilbert-Elliott two-state loss: a good and a bad state with their own loss probabilities.
public struct GilbertElliott: Sendable, Hashable {
    /// Probability per packet of going from good to bad.
    public var goodToBad: Double
    /// Probability per packet of going from bad to good (1/mean burst length).
    public var badToGood: Double
    /// Loss probability in the good state.
    public var lossInGood: Double
    /// Loss probability in the bad state.
    public var lossInBad: Double

    /// A chain with these transition and loss probabilities (each in 0...1).
    public init(goodToBad: Double, badToGood: Double, lossInGood: Double, lossInBad: Double) {
        self.goodToBad = goodToBad; self.badToGood = badToGood
        self.lossInGood = lossInGood; self.lossInBad = lossInBad
    }

    /// About 4 % loss in bursts of mean length 3 packets.
    public static let typical = GilbertElliott(goodToBad: 0.015, badToGood: 0.33, lossInGood: 0.003, lossInBad: 0.8)
}

/// A network condition for the simulator. All delays in ms.
public struct NetworkScenario: Sendable, Hashable {
    /// The jitter added to every packet.
    public enum Jitter: Sendable, Hashable {
        /// No jitter: every packet takes ``NetworkScenario/baseDelayMs``.
        case none
        /// Normal with this standard deviation, truncated at 0.
        case gaussian(sigmaMs: Double)
        /// Pareto (heavy tail) with this minimum and tail index, minus the minimum.
        case pareto(scaleMs: Double, shape: Double)
    }

    /// A name (one of ``names`` when made by ``named(_:)``).
    public var name: String
    /// One-way delay of the fastest packets.
    public var baseDelayMs: Double = 40
    /// The jitter added to ``baseDelayMs``.
    public var jitter: Jitter = .none
    /// Delay spikes per second (Poisson); packets sent during a spike leave when it ends.
    public var spikesPerSecond: Double = 0
    /// How long a spike stalls the path, ms.
    public var spikeHeightMs: Double = 400
    /// Wi-Fi-like outliers: probability per packet that the link stalls (retransmissions,
    /// power save) for a uniform 40...250 ms; packets sent meanwhile queue behind it.
    public var wifiStallProbability: Double = 0
    /// Gilbert-Elliott loss, or none.
    public var loss: GilbertElliott?
    /// Probability a packet is held back by 1...`reorderMaxPackets` packet times.
    public var reorderProbability: Double = 0
    /// The longest hold-back of a reordered packet, in packet times.
    public var reorderMaxPackets: Int = 10
    /// Probability a packet arrives twice.
    public var duplicateProbability: Double = 0
    /// Receiver clock rate error, parts per million (+: the receiver's clock runs fast).
    public var driftPpm: Double = 0
    /// Packet interval, ms.
    public var packetMs: Double = 20

    /// A scenario called `name` with a 40 ms base delay, 20 ms packets and no impairment.
    public init(name: String) { self.name = name }

    /// The base scenarios.
    public static let baseNames = ["gaussian", "pareto", "spikes", "wifi"]
    /// The variant suffixes: loss, drift (+-500 ppm, +-2.5 %), reordering, duplication.
    public static let variantSuffixes = ["", "-loss", "-drift+500ppm", "-drift-500ppm", "-drift+2.5pct",
                                         "-drift-2.5pct", "-reorder", "-dup"]
    /// Every scenario name ``named(_:)`` knows (a base name, optionally with one suffix).
    public static var names: [String] { baseNames.flatMap { b in variantSuffixes.map { b + $0 } } }

    /// The scenario called `name`, or `nil`. Variants may be combined (`wifi-loss-reorder`).
    public static func named(_ name: String) -> NetworkScenario? {
        var s = NetworkScenario(name: name)
        var rest = Substring(name)
        func take(_ prefix: String) -> Bool {
            if rest.hasPrefix(prefix) { rest = rest.dropFirst(prefix.count); return true }
            return false
        }
        if take("gaussian") {
            s.jitter = .gaussian(sigmaMs: 20)
        } else if take("pareto") {
            s.jitter = .pareto(scaleMs: 5, shape: 1.6)
        } else if take("spikes") {
            s.jitter = .gaussian(sigmaMs: 5)
            s.spikesPerSecond = 0.1
        } else if take("wifi") {
            s.jitter = .gaussian(sigmaMs: 3)
            s.wifiStallProbability = 0.01
        } else {
            return nil
        }
        while !rest.isEmpty {
            if take("-loss") { s.loss = .typical }
            else if take("-drift+500ppm") { s.driftPpm = 500 }
            else if take("-drift-500ppm") { s.driftPpm = -500 }
            else if take("-drift+2.5pct") { s.driftPpm = 25_000 }
            else if take("-drift-2.5pct") { s.driftPpm = -25_000 }
            else if take("-reorder") { s.reorderProbability = 0.03 }
            else if take("-dup") { s.duplicateProbability = 0.02 }
            else { return nil }
        }
        return s
    }
}

/// Generates packet traces from a ``NetworkScenario``, deterministically from a seed.
public enum NetworkSimulator {
    /// Packets of `scenario.packetMs` sent for `seconds`, starting at sequence number
    /// `firstSequence` (wrapping) and media time `startMs`; rows in send order, duplicates as
    /// extra rows right after their original.
    public static func generate(_ scenario: NetworkScenario, seed: UInt64, seconds: Double,
                                firstSequence: UInt16 = 0, startMs: Double = 0) -> [TraceRow] {
        var rng = Xoshiro256(seed: seed)
        let count = max(0, Int((seconds * 1000 / scenario.packetMs).rounded(.down)))
        var rows: [TraceRow] = []
        rows.reserveCapacity(count + count / 16)
        var bad = false
        var nextSpikeMs = scenario.spikesPerSecond > 0 ? exponential(&rng, mean: 1000 / scenario.spikesPerSecond) : .infinity
        var spikeStartMs = -Double.infinity
        var wifiReleaseMs = -Double.infinity  // a stall holds packets until this (true) time
        let skew = 1 + scenario.driftPpm / 1_000_000
        for i in 0..<count {
            let sendMs = startMs + Double(i) * scenario.packetMs
            let elapsed = Double(i) * scenario.packetMs
            let seq = firstSequence &+ UInt16(truncatingIfNeeded: i)
            var lost = false
            if let ge = scenario.loss {
                bad = bad ? rng.uniform() >= ge.badToGood : rng.uniform() < ge.goodToBad
                lost = rng.uniform() < (bad ? ge.lossInBad : ge.lossInGood)
            }
            var delay = scenario.baseDelayMs
            switch scenario.jitter {
            case .none: break
            case .gaussian(let sigma): delay += max(0, sigma * rng.gaussian() + sigma)
            case .pareto(let scale, let shape): delay += min(rng.pareto(scale: scale, shape: shape) - scale, 2_000)
            }
            // Spikes: the path stalls for `spikeHeightMs`; packets sent during it leave when it ends.
            if elapsed >= nextSpikeMs {
                spikeStartMs = nextSpikeMs
                nextSpikeMs += max(scenario.spikeHeightMs, exponential(&rng, mean: 1000 / scenario.spikesPerSecond))
            }
            if elapsed < spikeStartMs + scenario.spikeHeightMs {
                delay += spikeStartMs + scenario.spikeHeightMs - elapsed
            }
            // Wi-Fi: a stall holds this and later packets until it clears.
            if scenario.wifiStallProbability > 0 && rng.uniform() < scenario.wifiStallProbability {
                wifiReleaseMs = max(wifiReleaseMs, elapsed + scenario.baseDelayMs + 40 + 210 * rng.uniform())
            }
            var trueArrival = elapsed + delay
            if trueArrival < wifiReleaseMs { trueArrival = wifiReleaseMs + rng.uniform() * 2 }
            if scenario.reorderProbability > 0 && rng.uniform() < scenario.reorderProbability {
                trueArrival += scenario.packetMs * Double(1 + Int(rng.uniform() * Double(scenario.reorderMaxPackets)))
            }
            let arrival = trueArrival * skew
            rows.append(TraceRow(sequence: seq, sendMs: sendMs, arrivalMs: lost ? nil : rounded(arrival)))
            if !lost && scenario.duplicateProbability > 0 && rng.uniform() < scenario.duplicateProbability {
                rows.append(TraceRow(sequence: seq, sendMs: sendMs, arrivalMs: rounded(arrival + 1 + 30 * rng.uniform())))
            }
        }
        return rows
    }

    private static func exponential(_ rng: inout Xoshiro256, mean: Double) -> Double {
        -mean * _log(max(1 - rng.uniform(), 1e-300))
    }

    private static func rounded(_ x: Double) -> Double { (x * 1000).rounded() / 1000 }
}

// Elementary functions without Foundation.
#if canImport(Glibc)
import Glibc
@inline(__always) private func _log(_ x: Double) -> Double { Glibc.log(x) }
@inline(__always) private func _cos(_ x: Double) -> Double { Glibc.cos(x) }
@inline(__always) private func _pow(_ x: Double, _ y: Double) -> Double { Glibc.pow(x, y) }
#elseif canImport(Darwin)
import Darwin
@inline(__always) private func _log(_ x: Double) -> Double { Darwin.log(x) }
@inline(__always) private func _cos(_ x: Double) -> Double { Darwin.cos(x) }
@inline(__always) private func _pow(_ x: Double, _ y: Double) -> Double { Darwin.pow(x, y) }
#endif
