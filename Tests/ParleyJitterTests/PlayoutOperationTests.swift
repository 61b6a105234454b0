import Testing
@testable import ParleyJitter

/// One row of the operation table: a script and the playout steps it must lead to.
struct OperationScenario: CustomTestStringConvertible, Sendable {
    let name: String
    let script: String
    var frameMs = 10
    /// Must appear in this order, back to back, once runs of the same step are merged
    /// (`[.normal, .expandWaiting, .normal]`: some decoding, then waiting, then decoding).
    let pattern: [PlayoutOperation]
    /// Exact numbers of steps.
    var counts: [PlayoutOperation: Int] = [:]
    /// Steps that must not occur.
    var absent: Set<PlayoutOperation> = []
    var testDescription: String { name }
}

/// The steps with runs of the same one merged.
func mergedRuns(_ operations: [PlayoutOperation]) -> [PlayoutOperation] {
    var out: [PlayoutOperation] = []
    for o in operations where out.last != o { out.append(o) }
    return out
}

func contains(_ runs: [PlayoutOperation], pattern: [PlayoutOperation]) -> Bool {
    guard !pattern.isEmpty, runs.count >= pattern.count else { return pattern.isEmpty }
    return (0...(runs.count - pattern.count)).contains { Array(runs[$0..<($0 + pattern.count)]) == pattern }
}

let operationScenarios: [OperationScenario] = [
    OperationScenario(name: "in order: buffering, then decoding", script: "(PGG)*100", pattern: [.buffer, .normal],
                      counts: [.buffer: 4],
                      absent: [.expandLost, .recoverFEC, .skipMissing, .silence, .silenceShortened, .silenceLengthened]),
    OperationScenario(name: "reorder by 1: the missing packet is waited for, then decoded",
                      script: "(PGG)*50 HGG PF GG (PGG)*50", pattern: [.normal, .expandWaiting, .normal],
                      absent: [.expandLost, .recoverFEC, .skipMissing]),
    // Early on (fewer than 100 delays measured) a missing packet is waited for 300 ms.
    OperationScenario(name: "single loss: waited for, then rebuilt from the next packet's FEC, then caught up",
                      script: "(PGG)*50 LGG (PGG)*50", pattern: [.normal, .expandWaiting, .recoverFEC, .accelerate],
                      counts: [.recoverFEC: 1, .expandWaiting: 31], absent: [.expandLost]),
    OperationScenario(name: "burst loss of 5: concealed, the last one next to a packet tries FEC",
                      script: "(PGG)*50 (LGG)*5 (PGG)*50",
                      pattern: [.normal, .expandWaiting, .expandLost, .recoverFEC, .accelerate],
                      counts: [.expandLost: 4, .recoverFEC: 1]),
    // A jitter-free path: nothing held, media time runs on after a short wait; the next
    // packet is then behind the playout point, so the missing one is passed. No merge step:
    // decoding resumes as is.
    OperationScenario(name: "late packet: concealed with media time running on, passed, then decoding resumes",
                      script: "(PGG)*200 HGG (PGG)*40 F (PGG)*50",
                      pattern: [.normal, .expandAdvancing, .skipMissing, .normal],
                      counts: [.skipMissing: 1], absent: [.expandLost, .recoverFEC]),
    OperationScenario(name: "10 s DTX: media time runs on, the gap left is shortened as silence, then caught up",
                      script: "(PGG)*50 X10000 (GG)*500 (PGG)*50",
                      pattern: [.normal, .expandWaiting, .expandAdvancing, .silenceShortened, .accelerate],
                      counts: [.silenceShortened: 1]),
    OperationScenario(name: "pause with the next packet already held: silence at its own length",
                      script: "(PGG)*100 X100 (PGG)*100", pattern: [.normal, .silence, .normal],
                      counts: [.silence: 10], absent: [.silenceShortened, .silenceLengthened]),
    OperationScenario(name: "pause after a burst of delay: silence lengthened toward the higher target",
                      script: "(PGG)*150 (HGG)*4 (PGG)*2 F X100 (PGG)*100",
                      pattern: [.skipMissing, .normal, .silenceLengthened, .silence, .normal],
                      counts: [.silenceLengthened: 10]),
    OperationScenario(name: "sender restart: the re-based gap is shortened as silence",
                      script: "(PGG)*50 S (PGG)*50", pattern: [.normal, .expandWaiting, .silenceShortened, .accelerate],
                      counts: [.silenceShortened: 1]),
    OperationScenario(name: "+150 ms step: the step is passed, then the buffer grows (preemptive expand) and settles",
                      script: "(PGG)*300 (HGG)*7 HG GF (PGG)*300",
                      pattern: [.normal, .expandAdvancing, .skipMissing, .preemptiveExpand, .normal, .accelerate],
                      counts: [.preemptiveExpand: 14]),
    OperationScenario(name: "20 ms frames, loss and reorder: waiting, then FEC, then caught up",
                      script: "(PG)*50 LG HG PF G (PG)*50", frameMs: 20,
                      pattern: [.normal, .expandWaiting, .recoverFEC, .accelerate], counts: [.buffer: 2, .recoverFEC: 1]),
]

