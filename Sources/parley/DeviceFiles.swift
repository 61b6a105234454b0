// Minimal file writers/readers the device commands need: WAV (16-bit PCM and 32-bit float),
// Y4M and IVF. Kept private to the CLI until ParleyMedia's readers and writers land on main;
// then the commands switch to those and this file goes away.
import Foundation
import ParleyCore

/// A file that could not be read or written, with the path and what was wrong.
struct DeviceFileError: Error, CustomStringConvertible {
    let path: String
    let message: String
    var description: String { "\(path): \(message)" }
}

/// Appends bytes to a file through a FileHandle, mapping failures to ``DeviceFileError``.
final class DeviceFileSink {
    let path: String
    private let handle: FileHandle

    init(path: String) throws(DeviceFileError) {
        self.path = path
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            throw DeviceFileError(path: path, message: "cannot create the file (check the directory exists and is writable)")
        }
        do { handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path)) } catch {
            throw DeviceFileError(path: path, message: "cannot open for writing: \(error.localizedDescription)")
        }
    }

    func write(_ data: Data) throws(DeviceFileError) {
        do { try handle.write(contentsOf: data) } catch {
            throw DeviceFileError(path: path, message: "write failed: \(error.localizedDescription)")
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) throws(DeviceFileError) { try write(Data(bytes)) }
    func write(_ bytes: [UInt8]) throws(DeviceFileError) { try write(Data(bytes)) }

    func overwrite(at offset: UInt64, _ bytes: [UInt8]) throws(DeviceFileError) {
        do {
            let end = try handle.offset()
            try handle.seek(toOffset: offset)
            try handle.write(contentsOf: Data(bytes))
            try handle.seek(toOffset: end)
        } catch {
            throw DeviceFileError(path: path, message: "cannot update the header: \(error.localizedDescription)")
        }
    }

    func close() throws(DeviceFileError) {
        do { try handle.close() } catch {
            throw DeviceFileError(path: path, message: "close failed: \(error.localizedDescription)")
        }
    }
}

private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] }
private func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
private func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8((v >> (8 * UInt64($0))) & 0xFF) } }

/// Writes a WAV file incrementally; the RIFF and data sizes are filled in by ``finish()``.
final class DeviceWAVWriter {
    let format: AudioFormat
    let isFloat: Bool
    private let sink: DeviceFileSink
    private var dataBytes = 0

    init(path: String, format: AudioFormat, isFloat: Bool) throws(DeviceFileError) {
        self.format = format
        self.isFloat = isFloat
        sink = try DeviceFileSink(path: path)
        try sink.write(Self.header(format: format, isFloat: isFloat, dataBytes: 0))
    }

    static func header(format: AudioFormat, isFloat: Bool, dataBytes: Int) -> [UInt8] {
        let bytesPerSample = isFloat ? 4 : 2
        let blockAlign = bytesPerSample * format.channels
        var h: [UInt8] = Array("RIFF".utf8) + le32(36 + dataBytes) + Array("WAVE".utf8)
        h += Array("fmt ".utf8) + le32(16) + le16(isFloat ? 3 : 1) + le16(format.channels)
        h += le32(format.sampleRate) + le32(format.sampleRate * blockAlign) + le16(blockAlign) + le16(bytesPerSample * 8)
        h += Array("data".utf8) + le32(dataBytes)
        return h
    }

    /// Appends interleaved samples (little-endian, as on every platform Parley runs on).
    func append<S: AudioSample>(_ samples: UnsafeBufferPointer<S>) throws(DeviceFileError) {
        precondition((S.self == Float.self) == isFloat, "sample type must match the WAV format")
        try sink.write(UnsafeRawBufferPointer(samples))
        dataBytes += samples.count * MemoryLayout<S>.size
    }

    func finish() throws(DeviceFileError) {
        try sink.overwrite(at: 4, le32(36 + dataBytes))
        try sink.overwrite(at: 40, le32(dataBytes))
        try sink.close()
    }
}

/// A whole WAV file read into memory: 16-bit PCM or 32-bit float, any rate and channel count.
struct DeviceWAVFile {
    var format: AudioFormat
    var isFloat: Bool
    var int16: [Int16] = []
    var float: [Float] = []

