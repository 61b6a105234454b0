// Meeting statistics over talking segments: who talked how long, turns, overlap, interruptions.
// Pure arithmetic over segment lists, shared by `parley detect` and anything that records a call.

/// One stretch of time during which a participant was talking, in seconds on the meeting's
/// timeline (file time plus the file's offset).
///
/// Threading: a value type; freely sendable.
public struct TalkSegment: Hashable, Sendable, CustomStringConvertible {
    /// Start of talking, in seconds.
    public var start: Double
    /// End of talking (exclusive), in seconds; `end >= start`.
    public var end: Double

    /// Creates a segment.
    /// - Throws: ``TalkSegmentError/invalidBounds(start:end:)`` unless both bounds are finite
    ///   and `end >= start`.
    public init(start: Double, end: Double) throws(TalkSegmentError) {
        guard start.isFinite, end.isFinite, end >= start else { throw .invalidBounds(start: start, end: end) }
        self.start = start
        self.end = end
    }

    /// A segment whose bounds the caller has already ordered (the library's own detectors).
    package init(orderedStart start: Double, end: Double) {
        self.start = start
        self.end = end
    }

    /// `end - start`, in seconds.
    public var duration: Double { end - start }

    public var description: String { "[\(start), \(end))" }
}

/// A talking segment that cannot be built from the bounds given.
public enum TalkSegmentError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A bound is not finite, or `end` is before `start`.
    case invalidBounds(start: Double, end: Double)

    public var description: String {
        switch self {
        case let .invalidBounds(start, end): "a talking segment needs finite bounds with end >= start (given \(start) to \(end))"
        }
    }
}

/// The talking statistics of one participant in a meeting (see ``MeetingStatistics``).
public struct ParticipantTalkStatistics: Sendable, Equatable {
    /// The participant's name (for `parley detect --meeting`, the file stem).
    public var name: String
    /// Total talking time, in seconds.
    public var talkTime: Double
    /// `talkTime` divided by the sum of every participant's talking time, in [0, 1]; 0 when
    /// nobody talked. The shares of a meeting add up to 1.
    public var shareOfTalk: Double
    /// `talkTime` divided by the meeting's duration, in [0, 1]; 0 for a zero-length meeting.
    public var fractionOfMeeting: Double
    /// Number of turns: one per talking segment.
    public var turns: Int
    /// The longest talking segment, in seconds (0 when the participant never talked).
    public var longestTurn: Double
    /// Time this participant talked while at least one other participant also talked, in seconds.
    public var overlapTime: Double
    /// How many times this participant interrupted someone (see ``MeetingStatistics``).
    public var interruptionsMade: Int
    /// How many times someone interrupted this participant.
    public var timesInterrupted: Int
}

/// Decoded from a participant of `parley detect`'s JSON (schema `parley.detect/1`): `name`,
/// `talk_s`, `share`, `fraction_of_meeting`, `turns`, `longest_turn_s`, `overlap_s`,
/// `interruptions` and `interrupted` (other fields are ignored), with `JSONDecoder`'s default
/// key strategy.
extension ParticipantTalkStatistics: Decodable {
    enum CodingKeys: String, CodingKey {
        case name, turns
        case talkTime = "talk_s", shareOfTalk = "share", fractionOfMeeting = "fraction_of_meeting"
        case longestTurn = "longest_turn_s", overlapTime = "overlap_s"
        case interruptionsMade = "interruptions", timesInterrupted = "interrupted"
    }
}

/// One interruption: `interrupter` started talking at `time` while `interrupted` was talking,
/// and `interrupted` stopped at `interruptedStopTime` while `interrupter` went on talking.
public struct Interruption: Sendable, Equatable {
    /// Index of the participant who took the floor.
    public var interrupter: Int
    /// Index of the participant who lost it.
    public var interrupted: Int
    /// When the interrupter started talking, in seconds.
    public var time: Double
    /// When the interrupted participant stopped, in seconds.
    public var interruptedStopTime: Double
}

/// Statistics of a meeting: per participant talk time, share, turns, longest turn, overlap and
/// interruptions, computed from each participant's talking segments.
///
/// Definitions (also printed by `parley detect --help`):
/// - **Turn**: one talking segment of the talk detector (its hang-over already bridges short
///   pauses between words).
/// - **Overlap time** of a participant: the time they talked while someone else talked too.
///   The meeting's ``overlapTime`` is the time during which two or more people talked.
/// - **Interruption**: participant B interrupts A when B starts talking while A is talking
///   (A started first), A stops talking within ``interruptionWindow`` seconds of B's start,
///   and B is still talking when A stops: B took the floor. A short "yeah" during A's turn
///   that does not make A stop is not an interruption; nor is B starting after A stopped.
///   Each of B's segments counts at most once per interrupted participant.
///
/// Threading: a value type; freely sendable.
public struct MeetingStatistics: Sendable, Equatable {
    /// Default ``interruptionWindow``: 3 s, long enough for the speaker to finish a word or
    /// two after being cut in on, short enough that a back-channel followed much later by the
    /// end of a long turn is not counted.
    public static let defaultInterruptionWindow: Double = 3.0

