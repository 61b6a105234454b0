// A session's local video over a real socket with SRTP: the remote's feedback (PLI, NACK,
// receiver reports) comes back on the same socket, is taken out of the demultiplexer and
// answered by the sender.

import Foundation
import Testing
import ParleyDevices
import ParleyRTP
import ParleySRTP
@testable import ParleyCall

/// What a ``LossyTransport`` dropped.
private final class LossLog {
    var firstFramePackets = 0
    var dropped = 0
}

/// Drops RTP packets of one SSRC on their first sending, below SRTP (the header is in the
/// clear): every packet of the first frame (the keyframe: only a PLI repairs that), then every
/// `period`-th packet. A resend of a dropped sequence number goes through.
private struct LossyTransport<Base: PacketTransport & ~Copyable>: PacketTransport, ~Copyable {
    var base: Base
    let ssrc: UInt32
    let period: Int
    let log: LossLog
    private var seen = Set<UInt16>()
    private var firstFrameDone = false

    init(_ base: consuming Base, ssrc: UInt32, period: Int, log: LossLog) {
        self.base = base; self.ssrc = ssrc; self.period = period; self.log = log
    }

    mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool {
        if bytes.count >= 12, !RTPMultiplexing.isRTCP(secondByte: bytes[1]),
           UInt32(bytes[8]) << 24 | UInt32(bytes[9]) << 16 | UInt32(bytes[10]) << 8 | UInt32(bytes[11]) == ssrc {
            let seq = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
            if seen.insert(seq).inserted {
                if !firstFrameDone {
                    firstFrameDone = bytes[1] & 0x80 != 0
                    log.firstFramePackets += 1
                    return true
                }
                if seen.count % period == 0 {
                    log.dropped += 1
                    return true
                }
            }
        }
        return base.send(bytes, at: time)
    }

    mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {
        base.receive(until: time, body)
    }

    var inFlight: Int { base.inFlight }
}

@Test func localVideoIsRepairedThroughTheSessionsFeedbackOverSRTP() throws {
    let clock = SystemMediaClock()
    var a = try UDPTransport(peerPort: 9, clock: clock)
    let b = try UDPTransport(peerPort: a.localPort, clock: clock)
    a.setPeer(port: b.localPort)
    let keyA = try SRTPKey.generate(suite: .aesCM128HMACSHA1_80), keyB = try SRTPKey.generate(suite: .aesCM128HMACSHA1_80)
    var settings = CallSessionConfiguration()
    settings.remoteTimeout = 1
    settings.endsWhenEveryoneLeft = true
    settings.admitsUndeclaredRemotes = false
    let start = clock.now()
    let left = CallSession(configuration: settings, clock: clock, start: start)
    let right = CallSession(configuration: settings, clock: clock, start: start)
    let log = LossLog()
    let ta = left.addTransport(try SRTPTransport(LossyTransport(a, ssrc: 0x1112, period: 10, log: log), sendKey: keyA, receiveKey: keyB,
                                                 allowRetransmission: true))
    let tb = right.addTransport(try SRTPTransport(b, sendKey: keyB, receiveKey: keyA))

    // Left sends 3 s of a tone and a moving pattern; right sends the tone and watches.
    let format = try AudioFormat(sampleRate: 16_000, channels: 1)
    let tone = (0..<48_000).map { i in Int16(8_000 * sin(Double(i) * 2 * .pi * 300 / 16_000)) }
    var send = AudioSendConfiguration()
    send.ssrc = 0x1111
    try left.addLocal(id: "left", source: SampleProviderSource(try ArraySampleProvider(format: format, samples: tone), clock: clock),
                      configuration: send, sendingOn: ta)
    var video = LocalVideoConfiguration()
    video.ssrc = 0x1112
    try left.addLocalVideo(source: ClockedVideoSource(try MovingPatternProvider(width: 320, height: 240), clock: clock), configuration: video,
                           sendingOn: ta)
    #expect(throws: CallSessionError.localVideoAlreadyAdded) {
        try left.addLocalVideo(source: try PatternSource(width: 320, height: 240, clock: clock), sendingOn: ta)
    }
    send.ssrc = 0x2222
    try right.addLocal(id: "right", source: SampleProviderSource(try ArraySampleProvider(format: format, samples: tone), clock: clock),
                       configuration: send, sendingOn: tb)
    try left.addRemote(RemoteParticipant(id: "right", audioSSRC: 0x2222))
    var feedback = VideoReceiveFeedbackConfiguration()
    feedback.localSSRC = 0x2222
    try right.addRemote(RemoteParticipant(id: "left", audioSSRC: 0x1111,
                                          video: RemoteVideo(ssrc: 0x1112, width: 320, height: 240, feedback: feedback)))
    try right.addRole(.videoFeedback(of: "left"), to: tb)
    #expect(throws: CallSessionError.unknownTransport) { try right.addRole(.shared, to: CallTransportID(index: 9)) }
    var shown = 0
    right.onVideo = { name, picture in if name == "left" && picture.width == 320 { shown += 1 } }
    var rightEvents: [CallEvent] = []
    right.onEvent = { rightEvents.append($0) }

    let scheduler = MediaScheduler(clock: clock)
    try left.attach(to: scheduler)
    try right.attach(to: scheduler)
    scheduler.runUntil(start.advanced(bySeconds: 15), shouldStop: { left.isFinished && right.isFinished })
    #expect(left.isFinished && right.isFinished)

    let sent = try #require(left.localVideoStatistics)
    let got = try #require(right.receiveStatistics(of: "left")?.video)
    print("session video over SRTP: first frame \(log.firstFramePackets) packets dropped, then \(log.dropped) of \(sent.packetsSent); "
          + "sent \(sent.framesEncoded) frames (\(sent.keyframesEncoded) keyframes, \(sent.keyframesForPictureLoss) for PLIs), "
          + "\(sent.packetsRetransmitted) resent for \(sent.nacksReceived) NACKs; received \(got.framesDecoded) decoded, "
          + "\(shown) shown, \(got.packetsMissing) missing, \(got.nackRequests) asked, \(got.pictureLossIndicationsSent) PLIs, "
          + "\(got.receiverReportsSent) receiver reports")
    // The lost keyframe: the receiver asks with a PLI and the sender answers with a keyframe.
    #expect(log.firstFramePackets >= 1)
    #expect(got.pictureLossIndicationsSent >= 1 && sent.pictureLossIndicationsReceived >= 1 && sent.keyframesForPictureLoss >= 1, "\(got) \(sent)")
    // Each later loss is asked for and resent through SRTP (a repeated index), and repairs it.
    #expect(log.dropped >= 5)
    #expect(got.nackRequests >= log.dropped && sent.packetsRetransmitted >= log.dropped, "\(got) \(sent)")
    #expect(got.framesDecoded >= sent.framesEncoded * 9 / 10 - 3, "\(got)")
    // Frames that waited for a repair may be too late for lip sync and are dropped, not shown late.
    #expect(shown >= got.framesDecoded / 2 && shown == got.framesShown, "\(shown) shown: \(got)")
    #expect(sent.receiverReportsReceived >= 2)
    #expect(left.statistics.videoFeedback >= 3 && left.statistics.videoFeedbackDropped == 0)
    #expect(rightEvents.contains { $0.participant == "left" && $0.kind == .videoOn })
    #expect(rightEvents.contains { $0.participant == "left" && $0.kind == .videoOff })
}
