// RTCP feedback messages (RFC 4585 6.1-6.3): generic NACK and picture loss indication.
//
// Common feedback header:
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |V=2|P|   FMT   |       PT      |          length               |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                  SSRC of packet sender                        |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                  SSRC of media source                         |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   :            Feedback Control Information (FCI)                 :
//
// Generic NACK (PT 205, FMT 1): FCI is one or more 32-bit entries, a packet ID (PID, the
// first lost sequence number) and a bitmask of following lost packets (BLP: bit i set means
// PID + i + 1 is lost too). PLI (PT 206, FMT 1): no FCI, length 2.

/// One FCI entry of a generic NACK: a lost packet and up to 16 lost packets after it.
public struct RTCPNACKItem: Hashable, Sendable {
    /// The first lost packet's sequence number (PID).
    public var packetID: UInt16
    /// Bit i set: packet `packetID + i + 1` (wrapping) is lost too (BLP).
    public var lostBitmask: UInt16

    /// An entry for `packetID` and the following packets flagged in `lostBitmask`.
    public init(packetID: UInt16, lostBitmask: UInt16 = 0) {
        self.packetID = packetID
        self.lostBitmask = lostBitmask
    }

    /// Packets this entry reports lost (1 to 17).
    public var lostCount: Int { 1 + lostBitmask.nonzeroBitCount }

    /// Calls `body` with each sequence number this entry reports lost, in ascending order.
    @inlinable
    public func forEachLost(_ body: (UInt16) -> Void) {
        body(packetID)
        var m = lostBitmask
        while m != 0 {
            let bit = m.trailingZeroBitCount
            body(packetID &+ UInt16(bit + 1))
            m &= m &- 1
        }
    }

    /// The sequence numbers this entry reports lost, in ascending (wrapping) order.
    public var lostSequenceNumbers: [UInt16] {
        var out: [UInt16] = []
        out.reserveCapacity(lostCount)
        forEachLost { out.append($0) }
        return out
    }
}

/// Turns lost sequence numbers, given in ascending (wrapping) order, into the fewest generic
/// NACK entries, without allocating: each entry starts at the first number it does not yet
/// cover and takes every later one within 16 (greedy covering, optimal for fixed-width spans).
public struct RTCPNACKItemBuilder: Sendable {
    private var current: RTCPNACKItem?

    /// An empty builder.
    public init() {}

    /// Adds the next lost sequence number (at or after the previous one, wrapping). Returns the
    /// entry it closes when `sequenceNumber` does not fit the open one. A repeat is ignored.
    public mutating func add(_ sequenceNumber: UInt16) -> RTCPNACKItem? {
        guard var item = current else {
            current = RTCPNACKItem(packetID: sequenceNumber)
            return nil
        }
        let distance = sequenceNumber &- item.packetID
        if distance == 0 { return nil }
        if distance <= 16 {
            item.lostBitmask |= 1 << (distance - 1)
            current = item
            return nil
        }
        current = RTCPNACKItem(packetID: sequenceNumber)
        return item
    }

    /// The last open entry, if any (the builder is empty afterwards).
    public mutating func finish() -> RTCPNACKItem? {
        defer { current = nil }
        return current
    }
}

/// A generic NACK (RFC 4585 6.2.1): the receiver `senderSSRC` asks the source `mediaSSRC` to
/// send the listed packets again.
public struct RTCPGenericNACK: Equatable, Sendable {
    /// RTPFB, transport-layer feedback.
    public static let packetType: UInt8 = 205
    /// Generic NACK's feedback message type (the count field).
    public static let format: UInt8 = 1
    /// Most FCI entries one packet carries (its 16-bit length field counts words).
    public static let maximumItems = 65_533

    /// SSRC of the packet's sender (the receiver asking).
    public var senderSSRC: UInt32
    /// SSRC of the media source whose packets are lost.
    public var mediaSSRC: UInt32
    /// At least one entry on the wire.
    public var items: [RTCPNACKItem]

