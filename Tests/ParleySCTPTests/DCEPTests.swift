import Testing
import ParleySCTP

@Suite struct DCEPTests {
    @Test func openRoundTripsForEveryChannelType() throws {
        let reliabilities: [DataChannelReliability] = [.reliable, .maxRetransmits(3), .maxLifetime(milliseconds: 1500)]
        for ordered in [true, false] {
            for reliability in reliabilities {
                let p = DataChannelParameters(label: "chat ✉️", protocol: "json", ordered: ordered, reliability: reliability, priority: 512)
                let bytes = try DCEPMessage.open(p).serialized()
                #expect(bytes.count == 12 + Array("chat ✉️".utf8).count + 4)
                #expect(try DCEPMessage(parsing: bytes) == .open(p))
            }
        }
    }

    @Test func openIsLaidOutAsRFC8832Says() throws {
        let p = DataChannelParameters(label: "ab", protocol: "x", ordered: false, reliability: .maxRetransmits(0x0102_0304), priority: 256)
        #expect(try DCEPMessage.open(p).serialized() == [0x03, 0x81, 0x01, 0x00, 0x01, 0x02, 0x03, 0x04, 0x00, 0x02, 0x00, 0x01,
                                                         UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "x")])
        let timed = DataChannelParameters(label: "", ordered: true, reliability: .maxLifetime(milliseconds: 100))
        #expect(try DCEPMessage.open(timed).serialized()[1] == 0x02)
        #expect(try DCEPMessage.ack.serialized() == [0x02])
        #expect(try DCEPMessage(parsing: [0x02]) == .ack)
    }

    @Test func malformedMessagesAreTypedErrors() throws {
        #expect(throws: DCEPError.empty) { try DCEPMessage(parsing: []) }
        #expect(throws: DCEPError.unknownMessageType(0x07)) { try DCEPMessage(parsing: [0x07]) }
        #expect(throws: DCEPError.trailingBytes(1)) { try DCEPMessage(parsing: [0x02, 0x00]) }
        #expect(throws: DCEPError.truncated(needed: 12, have: 3)) { try DCEPMessage(parsing: [0x03, 0x00, 0x00]) }
        let header: [UInt8] = [0x03, 0x00, 0x01, 0x00, 0, 0, 0, 0, 0x00, 0x02, 0x00, 0x00]
        #expect(throws: DCEPError.truncated(needed: 14, have: 13)) { try DCEPMessage(parsing: header + [0x61]) }
        #expect(throws: DCEPError.trailingBytes(1)) { try DCEPMessage(parsing: header + [0x61, 0x62, 0x63]) }
        #expect(throws: DCEPError.invalidUTF8(field: "label")) { try DCEPMessage(parsing: header + [0xC3, 0x28]) }
        var badType = header + [0x61, 0x62]
        badType[1] = 0x03
        #expect(throws: DCEPError.unknownChannelType(0x03)) { try DCEPMessage(parsing: badType) }
        let long = DataChannelParameters(label: String(repeating: "a", count: 65_536))
        #expect(throws: DCEPError.fieldTooLong(field: "label")) { try DCEPMessage.open(long).serialized() }
    }
}
