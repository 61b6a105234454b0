// Replaying a network trace through the jitter buffer, and the fixed-delay oracle it is
// measured against.

import ParleyCore
import ParleyJitter

/// What happened to one trace row in a replay.
public enum PacketOutcome: String, Sendable, Hashable, CaseIterable {
    /// Decoded and emitted.
    case played
    /// Arrived after its playout time had passed.
    case late
    /// Never arrived (empty `arrival_ms`).
    case lost
    /// A copy of a packet already received.
    case duplicate
    /// Arrived but was dropped without playing (overflow, restart probation, bad size).
    case discarded
}

/// The result of replaying a trace through an `AudioJitterBuffer`.
public struct ReplayResult: Sendable {
    /// One outcome per trace row, in trace order.
    public var outcomes: [PacketOutcome]
    /// When each played row's first sample was emitted, receiver ms; `nil` unless played.
    public var playoutMs: [Double?]
    /// The buffer's counters at the end.
    public var statistics: JitterBufferStatistics
    /// Frames pulled.
    public var frames: Int

    /// Rows that arrived (first copies) but were not played: late or discarded, over the
    /// rows that arrived (first copies). The late-loss rate of the buffer.
    public var lateLossRate: Double {
        var arrived = 0, missed = 0
        for o in outcomes {
            switch o {
            case .played: arrived += 1
            case .late, .discarded: arrived += 1; missed += 1
            case .lost, .duplicate: break
            }
        }
        return arrived == 0 ? 0 : Double(missed) / Double(arrived)
    }
}

/// Replays a trace through a real jitter buffer and decoder, as `parley netsim` does.
public enum TraceReplay {
    /// Plays `trace` on a `configuration.frameMs` clock that starts at the first arrival:
    /// before each `get` at time T, every packet that arrived by T is `put` (with its exact
    /// arrival time). A row's payload is `payloads[k % payloads.count]`, k being its media index
    /// (`(send_ms - first send_ms) / packetMs`); its RTP timestamp is `send_ms` at the clock rate.
    /// Runs until every packet was put and the buffer has drained.
    ///
    /// - Throws: `JitterConfigurationError` when `payloads` is empty or `configuration` is
    ///   out of range (see `JitterBufferConfiguration/validate()`).
    public static func run<D: JitterBufferDecoder & ~Copyable>(
        _ trace: [TraceRow], payloads: [[UInt8]], configuration: JitterBufferConfiguration, decoder: inout D
    ) throws(JitterConfigurationError) -> ReplayResult {
        guard !payloads.isEmpty else {
            throw .outOfRange(parameter: "payloads", value: "[]", allowed: "at least one payload")
        }
        var buffer = try AudioJitterBuffer(configuration: configuration)
        var outcomes = [PacketOutcome](repeating: .lost, count: trace.count)
        var playout = [Double?](repeating: nil, count: trace.count)
        let order = trace.indices.filter { trace[$0].arrivalMs != nil }
            .sorted { (trace[$0].arrivalMs!, $0) < (trace[$1].arrivalMs!, $1) }
        guard let firstIndex = order.first else {
            return ReplayResult(outcomes: outcomes, playoutMs: playout, statistics: buffer.statistics, frames: 0)
        }
        let startMs = trace[firstIndex].arrivalMs!
        let firstSend = trace.first!.sendMs
        let clock = Double(configuration.clockRate)
        let frameMs = Double(configuration.frameMs)
        let lastArrival = trace[order.last!].arrivalMs!
        let endLimit = lastArrival + configuration.maximumDelayMs + 2 * Double(configuration.maximumPacketMs) + 1000
        var pending = Set<Int>()
        var output = [Int16](repeating: 0, count: configuration.frameSamples * configuration.channels)
        var next = 0
        var frames = 0
        var t = startMs
        while t <= endLimit {
            while next < order.count, trace[order[next]].arrivalMs! <= t {
                let i = order[next]
                let row = trace[i]
                let k = Int(((row.sendMs - firstSend) / Double(configuration.packetMs)).rounded())
                let payload = payloads[((k % payloads.count) + payloads.count) % payloads.count]
                let ts = UInt32(truncatingIfNeeded: Int64((row.sendMs * clock / 1000).rounded()))
                let result = buffer.put(sequence: row.sequence, timestamp: ts,
                                        arrival: MonotonicTime(nanoseconds: Int64((row.arrivalMs! * 1e6).rounded())),
                                        payload: payload, tag: i)
                switch result {
                case .accepted: pending.insert(i)
                case .duplicate: outcomes[i] = .duplicate
                case .late: outcomes[i] = .late
                case .discarded: outcomes[i] = .discarded
                }
                next += 1
            }
            let now = MonotonicTime(nanoseconds: Int64((t * 1e6).rounded()))
            _ = output.withUnsafeMutableBufferPointer { buffer.getFrame(at: now, into: $0, decoder: &decoder) }
            frames += 1
            for p in buffer.lastPlayedPackets where pending.remove(p.tag) != nil {
                outcomes[p.tag] = .played
                playout[p.tag] = t + Double(p.offsetInFrame) * 1000 / Double(configuration.sampleRate)
            }
            if next == order.count && buffer.bufferedPackets == 0 && pending.isEmpty { break }
            t = startMs + Double(frames) * frameMs
        }
        for i in pending { outcomes[i] = .discarded }
        return ReplayResult(outcomes: outcomes, playoutMs: playout, statistics: buffer.statistics, frames: frames)
    }
}

