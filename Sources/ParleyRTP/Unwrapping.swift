/// Extends a wrapping RTP counter (16-bit sequence numbers, 32-bit timestamps) to a monotonic
/// 64-bit count across wraps.
///
/// Each value is placed at the extension nearest to the previous one (within half the counter's
/// range), so reordered and wrapped values keep their order: sequence numbers 65535, 0, 1 unwrap
/// to 65535, 65536, 65537. The first value unwraps to itself. Threading: a value type, one per
/// stream.
public struct RTPCounterUnwrapper<Counter: FixedWidthInteger & UnsignedInteger & Sendable>: Sendable {
    @usableFromInline var last: Int64?

    public init() {}

    /// Starts from `extended` as if it had just been unwrapped (for restarts and tests).
    public init(startingAt extended: Int64) { last = extended }

    /// The extended value of `value`.
    @inlinable
    public mutating func unwrap(_ value: Counter) -> Int64 {
        guard let l = last else {
            last = Int64(value)
            return Int64(value)
        }
        // Distance from the previous value, as a signed number of the counter's width.
        let forward = Int64(value &- Counter(truncatingIfNeeded: l))
        let half = Int64(1) << (Counter.bitWidth - 1)
        let v = l + (forward >= half ? forward - 2 * half : forward)
        last = v
        return v
    }
}

/// Extends 16-bit RTP sequence numbers across wraps (see ``RTPCounterUnwrapper``).
public typealias SequenceNumberUnwrapper = RTPCounterUnwrapper<UInt16>

/// Extends 32-bit RTP timestamps across wraps (see ``RTPCounterUnwrapper``).
public typealias TimestampUnwrapper = RTPCounterUnwrapper<UInt32>
