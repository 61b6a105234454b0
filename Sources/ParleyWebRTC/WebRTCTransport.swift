// A WebRTC transport: ICE (libnice) carries the datagrams, DTLS-SRTP keys them, and RTP and RTCP
// go through SRTP, told apart from DTLS by RFC 7983's first-byte ranges.

import ParleyCore
import ParleyDTLS
import ParleyICE
import ParleyNetwork
import ParleyRTP
import ParleySCTP
import ParleySDP
import ParleySRTP

/// Where a ``WebRTCTransport`` is.
public enum WebRTCTransportState: Sendable, Equatable {
    /// ICE checks or the DTLS handshake under way; sends are dropped (counted).
    case connecting
    /// DTLS-SRTP keyed the media: RTP and RTCP go both ways.
    case connected
    /// Failed for good; nothing more is sent or decrypted.
    case failed(WebRTCTransportError)
    /// Closed by ``WebRTCTransport/close()`` or the peer's DTLS `close_notify`.
    case closed
}

/// Counters of a ``WebRTCTransport``: its own drops, beside SRTP's.
public struct WebRTCTransportStatistics: Sendable, Hashable {
    /// SRTP's counters: protected, unprotected, and drops by reason.
    public var srtp = SRTPStatistics()
    /// Datagrams given to `send` before the keys were there (or after a failure): not sent.
    public var sendsDroppedUnkeyed = 0
    /// Protected datagrams ICE refused to send.
    public var sendFailures = 0
    /// DTLS records received.
    public var dtlsRecords = 0
    /// RTP or RTCP received before the keys were there (or after a failure): dropped.
    public var receivedUnkeyed = 0
    /// Datagrams of no protocol the transport carries (RFC 7983's other ranges): dropped.
    public var droppedUnknown = 0
    /// Datagrams dropped because the queue from ICE's thread was full.
    public var droppedQueueFull = 0
    /// Datagrams dropped as larger than a queue slot.
    public var droppedOversized = 0

    public init() {}
}

/// A `PacketTransport` over WebRTC's transport stack: ICE (RFC 8445, libnice) finds the path,
/// DTLS 1.2 authenticates the peer by the fingerprint in its description and exports the SRTP
/// keys (DTLS-SRTP, RFC 5764), and RTP and RTCP travel protected on one port (RFC 5761),
/// demultiplexed from DTLS by their first byte (RFC 7983, `WebRTCDatagramKind`).
///
/// Use:
/// 1. make it with its role and a certificate; it gathers candidates at once;
/// 2. once ``candidatesComplete`` (or trickling ``localCandidates``), build the local
///    description from ``local(cname:streamID:audioSSRC:videoSSRC:)``;
/// 3. give the peer's description to ``setRemote(_:dataChannel:)`` (and trickled candidates to
///    ``addRemoteCandidate(_:)``);
/// 4. `send` and `receive(until:_:)` as over any transport: `receive` also drives ICE's
///    outcome and the DTLS handshake, so call it regularly (a call session does, every tick);
///    ``state`` becomes ``WebRTCTransportState/connected`` once the keys are there.
///
/// Data channels: when both descriptions carry an `application` section with `a=sctp-port`
/// (`JSEPDescription.offer(local:audio:video:dataChannel:)` and
/// `answer(to:local:dataChannel:wants:)` write one; ``setRemote(_:dataChannel:)`` is told),
/// ``dataChannels`` is the transport's `DataChannelEndpoint`: its SCTP association starts over
/// DTLS once DTLS is connected, and `receive` feeds it and runs its timers.
///
/// A peer whose certificate does not match its fingerprint ends the transport
/// (``WebRTCTransportState/failed(_:)`` with ``WebRTCTransportError/dtls(_:)``) before any key
/// exists: not one media packet is decrypted or sent.
///
/// Threading: one owner (the call's scheduler thread) calls everything. ICE's thread only puts
/// the datagrams it receives into a fixed ring of ``queueCapacity`` slots, which `receive`
/// drains; nothing is allocated per datagram in steady state.
public final class WebRTCTransport: PacketTransport {
    /// This side's role.
    public let role: WebRTCTransportRole
    /// Datagrams the queue from ICE's thread holds before it drops (counted).
    public let queueCapacity: Int
    /// Largest RTP or RTCP datagram sent, bytes before protection.
    public let maximumDatagram: Int
    /// Where the transport is.
    public private(set) var state: WebRTCTransportState = .connecting
    /// The DTLS role, once the peer's description set it.
    public private(set) var dtlsRole: DTLSRole?
    /// When the DTLS handshake ended and the keys were there (the transport's clock), once it has.
    public private(set) var connectedAt: MonotonicTime?
    /// The data channels, when both descriptions have a data-channel section (set by
    /// ``setRemote(_:dataChannel:)``; nil otherwise). Open, send and close on it; its `onEvent` reports
    /// the channels and their messages from inside ``receive(until:_:)``.
    public private(set) var dataChannels: DataChannelEndpoint?

