import Foundation
import ParleyCall
import ParleyCore
import ParleyJanus
import ParleySRTP
import ParleyWebRTC

/// One participant's membership of a room on a Janus server (VideoRoom or AudioBridge), taking
/// part over WebRTC as a browser does, or through plain RTP: the signalling side, safe to use
/// from any task.
///
/// ```swift
/// let room = try await JanusRoom.join(.init(server: url, room: 1234, name: "ann"))
/// let call = try room.makeCall()                  // a CallSession with the room's transports
/// try call.publishAudio(microphone)               // sent with the SSRC the room expects
/// Task { for await note in room.notes { print(note) } }
/// try call.session.run()                          // on this thread, until stop()
/// for failure in await room.leave() { print("leaving: \(failure)") }
/// ```
///
/// Over WebRTC (``Transport/webRTC``, the default), a VideoRoom participant publishes with
/// its own PeerConnection (a JSEP offer with `configure`, Janus's answer) and receives every
/// other publisher, browsers included, in one multistream subscriber PeerConnection (Janus's
/// offer, Parley's answer, `start`; renegotiated as publishers come and go). Their talking
/// comes from Parley's VAD on the decoded audio (a browser's RFC 6464 voice flag is its own
/// weak detector's, or always set). An AudioBridge participant has one PeerConnection: its
/// audio to the mixer, the mix back as the remote participant `mix`. ICE (libnice), DTLS-SRTP
/// and SRTP are ParleyWebRTC's `WebRTCTransport`; the media start flowing once the call runs.
///
/// Through plain RTP (``Transport/plainRTP``), a VideoRoom participant publishes through a remote publisher
/// (`add_remote_publisher`: Janus takes its RTP at a port and shows it to the others like any
/// publisher) and receives every other publisher through forwarders Janus sends to its UDP port
/// (`rtp_forward`; SRTP under a key generated for the call with ``Options/srtp``). It also joins
/// as a listener, which is where a pin is checked and where the room's events come from. A
/// publisher that unpublishes ends at once; one that goes silent for the session's
/// `CallSessionConfiguration/remoteTimeout` (its process died) leaves the call, and its
/// remote publisher, which Janus would keep until the room ends, is removed.
///
/// In an AudioBridge room (one created with `allow_rtp_participants`) it joins as a plain-RTP
/// participant: its audio goes to Janus's mixer and the mix of everyone else comes back as one
/// stream, the remote participant `mix`; who is in the room comes as ``notes``.
public final class JanusRoom: Sendable {
    /// How this participant's media travel to and from Janus.
    public enum Transport: Sendable, Hashable {
        /// WebRTC (ICE, DTLS-SRTP), as a browser takes part: no room secret needed, and any
        /// participant of the room is heard.
        case webRTC
        /// Plain RTP through the server's side doors: a VideoRoom remote publisher and
        /// `rtp_forward`ers (they need the room to allow them), an AudioBridge plain-RTP
        /// participant (a room made with `allow_rtp_participants`).
        case plainRTP
    }

    /// The Janus plugin a room belongs to.
    public enum Plugin: Sendable, Hashable {
        /// `janus.plugin.videoroom`: each publisher's streams, forwarded one by one.
        case videoRoom
        /// `janus.plugin.audiobridge`: one mix of everyone else.
        case audioBridge
    }

    /// A published video stream's picture size and rate, as the room announces it to the others.
    public struct VideoFormat: Sendable, Hashable {
        /// Picture width and height in pixels.
        public var width: Int
        public var height: Int
        /// Pictures per second.
        public var framesPerSecond: Int

        /// A format of `width` x `height` pixels at `framesPerSecond`.
        public init(width: Int, height: Int, framesPerSecond: Int) {
            self.width = width
            self.height = height
            self.framesPerSecond = framesPerSecond
        }
    }

    /// Where Janus sends the room's media to this participant, when not straight to it (a NAT's
    /// forwarded port, a relay).
    public struct ForwardAddress: Sendable, Hashable {
        /// An IPv4 address or a name Janus resolves.
        public var host: String
        /// The port (nil: the local receive port).
        public var port: UInt16?

