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
    /// All three planes, back to back.
    public var data: [UInt8]
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

    /// Creates a black frame (Y = 16, U = V = 128) with tight strides.
    /// Traps on a non-positive size (a programming error).
    public init(width: Int, height: Int, timestamp: UInt32 = 0, captureTime: MonotonicTime = .zero) {
        precondition(width > 0 && height > 0, "frame size must be positive")
        self.width = width
        self.height = height
        self.strideY = width
        self.strideUV = (width + 1) / 2
        let ySize = width * height
        let cSize = strideUV * ((height + 1) / 2)
        var bytes = [UInt8](repeating: 128, count: ySize + 2 * cSize)
        for i in 0..<ySize { bytes[i] = 16 }
        self.data = bytes
        self.timestamp = timestamp
        self.captureTime = captureTime
    }

    /// Creates a frame over existing plane data with the given strides.
    /// Traps if `data` is too small for the size and strides (a programming error).
    public init(width: Int, height: Int, strideY: Int, strideUV: Int, data: [UInt8],
                timestamp: UInt32 = 0, captureTime: MonotonicTime = .zero) {
        precondition(width > 0 && height > 0, "frame size must be positive")
        precondition(strideY >= width && strideUV >= (width + 1) / 2, "stride smaller than width")
        precondition(data.count >= strideY * height + 2 * strideUV * ((height + 1) / 2),
                     "plane data too small")
        self.width = width
        self.height = height
        self.strideY = strideY
        self.strideUV = strideUV
        self.data = data
        self.timestamp = timestamp
        self.captureTime = captureTime
    }

    /// Calls `body` with pointers to the Y, U and V planes for in-place writing.
    @inlinable public mutating func withUnsafeMutablePlanes<R>(
        _ body: (_ y: UnsafeMutablePointer<UInt8>, _ u: UnsafeMutablePointer<UInt8>,
                 _ v: UnsafeMutablePointer<UInt8>) throws -> R
    ) rethrows -> R {
        let u = offsetU, v = offsetV
        return try data.withUnsafeMutableBufferPointer { buf in
            let base = buf.baseAddress!
            return try body(base, base + u, base + v)
        }
    }

    /// Calls `body` with read-only pointers to the Y, U and V planes.
    @inlinable public func withUnsafePlanes<R>(
        _ body: (_ y: UnsafePointer<UInt8>, _ u: UnsafePointer<UInt8>,
                 _ v: UnsafePointer<UInt8>) throws -> R
    ) rethrows -> R {
        let u = offsetU, v = offsetV
        return try data.withUnsafeBufferPointer { buf in
            let base = buf.baseAddress!
            return try body(base, base + u, base + v)
        }
    }
}
