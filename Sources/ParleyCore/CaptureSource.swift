// The capture seam: what a pipeline reads audio frames and pictures from. The devices, files
// and test sources behind it live in ParleyDevices; a call needs only these protocols.

/// A source of timed audio frames: a microphone (ParleyDevices' `ALSACapture`) or a stand-in
/// that behaves like one (its `ToneSource`, `SampleProviderSource`), so a pipeline runs the
/// same with or without hardware.
///
/// Threading: a source is used from one thread at a time (ParleyDevices' `AudioCaptureStream`
/// moves it to its own thread).
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

/// A source of timed I420 pictures: a camera (ParleyDevices' `V4L2Capture`) or a stand-in
/// (its `Y4MFileSource`, `PatternSource`).
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
