// RTCP sender and receiver reports (RFC 3550 6.4), BYE (6.6) and compound packets (6.1, A.2),
// and reduced-size RTCP packets (RFC 5506).
//
// Common header:
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |V=2|P|    RC   |   PT=SR=200   |             length            |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                         SSRC of sender                        |
//   +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//   |              NTP timestamp, most significant word             |  SR only
//   |             NTP timestamp, least significant word             |
//   |                         RTP timestamp                         |
//   |                     sender's packet count                     |
//   |                      sender's octet count                     |
//   +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//   |                 SSRC_1 (SSRC of first source)                 |  report block
//   | fraction lost |       cumulative number of packets lost       |
//   |           extended highest sequence number received           |
//   |                      interarrival jitter                      |
//   |                         last SR (LSR)                         |
//   |                   delay since last SR (DLSR)                  |
//   +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//
// `length` is the packet's length in 32-bit words minus one, including the header.

/// A 64-bit NTP timestamp: seconds since 1900 in the high word, a binary fraction in the low.
public struct NTPTimestamp: Hashable, Sendable {
    /// The raw 32.32 fixed-point value.
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Creates a timestamp from seconds since 1900-01-01 (rounded to the nearest 2^-32 s).
    public init(secondsSince1900 seconds: Double) {
        let whole = seconds.rounded(.down)
        let frac = ((seconds - whole) * 4_294_967_296).rounded()
        rawValue = UInt64(whole) << 32 &+ UInt64(Swift.min(frac, 4_294_967_295))
    }

    /// Seconds between 1900-01-01 and the Unix epoch.
    public static let unixEpochOffset: Double = 2_208_988_800

    /// Creates a timestamp from seconds since 1970-01-01.
    public init(unixSeconds: Double) { self.init(secondsSince1900: unixSeconds + Self.unixEpochOffset) }

    /// Seconds since 1900-01-01.
    public var secondsSince1900: Double {
        Double(rawValue >> 32) + Double(rawValue & 0xFFFF_FFFF) / 4_294_967_296
    }

    /// The middle 32 bits, as carried in LSR (RFC 3550 6.4.1): 16.16 fixed-point seconds.
    public var middle32: UInt32 { UInt32(truncatingIfNeeded: rawValue >> 16) }
}

/// A reception report block: what a receiver says about one source.
public struct RTCPReceptionReport: Equatable, Sendable {
    /// The source reported on.
    public var ssrc: UInt32
    /// Packets lost since the previous report divided by those expected, times 256.
    public var fractionLost: UInt8
    /// Packets lost since reception began (24-bit signed on the wire: -2^23...2^23-1).
    public var cumulativeLost: Int32
    /// Highest sequence number received, with the wrap count in the high 16 bits.
    public var extendedHighestSequence: UInt32
    /// Interarrival jitter in timestamp units.
    public var jitter: UInt32
    /// Middle 32 bits of the NTP timestamp of the last SR received (0 if none).
    public var lastSenderReport: UInt32
    /// Delay between receiving that SR and sending this report, in 1/65536 s (0 if none).
    public var delaySinceLastSenderReport: UInt32

    public init(ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, extendedHighestSequence: UInt32,
                jitter: UInt32, lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequence = extendedHighestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// The round-trip time this report implies, in seconds, when it reaches the sender at NTP
    /// time `arrival` (RFC 3550 6.4.1: A - LSR - DLSR, in 16.16 seconds); nil without an LSR.
    public func roundTripTime(arrival: NTPTimestamp) -> Double? {
        guard lastSenderReport != 0 else { return nil }
        let rtt = arrival.middle32 &- lastSenderReport &- delaySinceLastSenderReport
        return Double(Int32(bitPattern: rtt)) / 65536
    }

    static let size = 24

    func write(_ b: UnsafeMutableRawBufferPointer, _ p: Int) {
        store32(b, p, ssrc)
        store8(b, p + 4, fractionLost)
        store24(b, p + 5, UInt32(bitPattern: cumulativeLost) & 0xFF_FFFF)
        store32(b, p + 8, extendedHighestSequence)
        store32(b, p + 12, jitter)
        store32(b, p + 16, lastSenderReport)
        store32(b, p + 20, delaySinceLastSenderReport)
    }

    static func read(_ b: UnsafeRawBufferPointer, _ p: Int) -> RTCPReceptionReport {
        let raw = load24(b, p + 5)
        let lost = Int32(bitPattern: raw << 8) >> 8  // sign-extend 24 bits
        return RTCPReceptionReport(ssrc: load32(b, p), fractionLost: load8(b, p + 4), cumulativeLost: lost,
                                   extendedHighestSequence: load32(b, p + 8), jitter: load32(b, p + 12),
                                   lastSenderReport: load32(b, p + 16),
                                   delaySinceLastSenderReport: load32(b, p + 20))
    }
}

/// An RTCP sender report (packet type 200).
public struct RTCPSenderReport: Equatable, Sendable {
    public var ssrc: UInt32
    /// Wall-clock time at which `rtpTimestamp` was sampled: the NTP/RTP mapping.
    public var ntpTimestamp: NTPTimestamp
    /// The RTP timestamp corresponding to `ntpTimestamp`, in the stream's clock.
    public var rtpTimestamp: UInt32
    /// RTP packets sent since the start.
    public var packetCount: UInt32
    /// Payload octets sent since the start.
    public var octetCount: UInt32
    /// At most 31 report blocks.
    public var reports: [RTCPReceptionReport]

