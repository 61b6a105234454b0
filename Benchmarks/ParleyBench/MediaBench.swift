// Media benchmarks: WAV reading through ParleyMedia's streaming parser against libsndfile
// reading the same file, AAC decoding through AudioFileReader's FFmpeg backend against the
// `ffmpeg` command decoding the same file, and the band-limited Resampler against libsoxr on
// the same audio. Figures are ns per 10 ms of audio (one call each: 160 frames read at 16 kHz,
// 480 frames decoded or input frames resampled at 48 kHz). `-fast` is the Resampler with aliasIntoTransitionBand (stopband
// from 1.1 Nyquist). libsoxr MQ (16-bit, medium roll-off) is the baseline.

import CSoxr
import Foundation
import ParleyMedia

/// Benchmarks for the media suite.
func mediaBenchmarks() -> [Benchmark] {
    wavReadBenchmarks() + aacDecodeBenchmarks() + resampleBenchmarks()
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
        audioFileReaderChecksum(path, blockSamples: 160)
    }
    return [swift, c]
}

/// 60 s of 48 kHz mono speech (SampleMedia's clip, looped) encoded to AAC in an .m4a file by
/// the `ffmpeg` command once (removed at exit).
private func longSpeechM4A() -> String {
    let path = benchTemporaryFile("speech-48k", extension: "m4a")
    let wav = sampleMediaDirectory.appendingPathComponent("speech/speech-48k.wav").path
    let status = runFFmpeg(["-v", "error", "-y", "-stream_loop", "-1", "-i", wav, "-t", "60", "-c:a", "aac",
                            "-b:a", "96k", path])
    if status != 0 { fatalError("media bench: ffmpeg cannot make the AAC file (status \(status))") }
    return path
}

/// Runs `/usr/bin/ffmpeg -nostdin ARGS` with its output discarded; returns its exit status.
private func runFFmpeg(_ args: [String]) -> Int32 {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    p.arguments = ["-nostdin"] + args
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    do { try p.run() } catch { return -1 }
    p.waitUntilExit()
    return p.terminationStatus
}

/// Reads all of `path` through `AudioFileReader` in blocks of `blockSamples`; a checksum of
/// what was read, so the reads are not optimised away.
private func audioFileReaderChecksum(_ path: String, blockSamples: Int) -> UInt64 {
    var buffer = [Float](repeating: 0, count: blockSamples)
    var sum: UInt64 = 0
    do {
        let r = try AudioFileReader(path: path)
        while try r.read(into: &buffer) > 0 { sum &+= UInt64(buffer[17].bitPattern) }
    } catch { fatalError("\(error)") }
    return sum
}

private func aacDecodeBenchmarks() -> [Benchmark] {
    let path = longSpeechM4A()
    let blocks = 6000   // 60 s in 10 ms reads
    let backend = Benchmark(name: "media/aac-decode-48k", baseline: "media/aac-decode-48k-ffmpeg-cli",
                            iterations: blocks) {
        audioFileReaderChecksum(path, blockSamples: 480)
    }
    // The whole `ffmpeg -i FILE -f s16le -` process: start-up, demuxing, decoding, conversion.
    let cli = Benchmark(name: "media/aac-decode-48k-ffmpeg-cli", iterations: blocks) {
        let status = runFFmpeg(["-v", "error", "-i", path, "-f", "s16le", "-"])
        if status != 0 { fatalError("media bench: ffmpeg decode failed (status \(status))") }
        return UInt64(status)
    }
    return [backend, cli]
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
