import Foundation
import Testing
@testable import ParleyDetect
import ParleyVoice
import ParleyMedia

private let sampleMedia = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia")
private let hasSampleMedia = FileManager.default.fileExists(atPath: sampleMedia.appendingPathComponent("speech/speech-48k.wav").path)

/// Deterministic pseudo-random numbers (ChunkSizeRandom64) for chunk sizes.
private struct ChunkSizeRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Interleaved samples held in memory, served in blocks like a file.
private struct MemorySource: OfflineAudioSource {
    let sampleRate: Int
    let channels: Int
    let samples: [Float]
    var expectedFrames: Int64? { Int64(samples.count / channels) }
    var position = 0

    mutating func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(OfflineReadError) -> Int {
        let n = min(buffer.count, samples.count - position) / channels * channels
        for i in 0..<n { buffer[i] = samples[position + i] }
        position += n
        return n / channels
    }
}

/// A source that makes its samples as it goes (a long file without holding it in memory):
/// `speech` repeated with `gap` seconds of low noise between the copies.
private struct RepeatingSource: OfflineAudioSource {
    let sampleRate: Int
    let channels = 1
    let speech: [Float]
    let gapSamples: Int
    let totalFrames: Int
    var expectedFrames: Int64? { Int64(totalFrames) }
    var position = 0

    mutating func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(OfflineReadError) -> Int {
        let n = min(buffer.count, totalFrames - position)
        let period = speech.count + gapSamples
        for i in 0..<n {
            let k = (position + i) % period
            buffer[i] = k < speech.count ? speech[k] : Float(((position + i) * 7919) % 200 - 100) * 1e-5
        }
        position += n
        return n
    }
}

/// Every sample of a file, read through the same decoder the offline path uses.
private func readAll(_ path: String) throws -> (samples: [Float], rate: Int, channels: Int) {
    let source = try openOfflineAudioFile(path)
    var out: [Float] = []
    var block = [Float](repeating: 0, count: 8192 * source.channels)
    while true {
        let n = try block.withUnsafeMutableBufferPointer { try source.read(into: $0) }
        if n == 0 { break }
        out += block[0..<n * source.channels]
    }
    return (out, source.sampleRate, source.channels)
}

private func mediaFiles() throws -> [String] {
    let conv = sampleMedia.appendingPathComponent("conversation")
    let files = try FileManager.default.contentsOfDirectory(atPath: conv.path).filter { $0.hasSuffix(".wav") }.sorted()
    return files.map { conv.appendingPathComponent($0).path }
        + [sampleMedia.appendingPathComponent("speech/speech-48k.wav").path]
}

/// The live API fed in random-sized chunks gives the very segments and probabilities the
/// offline path gives on the same file, with either network.
@Test(.enabled(if: hasSampleMedia), arguments: VADModel.allCases, [1, 2])
func offlineEqualsLiveInRandomChunks(model: VADModel, seed: UInt64) throws {
    let configuration = TalkTrackerConfiguration(vad: .init(model: model))
    var segmentsCompared = 0
    for path in try mediaFiles() {
        var offlineProbabilities: [Float] = []
        let offline = try OfflineDetector(configuration: configuration).analyze(
            OfflineDetectionRequest(path: path, participant: "p"),
            onFrame: { _, index, p in
                #expect(index == offlineProbabilities.count)
                offlineProbabilities.append(p)
            })
        #expect(offline.isComplete)

        let (samples, rate, _) = try readAll(path)
        var rng = ChunkSizeRandom(state: seed)
        var tracker = try ParticipantTalkTracker(sampleRate: rate, configuration: configuration)
        var recorder = TalkSegmentRecorder()
        var liveProbabilities: [Float] = []
        var position = 0
        try samples.withUnsafeBufferPointer { all in
            while position < all.count {
                let n = min(Int.random(in: 0...3000, using: &rng), all.count - position)
                tracker.process(UnsafeBufferPointer(rebasing: all[position..<position + n]),
                                onDecision: { liveProbabilities.append($0.probability) },
                                onEvent: { recorder.record($0) })
                position += n
            }
            _ = try #require(position == all.count)
        }
        tracker.finish(onDecision: { liveProbabilities.append($0.probability) }, onEvent: { recorder.record($0) })

        segmentsCompared += offline.tracks[0].segments.count
        #expect(recorder.segments == offline.tracks[0].segments, "\(path)")
        #expect(!liveProbabilities.isEmpty && liveProbabilities == offlineProbabilities, "\(path)")
    }
    #expect(segmentsCompared >= 3)
}

