// A VideoRoom's plain-RTP side: remote publishers fed by RTP, RTP forwarders out of the room,
// and the events a participant joined to the room receives about its publishers.

/// A publisher of a VideoRoom room as Janus announces it (in `joined` and `publishers` events).
public struct VideoRoomPublisher: Sendable, Equatable {
    /// One of its streams.
    public struct Stream: Sendable, Equatable {
        /// `"audio"`, `"video"` or `"data"`.
        public var type: String
        /// The stream's index in the publisher's media (`mindex`) and its `mid`.
        public var mindex: Int
        public var mid: String
        /// Codec name (`"opus"`, `"vp8"`, ...), for audio and video.
        public var codec: String?
        /// The publisher's free text about the stream (Parley writes its picture size here:
        /// ``VideoRoomPublisher/Stream/pictureSize``).
        public var description: String?
        /// Whether the stream is disabled (not sent, or its codec not allowed in the room).
        public var disabled: Bool

        public init(type: String, mindex: Int, mid: String, codec: String? = nil, description: String? = nil,
                    disabled: Bool = false) {
            self.type = type; self.mindex = mindex; self.mid = mid; self.codec = codec
            self.description = description; self.disabled = disabled
        }

        /// The picture size and rate a video stream's description gives, when it has the form
        /// Parley writes: `WIDTHxHEIGHT@FPS` (for example `320x240@30`).
        public var pictureSize: (width: Int, height: Int, framesPerSecond: Int)? {
            guard let text = description else { return nil }
            let parts = text.split(separator: "@")
            guard parts.count == 2, let fps = Int(parts[1]), fps > 0 else { return nil }
            let size = parts[0].split(separator: "x")
            guard size.count == 2, let w = Int(size[0]), let h = Int(size[1]), w > 0, h > 0, w <= 8192, h <= 8192 else {
                return nil
            }
            return (w, h, fps)
        }
    }

    /// The publisher's id in the room.
    public var id: UInt64
    /// Its display name.
    public var display: String?
    public var streams: [Stream]

    public init(id: UInt64, display: String?, streams: [Stream]) {
        self.id = id; self.display = display; self.streams = streams
    }

    init?(_ json: JSONValue) {
        guard let id = json["id"]?.intValue else { return nil }
        self.id = UInt64(bitPattern: id)
        display = json["display"]?.stringValue
        streams = (json["streams"]?.arrayValue ?? []).compactMap { s in
            guard let type = s["type"]?.stringValue, let mindex = s["mindex"]?.intValue else { return nil }
            return Stream(type: type, mindex: Int(mindex), mid: s["mid"]?.stringValue ?? String(mindex),
                          codec: s["codec"]?.stringValue, description: s["description"]?.stringValue,
                          disabled: s["disabled"]?.boolValue ?? false)
        }
    }
}

/// What a participant joined to a VideoRoom room hears from the plugin.
public enum VideoRoomEvent: JanusPluginEvent, Equatable {
    /// This handle joined: its id, and the publishers already in the room.
    case joined(id: UInt64, publishers: [VideoRoomPublisher])
    /// New or changed publishers.
    case publishers([VideoRoomPublisher])
    /// A publisher stopped publishing.
    case unpublished(UInt64)
    /// A participant left the room.
    case leaving(UInt64)
    /// Janus's audio-level decision about a publisher (rooms with `audiolevel_event`).
    case talking(UInt64, Bool)
    /// The room was destroyed.
    case destroyed
    /// An error answering an asynchronous request (``VideoRoomHandle/ErrorCode``: a wrong pin,
    /// no such room).
    case error(code: Int, text: String)
    /// Anything else the plugin said.
    case other(JSONValue)

    /// The plugin's error code and text, when the event is an ``error(code:text:)``.
    public var failure: (code: Int, text: String)? {
        if case .error(let code, let text) = self { (code, text) } else { nil }
    }

    /// The event in a VideoRoom plugin event's data that holds no error.
    public static func event(_ data: JSONValue) -> VideoRoomEvent {
        switch data["videoroom"]?.stringValue {
        case "joined":
            return .joined(id: UInt64(bitPattern: data["id"]?.intValue ?? 0),
                           publishers: (data["publishers"]?.arrayValue ?? []).compactMap(VideoRoomPublisher.init))
        case "talking", "stopped-talking":
            return .talking(UInt64(bitPattern: data["id"]?.intValue ?? 0), data["videoroom"]?.stringValue == "talking")
        case "destroyed":
            return .destroyed
        case "event":
            if let list = data["publishers"]?.arrayValue {
                return .publishers(list.compactMap(VideoRoomPublisher.init))
            } else if let id = data["unpublished"]?.intValue {
                return .unpublished(UInt64(bitPattern: id))
            } else if let id = data["leaving"]?.intValue {
                return .leaving(UInt64(bitPattern: id))
            } else {
                return .other(data)
            }
        default:
            return .other(data)
        }
    }
}

