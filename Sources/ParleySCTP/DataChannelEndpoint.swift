// WebRTC's data channels (RFC 8831) over one SCTP association: channels opened and accepted by
// DCEP (RFC 8832), messages sent and received by payload protocol, channels closed by resetting
// their streams.

import ParleyCore

/// Where a data channel is.
public enum DataChannelState: Sendable, Hashable {
    /// Opened here: DATA_CHANNEL_OPEN sent (or waiting for the association), no answer yet.
    case connecting
    /// Messages go both ways.
    case open
    /// Closed here: the outgoing stream reset, waiting for the peer's.
    case closing
    /// Closed by either side; its stream id may be used again.
    case closed
}

/// A data channel: its stream id, its parameters and where it is.
public struct DataChannel: Sendable, Hashable {
    /// The SCTP stream id both directions use: even when the DTLS client opened the channel,
    /// odd when the DTLS server did (RFC 8832 section 6).
    public let id: UInt16
    /// Label, protocol, ordering, reliability and priority, as DATA_CHANNEL_OPEN carried them.
    public let parameters: DataChannelParameters
    /// Whether this side opened it (else the peer did and this side accepted it).
    public let openedLocally: Bool
    /// Where it is.
    public internal(set) var state: DataChannelState
}

/// A message on a data channel.
public enum DataChannelMessage: Sendable, Hashable {
    /// A text message (PPID 51, or 56 when empty).
    case text(String)
    /// A binary message (PPID 53, or 57 when empty).
    case binary([UInt8])
}

/// What a ``DataChannelEndpoint`` reports, in order, from inside the calls that drive it.
public enum DataChannelEvent: Sendable, Hashable {
    /// The association to the peer is up: channels opened before it now go out.
    case ready
    /// A channel opened: one of this side's the peer acknowledged, or one the peer opened
    /// (accepted at once).
    case opened(DataChannel)
    /// A whole message arrived on a channel.
    case message(channel: UInt16, DataChannelMessage)
    /// A channel closed (by either side, or with the association).
    case closed(channel: UInt16)
    /// The association ended: every channel is closed.
    case down
}

/// Why a data channel call failed.
public enum DataChannelError: Error, Sendable, Equatable {
    /// The message is longer than the peer takes (its `a=max-message-size`).
    case messageTooLarge(size: Int, limit: Int)
    /// The channel is still opening (no DATA_CHANNEL_ACK yet).
    case channelNotOpen(UInt16)
    /// The channel is closing or closed, or was never opened.
    case channelClosed(UInt16)
    /// A text message that is not UTF-8.
    case invalidUTF8
    /// Every stream id of this side's parity is in use.
    case noStreamAvailable
    /// The parameters do not fit DATA_CHANNEL_OPEN (a label or protocol over 65535 bytes).
    case invalidParameters(DCEPError)
    /// The association's send buffer is full: send again once the peer has acknowledged more.
    case sendBufferFull
    /// The association ended (or could not start).
    case associationDown
    /// usrsctp refused the call, with its errno.
    case sctp(Errno)
}

/// Counters of a ``DataChannelEndpoint``.
public struct DataChannelStatistics: Sendable, Hashable {
    /// Messages sent on channels (DCEP's not counted).
    public var messagesSent = 0
    /// Messages received on channels (DCEP's not counted).
    public var messagesReceived = 0
    /// Messages received for no open channel, of an unknown payload protocol, or DCEP messages
    /// that did not parse: dropped.
    public var messagesDropped = 0
    /// Messages longer than ``DataChannelEndpoint/maxMessageSize``: dropped.
    public var messagesTooLarge = 0
    /// SCTP packets the DTLS layer refused (`send` returned false).
    public var packetsRefused = 0
    /// SCTP packets that found no room between usrsctp and the owner (or were larger than the MTU).
    public var packetsDropped = 0

    /// All counters at zero.
    public init() {}
}

