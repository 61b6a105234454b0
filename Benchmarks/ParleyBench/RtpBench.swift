import ParleyRTP

// The rtp suite: parse and serialise of a typical Opus RTP packet (12-byte header, one RFC 8285
// one-byte element carrying the RFC 6464 audio level, 80-byte payload = 100 bytes), per packet.
// Baseline: copying the same 100 bytes (`rtp/copy-packet`), the floor any parser pays to touch
// the bytes once.
//
// Zero allocations: the parser stores only offsets over the caller's bytes and the writer reuses
// one RTPHeader whose fields and extension bytes are changed in place. Measured by counting
// malloc calls with an LD_PRELOAD shim and comparing runs with different sample counts (the
// difference divided by the extra packets is the allocations per packet):
//
//   cat > /tmp/count.c <<'C'
//   #define _GNU_SOURCE
//   #include <dlfcn.h>
//   #include <stdio.h>
//   #include <stdlib.h>
//   static unsigned long n; extern void *__libc_malloc(size_t);
//   void *malloc(size_t s) { n++; return __libc_malloc(s); }
//   __attribute__((destructor)) static void report(void) { fprintf(stderr, "mallocs %lu\n", n); }
//   C
//   cc -shared -fPIC -O2 -o /tmp/count.so /tmp/count.c
//   LD_PRELOAD=/tmp/count.so .build/release/parley-bench --filter rtp/parse --samples 1
//   LD_PRELOAD=/tmp/count.so .build/release/parley-bench --filter rtp/parse --samples 21

/// Packets per timed sample.
private let rtpIterations = 200_000

/// 16 distinct Opus packets (sequence numbers, timestamps and levels differ) back to back in
/// one buffer, 100 bytes each, so the loop cannot hoist the parse out.
private func makeOpusPackets() -> (bytes: [UInt8], size: Int) {
    var all: [UInt8] = []
    var size = 0
    for i in 0..<16 {
        let header = RTPHeader(marker: i == 0, payloadType: 111, sequenceNumber: UInt16(1000 + i),
                               timestamp: UInt32(960 * i), ssrc: 0x1234_5678,
                               extensions: [RTPHeaderExtension(id: 1, bytes: [0x80 | UInt8(20 + i)])])
        let payload = (0..<80).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ i) }
        let packet = try! header.marshalled(payload: [0xFC] + payload.dropFirst())
        size = packet.count
        all += packet
    }
    return (all, size)
}

