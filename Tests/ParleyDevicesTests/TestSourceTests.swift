import Foundation
import Testing
@testable import ParleyDevices
import ParleyMedia

@Suite struct TestSourceTests {
    let mono16k = try! AudioFormat(sampleRate: 16_000, channels: 1)

    @Test func toneOnAManualClockIsPacedAndTimedLikeADevice() {
        let clock = VirtualMediaClock()
        let t0 = clock.now()
        var tone = ToneSource<Int16>(format: mono16k, frequency: 1_000, amplitude: 0.5, seconds: 0.1, clock: clock)
        var frame = AudioFrame<Int16>(format: mono16k, samplesPerChannel: tone.framesPerRead)
        var count = 0
        while tone.read(into: &frame) {
            #expect(frame.timestamp == UInt32(count * 160))
            #expect(frame.captureTime == t0.advanced(byNanoseconds: Int64(count) * 10_000_000))
            // Returned only once the frame's last sample is due.
            #expect(clock.now() == t0.advanced(byNanoseconds: Int64(count + 1) * 10_000_000))
            count += 1
        }
        #expect(count == 10)
        // 1 kHz at 16 kHz: sample 4 is a quarter period, the peak.
        #expect(frame.samples[4] == Int16(clampingFloat: Float(0.5 * sin(2 * Double.pi * 1_000 * 9_604 / 16_000))))
        let more = tone.read(into: &frame)
        #expect(!more)
    }

    @Test func toneValuesFollowTheSineAndFillEveryChannel() throws {
        let stereo = try AudioFormat(sampleRate: 8_000, channels: 2)
        var tone = ToneSource<Float>(format: stereo, frequency: 500, amplitude: 0.25, clock: VirtualMediaClock())
        var frame = AudioFrame<Float>(format: stereo, samplesPerChannel: 80)
        let read = tone.read(into: &frame)
        #expect(read)
        for i in 0..<80 {
            let expected = Float(0.25 * sin(2 * Double.pi * 500 * Double(i) / 8_000))
            #expect(abs(frame.samples[2 * i] - expected) < 1e-6)
            #expect(frame.samples[2 * i + 1] == frame.samples[2 * i])
        }
    }

    @Test func sampleProviderSourceDeliversSamplesInOrderAndPadsTheLastFrame() throws {
        let samples = testSamples(count: 1_000)
        let clock = VirtualMediaClock()
        var source = SampleProviderSource(try ArraySampleProvider(format: mono16k, samples: samples), clock: clock)
        var frame = AudioFrame<Int16>(format: mono16k, samplesPerChannel: 160)
        var got: [Int16] = []
        var stamps: [UInt32] = []
        while source.read(into: &frame) {
            got += frame.samples
            stamps.append(frame.timestamp)
        }
        #expect(got.count == 1_120)  // 7 frames, the last padded
        #expect(Array(got[0..<1_000]) == samples)
        #expect(got[1_000...].allSatisfy { $0 == 0 })
        #expect(stamps == (0..<7).map { UInt32($0 * 160) })
        #expect(clock.sleepCount == 7)
    }

    @Test func sampleProviderSourceOnTheSystemClockRunsInRealTime() throws {
        var source = SampleProviderSource(try ArraySampleProvider(format: mono16k, samples: testSamples(count: 1_600)))
        var frame = AudioFrame<Int16>(format: mono16k, samplesPerChannel: 160)
        let start = MonotonicTime.now()
        while source.read(into: &frame) {}
        #expect(start.nanoseconds(to: .now()) >= 95_000_000)  // 100 ms of audio
    }

