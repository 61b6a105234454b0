// Pure Swift (no C imports): compiled standalone by the fuzz targets in Fuzz/.

/// The header of a Janus recording (`.mjr`): what its JSON info header says.
public struct MJRHeader: Sendable, Hashable {
    /// The file format version: 1 (`MJR00001`, packets without arrival times) or 2 (`MJR00002`).
    public var version: Int
    /// Audio, video or data (`t`).
    public var kind: MJRStreamKind
    /// The codec's name as Janus writes it, lowercased (`c`: `opus`, `multiopus`, `pcmu`,
    /// `pcma`, `g722`, `l16`, `vp8`, `h264`, `text`, ...).
    public var codec: String
    /// Codec-specific parameters (`f`), when given.
    public var fmtp: String?
    /// The stream's description (`d`), when given.
    public var streamDescription: String?
    /// When Janus created the recorder, µs since the Unix epoch (`s`).
    public var createdMicroseconds: Int64
    /// When Janus wrote the first packet, µs since the Unix epoch (`u`), when given (Janus
    /// 0.10 and later write it).
    public var firstPacketMicroseconds: Int64?
    /// The payload type of RFC 2198 redundant audio (`or`), when the stream uses it.
    public var redPayloadType: Int?
    /// Whether the media are end-to-end encrypted (`e`): the payloads cannot be decoded.
    public var isEncrypted: Bool
    /// RTP header extensions by id (`x`): their URIs.
    public var extensions: [Int: String]

    /// When the recorded media start, µs since the Unix epoch: the first packet's time, else
    /// the recorder's creation.
    public var startMicroseconds: Int64 { firstPacketMicroseconds ?? createdMicroseconds }

    /// A header; see the properties.
    public init(version: Int = 2, kind: MJRStreamKind, codec: String, fmtp: String? = nil, streamDescription: String? = nil,
                createdMicroseconds: Int64, firstPacketMicroseconds: Int64? = nil, redPayloadType: Int? = nil,
                isEncrypted: Bool = false, extensions: [Int: String] = [:]) {
        self.version = version
        self.kind = kind
        self.codec = codec
        self.fmtp = fmtp
        self.streamDescription = streamDescription
        self.createdMicroseconds = createdMicroseconds
        self.firstPacketMicroseconds = firstPacketMicroseconds
        self.redPayloadType = redPayloadType
        self.isEncrypted = isEncrypted
        self.extensions = extensions
    }
}

/// One packet of a Janus recording.
public struct MJRPacket: Sendable, Hashable {
    /// The byte offset of its frame header in the file.
    public var offset: Int
    /// When Janus wrote it, ms after it wrote the first (MJR00002); nil in MJR00001 files.
    public var arrivalMilliseconds: UInt32?
    /// Its length in bytes: an RTP packet (audio, video), or an 8-byte big-endian wall-clock
    /// time in µs followed by the message (data).
    public var length: Int

    /// A packet; see the properties.
    public init(offset: Int, arrivalMilliseconds: UInt32?, length: Int) {
        self.offset = offset
        self.arrivalMilliseconds = arrivalMilliseconds
        self.length = length
    }
}

/// Streaming reader of Janus recordings (`.mjr`, written by Janus's `record.c`: the VideoRoom's
/// `record`, the AudioBridge's `mjrs` and `record`, the Record&Play plugin), one packet at a
/// time into a caller buffer that grows only when a larger packet arrives, so steady-state
/// reading allocates nothing.
///
/// ```
/// "MJR00002"  u16 JSON length  JSON info header {"t", "c", "s", "u", ...}
/// then per packet: "MEET"  u32 arrival ms (MJR00001: "ECHO")  u16 length  packet
/// ```
/// (integers big-endian). The bytes are untrusted: anything off the format is a
/// ``MediaFileError`` with the byte offset (``MediaFileError/truncated(path:offset:expected:got:)``,
/// ``MediaFileError/corrupt(path:reason:offset:)``; the older `MEETECHO` format without a
/// JSON header is ``MediaFileError/unsupported(path:what:)``), never a trap.
///
/// Threading: use from one thread at a time.
public struct MJRReader: ByteSourceReader {
    /// The info header.
    public let header: MJRHeader
    /// Packets read so far.
    public private(set) var packetsRead = 0
    /// The file's name, for messages.
    public var name: String { reader.name }
    /// The byte offset of the next packet.
    public var offset: Int { reader.offset }
    private var reader: ByteReader

