// A full ICE agent (RFC 8445) over libnice: one stream of one component, UDP, keepalive checks
// on the selected pair, trickled candidates; its GLib main context iterated on a thread of its own.

import CNice
import Dispatch
import Foundation
import ParleyCore
import ParleySDP
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A full ICE agent (RFC 8445) for one WebRTC transport: one stream with one component, since
/// WebRTC multiplexes RTCP with RTP (RFC 5761) and bundles all media on one transport (RFC 9143).
///
/// Use:
/// 1. make the agent with its role, the local addresses to gather on, a handler for events and
///    one for received datagrams;
/// 2. ``gatherCandidates()``: local candidates arrive as ``ICEEvent/localCandidate(_:)`` events,
///    then ``ICEEvent/gatheringComplete``; send them and ``localCredentials`` to the peer;
/// 3. give the peer's credentials to ``setRemoteCredentials(_:)``, its candidates to
///    ``addRemoteCandidate(_:)`` as they come (trickle ICE) and, when it has sent them all,
///    call ``endOfRemoteCandidates()``; checks run, the state goes `checking`, `connected`,
///    `ready`, and a pair is selected (``ICEEvent/selectedPair(_:)``);
/// 4. `send(_:)` datagrams on the selected pair; received ones reach the datagram handler;
/// 5. ``close()``.
///
/// Liveness: the agent checks its peer on the selected pair every 4 to 6 s (binding requests,
/// as RFC 7675's consent checks) and reports ``ICEConnectionState/failed`` when none is
/// answered for 50 s (a peer that vanished). libnice 0.1.21's own consent freshness would fail
/// 10 s after the last answer, which two checks lost under congestion reach; RFC 7675 says 30 s.
/// UDP only (no ICE-TCP), no UPnP port mapping; a STUN server adds server-reflexive candidates.
///
/// Threading: the agent is `Sendable`; every method may be called from any thread. The agent
/// owns a thread that iterates its GLib main context (no global main loop); the event and
/// datagram handlers run on that thread, one call at a time, in order, and may call the
/// agent's methods (including ``close()``). Keep them short: a handler that blocks delays
/// every check and datagram. The methods other than `send(_:)` run their libnice call on
/// that thread and wait for it.
public final class ICEAgent: Sendable {
    /// This agent's role.
    public let role: ICERole
    /// This agent's username fragment and password, to send to the peer (in the SDP's
    /// `a=ice-ufrag` and `a=ice-pwd`).
    public let localCredentials: ICECredentials
    private let core: Core

    /// Makes an agent, ready to gather candidates; its thread starts here.
    /// - Parameters:
    ///   - role: controlling (nominates) or controlled.
    ///   - localAddresses: IP literals of the local interfaces to gather host candidates on;
    ///     empty (the default) gathers on every interface but the loopback one. A loopback
    ///     address (e.g. `127.0.0.1`) is used when named here.
    ///   - stunServer: a STUN server for a server-reflexive candidate; `nil` for none.
    ///   - credentials: this agent's credentials; `nil` (the default) generates random ones.
    ///   - portRange: the local ports to bind; `nil` (the default) lets the system choose.
    ///   - onEvent: receives candidates, the end of gathering, state changes and selected pairs,
    ///     on the agent's thread.
    ///   - onDatagram: receives each datagram from the peer (not the ICE checks), on the agent's
    ///     thread; the bytes are valid during the call only (copy what must be kept).
    /// - Throws: ``ICEError/malformedLocalAddress(_:)``, ``ICEError/malformedServerAddress(_:)``,
    ///   ``ICEError/invalidPortRange(_:)``, ``ICEError/credentialsRejected`` or
    ///   ``ICEError/agentSetupFailed(_:)``.
    public init(role: ICERole, localAddresses: [String] = [], stunServer: ICEServerAddress? = nil,
                credentials: ICECredentials? = nil, portRange: ClosedRange<UInt16>? = nil,
                onEvent: @escaping @Sendable (ICEEvent) -> Void,
                onDatagram: @escaping @Sendable (UnsafeRawBufferPointer) -> Void) throws(ICEError) {
        if let portRange, portRange.lowerBound == 0 { throw .invalidPortRange(portRange) }
        self.role = role
        let core = try Core(role: role, localAddresses: localAddresses, stunServer: stunServer,
                            credentials: credentials, portRange: portRange, onEvent: onEvent, onDatagram: onDatagram)
        self.core = core
        self.localCredentials = core.localCredentials
        core.start()
    }

    deinit { core.close() }

    /// Starts gathering local candidates; each is reported as ``ICEEvent/localCandidate(_:)``,
    /// then ``ICEEvent/gatheringComplete``. Host candidates come at once; server-reflexive ones
    /// when the STUN server answers.
    /// - Throws: ``ICEError/gatheringFailed`` or ``ICEError/closed``.
    public func gatherCandidates() throws(ICEError) {
        let started = try core.perform { agent, stream in nice_agent_gather_candidates(agent, stream) != 0 }
        guard started else { throw .gatheringFailed }
    }

