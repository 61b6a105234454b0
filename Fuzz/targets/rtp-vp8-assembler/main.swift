// libFuzzer target: receive-side state machines fed a fuzzed packet sequence: the VP8 frame
// assembler (reordering, loss, wrap, timeouts) and RFC 3550 A.1 sequence validation.
// Input: records of [seq hi, seq lo, flags, time step, len, payload...]. Property: no trap,
// delivered frames are non-empty, counters add up.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var config = VP8FrameAssembler.Configuration()
    config.windowPackets = 64
    var assembler = try! VP8FrameAssembler(configuration: config)  // 64 is a power of two
    var stats = try! RTPSourceStatistics(clockRate: 90_000)  // positive: cannot throw
    var p = 0
    var now: Int64 = 0
    var frames = 0
    while p + 5 <= size {
        let seq = UInt16(bytes[p]) << 8 | UInt16(bytes[p + 1])
        let flags = bytes[p + 2]
        now += Int64(bytes[p + 3]) * 1_000_000
        let len = Swift.min(Int(bytes[p + 4]), size - p - 5)
        let payload = UnsafeRawBufferPointer(rebasing: bytes[(p + 5)..<(p + 5 + len)])
        p += 5 + len
        let ts = UInt32(flags >> 2) * 3000
        assembler.insert(payload: payload, sequenceNumber: seq, timestamp: ts, marker: flags & 1 != 0,
                         nowNanoseconds: now)
        while let e = assembler.nextEvent() {
            if case .frame(let f) = e { precondition(f.data.count > 0); frames += 1 }
        }
        stats.update(sequenceNumber: seq, timestamp: ts, arrivalNanoseconds: now, payloadBytes: len)
    }
    assembler.advance(nowNanoseconds: now + 10_000_000_000)
    while let e = assembler.nextEvent() {
        if case .frame(let f) = e { precondition(f.data.count > 0); frames += 1 }
    }
    let s = assembler.statistics
    precondition(s.framesAssembled == frames && s.eventsDropped == 0)
    let c = stats.counters
    precondition(c.packets + c.duplicates + c.probation + c.badSequence >= 0)
    _ = stats.makeReceptionReport(ssrc: 1, nowNanoseconds: now)
    return 0
}
