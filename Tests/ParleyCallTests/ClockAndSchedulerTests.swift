import Testing
@testable import ParleyCall
import ParleySimulation

@Test func virtualClockSleepJumpsToDeadlineAndNeverGoesBack() {
    let clock = VirtualMediaClock(start: MonotonicTime(nanoseconds: 5))
    clock.sleep(until: MonotonicTime(nanoseconds: 100))
    #expect(clock.now().nanoseconds == 100)
    clock.sleep(until: MonotonicTime(nanoseconds: 50))
    #expect(clock.now().nanoseconds == 100)
    clock.advance(byNanoseconds: -10)
    #expect(clock.now().nanoseconds == 100)
    clock.advance(byNanoseconds: 25)
    #expect(clock.now().nanoseconds == 125)
    #expect(clock.sleepCount == 2)
}

@Test func systemClockSleepsUntilAbsoluteDeadline() {
    let clock = SystemMediaClock()
    let start = clock.now()
    let deadline = start.advanced(byNanoseconds: 5_000_000)
    clock.sleep(until: deadline)
    #expect(clock.now() >= deadline)
}

@Test func audioPacerCatchesUpAndCountsEveryFrame() throws {
    var pacer = try FramePacer(periodNanoseconds: 20_000_000, origin: .zero, policy: .catchUp)
    #expect(pacer.due(at: MonotonicTime(nanoseconds: -1)) == nil)
    #expect(pacer.due(at: .zero) == 0..<1)
    #expect(pacer.due(at: MonotonicTime(nanoseconds: 19_999_999)) == nil)
    // The thread stalls for 95 ms: frames 1...5 are all produced, four of them late.
    let frames = pacer.due(at: MonotonicTime(nanoseconds: 115_000_000))
    #expect(frames == 1..<6)
    #expect(pacer.statistics.frames == 6)
    #expect(pacer.statistics.lateFrames == 5)          // 95, 75, 55, 35 and 15 ms late
    #expect(pacer.statistics.droppedLateFrames == 0)
    #expect(pacer.statistics.maximumLatenessNanoseconds == 95_000_000)
}

@Test func videoPacerDropsLateFramesInsteadOfQueueing() throws {
    var pacer = try FramePacer(framesPerSecond: 30, origin: .zero, policy: .dropLate)
    #expect(pacer.due(at: .zero) == 0..<1)
    // 100 ms stall: frames 1 and 2 are skipped, frame 3 (due at 100 ms) is shown.
    let frames = pacer.due(at: MonotonicTime(nanoseconds: 100_000_000))
    #expect(frames == 3..<4)
    #expect(pacer.statistics.droppedLateFrames == 2)
    #expect(pacer.statistics.frames == 2)
    #expect(pacer.nextDeadline.nanoseconds == 133_333_333)
}

@Test func pacerDeadlinesDoNotAccumulateRoundingOverAnHour() throws {
    let pacer = try FramePacer(framesPerSecond: 30, origin: .zero, policy: .dropLate)
    #expect(pacer.deadline(ofFrame: 108_000).nanoseconds == 3_600_000_000_000)
}

@Test func schedulerInterleavesAudioAndVideoInDeadlineOrder() throws {
    let clock = VirtualMediaClock(start: .zero)
    let scheduler = MediaScheduler(clock: clock)
    var log: [String] = []
    scheduler.add("audio", pacer: try FramePacer(periodNanoseconds: 20_000_000, origin: .zero, policy: .catchUp)) { f, now in
        log.append("a\(f.lowerBound)@\(now.nanoseconds / 1_000_000)")
    }
    scheduler.add("video", pacer: try FramePacer(framesPerSecond: 25, origin: .zero, policy: .dropLate)) { f, now in
        log.append("v\(f.lowerBound)@\(now.nanoseconds / 1_000_000)")
    }
    scheduler.runUntil(MonotonicTime(nanoseconds: 81_000_000))
    // Ties (0, 40 and 80 ms) are served in registration order: audio first.
    #expect(log == ["a0@0", "v0@0", "a1@20", "a2@40", "v1@40", "a3@60", "a4@80", "v2@80"])
    #expect(clock.now().nanoseconds == 80_000_000)
}

