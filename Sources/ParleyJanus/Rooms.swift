/// A handle attached to one of Janus's room plugins (AudioBridge, VideoRoom): what both kinds
/// of handle do alike.
public protocol JanusRoomHandle: Sendable {
    /// The plugin's package name (``JanusClient/audioBridgePlugin``, ``JanusClient/videoRoomPlugin``).
    static var plugin: String { get }
    /// The key that names the kind of the plugin's answers (`"audiobridge"`, `"videoroom"`).
    static var answerKey: String { get }
    /// The client and id of the handle.
    var attachment: JanusAttachment { get }
    /// The handle `attachment`, already attached to this plugin.
    init(_ attachment: JanusAttachment)
}

/// A handle attached to a plugin in a Janus session: the client it belongs to and its id.
public struct JanusAttachment: Sendable {
    /// The client the handle belongs to.
    public let client: JanusClient
    /// The handle id.
    public let id: UInt64

    /// The handle `id` of `client`'s session.
    public init(client: JanusClient, id: UInt64) {
        self.client = client
        self.id = id
    }
}

extension JanusRoomHandle {
    /// The client the handle belongs to.
    public var client: JanusClient { attachment.client }
    /// The handle id.
    public var id: UInt64 { attachment.id }

    /// Attaches a new handle to the plugin in `client`'s session.
    public static func attach(_ client: JanusClient) async throws -> Self {
        Self(JanusAttachment(client: client, id: try await client.attach(plugin: plugin)))
    }

    /// Whether room `room` exists.
    public func exists(room id: UInt64) async throws -> Bool {
        try await request.exists(id)
    }

    /// Leaves the room this handle joined.
    public func leave() async throws {
        _ = try await client.send(message: ["request": "leave"], to: id)
    }

    /// The plugin's synchronous room requests through this handle.
    var request: JanusRoomRequest { JanusRoomRequest(client: client, handle: id, pluginKey: Self.answerKey) }
}

/// A handle attached to the AudioBridge plugin, with typed room requests.
public struct AudioBridgeHandle: JanusRoomHandle {
    /// ``JanusClient/audioBridgePlugin``.
    public static let plugin = JanusClient.audioBridgePlugin
    /// The plugin's answers are named by `"audiobridge"`.
    public static let answerKey = "audiobridge"
    /// The client and id of the handle.
    public let attachment: JanusAttachment

    /// The handle `attachment`, already attached to this plugin.
    public init(_ attachment: JanusAttachment) { self.attachment = attachment }

    /// The AudioBridge plugin's error codes (`error_code` in its answers and events).
    public enum ErrorCode {
        /// The room does not exist.
        public static let noSuchRoom = 485
        /// A wrong or missing pin (or secret).
        public static let unauthorized = 489
        /// The id asked for is in use.
        public static let idExists = 490
    }

    /// How to create an AudioBridge room.
    public struct RoomOptions: Sendable {
        /// The room id; `nil` lets Janus choose one.
        public var room: UInt64?
        public var description: String?
        /// The secret needed to edit or destroy the room.
        public var secret: String?
        /// The mixer's sampling rate in Hz (8000, 16000, 24000 or 48000).
        public var samplingRate: Int?
        /// Whether participants may join with plain RTP (no WebRTC).
        public var allowRTPParticipants: Bool
        /// Whether Janus sends `talking`/`stopped-talking` events from the audio levels.
        public var audioLevelEvent: Bool
        /// Janus's talking decision: the mean RFC 6464 level (in -dBov) of each `activePackets`
        /// packets under `levelAverage` means talking (Janus's defaults when nil: 100 packets,
        /// 2 s; 25).
        public var activePackets: Int?
        public var levelAverage: Int?
        /// The pin a participant needs to join.
        public var pin: String?

        public init(room: UInt64? = nil, description: String? = nil, secret: String? = nil, samplingRate: Int? = nil,
                    allowRTPParticipants: Bool = true, audioLevelEvent: Bool = true, activePackets: Int? = nil,
                    levelAverage: Int? = nil, pin: String? = nil) {
            self.activePackets = activePackets
            self.levelAverage = levelAverage
            self.pin = pin
            self.room = room
            self.description = description
            self.secret = secret
            self.samplingRate = samplingRate
            self.allowRTPParticipants = allowRTPParticipants
            self.audioLevelEvent = audioLevelEvent
        }
    }

