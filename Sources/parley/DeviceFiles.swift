// Minimal Y4M and IVF writers for `parley record --video`. Kept private to the CLI until
// ParleyMedia's Y4M/IVF writers land on main; then the command switches to those and this file
// goes away. (WAV already comes from ParleyMedia's WAVReader/WAVWriter.)
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
