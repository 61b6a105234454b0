/// Why a ``Resampler`` cannot be created.
public enum ResamplerConfigurationError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `parameter` (the input or output rate, the channel count, or the largest input block)
    /// holds `value`, which is not positive.
    case notPositive(parameter: String, value: Int)

    public var description: String {
        switch self {
        case let .notPositive(parameter, value): "resampler \(parameter) \(value) is not positive"
        }
    }
}
