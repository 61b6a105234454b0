// ICE candidates as SDP `a=candidate:` attributes (RFC 8839 §5.1), written and read.
// Pure Swift (compiled standalone by the `ice-candidate` fuzz target): no C imports.

/// One ICE candidate: a transport address an agent can be reached at, with its priority and
/// kind, as carried in an SDP `a=candidate:` line (RFC 8839 §5.1):
///
///     a=candidate:1 1 UDP 2130706431 192.0.2.7 50000 typ host
///     a=candidate:2 1 UDP 1694498815 198.51.100.4 61000 typ srflx raddr 192.0.2.7 rport 50000
///
/// Every value is checked when made: a candidate always writes out as a line that reads back
/// to itself.
///
/// Threading: a value type; freely sendable.
public struct ICECandidate: Sendable, Hashable, CustomStringConvertible {
    /// The transport protocol of the candidate.
    public enum Transport: String, Sendable, Hashable {
        /// UDP (the only transport Parley's agent uses).
        case udp = "UDP"
        /// TCP (RFC 6544), with a ``TCPType``.
        case tcp = "TCP"
    }

    /// How the candidate's address was obtained (RFC 8445 §5.1.1).
    public enum Kind: String, Sendable, Hashable {
        /// An address of one of the agent's interfaces.
        case host
        /// A server-reflexive address: the agent's address as a STUN server saw it.
        case serverReflexive = "srflx"
        /// A peer-reflexive address: learnt from a connectivity check.
        case peerReflexive = "prflx"
        /// An address on a TURN relay.
        case relay
    }

    /// The role of a TCP candidate's connection (RFC 6544 §4.5).
    public enum TCPType: String, Sendable, Hashable {
        /// Opens connections, accepts none.
        case active
        /// Accepts connections, opens none.
        case passive
        /// Simultaneous open.
        case simultaneousOpen = "so"
    }

    /// An extension attribute after the known fields (e.g. `generation 0`, `ufrag abcd`,
    /// `network-id 1`), kept in order and written back unchanged.
    public struct Extension: Sendable, Hashable {
        /// The attribute's name (no white space).
        public let name: String
        /// The attribute's value (no white space).
        public let value: String

        /// An extension attribute.
        /// - Throws: ``ICECandidateError/malformedExtension(_:)`` when the name or value is empty
        ///   or holds white space or a control character, or the name is one of the known fields.
        public init(name: String, value: String) throws(ICECandidateError) {
            guard ICECandidate.isToken(name), ICECandidate.isToken(value),
                  !["typ", "raddr", "rport", "tcptype"].contains(name)
            else { throw .malformedExtension(name) }
            self.name = name
            self.value = value
        }

