import Foundation
import Testing
@testable import ParleyMedia

/// Samples exactly representable in `encoding`, so a write-read round trip must be exact.
private func representableSamples(_ encoding: WAVSampleEncoding, count: Int, seed: UInt64) -> [Float] {
    var rng = TestRandom(seed: seed)
    return (0..<count).map { _ in
        switch encoding {
        case .int16: return Float(rng.int(in: -32768...32767)) / 32768
        case .int24: return Float(rng.int(in: -8_388_608...8_388_607)) / 8_388_608
        // Float has a 24-bit significand: keep 24 significant bits of the 32-bit value.
        case .int32: return Float(rng.int(in: -8_388_608...8_388_607) * 256) / 2_147_483_648
        case .float32: return Float(rng.int(in: -1_000_000...1_000_000)) / 999_999.5
        }
    }
}

@Suite struct WAVTests {
    static let encodings: [WAVSampleEncoding] = [.int16, .int24, .int32, .float32]

    @Test(arguments: encodings, [1, 2, 6])
    func everyEncodingAndChannelCountRoundTripsExactly(encoding: WAVSampleEncoding, channels: Int) throws {
        let format = WAVFormat(sampleRate: 44_100, channels: channels, encoding: encoding)
        let samples = representableSamples(encoding, count: 1000 * channels, seed: UInt64(channels * 7 + 1))
        let bytes = try wavBytes(format, samples)
        var r = try WAVReader(bytes: bytes)
        #expect(r.format == format)
        #expect(r.frameCount == 1000)
        var got = [Float](repeating: .nan, count: 333 * channels)   // odd chunking on purpose
        var all: [Float] = []
        while true {
            let n = try r.read(into: &got)
            if n == 0 { break }
            all += got[0..<(n * channels)]
        }
        #expect(all == samples)
        // Re-writing what was read gives the same bytes.
        #expect(try wavBytes(format, all) == bytes)
    }

    @Test(arguments: [false, true])
    func plainAndExtensibleHeadersBothRead(extensible: Bool) throws {
        let format = WAVFormat(sampleRate: 16_000, channels: 2, encoding: .int16, extensible: extensible,
                               channelMask: extensible ? 3 : 0)
        let bytes = try wavBytes(format, [0.5, -0.5, 0.25, -0.25])
        #expect(bytes.count == (extensible ? 68 : 44) + 8)
        let r = try WAVReader(bytes: bytes)
        #expect(r.format.extensible == extensible)
        #expect(r.format.channelMask == (extensible ? 3 : 0))
    }

    @Test func int16ReadsExactlyAsInt16AndWideFormatsKeepTheTopBits() throws {
        let values: [Int16] = [0, 1, -1, 32767, -32768, 1234, -4321]
        for encoding in Self.encodings {
            let sink = MemoryByteSink()
            var w = try WAVWriter(sink: sink, format: WAVFormat(sampleRate: 8000, channels: 1, encoding: encoding))
            try w.write(values)
            try w.close()
            var r = try WAVReader(bytes: sink.bytes)
            var got = [Int16](repeating: 0, count: 16)
            let n = try r.read(into: &got)
            #expect(n == values.count)
            #expect(Array(got[0..<n]) == values, "\(encoding)")
        }
    }

