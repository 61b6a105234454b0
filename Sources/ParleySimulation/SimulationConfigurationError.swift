/// Why a simulated clock or loss model cannot be made from a caller's values.
public enum SimulationConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The nominal sample rate (Hz) is zero or negative.
    case sampleRateNotPositive(Int)
    /// The clock drift (ppm) is not strictly within +-500 000 (+-50 %), or not a number.
    case driftOutOfRange(Double)
    /// The mean loss is not in 0..<1 (a fraction, not a percentage), or not a number.
    case meanLossOutOfRange(Double)
    /// The mean burst length (packets) is under 1, or not a number.
    case meanBurstTooShort(Double)

    public var description: String {
        switch self {
        case let .sampleRateNotPositive(r): "sample rate \(r) Hz is not positive"
        case let .driftOutOfRange(d): "clock drift \(d) ppm is not within +-500000 ppm"
        case let .meanLossOutOfRange(l): "mean loss \(l) is not in 0..<1"
        case let .meanBurstTooShort(b): "mean burst length \(b) packets is under 1"
        }
    }
}
