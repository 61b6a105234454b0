// A/V sync on the receiver: RTP timestamps + RTCP sender reports -> a common sender clock.

import ParleyRTP

/// A lip-sync setting a caller passed that cannot work.
public enum AVSyncError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A lip-sync window bound that is not a positive number of seconds.
    case invalidWindow(soundLead: Double, soundLag: Double)
    /// An RTP clock rate that is not a positive number of ticks per second.
    case invalidClockRate(Int)

    public var description: String {
        switch self {
        case let .invalidWindow(lead, lag):
            "a lip-sync window needs a positive sound lead and lag (given \(lead) s and \(lag) s)"
        case let .invalidClockRate(rate): "an RTP clock rate must be positive (given \(rate) Hz)"
        }
    }
}

/// Lip-sync tolerance: how far sound may lead or lag the picture, in seconds.
///
/// Positive skew = sound ahead of the picture. ITU-R BT.1359 puts the thresholds of
/// detectability at +45 ms (sound early) and -125 ms (sound late); acceptability at +90 / -185 ms.
public struct LipSyncWindow: Sendable, Hashable {
    /// Largest lead of sound over picture, seconds (> 0).
    public private(set) var soundLead: Double
    /// Largest lag of sound behind picture, seconds (> 0).
    public private(set) var soundLag: Double

    /// A window of `soundLead` and `soundLag` seconds.
    /// - Throws: ``AVSyncError/invalidWindow(soundLead:soundLag:)`` unless both are finite and
    ///   positive.
    public init(soundLead: Double, soundLag: Double) throws(AVSyncError) {
        guard soundLead > 0, soundLag > 0, soundLead.isFinite, soundLag.isFinite else {
            throw .invalidWindow(soundLead: soundLead, soundLag: soundLag)
        }
        self.init(checkedLead: soundLead, lag: soundLag)
    }

    private init(checkedLead lead: Double, lag: Double) { soundLead = lead; soundLag = lag }

    /// ITU-R BT.1359 detectability thresholds: +45 ms / -125 ms.
    public static let detectability = LipSyncWindow(checkedLead: 0.045, lag: 0.125)
    /// ITU-R BT.1359 acceptability thresholds: +90 ms / -185 ms.
    public static let acceptability = LipSyncWindow(checkedLead: 0.090, lag: 0.185)

    /// Whether a skew (seconds, + = sound ahead) is inside the window.
    public func contains(_ skew: Double) -> Bool { skew <= soundLead && skew >= -soundLag }
}

/// One stream's NTP/RTP mapping from its latest RTCP sender report (RFC 3550 6.4.1): the
/// sender's wall-clock capture time of any RTP timestamp within +-2^31 ticks of the report's.
///
/// Threading: a value type.
public struct RTPTimeMapping: Sendable, Hashable {
    /// RTP clock rate, Hz (48 000 for Opus, 90 000 for video).
    public let clockRate: Int
    /// The latest sender report's (NTP seconds since 1900, RTP timestamp), if any.
    public private(set) var reference: (ntpSeconds: Double, rtpTimestamp: UInt32)?
    /// Sender reports taken.
    public private(set) var reports = 0

    /// A mapping for an RTP clock of `clockRate` Hz, before any report.
    /// - Throws: ``AVSyncError/invalidClockRate(_:)`` unless `clockRate` is positive.
    public init(clockRate: Int) throws(AVSyncError) {
        guard clockRate > 0 else { throw .invalidClockRate(clockRate) }
        self.clockRate = clockRate
    }

    /// The mapping of a clock rate known to be positive (the codecs' constants).
    package init(positiveClockRate clockRate: Int) { self.clockRate = clockRate }

    /// Takes a sender report's mapping (the newest replaces the previous: it follows the
    /// sender's clock drift).
    public mutating func update(_ report: RTCPSenderReport) {
        reference = (report.ntpTimestamp.secondsSince1900, report.rtpTimestamp)
        reports += 1
    }

    /// Takes a mapping that signalling tells instead of a sender report: RTP timestamp
    /// `timestamp` was captured at sender time `seconds`. A stream whose sender counts its RTP
    /// timestamps from the start of its media (a Parley participant in a Janus room, where the
    /// server forwards RTP but not the sender's RTCP) maps its origin to 0 in each of its
    /// streams, which puts them on one clock. Not counted in ``reports``; a sender report that
    /// arrives later replaces it.
    public mutating func assume(rtpTimestamp timestamp: UInt32, atSenderSeconds seconds: Double) {
        reference = (seconds, timestamp)
    }

    /// Sender wall-clock seconds (NTP, since 1900) of `timestamp`, or nil before any report.
    public func senderSeconds(ofRTPTimestamp timestamp: UInt32) -> Double? {
        guard let r = reference else { return nil }
        return r.ntpSeconds + Double(Int32(bitPattern: timestamp &- r.rtpTimestamp)) / Double(clockRate)
    }

