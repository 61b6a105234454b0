import Foundation
import ParleyCore
import ParleyDTLS
import ParleyRTP
import ParleySDP
import ParleySRTP
import Testing

/// The datagrams one side sent, waiting for the other.
final class Wire {
    var datagrams: [[UInt8]] = []
    var largest = 0
    func carry(_ bytes: UnsafeRawBufferPointer) {
        datagrams.append(Array(bytes))
        largest = max(largest, bytes.count)
    }
}

/// A client and a server joined by two wires; datagrams go across only when pumped.
struct Pair {
    let clientCertificate: DTLSCertificate, serverCertificate: DTLSCertificate
    let client: DTLSConnection, server: DTLSConnection
    let toServer = Wire(), toClient = Wire()

    init(client clientConfiguration: DTLSConnection.Configuration = .init(),
         server serverConfiguration: DTLSConnection.Configuration = .init(),
         clientExpects: SDPFingerprint? = nil, serverExpects: SDPFingerprint? = nil) throws {
        clientCertificate = try DTLSCertificate()
        serverCertificate = try DTLSCertificate()
        let (toServer, toClient) = (self.toServer, self.toClient)
        client = try DTLSConnection(role: .client, certificate: clientCertificate,
                                    peerFingerprint: clientExpects ?? serverCertificate.fingerprint,
                                    configuration: clientConfiguration, send: toServer.carry)
        server = try DTLSConnection(role: .server, certificate: serverCertificate,
                                    peerFingerprint: serverExpects ?? clientCertificate.fingerprint,
                                    configuration: serverConfiguration, send: toClient.carry)
    }

    /// Delivers what each side sent until both wires are empty; `drop` picks datagrams lost on
    /// the way (by direction, true toward the server, and their index in that direction).
    /// Errors the receivers throw are collected, not thrown.
    @discardableResult
    func pump(drop: (Bool, Int) -> Bool = { _, _ in false }, counts: inout (Int, Int)) -> [DTLSError] {
        var errors: [DTLSError] = []
        while !toServer.datagrams.isEmpty || !toClient.datagrams.isEmpty {
            for (wire, receiver, towardServer) in [(toServer, server, true), (toClient, client, false)] {
                let batch = wire.datagrams
                wire.datagrams.removeAll()
                for d in batch {
                    let index = towardServer ? counts.0 : counts.1
                    if towardServer { counts.0 += 1 } else { counts.1 += 1 }
                    if drop(towardServer, index) { continue }
                    do { try receiver.receive(d) } catch { errors.append(error) }
                }
            }
        }
        return errors
    }

    @discardableResult
    func pump() -> [DTLSError] {
        var counts = (0, 0)
        return pump(counts: &counts)
    }

    /// Starts the client and pumps to the end of the handshake.
    func connect() throws {
        try client.start()
        let errors = pump()
        #expect(errors.isEmpty, "\(errors)")
        #expect(client.state == .connected)
        #expect(server.state == .connected)
    }
}

/// The DTLSError `body` throws, or nil when it returns (another error is recorded as an issue).
func dtlsError(_ body: () throws -> Void) -> DTLSError? {
    do { try body(); return nil } catch let e as DTLSError { return e } catch {
        Issue.record("not a DTLSError: \(error)")
        return nil
    }
}

/// Protects an RTP packet with `key` and unprotects it with `peer`'s key: true when it comes
/// back the same.
func srtpRoundTrip(_ key: SRTPKey, _ peer: SRTPKey, seq: UInt16) throws -> Bool {
    let header = RTPHeader(payloadType: 111, sequenceNumber: seq, timestamp: 960 * UInt32(seq), ssrc: 0xABCD_0001)
    let plain = try header.marshalled(payload: (0..<160).map { UInt8(truncatingIfNeeded: $0 * 3) })
    var tx = try SRTPContext(key: key, direction: .outbound)
    var rx = try SRTPContext(key: peer, direction: .inbound)
    var buffer = plain + [UInt8](repeating: 0, count: SRTPContext.trailerRoom)
    return try buffer.withUnsafeMutableBytes { raw in
        let secured = try tx.protectRTP(raw, length: plain.count)
        guard secured == plain.count + key.suite.rtpOverhead else { return false }
        let back = try rx.unprotectRTP(raw, length: secured)
        return back == plain.count && raw.prefix(back).elementsEqual(plain)
    }
}