    /// A NACK with the given entries.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, items: [RTCPNACKItem]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.items = items
    }

    /// A NACK for the sequence numbers in `lost` (any order, repeats allowed), in the fewest
    /// entries: see ``items(covering:)``.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, lost: some Sequence<UInt16>) {
        self.init(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, items: Self.items(covering: lost))
    }

    /// The sequence numbers the entries report lost, each once, in entry order.
    public var lostSequenceNumbers: [UInt16] {
        var seen = Set<UInt16>()
        var out: [UInt16] = []
        for item in items { item.forEachLost { if seen.insert($0).inserted { out.append($0) } } }
        return out
    }

    /// The fewest entries covering exactly `lost` (any order, repeats allowed). The numbers are
    /// ordered from just after the largest gap between them around the 16-bit circle, so a set
    /// spanning a wrap (65534, 65535, 0, 1) is one run; then covered greedily
    /// (``RTCPNACKItemBuilder``). Empty in, empty out.
    public static func items(covering lost: some Sequence<UInt16>) -> [RTCPNACKItem] {
        let sorted = Array(Set(lost)).sorted()
        guard !sorted.isEmpty else { return [] }
        // Start after the largest circular gap.
        var start = 0
        var largest = -1
        for i in sorted.indices {
            let next = sorted[(i + 1) % sorted.count]
            let gap = sorted.count == 1 ? 65_536 : Int(next &- sorted[i])
            if gap > largest { largest = gap; start = (i + 1) % sorted.count }
        }
        var builder = RTCPNACKItemBuilder()
        var items: [RTCPNACKItem] = []
        for k in 0..<sorted.count {
            if let item = builder.add(sorted[(start + k) % sorted.count]) { items.append(item) }
        }
        if let item = builder.finish() { items.append(item) }
        return items
    }

    /// Bytes a NACK of `itemCount` entries takes on the wire.
    public static func marshalSize(itemCount: Int) -> Int { 12 + 4 * itemCount }

    /// Writes a NACK at the start of `buffer` from entries in caller-owned memory (no
    /// allocation); returns its length.
    /// - Throws: ``RTPError/fieldOutOfRange(_:)`` for no entries or more than
    ///   ``maximumItems``; ``RTPError/bufferTooSmall(needed:available:)``.
    public static func marshal(senderSSRC: UInt32, mediaSSRC: UInt32, items: UnsafeBufferPointer<RTCPNACKItem>,
                               into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        guard !items.isEmpty else { throw .fieldOutOfRange("generic NACK without entries") }
        guard items.count <= maximumItems else { throw .fieldOutOfRange("generic NACK with more than \(maximumItems) entries") }
        let size = marshalSize(itemCount: items.count)
        guard buffer.count >= size else { throw .bufferTooSmall(needed: size, available: buffer.count) }
        store8(buffer, 0, 0x80 | format)
        store8(buffer, 1, packetType)
        store16(buffer, 2, UInt16(size / 4 - 1))
        store32(buffer, 4, senderSSRC)
        store32(buffer, 8, mediaSSRC)
        for (i, item) in items.enumerated() {
            store16(buffer, 12 + 4 * i, item.packetID)
            store16(buffer, 14 + 4 * i, item.lostBitmask)
        }
        return size
    }
}

/// A picture loss indication (RFC 4585 6.3.1): the receiver `senderSSRC` lost picture data of
/// `mediaSSRC` and asks for a keyframe.
public struct RTCPPictureLossIndication: Equatable, Sendable {
    /// PSFB, payload-specific feedback.
    public static let packetType: UInt8 = 206
    /// PLI's feedback message type (the count field).
    public static let format: UInt8 = 1
    /// Bytes a PLI takes on the wire.
    public static let size = 12

    /// SSRC of the packet's sender (the receiver asking).
    public var senderSSRC: UInt32
    /// SSRC of the media source to send a keyframe.
    public var mediaSSRC: UInt32

    /// A PLI from `senderSSRC` about `mediaSSRC`.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
    }

    /// Writes the PLI at the start of `buffer`; returns its length (12).
    /// - Throws: ``RTPError/bufferTooSmall(needed:available:)``.
    public func marshal(into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        guard buffer.count >= Self.size else { throw .bufferTooSmall(needed: Self.size, available: buffer.count) }
        store8(buffer, 0, 0x80 | Self.format)
        store8(buffer, 1, Self.packetType)
        store16(buffer, 2, 2)
        store32(buffer, 4, senderSSRC)
        store32(buffer, 8, mediaSSRC)
        return Self.size
    }
}

