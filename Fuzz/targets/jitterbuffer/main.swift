// libFuzzer target: the audio jitter buffer under arbitrary packet streams (sequence numbers,
// timestamps, arrival steps, payload sizes and get cadence all taken from the input), as a
// hostile or broken sender and network could produce them.
// Properties: no trap; counters stay consistent; held packets never exceed the capacity.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var c = JitterBufferConfiguration()
    c.sampleRate = 16_000
    c.capacity = 32
    c.maximumPayloadBytes = 64
    var buffer = try! AudioJitterBuffer(configuration: c)  // a fixed, valid configuration
    var decoder = try! LinearPCMDecoder(sampleRate: 16_000)
    var out = [Int16](repeating: 0, count: c.frameSamples)
    var payload = [UInt8](repeating: 7, count: 80)
    var nowNs: Int64 = 0
    var i = 0
    var puts = 0
    func byte() -> Int {
        guard i < size else { return 0 }
        defer { i += 1 }
        return Int(data[i])
    }
    while i + 8 <= size {
        let op = byte()
        if op & 1 == 0 {
            let seq = UInt16(byte() << 8 | byte())
            let ts = UInt32(byte() << 24 | byte() << 16 | byte() << 8 | byte())
            let length = byte() % 81
            nowNs += Int64(op >> 1) * 1_000_000
            payload[0] = UInt8(truncatingIfNeeded: length)
            payload.withUnsafeBytes { p in
                _ = buffer.put(sequence: seq, timestamp: ts, arrival: MonotonicTime(nanoseconds: nowNs),
                               payload: UnsafeRawBufferPointer(rebasing: p[0..<(length & ~1)]))
            }
            puts += 1
        } else {
            for _ in 0..<(1 + op >> 5) {
                nowNs += 10_000_000
                _ = try? out.withUnsafeMutableBufferPointer { try buffer.get(at: MonotonicTime(nanoseconds: nowNs), into: $0, decoder: &decoder) }
            }
        }
        precondition(buffer.bufferedPackets <= c.capacity)
    }
    let s = buffer.statistics
    precondition(s.packetsReceived == puts)
    precondition(s.packetsDiscarded + s.packetsDuplicated <= s.packetsReceived)
    precondition(s.late <= s.packetsDiscarded)
    return 0
}
