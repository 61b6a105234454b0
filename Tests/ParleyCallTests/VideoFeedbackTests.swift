import Foundation
import Testing
import ParleyCodecs
import ParleyJitter
import ParleyMedia
import ParleyRTP
@testable import ParleyCall
import ParleySimulation

// A video sender and receiver joined by two simulated links (media forward, RTCP feedback
// back), on a virtual clock in 5 ms steps: the sender encodes the sample video at 30 fps, the
// receiver assembles, decodes and sends its feedback after each step, the sender answers
// the feedback that arrived.

private let sampleVideo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia/video/sample.y4m")

private func loadPictures() throws -> [VideoFrame] {
    var reader = try Y4MReader(path: sampleVideo.path)
    var frames: [VideoFrame] = []
    var frame = try VideoFrame(width: reader.header.width, height: reader.header.height)
    while frames.count < 60, try reader.read(into: &frame) { frames.append(frame) }
    return frames
}

/// A ``SimulatedLink`` (delay, jitter) behind a seeded random loss whose rate may change
/// with time, and a rule for datagrams always dropped. Tracks which RTP packets were lost on
/// their first sending and which of those a later sending delivered.
private struct ImpairedLink: PacketTransport {
    var link: SimulatedLink
    var rng: Xoshiro256
    var lossAt: @Sendable (Double) -> Double
    var alwaysDrop: @Sendable (UnsafeRawBufferPointer) -> Bool = { _ in false }
    let origin: MonotonicTime
    var sentSequences = Set<UInt16>()
    var lostOnFirstSending = Set<UInt16>()
    var deliveredLater = Set<UInt16>()
    var dropped = 0

    init(scenario: NetworkScenario, seed: UInt64, origin: MonotonicTime, lossAt: @escaping @Sendable (Double) -> Double) throws {
        link = try SimulatedLink(scenario: scenario, seed: seed, capacity: 2048)
        rng = Xoshiro256(seed: seed ^ 0xF00D)
        self.lossAt = lossAt
        self.origin = origin
    }

    mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool {
        let isRTP = bytes.count >= 12 && !RTPMultiplexing.isRTCP(secondByte: bytes[1])
        let seq = isRTP ? UInt16(bytes[2]) << 8 | UInt16(bytes[3]) : 0
        let first = isRTP && sentSequences.insert(seq).inserted
        let lost = alwaysDrop(bytes) || rng.uniform() < lossAt(Double(origin.nanoseconds(to: time)) / 1e9)
        if lost {
            dropped += 1
            if first { lostOnFirstSending.insert(seq) }
            return true  // sent, then lost on the way
        }
        if isRTP && !first && lostOnFirstSending.contains(seq) { deliveredLater.insert(seq) }
        return link.send(bytes, at: time)
    }

    mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {
        link.receive(until: time, body)
    }

    var inFlight: Int { link.inFlight }
}

private struct VideoCallSetup {
    var seconds = 10.0
    var seed: UInt64 = 1
    var oneWayDelayMs = 40.0
    var jitterMs = 0.0
    var bitrateKbps = 400
    var forwardLoss: @Sendable (Double) -> Double = { _ in 0 }
    var backwardLoss: @Sendable (Double) -> Double = { _ in 0 }
    var dropForward: @Sendable (UnsafeRawBufferPointer) -> Bool = { _ in false }
    var send = VideoSendFeedbackConfiguration()
    var receive = VideoReceiveFeedbackConfiguration()
    /// Whether the receiver sends feedback at all.
    var feedback = true
}

private struct VideoCallResult {
    var sender: VideoStatistics
    var receiver: VideoStatistics
    var lostOnFirstSending: Int
    var deliveredLater: Int
    /// Media time (s) of the receiver's first PLI and of its first decoded frame.
    var firstPictureLoss: Double?
    var firstDecode: Double?
    /// The sender's target bitrate every 0.5 s, and payload kbit/s per second of media.
    var bitrateTrace: [(time: Double, kbps: Int)]
    var payloadKbpsPerSecond: [Double]
}

private let firstTimestamp: UInt32 = 0xFFFF_0000  // wraps during the call

