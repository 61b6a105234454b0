// Frame scheduling: audio at its packet time, video at its frame rate, on one media clock.

/// Counters of one paced stream.
public struct PacerStatistics: Sendable, Hashable {
    /// Frames produced (handed to the stream's handler).
    public var frames = 0
    /// Frames produced after their deadline by more than the tolerance.
    public var lateFrames = 0
    /// Frames skipped because they were late (``LatePolicy/dropLate`` only).
    public var droppedLateFrames = 0
    /// Largest lateness seen, nanoseconds.
    public var maximumLatenessNanoseconds: Int64 = 0

    public init() {}
}

/// Deadlines of one periodic stream: frame `k` is due at `origin + k * period` (computed from
/// `k`, never by adding periods, so no rounding error accumulates over hours).
///
/// Threading: a value type owned by the scheduler's thread.
public struct FramePacer: Sendable {
    /// Nominal frame period, nanoseconds (20 ms audio: 20 000 000; 30 fps video: 33 333 333.3).
    public let periodNanoseconds: Double
    /// Time of frame 0.
    public let origin: MonotonicTime
    public let policy: LatePolicy
    /// Lateness up to this counts as on time, nanoseconds. Default 2 ms (timer slack).
    public var toleranceNanoseconds: Int64
    /// Index of the next frame to produce.
    public private(set) var nextIndex: Int64 = 0
    public private(set) var statistics = PacerStatistics()

    /// A pacer at `framesPerSecond`, starting at `origin`.
    /// - Throws: ``FramePacerError/frameRateNotPositive(_:)`` for a rate that is not positive
    ///   and finite.
    public init(framesPerSecond: Double, origin: MonotonicTime, policy: LatePolicy,
                toleranceNanoseconds: Int64 = 2_000_000) throws(FramePacerError) {
        guard framesPerSecond > 0 && framesPerSecond.isFinite else { throw .frameRateNotPositive(framesPerSecond) }
        try self.init(periodNanoseconds: 1e9 / framesPerSecond, origin: origin, policy: policy,
                      toleranceNanoseconds: toleranceNanoseconds)
    }

    /// A pacer with a period in nanoseconds (for audio: `packetMs * 1_000_000`).
    /// - Throws: ``FramePacerError/periodNotPositive(_:)`` for a period that is not positive
    ///   and finite.
    public init(periodNanoseconds: Double, origin: MonotonicTime, policy: LatePolicy,
                toleranceNanoseconds: Int64 = 2_000_000) throws(FramePacerError) {
        guard periodNanoseconds > 0 && periodNanoseconds.isFinite else { throw .periodNotPositive(periodNanoseconds) }
        self.periodNanoseconds = periodNanoseconds
        self.origin = origin
        self.policy = policy
        self.toleranceNanoseconds = toleranceNanoseconds
    }

    /// Deadline of frame `index`.
    @inlinable public func deadline(ofFrame index: Int64) -> MonotonicTime {
        origin.advanced(byNanoseconds: Int64((Double(index) * periodNanoseconds).rounded()))
    }

    /// Deadline of the next frame.
    public var nextDeadline: MonotonicTime { deadline(ofFrame: nextIndex) }

    /// At time `now`, the frames to produce: `nil` if the next one is not due yet; otherwise
    /// the range of frame indices (several when catching up, one for ``LatePolicy/dropLate``).
    /// Frames skipped under `dropLate` are counted in ``statistics``.
    public mutating func due(at now: MonotonicTime) -> Range<Int64>? {
        guard now >= nextDeadline else { return nil }
        // Newest due frame: the largest k with deadline(k) <= now.
        var newest = Int64((Double(origin.nanoseconds(to: now)) / periodNanoseconds).rounded(.down))
        while newest > nextIndex && deadline(ofFrame: newest) > now { newest -= 1 }
        while deadline(ofFrame: newest + 1) <= now { newest += 1 }
        newest = max(newest, nextIndex)
        let first: Int64
        switch policy {
        case .catchUp: first = nextIndex
        case .dropLate:
            first = newest
            statistics.droppedLateFrames += Int(newest - nextIndex)
        }
        for k in first...newest {
            let lateness = deadline(ofFrame: k).nanoseconds(to: now)
            if lateness > toleranceNanoseconds { statistics.lateFrames += 1 }
            statistics.maximumLatenessNanoseconds = max(statistics.maximumLatenessNanoseconds, lateness)
        }
        statistics.frames += Int(newest - first + 1)
        nextIndex = newest + 1
        return first..<(newest + 1)
    }
}

