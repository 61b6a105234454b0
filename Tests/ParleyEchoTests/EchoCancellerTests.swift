import Foundation
import Testing
import ParleyCall
import ParleyEcho
import ParleyMedia
import ParleySimulation
import ParleyVoice

// Simulated rooms (ParleySimulation's EchoRoom): the far end is the other speakers of
// SampleMedia's conversation (armelle and carlo), played twice (32 s); the near end is its reader,
// silent for the first 16 s and then talking over the far end (its turns placed 4 s later, so
// that each starts while the far end talks).

private let sampleMedia = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia")
private let rate = 16_000

private func load(_ relative: String) throws -> [Float] {
    var reader = try WAVReader(path: sampleMedia.appendingPathComponent(relative).path)
    var all: [Float] = []
    var buffer = [Float](repeating: 0, count: 4096)
    while true {
        let n = try reader.read(into: &buffer)
        if n == 0 { break }
        all.append(contentsOf: buffer[0..<n])
    }
    return all
}

/// The far end, the near end and their true speech segments (seconds).
private struct Scene {
    var far: [Float]
    var near: [Float]
    var farTalks: [(Double, Double)]
    var nearTalks: [(Double, Double)]
    /// The first word of each near-end turn (docs/echo.md: where its 300-3400 Hz level comes
    /// within 15.9 dB of the turn's active level, 0.68 s and 8.89 s into reader.wav).
    var firstWords: [Double]

    static func make(nearTalks withNear: Bool) throws -> Scene {
        let armelle = try load("conversation/armelle.wav"), carlo = try load("conversation/carlo.wav")
        let reader = try load("conversation/reader.wav")
        let half = armelle.count
        var far = [Float](repeating: 0, count: 2 * half)
        for i in 0..<half { far[i] = armelle[i] + carlo[i]; far[half + i] = far[i] }
        var near = [Float](repeating: 0, count: 2 * half)
        let shift = 4 * rate
        if withNear { for i in 0..<(half - shift) { near[half + shift + i] = reader[i] } }
        let farOnce = [(2.01, 2.52), (4.00, 6.05), (5.51, 7.49), (12.60, 15.09)]
        let seconds = Double(half) / Double(rate)
        return Scene(far: far, near: near, farTalks: farOnce + farOnce.map { ($0.0 + seconds, $0.1 + seconds) },
                     nearTalks: withNear ? [(0.40 + seconds + 4, 3.39 + seconds + 4), (8.60 + seconds + 4, 11.84 + seconds + 4)] : [],
                     firstWords: withNear ? [0.68 + seconds + 4, 8.89 + seconds + 4] : [])
    }
}

private func pcm(_ x: [Float]) -> [Int16] { x.map { Int16(max(-32_768, min(32_767, ($0 * 32_768).rounded()))) } }

private struct Outcome {
    var result: EchoReplayResult
    var microphone: [Int16]
    var scene: Scene

    /// ERLE over the frames inside the far end's talks, outside the near end's (with 0.3 s of
    /// the near end's tail), from `from` to `to` seconds.
    func erle(from: Double, to: Double = .infinity) -> Double {
        EchoReplay.erleDb(microphone: microphone, output: result.output, frameSamples: result.frameSamples) { f in
            let t = Double(f) * 0.01
            return t >= from && t < to && scene.farTalks.contains { t >= $0.0 && t < $0.1 }
                && !scene.nearTalks.contains { t >= $0.0 - 0.05 && t < $0.1 + 0.3 }
        } ?? 0
    }

    /// Talks started outside the near end's turns.
    var falseStarts: [TalkEvent] {
        result.talks.filter { e in e.kind == .started && !scene.nearTalks.contains { e.time >= $0.0 && e.time <= $0.1 + 0.5 } }
    }

    /// Per near-end turn, how long after its start its talk started (nil: missed).
    var onsetLatencies: [Double?] {
        scene.nearTalks.map { turn in
            result.talks.first { $0.kind == .started && $0.time >= turn.0 && $0.time <= turn.1 }.map { $0.time - turn.0 }
        }
    }

    /// Per near-end turn, whether its talk started within 200 ms of its first word.
    var onsetsWithin200MsOfFirstWord: [Bool] {
        zip(onsetLatencies, zip(scene.nearTalks, scene.firstWords)).map { latency, turn in
            latency.map { turn.0.0 + $0 - turn.1 <= 0.2 + 1e-9 } ?? false
        }
    }
}

