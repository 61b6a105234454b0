// Telling RTP from RTCP on one port (RFC 5761 4), the one classifier every layer uses: the
// UDP and SRTP transports, the receive pipelines, the call's demultiplexer, the simulator.
//
//    0                   1
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |V=2|P|X|  CC   |M|     PT      |   RTP: marker bit and payload type
//   |V=2|P|    RC   |   PT (RTCP)   |   RTCP: an 8-bit packet type
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// RTCP packet types are 192...223 (SR 200, RR 201, SDES 202, BYE 203, APP 204, RTPFB 205,
// PSFB 206, XR 207, ...), so the second byte decides: RTP payload types 64...95 with the
// marker bit set would read as RTCP, which is why RFC 5761 4 keeps them out of use on a
// multiplexed port. A reduced-size RTCP packet (RFC 5506) may start with any RTCP type, a
// NACK or PLI included, so only the second byte's range, never a list of types, tells it.

/// Whether a datagram on an RTP/RTCP-multiplexed port is RTCP (RFC 5761 4).
public enum RTPMultiplexing {
    /// The second bytes of RTCP packets: packet types 192...223 (RTP payload types 64...95
    /// with the marker bit, which a multiplexed port must not use).
    public static let rtcpSecondBytes: ClosedRange<UInt8> = 192...223

    /// Whether `secondByte`, a datagram's second byte, makes it RTCP.
    @inlinable @inline(__always)
    public static func isRTCP(secondByte: UInt8) -> Bool { secondByte &- 192 < 32 }

    /// Whether `datagram` is RTCP: at least two bytes, the second within ``rtcpSecondBytes``.
    /// A compound packet and a reduced-size one (RFC 5506, any RTCP type first) both are.
    @inlinable @inline(__always)
    public static func isRTCP(_ datagram: UnsafeRawBufferPointer) -> Bool {
        datagram.count >= 2 && isRTCP(secondByte: datagram[1])
    }

    /// ``isRTCP(_:)`` for the first `length` bytes of a mutable buffer (a datagram being
    /// protected or unprotected in place).
    @inlinable @inline(__always)
    public static func isRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) -> Bool {
        length >= 2 && buffer.count >= 2 && isRTCP(secondByte: buffer[1])
    }
}

/// What a datagram on a WebRTC transport carries, by its first byte (RFC 7983 7), then, for
/// RTP/RTCP, by its second (RFC 5761 4).
public enum WebRTCDatagramKind: Sendable, Hashable {
    /// STUN (first byte 0...3): ICE's connectivity and consent checks.
    case stun
    /// A DTLS record (first byte 20...63).
    case dtls
    /// An RTP packet (first byte 128...191, not RTCP by ``RTPMultiplexing/isRTCP(_:)``).
    case rtp
    /// An RTCP packet (first byte 128...191, second byte 192...223).
    case rtcp
    /// Anything else (empty, ZRTP 16...19, TURN channels 64...79, or bytes no protocol on the
    /// transport starts with): dropped.
    case unknown

    /// The kind of `datagram`. Reads at most two bytes; allocates nothing.
    @inlinable @inline(__always)
    public init(classifying datagram: UnsafeRawBufferPointer) {
        guard let first = datagram.first else { self = .unknown; return }
        switch first {
        case 0...3: self = .stun
        case 20...63: self = .dtls
        case 128...191:
            guard datagram.count >= 2 else { self = .unknown; return }
            self = RTPMultiplexing.isRTCP(secondByte: datagram[1]) ? .rtcp : .rtp
        default: self = .unknown
        }
    }
}
