/// The decoder an ``AudioJitterBuffer`` drives while it plays out.
///
/// ParleyJitter imports no C, so the buffer does not know Opus: the caller conforms its
/// decoder (ParleyCall's `OpusJitterDecoder` adapts `OpusDecoder`) and passes it `inout` to
/// ``AudioJitterBuffer/get(at:into:decoder:)``. All sample counts are samples per channel at
/// the buffer's ``JitterBufferConfiguration/sampleRate``; buffers are interleaved `Int16`.
///
/// Threading: called only from the thread that calls `get`, never concurrently.
public protocol JitterBufferDecoder: ~Copyable {
    /// Decodes one packet into `output`; returns the samples per channel written, or `nil`
    /// when the packet is corrupt (the buffer then conceals its duration instead).
    mutating func decode(_ packet: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<Int16>) -> Int?

    /// Synthesises `samplesPerChannel` samples of loss concealment (Opus PLC:
    /// `opus_decode(NULL)`) into `output`; returns the samples per channel written.
    mutating func conceal(into output: UnsafeMutableBufferPointer<Int16>, samplesPerChannel: Int) -> Int

    /// Recovers the packet *before* `next` from `next`'s in-band forward error correction
    /// (Opus LBRR: `opus_decode(next, decode_fec: 1)`), `samplesPerChannel` long. Returns
    /// `nil` when `next` carries no FEC or the decoder has none; the buffer then conceals.
    mutating func decodeFEC(fromNext next: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<Int16>,
                            samplesPerChannel: Int) -> Int?
}

/// A decoder for linear 16-bit PCM payloads (RTP "L16", RFC 3551, but little-endian host
/// order), with a pitch-repeating concealment that fades out over 60 ms and no FEC.
///
/// It is a real codec, cheap enough for benchmarks and tests that replay thousands of
/// packets; the call path uses Opus through `OpusJitterDecoder` instead.
public struct LinearPCMDecoder: JitterBufferDecoder {
    /// Interleaved channels.
    public let channels: Int
    private var history: [Int16]
    private var historyCount = 0
    private var concealedRun = 0
    private let sampleRate: Int

    /// Creates a decoder for `channels` interleaved channels at `sampleRate` Hz.
    public init(sampleRate: Int, channels: Int = 1) {
        precondition(sampleRate > 0 && channels > 0)
        self.channels = channels
        self.sampleRate = sampleRate
        // 10 ms of history: repeated (with a fade) during concealment.
        history = [Int16](repeating: 0, count: max(1, sampleRate / 100) * channels)
    }

    public mutating func decode(_ packet: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<Int16>) -> Int? {
        let total = packet.count / 2
        guard packet.count % (2 * channels) == 0, total <= output.count else { return nil }
        for i in 0..<total {
            output[i] = Int16(littleEndian: packet.loadUnaligned(fromByteOffset: 2 * i, as: Int16.self))
        }
        remember(output, count: total)
        concealedRun = 0
        return total / channels
    }

    public mutating func conceal(into output: UnsafeMutableBufferPointer<Int16>, samplesPerChannel: Int) -> Int {
        let n = min(samplesPerChannel * channels, output.count)
        let fadeLength = max(1, sampleRate * 60 / 1000 * channels)
        for i in 0..<n {
            let fade = max(0, fadeLength - concealedRun - i)
            let h = historyCount > 0 ? Int(history[i % historyCount]) : 0
            output[i] = Int16(h * fade / fadeLength)
        }
        concealedRun += n
        return n / channels
    }

    public mutating func decodeFEC(fromNext next: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<Int16>,
                                   samplesPerChannel: Int) -> Int? {
        nil
    }

    private mutating func remember(_ samples: UnsafeMutableBufferPointer<Int16>, count: Int) {
        let keep = min(count, history.count)
        for i in 0..<keep { history[i] = samples[count - keep + i] }
        historyCount = keep
    }
}
