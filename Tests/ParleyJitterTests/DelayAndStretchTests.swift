import Foundation
import Testing
@testable import ParleyJitter
import ParleySimulation

@Test func delayQuantileMatchesAKnownDistribution() throws {
    var e = try DelayEstimator(forgetFactor: 0.9999)
    // Uniform 0...99 ms above a flat baseline of 50 ms.
    for i in 0..<5000 { e.add(delayMs: 50 + Double((i * 37) % 100), mediaMs: Double(i) * 20) }
    #expect(abs(e.quantile(0.5) - 50) <= 2)
    #expect(abs(e.quantile(0.95) - 95) <= 2)
    #expect(abs(e.slope) < 0.001)
}

@Test(arguments: [0.025, -0.025, 0.0005])
func driftLineFollowsClockSkew(slope: Double) {
    var e = DelayEstimator()
    var rng = Xoshiro256(seed: 5)
    for i in 0..<1500 {
        let m = Double(i) * 20
        e.add(delayMs: 40 + slope * m + 30 * rng.uniform(), mediaMs: m)
    }
    #expect(abs(e.slope - slope) < 0.002, "slope \(e.slope)")
    // The residual quantile stays the jitter's, not the accumulated drift.
    #expect(e.quantile(0.98) < 40)
}

@Test func forgettingFollowsADelayDrop() throws {
    var e = try DelayEstimator(forgetFactor: 0.99)
    for i in 0..<500 { e.add(delayMs: 50 + Double(i % 2) * 100, mediaMs: Double(i) * 20) }
    let before = e.quantile(0.9)
    for i in 500..<1500 { e.add(delayMs: 50 + Double(i % 2) * 10, mediaMs: Double(i) * 20) }
    #expect(before > 90)
    #expect(e.quantile(0.9) < 20)
}

/// A 20 ms block of a 200 Hz harmonic signal at 16 kHz (period 80 samples).
func voicedBlock(count: Int = 320) -> [Int16] {
    (0..<count).map { i in
        let p = 2 * Double.pi * Double(i) / 80
        return Int16(6000 * sin(p) + 2000 * sin(2 * p + 0.3))
    }
}

func maxStep(_ x: [Int16]) -> Int {
    var m = 0
    for i in 1..<x.count { m = max(m, abs(Int(x[i]) - Int(x[i - 1]))) }
    return m
}

@Test func accelerateRemovesWholePitchPeriods() {
    var x = voicedBlock() + [Int16](repeating: 0, count: 320)
    let step = maxStep(voicedBlock())
    let n = x.withUnsafeMutableBufferPointer { b -> Int in
        let l = TimeStretch.chooseLength(b, count: 320, channels: 1, sampleRate: 16_000, wantedSamples: 100)
        #expect(l % 80 == 0 && l > 0, "lag \(l)")
        return TimeStretch.accelerate(b, count: 320, channels: 1, length: l)
    }
    #expect(n < 320)
    // The result is still the same periodic signal: no step larger than the signal's own.
    #expect(maxStep(Array(x[0..<n])) <= step + 20)
}

@Test func decelerateRepeatsWholePitchPeriods() {
    var x = voicedBlock() + [Int16](repeating: 0, count: 320)
    let n = x.withUnsafeMutableBufferPointer { b -> Int in
        let l = TimeStretch.chooseLength(b, count: 320, channels: 1, sampleRate: 16_000, wantedSamples: 100)
        return TimeStretch.decelerate(b, count: 320, channels: 1, length: l)
    }
    #expect(n > 320)
    #expect(maxStep(Array(x[0..<n])) <= maxStep(voicedBlock()) + 20)
}

@Test func noiseIsNotSplicedButSilenceIs() {
    var rng = Xoshiro256(seed: 9)
    var noise = (0..<320).map { _ in Int16(Int(rng.next() % 20_000) - 10_000) }
    let ln = noise.withUnsafeMutableBufferPointer {
        TimeStretch.chooseLength($0, count: 320, channels: 1, sampleRate: 16_000, wantedSamples: 100)
    }
    #expect(ln == 0)
    var quiet = [Int16](repeating: 3, count: 320)
    let lq = quiet.withUnsafeMutableBufferPointer {
        TimeStretch.chooseLength($0, count: 320, channels: 1, sampleRate: 16_000, wantedSamples: 100)
    }
    #expect(lq == 100)
}

@Test func delayEstimatorSettingsOutOfRangeAreErrors() throws {
    for f in [0, 1, -0.5, 1.5] {
        #expect(throws: JitterConfigurationError.self) { try DelayEstimator(forgetFactor: f) }
    }
    #expect(throws: JitterConfigurationError.self) { try DelayEstimator(forgetFactor: 0.99, windowMs: 0) }
    #expect(throws: JitterConfigurationError.self) { try DelayEstimator(forgetFactor: 0.99, windows: 1) }
    _ = try DelayEstimator(forgetFactor: 0.5, windowMs: 1, windows: 2)
}