@Test func schedulerUnderAStalledThreadNeverLosesAudioButSkipsVideo() throws {
    let clock = VirtualMediaClock(start: .zero)
    let scheduler = MediaScheduler(clock: clock)
    var audioFrames = 0
    var videoFrames = 0
    let a = scheduler.add("audio", pacer: try FramePacer(periodNanoseconds: 10_000_000, origin: .zero, policy: .catchUp)) { f, _ in
        audioFrames += f.count
    }
    let v = scheduler.add("video", pacer: try FramePacer(framesPerSecond: 30, origin: .zero, policy: .dropLate)) { f, now in
        videoFrames += f.count
        if now.nanoseconds == 0 { clock.advance(byNanoseconds: 250_000_000) }   // a long stall once
    }
    scheduler.runUntil(MonotonicTime(nanoseconds: 1_000_000_000))
    #expect(audioFrames == 100)                       // 0..990 ms: all of them
    #expect(scheduler.statistics(a).lateFrames > 0)
    // Woken at 250 ms: frames 1...6 (33...200 ms) skipped, frame 7 (233 ms) shown.
    #expect(scheduler.statistics(v).droppedLateFrames == 6)
    #expect(videoFrames + scheduler.statistics(v).droppedLateFrames == 30)
}

@Test func driftEstimatorMeasuresAFastCaptureClockDespiteJitter() throws {
    for drift in [25_000.0, -25_000, 500, 0] {
        let capture = try DriftingCaptureClock(origin: MonotonicTime(seconds: 3), driftPpm: drift, sampleRate: 48_000)
        var estimator = try DriftEstimator(sampleRate: 48_000)
        #expect(throws: DriftEstimatorError.notPositive(sampleRate: 0, timeConstant: 60)) { try DriftEstimator(sampleRate: 0) }
        #expect(throws: DriftEstimatorError.self) { try DriftEstimator(sampleRate: 48_000, timeConstant: -1) }
        var rng = SplitMix(seed: 7)
        for k in 0..<3000 {   // 60 s of 20 ms frames, +-2 ms scheduling jitter on the timestamps
            let sample = Int64(k * 960)
            let jitter = Int64((rng.unit() * 4 - 2) * 1e6)
            estimator.observe(sample: sample, capturedAt: capture.time(ofSample: sample).advanced(byNanoseconds: jitter))
        }
        let measured = estimator.driftPpm!
        #expect(abs(measured - drift) < 20, "drift \(drift) ppm measured \(measured)")
        // The smoothed line predicts capture times to well under a millisecond.
        let predicted = estimator.smoothedTime(ofSample: 2_880_000)!
        #expect(abs(predicted.nanoseconds(to: capture.time(ofSample: 2_880_000))) < 500_000)
    }
}

/// A tiny deterministic generator for tests.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / 9_007_199_254_740_992.0 }
}

@Test func pacersClocksAndLossModelsRefuseACallersBadValues() throws {
    #expect(throws: FramePacerError.frameRateNotPositive(0)) { try FramePacer(framesPerSecond: 0, origin: .zero, policy: .dropLate) }
    #expect(throws: FramePacerError.self) { try FramePacer(framesPerSecond: .infinity, origin: .zero, policy: .dropLate) }
    #expect(throws: FramePacerError.periodNotPositive(-20e6)) { try FramePacer(periodNanoseconds: -20e6, origin: .zero, policy: .catchUp) }
    #expect(throws: FramePacerError.self) { try FramePacer(periodNanoseconds: .nan, origin: .zero, policy: .catchUp) }
    #expect(throws: SimulationConfigurationError.sampleRateNotPositive(0)) {
        try DriftingCaptureClock(origin: .zero, driftPpm: 0, sampleRate: 0)
    }
    #expect(throws: SimulationConfigurationError.driftOutOfRange(600_000)) {
        try DriftingCaptureClock(origin: .zero, driftPpm: 600_000, sampleRate: 48_000)
    }
    #expect(throws: SimulationConfigurationError.meanLossOutOfRange(1)) { try GilbertElliott.bursty(meanLoss: 1, meanBurst: 2) }
    #expect(throws: SimulationConfigurationError.meanLossOutOfRange(-0.1)) { try GilbertElliott.bursty(meanLoss: -0.1, meanBurst: 2) }
    #expect(throws: SimulationConfigurationError.meanBurstTooShort(0.5)) { try GilbertElliott.bursty(meanLoss: 0.1, meanBurst: 0.5) }
    #expect(throws: SimulationConfigurationError.meanLossOutOfRange(1.5)) { try NetworkScenario.room(lossPercent: 150, jitterMs: 0) }
    _ = try GilbertElliott.bursty(meanLoss: 0.1, meanBurst: 2)
}