    public static func == (a: RTPTimeMapping, b: RTPTimeMapping) -> Bool {
        a.clockRate == b.clockRate && a.reports == b.reports
            && a.reference?.ntpSeconds == b.reference?.ntpSeconds
            && a.reference?.rtpTimestamp == b.reference?.rtpTimestamp
    }
    public func hash(into h: inout Hasher) {
        h.combine(clockRate); h.combine(reports); h.combine(reference?.ntpSeconds); h.combine(reference?.rtpTimestamp)
    }
}

/// Lip sync on the receiver, audio as master: audio plays out of its jitter buffer at whatever
/// delay the network needs; each video frame is shown when the audio of the same capture
/// instant plays.
///
/// The audio playout tells it, per played packet, "RTP timestamp `a` is heard at local time
/// `t`"; with the audio sender report, `a` maps to sender capture time `A`, so the local
/// presentation offset is `t - A`. A video frame's RTP timestamp maps (through the video
/// sender report, same sender NTP clock) to capture time `V`, shown at `V + offset`. Frames
/// that are already too late for the window when they are complete are dropped, not queued;
/// early frames wait for their time.
///
/// Threading: a value type owned by the playout thread.
public struct AVSynchronizer: Sendable {
    /// The sync tolerance. Default ``LipSyncWindow/detectability``.
    public var window: LipSyncWindow
    public private(set) var audio = RTPTimeMapping(positiveClockRate: 48_000)
    public private(set) var video = RTPTimeMapping(positiveClockRate: 90_000)
    /// Local time minus sender time of the audio being heard, seconds (nil before both an
    /// audio report and a played packet).
    public private(set) var presentationOffset: Double?

    /// What to do with a decoded video frame.
    public enum VideoDecision: Sendable, Hashable {
        /// Show it at this local time (now or later).
        case show(at: MonotonicTime)
        /// Drop it: it would be shown with sound ahead by this much (seconds), beyond the window.
        case drop(soundAheadBy: Double)
        /// No mapping yet (no sender report or no audio played): show it now, unsynchronised.
        case unsynchronized
    }

    /// A synchroniser for Opus (48 kHz) and video (90 kHz) RTP clocks and `window`.
    public init(window: LipSyncWindow = .detectability) {
        self.window = window
    }

    /// A synchroniser for other RTP clock rates.
    /// - Throws: ``AVSyncError/invalidClockRate(_:)`` for a rate that is not positive.
    public init(audioClockRate: Int, videoClockRate: Int, window: LipSyncWindow = .detectability) throws(AVSyncError) {
        self.window = window
        audio = try RTPTimeMapping(clockRate: audioClockRate)
        video = try RTPTimeMapping(clockRate: videoClockRate)
    }

    /// Takes an audio stream's RTCP sender report.
    public mutating func audioSenderReport(_ report: RTCPSenderReport) { audio.update(report) }

    /// Takes the audio stream's mapping as its receiver keeps it (same as feeding its reports).
    public mutating func useAudioMapping(_ mapping: RTPTimeMapping) { audio = mapping }

    /// Takes the video stream's mapping as signalling tells it (see
    /// ``RTPTimeMapping/assume(rtpTimestamp:atSenderSeconds:)``).
    public mutating func useVideoMapping(_ mapping: RTPTimeMapping) { video = mapping }

    /// Takes a video stream's RTCP sender report.
    public mutating func videoSenderReport(_ report: RTCPSenderReport) { video.update(report) }

    /// The audio packet with RTP timestamp `timestamp` started playing at local time `time`.
    public mutating func audioPlayed(rtpTimestamp timestamp: UInt32, at time: MonotonicTime) {
        guard let a = audio.senderSeconds(ofRTPTimestamp: timestamp) else { return }
        presentationOffset = time.seconds - a
    }

    /// When the video frame with RTP timestamp `timestamp` should be shown, seen at local `now`.
    public func decide(videoTimestamp timestamp: UInt32, now: MonotonicTime) -> VideoDecision {
        guard let offset = presentationOffset, let v = video.senderSeconds(ofRTPTimestamp: timestamp) else {
            return .unsynchronized
        }
        let due = v + offset
        let lateness = now.seconds - due        // shown now: sound ahead by this much
        if lateness > window.soundLead { return .drop(soundAheadBy: lateness) }
        return .show(at: lateness > 0 ? now : MonotonicTime(seconds: due))
    }

    /// The skew (seconds, + = sound ahead of picture) of showing the video frame `timestamp` at
    /// local time `shownAt`, given the audio heard then; nil without mappings.
    public func skew(videoTimestamp timestamp: UInt32, shownAt: MonotonicTime) -> Double? {
        guard let offset = presentationOffset, let v = video.senderSeconds(ofRTPTimestamp: timestamp) else {
            return nil
        }
        return (shownAt.seconds - offset) - v
    }
}