/// The tracker is the plain live voice API: VoiceActivityDetector + TalkDetector fed 10 ms
/// frames, the way a call pipeline feeds them, give the same events.
@Test(.enabled(if: hasSampleMedia)) func trackerMatchesTheVoiceAPIFedTenMillisecondFrames() throws {
    var eventsCompared = 0
    for path in try mediaFiles() {
        let (samples, rate, _) = try readAll(path)
        var vad = try VoiceActivityDetector(sampleRate: rate)
        var talk = TalkDetector()
        var direct: [TalkEvent] = []
        let frame = rate / 100
        samples.withUnsafeBufferPointer { all in
            var i = 0
            while i < all.count {
                let n = min(frame, all.count - i)
                vad.process(UnsafeBufferPointer(rebasing: all[i..<i + n])) { d in
                    if let e = talk.process(d) { direct.append(e) }
                }
                i += n
            }
        }
        if let e = talk.finish(at: Double(samples.count) / Double(rate)) { direct.append(e) }

        var tracker = try ParticipantTalkTracker(sampleRate: rate)
        var viaTracker: [TalkEvent] = []
        samples.withUnsafeBufferPointer { tracker.process($0, onEvent: { viaTracker.append($0) }) }
        tracker.finish(onEvent: { viaTracker.append($0) })
        eventsCompared += direct.count
        #expect(viaTracker == direct, "\(path)")
    }
    #expect(eventsCompared >= 6)
}

@Test(.enabled(if: hasSampleMedia)) func theBlockSizeDoesNotChangeTheResult() throws {
    let path = try mediaFiles()[0]
    let request = OfflineDetectionRequest(path: path, participant: "p")
    let a = try OfflineDetector(blockFrames: 4096).analyze(request)
    let b = try OfflineDetector(blockFrames: 37).analyze(request)
    #expect(a == b)
}

@Test(.enabled(if: hasSampleMedia)) func aDescriptorIsAnalysedLikeThePathItWasOpenedFrom() throws {
    let path = try mediaFiles()[0]
    let handle = try #require(FileHandle(forReadingAtPath: path))
    defer { try? handle.close() }
    let byPath = try OfflineDetector().analyze(OfflineDetectionRequest(path: path, participant: "p"))
    var request = OfflineDetectionRequest(path: "-", participant: "p", fileDescriptor: handle.fileDescriptor)
    let byDescriptor = try OfflineDetector().analyze(request)
    #expect(byDescriptor.tracks == byPath.tracks && byDescriptor.framesRead == byPath.framesRead)
    #expect(byDescriptor.request.path == "-")
    // An empty descriptor is an empty input, named as the request names it.
    let empty = Pipe()
    try empty.fileHandleForWriting.close()
    request.fileDescriptor = empty.fileHandleForReading.fileDescriptor
    #expect(throws: OfflineDetectionError(.empty, path: "-", message: "empty file (0 bytes): no audio")) {
        try OfflineDetector().analyze(request)
    }
}

@Test(.enabled(if: hasSampleMedia)) func perChannelSplitsAndMixDownAveragesTheChannels() throws {
    let (speech, rate, _) = try readAll(try mediaFiles()[0])
    var stereo: [Float] = []
    for s in speech { stereo.append(s); stereo.append(0) }
    let detector = OfflineDetector()
    var split = MemorySource(sampleRate: rate, channels: 2, samples: stereo)
    let perChannel = try detector.analyze(&split, request: .init(path: "mem", participant: "call", channelMode: .perChannel),
                                          onFrame: { _, _, _ in }, onProgress: { _, _ in })
    #expect(perChannel.tracks.map(\.name) == ["call.ch1", "call.ch2"])
    #expect(perChannel.tracks.map(\.channel) == [0, 1])
    #expect(perChannel.tracks[1].segments.isEmpty)

    var mono = MemorySource(sampleRate: rate, channels: 1, samples: speech)
    let alone = try detector.analyze(&mono, request: .init(path: "mem", participant: "x"),
                                     onFrame: { _, _, _ in }, onProgress: { _, _ in })
    #expect(perChannel.tracks[0].segments == alone.tracks[0].segments)

    // The mix-down of two identical channels is the channel itself.
    var twice: [Float] = []
    for s in speech { twice.append(s); twice.append(s) }
    var both = MemorySource(sampleRate: rate, channels: 2, samples: twice)
    let mixed = try detector.analyze(&both, request: .init(path: "mem", participant: "x"),
                                     onFrame: { _, _, _ in }, onProgress: { _, _ in })
    #expect(mixed.tracks.count == 1 && mixed.tracks[0].segments == alone.tracks[0].segments)
}