    @Test func aVideoSourceWithoutAPositiveFrameRateOrSizeIsAnError() throws {
        for fps in [0, -30, Double.nan] {
            #expect(throws: VideoSourceConfigurationError.self) {
                _ = try PatternSource(width: 64, height: 48, framesPerSecond: fps, clock: VirtualMediaClock())
            }
        }
        #expect(throws: VideoSourceConfigurationError.frameRateNotPositive(0)) {
            _ = try PatternSource(width: 64, height: 48, framesPerSecond: 0, clock: VirtualMediaClock())
        }
        #expect(throws: VideoSourceConfigurationError.sizeNotPositive(width: 0, height: 48)) {
            try MovingPatternProvider(width: 0, height: 48)
        }
        #expect(throws: VideoSourceConfigurationError.sizeNotPositive(width: 64, height: -1)) {
            _ = try PatternSource(width: 64, height: -1, clock: VirtualMediaClock())
        }
        let good = try PatternSource(width: 64, height: 48, framesPerSecond: 25, clock: VirtualMediaClock())
        #expect(good.framesPerSecond == 25 && good.width == 64)
    }

    @Test func patternSourceDeliversMovingPicturesAtItsFrameRate() throws {
        let clock = VirtualMediaClock()
        let t0 = clock.now()
        var camera = try PatternSource(width: 64, height: 48, framesPerSecond: 30, frameCount: 5, clock: clock)
        let pattern = try MovingPatternProvider(width: 64, height: 48, framesPerSecond: 30)
        var frame = camera.makeFrame()
        var lumaPlanes: [[UInt8]] = []
        var n = 0
        while camera.read(into: &frame) {
            #expect(frame.timestamp == UInt32(n * 3_000))
            let expected = t0.advanced(byNanoseconds: Int64((Double(n) * 1e9 / 30).rounded()))
            #expect(frame.captureTime == expected)
            for (x, y) in [(0, 0), (10, 20), (63, 47), (pattern.squareOrigin(frame: n).x, 24)] {
                #expect(frame.data[y * frame.strideY + x] == pattern.luma(x: x, y: y, frame: n))
            }
            lumaPlanes.append(Array(frame.data[0..<(64 * 48)]))
            n += 1
        }
        #expect(n == 5)
        #expect(Set(lumaPlanes.map { $0.hashValue }).count == 5)  // every picture differs
    }

    @Test func audioStreamDeliversEveryFrameInOrderThenFinishes() async throws {
        let tone = ToneSource<Int16>(format: mono16k, seconds: 0.2, clock: VirtualMediaClock())
        let stream = try AudioCaptureStream(tone, bufferCapacity: 64)
        var stamps: [UInt32] = []
        for try await frame in stream { stamps.append(frame.timestamp) }
        #expect(stamps == (0..<20).map { UInt32($0 * 160) })
        #expect(stream.droppedFrames == 0)
    }

    @Test func audioStreamDropsTheOldestFramesForASlowConsumerAndCountsThem() async throws {
        let tone = ToneSource<Int16>(format: mono16k, seconds: 0.5, clock: VirtualMediaClock())
        let stream = try AudioCaptureStream(tone, bufferCapacity: 3)
        // Do not consume until the (instant, virtual-clock) capture has produced all 50 frames.
        while stream.capturedFrames < 50 { try await Task.sleep(nanoseconds: 1_000_000) }
        var stamps: [UInt32] = []
        for try await frame in stream { stamps.append(frame.timestamp) }
        #expect(stamps == [47, 48, 49].map { UInt32($0 * 160) })
        #expect(stream.droppedFrames == 47)
    }

    struct BrokenProvider: AudioSampleProvider {
        struct Failure: Error, Equatable {}
        let format = try! AudioFormat(sampleRate: 16_000, channels: 1)
        var calls = 0
        mutating func readSamples(into buffer: UnsafeMutableBufferPointer<Int16>) throws(Failure) -> Int {
            calls += 1
            if calls > 2 { throw Failure() }
            for i in buffer.indices { buffer[i] = 1 }
            return buffer.count
        }
    }

    @Test func audioStreamEndsWithTheSourcesError() async throws {
        let stream = try AudioCaptureStream(SampleProviderSource(BrokenProvider(), clock: VirtualMediaClock()))
        var frames = 0
        await #expect(throws: BrokenProvider.Failure.self) {
            for try await _ in stream { frames += 1 }
        }
        #expect(frames == 2)
    }

    @Test func stoppingAnEndlessStreamFinishesIt() async throws {
        let stream = try AudioCaptureStream(ToneSource<Float>(format: mono16k))  // real time, endless
        var frames = 0
        for try await _ in stream {
            frames += 1
            if frames == 3 { stream.stop() }
        }
        #expect(frames >= 3 && frames <= 12, "\(frames) frames")
    }

    @Test func alsaCaptureWorksAsAStream() async throws {
        let fx = try FilePCMFixture()
        defer { fx.remove() }
        let input = testSamples(count: 3_200, seed: 5)
        try writeRaw(input, to: fx.path("in.raw"))
        let conf = try ALSAConfigurationTree(text: fx.captureDefinition("streamcap", input: fx.path("in.raw")))
        let mic = try ALSACapture<Int16>(pcm: "streamcap", parameters: .init(format: mono16k), configuration: conf)
        let stream = try AudioCaptureStream(try PrefixAudioSource(mic, frames: 20), bufferCapacity: 20)
        var got: [Int16] = []
        var stamps: [UInt32] = []
        for try await frame in stream {
            got += frame.samples
            stamps.append(frame.timestamp)
        }
        #expect(got == input)
        #expect(stamps == (0..<20).map { UInt32($0 * 160) })
        #expect(stream.droppedFrames == 0 && stream.capturedFrames == 20)
    }

    @Test func unpacedCaptureIntoASmallBufferDropsButAccountsForEveryFrame() async throws {
        // A `file` PCM has no clock: the capture thread outruns the consumer and the bounded
        // buffer drops the oldest frames. Whatever arrives is still the right samples for its
        // timestamp, in order, and captured = consumed + dropped.
        let fx = try FilePCMFixture()
        defer { fx.remove() }
        let input = testSamples(count: 160 * 400, seed: 6)
        try writeRaw(input, to: fx.path("in.raw"))
        let conf = try ALSAConfigurationTree(text: fx.captureDefinition("dropcap", input: fx.path("in.raw")))
        let mic = try ALSACapture<Int16>(pcm: "dropcap", parameters: .init(format: mono16k), configuration: conf)
        let stream = try AudioCaptureStream(try PrefixAudioSource(mic, frames: 400), bufferCapacity: 4)
        var consumed = 0
        var mismatches = 0
        var last = -1
        for try await frame in stream {
            consumed += 1
            let t = Int(frame.timestamp)
            if t <= last || Array(input[t..<t + 160]) != frame.samples { mismatches += 1 }
            last = t
        }
        #expect(mismatches == 0)
        #expect(stream.capturedFrames == 400)
        #expect(consumed + stream.droppedFrames == 400)
        #expect(last == 399 * 160)  // the newest frame is never the one dropped
    }

    @Test func videoStreamDeliversPatternPictures() async throws {
        let stream = try VideoCaptureStream(try PatternSource(width: 32, height: 24, framesPerSecond: 30, frameCount: 4,
                                                      clock: VirtualMediaClock()), bufferCapacity: 8)
        var stamps: [UInt32] = []
        for try await picture in stream {
            #expect(picture.width == 32 && picture.height == 24)
            stamps.append(picture.timestamp)
        }
        #expect(stamps == [0, 3_000, 6_000, 9_000])
    }

    @Test func pullCaptureRefillsTheSameStorage() throws {
        let fx = try FilePCMFixture()
        defer { fx.remove() }
        try writeRaw(testSamples(count: 4_800), to: fx.path("in.raw"))
        let conf = try ALSAConfigurationTree(text: fx.captureDefinition("reuse", input: fx.path("in.raw")))
        var mic = try ALSACapture<Int16>(pcm: "reuse", parameters: .init(format: mono16k), configuration: conf)
        var frame = mic.makeFrame()
        let base = frame.samples.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        for _ in 0..<30 {
            try mic.read(into: &frame)
            #expect(frame.samples.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } == base)
        }
    }
}

