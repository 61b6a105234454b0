/// What a receiver counted about the packets it was given. Every malformed or unwanted packet
/// is counted here and dropped; nothing traps.
///
/// Threading: a value type.
public struct RTPReceiveCounters: Equatable, Sendable {
    /// Packets that parsed and were accepted (duplicates excluded).
    public var packets: Int = 0
    /// Payload bytes of accepted packets.
    public var payloadBytes: Int = 0
    /// Packets that failed to parse (any ``RTPError``) and were dropped.
    public var malformed: Int = 0
    /// Packets whose sequence number was already received (within the last 1024).
    public var duplicates: Int = 0
    /// Accepted packets older than the highest sequence number seen (late or reordered).
    public var reordered: Int = 0
    /// Packets dropped while a new source was on probation (RFC 3550 A.1).
    public var probation: Int = 0
    /// Packets dropped after a sequence jump larger than the allowed dropout (RFC 3550 A.1).
    public var badSequence: Int = 0
    /// Packets dropped for an unexpected payload type or SSRC.
    public var unexpected: Int = 0
    /// Source restarts detected (two sequential packets after a large jump).
    public var restarts: Int = 0

    public init() {}
}

/// What ``RTPSourceStatistics/update(sequenceNumber:timestamp:arrivalNanoseconds:payloadBytes:)``
/// decided about one packet.
public enum RTPSequenceVerdict: Equatable, Sendable {
    /// Valid and new: deliver it.
    case accepted
    /// Already received: drop it.
    case duplicate
    /// The source is still on probation (RFC 3550 A.1 MIN_SEQUENTIAL); drop it.
    case probation
    /// A jump beyond MAX_DROPOUT that is not yet confirmed by a second sequential packet.
    case badSequence
    /// The second sequential packet after a large jump: the source restarted; deliver it
    /// (statistics were reset).
    case restarted
}

/// Per-source receive state of RFC 3550: sequence validation (A.1), loss and fraction lost
/// (A.3), interarrival jitter (A.8), and the LSR/DLSR fields of reception reports.
///
/// Inject arrival times in nanoseconds of any monotonic clock; the jitter is kept in timestamp
/// units of `clockRate` (48000 for Opus, 90000 for VP8). Fixed-size storage: nothing is allocated
/// after `init`, so a flood of packets cannot grow memory.
///
/// Threading: a value type; one per SSRC, used on the receiving thread.
public struct RTPSourceStatistics: Sendable {
    /// RFC 3550 A.1 MAX_DROPOUT (``RTPSequenceValidator/maxDropout-type.property``).
    public static let maxDropout = UInt16(RTPSequenceValidator.maxDropout)
    /// RFC 3550 A.1 MAX_MISORDER (``RTPSequenceValidator/maxMisorder-type.property``).
    public static let maxMisorder = UInt16(RTPSequenceValidator.maxMisorder)
    /// RFC 3550 A.1 MIN_SEQUENTIAL (``RTPSequenceValidator/minSequential``).
    public static let minSequential = RTPSequenceValidator.minSequential

    /// The RTP clock rate, Hz.
    public let clockRate: Int
    /// Sequence validation (RFC 3550 A.1, its defaults).
    private var sequence = RTPSequenceValidator()
    /// Lowest sequence number of the current session (after probation or restart).
    public var baseSequence: UInt16 { sequence.baseSequence }
    /// Highest sequence number seen.
    public var maxSequence: UInt16 { sequence.highestSequence }
    /// Wraps of the sequence number times 65536.
    public var cycles: UInt32 { sequence.cycles }
    /// Packets accepted (excluding duplicates, which RFC 3550 would count).
    public private(set) var received: UInt32 = 0
    private var receivedPrior: UInt32 = 0
    private var expectedPrior: UInt32 = 0
    private var transit: Int64? = nil
    /// Interarrival jitter estimate in timestamp units (RFC 3550 A.8, gain 1/16).
    public private(set) var jitter: Double = 0
    private var lastSRMiddle: UInt32 = 0
    private var lastSRArrival: Int64? = nil
    private var seen: [UInt64]  // bitmap of the last 1024 sequence numbers, for duplicates
    /// What was counted so far.
    public private(set) var counters = RTPReceiveCounters()

    /// Creates the state for a new source clocked at `clockRate` Hz; the first packet starts
    /// probation.
    ///
    /// - Throws: ``RTPError/fieldOutOfRange(_:)`` when `clockRate` is not positive.
    public init(clockRate: Int) throws(RTPError) {
        guard clockRate > 0 else { throw .fieldOutOfRange("clock rate \(clockRate) Hz is not positive") }
        self.clockRate = clockRate
        self.seen = [UInt64](repeating: 0, count: 16)
    }

    /// The reception counts restart with the sequence (probation ended, or a restart).
    private mutating func restartReception() {
        received = 0
        receivedPrior = 0
        expectedPrior = 0
        for i in seen.indices { seen[i] = 0 }
    }

    private func isSeen(_ seq: UInt16) -> Bool {
        let bit = Int(seq & 1023)
        return seen[bit >> 6] & (1 << UInt64(bit & 63)) != 0
    }

