import Foundation
import Testing
@testable import ParleyMedia

@Suite struct Y4MTests {
    @Test func sampleVideoRoundTripsByteForByte() throws {
        let path = sampleMedia + "/video/sample.y4m"
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var r = try Y4MReader(path: path)
        #expect(r.header.width == 320 && r.header.height == 240)
        #expect(r.header.frameRateNumerator == 30 && r.header.frameRateDenominator == 1)
        #expect(r.header.colourspace == .c420jpeg)
        let sink = MemoryByteSink()
        var w = try Y4MWriter(sink: sink, header: r.header)
        var frame = try VideoFrame(width: 320, height: 240)
        var timestamps: [UInt32] = []
        while try r.read(into: &frame) {
            timestamps.append(frame.timestamp)
            try w.write(frame)
        }
        #expect(r.framesRead == 15)
        #expect(timestamps.prefix(3) == [0, 3000, 6000])
        #expect(sink.bytes == original)
    }

    @Test func stridedFramesAndOddSizesRoundTripExactly() throws {
        let header = Y4MHeader(width: 7, height: 5, frameRateNumerator: 30000, frameRateDenominator: 1001,
                               colourspace: .c420mpeg2)
        var rng = TestRandom(seed: 11)
        // Strides wider than the picture; the padding must not be written.
        var frames: [VideoFrame] = []
        for _ in 0..<3 {
            let data = (0..<(9 * 5 + 2 * 6 * 3)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            frames.append(try VideoFrame(width: 7, height: 5, strideY: 9, strideUV: 6, data: data))
        }
        let sink = MemoryByteSink()
        var w = try Y4MWriter(sink: sink, header: header)
        for f in frames { try w.write(f) }
        #expect(sink.bytes.count == header.line.utf8.count + 1 + 3 * (6 + header.frameByteCount))
        var r = try Y4MReader(bytes: sink.bytes)
        #expect(r.header == header)
        var back = try VideoFrame(width: 7, height: 5, strideY: 8, strideUV: 4, data: [UInt8](repeating: 0, count: 8 * 5 + 2 * 4 * 3))
        for f in frames {
            #expect(try r.read(into: &back))
            for y in 0..<5 { for x in 0..<7 { #expect(back.data[y * 8 + x] == f.data[y * 9 + x]) } }
            for p in 0..<2 { for y in 0..<3 { for x in 0..<4 {
                #expect(back.data[back.offsetU + p * 12 + y * 4 + x] == f.data[f.offsetU + p * 18 + y * 6 + x])
            } } }
        }
        #expect(try r.read(into: &back) == false)
    }

    @Test(arguments: ["444", "422", "mono", "420p10", "411"])
    func non420ColourspacesAreRefusedByName(cs: String) {
        let bytes = Array("YUV4MPEG2 W4 H4 F30:1 C\(cs)\n".utf8)
        #expect(mediaError { _ = try Y4MReader(bytes: bytes) }
                == .unsupported(path: "<memory>", what: "Y4M colourspace C\(cs) (only 4:2:0 is supported)"))
    }

    @Test func badHeadersAndTruncatedFramesAreReported() throws {
        #expect(mediaError { _ = try Y4MReader(bytes: []) } == .empty(path: "<memory>"))
        #expect(mediaError { _ = try Y4MReader(bytes: Array("RIFF....\n".utf8)) }
                == .corrupt(path: "<memory>", reason: "not a Y4M file (no YUV4MPEG2 signature)", offset: 0))
        #expect(mediaError { _ = try Y4MReader(bytes: Array("YUV4MPEG2 W0 H4 F30:1\n".utf8)) }
                == .corrupt(path: "<memory>", reason: "missing or zero width/height in the Y4M header", offset: 0))
        #expect(mediaError { _ = try Y4MReader(bytes: Array("YUV4MPEG2 W4 H4 F30:0\n".utf8)) }
                == .corrupt(path: "<memory>", reason: "bad frame rate 'F30:0' in the Y4M header", offset: 0))
        guard case .truncated? = mediaError({ _ = try Y4MReader(bytes: Array("YUV4MPEG2 W4 H4".utf8)) }) else {
            Issue.record("header without newline"); return
        }
        // A frame cut short: 4x4 needs 24 bytes; 10 are there.
        let header = "YUV4MPEG2 W4 H4 F30:1\n"
        var r = try Y4MReader(bytes: Array((header + "FRAME\n").utf8) + [UInt8](repeating: 9, count: 10))
        var f = try VideoFrame(width: 4, height: 4)
        #expect(mediaError { _ = try r.read(into: &f) }
                == .truncated(path: "<memory>", offset: header.utf8.count + 6, expected: 24, got: 10))
        var r2 = try Y4MReader(bytes: Array((header + "FRAMX\n").utf8))
        #expect(mediaError { _ = try r2.read(into: &f) }
                == .corrupt(path: "<memory>", reason: "expected a FRAME line", offset: header.utf8.count))
        var r3 = try Y4MReader(bytes: Array(header.utf8))
        var wrong = try VideoFrame(width: 8, height: 4)
        guard case .invalidArgument? = mediaError({ _ = try r3.read(into: &wrong) }) else {
            Issue.record("size mismatch"); return
        }
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(mediaError { _ = try Y4MReader(path: dir) } != nil)
    }
}