    private let agent: ICEAgent
    private let gathered: Gathered
    private let queue: DatagramQueue
    private let certificate: DTLSCertificate
    private let dtlsConfiguration: DTLSConnection.Configuration
    private let clock: any MediaClock
    private var dtls: DTLSConnection?
    private var media: Media?
    private var counters = WebRTCTransportStatistics()
    private let receiveBuffer: UnsafeMutableRawBufferPointer
    private let sendBuffer: UnsafeMutableRawBufferPointer

    /// The SRTP contexts, once DTLS exported their keys.
    private final class Media {
        var outbound: SRTPContext
        var inbound: SRTPContext
        init(keys: DTLSSRTPKeys) throws(SRTPError) {
            outbound = try SRTPContext(key: keys.local, direction: .outbound)
            inbound = try SRTPContext(key: keys.remote, direction: .inbound)
        }
    }

    /// The local candidates as ICE's thread reports them.
    private final class Gathered: Sendable {
        let state = Locked<(candidates: [ICECandidate], complete: Bool)>(([], false))
    }

    /// Makes the transport and starts gathering candidates.
    /// - Parameters:
    ///   - role: offerer (ICE controlling) or answerer (controlled).
    ///   - certificate: this side's DTLS certificate; its fingerprint goes in the description.
    ///   - localAddresses: IP literals to gather host candidates on (see `ICEAgent`); empty for
    ///     every interface but the loopback one.
    ///   - stunServer: a STUN server for a server-reflexive candidate.
    ///   - clock: stamps each datagram's arrival.
    ///   - queueCapacity: datagrams held between ICE's thread and `receive`, 1...65536.
    ///   - dtlsConfiguration: SRTP profiles, MTU and retransmission timer of the handshake.
    ///   - onArrival: called on ICE's thread after each datagram is queued, to wake an owner
    ///     that waits for them instead of calling `receive` on a timer; it must be quick.
    /// - Throws: ``WebRTCTransportError/invalidQueueCapacity(_:)`` or
    ///   ``WebRTCTransportError/ice(_:)``.
    public init(role: WebRTCTransportRole, certificate: DTLSCertificate, localAddresses: [String] = [],
                stunServer: ICEServerAddress? = nil, clock: any MediaClock, queueCapacity: Int = 512,
                dtlsConfiguration: DTLSConnection.Configuration = DTLSConnection.Configuration(),
                onArrival: (@Sendable () -> Void)? = nil) throws(WebRTCTransportError) {
        guard (1...65536).contains(queueCapacity) else { throw .invalidQueueCapacity(queueCapacity) }
        let slotSize = RTPLimits.maximumDatagramSize
        let queue = DatagramQueue(capacity: queueCapacity, slotSize: slotSize)
        let gathered = Gathered()
        let agent: ICEAgent
        do throws(ICEError) {
            agent = try ICEAgent(role: role == .offerer ? .controlling : .controlled, localAddresses: localAddresses,
                                 stunServer: stunServer, onEvent: { event in
                switch event {
                case .localCandidate(let c): gathered.state.withLock { $0.candidates.append(c) }
                case .gatheringComplete: gathered.state.withLock { $0.complete = true }
                case .stateChanged, .selectedPair: break
                }
            }, onDatagram: { datagram in
                queue.push(datagram, at: clock.now())
                onArrival?()
            })
            try agent.gatherCandidates()
        } catch {
            throw .ice(error)
        }
        self.agent = agent
        self.role = role
        self.queueCapacity = queueCapacity
        self.queue = queue
        self.gathered = gathered
        self.certificate = certificate
        self.dtlsConfiguration = dtlsConfiguration
        self.clock = clock
        maximumDatagram = slotSize
        receiveBuffer = .allocate(byteCount: slotSize + SRTPContext.trailerRoom, alignment: 16)
        sendBuffer = .allocate(byteCount: slotSize + SRTPContext.trailerRoom, alignment: 16)
    }

