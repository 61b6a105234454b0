// What a jitter buffer needs from a codec: decode, conceal, recover from forward error correction.

/// The decoder a jitter buffer (ParleyJitter's `AudioJitterBuffer`) drives while it plays out.
///
/// It lives in ParleyCore so that the buffer and the codecs need not know each other:
/// ParleyCodecs' `OpusJitterDecoder` adapts `OpusDecoder`, ParleyJitter's `LinearPCMDecoder`
/// is a PCM one, and the caller passes one `inout` to `AudioJitterBuffer.get(at:into:decoder:)`. All sample counts are samples per channel at
/// the buffer's `JitterBufferConfiguration/sampleRate`; buffers are interleaved `Int16`.
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
