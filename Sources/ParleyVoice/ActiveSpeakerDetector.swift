// ActiveSpeakerDetector: the dominant speaker across participants.

/// Settings of an ``ActiveSpeakerDetector``. Times in seconds.
public struct ActiveSpeakerConfiguration: Sendable, Equatable {
    /// Probability at or above which a frame counts as speech. Default 0.5 (the VAD's threshold).
    public var speechThreshold: Float
    /// Gaps in speech shorter than this do not end a participant's current run. Default 0.3 s
    /// (pauses between words).
    public var gapTolerance: Double
    /// Run of speech a challenger needs to take over from a dominant speaker who spoke within
    /// ``dominantHold``. Default 0.6 s: longer than a back-channel ("yeah", "mm-hm") or a
    /// transient, short enough that a real turn is recognised within a second.
    public var minimumTurn: Double
    /// Run of speech a participant needs when nobody holds the floor (no dominant speaker, or
    /// the dominant has been silent longer than ``dominantHold``). Default 0.4 s.
    public var minimumTurnWhenFree: Double
    /// A dominant speaker who spoke within this long still holds the floor. Default 0.8 s.
    public var dominantHold: Double
    /// Time constant of the short-term activity score compared at a takeover, in seconds.
    /// Default 0.3 s. A challenger takes over only if its score exceeds the dominant's by
    /// ``takeoverMargin``; a dominant who keeps talking keeps a score near 1 and keeps the floor.
    public var activityTimeConstant: Double
    /// See ``activityTimeConstant``. Default 0.1.
    public var takeoverMargin: Float
    /// After this long without speech from the dominant speaker, and with nobody to take over,
    /// the dominant becomes nobody. Default 2 s.
    public var silenceTimeout: Double
    /// Short-term activity score a participant needs to take the floor at all. Default 0.5:
    /// sparse false alarms (keystrokes, clicks a few frames long) keep the score low even when
    /// they come often enough to look like one run.
    public var minimumActivity: Float

    public init(speechThreshold: Float = 0.5, gapTolerance: Double = 0.3, minimumTurn: Double = 0.6,
                minimumTurnWhenFree: Double = 0.4, dominantHold: Double = 0.8,
                activityTimeConstant: Double = 0.3, takeoverMargin: Float = 0.1, silenceTimeout: Double = 2,
                minimumActivity: Float = 0.5) {
        self.minimumActivity = minimumActivity
        self.speechThreshold = speechThreshold; self.gapTolerance = gapTolerance
        self.minimumTurn = minimumTurn; self.minimumTurnWhenFree = minimumTurnWhenFree
        self.dominantHold = dominantHold; self.activityTimeConstant = activityTimeConstant
        self.takeoverMargin = takeoverMargin; self.silenceTimeout = silenceTimeout
    }
}

/// A change of the dominant speaker.
public struct ActiveSpeakerEvent<ID: Hashable & Sendable>: Sendable, Equatable {
    public enum Reason: String, Sendable {
        /// Someone took the floor (from nobody or from a previous dominant speaker).
        case tookFloor
        /// The dominant speaker was silent for the silence timeout; now nobody.
        case silenceTimeout
        /// The dominant speaker left.
        case left
    }
    /// When it was decided, in the caller's clock (seconds).
    public var time: Double
    /// The new dominant speaker, or nil for nobody.
    public var dominant: ID?
    /// The previous one.
    public var previous: ID?
    public var reason: Reason
}

/// Decides, at a cadence the caller chooses (for example every 100 ms), who the dominant speaker
/// is, from every participant's per-frame speech evidence over several time scales: the current
/// run of speech (gaps under ``ActiveSpeakerConfiguration/gapTolerance`` bridged), a short-term
/// activity score, and the time since the dominant speaker last spoke. Back-channels and
/// transients are too short to take the floor; a speaker who keeps talking keeps it through an
/// overlap; nobody holds it after the silence timeout.
///
/// Participants may join and leave at any time. All times come from the caller (an injected
/// clock), and participants are visited in join order, so the decisions are deterministic.
/// Threading: a value type; use from one thread at a time.
public struct ActiveSpeakerDetector<ID: Hashable & Sendable>: Sendable {
    public var configuration: ActiveSpeakerConfiguration
    /// The dominant speaker, or nil for nobody.
    public private(set) var dominant: ID?
    // Per participant, in join order: the ID apart from the evidence, so the per-frame and
    // per-decision work runs on concrete types even when this generic code is not specialised
    // for the caller's ID (no allocation per call).
    private var ids: [ID] = []
    private var members: [SpeakerEvidence] = []
    private var index: [ID: Int] = [:]

