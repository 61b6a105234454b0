import Foundation
import ParleyCall
import ParleyCore
import ParleyJanus
import ParleySRTP

// Joining: the Janus session, the plugin's handle, the join and its answer, the sockets.

extension JanusRoom {
    /// A Janus session and a handle of the room's plugin, checked to hold the room (else the
    /// session is destroyed and the error says the room does not exist).
    static func open<Handle: JanusRoomHandle>(_ o: Options, _ janus: JanusClient) async throws(RoomError) -> Handle {
        do { try await janus.createSession() } catch { throw serverError(error) }
        do {
            let handle = try await Handle.attach(janus)
            guard try await handle.exists(room: o.room) else { throw RoomError.noSuchRoom(room: o.room, server: o.server) }
            return handle
        } catch {
            try? await janus.destroy()
            throw serverError(error)
        }
    }

    /// Polls the session's events for handle `handleID` until `answer` takes one (the answer
    /// to a join, or to an offer: `answer` sees each event's session description); the
    /// handle's other events come back, in order, as the backlog. An error
    /// answering the join ends it (`pinCode`: the plugin's code for a wrong pin), as does
    /// ``Options/joinTimeout`` without an answer; the Janus session is destroyed first.
    static func awaitJoinAnswer<Event, Answer>(
        _ janus: JanusClient, handleID: UInt64, options o: Options, pinCode: Int, hint: String = "",
        parse: (JSONValue) -> Event, answer: (Event, JSONValue?) -> Answer?, error: (Event) -> (code: Int, text: String)?
    ) async throws(RoomError) -> (answer: Answer, backlog: [Event]) {
        let deadline = MonotonicTime.now().advanced(bySeconds: o.joinTimeout)
        var result: Answer?
        var backlog: [Event] = []
        while result == nil {
            let events: [JanusEvent]
            do { events = try await janus.poll() } catch {
                try? await janus.destroy()
                throw serverError(error)
            }
            for case .plugin(let sender, _, let data, let jsep) in events where sender == handleID {
                let event = parse(data)
                if result == nil, let a = answer(event, jsep) {
                    result = a
                } else if result == nil, let (code, text) = error(event) {
                    try? await janus.destroy()
                    throw code == pinCode ? .wrongPin(room: o.room, reason: text) : .refused(room: o.room, code: code, reason: text)
                } else {
                    backlog.append(event)
                }
            }
            if result == nil && MonotonicTime.now() >= deadline {
                try? await janus.destroy()
                throw .joinTimedOut(room: o.room, seconds: o.joinTimeout, hint: hint)
            }
        }
        return (result!, backlog)
    }

    /// Runs one request of the join; a failure destroys the Janus session.
    static func request<T>(_ janus: JanusClient, _ body: () async throws -> T) async throws(RoomError) -> T {
        do { return try await body() } catch {
            try? await janus.destroy()
            throw serverError(error)
        }
    }

    /// Where Janus sends this participant's media: the forward address, else this machine's
    /// address towards Janus, at the receive socket's port.
    static func forwardAddress(_ o: Options, janusHost: String, receivePort: UInt16) -> (host: String, port: UInt16) {
        (o.forwardTo?.host ?? UDPTransport.localAddress(towards: janusHost) ?? "127.0.0.1", o.forwardTo?.port ?? receivePort)
    }

