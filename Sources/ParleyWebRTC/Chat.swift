// A chat's text message and the chat's errors, one of each for every chat: a direct call's
// (`WebRTCChat`, over a data channel of the call's transport) and a room's (ParleyRooms'
// `JanusRoom` chat, through Janus's TextRoom).

import Foundation

/// A text message of a chat.
public struct ChatMessage: Sendable, Hashable {
    /// The sender's id: in a room its TextRoom username (a Parley participant's is its
    /// participant id in the media room); in a direct call the id ``WebRTCChat`` was given for
    /// that side.
    public var senderID: String
    /// The sender's display name (its id when it gave none).
    public var displayName: String
    /// The text.
    public var text: String
    /// When the message arrived here, or, for this side's own, when it left (the system's wall
    /// clock).
    public var time: Date
    /// Janus's time stamp of a room's message (`YYYY-MM-DDThh:mm:ss±hhmm`, to the second);
    /// empty in a direct call, which has no server.
    public var serverTime: String
    /// Whether this side sent it (a room's echo from Janus; in a direct call, the message as it
    /// leaves).
    public var isOwn: Bool

    /// A message of `senderID` shown as `displayName`.
    public init(senderID: String, displayName: String, text: String, time: Date, serverTime: String, isOwn: Bool) {
        self.senderID = senderID
        self.displayName = displayName
        self.text = text
        self.time = time
        self.serverTime = serverTime
        self.isOwn = isOwn
    }
}

/// Why a chat refused a message, or could not start.
public enum ChatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The message is `size` bytes, over the chat's `limit`: in a room the text as JSON writes
    /// it (quotes, backslashes and control characters escaped) against what Janus's TextRoom
    /// carries (`JanusRoom.chatTextLimit`); in a direct call its UTF-8 against
    /// ``WebRTCChat/textLimit``.
    case tooLong(size: Int, limit: Int)
    /// The bytes are not UTF-8.
    case invalidUTF8
    /// The chat has closed (its data channel closed, the connection ended, or the room was left).
    case channelClosed
    /// There is no chat: the room was joined without one (`JanusRoom.Options.chat` nil), or the
    /// call's descriptions agreed on no data channel.
    case notEnabled
    /// Janus refused: its TextRoom error code and text.
    case refused(code: Int, reason: String)

    public var description: String {
        switch self {
        case .tooLong(let size, let limit): return "the message is \(size) bytes, over the chat's limit of \(limit)"
        case .invalidUTF8: return "the message is not UTF-8"
        case .channelClosed: return "the chat's data channel is closed"
        case .notEnabled: return "there is no chat (no data channel)"
        case .refused(let code, let reason): return "Janus TextRoom error \(code): \(reason)"
        }
    }
}