private func runVideoCall(_ setup: VideoCallSetup, pictures: [VideoFrame]) throws -> VideoCallResult {
    let start = MonotonicTime(seconds: 100)
    var scenario = try NetworkScenario.room(lossPercent: 0, jitterMs: setup.jitterMs, baseDelayMs: setup.oneWayDelayMs, packetMs: 10)
    scenario.name = "video-feedback"
    var forward = try ImpairedLink(scenario: scenario, seed: setup.seed, origin: start, lossAt: setup.forwardLoss)
    forward.alwaysDrop = setup.dropForward
    var backward = try ImpairedLink(scenario: scenario, seed: setup.seed &+ 77, origin: start, lossAt: setup.backwardLoss)
    let w = pictures[0].width, h = pictures[0].height
    var sender = try VideoSendPipeline(width: w, height: h, framesPerSecond: 30, bitrateKbps: setup.bitrateKbps,
                                       ssrc: 0x5649_4430, firstTimestamp: firstTimestamp, ntpOffset: 3_900_000_000,
                                       feedback: setup.send)
    var receiver = try VideoReceivePipeline(width: w, height: h, feedback: setup.receive)
    let stepNs: Int64 = 5_000_000
    let frameNs = 1e9 / 30
    var nextFrame = 0
    var result = VideoCallResult(sender: .init(), receiver: .init(), lostOnFirstSending: 0, deliveredLater: 0,
                                 bitrateTrace: [], payloadKbpsPerSecond: [])
    var lastPayload = 0
    let steps = Int(setup.seconds * 1e9) / Int(stepNs)
    for k in 0...steps {
        let elapsed = Int64(k) * stepNs
        let now = start.advanced(byNanoseconds: elapsed)
        let mediaTime = Double(elapsed) / 1e9
        while Double(nextFrame) * frameNs <= Double(elapsed) {
            let captured = start.advanced(byNanoseconds: Int64((Double(nextFrame) * frameNs).rounded()))
            sender.send(pictures[nextFrame % pictures.count], mediaTicks: UInt32(nextFrame * 3000), capturedAt: captured,
                        over: &forward)
            nextFrame += 1
        }
        forward.receive(until: now) { bytes, arrival in receiver.receive(bytes, at: arrival) }
        receiver.render(at: now) { _ in }
        if setup.feedback { receiver.sendFeedback(at: now, over: &backward) }
        backward.receive(until: now) { bytes, _ in sender.receiveFeedback(bytes, at: now, over: &forward) }
        if result.firstPictureLoss == nil && receiver.statistics.pictureLossIndicationsSent > 0 { result.firstPictureLoss = mediaTime }
        if result.firstDecode == nil && receiver.statistics.framesDecoded > 0 { result.firstDecode = mediaTime }
        if k % 100 == 0 { result.bitrateTrace.append((mediaTime, sender.statistics.targetBitrateKbps)) }
        if k % 200 == 0 && k > 0 {
            result.payloadKbpsPerSecond.append(Double(sender.statistics.payloadBytes - lastPayload) * 8 / 1000)
            lastPayload = sender.statistics.payloadBytes
        }
    }
    result.sender = sender.statistics
    result.receiver = receiver.statistics
    result.lostOnFirstSending = forward.lostOnFirstSending.count
    result.deliveredLater = forward.deliveredLater.count
    return result
}

