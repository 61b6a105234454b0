// One DTLS 1.2 association over OpenSSL with no socket: datagrams in from the caller, datagrams
// out through a closure, so the ICE layer carries them. DTLS-SRTP (RFC 5763, RFC 5764): the
// use_srtp extension, the peer's certificate pinned to the fingerprint from its SDP, and the
// SRTP keys exported after the handshake. Application data (for SCTP, RFC 8261) after it.

import CDTLS
#if canImport(ParleySDP)
import ParleySDP  // absent when compiled standalone with the SDP sources (Fuzz/targets/dtls-receive)
#endif
#if canImport(ParleyCore)
import ParleyCore
#endif
#if canImport(ParleySRTP)
import ParleySRTP
#endif

/// Which end of the DTLS handshake a side is. SDP names it with `a=setup:` (RFC 4145, RFC 5763):
/// the `active` side is the client and sends the first flight, the `passive` side is the server.
public enum DTLSRole: Sendable, Hashable, CustomStringConvertible {
    /// Starts the handshake (`a=setup:active`).
    case client
    /// Answers it (`a=setup:passive`).
    case server

    /// The role of the side whose SDP says `a=setup:<setup>`: `active` is the client,
    /// `passive` the server.
    /// - Throws: ``DTLSError/invalidSetup(_:)`` for `actpass`, which leaves the role to the
    ///   answer (see ``answering(offeredSetup:)``).
    public init(setup: JSEPSetup) throws(DTLSError) {
        switch setup {
        case .active: self = .client
        case .passive: self = .server
        case .actpass: throw .invalidSetup(setup.rawValue)
        }
    }

    /// The role an answerer takes against an offer's `a=setup:` value, the one its answer
    /// announces (`JSEPSetup.answer`): the client against `actpass` or `passive`, the server
    /// against `active`.
    public static func answering(offeredSetup: JSEPSetup) -> DTLSRole {
        offeredSetup.answer == .active ? .client : .server
    }

    /// The `a=setup:` value that announces this role: `active` or `passive`.
    public var setup: JSEPSetup { self == .client ? .active : .passive }

    public var description: String { self == .client ? "client" : "server" }
}

/// The SRTP keys a DTLS-SRTP handshake agreed (RFC 5764 section 4.2), seen from one side.
/// Secret: ``description`` never shows them.
public struct DTLSSRTPKeys: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The SRTP protection profile the server chose from the client's offer.
    public let suite: SRTPSuite
    /// The key for what this side sends (its outbound `SRTPContext`): the client's write key
    /// and salt on the client, the server's on the server.
    public let local: SRTPKey
    /// The key for what the peer sends (this side's inbound `SRTPContext`).
    public let remote: SRTPKey

    public var description: String { "DTLSSRTPKeys(\(suite), redacted)" }
    public var debugDescription: String { description }
}

/// A DTLS 1.2 connection with no socket of its own, for DTLS-SRTP and the data channels
/// carried over it.
///
/// The caller carries the datagrams: ``receive(_:)-(UnsafeRawBufferPointer)`` takes each one
/// that arrives, and the `send` closure given at creation gets each one to send (at most
/// ``Configuration/mtu`` bytes). The client's ``start()`` sends the first flight; the server
/// waits for it. Lost flights are sent again when the retransmission timer fires: ask
/// ``nextTimeout(now:)`` when, and call ``handleTimeout()`` then.
///
/// Both sides present a certificate, and each accepts the other's only when its SHA-256
/// fingerprint is the one the peer's SDP announced; otherwise the handshake fails with
/// ``DTLSError/fingerprintMismatch(expected:actual:)`` and no keys are exported. Once
/// ``state`` is ``State/connected``, ``srtpKeys`` holds the two SRTP keys (when the peers
/// agreed on an SRTP profile), and application data goes both ways: `send(applicationData:)`
/// and ``applicationDataHandler``.
///
/// Threading: one owner; not sendable. The `send` closure and ``applicationDataHandler`` run
/// on the caller's thread, inside the call that produced the data, and must not call back into
/// the connection.
public final class DTLSConnection {
    /// Where the connection is.
    public enum State: Sendable, Equatable {
        /// Made; the handshake has not begun.
        case idle
        /// Flights are under way.
        case handshaking
        /// The handshake completed and the peer's certificate matched its fingerprint.
        case connected
        /// Closed by either side (`close_notify`).
        case closed
        /// Failed for good; the error says why.
        case failed(DTLSError)
    }

