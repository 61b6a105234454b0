import Testing
@testable import ParleyDetect

private func seg(_ s: Double, _ e: Double) -> TalkSegment { try! TalkSegment(start: s, end: e) }

@Test func aSegmentEndingBeforeItStartsOrUnboundedIsATypedError() throws {
    #expect(throws: TalkSegmentError.invalidBounds(start: 2, end: 1)) { try TalkSegment(start: 2, end: 1) }
    #expect(throws: TalkSegmentError.self) { try TalkSegment(start: .nan, end: 1) }
    #expect(throws: TalkSegmentError.self) { try TalkSegment(start: 0, end: .infinity) }
    #expect(try TalkSegment(start: 1, end: 1).duration == 0)
}

@Test func talkTimeShareTurnsAndLongestTurnAddUp() {
    let st = MeetingStatistics(participants: [("a", [seg(0, 4), seg(10, 12)]),
                                              ("b", [seg(5, 9)])], duration: 20)
    let a = st.participants[0], b = st.participants[1]
    #expect(a.talkTime == 6 && b.talkTime == 4)
    #expect(a.turns == 2 && b.turns == 1)
    #expect(a.longestTurn == 4 && b.longestTurn == 4)
    #expect(abs(a.shareOfTalk - 0.6) < 1e-12 && abs(b.shareOfTalk - 0.4) < 1e-12)
    #expect(abs(a.fractionOfMeeting - 0.3) < 1e-12)
    #expect(st.overlapTime == 0 && a.overlapTime == 0)
    #expect(st.silenceTime == 10)
    #expect(st.interruptions.isEmpty)
}

@Test func overlapIsCountedPerParticipantAndOnceForTheMeeting() {
    // a 0-10, b 8-12, c 9-11: two or more talk from 8 to 11.
    let st = MeetingStatistics(participants: [("a", [seg(0, 10)]), ("b", [seg(8, 12)]), ("c", [seg(9, 11)])],
                               duration: 12)
    #expect(st.overlapTime == 3)
    #expect(st.participants[0].overlapTime == 2)   // 8-10
    #expect(st.participants[1].overlapTime == 3)   // 8-11
    #expect(st.participants[2].overlapTime == 2)   // 9-11
    #expect(st.silenceTime == 0)
}

@Test func takingTheFloorIsAnInterruptionButABackChannelIsNot() {
    // b cuts in on a at 8, a stops at 9, b goes on to 14: an interruption.
    // c says "yeah" at 2-2.5 during a's turn and a keeps talking: not one.
    // b starts at 20 after a stopped at 19: not one.
    let st = MeetingStatistics(participants: [("a", [seg(0, 9), seg(15, 19)]),
                                              ("b", [seg(8, 14), seg(20, 25)]),
                                              ("c", [seg(2, 2.5)])], duration: 30)
    #expect(st.interruptions == [Interruption(interrupter: 1, interrupted: 0, time: 8, interruptedStopTime: 9)])
    #expect(st.participants[1].interruptionsMade == 1)
    #expect(st.participants[0].timesInterrupted == 1)
    #expect(st.participants[2].interruptionsMade == 0)
}

@Test func anInterruptedSpeakerWhoGoesOnLongerThanTheWindowIsNotInterrupted() {
    // b starts at 5 during a's turn, a goes on until 9 (4 s > 3 s window), b stops at 10.
    let st = MeetingStatistics(participants: [("a", [seg(0, 9)]), ("b", [seg(5, 10)])], duration: 10)
    #expect(st.interruptions.isEmpty)
    let wide = MeetingStatistics(participants: [("a", [seg(0, 9)]), ("b", [seg(5, 10)])], duration: 10,
                                 interruptionWindow: 5)
    #expect(wide.interruptions.count == 1)
}

@Test func segmentsAreSortedMergedAndClippedToTheMeeting() {
    let merged = MeetingStatistics.normalized([seg(5, 7), seg(-1, 2), seg(1, 3), seg(6, 12), seg(4, 4)], clippedTo: 10)
    #expect(merged == [seg(0, 3), seg(5, 10)])
    let st = MeetingStatistics(participants: [("a", [seg(5, 7), seg(6, 12)])], duration: 10)
    #expect(st.participants[0].talkTime == 5 && st.participants[0].turns == 1)
}

@Test func aMeetingWithoutSpeechHasZeroSharesAndIsAllSilence() {
    let st = MeetingStatistics(participants: [("a", []), ("b", [])], duration: 60)
    #expect(st.participants.allSatisfy { $0.talkTime == 0 && $0.shareOfTalk == 0 && $0.turns == 0 && $0.longestTurn == 0 })
    #expect(st.silenceTime == 60 && st.overlapTime == 0)
    let empty = MeetingStatistics(participants: [], duration: 0)
    #expect(empty.participants.isEmpty && empty.silenceTime == 0)
}
