import Foundation
import Testing
import ParleyDevices
import ParleyJitter
import ParleyRTP
@testable import ParleyCall
import ParleyDetect
import ParleySimulation

private let conversation = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia/conversation")

private func load(_ name: String, seconds: Double) throws -> RoomParticipant {
    var p = try RoomParticipant.load(path: conversation.appendingPathComponent(name + ".wav").path, name: name)
    p.samples = Array(p.samples.prefix(Int(seconds * Double(p.sampleRate))))
    return p
}

/// Talk onsets of the offline detector on the clean samples.
private func offlineOnsets(_ p: RoomParticipant) throws -> [Double] {
    var tracker = try ParticipantTalkTracker(sampleRate: p.sampleRate)
    var recorder = TalkSegmentRecorder()
    let floats = p.samples.map { Float($0) / 32768 }
    floats.withUnsafeBufferPointer { b in tracker.process(b) { recorder.record($0) } }
    tracker.finish { recorder.record($0) }
    return recorder.segments.map(\.start)
}

private func onsets(_ events: [CallEvent], of name: ParticipantID) -> [Double] {
    events.compactMap { e in
        if e.participant == name, case .talkingStarted(let c) = e.kind, !c.whileMuted { return c.segmentTime }
        return nil
    }
}

/// A sender of recorded samples for a test: one RTP stream paced on a scheduler.
private final class FileSender {
    let participant: RoomParticipant
    var pipeline: AudioSendPipeline
    var transport: UDPTransport
    var frame: [Int16]
    var ended = false

    init(_ participant: RoomParticipant, ssrc: UInt32, to port: UInt16, clock: any MediaClock) throws {
        self.participant = participant
        var c = AudioSendConfiguration()
        c.ssrc = ssrc
        c.firstSequence = UInt16(truncatingIfNeeded: ssrc)
        pipeline = try AudioSendPipeline(configuration: c)
        transport = try UDPTransport(peerPort: port, clock: clock)
        frame = [Int16](repeating: 0, count: c.packetSamples)
    }

    func schedule(on scheduler: MediaScheduler, start: MonotonicTime, bye: Bool) {
        let n = frame.count
        scheduler.add("send", pacer: try! FramePacer(periodNanoseconds: 20e6, origin: start, policy: .catchUp)) { frames, _ in   // 20 ms
            for k in frames where !self.ended {
                let first = Int(k) * n
                guard first < self.participant.samples.count else {
                    self.ended = true
                    if bye {
                        let s = self.pipeline.configuration.ssrc
                        let packet: [UInt8] = [0x81, 203, 0, 1, UInt8(s >> 24), UInt8(s >> 16 & 0xFF), UInt8(s >> 8 & 0xFF), UInt8(s & 0xFF)]
                        _ = packet.withUnsafeBytes { self.transport.send($0, at: start) }
                    }
                    return
                }
                for i in 0..<n { self.frame[i] = first + i < self.participant.samples.count ? self.participant.samples[first + i] : 0 }
                let at = start.advanced(byNanoseconds: Int64(k) * 20_000_000)
                _ = self.frame.withUnsafeBufferPointer { f in
                    self.pipeline.send(f, capturedAt: at, muted: false, over: &self.transport) { _ in }
                }
            }
        }
    }
}