@Suite struct WAVFileSourceTests {
    static let speech = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SampleMedia/speech/speech-16k.wav").path

    @Test func wavFileIsDeliveredPacedAndSampleExact() throws {
        var direct = try WAVReader(path: Self.speech)
        var all = [Int16](repeating: 0, count: direct.frameCount! * direct.format.channels)
        let n = try all.withUnsafeMutableBufferPointer { try direct.read(into: $0) }
        #expect(n == all.count)

        let clock = VirtualMediaClock()
        let t0 = clock.now()
        var source = WAVFileSource<Int16>(try WAVFileProvider(path: Self.speech), clock: clock)
        #expect(try source.format == AudioFormat(sampleRate: 16_000, channels: 1))
        var frame = AudioFrame<Int16>(format: source.format, samplesPerChannel: source.framesPerRead)
        var got: [Int16] = []
        var frames = 0
        while try source.read(into: &frame) {
            #expect(frame.captureTime == t0.advanced(byNanoseconds: Int64(frames) * 10_000_000))
            got += frame.samples
            frames += 1
        }
        #expect(frames == (all.count + 159) / 160)
        #expect(Array(got[0..<all.count]) == all)
        #expect(got[all.count...].allSatisfy { $0 == 0 })
        #expect(clock.now() == t0.advanced(byNanoseconds: Int64(frames) * 10_000_000))
    }

