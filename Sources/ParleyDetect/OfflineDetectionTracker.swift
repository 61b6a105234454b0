// The live path of talk detection for one participant, shared by calls and `parley detect`.

import ParleyVoice

/// Settings of a ``ParticipantTalkTracker``: the VAD's and the talk detector's, with their
/// documented defaults.
public struct TalkTrackerConfiguration: Sendable, Equatable {
    /// The VAD's settings (threshold of `VADDecision/isSpeech`).
    public var vad: VADConfiguration
    /// The talk detector's hysteresis settings.
    public var talk: TalkDetectorConfiguration

    public init(vad: VADConfiguration = .init(), talk: TalkDetectorConfiguration = .init()) {
        self.vad = vad
        self.talk = talk
    }
}

/// One participant's talk detection, fed live: mono samples at any rate, in chunks of any
/// size, become one VAD decision per 10 ms and talking started/stopped events.
///
/// Rates the VAD takes (8, 12, 16, 24, 32, 48 kHz) go to it directly; any other rate is first
/// converted to 16 kHz by the band-limited `Resampler` (the VAD's own). The result does not depend
/// on how the samples are split into chunks: feeding a file in one go, in 10 ms frames or in
/// random chunks gives the same decisions and events (``OfflineDetector`` relies on it).
///
/// Threading: a value type; one per participant, used from one thread at a time.
/// No allocation per call (the resampler's buffers are sized once, in `init`).
public struct ParticipantTalkTracker: Sendable {
    /// The input sample rate, in Hz.
    public let sampleRate: Int
    /// The settings.
    public let configuration: TalkTrackerConfiguration
    /// The VAD frames decided so far.
    public private(set) var framesDecided = 0
    /// Input samples fed so far.
    public private(set) var samplesFed: Int64 = 0

    private var vad: VoiceActivityDetector
    private var talk: TalkDetector
    private var resampler: Resampler?
    private var scratch: [Float] = []
    /// Input frames per resampler call.
    private static let resampleBlock = 4800

    /// Creates a tracker for a mono stream at `sampleRate` Hz (any positive rate).
    public init(sampleRate: Int, configuration: TalkTrackerConfiguration = .init()) throws(TalkTrackerError) {
        guard sampleRate > 0 else { throw .unsupportedSampleRate(sampleRate) }
        self.sampleRate = sampleRate
        self.configuration = configuration
        let vadRate: Int
        if VoiceActivityDetector.supportedSampleRates.contains(sampleRate) {
            vadRate = sampleRate
            resampler = nil
        } else {
            vadRate = 16_000
            let r: Resampler
            do {
                r = try Resampler(inputRate: sampleRate, outputRate: vadRate, maxInputFrames: Self.resampleBlock)
            } catch {
                throw .unsupportedSampleRate(sampleRate)
            }
            scratch = [Float](repeating: 0, count: r.maxOutputFrames(forInput: Self.resampleBlock))
            resampler = r
        }
        do {
            vad = try VoiceActivityDetector(sampleRate: vadRate, configuration: configuration.vad)
        } catch {
            throw .unsupportedSampleRate(sampleRate)
        }
        do {
            talk = try TalkDetector(configuration: configuration.talk)
        } catch {
            throw .invalidTalkConfiguration(error)
        }
    }

    /// Non-finite input samples seen (the VAD analyses them as silence).
    public var nonFiniteSampleCount: Int { vad.nonFiniteSampleCount }

    /// Whether the participant is talking now.
    public var isTalking: Bool { talk.isTalking }

