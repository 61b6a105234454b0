import Foundation
import Testing
@testable import ParleyMedia

/// Runs a command-line tool (sox/ffmpeg are installed by scripts/setup.sh) to make a fixture.
private func run(_ tool: String, _ args: [String]) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/\(tool)")
    p.arguments = args
    p.standardError = FileHandle.nullDevice
    p.standardOutput = FileHandle.nullDevice
    try p.run()
    p.waitUntilExit()
    if p.terminationStatus != 0 { throw CocoaError(.fileWriteUnknown) }
}

/// Reads a whole file through AudioFileReader in 1000-frame blocks.
private func readAll(_ r: AudioFileReader) throws -> [Float] {
    var out: [Float] = []
    var buf = [Float](repeating: 0, count: 1000 * r.channels)
    while true {
        let n = try r.read(into: &buf)
        if n == 0 { return out }
        out += buf[0..<(n * r.channels)]
    }
}

@Suite struct AudioFileReaderTests {
    @Test func readsSampleMediaWAVLikeTheWAVReader() throws {
        let path = sampleMedia + "/speech/speech-16k.wav"
        let r = try AudioFileReader(path: path)
        #expect(r.sampleRate == 16_000 && r.channels == 1)
        #expect(r.formatName.contains("WAV"))
        let viaSndfile = try readAll(r)
        var w = try WAVReader(path: path)
        var viaWAV = [Float](repeating: 0, count: w.frameCount!)
        #expect(try w.read(into: &viaWAV) == viaWAV.count)
        #expect(viaSndfile == viaWAV)
    }

