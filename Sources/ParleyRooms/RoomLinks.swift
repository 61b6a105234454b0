import ParleyCall
import ParleyJanus
import ParleyRTP
import ParleySRTP

// What differs between the plugins: the session's needs, the room's events, leaving.

/// One plugin's side of a joined room.
protocol RoomLink: Sendable {
    /// Whether the plugin events of handle `sender` are the room's.
    func owns(_ sender: UInt64) -> Bool
    /// The key the room's media are forwarded under (nil: plain RTP).
    var srtpKey: SRTPKey? { get }
    /// What the room needs of the session's configuration.
    func configure(_ settings: inout CallSessionConfiguration)
    /// What the room needs of the local audio's configuration (its SSRC, its payload type).
    func configure(_ send: inout AudioSendConfiguration)
    /// What the room needs of the local video's configuration (its SSRC; VideoRoom only).
    func configure(_ video: inout LocalVideoConfiguration)
    /// Takes one plugin event of a handle the link owns (with its session description, if
    /// any); false once the room has ended.
    func take(_ data: JSONValue, jsep: JSONValue?, from sender: UInt64, in room: JanusRoom) async throws -> Bool
    /// Participant `name` left the call. When the room did not say so (no packet for the
    /// session's timeout: its process died), a VideoRoom removes its remote publisher, which
    /// only its owner removes otherwise and Janus keeps until the room ends.
    func timedOut(_ name: ParticipantID, in room: JanusRoom) async
    /// Tells the room this participant muted or unmuted.
    func setMuted(_ muted: Bool) async throws
    /// The requests of leaving, in order; each failure is reported with the request's name.
    func cleanUp(_ room: JanusRoom, report: @Sendable (String, any Error) -> Void) async
}

/// Runs one request of the leaving, reporting its failure under `name`.
func attempt(_ name: String, _ report: @Sendable (String, any Error) -> Void, _ body: () async throws -> Void) async {
    do { try await body() } catch { report(name, error) }
}

/// This participant's audio as the room takes it: its SSRC, its payload type, its audio level.
struct RoomAudio: Sendable {
    /// This participant's SSRC.
    let ssrc: UInt32
    /// The payload type the room takes (an AudioBridge sends the mix under it too).
    let payloadType: UInt8
    /// The audio level's extension id (nil: the default).
    let audioLevelID: UInt8?

    /// What the room needs of the local audio's configuration.
    func configure(_ send: inout AudioSendConfiguration) {
        send.ssrc = ssrc
        send.payloadType = payloadType
        if let audioLevelID { send.audioLevelExtensionID = audioLevelID }
    }
}

/// A VideoRoom participant: the listener handle, the remote publisher, the forwarders.
struct VideoRoomLink: RoomLink {
    let handle: VideoRoomHandle
    /// Where the forwarders send.
    let forwardHost: String
    let forwardPort: UInt16
    let srtpKey: SRTPKey?

    func owns(_ sender: UInt64) -> Bool { sender == handle.id }

    func configure(_ settings: inout CallSessionConfiguration) {
        // Only the publishers Janus forwards, declared with their SSRCs; their RTP time counts
        // from 0 at the start of each source, as this participant's does.
        settings.admitsUndeclaredRemotes = false
        settings.receive.senderTimestampOrigin = 0
    }

    func configure(_ send: inout AudioSendConfiguration) {
        send.ssrc = VideoRoomHandle.remotePublisherSSRC(mindex: 0)
    }

    func configure(_ video: inout LocalVideoConfiguration) {
        video.ssrc = VideoRoomHandle.remotePublisherSSRC(mindex: 1)
        // Counted from 0, as the audio: in sync without RTCP.
        video.firstTimestamp = 0
    }

    func take(_ data: JSONValue, jsep: JSONValue?, from sender: UInt64, in room: JanusRoom) async throws -> Bool {
        try await handle(VideoRoomEvent(data), in: room)
    }

    /// Takes one event (of the room, or of the join's backlog).
    func handle(_ event: VideoRoomEvent, in room: JanusRoom) async throws -> Bool {
        if case .publishers(let list) = event {
            for p in list {
                guard let remote = try await receive(p, in: room) else { continue }
                room.declare(remote)
                room.noteSink.yield(.joined(remote.displayName))
            }
        }
        return room.follow(event)
    }

