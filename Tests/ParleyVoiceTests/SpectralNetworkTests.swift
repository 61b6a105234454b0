import Testing
import Foundation
@testable @_spi(Training) import ParleyVoice

/// The network's equations written plainly in Double over the weights as stored (torch's
/// layouts), to check the SIMD implementation's interleaved layout and its fast math.
struct PlainNetwork {
    let W = SpectralNetworkWeights.live
    let v: [Float]
    var window: [[Double]]      // the last `kernel` standardised inputs, oldest first
    var conv1: [[Double]]       // the last `kernel` conv1 outputs
    var hidden: [Double]

    init() {
        v = decodeBase64Floats(W.base64)
        window = Array(repeating: Array(repeating: 0, count: W.inputCount), count: W.kernel)
        conv1 = Array(repeating: Array(repeating: 0, count: W.conv1), count: W.kernel)
        hidden = Array(repeating: 0, count: W.hidden)
    }

    mutating func step(_ input: [Float]) -> Double {
        let nIn = W.inputCount, k = W.kernel, c1 = W.conv1, c2 = W.conv2, h = W.hidden
        var o = 0
        func take(_ n: Int) -> ArraySlice<Float> { defer { o += n }; return v[o..<o + n] }
        let mean = Array(take(nIn)), inv = Array(take(nIn))
        let w1 = Array(take(c1 * nIn * k)), b1 = Array(take(c1))
        let w2 = Array(take(c2 * c1 * k)), b2 = Array(take(c2))
        let wi = Array(take(3 * h * c2)), wh = Array(take(3 * h * h))
        let bi = Array(take(3 * h)), bh = Array(take(3 * h))
        let wo = Array(take(h)), bo = Double(take(1).first!)
        window.removeFirst()
        window.append((0..<nIn).map { min(max((Double(input[$0]) - Double(mean[$0])) * Double(inv[$0]), -8), 8) })
        conv1.removeFirst()
        conv1.append((0..<c1).map { c in
            var s = Double(b1[c])
            for i in 0..<nIn { for t in 0..<k { s += Double(w1[(c * nIn + i) * k + t]) * window[t][i] } }
            return max(s, 0)
        })
        let a2 = (0..<c2).map { c in
            var s = Double(b2[c])
            for i in 0..<c1 { for t in 0..<k { s += Double(w2[(c * c1 + i) * k + t]) * conv1[t][i] } }
            return max(s, 0)
        }
        func gate(_ g: Int, _ j: Int) -> (Double, Double) {
            var x = Double(bi[g * h + j]), y = Double(bh[g * h + j])
            for i in 0..<c2 { x += Double(wi[(g * h + j) * c2 + i]) * a2[i] }
            for i in 0..<h { y += Double(wh[(g * h + j) * h + i]) * hidden[i] }
            return (x, y)
        }
        func sigmoid(_ x: Double) -> Double { 1 / (1 + exp(-x)) }
        var next = hidden
        for j in 0..<h {
            let (ir, hr) = gate(0, j), (iz, hz) = gate(1, j), (inn, hn) = gate(2, j)
            let r = sigmoid(ir + hr), z = sigmoid(iz + hz)
            let n = tanh(inn + r * hn)
            next[j] = (1 - z) * n + z * hidden[j]
        }
        hidden = next
        var out = bo
        for j in 0..<h { out += Double(wo[j]) * hidden[j] }
        return out
    }
}

@Test func networkMatchesAPlainImplementationOfItsEquations() {
    let net = SpectralNetwork.live
    let state = SpectralNetworkState(net)
    var plain = PlainNetwork()
    var signal = Signal(seed: 99)
    var input = [Float](repeating: 0, count: SpectralInput.stride)
    var worst = 0.0
    for frame in 0..<200 {
        // Inputs shaped like the front end's: levels around -60...-20 dB, floors 0...30 dB, features.
        for i in 0..<SpectralInput.count {
            let base: Float = i < 32 ? -40 : (i < 64 ? 15 : 2)
            input[i] = base + 20 * signal.noise() * (frame % 50 < 25 ? 1 : 0.3)
        }
        let fast = input.withUnsafeBufferPointer { net.logit($0.baseAddress!, state) }
        let reference = plain.step(input)
        worst = max(worst, abs(Double(fast) - reference))
    }
    // The fast exp/tanh are accurate to about 1e-4 relative; over a GRU's 200 steps the logits agree closely.
    #expect(worst < 2e-3, "largest logit difference \(worst)")
}