    public init(ssrc: UInt32, ntpTimestamp: NTPTimestamp, rtpTimestamp: UInt32, packetCount: UInt32,
                octetCount: UInt32, reports: [RTCPReceptionReport] = []) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reports = reports
    }

    /// The wall-clock time (seconds since 1900) of RTP timestamp `timestamp` by this report's
    /// NTP/RTP mapping at `clockRate` Hz (timestamps within +-2^31 of the report's).
    public func ntpSeconds(ofRTPTimestamp timestamp: UInt32, clockRate: Int) -> Double {
        let delta = Int32(bitPattern: timestamp &- rtpTimestamp)
        return ntpTimestamp.secondsSince1900 + Double(delta) / Double(clockRate)
    }
}

/// An RTCP receiver report (packet type 201).
public struct RTCPReceiverReport: Equatable, Sendable {
    public var ssrc: UInt32
    /// At most 31 report blocks.
    public var reports: [RTCPReceptionReport]

    public init(ssrc: UInt32, reports: [RTCPReceptionReport] = []) {
        self.ssrc = ssrc
        self.reports = reports
    }
}

/// An RTCP BYE (RFC 3550 6.6, packet type 203): the sources named leave the session.
///
///     |V=2|P|    SC   |   PT=BYE=203  |             length            |
///     |                           SSRC/CSRC                           |  SC times
///     |     length    |               reason for leaving            ...  optional
public struct RTCPBye: Equatable, Sendable {
    /// The BYE packet type.
    public static let packetType: UInt8 = 203
    /// The sources leaving (at most 31).
    public var ssrcs: [UInt32]
    /// Why, as text (at most 255 UTF-8 bytes); nil (or empty) sends none.
    public var reason: String?

    /// A BYE for `ssrcs`, with `reason` as its text if given.
    public init(ssrcs: [UInt32], reason: String? = nil) {
        self.ssrcs = ssrcs
        self.reason = reason
    }

    var reasonLength: Int { reason?.utf8.count ?? 0 }
}

/// One packet of a compound RTCP packet.
public enum RTCPPacket: Equatable, Sendable {
    case senderReport(RTCPSenderReport)
    case receiverReport(RTCPReceiverReport)
    /// A generic NACK (RFC 4585 6.2.1: PT 205, FMT 1): packets the receiver asks again.
    case genericNACK(RTCPGenericNACK)
    /// A picture loss indication (RFC 4585 6.3.1: PT 206, FMT 1): the receiver wants a keyframe.
    case pictureLossIndication(RTCPPictureLossIndication)
    /// A BYE (RFC 3550 6.6): the sources named leave.
    case bye(RTCPBye)
    /// Another packet type (SDES, APP, other feedback formats): its type, count field and
    /// body after the 4-byte common header (padding removed).
    case other(packetType: UInt8, count: UInt8, body: [UInt8])

    public static let senderReportType: UInt8 = 200
    public static let receiverReportType: UInt8 = 201

    /// Bytes this packet takes on the wire.
    public var marshalSize: Int {
        switch self {
        case .senderReport(let sr): return 28 + RTCPReceptionReport.size * sr.reports.count
        case .receiverReport(let rr): return 8 + RTCPReceptionReport.size * rr.reports.count
        case .genericNACK(let nack): return 12 + 4 * nack.items.count
        case .pictureLossIndication: return 12
        case .bye(let bye):
            let reason = bye.reasonLength
            return 4 + 4 * bye.ssrcs.count + (reason == 0 ? 0 : (1 + reason + 3) & ~3)
        case .other(_, _, let body): return 4 + (body.count + 3) & ~3
        }
    }

