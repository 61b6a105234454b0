import Testing
import ParleyVoice

/// Decisions from a pattern, one character per 10 ms frame: `S` speech (0.9, 20 dB over the noise
/// floor), `m` middling (0.4: above the off threshold, below the on threshold; 10 dB), `f` a frame at
/// the noise floor that a model still rates 0.4 (0 dB), `c` the closure after a plosive burst (0.15,
/// 4 dB: quiet, but above the floor), `.` silence (0.05, 0 dB).
func frames(_ pattern: String, from start: Int = 0) -> [VADDecision] {
    pattern.enumerated().map { i, ch in
        let p: Float = ch == "S" ? 0.9 : (ch == "m" || ch == "f" ? 0.4 : (ch == "c" ? 0.15 : 0.05))
        let snr: Float = ch == "S" ? 20 : (ch == "m" ? 10 : (ch == "c" ? 4 : 0))
        return VADDecision(frameIndex: start + i, time: Double(start + i) * 0.01, probability: p, isSpeech: p >= 0.5,
                           evidence: VADEvidence(energyDbov: ch == "S" ? -20 : (ch == "m" ? -40 : -60), snrDb: snr))
    }
}

func talkEvents(_ pattern: String, muted: Bool = false, configuration: TalkDetectorConfiguration = .init()) -> [TalkEvent] {
    var t = try! TalkDetector(configuration: configuration)
    var out = frames(pattern).compactMap { t.process($0, muted: muted) }
    if let e = t.finish(at: Double(pattern.count) * 0.01) { out.append(e) }
    return out
}

func repeated(_ s: String, _ n: Int) -> String { String(repeating: s, count: n) }

@Test func talkStartsAfterAShortRunOfSpeechAndIsBackDated() throws {
    let e = talkEvents(repeated(".", 50) + repeated("S", 100) + repeated(".", 100))
    try #require(e.count == 2)
    #expect(e[0].kind == .started && e[0].reason == .speechOnset)
    // The 7th speech frame (ending at 0.57 s) brings the onset window's mean to 0.79, over the
    // default 0.75.
    #expect(abs(e[0].time - 0.57) < 1e-9)
    #expect(abs(e[0].segmentTime - 0.50) < 1e-9)
    #expect(e[0].levelDbov == -20)
    #expect(e[1].kind == .stopped && e[1].reason == .hangoverElapsed)
    #expect(abs(e[1].segmentTime - 1.50) < 1e-9)
    #expect(abs(e[1].time - 1.95) < 1e-9)            // 450 ms hang-over
}

@Test func theStartBridgesShortDipsBeforeTheOnsetButNotLongOnes() throws {
    // A dip of 3 frames (a concealed lost packet) inside the rise does not move the start...
    let bridged = talkEvents(repeated(".", 50) + "SSSS" + "..." + repeated("S", 30) + repeated(".", 100))
    try #require(bridged.first?.kind == .started)
    #expect(abs(bridged[0].segmentTime - 0.50) < 1e-9)
    // ...a pause of 5 frames does: the talk starts with the second run.
    let split = talkEvents(repeated(".", 50) + "SSSS" + "....." + repeated("S", 30) + repeated(".", 100))
    try #require(split.first?.kind == .started)
    #expect(abs(split[0].segmentTime - 0.59) < 1e-9)
}

