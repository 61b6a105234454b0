import Foundation
import Testing
import ParleyCodecs
import ParleyJitter
import ParleySimulation

/// 20 ms Opus packets (48 kHz mono, FEC on) of a voiced signal with pauses.
func opusTestFrames(count: Int) throws -> [[UInt8]] {
    var encoder = try OpusEncoder(sampleRate: 48_000, channels: 1, application: .voip)
    encoder.inbandFEC = true
    try encoder.setExpectedPacketLossPercent(10)
    var frames: [[UInt8]] = []
    var pcm = [Int16](repeating: 0, count: 960)
    var packet = [UInt8](repeating: 0, count: 1500)
    var phase = 0.0
    for f in 0..<count {
        for i in 0..<960 {
            let t = Double(f * 960 + i) / 48_000
            let f0: Double = 130 + 30 * sin(3 * t)
            phase += 2 * Double.pi * f0 / 48_000
            var v = 0.0
            for h in 1...5 { v += sin(Double(h) * phase) / Double(h) }
            pcm[i] = Int16(t.truncatingRemainder(dividingBy: 1.5) < 1.1 ? 8000 * v : 0)
        }
        let n = try pcm.withUnsafeBufferPointer { p in try packet.withUnsafeMutableBytes { try encoder.encode(p, into: $0) } }
        frames.append(Array(packet[0..<n]))
    }
    return frames
}

@Test func opusReplayConcealsLossAndRecoversWithFEC() throws {
    let frames = try opusTestFrames(count: 100)
    let trace = NetworkSimulator.generate(NetworkScenario.named("gaussian-loss")!, seed: 11, seconds: 20)
    var config = JitterBufferConfiguration()
    config.sampleRate = 48_000
    var decoder = try OpusJitterDecoder(sampleRate: 48_000, channels: 1)
    let r = try TraceReplay.run(trace, payloads: frames, configuration: config, decoder: &decoder)
    let lost = trace.filter { $0.arrivalMs == nil }.count
    #expect(lost > 5)
    #expect(r.outcomes.filter { $0 == .lost }.count == lost)
    #expect(r.statistics.fecRecovered > 0)
    #expect(r.statistics.concealmentEvents > 0)
    #expect(r.lateLossRate < 0.01)
    #expect(r.statistics.jitterBufferEmittedCount > 900 * 960 - r.statistics.removedSamplesForAcceleration)
}

@Test func opusDecoderConcealsOnlyWholeQuanta() throws {
    var decoder = try OpusJitterDecoder(sampleRate: 48_000, channels: 1)
    let frames = try opusTestFrames(count: 3)
    var out = [Int16](repeating: 0, count: 5760)
    let n = frames[0].withUnsafeBytes { p in out.withUnsafeMutableBufferPointer { decoder.decode(p, into: $0) } }
    #expect(n == 960)
    // 7 ms is not a multiple of 2.5 ms: 5 ms are concealed, the buffer pads the rest.
    let c = out.withUnsafeMutableBufferPointer { decoder.conceal(into: $0, samplesPerChannel: 336) }
    #expect(c == 240)
    #expect(frames[1].withUnsafeBytes { p in out.withUnsafeMutableBufferPointer { decoder.decodeFEC(fromNext: p, into: $0, samplesPerChannel: 960) } } == 960)
    let garbage: [UInt8] = [0xff, 0xff, 0xff]
    #expect(garbage.withUnsafeBytes { p in out.withUnsafeMutableBufferPointer { decoder.decode(p, into: $0) } } == nil)
}