    /// A participant as `listparticipants` reports it.
    public struct Participant: Sendable, Equatable {
        public var id: UInt64
        public var display: String?
        /// Whether the participant's media is set up.
        public var setup: Bool
        public var muted: Bool
        /// Present when the room sends audio-level events.
        public var talking: Bool?

        init?(_ json: JSONValue) {
            guard let id = json["id"]?.intValue else { return nil }
            self.id = UInt64(bitPattern: id)
            display = json["display"]?.stringValue
            setup = json["setup"]?.boolValue ?? false
            muted = json["muted"]?.boolValue ?? false
            talking = json["talking"]?.boolValue
        }
    }

    /// Creates a room (not permanent: it lives as long as the Janus process).
    /// - Returns: the room id.
    @discardableResult
    public func createRoom(_ options: RoomOptions = RoomOptions()) async throws -> UInt64 {
        var body: [String: JSONValue] = [
            "allow_rtp_participants": .bool(options.allowRTPParticipants),
            "audiolevel_event": .bool(options.audioLevelEvent),
        ]
        if let rate = options.samplingRate { body["sampling_rate"] = .int(Int64(rate)) }
        if let n = options.activePackets { body["audio_active_packets"] = .int(Int64(n)) }
        if let level = options.levelAverage { body["audio_level_average"] = .int(Int64(level)) }
        if let pin = options.pin { body["pin"] = .string(pin) }
        return try await request.create(body, room: options.room, description: options.description, secret: options.secret)
    }

    /// The participants in room `room`.
    public func listParticipants(room: UInt64) async throws -> [Participant] {
        try await request.participants(room).compactMap { Participant($0.entry) }
    }

    /// Destroys room `room`; `secret` is the one it was created with, if any.
    public func destroyRoom(_ room: UInt64, secret: String? = nil) async throws {
        var body: [String: JSONValue] = ["request": "destroy", "room": .int(Int64(bitPattern: room))]
        if let secret { body["secret"] = .string(secret) }
        _ = try await request.send(.object(body), expecting: "destroyed")
    }
}

/// A handle attached to the VideoRoom plugin, with typed room requests.
public struct VideoRoomHandle: JanusRoomHandle {
    /// ``JanusClient/videoRoomPlugin``.
    public static let plugin = JanusClient.videoRoomPlugin
    /// The plugin's answers are named by `"videoroom"`.
    public static let answerKey = "videoroom"
    /// The client and id of the handle.
    public let attachment: JanusAttachment

    /// The handle `attachment`, already attached to this plugin.
    public init(_ attachment: JanusAttachment) { self.attachment = attachment }

    /// The VideoRoom plugin's error codes (`error_code` in its answers and events).
    public enum ErrorCode {
        /// The room does not exist.
        public static let noSuchRoom = 426
        /// A wrong or missing pin (or secret).
        public static let unauthorized = 433
        /// The id asked for is in use.
        public static let idExists = 436
        /// A subscription names a publisher that is not in the room, or whose PeerConnection is
        /// not up yet.
        public static let noSuchFeed = 428
    }

    /// How to create a VideoRoom room.
    public struct RoomOptions: Sendable {
        /// The room id; `nil` lets Janus choose one.
        public var room: UInt64?
        public var description: String?
        /// The secret needed to edit or destroy the room.
        public var secret: String?
        /// The most publishers at once.
        public var publishers: Int?
        /// Whether Janus sends `talking`/`stopped-talking` events from the audio levels.
        public var audioLevelEvent: Bool
        /// Packets Janus averages the RFC 6464 level over before deciding talking (Janus's
        /// default: 100, 2 s of 20-ms packets).
        public var activePackets: Int?
        /// The average level (dBov, 0 loudest to 127) under which a publisher counts as
        /// talking (Janus's default: 25).
        public var levelAverage: Int?
        /// The pin a participant needs to join.
        public var pin: String?

