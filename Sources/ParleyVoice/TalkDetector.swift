// TalkDetector: VAD frames to "talking started" / "talking stopped" events with hysteresis.

/// Why a ``TalkDetectorConfiguration`` cannot drive a ``TalkDetector``.
public enum TalkDetectorConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// ``TalkDetectorConfiguration/onsetWindow`` is outside 1...64 frames.
    case onsetWindowOutOfRange(Int)
    /// ``TalkDetectorConfiguration/onsetFrames`` is outside 1...``TalkDetectorConfiguration/onsetWindow``.
    case onsetFramesOutOfRange(onsetFrames: Int, onsetWindow: Int)

    public var description: String {
        switch self {
        case let .onsetWindowOutOfRange(w):
            "onsetWindow \(w) is outside 1...64 frames"
        case let .onsetFramesOutOfRange(f, w):
            "onsetFrames \(f) is outside 1...\(w) (1...onsetWindow)"
        }
    }
}

/// Settings of a ``TalkDetector``. Times in seconds, probabilities in 0...1.
///
/// Any values can be stored; ``TalkDetector/init(configuration:)`` and
/// ``TalkDetector/setConfiguration(_:)`` check them (see ``validate()``).
public struct TalkDetectorConfiguration: Sendable, Equatable {
    /// A frame counts towards an onset when its probability is at least this. Default 0.5
    /// (the VAD's own threshold).
    public var onThreshold: Float
    /// While talking, a frame counts as silence below this (hysteresis; or without the SNR of
    /// ``holdMinimumSNR``). Default 0.35.
    public var offThreshold: Float
    /// Onset window, in frames: talking starts when at least ``onsetFrames`` of the last
    /// ``onsetWindow`` frames are at or above ``onThreshold``. Default 8 (80 ms).
    public var onsetWindow: Int
    /// Speech frames needed in the onset window. Default 6 (a 60 ms run with up to 2 dips), which
    /// keeps clicks and single syllables of music from starting a talk while firing within
    /// about 100 ms of a real onset.
    public var onsetFrames: Int
    /// Minimum mean probability over the onset window. Default 0.75: real onsets climb past it
    /// within a few frames (median talking-on latency 90 ms on the corpus conversation). Chosen on
    /// the training's held-out validation mixtures (`Tools/vad-training/onset_check.py`): with the
    /// shipped network, 0.75 starts 0.27 false talks a minute on the mixtures without speech
    /// (0.6: 0.65, 0.8: 0.22) and leaves fewer speech turns without an onset within 400 ms than
    /// 0.8 (34% against 38% of 1,096 turns; half the validation speech is 5 dB or less over its
    /// background).
    public var onsetMeanProbability: Float
    /// While talking, a frame holds the talk (restarts the hang-over) only when its probability
    /// is at least ``offThreshold`` and both its SNR (``VADEvidence/snrDb``) and the SNR averaged
    /// over about 50 ms are at least this, in dB. Default 2 dB: a frame with no energy above the
    /// tracked noise floor is not speech, whatever a model that still remembers the last words
    /// says (after a short utterance over a quiet noise bed the probability decays over a second
    /// or more). Segment ends then fall within about 50 ms of the last syllable; `-infinity`
    /// holds on probability alone.
    public var holdMinimumSNR: Float
    /// Hang-over: talking stops after this long without a frame that holds it (at or above
    /// ``offThreshold`` and ``holdMinimumSNR``).
    /// Default 0.45 s: bridges pauses between words and phrases (fewer flickers, and the same
    /// turns on coded, lossy audio as on the clean file) and ends a talk 450-550 ms after the
    /// last syllable (a release is wanted 300-600 ms after it).
    public var hangover: Double
    /// Talking never stops less than this after it started. Default 0.25 s.
    public var minimumTalkDuration: Double
    /// Minimum speech-band SNR (``VADEvidence/snrDb``, averaged over about 50 ms) for an onset,
    /// in dB. Default 4 dB: an onset must rise above the tracked noise floor, which keeps steady
    /// sounds and the first moments of a stream (before the floor is known) from starting a talk.
    public var onsetMinimumSNR: Float
    /// Where a talk starts (``TalkEvent/segmentTime`` of `started`) is the beginning of the rise
    /// that led to the onset: just after the newest frame before it whose probability is below
    /// this (unless it is within ``onsetRiseBridge`` of a frame at or above ``onThreshold``) or
    /// whose SNR is below ``onsetRiseMinimumSNR`` (at most 630 ms back; never later than the
    /// first speech frame of the onset). Default 0: the rise is the run of frames with energy
    /// above the noise floor (``onsetRiseMinimumSNR``) that led to the onset. The network rates
    /// the quiet opening of a turn (a breath, a fricative, a soft consonant before the first
    /// vowel) anywhere from 0.002 to 0.3, so its probability does not mark where the turn began;
    /// the energy does, and coded or lossy audio of the same speech gives the same start.
    public var onsetRiseFloor: Float
    /// See ``onsetRiseFloor``, in dB (``VADEvidence/snrDb``). Default 3 dB: frames with no energy
    /// above the tracked noise floor are not part of a rise, whatever the probability says (the
    /// first frames of a stream, before the floor is known).
    public var onsetRiseMinimumSNR: Float
    /// See ``onsetRiseFloor``, in seconds; it matters only with a rise floor over 0. Default 0.2 s: a frame under the rise floor but with
    /// energy above the noise floor this soon after a frame at or above ``onThreshold`` is still
    /// part of the rise. A word that opens with a plosive burst ("p", "t", "k") has a closure or
    /// aspiration of up to about 0.2 s before its vowel that a model rates 0.1-0.25; the start then
    /// stays at the burst. A pause at the noise floor, however short, still ends a rise.
    public var onsetRiseBridge: Double

