/// A planar I420 (YUV 4:2:0, 8-bit) picture with its timing.
///
/// Planes are stored contiguously in one buffer: Y (`strideY * height` bytes), then U and V
/// (`strideUV * chromaHeight` bytes each). Chroma is `(width + 1) / 2` by `(height + 1) / 2`.
/// `timestamp` is a 90 kHz media timestamp (RTP video clock); `captureTime` is monotonic.
///
/// Threading: a value type; a copy may be sent across threads. Refilling ``data`` in place
/// through ``withUnsafeMutablePlanes(_:)`` allocates nothing.
public struct VideoFrame: Sendable {
    /// Luma width in pixels.
    public let width: Int
    /// Luma height in pixels.
    public let height: Int
    /// Bytes per row of the Y plane (at least `width`).
    public let strideY: Int
    /// Bytes per row of each chroma plane (at least `chromaWidth`).
    public let strideUV: Int
    /// All three planes, back to back (at least as many bytes as the size and strides need;
    /// written through ``withUnsafeMutablePlanes(_:)``, so that stays true).
    @inlinable public var data: [UInt8] { storage }
    @usableFromInline internal var storage: [UInt8]
    /// 90 kHz media timestamp of the picture.
    public var timestamp: UInt32
    /// Monotonic capture (or scheduled) time.
    public var captureTime: MonotonicTime

    /// Chroma plane width: `(width + 1) / 2`.
    @inlinable public var chromaWidth: Int { (width + 1) / 2 }
    /// Chroma plane height: `(height + 1) / 2`.
    @inlinable public var chromaHeight: Int { (height + 1) / 2 }
    /// Byte offset of the U plane in ``data``.
    @inlinable public var offsetU: Int { strideY * height }
    /// Byte offset of the V plane in ``data``.
    @inlinable public var offsetV: Int { offsetU + strideUV * chromaHeight }

    /// The largest width or height a frame may have, pixels: 65 536, VP9's and Y4M's practical
    /// limit, small enough that plane sizes cannot overflow.
    public static let maximumDimension = 65_536

    /// Creates a black frame (Y = 16, U = V = 128) with tight strides.
    ///
    /// - Throws: ``VideoFrameError/sizeNotPositive(width:height:)`` or
    ///   ``VideoFrameError/sizeTooLarge(width:height:)``.
    public init(width: Int, height: Int, timestamp: UInt32 = 0, captureTime: MonotonicTime = .zero)
        throws(VideoFrameError) {
        try Self.check(width: width, height: height)
        self.init(validatedWidth: width, height: height, timestamp: timestamp, captureTime: captureTime)
    }

    /// A black frame of a size the caller has checked (``maximumDimension``, positive): for
    /// the package's own code, whose sizes come from a validated header or a codec.
    package init(validatedWidth width: Int, height: Int, timestamp: UInt32 = 0, captureTime: MonotonicTime = .zero) {
        // Internal invariant: only package code calls this, with a size it validated.
        precondition(width > 0 && height > 0 && width <= Self.maximumDimension && height <= Self.maximumDimension,
                     "unvalidated frame size")
        self.width = width
        self.height = height
        self.strideY = width
        self.strideUV = (width + 1) / 2
        let ySize = width * height
        let cSize = strideUV * ((height + 1) / 2)
        var bytes = [UInt8](repeating: 128, count: ySize + 2 * cSize)
        for i in 0..<ySize { bytes[i] = 16 }
        self.storage = bytes
        self.timestamp = timestamp
        self.captureTime = captureTime
    }

    /// Creates a frame over existing plane data with the given strides.
    ///
    /// - Throws: ``VideoFrameError/sizeNotPositive(width:height:)``,
    ///   ``VideoFrameError/sizeTooLarge(width:height:)``,
    ///   ``VideoFrameError/strideOutOfRange(strideY:strideUV:width:)`` (or larger than
    ///   ``maximumDimension`` times 4), ``VideoFrameError/dataTooSmall(needed:available:)``.
    public init(width: Int, height: Int, strideY: Int, strideUV: Int, data: [UInt8],
                timestamp: UInt32 = 0, captureTime: MonotonicTime = .zero) throws(VideoFrameError) {
        try Self.check(width: width, height: height)
        guard strideY >= width && strideUV >= (width + 1) / 2,
              strideY <= 4 * Self.maximumDimension && strideUV <= 4 * Self.maximumDimension else {
            throw .strideOutOfRange(strideY: strideY, strideUV: strideUV, width: width)
        }
        let needed = strideY * height + 2 * strideUV * ((height + 1) / 2)
        guard data.count >= needed else { throw .dataTooSmall(needed: needed, available: data.count) }
        self.width = width
        self.height = height
        self.strideY = strideY
        self.strideUV = strideUV
        self.storage = data
        self.timestamp = timestamp
        self.captureTime = captureTime
    }

    private static func check(width: Int, height: Int) throws(VideoFrameError) {
        guard width > 0 && height > 0 else { throw .sizeNotPositive(width: width, height: height) }
        guard width <= maximumDimension && height <= maximumDimension else {
            throw .sizeTooLarge(width: width, height: height)
        }
    }

    /// Calls `body` with pointers to the Y, U and V planes for in-place writing.
    @inlinable public mutating func withUnsafeMutablePlanes<R>(
        _ body: (_ y: UnsafeMutablePointer<UInt8>, _ u: UnsafeMutablePointer<UInt8>,
                 _ v: UnsafeMutablePointer<UInt8>) throws -> R
    ) rethrows -> R {
        let u = offsetU, v = offsetV
        return try storage.withUnsafeMutableBufferPointer { buf in
            let base = buf.baseAddress!  // never empty: the size is positive (checked at init)
            return try body(base, base + u, base + v)
        }
    }

    /// Calls `body` with read-only pointers to the Y, U and V planes.
    @inlinable public func withUnsafePlanes<R>(
        _ body: (_ y: UnsafePointer<UInt8>, _ u: UnsafePointer<UInt8>,
                 _ v: UnsafePointer<UInt8>) throws -> R
    ) rethrows -> R {
        let u = offsetU, v = offsetV
        return try storage.withUnsafeBufferPointer { buf in
            let base = buf.baseAddress!
            return try body(base, base + u, base + v)
        }
    }
}

/// Why a ``VideoFrame`` could not be made from the caller's values.
public enum VideoFrameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The width or the height is zero or negative.
    case sizeNotPositive(width: Int, height: Int)
    /// The width or the height is above ``VideoFrame/maximumDimension``.
    case sizeTooLarge(width: Int, height: Int)
    /// A stride is smaller than its plane's width (`strideY` < width, `strideUV` <
    /// (width + 1) / 2) or larger (above 4 x ``VideoFrame/maximumDimension``).
    case strideOutOfRange(strideY: Int, strideUV: Int, width: Int)
    /// The plane data holds fewer bytes than the size and strides need.
    case dataTooSmall(needed: Int, available: Int)

    public var description: String {
        switch self {
        case .sizeNotPositive(let w, let h): "video frame size \(w)x\(h) is not positive"
        case .sizeTooLarge(let w, let h): "video frame size \(w)x\(h) is above \(VideoFrame.maximumDimension) pixels a side"
        case .strideOutOfRange(let y, let uv, let w): "strides \(y) (Y) and \(uv) (U, V) do not fit a \(w)-pixel-wide frame"
        case .dataTooSmall(let needed, let available): "plane data of \(available) bytes, \(needed) needed"
        }
    }
}
