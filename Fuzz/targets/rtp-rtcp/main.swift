// libFuzzer target: compound RTCP parsing (SR, RR, other packets; RFC 3550 A.2 validity).
// Property: a parsed compound packet serialises and parses back to the same packets.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let packets = try? RTCPCompound.parse(bytes) else { return 0 }
    guard let again = try? RTCPCompound.marshalled(packets) else { return 0 }
    guard let back = again.withUnsafeBytes({ try? RTCPCompound.parse($0) }) else {
        preconditionFailure("reserialised compound packet does not parse")
    }
    // Bodies of unknown packets gain zero padding to a word boundary; compare reports only.
    for (a, b) in zip(packets, back) {
        switch (a, b) {
        case (.senderReport(let x), .senderReport(let y)): precondition(x == y)
        case (.receiverReport(let x), .receiverReport(let y)): precondition(x == y)
        case (.other(let t1, let c1, _), .other(let t2, let c2, _)): precondition(t1 == t2 && c1 == c2)
        default: preconditionFailure("packet kind changed")
        }
    }
    precondition(back.count == packets.count)
    return 0
}