private func replay(_ scene: Scene, path: EchoPath, changedPath: EchoPath? = nil, echoDb: Double, driftPpm: Double = 0) throws -> Outcome {
    let mic = EchoRoom.microphone(far: scene.far, near: scene.near, path: path, changedPath: changedPath,
                                  changeAt: scene.far.count / 2, echoDb: echoDb, driftPpm: driftPpm, sampleRate: rate)
    let microphone = pcm(mic)
    let result = try EchoReplay.run(played: pcm(scene.far), microphone: microphone)
    return Outcome(result: result, microphone: microphone, scene: scene)
}

@Suite struct EchoCancellerTests {
    @Test("far end only: ERLE after 2 s >= 25 dB and no local talk", arguments: [
        (EchoPath(delayMs: 20, rt60: 0.2, seed: 1), 0.0),
        (EchoPath(delayMs: 60, rt60: 0.4, seed: 2), -10.0),
        (EchoPath(delayMs: 100, rt60: 0.6, seed: 3), -20.0),
    ])
    func farEndOnly(path: EchoPath, echoDb: Double) throws {
        let o = try replay(try Scene.make(nearTalks: false), path: path, echoDb: echoDb)
        let erle = o.erle(from: 2)
        print("far end only \(path.delayMs) ms, RT60 \(path.rt60) s, echo \(echoDb) dB: ERLE \(erle) dB, talks \(o.result.talks.filter { $0.kind == .started }.count), delay \(o.result.statistics.estimatedDelayMs ?? -1) ms")
        #expect(erle >= 25)
        #expect(o.falseStarts.isEmpty)
    }

    // The onsets are compared with the near end's own (the same capture path over the near end
    // alone): the reader's turns open softly, 20-30 dB under the echo, so even alone their talks
    // start 350 ms after the energy-based truth.
    @Test("double talk: every near-end turn starts within 200 ms of its first word and of its own onset", arguments: [
        (EchoPath(delayMs: 40, rt60: 0.3, seed: 4), 0.0),
        (EchoPath(delayMs: 80, rt60: 0.5, seed: 5), -10.0),
        (EchoPath(delayMs: 100, rt60: 0.6, seed: 6), -20.0),
    ])
    func doubleTalk(path: EchoPath, echoDb: Double) throws {
        let o = try replay(try Scene.make(nearTalks: true), path: path, echoDb: echoDb)
        let alone = try EchoReplay.run(played: pcm(o.scene.far), microphone: pcm(o.scene.near), echo: nil)
        let clean = o.scene.nearTalks.map { turn in alone.talks.first { $0.kind == .started && $0.time >= turn.0 }.map { $0.time - turn.0 } }
        print("near end alone: onsets \(clean)")
        print("double talk \(path.delayMs) ms, RT60 \(path.rt60) s, echo \(echoDb) dB: ERLE \(o.erle(from: 2)) dB, onsets \(o.onsetLatencies), false \(o.falseStarts.map(\.time))")
        #expect(o.erle(from: 2, to: 16) >= 25)
        #expect(o.falseStarts.isEmpty)
        for (latency, alone) in zip(o.onsetLatencies, clean) {
            #expect(latency != nil)
            #expect((latency ?? 1) <= (alone ?? 0) + 0.2)
        }
        #expect(o.onsetsWithin200MsOfFirstWord == [true, true])
    }

    @Test("the echo path changes halfway: back to 20 dB within 2 s")
    func pathChange() throws {
        let o = try replay(try Scene.make(nearTalks: false), path: EchoPath(delayMs: 40, rt60: 0.3, seed: 7),
                           changedPath: EchoPath(delayMs: 90, rt60: 0.5, seed: 8), echoDb: -6)
        print("path change: ERLE before \(o.erle(from: 2, to: 16)) dB, after 2 s \(o.erle(from: 18)) dB, talks \(o.result.talks.filter { $0.kind == .started }.map(\.time))")
        #expect(o.erle(from: 2, to: 16) >= 25)
        #expect(o.erle(from: 18) >= 20)
        #expect(o.result.talks.isEmpty)
    }

