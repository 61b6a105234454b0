// A direct call's chat: text messages over a data channel of the call's own WebRTC transport
// (RFC 8831), no server in between. The peer (a browser) usually opens the channel; Parley
// accepts it, whatever its label, and opens one of its own only when the peer opened none.

import Foundation
import ParleyCore
import ParleySCTP

/// What a direct call's chat reports (``WebRTCChat/onEvent``), in order, on the owner's thread.
public enum WebRTCChatEvent: Sendable, Hashable {
    /// The chat's data channel opened: its label, and whether the peer opened it. Messages
    /// sent before go now, in order.
    case opened(label: String, byPeer: Bool)
    /// A message: the peer's as it arrived, or this side's own as it left
    /// (``ChatMessage/isOwn``).
    case message(ChatMessage)
    /// The chat ended: its channel closed (by either side), the association went down, or the
    /// transport ended. Messages still waiting to leave were dropped (counted).
    case closed
}

/// Counters of a direct call's chat.
public struct WebRTCChatStatistics: Sendable, Hashable {
    /// Messages handed to the data channel.
    public var messagesSent = 0
    /// Text messages received.
    public var messagesReceived = 0
    /// Binary messages received (a chat is text): dropped.
    public var binaryDropped = 0
    /// Messages that were still waiting to leave when the chat closed: dropped.
    public var unsentDropped = 0
    /// From the DTLS handshake's end to the SCTP association's being up, when this side may
    /// open a channel and send (where a browser fires `open` on a channel it opened), seconds;
    /// nil until then.
    public var associationUpAfterDTLS: Double?
    /// From the DTLS handshake's end to the chat's channel opening here (the peer's
    /// DATA_CHANNEL_OPEN accepted, or this side's acknowledged), seconds; nil until then.
    public var channelOpenAfterDTLS: Double?

    /// All counters at zero.
    public init() {}
}

/// The chat of a direct call over WebRTC: the peer's text messages on the transport's data
/// channels become ``WebRTCChatEvent/message(_:)`` events, and ``send(_:)`` sends this side's.
///
/// The call's descriptions must agree on data channels: the peer's offer has an
/// `m=application ... UDP/DTLS/SCTP webrtc-datachannel` section and the answer accepts it
/// (`JSEPDescription.answer(to:local:dataChannel:wants:)` with `dataChannel: true`, and
/// ``WebRTCTransport/setRemote(_:dataChannel:)`` told so), which makes
/// ``WebRTCTransport/dataChannels``.
///
/// The channel: the first one that opens is the chat's, whoever opened it and whatever its
/// label. A browser opens its own (`createDataChannel("chat")` before its offer); Parley
/// accepts it. When the peer has opened none ``peerChannelWait`` seconds after the association
/// came up, this side opens one labelled ``label`` (a peer that waits for
/// `ondatachannel` gets it). Text messages on any channel of the call are the peer's chat
/// messages; binary ones are dropped (counted). This side's messages go on the chat's channel,
/// in the order sent: those sent before it opens, or while the association's send buffer is
/// full, wait and leave as soon as they can. Each gives an own ``WebRTCChatEvent/message(_:)``
/// as it leaves.
///
/// The chat ends when its channel closes, the association goes down or the transport ends;
/// sending then throws ``ChatError/channelClosed``.
///
/// Threading: no thread of its own. The owner of the transport (the call's thread) calls
/// everything: the transport's `receive(until:_:)` reports the channels' events to the chat,
/// and ``advance(to:)``, called after it, sends what waits and opens this side's channel when
/// due. ``onEvent`` runs inside those calls and inside ``send(_:)``. Nothing is allocated per
/// message beyond the message's text (and the queue's growth while messages wait).
public final class WebRTCChat {
    /// The label of the channel this side opens when the peer opens none.
    public static let defaultLabel = "chat"
    /// The longest message this side sends, UTF-8 bytes, whatever the peer takes: what
    /// Parley's own `a=max-message-size` says.
    public static let maximumTextSize = DataChannelEndpoint.maxMessageSize

    /// This side's id in its own messages.
    public let localID: String
    /// This side's display name.
    public let localName: String
    /// The peer's id in its messages.
    public let peerID: String
    /// The peer's display name.
    public let peerName: String
    /// The label of the channel this side opens when the peer opens none.
    public let label: String
    /// Seconds after the association came up that this side waits for the peer's channel
    /// before it opens its own.
    public let peerChannelWait: Double
    /// Receives the events, on the owner's thread.
    public var onEvent: ((WebRTCChatEvent) -> Void)?
    /// Whether the chat's channel is open.
    public var isOpen: Bool { channel != nil && !isClosed }
    /// Whether the chat has ended.
    public private(set) var isClosed = false
    /// The longest message, UTF-8 bytes: the peer's `a=max-message-size` (65536 when its
    /// description gives none), at most ``maximumTextSize``.
    public var textLimit: Int { min(endpoint.remoteMaxMessageSize, WebRTCChat.maximumTextSize) }
    /// The messages waiting to leave.
    public var waiting: Int { pending.count - pendingHead }

    private let transport: WebRTCTransport
    private let endpoint: DataChannelEndpoint
    private let clock: any MediaClock
    private var counters = WebRTCChatStatistics()
    private var channel: UInt16?
    private var openedOwn = false
    private var associationUp: MonotonicTime?
    private var channelOpened: MonotonicTime?
    /// The messages to send; those before `pendingHead` have left.
    private var pending: [String] = []
    private var pendingHead = 0
    private var flushing = false

