import Testing
import ParleyRTP

private func kind(_ bytes: [UInt8]) -> WebRTCDatagramKind { bytes.withUnsafeBytes { WebRTCDatagramKind(classifying: $0) } }

/// RFC 7983's demultiplexing of a WebRTC transport by first byte, then RFC 5761's by second.
@Suite struct WebRTCDatagramKindTests {
    @Test func firstByteRangesDecideExactly() {
        for byte in 0...255 {
            let b = UInt8(byte)
            let expected: WebRTCDatagramKind = switch byte {
            case 0...3: .stun
            case 20...63: .dtls
            case 128...191: .rtp
            default: .unknown
            }
            #expect(kind([b, 0x6F, 0, 0]) == expected, "first byte \(byte)")
        }
    }

    @Test func rtpAndRTCPSplitBySecondByte() throws {
        let rtp = try RTPHeader(payloadType: 111, sequenceNumber: 1, timestamp: 2, ssrc: 3).marshalled(payload: [0xF8])
        #expect(kind(rtp) == .rtp)
        let rr = try RTCPCompound.marshalled([.receiverReport(RTCPReceiverReport(ssrc: 7, reports: []))])
        #expect(kind(rr) == .rtcp)
        for second in 0...255 {
            #expect(kind([0x80, UInt8(second)]) == ((192...223).contains(second) ? .rtcp : .rtp))
        }
    }

    @Test func emptyAndTruncatedAreUnknown() {
        #expect(kind([]) == .unknown)
        #expect(kind([0x80]) == .unknown)
        #expect(kind([0x00]) == .stun)
        #expect(kind([0x16]) == .dtls)
        // ZRTP (16...19) and TURN channel data (64...79) are not carried here.
        #expect(kind([16, 0]) == .unknown && kind([64, 0]) == .unknown && kind([79, 0]) == .unknown)
    }
}
