// RTP fixed header (RFC 3550 5.1):
//
//    0                   1                   2                   3
//    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |V=2|P|X|  CC   |M|     PT      |       sequence number         |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |                           timestamp                           |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//   |           synchronization source (SSRC) identifier            |
//   +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
//   |            contributing source (CSRC) identifiers             |
//   |                             ....                              |
//   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Header extension (RFC 3550 5.3.1), present when X = 1:
//
//   |      defined by profile       |           length              |
//   |                        header extension                       |
//
// `length` counts 32-bit words after this 4-byte preamble. RFC 8285 profiles: 0xBEDE is the
// one-byte form, 0x100 followed by 4 application bits (0x1000...0x100F) the two-byte form.

/// The RFC 8285 profile value of the one-byte header-extension form.
public let rtpOneByteExtensionProfile: UInt16 = 0xBEDE
/// The RFC 8285 profile value of the two-byte form (the low 4 "appbits" are zero here).
public let rtpTwoByteExtensionProfile: UInt16 = 0x1000

/// A parsed RTP packet: a non-owning view over the caller's bytes.
///
/// Parsing validates the whole packet (version, CSRC count, extension block and every RFC 8285
/// element, padding) and stores only offsets, so it allocates nothing. The view is valid only
/// while the bytes it was parsed from are alive and unchanged: parse, read, drop, inside one
/// `withUnsafeBytes` scope.
///
/// Threading: a value over borrowed memory; use it on the thread that owns the bytes.
public struct RTPPacketView {
    /// The whole packet as given to the parser.
    public let bytes: UnsafeRawBufferPointer
    /// Whether the padding bit was set (the padding has been removed from ``payload``).
    public let hasPadding: Bool
    /// The marker bit: for Opus the first packet of a talkspurt, for VP8 the last of a frame.
    public let marker: Bool
    /// Payload type, 0...127.
    public let payloadType: UInt8
    /// Sequence number (wraps at 2^16).
    public let sequenceNumber: UInt16
    /// Media timestamp in the payload's clock (wraps at 2^32).
    public let timestamp: UInt32
    /// Synchronisation source.
    public let ssrc: UInt32
    /// Number of CSRCs, 0...15.
    public let csrcCount: Int
    /// The header extension's profile field, or nil when X = 0.
    public let extensionProfile: UInt16?
    /// Byte range of the extension data (after the 4-byte preamble); empty when absent.
    public let extensionRange: Range<Int>
    /// Byte range of the payload (after header, CSRCs and extension; before padding).
    public let payloadRange: Range<Int>
    /// Number of padding bytes at the end (0 when P = 0).
    public let paddingCount: Int

    /// The fixed header's length in bytes.
    public static let fixedHeaderSize = 12

    /// Parses and validates `bytes` as one RTP packet.
    ///
    /// - Throws: ``RTPError`` for a truncated header, a version other than 2, CSRCs or an
    ///   extension running past the end, an RFC 8285 element longer than its block, or a
    ///   padding count of zero or longer than the packet body.
    @inlinable
    public init(parsing bytes: UnsafeRawBufferPointer) throws(RTPError) {
        let n = bytes.count
        guard n >= 12 else { throw .truncatedHeader(needed: 12, available: n) }
        let b0 = load8(bytes, 0)
        let version = b0 >> 6
        guard version == 2 else { throw .badVersion(version) }
        let b1 = load8(bytes, 1)
        let cc = Int(b0 & 0x0F)
        var offset = 12 + 4 * cc
        guard offset <= n else { throw .csrcPastEnd(count: cc, available: n - 12) }
        var profile: UInt16? = nil
        var extRange = 0..<0
        if b0 & 0x10 != 0 {
            guard offset + 4 <= n else { throw .extensionPastEnd(needed: offset + 4, available: n) }
            let p = load16(bytes, offset)
            let words = Int(load16(bytes, offset + 2))
            let start = offset + 4
            let end = start + 4 * words
            guard end <= n else { throw .extensionPastEnd(needed: end, available: n) }
            try RTPHeaderExtensionElements.validate(bytes, range: start..<end, profile: p)
            profile = p
            extRange = start..<end
            offset = end
        }
        var padding = 0
        if b0 & 0x20 != 0 {
            let count = Int(load8(bytes, n - 1))
            guard count > 0, count <= n - offset else {
                throw .badPadding(count: count, available: n - offset)
            }
            padding = count
        }
        self.bytes = bytes
        self.hasPadding = padding > 0
        self.marker = b1 & 0x80 != 0
        self.payloadType = b1 & 0x7F
        self.sequenceNumber = load16(bytes, 2)
        self.timestamp = load32(bytes, 4)
        self.ssrc = load32(bytes, 8)
        self.csrcCount = cc
        self.extensionProfile = profile
        self.extensionRange = extRange
        self.payloadRange = offset..<(n - padding)
        self.paddingCount = padding
    }