@Test(arguments: operationScenarios)
func scenarioTakesExpectedPlayoutSteps(_ scenario: OperationScenario) throws {
    var c = JitterBufferConfiguration()
    c.frameMs = scenario.frameMs
    var s = try ScenarioScript(configuration: c)
    s.run(scenario.script)
    s.drain()
    let runs = mergedRuns(s.operations)
    #expect(contains(runs, pattern: scenario.pattern), "steps: \(runs)")
    for (operation, n) in scenario.counts {
        #expect(s.operations.filter { $0 == operation }.count == n, "\(operation)")
    }
    for operation in scenario.absent { #expect(!s.operations.contains(operation), "\(operation)") }
}

@Test func aSlowReceiverClockGrowsTheBufferAndAccelerates() throws {
    // The receiver's clock runs 2.5 % slow: packets pile up, the buffer removes pitch periods.
    let (s, st) = try driftRun(ppm: -25_000, seconds: 30)
    #expect(s.operations.filter { $0 == .accelerate }.count == 127)
    #expect(!s.operations.contains(.preemptiveExpand))
    #expect(st.removedSamplesForAcceleration > 0)
}

@Test func aFastReceiverClockDrainsTheBufferAndExpands() throws {
    let (s, st) = try driftRun(ppm: 25_000, seconds: 30)
    #expect(s.operations.filter { $0 == .preemptiveExpand }.count == 89)
    #expect(st.insertedSamplesForDeceleration > 0)
}

@Test func bufferingFramesAreSilentAndListTheBufferStep() throws {
    var s = try ScenarioScript()
    s.get()
    #expect(s.buffer.lastOperations == [.buffer])
    s.run("P")
    s.get()
    #expect(s.buffer.lastOperations == [.buffer])
    #expect(s.output.allSatisfy { $0 == 0 })
    // Once the first packet (in at 10 ms) has waited the 40 ms start-up target, it is decoded.
    s.run("GGG")
    #expect(s.buffer.lastOperations == [.buffer])
    s.get()
    #expect(s.buffer.lastOperations == [.normal])
    #expect(s.played == [0])
}

@Test func decideNamesTheNextStepWithoutTakingIt() throws {
    var s = try ScenarioScript()
    #expect(s.buffer.decide() == .buffer)
    // The first packet plays at 40 ms; half of it is still queued after that get.
    s.run("P GGGGG")
    #expect(s.buffer.lastOperations == [.normal])
    let before = (s.buffer.statistics, s.buffer.bufferedPackets)
    // Nothing held, well within the start-up wait: wait for the next packet.
    #expect(s.buffer.decide() == .expandWaiting)
    #expect(s.buffer.decide() == .expandWaiting)
    #expect(s.buffer.statistics == before.0 && s.buffer.bufferedPackets == before.1)
    s.run("P")
    #expect(s.buffer.decide() != .expandWaiting)
    #expect([.normal, .accelerate, .preemptiveExpand].contains(s.buffer.decide()))
}