/// Drives periodic streams on a `MediaClock`: sleeps until the earliest deadline, then hands
/// each due stream its frames. Audio streams use ``LatePolicy/catchUp``, video streams
/// ``LatePolicy/dropLate``. Ties are served in registration order, so a virtual-clock run is
/// deterministic.
///
/// Threading: one thread calls ``runUntil(_:shouldStop:)``; handlers run on it.
public final class MediaScheduler {
    /// A registered stream's handle.
    public struct StreamID: Hashable, Sendable { public let index: Int }

    private struct Entry {
        var pacer: FramePacer
        var name: String
        var handler: (_ frames: Range<Int64>, _ now: MonotonicTime) -> Void
        var active = true
    }

    public let clock: any MediaClock
    private var entries: [Entry] = []
    /// Wake-ups so far.
    public private(set) var wakeUps = 0

    public init(clock: any MediaClock) { self.clock = clock }

    /// Adds a stream; `handler` gets the due frame indices (see ``FramePacer/due(at:)``).
    @discardableResult
    public func add(_ name: String, pacer: FramePacer,
                    handler: @escaping (_ frames: Range<Int64>, _ now: MonotonicTime) -> Void) -> StreamID {
        entries.append(Entry(pacer: pacer, name: name, handler: handler))
        return StreamID(index: entries.count - 1)
    }

    /// Stops serving a stream (its statistics stay readable).
    public func remove(_ id: StreamID) { entries[id.index].active = false }

    /// The pacer statistics of a stream.
    public func statistics(_ id: StreamID) -> PacerStatistics { entries[id.index].pacer.statistics }

    /// The earliest deadline of the active streams, if any.
    public var nextDeadline: MonotonicTime? {
        entries.lazy.filter(\.active).map(\.pacer.nextDeadline).min()
    }

    /// Runs until `end` (exclusive) or until `shouldStop` returns true (checked after each
    /// wake-up) or no stream is active.
    public func runUntil(_ end: MonotonicTime, shouldStop: () -> Bool = { false }) {
        while let deadline = nextDeadline, deadline < end {
            clock.sleep(until: deadline)
            wakeUps += 1
            let now = clock.now()
            for i in entries.indices where entries[i].active {
                if let frames = entries[i].pacer.due(at: now) {
                    entries[i].handler(frames, now)
                }
            }
            if shouldStop() { return }
        }
    }
}

/// Why a ``FramePacer`` cannot be created.
public enum FramePacerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The frame rate (frames per second) is zero, negative, infinite or not a number.
    case frameRateNotPositive(Double)
    /// The period (nanoseconds) is zero, negative, infinite or not a number.
    case periodNotPositive(Double)

    public var description: String {
        switch self {
        case let .frameRateNotPositive(f): "frame rate \(f) per second is not positive and finite"
        case let .periodNotPositive(p): "frame period \(p) ns is not positive and finite"
        }
    }
}

/// What a stream does with late deadlines.
public enum LatePolicy: Sendable, Hashable {
    /// Every due frame is produced, late or not (audio: samples are never silently dropped; a
    /// late scheduler catches up and the lateness is counted).
    case catchUp
    /// Only the newest due frame is produced; the older ones are dropped and counted (video: a
    /// late picture is worse than a skipped one, and queueing them would add delay).
    case dropLate
}