    /// Feeds `samples` (any count); calls `onDecision` for every 10 ms frame completed and
    /// `onEvent` for every talking started/stopped event, in order.
    public mutating func process(_ samples: UnsafeBufferPointer<Float>,
                                 onDecision: (VADDecision) -> Void = { _ in },
                                 onEvent: (TalkEvent) -> Void) {
        samplesFed += Int64(samples.count)
        guard var r = resampler else {
            feedVAD(samples, onDecision: onDecision, onEvent: onEvent)
            return
        }
        resampler = nil   // keep `r` uniquely referenced while it works
        var i = 0
        while i < samples.count {
            let n = min(Self.resampleBlock, samples.count - i)
            // Mono blocks of at most maxInputFrames into a buffer of maxOutputFrames: cannot throw.
            let produced = scratch.withUnsafeMutableBufferPointer { out in
                try! r.process(UnsafeBufferPointer(rebasing: samples[i..<i + n]), into: out)
            }
            feedScratch(produced, onDecision: onDecision, onEvent: onEvent)
            i += n
        }
        resampler = r
    }

    /// Ends the stream at the time of the last sample fed: the resampler's look-ahead is
    /// drained into the VAD, the VAD decides the frames waiting for its own look-ahead, then a
    /// talk still open is stopped.
    public mutating func finish(onDecision: (VADDecision) -> Void = { _ in }, onEvent: (TalkEvent) -> Void) {
        if var r = resampler {
            resampler = nil
            var tail = [Float](repeating: 0, count: r.maxFlushFrames)
            let produced = tail.withUnsafeMutableBufferPointer { try! r.flush(into: $0) }   // sized by maxFlushFrames
            tail.withUnsafeBufferPointer {
                feedVAD(UnsafeBufferPointer(rebasing: $0[0..<produced]), onDecision: onDecision, onEvent: onEvent)
            }
            r.reset()
            resampler = r
        }
        var talk = self.talk
        var decided = 0
        vad.finish { d in
            decided += 1
            onDecision(d)
            if let e = talk.process(d) { onEvent(e) }
        }
        framesDecided += decided
        if let e = talk.finish(at: Double(samplesFed) / Double(sampleRate)) { onEvent(e) }
        self.talk = talk
    }

    private mutating func feedScratch(_ count: Int, onDecision: (VADDecision) -> Void, onEvent: (TalkEvent) -> Void) {
        let buffer = scratch
        buffer.withUnsafeBufferPointer {
            feedVAD(UnsafeBufferPointer(rebasing: $0[0..<count]), onDecision: onDecision, onEvent: onEvent)
        }
    }

    private mutating func feedVAD(_ samples: UnsafeBufferPointer<Float>, onDecision: (VADDecision) -> Void,
                                  onEvent: (TalkEvent) -> Void) {
        var talk = self.talk
        var decided = 0
        vad.process(samples) { d in
            decided += 1
            onDecision(d)
            if let e = talk.process(d) { onEvent(e) }
        }
        self.talk = talk
        framesDecided += decided
    }
}

/// Why a ``ParticipantTalkTracker`` cannot be created.
public enum TalkTrackerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rate is not positive or cannot be converted.
    case unsupportedSampleRate(Int)
    /// The talk detector's settings are out of range.
    case invalidTalkConfiguration(TalkDetectorConfigurationError)

    public var description: String {
        switch self {
        case let .unsupportedSampleRate(r): "unsupported sample rate \(r) Hz"
        case let .invalidTalkConfiguration(e): "invalid talk detector configuration: \(e)"
        }
    }
}

/// Turns talking events into segments: `[started.segmentTime, stopped.segmentTime)`, shifted
/// by `offset` seconds. The segment times are where talking starts and ends in the audio
/// (`TalkEvent/segmentTime`), not when the live detector decided.
///
/// Threading: a value type.
public struct TalkSegmentRecorder: Sendable {
    /// Added to every time, in seconds.
    public var offset: Double
    /// The finished segments, in order.
    public private(set) var segments: [TalkSegment] = []
    private var openedAt: Double?

    public init(offset: Double = 0) { self.offset = offset }

    /// Records one event.
    public mutating func record(_ e: TalkEvent) {
        switch e.kind {
        case .started:
            openedAt = e.segmentTime
        case .stopped:
            if let start = openedAt {
                segments.append(TalkSegment(orderedStart: offset + start, end: offset + max(start, e.segmentTime)))
            }
            openedAt = nil
        }
    }
}
