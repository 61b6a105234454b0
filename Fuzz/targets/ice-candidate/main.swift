// libFuzzer target: ICE candidate lines (SDP a=candidate:, RFC 8839 §5.1).
// Properties: a parsed candidate writes out (in both its a=candidate: and candidate: forms) and
// reads back to the same candidate; made again from its fields, it is the same candidate.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let c = try? ICECandidate(parsing: text) else { return 0 }
    guard let back = try? ICECandidate(parsing: c.sdpLine), let trickled = try? ICECandidate(parsing: c.attribute) else {
        preconditionFailure("a written candidate does not parse")
    }
    precondition(back == c && trickled == c, "a written candidate parses differently")
    precondition(back.sdpLine == c.sdpLine, "a candidate writes out two ways")
    guard let made = try? ICECandidate(foundation: c.foundation, component: c.component, transport: c.transport,
                                       priority: c.priority, address: c.address, port: c.port, kind: c.kind,
                                       related: c.related, tcpType: c.tcpType, extensions: c.extensions) else {
        preconditionFailure("a parsed candidate's fields are refused")
    }
    precondition(made == c, "a candidate made from its fields differs")
    return 0
}