    deinit {
        dataChannels?.shutdown()
        agent.close()
        receiveBuffer.deallocate()
        sendBuffer.deallocate()
    }

    // MARK: Signalling

    /// This side's ICE credentials (`a=ice-ufrag`, `a=ice-pwd`).
    public var localCredentials: ICECredentials { agent.localCredentials }
    /// This side's certificate's fingerprint (`a=fingerprint`).
    public var localFingerprint: SDPFingerprint { certificate.fingerprint }
    /// The local candidates gathered so far.
    public var localCandidates: [ICECandidate] { gathered.state.withLock { $0.candidates } }
    /// Whether every local candidate has been gathered (`a=end-of-candidates`).
    public var candidatesComplete: Bool { gathered.state.withLock { $0.complete } }

    /// The local side of an offer or answer: credentials, the candidates gathered so far (all of
    /// them once ``candidatesComplete``), the fingerprint, and the given sources.
    public func local(cname: String, streamID: String = "parley", audioSSRC: UInt32, videoSSRC: UInt32) -> JSEPLocal {
        let (candidates, complete) = gathered.state.withLock { ($0.candidates, $0.complete) }
        return JSEPLocal(ice: localCredentials, fingerprint: localFingerprint,
                         candidates: candidates.map { String($0.attribute.dropFirst("candidate:".count)) },
                         candidatesComplete: complete, cname: cname, streamID: streamID,
                         audioSSRC: audioSSRC, videoSSRC: videoSSRC)
    }

    /// Takes the peer's description (the answer for an offerer, the offer for an answerer): its
    /// first media section that is not rejected gives the ICE credentials, candidates, DTLS
    /// fingerprint and `a=setup` (all media are bundled on this one transport).
    ///
    /// With `dataChannel`, an `application` section with `a=sctp-port` that is not rejected
    /// makes ``dataChannels``: the peer's SCTP port (5000 when absent) and
    /// `a=max-message-size`; this side's port is 5000, as the JSEP descriptions write it.
    /// - Parameters:
    ///   - description: the peer's offer or answer.
    ///   - dataChannel: whether this side's own description carries data channels: the
    ///     offerer's offer had the section, the answerer's answer accepted it (the
    ///     `dataChannel` given to `JSEPDescription.offer` or `answer`). Without it, a section
    ///     in the peer's description is left alone.
    /// - Throws: ``WebRTCTransportError/unexpectedDescription(_:)``,
    ///   ``WebRTCTransportError/missingInDescription(_:)``,
    ///   ``WebRTCTransportError/remoteCandidate(_:)``, ``WebRTCTransportError/remoteAlreadySet``,
    ///   ``WebRTCTransportError/dtls(_:)`` (an `actpass` answer, a fingerprint that is not
    ///   SHA-256) or ``WebRTCTransportError/ice(_:)``.
    public func setRemote(_ description: JSEPDescription, dataChannel: Bool = false) throws(WebRTCTransportError) {
        guard dtls == nil else { throw .remoteAlreadySet }
        let expected: JSEPDescription.Kind = role == .offerer ? .answer : .offer
        guard description.kind == expected else { throw .unexpectedDescription(description.kind) }
        guard let section = description.media.first(where: { !$0.isRejected }) else {
            throw .missingInDescription("media section that is not rejected")
        }
        guard let credentials = description.iceCredentials(of: section) else { throw .missingInDescription("a=ice-ufrag and a=ice-pwd") }
        guard let fingerprint = description.fingerprint(of: section) else { throw .missingInDescription("a=fingerprint") }
        guard let setup = description.setup(of: section) else { throw .missingInDescription("a=setup") }
        var candidates: [ICECandidate] = []
        for value in section.candidates {
            do throws(ICECandidateError) {
                candidates.append(try ICECandidate(parsing: "candidate:" + value))
            } catch {
                throw .remoteCandidate(error)
            }
        }
        let dtlsRole: DTLSRole
        do throws(DTLSError) {
            // The offerer takes the role the answer's a=setup leaves it.
            if role == .offerer {
                dtlsRole = try DTLSRole(setup: setup) == .client ? .server : .client
            } else {
                dtlsRole = DTLSRole.answering(offeredSetup: setup)
            }
            let agent = agent
            dtls = try DTLSConnection(role: dtlsRole, certificate: certificate, peerFingerprint: fingerprint,
                                      configuration: dtlsConfiguration) { datagram in _ = try? agent.send(datagram) }
        } catch {
            throw .dtls(error)
        }
        self.dtlsRole = dtlsRole
        if dataChannel, let data = description.media.first(where: { $0.kind == "application" && !$0.isRejected && $0.sctpPort != nil }) {
            let endpoint = DataChannelEndpoint(remotePort: data.sctpPort ?? DataChannelEndpoint.defaultPort,
                                               remoteMaxMessageSize: data.maxMessageSize, isDTLSClient: dtlsRole == .client)
            // A packet may come in the same call that finishes the handshake: start first.
            dtls?.applicationDataHandler = { [weak self] packet in
                guard let self, let dtls = self.dtls, let dataChannels = self.dataChannels else { return }
                startDataChannels(dtls)
                dataChannels.receive(packet: packet)
            }
            dataChannels = endpoint
        }
        do throws(ICEError) {
            try agent.setRemoteCredentials(credentials)
            for c in candidates { try agent.addRemoteCandidate(c) }
            if section.endOfCandidates { try agent.endOfRemoteCandidates() }
        } catch {
            throw .ice(error)
        }
    }