/// A remote publisher Janus created: where to send its RTP.
public struct RemotePublisherEndpoint: Sendable, Equatable {
    /// Its participant id in the room.
    public var id: UInt64
    /// Janus's address for it, when Janus bound a specific interface (else the server's host).
    public var host: String?
    /// The UDP port its RTP goes to, and the port whose first datagram tells Janus where to
    /// send RTCP feedback (PLIs) back.
    public var port: UInt16
    public var rtcpPort: UInt16
}

/// One RTP forwarder Janus set up for a publisher's stream.
public struct RTPForwarder: Sendable, Equatable {
    /// Its id (for ``VideoRoomHandle/stopRTPForward(room:publisher:streamID:)``).
    public var streamID: UInt64
    /// The forwarded stream's `mid` and type.
    public var mid: String?
    public var type: String?
    /// Where it sends, with which SSRC.
    public var host: String?
    public var port: UInt16
    public var ssrc: UInt32?
}

/// How a forwarder should protect what it sends (SRTP, RFC 3711).
public struct RTPForwardSRTP: Sendable {
    /// The authentication tag length: 80 (AES_CM_128_HMAC_SHA1_80) or 32.
    public var suite: Int
    /// The master key and salt, base64 (30 bytes for AES-128): a secret.
    public var crypto: String

    public init(suite: Int = 80, crypto: String) {
        self.suite = suite
        self.crypto = crypto
    }
}

extension VideoRoomHandle {
    /// A stream a remote publisher sends (`add_remote_publisher`). Janus numbers them in order
    /// (mindex 0, 1, ...) and takes each one's RTP by SSRC: ``remotePublisherSSRC(mindex:)``.
    public struct RemoteStream: Sendable {
        /// `"audio"` or `"video"`.
        public var type: String
        /// `"opus"`, `"vp8"`, ...
        public var codec: String
        public var description: String?
        /// The RFC 6464 audio-level extension's id in the stream's packets (audio).
        public var audioLevelExtensionID: Int?
        /// Whether the Opus stream carries in-band FEC.
        public var fec: Bool

        public init(type: String, codec: String, description: String? = nil, audioLevelExtensionID: Int? = nil,
                    fec: Bool = false) {
            self.type = type; self.codec = codec; self.description = description
            self.audioLevelExtensionID = audioLevelExtensionID; self.fec = fec
        }
    }

    /// The SSRC Janus expects of a remote publisher's stream number `mindex` (1000 + 10 x mindex).
    public static func remotePublisherSSRC(mindex: Int) -> UInt32 { UInt32(1000 + 10 * mindex) }

    /// Creates a publisher fed by plain RTP (`add_remote_publisher`): other participants see it
    /// like any publisher.
    /// - Returns: its id and the ports its RTP goes to.
    /// - Throws: ``JanusError/plugin(code:text:)`` (``ErrorCode/noSuchRoom``, ``ErrorCode/idExists``, ...).
    public func addRemotePublisher(room: UInt64, display: String, streams: [RemoteStream],
                                   iface: String? = nil) async throws -> RemotePublisherEndpoint {
        var body: [String: JSONValue] = [
            "request": "add_remote_publisher", "room": .int(Int64(bitPattern: room)), "display": .string(display),
            "streams": .array(streams.enumerated().map { index, s in
                var o: [String: JSONValue] = ["type": .string(s.type), "codec": .string(s.codec),
                                              "mindex": .int(Int64(index)), "mid": .string(String(index))]
                if let d = s.description { o["description"] = .string(d) }
                if let id = s.audioLevelExtensionID { o["audiolevel_ext_id"] = .int(Int64(id)) }
                if s.fec { o["fec"] = true }
                return .object(o)
            }),
        ]
        if let iface { body["iface"] = .string(iface) }
        let data = try await request.send(.object(body), expecting: "success")
        guard let id = data["id"]?.intValue, let port = data["port"]?.intValue, let rtcp = data["rtcp_port"]?.intValue,
              let p = UInt16(exactly: port), let r = UInt16(exactly: rtcp) else {
            throw JanusError.malformedReply("add_remote_publisher: no id or ports")
        }
        return RemotePublisherEndpoint(id: UInt64(bitPattern: id), host: data["ip"]?.stringValue, port: p, rtcpPort: r)
    }

