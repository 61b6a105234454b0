import Foundation
import Testing
@testable import ParleyCore

/// A deterministic pseudo-random generator (xorshift64*) so tests are repeatable.
private struct TestRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func int(in range: ClosedRange<Int64>) -> Int64 {
        state ^= state >> 12; state ^= state << 25; state ^= state >> 27
        let span = UInt64(range.upperBound - range.lowerBound) + 1
        return range.lowerBound + Int64(bitPattern: (state &* 2_685_821_657_736_338_717) % span)
    }
}

/// Resamples `seconds` of a sine (amplitude 0.5) in 480-frame blocks, flushing at the end.
private func resampleSine(from inRate: Int, to outRate: Int, frequency: Double, seconds: Double = 0.5,
                          fast: Bool = false) -> [Float] {
    var r = try! Resampler(inputRate: inRate, outputRate: outRate, maxInputFrames: 480, aliasIntoTransitionBand: fast)  // valid rates
    let n = Int(Double(inRate) * seconds)
    let input = (0..<n).map { Float(0.5 * sin(2 * Double.pi * frequency * Double($0) / Double(inRate))) }
    var out: [Float] = []
    var buf = [Float](repeating: 0, count: r.maxOutputFrames(forInput: 480))
    var i = 0
    while i < n {
        let m = min(480, n - i)
        let produced = input[i..<(i + m)].withUnsafeBufferPointer { src in
            buf.withUnsafeMutableBufferPointer { try! r.process(src, into: $0) }   // whole blocks, sized buffer
        }
        out += buf[0..<produced]
        i += m
    }
    let tail = buf.withUnsafeMutableBufferPointer { try! r.flush(into: $0) }   // maxOutputFrames(480) >= maxFlushFrames
    out += buf[0..<tail]
    return out
}

/// Over the middle of `y` (edges skipped), the level in dB (re the input sine's 0.5
/// amplitude) of: the component at `frequency`, everything else, and the error against the
/// ideal time-aligned output sine.
private func analyse(_ y: [Float], rate: Int, frequency: Double) -> (gainDB: Double, residualDB: Double, alignedErrorDB: Double) {
    let skip = rate / 10
    let range = skip..<(y.count - skip)
    // Least-squares fit of a sin + b cos at `frequency`, then what is left over.
    var ss = 0.0, sc = 0.0, cc = 0.0, ys = 0.0, yc = 0.0
    for k in range {
        let w = 2 * Double.pi * frequency * Double(k) / Double(rate)
        let s = sin(w), c = cos(w), v = Double(y[k])
        ss += s * s; sc += s * c; cc += c * c; ys += v * s; yc += v * c
    }
    let det = ss * cc - sc * sc
    let a = (ys * cc - yc * sc) / det, b = (yc * ss - ys * sc) / det
    var residual = 0.0, err = 0.0
    for k in range {
        let w = 2 * Double.pi * frequency * Double(k) / Double(rate)
        let v = Double(y[k])
        residual += (v - a * sin(w) - b * cos(w)) * (v - a * sin(w) - b * cos(w))
        err += (v - 0.5 * sin(w)) * (v - 0.5 * sin(w))
    }
    let n = Double(range.count), signalPower = 0.125   // (0.5)^2 / 2
    let amplitude = (a * a + b * b).squareRoot()
    return (20 * log10(amplitude / 0.5), 10 * log10(max(residual / n, 1e-30) / signalPower),
            10 * log10(max(err / n, 1e-30) / signalPower))
}

