import ParleyCall
import ParleyRTP

// The session suite: a CallSession's per-datagram path on a shared transport, the one a real
// call's UDP socket takes: RTP/RTCP classification, the SSRC lookup, the route to the remote
// and its receiver's header parse. Eight declared remotes; each playout frame hands the session
// 2,000 RTP datagrams spread over their SSRCs, of a payload type the receivers do not take (so
// each stops after the header parse, counted, and no decoding hides the demultiplexer), and 16
// RTCP receiver reports. The eight remotes' playout of empty jitter buffers is part of each
// frame, amortised over its datagrams. Virtual clock: no waiting.

/// Datagrams per playout frame.
private let sessionDatagramsPerFrame = 2_016
/// Playout frames per timed sample.
private let sessionFrames = 50

/// Hands the same datagrams to its receiver on every read: a socket that always has a frame's worth.
private struct ReplayTransport: PacketTransport {
    let datagrams: [[UInt8]]
    mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool { true }
    mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {
        for d in datagrams { d.withUnsafeBytes { body($0, time) } }
    }
    var inFlight: Int { 0 }
}

/// Benchmarks for the session suite.
func sessionBenchmarks() -> [Benchmark] {
    let ssrcs = (0..<8).map { UInt32(0x5E55_0000 + $0) }
    var datagrams: [[UInt8]] = []
    for i in 0..<(sessionDatagramsPerFrame - 16) {
        let header = RTPHeader(payloadType: 0, sequenceNumber: UInt16(i), timestamp: UInt32(160 * i), ssrc: ssrcs[i & 7])
        datagrams.append(try! header.marshalled(payload: [UInt8](repeating: 0xD5, count: 160)))
    }
    for i in 0..<16 {
        datagrams.append(try! RTCPCompound.marshalled([.receiverReport(RTCPReceiverReport(ssrc: ssrcs[i & 7]))]))
    }
    let clock = VirtualMediaClock()
    var settings = CallSessionConfiguration()
    settings.admitsUndeclaredRemotes = false
    settings.remoteTimeout = .infinity
    let session = CallSession(configuration: settings, clock: clock)
    for (i, ssrc) in ssrcs.enumerated() { try! session.addRemote(RemoteParticipant(id: "r\(i)", audioSSRC: ssrc)) }
    session.addTransport(ReplayTransport(datagrams: datagrams))
    let scheduler = MediaScheduler(clock: clock)
    try! session.attach(to: scheduler)
    let frameNs = Int64(settings.receive.frameMs) * 1_000_000
    var until = session.start
    return [
        Benchmark(name: "session/demultiplex", unit: .nsPerPacket, iterations: sessionFrames * sessionDatagramsPerFrame) {
            until = until.advanced(byNanoseconds: frameNs * Int64(sessionFrames))
            scheduler.runUntil(until)
            return UInt64(session.statistics.datagrams)
        },
    ]
}
