// Pure Swift: compiled standalone by the `opus-packet` and `rtp-payloads` fuzz targets.
//
// The Opus TOC byte and frame count (RFC 6716 3.1-3.2), the one parser of them: ParleyRTP's
// `OpusRTP` (RTP timestamp increments) and ParleyCodecs' `OpusPacketInfo` (full framing) build
// on it.
//
//    0 1 2 3 4 5 6 7
//   +-+-+-+-+-+-+-+-+
//   | config  |s| c |
//   +-+-+-+-+-+-+-+-+
//
// config 0-11 SILK (10/20/40/60 ms), 12-15 hybrid (10/20 ms), 16-31 CELT (2.5/5/10/20 ms);
// s stereo; c: 0 one frame, 1 two equal frames, 2 two frames (the first one's length
// follows), 3 an arbitrary count M in the next byte's low 6 bits.

/// Why bytes are not a valid Opus packet (RFC 6716 3): the one error of Opus packet parsing.
///
/// Threading: a value type; freely sendable.
public struct OpusPacketError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of problem it is.
    public enum Kind: Hashable, Sendable {
        /// No bytes at all (not even the TOC byte).
        case empty
        /// The bytes break a framing rule; ``OpusPacketError/reason`` says which, and where.
        case malformed
    }

    /// What kind of problem it is.
    public var kind: Kind
    /// The rule that failed and the byte offset where (e.g. "code 3 packet declares 0 frames").
    public var reason: String

    /// Creates an error of `kind` explained by `reason`.
    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    /// The ``reason``.
    public var description: String { reason }
}

/// An Opus packet's table of contents: the TOC byte and the frame count it (and, for code 3,
/// the frame-count byte) declares, validated against RFC 6716 3.1-3.2 and the 120 ms limit.
///
/// It reads at most the first two bytes; the frame lengths and padding are
/// `OpusPacketInfo`'s (ParleyCodecs). Parsing allocates nothing.
///
/// Threading: a value type; freely sendable.
public struct OpusTOC: Hashable, Sendable {
    /// The longest duration a packet may carry, in samples per channel at 48 kHz (120 ms,
    /// RFC 6716 3.4 [R5]).
    public static let maxSamplesAt48k = 5_760

    /// The TOC byte (the packet's first byte).
    public let toc: UInt8
    /// Number of frames in the packet (1...48).
    public let frameCount: Int
    /// Bytes the TOC takes: 1, or 2 for code 3 (the TOC and the frame-count byte).
    public let length: Int

    /// The configuration number, 0...31.
    @inlinable public var configuration: Int { Int(toc >> 3) }
    /// The frame-count code (the two low bits), 0...3.
    @inlinable public var frameCountCode: Int { Int(toc & 0x3) }
    /// Coded channels: 1 (mono) or 2 (stereo).
    @inlinable public var channels: Int { (toc & 0x4) != 0 ? 2 : 1 }
    /// Samples per channel in one frame at 48 kHz.
    @inlinable public var samplesPerFrameAt48k: Int { Self.samplesPerFrameAt48k(toc: toc) }
    /// Samples per channel in the whole packet at 48 kHz (at most ``maxSamplesAt48k``).
    @inlinable public var totalSamplesAt48k: Int { frameCount * samplesPerFrameAt48k }

    /// Samples per channel of one frame at 48 kHz encoded by a TOC byte (120 = 2.5 ms ...
    /// 2880 = 60 ms).
    @inlinable
    public static func samplesPerFrameAt48k(toc: UInt8) -> Int {
        let c = Int(toc >> 3)
        if c >= 16 { return 120 << (c & 3) }           // CELT: 2.5, 5, 10, 20 ms
        if c >= 12 { return (c & 1) == 0 ? 480 : 960 } // hybrid: 10, 20 ms
        return c & 3 == 3 ? 2880 : 480 << (c & 3)      // SILK: 10, 20, 40, 60 ms
    }

    /// Reads the TOC and frame count at the start of `packet` (one complete Opus packet).
    /// - Throws: ``OpusPacketError`` (``OpusPacketError/Kind/empty`` for no bytes) when code 2
    ///   lacks its first frame's length byte, code 3 lacks its frame-count byte or declares
    ///   zero frames, or the frames add up to more than 120 ms.
    @inlinable
    public init(parsing packet: UnsafeRawBufferPointer) throws(OpusPacketError) {
        guard let toc = packet.first else {
            throw OpusPacketError(.empty, "empty packet (needs at least the TOC byte)")
        }
        self.toc = toc
        switch toc & 0x3 {
        case 0:
            frameCount = 1
            length = 1
        case 1:
            frameCount = 2
            length = 1
        case 2:
            guard packet.count >= 2 else {
                throw OpusPacketError(.malformed, "code 2 first frame: missing length byte at offset 1")
            }
            frameCount = 2
            length = 1
        default:
            guard packet.count >= 2 else {
                throw OpusPacketError(.malformed, "code 3 packet without its frame-count byte")
            }
            let count = Int(packet[1] & 0x3F)
            guard count > 0 else { throw OpusPacketError(.malformed, "code 3 packet declares 0 frames") }
            let frameSamples = Self.samplesPerFrameAt48k(toc: toc)
            guard count * frameSamples <= Self.maxSamplesAt48k else {
                throw OpusPacketError(.malformed, "code 3 packet of \(count) frames x \(frameSamples) samples exceeds 120 ms")
            }
            frameCount = count
            length = 2
        }
    }
}
