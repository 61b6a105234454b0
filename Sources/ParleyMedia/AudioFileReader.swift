import CSndFile
#if canImport(Glibc)
import Glibc
#endif

/// Reads any audio file libsndfile or FFmpeg can decode at any rate and channel count,
/// streaming interleaved frames as Float (nominally [-1, 1]) or Int16. libsndfile reads what it
/// recognises (WAV, FLAC, Ogg Vorbis, Ogg Opus, MP3, AIFF, AU, CAF, W64, ...); everything else
/// goes to FFmpeg's libraries (MP4/M4A with AAC, WebM and Matroska with Opus or Vorbis, the
/// audio of video files, and any other container and codec they read), which decode the
/// file's best audio stream, or the track asked for with ``init(path:audioTrack:)``. FFmpeg's
/// libraries are loaded the first time a file needs them, so a process that reads only what
/// libsndfile reads never maps them (about 20 MB of memory); where they cannot be loaded, such
/// a file is ``MediaFileError/unsupported(path:what:)``.
///
/// Errors: a directory, a device or a missing file, a zero-length file, a format neither
/// library recognises, a file without an audio stream or with a codec FFmpeg cannot decode
/// (``MediaFileError/unsupported(path:what:)``), libsndfile's decoder failures
/// (``MediaFileError/library(path:message:)``, `sf_strerror`) and FFmpeg's
/// (``MediaFileError/corrupt(path:reason:offset:)`` at the byte position reached, after the
/// audio decoded before it).
/// A file whose header announces more audio than the file holds reads what is there and then
/// throws ``MediaFileError/truncated(path:offset:expected:got:)``, with `expected`/`got` in
/// sample frames and `offset` -1 for libsndfile (which does not expose byte offsets), the byte
/// position reached for FFmpeg.
///
/// NaN/infinite samples (possible in float files): by default the read that meets them throws
/// ``MediaFileError/nonFiniteSamples(path:frame:count:)``; with
/// ``NonFiniteSamplePolicy/replaceWithZero`` they become 0 and are counted in
/// ``nonFiniteSamplesReplaced``. Either way nothing non-finite reaches the caller.
///
/// Memory is the decoder's state (FFmpeg's: one decoded frame) plus nothing per read. Owns the
/// `SNDFILE` handle or FFmpeg's contexts and closes them on release. Threading: use from one
/// thread at a time.
public final class AudioFileReader {
    /// The path given.
    public let path: String
    /// Samples per second per channel, in Hz.
    public let sampleRate: Int
    /// Interleaved channels.
    public let channels: Int
    /// Frames the file holds per libsndfile, or nil when it cannot tell (some streams, and
    /// the files FFmpeg decodes: a container's duration is not an exact sample count).
    public let frameCount: Int?
    /// The name of the container and encoding: libsndfile's, e.g. "WAV (Microsoft) / Signed 16
    /// bit PCM", or FFmpeg's demuxer and codec, e.g. "mov,mp4,m4a,3gp,3g2,mj2 / aac".
    public let formatName: String
    /// Frames announced by the header when it claims more than the file holds; nil otherwise.
    public let announcedFrameCount: Int?
    /// What to do with NaN/infinite samples; default ``NonFiniteSamplePolicy/reject``.
    public var nonFinitePolicy: NonFiniteSamplePolicy = .reject
    /// NaN/infinite samples replaced by 0 so far.
    public private(set) var nonFiniteSamplesReplaced = 0
    /// Frames delivered so far.
    public private(set) var framesRead = 0
    /// The decoder: libsndfile's handle or the FFmpeg backend.
    private enum Backend {
        case sndfile(OpaquePointer)
        case ffmpeg(FFmpegAudioDecoder)
    }
    private let backend: Backend
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

    /// Opens audio track `audioTrack` (from 0, in file order; see ``audioTracks(path:)``) of
    /// `path` through FFmpeg. Throws ``MediaFileError/invalidArgument(path:reason:)`` when the
    /// file has no such track.
    public convenience init(path: String, audioTrack: Int) throws(MediaFileError) {
        let (fd, _) = try openRegularFileForReading(path)
        try self.init(decoder: FFmpegAudioDecoder(ownedDescriptor: fd, name: path, audioTrack: audioTrack))
    }

    /// Reads track `audioTrack` of the audio on an open descriptor, as
    /// ``init(fileDescriptor:name:raw:temporaryDirectory:)`` reads the whole of it.
    public convenience init(fileDescriptor fd: Int32, name: String, audioTrack: Int,
                            temporaryDirectory: String? = nil) throws(MediaFileError) {
        let owned = try readableCopy(of: fd, name: name, temporaryDirectory: temporaryDirectory)
        try self.init(decoder: FFmpegAudioDecoder(ownedDescriptor: owned, name: name, audioTrack: audioTrack))
    }

