// Call events: what a client UI needs to know, as Sendable values and async sequences.

import ParleyVoice

/// A participant's name in a call (for `parley room`, a file's stem). Unique within a call.
public typealias ParticipantID = String

/// Details of a talking change.
public struct TalkingChange: Sendable, Hashable {
    /// Mean level of the onset's (started) or the talk's (stopped) speech frames, dBov.
    public var levelDbov: Float
    /// Why it changed (`speechOnset`, `hangoverElapsed`, `streamEnded`).
    public var reason: TalkEvent.Reason
    /// Whether the participant was muted (talking while muted, from the local capture).
    public var whileMuted: Bool
    /// Where the talk starts (started) or ends (stopped) in the participant's media, seconds
    /// from the call start: the decision comes later (onset window, hang-over).
    public var segmentTime: Double
    /// VAD speech probability of the deciding frame.
    public var probability: Float

    public init(levelDbov: Float, reason: TalkEvent.Reason, whileMuted: Bool, segmentTime: Double,
                probability: Float) {
        self.levelDbov = levelDbov; self.reason = reason; self.whileMuted = whileMuted
        self.segmentTime = segmentTime; self.probability = probability
    }
}

/// Receive statistics of one participant's audio, webrtc-stats style.
public struct ParticipantAudioStatistics: Sendable, Hashable {
    /// Audio packets (20 ms frames) the sender produced.
    public var framesSent = 0
    /// Packets that played (decoded from their own payload).
    public var framesPlayed = 0
    /// Packets rebuilt from the next packet's FEC (a subset of the lost and late ones).
    public var framesRecovered = 0
    /// Packets that arrived too late to play (concealed instead).
    public var framesLate = 0
    /// Packets the network lost (concealed instead).
    public var framesLost = 0
    /// Packets dropped for another reason (overflow, malformed), concealed instead.
    public var framesDiscarded = 0
    /// Packets sent but not yet accounted for (in flight or buffered).
    public var framesPending = 0
    /// Samples synthesised by concealment, at the decoder rate.
    public var concealedSamples = 0
    /// Samples played, at the decoder rate.
    public var playedSamples = 0
    /// Mean jitter-buffer delay so far (webrtc-stats jitterBufferDelay / emitted), ms.
    public var meanJitterBufferDelayMs = 0.0
    /// Current target delay, ms.
    public var targetDelayMs = 0.0
    /// Largest target delay seen, ms.
    public var maximumTargetDelayMs = 0.0

    public init() {}

    /// Fraction of sent frames lost in the network.
    public var lossFraction: Double { framesSent == 0 ? 0 : Double(framesLost) / Double(framesSent) }
    /// Fraction of played-out samples that were concealed.
    public var concealmentFraction: Double {
        let total = playedSamples + concealedSamples
        return total == 0 ? 0 : Double(concealedSamples) / Double(total)
    }
    /// played + late + lost + discarded + pending == sent: every frame accounted for (the
    /// late, lost and discarded ones were concealed or recovered from FEC).
    public var isBalanced: Bool {
        framesPlayed + framesLate + framesLost + framesDiscarded + framesPending == framesSent
    }
}

/// One thing that happened in a call.
///
/// Times are media seconds since the call started (the sender's timeline of the audio the
/// event is about; for membership and mute changes, the call clock).
public struct CallEvent: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        case joined
        case left
        case muted
        case unmuted
        case videoOn
        case videoOff
        case talkingStarted(TalkingChange)
        case talkingStopped(TalkingChange)
        /// The dominant speaker became ``CallEvent/participant`` (nil: nobody); the previous one.
        case dominantSpeakerChanged(previous: ParticipantID?)
        case statistics(ParticipantAudioStatistics)
    }

    /// Media seconds since the call started.
    public var time: Double
    /// Who it is about, by id (for a dominant-speaker change: the new dominant, nil for nobody).
    public var participant: ParticipantID?
    /// That participant's display name (several participants may share one); nil when the event
    /// is about nobody. A session fills it in from the participant's declaration.
    public var name: String?
    public var kind: Kind

    public init(time: Double, participant: ParticipantID?, name: String? = nil, kind: Kind) {
        self.time = time; self.participant = participant; self.name = name; self.kind = kind
    }
}

extension CallEvent {
    /// Whether this is a talkingStarted or talkingStopped.
    var isTalkingEdge: Bool {
        switch kind {
        case .talkingStarted, .talkingStopped: true
        default: false
        }
    }
}

/// Fans call events out to any number of subscribers, each a ``CallEventStream``.
///
/// Delivery policy: every subscriber sees the events published after it subscribed, in
/// publication order, except that a subscriber that falls behind gets them coalesced, never
/// losing a talking edge:
/// - a participant's undelivered ``CallEvent/Kind/statistics(_:)`` is replaced by its newer one
///   (moved to the newer one's place), whatever the backlog;
/// - undelivered dominant-speaker changes merge into one (from the first's `previous` to the
///   latest; none when they net to no change);
/// - beyond `bufferLimit` undelivered events (default 4096), the oldest undelivered
///   `talkingStarted` / `talkingStopped` pair of one participant is removed as a pair (counted in
///   ``CallEventStream/coalescedTalks``), so a UI never sees a start without its stop. Joins,
///   leaves, mutes, video changes and unpaired talking edges are never dropped.
/// ``state`` is the ``CallState`` folded from every published event, coalesced or not: a UI that
/// fell behind can render it instead of replaying.
///
/// Threading: `Sendable`; publish from the call's thread, consume from any task.
public final class CallEventHub: Sendable {
    private let subscribers = Locked<(next: Int, queues: [Int: CallEventQueue])>((0, [:]))
    private let folded = Locked(CallState())
    /// Undelivered events kept per subscriber before talking pairs are coalesced.
    public let bufferLimit: Int

