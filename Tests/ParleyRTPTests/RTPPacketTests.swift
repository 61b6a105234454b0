import Testing
import ParleyRTP

@Suite struct RTPPacketGoldenVectors {
    /// RFC 3550 5.1 layout with a non-RFC 8285 extension (profile 0x0001, one word), the
    /// packet pion/rtp's TestBasic uses.
    @Test func rfc3550HeaderFieldsAreReadFromTheirBitPositions() throws {
        let pkt = hex("90e0698f d9c293da 1c642782 00010001 ffffffff 9836be889e")
        try parsed(pkt) { v in
            #expect(v.marker)
            #expect(v.payloadType == 96)
            #expect(v.sequenceNumber == 27023)
            #expect(v.timestamp == 3_653_407_706)
            #expect(v.ssrc == 476_325_762)
            #expect(v.csrcCount == 0)
            #expect(v.extensionProfile == 1)
            #expect(Array(v.bytes[v.extensionRange]) == [0xFF, 0xFF, 0xFF, 0xFF])
            #expect(Array(v.payload) == [0x98, 0x36, 0xBE, 0x88, 0x9E])
            #expect(v.extensionElements.map { $0 }.isEmpty)  // not an RFC 8285 profile
        }
    }

    @Test func csrcsAndPaddingAreParsedAndPaddingIsRemovedFromThePayload() throws {
        // V=2 P=1 X=0 CC=2, PT 0, seq 1, ts 160, SSRC 0x11223344, CSRCs 0xaaaaaaaa 0xbbbbbbbb,
        // payload 01 02 03, padding 00 00 03.
        let pkt = hex("a2000001 000000a0 11223344 aaaaaaaa bbbbbbbb 010203 000003")
        try parsed(pkt) { v in
            #expect(v.csrcCount == 2)
            #expect(v.csrc(0) == 0xAAAA_AAAA)
            #expect(v.csrc(1) == 0xBBBB_BBBB)
            #expect(v.hasPadding)
            #expect(v.paddingCount == 3)
            #expect(Array(v.payload) == [1, 2, 3])
        }
        let header = RTPHeader(payloadType: 0, sequenceNumber: 1, timestamp: 160, ssrc: 0x1122_3344,
                               csrcs: [0xAAAA_AAAA, 0xBBBB_BBBB], paddingCount: 3)
        #expect(try header.marshalled(payload: [1, 2, 3]) == pkt)
    }

    /// RFC 8285 4.2 example: elements with L=0 (1 byte), L=1 (2 bytes), two padding bytes,
    /// then L=3 (4 bytes); length = 3 words.
    @Test func rfc8285OneByteExampleYieldsThreeElementsAndSkipsPadding() throws {
        let pkt = hex("90600001 00000000 00000001 bede0003 10aa 21bbbb 0000 33cccccccc 55")
        try parsed(pkt) { v in
            let e = v.extensionElements.map { ($0.id, Array(v.bytes[$0.range])) }
            #expect(e.count == 3)
            #expect(e[0].0 == 1 && e[0].1 == [0xAA])
            #expect(e[1].0 == 2 && e[1].1 == [0xBB, 0xBB])
            #expect(e[2].0 == 3 && e[2].1 == [0xCC, 0xCC, 0xCC, 0xCC])
            #expect(Array(v.payload) == [0x55])
        }
    }

    /// RFC 8285 4.3 example: L=0 (no data), L=1, one padding byte, L=4; length = 3 words.
    @Test func rfc8285TwoByteExampleYieldsZeroLengthAndLongerElements() throws {
        let pkt = hex("90600001 00000000 00000001 10000003 0100 0201bb 00 0304cccccccc 55")
        try parsed(pkt) { v in
            let e = v.extensionElements.map { ($0.id, Array(v.bytes[$0.range])) }
            #expect(e.count == 3)
            #expect(e[0].0 == 1 && e[0].1.isEmpty)
            #expect(e[1].0 == 2 && e[1].1 == [0xBB])
            #expect(e[2].0 == 3 && e[2].1 == [0xCC, 0xCC, 0xCC, 0xCC])
        }
    }

    @Test func oneByteID15StopsParsingTheBlock() throws {
        // Element 1, then ID 15 whose "length" would run past the block: ignored, not an error.
        let pkt = hex("90600001 00000000 00000001 bede0001 10aaff00 55")
        try parsed(pkt) { v in
            let ids = v.extensionElements.map { $0.id }
            #expect(ids == [1])
        }
    }