    public init(onThreshold: Float = 0.5, offThreshold: Float = 0.35, onsetWindow: Int = 8,
                onsetFrames: Int = 6, onsetMeanProbability: Float = 0.75, hangover: Double = 0.45,
                minimumTalkDuration: Double = 0.25, onsetMinimumSNR: Float = 4, onsetRiseFloor: Float = 0,
                onsetRiseMinimumSNR: Float = 3, onsetRiseBridge: Double = 0.2, holdMinimumSNR: Float = 2) {
        self.onsetMinimumSNR = onsetMinimumSNR
        self.onsetRiseBridge = onsetRiseBridge
        self.holdMinimumSNR = holdMinimumSNR
        self.onsetRiseFloor = onsetRiseFloor; self.onsetRiseMinimumSNR = onsetRiseMinimumSNR
        self.onThreshold = onThreshold; self.offThreshold = offThreshold
        self.onsetWindow = onsetWindow; self.onsetFrames = onsetFrames
        self.onsetMeanProbability = onsetMeanProbability
        self.hangover = hangover; self.minimumTalkDuration = minimumTalkDuration
    }

    /// Checks the values a ``TalkDetector`` needs: ``onsetWindow`` in 1...64 frames and
    /// ``onsetFrames`` in 1...``onsetWindow``.
    ///
    /// - Throws: ``TalkDetectorConfigurationError`` naming the first value out of range.
    public func validate() throws(TalkDetectorConfigurationError) {
        guard (1...64).contains(onsetWindow) else { throw .onsetWindowOutOfRange(onsetWindow) }
        guard (1...onsetWindow).contains(onsetFrames) else {
            throw .onsetFramesOutOfRange(onsetFrames: onsetFrames, onsetWindow: onsetWindow)
        }
    }
}

/// A change of a participant's talking state.
public struct TalkEvent: Sendable, Equatable {
    public enum Kind: String, Sendable { case started, stopped }
    /// Why the state changed.
    public enum Reason: String, Sendable {
        /// Enough speech frames in the onset window.
        case speechOnset
        /// Every frame below the off threshold for the hang-over time.
        case hangoverElapsed
        /// The stream ended (``TalkDetector/finish(at:)``).
        case streamEnded
    }

    public var kind: Kind
    /// When the detector decided, in stream seconds (end of the frame that triggered it): the
    /// real-time moment a live UI would see the change.
    public var time: Double
    /// Where the talk segment starts or ends in the audio, in stream seconds: for `started`, the
    /// beginning of the rise that led to the onset (see ``TalkDetectorConfiguration/onsetRiseFloor``;
    /// never later than the oldest frame at or above ``TalkDetectorConfiguration/onThreshold`` of
    /// the run that ends at the onset, gaps of up to 3 frames bridged); for `stopped`, the end of
    /// the last frame that held the talk (see ``TalkDetectorConfiguration/holdMinimumSNR``).
    /// Offline tools use this for segments.
    public var segmentTime: Double
    /// Mean level of the speech frames of the onset (for `started`) or of the talk (for
    /// `stopped`), in dBov.
    public var levelDbov: Float
    /// Whether the participant was muted when this happened (talking-while-muted signal).
    public var muted: Bool
    /// Why it happened.
    public var reason: Reason
    /// The VAD's probability and evidence of the frame that triggered it.
    public var probability: Float
    public var evidence: VADEvidence
}