        /// Janus sends to `host`, at `port` (nil: the local receive port).
        public init(host: String, port: UInt16? = nil) {
            self.host = host
            self.port = port
        }
    }

    /// How to join a room.
    public struct Options: Sendable {
        /// Janus's HTTP API (the `/janus` path), e.g. `http://127.0.0.1:8088/janus`.
        public var server: URL
        /// The room's id (the room must exist).
        public var room: UInt64
        /// This participant's display name: one word, its name in the others' calls.
        public var name: String
        /// The room's plugin.
        public var plugin: Plugin
        /// How the media travel. Default ``Transport/webRTC``.
        public var transport: Transport
        /// WebRTC: the IP addresses to gather ICE candidates on (empty: every interface but the
        /// loopback one, which Janus does not take).
        public var iceAddresses: [String]
        /// The room's pin, if it has one.
        public var pin: String?
        /// Join muted: an AudioBridge leaves this participant out of the mix, and the local
        /// participant published with ``RoomCall/publishAudio(_:configuration:)`` starts muted.
        public var muted: Bool
        /// The video this participant will publish (VideoRoom only; nil: audio only).
        public var video: VideoFormat?
        /// Plain RTP: have Janus forward the others' media as SRTP (AES_CM_128_HMAC_SHA1_80)
        /// under a key generated for the call (VideoRoom only). WebRTC's media are always
        /// protected (DTLS-SRTP).
        public var srtp: Bool
        /// Plain RTP: the local UDP port the room's media arrive on (0: any free port).
        public var receivePort: UInt16
        /// Plain RTP: where Janus sends the media (nil: this machine's address towards Janus,
        /// at the receive port).
        public var forwardTo: ForwardAddress?
        /// The longest wait for Janus's answer to the join, seconds.
        public var joinTimeout: Double
        /// The room's chat through Janus's TextRoom plugin (nil: none): a PeerConnection of
        /// its own with a data channel, on ``iceAddresses``, joined under ``name``.
        public var chat: ChatOptions?

        /// Options for joining room `room` of the Janus API at `server` as `name`; the rest as
        /// their defaults: over WebRTC on every interface but the loopback, no pin, unmuted,
        /// audio only, a 30-s wait for the join.
        public init(server: URL, room: UInt64, name: String, plugin: Plugin = .videoRoom, transport: Transport = .webRTC) {
            self.server = server
            self.room = room
            self.name = name
            self.plugin = plugin
            self.transport = transport
            iceAddresses = []
            pin = nil
            muted = false
            video = nil
            srtp = false
            receivePort = 0
            forwardTo = nil
            joinTimeout = 30
            chat = nil
        }

        /// Janus's host, once the options are checked.
        func validated() throws(RoomError) -> String {
            guard let host = server.host, ["http", "https"].contains(server.scheme ?? "") else {
                throw .invalidOptions("the server must be an http:// URL of Janus's API, got '\(server.absoluteString)'")
            }
            guard !name.isEmpty, !name.contains(where: { $0 == " " || $0.isNewline }) else {
                throw .invalidOptions("the name must be one word, got '\(name)'")
            }
            guard plugin == .videoRoom || video == nil else {
                throw .invalidOptions("video is for a VideoRoom (an AudioBridge room mixes audio only)")
            }
            switch transport {
            case .plainRTP:
                guard plugin == .videoRoom || !srtp else {
                    throw .invalidOptions("SRTP forwarding is for a VideoRoom (an AudioBridge's plain-RTP participants are unencrypted)")
                }
            case .webRTC:
                guard !srtp, receivePort == 0, forwardTo == nil else {
                    throw .invalidOptions("SRTP keys, a receive port and a forward address are for plain RTP (WebRTC's media are always encrypted, on ports ICE finds)")
                }
            }
            guard joinTimeout > 0, joinTimeout.isFinite else { throw .invalidOptions("the join timeout must be positive") }
            if let v = video, !(1...8192).contains(v.width) || !(1...8192).contains(v.height) || !(1...240).contains(v.framesPerSecond) {
                throw .invalidOptions("the video format \(v.width)x\(v.height)@\(v.framesPerSecond) is not valid")
            }
            return host
        }
    }

