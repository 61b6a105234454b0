import CSpeexDSP
import Foundation
import ParleyJitter
import ParleySimulation

// The jitter suite: Parley's AudioJitterBuffer against speexdsp's jitter buffer on the same
// simulated traces (5 seeds per scenario), scored against the offline fixed-delay oracle.
//
// Both buffers are driven the same way: a 10 ms playout clock starting at the first arrival;
// before each tick every packet that arrived by then is put. Parley decodes L16 payloads
// (a synthetic voiced signal with pauses, so time-stretching has real work to do); speexdsp
// is used as its API intends (timestamps in ms, 20 ms spans, step 10 ms, the application
// keeping the remainder of a 20 ms packet and telling the buffer with remaining_span).
// Late loss = packets that arrived but were not played, over packets that arrived.
// Excess delay = mean(playout - skew * send) - the oracle's fixed delay at that buffer's
// own late-loss rate (see FixedDelayOracle).

/// Scenarios of the comparison: each base with loss, four drifts and reordering.
let jitterBenchScenarios: [String] = NetworkScenario.baseNames.flatMap { base in
    ["", "-loss", "-drift+500ppm", "-drift-500ppm", "-drift+2.5pct", "-drift-2.5pct", "-reorder"].map { base + $0 }
}
let jitterBenchSeeds: [UInt64] = [1, 2, 3, 4, 5]
let jitterBenchSeconds = 60.0

/// 20 ms L16 frames at 16 kHz: a voiced signal (harmonics of a gliding pitch) in 1.2 s
/// talk spurts separated by 0.4 s pauses.
func jitterBenchPayloads() -> [[UInt8]] {
    let rate = 16_000.0
    var phase = 0.0
    var frames: [[UInt8]] = []
    for f in 0..<80 {
        var bytes = [UInt8](repeating: 0, count: 640)
        for i in 0..<320 {
            let t = Double(f * 320 + i) / rate
            let inSpurt = t.truncatingRemainder(dividingBy: 1.6) < 1.2
            let f0 = 120 + 40 * sin(2 * Double.pi * 0.7 * t)
            phase += 2 * Double.pi * f0 / rate
            var v = 0.0
            for h in 1...6 { v += sin(Double(h) * phase) / Double(h) }
            let s = Int16(clamping: Int((inSpurt ? 6000 * v : 30 * v).rounded()))
            bytes[2 * i] = UInt8(truncatingIfNeeded: s)
            bytes[2 * i + 1] = UInt8(truncatingIfNeeded: s >> 8)
        }
        frames.append(bytes)
    }
    return frames
}

/// Parley's buffer configured for the bench traces: L16 at 16 kHz, RTP clock 48 kHz as Opus.
func jitterBenchConfiguration() -> JitterBufferConfiguration {
    var c = JitterBufferConfiguration()
    c.clockRate = 48_000
    c.sampleRate = 16_000
    c.frameMs = 10
    c.packetMs = 20
    // Tuning hooks (not used by CI): PARLEY_JB_QUANTILE, PARLEY_JB_WAIT_QUANTILE, PARLEY_JB_FORGET.
    let env = ProcessInfo.processInfo.environment
    if let q = env["PARLEY_JB_QUANTILE"].flatMap(Double.init) { c.quantile = q }
    if let q = env["PARLEY_JB_WAIT_QUANTILE"].flatMap(Double.init) { c.waitQuantile = q }
    if let f = env["PARLEY_JB_FORGET"].flatMap(Double.init) { c.forgetFactor = f }
    if let f = env["PARLEY_JB_STRETCH"].flatMap(Double.init) { c.stretchThresholdMs = f }
    if let f = env["PARLEY_JB_LOSS_ODDS"].flatMap(Double.init) { c.lossWaitOdds = f }
    if let f = env["PARLEY_JB_STARTUP_WAIT"].flatMap(Double.init) { c.startupWaitMs = f }
    if let f = env["PARLEY_JB_WAIT_MARGIN"].flatMap(Double.init) { c.waitMarginFactor = f }
    if let w = env["PARLEY_JB_WAIT_REORDERED"] { c.waitForReordered = w == "1" }
    return c
}

