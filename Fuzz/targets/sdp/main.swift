// libFuzzer target: SDP parsing (RFC 4566 lines, rtpmap, fmtp, extmap, ssrc, crypto), the RTP
// offers and the WebRTC (JSEP) descriptions read from it, and Parley's answer to such an offer.
// Properties: a parsed description writes out and parses back to the same description; an
// RTP offer and a JSEP description read from it write out and read back to the same streams
// and sections; an answer to an offer reads back as an answer.

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
    if let jsep = try? JSEPDescription(parsing: text, kind: .offer) {
        guard let again = try? JSEPDescription(parsing: jsep.text, kind: .offer) else {
            preconditionFailure("a written JSEP description does not read back")
        }
        precondition(again.media.count == jsep.media.count, "a written JSEP description reads back with other sections")
        let local = JSEPLocal(ice: .random(), fingerprint: try! SDPFingerprint.sha256(Array(repeating: 7, count: 32)),
                              cname: "fuzz", audioSSRC: 1, videoSSRC: 2)
        if let answer = try? JSEPDescription.answer(to: jsep, local: local, dataChannel: true, wants: { _ in .both }) {
            precondition((try? JSEPDescription(parsing: answer.text, kind: .answer)) != nil, "an answer does not read back")
        }
    }
    guard let offer = try? RTPOffer(parsing: text) else { return 0 }
    _ = try? offer.checkBundled()
    guard let again = try? RTPOffer(parsing: offer.description.text) else {
        preconditionFailure("a written offer does not read back")
    }
    precondition(again.streams.count == offer.streams.count, "a written offer reads back with other streams")
    return 0
}
