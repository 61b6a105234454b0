// libFuzzer target: compound and reduced-size RTCP parsing (SR, RR, BYE with its reason, generic
// NACK, PLI, other packets; RFC 3550 A.2 validity, RFC 4585 feedback lengths, RFC 5506).
// Properties: a parsed compound packet serialises and parses back to the same packets; the
// allocation-free walk accepts exactly what the parser accepts and sees the same packets; the
// reduced-size parse accepts every compound packet with the same packets, and what it alone
// accepts round-trips too; a BYE's sources read by the walk are those parsed; a NACK's lost
// sequence numbers, re-covered with the fewest entries, give the same set; a REMB's SSRCs lie
// inside it and its bitrate, written again, reads back the same. The WebRTC
// demultiplexer (RFC 7983) classifies every input by its first byte, and RTP against RTCP as
// the RFC 5761 classifier does.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let kind = WebRTCDatagramKind(classifying: bytes)
    switch bytes.first {
    case .some(0...3): precondition(kind == .stun)
    case .some(20...63): precondition(kind == .dtls)
    case .some(128...191) where size >= 2: precondition(kind == (RTPMultiplexing.isRTCP(bytes) ? .rtcp : .rtp))
    default: precondition(kind == .unknown)
    }
    var walked: [RTCPPacket] = []
    var byeSSRCs: [UInt32] = []
    let walkOK = (try? RTCPCompound.forEachPacket(in: bytes) { v in
        walked.append(v.packet)
        v.forEachByeSSRC { byeSSRCs.append($0) }
    }) != nil
    _ = try? RTCPCompound.forEachPacket(in: bytes, reducedSize: true) { v in checkREMB(v) }
    let reduced = try? RTCPCompound.parse(bytes, reducedSize: true)
    guard let packets = try? RTCPCompound.parse(bytes) else {
        precondition(!walkOK, "walk accepted what parse refused")
        if let reduced { roundTrip(reduced, reducedSize: true) }
        return 0
    }
    precondition(walkOK && walked == packets, "walk and parse disagree")
    precondition(reduced == packets, "the reduced-size parse disagrees on a compound packet")
    var parsedByes: [UInt32] = []
    for case .bye(let bye) in packets { parsedByes += bye.ssrcs }
    precondition(byeSSRCs == parsedByes, "walk and parse disagree on BYE sources")
    roundTrip(packets, reducedSize: false)
    return 0
}

/// A REMB's bitrate and SSRCs read within the packet; its bitrate, when the exponent carries it
/// exactly, written again (about its first SSRC) reads back the same.
func checkREMB(_ v: RTCPPacketView) {
    guard let bitrate = v.rembBitrate else {
        var none = 0
        v.forEachREMBSSRC { _ in none += 1 }
        precondition(none == 0, "SSRCs of a packet that is not a REMB")
        return
    }
    var ssrcs: [UInt32] = []
    v.forEachREMBSSRC { ssrcs.append($0) }
    precondition(ssrcs.count == Int(v.bytes[16]))
    guard bitrate != .max else { return }
    var out = [UInt8](repeating: 0, count: RTCPREMB.size)
    let back = out.withUnsafeMutableBytes { b -> UInt64? in
        guard let n = try? RTCPREMB.marshal(senderSSRC: 1, bitrate: bitrate, mediaSSRC: ssrcs.first ?? 0, into: b) else { return nil }
        var read: UInt64?
        _ = try? RTCPCompound.forEachPacket(in: UnsafeRawBufferPointer(rebasing: b[0..<n]), reducedSize: true) { read = $0.rembBitrate }
        return read
    }
    precondition(back == bitrate, "REMB bitrate \(bitrate) read back as \(String(describing: back))")
}

/// `packets` serialise and parse back to the same packets (unknown bodies up to padding).
func roundTrip(_ packets: [RTCPPacket], reducedSize: Bool) {
    guard let again = try? RTCPCompound.marshalled(packets) else { return }
    guard let back = again.withUnsafeBytes({ try? RTCPCompound.parse($0, reducedSize: reducedSize) }) else {
        preconditionFailure("reserialised compound packet does not parse")
    }
    // Bodies of unknown packets gain zero padding to a word boundary; compare the rest exactly.
    for (a, b) in zip(packets, back) {
        switch (a, b) {
        case (.other(let t1, let c1, _), .other(let t2, let c2, _)): precondition(t1 == t2 && c1 == c2)
        case (.other, _), (_, .other): preconditionFailure("packet kind changed")
        default: precondition(a == b, "packet changed in a round trip")
        }
        // (Greedy covering from the largest gap is optimal unless the set wraps the whole circle.)
        if case .genericNACK(let nack) = a, nack.items.count < 3_000 {
            let lost = nack.lostSequenceNumbers
            let items = RTCPGenericNACK.items(covering: lost)
            precondition(items.count <= nack.items.count, "covering used more entries than the packet")
            precondition(Set(RTCPGenericNACK(senderSSRC: 0, mediaSSRC: 0, items: items).lostSequenceNumbers) == Set(lost))
        }
    }
    precondition(back.count == packets.count)
}
