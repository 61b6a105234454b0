// SDP (RFC 4566) for RTP sessions: a parser that names the line and field it rejects, a
// writer, and typed views of the attributes an RTP receiver needs (rtpmap, fmtp, extmap,
// RFC 5576's ssrc and RFC 4568's crypto).

/// Why an SDP was rejected: the 1-based line number, the field, and what was wrong.
public struct SDPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 1-based line number (0: the description as a whole).
    public var line: Int
    /// The field, as RFC 4566 names it (`v=`, `m= port`, `a=rtpmap clock rate`, ...).
    public var field: String
    /// What is wrong with it.
    public var reason: String

    public var description: String {
        line > 0 ? "SDP line \(line), \(field): \(reason)" : "SDP \(field): \(reason)"
    }
}

/// One `a=` line: `a=name` or `a=name:value`. Its `description` hides a `crypto` value (the key).
public struct SDPAttribute: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    public var name: String
    public var value: String?

    public init(_ name: String, _ value: String? = nil) {
        self.name = name
        self.value = value
    }

    var line: String { value.map { "a=\(name):\($0)" } ?? "a=\(name)" }

    public var description: String { name == "crypto" ? "a=crypto:(redacted)" : line }
    public var debugDescription: String { description }
}

/// `a=rtpmap:<payload type> <encoding>/<clock rate>[/<channels>]`.
public struct SDPRTPMap: Sendable, Hashable {
    public var payloadType: UInt8
    public var encoding: String
    public var clockRate: Int
    public var channels: Int?

    public init(payloadType: UInt8, encoding: String, clockRate: Int, channels: Int? = nil) {
        self.payloadType = payloadType
        self.encoding = encoding
        self.clockRate = clockRate
        self.channels = channels
    }
}

/// `a=extmap:<id>[/<direction>] <uri> [<attributes>]` (RFC 8285).
public struct SDPExtensionMap: Sendable, Hashable {
    public var id: UInt8
    public var uri: String

    public init(id: UInt8, uri: String) {
        self.id = id
        self.uri = uri
    }
}

/// `a=crypto:<tag> <suite> inline:<key||salt>[|<lifetime>][|<MKI>:<length>] [<session params>]`
/// (RFC 4568, SDES). ``key`` is the secret: it is never part of `description`.
public struct SDPCrypto: Sendable, Hashable, CustomStringConvertible {
    /// The tag that names this offer (1...999999999).
    public var tag: Int
    /// The suite's name, e.g. `AES_CM_128_HMAC_SHA1_80`.
    public var suite: String
    /// The base64 key and salt of the first `inline:` key parameter.
    public var key: String
    /// What followed the key in its parameter (`|2^31`, `|1:1`), kept for writing it back.
    public var keySuffix: String
    /// Session parameters after the key parameters, as written.
    public var sessionParameters: [String]

    public init(tag: Int = 1, suite: String, key: String, keySuffix: String = "", sessionParameters: [String] = []) {
        self.tag = tag
        self.suite = suite
        self.key = key
        self.keySuffix = keySuffix
        self.sessionParameters = sessionParameters
    }

    public var description: String { "SDPCrypto(tag: \(tag), suite: \(suite), key: redacted)" }

    /// The `a=crypto:` attribute that carries this offer (it holds the key: write it only into
    /// an SDP file or message, never into a log).
    public var attribute: SDPAttribute {
        SDPAttribute("crypto", ([String(tag), suite, "inline:" + key + keySuffix] + sessionParameters).joined(separator: " "))
    }
}

/// `a=ssrc:<ssrc id> <attribute>[:<value>]` (RFC 5576): a source's SSRC and one attribute of it
/// (`cname:...`, `msid:...`).
public struct SDPSource: Sendable, Hashable {
    public var ssrc: UInt32
    /// The attribute's name (`cname`, `msid`, ...); empty when the line has none.
    public var attribute: String
    public var value: String?

    public init(ssrc: UInt32, attribute: String, value: String? = nil) {
        self.ssrc = ssrc
        self.attribute = attribute
        self.value = value
    }

    /// The `a=ssrc:` attribute that carries it.
    public var sdpAttribute: SDPAttribute {
        SDPAttribute("ssrc", attribute.isEmpty ? String(ssrc) : "\(ssrc) \(attribute)" + (value.map { ":" + $0 } ?? ""))
    }
}

/// An `m=` section: media, port, transport protocol, formats, and its own lines.
public struct SDPMedia: Sendable, Hashable {
    /// `audio`, `video`, ...
    public var media: String
    public var port: UInt16
    /// `RTP/AVP`, `RTP/SAVP`, `RTP/AVPF`, `RTP/SAVPF`, ...
    public var proto: String
    /// The formats: payload types for RTP protocols.
    public var formats: [String]
    /// The section's `c=` address, if it has one.
    public var connectionAddress: String?
    /// The section's `a=` lines in order.
    public var attributes: [SDPAttribute]

