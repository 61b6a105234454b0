// libFuzzer target: SDP parsing (RFC 4566 lines, rtpmap, fmtp, extmap, ssrc, crypto) and the
// RTP offers read from it.
// Properties: a parsed description writes out and parses back to the same description; an
// offer read from it writes out and reads back to the same streams.

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
        _ = m.sources
    }
    guard let offer = try? RTPOffer(parsing: text) else { return 0 }
    _ = try? offer.checkBundled()
    guard let again = try? RTPOffer(parsing: offer.description.text) else {
        preconditionFailure("a written offer does not read back")
    }
    precondition(again.streams.count == offer.streams.count, "a written offer reads back with other streams")
    return 0
}