    /// Asks Janus to forward a new publisher's streams here; its participant in the call,
    /// named uniquely (nil: this participant itself, one received already, or one without Opus).
    func receive(_ p: VideoRoomPublisher, in room: JanusRoom) async throws -> RemoteParticipant? {
        guard p.id != room.participantID, room.state.withLock({ $0.publishers[p.id] == nil }) else { return nil }
        guard let audio = p.streams.first(where: { $0.type == "audio" && !$0.disabled && $0.codec == "opus" }) else { return nil }
        let video = p.streams.first { $0.type == "video" && !$0.disabled && $0.codec == "vp8" }
        let size = video?.pictureSize
        let remote = room.newPublisher(p.id, display: p.display, framesPerSecond: size?.framesPerSecond) { name, taken in
            var ssrc = UInt32.random(in: 2_000...UInt32.max - 2)
            while taken.contains(ssrc) || taken.contains(ssrc + 1) { ssrc = UInt32.random(in: 2_000...UInt32.max - 2) }
            var remoteVideo: RemoteVideo?
            if video != nil, let size {
                var feedback = VideoReceiveFeedbackConfiguration()
                feedback.sendsNACK = false
                feedback.sendsPictureLoss = false
                // Counted from 0 at the start of the source, as the audio: in sync without RTCP.
                remoteVideo = RemoteVideo(ssrc: ssrc + 1, width: size.width, height: size.height,
                                          payloadType: VP8RTP.defaultPayloadType, feedback: feedback, senderTimestampOrigin: 0)
            }
            return RemoteParticipant(id: name, displayName: p.display ?? name, audioSSRC: ssrc, video: remoteVideo)
        }
        var streams = [(mid: audio.mid, port: forwardPort, ssrc: remote.audioSSRC)]
        if let video, let v = remote.video { streams.append((mid: video.mid, port: forwardPort, ssrc: v.ssrc)) }
        let srtp = srtpKey.map { RTPForwardSRTP(suite: 80, crypto: $0.base64) }
        let forwarders = try await handle.rtpForward(room: room.options.room, publisher: p.id, host: forwardHost, streams: streams,
                                                     srtp: srtp)
        room.state.withLock { $0.publishers[p.id]?.forwarders = forwarders }
        return remote
    }

    func timedOut(_ name: ParticipantID, in room: JanusRoom) async {
        let gone = room.state.withLock { s -> UInt64? in
            guard let id = s.publishers.first(where: { $0.value.remote.id == name })?.key else { return nil }
            s.publishers[id] = nil
            s.members[id] = nil
            return id
        }
        guard let gone else { return }   // Janus announced it: it is gone already
        // Another participant may have removed it first: an error here changes nothing.
        try? await handle.removeRemotePublisher(room: room.options.room, id: gone)
    }

    func setMuted(_ muted: Bool) async throws {}

    /// Removes this participant's publisher (its forwarders go with it), stops the forwarders
    /// it asked for, leaves, destroys the session.
    func cleanUp(_ room: JanusRoom, report: @Sendable (String, any Error) -> Void) async {
        let id = room.options.room
        await attempt("remove_remote_publisher", report) { try await handle.removeRemotePublisher(room: id, id: room.participantID) }
        for (publisher, p) in room.state.withLock({ $0.publishers }) {
            for f in p.forwarders {
                // A publisher that has gone took its forwarders with it.
                try? await handle.stopRTPForward(room: id, publisher: publisher, streamID: f.streamID)
            }
        }
        await attempt("leave", report) { try await handle.leave() }
        await attempt("destroy session", report) { try await room.janus.destroy() }
    }
}

/// An AudioBridge participant: its audio to the mixer, the mix back, the room's members.
struct AudioBridgeLink: RoomLink {
    let handle: AudioBridgeHandle
    let audio: RoomAudio

    func owns(_ sender: UInt64) -> Bool { sender == handle.id }
    var srtpKey: SRTPKey? { nil }

    func configure(_ settings: inout CallSessionConfiguration) {
        // One stream comes back: the mix of everyone else.
        settings.maximumRemotes = 1
        settings.undeclaredRemoteName = "mix"
        settings.receive.payloadType = audio.payloadType
        // Janus's mix carries no voice flag: the talking comes from the local VAD (over plain
        // RTP the receiver falls back to it by itself; over WebRTC this says so at once).
        settings.receive.voiceActivitySource = .local
    }