    /// How a connection behaves on the wire.
    public struct Configuration: Sendable, Equatable {
        /// The SRTP profiles offered (client) or accepted (server), most preferred first; empty
        /// offers no use_srtp extension (application data only).
        public var srtpSuites: [SRTPSuite]
        /// The largest datagram written, in bytes (UDP payload): 576...16384.
        public var mtu: Int
        /// The first retransmission timeout, doubled after each retransmission up to 60 s
        /// (RFC 6347 section 4.2.4.1): 20 ms...60 s.
        public var initialRetransmitTimeout: Duration

        /// AES-256-GCM, then AES-128-GCM, then AES-CM with an 80-bit HMAC-SHA1 tag (the profile
        /// every WebRTC endpoint has).
        public static let defaultSRTPSuites: [SRTPSuite] = [.aeadAES256GCM, .aeadAES128GCM, .aesCM128HMACSHA1_80]

        /// A configuration; the defaults suit WebRTC: 1200-byte datagrams, a 1 s first timeout.
        public init(srtpSuites: [SRTPSuite] = Configuration.defaultSRTPSuites, mtu: Int = 1200,
                    initialRetransmitTimeout: Duration = .seconds(1)) {
            self.srtpSuites = srtpSuites
            self.mtu = mtu
            self.initialRetransmitTimeout = initialRetransmitTimeout
        }

        fileprivate func validate() throws(DTLSError) {
            guard (576...16384).contains(mtu) else { throw .invalidConfiguration("MTU of \(mtu) bytes (576...16384)") }
            guard initialRetransmitTimeout >= .milliseconds(20), initialRetransmitTimeout <= .seconds(60) else {
                throw .invalidConfiguration("initial retransmission timeout of \(initialRetransmitTimeout) (20 ms...60 s)")
            }
            guard Set(srtpSuites).count == srtpSuites.count else {
                throw .invalidConfiguration("an SRTP suite offered twice")
            }
        }

        /// Microseconds of the first timeout.
        fileprivate var initialTimeoutMicroseconds: UInt32 {
            let (seconds, attoseconds) = initialRetransmitTimeout.components
            return UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
        }
    }

    /// This side's role.
    public let role: DTLSRole
    /// The configuration the connection was made with.
    public let configuration: Configuration
    /// The fingerprint the peer's certificate must have (from its SDP).
    public let peerFingerprint: SDPFingerprint
    /// This side's certificate's fingerprint (for the local SDP).
    public let localFingerprint: SDPFingerprint
    /// Where the connection is.
    public private(set) var state: State = .idle
    /// The SRTP keys, once connected with an SRTP profile agreed; nil before, without a
    /// profile, and always after a failed handshake.
    public private(set) var srtpKeys: DTLSSRTPKeys?
    /// The most application data one `send(applicationData:)` takes (one DTLS record at the
    /// configured MTU, after the negotiated cipher's overhead); 0 until connected.
    public private(set) var maxApplicationDataSize = 0
    /// Called with each application-data record received, during ``receive(_:)-(UnsafeRawBufferPointer)``
    /// (the bytes are valid only during the call).
    public var applicationDataHandler: ((UnsafeRawBufferPointer) -> Void)?
    /// Flights sent again because the retransmission timer fired.
    public var retransmissions: Int { link.retransmissions }

    private let ssl: OpaquePointer
    private let link: DTLSLink
    /// Room for the largest record's plaintext (no allocation per received record).
    private let readBuffer: UnsafeMutableRawBufferPointer

    /// The label RFC 5764 section 4.2 exports the SRTP keying material under.
    private static let exporterLabel = "EXTRACTOR-dtls_srtp"

