// Call state: the participants as a UI shows them, folded from call events.

/// What a UI shows about one participant.
public struct ParticipantState: Sendable, Hashable {
    public var id: ParticipantID
    /// The name a UI shows (from the events' ``CallEvent/name``; the id until one says).
    public var name: String
    /// False after `left`.
    public var present = true
    public var muted = false
    public var videoOn = false
    public var talking = false
    /// Talking detected while muted (from the local capture).
    public var talkingWhileMuted = false
    /// Media time the current talk started (valid while ``talking``).
    public var talkingSince = 0.0
    /// Finished talks' total duration, seconds (see ``talkTime(at:)``).
    public var completedTalkTime = 0.0
    /// Talks started.
    public var turns = 0
    /// Level of the latest talking change, dBov.
    public var levelDbov: Float = -100
    /// Latest statistics.
    public var statistics = ParticipantAudioStatistics()

    /// A participant `id`, shown as `name` (default: the id).
    public init(id: ParticipantID, name: String? = nil) { self.id = id; self.name = name ?? id }

    /// Total talk time up to media time `time`, the current talk included.
    public func talkTime(at time: Double) -> Double {
        completedTalkTime + (talking ? max(0, time - talkingSince) : 0)
    }
}

/// The state of a call, folded from its events: participants in join order, who is dominant.
/// Pure and deterministic: the same events give the same state.
///
/// Threading: a value type.
public struct CallState: Sendable, Hashable {
    /// Every participant that joined, in join order (those who left stay, `present == false`).
    public private(set) var participants: [ParticipantState] = []
    /// The dominant speaker, or nil.
    public private(set) var dominant: ParticipantID?
    /// Media time of the latest event.
    public private(set) var time = 0.0

    public init() {}

    /// The participant named `id`, if it joined.
    public subscript(id: ParticipantID) -> ParticipantState? {
        participants.first { $0.id == id }
    }

    /// Present participants, in join order.
    public var present: [ParticipantState] { participants.filter(\.present) }

    /// Applies one event.
    public mutating func apply(_ event: CallEvent) {
        time = max(time, event.time)
        if case .dominantSpeakerChanged = event.kind {
            dominant = event.participant
            return
        }
        guard let id = event.participant else { return }
        var i = participants.firstIndex { $0.id == id }
        if i == nil {
            participants.append(ParticipantState(id: id))
            i = participants.count - 1
        }
        var p = participants[i!]
        if let name = event.name { p.name = name }
        switch event.kind {
        case .joined: p.present = true
        case .left:
            p.present = false
            if p.talking { p.completedTalkTime += max(0, event.time - p.talkingSince); p.talking = false }
            if dominant == id { dominant = nil }
        case .muted: p.muted = true
        case .unmuted: p.muted = false; p.talkingWhileMuted = false
        case .videoOn: p.videoOn = true
        case .videoOff: p.videoOn = false
        case .talkingStarted(let c):
            p.levelDbov = c.levelDbov
            if c.whileMuted { p.talkingWhileMuted = true; break }
            if !p.talking { p.talking = true; p.talkingSince = c.segmentTime; p.turns += 1 }
        case .talkingStopped(let c):
            p.levelDbov = c.levelDbov
            if c.whileMuted { p.talkingWhileMuted = false; break }
            if p.talking { p.completedTalkTime += max(0, c.segmentTime - p.talkingSince); p.talking = false }
        case .statistics(let s): p.statistics = s
        case .dominantSpeakerChanged: break
        }
        participants[i!] = p
    }
}