/// Turns one participant's ``VADDecision``s into talking events with hysteresis: an onset needs a
/// short run of speech, a release needs a hang-over of silence, and a talk lasts at least a
/// minimum duration. The same code serves local and remote audio; when `muted` is true the
/// events still fire and carry `muted = true` (talking while muted).
///
/// Deterministic and allocation-free per frame. Threading: a value type; one per participant.
public struct TalkDetector: Sendable {
    /// The settings in use; change them with ``setConfiguration(_:)``.
    public private(set) var configuration: TalkDetectorConfiguration
    /// Whether the participant is talking now.
    public private(set) var isTalking = false

    private var history: UInt64 = 0           // bit i = frame i ago was speech (onset window)
    private var heard: UInt64 = 0             // bit i = frame i ago was at or above onThreshold, echo or not
    private var heardProbabilities = ProbabilityWindow()
    private var low: UInt64 = ~0              // bit i = frame i ago was not part of a rise (or before the stream)
    private var probabilities = ProbabilityWindow()
    private var lastSpeechEnd: Double = 0
    private var talkStart: Double = 0
    private var levelSum: Double = 0
    private var levelCount = 0
    private var snrMean: Float = 0            // EMA of the evidence's SNR, about 50 ms

    /// Creates a detector with the default settings.
    public init() {
        self.configuration = TalkDetectorConfiguration()
    }

    /// Creates a detector with `configuration`.
    ///
    /// - Throws: ``TalkDetectorConfigurationError`` when the configuration is out of range
    ///   (see ``TalkDetectorConfiguration/validate()``).
    public init(configuration: TalkDetectorConfiguration) throws(TalkDetectorConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
    }

    private init(validated configuration: TalkDetectorConfiguration) {
        self.configuration = configuration
    }

    /// Replaces the settings; the detector's state is kept.
    ///
    /// - Throws: ``TalkDetectorConfigurationError`` when the configuration is out of range
    ///   (see ``TalkDetectorConfiguration/validate()``); the settings are then unchanged.
    public mutating func setConfiguration(_ configuration: TalkDetectorConfiguration)
        throws(TalkDetectorConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
    }

