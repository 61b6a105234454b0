// Janus's WebRTC signalling: the JSEP offers and answers and trickled candidates that travel
// with plugin messages and events, a VideoRoom publisher and multistream subscriber, and an
// AudioBridge participant over WebRTC. The SDP itself is ParleySDP's (`JSEPDescription`); here
// it is text.

/// A session description as it travels with a Janus message or event (`{"type","sdp"}`).
public struct JanusJSEP: Sendable, Hashable {
    /// Which side of the negotiation the description is.
    public enum Kind: String, Sendable, Hashable {
        case offer, answer
    }

    /// An offer or an answer.
    public var type: Kind
    /// The SDP text.
    public var sdp: String

    /// A description of `type` with SDP `sdp`.
    public init(type: Kind, sdp: String) {
        self.type = type
        self.sdp = sdp
    }

    /// Reads the `jsep` member of a Janus event.
    /// - Throws: ``JanusError/malformedReply(_:)`` when it has no `type` of `offer` or `answer`,
    ///   or no `sdp` string.
    public init(_ json: JSONValue) throws(JanusError) {
        guard let name = json["type"]?.stringValue, let type = Kind(rawValue: name) else {
            throw .malformedReply("jsep: no type offer or answer")
        }
        guard let sdp = json["sdp"]?.stringValue else { throw .malformedReply("jsep: no sdp") }
        self.init(type: type, sdp: sdp)
    }

    /// The `jsep` member of a request (``JanusClient/send(message:to:jsep:)``).
    public var json: JSONValue { ["type": .string(type.rawValue), "sdp": .string(sdp)] }
}

/// One trickled ICE candidate (RFC 8838), or the end of them, as Janus's `trickle` request and
/// event carry it.
public enum JanusTrickle: Sendable, Hashable {
    /// A candidate: the attribute `candidate:…` (as ParleyICE's `ICECandidate.attribute`
    /// writes it), and the media section it belongs to (with BUNDLE, any section: the first).
    case candidate(String, sdpMid: String?, sdpMLineIndex: Int?)
    /// All candidates have been sent (`{"completed": true}`).
    case completed

    /// The `candidate` member of a `trickle` request.
    public var json: JSONValue {
        switch self {
        case .completed:
            return ["completed": true]
        case .candidate(let candidate, let mid, let index):
            var o: [String: JSONValue] = ["candidate": .string(candidate)]
            if let mid { o["sdpMid"] = .string(mid) }
            if let index { o["sdpMLineIndex"] = .int(Int64(index)) }
            return .object(o)
        }
    }

    /// Reads the `candidate` member of a trickle (Janus sends its own candidates this way when
    /// its `full_trickle` setting is on); `nil` for anything else.
    public init?(_ json: JSONValue) {
        if json["completed"]?.boolValue == true {
            self = .completed
        } else if let candidate = json["candidate"]?.stringValue {
            self = .candidate(candidate, sdpMid: json["sdpMid"]?.stringValue,
                              sdpMLineIndex: json["sdpMLineIndex"]?.intValue.flatMap { Int(exactly: $0) })
        } else {
            return nil
        }
    }

    /// The candidates of a `trickle` event from Janus (`candidate`, or `candidates` for
    /// several); `nil` for any other event.
    public static func trickles(in event: JanusEvent) -> (sender: UInt64, trickles: [JanusTrickle])? {
        guard case .other("trickle", let message) = event else { return nil }
        let sender = message["sender"]?.intValue.map { UInt64(bitPattern: $0) } ?? 0
        if let one = message["candidate"] { return (sender, JanusTrickle(one).map { [$0] } ?? []) }
        return (sender, (message["candidates"]?.arrayValue ?? []).compactMap(JanusTrickle.init))
    }
}

// MARK: VideoRoom

/// A stream to subscribe to or unsubscribe from: a publisher's stream `mid`, or all its streams
/// when `mid` is nil.
public struct VideoRoomFeedStream: Sendable, Hashable {
    /// The publisher's id in the room.
    public var feed: UInt64
    /// The publisher's `mid` of the stream; nil for all of the publisher's streams.
    public var mid: String?

    /// Publisher `feed`'s stream `mid`, or all its streams.
    public init(feed: UInt64, mid: String? = nil) {
        self.feed = feed
        self.mid = mid
    }

    var json: JSONValue {
        var o: [String: JSONValue] = ["feed": .int(Int64(bitPattern: feed))]
        if let mid { o["mid"] = .string(mid) }
        return .object(o)
    }
}

