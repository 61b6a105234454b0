import Testing
import ParleyVoice

/// Drives an ActiveSpeakerDetector with per-participant speech intervals (seconds), 10 ms frames,
/// deciding every 100 ms; returns the dominant speaker at each decision and the events.
struct Meeting {
    var speech: [String: [(Double, Double)]]
    var joins: [String: Double] = [:]
    var leaves: [String: Double] = [:]
    var duration: Double

    func run() -> (timeline: [(Double, String?)], events: [ActiveSpeakerEvent<String>]) {
        var d = ActiveSpeakerDetector<String>()
        var timeline: [(Double, String?)] = []
        var events: [ActiveSpeakerEvent<String>] = []
        let names = speech.keys.sorted()
        for i in 0..<Int((duration * 100).rounded()) {
            let t = Double(i) * 0.01
            for n in names {
                if (joins[n] ?? 0) <= t + 1e-9 && (leaves[n] ?? .infinity) > t + 1e-9 { d.join(n) }
                if let l = leaves[n], abs(l - t) < 0.005, let e = d.leave(n, at: t) { events.append(e) }
                let on = speech[n]!.contains { t >= $0.0 - 1e-9 && t < $0.1 - 1e-9 }
                d.update(n, isSpeech: on, at: t)
            }
            if i % 10 == 9 {
                if let e = d.decide(at: t + 0.01) { events.append(e) }
                timeline.append((t + 0.01, d.dominant))
            }
        }
        return (timeline, events)
    }
}

func dominant(at time: Double, in timeline: [(Double, String?)]) -> String? {
    timeline.last { $0.0 <= time + 1e-9 }?.1
}

@Test func aSingleSpeakerTakesTheFloorWithinHalfASecond() {
    let r = Meeting(speech: ["A": [(1, 5)], "B": []], duration: 6).run()
    #expect(dominant(at: 0.9, in: r.timeline) == nil)
    #expect(dominant(at: 1.5, in: r.timeline) == "A")
    #expect(dominant(at: 4.9, in: r.timeline) == "A")
}

@Test func aBackChannelDoesNotStealTheFloor() {
    let r = Meeting(speech: ["A": [(0, 2.5), (2.9, 6)], "B": [(2.5, 2.9)]], duration: 6).run()
    #expect(r.timeline.filter { $0.0 > 1 }.allSatisfy { $0.1 == "A" })
}

@Test func aSpeakerWhoKeepsTalkingKeepsTheFloorThroughAnOverlap() {
    let r = Meeting(speech: ["A": [(0, 6)], "B": [(3, 4.2)]], duration: 6).run()
    #expect(r.timeline.filter { $0.0 > 1 }.allSatisfy { $0.1 == "A" })
}

@Test func aRealTurnChangeMovesTheFloorWithinASecond() {
    let r = Meeting(speech: ["A": [(0, 3)], "B": [(3.3, 7)]], duration: 7).run()
    #expect(dominant(at: 2.9, in: r.timeline) == "A")
    #expect(dominant(at: 4.3, in: r.timeline) == "B")
    #expect(r.events.map(\.dominant) == ["A", "B"])
}

@Test func aDoorSlamAndKeyboardClicksNeverTakeTheFloor() {
    // C: a 150 ms "door slam" flagged as speech; D: 30 ms keystrokes every 150 ms for 3 s.
    let keys = stride(from: 1.0, to: 4.0, by: 0.15).map { ($0, $0 + 0.03) }
    let r = Meeting(speech: ["A": [(0, 1.5)], "C": [(3.0, 3.15)], "D": keys], duration: 8).run()
    #expect(r.timeline.allSatisfy { $0.1 != "C" && $0.1 != "D" })
}

@Test func nobodyAfterTheSilenceTimeout() {
    let r = Meeting(speech: ["A": [(0, 2)]], duration: 6).run()
    #expect(dominant(at: 3.9, in: r.timeline) == "A")
    #expect(dominant(at: 4.1, in: r.timeline) == nil)
    #expect(r.events.last?.reason == .silenceTimeout)
}

@Test func joinAndLeaveMidSpeech() {
    // A leaves while talking; B joins while already talking and takes the free floor.
    let r = Meeting(speech: ["A": [(0, 5)], "B": [(2, 6)]], joins: ["B": 2.5], leaves: ["A": 3.0], duration: 6).run()
    #expect(dominant(at: 2.9, in: r.timeline) == "A")
    #expect(r.events.contains { $0.reason == .left && $0.previous == "A" })
    #expect(dominant(at: 3.6, in: r.timeline) == "B")
}

@Test func decisionsAreDeterministic() {
    let m = Meeting(speech: ["A": [(0, 2), (4, 5)], "B": [(1.8, 3.5)], "C": [(3.4, 4.6)]], duration: 6)
    let a = m.run(), b = m.run()
    #expect(a.events == b.events)
}
