import Foundation
import ParleyCall
import ParleyCodecs
import ParleyJitter
import ParleyMedia
import ParleySimulation

private let netsimHelp = """
Usage:
  parley netsim --trace TRACE.csv --report PACKETS.csv [--json] [--speech FILE.wav]
  parley netsim --generate SCENARIO --seed N --seconds S --out TRACE.csv

Replay: plays the trace through the real adaptive jitter buffer and Opus decoder. Each trace
row is one 20 ms Opus packet of speech (SampleMedia/speech/speech-48k.wav unless --speech;
a 16 kHz file is decoded at 16 kHz), RTP timestamp = send_ms at 48 kHz. Playout runs on a
10 ms clock starting at the first arrival. Writes PACKETS.csv with header
`seq,outcome,playout_ms`, one row per trace row, outcome one of played, late, lost,
duplicate, discarded; playout_ms (receiver clock, as arrival_ms) only for played rows.
--json prints the summary statistics (W3C webrtc-stats names) on standard output.

Generate: writes a trace from the seeded network simulator (same seed, same trace).
Trace CSV: header `seq,send_ms,arrival_ms`, rows in send order, seq a 16-bit RTP sequence
number (may wrap), send_ms the media time, arrival_ms empty for a lost packet.

Scenarios: gaussian, pareto, spikes, wifi, each optionally followed by variants
  -loss           Gilbert-Elliott burst loss (about 4 %, bursts of ~3)
  -drift+500ppm, -drift-500ppm, -drift+2.5pct, -drift-2.5pct   receiver clock drift
  -reorder        3 % of packets held back by 1-10 packet times
  -dup            2 % of packets duplicated
  e.g. wifi-loss-reorder. --seconds 1...86400, --seed 0...2^63.

Exit status: 0 success, 1 unreadable or malformed input, 2 usage error.
"""

/// `parley netsim`: replay or generate network traces through the jitter buffer.
let netsimCommand = Command(
    name: "netsim",
    summary: "Replay or generate network traces through the jitter buffer",
    help: netsimHelp,
    run: { args in
        do {
            let a = try ArgumentScanner(args, valued: ["trace", "report", "speech", "generate", "seed", "seconds", "out"],
                                        flagNames: ["json"])
            guard a.positionals.isEmpty else { throw ArgumentScanner.UsageError(description: "unexpected argument '\(a.positionals[0])'") }
            if let scenario = a.value("generate") {
                guard a.value("trace") == nil, a.value("report") == nil else {
                    throw ArgumentScanner.UsageError(description: "--generate does not take --trace/--report")
                }
                return try netsimGenerate(a, scenario: scenario)
            }
            guard let trace = a.value("trace"), let report = a.value("report") else {
                throw ArgumentScanner.UsageError(description: "need --trace and --report (or --generate)")
            }
            return runReportingErrors("netsim") {
                try netsimReplay(trace: trace, report: report, json: a.flag("json"), speech: a.value("speech"))
                return ExitStatus.success
            }
        } catch {
            printError("parley netsim: \(error)\n\n" + netsimHelp)
            return ExitStatus.usage
        }
    }
)

private func netsimGenerate(_ a: ArgumentScanner, scenario name: String) throws(ArgumentScanner.UsageError) -> Int32 {
    guard let scenario = NetworkScenario.named(name) else {
        throw ArgumentScanner.UsageError(description: "unknown scenario '\(name)'")
    }
    guard let out = a.value("out") else { throw ArgumentScanner.UsageError(description: "--generate needs --out") }
    guard let seedText = a.value("seed"), let seed = UInt64(seedText), seed <= UInt64(Int64.max) else {
        throw ArgumentScanner.UsageError(description: "--seed must be an integer 0...\(Int64.max)")
    }
    let seconds = try a.double("seconds", default: .nan, in: 0.02...86_400)
    guard !seconds.isNaN else { throw ArgumentScanner.UsageError(description: "--generate needs --seconds") }
    let rows = NetworkSimulator.generate(scenario, seed: seed, seconds: seconds)
    do {
        try Data(TraceFile.format(rows).utf8).write(to: URL(fileURLWithPath: out))
    } catch {
        printError("parley netsim: cannot write \(out): \(error.localizedDescription)")
        return ExitStatus.failure
    }
    return ExitStatus.success
}

private func netsimDefaultSpeech() -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SampleMedia/speech/speech-48k.wav").path
}