/// The data channels of one WebRTC transport: an SCTP association (usrsctp, over DTLS
/// application data, RFC 8261) and the channels on it.
///
/// The transport that owns it starts it once DTLS is connected (``start(maximumPacket:send:)``), gives
/// it every DTLS record's payload (``receive(packet:)``) and runs its timers
/// (``advance(to:)``); ``onEvent`` then reports the channels opening, their messages and their
/// closing. Channels may be opened before the association is up: their DATA_CHANNEL_OPEN
/// leaves once it is.
///
/// Threading: one owner (the thread that drives the transport) calls everything, and
/// ``onEvent`` runs inside those calls. usrsctp is shared by the process: its timers are run by
/// whichever endpoint advances them, and the packets they write wait in each association's own
/// queue for its owner.
public final class DataChannelEndpoint {
    /// The largest message this side takes, bytes: what its `a=max-message-size` says.
    public static let maxMessageSize = 262_144
    /// The SCTP port when a description gives none (RFC 8841 section 5).
    public static let defaultPort: UInt16 = 5000
    /// The peer's limit when its description gives no `a=max-message-size` (RFC 8841 section 6).
    public static let defaultRemoteMaxMessageSize = 65_536

    /// This side's SCTP port (`a=sctp-port`).
    public let localPort: UInt16
    /// The peer's SCTP port.
    public let remotePort: UInt16
    /// The longest message the peer takes: its `a=max-message-size` (65536 when absent; no limit
    /// when 0, as RFC 8841 section 6 reads).
    public let remoteMaxMessageSize: Int
    /// Whether this side is the DTLS client: its channels take even stream ids, else odd ones.
    public let isDTLSClient: Bool
    /// Receives the events, on the owner's thread, inside the calls that drive the endpoint.
    public var onEvent: ((DataChannelEvent) -> Void)?
    /// Whether the association is up.
    public private(set) var isReady = false
    /// Whether ``start(maximumPacket:send:)`` has started the association (or it has ended).
    public var isStarted: Bool { association != nil || ended }

    private var association: SCTPAssociation?
    private var channelsByID: [UInt16: DataChannel] = [:]
    private var waitingForAssociation: [UInt16] = []
    private var outboundStreams = SCTPAssociation.streams
    private var counters = DataChannelStatistics()
    private var ended = false

    /// An endpoint for a transport whose descriptions agreed on data channels.
    /// - Parameters:
    ///   - localPort: this side's `a=sctp-port`.
    ///   - remotePort: the peer's `a=sctp-port`.
    ///   - remoteMaxMessageSize: the peer's `a=max-message-size`, nil when absent.
    ///   - isDTLSClient: whether this side is the DTLS client.
    public init(localPort: UInt16 = DataChannelEndpoint.defaultPort, remotePort: UInt16 = DataChannelEndpoint.defaultPort,
                remoteMaxMessageSize: Int?, isDTLSClient: Bool) {
        self.localPort = localPort
        self.remotePort = remotePort
        switch remoteMaxMessageSize {
        case nil: self.remoteMaxMessageSize = DataChannelEndpoint.defaultRemoteMaxMessageSize
        case .some(let n) where n <= 0: self.remoteMaxMessageSize = Int.max
        case .some(let n): self.remoteMaxMessageSize = n
        }
        self.isDTLSClient = isDTLSClient
    }

    // MARK: Driving

