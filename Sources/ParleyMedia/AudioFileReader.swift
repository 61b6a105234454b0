import CSndFile
#if canImport(Glibc)
import Glibc
#endif

/// Reads any audio file libsndfile can decode (WAV, FLAC, Ogg Vorbis, Ogg Opus, MP3, AIFF,
/// AU, CAF, W64, ...) at any rate and channel count, streaming interleaved frames as Float
/// (nominally [-1, 1], libsndfile's normalisation) or Int16.
///
/// Errors: a directory, a device or a missing file, a zero-length file, a format libsndfile
/// does not recognise (``MediaFileError/unsupported(path:what:)``, with libsndfile's message)
/// and decoder failures (``MediaFileError/library(path:message:)``, `sf_strerror`).
/// A file whose header announces more audio than the file holds reads what is there and then
/// throws ``MediaFileError/truncated(path:offset:expected:got:)``, with `expected`/`got` in
/// sample frames and `offset` -1 (libsndfile does not expose byte offsets).
///
/// NaN/infinite samples (possible in float files): by default the read that meets them throws
/// ``MediaFileError/nonFiniteSamples(path:frame:count:)``; with
/// ``NonFiniteSamplePolicy/replaceWithZero`` they become 0 and are counted in
/// ``nonFiniteSamplesReplaced``. Either way nothing non-finite reaches the caller.
///
/// Memory is libsndfile's decoder state plus nothing per read. Owns the `SNDFILE` handle and
/// closes it on release. Threading: use from one thread at a time.
public final class AudioFileReader {
    /// The path given.
    public let path: String
    /// Samples per second per channel, in Hz.
    public let sampleRate: Int
    /// Interleaved channels.
    public let channels: Int
    /// Frames the file holds per libsndfile, or nil when it cannot tell (some streams).
    public let frameCount: Int?
    /// libsndfile's name of the container and encoding, e.g. "WAV (Microsoft) / Signed 16 bit PCM".
    public let formatName: String
    /// Frames announced by the header when it claims more than the file holds; nil otherwise.
    public let announcedFrameCount: Int?
    /// What to do with NaN/infinite samples; default ``NonFiniteSamplePolicy/reject``.
    public var nonFinitePolicy: NonFiniteSamplePolicy = .reject
    /// NaN/infinite samples replaced by 0 so far.
    public private(set) var nonFiniteSamplesReplaced = 0
    /// Frames delivered so far.
    public private(set) var framesRead = 0
    private let file: OpaquePointer
    private let mayHoldNonFinite: Bool
    /// Float staging for Int16 reads of float files (allocated on first use, then reused).
    private var staging: [Float] = []

    /// The audio format as a ParleyCore `AudioFormat`.
    public var format: AudioFormat {
        AudioFormat(checkedSampleRate: sampleRate, channels: channels)   // both checked positive in init
    }

    /// Opens `path`. Throws a ``MediaFileError`` that names the file and the problem.
    public convenience init(path: String) throws(MediaFileError) {
        let (fd, _) = try openRegularFileForReading(path)
        try self.init(ownedDescriptor: fd, name: path, raw: nil)
    }

    /// Reads the audio on an open file descriptor, such as standard input (0); `name` stands
    /// for it in errors. The format is recognised from the bytes, as for a file, unless `raw`
    /// names the headerless encoding they are in.
    ///
    /// A regular file is read in place (from its start when the descriptor is at offset 0,
    /// else from the current offset). Anything else (a pipe, a socket, a terminal) is copied to
    /// an unlinked temporary file in `temporaryDirectory` (default `$TMPDIR`, else `/tmp`)
    /// before decoding, because libsndfile seeks while it reads a header (a WAV file's past
    /// its data chunk, an Ogg file's to its end): memory stays flat, the disk holds the
    /// stream until the reader is released. The caller keeps `fd` and closes it; a stream is
    /// read to its end.
    public convenience init(fileDescriptor fd: Int32, name: String, raw: RawAudioFormat? = nil,
                            temporaryDirectory: String? = nil) throws(MediaFileError) {
        let owned = try readableCopy(of: fd, name: name, temporaryDirectory: temporaryDirectory)
        try self.init(ownedDescriptor: owned, name: name, raw: raw)
    }

