// Two of Parley's ICE agents over 127.0.0.1: candidates and credentials exchanged as SDP lines,
// connectivity checks, datagrams both ways, a wrong password, a peer that vanishes, closing.

import ParleyCore
import ParleyICE
import ParleySDP
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What one agent reported, and waiting for it.
private final class Recorder: Sendable {
    struct Log {
        var events: [ICEEvent] = []
        var datagrams: [[UInt8]] = []
        var states: [ICEConnectionState] {
            events.compactMap { if case .stateChanged(let s) = $0 { s } else { nil } }
        }
        var candidates: [ICECandidate] {
            events.compactMap { if case .localCandidate(let c) = $0 { c } else { nil } }
        }
        var gathered: Bool { events.contains(.gatheringComplete) }
    }
    let log = Locked(Log())

    var snapshot: Log { log.withLock { $0 } }

    /// Polls `condition` every 2 ms until it holds (true) or `timeout` passes (false).
    func wait(_ timeout: Duration, until condition: (Log) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if log.withLock({ condition($0) }) { return true }
            try await Task.sleep(for: .milliseconds(2))
        }
        return log.withLock { condition($0) }
    }
}

/// An agent on 127.0.0.1 that records its events and datagrams.
private struct Peer {
    let agent: ICEAgent
    let recorder: Recorder

    init(_ role: ICERole, credentials: ICECredentials? = nil, echo: Bool = false) throws {
        let recorder = Recorder()
        self.recorder = recorder
        agent = try ICEAgent(role: role, localAddresses: ["127.0.0.1"], credentials: credentials,
                             onEvent: { event in recorder.log.withLock { $0.events.append(event) } },
                             onDatagram: { bytes in recorder.log.withLock { $0.datagrams.append(Array(bytes)) } })
    }

    /// Gathers and waits for the end of gathering.
    func gather() async throws {
        try agent.gatherCandidates()
        #expect(try await recorder.wait(.seconds(5)) { $0.gathered })
    }

    /// Gives `other` this agent's credentials (or `credentials`) and candidates, through their
    /// SDP forms, then the end of candidates.
    func offer(to other: Peer, credentials: ICECredentials? = nil) throws {
        try other.agent.setRemoteCredentials(credentials ?? agent.localCredentials)
        for c in recorder.snapshot.candidates {
            #expect(try other.agent.addRemoteCandidate(ICECandidate(parsing: c.sdpLine)))
        }
        try other.agent.endOfRemoteCandidates()
    }
}