    public init(media: String, port: UInt16, proto: String, formats: [String], connectionAddress: String? = nil,
                attributes: [SDPAttribute] = []) {
        self.media = media
        self.port = port
        self.proto = proto
        self.formats = formats
        self.connectionAddress = connectionAddress
        self.attributes = attributes
    }

    /// The payload types listed on the `m=` line (RTP protocols).
    public var payloadTypes: [UInt8] { formats.compactMap { UInt8($0) } }

    /// Every `a=rtpmap:` of the section (validated by the parser).
    public var rtpMaps: [SDPRTPMap] { attributes.compactMap { $0.name == "rtpmap" ? try? SDPMedia.rtpMap($0.value ?? "", line: 0) : nil } }

    /// The `a=rtpmap:` for `payloadType`.
    public func rtpMap(for payloadType: UInt8) -> SDPRTPMap? { rtpMaps.first { $0.payloadType == payloadType } }

    /// The `a=fmtp:` parameters for `payloadType` (the text after the payload type).
    public func formatParameters(for payloadType: UInt8) -> String? {
        for a in attributes where a.name == "fmtp" {
            guard let v = a.value, let sp = v.firstIndex(of: " ") else { continue }
            if UInt8(v[..<sp]) == payloadType { return String(v[v.index(after: sp)...]) }
        }
        return nil
    }

    /// Every `a=extmap:`.
    public var extensionMaps: [SDPExtensionMap] { attributes.compactMap { $0.name == "extmap" ? try? SDPMedia.extmap($0.value ?? "", line: 0) : nil } }

    /// Every `a=crypto:` in order of preference.
    public var cryptos: [SDPCrypto] { attributes.compactMap { $0.name == "crypto" ? try? SDPMedia.crypto($0.value ?? "", line: 0) : nil } }

    /// Every `a=ssrc:` line (RFC 5576), in order.
    public var sources: [SDPSource] { attributes.compactMap { $0.name == "ssrc" ? try? SDPMedia.source($0.value ?? "", line: 0) : nil } }

    /// The value of the first `a=<name>:` line (`mid`, `framerate`, ...), or nil.
    public func value(of name: String) -> String? { attributes.first { $0.name == name }?.value }

    /// Whether the section has an `a=<name>` line (a flag such as `rtcp-mux` or `sendonly`).
    public func has(_ name: String) -> Bool { attributes.contains { $0.name == name } }

    /// Whether the protocol is secure RTP (`RTP/SAVP`, `RTP/SAVPF`).
    public var isSecure: Bool { proto.hasPrefix("RTP/SAVP") }

    static func rtpMap(_ v: String, line: Int) throws(SDPError) -> SDPRTPMap {
        let parts = v.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2 else { throw SDPError(line: line, field: "a=rtpmap", reason: "expected '<payload type> <encoding>/<clock rate>'") }
        guard let pt = UInt8(parts[0]), pt <= 127 else {
            throw SDPError(line: line, field: "a=rtpmap payload type", reason: "'\(parts[0])' is not 0...127")
        }
        let enc = parts[1].split(separator: "/", omittingEmptySubsequences: false)
        guard enc.count == 2 || enc.count == 3, !enc[0].isEmpty else {
            throw SDPError(line: line, field: "a=rtpmap encoding", reason: "expected '<encoding>/<clock rate>[/<channels>]'")
        }
        guard let rate = Int(enc[1]), rate > 0, rate <= 1_000_000 else {
            throw SDPError(line: line, field: "a=rtpmap clock rate", reason: "'\(enc[1])' is not a clock rate")
        }
        var channels: Int?
        if enc.count == 3 {
            guard let c = Int(enc[2]), (1...255).contains(c) else {
                throw SDPError(line: line, field: "a=rtpmap channels", reason: "'\(enc[2])' is not 1...255")
            }
            channels = c
        }
        return SDPRTPMap(payloadType: pt, encoding: String(enc[0]), clockRate: rate, channels: channels)
    }

    static func extmap(_ v: String, line: Int) throws(SDPError) -> SDPExtensionMap {
        let parts = v.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count >= 2 else { throw SDPError(line: line, field: "a=extmap", reason: "expected '<id> <uri>'") }
        let idText = parts[0].split(separator: "/", maxSplits: 1).first ?? ""
        guard let id = UInt8(idText), (1...255).contains(id) else {
            throw SDPError(line: line, field: "a=extmap id", reason: "'\(parts[0])' is not 1...255")
        }
        return SDPExtensionMap(id: id, uri: String(parts[1]))
    }

