import ParleyCore

/// Drives ``OpusDecoder`` from a jitter buffer (ParleyJitter's `AudioJitterBuffer`): decode, packet loss
/// concealment (`opus_decode(NULL)`) and in-band FEC recovery from the next packet.
///
/// Durations passed to Opus must be multiples of 2.5 ms; a concealment request that is not
/// (a gap of odd length) is rounded down and the buffer pads the rest with silence. FEC is
/// attempted only from SILK or hybrid packets (CELT-only ones carry none); a SILK packet
/// without LBRR data makes libopus conceal instead, which still counts as a recovery.
/// Threading: as the decoder it owns, one thread at a time.
public struct OpusJitterDecoder: ~Copyable, JitterBufferDecoder {
    /// The wrapped decoder.
    public var decoder: OpusDecoder
    private let quantum: Int

    /// Wraps a decoder producing `sampleRate` Hz.
    public init(_ decoder: consuming OpusDecoder, sampleRate: Int) {
        self.decoder = decoder
        quantum = max(1, sampleRate / 400)  // 2.5 ms
    }

    /// Creates a decoder for `sampleRate` Hz (8, 12, 16, 24 or 48 kHz) and `channels`.
    public init(sampleRate: Int, channels: Int) throws(OpusError) {
        self.init(try OpusDecoder(sampleRate: sampleRate, channels: channels), sampleRate: sampleRate)
    }

    public mutating func decode(_ packet: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<Int16>) -> Int? {
        try? decoder.decode(packet, into: output)
    }

    public mutating func conceal(into output: UnsafeMutableBufferPointer<Int16>, samplesPerChannel: Int) -> Int {
        let ch = decoder.channels
        let n = samplesPerChannel / quantum * quantum
        guard n > 0, n * ch <= output.count else { return 0 }
        return (try? decoder.concealLoss(into: UnsafeMutableBufferPointer(rebasing: output[0..<(n * ch)]))) ?? 0
    }

    public mutating func decodeFEC(fromNext next: UnsafeRawBufferPointer, into output: UnsafeMutableBufferPointer<Int16>,
                                   samplesPerChannel: Int) -> Int? {
        let ch = decoder.channels
        guard samplesPerChannel > 0, samplesPerChannel % quantum == 0, samplesPerChannel * ch <= output.count else { return nil }
        // CELT-only packets carry no LBRR (FEC) data: libopus would only conceal.
        guard let info = try? OpusPacketInfo(parsing: next), info.mode != .celt else { return nil }
        return try? decoder.recoverLost(from: next, into: UnsafeMutableBufferPointer(rebasing: output[0..<(samplesPerChannel * ch)]))
    }
}
