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
