// Whole-file 16-bit WAV and I420 Y4M readers, written as a stop-gap before ParleyMedia landed.
// `parley send`/`receive` now use ParleyMedia's readers and writers; `parley codec`
// (CodecCommand.swift) still calls these. Delete this file once it moves to ParleyMedia too.

#if canImport(Glibc)
import Glibc
#endif
import ParleyCore

/// A media file could not be read or written.
struct MediaFileError: Error, CustomStringConvertible {
    let path: String
    let reason: String
    var description: String { "\(path): \(reason)" }
}

/// Reads a whole file.
func readWholeFile(_ path: String) throws(MediaFileError) -> [UInt8] {
    guard let f = fopen(path, "rb") else { throw MediaFileError(path: path, reason: Errno.current.description) }
    defer { fclose(f) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = chunk.withUnsafeMutableBytes { fread($0.baseAddress, 1, $0.count, f) }
        if n > 0 { out.append(contentsOf: chunk[0..<n]) }
        if n < chunk.count { break }
    }
    if ferror(f) != 0 { throw MediaFileError(path: path, reason: "read error") }
    return out
}

private func le16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
private func le32(_ b: [UInt8], _ i: Int) -> Int { le16(b, i) | le16(b, i + 2) << 16 }

/// Interleaved 16-bit PCM from a WAV file.
struct PCM16Audio {
    var sampleRate: Int
    var channels: Int
    var samples: [Int16]
}

/// Parses a RIFF/WAVE file holding 16-bit integer PCM (format 1, or 0xFFFE with the PCM subtype).
func readWAV(_ path: String) throws(MediaFileError) -> PCM16Audio {
    let b = try readWholeFile(path)
    guard b.count >= 12, b[0..<4].elementsEqual("RIFF".utf8), b[8..<12].elementsEqual("WAVE".utf8) else {
        throw MediaFileError(path: path, reason: "not a RIFF/WAVE file")
    }
    var p = 12
    var format: (rate: Int, channels: Int, bits: Int, tag: Int)?
    while p + 8 <= b.count {
        let id = String(decoding: b[p..<(p + 4)], as: UTF8.self)
        let size = le32(b, p + 4)
        let body = p + 8
        guard size >= 0, body + size <= b.count || id == "data" else {
            throw MediaFileError(path: path, reason: "chunk '\(id)' runs past the end of the file")
        }
        if id == "fmt " {
            guard size >= 16 else { throw MediaFileError(path: path, reason: "fmt chunk too short") }
            format = (le32(b, body + 4), le16(b, body + 2), le16(b, body + 14), le16(b, body))
        } else if id == "data" {
            guard let f = format else { throw MediaFileError(path: path, reason: "data chunk before fmt chunk") }
            guard f.tag == 1 || f.tag == 0xFFFE, f.bits == 16 else {
                throw MediaFileError(path: path, reason: "only 16-bit PCM WAV is supported (format \(f.tag), \(f.bits) bits)")
            }
            guard f.channels >= 1, f.channels <= 2, f.rate > 0 else {
                throw MediaFileError(path: path, reason: "unsupported channel count \(f.channels) or rate \(f.rate)")
            }
            let end = min(b.count, body + size)
            let frames = (end - body) / (2 * f.channels)
            var samples = [Int16](repeating: 0, count: frames * f.channels)
            for i in samples.indices { samples[i] = Int16(truncatingIfNeeded: le16(b, body + 2 * i)) }
            return PCM16Audio(sampleRate: f.rate, channels: f.channels, samples: samples)
        }
        p = body + size + (size & 1)
    }
    throw MediaFileError(path: path, reason: "no data chunk")
}

/// An I420 Y4M stream read whole: size, frame rate and the frames.
struct Y4MVideo {
    var width: Int
    var height: Int
    var fpsNumerator: Int
    var fpsDenominator: Int
    var frames: [VideoFrame]
}

/// Parses a YUV4MPEG2 file with 4:2:0 chroma (C420, C420jpeg, C420mpeg2, C420paldv or none).
func readY4M(_ path: String) throws(MediaFileError) -> Y4MVideo {
    let b = try readWholeFile(path)
    guard let nl = b.firstIndex(of: 0x0A), b.starts(with: "YUV4MPEG2".utf8) else {
        throw MediaFileError(path: path, reason: "not a YUV4MPEG2 file")
    }
    var w = 0, h = 0, num = 30, den = 1
    for token in String(decoding: b[0..<nl], as: UTF8.self).split(separator: " ").dropFirst() {
        let v = token.dropFirst()
        switch token.first {
        case "W": w = Int(v) ?? 0
        case "H": h = Int(v) ?? 0
        case "F":
            let parts = v.split(separator: ":")
            if parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]), n > 0, d > 0 { num = n; den = d }
        case "C":
            guard v.hasPrefix("420") else { throw MediaFileError(path: path, reason: "only 4:2:0 Y4M is supported (C\(v))") }
        default: break
        }
    }
    guard w > 0, h > 0, w <= 16384, h <= 16384 else { throw MediaFileError(path: path, reason: "bad picture size \(w)x\(h)") }
    let frameBytes = w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2)
    var frames: [VideoFrame] = []
    var p = nl + 1
    var index = 0
    while p < b.count {
        guard let end = b[p...].firstIndex(of: 0x0A), b[p...].starts(with: "FRAME".utf8) else {
            throw MediaFileError(path: path, reason: "frame \(index): missing FRAME header")
        }
        p = end + 1
        guard p + frameBytes <= b.count else { throw MediaFileError(path: path, reason: "frame \(index) truncated") }
        let ts = UInt32(truncatingIfNeeded: index * 90_000 * den / num)
        do {
            frames.append(try VideoFrame(width: w, height: h, strideY: w, strideUV: (w + 1) / 2,
                                         data: Array(b[p..<(p + frameBytes)]), timestamp: ts))
        } catch {
            throw MediaFileError(path: path, reason: "frame \(index): \(error)")
        }
        p += frameBytes
        index += 1
    }
    return Y4MVideo(width: w, height: h, fpsNumerator: num, fpsDenominator: den, frames: frames)
}
