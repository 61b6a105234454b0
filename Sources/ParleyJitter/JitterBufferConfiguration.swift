#if canImport(ParleyRTP)
import ParleyRTP
#endif

/// Settings of an ``AudioJitterBuffer``. Defaults suit Opus at 48 kHz in 20 ms packets,
/// played out in 10 ms frames.
public struct JitterBufferConfiguration: Sendable, Hashable {
    /// RTP clock rate of the timestamps, Hz (48 000 for Opus, RFC 7587, whatever it decodes to).
    public var clockRate: Int = 48_000
    /// Rate the decoder outputs, Hz. `clockRate` must be a whole multiple of it.
    public var sampleRate: Int = 48_000
    /// Interleaved channels of the decoded audio.
    public var channels: Int = 1
    /// Playout frame length, ms: 10 or 20 (one `get` returns this much).
    public var frameMs: Int = 10
    /// Packet duration assumed when `put` is not told one, ms.
    public var packetMs: Int = 20
    /// Longest packet the buffer decodes, ms (Opus allows 120).
    public var maximumPacketMs: Int = 120
    /// Lower bound of the target buffering delay, ms (0: as low as the network allows).
    public var minimumDelayMs: Double = 0
    /// Upper bound of the target buffering delay and of waiting for a late packet, ms.
    public var maximumDelayMs: Double = 2_000
    /// Delay used before any packet has been measured, ms.
    public var initialDelayMs: Double = 40
    /// Quantile of the arrival delays the target covers: 0.98 accepts about 2 % of packets
    /// arriving after the target, which the buffer then mostly still plays by stretching.
    public var quantile: Double = 0.98
    /// Higher quantile bounding how long the buffer waits (concealing) for a missing packet
    /// when nothing later has arrived either.
    public var waitQuantile: Double = 0.9999
    /// The wait quantile is multiplied by this: a high quantile estimated from a few thousand
    /// packets is mostly the largest delay seen so far, and the next record is likely larger.
    public var waitMarginFactor: Double = 1.3
    /// Odds (arrives later : lost) below which waiting for a missing packet stops; with the
    /// measured loss rate this lowers the wait below `waitQuantile` on lossy paths.
    public var lossWaitOdds: Double = 0.05
    /// How long a missing packet may be waited for during the first 100 packets, before the
    /// delay statistics mean anything, ms.
    public var startupWaitMs: Double = 300
    /// Whether a missing packet is waited for (up to `waitQuantile`) even when later packets
    /// have arrived, trading a short stretch for not losing a reordered packet.
    public var waitForReordered: Bool = true
    /// Forget factor of the delay histogram, per packet (0.998: about 10 s of 20 ms packets).
    public var forgetFactor: Double = 0.998
    /// The delay error, ms, beyond which a speech packet is time-stretched (hysteresis).
    public var stretchThresholdMs: Double = 5
    /// Normalised correlation a speech block's pitch period needs before it is removed or
    /// repeated (lower: more stretching of noise-like speech, with audible splices). Far
    /// from the target (4x the threshold) 60 % of it is enough.
    public var stretchMinimumCorrelation: Double = 0.5
    /// Packets held at most; a power of two (the ring is indexed by sequence number & mask).
    public var capacity: Int = 256
    /// Largest payload accepted, bytes; larger ones are discarded.
    public var maximumPayloadBytes: Int = 1_500
    /// A forward sequence jump of this many or more is a stray packet (or, confirmed, a
    /// restart): RFC 3550 A.1 MAX_DROPOUT, `RTPSequenceValidator/maxDropout` by default.
    public var maximumDropout: Int = RTPSequenceValidator.maxDropout
    /// A packet this many or more behind the highest is a stray packet (or, confirmed, a
    /// restart): RFC 3550 A.1 MAX_MISORDER, `RTPSequenceValidator/maxMisorder` by default.
    public var maximumMisorder: Int = RTPSequenceValidator.maxMisorder
    /// A timestamp step differing from the arrival-time step by more than this, ms, is a
    /// timestamp jump (the media timeline is re-based); smaller ones are silence (DTX).
    public var timestampJumpToleranceMs: Double = 1_000

    /// The defaults.
    public init() {}