    /// Bytes before each packet: "MEET", the arrival time (or "ECHO") and the length.
    static let frameHeaderBytes = 10

    /// Reads the magic and the info header from `source`.
    public init(source: ByteSource) throws(MediaFileError) {
        var r = try ByteReader(source: source, header: 8)
        let name = source.name
        let version = try r.withBytes(8) { b -> Int? in
            let magic = String(decoding: b, as: UTF8.self)
            return magic == "MJR00002" ? 2 : magic == "MJR00001" ? 1 : magic == "MEETECHO" ? 0 : nil
        }
        guard let version else {
            throw .corrupt(path: name, reason: "not a Janus recording (no MJR00001/MJR00002 magic)", offset: 0)
        }
        guard version > 0 else {
            throw .unsupported(path: name, what: "Janus recording in the pre-0.x format (MEETECHO, no JSON header)")
        }
        let lengthHave = try r.fill(atLeast: 2)
        if lengthHave < 2 { throw .truncated(path: name, offset: 8, expected: 2, got: lengthHave) }
        let length = try r.withBytes(2) { b in Int(b.be16(0)) }
        guard length > 0 else { throw .corrupt(path: name, reason: "empty JSON info header", offset: 8) }
        let have = try r.fill(atLeast: length)
        if have < length { throw .truncated(path: name, offset: 10, expected: length, got: have) }
        header = try r.withBytes(length) { b in MJRHeader.parse(b, version: version, name: name, at: 10) }.get()
        reader = r
    }

    /// Reads the next packet into `buffer` (grown only if too small; the packet is
    /// `buffer[0..<packet.length]`). Returns nil at a clean end of file (after a whole packet).
    public mutating func read(into buffer: inout [UInt8]) throws(MediaFileError) -> MJRPacket? {
        let offset = reader.offset
        let have = try reader.fill(atLeast: Self.frameHeaderBytes)
        if have == 0 { return nil }
        if have < Self.frameHeaderBytes {
            throw .truncated(path: name, offset: offset, expected: Self.frameHeaderBytes, got: have)
        }
        let version = header.version
        let parsed = try reader.withBytes(Self.frameHeaderBytes) { b -> (ok: Bool, arrival: UInt32?, length: Int) in
            let meet = b[0] == 0x4D && b[1] == 0x45 && b[2] == 0x45 && b[3] == 0x54   // "MEET"
            let echo = b[4] == 0x45 && b[5] == 0x43 && b[6] == 0x48 && b[7] == 0x4F   // "ECHO"
            let arrival = UInt32(b[4]) << 24 | UInt32(b[5]) << 16 | UInt32(b[6]) << 8 | UInt32(b[7])
            return (meet && (version == 2 || echo), version == 2 ? arrival : nil, Int(b.be16(8)))
        }
        guard parsed.ok else {
            throw .corrupt(path: name, reason: "packet \(packetsRead) does not start with '\(version == 2 ? "MEET" : "MEETECHO")'",
                           offset: offset)
        }
        guard parsed.length > 0 else {
            throw .corrupt(path: name, reason: "packet \(packetsRead) is empty", offset: offset + 8)
        }
        if buffer.count < parsed.length {
            buffer.append(contentsOf: repeatElement(0, count: parsed.length - buffer.count))
        }
        var r = reader
        let got = try buffer.withUnsafeMutableBytes { b in
            Result { () throws(MediaFileError) -> Int in
                try r.read(into: UnsafeMutableRawBufferPointer(rebasing: b[0..<parsed.length]))
            }
        }.get()
        reader = r
        if got < parsed.length {
            throw .truncated(path: name, offset: offset + Self.frameHeaderBytes, expected: parsed.length, got: got)
        }
        packetsRead += 1
        return MJRPacket(offset: offset, arrivalMilliseconds: parsed.arrival, length: parsed.length)
    }
}

extension UnsafeRawBufferPointer {
    @inline(__always) func be16(_ at: Int) -> UInt16 {
        UInt16(self[at]) << 8 | UInt16(self[at + 1])
    }
}

