import Foundation
import Synchronization

/// Moves a non-copyable source onto the capture thread.
private final class SourceBox<Source: ~Copyable>: @unchecked Sendable {
    // Touched only by the capture thread after init.
    var source: Source?
    init(_ source: consuming Source) { self.source = .some(source) }
}

/// Shared state between a capture thread and its stream's owner, and the loop both stream
/// types run on their capture thread.
final class CaptureControl: Sendable {
    let stopRequested = Atomic<Bool>(false)
    let delivered = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)

    /// A stream keeping the newest `capacity` frames; the consumer going away stops capture.
    func makeStream<Frame: Sendable>(capacity: Int)
        -> (AsyncThrowingStream<Frame, any Error>, AsyncThrowingStream<Frame, any Error>.Continuation) {
        // Both stream initialisers refuse a non-positive capacity before they get here.
        precondition(capacity > 0, "buffer capacity must be positive")
        let (stream, continuation) = AsyncThrowingStream<Frame, any Error>.makeStream(bufferingPolicy: .bufferingNewest(capacity))
        continuation.onTermination = { [self] _ in stopRequested.store(true, ordering: .relaxed) }
        return (stream, continuation)
    }

    /// The capture loop: reads into a ring of `ringSize` frames made by `make`, until the
    /// source ends, fails or a stop is requested, yielding each frame and counting drops; then
    /// releases the source (closing a device) before finishing the stream, with the source's
    /// error if it failed.
    ///
    /// The ring is one frame more than the stream can buffer plus the one the consumer holds,
    /// so by the time a frame is refilled the consumer has let go of it and its storage is
    /// reused in place: no allocation per frame. A consumer that keeps frames is still safe;
    /// copy-on-write then gives the refilled frame new storage.
    func pump<Frame: Sendable>(ringSize: Int, make: () -> Frame,
                               into continuation: AsyncThrowingStream<Frame, any Error>.Continuation,
                               read: (inout Frame) throws -> Bool, release: () -> Void) {
        var ring = (0..<ringSize).map { _ in make() }
        var next = 0
        while !stopRequested.load(ordering: .relaxed) {
            do {
                guard try read(&ring[next]) else { break }
            } catch {
                release()
                continuation.finish(throwing: error)
                return
            }
            delivered.add(1, ordering: .relaxed)
            if case .dropped = continuation.yield(ring[next]) {
                dropped.add(1, ordering: .relaxed)
            }
            next = next + 1 == ringSize ? 0 : next + 1
        }
        release()
        continuation.finish()
    }
}

/// Audio frames from any `AudioCaptureSource` as an `AsyncSequence`: a dedicated thread
/// reads the source and yields each frame into an `AsyncThrowingStream` that keeps at most
/// `bufferCapacity` frames. When the consumer falls behind, the oldest frames are dropped
/// (a call wants fresh audio, not a growing delay) and counted in ``droppedFrames``.
///
/// The stream finishes when the source ends, throws the source's error if it fails, and stops
/// (after the read in progress) on ``stop()`` or when the consumer's task is cancelled.
///
/// Allocation: frames come from a ring of `bufferCapacity + 2` preallocated frames refilled in
/// place, so steady-state capture allocates nothing per frame as long as the consumer does
/// not keep frames beyond its loop body (if it does, copy-on-write keeps them intact).
///
/// Threading: the stream object is `Sendable`; iterate it from one task.
public final class AudioCaptureStream<Sample: AudioSample>: AsyncSequence, Sendable {
    public typealias Element = AudioFrame<Sample>
    public typealias AsyncIterator = AsyncThrowingStream<AudioFrame<Sample>, any Error>.Iterator

    private let stream: AsyncThrowingStream<AudioFrame<Sample>, any Error>
    private let control = CaptureControl()

