import CALSA
import CALSAClockedPCM
#if canImport(Glibc)
import Glibc
#endif

/// Audio capture from an ALSA PCM (a microphone, or any PCM alsa-lib can open).
///
/// ```
/// var mic = try ALSACapture<Int16>(pcm: "default", parameters: .init(format: try AudioFormat(sampleRate: 48_000, channels: 1)))
/// var frame = mic.makeFrame()               // one period, allocated once
/// while running { _ = try mic.read(into: &frame) }   // no allocation per frame
/// ```
///
/// Reads block (in `snd_pcm_wait`, with the timeout from ``ALSAParameters``) until a frame is
/// captured. Overruns and suspends are recovered with `snd_pcm_recover` and counted in
/// ``xruns``; the samples lost in an overrun are gone, the stream continues.
///
/// Timestamps: `timestamp` counts delivered samples per channel (RTP-style, wrapping);
/// `captureTime` is `CLOCK_MONOTONIC` now minus the samples still queued in the device
/// (`snd_pcm_delay`) and in the frame, i.e. when the first sample of the frame was captured.
///
/// Threading: not copyable; use from one thread (or hand it to ``AudioCaptureStream``).
public struct ALSACapture<Sample: AudioSample>: ~Copyable, AudioCaptureSource, ALSAPCMStream {
    public typealias Failure = ALSAError

    /// The PCM name it was opened with.
    public var pcmName: String { stream.name }
    /// What the device agreed to.
    public var setup: ALSAStreamSetup { stream.setup }
    /// Overruns and suspends recovered so far.
    public var xruns: XRunCounters { stream.xruns }
    /// Samples per channel delivered so far.
    public private(set) var framesDelivered: UInt64 = 0

    private var stream: PCMStream

    /// Opens `pcm` from `source` for capture (see ``ALSAPCMStream`` for the ways to open one).
    public init(pcm: String, parameters: ALSAParameters, source: ALSAPCMSource) throws(ALSAError) {
        stream = try PCMStream(pcm, .capture, source.kind, parameters: parameters, sample: Sample.self)
    }

    public var format: AudioFormat { setup.format }
    public var framesPerRead: Int { setup.periodFrames }

    /// A silent frame of one period, to pass to ``read(into:)->_`` again and again.
    public func makeFrame() -> AudioFrame<Sample> {
        AudioFrame(format: setup.format, samplesPerChannel: setup.periodFrames)
    }

    /// Fills `frame` with the next `frame.samplesPerChannel` captured samples per channel.
    /// Always returns true (a device does not end).
    /// - Throws: ``ALSAError`` on timeout, an unrecoverable xrun, or a device error;
    ///   ``ALSAError/Kind/invalidArgument`` for a frame of another format than ``format``.
    @discardableResult
    public mutating func read(into frame: inout AudioFrame<Sample>) throws(ALSAError) -> Bool {
        guard frame.format == setup.format else {
            throw ALSAError.invalidArgument(pcm: pcmName, operation: "read", "the frame is \(frame.format), the capture \(setup.format)")
        }
        let frames = frame.samplesPerChannel
        let r: Result<Void, ALSAError> = frame.withUnsafeMutableSamples { buf in
            do throws(ALSAError) {
                try read(into: UnsafeMutableRawPointer(buf.baseAddress!), frames: frames)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try r.get()
        var delay: snd_pcm_sframes_t = 0
        if snd_pcm_delay(stream.raw, &delay) < 0 || delay < 0 { delay = 0 }
        let queued = Int64(delay) + Int64(frames)
        let now = MonotonicTime.now()
        frame.captureTime = now.advanced(byNanoseconds: -(queued * 1_000_000_000 / Int64(setup.format.sampleRate)))
        frame.timestamp = UInt32(truncatingIfNeeded: framesDelivered)
        framesDelivered &+= UInt64(frames)
        return true
    }

    /// Reads exactly `frames` frames (samples per channel) of interleaved samples into `buffer`
    /// (which holds `frames * channels` samples). No timestamps; no allocation.
    /// - Throws: as ``read(into:)-(AudioFrame<Sample>)``; ``ALSAError/Kind/invalidArgument``
    ///   for a buffer that is not whole frames.
    public mutating func read(into buffer: UnsafeMutableBufferPointer<Sample>) throws(ALSAError) {
        guard buffer.count % setup.format.channels == 0 else {
            throw ALSAError.invalidArgument(pcm: pcmName, operation: "read",
                                            "\(buffer.count) samples are not whole frames of \(setup.format.channels) channels")
        }
        guard let base = buffer.baseAddress else { return }
        try read(into: UnsafeMutableRawPointer(base), frames: buffer.count / setup.format.channels)
        framesDelivered &+= UInt64(buffer.count / setup.format.channels)
    }

    private mutating func read(into base: UnsafeMutableRawPointer, frames: Int) throws(ALSAError) {
        let frameBytes = MemoryLayout<Sample>.stride * setup.format.channels
        let pcm = stream.raw
        try stream.transfer("snd_pcm_readi", frames: frames) { snd_pcm_readi(pcm, base + $0 * frameBytes, $1) }
    }

    /// Test hook: suspends a ``clocked(parameters:)`` PCM as system sleep would, so the next
    /// transfer meets `-ESTRPIPE` and exercises suspend recovery. Traps for other PCMs.
    mutating func simulateSuspend() { stream.simulateSuspend() }

    /// Stops the stream and closes the PCM, reporting a failure to close.
    public consuming func close() throws(ALSAError) {
        try stream.close(dropping: true)
    }
}