    /// The `index`-th CSRC. Traps when `index` is not below ``csrcCount`` (a programming error).
    @inlinable
    public func csrc(_ index: Int) -> UInt32 {
        precondition(index >= 0 && index < csrcCount, "CSRC index out of range")
        return load32(bytes, 12 + 4 * index)
    }

    /// The payload bytes (without padding).
    @inlinable
    public var payload: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[payloadRange])
    }

    /// The header length in bytes (fixed header, CSRCs and extension block).
    @inlinable
    public var headerLength: Int { payloadRange.lowerBound }

    /// The RFC 8285 elements of the extension block, in wire order (empty when there is no
    /// extension or its profile is not an RFC 8285 form).
    @inlinable
    public var extensionElements: RTPHeaderExtensionElements {
        RTPHeaderExtensionElements(bytes: bytes, range: extensionRange, profile: extensionProfile ?? 0)
    }

    /// The data of the first RFC 8285 element with `id`, or nil when absent.
    @inlinable
    public func extensionElement(id: UInt8) -> UnsafeRawBufferPointer? {
        var it = extensionElements
        while let e = it.next() {
            if e.id == id { return UnsafeRawBufferPointer(rebasing: bytes[e.range]) }
        }
        return nil
    }
}

/// The elements of an RFC 8285 extension block, yielded as ID and byte range in the packet.
///
/// One-byte form (profile 0xBEDE): `ID(4) L(4)` then L+1 bytes; ID 0 is a padding byte; ID 15
/// is reserved and ends parsing. Two-byte form (0x100X): `ID(8) L(8)` then L bytes; ID 0 is a
/// padding byte. Other profiles yield nothing.
public struct RTPHeaderExtensionElements: IteratorProtocol, Sequence {
    /// One element: its ID and the byte range of its data within the packet.
    public struct Element: Equatable {
        public var id: UInt8
        public var range: Range<Int>

        @inlinable public init(id: UInt8, range: Range<Int>) {
            self.id = id
            self.range = range
        }
    }

    @usableFromInline let bytes: UnsafeRawBufferPointer
    @usableFromInline let end: Int
    @usableFromInline let twoByte: Bool
    @usableFromInline var position: Int

    @inlinable
    init(bytes: UnsafeRawBufferPointer, range: Range<Int>, profile: UInt16) {
        self.bytes = bytes
        self.twoByte = profile & 0xFFF0 == rtpTwoByteExtensionProfile
        let rfc8285 = profile == rtpOneByteExtensionProfile || twoByte
        self.end = rfc8285 ? range.upperBound : range.lowerBound
        self.position = range.lowerBound
    }

    /// The next element, or nil at the end (or at a one-byte ID 15).
    @inlinable
    public mutating func next() -> Element? {
        while position < end {
            let b = load8(bytes, position)
            if twoByte {
                if b == 0 { position += 1; continue }
                guard position + 2 <= end else { position = end; return nil }
                let len = Int(load8(bytes, position + 1))
                let start = position + 2
                guard start + len <= end else { position = end; return nil }
                position = start + len
                return Element(id: b, range: start..<(start + len))
            } else {
                let id = b >> 4
                if id == 0 { position += 1; continue }
                if id == 15 { position = end; return nil }
                let len = Int(b & 0x0F) + 1
                let start = position + 1
                guard start + len <= end else { position = end; return nil }
                position = start + len
                return Element(id: id, range: start..<(start + len))
            }
        }
        return nil
    }

    /// Checks that every element of an RFC 8285 block lies inside it.
    @inlinable
    static func validate(_ bytes: UnsafeRawBufferPointer, range: Range<Int>, profile: UInt16) throws(RTPError) {
        let twoByte = profile & 0xFFF0 == rtpTwoByteExtensionProfile
        guard profile == rtpOneByteExtensionProfile || twoByte else { return }
        var p = range.lowerBound
        let end = range.upperBound
        while p < end {
            let b = load8(bytes, p)
            if twoByte {
                if b == 0 { p += 1; continue }
                guard p + 2 <= end else { throw .extensionElementPastEnd(id: b) }
                p += 2 + Int(load8(bytes, p + 1))
                guard p <= end else { throw .extensionElementPastEnd(id: b) }
            } else {
                let id = b >> 4
                if id == 0 { p += 1; continue }
                if id == 15 { return }
                p += 2 + Int(b & 0x0F)
                guard p <= end else { throw .extensionElementPastEnd(id: id) }
            }
        }
    }
}

