import Foundation
import ParleyCore
import ParleyDTLS
import ParleyJanus
import ParleySCTP
import ParleySDP
// The chat's message and error types are ParleyWebRTC's, shared with a direct call's chat.
@_exported import ParleyWebRTC

// A room's chat through Janus's TextRoom plugin: a PeerConnection of its own (Janus offers a
// data channel section, Parley answers), a data channel on it, and the plugin's JSON requests and
// events as its text messages.

/// Which TextRoom room a participant chats in (``JanusRoom/Options/chat``).
public struct ChatOptions: Sendable, Hashable {
    /// The TextRoom room's id (nil: the same id as the media room's).
    public var room: UInt64?
    /// The TextRoom room's pin (nil: the media room's pin, if any).
    public var pin: String?

    /// Chat in TextRoom room `room` (nil: the media room's id), with `pin` (nil: the media
    /// room's).
    public init(room: UInt64? = nil, pin: String? = nil) {
        self.room = room
        self.pin = pin
    }
}

/// What the room's chat reports (``JanusRoom/chat``), in order.
public enum ChatEvent: Sendable, Hashable {
    /// A message, this participant's own echoes included (`ChatMessage.isOwn`).
    case message(ChatMessage)
    /// A participant joined the chat room.
    case joined(TextRoomParticipant)
    /// A participant left the chat room (or was kicked out).
    case left(TextRoomParticipant)
    /// Janus refused a message of this participant's: its code and text.
    case refused(code: Int, reason: String)
    /// The chat ended: its data channel closed, its PeerConnection failed, the room was
    /// destroyed, or this participant was kicked out of it.
    case closed
}

/// Counters of a room's chat.
public struct ChatStatistics: Sendable, Hashable {
    /// TextRoom requests given to the data channel: the messages, the join and the leave.
    public var requestsSent = 0
    /// Messages received, own echoes included.
    public var messagesReceived = 0
    /// Data-channel messages that were not TextRoom events: dropped.
    public var eventsMalformed = 0
    /// From the DTLS handshake's end to the data channel's opening: the SCTP association up
    /// and DATA_CHANNEL_OPEN sent, when the channel may carry messages (RFC 8832 section 6;
    /// where a browser fires `open` on a channel it opened), seconds; nil until then.
    public var channelOpenAfterDTLS: Double?
    /// From the DTLS handshake's end to Janus's DATA_CHANNEL_ACK, seconds; nil until then.
    public var channelAcknowledgedAfterDTLS: Double?
}

/// The events of the data channel, each with the time the endpoint reported it, kept for the
/// chat's state to take after each drive.
private final class ChannelInbox {
    var events: [(event: DataChannelEvent, at: MonotonicTime)] = []
}

/// Wakes the task that drives the chat: a datagram arrived (from ICE's thread), or a timer is due.
/// A signal with nobody waiting is kept for the next wait.
final class ChatWakeup: Sendable {
    private let state = Locked<(pending: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func signal() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            guard let w = s.waiter else { s.pending = true; return nil }
            s.waiter = nil
            return w
        }
        waiter?.resume()
    }

    /// Returns at the next signal (at once if one came since the last wait).
    func wait() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.pending { s.pending = false; return true }
                s.waiter = c
                return false
            }
            if now { c.resume() }
        }
    }
}

/// What the chat keeps under its lock: the transport and the channel, and the TextRoom state.
private struct ChatLink {
    let transport: WebRTCTransport
    let inbox: ChannelInbox
    let channel: UInt16
    var open = false
    var closed = false
    /// Requests waiting for the channel or for room in the association's send buffer, in order.
    var pending: [String] = []
    var displays: [String: String] = [:]
    var joinTransaction = ""
    var joinOutcome: Result<[TextRoomParticipant], ChatError>?
    var leaveTransaction = ""
    var leaveAnswered = false
    var nextTransaction = 0
    var dtlsUp: MonotonicTime?
    var statistics = ChatStatistics()

    mutating func transaction() -> String {
        nextTransaction += 1
        return "c\(nextTransaction)"
    }
}

/// A room's chat: its own Janus session with a TextRoom handle, and the data channel.
final class RoomChat: Sendable {
    /// The JSON of a message over Janus's plugin data, which carries at most 65535 bytes
    /// (a `uint16_t` length): the text's limit leaves 255 bytes for the envelope (room,
    /// sender, time stamp, transaction).
    static let textLimit = 65_535 - 255