    private mutating func markSeen(_ seq: UInt16, previousMax: UInt16) {
        // Clear the bits the window slid over, then set this one.
        let advance = Int(seq &- previousMax)
        if advance > 0 && advance < 0x8000 {
            if advance >= 1024 {
                for i in seen.indices { seen[i] = 0 }
            } else {
                var s = previousMax &+ 1
                for _ in 0..<advance {
                    let bit = Int(s & 1023)
                    seen[bit >> 6] &= ~(1 << UInt64(bit & 63))
                    s &+= 1
                }
            }
        }
        let bit = Int(seq & 1023)
        seen[bit >> 6] |= 1 << UInt64(bit & 63)
    }

    /// Records a malformed packet (one that did not parse).
    public mutating func recordMalformed() { counters.malformed += 1 }

    /// Records a packet dropped for an unexpected SSRC or payload type.
    public mutating func recordUnexpected() { counters.unexpected += 1 }

    /// Validates one parsed packet's sequence number (RFC 3550 A.1 `update_seq`) and updates
    /// loss and jitter. `arrivalNanoseconds` is the packet's arrival on the receiver's clock.
    @discardableResult
    public mutating func update(sequenceNumber seq: UInt16, timestamp: UInt32,
                                arrivalNanoseconds: Int64, payloadBytes: Int) -> RTPSequenceVerdict {
        let previousMax = sequence.highestSequence
        var verdict = RTPSequenceVerdict.accepted
        switch sequence.validate(seq) {
        case .probation:
            counters.probation += 1
            return .probation
        case .started:
            restartReception()
        case .inOrder(let advance):
            if advance == 0 {
                counters.duplicates += 1
                return .duplicate
            }
            markSeen(seq, previousMax: previousMax)
        case .jump:
            counters.badSequence += 1
            return .badSequence
        case .restarted:
            restartReception()
            transit = nil
            counters.restarts += 1
            verdict = .restarted
        case .misordered:
            // Duplicate or reordered packet within MAX_MISORDER behind the highest.
            if isSeen(seq) {
                counters.duplicates += 1
                return .duplicate
            }
            let bit = Int(seq & 1023)
            seen[bit >> 6] |= 1 << UInt64(bit & 63)
            counters.reordered += 1
        }
        if verdict != .accepted || received == 0 {
            let bit = Int(seq & 1023)
            seen[bit >> 6] |= 1 << UInt64(bit & 63)
        }
        received &+= 1
        counters.packets += 1
        counters.payloadBytes += payloadBytes
        updateJitter(timestamp: timestamp, arrivalNanoseconds: arrivalNanoseconds)
        return verdict
    }

    /// RFC 3550 A.8: J += (|D| - J) / 16, with D the change in transit time.
    private mutating func updateJitter(timestamp: UInt32, arrivalNanoseconds: Int64) {
        // Arrival in timestamp units, kept modulo 2^32 like the RTP timestamp it is compared with.
        let arrival = Int64((Double(arrivalNanoseconds) * Double(clockRate) / 1e9).rounded())
        let t = Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: arrival) &- timestamp))
        if let previous = transit {
            let d = Double(Swift.abs(t - previous))
            jitter += (d - jitter) / 16
        }
        transit = t
    }

    /// Highest sequence number with wraps: `cycles + maxSequence`.
    public var extendedHighestSequence: UInt32 { sequence.extendedHighestSequence }

    /// Packets expected since the base sequence number.
    public var expected: Int64 { Int64(extendedHighestSequence) - Int64(baseSequence) + 1 }

    /// Cumulative packets lost (expected - received); may be negative, as in RFC 3550.
    public var cumulativeLost: Int64 { received == 0 && !sequence.hasStarted ? 0 : expected - Int64(received) }

    /// Jitter in milliseconds.
    public var jitterMilliseconds: Double { jitter * 1000 / Double(clockRate) }

    /// Notes the arrival of a sender report from this source (for LSR and DLSR).
    public mutating func noteSenderReport(ntp: NTPTimestamp, arrivalNanoseconds: Int64) {
        lastSRMiddle = ntp.middle32
        lastSRArrival = arrivalNanoseconds
    }

    /// Builds the reception report block for this source at `nowNanoseconds` and starts a new
    /// interval for the fraction lost (RFC 3550 A.3).
    public mutating func makeReceptionReport(ssrc: UInt32, nowNanoseconds: Int64) -> RTCPReceptionReport {
        let exp = expected
        let expectedInterval = exp - Int64(expectedPrior)
        expectedPrior = UInt32(truncatingIfNeeded: exp)
        let receivedInterval = Int64(received) - Int64(receivedPrior)
        receivedPrior = received
        let lostInterval = expectedInterval - receivedInterval
        let fraction: UInt8 = (expectedInterval == 0 || lostInterval <= 0)
            ? 0 : UInt8(clamping: (lostInterval << 8) / expectedInterval)
        let lost = Swift.max(-0x80_0000, Swift.min(0x7F_FFFF, cumulativeLost))
        var dlsr: UInt32 = 0
        if let arrival = lastSRArrival {
            dlsr = UInt32(clamping: (nowNanoseconds - arrival) * 65536 / 1_000_000_000)
        }
        return RTCPReceptionReport(ssrc: ssrc, fractionLost: fraction, cumulativeLost: Int32(lost),
                                   extendedHighestSequence: extendedHighestSequence,
                                   jitter: UInt32(jitter.rounded()), lastSenderReport: lastSRMiddle,
                                   delaySinceLastSenderReport: dlsr)
    }
}