/// One RFC 8285 header-extension element to write: a local ID and its data.
public struct RTPHeaderExtension: Equatable, Sendable {
    /// Local identifier negotiated in SDP (`a=extmap`): 1...14 in the one-byte form, 1...255 in
    /// the two-byte form.
    public var id: UInt8
    /// The element's data. Mutate in place (`bytes[0] = ...`) to reuse storage per packet.
    public var bytes: [UInt8]

    public init(id: UInt8, bytes: [UInt8]) {
        self.id = id
        self.bytes = bytes
    }
}

/// An RTP header to serialise (the owning counterpart of ``RTPPacketView``).
///
/// Reuse one value per stream and change `sequenceNumber`, `timestamp`, `marker` and extension
/// bytes in place: ``marshal(into:)`` then allocates nothing.
///
/// Threading: a value type; a copy may be sent across threads.
public struct RTPHeader: Equatable, Sendable {
    public var marker: Bool
    /// 0...127.
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    /// At most 15.
    public var csrcs: [UInt32]
    /// RFC 8285 elements; empty means no extension block (X = 0).
    public var extensions: [RTPHeaderExtension]
    /// The form the extension block is written in. Default `.automatic`.
    public var extensionForm: RTPExtensionForm
    /// Padding bytes appended after the payload by ``marshal(payload:into:)`` (0 = none).
    public var paddingCount: UInt8