    /// Writes this packet at the start of `buffer`; returns its length.
    /// - Throws: ``RTPError/bufferTooSmall(needed:available:)``; ``RTPError/fieldOutOfRange(_:)``
    ///   for more than 31 report blocks or BYE sources, a count above 31, a BYE reason longer
    ///   than 255 bytes, a generic NACK without items or longer than the 16-bit length field allows.
    public func marshal(into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let size = marshalSize
        guard size <= 4 * 65536 else { throw .fieldOutOfRange("RTCP packet longer than 65536 words") }
        guard buffer.count >= size else { throw .bufferTooSmall(needed: size, available: buffer.count) }
        switch self {
        case .genericNACK(let nack):
            return try nack.items.withUnsafeBufferPointer { items throws(RTPError) in
                try RTCPGenericNACK.marshal(senderSSRC: nack.senderSSRC, mediaSSRC: nack.mediaSSRC, items: items, into: buffer)
            }
        case .pictureLossIndication(let pli):
            return try pli.marshal(into: buffer)
        default: break
        }
        store16(buffer, 2, UInt16(size / 4 - 1))
        switch self {
        case .genericNACK, .pictureLossIndication: break  // written above
        case .senderReport(let sr):
            guard sr.reports.count <= 31 else { throw .fieldOutOfRange("more than 31 report blocks") }
            store8(buffer, 0, 0x80 | UInt8(sr.reports.count))
            store8(buffer, 1, Self.senderReportType)
            store32(buffer, 4, sr.ssrc)
            store32(buffer, 8, UInt32(truncatingIfNeeded: sr.ntpTimestamp.rawValue >> 32))
            store32(buffer, 12, UInt32(truncatingIfNeeded: sr.ntpTimestamp.rawValue))
            store32(buffer, 16, sr.rtpTimestamp)
            store32(buffer, 20, sr.packetCount)
            store32(buffer, 24, sr.octetCount)
            for (i, r) in sr.reports.enumerated() { r.write(buffer, 28 + RTCPReceptionReport.size * i) }
        case .receiverReport(let rr):
            guard rr.reports.count <= 31 else { throw .fieldOutOfRange("more than 31 report blocks") }
            store8(buffer, 0, 0x80 | UInt8(rr.reports.count))
            store8(buffer, 1, Self.receiverReportType)
            store32(buffer, 4, rr.ssrc)
            for (i, r) in rr.reports.enumerated() { r.write(buffer, 8 + RTCPReceptionReport.size * i) }
        case .bye(let bye):
            guard bye.ssrcs.count <= 31 else { throw .fieldOutOfRange("more than 31 BYE sources") }
            let reason = bye.reasonLength
            guard reason <= 255 else { throw .fieldOutOfRange("BYE reason longer than 255 bytes") }
            store8(buffer, 0, 0x80 | UInt8(bye.ssrcs.count))
            store8(buffer, 1, RTCPBye.packetType)
            for (i, ssrc) in bye.ssrcs.enumerated() { store32(buffer, 4 + 4 * i, ssrc) }
            var p = 4 + 4 * bye.ssrcs.count
            if let text = bye.reason, reason > 0 {
                store8(buffer, p, UInt8(reason))
                p += 1
                for byte in text.utf8 { store8(buffer, p, byte); p += 1 }
                while p < size { store8(buffer, p, 0); p += 1 }
            }
        case .other(let type, let count, let body):
            guard count <= 31 else { throw .fieldOutOfRange("RTCP count above 31") }
            store8(buffer, 0, 0x80 | count)
            store8(buffer, 1, type)
            body.withUnsafeBytes { src in
                UnsafeMutableRawBufferPointer(rebasing: buffer[4..<(4 + body.count)]).copyMemory(from: src)
            }
            for i in (4 + body.count)..<size { store8(buffer, i, 0) }
        }
        return size
    }
}

