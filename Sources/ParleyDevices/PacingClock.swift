import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The clock a paced test source waits on. Inject ``ManualPacingClock`` for deterministic,
/// instant tests; the default ``SystemPacingClock`` sleeps on `CLOCK_MONOTONIC`.
///
/// Threading: implementations are `Sendable` and may be called from any thread.
public protocol PacingClock: Sendable {
    /// The current time.
    func now() -> MonotonicTime
    /// Blocks until `deadline` (returns at once if it has passed).
    func sleep(until deadline: MonotonicTime)
}

/// `CLOCK_MONOTONIC` with absolute-deadline sleeps (`clock_nanosleep(TIMER_ABSTIME)`, so a
/// late wake-up does not accumulate drift; restarted after a signal).
public struct SystemPacingClock: PacingClock {
    public init() {}
    public func now() -> MonotonicTime { .now() }
    public func sleep(until deadline: MonotonicTime) {
        var ts = timespec(tv_sec: Int(deadline.nanoseconds / 1_000_000_000),
                          tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
        guard deadline.nanoseconds > 0 else { return }
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}

/// A virtual clock: `sleep(until:)` jumps the time forward to the deadline instead of
/// waiting, so paced sources run at full speed with exact, reproducible times.
///
/// Threading: safe from any thread (a mutex guards the time).
public final class ManualPacingClock: PacingClock {
    private let state: Mutex<(time: MonotonicTime, sleeps: Int)>

    /// Starts at `start` (default: 1 s, so times are positive and distinguishable from zero).
    public init(start: MonotonicTime = MonotonicTime(nanoseconds: 1_000_000_000)) {
        state = Mutex((start, 0))
    }
    public func now() -> MonotonicTime { state.withLock { $0.time } }
    public func sleep(until deadline: MonotonicTime) {
        state.withLock { s in
            s.sleeps += 1
            if deadline > s.time { s.time = deadline }
        }
    }
    /// Moves the time forward by `nanoseconds` (a stall, as if the consumer was late).
    public func advance(byNanoseconds nanoseconds: Int64) {
        state.withLock { $0.time = $0.time.advanced(byNanoseconds: nanoseconds) }
    }
    /// How many times a source has slept on this clock.
    public var sleepCount: Int { state.withLock { $0.sleeps } }
}