@Suite struct IVFTests {
    @Test(arguments: [IVFCodec.vp8, .vp9])
    func framesAndHeaderRoundTripExactly(codec: IVFCodec) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/t.ivf"
        let header = IVFHeader(codec: codec, width: 320, height: 240, timebaseNumerator: 1, timebaseDenominator: 30)
        var rng = TestRandom(seed: 5)
        let frames: [[UInt8]] = (0..<20).map { i in (0..<(i * 37 + 1)).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
        var w = try IVFWriter(path: path, header: header)
        for (i, f) in frames.enumerated() { try w.write(f, timestamp: UInt64(i * 3)) }
        try w.close()
        var r = try IVFReader(path: path)
        var expected = header
        expected.frameCount = 20
        #expect(r.header == expected)
        var buffer: [UInt8] = []
        for (i, f) in frames.enumerated() {
            let fh = try #require(try r.read(into: &buffer))
            #expect(fh == IVFFrameHeader(size: f.count, timestamp: UInt64(i * 3)))
            #expect(Array(buffer[0..<fh.size]) == f)
        }
        #expect(try r.read(into: &buffer) == nil)
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int
        #expect(size == 32 + 20 * 12 + frames.reduce(0) { $0 + $1.count })
    }

    @Test func badFilesAreReported() throws {
        let sink = MemoryByteSink()
        var w = try IVFWriter(sink: sink, header: IVFHeader(codec: .vp8, width: 16, height: 16))
        try w.write([1, 2, 3, 4, 5], timestamp: 0)
        try w.close()
        let good = sink.bytes
        #expect(mediaError { _ = try IVFReader(bytes: []) } == .empty(path: "<memory>"))
        #expect(mediaError { _ = try IVFReader(bytes: Array(good[0..<20])) }
                == .truncated(path: "<memory>", offset: 0, expected: 32, got: 20))
        var av1 = good; av1[8...11] = [0x41, 0x56, 0x30, 0x31]
        #expect(mediaError { _ = try IVFReader(bytes: av1) }
                == .unsupported(path: "<memory>", what: "IVF FourCC 'AV01' (VP80 and VP90 are supported)"))
        var notIVF = good; notIVF[0] = 0x58
        guard case .corrupt? = mediaError({ _ = try IVFReader(bytes: notIVF) }) else { Issue.record("magic"); return }
        var buffer: [UInt8] = []
        var cut = try IVFReader(bytes: Array(good[0..<(32 + 12 + 3)]))
        #expect(mediaError { _ = try cut.read(into: &buffer) }
                == .truncated(path: "<memory>", offset: 44, expected: 5, got: 3))
        var cutHeader = try IVFReader(bytes: Array(good[0..<(32 + 7)]))
        #expect(mediaError { _ = try cutHeader.read(into: &buffer) }
                == .truncated(path: "<memory>", offset: 32, expected: 12, got: 7))
        var huge = good; huge[32...35] = [0xff, 0xff, 0xff, 0x7f]
        var hr = try IVFReader(bytes: huge)
        guard case .corrupt? = mediaError({ _ = try hr.read(into: &buffer) }) else { Issue.record("huge"); return }
    }
}
