// Pure Swift (no C import): compiled standalone into the Opus packet inspector's fuzz target.

/// An error from libopus or from Parley's Opus validation.
///
/// `code` is libopus's (negative) error code, `operation` the C function or Parley operation
/// that failed, and `message` libopus's own `opus_strerror` text, followed by Parley's detail
/// when the failure was detected in Swift (for example which byte of a packet is wrong).
///
/// Threading: a value type; freely sendable.
public struct OpusError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A libopus error code (`OPUS_BAD_ARG` and friends in `opus_defines.h`).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The libopus value (negative).
        public var rawValue: Int32
        /// Creates a code from libopus's value.
        public init(rawValue: Int32) { self.rawValue = rawValue }

        /// `OPUS_BAD_ARG` (-1): an argument was invalid or out of range.
        public static let badArgument = Code(rawValue: -1)
        /// `OPUS_BUFFER_TOO_SMALL` (-2): the output buffer cannot hold the result.
        public static let bufferTooSmall = Code(rawValue: -2)
        /// `OPUS_INTERNAL_ERROR` (-3).
        public static let internalError = Code(rawValue: -3)
        /// `OPUS_INVALID_PACKET` (-4): the compressed data is corrupt or unsupported.
        public static let invalidPacket = Code(rawValue: -4)
        /// `OPUS_UNIMPLEMENTED` (-5).
        public static let unimplemented = Code(rawValue: -5)
        /// `OPUS_INVALID_STATE` (-6).
        public static let invalidState = Code(rawValue: -6)
        /// `OPUS_ALLOC_FAIL` (-7).
        public static let allocationFailed = Code(rawValue: -7)

        public var description: String {
            switch self {
            case .badArgument: return "OPUS_BAD_ARG"
            case .bufferTooSmall: return "OPUS_BUFFER_TOO_SMALL"
            case .internalError: return "OPUS_INTERNAL_ERROR"
            case .invalidPacket: return "OPUS_INVALID_PACKET"
            case .unimplemented: return "OPUS_UNIMPLEMENTED"
            case .invalidState: return "OPUS_INVALID_STATE"
            case .allocationFailed: return "OPUS_ALLOC_FAIL"
            default: return "opus error \(rawValue)"
            }
        }
    }

    /// libopus's error code.
    public let code: Code
    /// The C function (`opus_encode`, `opus_decode`, ...) or Parley operation that failed.
    public let operation: String
    /// libopus's `opus_strerror` text, plus Parley's detail where it has one.
    public let message: String

    public var description: String { "\(operation): \(message) [\(code)]" }
}

/// The audio bandwidth of an Opus stream or packet (`OPUS_BANDWIDTH_*`).
public enum OpusBandwidth: Int32, Hashable, Sendable, CaseIterable, Comparable {
    /// 4 kHz passband (`OPUS_BANDWIDTH_NARROWBAND`).
    case narrowband = 1101
    /// 6 kHz passband (`OPUS_BANDWIDTH_MEDIUMBAND`).
    case mediumband = 1102
    /// 8 kHz passband (`OPUS_BANDWIDTH_WIDEBAND`).
    case wideband = 1103
    /// 12 kHz passband (`OPUS_BANDWIDTH_SUPERWIDEBAND`).
    case superwideband = 1104
    /// 20 kHz passband (`OPUS_BANDWIDTH_FULLBAND`).
    case fullband = 1105

    /// The passband's upper edge in Hz.
    public var passbandHz: Int {
        switch self {
        case .narrowband: return 4000
        case .mediumband: return 6000
        case .wideband: return 8000
        case .superwideband: return 12000
        case .fullband: return 20000
        }
    }

    public static func < (a: OpusBandwidth, b: OpusBandwidth) -> Bool { a.rawValue < b.rawValue }
}

/// Sample rates libopus encodes and decodes at, in Hz.
public let opusSampleRates: [Int] = [8000, 12000, 16000, 24000, 48000]

/// Whether `samplesPerChannel` at `sampleRate` is one of Opus's frame durations
/// (2.5, 5, 10, 20, 40, 60, 80, 100 or 120 ms).
public func isValidOpusFrameSize(samplesPerChannel n: Int, sampleRate: Int) -> Bool {
    // Durations in units of 2.5 ms: 1, 2, 4, 8, 16, 24, 32, 40, 48.
    let scaled = n * 400
    guard n > 0, scaled % sampleRate == 0 else { return false }
    switch scaled / sampleRate {
    case 1, 2, 4, 8, 16, 24, 32, 40, 48: return true
    default: return false
    }
}
