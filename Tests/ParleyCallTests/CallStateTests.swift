import Testing
@testable import ParleyCall

private func talk(_ kind: String, _ t: Double, muted: Bool = false) -> TalkingChange {
    TalkingChange(levelDbov: -20, reason: kind == "start" ? .speechOnset : .hangoverElapsed, whileMuted: muted,
                  segmentTime: t, probability: 0.9)
}

@Test func callStateFoldsTalkTimeTurnsMuteAndDominant() {
    var state = CallState()
    let events: [CallEvent] = [
        CallEvent(time: 0, participant: "alice", kind: .joined),
        CallEvent(time: 0, participant: "bob", kind: .joined),
        CallEvent(time: 1.1, participant: "alice", kind: .talkingStarted(talk("start", 1.0))),
        CallEvent(time: 1.5, participant: "alice", kind: .dominantSpeakerChanged(previous: nil)),
        CallEvent(time: 3.4, participant: "alice", kind: .talkingStopped(talk("stop", 3.0))),
        CallEvent(time: 4.0, participant: "bob", kind: .muted),
        CallEvent(time: 4.2, participant: "bob", kind: .talkingStarted(talk("start", 4.1, muted: true))),
        CallEvent(time: 5.0, participant: "alice", kind: .talkingStarted(talk("start", 4.9))),
    ]
    for e in events { state.apply(e) }
    #expect(state.dominant == "alice")
    let alice = state["alice"]!
    #expect(alice.turns == 2 && alice.talking)
    #expect(abs(alice.talkTime(at: 6.0) - (2.0 + 1.1)) < 1e-9)
    let bob = state["bob"]!
    #expect(bob.muted && bob.talkingWhileMuted && !bob.talking && bob.turns == 0)
    state.apply(CallEvent(time: 6, participant: "alice", kind: .left))
    #expect(state.dominant == nil)
    #expect(state.present.map(\.id) == ["bob"])
    #expect(abs(state["alice"]!.completedTalkTime - 3.1) < 1e-9)
}

@Test func eventHubDeliversEveryEventInOrderToEachSubscriber() async {
    let hub = CallEventHub()
    let a = hub.events()
    let b = hub.events()
    for i in 0..<100 { hub.publish(CallEvent(time: Double(i), participant: "p\(i % 3)", kind: .joined)) }
    hub.finish()
    var ta: [Double] = []
    for await e in a { ta.append(e.time) }
    var tb: [Double] = []
    for await e in b { tb.append(e.time) }
    #expect(ta == (0..<100).map(Double.init))
    #expect(tb == ta)
}

private func stats(_ played: Int) -> ParticipantAudioStatistics {
    var s = ParticipantAudioStatistics()
    s.framesPlayed = played
    return s
}

/// A subscriber that reads nothing while a long call publishes: statistics and dominant
/// changes coalesce, talking pairs are removed whole beyond the limit, and every join, mute
/// and unpaired edge arrives, so a UI folding what it gets ends in the hub's state.
@Test func eventHubCoalescesForAStalledSubscriberWithoutLosingATalkingEdge() async {
    let hub = CallEventHub(bufferLimit: 50)
    let stalled = hub.events()
    let people = ["alice", "bob", "carol"]
    var t = 0.0
    for p in people { hub.publish(CallEvent(time: t, participant: p, kind: .joined)) }
    for turn in 0..<300 {
        let who = people[turn % 3]
        t += 1
        hub.publish(CallEvent(time: t, participant: who, kind: .talkingStarted(talk("start", t))))
        hub.publish(CallEvent(time: t, participant: who, kind: .dominantSpeakerChanged(previous: turn == 0 ? nil : people[(turn + 2) % 3])))
        for p in people { hub.publish(CallEvent(time: t + 0.5, participant: p, kind: .statistics(stats(turn)))) }
        hub.publish(CallEvent(time: t + 0.9, participant: who, kind: .talkingStopped(talk("stop", t + 0.9))))
    }
    hub.publish(CallEvent(time: t + 1, participant: "bob", kind: .muted))
    hub.publish(CallEvent(time: t + 2, participant: "carol", kind: .talkingStarted(talk("start", t + 2))))
    #expect(stalled.backlog <= 50)
    #expect(stalled.coalescedTalks > 250)
    hub.finish()

    var got: [CallEvent] = []
    for await e in stalled { got.append(e) }
    var folded = CallState()
    for e in got { folded.apply(e) }
    let truth = hub.state
    #expect(folded.dominant == truth.dominant)
    for p in people {
        #expect(folded[p]?.present == true && folded[p]?.talking == truth[p]?.talking && folded[p]?.muted == truth[p]?.muted)
    }
    #expect(folded["carol"]?.talking == true && folded["bob"]?.muted == true)
    // Talking edges still alternate per participant, starting with a start.
    for p in people {
        let edges = got.filter { $0.participant == p && $0.isTalkingEdge }
        for (i, e) in edges.enumerated() {
            if case .talkingStarted = e.kind { #expect(i % 2 == 0, "\(p): a start at \(i)") } else { #expect(i % 2 == 1, "\(p): a stop at \(i)") }
        }
        // One statistics event per participant, the newest.
        let s = got.compactMap { e -> ParticipantAudioStatistics? in
            if case .statistics(let x) = e.kind, e.participant == p { return x }
            return nil
        }
        #expect(s.map(\.framesPlayed) == [299])
    }
    // Exactly one dominant change is left: to the last speaker.
    let dominantChanges = got.filter { if case .dominantSpeakerChanged = $0.kind { return true }; return false }
    #expect(dominantChanges.count == 1 && dominantChanges.first?.participant == truth.dominant)
}

/// A subscriber that keeps up sees every event, statistics included, uncoalesced.
@Test func eventHubDeliversToAWaitingSubscriberAsPublished() async {
    let hub = CallEventHub(bufferLimit: 4)
    let s = hub.events()
    let reader = Task {
        var n = 0
        for await _ in s { n += 1 }
        return n
    }
    for i in 0..<200 {
        hub.publish(CallEvent(time: Double(i), participant: "x", kind: .statistics(stats(i))))
        // Let the reader take each event before the next.
        while s.backlog > 0 { await Task.yield() }
        try? await Task.sleep(nanoseconds: 200_000)
    }
    hub.finish()
    let n = await reader.value
    #expect(n == 200, "a reader that keeps up gets every statistics event: \(n)")
}

@Test func cancellingTheReaderEndsItsSubscription() async {
    let hub = CallEventHub()
    let s = hub.events()
    let reader = Task {
        var n = 0
        for await _ in s { n += 1 }
        return n
    }
    hub.publish(CallEvent(time: 0, participant: "x", kind: .joined))
    try? await Task.sleep(nanoseconds: 20_000_000)
    reader.cancel()
    let n = await reader.value
    #expect(n <= 1)
    hub.publish(CallEvent(time: 1, participant: "x", kind: .left))   // to a cancelled subscriber: dropped
    #expect(hub.state["x"]?.present == false)
}