    /// A connection in `role` presenting `certificate`, accepting only a peer certificate whose
    /// fingerprint is `peerFingerprint`; each datagram to send goes to `send` (its bytes are
    /// valid only during the call).
    /// - Throws: ``DTLSError/unsupportedFingerprintAlgorithm(_:)`` for a peer fingerprint that is
    ///   not SHA-256, ``DTLSError/invalidConfiguration(_:)`` for values out of range,
    ///   ``DTLSError/setupFailed(_:)`` when OpenSSL refuses.
    public init(role: DTLSRole, certificate: DTLSCertificate, peerFingerprint: SDPFingerprint,
                configuration: Configuration = Configuration(),
                send: @escaping (UnsafeRawBufferPointer) -> Void) throws(DTLSError) {
        guard peerFingerprint.algorithm == "sha-256" else { throw .unsupportedFingerprintAlgorithm(peerFingerprint.algorithm) }
        try configuration.validate()
        let link = DTLSLink(send: send, expected: peerFingerprint,
                            initialTimeoutMicroseconds: configuration.initialTimeoutMicroseconds)
        ssl = try Self.makeSSL(role: role, context: certificate.context, configuration: configuration, link: link)
        self.link = link
        self.role = role
        self.configuration = configuration
        self.peerFingerprint = peerFingerprint
        localFingerprint = certificate.fingerprint
        readBuffer = .allocate(byteCount: 16_384, alignment: 16)
    }

    deinit {
        SSL_free(ssl)
        readBuffer.deallocate()
    }

