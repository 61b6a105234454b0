import ParleyCall
import ParleyCore
import ParleyDTLS
import ParleyJanus
import ParleyRTP
import ParleySDP
import ParleySRTP
import ParleyWebRTC

// Taking part in a room over WebRTC, as a browser does: a VideoRoom publisher (Parley's offer
// with `configure`) beside a multistream subscriber (Janus's offers, Parley's answers, `start`),
// or an AudioBridge participant with one PeerConnection.

extension JanusRoom {
    /// A WebRTC transport of this participant's, with its candidates gathered (Janus takes
    /// them in the description: it is not asked to trickle).
    static func gatheredTransport(_ role: WebRTCTransportRole, _ o: Options, clock: any MediaClock, certificate: DTLSCertificate,
                                  onArrival: (@Sendable () -> Void)? = nil) async throws(RoomError) -> WebRTCTransport {
        let transport: WebRTCTransport
        do {
            transport = try WebRTCTransport(role: role, certificate: certificate, localAddresses: o.iceAddresses, clock: clock,
                                            onArrival: onArrival)
        } catch {
            throw .webRTC(error)
        }
        let deadline = MonotonicTime.now().advanced(bySeconds: 5)
        while !transport.candidatesComplete && MonotonicTime.now() < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        guard !transport.localCandidates.isEmpty else {
            throw .invalidOptions("no ICE candidate on \(o.iceAddresses.isEmpty ? "any interface but the loopback" : o.iceAddresses.joined(separator: ", "))")
        }
        return transport
    }

    /// The certificate of this participant's PeerConnections and the transport it offers on;
    /// a failure destroys the Janus session.
    static func offeringTransport(_ o: Options, janus: JanusClient,
                                  clock: any MediaClock) async throws(RoomError) -> (transport: WebRTCTransport, certificate: DTLSCertificate) {
        do throws(RoomError) {
            let certificate: DTLSCertificate
            do { certificate = try DTLSCertificate() } catch { throw .webRTC(.dtls(error)) }
            return (try await gatheredTransport(.offerer, o, clock: clock, certificate: certificate), certificate)
        } catch {
            try? await janus.destroy()
            throw error
        }
    }

    /// Waits for Janus's answer to the offer of this participant's `transport` on `handle`
    /// (the events of the handle before it come back as the backlog) and takes it
    /// (``takeAnswer(_:into:_:clock:)``); a failure leaves and destroys the Janus session.
    static func awaitAnswer<Handle: JanusRoomHandle, Event>(
        to transport: WebRTCTransport, on handle: Handle, _ janus: JanusClient, _ o: Options, clock: any MediaClock,
        pinCode: Int, parse: (JSONValue) -> Event, error: (Event) -> (code: Int, text: String)?
    ) async throws(RoomError) -> (answer: JSEPDescription, backlog: [Event]) {
        let (jsep, backlog) = try await awaitJoinAnswer(janus, handleID: handle.id, options: o, pinCode: pinCode, parse: parse,
                                                        answer: { _, jsep in jsep }, error: error)
        do { return (try await takeAnswer(jsep, into: transport, o, clock: clock), backlog) } catch {
            try? await handle.leave()
            try? await janus.destroy()
            throw error
        }
    }

