// SRTP and SRTCP (RFC 3711) through libsrtp2: suites, keys, and a protect/unprotect context that
// works in the caller's buffer (no allocation per packet).

import CSRTP
#if canImport(Glibc)
import Glibc
#endif
#if canImport(ParleyCore)
import ParleyCore
#endif

/// An SRTP protection suite, named as in RFC 4568's `a=crypto:` lines and ffmpeg's
/// `-srtp_out_suite`.
public enum SRTPSuite: String, Sendable, CaseIterable, CustomStringConvertible {
    /// AES-128 counter mode with an 80-bit HMAC-SHA1 tag (RFC 3711's default; the default here).
    case aesCM128HMACSHA1_80 = "AES_CM_128_HMAC_SHA1_80"
    /// AES-128 counter mode with a 32-bit HMAC-SHA1 tag on RTP (SRTCP keeps 80 bits, RFC 4568).
    case aesCM128HMACSHA1_32 = "AES_CM_128_HMAC_SHA1_32"
    /// AES-128 in Galois/counter mode with a 16-byte tag (RFC 7714).
    case aeadAES128GCM = "AEAD_AES_128_GCM"
    /// AES-256 in Galois/counter mode with a 16-byte tag (RFC 7714).
    case aeadAES256GCM = "AEAD_AES_256_GCM"

    /// The suite named `name` (case-sensitive, as RFC 4568 registers it).
    public init(name: String) throws(SRTPError) {
        guard let s = SRTPSuite(rawValue: name) else { throw .unknownSuite(name) }
        self = s
    }

    public var description: String { rawValue }

    /// Master key bytes: 32 for AES-256, 16 for the AES-128 suites.
    public var masterKeyLength: Int { self == .aeadAES256GCM ? 32 : 16 }
    /// Master salt bytes: 14 for AES-CM, 12 for AES-GCM.
    public var masterSaltLength: Int { isAEAD ? 12 : 14 }
    /// Whether the suite is an AES-GCM one (RFC 7714): 12-byte salt, 16-byte tag on RTP and RTCP.
    public var isAEAD: Bool { self == .aeadAES128GCM || self == .aeadAES256GCM }
    /// Key and salt together: the bytes an SDES `inline:` key carries.
    public var keyMaterialLength: Int { masterKeyLength + masterSaltLength }
    /// Bytes SRTP adds to an RTP packet (the authentication tag).
    public var rtpOverhead: Int {
        switch self {
        case .aesCM128HMACSHA1_80: 10
        case .aesCM128HMACSHA1_32: 4
        case .aeadAES128GCM, .aeadAES256GCM: 16
        }
    }
    /// Bytes SRTCP adds to an RTCP packet (the 4-byte index and the tag).
    public var rtcpOverhead: Int { 4 + (isAEAD ? 16 : 10) }

    fileprivate func setPolicies(rtp: inout srtp_crypto_policy_t, rtcp: inout srtp_crypto_policy_t) {
        switch self {
        case .aesCM128HMACSHA1_80:
            parley_srtp_policy_aes_cm_128_hmac_sha1_80(&rtp)
            parley_srtp_policy_aes_cm_128_hmac_sha1_80(&rtcp)
        case .aesCM128HMACSHA1_32:
            srtp_crypto_policy_set_aes_cm_128_hmac_sha1_32(&rtp)
            parley_srtp_policy_aes_cm_128_hmac_sha1_80(&rtcp)
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&rtcp)
        case .aeadAES256GCM:
            srtp_crypto_policy_set_aes_gcm_256_16_auth(&rtp)
            srtp_crypto_policy_set_aes_gcm_256_16_auth(&rtcp)
        }
    }
}

/// What went wrong setting up SRTP or with one packet.
public enum SRTPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A suite name that is not one of ``SRTPSuite``'s.
    case unknownSuite(String)
    /// A key that is not valid base64.
    case malformedKey
    /// Key material of the wrong size for its suite.
    case wrongKeyLength(suite: SRTPSuite, expected: Int, got: Int)
    /// The system's random source failed while generating a key.
    case randomSourceFailed(errno: Errno)
    /// libsrtp refused to start or to create a context (its status code).
    case setupFailed(status: Int32)
    /// A packet too short, not version 2, or with a header that overruns it.
    case malformedPacket(length: Int)
    /// The buffer has no room for the protected packet.
    case bufferTooSmall(needed: Int, capacity: Int)
    /// The tag did not verify: a tampered packet or the wrong key.
    case authenticationFailed
    /// The packet index was seen before or is older than the replay window.
    case replayed
    /// libsrtp failed another way (its status code).
    case failed(status: Int32)

    public var description: String {
        switch self {
        case .unknownSuite(let n):
            "unknown SRTP suite '\(n)' (known: \(SRTPSuite.allCases.map(\.rawValue).joined(separator: ", ")))"
        case .malformedKey: "the SRTP key is not valid base64"
        case .wrongKeyLength(let s, let e, let g): "an SRTP key for \(s) has \(e) bytes of key and salt, not \(g)"
        case .randomSourceFailed(let e): "the system random source failed: \(e) (errno \(e.rawValue))"
        case .setupFailed(let s): "libsrtp could not set up the context (status \(s))"
        case .malformedPacket(let n): "a malformed packet of \(n) bytes"
        case .bufferTooSmall(let n, let c): "the packet needs \(n) bytes of buffer, it has \(c)"
        case .authenticationFailed: "the packet failed authentication (tampered, or the wrong key)"
        case .replayed: "the packet was replayed or is older than the replay window"
        case .failed(let s): "libsrtp failed (status \(s))"
        }
    }
}