    func configure(_ send: inout AudioSendConfiguration) { audio.configure(&send) }

    func configure(_ video: inout LocalVideoConfiguration) {}

    func take(_ data: JSONValue, jsep: JSONValue?, from sender: UInt64, in room: JanusRoom) async throws -> Bool {
        switch AudioBridgeEvent(data) {
        case .participants(let list), .joined(_, let list, _):
            room.takeMembers(list)
        case .leaving(let id):
            let name = room.state.withLock { s in
                s.talking.remove(id)
                return s.members.removeValue(forKey: id) ?? "participant-\(id)"
            }
            room.noteSink.yield(.left(name))
        case .talking(let id, let talking):
            room.noteTalking(id, talking, unknown: "participant-\(id)")
        case .destroyed:
            room.end(.roomDestroyed, reason: "room \(room.options.room) was destroyed")
            return false
        default: break
        }
        return true
    }

    func timedOut(_ name: ParticipantID, in room: JanusRoom) async {}

    func setMuted(_ muted: Bool) async throws {
        try await handle.setMuted(muted)
    }

    func cleanUp(_ room: JanusRoom, report: @Sendable (String, any Error) -> Void) async {
        await attempt("leave", report) { try await handle.leave() }
        await attempt("destroy session", report) { try await room.janus.destroy() }
    }
}

extension JanusRoom {
    /// Takes AudioBridge participants the room announced: new ones are noted as joined.
    func takeMembers(_ list: [AudioBridgeEvent.Participant]) {
        for p in list {
            let name = p.display ?? "participant-\(p.id)"
            let isNew = state.withLock { s in
                defer { s.members[p.id] = name }
                return s.members[p.id] == nil
            }
            if isNew { noteSink.yield(.joined(name)) }
        }
    }

    /// A publisher joining the call: its participant as `make` builds it from a unique name
    /// (its display name, one word, else `publisher-ID`; made unique with `-ID`) and the SSRCs
    /// the call's other publishers have taken, noted as received.
    func newPublisher(_ id: UInt64, display: String?, framesPerSecond: Int?,
                      _ make: (_ name: String, _ taken: Set<UInt32>) -> RemoteParticipant) -> RemoteParticipant {
        var name = display ?? "publisher-\(id)"
        if name.contains(where: { $0 == " " || $0.isNewline }) {
            name = String(name.map { $0 == " " || $0.isNewline ? "_" : $0 })
        }
        return state.withLock { s in
            let taken = Set(s.publishers.values.flatMap { [$0.remote.audioSSRC, $0.remote.video?.ssrc ?? 0] })
            if name == options.name || s.publishers.values.contains(where: { $0.remote.id == name }) { name += "-\(id)" }
            let remote = make(name, taken)
            s.publishers[id] = ReceivedPublisher(remote: remote, forwarders: [],
                                                 framesPerSecond: remote.video == nil ? nil : framesPerSecond)
            s.members[id] = remote.displayName
            return remote
        }
    }

    /// What every VideoRoom participant does with an event of the room: a publisher that
    /// unpublished or left leaves the call, Janus's talking decision is noted, a destroyed room
    /// ends. False once the room has ended.
    func follow(_ event: VideoRoomEvent) -> Bool {
        switch event {
        case .unpublished(let id), .leaving(let id):
            publisherLeft(id)
        case .talking(let id, let talking):
            noteTalking(id, talking)
        case .destroyed:
            end(.roomDestroyed, reason: "room \(options.room) was destroyed")
            return false
        default: break
        }
        return true
    }

    /// A VideoRoom publisher unpublished or left: it ends in the call and is noted as left.
    func publisherLeft(_ id: UInt64) {
        let gone = state.withLock { s -> ReceivedPublisher? in
            guard let p = s.publishers.removeValue(forKey: id) else { return nil }
            s.members[id] = nil
            s.talking.remove(id)
            return p
        }
        guard let gone else { return }
        ended(gone.remote.id)
        noteSink.yield(.left(gone.remote.displayName))
    }
}
