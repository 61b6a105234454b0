// Janus TextRoom's JSON over the data channel: a strict JSON reader of untrusted bytes (RFC 8259,
// UTF-8 only, bounded nesting), the plugin's events read from it, and its requests written.
// Pure Swift, no imports: the fuzz target compiles this file on its own.

/// A JSON value (RFC 8259) as ``TextRoomEvent`` reads it: numbers keep their text.
public indirect enum ChatJSON: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number, as written (checked against JSON's grammar).
    case number(String)
    case string(String)
    case array([ChatJSON])
    /// An object; of a repeated key, the last value.
    case object([String: ChatJSON])

    /// The deepest nesting of arrays and objects read.
    public static let maximumDepth = 64

    /// The member `key` of an object.
    public subscript(key: String) -> ChatJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, if this is one.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The number as an integer, if it is one that fits.
    public var intValue: Int? {
        if case .number(let text) = self { return Int(text) }
        return nil
    }

    /// The boolean, if this is one.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// Reads one JSON text (whitespace around it allowed).
    /// - Throws: ``TextRoomParseError/invalidUTF8`` or ``TextRoomParseError/invalidJSON(offset:)``.
    public init(parsing bytes: some Collection<UInt8>) throws(TextRoomParseError) {
        let input = Array(bytes)
        guard String(validating: input, as: UTF8.self) != nil else { throw .invalidUTF8 }
        var reader = JSONReader(bytes: input)
        reader.skipSpace()
        self = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.offset == input.count else { throw .invalidJSON(offset: reader.offset) }
    }

    /// The value written as compact JSON (strings escaped as RFC 8259 requires, nothing more:
    /// other characters go as UTF-8; object members sorted by key).
    public var serialized: String {
        var out = ""
        write(to: &out)
        return out
    }

    private func write(to out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let text): out += text
        case .string(let s): ChatJSON.writeString(s, to: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(to: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (i, key) in members.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                ChatJSON.writeString(key, to: &out)
                out += ":"
                members[key]!.write(to: &out)
            }
            out += "}"
        }
    }

    /// `s` as a JSON string literal.
    static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}

/// Why bytes from the data channel are not a TextRoom event.
public enum TextRoomParseError: Error, Sendable, Hashable {
    /// The bytes are not UTF-8.
    case invalidUTF8
    /// Not JSON: the offset of the first byte that does not fit (or nesting deeper than
    /// ``ChatJSON/maximumDepth``).
    case invalidJSON(offset: Int)
    /// JSON, but not an object with a `textroom` string.
    case notAnEvent
    /// An event without a field it needs, or with one of the wrong type.
    case missingField(String)
}

/// A participant of a TextRoom: its username (unique in the room) and display name.
public struct TextRoomParticipant: Sendable, Hashable {
    /// The username it joined with.
    public var username: String
    /// Its display name, if it gave one.
    public var display: String?

    /// A participant `username` shown as `display`.
    public init(username: String, display: String?) {
        self.username = username
        self.display = display
    }
}

/// What Janus's TextRoom plugin sends over the data channel, read from untrusted bytes.
public enum TextRoomEvent: Sendable, Hashable {
    /// A message of participant `from` (its username) with Janus's time stamp (`date`,
    /// `YYYY-MM-DDThh:mm:ss±hhmm`, to the second); `whisper` when sent to some participants only.
    case message(room: Int?, from: String, text: String, date: String, whisper: Bool)
    /// A participant joined a room.
    case joined(room: Int?, TextRoomParticipant)
    /// A participant left a room.
    case left(room: Int?, username: String)
    /// A participant was kicked out of a room.
    case kicked(room: Int?, username: String)
    /// The answer to a request: its transaction, and the participants already in (the answer to
    /// a `join`).
    case success(transaction: String?, participants: [TextRoomParticipant])
    /// A request failed: its transaction, Janus's code and text.
    case error(transaction: String?, code: Int, reason: String)
    /// An announcement of the room's administrator.
    case announcement(room: Int?, text: String, date: String)
    /// The room was destroyed.
    case destroyed(room: Int?)
    /// An event of another kind (its `textroom` value).
    case other(String)

    /// Reads one event: a JSON object with a `textroom` member.
    /// - Throws: ``TextRoomParseError``.
    public init(parsing bytes: some Collection<UInt8>) throws(TextRoomParseError) {
        let json = try ChatJSON(parsing: bytes)
        guard let kind = json["textroom"]?.stringValue else { throw .notAnEvent }
        func string(_ key: String) throws(TextRoomParseError) -> String {
            guard let s = json[key]?.stringValue else { throw .missingField(key) }
            return s
        }
        let room = json["room"]?.intValue
        switch kind {
        case "message":
            self = .message(room: room, from: try string("from"), text: try string("text"),
                            date: json["date"]?.stringValue ?? "", whisper: json["whisper"]?.boolValue ?? false)
        case "join":
            self = .joined(room: room, TextRoomParticipant(username: try string("username"), display: json["display"]?.stringValue))
        case "leave":
            self = .left(room: room, username: try string("username"))
        case "kicked":
            self = .kicked(room: room, username: try string("username"))
        case "success":
            var participants: [TextRoomParticipant] = []
            if case .array(let list)? = json["participants"] {
                for entry in list {
                    guard let name = entry["username"]?.stringValue else { throw .missingField("participants.username") }
                    participants.append(TextRoomParticipant(username: name, display: entry["display"]?.stringValue))
                }
            }
            self = .success(transaction: json["transaction"]?.stringValue, participants: participants)
        case "error":
            guard let code = json["error_code"]?.intValue else { throw .missingField("error_code") }
            self = .error(transaction: json["transaction"]?.stringValue, code: code, reason: json["error"]?.stringValue ?? "")
        case "announcement":
            self = .announcement(room: room, text: try string("text"), date: json["date"]?.stringValue ?? "")
        case "destroyed":
            self = .destroyed(room: room)
        default:
            self = .other(kind)
        }
    }
}

