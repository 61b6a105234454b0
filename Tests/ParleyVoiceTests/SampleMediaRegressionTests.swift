import Foundation
import Testing
import ParleyMedia
import ParleyVoice

// Regression test on SampleMedia: fails if detection quality on the repository's own clips drops
// below what the shipped model measured when it was trained (margins of about 0.05-0.1).
// The figures are the shipped network's (SpectralNetwork.swift, Tools/vad-training/README.md).

let sampleMedia = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia")

func loadMono(_ relative: String) throws -> (rate: Int, samples: [Float]) {
    let bytes = try [UInt8](Data(contentsOf: sampleMedia.appendingPathComponent(relative)))
    var reader = try WAVReader(bytes: bytes, name: relative)
    let ch = reader.format.channels
    var all: [Float] = []
    var buffer = [Float](repeating: 0, count: 4096 * ch)
    while true {
        let n = try reader.read(into: &buffer)
        if n == 0 { break }
        for i in 0..<n { all.append(buffer[i * ch]) }
    }
    return (reader.format.sampleRate, all)
}

func decisions(_ relative: String, model: VADModel = .live, gainDb: Float = 0) throws -> [VADDecision] {
    var (rate, samples) = try loadMono(relative)
    if gainDb != 0 {
        let gain = Float(Foundation.pow(10, Double(gainDb) / 20))
        for i in samples.indices { samples[i] *= gain }
    }
    var vad = try VoiceActivityDetector(sampleRate: rate, configuration: .init(model: model))
    var out = vad.process(samples)
    vad.finish { out.append($0) }
    return out
}

/// Frame F1 of `d` against the truth segments of `name`.
func frameF1(_ d: [VADDecision], _ name: String, _ truth: [String: [(Double, Double)]]) -> Double {
    var tp = 0.0, fp = 0.0, fn = 0.0
    for x in d {
        let centre = x.time + 0.005
        let y = truth[name, default: []].contains { centre >= $0.0 && centre < $0.1 }
        if x.isSpeech && y { tp += 1 } else if x.isSpeech { fp += 1 } else if y { fn += 1 }
    }
    return 2 * tp / max(2 * tp + fp + fn, 1)
}

func flaggedShare(_ d: [VADDecision]) -> Double {
    Double(d.filter(\.isSpeech).count) / Double(max(d.count, 1))
}

func truthSegments() throws -> [String: [(Double, Double)]] {
    let text = try String(contentsOf: sampleMedia.appendingPathComponent("conversation-truth.csv"), encoding: .utf8)
    var out: [String: [(Double, Double)]] = [:]
    for line in text.split(separator: "\n").dropFirst() {
        let f = line.split(separator: ",")
        guard f.count == 3, let s = Double(f[1]), let e = Double(f[2]) else { continue }
        out[String(f[0]), default: []].append((s, e))
    }
    return out
}

@Test func conversationFramesMatchTheTruth() throws {
    let truth = try truthSegments()
    // Measured F1: armelle 0.751 (French over GSM at 8 kHz: the network finds her words, not the
    // tails the energy truth adds), carlo 0.976, reader 0.890.
    let floors: [String: Double] = ["armelle": 0.72, "carlo": 0.92, "reader": 0.85]
    for (name, floor) in floors {
        let f1 = frameF1(try decisions("conversation/\(name).wav"), name, truth)
        #expect(f1 >= floor, "\(name): frame F1 \(f1) < \(floor)")
    }
}