/// A master key and salt for one ``SRTPSuite``. Secret: its `description` never shows it; only
/// ``base64`` does, for writing into an SDP.
public struct SRTPKey: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The suite this key is for.
    public let suite: SRTPSuite
    /// Key then salt (``SRTPSuite/keyMaterialLength`` bytes).
    public let material: [UInt8]

    /// A key from raw key-and-salt bytes.
    public init(suite: SRTPSuite, material: [UInt8]) throws(SRTPError) {
        guard material.count == suite.keyMaterialLength else {
            throw .wrongKeyLength(suite: suite, expected: suite.keyMaterialLength, got: material.count)
        }
        self.suite = suite
        self.material = material
    }

    /// A key from RFC 4568's base64 form (the text after `inline:`, without lifetime or MKI).
    public init(suite: SRTPSuite, base64: String) throws(SRTPError) {
        guard let bytes = Base64.decode(base64) else { throw .malformedKey }
        try self.init(suite: suite, material: bytes)
    }

    /// A fresh key from the system's cryptographically secure random source (`getrandom`).
    public static func generate(suite: SRTPSuite = .aesCM128HMACSHA1_80) throws(SRTPError) -> SRTPKey {
        var bytes = [UInt8](repeating: 0, count: suite.keyMaterialLength)
        var filled = 0
        while filled < bytes.count {
            let result = bytes.withUnsafeMutableBytes { raw in
                valueOrErrno { getrandom(raw.baseAddress! + filled, raw.count - filled, 0) }
            }
            switch result {
            case .success(let n): filled += n
            case .failure(let e): throw .randomSourceFailed(errno: e)
            }
        }
        return try SRTPKey(suite: suite, material: bytes)
    }

    /// The key in RFC 4568's base64 form, for an SDP `a=crypto:` line. This is the secret.
    public var base64: String { Base64.encode(material) }

    public var description: String { "SRTPKey(\(suite), \(material.count) bytes, redacted)" }
    public var debugDescription: String { description }
}

/// libsrtp's one-time initialisation (thread-safe: a Swift global is initialised once).
private let srtpLibraryStatus: Int32 = Int32(srtp_init().rawValue)

/// One direction of SRTP for one key: protects outgoing packets or unprotects incoming ones,
/// in place in the caller's buffer. Any SSRC is accepted (libsrtp keeps per-SSRC state, and a
/// replay window of ``replayWindow`` packets per SSRC on the inbound side).
///
/// Threading: one owner. Not copyable: it owns a libsrtp session, freed on deinit.
public struct SRTPContext: ~Copyable {
    /// Which way packets go through the context.
    public enum Direction: Sendable {
        /// Protects packets this side sends.
        case outbound
        /// Unprotects packets this side receives.
        case inbound
    }

    /// Bytes past a packet's end that ``protectRTP(_:length:)`` and ``protectRTCP(_:length:)``
    /// may write (libsrtp's largest trailer, plus the SRTCP index): a buffer needs this room.
    public static let trailerRoom = Int(parley_srtp_max_trailer) + 4

    /// The suite of the key.
    public let suite: SRTPSuite
    /// The direction this context was made for.
    public let direction: Direction
    /// Inbound: packets per SSRC the replay check remembers.
    public let replayWindow: Int
    private let session: OpaquePointer

    /// A context for `key`. `replayWindow` is 64...32768 (1024, as libwebrtc uses, by default).
    /// `allowRetransmission` lets an outbound context protect the same sequence number again (a
    /// plain resend; libsrtp refuses it otherwise).
    public init(key: SRTPKey, direction: Direction, replayWindow: Int = 1024,
                allowRetransmission: Bool = false) throws(SRTPError) {
        guard srtpLibraryStatus == 0 else { throw .setupFailed(status: srtpLibraryStatus) }
        guard (64...32768).contains(replayWindow) else { throw .setupFailed(status: Int32(srtp_err_status_bad_param.rawValue)) }
        var policy = srtp_policy_t()
        key.suite.setPolicies(rtp: &policy.rtp, rtcp: &policy.rtcp)
        policy.ssrc.type = direction == .outbound ? ssrc_any_outbound : ssrc_any_inbound
        policy.window_size = UInt(replayWindow)
        policy.allow_repeat_tx = allowRetransmission ? 1 : 0
        var material = key.material
        var created: OpaquePointer?
        let status = material.withUnsafeMutableBufferPointer { keyBytes in
            policy.key = keyBytes.baseAddress
            return srtp_create(&created, &policy)
        }
        for i in material.indices { material[i] = 0 }
        guard status == srtp_err_status_ok, let created else {
            throw .setupFailed(status: Int32(status.rawValue))
        }
        session = created
        suite = key.suite
        self.direction = direction
        self.replayWindow = replayWindow
    }