    public init(marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32,
                ssrc: UInt32, csrcs: [UInt32] = [], extensions: [RTPHeaderExtension] = [],
                extensionForm: RTPExtensionForm = .automatic, paddingCount: UInt8 = 0) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.extensions = extensions
        self.extensionForm = extensionForm
        self.paddingCount = paddingCount
    }

    /// Copies the header fields and RFC 8285 elements out of a parsed packet (allocates).
    public init(_ view: RTPPacketView) {
        var csrcs: [UInt32] = []
        for i in 0..<view.csrcCount { csrcs.append(view.csrc(i)) }
        var exts: [RTPHeaderExtension] = []
        for e in view.extensionElements {
            exts.append(RTPHeaderExtension(id: e.id, bytes: Array(view.bytes[e.range])))
        }
        let form: RTPExtensionForm = view.extensionProfile == rtpOneByteExtensionProfile ? .oneByte
            : (view.extensionProfile.map { $0 & 0xFFF0 == rtpTwoByteExtensionProfile } ?? false ? .twoByte : .automatic)
        self.init(marker: view.marker, payloadType: view.payloadType, sequenceNumber: view.sequenceNumber,
                  timestamp: view.timestamp, ssrc: view.ssrc, csrcs: csrcs, extensions: exts,
                  extensionForm: form, paddingCount: UInt8(truncatingIfNeeded: view.paddingCount))
    }

    /// The extension form and padded data size (without the 4-byte preamble), in one pass.
    @inlinable
    var extensionLayout: (twoByte: Bool, dataSize: Int) {
        guard !extensions.isEmpty else { return (false, 0) }
        var bytes = 0
        var needsTwoByte = false
        for e in extensions {
            let n = e.bytes.count
            bytes += n
            if e.id > 14 || n == 0 || n > 16 { needsTwoByte = true }
        }
        let twoByte: Bool
        switch extensionForm {
        case .oneByte: twoByte = false
        case .twoByte: twoByte = true
        case .automatic: twoByte = needsTwoByte
        }
        let total = bytes + extensions.count * (twoByte ? 2 : 1)
        return (twoByte, (total + 3) & ~3)
    }

    @inlinable
    func headerSize(extensionDataSize: Int) -> Int {
        12 + 4 * csrcs.count + (extensions.isEmpty ? 0 : 4 + extensionDataSize)
    }

    /// The header's size in bytes: 12 + 4 per CSRC + the extension block.
    @inlinable
    public var marshalSize: Int { headerSize(extensionDataSize: extensionLayout.dataSize) }

    /// The whole packet's size for a payload of `payloadCount` bytes, with padding.
    @inlinable
    public func marshalSize(payloadCount: Int) -> Int {
        marshalSize + payloadCount + Int(paddingCount)
    }

    /// Writes the header (not the padding) into the start of `buffer`; returns its length.
    ///
    /// The P bit is set when ``paddingCount`` is non-zero; the caller then appends the payload
    /// and the padding, or uses ``marshal(payload:into:)`` which does both.
    /// - Throws: ``RTPError/bufferTooSmall(needed:available:)``, ``RTPError/fieldOutOfRange(_:)``
    ///   for more than 15 CSRCs or a payload type above 127, and
    ///   ``RTPError/invalidExtensionElement(id:length:)`` for an element the form cannot carry.
    @inlinable
    public func marshal(into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let layout = extensionLayout
        let size = headerSize(extensionDataSize: layout.dataSize)
        guard buffer.count >= size else { throw .bufferTooSmall(needed: size, available: buffer.count) }
        return try writeHeader(into: buffer, twoByte: layout.twoByte, dataSize: layout.dataSize)
    }

    @inlinable
    func writeHeader(into buffer: UnsafeMutableRawBufferPointer, twoByte: Bool, dataSize: Int) throws(RTPError) -> Int {
        guard csrcs.count <= 15 else { throw .fieldOutOfRange("more than 15 CSRCs") }
        guard payloadType <= 127 else { throw .fieldOutOfRange("payload type above 127") }
        var b0: UInt8 = 0x80 | UInt8(csrcs.count)
        if paddingCount > 0 { b0 |= 0x20 }
        if !extensions.isEmpty { b0 |= 0x10 }
        store8(buffer, 0, b0)
        store8(buffer, 1, (marker ? 0x80 : 0) | payloadType)
        store16(buffer, 2, sequenceNumber)
        store32(buffer, 4, timestamp)
        store32(buffer, 8, ssrc)
        var p = 12
        for c in csrcs { store32(buffer, p, c); p += 4 }
        if !extensions.isEmpty {
            store16(buffer, p, twoByte ? rtpTwoByteExtensionProfile : rtpOneByteExtensionProfile)
            store16(buffer, p + 2, UInt16(dataSize / 4))
            p += 4
            let end = p + dataSize
            for e in extensions {
                let len = e.bytes.count
                if twoByte {
                    guard e.id >= 1, len <= 255 else { throw .invalidExtensionElement(id: e.id, length: len) }
                    store8(buffer, p, e.id)
                    store8(buffer, p + 1, UInt8(len))
                    p += 2
                } else {
                    guard (1...14).contains(e.id), (1...16).contains(len) else {
                        throw .invalidExtensionElement(id: e.id, length: len)
                    }
                    store8(buffer, p, e.id << 4 | UInt8(len - 1))
                    p += 1
                }
                if len > 0 {
                    e.bytes.withUnsafeBytes { src in
                        (buffer.baseAddress! + p).copyMemory(from: src.baseAddress!, byteCount: len)
                    }
                }
                p += len
            }
            while p < end { store8(buffer, p, 0); p += 1 }
        }
        return p
    }

    /// Writes header, `payload` and padding into `buffer`; returns the packet length.
    /// - Throws: as ``marshal(into:)``, with the full size checked against `buffer`.
    @inlinable
    public func marshal(payload: UnsafeRawBufferPointer, into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let layout = extensionLayout
        let header = headerSize(extensionDataSize: layout.dataSize)
        let total = header + payload.count + Int(paddingCount)
        guard buffer.count >= total else { throw .bufferTooSmall(needed: total, available: buffer.count) }
        var p = try writeHeader(into: buffer, twoByte: layout.twoByte, dataSize: layout.dataSize)
        if let src = payload.baseAddress, payload.count > 0 {
            (buffer.baseAddress! + p).copyMemory(from: src, byteCount: payload.count)
        }
        p += payload.count
        if paddingCount > 0 {
            let pad = Int(paddingCount)
            for i in p..<(p + pad - 1) { store8(buffer, i, 0) }
            store8(buffer, p + pad - 1, paddingCount)
            p += pad
        }
        return p
    }

    /// Convenience for tests and tools: the packet as a new array (allocates).
    public func marshalled(payload: [UInt8]) throws(RTPError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: marshalSize(payloadCount: payload.count))
        let result: Result<Int, RTPError> = out.withUnsafeMutableBytes { dst in
            payload.withUnsafeBytes { src in
                do throws(RTPError) { return .success(try marshal(payload: src, into: dst)) } catch { return .failure(error) }
            }
        }
        _ = try result.get()
        return out
    }
}

extension RTPPacketView {
    /// Parses `bytes` and calls `body` with the view (the view must not escape `body`).
    public static func withParsed<R>(_ bytes: [UInt8], _ body: (RTPPacketView) throws -> R) throws -> R {
        try bytes.withUnsafeBytes { raw in
            let view = try RTPPacketView(parsing: raw)
            return try body(view)
        }
    }
}

/// Which RFC 8285 form a header's extension block is written in.
public enum RTPExtensionForm: Equatable, Sendable {
    /// One-byte form when every element fits it (ID 1...14, 1...16 bytes), else two-byte.
    case automatic
    /// Always the one-byte form (profile 0xBEDE).
    case oneByte
    /// Always the two-byte form (profile 0x1000).
    case twoByte
}