    static func source(_ v: String, line: Int) throws(SDPError) -> SDPSource {
        let parts = v.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard let first = parts.first, let ssrc = UInt32(first) else {
            throw SDPError(line: line, field: "a=ssrc", reason: "expected '<ssrc 0...4294967295> <attribute>[:<value>]'")
        }
        guard parts.count == 2 else { return SDPSource(ssrc: ssrc, attribute: "") }
        let rest = parts[1]
        guard let colon = rest.firstIndex(of: ":") else { return SDPSource(ssrc: ssrc, attribute: String(rest)) }
        return SDPSource(ssrc: ssrc, attribute: String(rest[..<colon]), value: String(rest[rest.index(after: colon)...]))
    }

    static func crypto(_ v: String, line: Int) throws(SDPError) -> SDPCrypto {
        let parts = v.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count >= 3 else { throw SDPError(line: line, field: "a=crypto", reason: "expected '<tag> <suite> inline:<key>'") }
        guard let tag = Int(parts[0]), (0...999_999_999).contains(tag) else {
            throw SDPError(line: line, field: "a=crypto tag", reason: "'\(parts[0])' is not 0...999999999")
        }
        // Several key parameters are separated by ';'; the first is used.
        let first = parts[2].split(separator: ";", maxSplits: 1).first ?? ""
        guard first.hasPrefix("inline:") else {
            throw SDPError(line: line, field: "a=crypto key parameters", reason: "only 'inline:' keys are supported")
        }
        let body = first.dropFirst("inline:".count)
        let key = body.prefix { $0 != "|" }
        guard !key.isEmpty else { throw SDPError(line: line, field: "a=crypto key", reason: "the inline key is empty") }
        return SDPCrypto(tag: tag, suite: String(parts[1]), key: String(key), keySuffix: String(body.dropFirst(key.count)),
                         sessionParameters: parts.dropFirst(3).map(String.init))
    }
}

/// A session description: the session lines and its media sections.
///
/// ``init(parsing:)`` accepts LF or CRLF line ends and checks what an RTP receiver relies on:
/// `v=0` first, `o=`, `s=`, well-formed `c=` and `m=` lines, and well-formed `rtpmap`, `fmtp`,
/// `extmap`, `ssrc` and `crypto` attributes; other attributes are kept as written. ``text`` writes it
/// back with CRLF line ends.
public struct SessionDescription: Sendable, Hashable {
    /// The `o=` line's value (`<username> <sess-id> <sess-version> IN IP4 <address>`).
    public var origin: String
    /// The `s=` line's value.
    public var sessionName: String
    /// The session-level `c=` address.
    public var connectionAddress: String?
    /// The `t=` line's value.
    public var timing: String
    /// Session-level `a=` lines.
    public var attributes: [SDPAttribute]
    /// The `m=` sections in order.
    public var media: [SDPMedia]

    public init(origin: String = "- 0 0 IN IP4 127.0.0.1", sessionName: String = "Parley", connectionAddress: String? = nil,
                timing: String = "0 0", attributes: [SDPAttribute] = [], media: [SDPMedia] = []) {
        self.origin = origin
        self.sessionName = sessionName
        self.connectionAddress = connectionAddress
        self.timing = timing
        self.attributes = attributes
        self.media = media
    }

