// The ECDSA key and self-signed certificate a DTLS-SRTP endpoint presents (RFC 5763, RFC 8827
// section 6.5), made fresh per call; only its fingerprint travels, in the SDP.

import CDTLS
#if canImport(ParleySDP)
import ParleySDP  // absent when compiled standalone with the SDP sources (Fuzz/targets/dtls-receive)
#endif

/// An ECDSA P-256 key and a self-signed X.509 certificate for it, made fresh (typically one
/// per call), and the OpenSSL context every ``DTLSConnection`` made with it shares. Its
/// ``fingerprint`` goes into the local SDP's `a=fingerprint:` line.
///
/// The certificate has a random 63-bit serial number and is valid from a day before it was
/// made (for peers whose clocks run behind) until `validityDays` after. The private key never
/// leaves OpenSSL: ``description`` shows only the fingerprint.
///
/// Threading: immutable after creation; connections may be made from it on any thread.
public final class DTLSCertificate: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The certificate's SHA-256 fingerprint, for the local SDP.
    public let fingerprint: SDPFingerprint
    /// Days the certificate stays valid after it was made.
    public let validityDays: Int
    /// The OpenSSL context (`SSL_CTX`) holding the key and certificate: DTLS 1.2 only, no MTU
    /// queries to the (absent) socket.
    let context: OpaquePointer

    /// Makes a new key and certificate with subject and issuer `CN=commonName`.
    /// - Throws: ``DTLSError/invalidConfiguration(_:)`` for a common name that is empty, longer
    ///   than 64 bytes or holds a NUL, or a validity outside 1...3650 days;
    ///   ``DTLSError/certificateFailed(_:)`` when OpenSSL fails (its error queue's text).
    public init(commonName: String = "parley", validityDays: Int = 30) throws(DTLSError) {
        let name = Array(commonName.utf8)
        guard (1...64).contains(name.count), !name.contains(0) else {
            throw .invalidConfiguration("certificate common name of \(name.count) bytes (1...64, no NUL)")
        }
        guard (1...3650).contains(validityDays) else {
            throw .invalidConfiguration("certificate validity of \(validityDays) days (1...3650)")
        }
        ERR_clear_error()
        guard let key = parley_dtls_ec_p256_key() else { throw .certificateFailed(openSSLErrors()) }
        defer { EVP_PKEY_free(key) }
        guard let x509 = X509_new() else { throw .certificateFailed(openSSLErrors()) }
        defer { X509_free(x509) }
        guard Self.fill(x509, key: key, commonName: name, validityDays: validityDays) else {
            throw .certificateFailed(openSSLErrors())
        }
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var digestLength: UInt32 = 0
        guard X509_digest(x509, EVP_sha256(), &digest, &digestLength) == 1 else {
            throw .certificateFailed(openSSLErrors())
        }
        do { fingerprint = try SDPFingerprint.sha256(Array(digest.prefix(Int(digestLength)))) } catch {
            throw .certificateFailed("the certificate's digest: \(error)")
        }
        guard let ctx = SSL_CTX_new(DTLS_method()) else { throw .certificateFailed(openSSLErrors()) }
        // The context takes its own references to the key and the certificate.
        guard parley_dtls_ctx_use_dtls12(ctx) == 1, SSL_CTX_use_certificate(ctx, x509) == 1,
              SSL_CTX_use_PrivateKey(ctx, key) == 1, SSL_CTX_check_private_key(ctx) == 1 else {
            let reason = openSSLErrors()
            SSL_CTX_free(ctx)
            throw .certificateFailed(reason)
        }
        parley_dtls_ctx_no_query_mtu(ctx)
        context = ctx
        self.validityDays = validityDays
    }

    deinit { SSL_CTX_free(context) }

    /// Version 3, random serial, validity window, subject and issuer, public key, signature.
    private static func fill(_ x509: OpaquePointer, key: OpaquePointer, commonName: [UInt8], validityDays: Int) -> Bool {
        var serial = [UInt8](repeating: 0, count: 8)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else { return false }
        serial[0] &= 0x7F   // a positive INTEGER
        guard X509_set_version(x509, Int(X509_VERSION_3)) == 1,
              let bn = BN_bin2bn(serial, Int32(serial.count), nil) else { return false }
        defer { BN_free(bn) }
        guard BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x509)) != nil,
              X509_gmtime_adj(X509_getm_notBefore(x509), -86_400) != nil,
              X509_gmtime_adj(X509_getm_notAfter(x509), validityDays * 86_400) != nil,
              let name = X509_get_subject_name(x509),
              X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, Int32(commonName.count), -1, 0) == 1,
              X509_set_issuer_name(x509, name) == 1,
              X509_set_pubkey(x509, key) == 1 else { return false }
        return X509_sign(x509, key, EVP_sha256()) > 0
    }

    public var description: String { "DTLSCertificate(ECDSA P-256, \(fingerprint.sdpValue), private key redacted)" }
    public var debugDescription: String { description }
}
