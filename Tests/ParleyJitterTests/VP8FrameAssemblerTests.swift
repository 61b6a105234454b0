import Testing
import ParleyJitter
import ParleyRTP

/// A synthetic VP8 frame with a valid frame header: keyframes carry the start code and size.
private func vp8Frame(key: Bool, size: Int, seed: UInt8) -> [UInt8] {
    var f = [UInt8](repeating: 0, count: size)
    let partition = 100
    f[0] = UInt8((partition & 7) << 5) | 0x10 | (key ? 0 : 1)
    f[1] = UInt8((partition >> 3) & 0xFF)
    f[2] = UInt8(partition >> 11)
    var start = 3
    if key {
        f[3] = 0x9D; f[4] = 0x01; f[5] = 0x2A
        f[6] = 0x40; f[7] = 0x01; f[8] = 0xF0; f[9] = 0x00  // 320x240
        start = 10
    }
    for i in start..<size { f[i] = UInt8(truncatingIfNeeded: i) &+ seed }
    return f
}

private struct Packet {
    var payload: [UInt8]
    var seq: UInt16
    var ts: UInt32
    var marker: Bool
}

/// Packetizes frames at 300-byte payloads starting at `firstSeq`, 3000 ticks (30 fps) apart.
private func packetize(_ frames: [[UInt8]], firstSeq: UInt16, nonReference: Set<Int> = []) -> [Packet] {
    var p = try! VP8Packetizer(maxPayloadSize: 300, pictureID: 10)  // > 4 bytes: cannot throw
    var out: [Packet] = []
    var seq = firstSeq
    for (n, f) in frames.enumerated() {
        f.withUnsafeBytes { b in
            p.packetize(b) { payload, last in
                var bytes = Array(payload)
                if nonReference.contains(n) { bytes[0] |= 0x20 }
                out.append(Packet(payload: bytes, seq: seq, ts: UInt32(n * 3000), marker: last))
                seq &+= 1
            }
        }
    }
    return out
}

/// Frame lists compared without printing megabytes on failure.
private func same(_ a: [[UInt8]], _ b: [[UInt8]]) -> Bool { a == b }

private struct Collected {
    var frames: [[UInt8]] = []
    var keyframes: [Bool] = []
    var requests: [VP8KeyframeRequestReason] = []
}

private func feed(_ assembler: inout VP8FrameAssembler, _ packets: [Packet], into c: inout Collected,
                  startNs: Int64 = 0, stepNs: Int64 = 1_000_000) {
    var now = startNs
    for p in packets {
        p.payload.withUnsafeBytes { b in
            assembler.insert(payload: b, sequenceNumber: p.seq, timestamp: p.ts, marker: p.marker, nowNanoseconds: now) { e in
                switch e {
                case .frame(let f): c.frames.append(Array(f.data)); c.keyframes.append(f.header.isKeyframe)
                case .keyframeRequest(let r): c.requests.append(r)
                }
            }
        }
        now += stepNs
    }
}

