// Pure Swift: the system clock's readings (`now()`, `wallClockNTPOffset()`) are in
// MediaClock.swift, so the fuzz targets compile this file alone.

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