private func pattern(_ n: Int, seed: UInt8) -> [UInt8] {
    (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
}

@Suite struct ICEAgentTests {
    @Test func connectsOverLoopbackAndCarriesDatagramsBothWays() async throws {
        let a = try Peer(.controlling), b = try Peer(.controlled)
        defer { a.agent.close(); b.agent.close() }
        try await a.gather()
        try await b.gather()
        let aCandidates = a.recorder.snapshot.candidates
        #expect(!aCandidates.isEmpty)
        #expect(aCandidates.allSatisfy { $0.address == "127.0.0.1" && $0.kind == .host && $0.transport == .udp })
        #expect(try a.agent.localCandidates() == aCandidates)

        let start = ContinuousClock.now
        try a.offer(to: b)
        try b.offer(to: a)
        #expect(try await a.recorder.wait(.seconds(5)) { $0.states.last == .ready })
        #expect(try await b.recorder.wait(.seconds(5)) { $0.states.last == .ready })
        let connectTime = ContinuousClock.now - start
        print("ICE over loopback: both agents ready \(connectTime) after the exchange")

        for peer in [a, b] {
            let states = peer.recorder.snapshot.states
            #expect(states.first == .gathering)
            #expect(states.contains(.checking))
            #expect(!states.contains(.failed))
            #expect(peer.agent.state == .ready)
        }
        let aPair = try #require(a.agent.selectedPair), bPair = try #require(b.agent.selectedPair)
        #expect(aPair.local.port == bPair.remote.port)
        #expect(bPair.local.port == aPair.remote.port)
        #expect(aPair.local.address == "127.0.0.1" && aPair.remote.address == "127.0.0.1")
        #expect(a.recorder.snapshot.events.contains(.selectedPair(aPair)))

        // 200 datagrams each way, 1 to 1200 bytes, arrive intact and in order on loopback (sent
        // in bursts of 20, each received before the next goes, so no socket buffer overflows).
        let sizes = (0..<200).map { 1 + ($0 * 37) % 1200 }
        let toB = sizes.enumerated().map { pattern($1, seed: UInt8($0 % 256)) }
        let toA = sizes.enumerated().map { pattern($1, seed: UInt8($0 % 256) &+ 128) }
        for burst in stride(from: 0, to: sizes.count, by: 20) {
            for d in toB[burst..<burst + 20] { try a.agent.send(d) }
            for d in toA[burst..<burst + 20] { try d.withUnsafeBytes { try b.agent.send($0) } }
            #expect(try await b.recorder.wait(.seconds(5)) { $0.datagrams.count >= burst + 20 })
            #expect(try await a.recorder.wait(.seconds(5)) { $0.datagrams.count >= burst + 20 })
        }
        let intactAtB = b.recorder.snapshot.datagrams == toB, intactAtA = a.recorder.snapshot.datagrams == toA
        #expect(intactAtB, "the datagrams b received differ from those a sent")
        #expect(intactAtA, "the datagrams a received differ from those b sent")
    }

    @Test func wrongPasswordNeverConnects() async throws {
        let a = try Peer(.controlling), b = try Peer(.controlled)
        defer { a.agent.close(); b.agent.close() }
        try await a.gather()
        try await b.gather()
        let forged = { (c: ICECredentials) in
            try ICECredentials(usernameFragment: c.usernameFragment, password: String(repeating: "x", count: 24))
        }
        let start = ContinuousClock.now
        try a.offer(to: b, credentials: forged(a.agent.localCredentials))
        try b.offer(to: a, credentials: forged(b.agent.localCredentials))
        #expect(try await a.recorder.wait(.seconds(30)) { $0.states.last == .failed })
        #expect(try await b.recorder.wait(.seconds(30)) { $0.states.last == .failed })
        print("ICE over loopback, wrong passwords: both agents failed \(ContinuousClock.now - start) after the exchange")
        for peer in [a, b] {
            let log = peer.recorder.snapshot
            #expect(!log.states.contains(.connected) && !log.states.contains(.ready))
            #expect(!log.events.contains { if case .selectedPair = $0 { true } else { false } })
            #expect(log.datagrams.isEmpty)
            #expect(peer.agent.selectedPair == nil)
            #expect(throws: ICEError.notConnected) { try peer.agent.send([1, 2, 3]) }
        }
    }

    /// Liveness: the survivor fails 50 s after the last answered check on the selected pair, so
    /// at most 50 s after its peer closes (here just after the checks answered).
    @Test func peerThatClosesIsFailedWhenItsChecksGoUnanswered() async throws {
        let a = try Peer(.controlling), b = try Peer(.controlled)
        defer { a.agent.close() }
        try await a.gather()
        try await b.gather()
        try a.offer(to: b)
        try b.offer(to: a)
        #expect(try await a.recorder.wait(.seconds(5)) { $0.states.last == .ready })
        #expect(try await b.recorder.wait(.seconds(5)) { $0.states.last == .ready })
        b.agent.close()
        let closed = ContinuousClock.now
        #expect(try await a.recorder.wait(.seconds(70)) { $0.states.last == .failed })
        let after = ContinuousClock.now - closed
        print("ICE over loopback: failed \(after) after the peer closed")
        // Not before RFC 7675's 30 s: a few checks lost under congestion do not end a call.
        #expect(after >= .seconds(30))
        #expect(a.agent.state == .failed)
        #expect(throws: ICEError.notConnected) { try a.agent.send([1]) }
    }

    @Test func closingEndsEverything() async throws {
        let a = try Peer(.controlled)
        #expect(throws: ICEError.notConnected) { try a.agent.send([1]) }
        a.agent.close()
        a.agent.close()
        #expect(throws: ICEError.closed) { try a.agent.gatherCandidates() }
        #expect(throws: ICEError.closed) { try a.agent.localCandidates() }
        #expect(throws: ICEError.closed) { try a.agent.setRemoteCredentials(a.agent.localCredentials) }
        #expect(throws: ICEError.closed) { try a.agent.endOfRemoteCandidates() }
        #expect(throws: ICEError.closed) {
            try a.agent.addRemoteCandidate(ICECandidate(parsing: "a=candidate:1 1 UDP 1 127.0.0.1 9 typ host"))
        }
        #expect(throws: ICEError.closed) { try a.agent.send([1]) }
    }

    @Test func closesFromItsOwnHandler() async throws {
        let agent = Locked<ICEAgent?>(nil)
        let closedInHandler = Atomic<Bool>(false)
        let made = try ICEAgent(role: .controlling, localAddresses: ["127.0.0.1"], onEvent: { event in
            guard event == .gatheringComplete else { return }
            agent.withLock { $0 }?.close()
            closedInHandler.store(true, ordering: .releasing)
        }, onDatagram: { _ in })
        agent.withLock { $0 = made }
        try made.gatherCandidates()
        let deadline = ContinuousClock.now + .seconds(5)
        while !closedInHandler.load(ordering: .acquiring), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(2))
        }
        let closed = closedInHandler.load(ordering: .acquiring)
        #expect(closed)
        made.close()
        #expect(throws: ICEError.closed) { try made.gatherCandidates() }
        agent.withLock { $0 = nil }
    }

    @Test func refusesBadValues() throws {
        let none: @Sendable (ICEEvent) -> Void = { _ in }
        let drop: @Sendable (UnsafeRawBufferPointer) -> Void = { _ in }
        #expect(throws: ICEError.malformedLocalAddress("127.0.0.300")) {
            try ICEAgent(role: .controlling, localAddresses: ["127.0.0.300"], onEvent: none, onDatagram: drop)
        }
        #expect(throws: ICEError.malformedServerAddress("stun.example.org")) {
            try ICEAgent(role: .controlling, stunServer: ICEServerAddress(address: "stun.example.org"),
                         onEvent: none, onDatagram: drop)
        }
        #expect(throws: ICEError.invalidPortRange(0...10)) {
            try ICEAgent(role: .controlling, portRange: 0...10, onEvent: none, onDatagram: drop)
        }
        let agent = try ICEAgent(role: .controlled, localAddresses: ["127.0.0.1"], onEvent: none, onDatagram: drop)
        #expect(throws: ICEError.invalidDatagramSize(0)) { try agent.send([]) }
        #expect(throws: ICEError.invalidDatagramSize(65_536)) { try agent.send([UInt8](repeating: 0, count: 65_536)) }
        // Candidates the agent cannot use are ignored, not errors.
        #expect(try !agent.addRemoteCandidate(ICECandidate(parsing: "a=candidate:1 1 TCP 1 127.0.0.1 9 typ host tcptype active")))
        #expect(try !agent.addRemoteCandidate(ICECandidate(parsing: "a=candidate:1 2 UDP 1 127.0.0.1 9 typ host")))
        #expect(try !agent.addRemoteCandidate(ICECandidate(parsing: "a=candidate:1 1 UDP 1 abc.local 9 typ host")))
        #expect(try agent.addRemoteCandidate(ICECandidate(parsing: "a=candidate:1 1 UDP 1 127.0.0.1 9 typ host")))
    }

    @Test func credentialsAreCheckedAndThePasswordNeverShown() throws {
        let pwd = "SecretSecretSecret1234+/"
        let c = try ICECredentials(usernameFragment: "ab+/", password: pwd)
        #expect(!c.description.contains(pwd) && c.description.contains("ab+/"))
        #expect(!String(reflecting: c).contains(pwd))
        var dumped = ""
        dump(c, to: &dumped)
        #expect(!dumped.contains(pwd))
        #expect(throws: JSEPError.self) { try ICECredentials(usernameFragment: "abc", password: pwd) }
        #expect(throws: JSEPError.self) {
            try ICECredentials(usernameFragment: "abcd", password: String(pwd.prefix(21)))
        }
        #expect(throws: JSEPError.self) { try ICECredentials(usernameFragment: "ab d", password: pwd) }

        let agent = try ICEAgent(role: .controlling, localAddresses: ["127.0.0.1"], credentials: c,
                                 onEvent: { _ in }, onDatagram: { _ in })
        #expect(agent.localCredentials == c)
        let generated = try ICEAgent(role: .controlling, localAddresses: ["127.0.0.1"], onEvent: { _ in }, onDatagram: { _ in })
        let g = generated.localCredentials
        #expect(try ICECredentials(usernameFragment: g.usernameFragment, password: g.password) == g)
    }
}

