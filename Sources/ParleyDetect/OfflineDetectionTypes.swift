// The values of offline talk detection: what to analyse, what came out, what went wrong.

import ParleyMedia

/// One file to analyse and how its channels become participants.
///
/// Threading: a value type; freely sendable.
public struct OfflineDetectionRequest: Sendable, Equatable {
    /// How a file's channels map to participants.
    public enum ChannelMode: Sendable, Equatable {
        /// The channels are averaged into one participant named ``OfflineDetectionRequest/participant``.
        case mixDown
        /// Each channel is a participant named `"<participant>.ch<N>"`, N counted from 1.
        case perChannel
        /// Each audio stream ("track") of the file, its channels averaged, is a participant
        /// named after the track's title metadata, else its language, else
        /// `"<participant>.track<N>"`, N counted from 1 (also when a title or language
        /// repeats an earlier track's). The file is read through FFmpeg, once per track; a
        /// ``OfflineDetectionRequest/fileDescriptor`` must be a regular file, not a pipe.
        case perTrack
    }

    /// Path of the audio file (any format libsndfile reads); with ``fileDescriptor``, only the
    /// name that stands for it in messages.
    public var path: String
    /// The participant's name (or the prefix of the per-channel and per-track names).
    public var participant: String
    /// Where the file starts on the meeting's timeline, in seconds (>= 0). Every time in the
    /// result (segments, frames) is file time plus this offset.
    public var offset: Double
    /// How channels map to participants; default ``ChannelMode/mixDown``.
    public var channelMode: ChannelMode

    /// When set, the audio is read from this open descriptor (e.g. 0, standard input) instead
    /// of ``path``; see `AudioFileReader/init(fileDescriptor:name:raw:temporaryDirectory:)`.
    public var fileDescriptor: Int32?
    /// The headerless encoding of the bytes on ``fileDescriptor``; nil to recognise the format
    /// from the bytes.
    public var rawFormat: RawAudioFormat?

    public init(path: String, participant: String, offset: Double = 0, channelMode: ChannelMode = .mixDown,
                fileDescriptor: Int32? = nil, rawFormat: RawAudioFormat? = nil) {
        self.path = path
        self.participant = participant
        self.offset = offset
        self.channelMode = channelMode
        self.fileDescriptor = fileDescriptor
        self.rawFormat = rawFormat
    }
}

/// The talking of one participant found in a file.
public struct OfflineTrack: Sendable, Equatable {
    /// The participant's name.
    public var name: String
    /// The file channel (0-based) for ``OfflineDetectionRequest/ChannelMode/perChannel``; nil for a mix-down.
    public var channel: Int?
    /// Talking segments on the meeting timeline (offset applied), sorted and disjoint.
    public var segments: [TalkSegment]
    /// Number of 10 ms VAD frames analysed.
    public var frameCount: Int
}

/// A problem that did not stop the analysis of a file but makes its result partial or worth a
/// word to the user. ``isFailure`` tells which ones mean "not fully processed".
public enum OfflineDetectionIssue: Sendable, Equatable, CustomStringConvertible {
    /// The file ended (or a read failed) before the length its header announces: the result
    /// covers the `readSeconds` that could be read.
    case truncated(readSeconds: Double, expectedSeconds: Double, reason: String)
    /// `count` samples were NaN or infinite; they were analysed as silence. `firstAt` is the
    /// file time of the first one, in seconds.
    case nonFiniteSamples(count: Int, firstAt: Double)
    /// The file was read completely but no participant talked in it.
    case noSpeech

    /// Whether the issue means the file was not fully processed (exit status 1 in the CLI).
    public var isFailure: Bool {
        switch self {
        case .truncated, .nonFiniteSamples: true
        case .noSpeech: false
        }
    }

    public var description: String {
        switch self {
        case let .truncated(read, expected, reason):
            "truncated: read \(formatSeconds(read)) s of the \(formatSeconds(expected)) s its header announces (\(reason)); results cover what was read"
        case let .nonFiniteSamples(count, firstAt):
            "\(count) NaN or infinite sample\(count == 1 ? "" : "s") (the first in the block read at \(formatSeconds(firstAt)) s) analysed as silence"
        case .noSpeech:
            "no speech detected (silence or non-speech only)"
        }
    }
}

/// Why a file could not be analysed at all.
public struct OfflineDetectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: Sendable, Equatable {
        /// No file at that path.
        case notFound
        /// The path names a directory.
        case isDirectory
        /// The file exists but cannot be opened (permissions, I/O error).
        case unreadable
        /// The decoding library does not recognise the contents (unknown or corrupt format).
        case unsupportedFormat
        /// The file holds no audio samples.
        case empty
        /// Reading failed before any audio was decoded.
        case readFailed
        /// The file's rate or channel count cannot be analysed.
        case unsupportedAudio
        /// The detector's settings are out of range (``OfflineDetector/blockFrames`` or the
        /// talk detector's); the file was not opened.
        case invalidConfiguration
    }

    /// The kind of failure.
    public var kind: Kind
    /// The file's path.
    public var path: String
    /// A sentence for the user (the decoding library's own message when it gave one).
    public var message: String

    public init(_ kind: Kind, path: String, message: String) {
        self.kind = kind
        self.path = path
        self.message = message
    }

    public var description: String { message }
}

/// The result of analysing one file.
public struct OfflineFileAnalysis: Sendable, Equatable {
    /// The request it answers.
    public var request: OfflineDetectionRequest
    /// The file's sample rate, in Hz.
    public var sampleRate: Int
    /// The file's channel count.
    public var channels: Int
    /// Samples per channel read and analysed.
    public var framesRead: Int64
    /// Samples per channel the header announces, when it does.
    public var expectedFrames: Int64?
    /// One track per participant: one for a mix-down, one per channel otherwise.
    public var tracks: [OfflineTrack]
    /// Problems met on the way (empty when all went well).
    public var issues: [OfflineDetectionIssue]

    /// Seconds of audio read.
    public var duration: Double { Double(framesRead) / Double(sampleRate) }
    /// Whether the whole file was processed (no failure issue).
    public var isComplete: Bool { !issues.contains(where: \.isFailure) }
}

/// Formats seconds with three decimals without Foundation (messages only).
func formatSeconds(_ s: Double) -> String {
    guard s.isFinite else { return "\(s)" }
    let ms = Int64((s * 1000).rounded())
    let sign = ms < 0 ? "-" : ""
    let a = ms.magnitude
    let frac = a % 1000
    return sign + "\(a / 1000)." + (frac < 10 ? "00" : frac < 100 ? "0" : "") + "\(frac)"
}