    /// Parses `text`. Throws an ``SDPError`` naming the first bad line and field.
    public init(parsing text: String) throws(SDPError) {
        self.init(origin: "", sessionName: "", timing: "")
        var sawVersion = false, sawOrigin = false, sawName = false
        var number = 0
        // Lines are split on scalars, not Characters: "\r\n" is one Character in Swift.
        for raw in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let line = raw.last == "\r" ? raw.dropLast() : raw
            if line.isEmpty { continue }
            guard line.count >= 2, line.dropFirst().first == "=", let first = line.first,
                  first.isASCII, first.properties.isAlphabetic else {
                throw SDPError(line: number, field: "line", reason: "expected '<type>=<value>'")
            }
            let type = Character(first)
            let value = String(String.UnicodeScalarView(line.dropFirst(2)))
            if !sawVersion {
                guard type == "v" else { throw SDPError(line: number, field: "v=", reason: "the description must start with v=0") }
                guard value == "0" else { throw SDPError(line: number, field: "v=", reason: "version '\(value)' is not 0") }
                sawVersion = true
                continue
            }
            switch type {
            case "o":
                guard value.split(separator: " ").count == 6 else {
                    throw SDPError(line: number, field: "o=", reason: "expected six fields")
                }
                origin = value
                sawOrigin = true
            case "s":
                sessionName = value
                sawName = true
            case "c":
                let address = try Self.connection(value, line: number)
                if media.isEmpty { connectionAddress = address } else { media[media.count - 1].connectionAddress = address }
            case "t": timing = value
            case "m": media.append(try Self.mediaLine(value, line: number))
            case "a":
                let attribute = try Self.attribute(value, line: number)
                if media.isEmpty { attributes.append(attribute) } else { media[media.count - 1].attributes.append(attribute) }
            case "v": throw SDPError(line: number, field: "v=", reason: "a second v= line")
            case "i", "u", "e", "p", "b", "r", "z", "k": break
            default: throw SDPError(line: number, field: "\(type)=", reason: "unknown line type")
            }
        }
        guard sawVersion else { throw SDPError(line: 0, field: "v=", reason: "the description is empty") }
        guard sawOrigin else { throw SDPError(line: 0, field: "o=", reason: "missing") }
        guard sawName else { throw SDPError(line: 0, field: "s=", reason: "missing") }
    }

    /// The description with CRLF line ends.
    public var text: String {
        var lines = ["v=0", "o=\(origin)", "s=\(sessionName)"]
        if let c = connectionAddress { lines.append(Self.connectionLine(c)) }
        lines.append("t=\(timing)")
        lines += attributes.map(\.line)
        for m in media {
            lines.append("m=\(m.media) \(m.port) \(m.proto) \(m.formats.joined(separator: " "))")
            if let c = m.connectionAddress { lines.append(Self.connectionLine(c)) }
            lines += m.attributes.map(\.line)
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    private static func connectionLine(_ address: String) -> String {
        "c=IN \(address.contains(":") ? "IP6" : "IP4") \(address)"
    }

    /// The first `m=` section of `media` (`audio`, `video`).
    public func firstMedia(_ kind: String) -> SDPMedia? { media.first { $0.media == kind } }

    /// The connection address that applies to `section`: its own `c=`, else the session's.
    public func address(of section: SDPMedia) -> String? { section.connectionAddress ?? connectionAddress }

    private static func connection(_ v: String, line: Int) throws(SDPError) -> String {
        let parts = v.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[0] == "IN" else {
            throw SDPError(line: line, field: "c=", reason: "expected 'IN IP4 <address>'")
        }
        guard parts[1] == "IP4" || parts[1] == "IP6" else {
            throw SDPError(line: line, field: "c= address type", reason: "'\(parts[1])' is not IP4 or IP6")
        }
        // A multicast address may carry /ttl[/count]; the address is what precedes it.
        let address = parts[2].split(separator: "/").first.map(String.init) ?? ""
        guard !address.isEmpty else { throw SDPError(line: line, field: "c= address", reason: "empty") }
        return address
    }

    private static func mediaLine(_ v: String, line: Int) throws(SDPError) -> SDPMedia {
        let parts = v.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count >= 4 else {
            throw SDPError(line: line, field: "m=", reason: "expected '<media> <port> <proto> <format>...'")
        }
        let portText = parts[1].split(separator: "/").first ?? ""
        guard let port = UInt16(portText) else {
            throw SDPError(line: line, field: "m= port", reason: "'\(parts[1])' is not 0...65535")
        }
        let proto = String(parts[2])
        let formats = parts.dropFirst(3).map(String.init)
        if proto.hasPrefix("RTP/") {
            for f in formats where UInt8(f).map({ $0 > 127 }) ?? true {
                throw SDPError(line: line, field: "m= format", reason: "'\(f)' is not an RTP payload type 0...127")
            }
        }
        return SDPMedia(media: String(parts[0]), port: port, proto: proto, formats: formats)
    }

    private static func attribute(_ v: String, line: Int) throws(SDPError) -> SDPAttribute {
        guard let colon = v.firstIndex(of: ":") else {
            guard !v.isEmpty else { throw SDPError(line: line, field: "a=", reason: "empty attribute") }
            return SDPAttribute(v)
        }
        let name = String(v[..<colon]), value = String(v[v.index(after: colon)...])
        guard !name.isEmpty else { throw SDPError(line: line, field: "a=", reason: "empty attribute name") }
        switch name {
        case "rtpmap": _ = try SDPMedia.rtpMap(value, line: line)
        case "extmap": _ = try SDPMedia.extmap(value, line: line)
        case "crypto": _ = try SDPMedia.crypto(value, line: line)
        case "ssrc": _ = try SDPMedia.source(value, line: line)
        case "fmtp":
            let pt = value.prefix { $0 != " " }
            guard let p = UInt8(pt), p <= 127 else {
                throw SDPError(line: line, field: "a=fmtp payload type", reason: "'\(pt)' is not 0...127")
            }
        default: break
        }
        return SDPAttribute(name, value)
    }
}