extension MJRHeader {
    /// The header from the JSON text `b`, which starts at byte `base` of the file.
    static func parse(_ b: UnsafeRawBufferPointer, version: Int, name: String, at base: Int) -> Result<MJRHeader, MediaFileError> {
        var json = MJRJSONScanner(bytes: b)
        let fields: [String: MJRJSONScanner.Value]
        do throws(MJRJSONScanner.Failure) {
            fields = try json.object()
            json.skipSpace()
            if json.position < b.count, b[json.position] != 0 { throw MJRJSONScanner.Failure(position: json.position) }
        } catch {
            return .failure(.corrupt(path: name, reason: "the JSON info header is not a JSON object", offset: base + error.position))
        }
        func corrupt(_ reason: String) -> Result<MJRHeader, MediaFileError> {
            .failure(.corrupt(path: name, reason: reason, offset: base))
        }
        guard case .string(let t)? = fields["t"] else { return corrupt("the info header has no stream type (\"t\")") }
        guard let kind = MJRStreamKind(rawValue: t) else {
            return .failure(.unsupported(path: name, what: "Janus recording of stream type '\(t)'"))
        }
        guard case .string(let codec)? = fields["c"], !codec.isEmpty else {
            return corrupt("the info header has no codec (\"c\")")
        }
        guard case .integer(let created)? = fields["s"] else {
            return corrupt("the info header has no creation time (\"s\")")
        }
        var header = MJRHeader(version: version, kind: kind, codec: codec.lowercased(), createdMicroseconds: created)
        if case .string(let f)? = fields["f"] { header.fmtp = f }
        if case .string(let d)? = fields["d"] { header.streamDescription = d }
        if let u = fields["u"] {
            guard case .integer(let written) = u else { return corrupt("the first packet's time (\"u\") is not an integer") }
            header.firstPacketMicroseconds = written
        }
        if case .integer(let pt)? = fields["or"], (0...127).contains(pt) { header.redPayloadType = Int(pt) }
        if case .bool(let e)? = fields["e"] { header.isEncrypted = e }
        if case .object(let x)? = fields["x"] {
            for (key, value) in x {
                if let id = Int(key), case .string(let uri) = value { header.extensions[id] = uri }
            }
        }
        return .success(header)
    }
}

/// The JSON an info header holds (RFC 8259), parsed strictly: objects, arrays, strings,
/// numbers, booleans and null, nested at most 16 deep.
struct MJRJSONScanner {
    /// A parsed value; numbers that are not 64-bit integers are kept as `.number`.
    enum Value {
        case string(String), integer(Int64), number, bool(Bool), null, object([String: Value]), array
    }

    /// Where the text stopped being JSON.
    struct Failure: Error {
        var position: Int
    }

    let bytes: UnsafeRawBufferPointer
    var position = 0
    private var depth = 0
    static let maximumDepth = 16

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    private func fail() -> Failure { Failure(position: position) }

