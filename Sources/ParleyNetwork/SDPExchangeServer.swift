// Offer and answer over plain HTTP, as WHIP (RFC 9725) and WHEP do: a peer POSTs its SDP offer
// (`application/sdp`) to an endpoint, gets the answer in a 201 Created whose Location names the
// session, and ends it with a DELETE there. Non-trickle: the offer and the answer carry their
// candidates.

#if canImport(Glibc)
import Glibc
#endif

/// A failure to open the endpoint's socket: the call that failed and its errno, as the UDP
/// transport reports its own.
public typealias SDPExchangeServerError = UDPTransportError

/// Why an offer was not answered: the status (4xx or 5xx) and a message for the peer.
public struct SDPExchangeRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The response's status.
    public var status: Int
    /// The response's body: one line for the peer.
    public var message: String

    /// A refusal with `status` and `message`.
    public init(status: Int, message: String) {
        self.status = status
        self.message = message
    }

    /// `STATUS: MESSAGE`.
    public var description: String { "\(status): \(message)" }
}

/// What happened at the endpoint during one ``SDPExchangeServer/poll(at:answer:)``.
public enum SDPExchangeEvent: Sendable, Hashable {
    /// An offer was answered; the session's resource is `location`.
    case answered(location: String)
    /// A request was refused with `status` (a bad request, an offer refused, a second
    /// session); `reason` says why.
    case refused(status: Int, reason: String)
    /// The peer deleted its session (a DELETE on its Location).
    case ended(location: String)
}

/// An HTTP/1.1 endpoint for one WHIP-style session at a time, driven by its owner's polls (no
/// thread of its own):
/// - `POST PATH` with `Content-Type: application/sdp`: the offer goes to the owner's answer
///   function; its answer comes back as `201 Created`, `Content-Type: application/sdp`,
///   `Location: PATH/ID` (ID random). A second session while one is up: 409. Another media
///   type: 415; an empty body or bytes that are not UTF-8: 400; an offer the owner refuses:
///   its status (400 for an offer it cannot take).
/// - `DELETE PATH/ID`: 200, and the session ends (``SDPExchangeEvent/ended(location:)``); an
///   unknown resource: 404.
/// - `OPTIONS`: 204 with `Accept-Post: application/sdp` (a CORS preflight's answer).
/// - Another method: 405 with `Allow`; another path: 404; a malformed request: its
///   ``HTTPRequestError/status``; a request not complete within ``requestTimeout``: 408.
/// Every response carries CORS headers (`Access-Control-Allow-Origin: *`, the methods and
/// headers allowed, `Location` exposed), so a page served from another origin can call it, and
/// closes its connection. At most ``maximumConnections`` connections are read at once; more
/// wait in the kernel's backlog.
///
/// Threading: `~Copyable`, one owner; the sockets close when it is destroyed.
public struct SDPExchangeServer: ~Copyable {
    private let listener: Int32
    /// The bound TCP port.
    public let port: UInt16
    /// The endpoint's path (`/call`).
    public let path: String
    /// The bounds on a request.
    public let limits: HTTPRequestLimits
    /// Seconds a connection has to deliver its whole request. Default 5.
    public var requestTimeout = 5.0
    /// Connections read at once. Default 8.
    public static let maximumConnections = 8
    /// The session's resource, while one is up.
    public private(set) var session: String?

    private struct Connection {
        var fd: Int32
        var received: [UInt8] = []
        var openedAt: MonotonicTime
    }
    private var connections: [Connection] = []

