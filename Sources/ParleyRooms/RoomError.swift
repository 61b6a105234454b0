import Foundation
import ParleyCall
import ParleyJanus
import ParleySRTP
import ParleyWebRTC

/// Why joining a room on a Janus server, or setting up its call, failed.
public enum RoomError: Error, Sendable, CustomStringConvertible {
    /// The room does not exist on the server at `server`.
    case noSuchRoom(room: UInt64, server: URL)
    /// The room has a pin and the one given is wrong or missing (Janus's `reason`).
    case wrongPin(room: UInt64, reason: String)
    /// The plugin refused the join with another error: its code and text.
    case refused(room: UInt64, code: Int, reason: String)
    /// Janus did not answer the join within `seconds`; `hint` suggests why.
    case joinTimedOut(room: UInt64, seconds: Double, hint: String)
    /// A request to Janus failed: the server cannot be reached, or it refused the request.
    case server(JanusError)
    /// Janus stopped answering, or the room was destroyed, while in the room.
    case serverGone(String)
    /// Fewer than `publishers` publishers (this one included) were in the room, forwarding
    /// this one's audio to the others, after `seconds`.
    case publishersTimedOut(room: UInt64, publishers: Int, seconds: Double)
    /// A UDP socket for the room's media could not be set up.
    case socket(UDPTransportError)
    /// SRTP for the forwarded media could not be set up.
    case srtp(SRTPError)
    /// The call session refused the room's media (a participant, the local audio or video).
    case session(any Error)
    /// The options cannot be used as given; the text says which and why.
    case invalidOptions(String)
    /// The room's call was made already (``JanusRoom/makeCall(configuration:)`` runs once).
    case callAlreadyMade
    /// A WebRTC transport could not be made or refused Janus's description.
    case webRTC(WebRTCTransportError)
    /// Janus's session description does not parse.
    case description(String)
    /// The room's chat could not start: Janus's TextRoom refused the join (a wrong pin, a
    /// username taken), or its data channel closed.
    case chat(ChatError)

    public var description: String {
        switch self {
        case .noSuchRoom(let room, let server): return "room \(room) does not exist on \(server.absoluteString)"
        case .wrongPin(let room, let reason): return "room \(room): wrong or missing pin (Janus: \(reason))"
        case .refused(let room, let code, let reason): return "room \(room): Janus error \(code): \(reason)"
        case .joinTimedOut(let room, let seconds, let hint):
            return "room \(room): Janus did not answer the join within \(String(format: "%g", seconds)) s\(hint)"
        case .server(let error): return error.description
        case .serverGone(let reason): return reason
        case .publishersTimedOut(let room, let publishers, let seconds):
            return "room \(room): fewer than \(publishers) publishers after \(String(format: "%g", seconds)) s"
        case .socket(let error): return error.description
        case .srtp(let error): return error.description
        case .session(let error): return "\(error)"
        case .invalidOptions(let text): return text
        case .callAlreadyMade: return "the room's call was made already"
        case .webRTC(let error): return "WebRTC: \(error)"
        case .description(let text): return "session description: \(text)"
        case .chat(let error): return "chat: \(error)"
        }
    }
}

/// What went wrong while leaving a room (``JanusRoom/leave(timeout:)``): never fatal, the
/// participant is gone from the call either way.
public enum RoomLeaveFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// One request of the leaving failed: its name (`remove_remote_publisher`, `leave`,
    /// `destroy session`) and Janus's error.
    case request(String, JanusError)
    /// Janus did not answer within `seconds`: the room may still list this participant (Janus
    /// drops the session on its own timeout).
    case timedOut(seconds: Double)

    public var description: String {
        switch self {
        case .request(let name, let error): return "\(name): \(error)"
        case .timedOut(let seconds):
            return "Janus did not answer within \(Int(seconds)) s; the room may still list this participant"
        }
    }
}

/// What the room says about its participants and itself, beside the call's own events
/// (``JanusRoom/notes``).
public enum RoomNote: Sendable, Equatable {
    /// Janus says a participant joined the room (an AudioBridge participant, a VideoRoom
    /// publisher this participant receives), by display name.
    case joined(String)
    /// Janus says a participant left the room.
    case left(String)
    /// Janus's own talking decision about a participant (true: talking, false: silent), from
    /// the RFC 6464 levels it sends (rooms created with `audiolevel_event`).
    case talking(String, Bool)
    /// The call session refused a publisher (its name and why): its media are not received.
    case refused(String, reason: String)
    /// The room was destroyed: the call is over.
    case roomDestroyed
    /// Janus stopped answering (why): the call is over.
    case serverGone(String)
}