/// Two participants' streams on one UDP socket, told apart by SSRC: each becomes its own remote
/// with the talks the offline detector finds in its file; one leaves by RTCP BYE, the other by
/// the silence timeout; a third, undeclared SSRC is counted and dropped.
@Test func sessionDemultiplexesTwoSSRCsOnOneUDPSocketIntoParticipants() throws {
    let clock = SystemMediaClock()
    let reader = try load("reader", seconds: 5)
    let armelle = try load("armelle", seconds: 6)
    var settings = CallSessionConfiguration()
    settings.admitsUndeclaredRemotes = false
    settings.remoteTimeout = 1
    settings.endsWhenEveryoneLeft = true
    let session = CallSession(configuration: settings, clock: clock)
    let socket = try UDPTransport(peerPort: 9, clock: clock)
    let port = socket.localPort
    session.addTransport(socket)
    try session.addRemote(RemoteParticipant(id: "reader", audioSSRC: 0xAAAA_0001))
    try session.addRemote(RemoteParticipant(id: "armelle", audioSSRC: 0xBBBB_0002))
    #expect(throws: CallSessionError.duplicateSSRC(0xAAAA_0001)) {
        try session.addRemote(RemoteParticipant(id: "other", audioSSRC: 0xAAAA_0001))
    }
    #expect(throws: CallSessionError.duplicateID("reader")) {
        try session.addRemote(RemoteParticipant(id: "reader", audioSSRC: 0xCCCC_0003))
    }
    var events: [CallEvent] = []
    session.onEvent = { events.append($0) }
    let scheduler = MediaScheduler(clock: clock)
    let senders = [try FileSender(reader, ssrc: 0xAAAA_0001, to: port, clock: clock),
                   try FileSender(armelle, ssrc: 0xBBBB_0002, to: port, clock: clock),
                   try FileSender(try load("carlo", seconds: 1), ssrc: 0xDDDD_0004, to: port, clock: clock)]
    for (i, s) in senders.enumerated() { s.schedule(on: scheduler, start: session.start, bye: i == 0) }
    try session.attach(to: scheduler)
    let deadline = session.start.advanced(bySeconds: 20)
    scheduler.runUntil(deadline, shouldStop: { session.isFinished })
    #expect(session.isFinished, "everyone should have left before the deadline")
    session.stop()

    #expect(session.remoteNames == ["reader", "armelle"])
    #expect(session.statistics.unknownSSRC >= 40, "carlo's undeclared second: \(session.statistics)")
    #expect(session.statistics.byes == 1)
    for p in [reader, armelle] {
        let expected = try offlineOnsets(p)
        let got = onsets(events, of: p.name)
        #expect(!expected.isEmpty)
        #expect(got.count == expected.count, "\(p.name): session \(got), offline \(expected)")
        for t in expected {
            #expect((got.map { abs($0 - t) }.min() ?? .infinity) <= 0.15, "\(p.name): offline onset \(t), session \(got)")
        }
        let a = try #require(session.receiveStatistics(of: p.name)).audio
        #expect(a.framesPlayed >= Int(p.duration / 0.02) - 2 && a.framesLost == 0, "\(p.name): \(a)")
    }
    let leftAt = Dictionary(uniqueKeysWithValues: events.filter { $0.kind == .left }.map { ($0.participant!, $0.time) })
    // BYE: gone once its audio has played out; timeout: one second of silence later.
    #expect(leftAt["reader"].map { $0 >= 5 && $0 < 5.8 } == true, "\(leftAt)")
    #expect(leftAt["armelle"].map { $0 >= 6.8 && $0 < 7.8 } == true, "\(leftAt)")
    #expect(session.state.present.isEmpty)
}

/// Undeclared SSRCs join on their first packet under a default name; two streams through one
/// shared simulated link stay apart.
@Test func undeclaredSSRCsJoinOnTheirFirstPacket() throws {
    let clock = VirtualMediaClock()
    let session = CallSession(clock: clock)
    let link = try SimulatedLink(scenario: try .room(lossPercent: 0, jitterMs: 5), seed: 1)
    let id = session.addTransport(link)
    var handle = session.transportHandle(id)!
    var c = AudioSendConfiguration()
    c.ssrc = 7
    var first = try AudioSendPipeline(configuration: c)
    c.ssrc = 8
    var second = try AudioSendPipeline(configuration: c)
    var events: [CallEvent] = []
    session.onEvent = { events.append($0) }
    let tone = (0..<320).map { i in Int16(8000 * sin(Double(i) * 0.3)) }
    let scheduler = MediaScheduler(clock: clock)
    scheduler.add("send", pacer: try FramePacer(periodNanoseconds: 20e6, origin: session.start, policy: .catchUp)) { frames, now in
        for _ in frames {
            _ = tone.withUnsafeBufferPointer { first.send($0, capturedAt: now, muted: false, over: &handle) { _ in } }
            _ = tone.withUnsafeBufferPointer { second.send($0, capturedAt: now, muted: false, over: &handle) { _ in } }
        }
    }
    try session.attach(to: scheduler)
    scheduler.runUntil(session.start.advanced(bySeconds: 2))
    session.stop()
    #expect(session.remoteNames.sorted() == [CallSession.defaultName(ofSSRC: 7), CallSession.defaultName(ofSSRC: 8)])
    #expect(CallSession.defaultName(ofSSRC: 7) == "ssrc-00000007")
    #expect(events.filter { $0.kind == .joined }.count == 2)
    for name in session.remoteNames {
        let s = try #require(session.receiveStatistics(of: name))
        #expect(s.receive.packetsBuffered >= 95 && s.receive.unexpectedPayloadType == 0, "\(name): \(s.receive)")
    }
}

