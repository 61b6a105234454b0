// The WHIP-style offer endpoint: its request parser on well-formed, incomplete and malformed
// bytes, and the server's answers to real TCP clients on the loopback.

#if canImport(Glibc)
import Glibc
#endif
import ParleyNetwork
import Testing

struct HTTPRequestParserTests {
    private func parse(_ text: String, limits: HTTPRequestLimits = .init()) throws(HTTPRequestError) -> (request: HTTPRequest, length: Int)? {
        try Array(text.utf8).withUnsafeBytes { b in Result { () throws(HTTPRequestError) in try HTTPRequest.parse(b, limits: limits) } }.get()
    }

    @Test func aPostWithItsBodyParses() throws {
        let text = "POST /call?x=1 HTTP/1.1\r\nHost: h\r\nContent-Type: application/sdp; charset=utf-8\r\nContent-Length: 5\r\n\r\nv=0\r\nEXTRA"
        let (request, length) = try #require(try parse(text))
        #expect(request.method == "POST" && request.target == "/call?x=1" && request.path == "/call" && request.version == "1.1")
        #expect(request.mediaType == "application/sdp" && request.header("CONTENT-LENGTH") == "5")
        #expect(request.body == Array("v=0\r\n".utf8) && length == text.utf8.count - 5)
    }

    @Test func incompleteRequestsWaitForMore() throws {
        let full = "POST /call HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\n\r\nabcd"
        for cut in [0, 5, 21, 30, full.utf8.count - 1] {
            #expect(try parse(String(full.utf8.prefix(cut))!) == nil ? true : false, "cut at \(cut)")
        }
        #expect(try parse(full) != nil ? true : false)
    }

    @Test func malformedRequestsGetTheirStatus() {
        let cases: [(String, HTTPRequestError)] = [
            ("GARBAGE\r\n\r\n", .malformedRequestLine),
            ("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", .malformedRequestLine),
            ("GET / HTTP/2.0\r\nHost: h\r\n\r\n", .unsupportedVersion("2.0")),
            ("GET / HTTP/1.1\r\n\r\n", .missingHost),
            ("GET / HTTP/1.1\r\nHost h\r\n\r\n", .malformedHeader(line: 1)),
            ("GET / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n", .malformedHeader(line: 2)),
            ("GET / HTTP/1.1\r\nHost: h\u{7F}\r\n\r\n", .malformedHeader(line: 1)),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", .invalidContentLength),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", .invalidContentLength),
            ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 70000\r\n\r\n", .bodyTooLarge(length: 70_000, limit: 65_536)),
            ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n", .transferEncodingNotSupported),
            ("GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "a", count: 9_000) + "\r\n\r\n", .headTooLarge(limit: 8_192)),
        ]
        for (text, expected) in cases {
            #expect(throws: expected, "\(text.prefix(60))") { _ = try parse(text) }
        }
        #expect(HTTPRequestError.bodyTooLarge(length: 1, limit: 0).status == 413)
        #expect(HTTPRequestError.headTooLarge(limit: 1).status == 431)
        // Garbage is refused before its head is complete.
        #expect(throws: HTTPRequestError.malformedRequestLine) { _ = try parse("\u{1}\u{2}\r\n") }
    }
}

/// A blocking TCP client on the loopback: sends `request`, reads the response to the end.
private final class Client {
    let fd: Int32
    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        let r = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        try #require(r == 0, "connect: errno \(errno)")
    }
    deinit { close(fd) }
    func send(_ text: String) { _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
    func finish() { shutdown(fd, Int32(SHUT_WR)) }
    /// Whether the response has begun to arrive.
    var answered: Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return Glibc.poll(&p, 1, 0) > 0
    }
    /// The whole response (the server closes after it).
    func response() -> (status: Int, headers: [String: String], body: String) {
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            all += chunk[0..<n]
        }
        let text = String(decoding: all, as: UTF8.self)
        let parts = text.split(separator: "\r\n\r\n", maxSplits: 1, omittingEmptySubsequences: false)
        let lines = parts.first?.split(separator: "\r\n") ?? []
        let status = lines.first.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
        var headers: [String: String] = [:]
        for l in lines.dropFirst() {
            let kv = l.split(separator: ":", maxSplits: 1)
            if kv.count == 2 { headers[kv[0].lowercased()] = trimmed(kv[1]) }
        }
        return (status, headers, parts.count > 1 ? String(parts[1]) : "")
    }
}

/// `text` without leading and trailing spaces.
private func trimmed(_ text: Substring) -> String { String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed()) }

