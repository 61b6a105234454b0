// Opus over RTP (RFC 7587): one Opus packet per RTP payload, no extra header; the RTP clock is
// always 48 kHz whatever the encoder's internal rate, and the timestamp advances by the
// packet's duration. The duration comes from the TOC byte (RFC 6716 3.1):
//
//    0 1 2 3 4 5 6 7
//   +-+-+-+-+-+-+-+-+
//   | config  |s| c |
//   +-+-+-+-+-+-+-+-+
//
// config 0-11 SILK (10/20/40/60 ms), 12-15 hybrid (10/20 ms), 16-31 CELT (2.5/5/10/20 ms);
// c: 0 one frame, 1 and 2 two frames, 3 an arbitrary count M in the next byte's low 6 bits.

/// The Opus RTP payload format (RFC 7587).
public enum OpusRTP {
    /// The RTP clock rate of Opus, always 48000 Hz (RFC 7587 4.1).
    public static let clockRate = 48_000
    /// The dynamic payload type Parley uses unless told otherwise (as browsers commonly do).
    public static let defaultPayloadType: UInt8 = 111
    /// The longest legal Opus packet: 120 ms at 48 kHz.
    public static let maxSamplesPerPacket = 5_760

    /// Samples per channel at 48 kHz of one frame of TOC `config` (0...31).
    @inlinable
    public static func frameSamples(config: UInt8) -> Int {
        switch config {
        case 0...11:
            let c = config & 3
            return c == 3 ? 2880 : 480 << Int(c)  // 10, 20, 40, 60 ms
        case 12...15: return (config & 1) == 0 ? 480 : 960  // 10, 20 ms
        default: return 120 << Int(config & 3)  // 2.5, 5, 10, 20 ms
        }
    }

    /// The number of frames in an Opus packet.
    /// - Throws: ``RTPError/emptyPayload``; ``RTPError/badOpusPacket(_:)`` when code 2 or 3
    ///   lacks its second byte or code 3 declares zero frames.
    @inlinable
    public static func frameCount(_ payload: UnsafeRawBufferPointer) throws(RTPError) -> Int {
        guard let toc = payload.first else { throw .emptyPayload }
        switch toc & 3 {
        case 0: return 1
        case 1: return 2
        case 2:
            guard payload.count >= 2 else { throw .badOpusPacket("code 2 packet without a frame length") }
            return 2
        default:
            guard payload.count >= 2 else { throw .badOpusPacket("code 3 packet without a frame count byte") }
            let m = Int(payload[1] & 0x3F)
            guard m > 0 else { throw .badOpusPacket("code 3 packet with zero frames") }
            return m
        }
    }

    /// The packet's duration in samples per channel at 48 kHz: the RTP timestamp increment.
    /// - Throws: as ``frameCount(_:)``, and ``RTPError/badOpusPacket(_:)`` above 120 ms.
    @inlinable
    public static func samples48k(_ payload: UnsafeRawBufferPointer) throws(RTPError) -> Int {
        let frames = try frameCount(payload)
        let total = frames * frameSamples(config: payload[0] >> 3)
        guard total <= maxSamplesPerPacket else { throw .badOpusPacket("longer than 120 ms (\(total) samples)") }
        return total
    }
}
