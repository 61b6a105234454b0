// An AudioBridge room's plain-RTP participant: joining with an `rtp` object, the room's events,
// mute and unmute.

/// What a participant of an AudioBridge room hears from the plugin.
public enum AudioBridgeEvent: JanusPluginEvent, Equatable {
    /// A participant as the room reports it (as `listparticipants` does).
    public typealias Participant = AudioBridgeHandle.Participant

    /// Where the room takes this participant's RTP (the `rtp` object of the `joined` answer).
    public struct RTPEndpoint: Sendable, Equatable {
        public var host: String
        public var port: UInt16
        public var payloadType: UInt8
    }

    /// This handle joined: its id, the participants already in, and where its RTP goes.
    case joined(id: UInt64, participants: [Participant], rtp: RTPEndpoint?)
    /// Participants joined or changed (their mute state, their display name).
    case participants([Participant])
    /// A participant left.
    case leaving(UInt64)
    /// Janus's audio-level decision about a participant (rooms with `audiolevel_event`).
    case talking(UInt64, Bool)
    /// This handle left the room.
    case left
    /// The room was destroyed.
    case destroyed
    /// An error answering an asynchronous request (``AudioBridgeHandle/ErrorCode``: no such
    /// room, a wrong pin).
    case error(code: Int, text: String)
    /// Anything else the plugin said.
    case other(JSONValue)

    /// The plugin's error code and text, when the event is an ``error(code:text:)``.
    public var failure: (code: Int, text: String)? {
        if case .error(let code, let text) = self { (code, text) } else { nil }
    }

    /// The event in an AudioBridge plugin event's data that holds no error.
    public static func event(_ data: JSONValue) -> AudioBridgeEvent {
        let list = (data["participants"]?.arrayValue ?? []).compactMap(Participant.init)
        switch data["audiobridge"]?.stringValue {
        case "joined":
            if let id = data["id"]?.intValue {
                var rtp: RTPEndpoint?
                if let r = data["rtp"], let host = r["ip"]?.stringValue, let port = r["port"]?.intValue,
                   let p = UInt16(exactly: port), p > 0 {
                    rtp = RTPEndpoint(host: host, port: p, payloadType: UInt8(clamping: r["payload_type"]?.intValue ?? 111))
                }
                return .joined(id: UInt64(bitPattern: id), participants: list, rtp: rtp)
            } else {
                return .participants(list)
            }
        case "talking", "stopped-talking":
            return .talking(UInt64(bitPattern: data["id"]?.intValue ?? 0), data["audiobridge"]?.stringValue == "talking")
        case "left": return .left
        case "destroyed": return .destroyed
        case "event":
            if let id = data["leaving"]?.intValue {
                return .leaving(UInt64(bitPattern: id))
            } else if data["participants"] != nil {
                return .participants(list)
            } else {
                return .other(data)
            }
        default:
            return .other(data)
        }
    }
}

extension AudioBridgeHandle {
    /// Where a plain-RTP participant wants the room's mix sent, and what it sends.
    public struct PlainRTP: Sendable {
        /// The address and port the mix goes to.
        public var host: String
        public var port: UInt16
        /// The Opus payload type. Default 111.
        public var payloadType: UInt8
        /// The RFC 6464 audio-level extension's id in this participant's packets (Janus's
        /// talking events come from it).
        public var audioLevelExtensionID: Int?
        /// Whether this participant's Opus carries in-band FEC.
        public var fec: Bool

        public init(host: String, port: UInt16, payloadType: UInt8 = 111, audioLevelExtensionID: Int? = 1, fec: Bool = true) {
            self.host = host; self.port = port; self.payloadType = payloadType
            self.audioLevelExtensionID = audioLevelExtensionID; self.fec = fec
        }
    }

    /// Joins room `room` as a plain-RTP participant. The answer comes as an event:
    /// ``AudioBridgeEvent/joined(id:participants:rtp:)`` (with where to send the RTP), or
    /// ``AudioBridgeEvent/error(code:text:)``. Janus starts sending the mix once it has this
    /// participant's first packet.
    /// - Parameters:
    ///   - room: the room's number.
    ///   - display: the participant's display name.
    ///   - pin: the room's PIN, if it has one.
    ///   - muted: whether the participant joins muted.
    ///   - rtp: where the room's mix goes and what this participant sends.
    ///   - activePackets: with `levelAverage`, Janus's talking decision for this participant: the
    ///     mean level (in -dBov) of each `activePackets` packets under `levelAverage` means talking
    ///     (room defaults when nil: 100 packets, 25).
    ///   - levelAverage: see `activePackets`.
    public func join(room: UInt64, display: String, pin: String? = nil, muted: Bool = false, rtp: PlainRTP,
                     activePackets: Int? = nil, levelAverage: Int? = nil) async throws {
        var r: [String: JSONValue] = ["ip": .string(rtp.host), "port": .int(Int64(rtp.port)),
                                      "payload_type": .int(Int64(rtp.payloadType)), "fec": .bool(rtp.fec)]
        if let id = rtp.audioLevelExtensionID { r["audiolevel_ext"] = .int(Int64(id)) }
        var body: [String: JSONValue] = ["request": "join", "room": .int(Int64(bitPattern: room)), "display": .string(display),
                                         "muted": .bool(muted), "codec": "opus", "rtp": .object(r)]
        if let pin { body["pin"] = .string(pin) }
        if let activePackets { body["audio_active_packets"] = .int(Int64(activePackets)) }
        if let levelAverage { body["audio_level_average"] = .int(Int64(levelAverage)) }
        _ = try await client.send(message: .object(body), to: id)
    }

    /// Mutes or unmutes this participant in the room's mix (`configure`).
    public func setMuted(_ muted: Bool) async throws {
        _ = try await client.send(message: ["request": "configure", "muted": .bool(muted)], to: id)
    }
}