/// The offline fixed-delay oracle: from a trace alone, the smallest fixed playout delay that
/// keeps late loss at or below a given rate, and how much more delay a buffer used.
///
/// Delays are measured against the sender's media clock mapped onto the receiver's:
/// `arrival - skew * send`, where `skew` (receiver ms per sender ms) is fitted from the trace
/// (Theil-Sen slope through per-second minimum delays), so a drifting clock does not count as
/// delay; with no drift `skew` is 1 within a few ppm. The unknown clock offset cancels in the
/// excess.
public enum FixedDelayOracle {
    /// Receiver ms per sender ms, fitted from the first arrival of each row.
    public static func clockSkew(_ trace: [TraceRow]) -> Double {
        var minima: [(Double, Double)] = []
        var windowStart = Double.nan
        var lo = Double.infinity
        for r in trace {
            guard let a = r.arrivalMs else { continue }
            if windowStart.isNaN { windowStart = r.sendMs }
            if r.sendMs >= windowStart + 1000 {
                if lo.isFinite { minima.append((windowStart + 500, lo)) }
                windowStart += ((r.sendMs - windowStart) / 1000).rounded(.down) * 1000
                lo = .infinity
            }
            lo = min(lo, a - r.sendMs)
        }
        if lo.isFinite { minima.append((windowStart + 500, lo)) }
        guard minima.count >= 3 else { return 1 }
        var slopes: [Double] = []
        for i in 0..<minima.count {
            for j in (i + 1)..<minima.count where minima[j].0 != minima[i].0 {
                slopes.append((minima[j].1 - minima[i].1) / (minima[j].0 - minima[i].0))
            }
        }
        slopes.sort()
        return slopes.isEmpty ? 1 : 1 + slopes[slopes.count / 2]
    }

    /// The sorted delays `arrival - skew * send` of first arrivals.
    public static func delays(_ trace: [TraceRow], skew: Double) -> [Double] {
        var seen = Set<Int>()
        var d: [Double] = []
        for (i, r) in trace.enumerated() {
            guard let a = r.arrivalMs else { continue }
            let key = Int((r.sendMs * 1000).rounded()) &* 65_537 &+ Int(r.sequence)
            if !seen.insert(key).inserted { continue }
            _ = i
            d.append(a - skew * r.sendMs)
        }
        d.sort()
        return d
    }

    /// The smallest fixed delay (same scale as `delays`) with at most `lateRate` of packets late.
    public static func fixedDelay(sortedDelays d: [Double], lateRate: Double) -> Double {
        guard !d.isEmpty else { return 0 }
        let allowed = Int((max(0, lateRate) * Double(d.count) + 1e-9).rounded(.down))
        return d[max(0, d.count - 1 - allowed)]
    }

    /// Mean of `playout - skew * send` over played rows minus the oracle's fixed delay at
    /// `lateRate`: how much longer than necessary the buffer held packets, ms.
    public static func excessDelay(_ trace: [TraceRow], playoutMs: [Double?], lateRate: Double) -> Double {
        let skew = clockSkew(trace)
        let oracle = fixedDelay(sortedDelays: delays(trace, skew: skew), lateRate: lateRate)
        var sum = 0.0, n = 0
        for (i, p) in playoutMs.enumerated() {
            guard let p else { continue }
            sum += p - skew * trace[i].sendMs
            n += 1
        }
        return n == 0 ? 0 : sum / Double(n) - oracle
    }
}