    /// The SSL object: the link as its BIO (both ways) and ex-data, use_srtp, the MTU, the
    /// certificate check and the timer. Freed again when a step fails.
    private static func makeSSL(role: DTLSRole, context: OpaquePointer, configuration: Configuration,
                                link: DTLSLink) throws(DTLSError) -> OpaquePointer {
        ERR_clear_error()
        guard let method = linkBIOMethod else { throw .setupFailed("no BIO method: \(openSSLErrors())") }
        guard let ssl = SSL_new(context) else { throw .setupFailed(openSSLErrors()) }
        guard let bio = BIO_new(method) else {
            SSL_free(ssl)
            throw .setupFailed(openSSLErrors())
        }
        let opaqueLink = Unmanaged.passUnretained(link).toOpaque()
        BIO_set_data(bio, opaqueLink)
        SSL_set_bio(ssl, bio, bio)   // one reference, for both directions
        let profiles = configuration.srtpSuites.map(\.openSSLProfileName).joined(separator: ":")
        guard SSL_set_ex_data(ssl, 0, opaqueLink) == 1,
              profiles.isEmpty || SSL_set_tlsext_use_srtp(ssl, profiles) == 0,   // 0 is success here
              parley_dtls_set_link_mtu(ssl, configuration.mtu) == 1 else {
            let reason = openSSLErrors()
            SSL_free(ssl)
            throw .setupFailed(reason)
        }
        SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, verifyPeerCertificate)
        DTLS_set_timer_cb(ssl, retransmitTimeout)
        if role == .client { SSL_set_connect_state(ssl) } else { SSL_set_accept_state(ssl) }
        return ssl
    }

    /// Begins the handshake: the client sends its first flight; the server waits for it (a
    /// datagram given to ``receive(_:)-(UnsafeRawBufferPointer)`` also begins it). Does nothing
    /// once begun.
    /// - Throws: what the first flight's sending threw (see ``DTLSError``).
    public func start() throws(DTLSError) {
        guard state == .idle else { return }
        state = .handshaking
        if role == .client { try handshake() }
    }

    /// Takes one datagram from the peer: the next handshake step (which may send a flight),
    /// or application data for ``applicationDataHandler``, or the peer's `close_notify`.
    /// Records that fail DTLS's checks (bad MAC, wrong epoch, replays) are dropped, as RFC 6347
    /// section 4.1.2.7 says.
    /// - Throws: ``DTLSError/notDTLS(length:)`` for a datagram that is not DTLS (nothing changes);
    ///   ``DTLSError/fingerprintMismatch(expected:actual:)``, ``DTLSError/handshakeFailed(_:)``
    ///   or ``DTLSError/protocolError(_:)`` when the connection fails (``state`` says so from
    ///   then on); ``DTLSError/connectionClosed`` or the failure again once over.
    public func receive(_ datagram: UnsafeRawBufferPointer) throws(DTLSError) {
        try checkOpen()
        guard let first = datagram.first, (20...63).contains(first) else { throw .notDTLS(length: datagram.count) }
        link.input = datagram
        defer { link.input = nil }
        if state != .connected { try handshake() }
        if state == .connected { try readApplicationData() }
    }

    /// ``receive(_:)-(UnsafeRawBufferPointer)`` for a datagram in an array.
    public func receive(_ datagram: [UInt8]) throws(DTLSError) {
        let result: Result<Void, DTLSError> = datagram.withUnsafeBytes { raw in
            do throws(DTLSError) { try receive(raw); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }

    /// Sends `data` as one application-data record (one datagram).
    /// - Throws: ``DTLSError/notConnected`` before the handshake completed,
    ///   ``DTLSError/messageTooLarge(size:limit:)`` past ``maxApplicationDataSize``,
    ///   ``DTLSError/connectionClosed`` or the failure once over.
    public func send(applicationData data: UnsafeRawBufferPointer) throws(DTLSError) {
        try checkOpen()
        guard state == .connected else { throw .notConnected }
        guard data.count <= maxApplicationDataSize else {
            throw .messageTooLarge(size: data.count, limit: maxApplicationDataSize)
        }
        guard let base = data.baseAddress, data.count > 0 else { return }
        ERR_clear_error()
        let written = SSL_write(ssl, base, Int32(data.count))
        guard written == Int32(data.count) else { throw fail(.protocolError(openSSLErrors())) }
    }

    /// ``send(applicationData:)-(UnsafeRawBufferPointer)`` for bytes in an array.
    public func send(applicationData data: [UInt8]) throws(DTLSError) {
        let result: Result<Void, DTLSError> = data.withUnsafeBytes { raw in
            do throws(DTLSError) { try send(applicationData: raw); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }

    /// When to call ``handleTimeout()`` next, on the caller's clock: `now` plus what the
    /// retransmission timer has left (0 once it is due); nil while no flight awaits an answer.
    ///
    /// OpenSSL runs the timer on the system clock, so `now` places the deadline only: a
    /// caller on another clock (a simulated one) still waits in real time.
    public func nextTimeout(now: MonotonicTime) -> MonotonicTime? {
        guard state == .handshaking || state == .connected else { return nil }
        let left = parley_dtls_timeout_us(ssl)
        return left < 0 ? nil : now.advanced(byNanoseconds: Int64(left) * 1000)
    }

    /// Sends the last flight again if the retransmission timer is due (and doubles the timer);
    /// does nothing otherwise.
    /// - Throws: ``DTLSError/handshakeTimedOut`` after OpenSSL's limit of retransmissions
    ///   (12) went unanswered, or another failure; ``state`` says so from then on.
    public func handleTimeout() throws(DTLSError) {
        guard state == .handshaking || state == .connected else { return }
        ERR_clear_error()
        if parley_dtls_handle_timeout(ssl) < 0 {
            if ERR_GET_REASON(ERR_peek_error()) == SSL_R_READ_TIMEOUT_EXPIRED {
                ERR_clear_error()
                throw fail(.handshakeTimedOut)
            }
            throw fail(.handshakeFailed(openSSLErrors()))
        }
    }

    /// Closes the connection: sends `close_notify` when connected; ``state`` becomes
    /// ``State/closed``. Does nothing once closed or failed.
    public func close() {
        switch state {
        case .closed, .failed: return
        case .connected:
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            ERR_clear_error()
        case .idle, .handshaking: break
        }
        state = .closed
    }

    // MARK: - Steps

    private func checkOpen() throws(DTLSError) {
        switch state {
        case .closed: throw .connectionClosed
        case .failed(let error): throw error
        case .idle, .handshaking, .connected: return
        }
    }

    /// Records `error` as the connection's end (no keys survive it) and returns it to throw.
    private func fail(_ error: DTLSError) -> DTLSError {
        state = .failed(error)
        srtpKeys = nil
        maxApplicationDataSize = 0
        return error
    }

    private func handshake() throws(DTLSError) {
        if state == .idle { state = .handshaking }
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return try finishHandshake() }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return
        case SSL_ERROR_ZERO_RETURN:
            state = .closed
        default:
            if let presented = link.presented, presented != peerFingerprint {
                ERR_clear_error()
                throw fail(.fingerprintMismatch(expected: peerFingerprint, actual: presented))
            }
            throw fail(.handshakeFailed(openSSLErrors("the peer ended the handshake")))
        }
    }

    /// Checks the peer's certificate once more, exports the SRTP keys, and connects.
    private func finishHandshake() throws(DTLSError) {
        guard let certificate = SSL_get0_peer_certificate(ssl) else {
            throw fail(.handshakeFailed("the peer presented no certificate"))
        }
        guard let presented = Self.fingerprint(of: certificate) else { throw fail(.handshakeFailed(openSSLErrors())) }
        guard presented == peerFingerprint else {
            throw fail(.fingerprintMismatch(expected: peerFingerprint, actual: presented))
        }
        if let profile = SSL_get_selected_srtp_profile(ssl) {
            guard let suite = SRTPSuite(openSSLProfileID: UInt(profile.pointee.id)) else {
                throw fail(.keyExportFailed("unknown SRTP profile \(profile.pointee.id)"))
            }
            srtpKeys = try exportKeys(suite)
        }
        maxApplicationDataSize = Int(DTLS_get_data_mtu(ssl))
        state = .connected
    }

    /// RFC 5764 section 4.2: client write key, server write key, client salt, server salt.
    private func exportKeys(_ suite: SRTPSuite) throws(DTLSError) -> DTLSSRTPKeys {
        let k = suite.masterKeyLength, s = suite.masterSaltLength
        var material = [UInt8](repeating: 0, count: 2 * (k + s))
        defer { for i in material.indices { material[i] = 0 } }
        let label = Self.exporterLabel
        guard SSL_export_keying_material(ssl, &material, material.count, label, label.utf8.count, nil, 0, 0) == 1 else {
            throw fail(.keyExportFailed(openSSLErrors()))
        }
        let client = Array(material[0..<k] + material[2 * k..<2 * k + s])
        let server = Array(material[k..<2 * k] + material[2 * k + s..<2 * k + 2 * s])
        do {
            let clientKey = try SRTPKey(suite: suite, material: client)
            let serverKey = try SRTPKey(suite: suite, material: server)
            return role == .client ? DTLSSRTPKeys(suite: suite, local: clientKey, remote: serverKey)
                                   : DTLSSRTPKeys(suite: suite, local: serverKey, remote: clientKey)
        } catch {
            throw fail(.keyExportFailed("\(error)"))
        }
    }

    /// Reads every application-data record OpenSSL has, until it wants another datagram.
    private func readApplicationData() throws(DTLSError) {
        while state == .connected {
            ERR_clear_error()
            let n = SSL_read(ssl, readBuffer.baseAddress, Int32(readBuffer.count))
            if n > 0 {
                applicationDataHandler?(UnsafeRawBufferPointer(rebasing: readBuffer[0..<Int(n)]))
                continue
            }
            switch SSL_get_error(ssl, n) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return
            case SSL_ERROR_ZERO_RETURN:
                // The peer's close_notify: answer with ours, as RFC 5246 section 7.2.1 asks.
                _ = SSL_shutdown(ssl)
                ERR_clear_error()
                state = .closed
            default:
                throw fail(.protocolError(openSSLErrors("the peer ended the connection")))
            }
        }
    }

    /// The SHA-256 fingerprint of an X.509 certificate.
    fileprivate static func fingerprint(of certificate: OpaquePointer) -> SDPFingerprint? {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard X509_digest(certificate, EVP_sha256(), &digest, &length) == 1 else { return nil }
        return try? SDPFingerprint.sha256(Array(digest.prefix(Int(length))))
    }
}

