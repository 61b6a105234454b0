// A certificate's fingerprint as SDP carries it (RFC 8122's a=fingerprint), the one the DTLS
// handshake checks the peer's certificate against (RFC 8842).

/// A certificate fingerprint, `a=fingerprint:<hash> <hex>:<hex>:...` (RFC 8122): the hash
/// function's name and the digest's bytes. WebRTC peers use `sha-256` (``sha256(_:)``).
///
/// Threading: a value type; freely sendable.
public struct SDPFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The hash function's name, lower case (`sha-256`).
    public let algorithm: String
    /// The digest, as long as the hash function's.
    public let bytes: [UInt8]

    /// Digest lengths of RFC 8122's hash functions.
    private static let lengths = ["sha-1": 20, "sha-224": 28, "sha-256": 32, "sha-384": 48, "sha-512": 64, "md5": 16, "md2": 16]

    /// Of a description's several `a=fingerprint` lines (RFC 8122 section 5 allows one per hash;
    /// aiortc gives SHA-256, SHA-384 and SHA-512), the one to keep: the first SHA-256 one, the
    /// hash DTLS connections check, else the first.
    static func preferred(_ kept: SDPFingerprint?, _ next: SDPFingerprint) -> SDPFingerprint {
        guard let kept else { return next }
        return kept.algorithm != "sha-256" && next.algorithm == "sha-256" ? next : kept
    }

    /// A fingerprint of `bytes` under `algorithm` (any case).
    /// - Throws: ``JSEPError/invalid(mid:field:reason:)`` for a hash RFC 8122 does not name, or
    ///   a digest of another length than the hash's.
    public init(algorithm: String, bytes: [UInt8]) throws(JSEPError) {
        let name = algorithm.lowercased()
        guard let length = Self.lengths[name] else {
            throw .invalid(mid: nil, field: "a=fingerprint", reason: "'\(algorithm.prefix(16))' is not a hash function of RFC 8122")
        }
        guard bytes.count == length else {
            throw .invalid(mid: nil, field: "a=fingerprint", reason: "\(bytes.count) bytes is not a \(name) digest (\(length) bytes)")
        }
        self.algorithm = name
        self.bytes = bytes
    }

    /// The SHA-256 fingerprint of a digest.
    /// - Throws: ``JSEPError/invalid(mid:field:reason:)`` unless `digest` is 32 bytes long.
    public static func sha256(_ digest: [UInt8]) throws(JSEPError) -> SDPFingerprint {
        try SDPFingerprint(algorithm: "sha-256", bytes: digest)
    }

    /// Reads the attribute's value (`sha-256 AB:CD:...`) or the whole line
    /// (`a=fingerprint:sha-256 AB:CD:...`); the hash name and the hex digits may be in either
    /// case, surrounding white space is ignored. `mid` names the section in an error.
    /// - Throws: ``JSEPError/invalid(mid:field:reason:)`` for anything but a known hash's name
    ///   and its digest as colon-separated two-digit hex bytes.
    public init(parsing text: String, mid: String? = nil) throws(JSEPError) {
        var value = Substring(text).drop { $0.isWhitespace }
        while value.last?.isWhitespace == true { value = value.dropLast() }
        for prefix in ["a=", "fingerprint:"] where value.lowercased().hasPrefix(prefix) { value = value.dropFirst(prefix.count) }
        let fields = value.split(whereSeparator: { $0 == " " || $0 == "\t" })
        let bad = JSEPError.invalid(mid: mid, field: "a=fingerprint", reason: "expected '<hash> <hex>:<hex>...'")
        guard fields.count == 2 else { throw bad }
        var digest: [UInt8] = []
        for group in fields[1].split(separator: ":", omittingEmptySubsequences: false) {
            let u = Array(group.utf8)
            guard u.count == 2, let high = Self.nibble(u[0]), let low = Self.nibble(u[1]) else { throw bad }
            digest.append(high << 4 | low)
        }
        do { try self.init(algorithm: String(fields[0]), bytes: digest) } catch {
            guard case .invalid(_, let field, let reason) = error else { throw error }
            throw .invalid(mid: mid, field: field, reason: reason)
        }
    }

    /// The digest as upper-case hex bytes separated by colons.
    public var hex: String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3)
        for (i, b) in bytes.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ":")) }
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The attribute's value as SDP writes it: `sha-256 AB:CD:...`.
    public var sdpValue: String { "\(algorithm) \(hex)" }

    /// The whole SDP line: `a=fingerprint:sha-256 AB:CD:...`.
    public var sdpAttribute: String { "a=fingerprint:" + sdpValue }

    public var description: String { sdpValue }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