        fileprivate init(unchecked name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Groups candidates that share a base, server and type (1 to 32 characters of
    /// `A-Z a-z 0-9 + /`).
    public let foundation: String
    /// The component (1 to 256; 1 is RTP, and with RTCP multiplexing the only one).
    public let component: Int
    /// The transport protocol.
    public let transport: Transport
    /// The candidate's priority (RFC 8445 §5.1.2).
    public let priority: UInt32
    /// The address: an IPv4 or IPv6 literal, or a host name (e.g. a browser's mDNS `.local` name).
    public let address: String
    /// The port (0 to 65535; 9, the discard port, for TCP active candidates).
    public let port: UInt16
    /// How the address was obtained.
    public let kind: Kind
    /// The related address and port (`raddr`/`rport`): the base of a reflexive or relayed
    /// candidate; `nil` when the line has none.
    public let related: (address: String, port: UInt16)?
    /// The TCP candidate's type; `nil` for UDP.
    public let tcpType: TCPType?
    /// Extension attributes after the known fields, in order.
    public let extensions: [Extension]

    /// A candidate from its fields.
    /// - Throws: ``ICECandidateError`` naming the first field out of its range or syntax, or
    ///   ``ICECandidateError/tcpTypeMismatch`` when `tcpType` is given for UDP or missing for TCP.
    public init(foundation: String, component: Int = 1, transport: Transport = .udp, priority: UInt32,
                address: String, port: UInt16, kind: Kind, related: (address: String, port: UInt16)? = nil,
                tcpType: TCPType? = nil, extensions: [Extension] = []) throws(ICECandidateError) {
        guard Self.isFoundation(foundation) else { throw .malformedFoundation(foundation) }
        guard (1...256).contains(component) else { throw .malformedComponent(String(component)) }
        guard Self.isConnectionAddress(address) else { throw .malformedAddress(address) }
        if let related, !Self.isConnectionAddress(related.address) {
            throw .malformedAddress(related.address)
        }
        guard (transport == .tcp) == (tcpType != nil) else { throw .tcpTypeMismatch }
        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = priority
        self.address = address
        self.port = port
        self.kind = kind
        self.related = related
        self.tcpType = tcpType
        self.extensions = extensions
    }

    /// Reads a candidate attribute: `a=candidate:…`, or `candidate:…` as in a trickled
    /// candidate (e.g. Janus's `trickle` request or a browser's `RTCIceCandidate.candidate`).
    /// A trailing CR, LF or CRLF is ignored; fields are separated by single spaces; the
    /// transport and `typ` keyword are read without regard to case.
    /// - Throws: ``ICECandidateError`` naming what is missing or malformed.
    public init(parsing line: String) throws(ICECandidateError) {
        var bytes = Substring(line).utf8[...]
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes = bytes.dropLast() }
        if bytes.starts(with: "a=".utf8) { bytes = bytes.dropFirst(2) }
        guard bytes.starts(with: "candidate:".utf8) else { throw .notACandidate }
        bytes = bytes.dropFirst("candidate:".utf8.count)

        guard !bytes.isEmpty else { throw .missingField("foundation") }
        let fields = bytes.split(separator: 0x20, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        if let empty = fields.firstIndex(where: \.isEmpty) { throw .malformedSpacing(position: empty) }
        guard fields.count >= 8 else { throw .missingField(Self.fieldNames[min(fields.count, 6)]) }

        let foundation = String(fields[0])
        guard Self.isFoundation(foundation) else { throw .malformedFoundation(foundation) }
        guard let component = Self.decimal(fields[1], maxDigits: 3), (1...256).contains(component)
        else { throw .malformedComponent(String(fields[1])) }
        let transport: Transport
        switch fields[2].lowercased() {
        case "udp": transport = .udp
        case "tcp": transport = .tcp
        default: throw .unsupportedTransport(String(fields[2]))
        }
        guard let priority = Self.decimal(fields[3], maxDigits: 10), priority <= Int(UInt32.max)
        else { throw .malformedPriority(String(fields[3])) }
        let address = String(fields[4])
        guard Self.isConnectionAddress(address) else { throw .malformedAddress(address) }
        guard let port = Self.port(fields[5]) else { throw .malformedPort(String(fields[5])) }
        guard fields[6].lowercased() == "typ" else { throw .missingField("typ") }
        guard let kind = Kind(rawValue: fields[7].lowercased()) else {
            throw .unknownKind(String(fields[7]))
        }

        var relatedAddress: String?
        var relatedPort: UInt16?
        var tcpType: TCPType?
        var extensions: [Extension] = []
        var i = 8
        while i < fields.count {
            let name = fields[i]
            guard i + 1 < fields.count else { throw .malformedExtension(String(name)) }
            let value = fields[i + 1]
            switch name {
            case "raddr":
                guard relatedAddress == nil, extensions.isEmpty, tcpType == nil else {
                    throw .misplacedAttribute("raddr")
                }
                guard Self.isConnectionAddress(value) else { throw .malformedAddress(String(value)) }
                relatedAddress = String(value)
            case "rport":
                guard relatedAddress != nil, relatedPort == nil, extensions.isEmpty, tcpType == nil else {
                    throw .misplacedAttribute("rport")
                }
                guard let p = Self.port(value) else { throw .malformedPort(String(value)) }
                relatedPort = p
            case "tcptype":
                guard tcpType == nil, extensions.isEmpty else { throw .misplacedAttribute("tcptype") }
                guard let t = TCPType(rawValue: String(value)) else { throw .malformedTCPType(String(value)) }
                tcpType = t
            case "typ":
                throw .misplacedAttribute("typ")
            default:
                guard Self.isToken(name), Self.isToken(value) else { throw .malformedExtension(String(name)) }
                extensions.append(Extension(unchecked: String(name), value: String(value)))
            }
            i += 2
        }
        guard (relatedAddress == nil) == (relatedPort == nil) else { throw .incompleteRelatedAddress }
        guard (transport == .tcp) == (tcpType != nil) else { throw .tcpTypeMismatch }

        self.foundation = foundation
        self.component = component
        self.transport = transport
        self.priority = UInt32(priority)
        self.address = address
        self.port = port
        self.kind = kind
        if let relatedAddress, let relatedPort {
            self.related = (relatedAddress, relatedPort)
        } else {
            self.related = nil
        }
        self.tcpType = tcpType
        self.extensions = extensions
    }

    /// The attribute's value, `candidate:…` (the form trickled candidates take).
    public var attribute: String {
        var s = "candidate:\(foundation) \(component) \(transport.rawValue) \(priority) \(address) \(port) typ \(kind.rawValue)"
        if let related { s += " raddr \(related.address) rport \(related.port)" }
        if let tcpType { s += " tcptype \(tcpType.rawValue)" }
        for e in extensions { s += " \(e.name) \(e.value)" }
        return s
    }

    /// The SDP line, `a=candidate:…` (without a line ending).
    public var sdpLine: String { "a=" + attribute }

    /// The SDP line.
    public var description: String { sdpLine }

    public static func == (a: ICECandidate, b: ICECandidate) -> Bool {
        a.foundation == b.foundation && a.component == b.component && a.transport == b.transport
            && a.priority == b.priority && a.address == b.address && a.port == b.port && a.kind == b.kind
            && a.related?.address == b.related?.address && a.related?.port == b.related?.port
            && a.tcpType == b.tcpType && a.extensions == b.extensions
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(foundation)
        hasher.combine(component)
        hasher.combine(transport)
        hasher.combine(priority)
        hasher.combine(address)
        hasher.combine(port)
        hasher.combine(kind)
        hasher.combine(related?.address)
        hasher.combine(related?.port)
        hasher.combine(tcpType)
        hasher.combine(extensions)
    }

    // MARK: Syntax

    private static let fieldNames = ["foundation", "component", "transport", "priority", "address", "port", "typ"]

    /// 1 to 32 ice-chars (RFC 8839: ALPHA / DIGIT / "+" / "/").
    static func isFoundation(_ s: String) -> Bool {
        let u = s.utf8
        return (1...32).contains(u.count) && u.allSatisfy { isAlphanumeric($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/") }
    }

    /// A non-empty run of visible ASCII characters (no space or control character).
    static func isToken<S: StringProtocol>(_ s: S) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }

    /// 1 to `maxDigits` decimal digits.
    private static func decimal<S: StringProtocol>(_ s: S, maxDigits: Int) -> Int? {
        let u = s.utf8
        guard (1...maxDigits).contains(u.count) else { return nil }
        var v = 0
        for c in u {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) else { return nil }
            v = v * 10 + Int(c - UInt8(ascii: "0"))
        }
        return v
    }

    private static func port<S: StringProtocol>(_ s: S) -> UInt16? {
        guard let v = decimal(s, maxDigits: 5), v <= Int(UInt16.max) else { return nil }
        return UInt16(v)
    }

    private static func isAlphanumeric(_ c: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(c) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(c)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c)
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(c) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(c)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(c)
    }

    /// An IPv4 or IPv6 literal or a host name (RFC 8839's connection-address).
    static func isConnectionAddress<S: StringProtocol>(_ s: S) -> Bool {
        let u = Array(s.utf8)
        if u.contains(UInt8(ascii: ":")) { return isIPv6(u[...]) }
        return isIPv4(u[...]) || isHostName(u)
    }

    /// Four decimal octets, 0 to 255, without leading zeros.
    static func isIPv4(_ u: ArraySlice<UInt8>) -> Bool {
        let parts = u.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        for p in parts {
            guard (1...3).contains(p.count), p.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
                  p.count == 1 || p.first != UInt8(ascii: "0")
            else { return false }
            if p.reduce(0, { $0 * 10 + Int($1 - UInt8(ascii: "0")) }) > 255 { return false }
        }
        return true
    }

    /// RFC 4291 §2.2 text: eight groups of 1 to 4 hex digits, at most one `::` standing for one
    /// or more zero groups, and optionally a dotted IPv4 address as the last two groups.
    static func isIPv6(_ u: ArraySlice<UInt8>) -> Bool {
        guard (2...45).contains(u.count) else { return false }
        var groups = 0
        var elided = false
        var rest = u
        if rest.starts(with: [UInt8(ascii: ":"), UInt8(ascii: ":")]) {
            elided = true
            rest = rest.dropFirst(2)
            if rest.isEmpty { return true }
        } else if rest.first == UInt8(ascii: ":") {
            return false
        }
        while !rest.isEmpty {
            let end = rest.firstIndex(of: UInt8(ascii: ":")) ?? rest.endIndex
            let group = rest[rest.startIndex..<end]
            if end == rest.endIndex, group.contains(UInt8(ascii: ".")) {
                guard isIPv4(group) else { return false }
                groups += 2
                break
            }
            guard (1...4).contains(group.count), group.allSatisfy(isHexDigit) else { return false }
            groups += 1
            rest = rest[end...]
            if rest.isEmpty { break }
            rest = rest.dropFirst()  // the ':'
            if rest.first == UInt8(ascii: ":") {
                guard !elided else { return false }
                elided = true
                rest = rest.dropFirst()
                if rest.isEmpty { break }
            } else if rest.isEmpty {
                return false  // a trailing single ':'
            }
        }
        return elided ? groups <= 7 : groups == 8
    }

    /// Dot-separated labels of letters, digits and inner hyphens (1 to 63 characters each, 253
    /// in all), the last not all digits.
    static func isHostName(_ u: [UInt8]) -> Bool {
        guard (1...253).contains(u.count) else { return false }
        let labels = u.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        for l in labels {
            guard (1...63).contains(l.count), l.allSatisfy({ isAlphanumeric($0) || $0 == UInt8(ascii: "-") }),
                  l.first != UInt8(ascii: "-"), l.last != UInt8(ascii: "-")
            else { return false }
        }
        return !labels.last!.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }
}

/// Why a candidate line or field was refused.
public enum ICECandidateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The line does not start with `a=candidate:` or `candidate:`.
    case notACandidate
    /// The line ends before this field (`foundation` … `port`, `typ`).
    case missingField(String)
    /// Two spaces in a row, or a leading or trailing space: the empty field's position.
    case malformedSpacing(position: Int)
    /// A foundation that is not 1 to 32 characters of `A-Z a-z 0-9 + /`.
    case malformedFoundation(String)
    /// A component that is not 1 to 256.
    case malformedComponent(String)
    /// A transport other than UDP or TCP.
    case unsupportedTransport(String)
    /// A priority that is not a decimal number up to 4294967295.
    case malformedPriority(String)
    /// An address that is neither an IP literal nor a host name.
    case malformedAddress(String)
    /// A port that is not a decimal number up to 65535.
    case malformedPort(String)
    /// A candidate type other than host, srflx, prflx or relay.
    case unknownKind(String)
    /// `raddr` without `rport`, or `rport` without `raddr`.
    case incompleteRelatedAddress
    /// A TCP type that is not active, passive or so.
    case malformedTCPType(String)
    /// A TCP candidate without a `tcptype`, or a UDP candidate with one.
    case tcpTypeMismatch
    /// A known attribute repeated or out of its place (`raddr`, `rport`, `tcptype`, `typ`).
    case misplacedAttribute(String)
    /// An extension attribute without a value, or with a name or value holding a control character.
    case malformedExtension(String)

    public var description: String {
        switch self {
        case .notACandidate: "not an a=candidate line"
        case .missingField(let f): "candidate line ends before its \(f)"
        case .malformedSpacing(let p): "candidate field \(p) is empty (fields are separated by one space)"
        case .malformedFoundation(let s): "malformed candidate foundation '\(s)'"
        case .malformedComponent(let s): "candidate component '\(s)' is not 1 to 256"
        case .unsupportedTransport(let s): "unsupported candidate transport '\(s)'"
        case .malformedPriority(let s): "malformed candidate priority '\(s)'"
        case .malformedAddress(let s): "malformed candidate address '\(s)'"
        case .malformedPort(let s): "malformed candidate port '\(s)'"
        case .unknownKind(let s): "unknown candidate type '\(s)'"
        case .incompleteRelatedAddress: "candidate has raddr without rport or rport without raddr"
        case .malformedTCPType(let s): "malformed candidate tcptype '\(s)'"
        case .tcpTypeMismatch: "a TCP candidate needs a tcptype and a UDP candidate has none"
        case .misplacedAttribute(let s): "candidate attribute '\(s)' repeated or out of place"
        case .malformedExtension(let s): "malformed candidate extension attribute '\(s)'"
        }
    }
}