    /// Feeds the next frame's decision; returns an event when the talking state changes.
    ///
    /// `echoOnly` says that the frame is the far end's echo and nothing of the participant's
    /// own (an echo canceller's verdict for a capture while the far end talks and the near end
    /// does not): such a frame counts as silence towards an onset, so residual echo never
    /// starts a talk, while a talk already going is held as usual. Double talk (the near end
    /// over the far end) is not echo only and starts a talk. `doubleTalk` says that the
    /// canceller is certain of it: the frames judged echo only just before then count as
    /// they were heard (a canceller's suppression mutes the first 100-200 ms of a near end
    /// that starts over a loud far end, and this is where that start went). Ignored with
    /// `echoOnly`.
    public mutating func process(_ d: VADDecision, muted: Bool = false, echoOnly: Bool = false,
                                 doubleTalk: Bool = false) -> TalkEvent? {
        let c = configuration
        let frameEnd = d.time + VoiceActivityDetector.frameDuration
        let loud = d.probability >= c.onThreshold
        let speech = loud && (isTalking || !echoOnly)
        let mask: UInt64 = c.onsetWindow >= 64 ? ~0 : (1 << UInt64(c.onsetWindow)) - 1
        // A certain double talk counts the frames judged echo only before it as they were heard.
        let countHeard = doubleTalk && !echoOnly && !isTalking
        history = (history << 1) | (speech ? 1 : 0)
        heard = (heard << 1) | (loud ? 1 : 0)
        heardProbabilities.push(d.probability, window: c.onsetWindow)
        if countHeard { history |= heard & mask }
        let sinceSpeech = history == 0 ? Int.max / 2 : history.trailingZeroBitCount   // frames ago, 0 = this one
        let bridged = Double(sinceSpeech) * VoiceActivityDetector.frameDuration <= c.onsetRiseBridge + 1e-9
        let unlikely = d.probability < c.onsetRiseFloor && !bridged
        low = (low << 1) | (unlikely || d.evidence.snrDb < c.onsetRiseMinimumSNR ? 1 : 0)
        probabilities.push(echoOnly && !isTalking ? 0 : d.probability, window: c.onsetWindow)
        if countHeard { probabilities = heardProbabilities }
        snrMean += 0.2 * (min(max(d.evidence.snrDb, 0), 60) - snrMean)
        if !isTalking {
            let count = (history & mask).nonzeroBitCount
            guard speech, count >= c.onsetFrames, snrMean >= c.onsetMinimumSNR,
                  probabilities.mean(window: c.onsetWindow) >= c.onsetMeanProbability else {
                if speech { levelSum += Double(d.evidence.energyDbov); levelCount += 1 } else if count == 0 {
                    levelSum = 0; levelCount = 0
                }
                return nil
            }
            levelSum += Double(d.evidence.energyDbov); levelCount += 1
            isTalking = true
            // The onset's first speech frame: the oldest frame of the run of speech frames that
            // ends now, gaps of up to 3 frames bridged (a concealed lost packet of coded audio
            // must not move the start), at most 40 frames back, never before the previous talk.
            var firstAgo = 0
            var i = 1
            while i < 40 {
                if history & (1 << UInt64(i)) != 0 { firstAgo = i } else if i - firstAgo > 3 { break }
                i += 1
            }
            // ... and back to the beginning of the rise (onsetRiseFloor).
            let lowBefore = low & ~UInt64(1)
            let sinceLow = lowBefore == 0 ? 64 : lowBefore.trailingZeroBitCount
            firstAgo = max(firstAgo, min(sinceLow - 1, 63))
            talkStart = max(0, lastSpeechEnd, d.time - Double(firstAgo) * VoiceActivityDetector.frameDuration)
            lastSpeechEnd = frameEnd
            let level = Float(levelSum / Double(max(levelCount, 1)))
            levelSum = 0; levelCount = 0
            return TalkEvent(kind: .started, time: frameEnd, segmentTime: talkStart, levelDbov: level,
                             muted: muted, reason: .speechOnset, probability: d.probability, evidence: d.evidence)
        }
        if d.probability >= c.offThreshold && d.evidence.snrDb >= c.holdMinimumSNR && snrMean >= c.holdMinimumSNR {
            lastSpeechEnd = frameEnd
            if speech { levelSum += Double(d.evidence.energyDbov); levelCount += 1 }
            return nil
        }
        if frameEnd - lastSpeechEnd >= c.hangover - 1e-9 && frameEnd - talkStart >= c.minimumTalkDuration {
            return stop(at: frameEnd, muted: muted, reason: .hangoverElapsed, probability: d.probability,
                        evidence: d.evidence)
        }
        return nil
    }

    /// Ends the stream at `time` (seconds): returns a `stopped` event if talking.
    public mutating func finish(at time: Double) -> TalkEvent? {
        guard isTalking else { return nil }
        return stop(at: time, muted: false, reason: .streamEnded, probability: 0, evidence: VADEvidence())
    }

    /// Forgets all state.
    public mutating func reset() {
        self = TalkDetector(validated: configuration)
    }

    private mutating func stop(at time: Double, muted: Bool, reason: TalkEvent.Reason, probability: Float,
                               evidence: VADEvidence) -> TalkEvent {
        isTalking = false
        history = 0
        let level = Float(levelSum / Double(max(levelCount, 1)))
        levelSum = 0; levelCount = 0
        return TalkEvent(kind: .stopped, time: time, segmentTime: min(lastSpeechEnd, time), levelDbov: level,
                         muted: muted, reason: reason, probability: probability, evidence: evidence)
    }
}

/// The last up-to-64 probabilities, for the onset's mean.
struct ProbabilityWindow: Sendable {
    private var values = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
    private var head = 0
    // 64 probabilities quantised to bytes (1/255 steps) in 8 words: no heap, value semantics.
    mutating func push(_ p: Float, window: Int) {
        let q = UInt64(min(max(p, 0), 1) * 255 + 0.5)
        withUnsafeMutableBytes(of: &values) { raw in raw[head] = UInt8(q) }
        head = (head + 1) & 63
    }
    func mean(window: Int) -> Float {
        var sum = 0
        withUnsafeBytes(of: values) { raw in
            for i in 1...window { sum += Int(raw[(head - i) & 63]) }
        }
        return Float(sum) / Float(window * 255)
    }
}