/// Compound RTCP packets: several RTCP packets back to back in one datagram.
public enum RTCPCompound {
    /// Parses a compound packet, validating it as RFC 3550 A.2 does: every packet version 2,
    /// the first an SR or RR, padding only in the last, lengths adding up to the datagram; report
    /// counts, BYE source counts and reasons, and the lengths of generic NACKs and PLIs
    /// (RFC 4585 6.1) fitting their packets. With `reducedSize`, a reduced-size RTCP packet
    /// (RFC 5506) is taken too: the first packet may be of any RTCP type (a lone PLI or NACK).
    /// - Throws: ``RTPError`` for any violation; nothing is returned for a partly bad datagram.
    public static func parse(_ bytes: UnsafeRawBufferPointer, reducedSize: Bool = false) throws(RTPError) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        try walk(bytes, reducedSize: reducedSize) { (view: RTCPPacketView) throws(RTPError) in packets.append(view.packet) }
        return packets
    }

    /// Validates a compound packet as ``parse(_:reducedSize:)`` does, then hands each of its
    /// packets to `body` as a view over `bytes`, without allocating (the receive path of RTCP
    /// feedback). Nothing is visited when any part of the datagram is invalid.
    /// - Throws: ``RTPError`` for any violation.
    public static func forEachPacket(in bytes: UnsafeRawBufferPointer, reducedSize: Bool = false,
                                     _ body: (RTCPPacketView) -> Void) throws(RTPError) {
        try walk(bytes, reducedSize: reducedSize) { (_: RTCPPacketView) throws(RTPError) in }
        try walk(bytes, reducedSize: reducedSize) { (view: RTCPPacketView) throws(RTPError) in body(view) }
    }

    /// Validates every packet's header and length, calling `body` for each valid one in order.
    private static func walk(_ bytes: UnsafeRawBufferPointer, reducedSize: Bool,
                             _ body: (RTCPPacketView) throws(RTPError) -> Void) throws(RTPError) {
        var p = 0
        let n = bytes.count
        guard n >= 4 else { throw .truncatedHeader(needed: 4, available: n) }
        while p < n {
            guard n - p >= 4 else { throw .truncatedHeader(needed: 4, available: n - p) }
            let b0 = load8(bytes, p)
            let version = b0 >> 6
            guard version == 2 else { throw .badVersion(version) }
            let type = load8(bytes, p + 1)
            let count = Int(b0 & 0x1F)
            let length = (Int(load16(bytes, p + 2)) + 1) * 4
            guard length <= n - p else { throw .badRTCPLength(declared: length, available: n - p) }
            if p == 0, reducedSize ? !RTPMultiplexing.isRTCP(secondByte: type)
                : type != RTCPPacket.senderReportType && type != RTCPPacket.receiverReportType {
                throw .badCompoundStart(packetType: type)
            }
            var bodyEnd = p + length
            if b0 & 0x20 != 0 {
                guard p + length == n else { throw .badPadding(count: 0, available: 0) }
                let pad = Int(load8(bytes, n - 1))
                guard pad > 0, pad <= length - 4 else { throw .badPadding(count: pad, available: length - 4) }
                bodyEnd -= pad
            }
            let bodyLength = bodyEnd - p - 4
            switch type {
            case RTCPPacket.senderReportType:
                let needed = 28 + RTCPReceptionReport.size * count
                guard needed <= bodyEnd - p else { throw .badReportCount(count: count, length: bodyEnd - p) }
            case RTCPPacket.receiverReportType:
                let needed = 8 + RTCPReceptionReport.size * count
                guard needed <= bodyEnd - p else { throw .badReportCount(count: count, length: bodyEnd - p) }
            case RTCPBye.packetType:
                guard 4 * count <= bodyLength else { throw .badReportCount(count: count, length: bodyEnd - p) }
                let reasonAt = p + 4 + 4 * count
                if reasonAt < bodyEnd {
                    let reason = Int(load8(bytes, reasonAt))
                    guard reasonAt + 1 + reason <= bodyEnd else {
                        throw .badByeReason(length: reason, available: bodyEnd - reasonAt - 1)
                    }
                }
            case RTCPGenericNACK.packetType where count == Int(RTCPGenericNACK.format):
                guard bodyLength >= 12, bodyLength % 4 == 0 else {
                    throw .badFeedbackLength(packetType: type, format: UInt8(count), length: bodyLength)
                }
            case RTCPPictureLossIndication.packetType where count == Int(RTCPPictureLossIndication.format):
                guard bodyLength == 8 else {
                    throw .badFeedbackLength(packetType: type, format: UInt8(count), length: bodyLength)
                }
            default:
                break
            }
            try body(RTCPPacketView(packetType: type, count: UInt8(count),
                                    packet: UnsafeRawBufferPointer(rebasing: bytes[p..<bodyEnd])))
            p += length
        }
    }

    /// Bytes `packets` take as one compound packet.
    public static func marshalSize(_ packets: [RTCPPacket]) -> Int {
        packets.reduce(0) { $0 + $1.marshalSize }
    }

    /// Writes `packets` back to back into `buffer`; returns the total length.
    public static func marshal(_ packets: [RTCPPacket], into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let total = marshalSize(packets)
        guard buffer.count >= total else { throw .bufferTooSmall(needed: total, available: buffer.count) }
        var p = 0
        for packet in packets {
            p += try packet.marshal(into: UnsafeMutableRawBufferPointer(rebasing: buffer[p...]))
        }
        return p
    }

    /// Convenience: the compound packet as a new array (allocates).
    public static func marshalled(_ packets: [RTCPPacket]) throws(RTPError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: marshalSize(packets))
        let r: Result<Int, RTPError> = out.withUnsafeMutableBytes { b in
            do throws(RTPError) { return .success(try marshal(packets, into: b)) } catch { return .failure(error) }
        }
        _ = try r.get()
        return out
    }
}