    /// Adds a candidate the peer trickled: an `a=candidate:` value, with or without its
    /// `candidate:` prefix.
    /// - Returns: whether ICE took it (see `ICEAgent/addRemoteCandidate(_:)`).
    /// - Throws: ``WebRTCTransportError/remoteCandidate(_:)`` or ``WebRTCTransportError/ice(_:)``.
    @discardableResult
    public func addRemoteCandidate(_ value: String) throws(WebRTCTransportError) -> Bool {
        let candidate: ICECandidate
        do throws(ICECandidateError) {
            candidate = try ICECandidate(parsing: value.hasPrefix("candidate:") || value.hasPrefix("a=") ? value : "candidate:" + value)
        } catch {
            throw .remoteCandidate(error)
        }
        do throws(ICEError) { return try agent.addRemoteCandidate(candidate) } catch { throw .ice(error) }
    }

    /// Tells ICE the peer has sent all its candidates (`a=end-of-candidates`).
    /// - Throws: ``WebRTCTransportError/ice(_:)``.
    public func endOfRemoteCandidates() throws(WebRTCTransportError) {
        do throws(ICEError) { try agent.endOfRemoteCandidates() } catch { throw .ice(error) }
    }

    /// Counters, drops by reason.
    public var statistics: WebRTCTransportStatistics {
        var s = counters
        (s.droppedQueueFull, s.droppedOversized) = queue.drops
        return s
    }

    /// The candidate pair in use, once ICE selected one.
    public var selectedPair: ICECandidatePair? { agent.selectedPair }

    /// Closes the transport: the data channels' association (an SCTP ABORT), DTLS's
    /// `close_notify` when connected, then ICE. Idempotent.
    public func close() {
        dataChannels?.shutdown()
        dtls?.close()
        agent.close()
        media = nil
        if case .failed = state { return }
        state = .closed
    }

    // MARK: PacketTransport

    /// Protects `bytes` (RTP or RTCP) with the local SRTP key and sends it on ICE's pair; false
    /// (counted) before the keys are there, when protection fails or ICE refuses.
    public func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool {
        guard let media else { counters.sendsDroppedUnkeyed += 1; return false }
        guard bytes.count <= maximumDatagram else { counters.srtp.protectFailures += 1; return false }
        UnsafeMutableRawBufferPointer(rebasing: sendBuffer[0..<bytes.count]).copyMemory(from: bytes)
        guard let n = media.outbound.protect(sendBuffer, length: bytes.count, counting: &counters.srtp) else { return false }
        do throws(ICEError) {
            try agent.send(UnsafeRawBufferPointer(rebasing: sendBuffer[0..<n]))
            return true
        } catch {
            counters.sendFailures += 1
            return false
        }
    }