        public init(room: UInt64? = nil, description: String? = nil, secret: String? = nil, publishers: Int? = nil,
                    audioLevelEvent: Bool = true, activePackets: Int? = nil, levelAverage: Int? = nil, pin: String? = nil) {
            self.room = room
            self.description = description
            self.secret = secret
            self.publishers = publishers
            self.audioLevelEvent = audioLevelEvent
            self.activePackets = activePackets
            self.levelAverage = levelAverage
            self.pin = pin
        }
    }

    /// A participant as `listparticipants` reports it.
    public struct Participant: Sendable, Equatable {
        public var id: UInt64
        public var display: String?
        /// Whether the participant is publishing media.
        public var publisher: Bool
        /// Present when the room sends audio-level events and the participant publishes.
        public var talking: Bool?
    }

    /// Creates a room (not permanent: it lives as long as the Janus process).
    /// - Returns: the room id.
    @discardableResult
    public func createRoom(_ options: RoomOptions = RoomOptions()) async throws -> UInt64 {
        var body: [String: JSONValue] = ["audiolevel_event": .bool(options.audioLevelEvent)]
        if let publishers = options.publishers { body["publishers"] = .int(Int64(publishers)) }
        if let n = options.activePackets { body["audio_active_packets"] = .int(Int64(n)) }
        if let level = options.levelAverage { body["audio_level_average"] = .int(Int64(level)) }
        if let pin = options.pin { body["pin"] = .string(pin) }
        return try await request.create(body, room: options.room, description: options.description, secret: options.secret)
    }

    /// The participants in room `room`.
    public func listParticipants(room: UInt64) async throws -> [Participant] {
        try await request.participants(room).map { id, entry in
            Participant(id: id, display: entry["display"]?.stringValue,
                               publisher: entry["publisher"]?.boolValue ?? false, talking: entry["talking"]?.boolValue)
        }
    }
}

/// The room requests AudioBridge and VideoRoom share: synchronous requests to one handle whose
/// answers are checked to be the expected kind.
struct JanusRoomRequest {
    let client: JanusClient
    let handle: UInt64
    /// The key of the plugin's answer kind (`"audiobridge"`, `"videoroom"`).
    let pluginKey: String

    /// Sends `body` and returns the plugin's data, checked to be a `kind` answer.
    func send(_ body: JSONValue, expecting kind: String) async throws -> JSONValue {
        guard case .success(let data) = try await client.send(message: body, to: handle) else {
            throw JanusError.malformedReply("\(pluginKey): ack where a synchronous answer was expected")
        }
        guard data[pluginKey]?.stringValue == kind else {
            throw JanusError.malformedReply("\(pluginKey): expected \"\(kind)\", got \(data[pluginKey].map { "\($0)" } ?? "nothing")")
        }
        return data
    }

    /// `create` with the plugin's own fields plus the common ones (not permanent); the room id.
    func create(_ fields: [String: JSONValue], room: UInt64?, description: String?, secret: String?) async throws -> UInt64 {
        var body = fields
        body["request"] = "create"
        body["permanent"] = false
        if let room { body["room"] = .int(Int64(bitPattern: room)) }
        if let description { body["description"] = .string(description) }
        if let secret { body["secret"] = .string(secret) }
        let data = try await send(.object(body), expecting: "created")
        guard let id = data["room"]?.intValue else { throw JanusError.malformedReply("create: no room") }
        return UInt64(bitPattern: id)
    }

    /// Whether room `room` exists.
    func exists(_ room: UInt64) async throws -> Bool {
        let data = try await send(["request": "exists", "room": .int(Int64(bitPattern: room))], expecting: "success")
        guard let exists = data["exists"]?.boolValue else { throw JanusError.malformedReply("exists: no exists") }
        return exists
    }

    /// `listparticipants`: each participant's id with its entry.
    func participants(_ room: UInt64) async throws -> [(id: UInt64, entry: JSONValue)] {
        let data = try await send(["request": "listparticipants", "room": .int(Int64(bitPattern: room))],
                                  expecting: "participants")
        guard let list = data["participants"]?.arrayValue else {
            throw JanusError.malformedReply("listparticipants: no participants")
        }
        return try list.map { entry in
            guard let id = entry["id"]?.intValue else { throw JanusError.malformedReply("participant without id") }
            return (UInt64(bitPattern: id), entry)
        }
    }
}