    /// A VideoRoom: the listener (pin check, the room's events), the remote publisher, the
    /// sockets, the forwarders of the publishers already in.
    static func joinVideoRoom(_ o: Options, janus: JanusClient, janusHost: String,
                              clock: any MediaClock) async throws(RoomError) -> JanusRoom {
        let handle: VideoRoomHandle = try await open(o, janus)
        try await request(janus) { try await handle.join(room: o.room, display: o.name + ".listener", pin: o.pin) }
        let (known, backlog) = try await awaitJoinAnswer(
            janus, handleID: handle.id, options: o, pinCode: VideoRoomHandle.ErrorCode.unauthorized, parse: VideoRoomEvent.init,
            answer: { e, _ in if case .joined(_, let publishers) = e { publishers } else { nil } },
            error: \.failure)
        var streams = [VideoRoomHandle.RemoteStream(type: "audio", codec: "opus", audioLevelExtensionID: 1, fec: true)]
        if let v = o.video {
            streams.append(.init(type: "video", codec: "vp8", description: "\(v.width)x\(v.height)@\(v.framesPerSecond)"))
        }
        let published = streams
        let me = try await request(janus) { try await handle.addRemotePublisher(room: o.room, display: o.name, streams: published) }
        func abandon() async {
            try? await handle.removeRemotePublisher(room: o.room, id: me.id)
            try? await janus.destroy()
        }

        // One socket sends to Janus (RTP to the publisher's port, RTCP to its RTCP port, where
        // Janus learns where to send PLIs back); one receives what Janus forwards.
        let sockets: RoomSockets, key: SRTPKey?
        do {
            sockets = try RoomSockets(send: UDPTransport(localPort: 0, bindHost: "0.0.0.0", peerHost: me.host ?? janusHost,
                                                         peerPort: me.port, rtcpPeerPort: me.rtcpPort, clock: clock),
                                      receiveOn: o.receivePort, from: janusHost, rtcpPort: me.rtcpPort, clock: clock)
        } catch {
            await abandon()
            throw .socket(error)
        }
        do { key = o.srtp ? try SRTPKey.generate(suite: .aesCM128HMACSHA1_80) : nil } catch {
            await abandon()
            throw .srtp(error)
        }
        let forward = forwardAddress(o, janusHost: janusHost, receivePort: sockets.receivePort)
        let link = VideoRoomLink(handle: handle, forwardHost: forward.host, forwardPort: forward.port, srtpKey: key)
        let room = JanusRoom(options: o, janus: janus, clock: clock, link: link, participantID: me.id,
                             destination: "Janus \(me.host ?? janusHost):\(me.port) as publisher \(me.id) in room \(o.room)",
                             sockets: sockets)
        do {
            _ = try await link.handle(.publishers(known), in: room)
            for event in backlog { _ = try await link.handle(event, in: room) }
        } catch {
            await room.leave()
            throw serverError(error)
        }
        return room
    }

    /// An AudioBridge: the socket, the join with its `rtp` object, the members already in.
    static func joinAudioBridge(_ o: Options, janus: JanusClient, janusHost: String,
                                clock: any MediaClock) async throws(RoomError) -> JanusRoom {
        let handle: AudioBridgeHandle = try await open(o, janus)
        var sockets: RoomSockets
        do { sockets = try RoomSockets(send: nil, receiveOn: o.receivePort, from: janusHost, rtcpPort: 9, clock: clock) } catch {
            try? await janus.destroy()
            throw .socket(error)
        }
        let forward = forwardAddress(o, janusHost: janusHost, receivePort: sockets.receivePort)
        let plain = AudioBridgeHandle.PlainRTP(host: forward.host, port: forward.port)
        try await request(janus) { try await handle.join(room: o.room, display: o.name, pin: o.pin, muted: o.muted, rtp: plain) }
        let (me, backlog) = try await awaitJoinAnswer(
            janus, handleID: handle.id, options: o, pinCode: AudioBridgeHandle.ErrorCode.unauthorized,
            hint: " (is the room open to plain-RTP participants?)", parse: AudioBridgeEvent.init,
            answer: { e, _ in if case .joined(let id, let list, let rtp?) = e { (id: id, participants: list, rtp: rtp) } else { nil } },
            error: \.failure)
        do { try sockets.receive?.setPeer(host: me.rtp.host, port: me.rtp.port) } catch {
            try? await handle.leave()
            try? await janus.destroy()
            throw .socket(error)
        }
        let link = AudioBridgeLink(handle: handle, audio: RoomAudio(ssrc: UInt32.random(in: 1...UInt32.max),
                                                                    payloadType: me.rtp.payloadType, audioLevelID: nil))
        let room = JanusRoom(options: o, janus: janus, clock: clock, link: link, participantID: me.id,
                             destination: "Janus \(me.rtp.host):\(me.rtp.port) as participant \(me.id) in room \(o.room)",
                             sockets: sockets)
        room.takeMembers(me.participants)
        for case .participants(let list) in backlog { room.takeMembers(list) }
        return room
    }
}