    @Test("clock drift of ±100 ppm between playout and capture", arguments: [100.0, -100.0])
    func drift(ppm: Double) throws {
        let o = try replay(try Scene.make(nearTalks: true), path: EchoPath(delayMs: 60, rt60: 0.4, seed: 9), echoDb: -6, driftPpm: ppm)
        let alone = try EchoReplay.run(played: pcm(o.scene.far), microphone: pcm(o.scene.near), echo: nil)
        let clean = o.scene.nearTalks.map { turn in alone.talks.first { $0.kind == .started && $0.time >= turn.0 }.map { $0.time - turn.0 } }
        print("drift \(ppm) ppm: ERLE \(o.erle(from: 2, to: 16)) dB, onsets \(o.onsetLatencies), false \(o.falseStarts.map(\.time)), drift found \(o.result.statistics.captureDriftPpm ?? .nan) ppm")
        #expect(abs((o.result.statistics.captureDriftPpm ?? .infinity) - ppm) <= 10)
        #expect(o.erle(from: 2, to: 16) >= 25)
        #expect(o.falseStarts.isEmpty)
        for (latency, alone) in zip(o.onsetLatencies, clean) { #expect((latency ?? 1) <= (alone ?? 0) + 0.2) }
        #expect(o.onsetsWithin200MsOfFirstWord == [true, true])
    }

    // Rooms drawn across the ranges (direct path 20-100 ms, RT60 0.2-0.6 s, echo 0 to -20 dB,
    // drift 0 or ±100 ppm), each with the far end alone and with the near end's two turns.
    @Test("rooms across the ranges: no talk from the echo, every turn found within 200 ms, ERLE >= 25 dB", arguments: 0..<12)
    func acrossTheRanges(room: Int) throws {
        let path = EchoPath(delayMs: Double(20 + room * 37 % 81), rt60: [0.2, 0.3, 0.45, 0.6][room % 4], seed: UInt64(100 + room))
        let echoDb = [0.0, -6, -10, -20][room / 3 % 4], drift = [0.0, 100, -100][room % 3]
        for near in [false, true] {
            let o = try replay(try Scene.make(nearTalks: near), path: path, echoDb: echoDb, driftPpm: drift)
            print("room \(room): \(path.delayMs) ms, RT60 \(path.rt60) s, echo \(echoDb) dB, \(drift) ppm, near end \(near): ERLE \(o.erle(from: 2, to: 16)) dB, onsets \(o.onsetLatencies), false \(o.falseStarts.map(\.time)), delay \(o.result.statistics.estimatedDelayMs ?? -1) ms, drift \(o.result.statistics.captureDriftPpm ?? .nan) ppm")
            #expect(o.erle(from: 2, to: 16) >= 25)
            #expect(!o.onsetLatencies.contains { $0 == nil })
            #expect(!o.onsetsWithin200MsOfFirstWord.contains(false))
            #expect(o.falseStarts.isEmpty)
            #expect(abs((o.result.statistics.captureDriftPpm ?? .infinity) - drift) <= 10)
        }
    }

    // Drifting rooms drawn at random within the ranges, where the far end alone started a talk
    // after a pause while the drift was still unknown (1 s windows that straddled the pauses,
    // ±8 lags to follow a lag that moves 8 samples over a 5 s pause).
    @Test("drifting rooms drawn at random: the drift is followed, and the echo starts no talk", arguments: [
        (EchoPath(delayMs: 37.45, rt60: 0.47, seed: 501), -0.6, 100.0),
        (EchoPath(delayMs: 49.78, rt60: 0.42, seed: 521), -13.26, -100),
        (EchoPath(delayMs: 26.41, rt60: 0.26, seed: 535), -8.12, 100),
        (EchoPath(delayMs: 69.58, rt60: 0.26, seed: 605), -2.43, 100),
    ])
    func drawnRooms(path: EchoPath, echoDb: Double, ppm: Double) throws {
        let o = try replay(try Scene.make(nearTalks: false), path: path, echoDb: echoDb, driftPpm: ppm)
        print("drawn room \(path.delayMs) ms, RT60 \(path.rt60) s, echo \(echoDb) dB, \(ppm) ppm: ERLE \(o.erle(from: 2)) dB, talks \(o.result.talks.filter { $0.kind == .started }.map(\.time)), drift found \(o.result.statistics.captureDriftPpm ?? .nan) ppm")
        #expect(o.result.talks.isEmpty)
        #expect(o.erle(from: 2) >= 25)
        #expect(abs((o.result.statistics.captureDriftPpm ?? .infinity) - ppm) <= 10)
    }

    @Test("at 8 kHz the drift is found too, and the echo starts no talk", arguments: [0.0, 100, -100])
    func narrowband(ppm: Double) throws {
        // The scene at 8 kHz: each pair of samples averaged (a crude low-pass before taking every
        // other one).
        func half(_ x: [Float]) -> [Float] { stride(from: 0, to: x.count - 1, by: 2).map { (x[$0] + x[$0 + 1]) / 2 } }
        let scene = try Scene.make(nearTalks: false)
        let far = half(scene.far)
        let mic = EchoRoom.microphone(far: far, near: half(scene.near), path: EchoPath(delayMs: 60, rt60: 0.4, seed: 9),
                                      echoDb: -6, driftPpm: ppm, sampleRate: 8_000)
        var send = AudioSendConfiguration()
        send.sampleRate = 8_000
        let result = try EchoReplay.run(played: pcm(far), microphone: pcm(mic), send: send)
        print("8 kHz, \(ppm) ppm: drift found \(result.statistics.captureDriftPpm ?? .nan) ppm, talks \(result.talks.count)")
        #expect(abs((result.statistics.captureDriftPpm ?? .infinity) - ppm) <= 10)
        #expect(result.talks.isEmpty)
    }

    @Test("a bulk delay beyond the filter's first window is found and followed")
    func longDelay() throws {
        let o = try replay(try Scene.make(nearTalks: false), path: EchoPath(delayMs: 300, rt60: 0.3, seed: 10), echoDb: -6)
        let estimate = try #require(o.result.statistics.estimatedDelayMs)
        print("long delay: estimate \(estimate) ms, offset \(o.result.statistics.filterOffsetMs) ms, ERLE \(o.erle(from: 16)) dB")
        #expect(abs(estimate - 300) <= 15)
        #expect(o.result.statistics.realignments >= 1)
        #expect(o.erle(from: 16) >= 25)
    }

    @Test func settingsOutOfRangeAreRefused() throws {
        var c = EchoCancellerConfiguration()
        c.sampleRate = 11_025
        #expect(throws: EchoCancellerError.sampleRate(11_025)) { try EchoCanceller(configuration: c) }
        c = EchoCancellerConfiguration()
        c.maximumDelayMs = 5_000
        #expect(throws: EchoCancellerError.maximumDelay(5_000)) { try EchoCanceller(configuration: c) }
        let canceller = try EchoCanceller()
        let odd = [Int16](repeating: 0, count: 100)
        #expect(throws: EchoCancellerError.frameSize(expectedMultipleOf: 160, got: 100)) {
            try odd.withUnsafeBufferPointer { _ = try canceller.process($0) }
        }
        var send = AudioSendConfiguration()
        send.sampleRate = 48_000
        var pipeline = try AudioSendPipeline(configuration: send)
        #expect(throws: EchoCancellerError.sampleRate(16_000)) { try pipeline.useEchoCanceller(canceller) }
    }