    @Test func headersRoundTripInBothExtensionForms() throws {
        for form in [RTPExtensionForm.oneByte, .twoByte] {
            let header = RTPHeader(marker: true, payloadType: 111, sequenceNumber: 65535, timestamp: 0xFFFF_FF00,
                                   ssrc: 0xCAFE_BABE, csrcs: [7],
                                   extensions: [RTPHeaderExtension(id: 1, bytes: [0x85]),
                                                RTPHeaderExtension(id: 3, bytes: [1, 2, 3])],
                                   extensionForm: form)
            let bytes = try header.marshalled(payload: [9, 8, 7])
            #expect(bytes.count % 4 == 3)  // header is word-aligned, payload 3 bytes
            let back = try parsed(bytes) { RTPHeader($0) }
            #expect(back == header)
            try parsed(bytes) { v in #expect(Array(v.payload) == [9, 8, 7]) }
        }
    }

    @Test func automaticFormPicksTwoByteOnlyWhenAnElementNeedsIt() throws {
        var header = RTPHeader(payloadType: 96, sequenceNumber: 1, timestamp: 1, ssrc: 1,
                               extensions: [RTPHeaderExtension(id: 2, bytes: [1])])
        let oneByte = try header.marshalled(payload: [])
        #expect(Array(oneByte[12..<14]) == [0xBE, 0xDE])
        header.extensions.append(RTPHeaderExtension(id: 20, bytes: [1, 2]))
        let twoByte = try header.marshalled(payload: [])
        #expect(Array(twoByte[12..<14]) == [0x10, 0x00])
        try parsed(twoByte) { v in #expect(v.extensionElements.map(\.id) == [2, 20]) }
    }

    @Test func marshalIntoASmallBufferThrowsInsteadOfWritingPastIt() {
        let header = RTPHeader(payloadType: 96, sequenceNumber: 1, timestamp: 1, ssrc: 1)
        var small = [UInt8](repeating: 0, count: 11)
        small.withUnsafeMutableBytes { b -> Void in
            #expect(throws: RTPError.bufferTooSmall(needed: 12, available: 11)) { try header.marshal(into: b) }
        }
    }

    @Test func invalidElementsAreRejectedOnWrite() {
        let header = RTPHeader(payloadType: 96, sequenceNumber: 1, timestamp: 1, ssrc: 1,
                               extensions: [RTPHeaderExtension(id: 15, bytes: [1])], extensionForm: .oneByte)
        #expect(throws: RTPError.invalidExtensionElement(id: 15, length: 1)) { try header.marshalled(payload: []) }
    }
}

@Suite struct MalformedRTPPackets {
    @Test func truncatedHeader() {
        #expect(parseError([]) == .truncatedHeader(needed: 12, available: 0))
        #expect(parseError(hex("80600001 00000000 000000")) == .truncatedHeader(needed: 12, available: 11))
    }

    @Test func badVersion() {
        #expect(parseError(hex("40600001 00000000 00000001")) == .badVersion(1))
        #expect(parseError(hex("00600001 00000000 00000001")) == .badVersion(0))
    }

    @Test func paddingLongerThanThePacket() {
        #expect(parseError(hex("a0600001 00000000 00000001 0102 05")) == .badPadding(count: 5, available: 3))
        #expect(parseError(hex("a0600001 00000000 00000001 0102 00")) == .badPadding(count: 0, available: 3))
        // Padding may not eat into the header.
        #expect(parseError(hex("a0600001 00000000 0000000d")) == .badPadding(count: 13, available: 0))
    }

    @Test func csrcCountPastTheEnd() {
        #expect(parseError(hex("83600001 00000000 00000001 aaaaaaaa")) == .csrcPastEnd(count: 3, available: 4))
    }

    @Test func extensionLengthPastTheEnd() {
        #expect(parseError(hex("90600001 00000000 00000001 bede")) == .extensionPastEnd(needed: 16, available: 14))
        #expect(parseError(hex("90600001 00000000 00000001 bede0002 10aa0000")) == .extensionPastEnd(needed: 24, available: 20))
    }

    @Test func extensionElementPastItsBlock() {
        #expect(parseError(hex("90600001 00000000 00000001 bede0001 00003faa")) == .extensionElementPastEnd(id: 3))
        #expect(parseError(hex("90600001 00000000 00000001 10000001 0005aaaa")) == .extensionElementPastEnd(id: 5))
    }

    /// Every truncation and every single-bit flip of a valid packet either parses or throws.
    @Test func everyTruncationAndBitFlipIsHandledWithoutTrapping() {
        let good = hex("b1e0698f d9c293da 1c642782 aaaaaaaa bede0002 10aa21bb bb000000 9836be889e 000002")
        #expect(parseError(good) == nil)
        var outcomes = 0
        for n in 0...good.count {
            _ = parseError(Array(good[0..<n]))
            outcomes += 1
        }
        for i in 0..<(good.count * 8) {
            var b = good
            b[i / 8] ^= 1 << UInt8(i % 8)
            if let view = try? parsed(b, { v in (v.payloadRange, v.extensionElements.map(\.range)) }) {
                #expect(view.0.upperBound <= b.count)
                #expect(view.1.allSatisfy { $0.upperBound <= b.count })
            }
            outcomes += 1
        }
        #expect(outcomes == good.count + 1 + good.count * 8)
    }
}