    /// The audio streams ("tracks") of the file at `path`, in file order, as FFmpeg reads them
    /// (one for a WAV or FLAC file; several for a Matroska or MP4 file with several).
    public static func audioTracks(path: String) throws(MediaFileError) -> [AudioTrackInfo] {
        let (fd, _) = try openRegularFileForReading(path)
        defer { close(fd) }
        return try FFmpegAudioDecoder.tracks(fileDescriptor: fd, name: path)
    }

    /// The audio tracks of the regular file open on `fd` (which the caller keeps; its offset
    /// does not move), from its current offset; `name` stands for it in errors. A pipe is
    /// ``MediaFileError/notARegularFile(path:kind:)``: its bytes could be read only once.
    public static func audioTracks(fileDescriptor fd: Int32, name: String) throws(MediaFileError) -> [AudioTrackInfo] {
        var st = stat()
        if fstat(fd, &st) != 0 {
            let e = Errno.current
            throw .io(path: name, operation: "fstat", errno: e, message: e.description)
        }
        guard st.st_mode & S_IFMT == S_IFREG else {
            throw .notARegularFile(path: name, kind: st.st_mode & S_IFMT == S_IFDIR ? "a directory" : "a pipe or device")
        }
        return try FFmpegAudioDecoder.tracks(fileDescriptor: fd, name: name)
    }

    private init(decoder: FFmpegAudioDecoder) {
        path = decoder.path
        backend = .ffmpeg(decoder)
        sampleRate = decoder.sampleRate
        channels = decoder.channels
        frameCount = nil
        formatName = decoder.formatName
        announcedFrameCount = nil
        // Float codecs (AAC, Opus, Vorbis) can decode damaged data to NaN.
        mayHoldNonFinite = true
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
    /// the `SNDFILE` handle or the FFmpeg backend): libsndfile when it recognises the bytes,
    /// else FFmpeg (not for `raw` input, which is libsndfile's alone).
    private convenience init(ownedDescriptor fd: Int32, name path: String, raw: RawAudioFormat?) throws(MediaFileError) {
        // FFmpeg's turn, should libsndfile not recognise the bytes: the same offset, another
        // descriptor (sf_open_fd closes its own).
        let start = lseek(fd, 0, SEEK_CUR)
        let fallback = raw == nil ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1
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
                guard fallback >= 0 else {
                    throw .unsupported(path: path, what: "audio format (libsndfile: \(message))")
                }
                if start >= 0 { lseek(fallback, start, SEEK_SET) }
                try self.init(decoder: FFmpegAudioDecoder(ownedDescriptor: fallback, name: path, audioTrack: nil))
                return
            }
            if fallback >= 0 { close(fallback) }
            throw .library(path: path, message: "libsndfile: \(message)")
        }
        if fallback >= 0 { close(fallback) }
        try self.init(sndfile: f, info: info, name: path)
    }

    /// Takes over libsndfile's open handle `f`.
    private init(sndfile f: OpaquePointer, info: SF_INFO, name path: String) throws(MediaFileError) {
        guard info.channels > 0, info.samplerate > 0 else {
            sf_close(f)
            throw .corrupt(path: path, reason: "\(info.channels) channels at \(info.samplerate) Hz", offset: 0)
        }
        self.path = path
        self.backend = .sndfile(f)
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

    /// The libsndfile log text of this file (header parsing notes and warnings); empty for a
    /// file FFmpeg decodes.
    public var log: String {
        if case .sndfile(let file) = backend { return AudioFileReader.logText(file) }
        return ""
    }

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
        let got: Int
        switch backend {
        case .sndfile(let file):
            got = Int(sf_readf_float(file, buffer.baseAddress, Int64(want)))
            try check(file, got: got, want: want)
        case .ffmpeg(let decoder):
            got = try decoder.read(into: UnsafeMutableBufferPointer(rebasing: buffer[0..<(want * channels)]))
        }
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
            // Read as float to see NaN/Inf (libsndfile would turn them into arbitrary integers);
            // FFmpeg's files always come this way.
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
        guard case .sndfile(let file) = backend else { return 0 }   // FFmpeg's files take the Float path above
        let got = Int(sf_readf_short(file, buffer.baseAddress, Int64(want)))
        try check(file, got: got, want: want)
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

    private func check(_ file: OpaquePointer, got: Int, want: Int) throws(MediaFileError) {
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

    deinit {
        if case .sndfile(let file) = backend { sf_close(file) }
    }
}