    deinit { srtp_dealloc(session) }

    /// Protects the RTP packet in `buffer[0..<length]` in place and returns the SRTP packet's
    /// length (`length + suite.rtpOverhead`). The buffer needs ``trailerRoom`` bytes past
    /// `length`.
    public mutating func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(srtp_protect, buffer, length: length, rtcp: false, protecting: true)
    }

    /// Verifies and decrypts the SRTP packet in `buffer[0..<length]` in place and returns the
    /// RTP packet's length. Throws (and leaves nothing a parser should read) when the packet is
    /// malformed, fails authentication or is a replay.
    public mutating func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(srtp_unprotect, buffer, length: length, rtcp: false, protecting: false)
    }

    /// Protects the compound RTCP packet in `buffer[0..<length]` in place and returns the SRTCP
    /// packet's length (`length + suite.rtcpOverhead`). Needs ``trailerRoom`` bytes past `length`.
    public mutating func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(srtp_protect_rtcp, buffer, length: length, rtcp: true, protecting: true)
    }

    /// Verifies and decrypts the SRTCP packet in `buffer[0..<length]` in place and returns the
    /// RTCP packet's length.
    public mutating func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) -> Int {
        try transform(srtp_unprotect_rtcp, buffer, length: length, rtcp: true, protecting: false)
    }

    /// Checks the RTP (or RTCP) packet in `buffer[0..<length]` (its header whole, the tag present
    /// when unprotecting, room for the trailer when protecting), then calls one of libsrtp's
    /// in-place functions on it; the new length.
    @inline(__always)
    private func transform(_ function: (OpaquePointer?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> srtp_err_status_t,
                           _ buffer: UnsafeMutableRawBufferPointer, length: Int, rtcp: Bool,
                           protecting: Bool) throws(SRTPError) -> Int {
        if rtcp {
            try checkRTCP(buffer, length: length, trailer: protecting ? 0 : suite.rtcpOverhead)
        } else {
            try checkRTP(buffer, length: length, tag: protecting ? 0 : suite.rtpOverhead)
        }
        if protecting { try checkRoom(buffer, length: length) }
        var n = Int32(length)
        try Self.check(function(session, buffer.baseAddress, &n), length: length)
        return Int(n)
    }

    // The RTP header must be whole (fixed part, CSRCs, extension header) before libsrtp reads it.
    private func checkRTP(_ buffer: UnsafeMutableRawBufferPointer, length: Int, tag: Int) throws(SRTPError) {
        guard length >= 12 + tag, length <= buffer.count, buffer[0] >> 6 == 2 else { throw .malformedPacket(length: length) }
        var header = 12 + 4 * Int(buffer[0] & 0x0F)
        if buffer[0] & 0x10 != 0 {
            guard length >= header + 4 + tag else { throw .malformedPacket(length: length) }
            header += 4 + 4 * (Int(buffer[header + 2]) << 8 | Int(buffer[header + 3]))
        }
        guard length >= header + tag else { throw .malformedPacket(length: length) }
    }

    private func checkRTCP(_ buffer: UnsafeMutableRawBufferPointer, length: Int, trailer: Int) throws(SRTPError) {
        guard length >= 8 + trailer, length <= buffer.count, buffer[0] >> 6 == 2 else { throw .malformedPacket(length: length) }
    }

    private func checkRoom(_ buffer: UnsafeMutableRawBufferPointer, length: Int) throws(SRTPError) {
        let needed = length + Self.trailerRoom
        guard buffer.count >= needed else { throw .bufferTooSmall(needed: needed, capacity: buffer.count) }
    }

    private static func check(_ status: srtp_err_status_t, length: Int) throws(SRTPError) {
        switch status {
        case srtp_err_status_ok: return
        case srtp_err_status_auth_fail, srtp_err_status_cipher_fail: throw .authenticationFailed
        case srtp_err_status_replay_fail, srtp_err_status_replay_old: throw .replayed
        case srtp_err_status_bad_param, srtp_err_status_parse_err: throw .malformedPacket(length: length)
        default: throw .failed(status: Int32(status.rawValue))
        }
    }
}
