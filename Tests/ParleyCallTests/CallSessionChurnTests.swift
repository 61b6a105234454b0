import Foundation
import Testing
import ParleyJitter
import ParleyRTP
import ParleyCall
import ParleySimulation

/// Collects what a send pipeline sends.
private struct Recorder: PacketTransport {
    var datagrams: [[UInt8]] = []
    mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool {
        if !RTPMultiplexing.isRTCP(bytes) { datagrams.append(Array(bytes)) }
        return true
    }
    mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {}
    var inFlight: Int { 0 }
}

/// The process's resident memory, bytes (/proc/self/statm's second field, in pages).
private func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Ten packets (200 ms) of one sender's tone, as its send pipeline made them.
private func tonePackets() throws -> [[UInt8]] {
    var recorder = Recorder()
    var sender = try AudioSendPipeline(configuration: AudioSendConfiguration())
    let tone = (0..<320).map { i in Int16(8000 * sin(Double(i) * 0.3)) }
    for k in 0..<10 {
        _ = tone.withUnsafeBufferPointer {
            sender.send($0, capturedAt: MonotonicTime(nanoseconds: Int64(k) * 20_000_000), muted: false, over: &recorder) { _ in }
        }
    }
    return recorder.datagrams
}

extension [UInt8] {
    /// This RTP packet under SSRC `ssrc`.
    fileprivate func withSSRC(_ ssrc: UInt32) -> [UInt8] {
        var datagram = self
        datagram[8] = UInt8(ssrc >> 24); datagram[9] = UInt8(ssrc >> 16 & 0xFF)
        datagram[10] = UInt8(ssrc >> 8 & 0xFF); datagram[11] = UInt8(ssrc & 0xFF)
        return datagram
    }
}

/// 500 participants join and leave in turn, each on its own simulated link (a new one joins
/// every 100 ms, sends 200 ms of audio, then an RTCP BYE): the departed are pruned, so the
/// remotes and transports the session walks every frame, its memory and its time per frame
/// stay flat from the first hundred participants to the last. Memory and time are the whole
/// process's, so the test runs with the real-time ones, alone.
@Test(.tags(.realTime)) func churnOf500ParticipantsKeepsMemoryAndWorkFlat() throws {
    let clock = VirtualMediaClock()
    var settings = CallSessionConfiguration()
    settings.admitsUndeclaredRemotes = false
    settings.drainFrames = 10
    settings.departedRemotesKept = 32
    let session = CallSession(configuration: settings, clock: clock)
    // One participant's ten packets, recorded once; each participant sends them under its SSRC.
    let packets = try tonePackets()
    #expect(packets.count == 10)
    let participants = 500, ticksApart = 5
    func ssrc(_ p: Int) -> UInt32 { 0x1000_0000 + UInt32(p) }
    var links: [Int: TransportHandle] = [:]
    var joinedAt: [Int: ContinuousClock.Instant] = [:]
    var rss: [Int: Int] = [:]
    var mostRemotes = 0, mostTransports = 0, failures: [String] = []
    let scheduler = MediaScheduler(clock: clock)
    let lastTick = Int64(participants * ticksApart)
    scheduler.add("churn", pacer: try FramePacer(periodNanoseconds: 20e6, origin: session.start, policy: .catchUp)) { ticks, now in
        for t in ticks where t <= lastTick + 30 {
            let tick = Int(t)
            if tick % ticksApart == 0 {
                let p = tick / ticksApart
                joinedAt[p] = ContinuousClock.now
                if p == 50 || p == participants { rss[p] = residentBytes() }
                if p < participants {
                    let name = "p\(p)"
                    do {
                        try session.addRemote(RemoteParticipant(id: name, audioSSRC: ssrc(p)))
                        let link = try SimulatedLink(scenario: try .room(lossPercent: 0, jitterMs: 5), seed: UInt64(p),
                                                     capacity: 32, chunkPackets: 16)
                        links[p] = session.transportHandle(session.addTransport(link, role: .audio(of: name)))
                    } catch {
                        failures.append("\(name): \(error)")
                    }
                }
            }
            let first = max(0, tick / ticksApart - 5)
            for p in first..<max(first, min(participants, tick / ticksApart + 1)) where links[p] != nil {
                let k = tick - p * ticksApart
                if k < packets.count {
                    _ = packets[k].withSSRC(ssrc(p)).withUnsafeBytes { links[p]!.send($0, at: now) }
                } else if k == packets.count {
                    let bye = try! RTCPCompound.marshalled([.receiverReport(RTCPReceiverReport(ssrc: ssrc(p))),
                                                            .bye(RTCPBye(ssrcs: [ssrc(p)], reason: "churn"))])
                    _ = bye.withUnsafeBytes { links[p]!.send($0, at: now) }
                } else if k == 2 * packets.count {
                    links[p] = nil   // gone from the session too by now (its BYE, 10 frames of drain)
                }
            }
        }
    }
    var left = 0
    session.onEvent = { e in if e.kind == .left { left += 1 } }
    session.onFrame = { _ in
        mostRemotes = max(mostRemotes, session.residentRemotes)
        mostTransports = max(mostTransports, session.residentTransports)
    }
    try session.attach(to: scheduler)
    scheduler.runUntil(session.start.advanced(bySeconds: Double(participants * ticksApart) * 0.02 + 2))
    session.stop()

    #expect(failures.isEmpty, "\(failures.prefix(3))")
    #expect(left == participants)
    #expect(session.statistics.byes == participants)
    // At most a handful present at once, and nothing of the departed walked per frame.
    #expect(mostRemotes <= 8 && mostTransports <= 8, "remotes \(mostRemotes), transports \(mostTransports)")
    #expect(session.residentRemotes == 0 && session.residentTransports == 0)
    // The last departed keep their final counters (and names, in join order).
    #expect(session.remoteNames == (participants - 32..<participants).map { "p\($0)" })
    let last = try #require(session.receiveStatistics(of: "p\(participants - 1)"))
    #expect(last.receive.packetsBuffered == packets.count, "\(last.receive)")
    #expect(session.receiveStatistics(of: "p0") == nil)
    // Memory: flat from participant 50 to 500 (a remote's receiver, decoder and link are far
    // above the bound: 450 of them kept would be tens of megabytes).
    let grown = (rss[participants] ?? 0) - (rss[50] ?? 0)
    #expect(rss[50] ?? 0 > 0 && grown < 4 << 20, "RSS at 50: \(rss[50] ?? 0), at \(participants): \(rss[participants] ?? 0)")
    // Time per frame: the last hundred participants cost about what the first hundred did.
    let first = joinedAt[100]! - joinedAt[0]!, lastHundred = joinedAt[participants]! - joinedAt[participants - 100]!
    let ratio = Double(lastHundred.components.attoseconds) / 1e18 + Double(lastHundred.components.seconds)
    let base = Double(first.components.attoseconds) / 1e18 + Double(first.components.seconds)
    #expect(ratio / base < 3, "first 100: \(base) s, last 100: \(ratio) s")
    print("churn: RSS at participant 50 \(rss[50] ?? 0) B, at \(participants) \(rss[participants] ?? 0) B; "
          + "first 100 participants \(base) s (\(base / Double(100 * ticksApart * 2) * 1e6) us/frame), "
          + "last 100 \(ratio) s (\(ratio / Double(100 * ticksApart * 2) * 1e6) us/frame)")
}

