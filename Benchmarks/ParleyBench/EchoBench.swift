import CSpeexDSP
import CWebRTCAudioProcessing
import Foundation
import ParleyEcho
import ParleyMedia
import ParleySimulation

// The echo suite: Parley's EchoCanceller (WebRTC's AEC behind its delay estimator and far-end
// ring) against WebRTC's AEC called directly (given the true delay) and speexdsp's MDF canceller
// with its preprocessor's residual echo suppression (a 300 ms filter, aligned at the true
// delay), on the same simulated room, in the same run: cost per 10 ms frame at 16 kHz on one
// core, and the echo return loss enhancement over far-end-only speech after 2 s.
//
// The room: SampleMedia's armelle and carlo (the conversation's other speakers) as the far end,
// 16 s played twice, through a path of 60 ms delay and RT60 0.4 s, the echo at -30 dBFS active
// level (10 dB under a near end at -20 dBFS), white noise at -70 dBFS, no near-end speech.

private struct EchoBenchFixture {
    let far: [Int16]
    let mic: [Int16]
    let delaySamples: Int
    /// The far end's talks in each 16 s half (seconds).
    let farTalks: [(Double, Double)]

    static func make() -> EchoBenchFixture? {
        func load(_ name: String) -> [Float]? {
            guard var r = try? WAVReader(path: sampleMediaDirectory.appendingPathComponent("conversation/\(name).wav").path),
                  r.format.sampleRate == 16_000, r.format.channels == 1 else { return nil }
            var out: [Float] = []
            var chunk = [Float](repeating: 0, count: 4096)
            while let n = try? r.read(into: &chunk), n > 0 { out += chunk[0..<n] }
            return out
        }
        guard let a = load("armelle"), let c = load("carlo"), a.count == c.count else { return nil }
        let once = zip(a, c).map { $0 + $1 }
        let far = once + once
        let path = EchoPath(delayMs: 60, rt60: 0.4, seed: 2)
        let mic = EchoRoom.microphone(far: far, near: [], path: path, echoDb: -10, sampleRate: 16_000)
        func pcm(_ x: [Float]) -> [Int16] { x.map { Int16(max(-32_768, min(32_767, ($0 * 32_768).rounded()))) } }
        let talks = [(2.01, 2.52), (4.00, 6.05), (5.51, 7.49), (12.60, 15.09)]
        return EchoBenchFixture(far: pcm(far), mic: pcm(mic), delaySamples: 960, farTalks: talks + talks.map { ($0.0 + 16, $0.1 + 16) })
    }

    var frames: Int { mic.count / 160 }

    /// ERLE over the frames inside the far end's talks after 2 s.
    func erle(_ out: [Int16]) -> Double {
        var m = 0.0, o = 0.0
        for f in 200..<frames {
            let t = Double(f) / 100
            guard farTalks.contains(where: { t >= $0.0 && t < $0.1 }) else { continue }
            for i in (f * 160)..<((f + 1) * 160) { m += Double(mic[i]) * Double(mic[i]); o += Double(out[i]) * Double(out[i]) }
        }
        return 10 * log10(m / max(o, 1))
    }

    func parley(into out: inout [Int16]) -> UInt64 {
        guard let canceller = try? EchoCanceller() else { return 0 }
        var acc: UInt64 = 0
        far.withUnsafeBufferPointer { f in
            mic.withUnsafeBufferPointer { m in
                for k in 0..<frames {
                    canceller.playedOut(UnsafeBufferPointer(rebasing: f[(k * 160)..<((k + 1) * 160)]))
                    guard let o = try? canceller.process(UnsafeBufferPointer(rebasing: m[(k * 160)..<((k + 1) * 160)])) else { continue }
                    for i in 0..<160 { out[k * 160 + i] = o[i] }
                    acc &+= UInt64(UInt16(bitPattern: o[0]))
                }
            }
        }
        return acc
    }