@Test func theStartReachesBackOverTheClosureAfterAPlosiveBurst() throws {
    // A burst (30 ms rated speech), a closure rated 0.15 with energy above the floor, then the
    // vowel: the talk starts at the burst, however long the closure (the energy marks the rise)...
    for closure in [15, 25] {
        let plosive = talkEvents(repeated(".", 50) + "SSS" + repeated("c", closure) + repeated("S", 40) + repeated(".", 100))
        try #require(plosive.first?.kind == .started)
        #expect(abs(plosive[0].segmentTime - 0.50) < 1e-9, "closure of \(closure) frames")
    }
    // ...but a pause at the noise floor is never bridged.
    let pause = talkEvents(repeated(".", 50) + "SSS" + repeated(".", 10) + repeated("S", 40) + repeated(".", 100))
    try #require(pause.first?.kind == .started)
    #expect(abs(pause[0].segmentTime - 0.63) < 1e-9)
    // With a rise floor over the closure's probability, only a closure within the bridge (0.2 s)
    // is part of the rise; a longer one puts the start at the vowel.
    let floor = TalkDetectorConfiguration(onsetRiseFloor: 0.2)
    let short = talkEvents(repeated(".", 50) + "SSS" + repeated("c", 15) + repeated("S", 40) + repeated(".", 100), configuration: floor)
    #expect(abs((short.first?.segmentTime ?? -1) - 0.50) < 1e-9)
    let long = talkEvents(repeated(".", 50) + "SSS" + repeated("c", 25) + repeated("S", 40) + repeated(".", 100), configuration: floor)
    #expect(abs((long.first?.segmentTime ?? -1) - 0.78) < 1e-9)
}

@Test func shortBurstsAndClicksDoNotStartTalking() {
    #expect(talkEvents(repeated(".", 30) + "SSSS" + repeated(".", 60) + "S.S.S.S." + repeated(".", 60)).isEmpty)
}

@Test func pausesShorterThanTheHangoverDoNotFlicker() {
    let e = talkEvents(repeated("S", 80) + repeated(".", 30) + repeated("S", 80) + repeated(".", 20) + repeated("S", 50))
    #expect(e.map(\.kind) == [.started, .stopped])
    #expect(e.last?.reason == .streamEnded)
}

@Test func middlingFramesHoldTalkingButDoNotStartIt() {
    let hold = talkEvents(repeated("S", 40) + repeated("m", 100) + repeated(".", 50))
    #expect(hold.count == 2 && abs(hold[1].segmentTime - 1.40) < 1e-9)
    #expect(talkEvents(repeated("m", 200)).isEmpty)
}

@Test func framesAtTheNoiseFloorDoNotHoldATalk() {
    // A model that still rates the noise bed after an utterance at 0.4 does not keep the talk on:
    // without energy above the floor, the hang-over runs from the last syllable.
    let e = talkEvents(repeated("S", 40) + repeated("f", 150))
    #expect(e.map(\.kind) == [.started, .stopped])
    #expect(e.count == 2 && abs(e[1].segmentTime - 0.40) < 1e-9 && abs(e[1].time - 0.85) < 1e-9)
    // Holding on probability alone keeps it on to the end of the stream.
    var c = TalkDetectorConfiguration()
    c.holdMinimumSNR = -.infinity
    #expect(talkEvents(repeated("S", 40) + repeated("f", 150), configuration: c).last?.reason == .streamEnded)
}

@Test func talkingWhileMutedIsSignalled() {
    let e = talkEvents(repeated("S", 50) + repeated(".", 50), muted: true)
    #expect(e.count == 2 && e.allSatisfy(\.muted))
}

@Test func talkLastsAtLeastTheMinimumDuration() {
    var c = TalkDetectorConfiguration()
    c.minimumTalkDuration = 1.0
    let e = talkEvents(repeated("S", 10) + repeated(".", 150), configuration: c)
    #expect(e.count == 2)
    #expect(e[1].time >= e[0].segmentTime + 1.0 - 1e-9)
}

@Test func onsetNeedsTheSignalAboveTheNoiseFloor() {
    // Probable speech frames whose SNR stays at 0 dB (e.g. the first frames of a stream) do not start a talk.
    var t = TalkDetector()
    let flat = frames(repeated("S", 100)).map { d -> VADDecision in var d = d; d.evidence.snrDb = 0; return d }
    #expect(flat.compactMap { t.process($0) }.isEmpty)
}

