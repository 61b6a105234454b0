import Testing
@testable import ParleyRTP

/// A REMB written and read back: its bitrate (rounded down to 18 bits of mantissa), its SSRC;
/// a REMB whose SSRC list runs past the packet is not one.
@Test func aREMBRoundTripsAndAShortOneIsRefused() throws {
    for bitrate: UInt64 in [0, 30_000, 262_143, 262_144, 1_234_567, 2_500_000_000] {
        var b = [UInt8](repeating: 0, count: RTCPREMB.size)
        let n = try b.withUnsafeMutableBytes { try RTCPREMB.marshal(senderSSRC: 1, bitrate: bitrate, mediaSSRC: 0xABCD, into: $0) }
        #expect(n == 24)
        var read: UInt64?, ssrcs: [UInt32] = []
        try b.withUnsafeBytes { bytes in
            try RTCPCompound.forEachPacket(in: bytes, reducedSize: true) { v in
                read = v.rembBitrate
                v.forEachREMBSSRC { ssrcs.append($0) }
                #expect(v.isREMB && !v.isPictureLossIndication)
            }
        }
        let dropped = max(0, 64 - bitrate.leadingZeroBitCount - 18)
        let expected = (bitrate >> dropped) << dropped
        #expect(read == expected && ssrcs == [0xABCD], "\(bitrate) read as \(String(describing: read))")
        #expect(read.map { Double(bitrate - $0) <= Double(bitrate) / 131_072 } == true)
    }
    // Three SSRCs announced, one present.
    var b = [UInt8](repeating: 0, count: RTCPREMB.size)
    _ = try b.withUnsafeMutableBytes { try RTCPREMB.marshal(senderSSRC: 1, bitrate: 1_000, mediaSSRC: 2, into: $0) }
    b[16] = 3
    try b.withUnsafeBytes { bytes in
        try RTCPCompound.forEachPacket(in: bytes, reducedSize: true) { v in
            #expect(!v.isREMB && v.rembBitrate == nil)
        }
    }
    #expect(throws: RTPError.self) {
        var small = [UInt8](repeating: 0, count: 20)
        _ = try small.withUnsafeMutableBytes { try RTCPREMB.marshal(senderSSRC: 1, bitrate: 1, mediaSSRC: 2, into: $0) }
    }
}
