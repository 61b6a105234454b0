/// A handle attached to Janus's TextRoom plugin: the room requests that travel over HTTP
/// (`create`, `exists`, `destroy`) and the PeerConnection's setup (`setup`, then `ack` with the
/// answer to Janus's offer). Joining, leaving and the messages themselves travel as JSON text
/// over the PeerConnection's data channel, not through this handle.
public struct TextRoomHandle: JanusRoomHandle {
    /// `janus.plugin.textroom`.
    public static let plugin = "janus.plugin.textroom"
    /// The plugin's answers are named by `"textroom"`.
    public static let answerKey = "textroom"
    /// The client and id of the handle.
    public let attachment: JanusAttachment

    /// The handle `attachment`, already attached to this plugin.
    public init(_ attachment: JanusAttachment) { self.attachment = attachment }

    /// The TextRoom plugin's error codes (`error_code` in its answers and events).
    public enum ErrorCode {
        /// The room does not exist.
        public static let noSuchRoom = 417
        /// A wrong or missing pin (or secret).
        public static let unauthorized = 419
        /// The username is taken in the room.
        public static let usernameExists = 420
    }

    /// Creates a room (not permanent: it lives as long as the Janus process).
    /// - Parameters:
    ///   - room: the room id; nil lets Janus choose one.
    ///   - pin: the pin a participant needs to join.
    ///   - history: messages the room keeps and sends to each new participant (0: none).
    ///   - secret: the secret needed to kick participants or destroy the room.
    /// - Returns: the room id.
    @discardableResult
    public func createRoom(_ room: UInt64? = nil, pin: String? = nil, history: Int = 0, secret: String? = nil) async throws -> UInt64 {
        var body: [String: JSONValue] = ["history": .int(Int64(history))]
        if let pin { body["pin"] = .string(pin) }
        return try await request.create(body, room: room, description: nil, secret: secret)
    }

    /// Kicks participant `username` out of room `room`; `secret` is the room's.
    /// - Throws: ``JanusError/plugin(code:text:)`` when the plugin refuses (a wrong secret, no
    ///   such participant), or another ``JanusError``.
    public func kick(_ username: String, room: UInt64, secret: String? = nil) async throws {
        var body: [String: JSONValue] = ["request": "kick", "room": .int(Int64(bitPattern: room)), "username": .string(username)]
        if let secret { body["secret"] = .string(secret) }
        guard case .success(let data) = try await client.send(message: .object(body), to: id) else {
            throw JanusError.malformedReply("textroom: ack where a synchronous answer was expected")
        }
        // Janus 1.1.2 names this answer's kind "textbridge".
        guard (data["textroom"] ?? data["textbridge"])?.stringValue == "success" else {
            throw JanusError.malformedReply("textroom: kick answered \(data)")
        }
    }

    /// Destroys room `room`.
    public func destroyRoom(_ room: UInt64) async throws {
        _ = try await request.send(["request": "destroy", "room": .int(Int64(bitPattern: room))], expecting: "destroyed")
    }

    /// Asks for the PeerConnection: Janus answers with an event carrying its offer (an
    /// `m=application` section for the data channel).
    public func setup() async throws {
        _ = try await client.send(message: ["request": "setup"], to: id)
    }

    /// Gives Janus the answer to its offer.
    public func ack(answer: JanusJSEP) async throws {
        _ = try await client.send(message: ["request": "ack"], to: id, jsep: answer.json)
    }
}