    /// Drains what ICE's thread received: DTLS records go to the handshake (which may complete
    /// and key the media, and carry the data channels' SCTP packets), RTP and RTCP are
    /// unprotected and handed to `body` with their arrival times; also starts the handshake once
    /// ICE connects, and runs DTLS's retransmission timer and the data channels' SCTP timers.
    public func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {
        advance()
        while let next = queue.pop(into: receiveBuffer) {
            let length = next.length, arrival = next.arrival
            let datagram = UnsafeRawBufferPointer(rebasing: receiveBuffer[0..<length])
            switch WebRTCDatagramKind(classifying: datagram) {
            case .dtls:
                counters.dtlsRecords += 1
                receiveDTLS(datagram)
            case .rtp, .rtcp:
                guard let media else { counters.receivedUnkeyed += 1; continue }
                guard let n = media.inbound.unprotect(receiveBuffer, length: length, counting: &counters.srtp) else { continue }
                body(UnsafeRawBufferPointer(rebasing: receiveBuffer[0..<n]), arrival)
            case .stun, .unknown:
                counters.droppedUnknown += 1
            }
        }
    }

    /// Always 0: ICE sends at once.
    public var inFlight: Int { 0 }

    // MARK: The handshake

    /// ICE's outcome: a failure ends the transport; a working pair starts the handshake (the
    /// client's first flight). Then DTLS's retransmission timer, connected or not (it acts
    /// only while OpenSSL has a flight awaiting an answer), and SCTP's timers.
    private func advance() {
        guard state == .connecting || state == .connected else { return }
        let ice = agent.state
        if ice == .failed { fail(.iceFailed); return }
        guard let dtls else { return }
        let now = clock.now()
        do throws(DTLSError) {
            if dtls.state == .idle, ice == .connected || ice == .ready { try dtls.start() }
            if let due = dtls.nextTimeout(now: now), due <= now { try dtls.handleTimeout() }
        } catch {
            fail(.dtls(error))
            return
        }
        dataChannels?.advance(to: now)
    }

    /// One DTLS record: the next handshake step, or (connected) the peer's data or close.
    private func receiveDTLS(_ datagram: UnsafeRawBufferPointer) {
        guard let dtls, state == .connecting || state == .connected else { return }
        do throws(DTLSError) {
            try dtls.receive(datagram)
        } catch {
            switch dtls.state {
            case .failed(let reason): fail(.dtls(reason))
            case .closed:
                media = nil
                dataChannels?.shutdown()
                state = .closed
            default: break
            }
            return
        }
        guard state == .connecting, dtls.state == .connected else { return }
        guard let keys = dtls.srtpKeys else { fail(.noSRTPProfile); return }
        do throws(SRTPError) {
            media = try Media(keys: keys)
            state = .connected
            connectedAt = clock.now()
        } catch {
            fail(.srtp(error))
            return
        }
        startDataChannels(dtls)
    }

    /// The data channels' association, once DTLS is up: each SCTP packet one DTLS record. Does
    /// nothing once started.
    private func startDataChannels(_ dtls: DTLSConnection) {
        guard let dataChannels, !dataChannels.isStarted else { return }
        do throws(DataChannelError) {
            try dataChannels.start(maximumPacket: dtls.maxApplicationDataSize) { [weak dtls] packet in
                guard let dtls else { return false }
                do throws(DTLSError) { try dtls.send(applicationData: packet); return true } catch { return false }
            }
        } catch {
            dataChannels.shutdown()
        }
    }

    private func fail(_ error: WebRTCTransportError) {
        media = nil
        dataChannels?.shutdown()
        state = .failed(error)
    }
}

/// Which side of the offer/answer exchange a transport is on.
public enum WebRTCTransportRole: Sendable, Hashable {
    /// Sends the offer: ICE's controlling agent; its DTLS role follows the answer's `a=setup`.
    case offerer
    /// Answers: ICE's controlled agent; its DTLS role follows the offer's `a=setup`
    /// (`DTLSRole/answering(offeredSetup:)`).
    case answerer
}
