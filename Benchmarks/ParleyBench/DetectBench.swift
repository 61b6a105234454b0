import Foundation
import ParleyCall
import ParleyDetect

/// Benchmarks for the detect suite: how many times faster than real time `parley detect`'s
/// analysis runs on one core, over three minutes of 48 kHz speech and pauses.
///
/// - `detect/tracker-48k`: the live path alone (ParticipantTalkTracker: VAD + TalkDetector),
///   samples already in memory, fed in 10 ms frames.
/// - `detect/file-48k`: the offline path (OfflineDetector: file reading in blocks, then the same
///   tracker), over the same audio written as a 16-bit WAV file; its ratio to the tracker row
///   is the cost of reading the file (1.0 = free).
/// - `detect/two-files-1-job`, `detect/two-files-2-jobs`: the file twice, sequentially and on
///   two threads (what `--jobs 2` does); the ratio is the speed-up from the second core.
func detectBenchmarks() -> [Benchmark] {
    guard let fixture = DetectBenchFixture.make() else {
        FileHandle.standardError.write(Data("detect: SampleMedia/speech/speech-48k.wav not readable; skipped\n".utf8))
        return []
    }
    let seconds = Double(fixture.samples.count) / 48_000
    return [
        Benchmark(name: "detect/tracker-48k", unit: .realtimeFactor) {
            let start = DispatchTime.now().uptimeNanoseconds
            var tracker = try! ParticipantTalkTracker(sampleRate: 48_000)
            var events = 0
            fixture.samples.withUnsafeBufferPointer { all in
                var i = 0
                while i < all.count {
                    let n = min(480, all.count - i)
                    tracker.process(UnsafeBufferPointer(rebasing: all[i..<i + n]), onEvent: { _ in events += 1 })
                    i += n
                }
            }
            tracker.finish(onEvent: { _ in events += 1 })
            blackHole(events)
            return seconds / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        },
        Benchmark(name: "detect/file-48k", unit: .realtimeFactor, baseline: "detect/tracker-48k") {
            let start = DispatchTime.now().uptimeNanoseconds
            let result = try? OfflineDetector().analyze(OfflineDetectionRequest(path: fixture.path, participant: "bench"))
            blackHole(result?.tracks.first?.segments.count ?? -1)
            return seconds / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        },
        // `parley detect --jobs`: two files one after the other, then on two threads; the
        // ratio is the parallel speed-up (2.0 = perfect on two free cores).
        Benchmark(name: "detect/two-files-1-job", unit: .realtimeFactor) {
            twoFiles(fixture.path, seconds: seconds, parallel: false)
        },
        Benchmark(name: "detect/two-files-2-jobs", unit: .realtimeFactor, baseline: "detect/two-files-1-job") {
            twoFiles(fixture.path, seconds: seconds, parallel: true)
        },
    ]
}

/// Analyses the fixture file twice, sequentially or on two threads; audio seconds per second.
private func twoFiles(_ path: String, seconds: Double, parallel: Bool) -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    let analyse: @Sendable (Int) -> Void = { _ in
        let result = try? OfflineDetector().analyze(OfflineDetectionRequest(path: path, participant: "bench"))
        blackHole(result?.tracks.first?.segments.count ?? -1)
    }
    if parallel {
        DispatchQueue.concurrentPerform(iterations: 2, execute: analyse)
    } else {
        analyse(0); analyse(1)
    }
    return 2 * seconds / (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
}

/// Three minutes of 48 kHz mono audio: SampleMedia's 48 kHz speech alternating with 2 s of
/// quiet noise, in memory and as a WAV file in the temporary directory (removed at exit).
struct DetectBenchFixture {
    let samples: [Float]
    let path: String

    static func make() -> DetectBenchFixture? {
        let source = sampleMediaDirectory.appendingPathComponent("speech/speech-48k.wav")
        guard let speech = pcm16Samples(of: source), !speech.isEmpty else { return nil }
        var samples: [Float] = []
        let target = 180 * 48_000
        samples.reserveCapacity(target)
        var seed: UInt32 = 1
        while samples.count < target {
            samples += speech.prefix(target - samples.count)
            for _ in 0..<min(2 * 48_000, max(0, target - samples.count)) {
                seed = seed &* 1_664_525 &+ 1_013_904_223
                samples.append(Float(Int32(bitPattern: seed) >> 16) / 32768 * 0.003)
            }
        }
        let path = benchTemporaryFile("detect", extension: "wav")
        guard FileManager.default.createFile(atPath: path, contents: wav16(samples, sampleRate: 48_000)) else { return nil }
        return DetectBenchFixture(samples: samples, path: path)
    }

    /// The samples of a 16-bit PCM mono WAV (bench fixture only: finds the `data` chunk).
    static func pcm16Samples(of url: URL) -> [Float]? {
        guard let d = try? Data(contentsOf: url), d.count > 12 else { return nil }
        func u32(_ o: Int) -> Int { Int(d[o]) | Int(d[o + 1]) << 8 | Int(d[o + 2]) << 16 | Int(d[o + 3]) << 24 }
        var o = 12
        while o + 8 <= d.count {
            let size = u32(o + 4)
            if d[o..<o + 4].elementsEqual("data".utf8) {
                var out: [Float] = []
                var i = o + 8
                while i + 1 < min(d.count, o + 8 + size) {
                    out.append(Float(Int16(bitPattern: UInt16(d[i]) | UInt16(d[i + 1]) << 8)) / 32768)
                    i += 2
                }
                return out
            }
            o += 8 + size + (size & 1)
        }
        return nil
    }

    /// A 16-bit PCM mono WAV file's bytes.
    static func wav16(_ samples: [Float], sampleRate: Int) -> Data {
        var d = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        d.append(contentsOf: Array("RIFF".utf8)); u32(UInt32(36 + 2 * samples.count))
        d.append(contentsOf: Array("WAVEfmt ".utf8)); u32(16); u16(1); u16(1)
        u32(UInt32(sampleRate)); u32(UInt32(2 * sampleRate)); u16(2); u16(16)
        d.append(contentsOf: Array("data".utf8)); u32(UInt32(2 * samples.count))
        for s in samples { u16(UInt16(bitPattern: Int16(max(-32768, min(32767, (s * 32768).rounded()))))) }
        return d
    }
}
