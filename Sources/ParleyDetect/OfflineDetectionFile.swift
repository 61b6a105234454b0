// Opening a file for offline detection: ParleyMedia's AudioFileReader (libsndfile or FFmpeg),
// with its typed errors turned into sentences for the user.

#if canImport(Glibc)
import Glibc
#endif
import ParleyMedia

/// Opens `path` for ``OfflineDetector``: every failure becomes an ``OfflineDetectionError``.
package func openOfflineAudioFile(_ path: String) throws(OfflineDetectionError) -> AudioFileSource {
    try openOfflineAudioFile(OfflineDetectionRequest(path: path, participant: ""))
}

/// Opens the audio of `request` (its file, or its descriptor) for ``OfflineDetector``: the
/// audio track `audioTrack` (from 0) when given.
func openOfflineAudioFile(_ request: OfflineDetectionRequest,
                          audioTrack: Int? = nil) throws(OfflineDetectionError) -> AudioFileSource {
    let path = request.path
    do {
        let reader: AudioFileReader
        if let audioTrack, let fd = request.fileDescriptor {
            reader = try AudioFileReader(fileDescriptor: fd, name: path, audioTrack: audioTrack)
        } else if let audioTrack {
            reader = try AudioFileReader(path: path, audioTrack: audioTrack)
        } else if let fd = request.fileDescriptor {
            reader = try AudioFileReader(fileDescriptor: fd, name: path, raw: request.rawFormat)
        } else {
            reader = try AudioFileReader(path: path)
        }
        // NaN/infinite samples become silence and are counted (reported as an issue), rather
        // than ending the file's analysis.
        reader.nonFinitePolicy = .replaceWithZero
        return AudioFileSource(reader: reader)
    } catch {
        throw OfflineDetectionError(mediaError: error, path: path)
    }
}

extension OfflineDetectionError {
    /// The user-facing form of a ``MediaFileError`` met while opening `path`.
    init(mediaError error: MediaFileError, path: String) {
        switch error {
        case let .notARegularFile(_, kind):
            self.init(kind == "a directory" ? .isDirectory : .unreadable, path: path,
                      message: "is \(kind), not an audio file")
        case .empty:
            self.init(.empty, path: path, message: "empty file (0 bytes): no audio")
        case let .io(_, operation, code, message):
            if code == .noSuchFile || code == .notADirectory {
                self.init(.notFound, path: path, message: "no such file")
            } else {
                self.init(.unreadable, path: path, message: "cannot \(operation): \(message)")
            }
        case let .unsupported(_, what):
            self.init(.unsupportedFormat, path: path, message: "unsupported or unrecognised \(what)")
        case let .corrupt(_, reason, _):
            self.init(.unsupportedFormat, path: path, message: "unsupported or corrupt audio file: \(reason)")
        case let .library(_, message):
            self.init(.unsupportedFormat, path: path, message: "unsupported or corrupt audio file (\(message))")
        case .truncated, .nonFiniteSamples, .invalidArgument:
            self.init(.readFailed, path: path, message: "\(error)")
        }
    }
}

/// The audio tracks of the file (or descriptor) of `request`.
func offlineAudioTracks(_ request: OfflineDetectionRequest) throws(OfflineDetectionError) -> [AudioTrackInfo] {
    do {
        if let fd = request.fileDescriptor {
            return try AudioFileReader.audioTracks(fileDescriptor: fd, name: request.path)
        }
        return try AudioFileReader.audioTracks(path: request.path)
    } catch {
        throw OfflineDetectionError(mediaError: error, path: request.path)
    }
}

/// ``AudioFileReader`` as an ``OfflineAudioSource``.
package struct AudioFileSource: OfflineAudioSource {
    let reader: AudioFileReader

    package var sampleRate: Int { reader.sampleRate }
    package var channels: Int { reader.channels }
    /// The length the header announces (more than the file holds when it is truncated).
    package var expectedFrames: Int64? { (reader.announcedFrameCount ?? reader.frameCount).map(Int64.init) }
    package var nonFiniteSamplesReplaced: Int { reader.nonFiniteSamplesReplaced }

    package func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(OfflineReadError) -> Int {
        do {
            return try reader.read(into: buffer)
        } catch {
            if case .truncated = error { throw OfflineReadError(message: "the data ends early") }
            throw OfflineReadError(message: "\(error)")
        }
    }
}
