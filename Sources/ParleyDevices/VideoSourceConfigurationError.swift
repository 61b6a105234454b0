/// Why a paced or generated video source cannot be created.
public enum VideoSourceConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The frame rate is zero, negative or not a number: pictures cannot be paced.
    case frameRateNotPositive(Double)
    /// The picture width or height is zero or negative.
    case sizeNotPositive(width: Int, height: Int)
    /// The picture width or height is above `VideoFrame.maximumDimension`.
    case sizeTooLarge(width: Int, height: Int)

    public var description: String {
        switch self {
        case let .frameRateNotPositive(fps): "frame rate \(fps) is not positive (cannot pace pictures)"
        case let .sizeNotPositive(w, h): "picture size \(w)x\(h) is not positive"
        case let .sizeTooLarge(w, h): "picture size \(w)x\(h) is above \(VideoFrame.maximumDimension) pixels a side"
        }
    }
}
