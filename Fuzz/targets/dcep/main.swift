// libFuzzer target: DCEP messages (RFC 8832: DATA_CHANNEL_OPEN and DATA_CHANNEL_ACK).
// Properties: a parsed message writes out and reads back to the same message; written out, it
// is the input itself, but for a reliable channel's reliability parameter (ignored, written 0).

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    guard let message = try? DCEPMessage(parsing: input) else { return 0 }
    guard let bytes = try? message.serialized() else { preconditionFailure("a parsed message does not write out") }
    guard let back = try? DCEPMessage(parsing: bytes) else { preconditionFailure("a written message does not parse") }
    precondition(back == message, "a written message parses differently")
    var expected = Array(input)
    if case .open(let p) = message, p.reliability == .reliable { expected.replaceSubrange(4..<8, with: [0, 0, 0, 0]) }
    precondition(bytes == expected, "a message writes out other bytes than it was read from")
    return 0
}
