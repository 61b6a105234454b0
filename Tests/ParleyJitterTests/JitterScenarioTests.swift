import Testing
import ParleyJitter

/// One row of the scenario table: a script and the counters it must produce.
struct JitterScenario: CustomTestStringConvertible, Sendable {
    let name: String
    let script: String
    var firstSequence: UInt16 = 1000
    var firstTimestamp: UInt32 = 123_456
    var capacity = 256
    var frameMs = 10
    /// Expected counters; `nil` means not checked.
    var played: Int?
    var late: Int? = 0
    var lost: Int? = 0
    var duplicated: Int? = 0
    var discarded: Int? = 0
    var resyncs: Int? = 0
    /// Upper bound on the mean playout delay (arrival to first sample), ms.
    var maxMeanDelayMs: Double?
    var testDescription: String { name }
}

let jitterScenarios: [JitterScenario] = [
    JitterScenario(name: "in-order", script: "(PGG)*100", played: 100, maxMeanDelayMs: 60),
    JitterScenario(name: "single loss", script: "(PGG)*50 LGG (PGG)*50", played: 100, lost: 1),
    JitterScenario(name: "burst loss of 5", script: "(PGG)*50 (LGG)*5 (PGG)*50", played: 100, lost: 5),
    JitterScenario(name: "reorder by 1", script: "(PGG)*50 HGG PF GG (PGG)*50", played: 102),
    JitterScenario(name: "reorder by 3", script: "(PGG)*50 HGG (PGG)*2 PF GG (PGG)*50", played: 104),
    // On a path with no jitter at all, a packet 200 ms behind its successors is given up.
    JitterScenario(name: "reorder by 10", script: "(PGG)*200 HGG (PGG)*9 PF GG (PGG)*50", played: 260, late: 1, discarded: 1),
    // With jitter measured first (reorder by up to 6), a reorder by 10 is waited for.
    JitterScenario(name: "reorder by 10 after jitter", script: "(PGG)*50 ((HGG)*6 (PGG)*6 F)*20 HGG (PGG)*9 PF GG (PGG)*50",
                   played: 351),
    JitterScenario(name: "duplicates", script: "(PGG)*20 D (PGG)*10 DD (PGG)*10", played: 40, duplicated: 3),
    JitterScenario(name: "late packet", script: "(PGG)*200 HGG (PGG)*40 F (PGG)*50", played: 290, late: 1, discarded: 1),
    JitterScenario(name: "16-bit sequence wrap", script: "(PGG)*100", firstSequence: 65_500, played: 100),
    JitterScenario(name: "32-bit timestamp wrap", script: "(PGG)*100", firstTimestamp: UInt32.max - 20 * 960, played: 100),
    JitterScenario(name: "timestamp jump", script: "(PGG)*50 J100000 (PGG)*50", played: 100, resyncs: 1, maxMeanDelayMs: 80),
    JitterScenario(name: "timestamp jump backwards", script: "(PGG)*50 J-50000 (PGG)*50", played: 100, resyncs: 1, maxMeanDelayMs: 80),
    JitterScenario(name: "sender restart", script: "(PGG)*50 S (PGG)*50", played: 99, discarded: 1, resyncs: 1),
    JitterScenario(name: "10 s DTX then speech", script: "(PGG)*50 X10000 (GG)*500 (PGG)*50", played: 100, maxMeanDelayMs: 60),
    JitterScenario(name: "60 s DTX then speech", script: "(PGG)*50 X60000 (GG)*3000 (PGG)*50", played: 100, maxMeanDelayMs: 60),
    // A jitter-free path: a 400 ms outage loses the 20 packets sent during it, later ones play.
    JitterScenario(name: "400 ms spike", script: "(PGG)*300 (HGG)*20 F (PGG)*100", played: 400, late: 20, discarded: 20),
    JitterScenario(name: "+150 ms step", script: "(PGG)*300 (HGG)*7 HG GF (PGG)*300", played: 600, late: 8, discarded: 8),
    JitterScenario(name: "20 ms playout frames", script: "(PG)*100", frameMs: 20, played: 100, maxMeanDelayMs: 60),
    JitterScenario(name: "20 ms frames with loss and reorder", script: "(PG)*50 LG HG PF G (PG)*50", frameMs: 20,
                   played: 102, lost: 1),
    JitterScenario(name: "overflow", script: "P*40 GG (PGG)*10", capacity: 16, played: 26, discarded: 24),
]