/// One stream of a subscriber's PeerConnection, as the `streams` of Janus's `attached` and
/// `updated` events list it.
public struct VideoRoomSubscribedStream: Sendable, Hashable {
    /// Its index and `mid` in the subscriber's session description (Janus's offer).
    public var mindex: Int
    public var mid: String
    /// `"audio"`, `"video"` or `"data"`.
    public var type: String
    /// Whether it carries a publisher's stream; false once the publisher left (the section
    /// stays in the description, inactive, until it is reused).
    public var active: Bool
    /// The publisher it relays, that publisher's `mid` for it, and its display name (not for
    /// the data channel, which carries every subscribed publisher's).
    public var feedID: UInt64?
    public var feedMid: String?
    public var feedDisplay: String?
    /// Codec name (`"opus"`, `"vp8"`, ...), for audio and video.
    public var codec: String?

    public init(mindex: Int, mid: String, type: String, active: Bool = true, feedID: UInt64? = nil,
                feedMid: String? = nil, feedDisplay: String? = nil, codec: String? = nil) {
        self.mindex = mindex; self.mid = mid; self.type = type; self.active = active
        self.feedID = feedID; self.feedMid = feedMid; self.feedDisplay = feedDisplay; self.codec = codec
    }

    init?(_ json: JSONValue) {
        guard let type = json["type"]?.stringValue, let mindex = json["mindex"]?.intValue,
              let index = Int(exactly: mindex) else { return nil }
        self.init(mindex: index, mid: json["mid"]?.stringValue ?? String(index), type: type,
                  active: json["active"]?.boolValue ?? true,
                  feedID: json["feed_id"]?.intValue.map { UInt64(bitPattern: $0) },
                  feedMid: json["feed_mid"]?.stringValue, feedDisplay: json["feed_display"]?.stringValue,
                  codec: json["codec"]?.stringValue)
    }
}

/// What a VideoRoom subscriber handle hears from the plugin. Janus's offers (to answer with
/// ``VideoRoomHandle/start(answer:)``) come in the event's `jsep`, beside `attached` and
/// `updated`.
public enum VideoRoomSubscriberEvent: JanusPluginEvent, Hashable {
    /// The subscription was made: the room, and the streams of Janus's offer.
    case attached(room: UInt64, streams: [VideoRoomSubscribedStream])
    /// The subscription changed (streams added or removed, a publisher left): the streams of
    /// Janus's new offer, when it has one.
    case updated(room: UInt64, streams: [VideoRoomSubscribedStream])
    /// Janus took the answer (`start`): media flows once the PeerConnection is up.
    case started
    /// Relaying was paused (`pause`).
    case paused
    /// The subscription ended (`leave`).
    case left
    /// An error answering an asynchronous request (``VideoRoomHandle/ErrorCode``).
    case error(code: Int, text: String)
    /// Anything else the plugin said.
    case other(JSONValue)

    /// The event in a VideoRoom plugin event's data on a subscriber handle that holds no error.
    public static func event(_ data: JSONValue) -> VideoRoomSubscriberEvent {
        let room = UInt64(bitPattern: data["room"]?.intValue ?? 0)
        let streams = (data["streams"]?.arrayValue ?? []).compactMap(VideoRoomSubscribedStream.init)
        switch data["videoroom"]?.stringValue {
        case "attached": return .attached(room: room, streams: streams)
        case "updated": return .updated(room: room, streams: streams)
        case "event" where data["started"]?.stringValue == "ok": return .started
        case "event" where data["paused"]?.stringValue == "ok": return .paused
        case "event" where data["left"]?.stringValue == "ok": return .left
        default: return .other(data)
        }
    }
}

extension VideoRoomHandle {
    /// Publishes this handle's media: `configure` with the WebRTC `offer` (made with the
    /// sections to publish), after ``join(room:display:pin:)``. The answer comes as an event
    /// whose data says `configured` and whose `jsep` holds Janus's answer, or as an error
    /// (``VideoRoomEvent/error(code:text:)``).
    /// - Parameters:
    ///   - offer: Parley's WebRTC offer of what it publishes.
    ///   - display: a new display name, when it changes.
    ///   - bitrate: the most bits per second Janus lets browsers' REMB ask of this publisher.
    ///   - descriptions: a text for streams of the offer, by `mid`, that Janus shows the other
    ///     participants with them (Parley announces its video's `WIDTHxHEIGHT@FPS` this way).
    public func configure(offer: JanusJSEP, display: String? = nil, bitrate: Int? = nil,
                          descriptions: [(mid: String, text: String)] = []) async throws {
        var body: [String: JSONValue] = ["request": "configure"]
        if let display { body["display"] = .string(display) }
        if let bitrate { body["bitrate"] = .int(Int64(bitrate)) }
        if !descriptions.isEmpty {
            body["descriptions"] = .array(descriptions.map { ["mid": .string($0.mid), "description": .string($0.text)] })
        }
        _ = try await client.send(message: .object(body), to: id, jsep: offer.json)
    }

