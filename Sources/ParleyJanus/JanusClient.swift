import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What can go wrong talking to Janus.
public enum JanusError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Nothing listens at the URL: the server is not running (connection refused).
    case connectionRefused(url: URL)
    /// Another transport failure (timeout, unreachable host, a dropped connection).
    case transport(url: URL, reason: String)
    /// The HTTP server answered with a status other than 200.
    case httpStatus(url: URL, status: Int)
    /// Janus refused the request: `{"janus":"error","error":{"code":N,"reason":"..."}}`.
    case janus(code: Int, reason: String)
    /// The plugin refused the request: `error_code` and `error` in the plugin's data.
    case plugin(code: Int, text: String)
    /// The reply was not what the Janus API describes.
    case malformedReply(String)
    /// A call that needs a Janus session came before `createSession()` or after `destroy()`.
    case noSession

    public var description: String {
        switch self {
        case .connectionRefused(let url): return "Janus: connection refused at \(url.absoluteString) (is the server running?)"
        case .transport(let url, let reason): return "Janus: transport failure at \(url.absoluteString): \(reason)"
        case .httpStatus(let url, let status): return "Janus: HTTP status \(status) from \(url.absoluteString)"
        case .janus(let code, let reason): return "Janus error \(code): \(reason)"
        case .plugin(let code, let text): return "Janus plugin error \(code): \(text)"
        case .malformedReply(let what): return "Janus: malformed reply: \(what)"
        case .noSession: return "Janus: no session (call createSession() first)"
        }
    }
}

/// An asynchronous event Janus delivers on a session's long poll.
public enum JanusEvent: Sendable, Equatable {
    /// A plugin event for handle `sender`, with the plugin's data and the SDP (`jsep`) when there is one.
    case plugin(sender: UInt64, plugin: String, data: JSONValue, jsep: JSONValue?)
    /// The PeerConnection of handle `sender` is up.
    case webrtcUp(sender: UInt64)
    /// The PeerConnection of handle `sender` has closed.
    case hangup(sender: UInt64, reason: String?)
    /// Handle `sender` has been detached from its plugin.
    case detached(sender: UInt64)
    /// The long poll ended without events (Janus answers a keepalive after its poll timeout).
    case timeout
    /// Any other event (`media`, `slowlink`, `trickle`, ...), as Janus sent it.
    case other(kind: String, message: JSONValue)
}

/// The synchronous reply to a plugin message.
public enum JanusPluginReply: Sendable, Equatable {
    /// The plugin answered at once (`success`) with this data.
    case success(JSONValue)
    /// The plugin accepted the request and will answer with an event on the long poll (`ack`).
    case ack
}