@Test func networkWeightsDecodeToTheShapesTheyDeclare() {
    let W = SpectralNetworkWeights.live
    let n = decodeBase64Floats(W.base64).count
    let expected = 2 * W.inputCount + W.conv1 * W.inputCount * W.kernel + W.conv1 + W.conv2 * W.conv1 * W.kernel
        + W.conv2 + 3 * W.hidden * W.conv2 + 3 * W.hidden * W.hidden + 6 * W.hidden + W.hidden + 1
    #expect(n == expected)
    #expect(W.inputCount == SpectralInput.count)
    #expect(decodeBase64Floats("AACAPwAAAMA=") == [1, -2])     // 1.0, -2.0 little-endian
    #expect(decodeBase64Floats("AACA\nPwAA\nAMA=") == [1, -2])  // line breaks are skipped
}

@Test func melBandsCoverTheSpectrumWithoutEmptyBands() {
    let t = MelBands.table
    #expect(t.firstBin.count == MelBands.count)
    #expect(t.binCount.allSatisfy { $0 >= 1 })
    // Centres rise: each band starts no earlier than the one before, and the last reaches 8 kHz.
    for m in 1..<MelBands.count { #expect(t.firstBin[m] >= t.firstBin[m - 1]) }
    #expect(t.firstBin[MelBands.count - 1] + t.binCount[MelBands.count - 1] >= 240)
    #expect(t.firstBin[0] <= 3)
}

/// A live detector's decisions and a detector whose network waits `lookahead` frames, on the
/// same samples: a tone, noise, a stretch of digital silence, then voice-like bursts.
@Test func lookaheadHandsOutEveryFrameInOrderWithTheOutputSoManyFramesLater() throws {
    let lookahead = 7
    var weights = SpectralNetworkWeights.live
    weights.lookahead = lookahead
    let delayedNetwork = SpectralNetwork(weights)
    var signal = Signal(seed: 7)
    var samples = Signal.sine(220, rate: 16_000, count: 8_000, amplitude: 0.2)
    samples += (0..<8_000).map { _ in 0.05 * signal.noise() }
    samples += [Float](repeating: 0, count: 3_200)    // 20 frames of digital silence
    samples += (0..<16_000).map { i in (i / 1_600) % 2 == 0 ? 0.3 * signal.noise() * Float(sin(Double(i) * 0.05)) : 0.01 * signal.noise() }
    let live = runVAD(samples)
    var vad = try VoiceActivityDetector(sampleRate: 16_000, network: delayedNetwork)
    #expect(vad.lookaheadFrames == lookahead)
    var delayed: [VADDecision] = []
    samples.withUnsafeBufferPointer { vad.process($0) { delayed.append($0) } }
    let beforeFinish = delayed.count
    vad.finish { delayed.append($0) }
    #expect(beforeFinish == live.count - lookahead, "the last \(lookahead) frames wait for the end")
    #expect(delayed.map(\.frameIndex) == Array(0..<live.count), "every frame once, in order")
    // Where the sound goes on for `lookahead` more analysed frames, a frame's decision is the
    // live network's output that many frames later; the silent frames are 0 in both.
    let silent = Set(live.filter { $0.evidence.energyDbov < -90 }.map(\.frameIndex))
    #expect(silent.count >= 19)
    var compared = 0
    for t in 0..<live.count - lookahead where !silent.contains(t) {
        let later = (t + 1...t + lookahead)
        guard later.allSatisfy({ !silent.contains($0) }) else { continue }
        #expect(delayed[t].probability == live[t + lookahead].probability, "frame \(t)")
        #expect(delayed[t].evidence == live[t].evidence)
        compared += 1
    }
    #expect(compared > live.count / 2)
    for t in silent { #expect(delayed[t].probability == 0) }
}
