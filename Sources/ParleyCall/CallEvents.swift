// Call events: what a client UI needs to know, as Sendable values and async sequences.

import Synchronization
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
    /// Who it is about (for a dominant-speaker change: the new dominant, nil for nobody).
    public var participant: ParticipantID?
    public var kind: Kind

    public init(time: Double, participant: ParticipantID?, kind: Kind) {
        self.time = time; self.participant = participant; self.kind = kind
    }
}

/// Fans call events out to any number of subscribers, each an `AsyncStream` of ``CallEvent``.
///
/// Every subscriber sees every event published after it subscribed, in publication order.
/// Each subscriber's buffer keeps at most `bufferLimit` undelivered events (default 4096,
/// the oldest dropped beyond that) so that a stalled UI cannot grow memory without bound.
///
/// Threading: `Sendable`; publish from the call's thread, consume from any task.
public final class CallEventHub: Sendable {
    private let subscribers = Mutex<(next: Int, continuations: [Int: AsyncStream<CallEvent>.Continuation])>((0, [:]))
    /// Undelivered events kept per subscriber.
    public let bufferLimit: Int

    public init(bufferLimit: Int = 4096) {
        precondition(bufferLimit > 0)
        self.bufferLimit = bufferLimit
    }

    /// A new subscription: the events published from now on, ending when the hub finishes.
    public func events() -> AsyncStream<CallEvent> {
        let (stream, continuation) = AsyncStream<CallEvent>.makeStream(bufferingPolicy: .bufferingNewest(bufferLimit))
        let id = subscribers.withLock { s -> Int in
            let id = s.next
            s.next += 1
            s.continuations[id] = continuation
            return id
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.subscribers.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Delivers `event` to every subscriber.
    public func publish(_ event: CallEvent) {
        let targets = subscribers.withLock { Array($0.continuations.values) }
        for c in targets { c.yield(event) }
    }

    /// Ends every subscription.
    public func finish() {
        let targets = subscribers.withLock { s -> [AsyncStream<CallEvent>.Continuation] in
            let all = Array(s.continuations.values)
            s.continuations.removeAll()
            return all
        }
        for c in targets { c.finish() }
    }
}
