import ParleyCodecs
import Foundation
import Testing
import ParleyJitter
@testable import ParleyCall
import ParleyDetect
@testable import ParleySimulation

private let conversation = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia/conversation")

private func loadConversation(driftPpm: [Double] = []) throws -> [RoomParticipant] {
    let files = try FileManager.default.contentsOfDirectory(atPath: conversation.path).filter { $0.hasSuffix(".wav") }.sorted()
    return try files.enumerated().map { i, f in
        try RoomParticipant.load(path: conversation.appendingPathComponent(f).path,
                                 name: String(f.dropLast(4)), driftPpm: i < driftPpm.count ? driftPpm[i] : 0)
    }
}

/// Runs a room on the virtual clock; returns its events (statistics excluded) and reports.
private func runRoom(_ participants: [RoomParticipant], _ configuration: RoomConfiguration)
    throws -> (events: [CallEvent], reports: [RoomParticipantReport]) {
    let room = try CallRoom(participants: participants, configuration: configuration, clock: VirtualMediaClock())
    var events: [CallEvent] = []
    room.onEvent = { e in if case .statistics = e.kind {} else { events.append(e) } }
    try room.run()
    return (events, room.reports)
}

/// Talk onsets (segment starts) per participant.
private func onsets(_ events: [CallEvent]) -> [String: [Double]] {
    var out: [String: [Double]] = [:]
    for e in events {
        if case .talkingStarted(let c) = e.kind, !c.whileMuted, let p = e.participant { out[p, default: []].append(c.segmentTime) }
    }
    return out
}

/// The offline detector (what `parley detect --meeting` runs) on the clean samples.
private func offlineOnsets(_ participants: [RoomParticipant]) throws -> [String: [Double]] {
    var out: [String: [Double]] = [:]
    for p in participants {
        var tracker = try ParticipantTalkTracker(sampleRate: p.sampleRate)
        var recorder = TalkSegmentRecorder()
        let floats = p.samples.map { Float($0) / 32768 }
        floats.withUnsafeBufferPointer { b in tracker.process(b) { recorder.record($0) } }
        tracker.finish { recorder.record($0) }
        out[p.name] = recorder.segments.map(\.start)
    }
    return out
}

/// Both receive-side sources of talking: Parley's VAD on the decoded audio of every stream, and
/// the senders' VAD carried in the RFC 6464 V bits.
@Test(arguments: [VoiceActivitySource.local, .senderAudioLevel])
func roomOverALossyJitteryNetworkFindsTheSameTurnsAsOfflineDetection(source: VoiceActivitySource) throws {
    let participants = try loadConversation()
    let reference = try offlineOnsets(participants)
    #expect(reference.values.map(\.count).reduce(0, +) >= 3, "the conversation should have turns to find")
    var config = RoomConfiguration(network: try .room(lossPercent: 5, jitterMs: 30), seed: 7)
    config.receive.voiceActivitySource = source
    let (events, reports) = try runRoom(participants, config)
    let live = onsets(events)
    for (name, expected) in reference {
        let got = live[name] ?? []
        for t in expected {
            let nearest = got.map { abs($0 - t) }.min() ?? .infinity
            #expect(nearest <= 0.1, "\(name): offline onset at \(t) s, room onsets \(got)")
        }
        #expect(got.count == expected.count, "\(name): room \(got) vs offline \(expected)")
    }
    for r in reports {
        #expect(r.audio.isBalanced, "\(r.name): \(r.audio)")
        #expect(r.audio.framesPending == 0)
        #expect(r.audio.lossFraction > 0.01 && r.audio.lossFraction < 0.12)
    }
    // Membership: everyone joined at 0 and left once.
    #expect(events.filter { $0.kind == .joined }.count == participants.count)
    #expect(events.filter { $0.kind == .left }.count == participants.count)
}