struct JitterScore {
    var lateLossPercent: Double
    var excessDelayMs: Double
    /// Mean of (playout - skew * send) above the fastest packet's (arrival - skew * send), ms.
    var meanDelayMs: Double
}

/// Mean playout delay above the fastest packet of the trace (clock skew removed), ms.
func meanDelayAboveFastest(_ trace: [TraceRow], playout: [Double?]) -> Double {
    let skew = FixedDelayOracle.clockSkew(trace)
    let fastest = FixedDelayOracle.delays(trace, skew: skew).first ?? 0
    var sum = 0.0, n = 0
    for (i, p) in playout.enumerated() {
        guard let p else { continue }
        sum += p - skew * trace[i].sendMs - fastest
        n += 1
    }
    return n == 0 ? .nan : sum / Double(n)
}

/// Replays `trace` through speexdsp's jitter buffer; returns each row's playout time.
func speexReplay(_ trace: [TraceRow], payload: [UInt8]) -> [Double?] {
    var playout = [Double?](repeating: nil, count: trace.count)
    let order = trace.indices.filter { trace[$0].arrivalMs != nil }
        .sorted { (trace[$0].arrivalMs!, $0) < (trace[$1].arrivalMs!, $1) }
    guard let first = order.first, let jb = jitter_buffer_init(10) else { return playout }
    defer { jitter_buffer_destroy(jb) }
    var concealment: Int32 = 10
    jitter_buffer_ctl(jb, JITTER_BUFFER_SET_CONCEALMENT_SIZE, &concealment)
    let firstSend = trace[0].sendMs
    var data = payload.map { CChar(bitPattern: $0) }
    var out = [CChar](repeating: 0, count: 2048)
    let start = trace[first].arrivalMs!
    let end = trace[order.last!].arrivalMs! + 3000
    var next = 0
    var appRemaining: Int32 = 0
    var t = start
    var tick = 0
    while t <= end {
        while next < order.count, trace[order[next]].arrivalMs! <= t {
            let i = order[next]
            data.withUnsafeMutableBufferPointer { d in
                var p = JitterBufferPacket()
                p.data = d.baseAddress
                p.len = spx_uint32_t(d.count)
                p.timestamp = spx_uint32_t(truncatingIfNeeded: Int64((trace[i].sendMs - firstSend).rounded()))
                p.span = 20
                p.sequence = trace[i].sequence
                p.user_data = spx_uint32_t(i)
                jitter_buffer_put(jb, &p)
            }
            next += 1
        }
        if appRemaining <= 0 {
            var offset: spx_int32_t = 0
            let (ret, span, user): (Int32, Int32, Int) = out.withUnsafeMutableBufferPointer { o in
                var p = JitterBufferPacket()
                p.data = o.baseAddress
                p.len = spx_uint32_t(o.count)
                let r = jitter_buffer_get(jb, &p, 10, &offset)
                return (r, Int32(bitPattern: p.span), Int(p.user_data))
            }
            if ret == JITTER_BUFFER_OK {
                playout[user] = t + Double(max(0, offset))
                appRemaining += max(span, 10)
            } else {
                appRemaining += max(span, 10)
            }
        }
        appRemaining -= 10
        if appRemaining > 0 {
            jitter_buffer_remaining_span(jb, spx_uint32_t(appRemaining))
        } else {
            jitter_buffer_tick(jb)
        }
        tick += 1
        t = start + Double(tick) * 10
    }
    return playout
}

func lateLossRate(_ trace: [TraceRow], playout: [Double?]) -> Double {
    var seen = Set<Int>()
    var arrived = 0, played = 0
    for (i, r) in trace.enumerated() where r.arrivalMs != nil {
        let key = Int((r.sendMs * 1000).rounded())
        if !seen.insert(key).inserted { continue }
        arrived += 1
        if playout[i] != nil { played += 1 }
    }
    return arrived == 0 ? 0 : Double(arrived - played) / Double(arrived)
}