    /// The options the room was joined with.
    public let options: Options
    /// The Janus session the participant holds.
    public let janus: JanusClient
    /// This participant's id in the room (in a VideoRoom: its remote publisher's).
    public let participantID: UInt64
    /// Where this participant's media go, in words: `Janus HOST:PORT as publisher ID in room R`.
    public let destination: String
    /// What the room says beside the call's events, in order, until the participant leaves or
    /// the room ends (one consumer).
    public let notes: AsyncStream<RoomNote>
    /// The room's chat, in order, until the participant leaves or the chat closes (one
    /// consumer); finished at once when joined without ``Options/chat``.
    public let chat: AsyncStream<ChatEvent>
    /// The longest text a chat message may have, bytes as JSON writes it (UTF-8, with quotes,
    /// backslashes and control characters escaped): Janus's TextRoom carries at most 65535
    /// bytes per data-channel message, its envelope included.
    public static let chatTextLimit = RoomChat.textLimit

    let noteSink: AsyncStream<RoomNote>.Continuation
    let chatSink: AsyncStream<ChatEvent>.Continuation
    /// The chat, once set up.
    let chatLink = Locked<RoomChat?>(nil)
    let clock: any MediaClock
    let link: any RoomLink
    /// The sockets, until ``makeCall(configuration:)`` hands them to the session.
    let sockets: Locked<RoomSockets?>
    let state = Locked(RoomState())

    init(options: Options, janus: JanusClient, clock: any MediaClock, link: any RoomLink, participantID: UInt64,
         destination: String, sockets: consuming sending RoomSockets) {
        self.options = options
        self.janus = janus
        self.clock = clock
        self.link = link
        self.participantID = participantID
        self.destination = destination
        self.sockets = Locked<RoomSockets?>(sockets)
        (notes, noteSink) = AsyncStream.makeStream(of: RoomNote.self)
        (chat, chatSink) = AsyncStream.makeStream(of: ChatEvent.self, bufferingPolicy: .unbounded)
        if options.chat == nil { chatSink.finish() }
        state.withLock { $0.members[participantID] = options.name }
    }

    /// Joins a room: opens a Janus session, checks the room exists, joins it (the pin is
    /// checked here), and in a VideoRoom creates this participant's remote publisher and asks
    /// Janus to forward the publishers already in. The media start with ``makeCall(configuration:)``.
    /// - Parameters:
    ///   - options: the server, room, name, plugin and what this participant publishes.
    ///   - clock: the clock the room's sockets stamp arrivals with (the call's).
    /// - Throws: ``RoomError``: ``RoomError/noSuchRoom(room:server:)``,
    ///   ``RoomError/wrongPin(room:reason:)``, ``RoomError/server(_:)`` when Janus cannot be
    ///   reached, ``RoomError/joinTimedOut(room:seconds:hint:)``, ... Nothing is left on the
    ///   server then.
    public static func join(_ options: Options, clock: any MediaClock = SystemMediaClock()) async throws(RoomError) -> JanusRoom {
        let host = try options.validated()
        let janus = JanusClient(baseURL: options.server)
        let room: JanusRoom
        switch (options.plugin, options.transport) {
        case (.videoRoom, .webRTC): room = try await joinVideoRoomWebRTC(options, janus: janus, clock: clock)
        case (.audioBridge, .webRTC): room = try await joinAudioBridgeWebRTC(options, janus: janus, clock: clock)
        case (.videoRoom, .plainRTP): room = try await joinVideoRoom(options, janus: janus, janusHost: host, clock: clock)
        case (.audioBridge, .plainRTP): room = try await joinAudioBridge(options, janus: janus, janusHost: host, clock: clock)
        }
        if let chat = options.chat {
            do {
                let link = try await RoomChat.start(options, chat: chat, username: String(room.participantID), clock: clock,
                                                    sink: room.chatSink)
                room.chatLink.withLock { $0 = link }
            } catch {
                await room.leave()
                throw error
            }
        }
        return room
    }