struct SDPExchangeServerTests {
    /// Sends `request` (and closes the sending side), polls the server until it answered, and
    /// returns the response and the server's events.
    private func exchange(_ server: inout SDPExchangeServer, _ request: String, finish: Bool = true,
                          answer: (String) throws(SDPExchangeRefusal) -> String = { "v=0 answer to " + $0 })
        throws -> (status: Int, headers: [String: String], body: String, events: [SDPExchangeEvent]) {
        let client = try Client(port: server.port)
        client.send(request)
        if finish { client.finish() }
        var events: [SDPExchangeEvent] = []
        let deadline = MonotonicTime.now().advanced(bySeconds: 5)
        while !client.answered && MonotonicTime.now() < deadline {
            _ = server.waitForRequest(timeoutMilliseconds: 50)
            events += server.poll(at: MonotonicTime.now(), answer: answer)
        }
        let r = client.response()
        return (r.status, r.headers, r.body, events)
    }

    private func post(_ body: String, type: String = "application/sdp") -> String {
        "POST /call HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: null\r\nContent-Type: \(type)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test func anOfferIsAnsweredAndItsDeleteEndsTheCall() throws {
        var server = try SDPExchangeServer(port: 0, bindHost: "127.0.0.1")
        let preflight = try exchange(&server, "OPTIONS /call HTTP/1.1\r\nHost: x\r\nAccess-Control-Request-Method: POST\r\n\r\n")
        #expect(preflight.status == 204 && preflight.headers["access-control-allow-origin"] == "*")
        #expect(preflight.headers["access-control-allow-headers"] == "Content-Type" && preflight.headers["accept-post"] == "application/sdp")
        let created = try exchange(&server, post("v=0 offer"))
        #expect(created.status == 201 && created.body == "v=0 answer to v=0 offer", "\(created)")
        #expect(created.headers["content-type"] == "application/sdp" && created.headers["access-control-expose-headers"] == "Location")
        let location = try #require(created.headers["location"])
        #expect(location.hasPrefix("/call/") && location.count > 10 && created.events == [.answered(location: location)])
        #expect(server.session != nil)
        // One call at a time.
        let busy = try exchange(&server, post("v=0 another"))
        #expect(busy.status == 409 && busy.body.contains("already"))
        let wrongMethod = try exchange(&server, "PATCH \(location) HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        #expect(wrongMethod.status == 405 && wrongMethod.headers["allow"] == "DELETE, OPTIONS")
        let other = try exchange(&server, "DELETE /call/nope HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(other.status == 404)
        let deleted = try exchange(&server, "DELETE \(location) HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(deleted.status == 200 && deleted.events == [.ended(location: location)] && server.session == nil)
    }

    @Test func badRequestsGetClearErrors() throws {
        var server = try SDPExchangeServer(port: 0, bindHost: "127.0.0.1")
        let json = try exchange(&server, post("{\"sdp\": 1}", type: "application/json"))
        #expect(json.status == 415 && json.body.contains("application/sdp") && json.headers["access-control-allow-origin"] == "*")
        let empty = try exchange(&server, post(""))
        #expect(empty.status == 400 && empty.body.contains("SDP offer"))
        let garbage = try exchange(&server, "\u{16}\u{3}\u{1}\u{2}\r\n\r\n")
        #expect(garbage.status == 400 && garbage.body.contains("request line"))
        let get = try exchange(&server, "GET /call HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(get.status == 405 && get.headers["allow"] == "POST, OPTIONS")
        let elsewhere = try exchange(&server, "GET /index.html HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(elsewhere.status == 404)
        let huge = try exchange(&server, "POST /call HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\nContent-Length: 999999\r\n\r\n")
        #expect(huge.status == 413)
        let cut = try exchange(&server, "POST /call HTTP/1.1\r\nHost: x\r\nContent-Type: application/sdp\r\nContent-Length: 100\r\n\r\nv=0")
        #expect(cut.status == 408 && cut.events == [.refused(status: 408, reason: "the connection closed before the request was complete")])
        let refused = try exchange(&server, post("v=0 no audio"), answer: { _ throws(SDPExchangeRefusal) in
            throw SDPExchangeRefusal(status: 400, message: "the offer has no Opus audio")
        })
        #expect(refused.status == 400 && refused.body == "the offer has no Opus audio\n" && server.session == nil)
        #expect(throws: SDPExchangeServerError.self) { _ = try SDPExchangeServer(bindHost: "not-an-address") }
        #expect(throws: SDPExchangeServerError.self) { _ = try SDPExchangeServer(path: "call") }
    }
}
