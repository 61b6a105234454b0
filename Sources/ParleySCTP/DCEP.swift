// The Data Channel Establishment Protocol (RFC 8832): DATA_CHANNEL_OPEN and DATA_CHANNEL_ACK,
// and the payload protocol identifiers of WebRTC's data channels (RFC 8831 section 8).
// Pure Swift: parsed and written without any C library.

/// How a data channel delivers: reliably, or giving up a message after a number of
/// retransmissions or a lifetime (partial reliability, RFC 3758).
public enum DataChannelReliability: Sendable, Hashable {
    /// Every message arrives.
    case reliable
    /// A message is retransmitted at most this many times.
    case maxRetransmits(UInt32)
    /// A message is given up this many milliseconds after it was sent.
    case maxLifetime(milliseconds: UInt32)
}

/// A data channel's parameters, as DATA_CHANNEL_OPEN carries them (RFC 8832 section 5.1).
public struct DataChannelParameters: Sendable, Hashable {
    /// The channel's name (UTF-8, at most 65535 bytes).
    public var label: String
    /// The subprotocol (UTF-8, at most 65535 bytes; empty for none).
    public var `protocol`: String
    /// Whether messages arrive in the order they were sent.
    public var ordered: Bool
    /// Reliable or partially reliable.
    public var reliability: DataChannelReliability
    /// The priority (RFC 8832 section 5.1: 128 below normal, 256 normal, 512 high, 1024 extra
    /// high).
    public var priority: UInt16

    /// Parameters of a channel; the defaults are an ordered, reliable channel of normal priority.
    public init(label: String, protocol: String = "", ordered: Bool = true,
                reliability: DataChannelReliability = .reliable, priority: UInt16 = 256) {
        self.label = label
        self.protocol = `protocol`
        self.ordered = ordered
        self.reliability = reliability
        self.priority = priority
    }
}

/// Why bytes are not a DCEP message.
public enum DCEPError: Error, Sendable, Equatable {
    /// No bytes at all.
    case empty
    /// A message type other than DATA_CHANNEL_OPEN (0x03) and DATA_CHANNEL_ACK (0x02).
    case unknownMessageType(UInt8)
    /// Fewer bytes than the fields (or the label and protocol lengths) need.
    case truncated(needed: Int, have: Int)
    /// Bytes past the end of the message.
    case trailingBytes(Int)
    /// A channel type RFC 8832 section 8.2.2 does not define.
    case unknownChannelType(UInt8)
    /// A label or protocol that is not UTF-8 (the field's name).
    case invalidUTF8(field: String)
    /// A label or protocol longer than the 16-bit length field holds (the field's name).
    case fieldTooLong(field: String)
}

/// A DCEP message: what a channel's opener sends on its stream first, and the answer.
public enum DCEPMessage: Sendable, Hashable {
    /// DATA_CHANNEL_OPEN: the channel's parameters.
    case open(DataChannelParameters)
    /// DATA_CHANNEL_ACK.
    case ack

    /// The message types (RFC 8832 section 8.2.1).
    static let openType: UInt8 = 0x03
    static let ackType: UInt8 = 0x02
    /// Bytes of DATA_CHANNEL_OPEN before the label.
    static let openHeaderSize = 12

    /// Reads a DCEP message (the payload of an SCTP message with PPID 50).
    /// - Throws: a ``DCEPError`` naming what is wrong.
    public init(parsing bytes: UnsafeRawBufferPointer) throws(DCEPError) {
        guard let type = bytes.first else { throw .empty }
        switch type {
        case DCEPMessage.ackType:
            guard bytes.count == 1 else { throw .trailingBytes(bytes.count - 1) }
            self = .ack
        case DCEPMessage.openType:
            let header = DCEPMessage.openHeaderSize
            guard bytes.count >= header else { throw .truncated(needed: header, have: bytes.count) }
            func u16(_ at: Int) -> Int { Int(bytes[at]) << 8 | Int(bytes[at + 1]) }
            let channelType = bytes[1]
            let priority = UInt16(u16(2))
            let value = UInt32(u16(4)) << 16 | UInt32(u16(6))
            let labelLength = u16(8), protocolLength = u16(10)
            let needed = header + labelLength + protocolLength
            guard bytes.count >= needed else { throw .truncated(needed: needed, have: bytes.count) }
            guard bytes.count == needed else { throw .trailingBytes(bytes.count - needed) }
            let reliability: DataChannelReliability
            switch channelType & 0x7F {
            case 0x00: reliability = .reliable
            case 0x01: reliability = .maxRetransmits(value)
            case 0x02: reliability = .maxLifetime(milliseconds: value)
            default: throw .unknownChannelType(channelType)
            }
            guard let label = String(validating: bytes[header..<(header + labelLength)], as: UTF8.self) else {
                throw .invalidUTF8(field: "label")
            }
            guard let proto = String(validating: bytes[(header + labelLength)..<needed], as: UTF8.self) else {
                throw .invalidUTF8(field: "protocol")
            }
            self = .open(DataChannelParameters(label: label, protocol: proto, ordered: channelType & 0x80 == 0,
                                               reliability: reliability, priority: priority))
        default:
            throw .unknownMessageType(type)
        }
    }

    /// Reads a DCEP message from an array.
    /// - Throws: a ``DCEPError`` naming what is wrong.
    public init(parsing bytes: [UInt8]) throws(DCEPError) {
        let result: Result<DCEPMessage, DCEPError> = bytes.withUnsafeBytes { raw in
            do throws(DCEPError) { return .success(try DCEPMessage(parsing: raw)) } catch { return .failure(error) }
        }
        self = try result.get()
    }

    /// The message's bytes.
    /// - Throws: ``DCEPError/fieldTooLong(field:)`` for a label or protocol over 65535 bytes.
    public func serialized() throws(DCEPError) -> [UInt8] {
        switch self {
        case .ack:
            return [DCEPMessage.ackType]
        case .open(let p):
            let label = Array(p.label.utf8), proto = Array(p.protocol.utf8)
            guard label.count <= 0xFFFF else { throw .fieldTooLong(field: "label") }
            guard proto.count <= 0xFFFF else { throw .fieldTooLong(field: "protocol") }
            var channelType: UInt8 = p.ordered ? 0x00 : 0x80
            let value: UInt32
            switch p.reliability {
            case .reliable: value = 0
            case .maxRetransmits(let n): channelType |= 0x01; value = n
            case .maxLifetime(let ms): channelType |= 0x02; value = ms
            }
            var out: [UInt8] = []
            out.reserveCapacity(DCEPMessage.openHeaderSize + label.count + proto.count)
            out.append(DCEPMessage.openType)
            out.append(channelType)
            out.append(UInt8(p.priority >> 8)); out.append(UInt8(truncatingIfNeeded: p.priority))
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
            out.append(UInt8(label.count >> 8)); out.append(UInt8(truncatingIfNeeded: label.count))
            out.append(UInt8(proto.count >> 8)); out.append(UInt8(truncatingIfNeeded: proto.count))
            out += label
            out += proto
            return out
        }
    }
}

/// The SCTP payload protocol identifiers of WebRTC's data channels (RFC 8831 section 8).
public enum DataChannelPPID {
    /// DCEP messages.
    public static let dcep: UInt32 = 50
    /// A text message (UTF-8).
    public static let string: UInt32 = 51
    /// A binary message.
    public static let binary: UInt32 = 53
    /// An empty text message (sent as one byte, which the receiver ignores).
    public static let stringEmpty: UInt32 = 56
    /// An empty binary message (sent as one byte, which the receiver ignores).
    public static let binaryEmpty: UInt32 = 57
}
