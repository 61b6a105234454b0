import Foundation
import Testing
@testable import ParleyDevices

/// A temporary directory holding raw files and an alsa-lib configuration with `file` PCMs.
struct FilePCMFixture {
    let directory: URL
    init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("parley-alsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// `pcm.<name> { type file; slave.pcm null; file "/dev/null"; infile "<input>"; format "raw" }`
    func captureDefinition(_ name: String, input: String) -> String {
        "pcm.\(name) { type file; slave.pcm null; file \"/dev/null\"; infile \"\(input)\"; format \"raw\" }\n"
    }
    /// `pcm.<name> { type file; slave.pcm null; file "<output>"; format "raw" }`
    func playbackDefinition(_ name: String, output: String) -> String {
        "pcm.\(name) { type file; slave.pcm null; file \"\(output)\"; format \"raw\" }\n"
    }
    func remove() { try? FileManager.default.removeItem(at: directory) }
}

/// Deterministic pseudo-random 16-bit samples (xorshift), never all zero like a null PCM.
func testSamples(count: Int, seed: UInt32 = 0x1234_5678) -> [Int16] {
    var x = seed
    return (0..<count).map { _ in
        x ^= x << 13; x ^= x >> 17; x ^= x << 5
        return Int16(truncatingIfNeeded: x)
    }
}

func writeRaw<T>(_ values: [T], to path: String) throws {
    let data = values.withUnsafeBytes { Data($0) }
    try data.write(to: URL(fileURLWithPath: path))
}

func readRaw<T: BitwiseCopyable>(_: T.Type, from path: String) throws -> [T] {
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    return data.withUnsafeBytes { raw in Array(raw.bindMemory(to: T.self)) }
}

@Suite struct ALSATests {
    @Test func captureFromFilePCMReturnsTheRawSamplesInOrder() throws {
        let fx = try FilePCMFixture()
        defer { fx.remove() }
        let input = testSamples(count: 16_000)  // 1 s at 16 kHz mono
        try writeRaw(input, to: fx.path("in.raw"))
        let conf = try ALSAConfigurationTree(text: fx.captureDefinition("testcap", input: fx.path("in.raw")))
        var mic = try ALSACapture<Int16>(pcm: "testcap",
                                         parameters: .init(format: audioFormat(16_000, 1)),
                                         configuration: conf)
        #expect(mic.setup.periodFrames == 160)
        #expect(mic.setup.sampleFormat == "S16_LE")
        var frame = mic.makeFrame()
        var got: [Int16] = []
        var timestamps: [UInt32] = []
        for _ in 0..<100 {
            try mic.read(into: &frame)
            got += frame.samples
            timestamps.append(frame.timestamp)
        }
        #expect(got == input)
        #expect(timestamps == (0..<100).map { UInt32($0 * 160) })
        #expect(mic.xruns == XRunCounters())
        try mic.close()
    }

    @Test func stereoFloatCaptureKeepsInterleavingAndValues() throws {
        let fx = try FilePCMFixture()
        defer { fx.remove() }
        let input: [Float] = (0..<(4_800 * 2)).map { i in Float(i % 97) / 97 - 0.5 }
        try writeRaw(input, to: fx.path("in.raw"))
        let conf = try ALSAConfigurationTree(text: fx.captureDefinition("stereo", input: fx.path("in.raw")))
        var mic = try ALSACapture<Float>(pcm: "stereo",
                                         parameters: .init(format: audioFormat(48_000, 2)),
                                         configuration: conf)
        #expect(mic.setup.sampleFormat == "FLOAT_LE")
        #expect(mic.framesPerRead == 480)
        var frame = mic.makeFrame()
        var got: [Float] = []
        for _ in 0..<10 {
            try mic.read(into: &frame)
            got += frame.samples
        }
        #expect(got == input)
    }

    @Test func pullReadIntoARawBufferReadsExactlyTheRequestedFrames() throws {
        let fx = try FilePCMFixture()
        defer { fx.remove() }
        let input = testSamples(count: 1_000, seed: 99)
        try writeRaw(input, to: fx.path("in.raw"))
        let conf = try ALSAConfigurationTree(text: fx.captureDefinition("pull", input: fx.path("in.raw")))
        var mic = try ALSACapture<Int16>(pcm: "pull", parameters: .init(format: audioFormat(8_000, 1)),
                                         configuration: conf)
        var buffer = [Int16](repeating: 0, count: 333)
        try buffer.withUnsafeMutableBufferPointer { try mic.read(into: $0) }
        #expect(buffer == Array(input[0..<333]))
        #expect(mic.framesDelivered == 333)
    }