    func webrtc(into out: inout [Int16]) -> UInt64 {
        guard let aec = WebRtcAec_Create() else { return 0 }
        defer { WebRtcAec_Free(aec) }
        _ = WebRtcAec_Init(aec, 16_000, 16_000)
        var farFrame = [Float](repeating: 0, count: 160), near = [Float](repeating: 0, count: 160)
        var result = [Float](repeating: 0, count: 160)
        var acc: UInt64 = 0
        let delayMs = Int16(delaySamples / 16)
        for k in 0..<frames {
            for i in 0..<160 { farFrame[i] = Float(far[k * 160 + i]); near[i] = Float(mic[k * 160 + i]) }
            _ = WebRtcAec_BufferFarend(aec, farFrame, 160)
            near.withUnsafeBufferPointer { n in
                result.withUnsafeMutableBufferPointer { r in
                    var nearBand: UnsafePointer<Float>? = n.baseAddress
                    var outBand: UnsafeMutablePointer<Float>? = r.baseAddress
                    _ = withUnsafePointer(to: &nearBand) { np in
                        withUnsafePointer(to: &outBand) { op in WebRtcAec_Process(aec, np, 1, op, 160, delayMs, 0) }
                    }
                }
            }
            for i in 0..<160 { out[k * 160 + i] = Int16(max(-32_768, min(32_767, result[i].rounded()))) }
            acc &+= UInt64(UInt16(bitPattern: out[k * 160]))
        }
        return acc
    }

    func speex(into out: inout [Int16]) -> UInt64 {
        guard let echo = speex_echo_state_init(160, 4_800) else { return 0 }
        defer { speex_echo_state_destroy(echo) }
        guard let pre = speex_preprocess_state_init(160, 16_000) else { return 0 }
        defer { speex_preprocess_state_destroy(pre) }
        _ = parley_speex_echo_set_rate(echo, 16_000)
        _ = parley_speex_preprocess_set_int(pre, SPEEX_PREPROCESS_SET_DENOISE, 1)
        _ = parley_speex_preprocess_set_int(pre, SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, 0)
        _ = parley_speex_preprocess_set_echo(pre, echo)
        var reference = [Int16](repeating: 0, count: 160)
        var acc: UInt64 = 0
        let lead = delaySamples - 480   // the filter starts 30 ms before the direct path
        mic.withUnsafeBufferPointer { m in
            out.withUnsafeMutableBufferPointer { o in
                for k in 0..<frames {
                    for i in 0..<160 { let j = k * 160 + i - lead; reference[i] = j >= 0 ? far[j] : 0 }
                    speex_echo_cancellation(echo, m.baseAddress! + k * 160, reference, o.baseAddress! + k * 160)
                    speex_preprocess_run(pre, o.baseAddress! + k * 160)
                    acc &+= UInt64(UInt16(bitPattern: o[k * 160]))
                }
            }
        }
        return acc
    }
}

func echoBenchmarks() -> [Benchmark] {
    guard let fixture = EchoBenchFixture.make() else {
        FileHandle.standardError.write(Data("echo: SampleMedia/conversation not readable; skipped\n".utf8))
        return []
    }
    let frames = fixture.frames
    var out = [Int16](repeating: 0, count: fixture.mic.count)
    return [
        Benchmark(name: "echo/webrtc-aec-16k", iterations: frames) { fixture.webrtc(into: &out) },
        Benchmark(name: "echo/speexdsp-16k", iterations: frames) { fixture.speex(into: &out) },
        Benchmark(name: "echo/parley-16k", baseline: "echo/webrtc-aec-16k", iterations: frames) { fixture.parley(into: &out) },
        Benchmark(name: "echo/webrtc-aec-erle", unit: .db) { _ = fixture.webrtc(into: &out); return fixture.erle(out) },
        Benchmark(name: "echo/speexdsp-erle", unit: .db) { _ = fixture.speex(into: &out); return fixture.erle(out) },
        Benchmark(name: "echo/parley-erle", unit: .db, baseline: "echo/webrtc-aec-erle") {
            _ = fixture.parley(into: &out); return fixture.erle(out)
        },
    ]
}