/// Runs every scenario and seed once for both buffers; the metric rows read from here.
final class JitterComparison {
    private(set) var parley: [String: [JitterScore]] = [:]
    private(set) var speex: [String: [JitterScore]] = [:]
    private var done = false

    func compute() {
        guard !done else { return }
        done = true
        let payloads = jitterBenchPayloads()
        let config = jitterBenchConfiguration()
        for name in jitterBenchScenarios {
            guard let scenario = NetworkScenario.named(name) else { continue }
            for seed in jitterBenchSeeds {
                let trace = NetworkSimulator.generate(scenario, seed: seed, seconds: jitterBenchSeconds,
                                                      firstSequence: UInt16(truncatingIfNeeded: seed &* 7919))
                // A fixed, valid configuration (jitterBenchConfiguration()).
                var decoder = try! LinearPCMDecoder(sampleRate: config.sampleRate)
                let result = try! TraceReplay.run(trace, payloads: payloads, configuration: config, decoder: &decoder)
                let pRate = result.lateLossRate
                parley[name, default: []].append(JitterScore(
                    lateLossPercent: 100 * pRate,
                    excessDelayMs: FixedDelayOracle.excessDelay(trace, playoutMs: result.playoutMs, lateRate: pRate),
                    meanDelayMs: meanDelayAboveFastest(trace, playout: result.playoutMs)))
                let sPlayout = speexReplay(trace, payload: payloads[0])
                let sRate = lateLossRate(trace, playout: sPlayout)
                speex[name, default: []].append(JitterScore(
                    lateLossPercent: 100 * sRate,
                    excessDelayMs: FixedDelayOracle.excessDelay(trace, playoutMs: sPlayout, lateRate: sRate),
                    meanDelayMs: meanDelayAboveFastest(trace, playout: sPlayout)))
            }
        }
        FileHandle.standardError.write(Data(summaryTable().utf8))
    }

    func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        guard !s.isEmpty else { return .nan }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    func summaryTable() -> String {
        var out = "\njitter comparison (median over \(jitterBenchSeeds.count) seeds, \(Int(jitterBenchSeconds)) s traces)\n"
        out += "scenario                     parley-late%  speex-late%  parley-excess-ms  speex-excess-ms  parley-mean-ms  speex-mean-ms  pass  seeds-passing\n"
        var passes = 0
        for name in jitterBenchScenarios {
            let pl = median(parley[name, default: []].map(\.lateLossPercent))
            let sl = median(speex[name, default: []].map(\.lateLossPercent))
            let pe = median(parley[name, default: []].map(\.excessDelayMs))
            let se = median(speex[name, default: []].map(\.excessDelayMs))
            let pm = median(parley[name, default: []].map(\.meanDelayMs))
            let sm = median(speex[name, default: []].map(\.meanDelayMs))
            let ok = pl <= sl + 1e-9 && pe <= se / 2
            if ok { passes += 1 }
            var seedPasses = 0
            for (p, q) in zip(parley[name, default: []], speex[name, default: []])
            where p.lateLossPercent <= q.lateLossPercent + 1e-9 && p.excessDelayMs <= q.excessDelayMs / 2 { seedPasses += 1 }
            out += name.padding(toLength: 28, withPad: " ", startingAt: 0)
                + String(format: " %11.2f  %11.2f  %16.1f  %15.1f  %14.1f  %13.1f  %@   %d/%d\n", pl, sl, pe, se, pm, sm,
                         ok ? "yes" : "NO ", seedPasses, jitterBenchSeeds.count)
        }
        out += "passing scenarios: \(passes)/\(jitterBenchScenarios.count)\n\n"
        return out
    }
}