@Suite struct ResamplerTests {
    @Test(arguments: [(48_000, 16_000), (44_100, 16_000), (16_000, 48_000), (8_000, 16_000), (44_100, 48_000),
                      (12_000, 16_000), (24_000, 16_000), (32_000, 16_000)])
    func passbandIsFlatAndTimeAlignedToNinetyPercentOfNyquist(rates: (Int, Int)) {
        let nyquist = Double(min(rates.0, rates.1)) / 2
        var worstRipple = 0.0, worstResidual = -300.0, worstAligned = -300.0
        for fraction in [0.01, 0.1, 0.25, 0.4, 0.55, 0.7, 0.8, 0.85, 0.9] {
            let f = fraction * nyquist
            let y = resampleSine(from: rates.0, to: rates.1, frequency: f)
            let expected = Int((Double(rates.0) * 0.5 * Double(rates.1) / Double(rates.0)).rounded())
            #expect(abs(y.count - expected) <= 1, "output length \(y.count) vs \(expected)")
            let r = analyse(y, rate: rates.1, frequency: f)
            worstRipple = max(worstRipple, abs(r.gainDB))
            worstResidual = max(worstResidual, r.residualDB)
            worstAligned = max(worstAligned, r.alignedErrorDB)
        }
        print("resampler \(rates.0)->\(rates.1): passband ripple \(worstRipple) dB, residual \(worstResidual) dB, aligned error \(worstAligned) dB")
        #expect(worstRipple < 0.01, "passband ripple \(worstRipple) dB")
        // Everything but the sine (images, aliases, noise) is at least 80 dB down.
        #expect(worstResidual < -80, "residual \(worstResidual) dB")
        // And the output is the input signal at the same instants (no delay).
        #expect(worstAligned < -80, "aligned error \(worstAligned) dB")
    }

    @Test(arguments: [(48_000, 16_000), (44_100, 16_000), (44_100, 8_000), (32_000, 16_000), (24_000, 16_000)])
    func stopbandIsAtLeast80dBDownWhenDecimating(rates: (Int, Int)) {
        let outNyquist = Double(rates.1) / 2, inNyquist = Double(rates.0) / 2
        var worst = -300.0
        var f = outNyquist
        while f < inNyquist * 0.98 {
            let y = resampleSine(from: rates.0, to: rates.1, frequency: f, seconds: 0.3)
            let skip = rates.1 / 10
            let mid = y[skip..<(y.count - skip)]
            let power = mid.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(mid.count)
            worst = max(worst, 10 * log10(max(power, 1e-30) / 0.125))
            f += (inNyquist - outNyquist) / 9
        }
        print("resampler \(rates.0)->\(rates.1): worst stopband \(worst) dB")
        #expect(worst < -80, "stopband leak \(worst) dB")
    }

    @Test func fastDecimationKeepsThePassbandCleanAndRejectsFromOnePointOneNyquist() {
        var worstRipple = 0.0, worstResidual = -300.0, worstStop = -300.0
        for f in [100.0, 1000, 3000, 5000, 7000, 7200] {
            let r = analyse(resampleSine(from: 48_000, to: 16_000, frequency: f, fast: true), rate: 16_000, frequency: f)
            worstRipple = max(worstRipple, abs(r.gainDB)); worstResidual = max(worstResidual, r.residualDB)
        }
        for f in [8800.0, 10_000, 14_000, 20_000, 23_000] {
            let y = resampleSine(from: 48_000, to: 16_000, frequency: f, seconds: 0.3, fast: true)
            let mid = y[1600..<(y.count - 1600)]
            let power = mid.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(mid.count)
            worstStop = max(worstStop, 10 * log10(max(power, 1e-30) / 0.125))
        }
        print("resampler 48000->16000 fast: ripple \(worstRipple) dB, residual \(worstResidual) dB, stopband from 8.8 kHz \(worstStop) dB")
        #expect(worstRipple < 0.01)
        #expect(worstResidual < -80)
        #expect(worstStop < -80)
    }

    @Test func ratiosWithManyPhasesInterpolateAndStayClean() {
        // 44.1 kHz to 16.001 kHz: L = 16001 phases, beyond the table, so coefficients are
        // interpolated between 2048 phases.
        let y = resampleSine(from: 44_100, to: 16_001, frequency: 1000)
        let r = analyse(y, rate: 16_001, frequency: 1000)
        print("resampler 44100->16001: gain \(r.gainDB) dB, residual \(r.residualDB) dB")
        #expect(abs(r.gainDB) < 0.01)
        #expect(r.residualDB < -80, "residual \(r.residualDB) dB")
    }

