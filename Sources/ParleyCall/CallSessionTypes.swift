// What a client gives and gets from a CallSession: its settings, the remotes it declares,
// its transports' roles, its counters and errors.

import ParleyCodecs
import ParleyEcho
import ParleyJitter
import ParleyRTP
import ParleyVoice

/// Settings of a ``CallSession``.
public struct CallSessionConfiguration: Sendable {
    /// Receive-side settings of every remote participant's audio (the payload type, the
    /// audio-level extension, where talking decisions come from, the jitter buffer).
    public var receive = AudioReceiveConfiguration()
    /// Dominant-speaker settings.
    public var activeSpeaker = ActiveSpeakerConfiguration()
    /// Cadence of ``CallEvent/Kind/statistics(_:)`` events, seconds. Default 1 s.
    public var statisticsInterval = 1.0
    /// Cadence of the dominant-speaker decision, seconds. Default 0.1 s.
    public var dominantInterval = 0.1
    /// A remote participant that sends nothing for this long (seconds) is taken to have gone:
    /// its audio plays out and it leaves (a `left` event). Default 5 s, well beyond a loss burst
    /// or a sender muted with DTX (which still sends a packet every 400 ms). A declared remote
    /// that never sends anything leaves this long after it joined.
    public var remoteTimeout = 5.0
    /// After a remote has ended (RTCP BYE, ``CallSession/remoteEnded(_:)`` or the timeout) and
    /// its jitter buffer and transports are empty, the playout frames it still gets before it
    /// leaves (its last decoded audio plays out). Default 30 (300 ms at 10 ms frames).
    public var drainFrames = 30
    /// Whether a packet from an SSRC no remote was declared with creates a remote participant
    /// (named ``CallSession/defaultName(ofSSRC:)``). Default true. Off, such packets are
    /// counted in ``CallSessionStatistics/unknownSSRC`` and dropped.
    public var admitsUndeclaredRemotes = true
    /// The name of a remote created on its first packet; nil (the default) names it
    /// ``CallSession/defaultName(ofSSRC:)``. For a call whose one remote stream is a
    /// conference server's mix, whose SSRC no signalling gives (with ``maximumRemotes`` 1).
    public var undeclaredRemoteName: ParticipantID?
    /// Most remote participants at once; packets of further SSRCs are counted in
    /// ``CallSessionStatistics/refusedRemotes`` and dropped. Default 64.
    public var maximumRemotes = 64
    /// Whether the session ends (its playout stops, final statistics are published and its
    /// event streams finish) once every remote participant that joined has left. Default false:
    /// a client's call runs until ``CallSession/stop()``.
    public var endsWhenEveryoneLeft = false
    /// Remote participants that left whose final counters the session keeps, the most recent
    /// ones (for ``CallSession/remoteNames`` and ``CallSession/receiveStatistics(of:)`` at the
    /// end of a call). Everything else of a remote (its receiver, decoder, transports with its
    /// roles) is released when it leaves, so a call where people come and go stays the same
    /// size. Default 256.
    public var departedRemotesKept = 256
    /// Where the client plays the remote participants' audio, which decides whether the local
    /// microphone hears it. Default ``AudioPlayout/file``.
    public var playout = AudioPlayout.file
    /// Echo cancellation of the local capture against the playout (``CallSession/addLocal(id:displayName:source:configuration:sendingOn:)``):
    /// nil (the default) turns it on exactly when ``playout`` is ``AudioPlayout/loudspeaker``;
    /// true or false decides. It needs a mono capture at the receive rate.
    public var echoCancellation: Bool?
    /// The echo canceller's settings; its rate is the local capture's.
    public var echoCanceller = EchoCancellerConfiguration()

    public init() {}

    /// Whether the local capture goes through an echo canceller.
    public var cancelsEcho: Bool { echoCancellation ?? (playout == .loudspeaker) }
}

/// A remote participant known before its first packet (from signalling: an SDP, a server's
/// event), so that it joins under its name and its video is received.
public struct RemoteParticipant: Sendable, Hashable {
    /// What tells it apart in the call: unique among the call's participants (an SSRC, a room's
    /// participant id). Events name it by this id.
    public var id: ParticipantID
    /// The name a UI shows (the room's display name); several participants may share one.
    /// Default: the id.
    public var displayName: String
    /// SSRC of its audio stream.
    public var audioSSRC: UInt32
    /// Its video stream, if it sends one.
    public var video: RemoteVideo?

    /// A remote participant `id`, shown as `displayName` (default: `id`).
    public init(id: ParticipantID, displayName: String? = nil, audioSSRC: UInt32, video: RemoteVideo? = nil) {
        self.id = id; self.displayName = displayName ?? id; self.audioSSRC = audioSSRC; self.video = video
    }
}

/// A remote participant's VP8 video stream.
public struct RemoteVideo: Sendable, Hashable {
    public var ssrc: UInt32
    /// Picture size, when signalling announced it (it sizes the first pictures); nil: the first
    /// keyframe's header gives it. The pictures take each keyframe's size in any case.
    public var width: Int?
    public var height: Int?
    /// RTP payload type. Default 96.
    public var payloadType: UInt8
    /// How the receiver asks for repairs and reports reception (RFC 4585 NACK and PLI, RFC 3550
    /// receiver reports), sent on the remote's ``CallTransportRole/videoFeedback(of:)``
    /// transport when it has one.
    public var feedback: VideoReceiveFeedbackConfiguration
    /// The RTP timestamp of the sender's media time zero, when signalling tells it, as
    /// ``AudioReceiveConfiguration/senderTimestampOrigin`` does for the audio: with both set,
    /// the two streams are put in sync without RTCP sender reports (a sender report replaces
    /// the assumption). Default nil: lip sync waits for sender reports.
    public var senderTimestampOrigin: UInt32?