@Suite struct DTLSHandshakeTests {
    @Test(arguments: SRTPSuite.allCases)
    func handshakeAgreesOnEachProfileAndTheKeysWork(_ suite: SRTPSuite) throws {
        let config = DTLSConnection.Configuration(srtpSuites: [suite])
        let pair = try Pair(client: config, server: config)
        try pair.connect()
        let c = try #require(pair.client.srtpKeys), s = try #require(pair.server.srtpKeys)
        #expect(c.suite == suite && s.suite == suite)
        #expect(c.local == s.remote)
        #expect(c.remote == s.local)
        #expect(c.local != c.remote)
        #expect(c.local.material.count == suite.keyMaterialLength)
        // SRTP protected by either side opens on the other, and not with the wrong direction's key.
        #expect(try srtpRoundTrip(c.local, s.remote, seq: 1))
        #expect(try srtpRoundTrip(s.local, c.remote, seq: 2))
        #expect(throws: SRTPError.authenticationFailed) { try srtpRoundTrip(c.local, c.remote, seq: 3) }
        // Every datagram fits the 1200-byte MTU.
        #expect(pair.toServer.largest <= 1200 && pair.toClient.largest <= 1200)
        #expect(pair.toServer.largest > 0 && pair.toClient.largest > 0)
        #expect(pair.client.retransmissions == 0 && pair.server.retransmissions == 0)
        #expect(pair.client.nextTimeout(now: .zero) == nil)
    }

    @Test func theClientsOrderAndTheServersListPickTheProfile() throws {
        // Both on the defaults: AES-256-GCM.
        let defaults = try Pair()
        try defaults.connect()
        #expect(defaults.client.srtpKeys?.suite == .aeadAES256GCM)
        // The server accepts only what both have.
        let narrow = try Pair(client: .init(srtpSuites: [.aesCM128HMACSHA1_80, .aeadAES128GCM]),
                              server: .init(srtpSuites: [.aeadAES128GCM]))
        try narrow.connect()
        #expect(narrow.server.srtpKeys?.suite == .aeadAES128GCM)
        #expect(narrow.client.srtpKeys?.suite == .aeadAES128GCM)
        // No common profile: connected for application data, but no SRTP keys.
        let none = try Pair(client: .init(srtpSuites: [.aesCM128HMACSHA1_32]), server: .init(srtpSuites: [.aeadAES256GCM]))
        try none.connect()
        #expect(none.client.srtpKeys == nil && none.server.srtpKeys == nil)
    }

