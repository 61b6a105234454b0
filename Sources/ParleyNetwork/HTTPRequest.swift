// HTTP/1.1 requests (RFC 9112) as ``SDPExchangeServer`` reads them from untrusted peers: one
// request per connection, a bounded head and body, Content-Length framing only.

/// Why bytes from a peer are not an acceptable HTTP/1.1 request; ``status`` is the response
/// it gets.
public enum HTTPRequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request line is not `METHOD SP TARGET SP HTTP/x.y` (RFC 9112 3).
    case malformedRequestLine
    /// An HTTP version other than 1.0 and 1.1.
    case unsupportedVersion(String)
    /// A header line is not `NAME: VALUE` with a token name and a value of visible characters
    /// in UTF-8, or is an obsolete folded line (RFC 9112 5.2).
    case malformedHeader(line: Int)
    /// An HTTP/1.1 request without a Host header (RFC 9112 3.2).
    case missingHost
    /// The head (request line and headers) is longer than its limit, or has too many headers.
    case headTooLarge(limit: Int)
    /// Content-Length is not a decimal number, or is given twice with different values.
    case invalidContentLength
    /// The body is longer than its limit.
    case bodyTooLarge(length: Int, limit: Int)
    /// A Transfer-Encoding (chunked bodies are not taken: requests carry Content-Length).
    case transferEncodingNotSupported

    /// The response status for this error: 400, 431, 413, 501 or 505.
    public var status: Int {
        switch self {
        case .malformedRequestLine, .malformedHeader, .missingHost, .invalidContentLength: 400
        case .unsupportedVersion: 505
        case .headTooLarge: 431
        case .bodyTooLarge: 413
        case .transferEncodingNotSupported: 501
        }
    }

    /// What is wrong, in a line for the peer.
    public var description: String {
        switch self {
        case .malformedRequestLine: "the request line is not 'METHOD TARGET HTTP/1.1'"
        case .unsupportedVersion(let v): "HTTP version \(v) is not supported (HTTP/1.1 is)"
        case .malformedHeader(let line): "header line \(line) is not 'Name: value'"
        case .missingHost: "an HTTP/1.1 request needs a Host header"
        case .headTooLarge(let limit): "the request head is over \(limit) bytes or \(HTTPRequestLimits.maximumHeaders) headers"
        case .invalidContentLength: "Content-Length is not one decimal number"
        case .bodyTooLarge(let length, let limit): "the body of \(length) bytes is over the limit of \(limit)"
        case .transferEncodingNotSupported: "Transfer-Encoding is not supported (send Content-Length)"
        }
    }
}

/// Bounds on what one request may hold.
public struct HTTPRequestLimits: Sendable, Hashable {
    /// Bytes of the request line and headers, their terminating empty line included. Default 8 KiB.
    public var headBytes = 8_192
    /// Bytes of the body. Default 64 KiB (a browser's offer with video and data channels is 5-10 KiB).
    public var bodyBytes = 65_536
    /// Header lines at most.
    public static let maximumHeaders = 64

    /// The defaults described on each property.
    public init() {}
}

/// One header field: its name as sent and its value without surrounding whitespace.
public struct HTTPHeaderField: Sendable, Hashable {
    /// The field name (a token; compared without case).
    public var name: String
    /// The field value, without leading and trailing spaces and tabs.
    public var value: String

    /// A field `name: value`.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// One parsed HTTP/1.x request.
public struct HTTPRequest: Sendable, Hashable {
    /// The method token (`POST`, `DELETE`, `OPTIONS`, ...), case as sent (methods are case-sensitive).
    public var method: String
    /// The request target as sent (origin form: a path with an optional query).
    public var target: String
    /// `1.0` or `1.1`.
    public var version: String
    /// The header fields, in order.
    public var headers: [HTTPHeaderField]
    /// The body: Content-Length bytes (none without it).
    public var body: [UInt8]

    /// A request of these parts.
    public init(method: String, target: String, version: String = "1.1", headers: [HTTPHeaderField] = [], body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The target's path: up to its query (`?`) or fragment.
    public var path: Substring { target.prefix { $0 != "?" && $0 != "#" } }

    /// The value of the first header named `name` (compared without case), if any.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The media type of Content-Type, lowercased, without parameters (`application/sdp`).
    public var mediaType: String? {
        header("content-type").map { String($0.prefix { $0 != ";" }).trimmingWhitespace().lowercased() }
    }

    /// Parses one request from the start of `bytes`.
    /// - Returns: the request and how many bytes it took; nil while the bytes are a proper
    ///   beginning of a request within the limits (more must arrive).
    /// - Throws: ``HTTPRequestError`` as soon as the bytes cannot begin an acceptable request.
    public static func parse(_ bytes: UnsafeRawBufferPointer,
                             limits: HTTPRequestLimits = .init()) throws(HTTPRequestError) -> (request: HTTPRequest, length: Int)? {
        // The head ends at the first empty line (CRLF CRLF).
        var headEnd: Int?
        var i = 0
        while i + 3 < bytes.count && i + 4 <= limits.headBytes {
            if bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
                headEnd = i
                break
            }
            i += 1
        }
        guard let headEnd else {
            if bytes.count >= limits.headBytes { throw .headTooLarge(limit: limits.headBytes) }
            // A request line can be checked before the head is complete: reject garbage early.
            if let lineEnd = firstCRLF(bytes, from: 0, to: bytes.count) { _ = try requestLine(bytes, 0, lineEnd) }
            return nil
        }
        var lines: [(start: Int, end: Int)] = []
        var start = 0
        while start < headEnd {
            let end = firstCRLF(bytes, from: start, to: headEnd + 2) ?? headEnd
            lines.append((start, end))
            start = end + 2
        }
        guard let first = lines.first else { throw .malformedRequestLine }
        guard lines.count - 1 <= HTTPRequestLimits.maximumHeaders else { throw .headTooLarge(limit: limits.headBytes) }
        let (method, target, version) = try requestLine(bytes, first.start, first.end)
        var headers: [HTTPHeaderField] = []
        headers.reserveCapacity(lines.count - 1)
        for (n, line) in lines.dropFirst().enumerated() {
            headers.append(try headerField(bytes, line.start, line.end, number: n + 1))
        }
        var request = HTTPRequest(method: method, target: target, version: version, headers: headers)
        if version == "1.1" && request.header("host") == nil { throw .missingHost }
        if request.header("transfer-encoding") != nil { throw .transferEncodingNotSupported }
        var length = 0
        let lengths = headers.filter { $0.name.lowercased() == "content-length" }.map(\.value)
        if let given = lengths.first {
            guard lengths.allSatisfy({ $0 == given }), !given.isEmpty, given.count <= 18,
                  given.utf8.allSatisfy({ (48...57).contains($0) }), let n = Int(given) else {
                throw .invalidContentLength
            }
            guard n <= limits.bodyBytes else { throw .bodyTooLarge(length: n, limit: limits.bodyBytes) }
            length = n
        }
        let bodyStart = headEnd + 4
        guard bytes.count - bodyStart >= length else { return nil }
        request.body = Array(bytes[bodyStart..<(bodyStart + length)])
        return (request, bodyStart + length)
    }

