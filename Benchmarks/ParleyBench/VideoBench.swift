import ParleyCall
import ParleyCodecs
import ParleyCore
import ParleyJitter
import ParleyRTP

// The video suite: the receive side of a call's video, on a real stream (the 320x240 sample
// clip, VP8 at 300 kbit/s through VideoSendPipeline: 60 frames, a keyframe first, recorded
// once and replayed with sequence numbers and timestamps moved on each pass).
//
// - `video/vp8-assemble`, per packet: VP8FrameAssembler (RTP view, insert, take the events),
//   against copying each packet's payload into a frame buffer (`video/copy-payloads`), the
//   floor of any assembler, pulling the events with nextEvent(). Allocations per packet must be 0.
// - `video/receive-render`, per frame: VideoReceivePipeline (assembly, decoding into its pool,
//   A/V decision, render), against decoding the same frames with VPXDecoder alone
//   (`video/decode-320x240`). Allocations per frame must be 0.
//
// The assembler and the pipeline live across samples: the warm-up (samples, or passes before
// them) fills their storage.

/// Passes over the 60-frame stream per timed sample.
private let assemblePasses = 400
private let renderPasses = 2

/// The recorded stream: RTP datagrams (media only) and each frame's compressed bytes.
private struct VideoBenchStream {
    var packets: [[UInt8]] = []
    var frames: [[UInt8]] = []
    var frameCount = 0
    var width = 0, height = 0

    /// Collects what a VideoSendPipeline sends.
    private struct Recorder: PacketTransport {
        var datagrams: [[UInt8]] = []
        mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool {
            if RTPMultiplexing.isRTCP(bytes) { return true }  // sender reports
            datagrams.append(Array(bytes))
            return true
        }
        mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {}
        var inFlight: Int { 0 }
    }

    static func make() -> VideoBenchStream {
        var pictures: [VideoFrame] = []
        for _ in 0..<4 { pictures += CodecBenchData.video() }
        var s = VideoBenchStream()
        s.width = pictures[0].width
        s.height = pictures[0].height
        s.frameCount = pictures.count
        // A fixed, valid configuration: cannot throw.
        var sender = try! VideoSendPipeline(width: s.width, height: s.height, framesPerSecond: 30, ssrc: 0x5649_4430,
                                            ntpOffset: 3_900_000_000)
        var recorder = Recorder()
        for (k, p) in pictures.enumerated() {
            sender.send(p, mediaTicks: UInt32(k * 3000), capturedAt: MonotonicTime(nanoseconds: Int64(k) * 33_333_333),
                        over: &recorder)
        }
        s.packets = recorder.datagrams
        // The frames as the assembler puts them together, for the decode baseline.
        var assembler = VP8FrameAssembler()
        for (i, p) in s.packets.enumerated() {
            p.withUnsafeBytes { b in
                guard let view = try? RTPPacketView(parsing: b) else { return }
                assembler.insert(view, nowNanoseconds: Int64(i))
                while let e = assembler.nextEvent() {
                    if case .frame(let f) = e { s.frames.append(Array(f.data)) }
                }
            }
        }
        precondition(s.frames.count == s.frameCount, "the recorded stream does not assemble")
        return s
    }

    /// Rewrites `packet` (a copy of `packets[index]`) for pass `pass`: sequence numbers and
    /// timestamps continue from the previous pass.
    func place(_ index: Int, pass: Int, into packet: inout [UInt8]) {
        let original = packets[index]
        packet.removeAll(keepingCapacity: true)
        packet.append(contentsOf: original)
        let seq = (UInt16(original[2]) << 8 | UInt16(original[3])) &+ UInt16(truncatingIfNeeded: pass * packets.count)
        var ts = UInt32(original[4]) << 24 | UInt32(original[5]) << 16 | UInt32(original[6]) << 8 | UInt32(original[7])
        ts &+= UInt32(truncatingIfNeeded: pass * frameCount * 3000)
        packet[2] = UInt8(seq >> 8); packet[3] = UInt8(truncatingIfNeeded: seq)
        packet[4] = UInt8(ts >> 24); packet[5] = UInt8(truncatingIfNeeded: ts >> 16)
        packet[6] = UInt8(truncatingIfNeeded: ts >> 8); packet[7] = UInt8(truncatingIfNeeded: ts)
    }
}

/// An assembler kept across samples, with its position in the replayed stream.
private final class AssemblerBenchState {
    var assembler = VP8FrameAssembler()
    var pass = 0
    var packet = [UInt8](repeating: 0, count: 1500)
    let stream: VideoBenchStream
    init(_ stream: VideoBenchStream) { self.stream = stream }