    /// Sends `text` to everyone in the chat room (this participant gets its echo, marked
    /// `ChatMessage.isOwn`). It leaves at once, or, in a burst, as soon as the data channel's
    /// send buffer has room: messages go in the order sent.
    /// - Throws: `ChatError.tooLong(size:limit:)` over ``chatTextLimit``,
    ///   `ChatError.channelClosed` once the chat has closed or the room was left,
    ///   `ChatError.notEnabled` without ``Options/chat``. Janus's refusals come later as
    ///   ``ChatEvent/refused(code:reason:)``.
    public func send(chat text: String) throws(ChatError) {
        guard let link = chatLink.withLock({ $0 }) else {
            throw options.chat == nil ? .notEnabled : .channelClosed
        }
        try link.send(text)
    }

    /// Sends UTF-8 bytes as a chat message, as ``send(chat:)``.
    /// - Throws: `ChatError.invalidUTF8` when they are not UTF-8, else as ``send(chat:)``.
    public func send(chatUTF8 bytes: some Collection<UInt8>) throws(ChatError) {
        guard let text = String(validating: Array(bytes), as: UTF8.self) else { throw .invalidUTF8 }
        try send(chat: text)
    }

    /// The chat room's participants as Janus announced them, this one included (empty without
    /// a chat).
    public var chatParticipants: [TextRoomParticipant] { chatLink.withLock { $0 }?.participants ?? [] }

    /// The chat's counters (nil without a chat).
    public var chatStatistics: ChatStatistics? { chatLink.withLock { $0 }?.statistics }

    /// The call session of this participant, on the calling thread (the call's): the session's
    /// configuration is `configuration` with what the room needs (which remotes it admits, the
    /// payload type, the RTP time origin), its transports are the room's sockets, and the
    /// publishers received so far join it at its first frame; later ones, and those who leave,
    /// reach it through its `CallSession/inlet`. Call once, before running the session.
    /// - Throws: ``RoomError/callAlreadyMade``, or ``RoomError/srtp(_:)``.
    public func makeCall(configuration: CallSessionConfiguration = .init()) throws(RoomError) -> RoomCall {
        guard var sockets = self.sockets.withLock({ $0.take() }) else { throw .callAlreadyMade }
        var settings = configuration
        link.configure(&settings)
        let session = CallSession(configuration: settings, clock: clock)
        var srtp: SRTPTransport<UDPTransport>?
        var webRTC: WebRTCTransport?
        let network: CallTransportID
        if let transport = sockets.webRTC.take() {
            webRTC = transport
            network = session.addTransport(transport)
        } else if let receive = sockets.receive.take() {
            if let send = sockets.send.take() {
                network = session.addTransport(send)
                if let key = link.srtpKey {
                    let t: SRTPTransport<UDPTransport>
                    do { t = try SRTPTransport(receive, sendKey: key, receiveKey: key) } catch { throw .srtp(error) }
                    srtp = t
                    session.addTransport(t)
                } else {
                    session.addTransport(receive)
                }
            } else {
                network = session.addTransport(receive)
            }
        } else {
            throw .callAlreadyMade
        }
        let inlet = session.inlet
        let events = session.events.events()
        let (pending, deferred) = state.withLock { s in
            s.inlet = inlet
            defer { s.undeclared = []; s.deferred = [] }
            return (s.undeclared, s.deferred)
        }
        for remote in pending { post(remote, to: inlet) }
        for body in deferred { inlet.post(body) }
        let follower = Task { await self.follow() }
        let watcher = Task {
            for await event in events {
                if case .left = event.kind, let who = event.participant { await self.link.timedOut(who, in: self) }
            }
        }
        state.withLock { $0.tasks += [follower, watcher] }
        return RoomCall(session: session, room: self, sendTransport: network, srtp: srtp, webRTC: webRTC)
    }

