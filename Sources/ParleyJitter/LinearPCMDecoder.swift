// A real codec for the jitter buffer's tests and benchmarks: linear PCM.

#if canImport(ParleyCore)
import ParleyCore
#endif

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
    ///
    /// - Throws: ``JitterConfigurationError`` when `sampleRate` or `channels` is not positive.
    public init(sampleRate: Int, channels: Int = 1) throws(JitterConfigurationError) {
        guard sampleRate > 0 else { throw .outOfRange(parameter: "sampleRate", value: "\(sampleRate)", allowed: "> 0") }
        guard channels > 0 else { throw .outOfRange(parameter: "channels", value: "\(channels)", allowed: "> 0") }
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