@Test(.enabled(if: hasSampleMedia)) func offsetsShiftEverySegment() throws {
    let path = try mediaFiles()[0]
    let plain = try OfflineDetector().analyze(.init(path: path, participant: "p"))
    let shifted = try OfflineDetector().analyze(.init(path: path, participant: "p", offset: 7.25))
    #expect(plain.tracks[0].segments.map { TalkSegment(orderedStart: $0.start + 7.25, end: $0.end + 7.25) }
            == shifted.tracks[0].segments)
}

@Test(.enabled(if: hasSampleMedia)) func aLongStreamIsAnalysedBlockByBlock() throws {
    let (speech, rate, _) = try readAll(try mediaFiles()[0])
    let minutes = 10
    var source = RepeatingSource(sampleRate: rate, speech: speech, gapSamples: 3 * rate, totalFrames: minutes * 60 * rate)
    var progressCalls = 0
    var frames = 0
    let result = try OfflineDetector().analyze(&source, request: .init(path: "long", participant: "p"),
                                               onFrame: { _, _, _ in frames += 1 },
                                               onProgress: { read, expected in
                                                   progressCalls += 1
                                                   #expect(read <= expected!)
                                               })
    #expect(result.framesRead == Int64(minutes * 60 * rate))
    #expect(frames == minutes * 60 * 100 && result.tracks[0].frameCount == frames)
    #expect(progressCalls == (minutes * 60 * rate + 4095) / 4096)
    let copies = minutes * 60 * rate / (speech.count + 3 * rate)
    #expect(result.tracks[0].segments.count >= copies)
    #expect(result.isComplete && result.issues.isEmpty)
}

@Test func badFilesGiveTypedErrors() throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parley-offline-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let detector = OfflineDetector()
    func kind(_ path: String) -> OfflineDetectionError.Kind? {
        do {
            _ = try detector.analyze(.init(path: path, participant: "p"))
            return nil
        } catch {
            return error.kind
        }
    }
    #expect(kind(dir.appendingPathComponent("missing.wav").path) == .notFound)
    #expect(kind(dir.path) == .isDirectory)
    let empty = dir.appendingPathComponent("empty.wav")
    try Data().write(to: empty)
    #expect(kind(empty.path) == .empty)
    let text = dir.appendingPathComponent("text.wav")
    try Data("not audio at all, just text\n".utf8).write(to: text)
    #expect(kind(text.path) == .unsupportedFormat)
}

@Test(.enabled(if: hasSampleMedia)) func aTruncatedFileIsAnalysedAsFarAsItGoesAndSaysSo() throws {
    let path = try mediaFiles()[0]
    let full = try Data(contentsOf: URL(fileURLWithPath: path))
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parley-offline-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let cut = dir.appendingPathComponent("cut.wav")
    try full.prefix(full.count / 3).write(to: cut)
    let result = try OfflineDetector().analyze(.init(path: cut.path, participant: "p"))
    #expect(!result.isComplete)
    guard case let .truncated(read, expected, _)? = result.issues.first else {
        Issue.record("no truncation reported: \(result.issues)")
        return
    }
    let whole = try OfflineDetector().analyze(.init(path: path, participant: "p"))
    #expect(abs(expected - whole.duration) < 0.01)
    #expect(abs(read - whole.duration / 3) < 0.05)
}