    /// Stops publishing (`unpublish`); the handle stays in the room.
    public func unpublish() async throws {
        _ = try await client.send(message: ["request": "unpublish"], to: id)
    }

    /// Subscribes this handle to `streams` of room `room` in one PeerConnection (`join`, `ptype`
    /// subscriber, multistream). The answer comes as an event:
    /// ``VideoRoomSubscriberEvent/attached(room:streams:)`` with Janus's offer in its `jsep`
    /// (answer it with ``start(answer:)``), or ``VideoRoomSubscriberEvent/error(code:text:)``.
    /// - Parameters:
    ///   - room: the room's id.
    ///   - streams: the publishers' streams to receive (a feed, and one of its mids or all).
    ///   - pin: the room's pin, if it has one.
    ///   - privateID: the `private_id` of this participant's publisher handle, which ties the
    ///     subscription to it (for rooms that require it).
    public func joinAsSubscriber(room: UInt64, streams: [VideoRoomFeedStream], pin: String? = nil,
                                 privateID: UInt64? = nil) async throws {
        var body: [String: JSONValue] = ["request": "join", "ptype": "subscriber", "room": .int(Int64(bitPattern: room)),
                                         "streams": .array(streams.map(\.json))]
        if let pin { body["pin"] = .string(pin) }
        if let privateID { body["private_id"] = .int(Int64(bitPattern: privateID)) }
        _ = try await client.send(message: .object(body), to: id)
    }

    /// Answers Janus's offer to this subscriber handle (`start` with the answer); Janus
    /// confirms with ``VideoRoomSubscriberEvent/started``.
    public func start(answer: JanusJSEP) async throws {
        _ = try await client.send(message: ["request": "start"], to: id, jsep: answer.json)
    }

    /// Adds streams to this subscription (`subscribe`): Janus sends a new offer with
    /// ``VideoRoomSubscriberEvent/updated(room:streams:)``, to answer with ``start(answer:)``.
    public func subscribe(_ streams: [VideoRoomFeedStream]) async throws {
        _ = try await client.send(message: ["request": "subscribe", "streams": .array(streams.map(\.json))], to: id)
    }

    /// Removes streams from this subscription (`unsubscribe`): a new offer comes as with
    /// ``subscribe(_:)``.
    public func unsubscribe(_ streams: [VideoRoomFeedStream]) async throws {
        _ = try await client.send(message: ["request": "unsubscribe", "streams": .array(streams.map(\.json))], to: id)
    }

    /// Adds and removes streams in one renegotiation (`update`).
    public func update(subscribe: [VideoRoomFeedStream], unsubscribe: [VideoRoomFeedStream]) async throws {
        var body: [String: JSONValue] = ["request": "update"]
        if !subscribe.isEmpty { body["subscribe"] = .array(subscribe.map(\.json)) }
        if !unsubscribe.isEmpty { body["unsubscribe"] = .array(unsubscribe.map(\.json)) }
        _ = try await client.send(message: .object(body), to: id)
    }
}

// MARK: AudioBridge

extension AudioBridgeHandle {
    /// Joins room `room` as a WebRTC participant (no `rtp` object): the answer comes as an
    /// event, ``AudioBridgeEvent/joined(id:participants:rtp:)`` or
    /// ``AudioBridgeEvent/error(code:text:)``; then ``configure(offer:muted:)`` sets up the
    /// PeerConnection.
    public func join(room: UInt64, display: String, pin: String? = nil, muted: Bool = false) async throws {
        var body: [String: JSONValue] = ["request": "join", "room": .int(Int64(bitPattern: room)), "display": .string(display),
                                         "muted": .bool(muted)]
        if let pin { body["pin"] = .string(pin) }
        _ = try await client.send(message: .object(body), to: id)
    }

    /// Sends the WebRTC `offer` of this participant (`configure` with it; one audio section):
    /// Janus's answer comes in the `jsep` of the event that confirms it (`"result": "ok"`).
    public func configure(offer: JanusJSEP, muted: Bool? = nil) async throws {
        var body: [String: JSONValue] = ["request": "configure"]
        if let muted { body["muted"] = .bool(muted) }
        _ = try await client.send(message: .object(body), to: id, jsep: offer.json)
    }
}