    /// The chat of `transport`, whose descriptions agreed on data channels (after its
    /// ``WebRTCTransport/setRemote(_:dataChannel:)``); it takes the data channels' events
    /// (`DataChannelEndpoint.onEvent` is the chat's from here).
    /// - Parameters:
    ///   - transport: the call's transport.
    ///   - clock: the transport's clock (the times of the opening).
    ///   - local: this side's id and display name in its own messages.
    ///   - peer: the peer's id and display name in its messages.
    ///   - label: the label of the channel this side opens when the peer opens none.
    ///   - peerChannelWait: seconds to wait for the peer's channel after the association came
    ///     up before opening this side's (at least 0).
    /// - Throws: ``ChatError/notEnabled`` when the transport has no data channels.
    public init(transport: WebRTCTransport, clock: any MediaClock, local: (id: String, name: String),
                peer: (id: String, name: String), label: String = WebRTCChat.defaultLabel,
                peerChannelWait: Double = 1) throws(ChatError) {
        guard let endpoint = transport.dataChannels else { throw .notEnabled }
        self.transport = transport
        self.endpoint = endpoint
        self.clock = clock
        localID = local.id
        localName = local.name
        peerID = peer.id
        peerName = peer.name
        self.label = label
        self.peerChannelWait = peerChannelWait.isFinite ? max(0, peerChannelWait) : 0
        endpoint.onEvent = { [weak self] event in self?.take(event) }
        // Channels that opened before (the transport driven without the chat).
        if endpoint.isReady { associationUp = clock.now() }
        if let open = endpoint.channels.first(where: { $0.state == .open }) { channel = open.id; channelOpened = clock.now() }
    }

    /// Sends `text` to the peer: now, or once the channel is open and the association's send
    /// buffer has room, in the order sent.
    /// - Throws: ``ChatError/tooLong(size:limit:)`` over ``textLimit`` UTF-8 bytes,
    ///   ``ChatError/channelClosed`` once the chat has ended.
    public func send(_ text: String) throws(ChatError) {
        guard !isClosed else { throw .channelClosed }
        let size = text.utf8.count
        guard size <= textLimit else { throw .tooLong(size: size, limit: textLimit) }
        pending.append(text)
        flush()
    }

    /// Sends UTF-8 bytes as a message, as ``send(_:)``.
    /// - Throws: ``ChatError/invalidUTF8`` when they are not UTF-8, else as ``send(_:)``.
    public func send(utf8 bytes: some Collection<UInt8>) throws(ChatError) {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .invalidUTF8 }
        try send(text)
    }

    /// Opens this side's channel when the peer has opened none ``peerChannelWait`` seconds
    /// after the association came up, and sends what waits. Call it after each of the
    /// transport's `receive(until:_:)`.
    public func advance(to now: MonotonicTime) {
        guard !isClosed else { return }
        if channel == nil, !openedOwn, let up = associationUp, up.advanced(bySeconds: peerChannelWait) <= now {
            openedOwn = true
            do throws(DataChannelError) { _ = try endpoint.open(DataChannelParameters(label: label)) } catch { close() }
        }
        flush()
    }

    /// The counters, with the opening's times.
    public var statistics: WebRTCChatStatistics {
        var s = counters
        if let dtls = transport.connectedAt {
            s.associationUpAfterDTLS = associationUp.map { Double(dtls.nanoseconds(to: $0)) / 1e9 }
            s.channelOpenAfterDTLS = channelOpened.map { Double(dtls.nanoseconds(to: $0)) / 1e9 }
        }
        return s
    }

    // MARK: Steps

    private func take(_ event: DataChannelEvent) {
        guard !isClosed else { return }
        switch event {
        case .ready:
            associationUp = clock.now()
        case .opened(let c):
            guard channel == nil else { return }
            channel = c.id
            channelOpened = clock.now()
            onEvent?(.opened(label: c.parameters.label, byPeer: !c.openedLocally))
            flush()
        case .message(_, .text(let text)):
            counters.messagesReceived += 1
            onEvent?(.message(ChatMessage(senderID: peerID, displayName: peerName, text: text, time: Date(), serverTime: "",
                                          isOwn: false)))
        case .message(_, .binary):
            counters.binaryDropped += 1
        case .closed(let id):
            if id == channel { close() }
        case .down:
            close()
        }
    }

    /// Sends what waits, in order, while the channel is open and the send buffer takes it.
    private func flush() {
        guard let channel, !isClosed, !flushing else { return }
        flushing = true
        defer { flushing = false }
        while pendingHead < pending.count {
            let text = pending[pendingHead]
            do throws(DataChannelError) {
                try endpoint.send(text: text, on: channel)
            } catch .sendBufferFull {
                break
            } catch {
                close()
                return
            }
            pendingHead += 1
            counters.messagesSent += 1
            onEvent?(.message(ChatMessage(senderID: localID, displayName: localName, text: text, time: Date(), serverTime: "",
                                          isOwn: true)))
            if isClosed { return }
        }
        if pendingHead == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingHead = 0
        }
    }

    private func close() {
        guard !isClosed else { return }
        isClosed = true
        counters.unsentDropped += pending.count - pendingHead
        pending = []
        pendingHead = 0
        onEvent?(.closed)
    }
}