// MARK: - A STUN server for one Binding request

/// A UDP socket on 127.0.0.1 that answers one STUN Binding request with a chosen mapped
/// address, as a STUN server behind a NAT would. libnice asks in RFC 3489's form (a 16-byte
/// transaction ID, no magic cookie), so the answer is RFC 3489's MAPPED-ADDRESS, which RFC 8489
/// servers also send.
private final class OneShotSTUNServer {
    let fd: Int32
    let port: UInt16

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw Errno.current }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { close(fd); throw Errno.current }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Waits (up to 5 s) for a Binding request and answers it with `mapped` (an IPv4 address
    /// and port) as its MAPPED-ADDRESS. Returns the request's source port, or nil.
    func answerOne(mapped: (address: UInt32, port: UInt16)) -> UInt16? {
        var request = [UInt8](repeating: 0, count: 1500)
        var from = sockaddr_in()
        var fromLength = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = withUnsafeMutablePointer(to: &from) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &request, request.count, 0, $0, &fromLength) }
        }
        guard n >= 20, request[0] == 0x00, request[1] == 0x01 else { return nil }  // a Binding request
        let (a, p) = mapped
        let response: [UInt8] = [0x01, 0x01, 0x00, 0x0C] + request[4..<20]  // Binding success, same transaction
            + [0x00, 0x01, 0x00, 0x08, 0x00, 0x01, UInt8(p >> 8), UInt8(p & 0xFF),
               UInt8(a >> 24), UInt8((a >> 16) & 0xFF), UInt8((a >> 8) & 0xFF), UInt8(a & 0xFF)]
        let sent = withUnsafePointer(to: &from) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, response, response.count, 0, $0, fromLength) }
        }
        return sent == response.count ? UInt16(bigEndian: from.sin_port) : nil
    }
}