/// Two sessions calling each other over UDP, each with a local participant read from a file:
/// each hears the other, and the other's talks match the offline detector.
@Test func twoSessionsCallEachOtherWithLocalParticipants() throws {
    let clock = SystemMediaClock()
    let reader = try load("reader", seconds: 4)
    let carlo = try load("carlo", seconds: 4)
    var a = try UDPTransport(peerPort: 9, clock: clock)
    let b = try UDPTransport(peerPort: a.localPort, clock: clock)
    a.setPeer(port: b.localPort)
    var settings = CallSessionConfiguration()
    settings.remoteTimeout = 1
    settings.endsWhenEveryoneLeft = true
    let start = clock.now()
    let left = CallSession(configuration: settings, clock: clock, start: start)
    let right = CallSession(configuration: settings, clock: clock, start: start)
    let ta = left.addTransport(a)
    let tb = right.addTransport(b)
    var send = AudioSendConfiguration()
    send.ssrc = 0x1111
    try left.addLocal(id: "reader", source: SampleProviderSource(try ArraySampleProvider(format: try AudioFormat(sampleRate: 16_000, channels: 1),
                                                                                    samples: reader.samples), clock: clock),
                      configuration: send, sendingOn: ta)
    send.ssrc = 0x2222
    try right.addLocal(id: "carlo", source: SampleProviderSource(try ArraySampleProvider(format: try AudioFormat(sampleRate: 16_000, channels: 1),
                                                                                    samples: carlo.samples), clock: clock),
                       configuration: send, sendingOn: tb)
    #expect(throws: CallSessionError.localAlreadyAdded) {
        try right.addLocal(id: "x", source: ToneSource<Int16>(format: try AudioFormat(sampleRate: 16_000, channels: 1)), sendingOn: tb)
    }
    var leftEvents: [CallEvent] = [], rightEvents: [CallEvent] = []
    left.onEvent = { leftEvents.append($0) }
    right.onEvent = { rightEvents.append($0) }
    var heardByLeft = 0
    left.onAudio = { _, pcm in heardByLeft += pcm.count }
    let scheduler = MediaScheduler(clock: clock)
    try left.attach(to: scheduler)
    try right.attach(to: scheduler)
    scheduler.runUntil(start.advanced(bySeconds: 15), shouldStop: { left.isFinished && right.isFinished })
    #expect(left.isFinished && right.isFinished)
    #expect(left.remoteNames == [CallSession.defaultName(ofSSRC: 0x2222)])
    #expect(heardByLeft >= 16_000 * 4 - 1_600)
    #expect(left.localStatistics.map { $0.packetsSent >= 199 } == true)
    for (events, remote, p, me) in [(leftEvents, CallSession.defaultName(ofSSRC: 0x2222), carlo, reader),
                                    (rightEvents, CallSession.defaultName(ofSSRC: 0x1111), reader, carlo)] {
        let expected = try offlineOnsets(p)
        let got = onsets(events, of: remote)
        #expect(got.count == expected.count, "\(p.name): heard \(got), offline \(expected)")
        for t in expected {
            #expect((got.map { abs($0 - t) }.min() ?? .infinity) <= 0.15, "\(p.name): offline \(t), heard \(got)")
        }
        // The local participant's own talking comes from its capture.
        #expect(onsets(events, of: me.name).count == (try offlineOnsets(me)).count)
    }
}