    /// A hub; `bufferLimit` below 1 is taken as 1.
    public init(bufferLimit: Int = 4096) {
        self.bufferLimit = max(1, bufferLimit)
    }

    /// A new subscription: the events published from now on, ending when the hub finishes.
    public func events() -> CallEventStream {
        let queue = CallEventQueue(limit: bufferLimit)
        subscribers.withLock { s in
            s.queues[s.next] = queue
            s.next += 1
        }
        return CallEventStream(queue: queue)
    }

    /// The call's state folded from every event published so far.
    public var state: CallState { folded.withLock { $0 } }

    /// Delivers `event` to every subscriber.
    public func publish(_ event: CallEvent) {
        folded.withLock { $0.apply(event) }
        let targets = subscribers.withLock { s in
            s.queues = s.queues.filter { !$0.value.isCancelled }
            return Array(s.queues.values)
        }
        for q in targets { q.push(event) }
    }

    /// Ends every subscription (each still delivers what it holds).
    public func finish() {
        let targets = subscribers.withLock { s -> [CallEventQueue] in
            let all = Array(s.queues.values)
            s.queues.removeAll()
            return all
        }
        for q in targets { q.finish() }
    }
}

/// One subscriber's events from a ``CallEventHub`` (see its delivery policy).
public struct CallEventStream: AsyncSequence, Sendable {
    public typealias Element = CallEvent
    let queue: CallEventQueue

    /// Talking start/stop pairs removed, undelivered, from this subscriber's backlog so far.
    public var coalescedTalks: Int { queue.coalescedTalks }
    /// Events waiting for this subscriber.
    public var backlog: Int { queue.backlog }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let queue: CallEventQueue
        public mutating func next() async -> CallEvent? { await queue.next() }
        public mutating func next(isolation actor: isolated (any Actor)?) async -> CallEvent? { await queue.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(queue: queue) }
}

/// The coalescing queue behind a ``CallEventStream``.
final class CallEventQueue: Sendable {
    private struct State {
        var events: [CallEvent] = []
        var head = 0
        var waiter: CheckedContinuation<CallEvent?, Never>?
        var finished = false
        var cancelled = false
        var coalescedTalks = 0
        var count: Int { events.count - head }
    }
    private let state = Locked(State())
    let limit: Int

    init(limit: Int) { self.limit = limit }

    var coalescedTalks: Int { state.withLock { $0.coalescedTalks } }
    var backlog: Int { state.withLock { $0.count } }
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func push(_ event: CallEvent) {
        let waiter = state.withLock { s -> CheckedContinuation<CallEvent?, Never>? in
            guard !s.finished else { return nil }
            if let w = s.waiter {
                s.waiter = nil
                return w
            }
            Self.enqueue(event, into: &s, limit: limit)
            return nil
        }
        waiter?.resume(returning: event)
    }

    func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<CallEvent?, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
    }

    func next() async -> CallEvent? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<CallEvent?, Never>) in
                let ready = state.withLock { s -> (Bool, CallEvent?) in
                    if s.count > 0 {
                        let e = s.events[s.head]
                        s.head += 1
                        if s.head > 64 && s.head * 2 > s.events.count {
                            s.events.removeFirst(s.head)
                            s.head = 0
                        }
                        return (true, e)
                    }
                    if s.finished || s.cancelled { return (true, nil) }
                    s.waiter = c
                    return (false, nil)
                }
                if ready.0 { c.resume(returning: ready.1) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<CallEvent?, Never>? in
                s.cancelled = true
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    private static func enqueue(_ event: CallEvent, into s: inout State, limit: Int) {
        switch event.kind {
        case .statistics:
            if let i = s.events[s.head...].lastIndex(where: { e in
                if case .statistics = e.kind { return e.participant == event.participant }
                return false
            }) {
                s.events.remove(at: i)
            }
            s.events.append(event)
        case .dominantSpeakerChanged:
            var merged = event
            if let i = s.events[s.head...].lastIndex(where: { if case .dominantSpeakerChanged = $0.kind { return true }; return false }) {
                if case .dominantSpeakerChanged(let first) = s.events[i].kind {
                    merged.kind = .dominantSpeakerChanged(previous: first)
                }
                s.events.remove(at: i)
            }
            if case .dominantSpeakerChanged(let from) = merged.kind, from == merged.participant { return }
            s.events.append(merged)
        default:
            s.events.append(event)
        }
        while s.count > limit, removeOldestTalkPair(&s) { s.coalescedTalks += 1 }
    }

    /// Removes the oldest undelivered talkingStarted whose participant's next undelivered
    /// talking edge is a talkingStopped, and that stop; false when there is no such pair.
    private static func removeOldestTalkPair(_ s: inout State) -> Bool {
        var i = s.head
        while i < s.events.count {
            if case .talkingStarted = s.events[i].kind {
                let who = s.events[i].participant
                var j = i + 1
                while j < s.events.count, s.events[j].participant != who || !s.events[j].isTalkingEdge { j += 1 }
                if j < s.events.count, case .talkingStopped = s.events[j].kind {
                    s.events.remove(at: j)
                    s.events.remove(at: i)
                    return true
                }
            }
            i += 1
        }
        return false
    }
}