    /// The local candidates gathered so far.
    /// - Throws: ``ICEError/closed``.
    public func localCandidates() throws(ICEError) -> [ICECandidate] {
        try core.perform { agent, stream in
            final class Lines { var candidates: [ICECandidate] = [] }
            let lines = Lines()
            withExtendedLifetime(lines) {
                parley_nice_agent_local_candidates(agent, stream, Unmanaged.passUnretained(lines).toOpaque()) { context, line in
                    guard let context, let line,
                          let candidate = try? ICECandidate(parsing: String(cString: line)) else { return }
                    Unmanaged<Lines>.fromOpaque(context).takeUnretainedValue().candidates.append(candidate)
                }
            }
            return lines.candidates
        }
    }

    /// Sets the peer's credentials (from its SDP's `a=ice-ufrag` and `a=ice-pwd`); checks start
    /// once they and a remote candidate are known.
    /// - Throws: ``ICEError/credentialsRejected`` or ``ICEError/closed``.
    public func setRemoteCredentials(_ credentials: ICECredentials) throws(ICEError) {
        let ufrag = credentials.usernameFragment, pwd = credentials.password
        let accepted = try core.perform { agent, stream in nice_agent_set_remote_credentials(agent, stream, ufrag, pwd) != 0 }
        guard accepted else { throw .credentialsRejected }
    }

    /// Adds a candidate of the peer's (from its SDP or trickled).
    /// - Returns: `false` when the agent cannot use the candidate and ignored it: a TCP
    ///   candidate (the agent is UDP-only), one for another component than 1 (RTCP without
    ///   multiplexing), or one whose address is a host name (e.g. a browser's mDNS name;
    ///   libnice resolves no names).
    /// - Throws: ``ICEError/closed``.
    @discardableResult
    public func addRemoteCandidate(_ candidate: ICECandidate) throws(ICEError) -> Bool {
        guard candidate.transport == .udp, candidate.component == 1 else { return false }
        let line = candidate.sdpLine
        return try core.perform { agent, stream in parley_nice_agent_add_remote_candidate(agent, stream, line) == 1 }
    }

    /// Tells the agent the peer has sent all its candidates (`a=end-of-candidates`, RFC 8840):
    /// until then, failing checks do not make the state ``ICEConnectionState/failed``, as more
    /// candidates may come.
    /// - Throws: ``ICEError/closed``.
    public func endOfRemoteCandidates() throws(ICEError) {
        _ = try core.perform { agent, stream in nice_agent_peer_candidate_gathering_done(agent, stream) }
    }

    /// The component's state, as last reported.
    public var state: ICEConnectionState { core.status.withLock { $0.state } }

    /// The pair datagrams travel on, once one is selected.
    public var selectedPair: ICECandidatePair? { core.status.withLock { $0.selectedPair } }

    /// Sends one datagram to the peer on the selected pair. Allocates nothing.
    /// - Throws: ``ICEError/invalidDatagramSize(_:)`` (empty, or over 65535 bytes),
    ///   ``ICEError/notConnected``, ``ICEError/sendFailed`` or ``ICEError/closed``.
    public func send(_ datagram: UnsafeRawBufferPointer) throws(ICEError) {
        try core.send(datagram)
    }

    /// Sends one datagram to the peer on the selected pair.
    /// - Throws: as the `UnsafeRawBufferPointer` form.
    public func send(_ datagram: [UInt8]) throws(ICEError) {
        let result = datagram.withUnsafeBytes { bytes in Result { () throws(ICEError) in try core.send(bytes) } }
        try result.get()
    }

    /// Stops the agent: no more events or datagrams are delivered, its sockets are closed, its
    /// thread ends and libnice's agent is freed. Waits for that, unless called from a handler
    /// (on the agent's thread), where it finishes once the handler returns. Idempotent; also
    /// done when the agent is released.
    public func close() { core.close() }
}

// MARK: - The agent's machinery

/// The result of a job run on the agent's thread, for the caller waiting on it.
private final class Outcome<R: Sendable>: Sendable {
    let value = Locked<R?>(nil)
}

/// What the agent's thread and its callers share.
///
/// `@unchecked Sendable`: the C pointers are set once in `init` and freed only by the agent's
/// thread after it ended (`teardown`), once no send can start (`gate` closed) and no job can
/// be queued (`jobs` closed); libnice's agent is itself thread-safe.
private final class Core: @unchecked Sendable {
    struct Status {
        var state = ICEConnectionState.disconnected
        var selectedPair: ICECandidatePair?
    }
    struct Jobs {
        var queue: [@Sendable (OpaquePointer?) -> Void] = []
        var stopRequested = false
        var closed = false
    }