@Suite struct VP8FrameAssemblerTests {
    @Test func aWindowThatIsNotAPositivePowerOfTwoIsAnError() throws {
        for n in [0, -8, 3, 100] {
            var c = VP8FrameAssembler.Configuration()
            c.windowPackets = n
            #expect(throws: JitterConfigurationError.outOfRange(parameter: "windowPackets", value: "\(n)",
                                                                allowed: "a positive power of two")) {
                try VP8FrameAssembler(configuration: c)
            }
        }
        var c = VP8FrameAssembler.Configuration()
        c.windowPackets = 1
        #expect(try VP8FrameAssembler(configuration: c).configuration.windowPackets == 1)
    }

    let frames = [vp8Frame(key: true, size: 1500, seed: 1), vp8Frame(key: false, size: 700, seed: 2),
                  vp8Frame(key: false, size: 650, seed: 3), vp8Frame(key: false, size: 900, seed: 4)]

    /// A plain resend (same sequence number, as the video sender's NACK answer): arriving in
    /// time it completes the frame; as a duplicate it is ignored; after its frame was given up
    /// it is counted late and changes nothing.
    @Test func retransmittedPacketsFillHolesAndLateOnesAreIgnored() throws {
        let packets = packetize(frames, firstSeq: 65_530)  // wraps inside the second frame
        let hole = 6                                       // the second frame's first packet
        #expect(packets[hole].seq == 0)
        var config = VP8FrameAssembler.Configuration()
        config.completionTimeoutNanoseconds = 250_000_000
        // In time: the resend arrives 90 ms after the gap showed (one round trip and a bit).
        var a = try VP8FrameAssembler(configuration: config)
        var c = Collected()
        feed(&a, Array(packets[..<hole]) + Array(packets[(hole + 1)...]), into: &c)
        #expect(c.frames.count == 1 && a.nextSequenceNumber == packets[hole].seq)
        feed(&a, [packets[hole]], into: &c, startNs: 90_000_000)
        #expect(same(c.frames, frames) && c.requests.isEmpty)
        // The original turns up too after all: a duplicate of nothing held, counted late.
        feed(&a, [packets[hole]], into: &c, startNs: 100_000_000)
        #expect(a.statistics.latePackets == 1 && c.frames.count == frames.count)
        // A resend of a packet still held (its frame waits for another) is a duplicate.
        var b = try VP8FrameAssembler(configuration: config)
        var d = Collected()
        feed(&b, Array(packets[..<hole]) + [packets[hole]] + Array(packets[(hole + 2)...]), into: &d)
        feed(&b, [packets[hole]], into: &d, startNs: 50_000_000)
        #expect(b.statistics.duplicatePackets == 1 && d.frames.count == 1)
        feed(&b, [packets[hole + 1]], into: &d, startNs: 60_000_000)
        #expect(same(d.frames, frames) && d.requests.isEmpty)
        // Too late: the frame was given up at the timeout; the resend is late and ignored.
        var l = try VP8FrameAssembler(configuration: config)
        var e = Collected()
        feed(&l, Array(packets[..<hole]) + Array(packets[(hole + 1)...]), into: &e)
        l.advance(nowNanoseconds: 400_000_000) { ev in if case .keyframeRequest(let r) = ev { e.requests.append(r) } }
        #expect(e.requests == [.incompleteFrame] && l.statistics.framesIncomplete == 1)
        feed(&l, [packets[hole]], into: &e, startNs: 410_000_000)
        #expect(l.statistics.latePackets == 1 && e.frames.count == 1)
    }

    @Test func inOrderPacketsBecomeWholeFramesInOrder() {
        var a = VP8FrameAssembler()
        var c = Collected()
        feed(&a, packetize(frames, firstSeq: 1000), into: &c)
        #expect(same(c.frames, frames))
        #expect(c.keyframes == [true, false, false, false])
        #expect(c.requests.isEmpty)
        #expect(a.statistics.framesAssembled == 4)
    }

    @Test func reorderedPacketsWithinAndAcrossFramesAreReassembled() {
        var packets = packetize(frames, firstSeq: 7)
        // Deterministic shuffle in blocks of 5: reverse each block.
        var shuffled: [Packet] = []
        var i = 0
        while i < packets.count {
            shuffled += packets[i..<min(i + 5, packets.count)].reversed()
            i += 5
        }
        packets = shuffled
        var a = VP8FrameAssembler()
        var c = Collected()
        feed(&a, packets, into: &c)
        #expect(same(c.frames, frames))
        #expect(c.requests.isEmpty)
    }

    @Test func sequenceNumberWrapInsideAFrame() {
        let packets = packetize(frames, firstSeq: 65533)
        #expect(packets[0].seq == 65533 && packets[4].seq == 1)
        var a = VP8FrameAssembler()
        var c = Collected()
        feed(&a, packets, into: &c)
        #expect(same(c.frames, frames))
    }

    @Test func aMissingPacketPastTheTimeoutRequestsAKeyframeAndDropsInterFramesUntilOne() {
        let stream = frames + [vp8Frame(key: true, size: 600, seed: 9), vp8Frame(key: false, size: 400, seed: 10)]
        var packets = packetize(stream, firstSeq: 500)
        // Frame 1 is packets 5...7 (1500 bytes -> 6 packets of 296, then 700 -> 3 packets).
        let lostIndex = packets.firstIndex { $0.ts == 3000 }! + 1
        packets.remove(at: lostIndex)
        var a = VP8FrameAssembler()
        var c = Collected()
        // 40 ms between packets: the timeout (100 ms) passes while frames 2 and 3 arrive.
        feed(&a, packets, into: &c, stepNs: 40_000_000)
        #expect(c.requests.first == .incompleteFrame)
        #expect(same(c.frames, [stream[0], stream[4], stream[5]]))
        #expect(a.statistics.framesIncomplete >= 1)
        #expect(a.statistics.framesDroppedWaitingForKeyframe >= 1)
    }

    @Test func nothingIsDeliveredAndAKeyframeIsRequestedUntilTheFirstKeyframe() {
        let stream = [vp8Frame(key: false, size: 400, seed: 1), vp8Frame(key: false, size: 400, seed: 2),
                      vp8Frame(key: true, size: 400, seed: 3), vp8Frame(key: false, size: 400, seed: 4)]
        var a = VP8FrameAssembler()
        var c = Collected()
        feed(&a, packetize(stream, firstSeq: 0), into: &c)
        #expect(same(c.frames, [stream[2], stream[3]]))
        #expect(c.requests == [.waitingForFirstKeyframe])  // the second is throttled
        #expect(a.statistics.framesDroppedWaitingForKeyframe == 2)
    }

    @Test func losingANonReferenceFrameKeepsDecodingWithoutAKeyframe() {
        var packets = packetize(frames, firstSeq: 100, nonReference: [2])
        packets.removeAll { $0.ts == 6000 && !$0.marker }  // frame 2 loses its first packet(s)
        var a = VP8FrameAssembler()
        var c = Collected()
        feed(&a, packets, into: &c, stepNs: 60_000_000)
        a.advance(nowNanoseconds: 10_000_000_000) { _ in }
        #expect(same(c.frames, [frames[0], frames[1], frames[3]]))
        #expect(a.statistics.framesDroppedWaitingForKeyframe == 0)
    }

    @Test func aLostMarkerPacketIsGivenUpAfterTheTimeout() {
        var packets = packetize(frames, firstSeq: 100)
        let markerOfFrame2 = packets.firstIndex { $0.ts == 6000 && $0.marker }!
        packets.remove(at: markerOfFrame2)
        var a = VP8FrameAssembler()
        var c = Collected()
        feed(&a, packets, into: &c)  // 1 ms apart: the marker could still arrive reordered
        #expect(same(c.frames, [frames[0], frames[1]]))
        #expect(c.requests.isEmpty)
        a.advance(nowNanoseconds: 1_000_000_000) { e in
            if case .keyframeRequest(let r) = e { c.requests.append(r) }
            if case .frame = e { c.frames.append([]) }
        }
        #expect(c.requests == [.incompleteFrame])
        #expect(c.frames.count == 2)  // frame 3 references the lost frame 2: held back
        #expect(a.statistics.framesDroppedWaitingForKeyframe == 1)
    }

    @Test func duplicatesMalformedAndLatePacketsAreCountedAndDropped() {
        var packets = packetize(frames, firstSeq: 40)
        packets.insert(packets[2], at: 3)
        packets.append(Packet(payload: [0x90], seq: 999, ts: 0, marker: false))  // descriptor without data
        packets.append(packets[0])  // very late duplicate of a delivered packet
        var a = VP8FrameAssembler()
        var c = Collected()
        feed(&a, packets, into: &c)
        #expect(same(c.frames, frames))
        #expect(a.statistics.duplicatePackets == 1)
        #expect(a.statistics.malformedPackets == 1)
        #expect(a.statistics.latePackets == 1)
    }

    @Test func aFloodOfGarbageNeverTrapsAndKeepsMemoryBounded() throws {
        var a = try VP8FrameAssembler(configuration: { var c = VP8FrameAssembler.Configuration(); c.windowPackets = 64; return c }())
        var x: UInt32 = 1
        var bytes = [UInt8](repeating: 0, count: 40)
        var events = 0
        for n in 0..<20_000 {
            for k in bytes.indices { x = x &* 1_103_515_245 &+ 12345; bytes[k] = UInt8(truncatingIfNeeded: x >> 16) }
            bytes.withUnsafeBytes { b in
                a.insert(payload: UnsafeRawBufferPointer(rebasing: b[0..<Int(x % 40)]), sequenceNumber: UInt16(truncatingIfNeeded: x >> 7),
                         timestamp: x & 0xF000, marker: x & 1 == 0, nowNanoseconds: Int64(n) * 1_000_000) { _ in events += 1 }
            }
        }
        #expect(a.statistics.packets == 20_000)
    }

    /// The events ``VP8FrameAssembler/nextEvent()`` gives, in order, with each frame's bytes.
    private enum Taken: Equatable {
        case frame([UInt8], key: Bool)
        case request(VP8KeyframeRequestReason)
    }

    private func take(_ a: inout VP8FrameAssembler) -> [Taken] {
        var out: [Taken] = []
        while let e = a.nextEvent() {
            switch e {
            case .frame(let f): out.append(.frame(Array(f.data), key: f.header.isKeyframe))
            case .keyframeRequest(let r): out.append(.request(r))
            }
        }
        return out
    }

    private func insert(_ a: inout VP8FrameAssembler, _ p: Packet, at now: Int64) {
        p.payload.withUnsafeBytes { b in
            a.insert(payload: b, sequenceNumber: p.seq, timestamp: p.ts, marker: p.marker, nowNanoseconds: now)
        }
    }

    /// Pulled events come in the order the assembler decides them: a complete frame at once;
    /// nothing while a packet is missing within the timeout; then the keyframe request before
    /// the frames it releases (a lost non-reference frame) or holds back (a lost reference).
    @Test func pulledEventsFollowCompletionLossAndTimeoutInOrder() {
        let stream = [vp8Frame(key: true, size: 900, seed: 1), vp8Frame(key: false, size: 700, seed: 2),
                      vp8Frame(key: false, size: 500, seed: 3), vp8Frame(key: false, size: 700, seed: 4),
                      vp8Frame(key: false, size: 400, seed: 5)]
        let packets = packetize(stream, firstSeq: 65_530, nonReference: [1])
        func of(_ frame: Int) -> [Packet] { packets.filter { $0.ts == UInt32(frame * 3000) } }
        var a = VP8FrameAssembler()
        var now: Int64 = 0
        // The keyframe: complete with its last packet, taken once.
        for p in of(0) {
            insert(&a, p, at: now)
            now += 1_000_000
            if !p.marker { #expect(take(&a).isEmpty) }
        }
        #expect(take(&a) == [.frame(stream[0], key: true)])
        #expect(a.nextEvent() == nil)
        // Frame 1 (non-reference) loses its second packet; frame 2 arrives whole behind it.
        for p in of(1) where p.seq != of(1)[1].seq { insert(&a, p, at: now); #expect(take(&a).isEmpty) }
        for p in of(2) { insert(&a, p, at: now); #expect(take(&a).isEmpty) }
        a.advance(nowNanoseconds: now + 50_000_000)
        #expect(take(&a).isEmpty)  // within the 100 ms timeout
        now += 200_000_000
        a.advance(nowNanoseconds: now)
        #expect(take(&a) == [.request(.incompleteFrame), .frame(stream[2], key: false)])
        // Frame 3 (a reference) loses its marker packet; frame 4 then cannot be decoded.
        for p in of(3) where !p.marker { insert(&a, p, at: now); #expect(take(&a).isEmpty) }
        for p in of(4) { insert(&a, p, at: now); #expect(take(&a).isEmpty) }
        now += 200_000_000
        a.advance(nowNanoseconds: now)
        #expect(take(&a) == [.request(.incompleteFrame)])
        #expect(a.statistics.framesDroppedWaitingForKeyframe == 1)
        #expect(a.statistics.framesAssembled == 2 && a.statistics.keyframeRequests == 2)
        #expect(a.statistics.eventsDropped == 0)
    }

    /// One packet can release a whole window of frames: every one is queued, in order.
    @Test func oneInsertReleasingAWholeWindowQueuesEveryFrame() throws {
        var config = VP8FrameAssembler.Configuration()
        config.windowPackets = 8
        config.keyframeRequestIntervalNanoseconds = 0
        var a = try VP8FrameAssembler(configuration: config)
        let stream = [vp8Frame(key: true, size: 500, seed: 1)] + (2...7).map { vp8Frame(key: false, size: 100, seed: UInt8($0)) }
        let packets = packetize(stream, firstSeq: 0)  // the keyframe in 2 packets, then 1 each
        #expect(packets.count == 8)
        insert(&a, packets[0], at: 0)
        for p in packets[2...] { insert(&a, p, at: 0); #expect(take(&a).isEmpty) }
        insert(&a, packets[1], at: 0)
        #expect(take(&a) == stream.enumerated().map { Taken.frame($1, key: $0 == 0) })
    }

    /// Events left untaken are dropped by the next call and counted; nothing else changes.
    @Test func eventsNotTakenBeforeTheNextCallAreDroppedAndCounted() {
        var a = VP8FrameAssembler()
        let packets = packetize(frames, firstSeq: 10)
        for p in packets where p.ts == 0 { insert(&a, p, at: 0) }
        a.advance(nowNanoseconds: 1_000_000)
        #expect(a.nextEvent() == nil)
        #expect(a.statistics.eventsDropped == 1 && a.statistics.framesAssembled == 1)
        for p in packets where p.ts == 3000 { insert(&a, p, at: 2_000_000) }
        #expect(take(&a) == [.frame(frames[1], key: false)])
    }
}

/// The scenarios below hand each event to a closure as it comes: insert or advance, then take
/// every queued event.
extension VP8FrameAssembler {
    fileprivate mutating func insert(payload: UnsafeRawBufferPointer, sequenceNumber: UInt16, timestamp: UInt32,
                                     marker: Bool, nowNanoseconds: Int64, emit: (VP8AssemblerEvent) -> Void) {
        insert(payload: payload, sequenceNumber: sequenceNumber, timestamp: timestamp, marker: marker, nowNanoseconds: nowNanoseconds)
        while let event = nextEvent() { emit(event) }
    }

    fileprivate mutating func advance(nowNanoseconds: Int64, emit: (VP8AssemblerEvent) -> Void) {
        advance(nowNanoseconds: nowNanoseconds)
        while let event = nextEvent() { emit(event) }
    }
}