/// Benchmarks for the rtp suite.
func rtpBenchmarks() -> [Benchmark] {
    let (packets, size) = makeOpusPackets()
    let feedback = makeFeedbackPackets()
    let copyTarget = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 8)
    let out = UnsafeMutableRawBufferPointer.allocate(byteCount: RTPLimits.maximumDatagramSize, alignment: 8)
    return [
        Benchmark(name: "rtp/copy-packet", unit: .nsPerPacket, iterations: rtpIterations) {
            var sum: UInt64 = 0
            packets.withUnsafeBytes { all in
                for i in 0..<rtpIterations {
                    let p = (i & 15) * size
                    copyTarget.copyMemory(from: UnsafeRawBufferPointer(rebasing: all[p..<(p + size)]))
                    sum &+= UInt64(copyTarget[2])
                }
            }
            return sum
        },
        Benchmark(name: "rtp/parse", unit: .nsPerPacket, baseline: "rtp/copy-packet", iterations: rtpIterations) {
            var sum: UInt64 = 0
            packets.withUnsafeBytes { all in
                for i in 0..<rtpIterations {
                    let p = (i & 15) * size
                    guard let v = try? RTPPacketView(parsing: UnsafeRawBufferPointer(rebasing: all[p..<(p + size)])) else {
                        continue
                    }
                    sum &+= UInt64(v.sequenceNumber) &+ UInt64(v.timestamp) &+ UInt64(v.payload.count)
                    if let level = v.audioLevel(id: 1) { sum &+= UInt64(level.level) }
                }
            }
            return sum
        },
        Benchmark(name: "rtp/serialise", unit: .nsPerPacket, baseline: "rtp/copy-packet", iterations: rtpIterations) {
            var header = RTPHeader(payloadType: 111, sequenceNumber: 0, timestamp: 0, ssrc: 0x1234_5678,
                                   extensions: [RTPHeaderExtension(id: 1, bytes: [0])])
            var sum: UInt64 = 0
            packets.withUnsafeBytes { all in
                let payload = UnsafeRawBufferPointer(rebasing: all[(size - 80)..<size])
                for i in 0..<rtpIterations {
                    header.sequenceNumber = UInt16(truncatingIfNeeded: i)
                    header.timestamp = UInt32(truncatingIfNeeded: i &* 960)
                    header.marker = i & 63 == 0
                    header.extensions[0].bytes[0] = 0x80 | UInt8(i & 127)
                    guard let n = try? header.marshal(payload: payload, into: out) else { continue }
                    sum &+= UInt64(n) &+ UInt64(out[3])
                }
            }
            return sum
        },
        // RTCP feedback as a video sender takes it: a receiver report with one block and a
        // generic NACK of 3 entries (56 bytes), per datagram. The walk validates and visits
        // without allocating (what VideoSendPipeline uses); the parse builds values.
        Benchmark(name: "rtp/rtcp-feedback-walk", unit: .nsPerPacket, baseline: "rtp/copy-packet", iterations: rtpIterations) {
            var sum: UInt64 = 0
            feedback.bytes.withUnsafeBytes { all in
                for i in 0..<rtpIterations {
                    let p = (i & 15) * feedback.size
                    try? RTCPCompound.forEachPacket(in: UnsafeRawBufferPointer(rebasing: all[p..<(p + feedback.size)])) { v in
                        v.forEachReportBlock { sum &+= UInt64($0.fractionLost) }
                        v.forEachNACKItem { $0.forEachLost { sum &+= UInt64($0) } }
                    }
                }
            }
            return sum
        },
        Benchmark(name: "rtp/rtcp-feedback-parse", unit: .nsPerPacket, baseline: "rtp/rtcp-feedback-walk",
                  iterations: rtpIterations) {
            var sum: UInt64 = 0
            feedback.bytes.withUnsafeBytes { all in
                for i in 0..<rtpIterations {
                    let p = (i & 15) * feedback.size
                    guard let packets = try? RTCPCompound.parse(UnsafeRawBufferPointer(rebasing: all[p..<(p + feedback.size)])) else {
                        continue
                    }
                    for packet in packets {
                        switch packet {
                        case .receiverReport(let rr): for r in rr.reports { sum &+= UInt64(r.fractionLost) }
                        case .genericNACK(let n): for item in n.items { item.forEachLost { sum &+= UInt64($0) } }
                        default: break
                        }
                    }
                }
            }
            return sum
        },
    ]
}

/// 16 distinct RTCP compound packets of a receiver report (one block) and a 3-entry NACK.
private func makeFeedbackPackets() -> (bytes: [UInt8], size: Int) {
    var all: [UInt8] = []
    var size = 0
    for i in 0..<16 {
        let block = RTCPReceptionReport(ssrc: 0x5649_4430, fractionLost: UInt8(i * 3), cumulativeLost: Int32(i),
                                        extendedHighestSequence: UInt32(70_000 + i * 40), jitter: 90,
                                        lastSenderReport: 0x1234_0000, delaySinceLastSenderReport: 0x4000)
        let base = UInt16(1000 + i * 40)
        let nack = RTCPGenericNACK(senderSSRC: 1, mediaSSRC: 0x5649_4430,
                                   lost: [base, base + 2, base + 17, base + 20, base + 36])
        let packet = try! RTCPCompound.marshalled([.receiverReport(RTCPReceiverReport(ssrc: 1, reports: [block])),
                                                   .genericNACK(nack)])
        size = packet.count
        all += packet
    }
    return (all, size)
}
