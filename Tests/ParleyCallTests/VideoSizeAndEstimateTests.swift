import Foundation
import Testing
import ParleyCodecs
import ParleyMedia
import ParleyRTP
@testable import ParleyCall

// The receiver's picture size from VP8 keyframes (unannounced, then changed), and REMB both
// ways: the estimate a receiver sends, the cap a sender takes.

private let sampleVideo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia/video/sample.y4m")

/// Datagrams a pipeline sent, kept in order.
private struct Collector: PacketTransport {
    var datagrams: [[UInt8]] = []
    mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool { datagrams.append(Array(bytes)); return true }
    mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {}
    var inFlight: Int { 0 }
}

/// `count` pictures of the sample video, every other pixel when `half` (160x120).
private func pictures(_ count: Int, half: Bool) throws -> [VideoFrame] {
    var reader = try Y4MReader(path: sampleVideo.path)
    var frame = try VideoFrame(width: reader.header.width, height: reader.header.height)
    var out: [VideoFrame] = []
    while out.count < count, try reader.read(into: &frame) {
        guard half else { out.append(frame); continue }
        var small = try VideoFrame(width: frame.width / 2, height: frame.height / 2)
        let (sw, sh, sy, suv, dy, duv) = (small.width, small.height, frame.strideY, frame.strideUV, small.strideY, small.strideUV)
        frame.withUnsafePlanes { y, u, v in
            small.withUnsafeMutablePlanes { ty, tu, tv in
                for r in 0..<sh { for c in 0..<sw { ty[r * dy + c] = y[2 * r * sy + 2 * c] } }
                for r in 0..<(sh / 2) {
                    for c in 0..<(sw / 2) {
                        tu[r * duv + c] = u[2 * r * suv + 2 * c]
                        tv[r * duv + c] = v[2 * r * suv + 2 * c]
                    }
                }
            }
        }
        out.append(small)
    }
    return out
}

/// The RTP datagrams of `frames` encoded by a sender of SSRC 0x77 (its sender reports left out).
private func encoded(_ frames: [VideoFrame], firstTicks: UInt32) throws -> [[UInt8]] {
    var sender = try VideoSendPipeline(width: frames[0].width, height: frames[0].height, framesPerSecond: 30, ssrc: 0x77, ntpOffset: 0)
    var out = Collector()
    for (i, f) in frames.enumerated() {
        sender.send(f, mediaTicks: firstTicks + UInt32(i) * 3000, capturedAt: MonotonicTime(nanoseconds: Int64(i) * 33_333_333), over: &out)
    }
    return out.datagrams.filter { !RTPMultiplexing.isRTCP($0.withUnsafeBytes { $0 }) }
}

/// A receiver told no size shows pictures at the first keyframe's size, and follows a sender
/// that changes its size at a later keyframe.
@Test func aReceiverTakesThePictureSizeFromKeyframes() throws {
    var receiver = try VideoReceivePipeline()
    var first = try encoded(try pictures(20, half: false), firstTicks: 0)
    // The second stream goes on where the first ended: sequence numbers and timestamps.
    var second = try encoded(try pictures(20, half: true), firstTicks: 20 * 3000)
    let firstSequence = UInt16(first[0][2]) << 8 | UInt16(first[0][3])
    for i in second.indices {
        let seq = firstSequence &+ UInt16(first.count + i)
        second[i][2] = UInt8(seq >> 8)
        second[i][3] = UInt8(seq & 0xFF)
    }
    first += second
    var shown: [(Int, Int)] = []
    for (i, d) in first.enumerated() {
        let t = MonotonicTime(nanoseconds: Int64(i) * 5_000_000)
        d.withUnsafeBytes { receiver.receive($0, at: t) }
        receiver.render(at: t) { shown.append(($0.width, $0.height)) }
    }
    #expect(shown.count >= 20 && shown.count == receiver.statistics.framesDecoded, "\(shown.count) pictures shown, \(receiver.statistics)")
    #expect(shown.first.map { $0 == (320, 240) } == true && shown.last.map { $0 == (160, 120) } == true)
    let change = try #require(shown.firstIndex { $0 == (160, 120) })
    #expect(shown[..<change].allSatisfy { $0 == (320, 240) } && shown[change...].allSatisfy { $0 == (160, 120) })
    #expect(receiver.statistics.width == 160 && receiver.statistics.height == 120 && receiver.statistics.sizeChanges == 1)
    #expect(receiver.statistics.decodeErrors == 0)
}

/// One RTCP compound packet: an empty receiver report and a REMB of `kbps` about `ssrc`.
private func remb(_ kbps: UInt64, about ssrc: UInt32) throws -> [UInt8] {
    var b = [UInt8](repeating: 0, count: 8 + RTCPREMB.size)
    try b.withUnsafeMutableBytes { out in
        let n = try RTCPReceiverReport.marshal(ssrc: 9, report: nil, into: out)
        _ = try RTCPREMB.marshal(senderSSRC: 9, bitrate: kbps * 1000, mediaSSRC: ssrc, into: UnsafeMutableRawBufferPointer(rebasing: out[n...]))
    }
    return b
}

