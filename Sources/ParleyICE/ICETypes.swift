// The values an ICE agent takes and reports: credentials, role, states, events, errors.

/// An agent's ICE role (RFC 8445 §6.1.1): the controlling agent nominates the pair both use.
/// A role conflict with the peer is resolved by the agents (RFC 8445 §7.3.1.1).
public enum ICERole: Sendable, Hashable {
    /// Nominates the selected pair (in WebRTC, the offerer, unless it is ICE-lite's peer).
    case controlling
    /// Uses the pair its peer nominates.
    case controlled
}

/// The state of an agent's one component (RTP and RTCP multiplexed, all media bundled).
public enum ICEConnectionState: Sendable, Hashable, CustomStringConvertible {
    /// Nothing scheduled: before gathering, or after the connection was lost.
    case disconnected
    /// Gathering local candidates.
    case gathering
    /// Connectivity checks under way.
    case checking
    /// At least one pair works; checks may go on.
    case connected
    /// Checks concluded; the selected pair is final (RFC 8445's Completed).
    case ready
    /// No pair works: every check failed once the remote candidates ended, or no check on the
    /// selected pair has been answered for 50 s (the peer vanished).
    case failed

    public var description: String {
        switch self {
        case .disconnected: "disconnected"
        case .gathering: "gathering"
        case .checking: "checking"
        case .connected: "connected"
        case .ready: "ready"
        case .failed: "failed"
        }
    }
}

/// The local and remote candidates of the pair datagrams travel on.
public struct ICECandidatePair: Sendable, Hashable, CustomStringConvertible {
    /// The local candidate.
    public let local: ICECandidate
    /// The remote candidate.
    public let remote: ICECandidate

    public var description: String { "\(local.address):\(local.port) <-> \(remote.address):\(remote.port)" }
}

/// What an agent reports to its event handler.
public enum ICEEvent: Sendable, Hashable {
    /// A local candidate was gathered: send it to the peer (trickle) or collect it for the SDP.
    case localCandidate(ICECandidate)
    /// Every local candidate has been gathered (end-of-candidates for the peer).
    case gatheringComplete
    /// The component's state changed.
    case stateChanged(ICEConnectionState)
    /// A pair was selected (or replaced by a better one): datagrams now travel on it.
    case selectedPair(ICECandidatePair)
}

/// An IPv4 or IPv6 address with a port: a STUN server.
public struct ICEServerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address, an IP literal (libnice resolves no names).
    public let address: String
    /// The port (3478 is STUN's).
    public let port: UInt16

    /// A server address.
    public init(address: String, port: UInt16 = 3478) {
        self.address = address
        self.port = port
    }

    public var description: String { address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)" }
}

/// Why an agent could not be made or could not do what was asked.
public enum ICEError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A username fragment or password out of RFC 8839's syntax (the values are not repeated).
    /// A local address that is not an IP literal libnice accepts.
    case malformedLocalAddress(String)
    /// A STUN server address that is not an IP literal.
    case malformedServerAddress(String)
    /// A port range that is empty or starts at 0.
    case invalidPortRange(ClosedRange<UInt16>)
    /// libnice could not make the agent or its stream.
    case agentSetupFailed(String)
    /// libnice refused to start gathering (no usable local address or no free port).
    case gatheringFailed
    /// libnice refused the credentials.
    case credentialsRejected
    /// A datagram of no bytes, or more than a UDP datagram carries (65535).
    case invalidDatagramSize(Int)
    /// Nothing to send on: no pair selected yet, or the connection failed.
    case notConnected
    /// The socket refused the datagram (e.g. its buffer is full).
    case sendFailed
    /// The agent was closed.
    case closed

    public var description: String {
        switch self {
        case .malformedLocalAddress(let a): "malformed local address '\(a)' (an IP literal)"
        case .malformedServerAddress(let a): "malformed STUN server address '\(a)' (an IP literal)"
        case .invalidPortRange(let r): "invalid port range \(r.lowerBound)-\(r.upperBound)"
        case .agentSetupFailed(let what): "libnice could not \(what)"
        case .gatheringFailed: "libnice could not gather candidates (no usable local address or free port)"
        case .credentialsRejected: "libnice rejected the ICE credentials"
        case .invalidDatagramSize(let n): "cannot send a datagram of \(n) bytes"
        case .notConnected: "ICE has no selected pair to send on"
        case .sendFailed: "the socket refused the datagram"
        case .closed: "the ICE agent is closed"
        }
    }
}
