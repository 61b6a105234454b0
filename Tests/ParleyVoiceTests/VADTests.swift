import Testing
@testable import ParleyVoice

/// A deterministic test signal generator (LCG noise, sines), no Foundation.
struct Signal {
    var seed: UInt32 = 12345
    mutating func noise() -> Float {
        seed = seed &* 1_664_525 &+ 1_013_904_223
        return Float(Int32(bitPattern: seed)) / Float(Int32.max)
    }
    static func sine(_ f: Double, rate: Int, count: Int, amplitude: Float) -> [Float] {
        (0..<count).map { amplitude * Float(cosApprox(2 * Double.pi * f * Double($0) / Double(rate) - Double.pi / 2)) }
    }
}

func runVAD(_ samples: [Float], rate: Int = 16_000, chunk: Int = 160) -> [VADDecision] {
    var vad = try! VoiceActivityDetector(sampleRate: rate)
    var out: [VADDecision] = []
    samples.withUnsafeBufferPointer { b in
        var i = 0
        while i < b.count {
            let n = min(chunk, b.count - i)
            vad.process(UnsafeBufferPointer(rebasing: b[i..<i + n])) { out.append($0) }
            i += n
        }
    }
    return out
}

@Test func unsupportedRatesThrowATypedError() {
    for rate in [0, 11_025, 22_050, 44_100, 96_000, -16_000] {
        #expect(throws: VADError.unsupportedSampleRate(rate)) { try VoiceActivityDetector(sampleRate: rate) }
    }
}

@Test func everySupportedRateGivesOneDecisionPer10ms() throws {
    for rate in VoiceActivityDetector.supportedSampleRates {
        var g = Signal()
        let samples = (0..<rate).map { _ in 0.01 * g.noise() }
        let d = runVAD(samples, rate: rate, chunk: 97)
        #expect(d.count == 100, "rate \(rate)")
        #expect(d.enumerated().allSatisfy { $0.element.frameIndex == $0.offset })
        #expect(abs(d[37].time - 0.37) < 1e-12)
        #expect(d.allSatisfy { $0.probability >= 0 && $0.probability <= 1 })
    }
}

@Test func decisionsDoNotDependOnHowTheInputIsSplit() {
    var g = Signal()
    let samples = (0..<48_000).map { i in 0.3 * g.noise() * Float((i / 4000) % 2) }
    let a = runVAD(samples, chunk: 160)
    let b = runVAD(samples, chunk: 1)
    let c = runVAD(samples, chunk: 7_919)
    #expect(a == b)
    #expect(a == c)
}

@Test func nonFiniteSamplesAreCountedAndDoNotPoisonTheState() {
    var vad = try! VoiceActivityDetector(sampleRate: 48_000)
    var bad = [Float](repeating: 0.1, count: 4_800)
    bad[10] = .nan; bad[20] = .infinity; bad[30] = -.infinity; bad[40] = .signalingNaN; bad[50] = 1e30
    var decisions: [VADDecision] = []
    bad.withUnsafeBufferPointer { b in vad.process(b) { decisions.append($0) } }
    #expect(vad.nonFiniteSampleCount == 4)
    var g = Signal()
    let after = (0..<48_000).map { _ in 0.05 * g.noise() }
    after.withUnsafeBufferPointer { b in vad.process(b) { decisions.append($0) } }
    #expect(decisions.count == 110)
    for d in decisions {
        #expect(d.probability.isFinite && d.evidence.energyDbov.isFinite && d.evidence.snrDb.isFinite
                && d.evidence.harmonicity.isFinite && d.evidence.modulationDb.isFinite
                && d.evidence.noiseFloorDbov.isFinite && d.evidence.spectralFlux.isFinite)
    }
}

@Test func resetRestartsFramesAndReproducesTheSameDecisions() {
    var g = Signal()
    let samples = (0..<16_000).map { _ in 0.2 * g.noise() }
    var vad = try! VoiceActivityDetector(sampleRate: 16_000)
    let first = vad.process(samples)
    vad.reset()
    let second = vad.process(samples)
    #expect(first == second)
    #expect(second.first?.frameIndex == 0)
}

@Test func copiesAreIndependent() {
    var g = Signal()
    let a = (0..<8_000).map { _ in 0.2 * g.noise() }
    let b = (0..<8_000).map { _ in 0.01 * g.noise() }
    var vad = try! VoiceActivityDetector(sampleRate: 16_000)
    _ = vad.process(a)
    var copy = vad
    let fromCopy = copy.process(b)
    let fromOriginal = vad.process(b)
    #expect(fromCopy == fromOriginal)
    // Diverge: the original sees silence, the copy a loud signal; the original is unaffected.
    var fresh = try! VoiceActivityDetector(sampleRate: 16_000)
    _ = fresh.process(a); _ = fresh.process(b)
    _ = copy.process(a.map { $0 * 5 })
    let zeros = [Float](repeating: 0, count: 1_600)
    #expect(vad.process(zeros) == fresh.process(zeros))
}

@Test func silenceAndDigitalSilenceAreNotSpeech() {
    let d = runVAD([Float](repeating: 0, count: 32_000))
    #expect(d.allSatisfy { !$0.isSpeech })
    #expect(d.last!.evidence.energyDbov <= -99)
}

@Test func realFFTMatchesADirectDFTAndInverts() {
    let n = 64
    let fft = RealFFT(length: n)
    var g = Signal()
    var x = (0..<n).map { _ in g.noise() }
    var re = [Float](repeating: 0, count: n / 2 + 1), im = re
    x.withUnsafeMutableBufferPointer { xb in
        re.withUnsafeMutableBufferPointer { rb in
            im.withUnsafeMutableBufferPointer { ib in
                fft.forward(xb.baseAddress!, re: rb.baseAddress!, im: ib.baseAddress!)
            }
        }
    }
    for k in 0...(n / 2) {
        var sr = 0.0, si = 0.0
        for t in 0..<n {
            let a = -2 * Double.pi * Double(k * t) / Double(n)
            sr += Double(x[t]) * cosApprox(a); si += Double(x[t]) * cosApprox(a - Double.pi / 2)
        }
        #expect(abs(Double(re[k]) - sr) < 1e-3 && abs(Double(im[k]) - si) < 1e-3, "bin \(k)")
    }
    var y = [Float](repeating: 0, count: n)
    re.withUnsafeBufferPointer { rb in
        im.withUnsafeBufferPointer { ib in
            y.withUnsafeMutableBufferPointer { fft.inverse(re: rb.baseAddress!, im: ib.baseAddress!, output: $0.baseAddress!) }
        }
    }
    for t in 0..<n { #expect(abs(y[t] - x[t]) < 1e-5) }
}

@Test func tonesAboveTheFrontEndsBandAreNotHeardAtHigherRates() {
    // Without the resampler's low-pass these would fold into the 16 kHz front end's band
    // (12 kHz at 48 kHz to 4 kHz, 10 kHz at 32 and 24 kHz to 6 kHz).
    for (rate, f) in [(48_000, 12_000.0), (32_000, 10_000.0), (24_000, 10_000.0)] {
        func level(_ frequency: Double) -> Float {
            var vad = try! VoiceActivityDetector(sampleRate: rate)   // a supported rate
            return vad.process(Signal.sine(frequency, rate: rate, count: rate / 2, amplitude: 0.5)).last!.evidence.energyDbov
        }
        let pass = level(1_000), alias = level(f)
        #expect(pass - alias > 55, "\(rate) Hz: 1 kHz at \(pass) dBov, \(Int(f)) Hz at \(alias) dBov")
    }
}