private func netsimReplay(trace tracePath: String, report: String, json: Bool, speech: String?) throws {
    let rows: [TraceRow]
    do {
        let data = try Data(contentsOf: URL(fileURLWithPath: tracePath))
        rows = try TraceFile.parse([UInt8](data))
    } catch let e as TraceError {
        throw CommandFailure("\(tracePath): \(e)")
    } catch {
        throw CommandFailure("cannot read \(tracePath): \(error.localizedDescription)")
    }
    let speechPath = speech ?? netsimDefaultSpeech()
    let (frames, rate) = try netsimSpeechFrames(speechPath)
    var config = JitterBufferConfiguration()
    config.clockRate = 48_000
    config.sampleRate = rate
    config.frameMs = 10
    config.packetMs = 20
    var decoder = try OpusJitterDecoder(sampleRate: rate, channels: 1)
    let result = try TraceReplay.run(rows, payloads: frames, configuration: config, decoder: &decoder)

    var csv = "seq,outcome,playout_ms\n"
    for (i, row) in rows.enumerated() {
        csv += "\(row.sequence),\(result.outcomes[i].rawValue),"
        if let p = result.playoutMs[i] { csv += TraceFile.formatMs(p) }
        csv += "\n"
    }
    do {
        try Data(csv.utf8).write(to: URL(fileURLWithPath: report))
    } catch {
        throw CommandFailure("cannot write \(report): \(error.localizedDescription)")
    }
    if json { print(netsimSummaryJSON(rows: rows, result: result, speech: speechPath)) }
}

/// The speech file's 20 ms Opus packets and its sample rate (48 or 16 kHz). A media file
/// error is thrown as it is, any other failure with the file's path.
private func netsimSpeechFrames(_ path: String) throws -> (frames: [[UInt8]], rate: Int) {
    do {
        let (samples, rate) = try netsimReadWAV(path)
        guard rate == 48_000 || rate == 16_000 else { throw CommandFailure("\(path): sample rate \(rate) Hz; use a 48 or 16 kHz file") }
        let frames = try netsimOpusFrames(samples: samples, sampleRate: rate)
        guard !frames.isEmpty else { throw CommandFailure("\(path): shorter than one 20 ms frame") }
        return (frames, rate)
    } catch let e as CommandFailure {
        throw e
    } catch let e as MediaFileError {
        throw e
    } catch {
        throw CommandFailure("\(path): \(error)")
    }
}

private func netsimSummaryJSON(rows: [TraceRow], result: ReplayResult, speech: String) -> String {
    func num(_ x: Double) -> String { x.isFinite ? String(format: "%.6g", x) : "null" }
    let s = result.statistics
    var counts: [PacketOutcome: Int] = [:]
    for o in result.outcomes { counts[o, default: 0] += 1 }
    let rate = result.lateLossRate
    let skew = FixedDelayOracle.clockSkew(rows)
    var delaySum = 0.0, played = 0
    for (i, p) in result.playoutMs.enumerated() {
        if let p, let a = rows[i].arrivalMs { delaySum += p - a; played += 1 }
    }
    let emitted = Double(max(1, s.jitterBufferEmittedCount))
    var fields: [(String, String)] = [
        ("version", "\"\(parleyVersion)\""),
        ("rows", "\(rows.count)"),
    ]
    for o in PacketOutcome.allCases { fields.append((o.rawValue, "\(counts[o, default: 0])")) }
    fields += [
        ("lateLossRate", num(rate)),
        ("meanPlayoutDelayMs", num(played > 0 ? delaySum / Double(played) : .nan)),
        ("excessDelayOverOracleMs", num(FixedDelayOracle.excessDelay(rows, playoutMs: result.playoutMs, lateRate: rate))),
        ("clockSkewPpm", num((skew - 1) * 1e6)),
        ("jitterBufferDelay", num(s.jitterBufferDelay)),
        ("jitterBufferTargetDelay", num(s.jitterBufferTargetDelay)),
        ("jitterBufferEmittedCount", "\(s.jitterBufferEmittedCount)"),
        ("meanJitterBufferDelayMs", num(1000 * s.jitterBufferDelay / emitted)),
        ("meanJitterBufferTargetDelayMs", num(1000 * s.jitterBufferTargetDelay / emitted)),
        ("concealedSamples", "\(s.concealedSamples)"),
        ("silentConcealedSamples", "\(s.silentConcealedSamples)"),
        ("concealmentEvents", "\(s.concealmentEvents)"),
        ("insertedSamplesForDeceleration", "\(s.insertedSamplesForDeceleration)"),
        ("removedSamplesForAcceleration", "\(s.removedSamplesForAcceleration)"),
        ("packetsReceived", "\(s.packetsReceived)"),
        ("packetsLost", "\(s.packetsLost)"),
        ("packetsDiscarded", "\(s.packetsDiscarded)"),
        ("packetsDuplicated", "\(s.packetsDuplicated)"),
        ("late", "\(s.late)"),
        ("fecRecovered", "\(s.fecRecovered)"),
        ("resyncs", "\(s.resyncs)"),
    ]
    return "{\n" + fields.map { "  \"\($0.0)\": \($0.1)" }.joined(separator: ",\n") + "\n}"
}
