import Testing
import ParleyJitter
import ParleySimulation

@Test func traceRoundTripsThroughCSV() throws {
    let rows = [TraceRow(sequence: 65_535, sendMs: 0, arrivalMs: 41.25),
                TraceRow(sequence: 0, sendMs: 20, arrivalMs: nil),
                TraceRow(sequence: 1, sendMs: 40, arrivalMs: 85.001)]
    let text = TraceFile.format(rows)
    #expect(text == "seq,send_ms,arrival_ms\n65535,0,41.25\n0,20,\n1,40,85.001\n")
    #expect(try TraceFile.parse(text) == rows)
    #expect(try TraceFile.parse(text.replacingOccurrences(of: "\n", with: "\r\n")) == rows)
}

@Test(arguments: [
    ("seq,send,arrival\n1,2,3\n", TraceError.badHeader(found: "seq,send,arrival")),
    ("seq,send_ms,arrival_ms\n1,2\n", TraceError.wrongFieldCount(line: 2, count: 2)),
    ("seq,send_ms,arrival_ms\n70000,2,3\n", TraceError.badSequence(line: 2, text: "70000")),
    ("seq,send_ms,arrival_ms\n-1,2,3\n", TraceError.badSequence(line: 2, text: "-1")),
    ("seq,send_ms,arrival_ms\n1,,3\n", TraceError.badTime(line: 2, field: "send_ms", text: "")),
    ("seq,send_ms,arrival_ms\n1,2,nan\n", TraceError.badTime(line: 2, field: "arrival_ms", text: "nan")),
    ("seq,send_ms,arrival_ms\n1,2,3\n1,2,x\n", TraceError.badTime(line: 3, field: "arrival_ms", text: "x")),
    ("", TraceError.badHeader(found: "")),
])
func malformedTraceGivesTypedError(_ text: String, _ expected: TraceError) {
    #expect(throws: expected) { try TraceFile.parse(text) }
}

@Test func nonUTF8TraceIsRejected() {
    #expect(throws: TraceError.notText) { try TraceFile.parse([0xff, 0xfe, 0x00]) }
}

@Test func simulatorIsDeterministicPerSeed() {
    let s = NetworkScenario.named("wifi-loss-reorder")!
    let a = NetworkSimulator.generate(s, seed: 7, seconds: 10)
    let b = NetworkSimulator.generate(s, seed: 7, seconds: 10)
    let c = NetworkSimulator.generate(s, seed: 8, seconds: 10)
    #expect(a == b)
    #expect(a != c)
    #expect(a.count == 500)
}

@Test func everyListedScenarioExistsAndUnknownOnesDoNot() {
    for name in NetworkScenario.names { #expect(NetworkScenario.named(name) != nil, "\(name)") }
    #expect(NetworkScenario.named("ethernet") == nil)
    #expect(NetworkScenario.named("gaussian-lots") == nil)
}

@Test func gilbertElliottLossComesInBursts() {
    let rows = NetworkSimulator.generate(NetworkScenario.named("gaussian-loss")!, seed: 3, seconds: 600)
    let lost = rows.filter { $0.arrivalMs == nil }.count
    var runs = 0
    for i in rows.indices where rows[i].arrivalMs == nil && (i == 0 || rows[i - 1].arrivalMs != nil) { runs += 1 }
    let rate = Double(lost) / Double(rows.count)
    #expect(rate > 0.02 && rate < 0.08, "loss rate \(rate)")
    #expect(Double(lost) / Double(runs) > 1.5, "mean burst \(Double(lost) / Double(runs))")
}

@Test func sequenceNumbersWrapInGeneratedTraces() {
    let rows = NetworkSimulator.generate(NetworkScenario.named("gaussian")!, seed: 1, seconds: 2, firstSequence: 65_530)
    #expect(rows[5].sequence == 65_535)
    #expect(rows[6].sequence == 0)
}

@Test(arguments: [25_000.0, -25_000.0, 500.0, 0.0])
func oracleFitsClockDrift(ppm: Double) {
    var s = NetworkScenario.named("gaussian")!
    s.driftPpm = ppm
    let rows = NetworkSimulator.generate(s, seed: 2, seconds: 60)
    let skew = FixedDelayOracle.clockSkew(rows)
    #expect(abs((skew - 1) * 1e6 - ppm) < 200, "fitted \((skew - 1) * 1e6) ppm")
}

@Test func oracleDelayIsTheLateRateQuantile() {
    let rows = (0..<100).map { TraceRow(sequence: UInt16($0), sendMs: Double($0) * 20, arrivalMs: Double($0) * 20 + Double($0 % 10)) }
    let d = FixedDelayOracle.delays(rows, skew: 1)
    #expect(FixedDelayOracle.fixedDelay(sortedDelays: d, lateRate: 0) == 9)
    #expect(FixedDelayOracle.fixedDelay(sortedDelays: d, lateRate: 0.1) == 8)
    // Playing everything at send + 9 ms is exactly the oracle at zero late loss.
    let playout: [Double?] = rows.map { $0.sendMs + 9 }
    #expect(abs(FixedDelayOracle.excessDelay(rows, playoutMs: playout, lateRate: 0)) < 1e-9)
}

@Test func replayAccountsForEveryRow() throws {
    let rows = NetworkSimulator.generate(NetworkScenario.named("pareto-loss-dup")!, seed: 4, seconds: 20)
    var c = JitterBufferConfiguration()
    c.sampleRate = 16_000
    var decoder = try LinearPCMDecoder(sampleRate: 16_000)
    let payload = [UInt8](repeating: 1, count: 640)
    let r = try TraceReplay.run(rows, payloads: [payload], configuration: c, decoder: &decoder)
    #expect(r.outcomes.count == rows.count)
    for (i, o) in r.outcomes.enumerated() {
        #expect((o == .lost) == (rows[i].arrivalMs == nil))
        #expect((o == .played) == (r.playoutMs[i] != nil))
        if let p = r.playoutMs[i], let a = rows[i].arrivalMs { #expect(p >= a - 10) }
    }
    #expect(r.outcomes.contains(.duplicate))
    #expect(r.lateLossRate < 0.02)
}

import Foundation

@Test func replayWithoutPayloadsIsAnError() throws {
    let rows = NetworkSimulator.generate(NetworkScenario.named("pareto-loss-dup")!, seed: 4, seconds: 1)
    var c = JitterBufferConfiguration()
    c.sampleRate = 16_000
    var decoder = try LinearPCMDecoder(sampleRate: 16_000)
    #expect(throws: JitterConfigurationError.outOfRange(parameter: "payloads", value: "[]", allowed: "at least one payload")) {
        try TraceReplay.run(rows, payloads: [], configuration: c, decoder: &decoder)
    }
    c.frameMs = 30
    #expect(throws: JitterConfigurationError.self) {
        try TraceReplay.run(rows, payloads: [[UInt8](repeating: 0, count: 640)], configuration: c, decoder: &decoder)
    }
}