    /// Decodes from `fd`, which the reader owns from here on (closed when it fails, or with
    /// the `SNDFILE` handle).
    private init(ownedDescriptor fd: Int32, name path: String, raw: RawAudioFormat?) throws(MediaFileError) {
        var info = SF_INFO()
        if let raw {
            info.format = raw.sndfileFormat
            info.samplerate = Int32(raw.sampleRate)
            info.channels = Int32(raw.channels)
        }
        guard let f = sf_open_fd(fd, Int32(SFM_READ), &info, 1) else {
            let code = sf_error(nil)
            let message = String(cString: sf_strerror(nil))
            // No close(fd) here: with close_desc set, sf_open_fd has already closed it.
            if code == Int32(SF_ERR_UNRECOGNISED_FORMAT) {
                throw .unsupported(path: path, what: "audio format (libsndfile: \(message))")
            }
            throw .library(path: path, message: "libsndfile: \(message)")
        }
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(f)
            throw .corrupt(path: path, reason: "\(info.channels) channels at \(info.samplerate) Hz", offset: 0)
        }
        self.path = path
        self.file = f
        sampleRate = Int(info.samplerate)
        channels = Int(info.channels)
        frameCount = (info.frames >= 0 && info.frames < Int64(Int32.max) * 1024) ? Int(info.frames) : nil
        var major = SF_FORMAT_INFO(), sub = SF_FORMAT_INFO()
        major.format = info.format & Int32(SF_FORMAT_TYPEMASK)
        sub.format = info.format & Int32(SF_FORMAT_SUBMASK)
        let mName = sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &major, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0
            && major.name != nil ? String(cString: major.name) : "unknown container"
        let sName = sf_command(nil, Int32(SFC_GET_FORMAT_INFO), &sub, Int32(MemoryLayout<SF_FORMAT_INFO>.size)) == 0
            && sub.name != nil ? String(cString: sub.name) : "unknown encoding"
        formatName = "\(mName) / \(sName)"
        let subtype = Int(sub.format)
        mayHoldNonFinite = subtype == Int(SF_FORMAT_FLOAT) || subtype == Int(SF_FORMAT_DOUBLE)
        // libsndfile shortens a too-long data chunk to what the file holds and says so in its
        // log; recover the announced length from there so truncation is not silent.
        announcedFrameCount = AudioFileReader.announcedFrames(file: f, bytesPerFrame: nil, frames: frameCount,
                                                               channels: Int(info.channels), format: info.format)
    }

    /// The libsndfile log text of this file (header parsing notes and warnings).
    public var log: String { AudioFileReader.logText(file) }

    private static func logText(_ f: OpaquePointer) -> String {
        var buf = [CChar](repeating: 0, count: 4096)
        let n = sf_command(f, Int32(SFC_GET_LOG_INFO), &buf, Int32(buf.count))
        return n > 0 ? String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
    }

    /// Parses "Length : N" of the data chunk against a "should be" note in the log.
    private static func announcedFrames(file: OpaquePointer, bytesPerFrame: Int?, frames: Int?, channels: Int,
                                        format: Int32) -> Int? {
        let log = logText(file)
        // libsndfile 1.2 wav.c: "*** Data length too long" / "data : N (should be M)".
        guard log.contains("should be") || log.contains("too long") else { return nil }
        for line in log.split(separator: "\n") where line.contains("data") && line.contains("should be") {
            let digits = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            let width: Int
            switch Int(format & Int32(SF_FORMAT_SUBMASK)) {
            case Int(SF_FORMAT_PCM_16): width = 2
            case Int(SF_FORMAT_PCM_24): width = 3
            case Int(SF_FORMAT_PCM_32), Int(SF_FORMAT_FLOAT): width = 4
            case Int(SF_FORMAT_DOUBLE): width = 8
            default: width = 1
            }
            if let announced = digits.first, let f = frames, announced / (width * channels) > f {
                return announced / (width * channels)
            }
        }
        return nil
    }

    private func checkWholeFrames(_ samples: Int) throws(MediaFileError) {
        guard samples % channels == 0 else {
            throw .invalidArgument(path: path, reason: "buffer of \(samples) samples is not whole frames of \(channels) channels")
        }
    }

    /// Reads up to `buffer.count / channels` frames as Float. Returns the frame count, 0 at the
    /// end. See the type's notes for truncation and NaN handling. Throws
    /// ``MediaFileError/invalidArgument(path:reason:)`` when `buffer` is not whole frames.
    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(MediaFileError) -> Int {
        try checkWholeFrames(buffer.count)
        let want = buffer.count / channels
        if want == 0 { return 0 }
        let got = Int(sf_readf_float(file, buffer.baseAddress, Int64(want)))
        try check(got: got, want: want)
        if mayHoldNonFinite && got > 0 {
            var bad = 0, first = -1
            for i in 0..<(got * channels) where !buffer[i].isFinite {
                bad += 1
                if first < 0 { first = i }
                buffer[i] = 0
            }
            if bad > 0 {
                if nonFinitePolicy == .reject {
                    throw .nonFiniteSamples(path: path, frame: framesRead + first / channels, count: bad)
                }
                nonFiniteSamplesReplaced += bad
            }
        }
        framesRead += got
        return got
    }

    /// Reads up to `buffer.count / channels` frames as Int16 (libsndfile's scaling; NaN in a
    /// float file is rejected or counted as for Float reads). Throws
    /// ``MediaFileError/invalidArgument(path:reason:)`` when `buffer` is not whole frames.
    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(MediaFileError) -> Int {
        try checkWholeFrames(buffer.count)
        let want = buffer.count / channels
        if want == 0 { return 0 }
        if mayHoldNonFinite {
            // Read as float to see NaN/Inf (libsndfile would turn them into arbitrary integers).
            var done = 0
            if staging.isEmpty { staging = [Float](repeating: 0, count: 1024 * channels) }
            var chunk = staging
            staging = []   // keep the storage uniquely referenced while reading into it
            defer { staging = chunk }
            while done < want {
                let n = try chunk.withUnsafeMutableBufferPointer { b in
                    Result { () throws(MediaFileError) -> Int in
                        try read(into: UnsafeMutableBufferPointer(rebasing: b[0..<(min(want - done, 1024) * channels)]))
                    }
                }.get()
                for i in 0..<(n * channels) { buffer[done * channels + i] = Int16(clampingFloat: chunk[i]) }
                done += n
                if n == 0 { break }
            }
            return done
        }
        let got = Int(sf_readf_short(file, buffer.baseAddress, Int64(want)))
        try check(got: got, want: want)
        framesRead += got
        return got
    }

    /// Convenience: reads into an array (up to `buffer.count / channels` frames).
    public func read(into buffer: inout [Float]) throws(MediaFileError) -> Int {
        try buffer.withUnsafeMutableBufferPointer { b in
            Result { () throws(MediaFileError) -> Int in try read(into: b) }
        }.get()
    }

    /// Convenience: reads into an array (up to `buffer.count / channels` frames).
    public func read(into buffer: inout [Int16]) throws(MediaFileError) -> Int {
        try buffer.withUnsafeMutableBufferPointer { b in
            Result { () throws(MediaFileError) -> Int in try read(into: b) }
        }.get()
    }

    private func check(got: Int, want: Int) throws(MediaFileError) {
        if got < want {
            let code = sf_error(file)
            if code != 0 {
                throw .library(path: path, message: "libsndfile: \(String(cString: sf_strerror(file)))")
            }
            if got == 0, let announced = announcedFrameCount, framesRead < announced {
                throw .truncated(path: path, offset: -1, expected: announced, got: framesRead)
            }
        }
    }

    deinit { sf_close(file) }
}