/// A client of the Janus HTTP API (the REST transport at `/janus`).
///
/// One client holds at most one Janus session. All calls are asynchronous and run on the
/// actor or on URLSession's threads; nothing here blocks a media thread.
///
/// ```swift
/// let janus = JanusClient(baseURL: URL(string: "http://127.0.0.1:8088/janus")!)
/// try await janus.createSession()
/// let handle = try await janus.attach(plugin: JanusClient.audioBridgePlugin)
/// let reply = try await janus.send(message: ["request": "list"], to: handle)
/// try await janus.destroy()
/// ```
public actor JanusClient {
    /// The AudioBridge plugin's package name.
    public static let audioBridgePlugin = "janus.plugin.audiobridge"
    /// The VideoRoom plugin's package name.
    public static let videoRoomPlugin = "janus.plugin.videoroom"

    /// The REST endpoint, e.g. `http://127.0.0.1:8088/janus`.
    public let baseURL: URL
    /// The Janus session, once created.
    public private(set) var sessionID: UInt64?
    /// How many keep-alives the keep-alive task has had acknowledged.
    public private(set) var keepAlivesAcknowledged = 0

    private let urlSession: URLSession
    private let requestTimeout: TimeInterval
    private let keepAliveInterval: Duration
    private var keepAliveTask: Task<Void, Never>?

    /// A client for the Janus REST endpoint `baseURL`.
    /// - Parameters:
    ///   - baseURL: the endpoint, e.g. `http://127.0.0.1:8088/janus`.
    ///   - requestTimeout: the longest wait for a reply to a request (the long poll waits longer:
    ///     Janus holds it up to 30 s).
    ///   - keepAliveInterval: how often the session is kept alive; Janus's default session
    ///     timeout is 60 s.
    public init(baseURL: URL, requestTimeout: TimeInterval = 10, keepAliveInterval: Duration = .seconds(25)) {
        self.baseURL = baseURL
        self.requestTimeout = requestTimeout
        self.keepAliveInterval = keepAliveInterval
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = max(requestTimeout, 45)
        self.urlSession = URLSession(configuration: configuration)
    }

    // MARK: Session and handles

    /// Creates a Janus session and starts its keep-alive task.
    /// - Returns: the session id.
    @discardableResult
    public func createSession() async throws -> UInt64 {
        let reply = try await post(baseURL, ["janus": "create"])
        guard let id = reply.data?["id"]?.intValue else {
            throw JanusError.malformedReply("create: no data.id")
        }
        sessionID = UInt64(bitPattern: id)
        startKeepAlive()
        return UInt64(bitPattern: id)
    }

    /// Attaches a handle to `plugin` (e.g. ``audioBridgePlugin``) in the session.
    /// - Returns: the handle id.
    public func attach(plugin: String) async throws -> UInt64 {
        let reply = try await post(try sessionURL(), ["janus": "attach", "plugin": .string(plugin)])
        guard let id = reply.data?["id"]?.intValue else {
            throw JanusError.malformedReply("attach: no data.id")
        }
        return UInt64(bitPattern: id)
    }

    /// Detaches handle `handle` from its plugin.
    public func detach(_ handle: UInt64) async throws {
        _ = try await post(try handleURL(handle), ["janus": "detach"])
    }

    /// Sends a plugin message (`{"janus":"message","body":...}`) to `handle`.
    /// - Parameters:
    ///   - handle: the plugin handle.
    ///   - body: the plugin's request.
    ///   - jsep: an SDP offer or answer, when the request carries one.
    /// - Returns: the plugin's synchronous reply: its data, or `.ack` when the answer comes as an event.
    /// - Throws: ``JanusError/plugin(code:text:)`` when the plugin's data holds `error_code`.
    public func send(message body: JSONValue, to handle: UInt64, jsep: JSONValue? = nil) async throws -> JanusPluginReply {
        var request: [String: JSONValue] = ["janus": "message", "body": body]
        if let jsep { request["jsep"] = jsep }
        let reply = try await post(try handleURL(handle), .object(request))
        switch reply.janus {
        case "ack":
            return .ack
        case "success":
            guard let data = reply.plugindata?.data else {
                throw JanusError.malformedReply("message: success without plugindata.data")
            }
            if let failure = data.pluginError { throw JanusError.plugin(code: failure.code, text: failure.text) }
            return .success(data)
        default:
            throw JanusError.malformedReply("message: unexpected reply \"\(reply.janus)\"")
        }
    }

    /// Trickles one of this side's ICE candidates to `handle`'s PeerConnection, or tells Janus
    /// that all have been sent (``JanusTrickle/completed``): `{"janus":"trickle","candidate":...}`.
    public func trickle(_ trickle: JanusTrickle, to handle: UInt64) async throws {
        let reply = try await post(try handleURL(handle), ["janus": "trickle", "candidate": trickle.json])
        guard reply.janus == "ack" else {
            throw JanusError.malformedReply("trickle: unexpected reply \"\(reply.janus)\"")
        }
    }

    /// Sends a keep-alive for the session (the keep-alive task does this on its own).
    public func keepAlive() async throws {
        let reply = try await post(try sessionURL(), ["janus": "keepalive"])
        guard reply.janus == "ack" else {
            throw JanusError.malformedReply("keepalive: unexpected reply \"\(reply.janus)\"")
        }
    }

    /// Stops the keep-alive task and destroys the Janus session (its handles go with it).
    public func destroy() async throws {
        keepAliveTask?.cancel()
        keepAliveTask = nil
        let url = try sessionURL()
        sessionID = nil
        _ = try await post(url, ["janus": "destroy"])
    }

    // MARK: Events

    /// One long poll: waits until Janus has events for the session (at most `maxEvents`) or its
    /// poll timeout (30 s) passes, which gives `[.timeout]`.
    public func poll(maxEvents: Int = 10) async throws -> [JanusEvent] {
        var components = URLComponents(url: try sessionURL(), resolvingAgainstBaseURL: false)!
        components.queryItems = [
            URLQueryItem(name: "rid", value: String(UInt64(Date().timeIntervalSince1970 * 1000))),
            URLQueryItem(name: "maxev", value: String(max(1, maxEvents))),
        ]
        var request = URLRequest(url: components.url!)
        request.timeoutInterval = 45
        let data = try await perform(request)
        let messages: [JanusMessage]
        do {
            if let many = try? JSONDecoder().decode([JanusMessage].self, from: data) {
                messages = many
            } else {
                messages = [try JSONDecoder().decode(JanusMessage.self, from: data)]
            }
        } catch {
            throw JanusError.malformedReply("long poll: \(error)")
        }
        return try messages.map(Self.event(from:))
    }

    /// The session's events, long poll after long poll, until the stream's consumer stops or
    /// a poll fails (the stream then ends with that error).
    public func events(maxEvents: Int = 10) -> AsyncThrowingStream<JanusEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    while !Task.isCancelled {
                        for event in try await self.poll(maxEvents: maxEvents) {
                            continuation.yield(event)
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    // MARK: Internals

    private func startKeepAlive() {
        keepAliveTask?.cancel()
        let interval = keepAliveInterval
        keepAliveTask = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self else { return }
                if (try? await self.keepAlive()) != nil {
                    await self.countKeepAlive()
                }
            }
        }
    }

    private func countKeepAlive() { keepAlivesAcknowledged += 1 }

    private func sessionURL() throws -> URL {
        guard let sessionID else { throw JanusError.noSession }
        return baseURL.appendingPathComponent(String(sessionID))
    }

    private func handleURL(_ handle: UInt64) throws -> URL {
        try sessionURL().appendingPathComponent(String(handle))
    }

    private static func event(from message: JanusMessage) throws -> JanusEvent {
        let sender = message.sender ?? 0
        switch message.janus {
        case "event":
            guard let plugindata = message.plugindata else {
                throw JanusError.malformedReply("event without plugindata")
            }
            return .plugin(sender: sender, plugin: plugindata.plugin, data: plugindata.data, jsep: message.jsep)
        case "webrtcup": return .webrtcUp(sender: sender)
        case "hangup": return .hangup(sender: sender, reason: message.reason)
        case "detached": return .detached(sender: sender)
        case "keepalive": return .timeout
        case "error":
            throw JanusError.janus(code: message.error?.code ?? 0, reason: message.error?.reason ?? "")
        default: return .other(kind: message.janus, message: message.raw)
        }
    }

    /// POSTs a Janus request (a transaction id added) and decodes the reply; Janus errors throw.
    private func post(_ url: URL, _ body: JSONValue) async throws -> JanusMessage {
        guard case .object(var members) = body else { preconditionFailure("a Janus request is an object") }
        let transaction = Self.transactionID()
        members["transaction"] = .string(transaction)
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.timeoutInterval = requestTimeout
        request.httpBody = try JSONEncoder().encode(JSONValue.object(members))
        let data = try await perform(request)
        let reply: JanusMessage
        do {
            reply = try JSONDecoder().decode(JanusMessage.self, from: data)
        } catch {
            throw JanusError.malformedReply(String(decoding: data.prefix(200), as: UTF8.self))
        }
        if reply.janus == "error" {
            throw JanusError.janus(code: reply.error?.code ?? 0, reason: reply.error?.reason ?? "")
        }
        if let replied = reply.transaction, replied != transaction {
            throw JanusError.malformedReply("transaction \(replied), expected \(transaction)")
        }
        return reply
    }

    private func perform(_ request: URLRequest) async throws -> Data {
        let url = request.url ?? baseURL
        let data: Data
        let response: URLResponse
        do {
            // In a task of its own, so that cancelling the caller (a consumer leaving `events()`)
            // does not cancel the URL session task: FoundationNetworking's
            // URLSessionTask.cancel() can trap when the task completes at that moment (its
            // task registry). A cancelled long poll ends on its own within Janus's 30 s.
            let session = urlSession
            (data, response) = try await Task { try await session.data(for: request) }.value
        } catch let error as URLError {
            if error.code == .cannotConnectToHost {
                throw JanusError.connectionRefused(url: url)
            }
            throw JanusError.transport(url: url, reason: error.localizedDescription)
        } catch {
            throw JanusError.transport(url: url, reason: String(describing: error))
        }
        if let http = response as? HTTPURLResponse, http.statusCode != 200 {
            throw JanusError.httpStatus(url: url, status: http.statusCode)
        }
        return data
    }

    private static func transactionID() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return String((0..<12).map { _ in alphabet.randomElement()! })
    }
}

