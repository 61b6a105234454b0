#if canImport(ParleyRTP)
import ParleyRTP
#endif

/// Where an ``AudioJitterBuffer``'s packets sit on one continuous timeline: RTP sequence
/// numbers unwrapped to 64 bits, RTP timestamps unwrapped (32-bit wrap) to media time in RTP
/// clock units, re-based on timestamp jumps and sender restarts so media time stays continuous.
///
/// Sequence validation is RFC 3550 A.1's (``RTPSequenceValidator``) without probation: the
/// first packet starts the stream, and a jump restarts it only when the jumped-to packet's
/// successor is the very next arrival. The newest packet anchors the unwrapping. Also keeps
/// which sequence numbers arrived recently (duplicates) and the received span (loss count).
/// Allocates only in `init`.
struct StreamTimeline: Sendable {
    /// The unwrapped sequence number given to the first packet: far from 0, so sequence
    /// numbers a little before it stay positive (-1 marks an empty slot).
    static let firstSequence: Int64 = 1 << 32
    /// Sequence numbers remembered for duplicate detection: at least this many...
    static let minimumHistory = 4096
    /// ...and at least this many per packet slot of the buffer.
    static let historyPerSlot = 4

    /// Where a packet goes on the timeline.
    struct Placement {
        /// Unwrapped sequence number.
        var sequence: Int64
        /// Media time of its first sample, RTP clock units.
        var media: Int64
        /// Whether placing it re-based the timeline (a timestamp jump or a sender restart).
        var rebased: Bool
    }

    private let clockRate: Int
    private let timestampJumpToleranceMs: Double
    private var validator: RTPSequenceValidator
    /// Whether a packet has started the stream.
    private(set) var hasStream = false
    /// The highest unwrapped sequence number received.
    private(set) var highestSequence: Int64 = 0
    private var highestTimestamp: UInt32 = 0
    private var highestMedia: Int64 = 0
    private var highestArrivalMs = 0.0
    private var firstSequence: Int64 = 0
    private var uniqueReceived = 0
    private let historyMask: Int
    private var history: [Int64]

    init(_ c: JitterBufferConfiguration) {
        clockRate = c.clockRate
        timestampJumpToleranceMs = c.timestampJumpToleranceMs
        validator = RTPSequenceValidator(maxDropout: c.maximumDropout, maxMisorder: c.maximumMisorder,
                                         probationPackets: 0, restartConfirmation: .nextArrival)
        let historyCount = max(Self.minimumHistory, c.capacity * Self.historyPerSlot)
        historyMask = historyCount - 1
        history = [Int64](repeating: -1, count: historyCount)
    }

    /// `media` (RTP clock units) in ms.
    @inline(__always) func milliseconds(_ media: Int64) -> Double {
        Double(media) * 1000 / Double(clockRate)
    }

    /// RTP packets lost so far: the received span minus the unique packets received.
    var packetsLost: Int {
        hasStream ? max(0, Int(highestSequence - firstSequence + 1) - uniqueReceived) : 0
    }

    /// Places a packet of `duration` (clock units) on the timeline; nil for a stray packet
    /// (a sequence jump not confirmed as a restart). The first packet starts the stream at
    /// media time 0. A timestamp step that matches neither the arrival step nor the nominal
    /// duration within ``JitterBufferConfiguration/timestampJumpToleranceMs`` re-bases media
    /// time to whichever is longer; a restart continues media time after the newest packet.
    /// Only the first packet moves the anchors; ``accept(_:timestamp:arrivalMs:)`` does after.
    @inline(__always) mutating func place(sequence: UInt16, timestamp: UInt32, arrivalMs arr: Double, duration dur: Int64) -> Placement? {
        let verdict = validator.validate(sequence)
        switch verdict {
        case .started:
            hasStream = true
            let useq = Self.firstSequence
            firstSequence = useq
            highestSequence = useq; highestTimestamp = timestamp
            highestMedia = 0; highestArrivalMs = arr
            return Placement(sequence: useq, media: 0, rebased: false)
        case .inOrder, .misordered:
            let delta = verdict.offset ?? 0
            let useq = highestSequence + Int64(delta)
            let tsDelta = Int64(Int32(bitPattern: timestamp &- highestTimestamp))
            var media = highestMedia + tsDelta
            var rebased = false
            if delta > 0 {
                let tsMs = Double(tsDelta) * 1000 / Double(clockRate)
                let elapsedMs = arr - highestArrivalMs
                let nominalMs = Double(Int64(delta) * dur) * 1000 / Double(clockRate)
                if abs(tsMs - elapsedMs) > timestampJumpToleranceMs && abs(tsMs - nominalMs) > timestampJumpToleranceMs {
                    media = highestMedia + max(Int64(delta) * dur, Int64(elapsedMs * Double(clockRate) / 1000))
                    rebased = true
                }
            }
            return Placement(sequence: useq, media: media, rebased: rebased)
        case .restarted:
            // RFC 3550 A.1: two packets in a row in the new sequence space: a restart.
            let elapsed = Int64(max(0, arr - highestArrivalMs) * Double(clockRate) / 1000)
            return Placement(sequence: highestSequence + 1, media: highestMedia + max(dur, elapsed), rebased: true)
        case .jump, .probation:
            return nil
        }
    }

    /// Whether the packet with unwrapped sequence number `seq` was received recently.
    @inline(__always) func hasReceived(_ seq: Int64) -> Bool {
        history[Int(seq & Int64(historyMask))] == seq
    }

    /// Records a placed packet as received; it becomes the anchor when it is the newest.
    /// Returns how far it is ahead of the previous highest sequence number (negative: behind).
    @inline(__always) mutating func accept(_ p: Placement, timestamp: UInt32, arrivalMs arr: Double) -> Int64 {
        let useq = p.sequence
        history[Int(useq & Int64(historyMask))] = useq
        uniqueReceived += 1
        let advance = useq - highestSequence
        if useq < firstSequence { firstSequence = useq }
        if useq >= highestSequence {
            highestSequence = useq; highestTimestamp = timestamp
            highestMedia = p.media; highestArrivalMs = arr
        }
        return advance
    }
}
