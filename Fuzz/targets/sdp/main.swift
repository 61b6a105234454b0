// libFuzzer target: SDP parsing (RFC 4566 lines, rtpmap, fmtp, extmap, crypto).
// Property: a parsed description writes out and parses back to the same description.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let sdp = try? SessionDescription(parsing: text) else { return 0 }
    guard let back = try? SessionDescription(parsing: sdp.text) else {
        preconditionFailure("a written description does not parse")
    }
    precondition(back == sdp, "a written description parses differently")
    for m in sdp.media {
        for pt in m.payloadTypes { _ = m.rtpMap(for: pt); _ = m.formatParameters(for: pt) }
        _ = m.extensionMaps
        _ = m.cryptos
    }
    return 0
}