extension JSONValue {
    /// The plugin's error in a plugin's data (`error_code` and `error`), when it holds one.
    var pluginError: (code: Int, text: String)? {
        guard let code = self["error_code"]?.intValue else { return nil }
        return (Int(code), self["error"]?.stringValue ?? "")
    }
}

/// What a Janus plugin handle hears from its plugin, read from the plugin data of a Janus
/// `event`: the plugin's error, or else the plugin's own event.
public protocol JanusPluginEvent: Sendable {
    /// An error answering an asynchronous request: the plugin's `error_code` and `error`.
    static func error(code: Int, text: String) -> Self
    /// The event in plugin data that holds no error.
    static func event(_ data: JSONValue) -> Self
}

extension JanusPluginEvent {
    /// Reads a plugin event's data: its error when it holds one, else its event.
    public init(_ data: JSONValue) {
        self = data.pluginError.map { .error(code: $0.code, text: $0.text) } ?? .event(data)
    }
}

/// A Janus API message (reply or event): the members Parley reads, and the whole message.
@dynamicMemberLookup
struct JanusMessage: Decodable, Sendable {
    /// The members Parley reads (decoded as the API names them).
    struct Members: Decodable, Sendable {
        struct Failure: Decodable, Sendable {
            var code: Int
            var reason: String
        }
        struct PluginData: Decodable, Sendable {
            var plugin: String
            var data: JSONValue
        }
        var janus: String
        var transaction: String?
        var sender: UInt64?
        var data: JSONValue?
        var error: Failure?
        var plugindata: PluginData?
        var jsep: JSONValue?
        var reason: String?
    }

    let members: Members
    /// The whole message, for events Parley does not type.
    let raw: JSONValue

    init(from decoder: any Decoder) throws {
        members = try Members(from: decoder)
        raw = try JSONValue(from: decoder)
    }

    subscript<T>(dynamicMember member: KeyPath<Members, T>) -> T { members[keyPath: member] }
}