    init(path: String) throws(DeviceFileError) {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw DeviceFileError(path: path, message: "cannot read: \(error.localizedDescription)")
        }
        let bytes = [UInt8](data)
        func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else {
            throw DeviceFileError(path: path, message: "not a WAV file (no RIFF/WAVE header)")
        }
        var offset = 12
        var fmt: (tag: Int, channels: Int, rate: Int, bits: Int)?
        var dataRange: Range<Int>?
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = u32(offset + 4)
            let body = offset + 8
            guard size <= bytes.count - body else {
                if id == "data" { dataRange = body..<bytes.count; break }  // truncated recording: keep what is there
                throw DeviceFileError(path: path, message: "chunk '\(id)' runs past the end of the file")
            }
            if id == "fmt " {
                guard size >= 16 else { throw DeviceFileError(path: path, message: "fmt chunk too short") }
                var tag = u16(body)
                if tag == 0xFFFE && size >= 40 { tag = u16(body + 24) }  // WAVE_FORMAT_EXTENSIBLE: sub-format
                fmt = (tag, u16(body + 2), u32(body + 4), u16(body + 14))
            } else if id == "data" {
                dataRange = body..<body + size
            }
            offset = body + size + (size & 1)
        }
        guard let fmt else { throw DeviceFileError(path: path, message: "no fmt chunk") }
        guard let dataRange else { throw DeviceFileError(path: path, message: "no data chunk") }
        guard fmt.channels > 0, fmt.channels <= 32, fmt.rate > 0, fmt.rate <= 768_000 else {
            throw DeviceFileError(path: path, message: "implausible format: \(fmt.channels) channels at \(fmt.rate) Hz")
        }
        switch (fmt.tag, fmt.bits) {
        case (1, 16): isFloat = false
        case (3, 32): isFloat = true
        default:
            throw DeviceFileError(path: path, message: "unsupported sample format (tag \(fmt.tag), \(fmt.bits) bits); "
                                  + "play supports 16-bit PCM and 32-bit float WAV")
        }
        format = AudioFormat(sampleRate: fmt.rate, channels: fmt.channels)
        let frameBytes = (fmt.bits / 8) * fmt.channels
        let usable = (dataRange.count / frameBytes) * frameBytes
        bytes[dataRange.lowerBound..<dataRange.lowerBound + usable].withUnsafeBytes { raw in
            if isFloat { float = Array(raw.bindMemory(to: Float.self)) } else { int16 = Array(raw.bindMemory(to: Int16.self)) }
        }
    }
}

/// Writes I420 pictures as a YUV4MPEG2 stream.
final class DeviceY4MWriter {
    private let sink: DeviceFileSink
    init(path: String, width: Int, height: Int, framesPerSecond: Int) throws(DeviceFileError) {
        sink = try DeviceFileSink(path: path)
        try sink.write(Array("YUV4MPEG2 W\(width) H\(height) F\(framesPerSecond):1 Ip A1:1 C420jpeg\n".utf8))
    }
    func append(_ frame: VideoFrame) throws(DeviceFileError) {
        try sink.write(Array("FRAME\n".utf8))
        let w = frame.width, h = frame.height, cw = frame.chromaWidth, ch = frame.chromaHeight
        let (sy, suv, ou, ov) = (frame.strideY, frame.strideUV, frame.offsetU, frame.offsetV)
        var out = Data(capacity: w * h + 2 * cw * ch)
        frame.data.withUnsafeBytes { raw in
            for r in 0..<h { out.append(contentsOf: raw[(r * sy)..<(r * sy + w)]) }
            for base in [ou, ov] {
                for r in 0..<ch { out.append(contentsOf: raw[(base + r * suv)..<(base + r * suv + cw)]) }
            }
        }
        try sink.write(out)
    }
    func finish() throws(DeviceFileError) { try sink.close() }
}

/// Writes VP8 frames into an IVF container (32-byte file header, 12-byte frame headers).
final class DeviceIVFWriter {
    private let sink: DeviceFileSink
    private var frames = 0
    init(path: String, width: Int, height: Int, framesPerSecond: Int) throws(DeviceFileError) {
        sink = try DeviceFileSink(path: path)
        var h: [UInt8] = Array("DKIF".utf8) + le16(0) + le16(32) + Array("VP80".utf8)
        h += le16(width) + le16(height) + le32(framesPerSecond) + le32(1) + le32(0) + le32(0)
        try sink.write(h)
    }
    /// Appends one compressed frame with its presentation index (in frame periods).
    func append(_ bytes: UnsafeRawBufferPointer, pts: UInt64) throws(DeviceFileError) {
        try sink.write(le32(bytes.count) + le64(pts))
        try sink.write(bytes)
        frames += 1
    }
    func finish() throws(DeviceFileError) {
        try sink.overwrite(at: 24, le32(frames))
        try sink.close()
    }
}