    public init(configuration: ActiveSpeakerConfiguration = .init()) {
        self.configuration = configuration
    }

    /// The participants, in join order.
    public var participants: [ID] { ids }

    /// Adds a participant (no effect if already present).
    public mutating func join(_ id: ID) {
        guard index[id] == nil else { return }
        index[id] = members.count
        ids.append(id)
        members.append(SpeakerEvidence())
    }

    /// Removes a participant; returns an event if it was the dominant speaker.
    public mutating func leave(_ id: ID, at time: Double) -> ActiveSpeakerEvent<ID>? {
        guard let i = index[id] else { return nil }
        members.remove(at: i)
        ids.remove(at: i)
        index = [:]
        for (j, m) in ids.enumerated() { index[m] = j }
        guard dominant == id else { return nil }
        dominant = nil
        return ActiveSpeakerEvent(time: time, dominant: nil, previous: id, reason: .left)
    }

    /// Feeds one VAD frame of participant `id` (ignored for an unknown participant).
    public mutating func update(_ id: ID, decision: VADDecision) {
        update(id, isSpeech: decision.probability >= configuration.speechThreshold,
               at: decision.time, duration: VoiceActivityDetector.frameDuration)
    }

    /// Feeds speech evidence of participant `id` for the interval starting at `time` and lasting
    /// `duration` seconds (for remote participants whose senders signal voice activity, e.g. an
    /// RFC 6464 audio-level header extension with its V bit).
    public mutating func update(_ id: ID, isSpeech: Bool, at time: Double, duration: Double = 0.01) {
        guard let i = index[id] else { return }
        members[i].add(isSpeech: isSpeech, at: time, duration: duration, configuration: configuration)
    }

    /// Decides who is dominant at `time`; returns an event if that changed.
    public mutating func decide(at time: Double) -> ActiveSpeakerEvent<ID>? {
        var current = -1
        if let d = dominant, let i = index[d] { current = i }
        let decision = members.withUnsafeBufferPointer {
            SpeakerEvidence.decide(among: $0, current: current, at: time, configuration: configuration)
        }
        switch decision {
        case .keep:
            return nil
        case .takeFloor(let b):
            let previous = dominant
            dominant = ids[b]
            return ActiveSpeakerEvent(time: time, dominant: dominant, previous: previous, reason: .tookFloor)
        case .silenceTimeout:
            let previous = dominant
            dominant = nil
            return ActiveSpeakerEvent(time: time, dominant: nil, previous: previous, reason: .silenceTimeout)
        }
    }
}

/// One participant's speech evidence over several time scales (not generic, so its work is
/// specialised whatever the detector's ID type).
struct SpeakerEvidence: Sendable {
    var lastUpdate: Double?
    var lastSpeech: Double = -.infinity      // end of the last speech frame
    var runStart: Double = -.infinity        // start of the current run
    var activity: Float = 0                  // EMA of the speech indicator

    enum Decision { case keep, takeFloor(Int), silenceTimeout }

    mutating func add(isSpeech: Bool, at time: Double, duration: Double, configuration: ActiveSpeakerConfiguration) {
        let end = time + duration
        let dt = max(0, end - (lastUpdate ?? time))
        let alpha = 1 - fastExp(-Float(dt / configuration.activityTimeConstant))
        activity += alpha * ((isSpeech ? 1 : 0) - activity)
        lastUpdate = end
        if isSpeech {
            if time - lastSpeech > configuration.gapTolerance { runStart = time }
            lastSpeech = end
        }
    }

    /// Who holds the floor at `time`, given the current dominant's index (-1: nobody).
    static func decide(among members: UnsafeBufferPointer<SpeakerEvidence>, current: Int, at time: Double,
                       configuration c: ActiveSpeakerConfiguration) -> Decision {
        let holds = current >= 0 && time - members[current].lastSpeech <= c.dominantHold
        var best = -1
        for j in members.indices where j != current {
            let m = members[j]
            guard time - m.lastSpeech <= c.gapTolerance, m.activity >= c.minimumActivity else { continue }
            let run = m.lastSpeech - m.runStart
            if holds {
                guard run >= c.minimumTurn - 1e-9, m.activity > members[current].activity + c.takeoverMargin else { continue }
            } else {
                guard run >= c.minimumTurnWhenFree - 1e-9 else { continue }
            }
            if best < 0 || m.activity > members[best].activity { best = j }
        }
        if best >= 0 { return .takeFloor(best) }
        if current >= 0, time - members[current].lastSpeech > c.silenceTimeout { return .silenceTimeout }
        return .keep
    }
}
