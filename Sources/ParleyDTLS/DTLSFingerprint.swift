// A certificate's SHA-256 fingerprint as SDP carries it (RFC 8122's a=fingerprint).

/// The SHA-256 fingerprint of a DTLS certificate, as an SDP `a=fingerprint:` line carries it
/// (RFC 8122): `sha-256` and the 32 digest bytes in uppercase hex, separated by colons.
///
/// Threading: a value type; freely sendable.
public struct DTLSFingerprint: Sendable, Hashable, CustomStringConvertible {
    /// The hash function's name in SDP, the one fingerprint hash used here.
    public static let algorithm = "sha-256"
    /// Bytes of a SHA-256 digest.
    public static let byteCount = 32

    /// The digest (32 bytes).
    public let bytes: [UInt8]

    /// A fingerprint from a SHA-256 digest.
    /// - Throws: ``DTLSError/malformedFingerprint(_:)`` when `sha256` is not 32 bytes long.
    public init(sha256: [UInt8]) throws(DTLSError) {
        guard sha256.count == Self.byteCount else {
            throw .malformedFingerprint("\(sha256.count) bytes of digest")
        }
        bytes = sha256
    }

    /// A fingerprint from SDP: the attribute's value (`sha-256 AB:CD:...`) or the whole line
    /// (`a=fingerprint:sha-256 AB:CD:...`). The hash name and the hex digits may be in either
    /// case; surrounding white space is ignored.
    /// - Throws: ``DTLSError/unsupportedFingerprintAlgorithm(_:)`` for another of RFC 8122's
    ///   hashes, ``DTLSError/malformedFingerprint(_:)`` for anything else that is not exactly
    ///   a hash name and 32 colon-separated two-digit hex bytes.
    public init(sdp text: String) throws(DTLSError) {
        var value = Substring(text).drop { $0.isWhitespace }
        while value.last?.isWhitespace == true { value = value.dropLast() }
        for prefix in ["a=", "fingerprint:"] where value.lowercased().hasPrefix(prefix) {
            value = value.dropFirst(prefix.count)
        }
        let fields = value.split(whereSeparator: { $0 == " " || $0 == "\t" })
        guard fields.count == 2 else { throw .malformedFingerprint(text) }
        let hash = fields[0].lowercased()
        guard hash == Self.algorithm else {
            if ["sha-1", "sha-224", "sha-384", "sha-512", "md5", "md2"].contains(hash) {
                throw .unsupportedFingerprintAlgorithm(String(fields[0]))
            }
            throw .malformedFingerprint(text)
        }
        let groups = fields[1].split(separator: ":", omittingEmptySubsequences: false)
        guard groups.count == Self.byteCount else { throw .malformedFingerprint(text) }
        var digest: [UInt8] = []
        digest.reserveCapacity(Self.byteCount)
        for group in groups {
            let u = Array(group.utf8)
            guard u.count == 2, let high = Self.nibble(u[0]), let low = Self.nibble(u[1]) else {
                throw .malformedFingerprint(text)
            }
            digest.append(high << 4 | low)
        }
        bytes = digest
    }

    /// The attribute's value: `sha-256 AB:CD:...` (uppercase hex, colon separated).
    public var sdpValue: String { "\(Self.algorithm) \(hex)" }

    /// The whole SDP line: `a=fingerprint:sha-256 AB:CD:...`.
    public var sdpAttribute: String { "a=fingerprint:\(sdpValue)" }

    /// The digest as uppercase hex bytes separated by colons.
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

    public var description: String { sdpValue }

    /// The value of one ASCII hex digit, either case.
    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