/// A receiver estimated maximum bitrate (REMB, draft-alvestrand-rmcat-remb-03): PSFB (PT 206)
/// with FMT 15, media SSRC 0, then the identifier `REMB`, the number of SSRCs, the bitrate as a
/// 6-bit exponent and an 18-bit mantissa (bits per second = mantissa << exponent), and the SSRCs
/// of the streams the estimate covers. A sender keeps its total rate for those streams under it.
public enum RTCPREMB {
    /// REMB's feedback message type (the count field of a PSFB packet).
    public static let format: UInt8 = 15
    /// Bytes a REMB about one stream takes on the wire.
    public static let size = 24
    /// Writes a REMB from `senderSSRC` capping the stream `mediaSSRC` at `bitrate` bits per second
    /// (rounded down to what 18 bits of mantissa carry) at the start of `buffer`, without
    /// allocating; returns its length (24).
    /// - Throws: ``RTPError/bufferTooSmall(needed:available:)``.
    public static func marshal(senderSSRC: UInt32, bitrate: UInt64, mediaSSRC: UInt32,
                               into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        guard buffer.count >= size else { throw .bufferTooSmall(needed: size, available: buffer.count) }
        var mantissa = bitrate
        var exponent: UInt32 = 0
        while mantissa >= 1 << 18 {
            mantissa >>= 1
            exponent += 1
        }
        store8(buffer, 0, 0x80 | format)
        store8(buffer, 1, RTCPPictureLossIndication.packetType)
        store16(buffer, 2, UInt16(size / 4 - 1))
        store32(buffer, 4, senderSSRC)
        store32(buffer, 8, 0)
        store32(buffer, 12, 0x5245_4D42)  // "REMB"
        store32(buffer, 16, 1 << 24 | exponent << 18 | UInt32(mantissa))
        store32(buffer, 20, mediaSSRC)
        return size
    }
}

extension RTCPReceiverReport {
    /// Writes a receiver report with at most one report block at the start of `buffer`,
    /// without allocating; returns its length (8, or 32 with the block).
    /// - Throws: ``RTPError/bufferTooSmall(needed:available:)``.
    public static func marshal(ssrc: UInt32, report: RTCPReceptionReport?,
                               into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let size = 8 + (report == nil ? 0 : RTCPReceptionReport.size)
        guard buffer.count >= size else { throw .bufferTooSmall(needed: size, available: buffer.count) }
        store8(buffer, 0, 0x80 | (report == nil ? 0 : 1))
        store8(buffer, 1, RTCPPacket.receiverReportType)
        store16(buffer, 2, UInt16(size / 4 - 1))
        store32(buffer, 4, ssrc)
        report?.write(buffer, 8)
        return size
    }
}

/// One packet of a validated compound RTCP packet, as `RTCPCompound.forEachPacket(in:reducedSize:_:)`
/// hands it over: a view over the datagram's bytes, valid only during that call. Its readers
/// are safe on any view that call produced (the lengths were checked).
public struct RTCPPacketView {
    /// The packet type (200 SR, 201 RR, 205 RTPFB, 206 PSFB, ...).
    public let packetType: UInt8
    /// The 5-bit count field: report count, or the feedback message type (FMT).
    public let count: UInt8
    /// The packet from its common header up to its padding.
    public let bytes: UnsafeRawBufferPointer

    init(packetType: UInt8, count: UInt8, packet: UnsafeRawBufferPointer) {
        self.packetType = packetType
        self.count = count
        self.bytes = packet
    }

    /// Whether this is a generic NACK (PT 205, FMT 1).
    public var isGenericNACK: Bool { packetType == RTCPGenericNACK.packetType && count == RTCPGenericNACK.format }
    /// Whether this is a PLI (PT 206, FMT 1).
    public var isPictureLossIndication: Bool {
        packetType == RTCPPictureLossIndication.packetType && count == RTCPPictureLossIndication.format
    }
    /// Whether this is a BYE (PT 203).
    public var isBye: Bool { packetType == RTCPBye.packetType }

    /// Whether this is a well-formed REMB (PT 206, FMT 15, the `REMB` identifier, its SSRCs
    /// inside the packet).
    public var isREMB: Bool {
        packetType == RTCPPictureLossIndication.packetType && count == RTCPREMB.format && bytes.count >= 20
            && load32(bytes, 12) == 0x5245_4D42 && 20 + 4 * Int(load8(bytes, 16)) <= bytes.count
    }

    /// A REMB's bitrate, bits per second (`UInt64.max` where the exponent carries more), or
    /// nil for any other packet.
    public var rembBitrate: UInt64? {
        guard isREMB else { return nil }
        let word = load32(bytes, 16)
        let exponent = Int((word >> 18) & 0x3F), mantissa = UInt64(word & 0x3_FFFF)
        return mantissa.leadingZeroBitCount >= exponent ? mantissa << exponent : .max
    }