@Suite struct ICESTUNTests {
    @Test func gathersAServerReflexiveCandidate() async throws {
        let server = try OneShotSTUNServer()
        let recorder = Recorder()
        let agent = try ICEAgent(role: .controlling, localAddresses: ["127.0.0.1"],
                                 stunServer: ICEServerAddress(address: "127.0.0.1", port: server.port),
                                 onEvent: { event in recorder.log.withLock { $0.events.append(event) } },
                                 onDatagram: { _ in })
        defer { agent.close() }
        try agent.gatherCandidates()
        // 192.0.2.1:40000, the address a NAT would have mapped the agent's socket to.
        let hostPort = try #require(server.answerOne(mapped: (address: 0xC000_0201, port: 40000)))
        #expect(try await recorder.wait(.seconds(5)) { $0.gathered })
        let candidates = recorder.snapshot.candidates
        let host = try #require(candidates.first { $0.kind == .host })
        #expect(host.address == "127.0.0.1" && host.port == hostPort)
        let reflexive = try #require(candidates.first { $0.kind == .serverReflexive })
        #expect(reflexive.address == "192.0.2.1" && reflexive.port == 40000)
        #expect(reflexive.related?.address == "127.0.0.1" && reflexive.related?.port == hostPort)
        #expect(reflexive.priority < host.priority)
        #expect(try ICECandidate(parsing: reflexive.sdpLine) == reflexive)
    }
}
