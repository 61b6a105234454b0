// Pure Swift: compiled standalone by the `jitterbuffer` and `rtp-vp8-assembler` fuzz targets.

/// RFC 3550 A.1 sequence-number validation of one RTP source: probation of a new source,
/// in-order advances (with 16-bit wraps counted), misordered packets, jumps and the restarts
/// they confirm. The one copy of this logic: ``RTPSourceStatistics`` (reception statistics)
/// and the audio jitter buffer (ParleyJitter) both use it.
///
/// A packet `udelta = seq - highest` (mod 2^16) ahead of the highest sequence number seen is
/// - in order if `udelta < maxDropout` (0: the highest itself again),
/// - misordered if it is less than `maxMisorder` behind (`udelta > 65536 - maxMisorder`),
/// - otherwise a jump: dropped, unless it is the packet after the previous jump's
///   (`highest` of a sender that restarted), which restarts the sequence there.
///
/// Threading: a value type, one per source. No allocation.
public struct RTPSequenceValidator: Sendable, Hashable {
    /// RFC 3550 A.1 MAX_DROPOUT: a forward jump of this many sequence numbers or more is not
    /// a loss but a jump (a restart, or a stray packet).
    public static let maxDropout = 3_000
    /// RFC 3550 A.1 MAX_MISORDER: a packet less than this many sequence numbers behind the
    /// highest is misordered (late); further behind is a jump.
    public static let maxMisorder = 100
    /// RFC 3550 A.1 MIN_SEQUENTIAL: sequential packets a new source must send before its
    /// packets are accepted.
    public static let minSequential = 2

    /// What confirms a jump as a restart.
    public enum RestartConfirmation: Sendable, Hashable {
        /// RFC 3550 A.1: the packet after the jumped-to one, whenever it arrives (valid
        /// packets in between do not cancel the pending restart).
        case nextInSequence
        /// Stricter: the packet after the jumped-to one as the very next arrival; any valid
        /// packet in between cancels the pending restart (a stray packet cannot take over a
        /// stream later).
        case nextArrival
    }

    /// What ``validate(_:)`` decided about one sequence number.
    public enum Verdict: Sendable, Hashable {
        /// The source starts here: the first packet (no probation), or the one ending
        /// probation. ``baseSequence`` and ``highestSequence`` are this sequence number.
        case started
        /// Still on probation: drop it.
        case probation
        /// In order, `advance` ahead of the previous highest (0: the highest again, which a
        /// caller treats as a duplicate or checks itself). It is the new highest.
        case inOrder(advance: Int)
        /// Misordered: `behind` (1 ..< `maxMisorder`) behind the highest. The highest stays.
        case misordered(behind: Int)
        /// A jump not (yet) confirmed as a restart: drop it.
        case jump
        /// The packet after a jump's: the sender restarted; the sequence starts again here
        /// (as for ``started``).
        case restarted
    }

    /// Forward jumps of at least this many sequence numbers are jumps.
    public let maxDropout: Int
    /// Packets at least this many sequence numbers behind the highest are jumps.
    public let maxMisorder: Int
    /// Sequential packets a new source must send before ``Verdict/started`` (0: the first
    /// packet starts it).
    public let probationPackets: Int
    /// What confirms a jump as a restart.
    public let restartConfirmation: RestartConfirmation

    /// The first sequence number of the current run (since the start or the last restart).
    public private(set) var baseSequence: UInt16 = 0
    /// The highest sequence number seen (in the current run, or on probation).
    public private(set) var highestSequence: UInt16 = 0
    /// Wraps of the sequence number since ``baseSequence``, times 65536.
    public private(set) var cycles: UInt32 = 0
    /// Whether a packet has been seen.
    public private(set) var hasStarted = false
    private var probationLeft = 0
    /// The sequence number that would confirm the last jump (beyond 16 bits: none).
    private var restartSequence: UInt32 = 65_536 + 1

    /// Creates a validator. The defaults are RFC 3550 A.1's. Values outside 1...65536 are
    /// taken as they are (a `maxDropout` of 65536 or more makes every forward step in order).
    public init(maxDropout: Int = Self.maxDropout, maxMisorder: Int = Self.maxMisorder,
                probationPackets: Int = Self.minSequential,
                restartConfirmation: RestartConfirmation = .nextInSequence) {
        self.maxDropout = maxDropout
        self.maxMisorder = maxMisorder
        self.probationPackets = max(probationPackets, 0)
        self.restartConfirmation = restartConfirmation
    }

    /// ``highestSequence`` with its wraps: `cycles + highestSequence`.
    @inlinable public var extendedHighestSequence: UInt32 { cycles &+ UInt32(highestSequence) }

    /// RFC 3550 A.1 `init_seq`: the run starts at `seq`.
    private mutating func start(at seq: UInt16) {
        baseSequence = seq
        highestSequence = seq
        restartSequence = 65_536 + 1
        cycles = 0
    }

    /// Classifies `seq`, the next packet's sequence number, and updates the state (RFC 3550
    /// A.1 `update_seq`).
    public mutating func validate(_ seq: UInt16) -> Verdict {
        if !hasStarted {
            hasStarted = true
            start(at: seq)
            if probationPackets == 0 { return .started }
            highestSequence = seq &- 1
            probationLeft = probationPackets
        }
        let udelta = Int(seq &- highestSequence)
        if probationLeft > 0 {
            // Probation: the source is valid once `probationPackets` arrive in sequence.
            if udelta == 1 {
                probationLeft -= 1
                highestSequence = seq
                if probationLeft == 0 {
                    start(at: seq)
                    return .started
                }
            } else {
                probationLeft = probationPackets - 1
                highestSequence = seq
            }
            return .probation
        }
        if udelta < maxDropout {
            // In order, with a permissible gap.
            if seq < highestSequence { cycles &+= 65_536 }
            highestSequence = seq
            if restartConfirmation == .nextArrival { restartSequence = 65_536 + 1 }
            return .inOrder(advance: udelta)
        }
        if udelta <= 65_536 - maxMisorder {
            // A very large jump: a restart once the next packet confirms it.
            if UInt32(seq) == restartSequence {
                start(at: seq)
                return .restarted
            }
            restartSequence = UInt32(seq &+ 1)
            return .jump
        }
        // Misordered (or a duplicate behind the highest).
        if restartConfirmation == .nextArrival { restartSequence = 65_536 + 1 }
        return .misordered(behind: 65_536 - udelta)
    }
}

extension RTPSequenceValidator.Verdict {
    /// How far the packet is from the highest sequence number before it: the advance of an
    /// ``inOrder(advance:)`` packet, minus the distance of a ``misordered(behind:)`` one; nil
    /// for the other verdicts.
    @inlinable public var offset: Int? {
        switch self {
        case .inOrder(let advance): return advance
        case .misordered(let behind): return -behind
        default: return nil
        }
    }
}
