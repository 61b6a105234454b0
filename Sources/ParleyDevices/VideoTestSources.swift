/// Where ``PacedVideoSource`` gets its pictures: a Y4M reader, a decoder, a generator.
///
/// Threading: used from one thread at a time.
public protocol VideoFrameProvider: ~Copyable {
    associatedtype Failure: Error
    /// Picture width in pixels.
    var width: Int { get }
    /// Picture height in pixels.
    var height: Int { get }
    /// Frames per second.
    var framesPerSecond: Double { get }
    /// Writes the next picture's planes into `frame` (same size; timing is set by the
    /// caller). Returns false at the end.
    mutating func readPicture(into frame: inout VideoFrame) throws(Failure) -> Bool
}

/// A recorded or generated camera: pictures from a provider delivered at its frame rate
/// through ``VideoCaptureSource``, on the system clock or an injected one. Picture `n` is
/// returned at `start + n / fps` with that `captureTime` and a 90 kHz `timestamp` of
/// `n * 90000 / fps`.
///
/// Threading: not copyable; use from one thread.
public struct PacedVideoSource<Provider: VideoFrameProvider & ~Copyable>: ~Copyable, VideoCaptureSource {
    public typealias Failure = Provider.Failure
    public var width: Int { provider.width }
    public var height: Int { provider.height }
    public var framesPerSecond: Double { provider.framesPerSecond }
    /// Pictures delivered so far.
    public private(set) var framesDelivered = 0
    private var provider: Provider
    private let clock: any MediaClock
    private var start: MonotonicTime?

    /// Paces `provider`'s pictures on `clock`.
    ///
    /// - Throws: ``VideoSourceConfigurationError/frameRateNotPositive(_:)`` when the provider's
    ///   frame rate is not positive.
    public init(_ provider: consuming Provider, clock: any MediaClock = SystemMediaClock())
        throws(VideoSourceConfigurationError) {
        let fps = provider.framesPerSecond
        guard fps > 0 else { throw .frameRateNotPositive(fps) }
        self.provider = provider
        self.clock = clock
    }

    /// A black frame of the source's size to pass to ``read(into:)`` repeatedly.
    public func makeFrame() -> VideoFrame { VideoFrame(width: width, height: height) }

    public mutating func read(into frame: inout VideoFrame) throws(Failure) -> Bool {
        if frame.width != width || frame.height != height {
            frame = VideoFrame(width: width, height: height)
        }
        guard try provider.readPicture(into: &frame) else { return false }
        let origin = start ?? clock.now()
        start = origin
        let n = framesDelivered
        let due = origin.advanced(byNanoseconds: Int64((Double(n) * 1e9 / framesPerSecond).rounded()))
        clock.sleep(until: due)
        frame.captureTime = due
        frame.timestamp = UInt32(truncatingIfNeeded: Int64((Double(n) * 90_000 / framesPerSecond).rounded()))
        framesDelivered += 1
        return true
    }
}

/// Pictures from a provider delivered as soon as they are asked for, each stamped with the
/// clock's time when it was read: a camera for a caller that paces itself (a
/// ``MediaScheduler`` stream at the provider's frame rate, as a call's local video is), so a
/// read never sleeps on the caller's thread. `captureTime` is the read's time and `timestamp`
/// that time on a 90 kHz clock from the first picture (as ``V4L2Capture`` stamps).
///
/// Threading: not copyable; use from one thread.
public struct ClockedVideoSource<Provider: VideoFrameProvider & ~Copyable>: ~Copyable, VideoCaptureSource {
    public typealias Failure = Provider.Failure
    public var width: Int { provider.width }
    public var height: Int { provider.height }
    public var framesPerSecond: Double { provider.framesPerSecond }
    /// Pictures delivered so far.
    public private(set) var framesDelivered = 0
    private var provider: Provider
    private let clock: any MediaClock
    private var start: MonotonicTime?

    public init(_ provider: consuming Provider, clock: any MediaClock = SystemMediaClock()) {
        self.provider = provider
        self.clock = clock
    }