/// A server in between (an SFU) goes on sending reports about a stream whose sender has gone:
/// a remote whose sender reports count no new packets leaves after the session's timeout,
/// while one whose reports count new packets (its RTP is not reaching here, but it sends) stays.
@Test func senderReportsOfNoNewPacketsDoNotKeepARemote() throws {
    let clock = VirtualMediaClock()
    var settings = CallSessionConfiguration()
    settings.admitsUndeclaredRemotes = false
    settings.remoteTimeout = 1
    let session = CallSession(configuration: settings, clock: clock)
    let packets = try tonePackets()
    let link = try SimulatedLink(scenario: try .room(lossPercent: 0, jitterMs: 0), seed: 1, capacity: 64, chunkPackets: 16)
    var handle = try #require(session.transportHandle(session.addTransport(link)))
    let ssrcs: [String: UInt32] = ["gone": 0x5050_0001, "sending": 0x5050_0002]
    for (name, ssrc) in ssrcs { try session.addRemote(RemoteParticipant(id: name, audioSSRC: ssrc)) }
    var left: [String: Double] = [:]
    session.onEvent = { e in if e.kind == .left, let who = e.participant { left[who] = Double(session.start.nanoseconds(to: clock.now())) / 1e9 } }
    let scheduler = MediaScheduler(clock: clock)
    scheduler.add("far end", pacer: try FramePacer(periodNanoseconds: 20e6, origin: session.start, policy: .catchUp)) { ticks, now in
        for t in ticks where t < 200 {
            for (name, ssrc) in ssrcs {
                if t < 10 {
                    _ = packets[Int(t)].withSSRC(ssrc).withUnsafeBytes { handle.send($0, at: now) }
                } else if t % 10 == 0 {
                    // Every 200 ms a report: "gone" counts its 10 packets for ever, "sending" more each time.
                    let count = UInt32(name == "gone" ? 10 : Int(t))
                    let report = try! RTCPCompound.marshalled([.senderReport(RTCPSenderReport(
                        ssrc: ssrc, ntpTimestamp: NTPTimestamp(secondsSince1900: Double(t) * 0.02), rtpTimestamp: UInt32(t) * 960,
                        packetCount: count, octetCount: count * 60))])
                    _ = report.withUnsafeBytes { handle.send($0, at: now) }
                }
            }
        }
    }
    try session.attach(to: scheduler)
    scheduler.runUntil(session.start.advanced(bySeconds: 4))
    session.stop()
    let gone = try #require(left["gone"], "the remote whose reports count no new packets did not leave")
    #expect(gone > 1.1 && gone < 1.8, "left at \(gone) s")
    #expect(left["sending"] == nil, "left at \(left["sending"] ?? 0) s")
}
