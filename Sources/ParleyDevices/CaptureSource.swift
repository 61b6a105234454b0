/// A source of timed audio frames: a microphone (``ALSACapture``) or a stand-in that behaves
/// like one (``ToneSource``, ``SampleProviderSource``), so a pipeline runs the same with or
/// without hardware.
///
/// Threading: a source is used from one thread at a time (``AudioCaptureStream`` moves it to
/// its own thread).
public protocol AudioCaptureSource<Sample>: ~Copyable, SendableMetatype {
    associatedtype Sample: AudioSample
    associatedtype Failure: Error

    /// Rate and channel count of every frame.
    var format: AudioFormat { get }
    /// The natural frame size in samples per channel (a device period, 10 ms by default).
    var framesPerRead: Int { get }

    /// Fills all of `frame.samples` (its size is the caller's choice; a frame of another format
    /// than ``format`` is first given this format and ``framesPerRead`` samples per channel,
    /// which allocates once), blocking until the samples have been captured (devices) or are due
    /// (paced test sources), and sets `timestamp` (samples since start) and `captureTime`
    /// (monotonic time of the first sample).
    /// - Returns: false at the end of a finite source (no samples were written).
    mutating func read(into frame: inout AudioFrame<Sample>) throws(Failure) -> Bool
}

/// A source of timed I420 pictures: a camera (``V4L2Capture``) or a stand-in
/// (``Y4MFileSource``, ``PatternSource``).
///
/// Threading: used from one thread at a time.
public protocol VideoCaptureSource: ~Copyable, SendableMetatype {
    associatedtype Failure: Error

    /// Picture width in pixels.
    var width: Int { get }
    /// Picture height in pixels.
    var height: Int { get }
    /// Nominal frame rate in frames per second.
    var framesPerSecond: Double { get }

    /// Writes the next picture into `frame` (reusing its storage when the size matches),
    /// blocking until it is captured or due, with `timestamp` (90 kHz) and `captureTime`.
    /// - Returns: false at the end of a finite source.
    mutating func read(into frame: inout VideoFrame) throws(Failure) -> Bool
}

/// The first `frames` reads of another audio source, then the end: turns an endless device
/// into a finite source, so an ``AudioCaptureStream`` over it finishes by itself (and a
/// buffer of `frames` frames can hold all of it).
///
/// Threading: not copyable; use from one thread.
public struct PrefixAudioSource<Inner: AudioCaptureSource & ~Copyable>: ~Copyable, AudioCaptureSource {
    public typealias Sample = Inner.Sample
    public typealias Failure = Inner.Failure
    private var inner: Inner
    /// Reads left before the end.
    public private(set) var remaining: Int

    /// Wraps `inner`, ending after `frames` reads.
    /// - Throws: ``CaptureConfigurationError/frameCountNegative(_:)``.
    public init(_ inner: consuming Inner, frames: Int) throws(CaptureConfigurationError) {
        guard frames >= 0 else { throw .frameCountNegative(frames) }
        self.inner = inner
        self.remaining = frames
    }

    public var format: AudioFormat { inner.format }
    public var framesPerRead: Int { inner.framesPerRead }

    public mutating func read(into frame: inout AudioFrame<Sample>) throws(Failure) -> Bool {
        guard remaining > 0 else { return false }
        remaining -= 1
        return try inner.read(into: &frame)
    }
}
