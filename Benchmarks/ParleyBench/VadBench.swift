import Foundation
import CWebRTCAudioProcessing
import ParleyVoice

/// Deterministic speech-like test audio: a voiced harmonic complex with a 4 Hz syllabic envelope,
/// pitch glides and noise, `seconds` long at `rate`. The VAD's cost does not depend on content.
private func vadTestSignal(rate: Int, seconds: Int) -> [Float] {
    var seed: UInt32 = 7
    var phase = 0.0
    return (0..<(rate * seconds)).map { i in
        let t = Double(i) / Double(rate)
        let f0 = 120 + 30 * sin(2 * Double.pi * 0.7 * t)
        phase += 2 * Double.pi * f0 / Double(rate)
        var v = 0.0
        for h in 1...12 { v += sin(Double(h) * phase) / Double(h) }
        let env = max(0, sin(2 * Double.pi * 4 * t))
        seed = seed &* 1_664_525 &+ 1_013_904_223
        let noise = Double(Int32(bitPattern: seed)) / Double(Int32.max)
        return Float(0.1 * env * v + 0.003 * noise)
    }
}

/// Benchmarks for the vad suite: Parley's VAD against the WebRTC GMM VAD (libwebrtc-audio-processing)
/// on the same audio, per 10 ms frame, in the same run.
func vadBenchmarks() -> [Benchmark] {
    let seconds = 10
    let frames = seconds * 100
    var rows: [Benchmark] = []
    for rate in [8_000, 16_000, 48_000] {
        let k = rate / 1000
        let audio = vadTestSignal(rate: rate, seconds: seconds)
        let pcm = audio.map { Int16(clampingFloat: $0) }
        rows.append(Benchmark(name: "vad/webrtc-\(k)k", iterations: frames) {
            guard let vad = WebRtcVad_Create() else { return 0 }
            defer { WebRtcVad_Free(vad) }
            _ = WebRtcVad_Init(vad)
            _ = WebRtcVad_set_mode(vad, 1)
            var speech: UInt64 = 0
            pcm.withUnsafeBufferPointer { b in
                let n = rate / 100
                for f in 0..<frames {
                    speech &+= UInt64(max(0, WebRtcVad_Process(vad, Int32(rate), b.baseAddress! + f * n, n)))
                }
            }
            return speech
        })
        rows.append(Benchmark(name: "vad/parley-\(k)k", baseline: "vad/webrtc-\(k)k", iterations: frames) {
            var vad = try! VoiceActivityDetector(sampleRate: rate)
            var acc: UInt64 = 0
            audio.withUnsafeBufferPointer { b in
                let n = rate / 100
                for f in 0..<frames {
                    vad.process(UnsafeBufferPointer(rebasing: b[(f * n)..<((f + 1) * n)])) { d in
                        acc &+= UInt64(d.probability * 1000)
                    }
                }
            }
            return acc
        })
    }
    // The talking and speaker logic on top, per frame (4 participants).
    let decisions: [VADDecision] = {
        var vad = try! VoiceActivityDetector(sampleRate: 16_000)
        return vad.process(vadTestSignal(rate: 16_000, seconds: seconds))
    }()
    rows.append(Benchmark(name: "vad/talk-and-speaker-4p", unit: .nsPerFrame, iterations: frames * 4) {
        var talks = [TalkDetector](repeating: TalkDetector(), count: 4)
        var speaker = ActiveSpeakerDetector<Int>()
        for p in 0..<4 { speaker.join(p) }
        var acc: UInt64 = 0
        for (i, d) in decisions.enumerated() {
            for p in 0..<4 {
                if talks[p].process(d) != nil { acc &+= 1 }
                speaker.update(p, decision: d)
            }
            if i % 10 == 9, speaker.decide(at: d.time + 0.01) != nil { acc &+= 1 }
        }
        return acc
    })
    return rows
}