/// Garbage on the socket: datagrams too short or not version 2 are counted as malformed; a
/// spray of made-up SSRCs is capped at `maximumRemotes`; nothing traps and the call plays on.
@Test func garbageDatagramsAreCountedAndNewSSRCsAreCapped() throws {
    let clock = VirtualMediaClock()
    var settings = CallSessionConfiguration()
    settings.maximumRemotes = 4
    let session = CallSession(configuration: settings, clock: clock)
    let id = try session.addTransport(SimulatedLink(scenario: try .room(lossPercent: 0, jitterMs: 0), seed: 3))
    var handle = session.transportHandle(id)!
    var rng = SystemRandomNumberGenerator()
    let scheduler = MediaScheduler(clock: clock)
    var sent = (short: 0, badVersion: 0, sprayed: 0)
    scheduler.add("garbage", pacer: try FramePacer(periodNanoseconds: 20e6, origin: session.start, policy: .catchUp)) { frames, now in
        for k in frames where k < 40 {   // 0.8 s, all delivered (40 ms links) within the 1 s run
            let n = Int.random(in: 0..<12, using: &rng)
            _ = (0..<n).map { _ in UInt8(0x80) }.withUnsafeBytes { handle.send($0, at: now) }
            sent.short += n < 12 ? 1 : 0
            var bad = (0..<40).map { _ in UInt8.random(in: 0...255, using: &rng) }
            bad[0] &= 0x3F
            _ = bad.withUnsafeBytes { handle.send($0, at: now) }
            sent.badVersion += 1
            var spray = (0..<60).map { _ in UInt8.random(in: 0...255, using: &rng) }
            spray[0] = 0x80
            spray[1] = 111
            _ = spray.withUnsafeBytes { handle.send($0, at: now) }
            sent.sprayed += 1
        }
    }
    try session.attach(to: scheduler)
    scheduler.runUntil(session.start.advanced(bySeconds: 1))
    session.stop()
    let st = session.statistics
    #expect(st.malformed == sent.short + sent.badVersion, "\(st)")
    #expect(session.remoteNames.count == 4)
    #expect(st.refusedRemotes == sent.sprayed - 4)
}

/// What other threads post runs on the call's thread at the start of the next frame, in order:
/// a remote declared from a detached task joins the call, and the closures posted from two
/// threads each run once.
@Test func postedClosuresRunOnTheCallsThreadInOrder() async throws {
    let clock = VirtualMediaClock()
    let session = CallSession(clock: clock)
    let inlet = session.inlet
    let ran = Locked<[Int]>([])
    let posting = Task.detached {
        for i in 0..<50 { inlet.post { _ in ran.withLock { $0.append(i) } } }
        inlet.post { s in try? s.addRemote(RemoteParticipant(id: "posted", audioSSRC: 42)) }
    }
    await posting.value
    #expect(inlet.count == 51)
    var framesSeen = 0
    var joinedAtFrame: Int?
    session.onFrame = { _ in
        framesSeen += 1
        if joinedAtFrame == nil, session.remoteNames.contains("posted") { joinedAtFrame = framesSeen }
    }
    let scheduler = MediaScheduler(clock: clock)
    try session.attach(to: scheduler)
    scheduler.runUntil(session.start.advanced(bySeconds: 0.05))
    session.stop()
    #expect(ran.withLock { $0 } == Array(0..<50))
    #expect(joinedAtFrame == 1)
    #expect(inlet.count == 0)
    session.post { _ in ran.withLock { $0.append(-1) } }
    scheduler.runUntil(session.start.advanced(bySeconds: 0.1))
    #expect(ran.withLock { $0.count } == 50, "posted after the end: never run")
}

/// Participants are told apart by id: two may share a display name. Events carry both, the
/// state shows the display name, and only a repeated id is refused.
@Test func participantsAreKeyedByIdAndMayShareADisplayName() throws {
    let clock = VirtualMediaClock()
    let session = CallSession(clock: clock)
    var events: [CallEvent] = []
    session.onEvent = { events.append($0) }
    try session.addRemote(RemoteParticipant(id: "janus-1", displayName: "Alex", audioSSRC: 1))
    try session.addRemote(RemoteParticipant(id: "janus-2", displayName: "Alex", audioSSRC: 2))
    try session.addRemote(RemoteParticipant(id: "carlo", audioSSRC: 3))
    #expect(throws: CallSessionError.duplicateID("janus-2")) {
        try session.addRemote(RemoteParticipant(id: "janus-2", displayName: "Someone else", audioSSRC: 4))
    }
    let joined = events.filter { $0.kind == .joined }
    #expect(joined.map(\.participant) == ["janus-1", "janus-2", "carlo"])
    #expect(joined.map(\.name) == ["Alex", "Alex", "carlo"])
    #expect(session.state.present.map(\.name) == ["Alex", "Alex", "carlo"])
    #expect(session.state["janus-2"]?.name == "Alex")
    session.remoteEnded("janus-1")
    let scheduler = MediaScheduler(clock: clock)
    try session.attach(to: scheduler)
    scheduler.runUntil(session.start.advanced(bySeconds: 1))
    session.stop()
    let left = try #require(events.first { $0.kind == .left })
    #expect(left.participant == "janus-1" && left.name == "Alex")
}