    /// Starts capturing from `source` on a new thread.
    /// - Parameters:
    ///   - source: what to capture; the stream owns it from now on.
    ///   - bufferCapacity: frames held for a slow consumer before the oldest is dropped
    ///     (default 8: 80 ms of 10 ms frames, enough to ride out a scheduling hiccup).
    ///   - framesPerRead: samples per channel per frame (default: the source's natural size).
    /// - Throws: ``CaptureConfigurationError/bufferCapacityNotPositive(_:)``; `source` is then
    ///   released without being read.
    public init<Source: AudioCaptureSource & ~Copyable>(
        _ source: consuming Source, bufferCapacity: Int = 8, framesPerRead: Int? = nil
    ) throws(CaptureConfigurationError) where Source.Sample == Sample {
        guard bufferCapacity > 0 else { throw .bufferCapacityNotPositive(bufferCapacity) }
        let control = self.control
        let (stream, continuation) = control.makeStream(capacity: bufferCapacity) as
            (AsyncThrowingStream<AudioFrame<Sample>, any Error>, AsyncThrowingStream<AudioFrame<Sample>, any Error>.Continuation)
        self.stream = stream
        let format = source.format
        let size = framesPerRead ?? source.framesPerRead
        let box = SourceBox(source)
        let thread = Thread {
            control.pump(ringSize: bufferCapacity + 2, make: { AudioFrame<Sample>(format: format, samplesPerChannel: size) },
                         into: continuation, read: { try box.source!.read(into: &$0) }, release: { box.source = nil })
        }
        thread.name = "parley-audio-capture"
        thread.start()
    }

    /// Asks the capture thread to stop after the read in progress; the stream then finishes.
    public func stop() { control.stopRequested.store(true, ordering: .relaxed) }
    /// Frames read from the source so far.
    public var capturedFrames: Int { control.delivered.load(ordering: .relaxed) }
    /// Frames dropped because the consumer was more than `bufferCapacity` frames behind.
    public var droppedFrames: Int { control.dropped.load(ordering: .relaxed) }

    public func makeAsyncIterator() -> AsyncIterator { stream.makeAsyncIterator() }
}

/// Pictures from any `VideoCaptureSource` as an `AsyncSequence`, with the same thread,
/// bounded buffer (default 2 pictures: video is dropped rather than delayed) and drop count
/// as ``AudioCaptureStream``.
///
/// Threading: the stream object is `Sendable`; iterate it from one task.
public final class VideoCaptureStream: AsyncSequence, Sendable {
    public typealias Element = VideoFrame
    public typealias AsyncIterator = AsyncThrowingStream<VideoFrame, any Error>.Iterator

    private let stream: AsyncThrowingStream<VideoFrame, any Error>
    private let control = CaptureControl()

    /// Starts capturing from `source` on a new thread, holding at most `bufferCapacity` pictures.
    /// - Throws: ``CaptureConfigurationError/bufferCapacityNotPositive(_:)``; `source` is then
    ///   released without being read.
    public init<Source: VideoCaptureSource & ~Copyable>(_ source: consuming Source, bufferCapacity: Int = 2)
        throws(CaptureConfigurationError) {
        guard bufferCapacity > 0 else { throw .bufferCapacityNotPositive(bufferCapacity) }
        let control = self.control
        let (stream, continuation) = control.makeStream(capacity: bufferCapacity) as
            (AsyncThrowingStream<VideoFrame, any Error>, AsyncThrowingStream<VideoFrame, any Error>.Continuation)
        self.stream = stream
        let blank: VideoFrame
        do { blank = try VideoFrame(width: source.width, height: source.height) } catch {
            continuation.finish(throwing: error)  // a source of no size: the stream ends at once with why
            return
        }
        let box = SourceBox(source)
        let thread = Thread {
            control.pump(ringSize: bufferCapacity + 2, make: { blank },
                         into: continuation, read: { try box.source!.read(into: &$0) }, release: { box.source = nil })
        }
        thread.name = "parley-video-capture"
        thread.start()
    }

    /// Asks the capture thread to stop after the read in progress.
    public func stop() { control.stopRequested.store(true, ordering: .relaxed) }
    /// Pictures read from the source so far.
    public var capturedFrames: Int { control.delivered.load(ordering: .relaxed) }
    /// Pictures dropped because the consumer was behind.
    public var droppedFrames: Int { control.dropped.load(ordering: .relaxed) }

    public func makeAsyncIterator() -> AsyncIterator { stream.makeAsyncIterator() }
}