@Suite(.serialized) struct VideoFeedback {
    @Test func lostKeyframeIsRepairedByAPLIWithinOneRoundTripAndAFrame() throws {
        let pictures = try loadPictures()
        var setup = VideoCallSetup()
        setup.seconds = 2
        // Every packet of the first frame (the keyframe) is lost, resends included.
        setup.dropForward = { b in
            b.count >= 12 && !RTPMultiplexing.isRTCP(secondByte: b[1])
                && (UInt32(b[4]) << 24 | UInt32(b[5]) << 16 | UInt32(b[6]) << 8 | UInt32(b[7])) == firstTimestamp
        }
        let r = try runVideoCall(setup, pictures: pictures)
        let pli = try #require(r.firstPictureLoss)
        let decoded = try #require(r.firstDecode)
        let roundTrip = 2 * setup.oneWayDelayMs / 1000
        let frame = 1.0 / 30
        print("lost keyframe: PLI sent at \(Int(pli * 1000)) ms, first picture decoded at \(Int(decoded * 1000)) ms: "
              + "\(Int(((decoded - pli) * 1000).rounded())) ms after the PLI (round trip \(Int(roundTrip * 1000)) ms + frame 33 ms)")
        // The loss shows when the second frame arrives (one frame + one way after the start).
        #expect(pli <= frame + setup.oneWayDelayMs / 1000 + 0.010)
        #expect(decoded - pli <= roundTrip + frame + 0.005)
        #expect(r.sender.pictureLossIndicationsReceived >= 1 && r.sender.keyframesForPictureLoss == 1)
        #expect(r.receiver.framesDecoded >= 50, "\(r.receiver)")
        #expect(r.receiver.decodeErrors == 0)

        // Without feedback the picture does not come back (the next automatic keyframe is 10 s away).
        setup.feedback = false
        let silent = try runVideoCall(setup, pictures: pictures)
        #expect(silent.firstDecode == nil && silent.receiver.framesDecoded == 0)
    }

    @Test func nackRecoversMostPacketsLostAtFivePercent() throws {
        let pictures = try loadPictures()
        var setup = VideoCallSetup()
        setup.seconds = 20
        setup.seed = 5
        setup.jitterMs = 3
        setup.forwardLoss = { _ in 0.05 }
        setup.backwardLoss = { _ in 0.05 }
        setup.send.adaptsBitrate = false  // the same bitrate with and without NACK
        let with = try runVideoCall(setup, pictures: pictures)
        setup.receive.sendsNACK = false
        let without = try runVideoCall(setup, pictures: pictures)

        let share = Double(with.deliveredLater) / Double(max(1, with.lostOnFirstSending))
        let recoveredInTime = Double(with.receiver.packetsRecovered) / Double(max(1, with.lostOnFirstSending))
        print("""
            NACK at 5 % random loss each way, 20 s, 40 ms one way: \(with.sender.packetsSent) packets sent, \
            \(with.lostOnFirstSending) lost on first sending, \(with.deliveredLater) of them delivered by a resend \
            (\(Int((share * 100).rounded())) %); receiver: \(with.receiver.packetsMissing) gaps noticed (reordering included), \
            \(with.receiver.packetsRecovered) lost packets arrived while awaited (\(Int((recoveredInTime * 100).rounded())) %), \
            \(with.receiver.nackMessagesSent) NACKs asking \(with.receiver.nackRequests) times, \
            \(with.sender.packetsRetransmitted) resent; frames decoded \(with.receiver.framesDecoded) of \
            \(with.sender.framesEncoded) with NACK, \(without.receiver.framesDecoded) of \(without.sender.framesEncoded) \
            without; PLIs \(with.receiver.pictureLossIndicationsSent) with, \(without.receiver.pictureLossIndicationsSent) without
            """)
        #expect(with.lostOnFirstSending > 40)
        #expect(share >= 0.85)
        #expect(recoveredInTime >= 0.85)
        #expect(Double(with.receiver.framesDecoded) >= 0.95 * Double(with.sender.framesEncoded))
        #expect(with.sender.packetsRetransmitted <= 2 * with.lostOnFirstSending)
        #expect(with.receiver.framesDecoded > without.receiver.framesDecoded + 100)
        #expect(with.receiver.nackRequests <= 2 * with.lostOnFirstSending)
        #expect(with.sender.retransmissionsUnavailable == 0)
        #expect(without.receiver.nackMessagesSent == 0 && without.sender.packetsRetransmitted == 0)
    }