    public mutating func read(into frame: inout VideoFrame) throws(Failure) -> Bool {
        if frame.width != width || frame.height != height {
            frame = VideoFrame(width: width, height: height)
        }
        guard try provider.readPicture(into: &frame) else { return false }
        let now = clock.now()
        let origin = start ?? now
        start = origin
        frame.captureTime = now
        frame.timestamp = UInt32(truncatingIfNeeded: origin.nanoseconds(to: now) * 9 / 100_000)
        framesDelivered += 1
        return true
    }
}

/// A synthetic moving test pattern: a diagonal luma ramp that scrolls by `speed` pixels per
/// frame, a bright square moving across, and chroma bars, so motion and colour both show up
/// in an encoder. Picture `n` is fully determined by `n` (see ``luma(x:y:frame:)``).
public struct MovingPatternProvider: VideoFrameProvider {
    public typealias Failure = Never
    public let width: Int
    public let height: Int
    public let framesPerSecond: Double
    /// Pictures to produce, or nil for endless.
    public let frameCount: Int?
    /// Pixels the ramp scrolls per frame.
    public let speed: Int
    private var index = 0

    /// A pattern of `width` x `height` pixels at `framesPerSecond`.
    ///
    /// - Throws: ``VideoSourceConfigurationError/sizeNotPositive(width:height:)`` when `width`
    ///   or `height` is not positive.
    public init(width: Int, height: Int, framesPerSecond: Double = 30, frameCount: Int? = nil, speed: Int = 2)
        throws(VideoSourceConfigurationError) {
        guard width > 0 && height > 0 else { throw .sizeNotPositive(width: width, height: height) }
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.frameCount = frameCount
        self.speed = speed
    }

    /// The side of the moving square in pixels.
    public var squareSide: Int { max(2, min(width, height) / 6) }

    /// Top-left corner of the square in picture `frame`.
    public func squareOrigin(frame: Int) -> (x: Int, y: Int) {
        let side = squareSide
        return ((frame * speed * 2) % max(1, width - side + 1), (height - side) / 2)
    }

    /// The luma value at (x, y) in picture `frame`.
    public func luma(x: Int, y: Int, frame: Int) -> UInt8 {
        let (sx, sy) = squareOrigin(frame: frame)
        if x >= sx && x < sx + squareSide && y >= sy && y < sy + squareSide { return 235 }
        return UInt8(truncatingIfNeeded: 16 + ((x + y + frame * speed) % 200))
    }

    public mutating func readPicture(into frame: inout VideoFrame) -> Bool {
        if let frameCount, index >= frameCount { return false }
        let n = index
        let w = width, h = height
        let sy = frame.strideY, suv = frame.strideUV
        let cw = frame.chromaWidth, ch = frame.chromaHeight
        let (qx, qy) = squareOrigin(frame: n)
        let side = squareSide
        let shift = n * speed
        frame.withUnsafeMutablePlanes { yp, up, vp in
            for y in 0..<h {
                let row = yp + y * sy
                for x in 0..<w { row[x] = UInt8(truncatingIfNeeded: 16 + ((x + y + shift) % 200)) }
            }
            for y in qy..<min(h, qy + side) {
                let row = yp + y * sy
                for x in qx..<min(w, qx + side) { row[x] = 235 }
            }
            for y in 0..<ch {
                for x in 0..<cw {
                    let bar = (x * 8 / max(1, cw))
                    up[y * suv + x] = UInt8(truncatingIfNeeded: 64 + bar * 16)
                    vp[y * suv + x] = UInt8(truncatingIfNeeded: 192 - bar * 16)
                }
            }
        }
        index += 1
        return true
    }
}

/// A synthetic camera: ``MovingPatternProvider`` paced at its frame rate.
public typealias PatternSource = PacedVideoSource<MovingPatternProvider>

extension PacedVideoSource where Provider == MovingPatternProvider {
    /// A moving test pattern of `width` x `height` at `framesPerSecond`, endless unless
    /// `frameCount` is given.
    ///
    /// - Throws: ``VideoSourceConfigurationError`` when the size or the frame rate is not positive.
    public init(width: Int, height: Int, framesPerSecond: Double = 30, frameCount: Int? = nil,
                clock: any MediaClock = SystemMediaClock()) throws(VideoSourceConfigurationError) {
        try self.init(MovingPatternProvider(width: width, height: height, framesPerSecond: framesPerSecond,
                                        frameCount: frameCount), clock: clock)
    }
}
