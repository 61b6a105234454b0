/// Where ``TimedVideoSource`` (``PacedVideoSource``, ``ClockedVideoSource``) gets its pictures: a Y4M reader, a decoder, a generator.
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

/// How a ``TimedVideoSource`` times its pictures: the one thing that differs between a camera
/// that paces itself (``PacedTiming``) and one whose caller paces it (``ReadTimeTiming``).
public protocol VideoSourceTiming: SendableMetatype {
    /// Whether the provider's frame rate must be positive (the pictures' times are derived
    /// from it).
    static var needsFrameRate: Bool { get }
    /// The capture time and 90 kHz timestamp of picture `index` (from 0), read just now from a
    /// provider at `framesPerSecond`, waiting on `clock` first if this timing paces. `origin`
    /// is the first picture's time: nil on the first call, which sets it.
    static func stamp(picture index: Int, framesPerSecond: Double, origin: inout MonotonicTime?,
                      clock: any MediaClock) -> (captureTime: MonotonicTime, timestamp: UInt32)
}

/// Picture `n` is returned at `origin + n / fps` (the read waits on the clock until then) with
/// that `captureTime` and a 90 kHz `timestamp` of `n * 90000 / fps`: a recorded camera.
public enum PacedTiming: VideoSourceTiming {
    public static var needsFrameRate: Bool { true }

    public static func stamp(picture index: Int, framesPerSecond: Double, origin: inout MonotonicTime?,
                             clock: any MediaClock) -> (captureTime: MonotonicTime, timestamp: UInt32) {
        let start = origin ?? clock.now()
        origin = start
        let due = start.advanced(byNanoseconds: Int64((Double(index) * 1e9 / framesPerSecond).rounded()))
        clock.sleep(until: due)
        return (due, UInt32(truncatingIfNeeded: Int64((Double(index) * 90_000 / framesPerSecond).rounded())))
    }
}

/// A picture is returned as soon as it is asked for, stamped with the clock's time when it was
/// read: `captureTime` is that time and `timestamp` that time on a 90 kHz clock from the first
/// picture (as ``V4L2Capture`` stamps). For a caller that paces itself, so a read never sleeps.
public enum ReadTimeTiming: VideoSourceTiming {
    public static var needsFrameRate: Bool { false }

    public static func stamp(picture index: Int, framesPerSecond: Double, origin: inout MonotonicTime?,
                             clock: any MediaClock) -> (captureTime: MonotonicTime, timestamp: UInt32) {
        let now = clock.now()
        let start = origin ?? now
        origin = start
        return (now, UInt32(truncatingIfNeeded: start.nanoseconds(to: now) * 9 / 100_000))
    }
}

/// A recorded or generated camera: pictures from a provider delivered through
/// `VideoCaptureSource` on the system clock or an injected one, timed as `Timing` says.
/// Use it through its two names: ``PacedVideoSource`` (the read waits for each picture's time:
/// a stand-in for a camera) and ``ClockedVideoSource`` (the read returns at once, stamped with
/// its time: for a caller that paces itself, a `MediaScheduler` stream at the provider's
/// frame rate, as a call's local video is).
///
/// Threading: not copyable; use from one thread.
public struct TimedVideoSource<Provider: VideoFrameProvider & ~Copyable, Timing: VideoSourceTiming>:
    ~Copyable, VideoCaptureSource {
    public typealias Failure = Provider.Failure
    public var width: Int { provider.width }
    public var height: Int { provider.height }
    public var framesPerSecond: Double { provider.framesPerSecond }
    /// Pictures delivered so far.
    public private(set) var framesDelivered = 0
    private var provider: Provider
    private let clock: any MediaClock
    private var origin: MonotonicTime?

    /// Times `provider`'s pictures on `clock`.
    ///
    /// - Throws: ``VideoSourceConfigurationError/sizeNotPositive(width:height:)`` or
    ///   ``VideoSourceConfigurationError/sizeTooLarge(width:height:)`` for the provider's
    ///   size; ``VideoSourceConfigurationError/frameRateNotPositive(_:)`` when `Timing`
    ///   derives times from the frame rate (``PacedTiming``) and it is not positive.
    public init(_ provider: consuming Provider, clock: any MediaClock = SystemMediaClock())
        throws(VideoSourceConfigurationError) {
        let (w, h) = (provider.width, provider.height)
        guard w > 0 && h > 0 else { throw .sizeNotPositive(width: w, height: h) }
        guard w <= VideoFrame.maximumDimension && h <= VideoFrame.maximumDimension else {
            throw .sizeTooLarge(width: w, height: h)
        }
        let fps = provider.framesPerSecond
        guard fps > 0 || !Timing.needsFrameRate else { throw .frameRateNotPositive(fps) }
        self.provider = provider
        self.clock = clock
    }

    /// A black frame of the source's size to pass to ``read(into:)`` repeatedly.
    public func makeFrame() -> VideoFrame { VideoFrame(validatedWidth: width, height: height) }  // checked at init

    public mutating func read(into frame: inout VideoFrame) throws(Failure) -> Bool {
        if frame.width != width || frame.height != height {
            frame = makeFrame()
        }
        guard try provider.readPicture(into: &frame) else { return false }
        let (captureTime, timestamp) = Timing.stamp(picture: framesDelivered, framesPerSecond: framesPerSecond,
                                                    origin: &origin, clock: clock)
        frame.captureTime = captureTime
        frame.timestamp = timestamp
        framesDelivered += 1
        return true
    }
}

/// A recorded or generated camera paced at its provider's frame rate: picture `n` is returned
/// at `start + n / fps` with that `captureTime` and a 90 kHz `timestamp` of `n * 90000 / fps`
/// (``PacedTiming``). `PacedVideoSource(provider, clock:)` throws
/// ``VideoSourceConfigurationError/frameRateNotPositive(_:)`` for a frame rate that is not
/// positive (and, as any, for a size that is not positive or too large).
public typealias PacedVideoSource<Provider: VideoFrameProvider & ~Copyable> = TimedVideoSource<Provider, PacedTiming>

/// Pictures from a provider delivered as soon as they are asked for, each stamped with the
/// clock's time when it was read (``ReadTimeTiming``): a camera for a caller that paces itself,
/// so a read never sleeps on the caller's thread. `ClockedVideoSource(provider, clock:)` takes
/// any frame rate and throws only for a size that is not positive or too large.
public typealias ClockedVideoSource<Provider: VideoFrameProvider & ~Copyable> = TimedVideoSource<Provider, ReadTimeTiming>

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

extension TimedVideoSource where Provider == MovingPatternProvider, Timing == PacedTiming {
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