// MARK: - The link between OpenSSL and the caller

/// What OpenSSL's callbacks reach through the BIO's data and the SSL's ex-data: the datagram
/// being received, the closure that sends, the fingerprint to accept, the timer's start.
final class DTLSLink {
    let send: (UnsafeRawBufferPointer) -> Void
    let expected: SDPFingerprint
    let initialTimeoutMicroseconds: UInt32
    /// The datagram ``DTLSConnection/receive(_:)-(UnsafeRawBufferPointer)`` is handing over,
    /// until OpenSSL reads it.
    var input: UnsafeRawBufferPointer?
    /// The fingerprint of the certificate the peer presented.
    var presented: SDPFingerprint?
    var retransmissions = 0

    init(send: @escaping (UnsafeRawBufferPointer) -> Void, expected: SDPFingerprint, initialTimeoutMicroseconds: UInt32) {
        self.send = send
        self.expected = expected
        self.initialTimeoutMicroseconds = initialTimeoutMicroseconds
    }

    static func from(_ pointer: UnsafeMutableRawPointer) -> DTLSLink {
        Unmanaged<DTLSLink>.fromOpaque(pointer).takeUnretainedValue()
    }
}

/// A source/sink BIO over a ``DTLSLink``: each write is one datagram to send; a read takes the
/// datagram being received, or asks to be retried.
nonisolated(unsafe) private let linkBIOMethod: OpaquePointer? = {
    guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "parley-dtls-link") else { return nil }
    _ = BIO_meth_set_write(method) { bio, data, length in
        guard let bio, let data, length >= 0, let link = BIO_get_data(bio) else { return -1 }
        parley_dtls_bio_clear_retry(bio)
        DTLSLink.from(link).send(UnsafeRawBufferPointer(start: data, count: Int(length)))
        return length
    }
    _ = BIO_meth_set_read(method) { bio, buffer, capacity in
        guard let bio, let buffer, capacity >= 0, let pointer = BIO_get_data(bio) else { return -1 }
        let link = DTLSLink.from(pointer)
        guard let input = link.input, let source = input.baseAddress else {
            parley_dtls_bio_set_retry_read(bio)
            return -1
        }
        parley_dtls_bio_clear_retry(bio)
        link.input = nil
        let n = min(input.count, Int(capacity))
        UnsafeMutableRawPointer(buffer).copyMemory(from: source, byteCount: n)
        return Int32(n)
    }
    // Flushing is the only control with an answer: no socket, no MTU to query, no overhead.
    _ = BIO_meth_set_ctrl(method) { _, command, _, _ in command == BIO_CTRL_FLUSH ? 1 : 0 }
    _ = BIO_meth_set_create(method) { bio in
        BIO_set_init(bio, 1)
        return 1
    }
    return method
}()