    @Test func echoOnlyFramesStartNoTalkButHoldOne() {
        var talk = TalkDetector()
        var evidence = VADEvidence()
        evidence.snrDb = 20
        let speech = { (i: Int) in VADDecision(frameIndex: i, time: Double(i) * 0.01, probability: 0.95, isSpeech: true, evidence: evidence) }
        for i in 0..<50 { #expect(talk.process(speech(i), echoOnly: true) == nil) }
        #expect(!talk.isTalking)
        var started: TalkEvent?
        for i in 50..<60 where started == nil { started = talk.process(speech(i)) }
        #expect(started?.kind == .started)
        for i in 60..<200 { #expect(talk.process(speech(i), echoOnly: true) == nil) }
        #expect(talk.isTalking)
    }

    @Test func certainDoubleTalkCountsTheSpeechHeardUnderTheEcho() {
        var evidence = VADEvidence()
        evidence.snrDb = 20
        let speech = { (i: Int) in VADDecision(frameIndex: i, time: Double(i) * 0.01, probability: 0.95, isSpeech: true, evidence: evidence) }
        // Echo-only speech, then the near end rising over it: a frame that is merely not echo
        // only needs an onset's run of its own; a certain one starts the talk at once.
        var plain = TalkDetector(), certain = TalkDetector()
        for i in 0..<30 {
            #expect(plain.process(speech(i), echoOnly: true) == nil)
            #expect(certain.process(speech(i), echoOnly: true) == nil)
        }
        #expect(plain.process(speech(30)) == nil)
        #expect(certain.process(speech(30), doubleTalk: true)?.kind == .started)
        var started: Int?
        for i in 31..<40 where started == nil { if plain.process(speech(i)) != nil { started = i } }
        #expect(started == 36)
        // Not with silence before it, and not when the frame is echo only.
        var quiet = TalkDetector()
        let silence = VADDecision(frameIndex: 0, time: 0, probability: 0.05, isSpeech: false, evidence: evidence)
        for _ in 0..<30 { _ = quiet.process(silence) }
        #expect(quiet.process(speech(30), doubleTalk: true) == nil)
        var echo = TalkDetector()
        for i in 0..<30 { _ = echo.process(speech(i), echoOnly: true) }
        #expect(echo.process(speech(30), echoOnly: true, doubleTalk: true) == nil)
    }
}