    /// The index of the first CR LF in `from..<to`, if any.
    private static func firstCRLF(_ b: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        var i = from
        while i + 1 < to {
            if b[i] == 13 && b[i + 1] == 10 { return i }
            i += 1
        }
        return nil
    }

    /// `METHOD SP TARGET SP HTTP/1.x` in `start..<end`.
    private static func requestLine(_ b: UnsafeRawBufferPointer, _ start: Int, _ end: Int) throws(HTTPRequestError)
        -> (String, String, String) {
        let line = UnsafeRawBufferPointer(rebasing: b[start..<end])
        let parts = line.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(isTokenCharacter),
              !parts[1].isEmpty, parts[1].allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .malformedRequestLine
        }
        let version = parts[2]
        guard version.count == 8, version.starts(with: Array("HTTP/".utf8)),
              (48...57).contains(version[version.startIndex + 5]), version[version.startIndex + 6] == 46,
              (48...57).contains(version[version.startIndex + 7]) else {
            throw .malformedRequestLine
        }
        let number = String(decoding: version.dropFirst(5), as: UTF8.self)
        guard number == "1.1" || number == "1.0" else { throw .unsupportedVersion(number) }
        return (String(decoding: parts[0], as: UTF8.self), String(decoding: parts[1], as: UTF8.self), number)
    }

    /// `NAME ":" OWS VALUE OWS` in `start..<end`.
    private static func headerField(_ b: UnsafeRawBufferPointer, _ start: Int, _ end: Int,
                                    number: Int) throws(HTTPRequestError) -> HTTPHeaderField {
        let line = UnsafeRawBufferPointer(rebasing: b[start..<end])
        guard let colon = line.firstIndex(of: 58), colon > line.startIndex,
              line[line.startIndex..<colon].allSatisfy(isTokenCharacter) else {
            throw .malformedHeader(line: number)
        }
        var from = colon + 1, to = line.endIndex
        while from < to && (line[from] == 32 || line[from] == 9) { from += 1 }
        while to > from && (line[to - 1] == 32 || line[to - 1] == 9) { to -= 1 }
        // Field values: visible characters, spaces and tabs, in UTF-8; no other controls.
        guard line[from..<to].allSatisfy({ $0 == 9 || $0 >= 32 && $0 != 127 }),
              let value = String(validating: line[from..<to], as: UTF8.self) else {
            throw .malformedHeader(line: number)
        }
        return HTTPHeaderField(name: String(decoding: line[line.startIndex..<colon], as: UTF8.self), value: value)
    }

    /// RFC 9110 5.6.2's `tchar`.
    private static func isTokenCharacter(_ c: UInt8) -> Bool {
        switch c {
        case 48...57, 65...90, 97...122: true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
        default: false
        }
    }
}

/// An HTTP/1.1 response: status, headers, body.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code (200, 201, 404, ...).
    public var status: Int
    /// The header fields; Content-Length and Connection are added when it is serialized.
    public var headers: [HTTPHeaderField]
    /// The body.
    public var body: [UInt8]

    /// A response of these parts.
    public init(status: Int, headers: [HTTPHeaderField] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a plain-text body (`text/plain; charset=utf-8`) ending in a newline.
    public static func text(_ status: Int, _ message: String, headers: [HTTPHeaderField] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers + [HTTPHeaderField(name: "Content-Type", value: "text/plain; charset=utf-8")],
                     body: Array((message + "\n").utf8))
    }

    /// The status line's reason phrase.
    public var reason: String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 505: "HTTP Version Not Supported"
        default: "Status"
        }
    }

    /// The response as sent: status line, the headers, Content-Length, `Connection: close`, body.
    public var serialized: [UInt8] {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        for h in headers { head += "\(h.name): \(h.value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + body
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    func trimmingWhitespace() -> String {
        let u = Array(utf8)
        var from = 0, to = u.count
        while from < to && (u[from] == 32 || u[from] == 9) { from += 1 }
        while to > from && (u[to - 1] == 32 || u[to - 1] == 9) { to -= 1 }
        return String(decoding: u[from..<to], as: UTF8.self)
    }
}