    @Test func nackUnderHeavyReorderingCostsResendsButFramesStillDecode() throws {
        let pictures = try loadPictures()
        var setup = VideoCallSetup()
        setup.seconds = 20
        setup.seed = 5
        setup.jitterMs = 20  // packets of one frame reordered by tens of ms
        setup.forwardLoss = { _ in 0.05 }
        setup.backwardLoss = { _ in 0.05 }
        setup.send.adaptsBitrate = false
        let with = try runVideoCall(setup, pictures: pictures)
        setup.receive.sendsNACK = false
        let without = try runVideoCall(setup, pictures: pictures)
        let resendsPerLoss = Double(with.sender.packetsRetransmitted) / Double(max(1, with.lostOnFirstSending))
        print("NACK at 5 % loss and 20 ms jitter: \(with.lostOnFirstSending) lost, \(with.sender.packetsRetransmitted) resent "
              + "(\((resendsPerLoss * 10).rounded() / 10) per loss); frames decoded \(with.receiver.framesDecoded) of "
              + "\(with.sender.framesEncoded) with NACK, \(without.receiver.framesDecoded) without")
        #expect(Double(with.receiver.framesDecoded) >= 0.9 * Double(with.sender.framesEncoded))
        #expect(with.receiver.framesDecoded > without.receiver.framesDecoded + 100)
        #expect(resendsPerLoss < 8)
    }

    @Test func bitrateFallsUnderSustainedLossAndClimbsBackAfter() throws {
        let pictures = try loadPictures()
        var setup = VideoCallSetup()
        setup.seconds = 30
        setup.seed = 9
        setup.bitrateKbps = 400
        setup.receive.reportInterval = 0.5
        // 20 % loss from 2 s to 14 s, none before and after.
        setup.forwardLoss = { t in t >= 2 && t < 14 ? 0.20 : 0 }
        let r = try runVideoCall(setup, pictures: pictures)
        func kbps(at t: Double) -> Int { r.bitrateTrace.last { $0.time <= t + 1e-9 }!.kbps }
        let trace = stride(from: 0.0, through: setup.seconds, by: 2).map { "\(Int($0))s:\(kbps(at: $0))" }
        print("bitrate under 20 % loss from 2 s to 14 s (reports every 0.5 s): " + trace.joined(separator: " ")
              + "; payload kbit/s per second: " + r.payloadKbpsPerSecond.map { "\(Int($0.rounded()))" }.joined(separator: " "))
        #expect(kbps(at: 1.9) == 400)
        #expect(kbps(at: 14) <= 100)                     // fell to near the floor
        #expect(r.sender.lowestTargetBitrateKbps >= 50)  // never under the floor
        #expect(kbps(at: 30) == 400)                     // climbed back to the ceiling
        #expect(kbps(at: 18) > kbps(at: 14))
        // The encoder follows: the payload rate late in the loss is well under the early rate.
        let early = r.payloadKbpsPerSecond[0..<2].reduce(0, +) / 2
        let late = r.payloadKbpsPerSecond[11..<14].reduce(0, +) / 3
        #expect(late < 0.5 * early, "\(early) \(late)")
        #expect(r.sender.receiverReportsReceived >= 50)
        #expect(r.sender.roundTripMs.map { abs($0 - 80) < 15 } ?? false, "\(String(describing: r.sender.roundTripMs))")
    }

    @Test func garbageFeedbackAndOutOfRangeSettingsNeverTrap() throws {
        let pictures = try loadPictures()
        var setup = VideoCallSetup()
        setup.seconds = 1.5
        setup.forwardLoss = { _ in 0.1 }
        setup.send.historyPackets = -5
        setup.send.historyMaximumAge = .nan
        setup.send.keyframeMinimumInterval = .infinity
        setup.send.minimumBitrateKbps = -1
        setup.receive.nackCompletionTimeout = .infinity
        setup.receive.reportInterval = .nan
        setup.receive.initialRoundTrip = -.infinity
        setup.receive.nackListSize = .max
        setup.receive.reorderingAllowance = .nan
        setup.receive.nackRetryMinimumInterval = .infinity
        let r = try runVideoCall(setup, pictures: pictures)
        #expect(r.receiver.framesDecoded > 0 && r.receiver.receiverReportsSent > 0)

        // Random bytes, and random bodies behind a valid RR header, at the sender's feedback input.
        var sender = try VideoSendPipeline(width: 64, height: 48, framesPerSecond: 30, ssrc: 7, ntpOffset: 0)
        var link = try ImpairedLink(scenario: try .room(lossPercent: 0, jitterMs: 0), seed: 3, origin: .zero, lossAt: { _ in 0 })
        var rng = Xoshiro256(seed: 11)
        var valid = 0
        for k in 0..<20_000 {
            let n = Int(rng.next() % 80)
            var bytes = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if k % 2 == 0 && n >= 12 {
                bytes.replaceSubrange(0..<8, with: [0x80, 201, 0, 1, 0, 0, 0, 1])
                bytes[8] = 0x80 | (bytes[8] & 0x3F)
                bytes[9] = [200, 201, 205, 206][Int(bytes[9]) & 3]
            }
            bytes.withUnsafeBytes { sender.receiveFeedback($0, at: MonotonicTime(nanoseconds: Int64(k) * 1_000_000), over: &link) }
            if bytes.withUnsafeBytes({ (try? RTCPCompound.parse($0)) != nil }) { valid += 1 }
        }
        #expect(sender.statistics.feedbackReceived == 20_000)
        #expect(sender.statistics.feedbackMalformed == 20_000 - valid)
        #expect(sender.statistics.packetsRetransmitted == 0)  // nothing was sent, nothing to resend
    }