    /// Removes a remote publisher (`remove_remote_publisher`); its forwarders go with it.
    public func removeRemotePublisher(room: UInt64, id: UInt64) async throws {
        _ = try await request.send(["request": "remove_remote_publisher", "room": .int(Int64(bitPattern: room)),
                                    "id": .int(Int64(bitPattern: id))], expecting: "success")
    }

    /// Asks Janus to forward streams of publisher `publisher` as RTP (SRTP with `srtp`) to
    /// `host`: one forwarder per `(mid, port, ssrc)`; a `mid` the publisher does not have is
    /// skipped by Janus (not an error).
    /// - Returns: the forwarders created.
    public func rtpForward(room: UInt64, publisher: UInt64, host: String,
                           streams: [(mid: String, port: UInt16, ssrc: UInt32)],
                           srtp: RTPForwardSRTP? = nil) async throws -> [RTPForwarder] {
        var body: [String: JSONValue] = [
            "request": "rtp_forward", "room": .int(Int64(bitPattern: room)), "publisher_id": .int(Int64(bitPattern: publisher)),
            "host": .string(host), "host_family": "ipv4",
            "streams": .array(streams.map { s in
                .object(["mid": .string(s.mid), "port": .int(Int64(s.port)), "ssrc": .int(Int64(s.ssrc))])
            }),
        ]
        if let srtp {
            body["srtp_suite"] = .int(Int64(srtp.suite))
            body["srtp_crypto"] = .string(srtp.crypto)
        }
        let data = try await request.send(.object(body), expecting: "rtp_forward")
        return Self.forwarders(data["forwarders"])
    }

    /// The room's RTP forwarders by publisher id (`listforwarders`).
    public func listForwarders(room: UInt64) async throws -> [UInt64: [RTPForwarder]] {
        let data = try await request.send(["request": "listforwarders", "room": .int(Int64(bitPattern: room))],
                                          expecting: "forwarders")
        var result: [UInt64: [RTPForwarder]] = [:]
        for p in data["publishers"]?.arrayValue ?? [] {
            guard let id = p["publisher_id"]?.intValue else { continue }
            result[UInt64(bitPattern: id)] = Self.forwarders(p["forwarders"])
        }
        return result
    }

    static func forwarders(_ list: JSONValue?) -> [RTPForwarder] {
        (list?.arrayValue ?? []).compactMap { f in
            guard let id = f["stream_id"]?.intValue, let port = f["port"]?.intValue, let p = UInt16(exactly: port) else { return nil }
            return RTPForwarder(streamID: UInt64(bitPattern: id), mid: f["mid"]?.stringValue, type: f["type"]?.stringValue,
                                host: f["host"]?.stringValue, port: p,
                                ssrc: f["ssrc"]?.intValue.flatMap { UInt32(exactly: $0) })
        }
    }

    /// Stops one forwarder (`stop_rtp_forward`).
    public func stopRTPForward(room: UInt64, publisher: UInt64, streamID: UInt64) async throws {
        _ = try await request.send(["request": "stop_rtp_forward", "room": .int(Int64(bitPattern: room)),
                                    "publisher_id": .int(Int64(bitPattern: publisher)),
                                    "stream_id": .int(Int64(bitPattern: streamID))], expecting: "stop_rtp_forward")
    }

    /// Joins room `room` as a participant that publishes nothing itself (`join`, `ptype`
    /// publisher): it hears of the room's publishers through ``VideoRoomEvent``s on the
    /// session's events. The answer comes as an event: ``VideoRoomEvent/joined(id:publishers:)``,
    /// or ``VideoRoomEvent/error(code:text:)`` (``ErrorCode/unauthorized`` for a wrong pin).
    public func join(room: UInt64, display: String, pin: String? = nil) async throws {
        var body: [String: JSONValue] = ["request": "join", "ptype": "publisher", "room": .int(Int64(bitPattern: room)),
                                         "display": .string(display)]
        if let pin { body["pin"] = .string(pin) }
        _ = try await client.send(message: .object(body), to: id)
    }
}
