/// A jitter buffer call that cannot be carried out with what the caller passed.
public enum JitterBufferError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The output buffer holds `given` samples; a frame needs `needed` (samples per channel
    /// times channels).
    case outputTooSmall(needed: Int, given: Int)

    public var description: String {
        switch self {
        case let .outputTooSmall(needed, given):
            "the output buffer holds \(given) samples, less than one frame (\(needed))"
        }
    }
}

/// Why a jitter-buffer, assembler or decoder setting was rejected.
public enum JitterConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `parameter` holds `value`, which is not `allowed`.
    case outOfRange(parameter: String, value: String, allowed: String)

    public var description: String {
        switch self {
        case let .outOfRange(parameter, value, allowed):
            "\(parameter) \(value) is not allowed (\(allowed))"
        }
    }
}