    /// Starts the association (both sides send an INIT, RFC 8841 section 5): its packets, at
    /// most `maximumPacket` bytes each, leave through `send` (one DTLS record each; false when
    /// refused). Does nothing once started. `send` is also called as the endpoint goes away
    /// (the association's ABORT), so it should capture what it sends through weakly.
    /// - Throws: ``DataChannelError/sctp(_:)`` when usrsctp refuses the socket, or `EINVAL` for
    ///   a `maximumPacket` under 576 bytes.
    public func start(maximumPacket: Int, send: @escaping (UnsafeRawBufferPointer) -> Bool) throws(DataChannelError) {
        guard association == nil, !ended else { return }
        let association: SCTPAssociation
        do throws(Errno) {
            association = try SCTPAssociation(localPort: localPort, remotePort: remotePort, maximumPacket: maximumPacket,
                                              maxMessageSize: DataChannelEndpoint.maxMessageSize, send: send)
        } catch {
            throw .sctp(error)
        }
        association.onEvent = { [unowned self] event in handle(event) }
        self.association = association
        do throws(Errno) { try association.connect() } catch { throw .sctp(error) }
    }

    /// One SCTP packet from the peer: a DTLS application-data record's payload.
    public func receive(packet: UnsafeRawBufferPointer) {
        association?.receive(packet: packet)
    }

    /// Runs SCTP's timers (usrsctp's, shared by the process) up to `now` on the owner's clock,
    /// and sends what they wrote for this association.
    public func advance(to now: MonotonicTime) {
        association?.advance(to: now)
    }

    /// Ends the association (an SCTP ABORT) and closes every channel, reporting each. Idempotent.
    public func shutdown() {
        guard !ended else { return }
        ended = true
        association?.close()
        association = nil
        down()
    }

    // MARK: Channels

    /// Opens a channel: takes the lowest free stream id of this side's parity and sends
    /// DATA_CHANNEL_OPEN (once the association is up). The channel is
    /// ``DataChannelState/connecting`` until the peer's DATA_CHANNEL_ACK
    /// (``DataChannelEvent/opened(_:)``).
    /// - Returns: the channel's stream id.
    /// - Throws: ``DataChannelError/invalidParameters(_:)``,
    ///   ``DataChannelError/noStreamAvailable``, ``DataChannelError/associationDown`` or
    ///   ``DataChannelError/sctp(_:)``.
    public func open(_ parameters: DataChannelParameters) throws(DataChannelError) -> UInt16 {
        guard !ended else { throw .associationDown }
        do throws(DCEPError) { _ = try DCEPMessage.open(parameters).serialized() } catch { throw .invalidParameters(error) }
        var id = isDTLSClient ? 0 : 1
        while id < Int(outboundStreams), let c = channelsByID[UInt16(id)], c.state != .closed { id += 2 }
        guard id < Int(outboundStreams) else { throw .noStreamAvailable }
        let stream = UInt16(id)
        channelsByID[stream] = DataChannel(id: stream, parameters: parameters, openedLocally: true, state: .connecting)
        if isReady {
            try sendOpen(stream)
        } else {
            waitingForAssociation.append(stream)
        }
        return stream
    }

    /// Sends a text message.
    /// - Throws: ``DataChannelError/messageTooLarge(size:limit:)``,
    ///   ``DataChannelError/channelNotOpen(_:)``, ``DataChannelError/channelClosed(_:)``,
    ///   ``DataChannelError/sendBufferFull``, ``DataChannelError/sctp(_:)``.
    public func send(text: String, on channel: UInt16) throws(DataChannelError) {
        var text = text
        let result: Result<Void, DataChannelError> = text.withUTF8 { utf8 in
            do throws(DataChannelError) {
                try send(UnsafeRawBufferPointer(utf8), text: true, on: channel)
                return .success(())
            } catch { return .failure(error) }
        }
        try result.get()
    }

    /// Sends UTF-8 bytes as a text message.
    /// - Throws: ``DataChannelError/invalidUTF8`` when they are not UTF-8, else as
    ///   ``send(text:on:)-(String,_)``.
    public func send(utf8 bytes: UnsafeRawBufferPointer, on channel: UInt16) throws(DataChannelError) {
        guard String(validating: bytes, as: UTF8.self) != nil else { throw .invalidUTF8 }
        try send(bytes, text: true, on: channel)
    }