    @Test func aPacketLostForGoodIsAskedABoundedNumberOfTimesThenAKeyframeRepairs() throws {
        let pictures = try loadPictures()
        var setup = VideoCallSetup()
        setup.seconds = 2
        // One packet of the sixth frame never gets through, resends included.
        let target = UInt16(truncatingIfNeeded: UInt32(0x5649_4430) &* 7) &+ 20
        setup.dropForward = { b in b.count >= 12 && !RTPMultiplexing.isRTCP(secondByte: b[1]) && (UInt16(b[2]) << 8 | UInt16(b[3])) == target }
        let r = try runVideoCall(setup, pictures: pictures)
        print("packet lost for good: asked \(r.receiver.nackRequests) times in \(r.receiver.nackMessagesSent) NACKs, "
              + "resent \(r.sender.packetsRetransmitted) times, \(r.receiver.nacksGivenUp) given up, \(r.receiver.pictureLossIndicationsSent) PLI")
        #expect(r.receiver.packetsMissing == 1)
        // Asked at 10 ms, again 1.25 round trips later; a third ask would come after the
        // frame's 250 ms limit, so there is none.
        #expect(r.receiver.nackRequests == 2 && r.sender.packetsRetransmitted == 2)
        #expect(r.receiver.nacksGivenUp == 1 && r.receiver.packetsRecovered == 0)
        #expect(r.receiver.pictureLossIndicationsSent == 1 && r.sender.keyframesForPictureLoss == 1)
        // 61 frames less those of the 250 ms wait and the keyframe's round trip (about 12).
        #expect(r.receiver.framesDecoded >= 45 && r.receiver.framesDecoded <= 52)
    }

    @Test func keyframesForPLIsAreRateLimited() throws {
        var sender = try VideoSendPipeline(width: 64, height: 48, framesPerSecond: 30, ssrc: 7, ntpOffset: 0)
        var link = try ImpairedLink(scenario: try .room(lossPercent: 0, jitterMs: 0), seed: 3, origin: .zero, lossAt: { _ in 0 })
        let pli = try RTCPCompound.marshalled([.receiverReport(RTCPReceiverReport(ssrc: 1)),
                                               .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: 7))])
        let other = try RTCPCompound.marshalled([.receiverReport(RTCPReceiverReport(ssrc: 1)),
                                                 .pictureLossIndication(RTCPPictureLossIndication(senderSSRC: 1, mediaSSRC: 8))])
        for ms in [0, 100, 299, 300, 450, 700] {
            pli.withUnsafeBytes { sender.receiveFeedback($0, at: MonotonicTime(nanoseconds: Int64(ms) * 1_000_000), over: &link) }
        }
        other.withUnsafeBytes { sender.receiveFeedback($0, at: MonotonicTime(seconds: 5), over: &link) }
        // Keyframes at 0, 300 and 700 ms; 100, 299 and 450 ms fall inside 300 ms of the last one.
        #expect(sender.statistics.pictureLossIndicationsReceived == 6)
        #expect(sender.statistics.keyframesForPictureLoss == 3 && sender.statistics.pictureLossIndicationsThrottled == 3)
    }
}

