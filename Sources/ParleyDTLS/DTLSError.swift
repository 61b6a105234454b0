// What can go wrong making a certificate, reading a fingerprint, or in a DTLS connection.

import CDTLS
#if canImport(ParleySDP)
import ParleySDP  // absent when compiled standalone with the SDP sources (Fuzz/targets/dtls-receive)
#endif

/// What went wrong in ParleyDTLS. OpenSSL's own words (its error queue) ride along where they
/// help; no case ever carries key material.
public enum DTLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// OpenSSL could not make the key, the certificate, or the context that holds them.
    case certificateFailed(String)
    /// The peer's fingerprint is of a hash other than `sha-256`, the one used here.
    case unsupportedFingerprintAlgorithm(String)
    /// An `a=setup:` value that names no role here (`active` or `passive`; for an answer to an
    /// offer, also `actpass`).
    case invalidSetup(String)
    /// A configuration value out of range: which one, and why.
    case invalidConfiguration(String)
    /// OpenSSL could not set the connection up.
    case setupFailed(String)
    /// The peer's certificate does not have the fingerprint its SDP announced: the connection
    /// failed and has no keys.
    case fingerprintMismatch(expected: SDPFingerprint, actual: SDPFingerprint)
    /// The handshake failed: OpenSSL's reason (a fatal alert from the peer, a protocol error).
    case handshakeFailed(String)
    /// The peer never answered the last flight, however often it was sent again.
    case handshakeTimedOut
    /// An established connection broke (a fatal alert or a protocol error after the handshake).
    case protocolError(String)
    /// A datagram that is not DTLS: empty, or a first byte outside 20...63 (RFC 7983's demultiplexing).
    case notDTLS(length: Int)
    /// Application data before the handshake completed.
    case notConnected
    /// The connection was closed (by either side); nothing more goes through it.
    case connectionClosed
    /// Application data larger than one DTLS record carries at the configured MTU.
    case messageTooLarge(size: Int, limit: Int)
    /// Exporting the SRTP keying material failed.
    case keyExportFailed(String)

    public var description: String {
        switch self {
        case .certificateFailed(let m): "could not make the DTLS certificate: \(m)"
        case .unsupportedFingerprintAlgorithm(let a): "unsupported fingerprint hash '\(a)' (only sha-256)"
        case .invalidSetup(let s): "a=setup:\(s) names no DTLS role here"
        case .invalidConfiguration(let m): "invalid DTLS configuration: \(m)"
        case .setupFailed(let m): "could not set up the DTLS connection: \(m)"
        case .fingerprintMismatch(let e, let a): "the peer's certificate is \(a), its SDP announced \(e)"
        case .handshakeFailed(let m): "the DTLS handshake failed: \(m)"
        case .handshakeTimedOut: "the DTLS handshake timed out (the peer never answered)"
        case .protocolError(let m): "the DTLS connection failed: \(m)"
        case .notDTLS(let n): "a datagram of \(n) bytes that is not DTLS"
        case .notConnected: "the DTLS handshake has not completed"
        case .connectionClosed: "the DTLS connection is closed"
        case .messageTooLarge(let s, let l): "\(s) bytes of application data do not fit one DTLS record (at most \(l))"
        case .keyExportFailed(let m): "could not export the DTLS-SRTP keys: \(m)"
        }
    }
}

/// OpenSSL's error queue for this thread as one line (and the queue emptied); `fallback` when
/// it is empty.
func openSSLErrors(_ fallback: String = "no OpenSSL error recorded") -> String {
    var parts: [String] = []
    var buffer = [CChar](repeating: 0, count: 256)
    while true {
        let code = ERR_get_error()
        if code == 0 { break }
        let text = buffer.withUnsafeMutableBufferPointer { b in
            ERR_error_string_n(code, b.baseAddress, b.count)
            return String(cString: b.baseAddress!)
        }
        parts.append(text)
    }
    return parts.isEmpty ? fallback : parts.joined(separator: "; ")
}