/// The requests Parley sends to the TextRoom plugin over the data channel, as JSON text.
enum TextRoomRequest {
    /// Joins room `room` as `username` shown as `display`.
    static func join(room: UInt64, username: String, display: String, pin: String?, transaction: String) -> String {
        var members: [String: ChatJSON] = ["textroom": .string("join"), "room": .number(String(room)),
                                           "username": .string(username), "display": .string(display),
                                           "transaction": .string(transaction)]
        if let pin { members["pin"] = .string(pin) }
        return ChatJSON.object(members).serialized
    }

    /// Leaves room `room`.
    static func leave(room: UInt64, transaction: String) -> String {
        ChatJSON.object(["textroom": .string("leave"), "room": .number(String(room)), "transaction": .string(transaction)]).serialized
    }

    /// A message to everyone in room `room` (no `success` answer asked for: errors still come).
    static func message(room: UInt64, text: String, transaction: String) -> String {
        ChatJSON.object(["textroom": .string("message"), "room": .number(String(room)), "text": .string(text),
                         "ack": .bool(false), "transaction": .string(transaction)]).serialized
    }
}

/// A reader of JSON over UTF-8 bytes already checked to be UTF-8.
private struct JSONReader {
    let bytes: [UInt8]
    var offset = 0

    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func skipSpace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    private func fail() -> TextRoomParseError { .invalidJSON(offset: offset) }

    private mutating func expect(_ word: String) throws(TextRoomParseError) {
        for b in word.utf8 {
            guard offset < bytes.count, bytes[offset] == b else { throw fail() }
            offset += 1
        }
    }

    mutating func value(depth: Int) throws(TextRoomParseError) -> ChatJSON {
        guard offset < bytes.count else { throw fail() }
        switch bytes[offset] {
        case UInt8(ascii: "{"):
            guard depth < ChatJSON.maximumDepth else { throw fail() }
            offset += 1
            var members: [String: ChatJSON] = [:]
            skipSpace()
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object(members) }
            while true {
                skipSpace()
                guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw fail() }
                let key = try string()
                skipSpace()
                try expect(":")
                skipSpace()
                members[key] = try value(depth: depth + 1)
                skipSpace()
                guard offset < bytes.count else { throw fail() }
                if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
                if bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object(members) }
                throw fail()
            }
        case UInt8(ascii: "["):
            guard depth < ChatJSON.maximumDepth else { throw fail() }
            offset += 1
            var items: [ChatJSON] = []
            skipSpace()
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(items) }
            while true {
                skipSpace()
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard offset < bytes.count else { throw fail() }
                if bytes[offset] == UInt8(ascii: ",") { offset += 1; continue }
                if bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(items) }
                throw fail()
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "n"): try expect("null"); return .null
        default: return .number(try number())
        }
    }

    private func isDigit(_ i: Int) -> Bool { i < bytes.count && bytes[i] >= UInt8(ascii: "0") && bytes[i] <= UInt8(ascii: "9") }

    /// `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`
    private mutating func number() throws(TextRoomParseError) -> String {
        let start = offset
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard isDigit(offset) else { throw fail() }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
        } else {
            while isDigit(offset) { offset += 1 }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            offset += 1
            guard isDigit(offset) else { throw fail() }
            while isDigit(offset) { offset += 1 }
        }
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "e") || bytes[offset] == UInt8(ascii: "E") {
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") { offset += 1 }
            guard isDigit(offset) else { throw fail() }
            while isDigit(offset) { offset += 1 }
        }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    private mutating func hex4() throws(TextRoomParseError) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw fail() }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[offset]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw fail()
            }
            v = v << 4 | UInt32(d)
            offset += 1
        }
        return v
    }

    /// A string literal at `offset` (its opening quote); escapes decoded, lone surrogates refused.
    private mutating func string() throws(TextRoomParseError) -> String {
        offset += 1
        var runStart = offset
        var out = ""
        func flush(_ reader: JSONReader, _ end: Int, into out: inout String) {
            if end > runStart { out += String(decoding: reader.bytes[runStart..<end], as: UTF8.self) }
        }
        while true {
            guard offset < bytes.count else { throw fail() }
            let b = bytes[offset]
            if b == UInt8(ascii: "\"") {
                flush(self, offset, into: &out)
                offset += 1
                return out
            }
            guard b >= 0x20 else { throw fail() }
            if b != UInt8(ascii: "\\") { offset += 1; continue }
            flush(self, offset, into: &out)
            offset += 1
            guard offset < bytes.count else { throw fail() }
            let e = bytes[offset]
            offset += 1
            switch e {
            case UInt8(ascii: "\""): out += "\""
            case UInt8(ascii: "\\"): out += "\\"
            case UInt8(ascii: "/"): out += "/"
            case UInt8(ascii: "b"): out += "\u{8}"
            case UInt8(ascii: "f"): out += "\u{C}"
            case UInt8(ascii: "n"): out += "\n"
            case UInt8(ascii: "r"): out += "\r"
            case UInt8(ascii: "t"): out += "\t"
            case UInt8(ascii: "u"):
                var v = try hex4()
                if (0xD800...0xDBFF).contains(v) {
                    try expect("\\u")
                    let low = try hex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw fail() }
                    v = 0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(v) else { throw fail() }
                out.unicodeScalars.append(scalar)
            default:
                offset -= 1
                throw fail()
            }
            runStart = offset
        }
    }
}