    @Test(arguments: ["flac", "ogg", "opus", "mp3", "aiff", "m4a", "mp4", "webm", "mkv", "mka"])
    func decodesCompressedAndOtherContainers(ext: String) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/tone.\(ext)"
        let codec: [String] = ext == "opus" ? ["-c:a", "libopus"] : ext == "ogg" ? ["-c:a", "libvorbis"] : []
        try run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.5:sample_rate=48000",
                           "-ac", "2"] + codec + ["-y", path])
        let r = try AudioFileReader(path: path)
        #expect(r.channels == 2)
        #expect(r.sampleRate == 48_000)
        let samples = try readAll(r)
        // About 0.5 s (codecs may add priming or padding), and a real tone, not silence.
        #expect(abs(samples.count / 2 - 24_000) < 3000)
        let rms = (samples.reduce(0) { $0 + $1 * $1 } / Float(samples.count)).squareRoot()
        #expect(rms > 0.05, "\(ext) rms \(rms)")
    }

    @Test func badInputsGetTypedErrors() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(mediaError { _ = try AudioFileReader(path: dir) } == .notARegularFile(path: dir, kind: "a directory"))
        let empty = dir + "/empty.flac"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        #expect(mediaError { _ = try AudioFileReader(path: empty) } == .empty(path: empty))
        let text = dir + "/notes.wav"
        _ = FileManager.default.createFile(atPath: text, contents: Data("this is not audio at all, just text\n".utf8))
        guard case .unsupported(text, let what)? = mediaError({ _ = try AudioFileReader(path: text) }) else {
            Issue.record("text file"); return
        }
        #expect(what.contains("libsndfile"))
        guard case .io(_, "open", _, _)? = mediaError({ _ = try AudioFileReader(path: dir + "/missing.wav") }) else {
            Issue.record("missing"); return
        }
    }

    @Test func ffmpegReadsTheTracksOfAContainerAndTheAudioOfAVideo() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let tracks = "\(dir)/tracks.mkv"
        try run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1:sample_rate=48000",
                           "-f", "lavfi", "-i", "sine=frequency=880:duration=1:sample_rate=16000",
                           "-f", "lavfi", "-i", "anullsrc=r=44100:cl=stereo", "-t", "1",
                           "-map", "0:a", "-map", "1:a", "-map", "2:a", "-c:a", "flac",
                           "-metadata:s:a:0", "title=alice", "-metadata:s:a:1", "language=fra", "-y", tracks])
        let infos = try AudioFileReader.audioTracks(path: tracks)
        #expect(infos.map(\.index) == [0, 1, 2])
        #expect(infos.map(\.title) == ["alice", nil, nil])
        #expect(infos.map(\.language) == [nil, "fra", nil])
        #expect(infos.map(\.sampleRate) == [48_000, 16_000, 44_100])
        #expect(infos.map(\.channels) == [1, 1, 2])
        let second = try AudioFileReader(path: tracks, audioTrack: 1)
        #expect(second.sampleRate == 16_000 && second.formatName == "matroska,webm / flac")
        #expect(abs(try readAll(second).count - 16_000) < 200)
        #expect(mediaError { _ = try AudioFileReader(path: tracks, audioTrack: 3) }
                == .invalidArgument(path: tracks, reason: "no audio track 4 (the file has 3)"))

        // A video file's audio; a video without audio is a typed error.
        let video = "\(dir)/call.mp4", silentVideo = "\(dir)/video.mp4"
        try run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-f", "lavfi",
                           "-i", "sine=frequency=440:sample_rate=48000", "-t", "1", "-map", "0:v", "-map", "1:a",
                           "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-y", video])
        try run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-t", "1",
                           "-c:v", "libx264", "-pix_fmt", "yuv420p", "-y", silentVideo])
        let r = try AudioFileReader(path: video)
        #expect(r.formatName.hasSuffix("/ aac") && r.sampleRate == 48_000)
        #expect(abs(try readAll(r).count - 48_000) < 2048)
        guard case .unsupported(silentVideo, let what)? = mediaError({ _ = try AudioFileReader(path: silentVideo) }) else {
            Issue.record("video without audio"); return
        }
        #expect(what.contains("no audio stream"))
    }

    @Test func ffmpegReportsTruncationAndCorruptionAfterTheAudioBeforeIt() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let whole = "\(dir)/whole.mkv", cut = "\(dir)/cut.mkv"
        try run("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=4:sample_rate=48000",
                           "-c:a", "libopus", "-y", whole])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: whole))
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
        let r = try AudioFileReader(path: cut)
        var buf = [Float](repeating: 0, count: 4096)
        var frames = 0
        let e = mediaError {
            while true { let n = try r.read(into: &buf); if n == 0 { break }; frames += n }
        }
        #expect(frames > 48_000 && frames < 3 * 48_000)
        switch e {
        case let .truncated(path, offset, expected, got)?:
            #expect(path == cut && offset > 0 && abs(expected - 4 * 48_000) < 2048 && got == frames)
        case let .corrupt(path, _, offset)?:
            #expect(path == cut && offset > 0)
        default:
            Issue.record("cut file: \(String(describing: e))")
        }
        let garbage = "\(dir)/garbage.m4a"
        try Data(String(repeating: "not a recording at all ", count: 400).utf8).write(to: URL(fileURLWithPath: garbage))
        guard case .unsupported(garbage, _)? = mediaError({ _ = try AudioFileReader(path: garbage) }) else {
            Issue.record("garbage"); return
        }
    }

    @Test func truncatedWAVReadsWhatIsThereAndSaysHowMuch() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bytes = try wavBytes(WAVFormat(sampleRate: 16_000, channels: 1), [Float](repeating: 0.25, count: 16_000))
        let path = dir + "/cut.wav"
        try Data(bytes[0..<(44 + 2 * 6000)]).write(to: URL(fileURLWithPath: path))
        let r = try AudioFileReader(path: path)
        var buf = [Float](repeating: 0, count: 4096)
        var frames = 0
        let e = mediaError {
            while true { let n = try r.read(into: &buf); if n == 0 { break }; frames += n }
        }
        #expect(frames == 6000)
        #expect(e == .truncated(path: path, offset: -1, expected: 16_000, got: 6000), "log: \(r.log)")
    }

    @Test func nanSamplesInAFloatFileAreRejectedOrReplacedAndCounted() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/nan.wav"
        let sink = try FileByteSink(path: path)
        var w = try WAVWriter(sink: sink, format: WAVFormat(sampleRate: 8000, channels: 1, encoding: .float32))
        try w.write([0.1, .nan, 0.2, -.infinity, 0.3])
        try w.close()
        let strict = try AudioFileReader(path: path)
        var buf = [Float](repeating: 0, count: 8)
        #expect(mediaError { _ = try strict.read(into: &buf) } == .nonFiniteSamples(path: path, frame: 1, count: 2))
        let lenient = try AudioFileReader(path: path)
        lenient.nonFinitePolicy = .replaceWithZero
        #expect(try lenient.read(into: &buf) == 5)
        #expect(Array(buf[0..<5]) == [0.1, 0, 0.2, 0, 0.3])
        #expect(lenient.nonFiniteSamplesReplaced == 2)
        let ints = try AudioFileReader(path: path)
        var ibuf = [Int16](repeating: 0, count: 8)
        #expect(mediaError { _ = try ints.read(into: &ibuf) } == .nonFiniteSamples(path: path, frame: 1, count: 2))
    }

    /// Reads `bytes` through a pipe (written from another thread, as a producer would).
    private func readThroughPipe(_ bytes: Data, name: String, raw: RawAudioFormat? = nil) throws -> (AudioFileReader, [Float]) {
        let pipe = Pipe()
        let writer = Thread {
            pipe.fileHandleForWriting.write(bytes)
            try? pipe.fileHandleForWriting.close()
        }
        writer.start()
        let r = try AudioFileReader(fileDescriptor: pipe.fileHandleForReading.fileDescriptor, name: name, raw: raw)
        return (r, try readAll(r))
    }

    @Test(arguments: ["wav", "flac", "aiff"])
    func aPipeReadsLikeTheFile(ext: String) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = "\(dir)/speech.\(ext)"
        try run("sox", [sampleMedia + "/speech/speech-16k.wav", "-c", "2", path])
        let fromFile = try readAll(try AudioFileReader(path: path))
        let (r, fromPipe) = try readThroughPipe(try Data(contentsOf: URL(fileURLWithPath: path)), name: "-")
        #expect(r.sampleRate == 16_000 && r.channels == 2 && r.path == "-")
        #expect(fromPipe == fromFile)
    }

    @Test func aRegularFileDescriptorIsReadInPlaceFromItsOffset() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let wav = try Data(contentsOf: URL(fileURLWithPath: sampleMedia + "/speech/speech-16k.wav"))
        let path = dir + "/prefixed.bin"
        try (Data("junk".utf8) + wav).write(to: URL(fileURLWithPath: path))
        let handle = try #require(FileHandle(forReadingAtPath: path))
        defer { try? handle.close() }
        _ = try handle.read(upToCount: 4)
        let r = try AudioFileReader(fileDescriptor: handle.fileDescriptor, name: "embedded")
        #expect(try readAll(r) == (try readAll(try AudioFileReader(path: sampleMedia + "/speech/speech-16k.wav"))))
        // The caller's descriptor stays open.
        #expect(fcntl(handle.fileDescriptor, F_GETFD) >= 0)
    }

    @Test func headerlessBytesAreReadAsTheNamedRawFormat() throws {
        #expect(RawAudioFormat(extension: "SLN16")?.sampleRate == 16_000)
        #expect(RawAudioFormat(extension: ".sln44")?.sampleRate == 44_100)
        #expect(RawAudioFormat(extension: "sln")?.sampleRate == 8000)
        #expect(RawAudioFormat(extension: "wav") == nil && RawAudioFormat(extension: "raw") == nil)
        #expect(RawAudioFormat.extensions.contains("gsm") && RawAudioFormat.extensions.contains("ul"))
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let wav = sampleMedia + "/speech/speech-16k.wav"
        try run("sox", [wav, "-t", "raw", "-e", "signed", "-b", "16", "-L", dir + "/speech.raw"])
        let raw = try Data(contentsOf: URL(fileURLWithPath: dir + "/speech.raw"))
        let (r, samples) = try readThroughPipe(raw, name: "-", raw: RawAudioFormat(extension: "sln16"))
        #expect(r.sampleRate == 16_000 && r.channels == 1)
        #expect(samples == (try readAll(try AudioFileReader(path: wav))))
        // Without the name, headerless bytes are not recognised; no bytes at all are empty.
        #expect(mediaError { _ = try readThroughPipe(raw, name: "-") }.map { if case .unsupported = $0 { true } else { false } } == true)
        #expect(mediaError { _ = try readThroughPipe(Data(), name: "-") } == .empty(path: "-"))
    }
}