/// At a rate the VAD does not take (44.1 kHz), samples go through the band-limited
/// resampler first; offline and live still agree, chunking does not matter, and the talk found
/// is the talk found at the original rate, within a frame or two.
@Test(.enabled(if: hasSampleMedia), arguments: [4, 5])
func resampledRatesGiveTheSameResultOfflineAndLive(seed: UInt64) throws {
    let (speech, rate, _) = try readAll(try mediaFiles()[0])
    var resampler = try Resampler(inputRate: rate, outputRate: 44_100, maxInputFrames: speech.count)
    var at44 = [Float](repeating: 0, count: resampler.maxOutputFrames(forInput: speech.count) + 64)
    var n = try resampler.process(speech, into: &at44)
    n += try at44.withUnsafeMutableBufferPointer { (b) throws(ResamplerBlockError) -> Int in
        try resampler.flush(into: UnsafeMutableBufferPointer(rebasing: b[n...]))
    }
    at44.removeLast(at44.count - n)

    var source = MemorySource(sampleRate: 44_100, channels: 1, samples: at44)
    var offlineProbabilities: [Float] = []
    let detector = OfflineDetector()
    let offline = try detector.analyze(&source, request: .init(path: "mem", participant: "p"),
                                       onFrame: { _, _, p in offlineProbabilities.append(p) },
                                       onProgress: { _, _ in })
    var rng = ChunkSizeRandom(state: seed)
    var tracker = try ParticipantTalkTracker(sampleRate: 44_100, configuration: detector.configuration)
    var recorder = TalkSegmentRecorder()
    var liveProbabilities: [Float] = []
    at44.withUnsafeBufferPointer { all in
        var i = 0
        while i < all.count {
            let k = min(Int.random(in: 1...9000, using: &rng), all.count - i)
            tracker.process(UnsafeBufferPointer(rebasing: all[i..<i + k]),
                            onDecision: { liveProbabilities.append($0.probability) }, onEvent: { recorder.record($0) })
            i += k
        }
    }
    tracker.finish(onDecision: { liveProbabilities.append($0.probability) }, onEvent: { recorder.record($0) })
    #expect(recorder.segments == offline.tracks[0].segments)
    #expect(liveProbabilities == offlineProbabilities)
    #expect(offlineProbabilities.count == (at44.count * 16_000 + 44_099) / 44_100 / 160)

    let original = try OfflineDetector().analyze(.init(path: try mediaFiles()[0], participant: "p"))
    #expect(original.tracks[0].segments.count == offline.tracks[0].segments.count)
    for (a, b) in zip(original.tracks[0].segments, offline.tracks[0].segments) {
        #expect(abs(a.start - b.start) <= 0.03 && abs(a.end - b.end) <= 0.03, "\(a) vs \(b)")
    }
}

@Test func aBlockSizeOrTalkConfigurationOutOfRangeIsAnErrorBeforeTheFileIsOpened() throws {
    let request = OfflineDetectionRequest(path: "/nonexistent/parley-audio.wav", participant: "p")
    for frames in [0, -1] {
        do {
            _ = try OfflineDetector(blockFrames: frames).analyze(request)
            Issue.record("blockFrames \(frames) was accepted")
        } catch {
            #expect(error.kind == .invalidConfiguration && error.message.contains("blockFrames"))
        }
    }
    var bad = TalkTrackerConfiguration()
    bad.talk.onsetWindow = 0
    do {
        _ = try OfflineDetector(configuration: bad).analyze(request)
        Issue.record("onsetWindow 0 was accepted")
    } catch {
        #expect(error.kind == .invalidConfiguration)
    }
    // Good settings get as far as opening the file.
    do {
        _ = try OfflineDetector(blockFrames: 1).analyze(request)
        Issue.record("a missing file was analysed")
    } catch {
        #expect(error.kind == .notFound)
    }
}

@Test func aTrackerRejectsATalkConfigurationOutOfRange() throws {
    var bad = TalkTrackerConfiguration()
    bad.talk.onsetFrames = 9
    #expect(throws: TalkTrackerError.invalidTalkConfiguration(.onsetFramesOutOfRange(onsetFrames: 9, onsetWindow: 8))) {
        try ParticipantTalkTracker(sampleRate: 16_000, configuration: bad)
    }
    _ = try ParticipantTalkTracker(sampleRate: 16_000, configuration: TalkTrackerConfiguration())
}
