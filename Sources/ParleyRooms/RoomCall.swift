import ParleyCall
import ParleyDevices
import ParleyJanus
import ParleyRTP
import ParleySRTP
import ParleyWebRTC

/// The call's side of a joined room (``JanusRoom/makeCall(configuration:)``): the
/// `CallSession` with the room's transports, and the local media published with the SSRCs the
/// room expects. Like the session, used on the call's thread only.
///
/// The room's publishers join the session as remote participants under their display names
/// (made unique) and leave it when the room says so or when they fall silent for the
/// session's timeout.
public final class RoomCall {
    /// The call.
    public let session: CallSession
    /// The room it belongs to.
    public let room: JanusRoom
    /// The transport the local media go out on (to Janus).
    public let sendTransport: CallTransportID
    private let srtp: SRTPTransport<UDPTransport>?
    private let webRTC: WebRTCTransport?

    init(session: CallSession, room: JanusRoom, sendTransport: CallTransportID, srtp: SRTPTransport<UDPTransport>?,
         webRTC: WebRTCTransport?) {
        self.session = session
        self.room = room
        self.sendTransport = sendTransport
        self.srtp = srtp
        self.webRTC = webRTC
    }

    /// The SRTP counters of the forwarded media (nil: plain RTP or WebRTC).
    public var srtpStatistics: SRTPStatistics? { srtp?.statistics }

    /// Over WebRTC: where the PeerConnection this participant publishes on is (connecting,
    /// connected, failed with the reason).
    public var webRTCState: WebRTCTransportState? { webRTC?.state }

    /// Over WebRTC: the counters of the PeerConnection this participant publishes on.
    public var webRTCStatistics: WebRTCTransportStatistics? { webRTC?.statistics }

    /// `base` with what the room needs of the local audio: its SSRC and payload type, RTP time
    /// from 0 at the start of the source (the others place its talk in its own media time), a
    /// random first sequence number.
    public func audioConfiguration(_ base: AudioSendConfiguration = .init()) -> AudioSendConfiguration {
        var send = base
        room.link.configure(&send)
        send.firstSequence = UInt16.random(in: 0...UInt16.max)
        send.firstTimestamp = 0
        return send
    }

    /// `base` with what a VideoRoom needs of the local video: the SSRC the room expects (over
    /// plain RTP the remote publisher's second stream's, RTP time from 0 to be in sync with the
    /// audio without RTCP), VP8's payload type.
    public func videoConfiguration(_ base: LocalVideoConfiguration = .init()) -> LocalVideoConfiguration {
        var video = base
        video.payloadType = VP8RTP.defaultPayloadType
        room.link.configure(&video)
        return video
    }

    /// Publishes `source` as this participant's audio (Opus, 20 ms, the RFC 6464 level with
    /// the talking detector's voice flag), under ``audioConfiguration(_:)`` of `configuration`
    /// (its sample rate must be the source's); joined muted, it starts muted.
    /// - Throws: ``RoomError/session(_:)`` when the session refuses it.
    public func publishAudio<S: AudioCaptureSource<Int16> & ~Copyable>(
        _ source: consuming S, configuration: AudioSendConfiguration = .init()
    ) throws(RoomError) {
        do {
            try session.addLocal(id: room.options.name, source: source, configuration: audioConfiguration(configuration),
                                 sendingOn: sendTransport)
        } catch { throw .session(error) }
        if room.options.muted { session.setLocalMuted(true) }
    }

    /// Publishes `source` as this participant's video (VP8) in a VideoRoom joined with
    /// ``JanusRoom/Options/video``, under ``videoConfiguration(_:)`` of `configuration`.
    /// - Throws: ``RoomError/invalidOptions(_:)`` in an AudioBridge or without the option;
    ///   ``RoomError/session(_:)`` when the session refuses it.
    public func publishVideo<S: VideoCaptureSource & ~Copyable>(
        _ source: consuming S, configuration: LocalVideoConfiguration = .init()
    ) throws(RoomError) {
        guard room.options.plugin == .videoRoom, room.options.video != nil else {
            throw .invalidOptions("video needs a VideoRoom joined with Options.video (the published stream's format)")
        }
        do {
            try session.addLocalVideo(source: source, configuration: videoConfiguration(configuration), sendingOn: sendTransport)
        } catch { throw .session(error) }
    }
}