    let janus: JanusClient
    let room: UInt64
    let username: String
    let clock: any MediaClock
    let sink: AsyncStream<ChatEvent>.Continuation
    private let link: Locked<ChatLink>
    private let wakeup: ChatWakeup
    /// The task that drives the transport at each wake-up, and the one that wakes it for the
    /// timers (DTLS's, SCTP's).
    private let tasks = Locked<[Task<Void, Never>]>([])
    /// The longest the transport goes undriven: its timers' resolution.
    static let tick = Duration.milliseconds(5)

    private init(janus: JanusClient, room: UInt64, username: String, clock: any MediaClock,
                 sink: AsyncStream<ChatEvent>.Continuation, wakeup: ChatWakeup, link: sending ChatLink) {
        self.janus = janus
        self.wakeup = wakeup
        self.room = room
        self.username = username
        self.clock = clock
        self.sink = sink
        self.link = Locked(link)
    }

    /// Sets up the chat: a Janus session of its own, a TextRoom handle checked to hold the
    /// room, Janus's offer answered, the data channel opened, and the TextRoom join (as
    /// `username`, shown as `display`) answered. Then a task drives the channel until
    /// ``leave(timeout:)``.
    /// - Throws: ``RoomError``: ``RoomError/noSuchRoom(room:server:)``, ``RoomError/chat(_:)``
    ///   with `ChatError.refused(code:reason:)` (a wrong pin, a username taken),
    ///   ``RoomError/joinTimedOut(room:seconds:hint:)``, ``RoomError/webRTC(_:)``, ... Nothing
    ///   is left on the server then.
    static func start(_ o: JanusRoom.Options, chat: ChatOptions, username: String, clock: any MediaClock,
                      sink: AsyncStream<ChatEvent>.Continuation) async throws(RoomError) -> RoomChat {
        let room = chat.room ?? o.room
        let janus = JanusClient(baseURL: o.server)
        do { try await janus.createSession() } catch { throw serverError(error) }
        let handle: TextRoomHandle
        do {
            handle = try await TextRoomHandle.attach(janus)
            guard try await handle.exists(room: room) else { throw RoomError.noSuchRoom(room: room, server: o.server) }
        } catch {
            try? await janus.destroy()
            throw serverError(error)
        }
        let certificate: DTLSCertificate
        do { certificate = try DTLSCertificate() } catch {
            try? await janus.destroy()
            throw .webRTC(.dtls(error))
        }
        let wakeup = ChatWakeup()
        let transport: WebRTCTransport
        do {
            transport = try await JanusRoom.gatheredTransport(.answerer, o, clock: clock, certificate: certificate,
                                                              onArrival: { wakeup.signal() })
        } catch {
            try? await janus.destroy()
            throw error
        }
        try await JanusRoom.request(janus) { try await handle.setup() }
        let (jsep, _) = try await JanusRoom.awaitJoinAnswer(
            janus, handleID: handle.id, options: o, pinCode: TextRoomHandle.ErrorCode.unauthorized,
            hint: " (no offer for the chat's PeerConnection)", parse: { $0 },
            answer: { _, jsep in jsep },
            error: { data in data["error_code"]?.intValue.map { (Int($0), data["error"]?.stringValue ?? "") } })
        let inbox = ChannelInbox()
        let channel: UInt16
        do {
            let offer = try JSEPDescription(parsing: try JanusJSEP(jsep).sdp, kind: .offer)
            try transport.setRemote(offer, dataChannel: true)
            let answer = try JSEPDescription.answer(to: offer, local: transport.local(cname: o.name, audioSSRC: 1, videoSSRC: 2),
                                                    dataChannel: true) { _ in .receiveOnly }
            guard let endpoint = transport.dataChannels else { throw RoomError.description("Janus's offer has no data channel") }
            endpoint.onEvent = { inbox.events.append(($0, clock.now())) }
            channel = try endpoint.open(DataChannelParameters(label: "JanusDataChannel"))
            try await handle.ack(answer: JanusJSEP(type: .answer, sdp: answer.text))
        } catch {
            transport.close()
            try? await janus.destroy()
            if let e = error as? RoomError { throw e }
            if let e = error as? WebRTCTransportError { throw .webRTC(e) }
            if let e = error as? JanusError { throw .server(e) }
            throw .description("the chat's PeerConnection: \(error)")
        }
        var link = ChatLink(transport: transport, inbox: inbox, channel: channel)
        link.joinTransaction = link.transaction()
        link.pending = [TextRoomRequest.join(room: room, username: username, display: o.name, pin: chat.pin ?? o.pin,
                                             transaction: link.joinTransaction)]
        let chat = RoomChat(janus: janus, room: room, username: username, clock: clock, sink: sink, wakeup: wakeup, link: link)
        chat.tasks.withLock { tasks in
            tasks = [
                Task { [chat] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: RoomChat.tick)
                        chat.wakeup.signal()
                    }
                },
            ]
        }
        let deadline = MonotonicTime.now().advanced(bySeconds: o.joinTimeout)
        while true {
            chat.pump()
            let (outcome, closed) = chat.link.withLock { ($0.joinOutcome, $0.closed) }
            if case .success? = outcome { break }
            var failure: RoomError?
            if case .failure(let error)? = outcome { failure = .chat(error) }
            if closed, failure == nil { failure = .chat(.channelClosed) }
            if failure == nil, MonotonicTime.now() >= deadline {
                failure = .joinTimedOut(room: room, seconds: o.joinTimeout, hint: " (the chat's data channel did not come up)")
            }
            if let failure {
                chat.stopTasks()
                chat.link.withLock { $0.transport.close() }
                try? await janus.destroy()
                throw failure
            }
            await wakeup.wait()
        }
        chat.tasks.withLock { tasks in
            tasks.append(Task { [chat] in
                while !Task.isCancelled, chat.pump() { await chat.wakeup.wait() }
            })
        }
        return chat
    }

    /// Sends `text` (at most ``textLimit`` bytes as JSON writes it) to everyone in the room; it
    /// goes now, or once the association's send buffer has room, in the order sent.
    func send(_ text: String) throws(ChatError) {
        let size = RoomChat.jsonSize(text)
        guard size <= RoomChat.textLimit else { throw .tooLong(size: size, limit: RoomChat.textLimit) }
        let closed = link.withLock { l -> Bool in
            guard !l.closed else { return true }
            l.pending.append(TextRoomRequest.message(room: room, text: text, transaction: l.transaction()))
            flush(&l)
            return false
        }
        if closed { throw .channelClosed }
    }

    /// The counters.
    var statistics: ChatStatistics { link.withLock { $0.statistics } }

    /// The chat room's participants as Janus announced them (this one included).
    var participants: [TextRoomParticipant] {
        link.withLock { l in l.displays.map { TextRoomParticipant(username: $0.key, display: $0.value) } }
            .sorted { $0.username < $1.username }
    }

    /// Leaves the TextRoom room (waiting at most `timeout` seconds for Janus's answer; nil: the
    /// server is gone, nothing is asked of it), closes the PeerConnection and destroys the
    /// chat's Janus session; the events finish.
    func leave(timeout: Double?) async -> [RoomLeaveFailure] {
        let asked = link.withLock { l -> Bool in
            guard let timeout, timeout > 0, !l.closed else { return false }
            l.leaveTransaction = l.transaction()
            l.pending.append(TextRoomRequest.leave(room: room, transaction: l.leaveTransaction))
            flush(&l)
            return true
        }
        var failures: [RoomLeaveFailure] = []
        if asked, let timeout {
            let deadline = MonotonicTime.now().advanced(bySeconds: timeout)
            while !link.withLock({ $0.leaveAnswered || $0.closed }) && MonotonicTime.now() < deadline {
                try? await Task.sleep(for: .milliseconds(2))
            }
            if !link.withLock({ $0.leaveAnswered }) {
                failures.append(.request("leave (chat)", .malformedReply("no answer to the TextRoom leave")))
            }
        }
        stopTasks()
        link.withLock { l in
            l.closed = true
            l.transport.close()
        }
        if timeout == nil {
            let janus = self.janus
            Task { try? await janus.destroy() }
        } else {
            do { try await janus.destroy() } catch { failures.append(.request("destroy session (chat)", janusError(error))) }
        }
        sink.finish()
        return failures
    }

    /// Cancels the driving tasks and wakes the one that waits.
    private func stopTasks() {
        for task in tasks.withLock({ $0 }) { task.cancel() }
        wakeup.signal()
    }

    /// Drives the transport once: what arrived is taken (DTLS, SCTP, the channel's messages as
    /// events), what waits is sent. False once the chat has closed.
    @discardableResult
    func pump() -> Bool {
        link.withLock { l in
            guard !l.closed else { return false }
            let now = clock.now()
            l.transport.receive(until: now) { _, _ in }
            switch l.transport.state {
            case .connected: if l.dtlsUp == nil { l.dtlsUp = l.transport.connectedAt }
            case .connecting: break
            case .failed, .closed: close(&l)
            }
            let events = l.inbox.events
            l.inbox.events = []
            for (event, at) in events { take(event, &l, at: at) }
            flush(&l)
            return !l.closed
        }
    }

    private func take(_ event: DataChannelEvent, _ l: inout ChatLink, at time: MonotonicTime) {
        switch event {
        case .ready:
            // The channel's DATA_CHANNEL_OPEN leaves as this event returns.
            if let up = l.dtlsUp { l.statistics.channelOpenAfterDTLS = Double(up.nanoseconds(to: time)) / 1e9 }
        case .opened(let c) where c.id == l.channel:
            l.open = true
            if let up = l.dtlsUp { l.statistics.channelAcknowledgedAfterDTLS = Double(up.nanoseconds(to: time)) / 1e9 }
        case .message(_, .text(let text)):
            var bytes = text
            let event: TextRoomEvent
            do { event = try bytes.withUTF8 { utf8 throws(TextRoomParseError) in try TextRoomEvent(parsing: utf8) } } catch {
                l.statistics.eventsMalformed += 1
                return
            }
            take(event, &l)
        case .closed(let c) where c == l.channel: close(&l)
        case .down: close(&l)
        default: break
        }
    }

    private func take(_ event: TextRoomEvent, _ l: inout ChatLink) {
        func ours(_ r: Int?) -> Bool { r == nil || r.map { UInt64(bitPattern: Int64($0)) } == room }
        switch event {
        case .message(let r, let from, let text, let date, _) where ours(r):
            l.statistics.messagesReceived += 1
            let message = ChatMessage(senderID: from, displayName: l.displays[from] ?? from, text: text, time: Date(),
                                      serverTime: date, isOwn: from == username)
            sink.yield(.message(message))
        case .joined(let r, let p) where ours(r):
            l.displays[p.username] = p.display ?? p.username
            if p.username != username { sink.yield(.joined(p)) }
        case .left(let r, let name) where ours(r), .kicked(let r, let name) where ours(r):
            let display = l.displays.removeValue(forKey: name)
            if name != username {
                sink.yield(.left(TextRoomParticipant(username: name, display: display)))
            } else if case .kicked = event {
                close(&l)
            }
        case .success(let tx, let participants):
            if tx == l.joinTransaction, l.joinOutcome == nil {
                for p in participants { l.displays[p.username] = p.display ?? p.username }
                l.joinOutcome = .success(participants)
            } else if tx == l.leaveTransaction {
                l.leaveAnswered = true
            }
        case .error(let tx, let code, let reason):
            if tx == l.joinTransaction, l.joinOutcome == nil {
                l.joinOutcome = .failure(.refused(code: code, reason: reason))
            } else if !l.leaveTransaction.isEmpty, tx == l.leaveTransaction {
                l.leaveAnswered = true
            } else {
                sink.yield(.refused(code: code, reason: reason))
            }
        case .destroyed(let r) where ours(r):
            close(&l)
        default: break
        }
    }

    /// Sends what waits, in order, while the channel is open and the send buffer takes it.
    private func flush(_ l: inout ChatLink) {
        guard l.open, !l.closed, !l.pending.isEmpty, let endpoint = l.transport.dataChannels else { return }
        var sent = 0
        for request in l.pending {
            do throws(DataChannelError) {
                try endpoint.send(text: request, on: l.channel)
                sent += 1
            } catch .sendBufferFull {
                break
            } catch {
                close(&l)
                return
            }
        }
        l.statistics.requestsSent += sent
        l.pending.removeFirst(sent)
    }

    private func close(_ l: inout ChatLink) {
        guard !l.closed else { return }
        l.closed = true
        l.pending = []
        if l.joinOutcome == nil { l.joinOutcome = .failure(.channelClosed) }
        sink.yield(.closed)
    }

    /// The bytes `text` takes as a JSON string's contents.
    static func jsonSize(_ text: String) -> Int {
        var size = 0
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x0A, 0x0D, 0x09: size += 2
            case 0..<0x20: size += 6
            default: size += 1
            }
        }
        return size
    }
}