    /// Calls `body` with each SSRC a REMB covers (nothing for other packets).
    public func forEachREMBSSRC(_ body: (UInt32) -> Void) {
        guard isREMB else { return }
        for i in 0..<Int(load8(bytes, 16)) { body(load32(bytes, 20 + 4 * i)) }
    }

    /// Calls `body` with each source a BYE names (nothing for other packets).
    public func forEachByeSSRC(_ body: (UInt32) -> Void) {
        guard isBye else { return }
        for i in 0..<Int(count) where 8 + 4 * i <= bytes.count { body(load32(bytes, 4 + 4 * i)) }
    }

    /// The first 32-bit word after the common header (the SSRC of the packet's sender for SR,
    /// RR and feedback), or nil when the packet has no body.
    public var senderSSRC: UInt32? { bytes.count >= 8 ? load32(bytes, 4) : nil }

    /// The media source SSRC of a feedback message (the second word), or nil.
    public var mediaSSRC: UInt32? {
        (packetType == RTCPGenericNACK.packetType || packetType == RTCPPictureLossIndication.packetType)
            && bytes.count >= 12 ? load32(bytes, 8) : nil
    }

    /// Report blocks of an SR or RR (0 for any other packet).
    public var reportBlockCount: Int {
        packetType == RTCPPacket.senderReportType || packetType == RTCPPacket.receiverReportType ? Int(count) : 0
    }

    /// Calls `body` with each report block of an SR or RR.
    public func forEachReportBlock(_ body: (RTCPReceptionReport) -> Void) {
        let first = packetType == RTCPPacket.senderReportType ? 28 : 8
        for i in 0..<reportBlockCount {
            let p = first + RTCPReceptionReport.size * i
            guard p + RTCPReceptionReport.size <= bytes.count else { return }
            body(.read(bytes, p))
        }
    }

    /// Calls `body` with each entry of a generic NACK (nothing for other packets).
    public func forEachNACKItem(_ body: (RTCPNACKItem) -> Void) {
        guard isGenericNACK else { return }
        var p = 12
        while p + 4 <= bytes.count {
            body(RTCPNACKItem(packetID: load16(bytes, p), lostBitmask: load16(bytes, p + 2)))
            p += 4
        }
    }

    /// The packet as a value (allocates for report blocks, entries and unknown bodies).
    public var packet: RTCPPacket {
        switch packetType {
        case RTCPPacket.senderReportType:
            var reports: [RTCPReceptionReport] = []
            reports.reserveCapacity(Int(count))
            forEachReportBlock { reports.append($0) }
            let ntp = UInt64(load32(bytes, 8)) << 32 | UInt64(load32(bytes, 12))
            return .senderReport(RTCPSenderReport(
                ssrc: load32(bytes, 4), ntpTimestamp: NTPTimestamp(rawValue: ntp), rtpTimestamp: load32(bytes, 16),
                packetCount: load32(bytes, 20), octetCount: load32(bytes, 24), reports: reports))
        case RTCPPacket.receiverReportType:
            var reports: [RTCPReceptionReport] = []
            reports.reserveCapacity(Int(count))
            forEachReportBlock { reports.append($0) }
            return .receiverReport(RTCPReceiverReport(ssrc: load32(bytes, 4), reports: reports))
        case _ where isGenericNACK:
            var items: [RTCPNACKItem] = []
            items.reserveCapacity((bytes.count - 12) / 4)
            forEachNACKItem { items.append($0) }
            return .genericNACK(RTCPGenericNACK(senderSSRC: load32(bytes, 4), mediaSSRC: load32(bytes, 8), items: items))
        case _ where isPictureLossIndication:
            return .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: load32(bytes, 4), mediaSSRC: load32(bytes, 8)))
        case RTCPBye.packetType:
            var ssrcs: [UInt32] = []
            ssrcs.reserveCapacity(Int(count))
            forEachByeSSRC { ssrcs.append($0) }
            let at = 4 + 4 * Int(count)
            var reason: String?
            if at < bytes.count, load8(bytes, at) > 0 {
                let n = Int(load8(bytes, at))
                reason = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(at + 1)..<(at + 1 + n)]), as: UTF8.self)
            }
            return .bye(RTCPBye(ssrcs: ssrcs, reason: reason))
        default:
            return .other(packetType: packetType, count: count, body: Array(bytes[4...]))
        }
    }
}
