// libFuzzer target: HTTP/1.1 request parsing (RFC 9112 request line, header fields,
// Content-Length framing, the head and body limits), as the WHIP-style offer endpoint reads
// requests from untrusted peers.
// Properties: an accepted request takes no more bytes than it was given and no more than the
// limits allow; written out again (request line, headers, body) it parses back to the same
// request; every proper prefix of the bytes it took is incomplete (nil), never an error nor
// another request; a refusal's status is a 4xx or 5xx.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var limits = HTTPRequestLimits()
    limits.headBytes = 2_048
    limits.bodyBytes = 4_096
    let parsed: (request: HTTPRequest, length: Int)?
    do {
        parsed = try HTTPRequest.parse(bytes, limits: limits)
    } catch {
        precondition((400...599).contains(error.status), "a refusal with status \(error.status)")
        _ = error.description
        return 0
    }
    guard let (request, length) = parsed else { return 0 }
    precondition(length <= size && length <= limits.headBytes + limits.bodyBytes, "took \(length) of \(size) bytes")
    precondition(request.body.count <= limits.bodyBytes)
    _ = request.path
    _ = request.mediaType
    var again = "\(request.method) \(request.target) HTTP/\(request.version)\r\n"
    for h in request.headers { again += "\(h.name): \(h.value)\r\n" }
    let written = Array((again + "\r\n").utf8) + request.body
    let back = written.withUnsafeBytes { try? HTTPRequest.parse($0, limits: limits) }
    precondition(back?.request == request && back?.length == written.count, "a written request parses back differently")
    // Proper prefixes: at most 32 cut points, spread over the request.
    let step = max(1, length / 32)
    for cut in stride(from: 0, to: length, by: step) {
        let prefix = UnsafeRawBufferPointer(rebasing: bytes[0..<cut])
        let incomplete = switch Result(catching: { try HTTPRequest.parse(prefix, limits: limits) }) {
        case .success(nil): true
        default: false
        }
        precondition(incomplete, "a prefix of \(cut) bytes is not incomplete")
    }
    return 0
}
