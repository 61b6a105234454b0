import Foundation
import Testing
import ParleyJitter
@testable import ParleyCall
import ParleySimulation

// The events of fixed rooms, recorded in Fixtures/room-events.txt: a room must keep giving the same
// events (every kind, statistics included, in order) for the same participants, network and seed.
// PARLEY_RECORD_ROOM_EVENTS=1 rewrites the file instead of comparing.

private let here = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
private let samples = here.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("SampleMedia")
private let fixture = here.appendingPathComponent("Fixtures/room-events.txt")

private func conversation(seconds: Double) throws -> [RoomParticipant] {
    let dir = samples.appendingPathComponent("conversation")
    let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".wav") }.sorted()
    return try files.map { f in
        var p = try RoomParticipant.load(path: dir.appendingPathComponent(f).path, name: String(f.dropLast(4)))
        p.samples = Array(p.samples.prefix(Int(seconds * Double(p.sampleRate))))
        return p
    }
}

/// The rooms of the fixture: a lossy jittery network, the senders' V bits, a muted turn with
/// drift, and a participant with video; all but the V-bit room with the receiver's own VAD.
private func scenarios() throws -> [(name: String, participants: [RoomParticipant], configuration: RoomConfiguration)] {
    var out: [(String, [RoomParticipant], RoomConfiguration)] = []
    func local(_ network: NetworkScenario, seed: UInt64) -> RoomConfiguration {
        var c = RoomConfiguration(network: network, seed: seed)
        c.receive.voiceActivitySource = .local
        return c
    }
    out.append(("lossy", try conversation(seconds: 12), local(try .room(lossPercent: 8, jitterMs: 25), seed: 3)))
    var senderBits = RoomConfiguration(network: try .room(lossPercent: 3, jitterMs: 10), seed: 9)
    senderBits.receive.voiceActivitySource = .senderAudioLevel
    out.append(("sender-bits", try conversation(seconds: 10), senderBits))
    var muted = try conversation(seconds: 9)
    muted[0].mutedIntervals = [3.0...7.0]
    muted[1].driftPpm = 20_000
    muted[2].driftPpm = -15_000
    out.append(("muted-drift", muted, local(try .room(lossPercent: 0, jitterMs: 5), seed: 2)))
    var video = try conversation(seconds: 5)
    try video[1].attachVideo(path: samples.appendingPathComponent("video/sample.y4m").path)
    out.append(("video", video, local(try .room(lossPercent: 3, jitterMs: 20), seed: 5)))
    return out
}

private func eventLines() throws -> [String] {
    var lines: [String] = []
    for s in try scenarios() {
        let room = try CallRoom(participants: s.participants, configuration: s.configuration, clock: VirtualMediaClock())
        var events: [String] = []
        room.onEvent = { events.append(String(describing: $0)) }
        try room.run()
        lines.append("# \(s.name)")
        lines += events
    }
    return lines
}

@Test func roomGivesTheRecordedEventsForTheSameSeed() throws {
    let lines = try eventLines()
    if ProcessInfo.processInfo.environment["PARLEY_RECORD_ROOM_EVENTS"] == "1" {
        try (lines.joined(separator: "\n") + "\n").write(to: fixture, atomically: true, encoding: .utf8)
        return
    }
    let recorded = try String(contentsOf: fixture, encoding: .utf8).split(separator: "\n").map(String.init)
    #expect(lines.count == recorded.count, "\(lines.count) events now, \(recorded.count) recorded")
    for (i, (a, b)) in zip(lines, recorded).enumerated() where a != b {
        Issue.record("event \(i) differs:\n now:      \(a)\n recorded: \(b)")
        break
    }
}