@Test func roomIsDeterministicForASeedAndDependsOnIt() throws {
    let participants = try loadConversation().map { p in
        var q = p
        q.samples = Array(q.samples.prefix(16_000 * 8))
        return q
    }
    let a = try runRoom(participants, RoomConfiguration(network: try .room(lossPercent: 10, jitterMs: 20), seed: 3))
    let b = try runRoom(participants, RoomConfiguration(network: try .room(lossPercent: 10, jitterMs: 20), seed: 3))
    let c = try runRoom(participants, RoomConfiguration(network: try .room(lossPercent: 10, jitterMs: 20), seed: 4))
    #expect(a.events == b.events)
    #expect(a.reports.map(\.audio) == b.reports.map(\.audio))
    #expect(a.reports.map(\.audio) != c.reports.map(\.audio))
}

@Test func shortSoakWithBurstLossSpikesAndDriftAccountsForEveryFrame() throws {
    var network = try NetworkScenario.room(lossPercent: 0, jitterMs: 10)
    network.loss = try GilbertElliott.bursty(meanLoss: 0.10, meanBurst: 3)
    network.spikesPerSecond = 0.05
    network.spikeHeightMs = 300
    let base = try loadConversation()
    var participants = base
    participants.append(base[0])
    participants[3].name = "fourth"
    for (i, d) in [25_000.0, -25_000, 10_000, -10_000].enumerated() { participants[i].driftPpm = d }
    let (_, reports) = try runRoom(participants, RoomConfiguration(network: network, seed: 11, duration: 30))
    for (i, r) in reports.enumerated() {
        #expect(r.audio.isBalanced, "\(r.name): \(r.audio)")
        #expect(r.audio.framesPending == 0)
        #expect(r.audio.framesSent > 1_400)
        #expect(r.audio.lossFraction > 0.05 && r.audio.lossFraction < 0.16, "\(r.name) loss \(r.audio.lossFraction)")
        #expect(r.audio.maximumTargetDelayMs < 1_000, "\(r.name) target \(r.audio.maximumTargetDelayMs) ms")
        let drift = r.measuredDriftPpm ?? .nan
        #expect(abs(drift - participants[i].driftPpm) < 100, "\(r.name) drift \(drift) ppm")
    }
}

@Test func mutedParticipantGetsMuteEventsAndTalkingWhileMuted() throws {
    var participants = try loadConversation()
    let armelle = participants.firstIndex { $0.name == "armelle" }!
    // armelle talks from about 4.4 s: muted over that turn.
    participants[armelle].mutedIntervals = [3.0...7.0]
    let (events, _) = try runRoom(participants.map { p in
        var q = p; q.samples = Array(q.samples.prefix(16_000 * 9)); return q
    }, RoomConfiguration())
    let mine = events.filter { $0.participant == "armelle" }
    let muted = mine.firstIndex { $0.kind == .muted }
    let unmuted = mine.firstIndex { $0.kind == .unmuted }
    #expect(muted != nil && unmuted != nil && muted! < unmuted!)
    #expect(abs(mine[muted!].time - 3.0) < 0.03 && abs(mine[unmuted!].time - 7.0) < 0.03)
    let whileMuted = mine.filter { if case .talkingStarted(let c) = $0.kind { return c.whileMuted } else { return false } }
    #expect(whileMuted.count == 1)
    // The receiver hears silence while muted: no ordinary talking between mute and unmute.
    let heard = mine.filter { if case .talkingStarted(let c) = $0.kind { return !c.whileMuted && c.segmentTime > 3.1 && c.segmentTime < 7 } else { return false } }
    #expect(heard.isEmpty)
    var state = CallState()
    for e in events where e.time < 5.5 { state.apply(e) }
    #expect(state["armelle"]!.muted && state["armelle"]!.talkingWhileMuted)
}