    let context: OpaquePointer
    let agent: OpaquePointer
    let stream: UInt32
    let sink: UnsafeMutablePointer<ParleyNiceSink>
    let localCredentials: ICECredentials
    let onEvent: @Sendable (ICEEvent) -> Void
    let onDatagram: @Sendable (UnsafeRawBufferPointer) -> Void
    let status = Locked(Status())
    let jobs = Locked(Jobs())
    /// Held while sending; `true` once the agent is being freed.
    let gate = Locked(false)
    /// Set by `close()`: handlers are no longer called.
    let stopping = Atomic<Bool>(false)
    /// The agent thread's `pthread_self()`, once it runs.
    let threadID = Atomic<UInt>(0)
    /// Left when the thread has freed everything.
    let finished = DispatchGroup()

    init(role: ICERole, localAddresses: [String], stunServer: ICEServerAddress?, credentials: ICECredentials?,
         portRange: ClosedRange<UInt16>?, onEvent: @escaping @Sendable (ICEEvent) -> Void,
         onDatagram: @escaping @Sendable (UnsafeRawBufferPointer) -> Void) throws(ICEError) {
        guard let context = g_main_context_new() else { throw .agentSetupFailed("create a main context") }
        // Not libnice's consent freshness: 0.1.21 expires consent 10 s after the last answered
        // check (RFC 7675 says 30 s), so two checks lost in a congested queue end a call. Its
        // keepalive checks (see parley_nice_agent_configure) give up after 50 s instead.
        let options = parley_nice_option_regular_nomination | parley_nice_option_ice_trickle
        guard let agent = nice_agent_new_full(context, parley_nice_compatibility_rfc5245, options) else {
            g_main_context_unref(context)
            throw .agentSetupFailed("create an agent")
        }
        func fail(_ error: ICEError) -> ICEError {
            g_object_unref(UnsafeMutableRawPointer(agent))
            g_main_context_unref(context)
            return error
        }
        if let stunServer {
            guard Self.isIPLiteral(stunServer.address) else { throw fail(.malformedServerAddress(stunServer.address)) }
        }
        parley_nice_agent_configure(agent, role == .controlling ? 1 : 0, stunServer?.address, UInt32(stunServer?.port ?? 0))
        for text in localAddresses {
            guard let address = nice_address_new() else { throw fail(.agentSetupFailed("allocate an address")) }
            defer { nice_address_free(address) }
            guard nice_address_set_from_string(address, text) != 0 else { throw fail(.malformedLocalAddress(text)) }
            guard nice_agent_add_local_address(agent, address) != 0 else { throw fail(.malformedLocalAddress(text)) }
        }
        let stream = nice_agent_add_stream(agent, 1)
        guard stream != 0 else { throw fail(.agentSetupFailed("add a stream")) }
        if let portRange {
            _ = nice_agent_set_port_range(agent, stream, 1, UInt32(portRange.lowerBound), UInt32(portRange.upperBound))
        }
        if let credentials {
            guard nice_agent_set_local_credentials(agent, stream, credentials.usernameFragment, credentials.password) != 0
            else { throw fail(.credentialsRejected) }
            localCredentials = credentials
        } else {
            var ufrag: UnsafeMutablePointer<CChar>?
            var pwd: UnsafeMutablePointer<CChar>?
            guard nice_agent_get_local_credentials(agent, stream, &ufrag, &pwd) != 0, let ufrag, let pwd else {
                throw fail(.agentSetupFailed("generate credentials"))
            }
            localCredentials = ICECredentials(unchecked: String(cString: ufrag), password: String(cString: pwd))
            g_free(ufrag)
            g_free(pwd)
        }
        self.context = context
        self.agent = agent
        self.stream = stream
        self.onEvent = onEvent
        self.onDatagram = onDatagram
        sink = .allocate(capacity: 1)
        sink.initialize(to: ParleyNiceSink(context: nil, event: { context, kind, state, line, line2 in
            Unmanaged<Core>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                $0.handle(kind: kind, state: state, line: line, line2: line2)
            }
        }, datagram: { context, bytes, count in
            Unmanaged<Core>.fromOpaque(context!)._withUnsafeGuaranteedRef {
                $0.deliver(UnsafeRawBufferPointer(start: bytes, count: count))
            }
        }))
        // Unretained: the thread holds the core until it has detached the sink.
        sink.pointee.context = Unmanaged.passUnretained(self).toOpaque()
        guard parley_nice_agent_attach(agent, stream, context, sink) != 0 else {
            sink.deallocate()
            throw fail(.agentSetupFailed("attach a receiver"))
        }
    }

    /// Starts the thread, which holds the core until it has freed the agent.
    func start() {
        finished.enter()
        let thread = Thread { [self] in run() }
        thread.name = "parley-ice"
        thread.start()
    }

    private func run() {
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        g_main_context_push_thread_default(context)
        while true {
            _ = g_main_context_iteration(context, 1)
            let (work, stop) = jobs.withLock { j in
                defer { j.queue.removeAll(keepingCapacity: true) }
                return (j.queue, j.stopRequested)
            }
            for job in work { job(agent) }
            if stop { break }
        }
        teardown()
    }

    private func teardown() {
        let orphans = jobs.withLock { j in
            j.closed = true
            defer { j.queue = [] }
            return j.queue
        }
        for job in orphans { job(nil) }
        gate.withLock { $0 = true }
        parley_nice_agent_close(agent, stream, context, sink)
        g_main_context_pop_thread_default(context)
        g_main_context_unref(context)
        sink.deinitialize(count: 1)
        sink.deallocate()
        finished.leave()
    }

    var isAgentThread: Bool { threadID.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Runs `body` with libnice's agent and the stream on the agent's thread, and waits for it.
    func perform<R: Sendable>(_ body: @escaping @Sendable (OpaquePointer, UInt32) -> R) throws(ICEError) -> R {
        if isAgentThread {
            guard !jobs.withLock({ $0.closed }) else { throw .closed }
            return body(agent, stream)
        }
        let result = Outcome<R>()
        let done = DispatchSemaphore(value: 0)
        let stream = self.stream
        let queued = jobs.withLock { j in
            guard !j.closed, !j.stopRequested else { return false }
            j.queue.append { agent in
                if let agent { result.value.withLock { $0 = body(agent, stream) } }
                done.signal()
            }
            return true
        }
        guard queued else { throw .closed }
        g_main_context_wakeup(context)
        done.wait()
        guard let r = result.value.withLock({ $0.take() }) else { throw .closed }
        return r
    }

    func send(_ datagram: UnsafeRawBufferPointer) throws(ICEError) {
        guard let base = datagram.baseAddress, (1...65_535).contains(datagram.count) else {
            throw .invalidDatagramSize(datagram.count)
        }
        let sent = gate.withLock { freed -> Int32? in
            freed ? nil : nice_agent_send(agent, stream, 1, UInt32(datagram.count), base.assumingMemoryBound(to: CChar.self))
        }
        guard let sent else { throw .closed }
        guard sent < 0 else { return }
        throw status.withLock({ $0.selectedPair == nil || $0.state == .failed }) ? .notConnected : .sendFailed
    }

    func close() {
        let first = jobs.withLock { j in
            defer { j.stopRequested = true }
            return !j.stopRequested
        }
        if first {
            stopping.store(true, ordering: .relaxed)
            g_main_context_wakeup(context)
        }
        if !isAgentThread { finished.wait() }
    }

    // MARK: On the agent's thread

    private func handle(kind: Int32, state: UInt32, line: UnsafePointer<CChar>?, line2: UnsafePointer<CChar>?) {
        guard !stopping.load(ordering: .relaxed) else { return }
        switch Int(kind) {
        case PARLEY_NICE_EVENT_CANDIDATE:
            guard let line, let candidate = try? ICECandidate(parsing: String(cString: line)),
                  candidate.component == 1 else { return }
            onEvent(.localCandidate(candidate))
        case PARLEY_NICE_EVENT_GATHERING_DONE:
            onEvent(.gatheringComplete)
        case PARLEY_NICE_EVENT_STATE:
            let s: ICEConnectionState
            switch Int(state) {
            case PARLEY_NICE_STATE_GATHERING: s = .gathering
            case PARLEY_NICE_STATE_CONNECTING: s = .checking
            case PARLEY_NICE_STATE_CONNECTED: s = .connected
            case PARLEY_NICE_STATE_READY: s = .ready
            case PARLEY_NICE_STATE_FAILED: s = .failed
            default: s = .disconnected
            }
            status.withLock { $0.state = s }
            onEvent(.stateChanged(s))
        case PARLEY_NICE_EVENT_SELECTED_PAIR:
            guard let line, let line2,
                  let local = try? ICECandidate(parsing: String(cString: line)),
                  let remote = try? ICECandidate(parsing: String(cString: line2)) else { return }
            let pair = ICECandidatePair(local: local, remote: remote)
            status.withLock { $0.selectedPair = pair }
            onEvent(.selectedPair(pair))
        default:
            return
        }
    }

    private func deliver(_ datagram: UnsafeRawBufferPointer) {
        guard !stopping.load(ordering: .relaxed) else { return }
        onDatagram(datagram)
    }

    private static func isIPLiteral(_ text: String) -> Bool {
        guard let address = nice_address_new() else { return false }
        defer { nice_address_free(address) }
        return nice_address_set_from_string(address, text) != 0
    }
}