    @Test(arguments: [true, false])
    func aWrongFingerprintFailsWithNoKeys(_ clientIsWrong: Bool) throws {
        let stranger = try DTLSCertificate().fingerprint
        let pair = clientIsWrong ? try Pair(clientExpects: stranger) : try Pair(serverExpects: stranger)
        try pair.client.start()
        let errors = pair.pump()
        let (checking, other) = clientIsWrong ? (pair.client, pair.server) : (pair.server, pair.client)
        let actual = clientIsWrong ? pair.serverCertificate.fingerprint : pair.clientCertificate.fingerprint
        let mismatch = DTLSError.fingerprintMismatch(expected: stranger, actual: actual)
        #expect(checking.state == .failed(mismatch))
        #expect(errors.contains(mismatch))
        #expect(checking.srtpKeys == nil && other.srtpKeys == nil)
        // The other side never connects: it was told (a fatal alert) or is still waiting.
        #expect(other.state != .connected)
        if case .failed(let e) = other.state { #expect(e.description.contains("bad certificate"), "\(e)") }
        // Nothing more goes through the failed side.
        #expect(dtlsError { try checking.send(applicationData: [1, 2, 3]) } == mismatch)
        #expect(dtlsError { try checking.receive([22, 254, 253]) } == mismatch)
    }

    @Test func lostFlightsAreSentAgainWhenTheTimerFires() throws {
        let config = DTLSConnection.Configuration(initialRetransmitTimeout: .milliseconds(40))
        let pair = try Pair(client: config, server: config)
        try pair.client.start()
        #expect(pair.client.nextTimeout(now: .zero) != nil)
        #expect(pair.server.nextTimeout(now: .zero) == nil)   // not started: no flight out
        // The first two datagrams each way are lost (the ClientHello, then the server's first flight).
        var counts = (0, 0)
        let deadline = Date().addingTimeInterval(20)
        var waits = 0
        while pair.client.state != .connected || pair.server.state != .connected, Date() < deadline {
            let errors = pair.pump(drop: { _, index in index < 2 }, counts: &counts)
            #expect(errors.isEmpty, "\(errors)")
            let due = [pair.client.nextTimeout(now: .zero), pair.server.nextTimeout(now: .zero)].compactMap { $0 }.min()
            guard let due else { break }
            Thread.sleep(forTimeInterval: max(due.seconds, 0) + 0.002)
            waits += 1
            try pair.client.handleTimeout()
            try pair.server.handleTimeout()
        }
        #expect(pair.client.state == .connected && pair.server.state == .connected)
        #expect(pair.client.retransmissions >= 1)
        #expect(pair.server.retransmissions >= 1)
        #expect(waits >= 2)
        #expect(pair.client.srtpKeys?.local == pair.server.srtpKeys?.remote)
    }

    @Test func aLostLastFlightIsSentAgainByTheConnectedServer() throws {
        let config = DTLSConnection.Configuration(initialRetransmitTimeout: .milliseconds(40))
        let pair = try Pair(client: config, server: config)
        try pair.client.start()
        // The server's last flight (ChangeCipherSpec, Finished) is lost: it is connected, the
        // client is not.
        var counts = (0, 0)
        let errors = pair.pump(drop: { towardServer, _ in !towardServer && pair.server.state == .connected }, counts: &counts)
        #expect(errors.isEmpty, "\(errors)")
        #expect(pair.server.state == .connected && pair.client.state == .handshaking)
        // The client's timer sends its flight again; the server, connected, answers it with its
        // last flight from `receive`, and runs its own timer harmlessly meanwhile.
        let deadline = Date().addingTimeInterval(10)
        while pair.client.state != .connected, Date() < deadline, let due = pair.client.nextTimeout(now: .zero) {
            Thread.sleep(forTimeInterval: max(due.seconds, 0) + 0.002)
            try pair.client.handleTimeout()
            try pair.server.handleTimeout()
            #expect(pair.pump(counts: &counts).isEmpty)
        }
        #expect(pair.client.state == .connected && pair.server.state == .connected)
        #expect(pair.client.retransmissions >= 1)
        #expect(pair.client.srtpKeys?.local == pair.server.srtpKeys?.remote)
        var received: [[UInt8]] = []
        pair.server.applicationDataHandler = { received.append(Array($0)) }
        try pair.client.send(applicationData: [1, 2, 3])
        pair.pump()
        #expect(received == [[1, 2, 3]])
    }

    @Test func aSilentPeerGetsTheFirstFlightAgainWithBackoff() throws {
        let cert = try DTLSCertificate()
        let wire = Wire()
        let client = try DTLSConnection(role: .client, certificate: cert, peerFingerprint: cert.fingerprint,
                                        configuration: .init(initialRetransmitTimeout: .milliseconds(20)), send: wire.carry)
        try client.start()
        // Nothing ever answers; wait for the timer as it asks (at most 0.5 s at a time) for 2 s.
        let deadline = Date().addingTimeInterval(2)
        while client.state == .handshaking, Date() < deadline, let due = client.nextTimeout(now: .zero) {
            Thread.sleep(forTimeInterval: min(max(due.seconds, 0) + 0.002, 0.5))
            if dtlsError({ try client.handleTimeout() }) != nil { break }
        }
        // From 20 ms, doubling: sent again after 20, 60, 140, 300, 620 and 1260 ms; without the
        // backoff it would be a hundred times.
        #expect((4...7).contains(client.retransmissions), "\(client.retransmissions)")
        #expect(client.state == .handshaking)
        // One datagram per flight: the ClientHello each time.
        #expect(wire.datagrams.count == client.retransmissions + 1)
    }
}

@Suite struct DTLSApplicationDataTests {
    @Test func applicationDataFlowsBothWays() throws {
        let pair = try Pair()
        #expect(dtlsError { try pair.client.send(applicationData: [1]) } == .notConnected)
        try pair.connect()
        var atServer: [[UInt8]] = [], atClient: [[UInt8]] = []
        pair.server.applicationDataHandler = { atServer.append(Array($0)) }
        pair.client.applicationDataHandler = { atClient.append(Array($0)) }
        let limit = pair.client.maxApplicationDataSize
        #expect((1100..<1200).contains(limit), "\(limit)")
        let big = (0..<limit).map { UInt8(truncatingIfNeeded: $0 * 13) }
        try pair.client.send(applicationData: Array("hello".utf8))
        try pair.client.send(applicationData: big)
        try pair.server.send(applicationData: Array("world".utf8))
        #expect(pair.toServer.datagrams.allSatisfy { $0.count <= 1200 })
        pair.pump()
        #expect(atServer == [Array("hello".utf8), big])
        #expect(atClient == [Array("world".utf8)])
        #expect(dtlsError { try pair.client.send(applicationData: big + [0]) }
            == .messageTooLarge(size: limit + 1, limit: limit))
        // A replayed record is dropped (DTLS's replay window), not delivered twice.
        try pair.client.send(applicationData: [7, 7, 7])
        let record = try #require(pair.toServer.datagrams.first)
        pair.pump()
        try pair.server.receive(record)
        #expect(atServer.count == 3 && atServer.last == [7, 7, 7])
    }

