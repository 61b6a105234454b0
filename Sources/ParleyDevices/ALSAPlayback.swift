import CALSA
import CALSAClockedPCM
#if canImport(Glibc)
import Glibc
#endif

/// Audio playback to an ALSA PCM (a speaker, or any PCM alsa-lib can open).
///
/// Writes block (in `snd_pcm_wait`, with the timeout from ``ALSAParameters``) until the device
/// has room. Playback starts once two periods are queued. Underruns and suspends are recovered
/// with `snd_pcm_recover` and counted in ``xruns``. Call ``drain()`` to play out what is queued
/// before closing.
///
/// Threading: not copyable; use from one thread.
public struct ALSAPlayback<Sample: AudioSample>: ~Copyable, ALSAPCMStream {
    /// The PCM name it was opened with.
    public var pcmName: String { stream.name }
    /// What the device agreed to.
    public var setup: ALSAStreamSetup { stream.setup }
    /// Underruns and suspends recovered so far.
    public var xruns: XRunCounters { stream.xruns }
    /// Samples per channel written so far.
    public private(set) var framesWritten: UInt64 = 0

    private var stream: PCMStream

    /// Opens `pcm` from `source` for playback (see ``ALSAPCMStream`` for the ways to open one).
    public init(pcm: String, parameters: ALSAParameters, source: ALSAPCMSource) throws(ALSAError) {
        stream = try PCMStream(pcm, .playback, source.kind, parameters: parameters, sample: Sample.self)
    }

    /// Queues all samples of `frame` (its format must equal the negotiated format).
    public mutating func write(_ frame: borrowing AudioFrame<Sample>) throws(ALSAError) {
        guard frame.format == setup.format else {
            throw ALSAError.invalidArgument(pcm: pcmName, operation: "write", "the frame is \(frame.format), the playback \(setup.format)")
        }
        let r: Result<Void, ALSAError> = frame.samples.withUnsafeBufferPointer { buf in
            do throws(ALSAError) { try write(buf); return .success(()) } catch { return .failure(error) }
        }
        try r.get()
    }

    /// Queues interleaved samples (a whole number of frames). No allocation.
    public mutating func write(_ samples: UnsafeBufferPointer<Sample>) throws(ALSAError) {
        let channels = setup.format.channels
        guard samples.count % channels == 0 else {
            throw ALSAError.invalidArgument(pcm: pcmName, operation: "write",
                                            "\(samples.count) samples are not whole frames of \(channels) channels")
        }
        guard let base = samples.baseAddress else { return }
        let raw = UnsafeRawPointer(base)
        let frameBytes = MemoryLayout<Sample>.stride * channels
        let frames = samples.count / channels
        let pcm = stream.raw
        try stream.transfer("snd_pcm_writei", frames: frames) { snd_pcm_writei(pcm, raw + $0 * frameBytes, $1) }
        framesWritten &+= UInt64(frames)
    }

    /// Plays out everything queued, blocking until done (`snd_pcm_drain`). A stream that
    /// never reached its start threshold is started first.
    public mutating func drain() throws(ALSAError) {
        let pcm = stream.raw
        _ = snd_pcm_nonblock(pcm, 0)
        defer { _ = snd_pcm_nonblock(pcm, 1) }
        if snd_pcm_state(pcm) == SND_PCM_STATE_PREPARED && framesWritten > 0 {
            _ = snd_pcm_start(pcm)
        }
        while true {
            switch valueOrNegatedErrno({ snd_pcm_drain(pcm) }) {
            case .success:
                return
            case .failure(let e) where e == .wouldBlock:
                continue
            case .failure(let e) where e == .brokenPipe || e == .streamsPipe:
                // An underrun at the very end: everything queued has been played.
                try stream.recover(code: -Int(e.rawValue))
                return
            case .failure(let e):
                throw ALSAError.from(code: -e.rawValue, pcm: pcmName, operation: "snd_pcm_drain")
            }
        }
    }

    /// Test hook: suspends a ``clocked(parameters:)`` PCM as system sleep would, so the next
    /// transfer meets `-ESTRPIPE` and exercises suspend recovery. Traps for other PCMs.
    mutating func simulateSuspend() { stream.simulateSuspend() }

    /// Closes the PCM without draining (queued samples are dropped); reports a failure.
    public consuming func close() throws(ALSAError) {
        try stream.close(dropping: false)
    }
}
