// Media benchmarks: WAV reading through ParleyMedia's streaming parser against libsndfile
// reading the same file, and the band-limited Resampler against libsoxr on the same audio.
// Figures are ns per 10 ms of audio (one call each: 160 frames read at 16 kHz, 480 input
// frames resampled from 48 kHz). `-fast` is the Resampler with aliasIntoTransitionBand (stopband
// from 1.1 Nyquist). libsoxr MQ (16-bit, medium roll-off) is the baseline.

import CSoxr
import Foundation
import ParleyMedia

/// Benchmarks for the media suite.
func mediaBenchmarks() -> [Benchmark] {
    wavReadBenchmarks() + resampleBenchmarks()
}

/// 60 s of 16 kHz mono speech (SampleMedia's clip, looped) written to a temporary WAV once
/// (removed at exit).
private func longSpeechWAV() -> String {
    let path = benchTemporaryFile("speech-16k", extension: "wav")
    do {
        var r = try WAVReader(path: sampleMediaDirectory.appendingPathComponent("speech/speech-16k.wav").path)
        var clip = [Int16](repeating: 0, count: r.frameCount ?? 0)
        _ = try r.read(into: &clip)
        var w = try WAVWriter(path: path, format: WAVFormat(sampleRate: 16_000, channels: 1))
        var written = 0
        while written < 60 * 16_000 {
            let n = min(clip.count, 60 * 16_000 - written)
            try w.write(Array(clip[0..<n]))
            written += n
        }
        try w.close()
    } catch {
        fatalError("media bench: cannot prepare the WAV file: \(error)")
    }
    return path
}

private func wavReadBenchmarks() -> [Benchmark] {
    let path = longSpeechWAV()
    let blocks = 6000   // 60 s in 10 ms reads
    let swift = Benchmark(name: "media/wav-read-16k", baseline: "media/wav-read-16k-libsndfile",
                          iterations: blocks) {
        var buffer = [Float](repeating: 0, count: 160)
        var sum: UInt64 = 0
        do {
            var r = try WAVReader(path: path)
            while try r.read(into: &buffer) > 0 { sum &+= UInt64(buffer[17].bitPattern) }
        } catch { fatalError("\(error)") }
        return sum
    }
    let c = Benchmark(name: "media/wav-read-16k-libsndfile", iterations: blocks) {
        var buffer = [Float](repeating: 0, count: 160)
        var sum: UInt64 = 0
        do {
            let r = try AudioFileReader(path: path)
            while try r.read(into: &buffer) > 0 { sum &+= UInt64(buffer[17].bitPattern) }
        } catch { fatalError("\(error)") }
        return sum
    }
    return [swift, c]
}

/// One second of 48 kHz speech (SampleMedia's 48 kHz clip) as Float.
private func speech48k() -> [Float] {
    do {
        var r = try WAVReader(path: sampleMediaDirectory.appendingPathComponent("speech/speech-48k.wav").path)
        var s = [Float](repeating: 0, count: 48_000)
        _ = try r.read(into: &s)
        return s
    } catch {
        fatalError("media bench: cannot read the 48 kHz speech: \(error)")
    }
}

/// A libsoxr stream converting Float mono from `inRate` to `outRate` at `quality`.
private final class SoxrStream {
    let handle: soxr_t
    init(inRate: Double, outRate: Double, quality: UInt) {
        var q = soxr_quality_spec(UInt(quality), 0)
        var err: soxr_error_t?
        guard let h = soxr_create(inRate, outRate, 1, &err, nil, &q, nil) else {
            fatalError("soxr_create failed")
        }
        handle = h
    }
    func process(_ input: UnsafePointer<Float>, _ count: Int, _ output: UnsafeMutablePointer<Float>, _ capacity: Int) -> Int {
        var done = 0, produced = 0
        _ = soxr_process(handle, input, count, &done, output, capacity, &produced)
        return produced
    }
    deinit { soxr_delete(handle) }
}

private func resampleBenchmarks() -> [Benchmark] {
    let input = speech48k()
    let blocks = input.count / 480
    var resampler = try! Resampler(inputRate: 48_000, outputRate: 16_000, maxInputFrames: 480)  // valid settings
    var out = [Float](repeating: 0, count: resampler.maxOutputFrames(forInput: 480))
    let swift = Benchmark(name: "media/resample-48k-to-16k", baseline: "media/resample-48k-to-16k-soxr-mq",
                          iterations: blocks) {
        var sum: UInt64 = 0
        input.withUnsafeBufferPointer { all in
            out.withUnsafeMutableBufferPointer { o in
                for b in 0..<blocks {
                    // Mono blocks of maxInputFrames into a buffer of maxOutputFrames: cannot throw.
                    let n = try! resampler.process(UnsafeBufferPointer(rebasing: all[(b * 480)..<((b + 1) * 480)]), into: o)
                    sum &+= UInt64(n) &+ UInt64(o[0].bitPattern)
                }
            }
        }
        return sum
    }
    var fastResampler = try! Resampler(inputRate: 48_000, outputRate: 16_000, maxInputFrames: 480,
                                  aliasIntoTransitionBand: true)
    var fastOut = out
    let fast = Benchmark(name: "media/resample-48k-to-16k-fast", baseline: "media/resample-48k-to-16k-soxr-mq",
                         iterations: blocks) {
        var sum: UInt64 = 0
        input.withUnsafeBufferPointer { all in
            fastOut.withUnsafeMutableBufferPointer { o in
                for b in 0..<blocks {
                    let n = try! fastResampler.process(UnsafeBufferPointer(rebasing: all[(b * 480)..<((b + 1) * 480)]), into: o)
                    sum &+= UInt64(n) &+ UInt64(o[0].bitPattern)
                }
            }
        }
        return sum
    }
    func soxr(_ name: String, quality: UInt) -> Benchmark {
        let stream = SoxrStream(inRate: 48_000, outRate: 16_000, quality: quality)
        var soxOut = [Float](repeating: 0, count: 1024)
        return Benchmark(name: name, iterations: blocks) {
            var sum: UInt64 = 0
            input.withUnsafeBufferPointer { all in
                soxOut.withUnsafeMutableBufferPointer { o in
                    for b in 0..<blocks {
                        let n = stream.process(all.baseAddress! + b * 480, 480, o.baseAddress!, o.count)
                        sum &+= UInt64(n) &+ UInt64(o[0].bitPattern)
                    }
                }
            }
            return sum
        }
    }
    return [swift, fast, soxr("media/resample-48k-to-16k-soxr-mq", quality: UInt(SOXR_MQ)),
            soxr("media/resample-48k-to-16k-soxr-hq", quality: UInt(SOXR_HQ))]
}