    mutating func skipSpace() {
        while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws(Failure) {
        skipSpace()
        guard position < bytes.count, bytes[position] == byte else { throw fail() }
        position += 1
    }

    /// An object at the position (members after their first occurrence win).
    mutating func object() throws(Failure) -> [String: Value] {
        try expect(0x7B)   // {
        depth += 1
        guard depth <= Self.maximumDepth else { throw fail() }
        defer { depth -= 1 }
        var fields: [String: Value] = [:]
        skipSpace()
        if position < bytes.count, bytes[position] == 0x7D { position += 1; return fields }
        while true {
            skipSpace()
            let key = try string()
            try expect(0x3A)   // :
            let v = try value()
            if fields[key] == nil { fields[key] = v }
            skipSpace()
            guard position < bytes.count else { throw fail() }
            let c = bytes[position]
            position += 1
            if c == 0x7D { return fields }
            guard c == 0x2C else { position -= 1; throw fail() }
        }
    }

    private mutating func array() throws(Failure) {
        try expect(0x5B)   // [
        depth += 1
        guard depth <= Self.maximumDepth else { throw fail() }
        defer { depth -= 1 }
        skipSpace()
        if position < bytes.count, bytes[position] == 0x5D { position += 1; return }
        while true {
            _ = try value()
            skipSpace()
            guard position < bytes.count else { throw fail() }
            let c = bytes[position]
            position += 1
            if c == 0x5D { return }
            guard c == 0x2C else { position -= 1; throw fail() }
        }
    }

    private mutating func value() throws(Failure) -> Value {
        skipSpace()
        guard position < bytes.count else { throw fail() }
        switch bytes[position] {
        case 0x7B: return .object(try object())
        case 0x5B: try array(); return .array
        case 0x22: return .string(try string())
        case 0x74: try literal("true"); return .bool(true)
        case 0x66: try literal("false"); return .bool(false)
        case 0x6E: try literal("null"); return .null
        default: return try number()
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let n = word.utf8CodeUnitCount
        guard bytes.count - position >= n else { throw fail() }
        for i in 0..<n where bytes[position + i] != word.utf8Start[i] { throw fail() }
        position += n
    }

    private mutating func number() throws(Failure) -> Value {
        let start = position
        if position < bytes.count, bytes[position] == 0x2D { position += 1 }   // -
        let digitsStart = position
        while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
        let digits = position - digitsStart
        guard digits > 0, !(digits > 1 && bytes[digitsStart] == 0x30) else { throw fail() }
        var integral = true
        if position < bytes.count, bytes[position] == 0x2E {   // .
            integral = false
            position += 1
            let f = position
            while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
            guard position > f else { throw fail() }
        }
        if position < bytes.count, bytes[position] | 0x20 == 0x65 {   // e E
            integral = false
            position += 1
            if position < bytes.count, bytes[position] == 0x2B || bytes[position] == 0x2D { position += 1 }
            let e = position
            while position < bytes.count, (0x30...0x39).contains(bytes[position]) { position += 1 }
            guard position > e else { throw fail() }
        }
        guard integral, digits <= 19 else { return .number }
        var v: Int64 = 0
        for i in digitsStart..<position {
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(Int64(bytes[i] - 0x30))
            if o1 || o2 { return .number }
            v = s
        }
        return .integer(bytes[start] == 0x2D ? -v : v)
    }

    private mutating func string() throws(Failure) -> String {
        guard position < bytes.count, bytes[position] == 0x22 else { throw fail() }
        position += 1
        var scalars = String.UnicodeScalarView()
        var run = position   // start of the bytes not yet appended
        func flush(_ upTo: Int) {
            if upTo > run {
                scalars.append(contentsOf: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[run..<upTo]), as: UTF8.self).unicodeScalars)
            }
        }
        while true {
            guard position < bytes.count else { throw fail() }
            let c = bytes[position]
            if c == 0x22 {
                flush(position)
                position += 1
                return String(scalars)
            }
            guard c >= 0x20 else { throw fail() }
            if c != 0x5C { position += 1; continue }
            flush(position)
            position += 1
            guard position < bytes.count else { throw fail() }
            let e = bytes[position]
            position += 1
            switch e {
            case 0x22: scalars.append("\"")
            case 0x5C: scalars.append("\\")
            case 0x2F: scalars.append("/")
            case 0x62: scalars.append("\u{08}")
            case 0x66: scalars.append("\u{0C}")
            case 0x6E: scalars.append("\n")
            case 0x72: scalars.append("\r")
            case 0x74: scalars.append("\t")
            case 0x75:
                var code = try hex4()
                if (0xD800..<0xDC00).contains(code), bytes.count - position >= 6,
                   bytes[position] == 0x5C, bytes[position + 1] == 0x75 {
                    position += 2
                    let low = try hex4()
                    guard (0xDC00..<0xE000).contains(low) else { throw fail() }
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                }
                scalars.append(Unicode.Scalar(code) ?? "\u{FFFD}")
            default:
                position -= 1
                throw fail()
            }
            run = position
        }
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard bytes.count - position >= 4 else { throw fail() }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[position]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: throw fail()
            }
            v = v << 4 | d
            position += 1
        }
        return v
    }
}

/// The kind of stream a Janus recording holds (its header's `t`).
public enum MJRStreamKind: String, Sendable, Hashable {
    /// `"a"`: audio RTP packets.
    case audio = "a"
    /// `"v"`: video RTP packets.
    case video = "v"
    /// `"d"`: data channel messages, each after an 8-byte wall-clock time.
    case data = "d"
}
