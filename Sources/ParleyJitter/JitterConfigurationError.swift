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
