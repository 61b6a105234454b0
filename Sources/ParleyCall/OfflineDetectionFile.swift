// Opening a file for offline detection: checks that give clear messages (missing, directory,
// empty), then the decoding library.

#if canImport(Glibc)
import Glibc
#endif
import CSndFile

/// Opens `path` for ``OfflineDetector``: every failure becomes an ``OfflineDetectionError``
/// with a sentence for the user.
func openOfflineAudioFile(_ path: String) throws(OfflineDetectionError) -> SndFileSource {
    var st = stat()
    guard stat(path, &st) == 0 else {
        let e = errno
        if e == ENOENT || e == ENOTDIR {
            throw OfflineDetectionError(.notFound, path: path, message: "no such file")
        }
        throw OfflineDetectionError(.unreadable, path: path, message: "cannot open: \(String(cString: strerror(e)))")
    }
    if (st.st_mode & S_IFMT) == S_IFDIR {
        throw OfflineDetectionError(.isDirectory, path: path, message: "is a directory, not an audio file")
    }
    if (st.st_mode & S_IFMT) == S_IFREG && st.st_size == 0 {
        throw OfflineDetectionError(.empty, path: path, message: "empty file (0 bytes): no audio")
    }
    guard access(path, R_OK) == 0 else {
        throw OfflineDetectionError(.unreadable, path: path, message: "cannot open: \(String(cString: strerror(errno)))")
    }
    return try SndFileSource(path: path)
}

/// A file read through libsndfile as interleaved floats.
///
/// libsndfile quietly shortens a WAV whose header announces more data than the file holds; its
/// log then says `data : N (should be M)`, from which ``expectedFrames`` recovers the length
/// the header announced, so that truncation is reported rather than hidden.
final class SndFileSource: OfflineAudioSource {
    let sampleRate: Int
    let channels: Int
    let expectedFrames: Int64?
    private let file: OpaquePointer

    init(path: String) throws(OfflineDetectionError) {
        var info = SF_INFO()
        guard let f = sf_open(path, Int32(SFM_READ), &info) else {
            let message = String(cString: sf_strerror(nil))
            throw OfflineDetectionError(.unsupportedFormat, path: path,
                                        message: "unsupported or corrupt audio file (libsndfile: \(message))")
        }
        guard info.samplerate > 0, info.channels > 0 else {
            sf_close(f)
            throw OfflineDetectionError(.unsupportedAudio, path: path,
                                        message: "invalid format: \(info.samplerate) Hz, \(info.channels) channels")
        }
        file = f
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        // Normalise integer formats to [-1, 1) (libsndfile's default for float reads).
        sf_command(f, Int32(SFC_SET_NORM_FLOAT), nil, Int32(SF_TRUE))
        var frames = info.frames > 0 && info.frames < Int64.max / 2 ? Int64(info.frames) : nil
        if let known = frames, let (declared, actual) = Self.shortenedDataChunk(f), actual > 0 {
            frames = known * declared / actual
        }
        expectedFrames = frames
    }

    deinit { sf_close(file) }

    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(OfflineReadError) -> Int {
        let want = buffer.count / channels
        let n = sf_readf_float(file, buffer.baseAddress, sf_count_t(want))
        if n <= 0 {
            let code = sf_error(file)
            if code != 0 { throw OfflineReadError(message: String(cString: sf_strerror(file))) }
            return 0
        }
        return Int(n)
    }

    /// The `data : N (should be M)` line of libsndfile's log: (declared, actual) bytes.
    private static func shortenedDataChunk(_ f: OpaquePointer) -> (Int64, Int64)? {
        var log = [CChar](repeating: 0, count: 4096)
        _ = sf_command(f, Int32(SFC_GET_LOG_INFO), &log, Int32(log.count))
        let text = String(decoding: log.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("data") && line.contains("should be") {
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int64($0) }
            if numbers.count >= 2 { return (numbers[0], numbers[1]) }
        }
        return nil
    }
}