    /// Janus's answer to an offer of this participant's, read and given to `transport`; then
    /// the connection, up (ICE, the DTLS handshake, the SRTP keys) before the join returns:
    /// Janus shows a publisher to the others only once its PeerConnection is up.
    static func takeAnswer(_ jsep: JSONValue, into transport: WebRTCTransport, _ o: Options,
                           clock: any MediaClock) async throws(RoomError) -> JSEPDescription {
        let answer: JSEPDescription
        do { answer = try JSEPDescription(parsing: try JanusJSEP(jsep).sdp, kind: .answer) } catch {
            throw .description("Janus's answer: \(error)")
        }
        do { try transport.setRemote(answer) } catch { throw .webRTC(error) }
        // Nothing but the handshake comes before the keys; what comes once they are there is
        // the call's.
        let deadline = MonotonicTime.now().advanced(bySeconds: o.joinTimeout)
        while true {
            transport.receive(until: clock.now()) { _, _ in }
            switch transport.state {
            case .connected: return answer
            case .failed(let error): throw .webRTC(error)
            case .closed: throw .webRTC(.dtls(.connectionClosed))
            case .connecting: break
            }
            guard MonotonicTime.now() < deadline else {
                throw .joinTimedOut(room: o.room, seconds: o.joinTimeout, hint: " (the WebRTC connection did not come up)")
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// A VideoRoom over WebRTC: the publisher handle joins (the pin is checked here), offers
    /// what it publishes and takes Janus's answer; the publishers already in are subscribed to.
    static func joinVideoRoomWebRTC(_ o: Options, janus: JanusClient, clock: any MediaClock) async throws(RoomError) -> JanusRoom {
        let handle: VideoRoomHandle = try await open(o, janus)
        let (transport, certificate) = try await offeringTransport(o, janus: janus, clock: clock)
        try await request(janus) { try await handle.join(room: o.room, display: o.name, pin: o.pin) }
        let ((me, known), backlog) = try await awaitJoinAnswer(
            janus, handleID: handle.id, options: o, pinCode: VideoRoomHandle.ErrorCode.unauthorized, parse: VideoRoomEvent.init,
            answer: { e, _ in if case .joined(let id, let publishers) = e { (id, publishers) } else { nil } },
            error: \.failure)
        let sources = (audio: UInt32.random(in: 1...UInt32.max), video: UInt32.random(in: 1...UInt32.max))
        let offer = JSEPDescription.offer(local: transport.local(cname: o.name, audioSSRC: sources.audio, videoSSRC: sources.video),
                                          audio: .sendOnly, video: o.video == nil ? nil : .sendOnly)
        var descriptions: [(mid: String, text: String)] = []
        if let v = o.video, let section = offer.media.first(where: { $0.kind == "video" }) {
            descriptions.append((section.mid, "\(v.width)x\(v.height)@\(v.framesPerSecond)"))
        }
        let sent = descriptions
        try await request(janus) {
            try await handle.configure(offer: JanusJSEP(type: .offer, sdp: offer.text), descriptions: sent)
        }
        let (answer, more) = try await awaitAnswer(to: transport, on: handle, janus, o, clock: clock,
                                                   pinCode: VideoRoomHandle.ErrorCode.unauthorized, parse: VideoRoomEvent.init,
                                                   error: \.failure)
        let link = WebRTCVideoRoomLink(publisher: handle, audio: RoomAudio(ssrc: sources.audio, answer: answer),
                                       videoSSRC: sources.video, certificate: certificate)
        let room = JanusRoom(options: o, janus: janus, clock: clock, link: link, participantID: me,
                             destination: "Janus \(o.server.host ?? "") over WebRTC as publisher \(me) in room \(o.room)",
                             sockets: RoomSockets(webRTC: transport))
        do {
            _ = try await link.handle(.publishers(known), in: room)
            for event in backlog + more { _ = try await link.handle(event, in: room) }
        } catch {
            await room.leave()
            throw serverError(error)
        }
        return room
    }

    /// An AudioBridge over WebRTC: the join (the pin is checked here), then the offer of this
    /// participant's audio with `configure` and Janus's answer.
    static func joinAudioBridgeWebRTC(_ o: Options, janus: JanusClient, clock: any MediaClock) async throws(RoomError) -> JanusRoom {
        let handle: AudioBridgeHandle = try await open(o, janus)
        let transport = try await offeringTransport(o, janus: janus, clock: clock).transport
        try await request(janus) { try await handle.join(room: o.room, display: o.name, pin: o.pin, muted: o.muted) }
        let ((me, participants), backlog) = try await awaitJoinAnswer(
            janus, handleID: handle.id, options: o, pinCode: AudioBridgeHandle.ErrorCode.unauthorized, parse: AudioBridgeEvent.init,
            answer: { e, _ in if case .joined(let id, let list, _) = e { (id, list) } else { nil } },
            error: \.failure)
        let ssrc = UInt32.random(in: 1...UInt32.max)
        let offer = JSEPDescription.offer(local: transport.local(cname: o.name, audioSSRC: ssrc, videoSSRC: ssrc &+ 1),
                                          audio: .both, video: nil)
        try await request(janus) { try await handle.configure(offer: JanusJSEP(type: .offer, sdp: offer.text), muted: o.muted) }
        let (answer, more) = try await awaitAnswer(to: transport, on: handle, janus, o, clock: clock,
                                                   pinCode: AudioBridgeHandle.ErrorCode.unauthorized, parse: AudioBridgeEvent.init,
                                                   error: \.failure)
        let link = AudioBridgeLink(handle: handle, audio: RoomAudio(ssrc: ssrc, answer: answer))
        let room = JanusRoom(options: o, janus: janus, clock: clock, link: link, participantID: me,
                             destination: "Janus \(o.server.host ?? "") over WebRTC as participant \(me) in room \(o.room)",
                             sockets: RoomSockets(webRTC: transport))
        room.takeMembers(participants)
        for case .participants(let list) in backlog + more { room.takeMembers(list) }
        return room
    }
}

/// A VideoRoom participant over WebRTC: its publisher handle (what it sends) and, once there
/// are publishers, one subscriber handle whose PeerConnection receives them all.
struct WebRTCVideoRoomLink: RoomLink {
    let publisher: VideoRoomHandle
    /// The local audio, with its SSRC as offered and the rest as Janus answered.
    let audio: RoomAudio
    /// The local video's SSRC, as offered.
    let videoSSRC: UInt32
    /// The certificate of this participant's PeerConnections.
    let certificate: DTLSCertificate
    let subscription = Locked(Subscription())

    /// The subscriber side: its handle, its transport's part of the descriptions, what it
    /// receives.
    struct Subscription {
        var handle: VideoRoomHandle?
        /// The subscriber transport's candidates, credentials and fingerprint (they stay the
        /// same through every renegotiation).
        var local: JSEPLocal?
        /// The publishers asked for and not yet in an offer.
        var requested: Set<UInt64> = []
        /// The publishers as the room announced them (their video's size is there).
        var announced: [UInt64: VideoRoomPublisher] = [:]
        /// The subscriber's transport, on its way to the call or in it.
        var transport: TransportHandoff?
    }

    var srtpKey: SRTPKey? { nil }

    func owns(_ sender: UInt64) -> Bool {
        sender == publisher.id || subscription.withLock { $0.handle?.id } == sender
    }

    func configure(_ settings: inout CallSessionConfiguration) {
        // Only the publishers subscribed to, declared with the SSRCs of Janus's offer. Browsers
        // set the voice flag from their own detector, or always: talking comes from the local
        // VAD on what is received.
        settings.admitsUndeclaredRemotes = false
        settings.receive.voiceActivitySource = .local
    }

    func configure(_ send: inout AudioSendConfiguration) { audio.configure(&send) }

    func configure(_ video: inout LocalVideoConfiguration) {
        video.ssrc = videoSSRC
    }

    func take(_ data: JSONValue, jsep: JSONValue?, from sender: UInt64, in room: JanusRoom) async throws -> Bool {
        if sender == publisher.id { return try await handle(VideoRoomEvent(data), in: room) }
        switch VideoRoomSubscriberEvent(data) {
        case .attached(_, let streams), .updated(_, let streams):
            guard let jsep else { return true }
            do { try await answer(jsep, streams: streams, in: room) } catch let error as JanusError {
                throw error
            } catch {
                // The room goes on; the publishers of this offer are not received.
                room.noteSink.yield(.refused("subscription", reason: "\(error)"))
            }
        case .error(let code, let text):
            room.noteSink.yield(.refused("subscription", reason: "Janus error \(code): \(text)"))
        default: break
        }
        return true
    }

    /// Takes one event of the publisher handle (of the room, or of the join's backlog).
    func handle(_ event: VideoRoomEvent, in room: JanusRoom) async throws -> Bool {
        switch event {
        case .publishers(let list):
            let new = list.filter { p in
                p.id != room.participantID && room.state.withLock { $0.publishers[p.id] == nil }
                    && p.streams.contains { $0.type == "audio" && !$0.disabled && $0.codec == "opus" }
            }
            subscription.withLock { s in for p in new { s.announced[p.id] = p } }
            try await subscribe(to: new.map(\.id), in: room)
        case .unpublished(let id), .leaving(let id):
            subscription.withLock { s in
                s.requested.remove(id)
                s.announced[id] = nil
            }
        default: break
        }
        return room.follow(event)
    }

    /// Asks for the publishers `ids`: the first ones make the subscriber handle (`join` as a
    /// subscriber), later ones are added to it (`subscribe`). Janus answers with an offer.
    private func subscribe(to ids: [UInt64], in room: JanusRoom) async throws {
        let (handle, fresh) = subscription.withLock { s in
            let fresh = ids.filter { !s.requested.contains($0) }
            s.requested.formUnion(fresh)
            return (s.handle, fresh)
        }
        guard !fresh.isEmpty else { return }
        let streams = fresh.map { VideoRoomFeedStream(feed: $0) }
        if let handle {
            try await handle.subscribe(streams)
        } else {
            let handle = try await VideoRoomHandle.attach(room.janus)
            subscription.withLock { $0.handle = handle }
            try await handle.joinAsSubscriber(room: room.options.room, streams: streams, pin: room.options.pin)
        }
    }

    /// Answers an offer of Janus's to the subscriber (the first makes its transport, which
    /// joins the call), and makes the call's participants of the publishers it now carries.
    private func answer(_ jsep: JSONValue, streams: [VideoRoomSubscribedStream], in room: JanusRoom) async throws {
        let offer = try JSEPDescription(parsing: JanusJSEP(jsep).sdp, kind: .offer)
        guard let handle = subscription.withLock({ $0.handle }) else { return }
        var local = subscription.withLock { $0.local }
        if local == nil {
            let transport = try await JanusRoom.gatheredTransport(.answerer, room.options, clock: room.clock, certificate: certificate)
            try transport.setRemote(offer)
            let made = transport.local(cname: room.options.name, audioSSRC: 1, videoSSRC: 2)
            local = made
            let handoff = room.deliver(transport)
            subscription.withLock { s in
                s.local = made
                s.transport = handoff
            }
        }
        let answer = try JSEPDescription.answer(to: offer, local: local!) { _ in .receiveOnly }
        try await handle.start(answer: JanusJSEP(type: .answer, sdp: answer.text))
        // One participant per publisher with an audio stream, whose SSRCs the offer gives.
        var byFeed: [UInt64: [VideoRoomSubscribedStream]] = [:]
        for s in streams where s.active { if let feed = s.feedID { byFeed[feed, default: []].append(s) } }
        for (feed, list) in byFeed.sorted(by: { $0.key < $1.key }) {
            guard room.state.withLock({ $0.publishers[feed] == nil }),
                  let audio = list.first(where: { $0.type == "audio" && $0.codec == "opus" }),
                  let audioSSRC = offer.section(mid: audio.mid)?.ssrcs.first else { continue }
            let (announced, handoff) = subscription.withLock { s in
                s.requested.remove(feed)
                return (s.announced[feed], s.transport)
            }
            // Video at the size its publisher announced (Parley's do), or at its keyframes' size
            // (a browser announces none).
            let size = announced?.streams.first { $0.type == "video" && !$0.disabled }?.pictureSize
            var remoteVideo: RemoteVideo?
            if let video = list.first(where: { $0.type == "video" && $0.codec == "vp8" }),
               let section = offer.section(mid: video.mid), let ssrc = section.ssrcs.first {
                let payloadType = section.codec(named: "VP8", clockRate: 90_000)?.payloadType ?? VP8RTP.defaultPayloadType
                remoteVideo = if let size {
                    RemoteVideo(ssrc: ssrc, width: size.width, height: size.height, payloadType: payloadType)
                } else {
                    RemoteVideo(ssrc: ssrc, payloadType: payloadType)
                }
            }
            let remote = room.newPublisher(feed, display: audio.feedDisplay ?? announced?.display, framesPerSecond: size?.framesPerSecond) { name, _ in
                RemoteParticipant(id: name, displayName: audio.feedDisplay ?? announced?.display ?? name, audioSSRC: audioSSRC, video: remoteVideo)
            }
            room.declare(remote)
            if remote.video != nil, let handoff {
                // Its NACKs, PLIs and receiver reports go back on the subscriber's transport.
                room.post { session in
                    if let id = handoff.callTransport { try? session.addRole(.videoFeedback(of: remote.id), to: id) }
                }
            }
            room.noteSink.yield(.joined(remote.displayName))
        }
    }

    func timedOut(_ name: ParticipantID, in room: JanusRoom) async {}

    func setMuted(_ muted: Bool) async throws {}

    /// Leaves with both handles (the subscriber first), then destroys the session.
    func cleanUp(_ room: JanusRoom, report: @Sendable (String, any Error) -> Void) async {
        if let subscriber = subscription.withLock({ $0.handle }) {
            await attempt("leave (subscriber)", report) { try await subscriber.leave() }
        }
        await attempt("leave", report) { try await publisher.leave() }
        await attempt("destroy session", report) { try await room.janus.destroy() }
    }
}

extension RoomAudio {
    /// `ssrc` as offered, with Opus's payload type and the audio level's extension id as Janus
    /// answered (the defaults where its answer names none).
    init(ssrc: UInt32, answer: JSEPDescription) {
        let audio = answer.media.first { $0.kind == "audio" && !$0.isRejected }
        self.init(ssrc: ssrc, payloadType: audio?.codec(named: "opus", clockRate: 48_000)?.payloadType ?? OpusRTP.defaultPayloadType,
                  audioLevelID: audio?.extensionID(JSEPExtension.audioLevel))
    }
}