    func run() -> UInt64 {
        var sum: UInt64 = 0
        for _ in 0..<assemblePasses {
            for i in stream.packets.indices {
                stream.place(i, pass: pass, into: &packet)
                let now = Int64(pass * stream.packets.count + i) * 1_000_000
                packet.withUnsafeBytes { b in
                    guard let view = try? RTPPacketView(parsing: b) else { return }
                    assembler.insert(view, nowNanoseconds: now)
                    while let e = assembler.nextEvent() {
                        switch e {
                        case .frame(let f): sum &+= UInt64(f.data.count) &+ UInt64(f.timestamp)
                        case .keyframeRequest: sum &+= 1
                        }
                    }
                }
            }
            pass += 1
        }
        return sum
    }
}

/// A receive pipeline kept across samples, with its position in the replayed stream.
private final class ReceiveBenchState {
    var receiver: VideoReceivePipeline
    var pass = 0
    var packet = [UInt8](repeating: 0, count: 1500)
    let stream: VideoBenchStream
    init(_ stream: VideoBenchStream) {
        self.stream = stream
        receiver = try! VideoReceivePipeline(width: stream.width, height: stream.height)  // a valid size
        // Packets land in every slot of the assembler's window, growing each to the largest
        // packet it holds, only after many passes: done here, not in the timed samples.
        for _ in 0..<20 { _ = run() }
    }

    func run() -> UInt64 {
        var sum: UInt64 = 0
        var frame = 0
        for _ in 0..<renderPasses {
            for i in stream.packets.indices {
                stream.place(i, pass: pass, into: &packet)
                let now = MonotonicTime(nanoseconds: Int64(pass * stream.frameCount + frame) * 33_333_333)
                let last = packet[1] & 0x80 != 0
                packet.withUnsafeBytes { receiver.receive($0, at: now) }
                if last {
                    receiver.render(at: now.advanced(byNanoseconds: 1_000_000)) { f in sum &+= UInt64(f.data[f.offsetU]) }
                    frame += 1
                }
            }
            frame = 0
            pass += 1
        }
        return sum &+ UInt64(receiver.statistics.framesShown)
    }
}

/// A decoder and its picture, kept across samples.
private final class DecodeBenchState {
    var decoder = try! VPXDecoder(codec: .vp8)  // VP8 is always built in
    var decoded: VideoFrame
    let stream: VideoBenchStream
    init(_ stream: VideoBenchStream) {
        self.stream = stream
        decoded = try! VideoFrame(width: stream.width, height: stream.height)  // the sample clip's size
    }

    func run() -> UInt64 {
        var sum: UInt64 = 0
        for _ in 0..<renderPasses {
            for f in stream.frames {
                _ = try? decoder.decode(f, into: &decoded)
                sum &+= UInt64(decoded.data[decoded.offsetU])
            }
        }
        return sum
    }
}

/// Benchmarks for the video suite.
func videoBenchmarks() -> [Benchmark] {
    let stream = VideoBenchStream.make()
    let assemblePackets = assemblePasses * stream.packets.count
    let payloadStart = 12 + 4  // RTP header without CSRCs or extensions, VP8 descriptor with a picture ID
    var copyTarget = [UInt8](repeating: 0, count: 256 * 1024)
    let assembling = AssemblerBenchState(stream)
    let receiving = ReceiveBenchState(stream)
    let decoding = DecodeBenchState(stream)
    let renderFrames = renderPasses * stream.frameCount
    return [
        Benchmark(name: "video/copy-payloads", unit: .nsPerPacket, iterations: assemblePackets) {
            var sum: UInt64 = 0
            var packet = [UInt8](repeating: 0, count: 1500)
            copyTarget.withUnsafeMutableBytes { out in
                var at = 0
                for _ in 0..<assemblePasses {
                    for i in stream.packets.indices {
                        stream.place(i, pass: 0, into: &packet)
                        packet.withUnsafeBytes { b in
                            let payload = UnsafeRawBufferPointer(rebasing: b[payloadStart...])
                            UnsafeMutableRawBufferPointer(rebasing: out[at..<(at + payload.count)]).copyMemory(from: payload)
                            at += payload.count
                            if b[1] & 0x80 != 0 { sum &+= UInt64(at) &+ UInt64(out[0]); at = 0 }
                        }
                    }
                }
            }
            return sum
        },
        Benchmark(name: "video/vp8-assemble", unit: .nsPerPacket, baseline: "video/copy-payloads",
                  iterations: assemblePackets) { assembling.run() },
        Benchmark(name: "video/decode-320x240", unit: .usPerFrame, iterations: renderFrames) { decoding.run() },
        Benchmark(name: "video/receive-render", unit: .usPerFrame, baseline: "video/decode-320x240",
                  iterations: renderFrames) { receiving.run() },
    ]
}