    /// Waits until `count` publishers (this one included, browsers counted) are in a VideoRoom
    /// and received (over plain RTP: also until Janus forwards this one's audio to each of the
    /// others, which only Parley participants ask for), or `giveUp` says to stop waiting (it is asked
    /// every 50 ms). Needs ``makeCall(configuration:)`` first (its events keep the publishers
    /// current); an AudioBridge, or a count of 1, does not wait.
    /// - Throws: ``RoomError/publishersTimedOut(room:publishers:seconds:)`` after `timeout`
    ///   seconds, ``RoomError/serverGone(_:)`` if Janus goes away, ``RoomError/server(_:)``.
    public func waitForPublishers(_ count: Int, timeout: Double = 120,
                                  giveUp: @Sendable () -> Bool = { false }) async throws(RoomError) {
        guard count > 1, options.plugin == .videoRoom else { return }
        let deadline = MonotonicTime.now().advanced(bySeconds: timeout)
        while true {
            let (publishers, ended) = state.withLock { ($0.publishers.count, $0.ended) }
            if let ended { throw .serverGone(ended) }
            if publishers + 1 >= count, let videoRoom = link as? VideoRoomLink {
                let forwarded: [RTPForwarder]
                do { forwarded = try await videoRoom.handle.listForwarders(room: options.room)[participantID] ?? [] } catch {
                    throw serverError(error)
                }
                if forwarded.filter({ $0.type == "audio" }).count >= count - 1 { return }
            } else if publishers + 1 >= count {
                return   // over WebRTC, every publisher counted is subscribed to
            }
            guard MonotonicTime.now() < deadline else {
                throw .publishersTimedOut(room: options.room, publishers: count, seconds: timeout)
            }
            guard !giveUp() else { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Mutes or unmutes this participant: the session's local participant (a `muted` or
    /// `unmuted` event at its next frame) and, in an AudioBridge, Janus's mix (`configure`).
    /// In a VideoRoom its audio is still forwarded (silence while muted).
    /// - Throws: ``RoomError/server(_:)`` when Janus refuses or cannot be reached.
    public func setMuted(_ muted: Bool) async throws(RoomError) {
        state.withLock { $0.inlet }?.post { $0.setLocalMuted(muted) }
        do { try await link.setMuted(muted) } catch { throw serverError(error) }
    }

    /// The room's members as Janus announced them (this participant included), by display name.
    public var members: [String] { state.withLock { $0.members.values.sorted() } }

    /// The members Janus last said are talking (its own decision from the RFC 6464 levels).
    public var talking: [String] {
        state.withLock { s in s.members.filter { s.talking.contains($0.key) }.map(\.value).sorted() }
    }

    /// The frame rate a received participant's video was announced with (nil: no video).
    public func framesPerSecond(of participant: ParticipantID) -> Int? {
        state.withLock { $0.publishers.values.first { $0.remote.id == participant }?.framesPerSecond }
    }

    /// Why the room ended (Janus went away, the room was destroyed); nil while it goes on.
    public var endReason: String? { state.withLock { $0.ended } }

    /// Leaves the room: stops following it, and (unless it has ended) removes this
    /// participant's remote publisher, stops the forwarders it asked for, leaves, and destroys
    /// the Janus session; ``notes`` finishes. Waits at most `timeout` seconds for Janus: a
    /// server that stops answering does not hold the caller (Janus then drops the session on
    /// its own timeout). Calling it again does nothing.
    /// - Returns: what failed, in order (empty when all went well).
    @discardableResult
    public func leave(timeout: Double = 20) async -> [RoomLeaveFailure] {
        let (tasks, ended, alreadyLeft) = state.withLock { s in
            defer { s.left = true; s.tasks = [] }
            return (s.tasks, s.ended, s.left)
        }
        for task in tasks { task.cancel() }
        noteSink.finish()
        guard !alreadyLeft else { return [] }
        var chatFailures: [RoomLeaveFailure] = []
        if let chat = chatLink.withLock({ $0.take() }) { chatFailures = await chat.leave(timeout: ended == nil ? min(timeout, 5) : nil) }
        chatSink.finish()
        guard ended == nil else {
            // Nothing to leave: only the session's keep-alives to stop.
            let janus = self.janus
            Task { try? await janus.destroy() }
            return chatFailures
        }
        let failures = LeaveFailures()
        let finished = await withDeadline(seconds: timeout) { [self] in
            await link.cleanUp(self) { name, error in failures.append(.request(name, janusError(error))) }
        }
        return chatFailures + failures.all + (finished ? [] : [.timedOut(seconds: timeout)])
    }

    // MARK: Following the room

    /// Follows the room's events until cancelled, the room ends, or Janus goes away.
    private func follow() async {
        do {
            for try await event in await janus.events() {
                guard case .plugin(let sender, _, let data, let jsep) = event, link.owns(sender) else { continue }
                guard try await link.take(data, jsep: jsep, from: sender, in: self) else { return }
            }
        } catch is CancellationError {
        } catch {
            if Task.isCancelled { return }
            end(.serverGone("\(error)"), reason: "\(error)")
        }
    }

    /// The room has ended: noted, and the reason kept.
    func end(_ note: RoomNote, reason: String) {
        state.withLock { $0.ended = reason }
        noteSink.yield(note)
    }

    /// A new participant for the call: declared at the session's next frame, or at its first
    /// when the call is not made yet.
    func declare(_ remote: RemoteParticipant) {
        let inlet = state.withLock { s -> CallSessionInlet? in
            if s.inlet == nil { s.undeclared.append(remote) }
            return s.inlet
        }
        if let inlet { post(remote, to: inlet) }
    }

    /// A participant of the call whose signalling says it left: it leaves once its audio has
    /// played out.
    func ended(_ name: ParticipantID) {
        let inlet = state.withLock { s -> CallSessionInlet? in
            s.undeclared.removeAll { $0.id == name }
            return s.inlet
        }
        inlet?.post { $0.remoteEnded(name) }
    }

    /// A transport for the call (a subscriber's): added at the session's next frame, or at its
    /// first when the call is not made yet.
    @discardableResult
    func deliver(_ transport: sending WebRTCTransport) -> TransportHandoff {
        let handoff = TransportHandoff(transport)
        post { session in
            guard let transport = handoff.take() else { return }
            handoff.added(session.addTransport(transport))
        }
        return handoff
    }

    /// Runs `body` on the call's thread at its next frame (or its first, when the call is not
    /// made yet), in the order posted.
    func post(_ body: @escaping @Sendable (CallSession) -> Void) {
        let inlet = state.withLock { s -> CallSessionInlet? in
            if s.inlet == nil { s.deferred.append(body) }
            return s.inlet
        }
        inlet?.post(body)
    }

    private func post(_ remote: RemoteParticipant, to inlet: CallSessionInlet) {
        let sink = noteSink
        inlet.post { session in
            do { try session.addRemote(remote) } catch { sink.yield(.refused(remote.id, reason: "\(error)")) }
        }
    }

    /// Notes Janus's talking decision about participant `id`, if it is a member (else under
    /// the name `unknown`, if given).
    func noteTalking(_ id: UInt64, _ talking: Bool, unknown: String? = nil) {
        let name = state.withLock { s -> String? in
            if talking { s.talking.insert(id) } else { s.talking.remove(id) }
            return s.members[id] ?? unknown
        }
        if let name { noteSink.yield(.talking(name, talking)) }
    }
}

/// A transport on its way from the room's tasks to the call's thread.
final class TransportHandoff: Sendable {
    private let transport: Locked<WebRTCTransport?>
    private let id = Locked<CallTransportID?>(nil)

    init(_ transport: sending WebRTCTransport) { self.transport = Locked(transport) }

    /// The transport, once (on the call's thread).
    func take() -> WebRTCTransport? { transport.withLock { $0.take() } }
    /// Notes the id the session gave it.
    func added(_ id: CallTransportID) { self.id.withLock { $0 = id } }
    /// The id the session gave it, once added.
    var callTransport: CallTransportID? { id.withLock { $0 } }
}

/// A room's sockets between joining and making its call.
struct RoomSockets: ~Copyable {
    /// The socket this participant sends on (VideoRoom: to its remote publisher; nil: the
    /// receive socket sends too).
    var send: UDPTransport?
    /// The socket the room's media arrive on (every interface), sending to `host` at `rtcpPort`.
    var receive: UDPTransport?
    /// The receive socket's port.
    let receivePort: UInt16
    /// Over WebRTC: the transport this participant publishes on (VideoRoom) or takes part
    /// with (AudioBridge).
    var webRTC: WebRTCTransport?

    init(send: consuming UDPTransport?, receiveOn port: UInt16, from host: String, rtcpPort: UInt16,
         clock: any MediaClock) throws(UDPTransportError) {
        let receive = try UDPTransport(localPort: port, bindHost: "0.0.0.0", peerHost: host, peerPort: rtcpPort, clock: clock)
        receivePort = receive.localPort
        self.receive = consume receive
        self.send = send
    }

    init(webRTC: sending WebRTCTransport) {
        receivePort = 0
        self.webRTC = webRTC
    }
}

/// A publisher this participant receives: its name in the call and the forwarders Janus made.
struct ReceivedPublisher: Sendable {
    var remote: RemoteParticipant
    var forwarders: [RTPForwarder]
    /// The frame rate its video was announced with (nil without video).
    var framesPerSecond: Int?
}

/// What a room shares between its tasks and the caller.
struct RoomState {
    /// Display names by participant id, this participant included.
    var members: [UInt64: String] = [:]
    /// The members Janus last said are talking.
    var talking: Set<UInt64> = []
    /// The publishers received (VideoRoom), by publisher id.
    var publishers: [UInt64: ReceivedPublisher] = [:]
    /// Participants for the call received before it was made, in order.
    var undeclared: [RemoteParticipant] = []
    /// What to run on the call's thread once it is made (after the participants above), in
    /// order.
    var deferred: [@Sendable (CallSession) -> Void] = []
    /// The call's inlet, once it is made.
    var inlet: CallSessionInlet?
    /// The tasks following the room and the call.
    var tasks: [Task<Void, Never>] = []
    /// Why the room ended, once it has.
    var ended: String?
    /// Whether ``JanusRoom/leave(timeout:)`` has run.
    var left = false
}

/// `error` as a ``RoomError``: one already is; a Janus error is the server's.
func serverError(_ error: any Error) -> RoomError {
    if let e = error as? RoomError { return e }
    return .server(janusError(error))
}

/// `error` as a ``JanusError`` (the client's requests throw nothing else).
func janusError(_ error: any Error) -> JanusError {
    error as? JanusError ?? .malformedReply("\(error)")
}

/// What failed while leaving, as it happens (kept when the leaving times out).
final class LeaveFailures: Sendable {
    private let list = Locked<[RoomLeaveFailure]>([])
    func append(_ failure: RoomLeaveFailure) { list.withLock { $0.append(failure) } }
    var all: [RoomLeaveFailure] { list.withLock { $0 } }
}

/// A continuation resumed by whichever comes first.
private final class ResumeOnce: Sendable {
    private let continuation = Locked<CheckedContinuation<Bool, Never>?>(nil)
    func set(_ c: CheckedContinuation<Bool, Never>) { continuation.withLock { $0 = c } }
    func resume(_ value: Bool) { continuation.withLock { $0.take() }?.resume(returning: value) }
}

/// Runs `body`, waiting for it at most `seconds`; whether it finished in time (it goes on
/// after a time-out, unawaited).
func withDeadline(seconds: Double, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    let once = ResumeOnce()
    return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        once.set(continuation)
        let timer = Task {
            // Cancelled when the body has finished first: no verdict from here then.
            do { try await Task.sleep(for: .seconds(max(0, seconds))) } catch { return }
            once.resume(false)
        }
        Task {
            await body()
            once.resume(true)
            timer.cancel()
        }
    }
}