/// OpenSSL's certificate check, for each certificate of the peer's chain: the leaf (depth 0)
/// passes only with the fingerprint from the peer's SDP, and is rejected otherwise; self-signed
/// is what DTLS-SRTP certificates are, so no chain is checked.
private func verifyPeerCertificate(_ preverified: Int32, _ store: OpaquePointer?) -> Int32 {
    guard let store else { return 0 }
    guard X509_STORE_CTX_get_error_depth(store) == 0 else { return 1 }
    guard let ssl = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
          let pointer = SSL_get_ex_data(OpaquePointer(ssl), 0),
          let certificate = X509_STORE_CTX_get_current_cert(store),
          let presented = DTLSConnection.fingerprint(of: certificate) else { return 0 }
    let link = DTLSLink.from(pointer)
    link.presented = presented
    guard presented == link.expected else {
        X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED)   // the alert: bad_certificate
        return 0
    }
    return 1
}

/// The retransmission timer's next duration (microseconds): the configured start, then
/// doubled at each retransmission up to 60 s.
private func retransmitTimeout(_ ssl: OpaquePointer?, _ previous: UInt32) -> UInt32 {
    guard let ssl, let pointer = SSL_get_ex_data(ssl, 0) else { return 1_000_000 }
    let link = DTLSLink.from(pointer)
    if previous == 0 { return link.initialTimeoutMicroseconds }
    link.retransmissions += 1
    return min(previous &* 2, 60_000_000)
}

extension SRTPSuite {
    /// OpenSSL's name for the suite's DTLS-SRTP protection profile (RFC 5764, RFC 7714).
    fileprivate var openSSLProfileName: String {
        switch self {
        case .aesCM128HMACSHA1_80: "SRTP_AES128_CM_SHA1_80"
        case .aesCM128HMACSHA1_32: "SRTP_AES128_CM_SHA1_32"
        case .aeadAES128GCM: "SRTP_AEAD_AES_128_GCM"
        case .aeadAES256GCM: "SRTP_AEAD_AES_256_GCM"
        }
    }

    /// The suite of a DTLS-SRTP protection profile's IANA number.
    fileprivate init?(openSSLProfileID id: UInt) {
        switch id {
        case UInt(SRTP_AES128_CM_SHA1_80): self = .aesCM128HMACSHA1_80
        case UInt(SRTP_AES128_CM_SHA1_32): self = .aesCM128HMACSHA1_32
        case UInt(SRTP_AEAD_AES_128_GCM): self = .aeadAES128GCM
        case UInt(SRTP_AEAD_AES_256_GCM): self = .aeadAES256GCM
        default: return nil
        }
    }
}