/// A receiver report about `ssrc` with `fractionLost`.
private func report(about ssrc: UInt32, fractionLost: UInt8) throws -> [UInt8] {
    try RTCPCompound.marshalled([.receiverReport(RTCPReceiverReport(ssrc: 9, reports: [
        RTCPReceptionReport(ssrc: ssrc, fractionLost: fractionLost, cumulativeLost: 0, extendedHighestSequence: 1, jitter: 0,
                            lastSenderReport: 0, delaySinceLastSenderReport: 0),
    ]))])
}

/// A REMB about the stream caps its bitrate (the loss rule grows under the cap only); one about
/// another stream does nothing; a higher one lifts the cap.
@Test func aSenderKeepsUnderTheReceiversEstimate() throws {
    var sender = try VideoSendPipeline(width: 320, height: 240, framesPerSecond: 30, bitrateKbps: 300, ssrc: 0x77, ntpOffset: 0)
    var out = Collector()
    let t = MonotonicTime(nanoseconds: 1_000_000_000)
    try remb(120, about: 0x77).withUnsafeBytes { sender.receiveFeedback($0, at: t, over: &out) }
    #expect(sender.statistics.targetBitrateKbps == 120 && sender.statistics.estimatesReceived == 1)
    #expect(sender.statistics.receiverEstimateKbps == 120)
    try report(about: 0x77, fractionLost: 0).withUnsafeBytes { sender.receiveFeedback($0, at: t, over: &out) }
    #expect(sender.statistics.targetBitrateKbps == 120)
    try remb(20, about: 0x78).withUnsafeBytes { sender.receiveFeedback($0, at: t, over: &out) }
    #expect(sender.statistics.targetBitrateKbps == 120 && sender.statistics.estimatesReceived == 1)
    // Under the floor: the floor (50 kbit/s).
    try remb(20, about: 0x77).withUnsafeBytes { sender.receiveFeedback($0, at: t, over: &out) }
    #expect(sender.statistics.targetBitrateKbps == 50 && sender.statistics.lowestTargetBitrateKbps == 50)
    try remb(5_000, about: 0x77).withUnsafeBytes { sender.receiveFeedback($0, at: t, over: &out) }
    try report(about: 0x77, fractionLost: 0).withUnsafeBytes { sender.receiveFeedback($0, at: t, over: &out) }
    #expect(sender.statistics.targetBitrateKbps == 54 && sender.statistics.receiverEstimateKbps == 5_000)
    #expect(sender.statistics.lowestReceiverEstimateKbps == 20 && sender.statistics.estimatesReceived == 3)
    #expect(sender.statistics.feedbackMalformed == 0)
}

/// A receiver with REMB on sends one with each report block: first its ceiling, then what
/// the rate it received allows, never above the ceiling.
@Test func aReceiverSendsItsEstimateWithEachReport() throws {
    var feedback = VideoReceiveFeedbackConfiguration()
    feedback.sendsREMB = true
    feedback.maximumBitrateKbps = 500
    var receiver = try VideoReceivePipeline(feedback: feedback)
    var quiet = try VideoReceivePipeline()
    let datagrams = try encoded(try pictures(60, half: false), firstTicks: 0)
    var out = Collector(), none = Collector()
    for (i, d) in datagrams.enumerated() {
        // The 60 pictures' packets over 4 s.
        let t = MonotonicTime(nanoseconds: Int64(i) * 4_000_000_000 / Int64(datagrams.count))
        d.withUnsafeBytes { receiver.receive($0, at: t); quiet.receive($0, at: t) }
        receiver.sendFeedback(at: t, over: &out)
        quiet.sendFeedback(at: t, over: &none)
    }
    var estimates: [UInt64] = []
    for d in out.datagrams {
        try d.withUnsafeBytes { b in
            try RTCPCompound.forEachPacket(in: b, reducedSize: true) { v in
                if let bitrate = v.rembBitrate {
                    var covers: [UInt32] = []
                    v.forEachREMBSSRC { covers.append($0) }
                    #expect(covers == [0x77])
                    estimates.append(bitrate)
                }
            }
        }
    }
    #expect(estimates.count >= 4 && estimates.count == receiver.statistics.estimatesSent, "\(estimates)")
    #expect(estimates.first.map { $0 / 1000 } == 500 && estimates.allSatisfy { $0 <= 500_000 && $0 >= 30_000 }, "\(estimates)")
    #expect(receiver.statistics.receiveEstimateKbps == Int(estimates.last! / 1000))
    var anyREMB = false
    for d in none.datagrams { try d.withUnsafeBytes { b in try RTCPCompound.forEachPacket(in: b, reducedSize: true) { v in anyREMB = anyREMB || v.isREMB } } }
    #expect(!anyREMB && quiet.statistics.estimatesSent == 0 && !none.datagrams.isEmpty)
}