    @Test func blockSizeDoesNotChangeTheOutput() {
        var rng = TestRandom(seed: 9)
        let input = (0..<2400).map { _ in Float(rng.int(in: -1000...1000)) / 1000 }
        func run(block: Int) -> [Float] {
            var r = try! Resampler(inputRate: 48_000, outputRate: 16_000, channels: 2, maxInputFrames: 4800)  // valid settings
            var out: [Float] = [], buf: [Float] = []
            var i = 0
            while i < input.count {
                let m = min(block * 2, input.count - i)
                let n = try! r.process(Array(input[i..<(i + m)]), into: &buf)   // whole stereo frames
                out += buf[0..<(n * 2)]
                i += m
            }
            return out
        }
        let a = run(block: 4800), b = run(block: 37), c = run(block: 1)
        #expect(a == b)
        #expect(a == c)
        #expect(a.count / 2 <= 400 && a.count / 2 >= 400 - 60)
    }
}

@Test func resamplerSettingsThatAreNotPositiveAreErrors() throws {
    #expect(throws: ResamplerConfigurationError.notPositive(parameter: "input rate", value: 0)) {
        try Resampler(inputRate: 0, outputRate: 16_000)
    }
    #expect(throws: ResamplerConfigurationError.notPositive(parameter: "output rate", value: -1)) {
        try Resampler(inputRate: 48_000, outputRate: -1)
    }
    #expect(throws: ResamplerConfigurationError.notPositive(parameter: "channels", value: 0)) {
        try Resampler(inputRate: 48_000, outputRate: 16_000, channels: 0)
    }
    #expect(throws: ResamplerConfigurationError.notPositive(parameter: "maxInputFrames", value: 0)) {
        try Resampler(inputRate: 48_000, outputRate: 16_000, maxInputFrames: 0)
    }
    let r = try Resampler(inputRate: 48_000, outputRate: 16_000, channels: 2, maxInputFrames: 480)
    #expect(r.maxOutputFrames(forInput: 480) >= 160)
}

@Test func blocksTheResamplerCannotTakeAreErrorsAndConsumeNothing() throws {
    var r = try Resampler(inputRate: 48_000, outputRate: 16_000, channels: 2, maxInputFrames: 480)
    var out = [Float](repeating: 0, count: r.maxOutputFrames(forInput: 480) * 2)
    let ok = [Float](repeating: 0.25, count: 960)
    func run(_ input: [Float], _ output: inout [Float]) throws(ResamplerBlockError) -> Int {
        try input.withUnsafeBufferPointer { (i) throws(ResamplerBlockError) -> Int in
            try output.withUnsafeMutableBufferPointer { (o) throws(ResamplerBlockError) -> Int in try r.process(i, into: o) }
        }
    }
    #expect(throws: ResamplerBlockError.partialFrame(samples: 3, channels: 2)) { try run([0, 0, 0], &out) }
    #expect(throws: ResamplerBlockError.inputTooLarge(frames: 481, maxInputFrames: 480)) {
        try run([Float](repeating: 0, count: 962), &out)
    }
    var small = [Float](repeating: 0, count: 10)
    #expect(throws: ResamplerBlockError.outputTooSmall(samples: 10, needed: r.maxOutputFrames(forInput: 480) * 2)) {
        try run(ok, &small)
    }
    #expect(throws: ResamplerBlockError.outputTooSmall(samples: 10, needed: r.maxFlushFrames * 2)) {
        try small.withUnsafeMutableBufferPointer { (o) throws(ResamplerBlockError) -> Int in try r.flush(into: o) }
    }
    // The refused blocks left no trace: the stream is the one a fresh converter gives.
    var fresh = try Resampler(inputRate: 48_000, outputRate: 16_000, channels: 2, maxInputFrames: 480)
    var expected: [Float] = []
    let n = try r.process(ok, into: &out), m = try fresh.process(ok, into: &expected)
    #expect(n == m && Array(out[0..<(2 * n)]) == Array(expected[0..<(2 * m)]))
}