    /// Listens on TCP `bindHost:port` (0: any free port; `bindHost` an IPv4 address, "0.0.0.0"
    /// for every interface) for requests to `path` (it must start with "/").
    /// - Throws: ``SDPExchangeServerError`` (`errno` invalidArgument for an address that does
    ///   not parse or a path without its "/") if the socket cannot listen there.
    public init(port: UInt16 = 0, bindHost: String = "0.0.0.0", path: String = "/call",
                limits: HTTPRequestLimits = .init()) throws(SDPExchangeServerError) {
        guard path.hasPrefix("/"), path.utf8.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "?") }) else {
            throw SDPExchangeServerError(operation: "path '\(path)' (not '/' and visible characters)", errno: .invalidArgument)
        }
        let local = try UDPTransport.bindAddress(bindHost, port: port)
        let s: Int32
        switch valueOrErrno({ socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) }) {
        case .success(let fd): s = fd
        case .failure(let e): throw SDPExchangeServerError(operation: "socket", errno: e)
        }
        var on: Int32 = 1
        _ = setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        let bound = try UDPTransport.bind(s, to: local, named: "\(bindHost):\(port)")
        if case .failure(let e) = valueOrErrno({ listen(s, 16) }) {
            close(s)
            throw SDPExchangeServerError(operation: "listen", errno: e)
        }
        listener = s
        self.port = bound
        self.path = path
        self.limits = limits
        connections.reserveCapacity(Self.maximumConnections)
    }

    deinit {
        for c in connections { close(c.fd) }
        close(listener)
    }

    /// Whether a connection or a request is waiting, up to `timeoutMilliseconds`.
    public func waitForRequest(timeoutMilliseconds: Int32) -> Bool {
        var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)] + connections.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
        guard case .success(let ready) = valueOrErrno({ Glibc.poll(&fds, nfds_t(fds.count), timeoutMilliseconds) }) else { return false }
        return ready > 0
    }

    /// Accepts new connections, reads what arrived and answers each complete request (see the
    /// type's documentation); an offer is handed to `answer`, which returns the answer's SDP
    /// or throws the refusal. Never blocks (but for `answer`). Returns what happened.
    public mutating func poll(at now: MonotonicTime,
                              answer: (String) throws(SDPExchangeRefusal) -> String) -> [SDPExchangeEvent] {
        while connections.count < Self.maximumConnections {
            guard case .success(let fd) = valueOrErrno({ accept(listener, nil, nil) }) else { break }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            connections.append(Connection(fd: fd, openedAt: now))
        }
        var events: [SDPExchangeEvent] = []
        var i = 0
        while i < connections.count {
            var c = connections[i]
            connections[i].received = []
            let response = read(&c, at: now, answer: answer, events: &events)
            if let response {
                response.serialized.withUnsafeBytes { sendAll(c.fd, $0) }
                close(c.fd)
                connections.remove(at: i)
            } else {
                connections[i] = c
                i += 1
            }
        }
        return events
    }

    /// Reads what `c` has and answers it when its request is complete, malformed, late or cut
    /// short (nil: wait for more).
    private mutating func read(_ c: inout Connection, at now: MonotonicTime, answer: (String) throws(SDPExchangeRefusal) -> String,
                               events: inout [SDPExchangeEvent]) -> HTTPResponse? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        var closed = false
        while c.received.count < limits.headBytes + limits.bodyBytes {
            let n = chunk.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 {
                c.received.append(contentsOf: chunk[0..<n])
            } else {
                if n == 0 { closed = true }
                if n < 0 && Errno.current == .interrupted { continue }
                break
            }
        }
        let parsed: (request: HTTPRequest, length: Int)?
        switch c.received.withUnsafeBytes({ bytes in Result { () throws(HTTPRequestError) in try HTTPRequest.parse(bytes, limits: limits) } }) {
        case .success(let p): parsed = p
        case .failure(let error):
            events.append(.refused(status: error.status, reason: error.description))
            return .text(error.status, error.description, headers: corsHeaders)
        }
        guard let request = parsed?.request else {
            if closed || Double(c.openedAt.nanoseconds(to: now)) > requestTimeout * 1e9 {
                let reason = closed ? "the connection closed before the request was complete" : "the request did not arrive in time"
                events.append(.refused(status: 408, reason: reason))
                return .text(408, reason, headers: corsHeaders)
            }
            return nil
        }
        let response = respond(to: request, answer: answer, events: &events)
        if response.status >= 400 {
            events.append(.refused(status: response.status, reason: String(decoding: response.body.filter { $0 != 10 }, as: UTF8.self)))
        }
        return response
    }

    /// The response to a well-formed request.
    private mutating func respond(to request: HTTPRequest, answer: (String) throws(SDPExchangeRefusal) -> String,
                                  events: inout [SDPExchangeEvent]) -> HTTPResponse {
        let requested = request.path
        let resource = session.map { "\(path)/\($0)" }
        if requested == path {
            switch request.method {
            case "OPTIONS":
                return HTTPResponse(status: 204, headers: corsHeaders + [HTTPHeaderField(name: "Accept-Post", value: "application/sdp")])
            case "POST":
                guard request.mediaType == "application/sdp" else {
                    return .text(415, "the offer must be sent as Content-Type: application/sdp, not \(request.header("content-type") ?? "none")",
                                 headers: corsHeaders + [HTTPHeaderField(name: "Accept-Post", value: "application/sdp")])
                }
                guard session == nil else { return .text(409, "a call is already in progress", headers: corsHeaders) }
                guard !request.body.isEmpty, let offer = String(validating: request.body, as: UTF8.self) else {
                    return .text(400, "the body must be an SDP offer in UTF-8", headers: corsHeaders)
                }
                do throws(SDPExchangeRefusal) {
                    let sdp = try answer(offer)
                    var id = ""
                    for _ in 0..<4 { id += String(UInt32.random(in: .min ... .max), radix: 16) }
                    let location = "\(path)/\(id)"
                    session = id
                    events.append(.answered(location: location))
                    return HTTPResponse(status: 201, headers: corsHeaders + [HTTPHeaderField(name: "Content-Type", value: "application/sdp"),
                                                                            HTTPHeaderField(name: "Location", value: location)],
                                        body: Array(sdp.utf8))
                } catch {
                    return .text(error.status, error.message, headers: corsHeaders)
                }
            default:
                return .text(405, "\(request.method) is not allowed here: POST an offer, or OPTIONS",
                             headers: corsHeaders + [HTTPHeaderField(name: "Allow", value: "POST, OPTIONS")])
            }
        }
        if let resource, requested == resource {
            switch request.method {
            case "DELETE":
                session = nil
                events.append(.ended(location: resource))
                return HTTPResponse(status: 200, headers: corsHeaders)
            case "OPTIONS":
                return HTTPResponse(status: 204, headers: corsHeaders)
            default:
                return .text(405, "\(request.method) is not allowed on a call: DELETE ends it (candidates are not trickled)",
                             headers: corsHeaders + [HTTPHeaderField(name: "Allow", value: "DELETE, OPTIONS")])
            }
        }
        return .text(404, "no such resource: \(requested) (offers go to \(path))", headers: corsHeaders)
    }

    /// What lets a page from any origin post an offer and read the answer's Location.
    private var corsHeaders: [HTTPHeaderField] {
        [HTTPHeaderField(name: "Access-Control-Allow-Origin", value: "*"),
         HTTPHeaderField(name: "Access-Control-Allow-Methods", value: "POST, DELETE, OPTIONS"),
         HTTPHeaderField(name: "Access-Control-Allow-Headers", value: "Content-Type"),
         HTTPHeaderField(name: "Access-Control-Expose-Headers", value: "Location")]
    }

    /// Writes all of `bytes` (the socket is non-blocking: a response is small, a peer that does
    /// not read it loses the rest).
    private func sendAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) {
        var sent = 0
        var stalls = 0
        while sent < bytes.count && stalls < 100 {
            let n = Glibc.send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
            if n > 0 {
                sent += n
            } else if n < 0 && (Errno.current == .wouldBlock || Errno.current == .interrupted) {
                stalls += 1
                var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = Glibc.poll(&p, 1, 10)
            } else {
                return
            }
        }
    }
}