    @Test func fileRoundTripPatchesSizesOnClose() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/t.wav"
        let format = WAVFormat(sampleRate: 48_000, channels: 2, encoding: .int24)
        let samples = representableSamples(.int24, count: 4800 * 2, seed: 3)
        var w = try WAVWriter(path: path, format: format)
        for k in stride(from: 0, to: samples.count, by: 960) { try w.write(Array(samples[k..<(k + 960)])) }
        try w.close()
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        #expect(size == 68 + 4800 * 6)
        var r = try WAVReader(path: path)
        #expect(r.frameCount == 4800)
        var got = [Float](repeating: 0, count: samples.count)
        #expect(try r.read(into: &got) == 4800)
        #expect(got == samples)
        #expect(try r.read(into: &got) == 0)
    }

    @Test func sampleMediaSpeechHasTheAgreedFormat() throws {
        let r16 = try WAVReader(path: sampleMedia + "/speech/speech-16k.wav")
        #expect(r16.format == WAVFormat(sampleRate: 16_000, channels: 1, encoding: .int16))
        #expect((r16.frameCount ?? 0) > 16_000 * 5)
        let r48 = try WAVReader(path: sampleMedia + "/speech/speech-48k.wav")
        #expect(r48.format.sampleRate == 48_000)
    }

    @Test func unclosedWriterLeavesAnOpenEndedFileThatReadsToTheEnd() throws {
        let sink = MemoryByteSink()
        var w = try WAVWriter(sink: sink, format: WAVFormat(sampleRate: 8000, channels: 1))
        try w.write([Int16](repeating: 7, count: 100))
        var r = try WAVReader(bytes: sink.bytes)
        #expect(r.frameCount == nil)
        var got = [Int16](repeating: 0, count: 256)
        #expect(try r.read(into: &got) == 100)
        #expect(try r.read(into: &got) == 0)
    }

    // MARK: Bad input

    @Test func truncatedDataDeliversWhatIsThereThenSaysHowMuchWasRead() throws {
        let bytes = try wavBytes(WAVFormat(sampleRate: 8000, channels: 1), [Float](repeating: 0.25, count: 1000))
        var r = try WAVReader(bytes: Array(bytes[0..<(44 + 601)]), name: "cut.wav")
        var got = [Float](repeating: 0, count: 2000)
        #expect(try r.read(into: &got) == 300)
        let e = mediaError { _ = try r.read(into: &got) }
        #expect(e == .truncated(path: "cut.wav", offset: 44 + 601, expected: 2000, got: 601))
    }

    @Test func truncatedHeaderIsReported() {
        let e = mediaError { _ = try WAVReader(bytes: Array("RIFF\u{24}\0\0\0WAVEfmt ".utf8), name: "h.wav") }
        guard case .truncated(path: "h.wav", _, _, _)? = e else {
            Issue.record("expected truncated, got \(String(describing: e))"); return
        }
    }

    @Test func zeroLengthDirectoryAndMissingFilesAreTypedErrors() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let empty = dir + "/empty.wav"
        _ = FileManager.default.createFile(atPath: empty, contents: Data())
        #expect(mediaError { _ = try WAVReader(path: empty) } == .empty(path: empty))
        #expect(mediaError { _ = try WAVReader(bytes: []) } == .empty(path: "<memory>"))
        #expect(mediaError { _ = try WAVReader(path: dir) } == .notARegularFile(path: dir, kind: "a directory"))
        guard case .io(_, "open", _, _)? = mediaError({ _ = try WAVReader(path: dir + "/missing.wav") }) else {
            Issue.record("missing file"); return
        }
    }

    @Test func corruptHeadersNameTheProblem() throws {
        var bytes = try wavBytes(WAVFormat(sampleRate: 8000, channels: 1), [0, 0])
        bytes[0] = 0x58   // "XIFF"
        #expect(mediaError { _ = try WAVReader(bytes: bytes) }
                == .corrupt(path: "<memory>", reason: "not a RIFF file (starts with 'XIFF')", offset: 0))
        bytes[0] = 0x52
        bytes[32] = 3     // block align 3 for mono 16-bit
        guard case .corrupt(_, let reason, 32)? = mediaError({ _ = try WAVReader(bytes: bytes) }) else {
            Issue.record("block align"); return
        }
        #expect(reason.contains("block align"))
    }

    @Test func unsupportedFormatsAreRefusedByName() throws {
        var bytes = try wavBytes(WAVFormat(sampleRate: 8000, channels: 1), [0, 0])
        bytes[20] = 0x55  // MPEG Layer 3 tag
        #expect(mediaError { _ = try WAVReader(bytes: bytes) }
                == .unsupported(path: "<memory>", what: "WAV format tag 0x0055 (MPEG Layer 3)"))
        bytes[20] = 1; bytes[34] = 8; bytes[32] = 1  // 8-bit PCM
        #expect(mediaError { _ = try WAVReader(bytes: bytes) }
                == .unsupported(path: "<memory>", what: "8-bit integer PCM WAV"))
        bytes[0...3] = [0x52, 0x49, 0x46, 0x58]  // RIFX
        #expect(mediaError { _ = try WAVReader(bytes: bytes) }
                == .unsupported(path: "<memory>", what: "big-endian RIFX WAV"))
    }

    @Test func nanSamplesAreRejectedByDefaultOrReplacedAndCounted() throws {
        let samples: [Float] = [0.1, 0.2, .nan, 0.3, .infinity, -0.1]
        let bytes = try wavBytes(WAVFormat(sampleRate: 8000, channels: 2, encoding: .float32), samples)
        var r = try WAVReader(bytes: bytes)
        var got = [Float](repeating: 0, count: 6)
        #expect(mediaError { _ = try r.read(into: &got) } == .nonFiniteSamples(path: "<memory>", frame: 1, count: 2))
        var r16 = try WAVReader(bytes: bytes)
        var got16 = [Int16](repeating: 0, count: 6)
        #expect(mediaError { _ = try r16.read(into: &got16) } == .nonFiniteSamples(path: "<memory>", frame: 1, count: 2))
        var lenient = try WAVReader(bytes: bytes)
        lenient.nonFinitePolicy = .replaceWithZero
        #expect(try lenient.read(into: &got) == 3)
        #expect(got == [0.1, 0.2, 0, 0.3, 0, -0.1])
        #expect(lenient.nonFiniteSamplesReplaced == 2)
    }

    @Test func aLongFileStreamsWithFlatMemory() throws {
        // Three minutes at 16 kHz, written and read 10 ms at a time.
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/long.wav"
        var w = try WAVWriter(path: path, format: WAVFormat(sampleRate: 16_000, channels: 1))
        var block = [Int16](repeating: 0, count: 160)
        for k in 0..<18_000 {
            for i in 0..<160 { block[i] = Int16(truncatingIfNeeded: k &* 160 &+ i) }
            try w.write(block)
        }
        try w.close()
        var r = try WAVReader(path: path)
        let bufferBytes = r.bufferBytes
        var frames = 0
        var mismatches = 0
        while true {
            let n = try r.read(into: &block)
            if n == 0 { break }
            for i in 0..<n where block[i] != Int16(truncatingIfNeeded: frames + i) { mismatches += 1 }
            frames += n
            #expect(r.bufferBytes == bufferBytes)
        }
        #expect(frames == 18_000 * 160)
        #expect(mismatches == 0)
        #expect(bufferBytes < 100_000)
    }
}