    @Test func closeNotifyClosesThePeer() throws {
        let pair = try Pair()
        try pair.connect()
        pair.client.close()
        #expect(pair.client.state == .closed)
        #expect(pair.toServer.datagrams.count == 1)   // the close_notify alert
        pair.pump()
        #expect(pair.server.state == .closed)
        #expect(dtlsError { try pair.server.send(applicationData: [1]) } == .connectionClosed)
        #expect(dtlsError { try pair.client.receive([23, 254, 253, 0]) } == .connectionClosed)
        // The keys stay readable after an orderly close.
        #expect(pair.server.srtpKeys != nil)
    }

    @Test func garbageIsRejectedOrDroppedWithoutHarm() throws {
        let pair = try Pair()
        // Not DTLS at all (RFC 7983: STUN starts 0...3, RTP 128...191): typed errors, no change.
        for d: [UInt8] in [[], [0, 1, 0, 0], [0x80, 111, 0, 1], [64], [19]] {
            #expect(dtlsError { try pair.server.receive(d) } == .notDTLS(length: d.count))
        }
        #expect(pair.server.state == .idle)
        // DTLS-looking noise before and in the handshake: dropped; the handshake still completes.
        var rng = SplitMix(seed: 7)
        func noise(_ type: UInt8) -> [UInt8] {
            var d = (0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            d.insert(type, at: 0)
            if d.count > 3, rng.next() % 2 == 0 { d[1] = 254; d[2] = 253 }   // a DTLS 1.2 version
            return d
        }
        for t: UInt8 in [20, 21, 22, 23, 63] { _ = dtlsError { try pair.server.receive(noise(t)) } }
        try pair.client.start()
        for _ in 0..<50 { _ = dtlsError { try pair.client.receive(noise(22)) } }
        pair.pump()
        #expect(pair.client.state == .connected && pair.server.state == .connected)
        // After it: noise and truncated records are dropped; data still flows.
        var got: [[UInt8]] = []
        pair.server.applicationDataHandler = { got.append(Array($0)) }
        try pair.client.send(applicationData: [9, 9])
        let record = try #require(pair.toServer.datagrams.first)
        for n in [1, 3, 13, record.count - 1] { try pair.server.receive(Array(record.prefix(n))) }
        var flipped = record
        flipped[record.count - 2] ^= 0x40
        try pair.server.receive(flipped)
        for _ in 0..<200 { try pair.server.receive(noise(UInt8(20 + rng.next() % 4))) }
        #expect(got.isEmpty)
        pair.pump()
        #expect(got == [[9, 9]])
        #expect(pair.server.state == .connected)
    }
}

@Suite struct DTLSCertificateTests {
    @Test func fingerprintIsSDPsSHA256Form() throws {
        let cert = try DTLSCertificate()
        let value = cert.fingerprint.sdpValue
        #expect(value.wholeMatch(of: /sha-256 ([0-9A-F]{2}:){31}[0-9A-F]{2}/) != nil, "\(value)")
        #expect(cert.fingerprint.sdpAttribute == "a=fingerprint:" + value)
        #expect(try SDPFingerprint(parsing: value) == cert.fingerprint)
        #expect(try SDPFingerprint(parsing: "  " + cert.fingerprint.sdpAttribute + "\r\n") == cert.fingerprint)
        #expect(try SDPFingerprint(parsing: "SHA-256 " + cert.fingerprint.hex.lowercased()) == cert.fingerprint)
        #expect(try DTLSCertificate().fingerprint != cert.fingerprint)
        #expect(cert.validityDays == 30)
    }