    public init(ssrc: UInt32, width: Int, height: Int, payloadType: UInt8 = VP8RTP.defaultPayloadType,
                feedback: VideoReceiveFeedbackConfiguration = .init(), senderTimestampOrigin: UInt32? = nil) {
        self.ssrc = ssrc; self.width = width; self.height = height; self.payloadType = payloadType
        self.feedback = feedback
        self.senderTimestampOrigin = senderTimestampOrigin
    }

    /// Video whose picture size signalling did not announce (a browser's): its first keyframe
    /// gives it.
    public init(ssrc: UInt32, payloadType: UInt8 = VP8RTP.defaultPayloadType, feedback: VideoReceiveFeedbackConfiguration = .init()) {
        self.ssrc = ssrc
        self.payloadType = payloadType
        self.feedback = feedback
    }
}

/// Counters of a ``CallSession``'s demultiplexer.
public struct CallSessionStatistics: Sendable, Hashable {
    /// Datagrams received on all transports.
    public var datagrams = 0
    /// Datagrams too short to carry an SSRC (counted, dropped).
    public var malformed = 0
    /// Datagrams from an SSRC no remote has, with undeclared remotes not admitted (dropped).
    public var unknownSSRC = 0
    /// Datagrams from a new SSRC beyond ``CallSessionConfiguration/maximumRemotes`` (dropped).
    public var refusedRemotes = 0
    /// RTCP BYE packets taken.
    public var byes = 0
    /// RTCP feedback datagrams about the local video (receiver reports, NACKs, PLIs) taken for
    /// its sender, and those dropped because more arrived in one playout frame than the
    /// session holds (``CallSession/feedbackSlots``).
    public var videoFeedback = 0
    public var videoFeedbackDropped = 0
    public init() {}
}

/// Why a ``CallSession`` refused a request.
public enum CallSessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A participant with that id is already in the call (display names may repeat; ids may not).
    case duplicateID(ParticipantID)
    /// A remote already uses that SSRC (or the local participant does).
    case duplicateSSRC(UInt32)
    /// The session already has a local participant.
    case localAlreadyAdded
    /// No transport has that identifier.
    case unknownTransport
    /// The session has already started: remotes' transports and the local participant are
    /// added before ``CallSession/attach(to:)``.
    case alreadyStarted
    /// The remote's video could not be set up (the VP8 decoder failed).
    case video(String)
    /// The local participant's source does not deliver mono audio at the send rate.
    case localFormat(expected: AudioFormat, got: AudioFormat)
    /// The session already has a local video.
    case localVideoAlreadyAdded

    public var description: String {
        switch self {
        case .duplicateID(let n): "a participant with the id \(n) is already in the call"
        case .duplicateSSRC(let s): "SSRC \(CallSession.hex(s)) is already in use in the call"
        case .localAlreadyAdded: "the call already has a local participant"
        case .unknownTransport: "no such transport in this call"
        case .alreadyStarted: "the call has started: add transports and the local participant before it does"
        case .video(let m): "video: \(m)"
        case .localFormat(let e, let g): "the local source delivers \(g); the send pipeline takes \(e) (resample or mix it down first)"
        case .localVideoAlreadyAdded: "the call already has a local video"
        }
    }
}

/// A transport added to a ``CallSession``.
public struct CallTransportID: Sendable, Hashable {
    /// Its place in the order transports were added (stable: transports that go are not renumbered).
    let index: Int
}

/// What a transport carries, for the session's per-frame order and a remote's end.
public enum CallTransportRole: Sendable, Hashable {
    /// Any participant's media, demultiplexed by SSRC (a UDP socket of a real call). Drained
    /// first in every playout frame.
    case shared
    /// One remote participant's audio: drained just before that remote plays out, and the
    /// remote leaves only once nothing is in flight on it (a simulated link). This role and
    /// the two below end when that remote leaves; a transport left without a role is released.
    case audio(of: ParticipantID)
    /// One remote participant's video: drained just after its audio played out (so lip sync
    /// sees the audio of this frame).
    case video(of: ParticipantID)
    /// Where the session sends its RTCP feedback about one remote participant's video
    /// (receiver reports, generic NACKs, PLIs: ``VideoReceivePipeline/sendFeedback(at:over:)``)
    /// after each playout frame; never read by the session. Without one, that video gets no
    /// feedback. In a real call it is the socket the remote's media arrive on, given this
    /// role too with ``CallSession/addRole(_:to:)``.
    case videoFeedback(of: ParticipantID)
}


/// Settings of the local participant's video (``CallSession/addLocalVideo(source:configuration:sendingOn:)``).
public struct LocalVideoConfiguration: Sendable, Hashable {
    /// SSRC of the video stream (its own, not the audio's). A real call picks it at random.
    public var ssrc: UInt32 = 0x5649_4430
    /// RTP payload type. Default 96.
    public var payloadType: UInt8 = VP8RTP.defaultPayloadType
    /// RTP timestamp of the first picture (random in a real call).
    public var firstTimestamp: UInt32 = 0
    /// VP8 target bitrate, kbit/s, also the ceiling of the loss-adapted bitrate. Default 300.
    public var bitrateKbps = 300
    /// How the sender answers the receiver's RTCP feedback (NACK, PLI, receiver reports).
    public var feedback = VideoSendFeedbackConfiguration()

    /// The defaults described on each property.
    public init() {}
}

/// Where a call's received audio is played.
public enum AudioPlayout: Sendable, Hashable {
    /// A loudspeaker the local microphone hears (a laptop without a headset).
    case loudspeaker
    /// Headphones or a headset: the microphone does not hear the playout.
    case headset
    /// A file, or nowhere: nothing is heard.
    case file
}
