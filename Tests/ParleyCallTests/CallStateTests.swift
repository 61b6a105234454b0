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

@Test func eventHubBoundsAStalledSubscriber() async {
    let hub = CallEventHub(bufferLimit: 10)
    let s = hub.events()
    for i in 0..<1000 { hub.publish(CallEvent(time: Double(i), participant: "x", kind: .joined)) }
    hub.finish()
    var got: [Double] = []
    for await e in s { got.append(e.time) }
    #expect(got == (990..<1000).map(Double.init))
}
