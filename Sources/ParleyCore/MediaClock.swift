// The media clock: one monotonic time source for a call, a capture source or a test, real or virtual.

#if canImport(Glibc)
import Glibc
#endif

/// The monotonic clock a call runs on: capture pacing, packet send times, network arrival
/// times, playout ticks and event timestamps all read it.
///
/// Two implementations: ``SystemMediaClock`` (`CLOCK_MONOTONIC`, real sleeps) for live calls and
/// ``VirtualMediaClock`` for tests and `parley room --speed max`, where sleeping jumps the time
/// forward, so a run is exact, reproducible and as fast as the machine allows.
///
/// Threading: implementations are `Sendable` and may be read from any thread.
public protocol MediaClock: Sendable {
    /// The current time. Never goes backwards.
    func now() -> MonotonicTime
    /// Blocks the calling thread until `deadline` (returns at once if it has passed).
    func sleep(until deadline: MonotonicTime)
}

extension MonotonicTime {
    /// Reads `clock` (`clock_gettime`). The clocks used here exist on every Linux, and the
    /// call's only other failure is a bad pointer, so a failure is a broken C library.
    private static func read(_ clock: clockid_t) -> timespec {
        var ts = timespec()
        if case .failure(let e) = valueOrErrno(retryOnInterrupt: false, { clock_gettime(clock, &ts) }) {
            preconditionFailure("clock_gettime(\(clock)) failed: \(e)")
        }
        return ts
    }

    /// The current `CLOCK_MONOTONIC` time.
    public static func now() -> MonotonicTime {
        let ts = read(CLOCK_MONOTONIC)
        return MonotonicTime(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }

    /// Seconds to add to a reading of ``now()`` to get this machine's wall clock as NTP seconds
    /// (since 1900-01-01), read now: the `ntpOffset` a sender's RTCP reports need so that
    /// receivers (ffmpeg, GStreamer, browsers) see real wall-clock times. Later wall-clock steps
    /// (NTP corrections) do not move it, so a stream's mapping stays continuous.
    public static func wallClockNTPOffset() -> Double {
        let wall = read(CLOCK_REALTIME)
        let mono = read(CLOCK_MONOTONIC)
        let unix = Double(wall.tv_sec) + Double(wall.tv_nsec) / 1e9
        return unix + 2_208_988_800 - (Double(mono.tv_sec) + Double(mono.tv_nsec) / 1e9)
    }
}

/// `CLOCK_MONOTONIC` with absolute-deadline sleeps (`clock_nanosleep(TIMER_ABSTIME)`): a late
/// wake-up does not push later deadlines back, and a signal restarts the sleep.
public struct SystemMediaClock: MediaClock {
    public init() {}

    public func now() -> MonotonicTime { .now() }

    public func sleep(until deadline: MonotonicTime) {
        guard deadline.nanoseconds > 0 else { return }
        var ts = timespec(tv_sec: Int(deadline.nanoseconds / 1_000_000_000),
                          tv_nsec: Int(deadline.nanoseconds % 1_000_000_000))
        _ = zeroOrErrno { clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) }
    }
}

/// A virtual clock for deterministic runs: ``sleep(until:)`` moves the time to the deadline
/// instead of waiting, and ``advance(byNanoseconds:)`` / ``advance(to:)`` move it explicitly
/// (a test stepping a pipeline, or simulating a stalled thread).
///
/// With one thread driving it (the call's scheduler), every run with the same inputs produces
/// the same times, bit for bit.
///
/// Threading: safe from any thread (a mutex guards the time); determinism needs a single driver.
public final class VirtualMediaClock: MediaClock {
    private let state: Locked<(time: MonotonicTime, sleeps: Int)>

    /// Starts at `start` (default 1 s, so that times are positive and distinct from zero).
    public init(start: MonotonicTime = MonotonicTime(nanoseconds: 1_000_000_000)) {
        state = Locked((start, 0))
    }

    public func now() -> MonotonicTime { state.withLock { $0.time } }

    public func sleep(until deadline: MonotonicTime) {
        state.withLock { s in
            s.sleeps += 1
            if deadline > s.time { s.time = deadline }
        }
    }

    /// Moves the time forward by `nanoseconds` (negative values are ignored: time is monotonic).
    public func advance(byNanoseconds nanoseconds: Int64) {
        state.withLock { s in s.time = s.time.advanced(byNanoseconds: max(0, nanoseconds)) }
    }

    /// Moves the time forward to `time` (no effect if it is in the past).
    public func advance(to time: MonotonicTime) {
        state.withLock { s in if time > s.time { s.time = time } }
    }

    /// How many times ``sleep(until:)`` was called.
    public var sleepCount: Int { state.withLock { $0.sleeps } }
}