    @Test func playbackToFilePCMWritesExactlyWhatWasPlayed() throws {
        let fx = try FilePCMFixture()
        defer { fx.remove() }
        let out = fx.path("out.raw")
        let conf = try ALSAConfigurationTree(text: fx.playbackDefinition("testplay", output: out))
        let samples = testSamples(count: 16_000 * 2, seed: 7)  // 0.5 s stereo at 32 kHz
        var speaker = try ALSAPlayback<Int16>(pcm: "testplay",
                                              parameters: .init(format: audioFormat(32_000, 2)),
                                              configuration: conf)
        var frame = AudioFrame<Int16>(format: speaker.setup.format, samplesPerChannel: 320)
        for start in stride(from: 0, to: samples.count, by: 640) {
            frame.samples.replaceSubrange(0..<640, with: samples[start..<start + 640])
            try speaker.write(frame)
        }
        try speaker.drain()
        try speaker.close()
        #expect(try readRaw(Int16.self, from: out) == samples)
    }

    @Test(.tags(.realTime)) func captureOverrunFromNotReadingIsRecoveredAndCounted() throws {
        // A clocked PCM keeps real time: 10 ms periods, 10 periods of buffer (100 ms, so a busy
        // test machine does not overrun by accident).
        var mic = try ALSACapture<Int16>.clocked(parameters: .init(format: audioFormat(16_000, 1),
                                                                   periodCount: 10))
        #expect(mic.setup.bufferFrames == 1_600)
        var frame = mic.makeFrame()
        for _ in 0..<3 { try mic.read(into: &frame) }
        let before = mic.xruns.overruns
        usleep(400_000)  // 400 ms without reading: the 100 ms buffer overflows
        try mic.read(into: &frame)
        #expect(mic.xruns.overruns == before + 1)
        for _ in 0..<3 { try mic.read(into: &frame) }  // the stream runs on after recovery
        usleep(400_000)
        try mic.read(into: &frame)
        #expect(mic.xruns.overruns >= before + 2)
        #expect(mic.framesDelivered == 8 * 160)
        try mic.close()
    }

    @Test(.tags(.realTime)) func playbackUnderrunFromNotWritingIsRecoveredAndCounted() throws {
        var speaker = try ALSAPlayback<Float>.clocked(parameters: .init(format: audioFormat(48_000, 1),
                                                                        periodCount: 10))
        let frame = AudioFrame<Float>(format: speaker.setup.format, samplesPerChannel: 480)
        for _ in 0..<10 { try speaker.write(frame) }  // fills the 100 ms buffer; playback starts
        let before = speaker.xruns.underruns
        usleep(400_000)  // the device plays 100 ms, then starves
        try speaker.write(frame)
        #expect(speaker.xruns.underruns == before + 1)
        try speaker.close()
    }

    @Test(.tags(.realTime)) func suspendIsResumedAndCounted() throws {
        var mic = try ALSACapture<Int16>.clocked(parameters: .init(format: audioFormat(16_000, 1),
                                                                   periodCount: 10))
        var frame = mic.makeFrame()
        for _ in 0..<3 { try mic.read(into: &frame) }
        mic.simulateSuspend()
        try mic.read(into: &frame)  // -ESTRPIPE, snd_pcm_recover resumes, the read completes
        #expect(mic.xruns.suspends == 1)
        for _ in 0..<3 { try mic.read(into: &frame) }
        #expect(mic.xruns.suspends == 1)
        #expect(mic.framesDelivered == 7 * 160)

        var speaker = try ALSAPlayback<Int16>.clocked(parameters: .init(format: audioFormat(16_000, 1),
                                                                        periodCount: 10))
        let out = AudioFrame<Int16>(format: speaker.setup.format, samplesPerChannel: 160)
        for _ in 0..<4 { try speaker.write(out) }
        speaker.simulateSuspend()
        try speaker.write(out)
        #expect(speaker.xruns.suspends == 1)
    }

    @Test(.tags(.realTime)) func clockedCaptureIsPacedAtTheSampleRate() throws {
        var mic = try ALSACapture<Int16>.clocked(parameters: .init(format: audioFormat(16_000, 1)))
        var frame = mic.makeFrame()
        let start = MonotonicTime.now()
        for _ in 0..<10 { try mic.read(into: &frame) }
        let elapsed = start.nanoseconds(to: .now())
        #expect(elapsed >= 90_000_000)  // 10 periods of 10 ms cannot arrive sooner
        #expect(frame.captureTime <= MonotonicTime.now())
    }