    @Test func badFingerprintsAreTypedErrors() throws {
        let good: String = try DTLSCertificate().fingerprint.hex
        let shorter: String = good.split(separator: ":").dropLast().joined(separator: ":")
        let tail = String(good.dropFirst(2))
        var malformed: [String] = ["", "sha-256", good, "sha-256  ", "sha256 " + good]
        malformed += ["sha-256 " + shorter, "sha-256 " + good + ":00", "sha-256 " + good + " extra"]
        malformed += ["sha-256 GG" + tail, "sha-256 +F" + tail, "sha-256 A" + tail]
        malformed += ["sha-256 " + good.replacingOccurrences(of: ":", with: ""),
                      "sha-256 " + good.replacingOccurrences(of: ":", with: "-")]
        for text in malformed + ["sha-1 " + good] {
            #expect(throws: JSEPError.self, "\(text)") { try SDPFingerprint(parsing: text) }
        }
        #expect(throws: JSEPError.self) { try SDPFingerprint.sha256([1, 2, 3]) }
        // A well-formed fingerprint of another hash: the connection refuses it.
        let sha1 = try SDPFingerprint(parsing: "sha-1 " + Array(repeating: "AB", count: 20).joined(separator: ":"))
        #expect(dtlsError { _ = try DTLSConnection(role: .client, certificate: try DTLSCertificate(), peerFingerprint: sha1) { _ in } }
                == .unsupportedFingerprintAlgorithm("sha-1"))
    }

    @Test func descriptionsHideTheSecrets() throws {
        let cert = try DTLSCertificate(commonName: "alice")
        for text in [cert.description, String(describing: cert), String(reflecting: cert), "\(cert)"] {
            #expect(text.contains(cert.fingerprint.sdpValue))
            #expect(text.contains("redacted"))
            #expect(!text.contains("PRIVATE"))
        }
        let pair = try Pair()
        try pair.connect()
        let keys = try #require(pair.client.srtpKeys)
        for text in [keys.description, String(reflecting: keys), "\(keys)"] {
            #expect(!text.contains(keys.local.base64) && !text.contains(keys.remote.base64))
        }
    }

    @Test func badParametersAreTypedErrors() throws {
        #expect(dtlsError { _ = try DTLSCertificate(commonName: "") } != nil)
        #expect(dtlsError { _ = try DTLSCertificate(commonName: "a\u{0}b") } != nil)
        #expect(dtlsError { _ = try DTLSCertificate(validityDays: 0) } != nil)
        let cert = try DTLSCertificate()
        for config in [DTLSConnection.Configuration(mtu: 100), .init(initialRetransmitTimeout: .milliseconds(1)),
                       .init(initialRetransmitTimeout: .seconds(61)), .init(srtpSuites: [.aeadAES128GCM, .aeadAES128GCM])] {
            let e = dtlsError { _ = try DTLSConnection(role: .client, certificate: cert, peerFingerprint: cert.fingerprint,
                                                       configuration: config, send: { _ in }) }
            guard case .invalidConfiguration = e else { Issue.record("\(String(describing: e))"); continue }
        }
    }

    @Test func rolesFromSetup() throws {
        #expect(try DTLSRole(setup: .active) == .client)
        #expect(try DTLSRole(setup: .passive) == .server)
        #expect(dtlsError { _ = try DTLSRole(setup: .actpass) } == .invalidSetup("actpass"))
        #expect(DTLSRole.answering(offeredSetup: .actpass) == .client)
        #expect(DTLSRole.answering(offeredSetup: .active) == .server)
        #expect(DTLSRole.answering(offeredSetup: .passive) == .client)
        #expect(DTLSRole.client.setup == .active && DTLSRole.server.setup == .passive)
    }
}

/// A small deterministic generator for the noise.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
