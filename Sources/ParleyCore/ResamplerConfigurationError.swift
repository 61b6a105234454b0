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

/// Why ``Resampler/process(_:into:)-(UnsafeBufferPointer<Float>,_)`` or ``Resampler/flush(into:)`` refused a block. Nothing
/// is consumed or written when it is thrown, so the stream can go on with a valid block.
public enum ResamplerBlockError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input's `samples` are not a whole number of interleaved frames of `channels`.
    case partialFrame(samples: Int, channels: Int)
    /// The input holds `frames` frames, more than the converter's ``Resampler/maxInputFrames``.
    case inputTooLarge(frames: Int, maxInputFrames: Int)
    /// The output holds `samples` samples; the block may produce up to `needed`
    /// (``Resampler/maxOutputFrames(forInput:)`` or ``Resampler/maxFlushFrames`` frames
    /// times the channel count).
    case outputTooSmall(samples: Int, needed: Int)

    public var description: String {
        switch self {
        case let .partialFrame(samples, channels):
            "resampler input of \(samples) samples is not whole frames of \(channels) channels"
        case let .inputTooLarge(frames, maxInputFrames):
            "resampler input of \(frames) frames is larger than maxInputFrames \(maxInputFrames)"
        case let .outputTooSmall(samples, needed):
            "resampler output of \(samples) samples is too small: the block may produce \(needed)"
        }
    }
}