@Test func roomEventsAreAlsoAnAsyncSequence() async throws {
    let participants = try loadConversation().map { p in
        var q = p; q.samples = Array(q.samples.prefix(16_000 * 3)); return q
    }
    let room = try CallRoom(participants: participants, configuration: RoomConfiguration(), clock: VirtualMediaClock())
    let stream = room.events.events()
    var direct: [CallEvent] = []
    room.onEvent = { direct.append($0) }
    try room.run()
    var streamed: [CallEvent] = []
    for await e in stream { streamed.append(e) }
    // Read only after the call, the stream is the coalesced form of the events: every
    // membership and talking edge in order, each participant's newest statistics, and the
    // dominant-speaker changes merged; folded, it gives the same state.
    func isCoalescable(_ e: CallEvent) -> Bool {
        switch e.kind {
        case .statistics, .dominantSpeakerChanged: true
        default: false
        }
    }
    #expect(streamed.filter { !isCoalescable($0) } == direct.filter { !isCoalescable($0) })
    var a = CallState(), b = CallState()
    for e in streamed { a.apply(e) }
    for e in direct { b.apply(e) }
    #expect(a == b && a == room.events.state)
    let lastStatistics = direct.filter { if case .statistics = $0.kind { return $0.time == direct.last?.time } else { return false } }
    #expect(streamed.filter { if case .statistics = $0.kind { return true } else { return false } } == lastStatistics)
}

@Test func receivePipelineCountsMalformedDatagramsAndKeepsPlaying() throws {
    var receiver = try AudioReceivePipeline(decoder: try OpusJitterDecoder(sampleRate: 16_000, channels: 1))
    let junk: [[UInt8]] = [[], [0x80], [0x40, 0x60, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xF8],   // bad version
                           [0x80, 0xC8, 0, 10, 1, 2, 3],                                    // short RTCP SR
                           [0xA0, 0x6F, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xF8, 0xFF]]          // padding too long
    for j in junk { j.withUnsafeBytes { receiver.receive($0, at: .zero) } }
    #expect(receiver.statistics.malformed == junk.count)
    var frames = 0
    for k in 0..<10 {
        receiver.playout(at: MonotonicTime(nanoseconds: Int64(k) * 10_000_000), sink: { frames += $0.count > 0 ? 1 : 0 },
                         onDecision: { _ in }, onTalk: { _ in })
    }
    #expect(frames == 10 && receiver.statistics.bufferingFrames == 10, "\(receiver.statistics)")
}

@Test func simulatedLinkIsDeterministicAppliesLossAndRefusesWhenFull() throws {
    var scenario = try NetworkScenario.room(lossPercent: 20, jitterMs: 15)
    scenario.duplicateProbability = 0.05
    func run(_ seed: UInt64, capacity: Int = 512) throws -> (LinkStatistics, [Int64]) {
        var link = try SimulatedLink(scenario: scenario, seed: seed, capacity: capacity)
        var arrivals: [Int64] = []
        let packet = [UInt8](repeating: 0x80, count: 100)
        for k in 0..<2_000 {
            let t = MonotonicTime(nanoseconds: Int64(k) * 20_000_000)
            _ = packet.withUnsafeBytes { link.send($0, at: t) }
            link.receive(until: t) { _, a in arrivals.append(a.nanoseconds) }
        }
        link.receive(until: MonotonicTime(nanoseconds: .max)) { _, a in arrivals.append(a.nanoseconds) }
        return (link.statistics, arrivals)
    }
    let (a, arrivalsA) = try run(5)
    let (b, arrivalsB) = try run(5)
    #expect(a == b && arrivalsA == arrivalsB)
    #expect(arrivalsA == arrivalsA.sorted())               // delivered in arrival order
    #expect(Double(a.lost) / 2_000 > 0.15 && Double(a.lost) / 2_000 < 0.25)
    #expect(a.duplicated > 40)
    #expect(a.delivered == a.sent - a.lost + a.duplicated)
    let (full, _) = try run(5, capacity: 2)                // 40 ms base delay > 2 packet slots
    #expect(full.refused > 0)
}

@Test func simulatedLinkRejectsSizesOutOfRangeWithoutTrapping() throws {
    let scenario = try NetworkScenario.room(lossPercent: 0, jitterMs: 0)
    #expect(throws: SimulatedLinkError(argument: "capacity", value: 0, reason: "must be positive")) {
        _ = try SimulatedLink(scenario: scenario, seed: 1, capacity: 0)
    }
    #expect(throws: SimulatedLinkError(argument: "maximumDatagram", value: -1, reason: "must be positive")) {
        _ = try SimulatedLink(scenario: scenario, seed: 1, maximumDatagram: -1)
    }
    #expect(throws: SimulatedLinkError(argument: "chunkPackets", value: 0, reason: "must be positive")) {
        _ = try SimulatedLink(scenario: scenario, seed: 1, chunkPackets: 0)
    }
    #expect(throws: SimulatedLinkError.self) {
        _ = try SimulatedLink(scenario: scenario, seed: 1, capacity: Int.max / 2, maximumDatagram: 4)
    }
    #expect("\(SimulatedLinkError(argument: "capacity", value: 0, reason: "must be positive"))"
            == "SimulatedLink: capacity 0 must be positive")
}

