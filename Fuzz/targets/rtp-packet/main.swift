// libFuzzer target: RTP packet parsing (RFC 3550 header, CSRCs, padding, RFC 8285 elements).
// Property: anything that parses reserialises to a packet that parses to the same fields.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let view = try? RTPPacketView(parsing: bytes) else { return 0 }
    precondition(view.payloadRange.upperBound + view.paddingCount == size)
    var sum = 0
    for i in 0..<view.csrcCount { sum &+= Int(view.csrc(i)) }
    for e in view.extensionElements {
        precondition(e.range.lowerBound >= view.extensionRange.lowerBound && e.range.upperBound <= view.extensionRange.upperBound)
        sum &+= Int(e.id)
    }
    _ = view.audioLevel(id: 1)
    let header = RTPHeader(view)
    let payload = view.payload
    var out = [UInt8](repeating: 0, count: header.marshalSize(payloadCount: payload.count))
    let written = out.withUnsafeMutableBytes { try? header.marshal(payload: payload, into: $0) }
    guard let n = written else { return 0 }  // e.g. an element the chosen form cannot carry
    precondition(n == out.count)
    out.withUnsafeBytes { raw in
        guard let again = try? RTPPacketView(parsing: raw) else { preconditionFailure("reserialised packet does not parse") }
        precondition(RTPHeader(again).sequenceNumber == header.sequenceNumber)
        precondition(again.timestamp == view.timestamp && again.ssrc == view.ssrc && again.marker == view.marker)
        precondition(Array(again.payload) == Array(payload))
        precondition(again.extensionElements.map(\.id) == view.extensionElements.map(\.id))
    }
    return sum == -1 ? 1 : 0
}
