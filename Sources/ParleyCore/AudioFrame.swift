/// A sample type an ``AudioFrame`` can hold: interleaved signed 16-bit integers or 32-bit floats.
///
/// Float samples are nominally in [-1, 1]; Int16 samples use the full range. Conversion
/// between the two is `Float(x) / 32768` and the clamped, rounded inverse.
public protocol AudioSample: BitwiseCopyable, Sendable, Equatable {
    /// The silent value (zero).
    static var silence: Self { get }
    /// The sample as a float in [-1, 1).
    var floatValue: Float { get }
    /// Converts a float sample, clamping to the representable range. NaN becomes silence.
    init(clampingFloat value: Float)
}

extension Int16: AudioSample {
    @inlinable public static var silence: Int16 { 0 }
    @inlinable public var floatValue: Float { Float(self) * (1.0 / 32768.0) }
    @inlinable public init(clampingFloat value: Float) {
        guard value == value else { self = 0; return }  // NaN
        let scaled = (value * 32768.0).rounded()
        self = scaled >= 32767 ? .max : (scaled <= -32768 ? .min : Int16(scaled))
    }
}

extension Float: AudioSample {
    @inlinable public static var silence: Float { 0 }
    @inlinable public var floatValue: Float { self }
    @inlinable public init(clampingFloat value: Float) {
        guard value == value else { self = 0; return }
        self = Swift.min(Swift.max(value, -1), 1)
    }
}

/// Why an ``AudioFormat`` or an ``AudioFrame`` cannot be created from a caller's values.
public enum AudioFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The sample rate (Hz) is zero or negative.
    case sampleRateNotPositive(Int)
    /// The channel count is zero or negative.
    case channelsNotPositive(Int)
    /// `samples` interleaved samples are not a whole number of frames of `channels` channels.
    case partialFrame(samples: Int, channels: Int)

    public var description: String {
        switch self {
        case let .sampleRateNotPositive(r): "sample rate \(r) Hz is not positive"
        case let .channelsNotPositive(c): "channel count \(c) is not positive"
        case let .partialFrame(s, c): "\(s) interleaved samples are not whole frames of \(c) channels"
        }
    }
}

/// The shape of an audio stream: sample rate and channel count, both positive.
public struct AudioFormat: Hashable, Sendable, CustomStringConvertible {
    /// Samples per second per channel, in Hz.
    public let sampleRate: Int
    /// Interleaved channel count (1 = mono, 2 = stereo).
    public let channels: Int

    /// Creates a format.
    /// - Throws: ``AudioFormatError/sampleRateNotPositive(_:)`` or
    ///   ``AudioFormatError/channelsNotPositive(_:)``.
    public init(sampleRate: Int, channels: Int) throws(AudioFormatError) {
        guard sampleRate > 0 else { throw .sampleRateNotPositive(sampleRate) }
        guard channels > 0 else { throw .channelsNotPositive(channels) }
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// A format whose rate and channel count the library has already checked positive (a
    /// codec's or a file's validated header).
    package init(checkedSampleRate sampleRate: Int, channels: Int) {
        self.sampleRate = sampleRate
        self.channels = channels
    }

    /// Number of samples per channel in `milliseconds` of audio (rounded down).
    @inlinable public func samplesPerChannel(milliseconds: Double) -> Int {
        Int(Double(sampleRate) * milliseconds / 1000.0)
    }

    public var description: String { "\(sampleRate) Hz, \(channels) ch" }
}

/// A block of interleaved audio with its timing.
///
/// `timestamp` counts samples per channel since the start of the stream, like an RTP
/// timestamp at the stream's own rate (it wraps at 2^32 like RTP). `captureTime` is the
/// monotonic time at which the first sample was captured or scheduled.
///
/// Reuse: a pipeline that keeps one frame and refills ``samples`` in place (through
/// ``withUnsafeMutableSamples(_:)``) allocates nothing per frame, since the storage is
/// uniquely referenced and keeps its capacity.
///
/// Threading: a value type; a copy may be sent across threads.
public struct AudioFrame<Sample: AudioSample>: Sendable {
    /// Rate and channel count.
    public var format: AudioFormat
    /// Interleaved samples: `samplesPerChannel * format.channels` values.
    public var samples: [Sample]
    /// Sample timestamp of the first sample, in samples per channel (RTP-style, wrapping).
    public var timestamp: UInt32
    /// Monotonic capture (or scheduled) time of the first sample.
    public var captureTime: MonotonicTime

    /// Creates a frame over existing interleaved samples.
    /// - Throws: ``AudioFormatError/partialFrame(samples:channels:)`` when `samples.count` is
    ///   not a multiple of the channel count.
    public init(format: AudioFormat, samples: [Sample], timestamp: UInt32 = 0,
                captureTime: MonotonicTime = .zero) throws(AudioFormatError) {
        guard samples.count % format.channels == 0 else {
            throw .partialFrame(samples: samples.count, channels: format.channels)
        }
        self.format = format
        self.samples = samples
        self.timestamp = timestamp
        self.captureTime = captureTime
    }

    /// Creates a silent frame of `samplesPerChannel` samples per channel (an empty frame when
    /// it is not positive).
    public init(format: AudioFormat, samplesPerChannel: Int, timestamp: UInt32 = 0,
                captureTime: MonotonicTime = .zero) {
        self.format = format     // whole frames by construction
        self.samples = [Sample](repeating: .silence, count: max(0, samplesPerChannel) * format.channels)
        self.timestamp = timestamp
        self.captureTime = captureTime
    }

    /// Samples per channel in this frame.
    @inlinable public var samplesPerChannel: Int { samples.count / format.channels }

    /// Duration of the frame in seconds.
    @inlinable public var duration: Double { Double(samplesPerChannel) / Double(format.sampleRate) }

    /// Calls `body` with the samples' contiguous storage for in-place writing.
    @inlinable public mutating func withUnsafeMutableSamples<R>(
        _ body: (UnsafeMutableBufferPointer<Sample>) throws -> R
    ) rethrows -> R {
        try samples.withUnsafeMutableBufferPointer { try body($0) }
    }
}

/// A frame of 16-bit integer audio.
public typealias Int16AudioFrame = AudioFrame<Int16>
/// A frame of 32-bit float audio.
public typealias FloatAudioFrame = AudioFrame<Float>