@Test func videoParticipantIsShownInLipSyncOverALossyNetwork() throws {
    var participants = try loadConversation().map { p in
        var q = p; q.samples = Array(q.samples.prefix(16_000 * 6)); return q
    }
    let video = conversation.deletingLastPathComponent().appendingPathComponent("video/sample.y4m")
    try participants[1].attachVideo(path: video.path)
    #expect(participants[1].videoFramesPerSecond == 30 && !participants[1].video.isEmpty)
    let (events, reports) = try runRoom(participants, RoomConfiguration(network: try .room(lossPercent: 3, jitterMs: 20), seed: 5))
    let v = try #require(reports[1].video)
    #expect(reports[0].video == nil)
    #expect(v.framesCaptured >= 170 && v.framesEncoded == v.framesCaptured)
    #expect(v.framesSkippedLate == 0)   // the virtual clock is never late
    #expect(v.framesShown > 100, "\(v)")
    #expect(v.framesShownUnsynchronized <= 3)
    #expect(v.framesOutsideWindow == 0 && v.maximumAbsoluteSkewMs <= 55, "\(v)")
    #expect(v.framesDecoded >= v.framesShown)
    // RTCP feedback crossed the simulated network back to the sender: reports arrived (with a
    // round trip near the links' 2 x 40 ms plus jitter and pacing), lost packets were resent.
    print("room video feedback: \(v.receiverReportsSent) reports, \(v.nackMessagesSent) NACKs, \(v.pictureLossIndicationsSent) PLIs sent; "
           + "\(v.retransmissionsRequested) asks taken, \(v.packetsRetransmitted) packets resent (\(v.retransmissionsSuppressed) suppressed, \(v.retransmissionsUnavailable) unavailable), \(v.packetsRecovered) recovered, \(v.nacksGivenUp) given up; "
          + "round trip \(v.roundTripMs ?? -1) ms; bitrate \(v.lowestTargetBitrateKbps)...\(v.targetBitrateKbps) kbit/s")
    #expect(v.receiverReportsSent >= 4 && v.receiverReportsReceived >= 3)
    #expect(v.nackMessagesSent > 0 && v.packetsRetransmitted > 0 && v.packetsRecovered > 0)
    #expect(v.roundTripMs.map { $0 > 70 && $0 < 250 } ?? false)
    let name = participants[1].name
    #expect(events.contains { $0.participant == name && $0.kind == .videoOn })
    #expect(events.contains { $0.participant == name && $0.kind == .videoOff })
    #expect(reports[1].audio.isBalanced)
}

@Test func aStalledRoomCountsTheVideoPicturesItSkipped() throws {
    var participants = try loadConversation().map { p in
        var q = p; q.samples = Array(q.samples.prefix(16_000 * 3)); return q
    }
    let video = conversation.deletingLastPathComponent().appendingPathComponent("video/sample.y4m")
    try participants[1].attachVideo(path: video.path)
    let clock = VirtualMediaClock()
    let room = try CallRoom(participants: participants, configuration: RoomConfiguration(), clock: clock)
    // The room's thread stalls once for 200 ms at 1 s: the 30 fps camera's late pictures are
    // skipped (5 or 6 of them, by the stall's phase against the frame grid), not sent late.
    var stalled = false
    room.onFrame = { t in
        if t >= 1, !stalled { stalled = true; clock.advance(byNanoseconds: 200_000_000) }
    }
    try room.run()
    let v = try #require(room.reports[1].video)
    #expect(stalled)
    #expect((5...6).contains(v.framesSkippedLate), "\(v)")
    #expect(v.framesCaptured > 0 && v.framesEncoded == v.framesCaptured)
}