    /// Sends a binary message.
    /// - Throws: as ``send(text:on:)-(String,_)``.
    public func send(binary bytes: UnsafeRawBufferPointer, on channel: UInt16) throws(DataChannelError) {
        try send(bytes, text: false, on: channel)
    }

    /// Sends the bytes of an array as a binary message.
    /// - Throws: as ``send(text:on:)-(String,_)``.
    public func send(binary bytes: [UInt8], on channel: UInt16) throws(DataChannelError) {
        let result: Result<Void, DataChannelError> = bytes.withUnsafeBytes { raw in
            do throws(DataChannelError) { try send(raw, text: false, on: channel); return .success(()) } catch { return .failure(error) }
        }
        try result.get()
    }

    /// Closes a channel: resets its outgoing stream (RFC 8831 section 6.7); it is
    /// ``DataChannelState/closing`` until the peer resets its own, then
    /// ``DataChannelEvent/closed(channel:)``. Does nothing for a channel closing or closed.
    public func close(_ channel: UInt16) {
        guard var c = channelsByID[channel], c.state == .open || c.state == .connecting else { return }
        if let i = waitingForAssociation.firstIndex(of: channel) {
            waitingForAssociation.remove(at: i)
            finish(channel)
            return
        }
        c.state = .closing
        channelsByID[channel] = c
        do throws(Errno) { try association?.resetOutgoing(stream: channel) } catch { finish(channel) }
    }

    /// The channel with stream id `id`, open or not (a closed one until its id is used again).
    public func channel(_ id: UInt16) -> DataChannel? { channelsByID[id] }

    /// Every channel, by stream id.
    public var channels: [DataChannel] { channelsByID.values.sorted { $0.id < $1.id } }

    /// Counters.
    public var statistics: DataChannelStatistics {
        var s = counters
        s.messagesTooLarge = association?.messagesTooLarge ?? 0
        s.packetsRefused = association?.sendFailures ?? 0
        s.packetsDropped = association?.packetsDropped ?? 0
        return s
    }

    // MARK: Steps

    private func send(_ bytes: UnsafeRawBufferPointer, text: Bool, on channel: UInt16) throws(DataChannelError) {
        guard let c = channelsByID[channel] else { throw .channelClosed(channel) }
        switch c.state {
        case .open: break
        case .connecting: throw .channelNotOpen(channel)
        case .closing, .closed: throw .channelClosed(channel)
        }
        guard bytes.count <= remoteMaxMessageSize else { throw .messageTooLarge(size: bytes.count, limit: remoteMaxMessageSize) }
        guard let association else { throw .associationDown }
        // An empty message is one byte under its own PPID (RFC 8831 section 6.6).
        let empty = bytes.isEmpty
        let ppid = switch (text, empty) {
        case (true, false): DataChannelPPID.string
        case (false, false): DataChannelPPID.binary
        case (true, true): DataChannelPPID.stringEmpty
        case (false, true): DataChannelPPID.binaryEmpty
        }
        var placeholder: UInt8 = 0
        let result: Result<Void, DataChannelError> = withUnsafeBytes(of: &placeholder) { one in
            do throws(Errno) {
                try association.send(stream: channel, ppid: ppid, unordered: !c.parameters.ordered,
                                     reliability: c.parameters.reliability, empty ? one : bytes)
                return .success(())
            } catch {
                return .failure(error == .wouldBlock ? .sendBufferFull : .sctp(error))
            }
        }
        try result.get()
        counters.messagesSent += 1
    }

    /// DATA_CHANNEL_OPEN for a channel of this side's, ordered and reliable as DCEP is sent.
    private func sendOpen(_ stream: UInt16) throws(DataChannelError) {
        guard let c = channelsByID[stream], let association else { return }
        let bytes: [UInt8]
        do throws(DCEPError) { bytes = try DCEPMessage.open(c.parameters).serialized() } catch { throw .invalidParameters(error) }
        try sendDCEP(bytes, on: stream, association)
    }