@Test func onsetNeedsEnoughSpeechInTheWindow() {
    // With the onset mean relaxed to 0.6, 5 of 8 frames is not enough with the default 6-of-8;
    // 6 of 8 with two dips is (their mean is 0.69)...
    var relaxed = TalkDetectorConfiguration()
    relaxed.onsetMeanProbability = 0.6
    #expect(talkEvents(".SS.SS.S" + repeated(".", 60), configuration: relaxed).isEmpty)
    #expect(talkEvents("SS.SS.SS" + repeated(".", 60), configuration: relaxed).first?.kind == .started)
    // ...but not at the default onset mean of 0.75, which waits for 7 of the last 8.
    #expect(talkEvents("SS.SS.SS" + repeated(".", 60)).isEmpty)
    let e = talkEvents("SS.SS.SSSSSSSS" + repeated(".", 60))
    #expect(e.first?.kind == .started && abs(e[0].time - 0.11) < 1e-9)
}

@Test func theStartIsTheBeginningOfASlowRiseNotTheThresholdCrossing() throws {
    // 0.5 s of silence, 150 ms climbing at 0.3 with the level above the noise floor, then speech.
    func run(riseSNR: Float, riseFrames: Int = 15) -> [TalkEvent] {
        var t = TalkDetector()
        var out: [TalkEvent] = []
        for i in 0..<200 {
            let (p, snr): (Float, Float) = i < 50 ? (0.05, 0) : (i < 50 + riseFrames ? (0.3, riseSNR) : (0.9, 20))
            let d = VADDecision(frameIndex: i, time: Double(i) * 0.01, probability: p, isSpeech: p >= 0.5,
                                evidence: VADEvidence(energyDbov: -30, snrDb: snr))
            if let e = t.process(d) { out.append(e) }
        }
        return out
    }
    let rise = run(riseSNR: 8)
    try #require(rise.first?.kind == .started)
    #expect(abs(rise[0].segmentTime - 0.50) < 1e-9)   // where the climb began
    #expect(abs(rise[0].time - 0.71) < 1e-9)          // decided at the 6th speech frame (mean 0.75)
    // A soft start of half a second (a fricative, or coded audio of one) still belongs to the talk.
    let long = run(riseSNR: 8, riseFrames: 50)
    try #require(long.first?.kind == .started)
    #expect(abs(long[0].segmentTime - 0.50) < 1e-9 && abs(long[0].time - 1.06) < 1e-9)
    // The same probabilities without energy above the floor are not a rise: the start is the
    // first speech frame.
    let flat = run(riseSNR: 0)
    try #require(flat.first?.kind == .started)
    #expect(abs(flat[0].segmentTime - 0.65) < 1e-9)
}

@Test func talkDetectorRejectsAnOnsetWindowOrOnsetFramesOutOfRange() throws {
    #expect(throws: TalkDetectorConfigurationError.onsetWindowOutOfRange(0)) {
        try TalkDetector(configuration: TalkDetectorConfiguration(onsetWindow: 0, onsetFrames: 0))
    }
    #expect(throws: TalkDetectorConfigurationError.onsetWindowOutOfRange(65)) {
        try TalkDetector(configuration: TalkDetectorConfiguration(onsetWindow: 65))
    }
    #expect(throws: TalkDetectorConfigurationError.onsetFramesOutOfRange(onsetFrames: 9, onsetWindow: 8)) {
        try TalkDetector(configuration: TalkDetectorConfiguration(onsetFrames: 9))
    }
    #expect(throws: TalkDetectorConfigurationError.onsetFramesOutOfRange(onsetFrames: 0, onsetWindow: 8)) {
        try TalkDetector(configuration: TalkDetectorConfiguration(onsetFrames: 0))
    }
    // A value set after the configuration was made is checked too, and a rejected change keeps the old settings.
    var t = try TalkDetector(configuration: TalkDetectorConfiguration(onsetWindow: 64, onsetFrames: 64))
    var bad = t.configuration
    bad.onsetWindow = 100
    #expect(throws: TalkDetectorConfigurationError.onsetWindowOutOfRange(100)) { try t.setConfiguration(bad) }
    #expect(t.configuration.onsetWindow == 64)
    try t.setConfiguration(TalkDetectorConfiguration(onsetWindow: 1, onsetFrames: 1))
    #expect(t.configuration.onsetWindow == 1)
    #expect(TalkDetectorConfigurationError.onsetWindowOutOfRange(0).description.contains("1...64"))
}