    @Test func unknownPCMNameIsATypedNoSuchDeviceError() throws {
        let conf = try ALSAConfigurationTree(text: "")
        do {
            _ = try ALSACapture<Int16>(pcm: "no_such_pcm_here",
                                       parameters: .init(format: audioFormat(16_000, 1)),
                                       configuration: conf)
            Issue.record("opening an undefined PCM succeeded")
        } catch {
            #expect(error.kind == .noSuchDevice)
            #expect(error.pcm == "no_such_pcm_here")
            #expect(error.operation == "snd_pcm_open_lconf")
            #expect(error.description.contains("no_such_pcm_here"))
            #expect(error.detail?.contains("Unknown PCM") == true)
        }
    }

    @Test func missingSoundCardIsATypedNoSuchDeviceError() {
        #expect(throws: ALSAError.self) {
            _ = try ALSACapture<Int16>(pcm: "hw:7,0", parameters: .init(format: audioFormat(48_000, 1)))
        }
        do {
            _ = try ALSAPlayback<Int16>(pcm: "hw:7,0", parameters: .init(format: audioFormat(48_000, 1)))
        } catch {
            #expect(error.kind == .noSuchDevice)
            #expect(error.description.contains("hw:7,0"))
        }
    }

    @Test func rateAndChannelsNotOfferedListWhatIsOffered() {
        do {
            _ = try ALSACapture<Int16>.clocked(parameters: .init(format: audioFormat(4_000, 1),
                                                                 allowResampling: false))
            Issue.record("4 kHz was accepted")
        } catch {
            #expect(error.kind == .notOffered)
            #expect(error.detail?.contains("8000-192000 Hz") == true)
        }
        do {
            _ = try ALSACapture<Int16>.clocked(parameters: .init(format: audioFormat(16_000, 12)))
            Issue.record("12 channels were accepted")
        } catch {
            #expect(error.kind == .notOffered)
            #expect(error.detail?.contains("1-8") == true)
        }
    }

    @Test func aCallersBadValuesAreRefusedWithoutATransfer() throws {
        let mono = try AudioFormat(sampleRate: 16_000, channels: 1)
        #expect(throws: ALSAError.self) { _ = try ALSACapture<Int16>.clocked(parameters: .init(format: mono, periodCount: 1)) }
        do {
            _ = try ALSAPlayback<Int16>.clocked(parameters: .init(format: mono, periodFrames: 0))
            Issue.record("an empty period was accepted")
        } catch {
            #expect(error.kind == .invalidArgument && error.code == 0, "\(error)")
        }

        var mic = try ALSACapture<Int16>.clocked(parameters: .init(format: .init(sampleRate: 16_000, channels: 2)))
        var wrong = AudioFrame<Int16>(format: mono, samplesPerChannel: 160)
        #expect { try mic.read(into: &wrong) } throws: { ($0 as? ALSAError)?.kind == .invalidArgument }
        var partial = [Int16](repeating: 0, count: 321)
        #expect { try partial.withUnsafeMutableBufferPointer { try mic.read(into: $0) } } throws: {
            ($0 as? ALSAError)?.kind == .invalidArgument
        }
        #expect(mic.framesDelivered == 0)
        var frame = mic.makeFrame()
        #expect(try mic.read(into: &frame))
        #expect(mic.framesDelivered == 160)

        var speaker = try ALSAPlayback<Int16>.clocked(parameters: .init(format: mono))
        let stereo = AudioFrame<Int16>(format: try .init(sampleRate: 16_000, channels: 2), samplesPerChannel: 160)
        #expect { try speaker.write(stereo) } throws: { ($0 as? ALSAError)?.kind == .invalidArgument }
        #expect(speaker.framesWritten == 0)
    }

    @Test func malformedConfigurationIsATypedError() {
        do {
            _ = try ALSAConfigurationTree(text: "pcm.broken { type file; slave.pcm ")
            Issue.record("a truncated configuration parsed")
        } catch {
            #expect(error.kind == .invalidConfiguration)
        }
        do {
            _ = try ALSAConfigurationTree(contentsOfFile: "/nonexistent/parley.conf")
            Issue.record("a missing configuration file opened")
        } catch {
            #expect(error.pcm == "/nonexistent/parley.conf")
        }
    }

    @Test func deviceHintsListTheVirtualPCMsWithoutACard() throws {
        let pcms = try ALSADevices.pcms()
        #expect(pcms.contains { $0.name == "null" })
    }
}

/// A format the tests know to be valid.
func audioFormat(_ sampleRate: Int, _ channels: Int) -> AudioFormat {
    try! AudioFormat(sampleRate: sampleRate, channels: channels)   // positive constants
}