@Test(arguments: jitterScenarios)
func scenarioProducesExpectedCounters(_ scenario: JitterScenario) throws {
    var c = JitterBufferConfiguration()
    c.capacity = scenario.capacity
    c.frameMs = scenario.frameMs
    var s = try ScenarioScript(firstSequence: scenario.firstSequence, firstTimestamp: scenario.firstTimestamp, configuration: c)
    s.run(scenario.script)
    s.drain()
    let st = s.buffer.statistics
    if let v = scenario.played { #expect(s.played.count == v, "played") }
    if let v = scenario.late { #expect(st.late == v, "late") }
    if let v = scenario.lost { #expect(st.packetsLost == v, "packetsLost") }
    if let v = scenario.duplicated { #expect(st.packetsDuplicated == v, "duplicated") }
    if let v = scenario.discarded { #expect(st.packetsDiscarded == v, "discarded") }
    if let v = scenario.resyncs { #expect(st.resyncs == v, "resyncs") }
    // Conservation: every packet put is played, late, duplicate or discarded; none twice.
    #expect(Set(s.played).count == s.played.count, "a packet played twice")
    #expect(s.played.count + st.packetsDiscarded + st.packetsDuplicated == st.packetsReceived)
    #expect(s.buffer.bufferedPackets == 0)
    if let m = scenario.maxMeanDelayMs {
        let mean = s.playoutDelaysMs.reduce(0, +) / Double(max(1, s.playoutDelaysMs.count))
        #expect(mean <= m, "mean playout delay \(mean) ms")
    }
}

@Test func spikeOf400msStretchesInsteadOfLosingMost() throws {
    var s = try ScenarioScript()
    // Jittery path (reordering up to 6 packets), then a 400 ms outage, then 20 s in order.
    s.run("(PGG)*50 ((HGG)*6 (PGG)*6 F)*20 (HGG)*20 F (PGG)*1000")
    s.drain()
    let st = s.buffer.statistics
    #expect(st.late <= 10, "most packets of the spike should be waited for")
    #expect(s.played.count + st.late == 1310)
    #expect(st.removedSamplesForAcceleration > 0, "no acceleration after the spike")
    // Back to (at most) the delay the reordering before the spike needed.
    let before = s.playoutDelaysMs[200..<290].reduce(0, +) / 90
    let tail = s.playoutDelaysMs.suffix(50).reduce(0, +) / 50
    #expect(tail <= before + 10, "delay did not recover after the spike: \(tail) ms vs \(before) ms before")
}

@Test func stepOf150msIsFollowedWithoutFurtherLoss() throws {
    var s = try ScenarioScript()
    s.run("(PGG)*300 (HGG)*7 HG GF (PGG)*300")
    s.drain()
    // Only packets caught in the step itself may be late; everything after it plays.
    #expect(s.buffer.statistics.late <= 8)
    #expect(s.played.suffix(300) == Array(308..<608))
}

/// A steady stream over `seconds` whose receiver clock runs `ppm` fast (negative: slow).
func driftRun(ppm: Double, seconds: Double) throws -> (ScenarioScript, JitterBufferStatistics) {
    var s = try ScenarioScript()
    let skew = 1 + ppm / 1_000_000
    let packets = Int(seconds * 50)
    var k = 0
    // Packets arrive 30 ms after they are sent, on the receiver's (skewed) clock.
    while k < packets || s.clockMs < Double(packets) * 20 * skew + 500 {
        while k < packets && Double(k) * 20 * skew + 30 <= s.clockMs {
            let p = s.send()
            s.deliver(p)
            k += 1
        }
        s.get()
    }
    return (s, s.buffer.statistics)
}

@Test(arguments: [500.0, -500.0, 25_000.0, -25_000.0])
func clockDriftIsAbsorbedByStretching(ppm: Double) throws {
    let (s, st) = try driftRun(ppm: ppm, seconds: 30)
    #expect(st.late == 0)
    #expect(s.played.count == 1500)
    let mean = s.playoutDelaysMs.suffix(500).reduce(0, +) / 500
    #expect(mean < 80, "delay crept to \(mean) ms")
    if ppm > 1000 { #expect(st.insertedSamplesForDeceleration > 0) }
    if ppm < -1000 { #expect(st.removedSamplesForAcceleration > 0) }
}

@Test func lossIsConcealedAndCounted() throws {
    var s = try ScenarioScript()
    s.run("(PGG)*50 (LGG)*3 (PGG)*50")
    s.drain()
    let st = s.buffer.statistics
    #expect(st.concealmentEvents >= 1)
    #expect(st.concealedSamples >= 3 * 320)
    #expect(st.jitterBufferEmittedCount >= 100 * 320 - st.removedSamplesForAcceleration)
    #expect(st.jitterBufferDelay > 0 && st.jitterBufferTargetDelay > 0)
}