    /// Checks the values an ``AudioJitterBuffer`` needs: `capacity` a power of two of at least
    /// 8; `sampleRate` positive and `clockRate` a whole multiple of it; `frameMs` 10 or 20;
    /// `channels`, `maximumPayloadBytes`, `packetMs` and `maximumPacketMs` positive; `quantile`
    /// and `forgetFactor` in the open interval (0, 1); `minimumDelayMs` at most `maximumDelayMs`.
    ///
    /// - Throws: ``JitterConfigurationError`` naming the first value out of range.
    public func validate() throws(JitterConfigurationError) {
        func reject(_ name: String, _ value: some CustomStringConvertible, _ allowed: String) -> JitterConfigurationError {
            .outOfRange(parameter: name, value: value.description, allowed: allowed)
        }
        guard capacity >= 8 && capacity & (capacity - 1) == 0 else {
            throw reject("capacity", capacity, "a power of two >= 8")
        }
        guard sampleRate > 0 else { throw reject("sampleRate", sampleRate, "> 0") }
        guard clockRate % sampleRate == 0 else {
            throw reject("clockRate", clockRate, "a whole multiple of sampleRate \(sampleRate)")
        }
        guard frameMs == 10 || frameMs == 20 else { throw reject("frameMs", frameMs, "10 or 20") }
        guard channels >= 1 else { throw reject("channels", channels, ">= 1") }
        guard maximumPayloadBytes > 0 else { throw reject("maximumPayloadBytes", maximumPayloadBytes, "> 0") }
        guard packetMs > 0 else { throw reject("packetMs", packetMs, "> 0") }
        guard maximumPacketMs > 0 else { throw reject("maximumPacketMs", maximumPacketMs, "> 0") }
        guard forgetFactor > 0 && forgetFactor < 1 else {
            throw reject("forgetFactor", forgetFactor, "0 < forgetFactor < 1")
        }
        guard quantile > 0 && quantile < 1 else { throw reject("quantile", quantile, "0 < quantile < 1") }
        guard minimumDelayMs <= maximumDelayMs else {
            throw reject("minimumDelayMs", minimumDelayMs, "<= maximumDelayMs \(maximumDelayMs)")
        }
    }

    /// Samples per channel of one playout frame.
    public var frameSamples: Int { sampleRate * frameMs / 1000 }
}

/// Jitter-buffer counters, named as in W3C webrtc-stats `RTCInboundRtpStreamStats`.
/// Sample counts are samples per channel at the decoder rate; delays are seconds, summed
/// over emitted samples as the W3C definitions do (divide by `jitterBufferEmittedCount`).
public struct JitterBufferStatistics: Sendable, Hashable {
    /// Sum over emitted samples of the time from their packet's arrival to emission, s.
    public var jitterBufferDelay: Double = 0
    /// Sum over emitted samples of the target delay at emission, s.
    public var jitterBufferTargetDelay: Double = 0
    /// Samples emitted that came from packets (decoded or FEC).
    public var jitterBufferEmittedCount: Int = 0
    /// Samples synthesised to conceal loss or lateness (PLC, silence in gaps).
    public var concealedSamples: Int = 0
    /// Of `concealedSamples`, those that are silent (DTX gaps, faded-out PLC).
    public var silentConcealedSamples: Int = 0
    /// Runs of consecutive concealment.
    public var concealmentEvents: Int = 0
    /// Samples added by deceleration (time-stretching and stretched silence).
    public var insertedSamplesForDeceleration: Int = 0
    /// Samples removed by acceleration (time-compression and shortened silence).
    public var removedSamplesForAcceleration: Int = 0
    /// RTP packets lost: expected (from the sequence-number span) minus received unique.
    public var packetsLost: Int = 0
    /// Packets not played because they arrived too late or too early, or could not be kept
    /// (overflow, oversize, stray sequence numbers). Duplicates are not counted here.
    public var packetsDiscarded: Int = 0
    /// Packets given to `put`, duplicates included.
    public var packetsReceived: Int = 0
    /// Copies of packets already received.
    public var packetsDuplicated: Int = 0
    /// Packets that arrived after their playout time had passed (also in `packetsDiscarded`).
    public var late: Int = 0
    /// Packets recovered from the next packet's FEC.
    public var fecRecovered: Int = 0
    /// Timeline re-bases: timestamp jumps and sender restarts.
    public var resyncs: Int = 0
    /// Packets the decoder could not decode (corrupt payloads), concealed for their duration.
    public var decodeFailures: Int = 0

    public init() {}
}

/// What `put` did with a packet.
public enum JitterPutOutcome: Sendable, Hashable {
    /// Stored; it will be played (or later discarded by overflow or a restart).
    case accepted
    /// A copy of a packet already received: dropped.
    case duplicate
    /// Its playout time had passed: dropped.
    case late
    /// Dropped for another reason.
    case discarded(JitterDiscardReason)
}

/// A packet whose first sample was emitted by the last `get`.
public struct JitterPlayedPacket: Sendable, Hashable {
    /// The caller's tag given to `put`.
    public var tag: Int
    /// RTP sequence number.
    public var sequence: UInt16
    /// Offset of its first sample inside the frame, samples per channel.
    public var offsetInFrame: Int
}

/// What one `get` produced.
public enum JitterFrameKind: Sendable, Hashable {
    /// Playout has not started (no packet, or still filling to the target delay): silence.
    case buffering
    /// Only decoded (or FEC-recovered) audio.
    case normal
    /// Some samples were concealed.
    case concealed
}

/// Why a packet was discarded.
public enum JitterDiscardReason: Sendable, Hashable {
    /// Empty or larger than ``JitterBufferConfiguration/maximumPayloadBytes``.
    case badPayloadSize
    /// A sequence number far from the stream's, held for restart probation (RFC 3550 A.1).
    case strayPacket
    /// Too far ahead of the playout point for the ring.
    case overflow
}
