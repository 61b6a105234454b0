// Why a WebRTC transport refused a description or stopped carrying media.

import ParleyDTLS
import ParleyICE
import ParleySDP
import ParleySRTP

/// Why a ``WebRTCTransport`` refused a description, or why it failed.
public enum WebRTCTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// libnice's agent refused a call.
    case ice(ICEError)
    /// ICE found no working pair, or the selected one's checks went unanswered for 50 s.
    case iceFailed
    /// The DTLS handshake or connection failed (a peer certificate that does not match the
    /// fingerprint in its description is `DTLSError/fingerprintMismatch(expected:actual:)`).
    case dtls(DTLSError)
    /// The handshake completed without an SRTP profile both sides take.
    case noSRTPProfile
    /// libsrtp could not set up a context for the exported keys.
    case srtp(SRTPError)
    /// The peer's description is an offer where an answer was due, or the other way round.
    case unexpectedDescription(JSEPDescription.Kind)
    /// The peer's description lacks what the transport needs (a media section, ICE credentials,
    /// a fingerprint, `a=setup`), named here.
    case missingInDescription(String)
    /// A candidate of the peer's does not parse.
    case remoteCandidate(ICECandidateError)
    /// The peer's description was already given.
    case remoteAlreadySet
    /// The queue between ICE's thread and the receiver holds 1...65536 datagrams.
    case invalidQueueCapacity(Int)

    public var description: String {
        switch self {
        case .ice(let e): "ICE: \(e)"
        case .iceFailed: "ICE failed: no working candidate pair, or the peer stopped answering checks"
        case .dtls(let e): "DTLS: \(e)"
        case .noSRTPProfile: "DTLS agreed on no SRTP profile"
        case .srtp(let e): "SRTP: \(e)"
        case .unexpectedDescription(let kind): "an \(kind.rawValue) where the other kind was due"
        case .missingInDescription(let what): "the peer's description has no \(what)"
        case .remoteCandidate(let e): "a remote candidate: \(e)"
        case .remoteAlreadySet: "the peer's description was already given"
        case .invalidQueueCapacity(let n): "a receive queue of \(n) datagrams (1...65536)"
        }
    }
}
