// Opus over RTP (RFC 7587): one Opus packet per RTP payload, no extra header; the RTP clock is
// always 48 kHz whatever the encoder's internal rate, and the timestamp advances by the
// packet's duration, read from the TOC byte (RFC 6716 3.1) by ParleyCore's `OpusTOC`.
#if canImport(ParleyCore)
import ParleyCore
#endif

/// The Opus RTP payload format (RFC 7587).
public enum OpusRTP {
    /// The RTP clock rate of Opus, always 48000 Hz (RFC 7587 4.1).
    public static let clockRate = 48_000
    /// The dynamic payload type Parley uses unless told otherwise (as browsers commonly do).
    public static let defaultPayloadType: UInt8 = 111
    /// The longest legal Opus packet: 120 ms at 48 kHz.
    public static let maxSamplesPerPacket = OpusTOC.maxSamplesAt48k

    /// Samples per channel at 48 kHz of one frame of TOC `config` (0...31).
    @inlinable
    public static func frameSamples(config: UInt8) -> Int {
        OpusTOC.samplesPerFrameAt48k(toc: config << 3)
    }

    /// The number of frames in an Opus packet.
    /// - Throws: ``RTPError/emptyPayload``; ``RTPError/badOpusPacket(_:)`` when code 2 or 3
    ///   lacks its second byte, code 3 declares zero frames or more than 120 ms.
    @inlinable
    public static func frameCount(_ payload: UnsafeRawBufferPointer) throws(RTPError) -> Int {
        try toc(payload).frameCount
    }

    /// The packet's duration in samples per channel at 48 kHz: the RTP timestamp increment.
    /// - Throws: as ``frameCount(_:)``.
    @inlinable
    public static func samples48k(_ payload: UnsafeRawBufferPointer) throws(RTPError) -> Int {
        try toc(payload).totalSamplesAt48k
    }

    /// The payload's ``OpusTOC``, its error as an ``RTPError``.
    @inlinable
    static func toc(_ payload: UnsafeRawBufferPointer) throws(RTPError) -> OpusTOC {
        do throws(OpusPacketError) {
            return try OpusTOC(parsing: payload)
        } catch {
            throw error.kind == .empty ? RTPError.emptyPayload : RTPError.badOpusPacket(error.reason)
        }
    }
}
