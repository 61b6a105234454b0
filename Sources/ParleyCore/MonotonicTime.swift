#if canImport(Glibc)
import Glibc
#endif

/// A point on a monotonic clock, in nanoseconds from an arbitrary origin.
///
/// Used for capture and playout times. It never goes backwards and is unrelated to wall
/// time. `MonotonicTime.now()` reads `CLOCK_MONOTONIC`; tests inject virtual times instead.
public struct MonotonicTime: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Nanoseconds since the clock's origin.
    public var nanoseconds: Int64

    /// Creates a time from nanoseconds since the clock's origin.
    @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// The origin.
    public static let zero = MonotonicTime(nanoseconds: 0)

    /// Creates a time from seconds since the origin.
    @inlinable public init(seconds: Double) { self.nanoseconds = Int64((seconds * 1e9).rounded()) }

    /// Seconds since the origin.
    @inlinable public var seconds: Double { Double(nanoseconds) / 1e9 }

    /// Milliseconds since the origin.
    @inlinable public var milliseconds: Double { Double(nanoseconds) / 1e6 }

    /// The current `CLOCK_MONOTONIC` time.
    public static func now() -> MonotonicTime {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return MonotonicTime(nanoseconds: Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec))
    }

    /// Seconds to add to a reading of ``now()`` to get this machine's wall clock as NTP seconds
    /// (since 1900-01-01), read now: the `ntpOffset` a sender's RTCP reports need so that
    /// receivers (ffmpeg, GStreamer, browsers) see real wall-clock times. Later wall-clock steps
    /// (NTP corrections) do not move it, so a stream's mapping stays continuous.
    public static func wallClockNTPOffset() -> Double {
        var wall = timespec(), mono = timespec()
        clock_gettime(CLOCK_REALTIME, &wall)
        clock_gettime(CLOCK_MONOTONIC, &mono)
        let unix = Double(wall.tv_sec) + Double(wall.tv_nsec) / 1e9
        return unix + 2_208_988_800 - (Double(mono.tv_sec) + Double(mono.tv_nsec) / 1e9)
    }

    @inlinable public static func < (a: MonotonicTime, b: MonotonicTime) -> Bool {
        a.nanoseconds < b.nanoseconds
    }

    /// The time `nanoseconds` later.
    @inlinable public func advanced(byNanoseconds ns: Int64) -> MonotonicTime {
        MonotonicTime(nanoseconds: nanoseconds &+ ns)
    }

    /// The time `seconds` later.
    @inlinable public func advanced(bySeconds s: Double) -> MonotonicTime {
        advanced(byNanoseconds: Int64((s * 1e9).rounded()))
    }

    /// Nanoseconds from `self` to `other` (negative if `other` is earlier).
    @inlinable public func nanoseconds(to other: MonotonicTime) -> Int64 {
        other.nanoseconds &- nanoseconds
    }

    public var description: String { "\(seconds)s" }
}
