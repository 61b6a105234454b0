import Testing
import ParleyCore

@Suite struct OpusTOCTests {
    func parse(_ bytes: [UInt8]) throws(OpusPacketError) -> OpusTOC {
        let r: Result<OpusTOC, OpusPacketError> = bytes.withUnsafeBytes { b in
            do throws(OpusPacketError) { return .success(try OpusTOC(parsing: b)) } catch { return .failure(error) }
        }
        return try r.get()
    }

    @Test func frameCountAndDurationFollowTheTOC() throws {
        let one = try parse([31 << 3 | 4])                 // CELT FB 20 ms, stereo, code 0
        #expect(one.frameCount == 1 && one.length == 1 && one.channels == 2)
        #expect(one.configuration == 31 && one.totalSamplesAt48k == 960)
        #expect(try parse([1 << 3 | 1]).frameCount == 2)   // two equal frames
        #expect(try parse([1 << 3 | 2, 5]).frameCount == 2) // two frames, first length coded
        let three = try parse([16 << 3 | 3, 0x85])          // CELT 2.5 ms, code 3 VBR, M = 5
        #expect(three.frameCount == 5 && three.length == 2 && three.totalSamplesAt48k == 600)
        #expect(OpusTOC.samplesPerFrameAt48k(toc: 3 << 3) == 2880)
        #expect(OpusTOC.samplesPerFrameAt48k(toc: 13 << 3) == 960)
    }

    @Test func malformedTOCsThrowOneErrorType() throws {
        #expect(throws: OpusPacketError(.empty, "empty packet (needs at least the TOC byte)")) { try parse([]) }
        for bad: [UInt8] in [[0x02], [0x03], [0x03, 0x00], [0x1B, 0x03]] {
            #expect(throws: OpusPacketError.self) { try parse(bad) }
            if case .failure(let e) = Result(catching: { () throws(OpusPacketError) in try parse(bad) }) {
                #expect(e.kind == .malformed, "\(bad)")
            }
        }
        #expect(try parse([0x1B, 0x02]).totalSamplesAt48k == 5_760)  // 2 x 60 ms: the limit itself
    }
}