    private func sendDCEP(_ bytes: [UInt8], on stream: UInt16, _ association: SCTPAssociation) throws(DataChannelError) {
        let result: Result<Void, DataChannelError> = bytes.withUnsafeBytes { raw in
            do throws(Errno) {
                try association.send(stream: stream, ppid: DataChannelPPID.dcep, unordered: false, reliability: .reliable, raw)
                return .success(())
            } catch { return .failure(error == .wouldBlock ? .sendBufferFull : .sctp(error)) }
        }
        try result.get()
    }

    private func handle(_ event: SCTPEvent) {
        switch event {
        case .up(let outbound, _):
            guard !isReady else { return }
            isReady = true
            outboundStreams = outbound
            onEvent?(.ready)
            let waiting = waitingForAssociation
            waitingForAssociation = []
            for stream in waiting {
                if stream >= outbound { finish(stream); continue }
                do throws(DataChannelError) { try sendOpen(stream) } catch { finish(stream) }
            }
        case .message(let stream, let ppid, let bytes):
            received(bytes, stream: stream, ppid: ppid)
        case .streamReset(let stream, let incoming):
            guard incoming, let c = channelsByID[stream] else { return }
            switch c.state {
            case .open, .connecting:
                // The peer closed: close this direction too.
                channelsByID[stream]?.state = .closing
                do throws(Errno) { try association?.resetOutgoing(stream: stream) } catch {}
                finish(stream)
            case .closing:
                finish(stream)
            case .closed:
                break
            }
        case .down:
            down()
        }
    }

    private func received(_ bytes: UnsafeRawBufferPointer, stream: UInt16, ppid: UInt32) {
        switch ppid {
        case DataChannelPPID.dcep:
            let message: DCEPMessage
            do throws(DCEPError) { message = try DCEPMessage(parsing: bytes) } catch { counters.messagesDropped += 1; return }
            switch message {
            case .open(let parameters):
                if let c = channelsByID[stream], c.state != .closed { counters.messagesDropped += 1; return }
                let channel = DataChannel(id: stream, parameters: parameters, openedLocally: false, state: .open)
                channelsByID[stream] = channel
                if let association {
                    do throws(DataChannelError) { try sendDCEP([DCEPMessage.ackType], on: stream, association) } catch {}
                }
                onEvent?(.opened(channel))
            case .ack:
                guard let c = channelsByID[stream], c.state == .connecting else { counters.messagesDropped += 1; return }
                acknowledged(stream)
            }
        case DataChannelPPID.string, DataChannelPPID.stringEmpty, DataChannelPPID.binary, DataChannelPPID.binaryEmpty:
            guard let c = channelsByID[stream], c.state == .open || c.state == .connecting else {
                counters.messagesDropped += 1
                return
            }
            // Data before the ACK acknowledges the channel (RFC 8832 section 6).
            if c.state == .connecting { acknowledged(stream) }
            let message: DataChannelMessage
            switch ppid {
            case DataChannelPPID.string: message = .text(String(decoding: bytes, as: UTF8.self))
            case DataChannelPPID.binary: message = .binary(Array(bytes))
            case DataChannelPPID.stringEmpty: message = .text("")
            default: message = .binary([])
            }
            counters.messagesReceived += 1
            onEvent?(.message(channel: stream, message))
        default:
            counters.messagesDropped += 1
        }
    }

    private func acknowledged(_ stream: UInt16) {
        guard var c = channelsByID[stream] else { return }
        c.state = .open
        channelsByID[stream] = c
        onEvent?(.opened(c))
    }

    private func finish(_ stream: UInt16) {
        channelsByID[stream]?.state = .closed
        onEvent?(.closed(channel: stream))
    }

    private func down() {
        let wasUp = isReady || !channelsByID.isEmpty
        isReady = false
        waitingForAssociation = []
        for c in channels where c.state != .closed { finish(c.id) }
        if wasUp { onEvent?(.down) }
        ended = true
        association?.close()
    }
}