    /// The meeting's duration, in seconds.
    public var duration: Double
    /// One entry per participant, in the order they were given.
    public var participants: [ParticipantTalkStatistics]
    /// Time during which two or more participants talked, in seconds.
    public var overlapTime: Double
    /// Time during which nobody talked, in seconds.
    public var silenceTime: Double
    /// Every interruption, ordered by time.
    public var interruptions: [Interruption]
    /// The window used for interruptions, in seconds.
    public var interruptionWindow: Double

    /// Computes the statistics of a meeting of `duration` seconds from each participant's
    /// talking segments. Segments of one participant may be unsorted and may touch or overlap
    /// (they are merged first); parts outside `[0, duration]` are clipped. Cost:
    /// O(S log S + S * P) for S segments and P participants.
    public init(participants: [(name: String, segments: [TalkSegment])], duration: Double,
                interruptionWindow: Double = MeetingStatistics.defaultInterruptionWindow) {
        let meetingDuration = max(0, duration)
        self.duration = meetingDuration
        self.interruptionWindow = interruptionWindow
        let merged = participants.map { Self.normalized($0.segments, clippedTo: meetingDuration) }

        // Sweep over every boundary: between two boundaries the set of talkers is constant.
        var boundaries: [(time: Double, participant: Int, delta: Int)] = []
        for (p, segs) in merged.enumerated() {
            for s in segs {
                boundaries.append((s.start, p, 1))
                boundaries.append((s.end, p, -1))
            }
        }
        boundaries.sort { $0.time < $1.time || ($0.time == $1.time && $0.delta < $1.delta) }
        var active = [Int](repeating: 0, count: merged.count)
        var activeCount = 0
        var overlapPer = [Double](repeating: 0, count: merged.count)
        var overlapTotal = 0.0
        var talkUnion = 0.0
        var last = 0.0
        for b in boundaries {
            let span = b.time - last
            if span > 0 {
                if activeCount >= 1 { talkUnion += span }
                if activeCount >= 2 {
                    overlapTotal += span
                    for p in active.indices where active[p] > 0 { overlapPer[p] += span }
                }
            }
            last = b.time
            // Merged segments of one participant are disjoint, so each count is 0 or 1.
            active[b.participant] += b.delta
            activeCount += b.delta
        }

        var found: [Interruption] = []
        for (bIndex, bSegs) in merged.enumerated() {
            for b in bSegs {
                for (aIndex, aSegs) in merged.enumerated() where aIndex != bIndex {
                    // The segment of A that contains b.start, if any (segments are disjoint, sorted).
                    guard let a = Self.segment(in: aSegs, containing: b.start) else { continue }
                    if a.start < b.start, a.end - b.start <= interruptionWindow, b.end > a.end {
                        found.append(Interruption(interrupter: bIndex, interrupted: aIndex,
                                                  time: b.start, interruptedStopTime: a.end))
                    }
                }
            }
        }
        found.sort { ($0.time, $0.interrupter, $0.interrupted) < ($1.time, $1.interrupter, $1.interrupted) }
        interruptions = found

        let totalTalk = merged.reduce(0.0) { $0 + $1.reduce(0.0) { $0 + $1.duration } }
        var stats: [ParticipantTalkStatistics] = []
        for (p, segs) in merged.enumerated() {
            let talk = segs.reduce(0.0) { $0 + $1.duration }
            stats.append(ParticipantTalkStatistics(
                name: participants[p].name,
                talkTime: talk,
                shareOfTalk: totalTalk > 0 ? talk / totalTalk : 0,
                fractionOfMeeting: meetingDuration > 0 ? talk / meetingDuration : 0,
                turns: segs.count,
                longestTurn: segs.map(\.duration).max() ?? 0,
                overlapTime: overlapPer[p],
                interruptionsMade: found.filter { $0.interrupter == p }.count,
                timesInterrupted: found.filter { $0.interrupted == p }.count))
        }
        self.participants = stats
        overlapTime = overlapTotal
        silenceTime = max(0, meetingDuration - talkUnion)
    }

    /// Sorts `segments`, clips them to `[0, limit]`, drops empty ones and merges those that
    /// touch or overlap.
    public static func normalized(_ segments: [TalkSegment], clippedTo limit: Double) -> [TalkSegment] {
        var out: [TalkSegment] = []
        for s in segments.sorted(by: { $0.start < $1.start }) {
            let start = max(0, s.start), end = min(limit, s.end)
            guard end > start else { continue }
            if let lastEnd = out.last?.end, start <= lastEnd {
                out[out.count - 1].end = max(lastEnd, end)
            } else {
                out.append(TalkSegment(orderedStart: start, end: end))
            }
        }
        return out
    }

    /// The segment of sorted, disjoint `segments` with `start <= time < end`, by binary search.
    static func segment(in segments: [TalkSegment], containing time: Double) -> TalkSegment? {
        var lo = 0, hi = segments.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if segments[mid].start <= time { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return nil }
        let s = segments[lo - 1]
        return time < s.end ? s : nil
    }
}
