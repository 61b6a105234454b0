/// Why a capture stream or a capture source wrapper cannot be created from a caller's values.
public enum CaptureConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The stream's buffer capacity (frames held for a slow consumer) is zero or negative.
    case bufferCapacityNotPositive(Int)
    /// The number of reads a ``PrefixAudioSource`` passes on is negative.
    case frameCountNegative(Int)

    public var description: String {
        switch self {
        case let .bufferCapacityNotPositive(c): "capture buffer capacity \(c) is not positive"
        case let .frameCountNegative(n): "frame count \(n) is negative"
        }
    }
}
