/// Why a packet or payload could not be parsed or written.
///
/// Every malformed input maps to one case; parsers never trap on bad bytes. Receivers count
/// these in ``RTPReceiveCounters`` and drop the packet.
public enum RTPError: Error, Equatable, Sendable {
    /// Fewer bytes than the fixed part of the structure needs (RTP: 12; RTCP: 4 + body).
    case truncatedHeader(needed: Int, available: Int)
    /// The version field is not 2.
    case badVersion(UInt8)
    /// The padding count in the last byte is zero or longer than the packet body allows.
    case badPadding(count: Int, available: Int)
    /// The CSRC list (4 bytes per CSRC count) runs past the end of the packet.
    case csrcPastEnd(count: Int, available: Int)
    /// The header extension's length field runs past the end of the packet.
    case extensionPastEnd(needed: Int, available: Int)
    /// An RFC 8285 extension element's length runs past the end of the extension block.
    case extensionElementPastEnd(id: UInt8)
    /// An extension element ID or data length cannot be written in the requested form
    /// (one-byte form: ID 1...14, 1...16 bytes; two-byte form: ID 1...255, 0...255 bytes).
    case invalidExtensionElement(id: UInt8, length: Int)
    /// The caller's output buffer is smaller than ``RTPHeader/marshalSize``.
    case bufferTooSmall(needed: Int, available: Int)
    /// A field value cannot be represented on the wire (for example more than 15 CSRCs).
    case fieldOutOfRange(String)
    /// An RTCP packet's length field does not match the bytes present, or a compound packet
    /// breaks the RFC 3550 A.2 rules (first packet not SR/RR, padding before the last one).
    case badRTCPLength(declared: Int, available: Int)
    /// A compound RTCP packet does not start with an SR or RR (a reduced-size one, RFC 5506,
    /// with an RTCP packet type).
    case badCompoundStart(packetType: UInt8)
    /// An RTCP report count (or a BYE's source count) does not fit the packet length.
    case badReportCount(count: Int, length: Int)
    /// An RTCP BYE's reason runs past the end of its packet: its length byte says `length`
    /// bytes where `available` follow it.
    case badByeReason(length: Int, available: Int)
    /// An RTCP feedback message (RFC 4585 6.1) of a known kind has the wrong length: shorter
    /// than its two SSRCs, a generic NACK (PT 205, FMT 1) without a whole number of at least one
    /// 4-byte FCI entry, or a PLI (PT 206, FMT 1) with FCI. `length` is the body after the
    /// 4-byte common header.
    case badFeedbackLength(packetType: UInt8, format: UInt8, length: Int)
    /// A payload is empty where at least one byte is needed (Opus TOC, VP8 descriptor).
    case emptyPayload
    /// The Opus packet's TOC and frame-count byte do not describe a valid packet (RFC 6716 3.2).
    case badOpusPacket(String)
    /// The VP8 payload descriptor announces bytes that are not there (RFC 7741 4.2).
    case vp8DescriptorTruncated(needed: Int, available: Int)
    /// The VP8 payload header (first partition) is missing or shorter than its 3 (or 10) bytes.
    case vp8PayloadHeaderTruncated(needed: Int, available: Int)
    /// A VP8 keyframe header lacks the start code 0x9d 0x01 0x2a (RFC 6386 9.1).
    case vp8BadStartCode
    /// The VP9 payload descriptor announces bytes that are not there.
    case vp9DescriptorTruncated(needed: Int, available: Int)
}