    @Test func floatWAVSamplesMatchTheInt16Ones() throws {
        var ints = WAVFileSource<Int16>(try WAVFileProvider(path: Self.speech), clock: VirtualMediaClock())
        var floats = WAVFileSource<Float>(try WAVFileProvider(path: Self.speech), clock: VirtualMediaClock())
        let format = ints.format
        var a = AudioFrame<Int16>(format: format, samplesPerChannel: 160)
        var b = AudioFrame<Float>(format: format, samplesPerChannel: 160)
        for _ in 0..<50 {
            _ = try ints.read(into: &a)
            _ = try floats.read(into: &b)
            #expect(zip(a.samples, b.samples).allSatisfy { Float($0) / 32768 == $1 })
        }
    }

    @Test func aFileThatIsNotAWAVIsATypedError() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-notwav-\(UUID().uuidString)").path
        try Data("definitely not RIFF".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: MediaFileError.self) { _ = try WAVFileProvider<Int16>(path: path) }
    }
}

@Suite struct Y4MFileSourceTests {
    static let video = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SampleMedia/video/sample.y4m").path

    @Test func y4mFileIsDeliveredAtItsFrameRateWithTheSamePictures() throws {
        var direct = try Y4MReader(path: Self.video)
        let clock = VirtualMediaClock()
        let t0 = clock.now()
        var camera = try Y4MFileSource(Y4MFileProvider(path: Self.video), clock: clock)
        #expect(camera.width == 320 && camera.height == 240 && camera.framesPerSecond == 30)
        var frame = camera.makeFrame()
        var expected = try VideoFrame(width: 320, height: 240)
        var n = 0
        while try camera.read(into: &frame) {
            let more = try direct.read(into: &expected)
            #expect(more)
            #expect(frame.data == expected.data)
            #expect(frame.timestamp == UInt32(n * 3_000))
            #expect(frame.captureTime == t0.advanced(byNanoseconds: Int64((Double(n) * 1e9 / 30).rounded())))
            n += 1
        }
        #expect(n > 0 && n == direct.framesRead)
    }

    @Test func y4mStreamsThroughTheVideoCaptureStream() async throws {
        let stream = try VideoCaptureStream(try Y4MFileSource(Y4MFileProvider(path: Self.video), clock: VirtualMediaClock()),
                                        bufferCapacity: 64)
        var stamps: [UInt32] = []
        for try await picture in stream { stamps.append(picture.timestamp) }
        #expect(!stamps.isEmpty && stamps == (0..<stamps.count).map { UInt32($0 * 3_000) })
    }
}

/// A provider reporting whatever size and rate it is given, for the sources' checks.
private struct SizedProvider: VideoFrameProvider {
    typealias Failure = Never
    let width: Int
    let height: Int
    let framesPerSecond: Double
    mutating func readPicture(into frame: inout VideoFrame) -> Bool { true }
}

