/// Extends 16-bit RTP sequence numbers to a monotonic 64-bit count across wraps.
///
/// Each value is placed at the nearest extension of the previous one (within +-2^15), so
/// reordered and wrapped numbers keep their order: 65535, 0, 1 unwraps to 65535, 65536, 65537.
/// The first value unwraps to itself. Threading: a value type, one per stream.
public struct SequenceNumberUnwrapper: Sendable {
    @usableFromInline var last: Int64?

    public init() {}

    /// Starts from `extended` as if it had just been unwrapped (for restarts and tests).
    public init(startingAt extended: Int64) { last = extended }

    /// The extended value of `sequenceNumber`.
    @inlinable
    public mutating func unwrap(_ sequenceNumber: UInt16) -> Int64 {
        guard let l = last else {
            last = Int64(sequenceNumber)
            return Int64(sequenceNumber)
        }
        let delta = Int16(bitPattern: sequenceNumber &- UInt16(truncatingIfNeeded: l))
        let v = l + Int64(delta)
        last = v
        return v
    }
}

/// Extends 32-bit RTP timestamps to a monotonic 64-bit count across wraps (nearest within
/// +-2^31 of the previous value). Threading: a value type, one per stream.
public struct TimestampUnwrapper: Sendable {
    @usableFromInline var last: Int64?

    public init() {}

    /// Starts from `extended` as if it had just been unwrapped.
    public init(startingAt extended: Int64) { last = extended }

    /// The extended value of `timestamp`.
    @inlinable
    public mutating func unwrap(_ timestamp: UInt32) -> Int64 {
        guard let l = last else {
            last = Int64(timestamp)
            return Int64(timestamp)
        }
        let delta = Int32(bitPattern: timestamp &- UInt32(truncatingIfNeeded: l))
        let v = l + Int64(delta)
        last = v
        return v
    }
}