/// Played 20 dB and 10 dB quieter or 10 dB louder (as floats: no clipping), the conversation
/// scores as it does at its own level, with either network. Measured, largest change: offline
/// network 0.013 (armelle at +10 dB); live network 0.027 (armelle at -20 dB) and, a known fault,
/// armelle at +10 dB (F1 0.639 against 0.751: the live network loses her 8 kHz words when they
/// are loud). The files are short, so the margin is 0.03 (on real-dev the changes are in
/// Tools/vad-training/README.md).
@Test(arguments: VADModel.allCases)
func conversationScoresTheSameAtOtherLevels(model: VADModel) throws {
    let truth = try truthSegments()
    for name in ["armelle", "carlo", "reader"] {
        let original = frameF1(try decisions("conversation/\(name).wav", model: model), name, truth)
        for gain: Float in [-20, -10, 10] {
            let f1 = frameF1(try decisions("conversation/\(name).wav", model: model, gainDb: gain), name, truth)
            let check = { #expect(abs(f1 - original) <= 0.03, "\(model) \(name) at \(gain) dB: F1 \(f1), at its own level \(original)") }
            if model == .live && name == "armelle" && gain == 10 {
                withKnownIssue("the live network loses loud 8 kHz speech") { check() }
            } else {
                check()
            }
        }
    }
}

@Test func everyConversationTurnStartsTalkingPromptly() throws {
    let truth = try truthSegments()
    for (name, turns) in truth {
        var talk = TalkDetector()
        let starts = try decisions("conversation/\(name).wav").compactMap { talk.process($0) }
            .filter { $0.kind == .started }
        for (s, _) in turns {
            // Measured latencies (event time - true start): 70, 100, 250, 350, 350 and 400 ms. The
            // long ones are turns that open with 0.2-0.3 s of breath, a fricative or a soft
            // consonant that the network rates under the onset's 0.75 mean before the first vowel;
            // from that vowel, every onset takes 60-90 ms (the segment start is still the breath).
            #expect(starts.contains { $0.time >= s - 0.05 && $0.time <= s + 0.4 },
                    "\(name): no talking-started event within 400 ms of the turn at \(s) s")
        }
        // No talk starts in the first 0.3 s of a participant who is silent then.
        if turns.allSatisfy({ $0.0 > 1 }) { #expect(starts.allSatisfy { $0.time > 0.3 }) }
    }
}

@Test func speechClipsAreDetectedAtBothRates() throws {
    // Measured: 16 kHz 0.90, 48 kHz 0.91 of frames flagged (the clips contain pauses).
    #expect(flaggedShare(try decisions("speech/speech-16k.wav")) >= 0.80)
    #expect(flaggedShare(try decisions("speech/speech-48k.wav")) >= 0.80)
}

@Test func musicAndNoiseClipsAreFlaggedLessThanSpeech() throws {
    // Measured: sectoid-feelings 0.013, sectoid-metal-madness 0.013, 3d-printer 0.013, door 0.13,
    // vinyl-hiss 0; mean 0.03. These 3 s clips are too short for the noise floors and the 1 s
    // context to settle, so they are the hard case; the test guards against regressions.
    let clips = ["music/sectoid-feelings.wav", "music/sectoid-metal-madness.wav", "noise/3d-printer.wav",
                 "noise/door.wav", "noise/vinyl-hiss.wav"]
    var shares: [Double] = []
    for c in clips {
        let s = flaggedShare(try decisions(c))
        #expect(s <= 0.30, "\(c): \(s) of frames flagged")
        shares.append(s)
    }
    #expect(shares.reduce(0, +) / Double(shares.count) <= 0.08)
}

/// The talks the talk detector starts on a clip with `model`'s decisions.
func talkStarts(_ clip: String, model: VADModel) throws -> [Double] {
    var talk = TalkDetector()
    return try decisions(clip, model: model).compactMap { talk.process($0) }.filter { $0.kind == .started }.map(\.time)
}

/// Neither network, with the talk detector's hysteresis, starts a talk on the music and noise
/// clips.
@Test(arguments: VADModel.allCases)
func musicAndNoiseClipsStartNoTalk(model: VADModel) throws {
    for c in ["music/sectoid-feelings.wav", "music/sectoid-metal-madness.wav", "noise/3d-printer.wav",
              "noise/vinyl-hiss.wav"] {
        let starts = try talkStarts(c, model: model)
        #expect(starts.isEmpty, "\(model) \(c): talks started at \(starts) s")
    }
}

/// The creaking door: its squeak, 0.5 s at -15 dBov straight after digital silence, is rated as
/// voice (0.8-0.96) by both networks, and one talk starts 0.17 s into it. A known fault, kept
/// here so that the model that fixes it is noticed: the test fails once no talk starts.
@Test(arguments: VADModel.allCases)
func theCreakingDoorStartsOneTalk(model: VADModel) throws {
    let starts = try talkStarts("noise/door.wav", model: model)
    withKnownIssue("both networks take the door's creak for voice") {
        #expect(starts.isEmpty, "\(model): talks started at \(starts) s")
    }
    #expect(starts.count <= 1, "\(model): talks started at \(starts) s")
}