@Suite struct TimedVideoSourceTests {
    @Test func aProviderOfNoSizeOrTooLargeIsAnErrorForBothTimings() {
        let big = VideoFrame.maximumDimension + 1
        for (w, h) in [(0, 240), (320, -1)] {
            #expect(throws: VideoSourceConfigurationError.sizeNotPositive(width: w, height: h)) {
                _ = try ClockedVideoSource(SizedProvider(width: w, height: h, framesPerSecond: 30))
            }
            #expect(throws: VideoSourceConfigurationError.sizeNotPositive(width: w, height: h)) {
                _ = try PacedVideoSource(SizedProvider(width: w, height: h, framesPerSecond: 30))
            }
        }
        #expect(throws: VideoSourceConfigurationError.sizeTooLarge(width: big, height: 2)) {
            _ = try ClockedVideoSource(SizedProvider(width: big, height: 2, framesPerSecond: 30))
        }
        // Only the paced timing needs a frame rate.
        #expect(throws: VideoSourceConfigurationError.frameRateNotPositive(0)) {
            _ = try PacedVideoSource(SizedProvider(width: 4, height: 4, framesPerSecond: 0))
        }
        #expect(throws: Never.self) { _ = try ClockedVideoSource(SizedProvider(width: 4, height: 4, framesPerSecond: 0)) }
    }

    @Test func clockedReadsAreStampedWithTheReadTimeAndPacedOnesWithTheirDueTime() throws {
        let clock = VirtualMediaClock()
        var clocked = try ClockedVideoSource(SizedProvider(width: 4, height: 4, framesPerSecond: 30), clock: clock)
        var paced = try PacedVideoSource(SizedProvider(width: 4, height: 4, framesPerSecond: 25), clock: clock)
        var frame = paced.makeFrame()
        for n in 0..<3 {
            let readClocked = clocked.read(into: &frame)
            #expect(readClocked)
            #expect(frame.captureTime == clock.now() && frame.timestamp == UInt32(n * 9_000))
            let readPaced = paced.read(into: &frame)
            #expect(readPaced)
            #expect(frame.timestamp == UInt32(n * 3_600))
            clock.advance(byNanoseconds: 100_000_000)
        }
        #expect(clocked.framesDelivered == 3 && paced.framesDelivered == 3)
    }
}

@Test func captureSettingsACallerGetsWrongAreErrors() throws {
    let format = try AudioFormat(sampleRate: 16_000, channels: 1)
    #expect(throws: CaptureConfigurationError.bufferCapacityNotPositive(0)) {
        try AudioCaptureStream(ToneSource<Int16>(format: format, seconds: 0.01, clock: VirtualMediaClock()), bufferCapacity: 0)
    }
    #expect(throws: CaptureConfigurationError.frameCountNegative(-1)) {
        _ = try PrefixAudioSource(ToneSource<Int16>(format: format, clock: VirtualMediaClock()), frames: -1)
    }
    #expect(throws: AudioFormatError.partialFrame(samples: 3, channels: 2)) {
        try ArraySampleProvider<Int16>(format: try AudioFormat(sampleRate: 8_000, channels: 2), samples: [1, 2, 3])
    }
}

@Test func aFrameOfAnotherFormatIsGivenTheSourcesFormat() throws {
    let format = try AudioFormat(sampleRate: 16_000, channels: 1)
    var tone = ToneSource<Int16>(format: format, clock: VirtualMediaClock())
    var frame = AudioFrame<Int16>(format: try AudioFormat(sampleRate: 48_000, channels: 2), samplesPerChannel: 960)
    let read = tone.read(into: &frame)
    #expect(read)
    #expect(frame.format == format && frame.samplesPerChannel == tone.framesPerRead)
    var recorded = SampleProviderSource(try ArraySampleProvider<Int16>(format: format, samples: [Int16](repeating: 5, count: 320)),
                                        clock: VirtualMediaClock())
    var other = AudioFrame<Int16>(format: try AudioFormat(sampleRate: 8_000, channels: 1), samplesPerChannel: 7)
    let readRecorded = recorded.read(into: &other)
    #expect(readRecorded)
    #expect(other.format == format && other.samples.allSatisfy { $0 == 5 })
}
