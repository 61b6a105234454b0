import Testing
import ParleyRTP

@Suite struct RTPSequenceValidatorTests {
    typealias V = RTPSequenceValidator

    func feed(_ v: inout V, _ seqs: [UInt16]) -> [V.Verdict] { seqs.map { v.validate($0) } }

    @Test func rfcDefaults() {
        #expect(V.maxDropout == 3_000 && V.maxMisorder == 100 && V.minSequential == 2)
        let v = V()
        #expect(v.maxDropout == 3_000 && v.maxMisorder == 100 && v.probationPackets == 2)
        #expect(v.restartConfirmation == .nextInSequence && !v.hasStarted)
    }

    @Test func probationEndsAfterTwoSequentialPackets() {
        var v = V()
        #expect(feed(&v, [100, 101, 102]) == [.probation, .started, .inOrder(advance: 1)])
        #expect(v.baseSequence == 101 && v.highestSequence == 102)
        // Out of sequence during probation starts it over.
        var w = V()
        #expect(feed(&w, [100, 200, 300, 301, 302]) == [.probation, .probation, .probation, .started, .inOrder(advance: 1)])
        #expect(w.baseSequence == 301)
        // Without probation the first packet starts the source.
        var x = V(probationPackets: 0)
        #expect(feed(&x, [7, 9]) == [.started, .inOrder(advance: 2)])
    }

    @Test func wrapCountsCycles() {
        var v = V(probationPackets: 0)
        #expect(feed(&v, [65_534, 65_535, 0, 1]) == [.started, .inOrder(advance: 1), .inOrder(advance: 1), .inOrder(advance: 1)])
        #expect(v.cycles == 65_536 && v.highestSequence == 1 && v.extendedHighestSequence == 65_537)
        // A packet from before the wrap is misordered and does not undo it.
        #expect(v.validate(65_535) == .misordered(behind: 2))
        #expect(v.cycles == 65_536 && v.highestSequence == 1)
    }

    @Test func misorderAndDuplicate() {
        var v = V(probationPackets: 0)
        _ = feed(&v, [1_000, 1_001, 1_005])
        #expect(v.validate(1_005) == .inOrder(advance: 0))      // the highest again: a duplicate
        #expect(v.validate(1_003) == .misordered(behind: 2))
        #expect(v.validate(1_003) == .misordered(behind: 2))    // a duplicate behind: the caller's bitmap tells
        #expect(v.highestSequence == 1_005)
        #expect(V.Verdict.misordered(behind: 2).offset == -2 && V.Verdict.inOrder(advance: 3).offset == 3)
        #expect(V.Verdict.jump.offset == nil)
        // RFC 3550 A.1 bounds: up to MAX_MISORDER - 1 behind is misordered, MAX_MISORDER behind a jump;
        // a step of MAX_DROPOUT - 1 is in order, MAX_DROPOUT a jump.
        #expect(v.validate(1_005 - 99) == .misordered(behind: 99))
        #expect(v.validate(1_005 - 100) == .jump)
        #expect(v.validate(1_005 + 2_999) == .inOrder(advance: 2_999))
        #expect(v.validate(4_004 + 3_000) == .jump)
    }

    @Test func bigJumpThenRestart() {
        var v = V()
        _ = feed(&v, [10, 11, 12])
        #expect(v.validate(30_000) == .jump)
        #expect(v.validate(13) == .inOrder(advance: 1))         // the old stream goes on
        #expect(v.validate(40_000) == .jump)                    // another stray packet
        #expect(v.validate(40_001) == .restarted)               // confirmed by its successor
        #expect(v.baseSequence == 40_001 && v.highestSequence == 40_001 && v.cycles == 0)
        #expect(v.validate(40_002) == .inOrder(advance: 1))
        #expect(v.validate(13) == .jump)                        // the old stream is now the stray one
    }

    @Test func restartConfirmationModes() {
        // RFC 3550 A.1: valid packets between the jump and its successor do not cancel it.
        var rfc = V(probationPackets: 0)
        #expect(feed(&rfc, [10, 30_000, 11, 30_001]) == [.started, .jump, .inOrder(advance: 1), .restarted])
        // Next arrival: they do; the successor is then one more jump.
        var strict = V(probationPackets: 0, restartConfirmation: .nextArrival)
        #expect(feed(&strict, [10, 30_000, 11, 30_001, 30_002]) == [.started, .jump, .inOrder(advance: 1), .jump, .restarted])
        // The jump's successor across the 16-bit wrap confirms it too.
        var wrap = V(probationPackets: 0)
        #expect(feed(&wrap, [10_000, 65_535, 0]) == [.started, .jump, .restarted])
    }

    @Test func configurableWindow() {
        var v = V(maxDropout: 10, maxMisorder: 5, probationPackets: 0)
        _ = v.validate(100)
        #expect(v.validate(109) == .inOrder(advance: 9))
        #expect(v.validate(119) == .jump)
        #expect(v.validate(105) == .misordered(behind: 4))
        #expect(v.validate(104) == .jump)
    }
}
