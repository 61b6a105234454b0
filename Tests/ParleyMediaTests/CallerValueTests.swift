import Foundation
import Testing
import ParleyMedia

// Values a caller passes that the formats or the buffers cannot take are typed errors
// (MediaFileError.invalidArgument), never traps.

private func isInvalidArgument(_ e: MediaFileError?) -> Bool {
    if case .invalidArgument = e { return true }
    return false
}

@Test func wavWriterRefusesFormatsTheHeaderCannotHold() {
    for format in [WAVFormat(sampleRate: 0, channels: 1), WAVFormat(sampleRate: 16_000, channels: 0),
                   WAVFormat(sampleRate: 16_000, channels: 70_000), WAVFormat(sampleRate: -8_000, channels: 2)] {
        #expect(isInvalidArgument(mediaError { _ = try WAVWriter(sink: MemoryByteSink(name: "w"), format: format) }),
                "\(format.sampleRate) Hz, \(format.channels) ch")
    }
}

@Test func wavWriterRefusesPartialFramesAndUseAfterClose() throws {
    var w = try WAVWriter(sink: MemoryByteSink(name: "w"), format: WAVFormat(sampleRate: 16_000, channels: 2))
    #expect(mediaError { try w.write([Float](repeating: 0, count: 3)) }
            == .invalidArgument(path: "w", reason: "3 samples are not whole frames of 2 channels"))
    try w.write([Float](repeating: 0, count: 4))
    try w.close()
    #expect(mediaError { try w.write([Float](repeating: 0, count: 4)) } == .invalidArgument(path: "w", reason: "write after close"))
    #expect(mediaError { try w.close() } == .invalidArgument(path: "w", reason: "close called twice"))
    #expect(w.framesWritten == 2)
}

@Test func readersRefuseBuffersThatAreNotWholeFrames() throws {
    let bytes = try wavBytes(WAVFormat(sampleRate: 8_000, channels: 2), [Float](repeating: 0.1, count: 200))
    var wav = try WAVReader(bytes: bytes, name: "r")
    var odd = [Float](repeating: 0, count: 5)
    #expect(mediaError { _ = try wav.read(into: &odd) }
            == .invalidArgument(path: "r", reason: "buffer of 5 samples is not whole frames of 2 channels"))
    var odd16 = [Int16](repeating: 0, count: 7)
    #expect(isInvalidArgument(mediaError { _ = try wav.read(into: &odd16) }))
    var whole = [Float](repeating: 0, count: 6)
    #expect(try wav.read(into: &whole) == 3)   // nothing was consumed by the refused reads

    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let path = dir + "/stereo.wav"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let file = try AudioFileReader(path: path)
    #expect(mediaError { _ = try odd.withUnsafeMutableBufferPointer { try file.read(into: $0) } }
            == .invalidArgument(path: path, reason: "buffer of 5 samples is not whole frames of 2 channels"))
    #expect(isInvalidArgument(mediaError { _ = try odd16.withUnsafeMutableBufferPointer { try file.read(into: $0) } }))
}

@Test func byteReaderRefusesSizesBeyondItsBuffer() throws {
    #expect(mediaError { _ = try ByteReader(source: MemoryByteSource([1, 2, 3], name: "b"), bufferSize: 16) }
            == .invalidArgument(path: "b", reason: "read buffer of 16 bytes is under 64"))
    var r = try ByteReader(source: MemoryByteSource([UInt8](repeating: 7, count: 100), name: "b"), bufferSize: 64)
    #expect(isInvalidArgument(mediaError { try r.fill(atLeast: 65) }))
    try r.fill(atLeast: 10)
    #expect(mediaError { try r.consume(r.buffered + 1) }
            == .invalidArgument(path: "b", reason: "cannot consume \(r.buffered + 1) bytes with \(r.buffered) buffered"))
    #expect(isInvalidArgument(mediaError { try r.consume(-1) }))
    try r.consume(4)
    #expect(r.offset == 4)
}

@Test func videoWritersRefuseSizesAndRatesTheirHeadersCannotHold() {
    #expect(isInvalidArgument(mediaError { _ = try IVFWriter(sink: MemoryByteSink(), header: IVFHeader(codec: .vp8, width: 70_000, height: 240)) }))
    #expect(isInvalidArgument(mediaError { _ = try IVFWriter(sink: MemoryByteSink(), header: IVFHeader(codec: .vp8, width: 320, height: -1)) }))
    #expect(isInvalidArgument(mediaError {
        _ = try IVFWriter(sink: MemoryByteSink(), header: IVFHeader(codec: .vp8, width: 320, height: 240, timebaseDenominator: 0))
    }))
    #expect(mediaError { _ = try Y4MWriter(sink: MemoryByteSink(name: "y"), header: Y4MHeader(width: 0, height: 240)) }
            == .invalidArgument(path: "y", reason: "Y4M frame size 0x240 is not positive"))
    #expect(isInvalidArgument(mediaError {
        _ = try Y4MWriter(sink: MemoryByteSink(), header: Y4MHeader(width: 320, height: 240, frameRateNumerator: 0))
    }))
}

@Test func fileSinkRefusesWritesAfterClose() throws {
    let dir = temporaryDirectory()
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let sink = try FileByteSink(path: dir + "/out.bin")
    let bytes: [UInt8] = [1, 2]
    try bytes.withUnsafeBytes { try sink.write($0) }
    try sink.close()
    #expect(mediaError { try bytes.withUnsafeBytes { try sink.write($0) } } == .invalidArgument(path: dir + "/out.bin", reason: "write after close"))
}