/// Benchmarks for the jitter suite.
func jitterBenchmarks() -> [Benchmark] {
    let comparison = JitterComparison()
    var rows: [Benchmark] = []
    for name in jitterBenchScenarios {
        let short = name
        func metric(_ who: String, _ what: String, unit: Benchmark.Unit, baseline: String?,
                    _ pick: @escaping (JitterComparison) -> [String: [JitterScore]], _ value: @escaping (JitterScore) -> Double) -> Benchmark {
            Benchmark(name: "jitter/\(short)/\(who)-\(what)", unit: unit, baseline: baseline) {
                comparison.compute()
                return comparison.median(pick(comparison)[name, default: []].map(value))
            }
        }
        rows.append(metric("speex", "late-loss-pct", unit: .percent, baseline: nil, { $0.speex }, \.lateLossPercent))
        rows.append(metric("parley", "late-loss-pct", unit: .percent, baseline: "jitter/\(short)/speex-late-loss-pct",
                           { $0.parley }, \.lateLossPercent))
        rows.append(metric("speex", "excess-delay-ms", unit: .ms, baseline: nil, { $0.speex }, \.excessDelayMs))
        rows.append(metric("parley", "excess-delay-ms", unit: .ms, baseline: "jitter/\(short)/speex-excess-delay-ms",
                           { $0.parley }, \.excessDelayMs))
        rows.append(metric("speex", "mean-delay-ms", unit: .ms, baseline: nil, { $0.speex }, \.meanDelayMs))
        rows.append(metric("parley", "mean-delay-ms", unit: .ms, baseline: "jitter/\(short)/speex-mean-delay-ms",
                           { $0.parley }, \.meanDelayMs))
    }
    rows.append(contentsOf: jitterTimingBenchmarks())
    return rows
}

/// put + get cost per packet on an in-order 20 ms stream (two 10 ms gets per packet, the
/// first right after the packet arrives: after the 40 ms start-up the buffer settles),
/// Parley (L16 decode included) against speexdsp (its put copies with malloc; no decode).
func jitterTimingBenchmarks() -> [Benchmark] {
    let packets = 20_000
    let payload = jitterBenchPayloads()[0]
    let config = jitterBenchConfiguration()
    let speexRow = Benchmark(name: "jitter/speex-put-get", unit: .nsPerPacket, iterations: packets) {
        guard let jb = jitter_buffer_init(10) else { return 0 }
        defer { jitter_buffer_destroy(jb) }
        var data = payload.map { CChar(bitPattern: $0) }
        var out = [CChar](repeating: 0, count: 2048)
        var sum: UInt64 = 0
        for i in 0..<packets {
            data.withUnsafeMutableBufferPointer { d in
                var p = JitterBufferPacket()
                p.data = d.baseAddress; p.len = spx_uint32_t(d.count)
                p.timestamp = spx_uint32_t(i * 20); p.span = 20
                p.sequence = UInt16(truncatingIfNeeded: i); p.user_data = spx_uint32_t(i)
                jitter_buffer_put(jb, &p)
            }
            out.withUnsafeMutableBufferPointer { o in
                var p = JitterBufferPacket()
                p.data = o.baseAddress; p.len = spx_uint32_t(o.count)
                var off: spx_int32_t = 0
                sum &+= UInt64(bitPattern: Int64(jitter_buffer_get(jb, &p, 20, &off)))
            }
            jitter_buffer_tick(jb)
        }
        return sum
    }
    let parleyRow = Benchmark(name: "jitter/parley-put-get", unit: .nsPerPacket, baseline: "jitter/speex-put-get",
                              iterations: packets) {
        var jb = try! AudioJitterBuffer(configuration: config)  // a fixed, valid configuration
        var decoder = try! LinearPCMDecoder(sampleRate: config.sampleRate)
        var out = [Int16](repeating: 0, count: config.frameSamples)
        var sum: UInt64 = 0
        payload.withUnsafeBytes { bytes in
            out.withUnsafeMutableBufferPointer { o in
                for i in 0..<packets {
                    jb.put(sequence: UInt16(truncatingIfNeeded: i), timestamp: UInt32(truncatingIfNeeded: i * 960),
                           arrival: MonotonicTime(nanoseconds: Int64(i) * 20_000_000), payload: bytes)
                    for k in 0..<2 {
                        _ = try? jb.get(at: MonotonicTime(nanoseconds: Int64(i) * 20_000_000 + Int64(k) * 10_000_000),
                                        into: o, decoder: &decoder)
                        sum &+= UInt64(bitPattern: Int64(o[0]))
                    }
                }
            }
        }
        return sum
    }
    return [speexRow, parleyRow]
}
