// Video pipelines: picture -> VP8 -> RTP -> transport -> frame assembly -> decode -> A/V sync,
// with RTCP feedback (RFC 4585) back from receiver to sender: receiver reports, generic NACKs
// answered from a send history, PLIs answered with keyframes, loss-based bitrate control, and
// the receiver's bandwidth estimate (REMB) both ways.

import ParleyCodecs
import ParleyJitter
import ParleyRTP

/// Counters of one participant's video, sender and receiver.
public struct VideoStatistics: Sendable, Hashable {
    /// Pictures captured (handed to the encoder) and those the pacer skipped as late.
    public var framesCaptured = 0
    public var framesSkippedLate = 0
    /// Compressed frames and RTP packets sent; packets the transport refused.
    public var framesEncoded = 0
    public var encodeErrors = 0
    /// Sender: keyframes among the frames encoded (the first, those for PLIs, the encoder's own).
    public var keyframesEncoded = 0
    public var packetsSent = 0
    public var packetsRefused = 0
    /// Sender: VP8 payload bytes in the packets sent (RTP headers excluded).
    public var payloadBytes = 0
    /// Receiver: packets taken, malformed ones, frames assembled and decoded, decode failures.
    public var packetsReceived = 0
    public var malformed = 0
    public var framesAssembled = 0
    public var framesDecoded = 0
    public var decodeErrors = 0
    /// Receiver: keyframes among the frames decoded.
    public var keyframesDecoded = 0
    /// Keyframe requests the assembler raised (answered by the sender's next frame).
    public var keyframeRequests = 0
    /// Frames shown; shown before lip sync was possible; dropped as too late for the window;
    /// dropped because the render queue was full.
    public var framesShown = 0
    public var framesShownUnsynchronized = 0
    public var framesDroppedLate = 0
    public var framesDroppedQueueFull = 0
    /// Largest |A/V skew| of a synchronised frame, ms, and synchronised frames outside the
    /// ITU-R BT.1359 detectability window.
    public var maximumAbsoluteSkewMs = 0.0
    public var framesOutsideWindow = 0
    /// Receiver: the picture size of the last keyframe (from its VP8 frame header, RFC 6386
    /// 9.1; 0 before the first) and the keyframes that changed it.
    public var width = 0
    public var height = 0
    public var sizeChanges = 0
    /// Receiver: REMBs sent, and the bandwidth estimate of the last one, kbit/s.
    public var estimatesSent = 0
    public var receiveEstimateKbps = 0

    /// Receiver: RTCP compound packets sent (each starts with a receiver report), of them those
    /// carrying a report block, and the generic NACKs and PLIs among them.
    public var feedbackPacketsSent = 0
    public var receiverReportsSent = 0
    public var nackMessagesSent = 0
    public var pictureLossIndicationsSent = 0
    /// Receiver: packets found missing (sequence gaps; a packet reordered by a few packets
    /// counts too), asks for them (a packet asked twice counts twice), missing packets that
    /// arrived at least half a round trip after they were first asked for (recovered by a
    /// resend), and missing packets given up (never arrived in time).
    public var packetsMissing = 0
    public var nackRequests = 0
    public var packetsRecovered = 0
    public var nacksGivenUp = 0

    /// Sender: RTCP feedback datagrams taken and malformed ones; generic NACKs taken and the
    /// sequence numbers they asked for; packets resent; asks for packets no longer (or never)
    /// in the send history or older than its age limit; asks ignored because the same packet
    /// was resent less than half a round trip ago (the ask cannot be about that resend).
    public var feedbackReceived = 0
    public var feedbackMalformed = 0
    public var nacksReceived = 0
    public var retransmissionsRequested = 0
    public var packetsRetransmitted = 0
    public var retransmissionsUnavailable = 0
    public var retransmissionsSuppressed = 0
    /// Sender: PLIs taken, keyframes sent in answer, PLIs inside the keyframe rate limit.
    public var pictureLossIndicationsReceived = 0
    public var keyframesForPictureLoss = 0
    public var pictureLossIndicationsThrottled = 0
    /// Sender: report blocks about its stream taken; the encoder's target bitrate, kbit/s, and
    /// its lowest value so far; the round-trip time from the last report with an LSR, ms.
    public var receiverReportsReceived = 0
    public var targetBitrateKbps = 0
    public var lowestTargetBitrateKbps = 0
    public var roundTripMs: Double?
    /// Sender: REMBs covering its stream taken, and the bitrate of the last one and of the
    /// lowest, kbit/s (0 before the first).
    public var estimatesReceived = 0
    public var receiverEstimateKbps = 0
    public var lowestReceiverEstimateKbps = 0
    public init() {}

    /// Copies the sender's counters (capture, encoding, sending, feedback answered) from
    /// `sent` into this value, which keeps its receiver counters: one stream's figures from
    /// both ends.
    public mutating func takeSenderCounters(from sent: VideoStatistics) {
        framesCaptured = sent.framesCaptured
        framesSkippedLate = sent.framesSkippedLate
        framesEncoded = sent.framesEncoded
        encodeErrors = sent.encodeErrors
        keyframesEncoded = sent.keyframesEncoded
        packetsSent = sent.packetsSent
        packetsRefused = sent.packetsRefused
        payloadBytes = sent.payloadBytes
        feedbackReceived = sent.feedbackReceived
        feedbackMalformed = sent.feedbackMalformed
        nacksReceived = sent.nacksReceived
        retransmissionsRequested = sent.retransmissionsRequested
        packetsRetransmitted = sent.packetsRetransmitted
        retransmissionsUnavailable = sent.retransmissionsUnavailable
        retransmissionsSuppressed = sent.retransmissionsSuppressed
        pictureLossIndicationsReceived = sent.pictureLossIndicationsReceived
        keyframesForPictureLoss = sent.keyframesForPictureLoss
        pictureLossIndicationsThrottled = sent.pictureLossIndicationsThrottled
        receiverReportsReceived = sent.receiverReportsReceived
        targetBitrateKbps = sent.targetBitrateKbps
        lowestTargetBitrateKbps = sent.lowestTargetBitrateKbps
        roundTripMs = sent.roundTripMs
        estimatesReceived = sent.estimatesReceived
        receiverEstimateKbps = sent.receiverEstimateKbps
        lowestReceiverEstimateKbps = sent.lowestReceiverEstimateKbps
    }
}

/// How a ``VideoSendPipeline`` answers RTCP feedback.
public struct VideoSendFeedbackConfiguration: Sendable, Hashable {
    /// Packets kept for retransmission: rounded up to a power of two within 16...32768. Default
    /// 512 (768 KiB of 1500-byte slots): about 15 s of video at 300 kbit/s in 1100-byte
    /// packets, 1.8 s at 2.5 Mbit/s, so that ``historyMaximumAge`` is the limit in practice.
    public var historyPackets = 512
    /// Oldest packet resent, s. Default 1 s: a receiver's frame assembler gives up a missing
    /// packet long before (``VideoReceiveFeedbackConfiguration/nackCompletionTimeout``).
    public var historyMaximumAge = 1.0
    /// Least spacing of keyframes sent for PLIs, s; the round-trip time when that is longer.
    /// Default 0.3 s: a receiver repeating its PLI before the keyframe could arrive gets one
    /// keyframe, not several (each costs several inter frames' bits).
    public var keyframeMinimumInterval = 0.3
    /// Whether receiver reports' fraction lost set the encoder's bitrate, and the receiver's
    /// REMBs cap it. Default on.
    public var adaptsBitrate = true
    /// Floor of the adapted bitrate, kbit/s (at least 10, at most the configured bitrate).
    /// Default 50.
    public var minimumBitrateKbps = 50

    /// The defaults described on each property.
    public init() {}
}

/// The sending half of one participant's video: each picture is VP8-encoded (real-time
/// libvpx), split into RTP payloads (RFC 7741), sent at the 90 kHz clock, with an RTCP sender
/// report each second on the same NTP clock as the participant's audio, so that the receiver
/// can put them in sync.
///
/// RTCP feedback from the receiver (``receiveFeedback(_:at:over:)``):
/// - **Generic NACK** (RFC 4585 6.2.1): each asked packet is resent from a send history, a
///   preallocated ring of the last ``VideoSendFeedbackConfiguration/historyPackets`` packets
///   (each slot is the buffer the packet was written and sent from, so recording it costs
///   nothing extra and nothing is allocated per packet), if it is younger than
///   ``VideoSendFeedbackConfiguration/historyMaximumAge`` and was not resent less than half a
///   round trip ago (a repeated ask that soon cannot be about that resend). Retransmission is a **plain resend of the same packet** (same SSRC, sequence
///   number and payload type), not RFC 4588 RTX: in a two-party call the receiver's
///   `VP8FrameAssembler` takes a resent packet like a reordered one (it fills the hole,
///   a copy already held counts as a duplicate, one for a frame already given up counts as
///   late), and there is no middlebox that must tell repairs from media. The cost is that
///   a receiver cannot tell a retransmission from a late original; ``VideoReceivePipeline``
///   leaves packets it asked for out of its loss statistics so receiver reports keep showing
///   the network's loss. Over SRTP, plain resend needs the sender's context to allow repeated
///   indexes (ParleySRTP's `allowRetransmission`).
/// - **PLI** (RFC 4585 6.3.1): the next frame is a keyframe, at most one per
///   max(``VideoSendFeedbackConfiguration/keyframeMinimumInterval``, round-trip time);
///   PLIs inside that limit are counted and dropped (the receiver repeats its PLI if the
///   keyframe is lost).
/// - **Receiver reports** about this stream: the round-trip time (RFC 3550 6.4.1, from LSR and
///   DLSR), and loss-based bitrate control, the rule of the GCC draft
///   (draft-ietf-rmcat-gcc-02 6): with `loss` = fraction lost / 256, loss < 2 %: bitrate
///   x 1.08; 2...10 %: held; > 10 %: x (1 - 0.5 loss); always between
///   ``VideoSendFeedbackConfiguration/minimumBitrateKbps`` and the configured bitrate.
/// - **REMB** (draft-alvestrand-rmcat-remb) covering this stream: the receiver's bandwidth
///   estimate caps the loss-based bitrate (the GCC draft's A = min(As, Ar)) until the next one.
///
/// Threading: `~Copyable`, one owner thread.
public struct VideoSendPipeline: ~Copyable {
    private var encoder: VPXEncoder
    private var packetizer = VP8Packetizer()
    private var header: RTPHeader
    private var packet = [UInt8](repeating: 0, count: RTPLimits.maximumDatagramSize)
    private var encoded = VPXPacket()
    private var nextReportAt: MonotonicTime?
    private let ntpOffset: Double
    private let firstTimestamp: UInt32
    public private(set) var statistics = VideoStatistics()
    /// The feedback settings in force.
    public let feedback: VideoSendFeedbackConfiguration

    // Send history: slot i = sequence number & mask; each slot is a whole datagram buffer.
    private let historyMask: Int
    private var history: [UInt8]
    private var historyLength: [Int]
    private var historySequence: [Int32]     // -1: empty
    private var historySentAt: [Int64]
    private var historyResentAt: [Int64]     // .min: never resent
    private static let slotSize = RTPLimits.maximumDatagramSize

    // Feedback state.
    private var lastPictureLossKeyframe: MonotonicTime?
    private var roundTrip: Double?
    private let maximumBitrateKbps: Int
    private let minimumBitrateKbps: Int
    private var bitrate: Double
    /// The receiver's last REMB, kbit/s.
    private var receiverEstimate: Double?

    /// An encoder for `width`x`height` pictures at `framesPerSecond`, VP8 at `bitrateKbps` (also
    /// the ceiling of the adapted bitrate), answering feedback as `feedback` says.
    public init(width: Int, height: Int, framesPerSecond: Int, bitrateKbps: Int = 300, ssrc: UInt32,
                payloadType: UInt8 = VP8RTP.defaultPayloadType, firstTimestamp: UInt32 = 0,
                ntpOffset: Double, feedback: VideoSendFeedbackConfiguration = .init()) throws(VPXError) {
        encoder = try VPXEncoder(VPXEncoderConfiguration(codec: .vp8, width: width, height: height,
                                                         framesPerSecond: framesPerSecond, targetBitrateKbps: bitrateKbps))
        header = RTPHeader(payloadType: payloadType, sequenceNumber: UInt16(truncatingIfNeeded: ssrc &* 7),
                           timestamp: firstTimestamp, ssrc: ssrc)
        self.ntpOffset = ntpOffset
        self.firstTimestamp = firstTimestamp
        self.feedback = feedback
        var n = 16
        while n < min(max(feedback.historyPackets, 16), 32_768) { n <<= 1 }
        historyMask = n - 1
        history = [UInt8](repeating: 0, count: n * Self.slotSize)
        historyLength = [Int](repeating: 0, count: n)
        historySequence = [Int32](repeating: -1, count: n)
        historySentAt = [Int64](repeating: 0, count: n)
        historyResentAt = [Int64](repeating: .min, count: n)
        maximumBitrateKbps = bitrateKbps
        minimumBitrateKbps = min(max(10, feedback.minimumBitrateKbps), bitrateKbps)
        bitrate = Double(bitrateKbps)
        statistics.targetBitrateKbps = bitrateKbps
        statistics.lowestTargetBitrateKbps = bitrateKbps
    }

    /// Asks for a keyframe next (the receiver could not decode).
    public mutating func requestKeyframe() { encoder.requestKeyframe() }

    /// Counts pictures the pacer skipped because the sender was late.
    public mutating func skipped(_ count: Int) { statistics.framesSkippedLate += count }

    /// The SSRC of the stream.
    public var ssrc: UInt32 { header.ssrc }

    /// Packets the send history holds (a power of two).
    public var historyCapacity: Int { historyMask + 1 }

    /// Encodes and sends `picture`, captured at `captureTime`, `mediaTicks` 90 kHz ticks after
    /// the stream's start.
    public mutating func send<T: PacketTransport & ~Copyable>(_ picture: borrowing VideoFrame, mediaTicks: UInt32,
                                                            capturedAt captureTime: MonotonicTime, over transport: inout T) {
        statistics.framesCaptured += 1
        let ts = firstTimestamp &+ mediaTicks
        if nextReportAt.map({ captureTime >= $0 }) ?? true {
            let sr = RTCPSenderReport(ssrc: header.ssrc, ntpTimestamp: NTPTimestamp(secondsSince1900: ntpOffset + captureTime.seconds),
                                      rtpTimestamp: ts, packetCount: UInt32(truncatingIfNeeded: statistics.packetsSent),
                                      octetCount: UInt32(truncatingIfNeeded: statistics.payloadBytes))
            _ = packet.withUnsafeMutableBytes { out -> Bool in
                guard let n = try? RTCPPacket.senderReport(sr).marshal(into: out) else { return false }
                return transport.send(UnsafeRawBufferPointer(rebasing: out[0..<n]), at: captureTime)
            }
            nextReportAt = captureTime.advanced(bySeconds: 1)
        }
        header.timestamp = ts
        let delivered: Bool
        do {
            delivered = try encoder.encode(picture, into: &encoded)
        } catch {
            statistics.encodeErrors += 1
            return
        }
        guard delivered else { return }
        statistics.framesEncoded += 1
        if encoded.isKeyframe { statistics.keyframesEncoded += 1 }
        var sentPackets = 0, refused = 0
        let mask = historyMask
        let now = captureTime.nanoseconds
        encoded.data.withUnsafeBytes { bytes in
            packetizer.packetize(bytes) { payload, last in
                header.marker = last
                // Written straight into its history slot and sent from there.
                let slot = Int(header.sequenceNumber) & mask
                let length = history.withUnsafeMutableBytes { all -> Int in
                    let out = UnsafeMutableRawBufferPointer(rebasing: all[(slot * Self.slotSize)..<((slot + 1) * Self.slotSize)])
                    return (try? header.marshal(payload: payload, into: out)) ?? 0
                }
                var ok = false
                if length > 0 {
                    historyLength[slot] = length
                    historySequence[slot] = Int32(header.sequenceNumber)
                    historySentAt[slot] = now
                    historyResentAt[slot] = .min
                    ok = history.withUnsafeBytes { all in
                        transport.send(UnsafeRawBufferPointer(rebasing: all[(slot * Self.slotSize)..<(slot * Self.slotSize + length)]),
                                       at: captureTime)
                    }
                } else {
                    historySequence[slot] = -1
                }
                if ok { sentPackets += 1; statistics.payloadBytes += payload.count } else { refused += 1 }
                header.sequenceNumber &+= 1
            }
        }
        statistics.packetsSent += sentPackets
        statistics.packetsRefused += refused
    }

    /// Takes one RTCP datagram from the receiver (a compound packet, or a reduced-size one as
    /// RFC 5506 allows, e.g. a lone PLI) that arrived at `now`: resends the packets
    /// generic NACKs ask for (over `transport`, at `now`), schedules a keyframe for a PLI, and
    /// applies receiver reports (round-trip time, bitrate). Feedback about other SSRCs is
    /// ignored; a malformed datagram is counted and dropped. Allocates nothing.
    public mutating func receiveFeedback<T: PacketTransport & ~Copyable>(_ bytes: UnsafeRawBufferPointer, at now: MonotonicTime,
                                                                       over transport: inout T) {
        statistics.feedbackReceived += 1
        let me = header.ssrc
        var pictureLoss = false
        var reportLoss: UInt8?
        var reportRoundTrip: Double?
        var estimate: UInt64?
        let arrival = NTPTimestamp(secondsSince1900: ntpOffset + now.seconds)
        var nackSequences = 0
        do throws(RTPError) {
            try RTCPCompound.forEachPacket(in: bytes, reducedSize: true) { view in
                if view.isGenericNACK {
                    guard view.mediaSSRC == me else { return }
                    statistics.nacksReceived += 1
                    view.forEachNACKItem { item in
                        item.forEachLost { seq in
                            nackSequences += 1
                            resend(seq, now: now, over: &transport)
                        }
                    }
                } else if view.isPictureLossIndication {
                    if view.mediaSSRC == me { pictureLoss = true }
                } else if view.isREMB {
                    var covers = false
                    view.forEachREMBSSRC { if $0 == me { covers = true } }
                    if covers { estimate = view.rembBitrate }
                } else {
                    view.forEachReportBlock { block in
                        guard block.ssrc == me else { return }
                        statistics.receiverReportsReceived += 1
                        reportLoss = block.fractionLost
                        if let rtt = block.roundTripTime(arrival: arrival), rtt >= 0 { reportRoundTrip = rtt }
                    }
                }
            }
        } catch {
            statistics.feedbackMalformed += 1
            return
        }
        statistics.retransmissionsRequested += nackSequences
        if let rtt = reportRoundTrip {
            roundTrip = rtt
            statistics.roundTripMs = rtt * 1000
        }
        if pictureLoss {
            statistics.pictureLossIndicationsReceived += 1
            let spacing = max(feedback.keyframeMinimumInterval, roundTrip ?? 0)
            if let last = lastPictureLossKeyframe, Double(last.nanoseconds(to: now)) < spacing * 1e9 {
                statistics.pictureLossIndicationsThrottled += 1
            } else {
                lastPictureLossKeyframe = now
                statistics.keyframesForPictureLoss += 1
                encoder.requestKeyframe()
            }
        }
        if let estimate {
            statistics.estimatesReceived += 1
            let kbps = Double(estimate) / 1000
            statistics.receiverEstimateKbps = Int(min(kbps, 1e9))
            statistics.lowestReceiverEstimateKbps = statistics.estimatesReceived == 1
                ? statistics.receiverEstimateKbps : min(statistics.lowestReceiverEstimateKbps, statistics.receiverEstimateKbps)
            if feedback.adaptsBitrate {
                receiverEstimate = kbps
                bitrate = min(bitrate, kbps)
                applyBitrate()
            }
        }
        if let fraction = reportLoss, feedback.adaptsBitrate { adaptBitrate(fractionLost: fraction) }
    }

    /// Resends the packet with sequence number `seq` from the history, if it is there, young
    /// enough and not resent within the last round trip.
    private mutating func resend<T: PacketTransport & ~Copyable>(_ seq: UInt16, now: MonotonicTime, over transport: inout T) {
        let slot = Int(seq) & historyMask
        let t = now.nanoseconds
        guard historySequence[slot] == Int32(seq), Double(t - historySentAt[slot]) <= feedback.historyMaximumAge * 1e9 else {
            statistics.retransmissionsUnavailable += 1
            return
        }
        if historyResentAt[slot] != .min, Double(t - historyResentAt[slot]) < (roundTrip ?? 0) * 0.5e9 {
            statistics.retransmissionsSuppressed += 1
            return
        }
        let length = historyLength[slot]
        let ok = history.withUnsafeBytes { all in
            transport.send(UnsafeRawBufferPointer(rebasing: all[(slot * Self.slotSize)..<(slot * Self.slotSize + length)]), at: now)
        }
        if ok {
            historyResentAt[slot] = t
            statistics.packetsRetransmitted += 1
        } else {
            statistics.packetsRefused += 1
        }
    }

    /// The loss-based rule (see the type's documentation) for one report's fraction lost.
    private mutating func adaptBitrate(fractionLost: UInt8) {
        let loss = Double(fractionLost) / 256
        if loss < 0.02 {
            bitrate *= 1.08
        } else if loss > 0.10 {
            bitrate *= 1 - 0.5 * loss
        }
        applyBitrate()
    }

    /// Keeps the bitrate within its bounds and the receiver's estimate, and gives it to the encoder.
    private mutating func applyBitrate() {
        bitrate = min(Double(maximumBitrateKbps), receiverEstimate ?? .infinity, bitrate)
        bitrate = max(Double(minimumBitrateKbps), bitrate)
        let kbps = Int(bitrate.rounded())
        guard kbps != statistics.targetBitrateKbps else { return }
        do {
            try encoder.setTargetBitrate(kbps: kbps)
            statistics.targetBitrateKbps = kbps
            statistics.lowestTargetBitrateKbps = min(statistics.lowestTargetBitrateKbps, kbps)
        } catch {
            statistics.encodeErrors += 1
        }
    }
}

/// How a ``VideoReceivePipeline`` asks its sender for repairs (RFC 4585) and reports reception.
public struct VideoReceiveFeedbackConfiguration: Sendable, Hashable {
    /// SSRC this receiver's RTCP is sent under (a call uses its local audio SSRC).
    public var localSSRC: UInt32 = 0x5652_4556
    /// Whether missing packets are asked for with generic NACKs. Default on.
    public var sendsNACK = true
    /// Times one missing packet is asked for at most. Default 3.
    public var maximumNACKsPerPacket = 3
    /// Missing packets tracked at once: rounded up to a power of two within 16...1024. A gap
    /// longer than this is not asked for (a PLI repairs it). Default 256.
    public var nackListSize = 256
    /// How long a packet must have been missing before it is first asked for, s: packets
    /// reordered by less than this are not asked for (nor resent). Default 0.01 s. Asking
    /// early costs a resend of a packet that was only late; asking late can cost its frame.
    public var reorderingAllowance = 0.01
    /// Least spacing of asks for the same packet, s; 1.25 round trips when longer (the
    /// receiver's estimate: the time from a first ask to the packet's arrival, rising at once
    /// and falling slowly, since a late original arrives sooner than a repair). Default 0.02 s.
    public var nackRetryMinimumInterval = 0.02
    /// Round-trip estimate to start from, s: the estimate takes a longer time from ask to
    /// arrival at once and a shorter one by 1/16 (a late original can look like a quick
    /// repair). Default 0.1 s.
    public var initialRoundTrip = 0.1
    /// How long the frame assembler waits for a missing packet with NACK on, s; a packet is
    /// not asked for once it has been missing this long (the assembler has given its frame
    /// up). Default 0.25 s: room for a repair and one repeat at round trips up to ~100 ms.
    /// It applies from the first ``VideoReceivePipeline/sendFeedback(at:over:)`` on; without
    /// NACK, or while no feedback is sent, the assembler's own default (0.1 s) applies.
    public var nackCompletionTimeout = 0.25
    /// Whether lost pictures (a lost keyframe or reference, a decode failure) are reported
    /// with PLIs. Default on.
    public var sendsPictureLoss = true
    /// Least spacing of PLIs, s. Default 0.3 s (one round trip plus a keyframe's transmission
    /// on a typical path; the sender throttles to about the same).
    public var pictureLossMinimumInterval = 0.3
    /// Interval between receiver reports with a report block, s. Default 1 s.
    public var reportInterval = 1.0
    /// Whether each report block comes with a REMB, the receiver's estimate of the bandwidth
    /// the sender may use (a browser's sender negotiates it as `goog-remb`). Default off.
    public var sendsREMB = false
    /// The most the estimate asks for, kbit/s (at least 30). Default 2000.
    public var maximumBitrateKbps = 2_000

    /// The defaults described on each property.
    public init() {}
}

/// The receiving half of one participant's video: RTP packets to complete VP8 frames
/// (`VP8FrameAssembler`: reordering, loss, keyframe requests), decoded into a small pool of
/// pictures, shown in sync with the participant's audio (``AVSynchronizer``): a frame waits
/// for its audio, a frame too late for the lip-sync window is dropped rather than queued.
///
/// Feedback to the sender goes out when the owner calls ``sendFeedback(at:over:)`` (after
/// each ``receive(_:at:)`` burst or render tick): one RTCP compound packet starting with a
/// receiver report (a report block every ``VideoReceiveFeedbackConfiguration/reportInterval``,
/// empty otherwise), then
/// - a **generic NACK** for the packets missing from sequence gaps: each is asked once a later
///   packet has shown the gap for ``VideoReceiveFeedbackConfiguration/reorderingAllowance``
///   (so slight reordering is not mistaken for loss), again after max(retry interval, 1.25 round
///   trips) up to
///   ``VideoReceiveFeedbackConfiguration/maximumNACKsPerPacket`` times, and never once its
///   frame was given up or it has been missing longer than
///   ``VideoReceiveFeedbackConfiguration/nackCompletionTimeout``;
/// - a **PLI** when the assembler asks for a keyframe (the first keyframe or a reference
///   frame was lost) or decoding fails, at most every
///   ``VideoReceiveFeedbackConfiguration/pictureLossMinimumInterval``, until a keyframe
///   decodes.
/// - a **REMB** with each report block when ``VideoReceiveFeedbackConfiguration/sendsREMB``:
///   the estimate of what the path carries, from the rate received over the report's interval
///   and the report's fraction lost `loss`, by the GCC draft's loss rule on the receive side:
///   loss < 2 %: max(estimate x 1.08, 1.5 x the rate received); 2...10 %: held; > 10 %:
///   the rate received x (1 - 0.5 loss); always between 30 kbit/s and
///   ``VideoReceiveFeedbackConfiguration/maximumBitrateKbps`` (the first estimate is that
///   maximum).
/// The report's fraction lost counts a packet that arrived at least half a round trip after
/// it was first asked for (a repair) as lost, so the sender's bitrate control sees the
/// network's loss, not what repair left; one back sooner was only late and counts as received.
///
/// The pictures take the size of each keyframe (its VP8 frame header, RFC 6386 9.1): the size
/// given at creation, when signalling announced one, only sizes the first pictures, and a
/// sender that changes its size at a keyframe is followed (``VideoStatistics/sizeChanges``).
/// Nothing is allocated per packet or per feedback packet (the picture pool only when the size
/// changes).
///
/// Threading: `~Copyable`, one owner thread.
public struct VideoReceivePipeline: ~Copyable {
    private var assembler: VP8FrameAssembler
    private var decoder: VPXDecoder
    /// Lip sync with the participant's audio.
    public var sync = AVSynchronizer()
    private var pool: [VideoFrame]
    private var due: [MonotonicTime?]
    private var ticks: [UInt32]
    private var keyframeWanted = false
    public private(set) var statistics = VideoStatistics()
    private let payloadType: UInt8
    /// The feedback settings in force.
    public let feedback: VideoReceiveFeedbackConfiguration

    // Reception statistics of the sender's stream (RFC 3550 A.1/A.3), for receiver reports.
    private var source = try! RTPSourceStatistics(clockRate: VP8RTP.clockRate)  // 90 kHz: positive, cannot throw
    private var mediaSSRC: UInt32?
    private var nextReportAt: MonotonicTime?
    // Missing packets: slot = extended sequence & mask.
    private var unwrapper = SequenceNumberUnwrapper()
    private var highest: Int64?
    private var lowestMissing: Int64 = 0
    private let missingMask: Int
    private var missingSequence: [Int64]    // -1: empty
    private var missingSince: [Int64]
    private var missingAskedAt: [Int64]
    private var missingFirstAskedAt: [Int64]
    private var missingAsks: [Int]
    private var roundTrip: Double
    private var nackItems: [RTCPNACKItem]
    private var feedbackBuffer = [UInt8](repeating: 0, count: RTPLimits.maximumDatagramSize)
    private var waitsForRepairs = false
    // The bandwidth estimate: bytes received since the last report block, and when that was.
    private var bytesSinceReport = 0
    private var lastReportBlockAt: MonotonicTime?
    private var estimateKbps: Double?
    // Picture loss.
    private var pictureLossPending = false
    private var lastPictureLoss: MonotonicTime?

    /// A receiver whose pictures are `width`x`height` until the first keyframe gives their size,
    /// with a render queue of `queue` frames (at least 1) and the given feedback settings.
    ///
    /// - Throws: `VPXError` `invalidParameter` for a size not within
    ///   1...`VideoFrame.maximumDimension` a side; libvpx's error if the decoder cannot start.
    public init(width: Int, height: Int, payloadType: UInt8 = VP8RTP.defaultPayloadType, queue: Int = 4,
                feedback: VideoReceiveFeedbackConfiguration = .init()) throws(VPXError) {
        let blank: VideoFrame
        do { blank = try VideoFrame(width: width, height: height) } catch {
            throw VPXError(code: .invalidParameter, operation: "VideoReceivePipeline", message: "\(error)")
        }
        decoder = try VPXDecoder(codec: .vp8)
        let queue = max(1, queue)
        pool = [VideoFrame](repeating: blank, count: queue)
        due = [MonotonicTime?](repeating: nil, count: queue)
        ticks = [UInt32](repeating: 0, count: queue)
        self.payloadType = payloadType
        self.feedback = feedback
        assembler = VP8FrameAssembler()
        var n = 16
        while n < min(max(feedback.nackListSize, 16), 1024) { n <<= 1 }
        missingMask = n - 1
        missingSequence = [Int64](repeating: -1, count: n)
        missingSince = [Int64](repeating: 0, count: n)
        missingAskedAt = [Int64](repeating: 0, count: n)
        missingFirstAskedAt = [Int64](repeating: 0, count: n)
        missingAsks = [Int](repeating: 0, count: n)
        nackItems = []
        nackItems.reserveCapacity(n)
        roundTrip = Double(clampedNanoseconds(feedback.initialRoundTrip)) / 1e9
    }

    /// A receiver of pictures whose size signalling did not announce (a browser's): the first
    /// keyframe's header gives it.
    public init(payloadType: UInt8 = VP8RTP.defaultPayloadType, queue: Int = 4,
                feedback: VideoReceiveFeedbackConfiguration = .init()) throws(VPXError) {
        try self.init(width: 2, height: 2, payloadType: payloadType, queue: queue, feedback: feedback)
    }

    /// Whether the assembler asked for a keyframe since the last call (then cleared).
    public mutating func takeKeyframeRequest() -> Bool {
        defer { keyframeWanted = false }
        return keyframeWanted
    }

    /// The receiver's round-trip estimate, s (from asks to repairs; the configured initial
    /// value until a repair arrived).
    public var roundTripEstimate: Double { roundTrip }

    /// Takes one datagram (RTP VP8 or an RTCP sender report) that arrived at `arrival`.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, at arrival: MonotonicTime) {
        if RTPMultiplexing.isRTCP(bytes) {
            do throws(RTPError) {
                try RTCPCompound.forEachPacket(in: bytes, reducedSize: true) { view in
                    guard view.packetType == RTCPPacket.senderReportType,
                          case .senderReport(let sr) = view.packet else { return }
                    sync.videoSenderReport(sr)
                    if sr.ssrc == mediaSSRC {
                        source.noteSenderReport(ntp: sr.ntpTimestamp, arrivalNanoseconds: arrival.nanoseconds)
                    }
                }
            } catch {
                statistics.malformed += 1
            }
            return
        }
        guard let view = try? RTPPacketView(parsing: bytes), view.payloadType == payloadType else {
            statistics.malformed += 1
            return
        }
        statistics.packetsReceived += 1
        bytesSinceReport += bytes.count
        if mediaSSRC == nil { mediaSSRC = view.ssrc }
        let repaired = noteSequence(view.sequenceNumber, at: arrival.nanoseconds)
        if !repaired {
            source.update(sequenceNumber: view.sequenceNumber, timestamp: view.timestamp,
                          arrivalNanoseconds: arrival.nanoseconds, payloadBytes: view.payload.count)
        }
        assembler.insert(view, nowNanoseconds: arrival.nanoseconds)
        takeAssemblerEvents(now: arrival)
    }

    /// Tracks sequence gaps for NACK; returns whether `seq` is a packet that had been asked for.
    private mutating func noteSequence(_ seq: UInt16, at now: Int64) -> Bool {
        let ext = unwrapper.unwrap(seq)
        guard let top = highest else {
            highest = ext
            lowestMissing = ext + 1
            return false
        }
        if ext > top {
            let gap = ext - top - 1
            if gap > Int64(missingMask) {
                // Too long to ask for packet by packet: forget the list; the assembler's
                // keyframe request repairs the picture.
                clearMissing()
                statistics.packetsMissing += Int(min(gap, Int64(Int32.max)))
                statistics.nacksGivenUp += Int(min(gap, Int64(Int32.max)))
                lowestMissing = ext + 1
            } else if gap > 0 {
                for s in (top + 1)..<ext {
                    let i = Int(truncatingIfNeeded: s) & missingMask
                    if missingSequence[i] >= 0 { statistics.nacksGivenUp += 1 }  // pushed out of the list
                    missingSequence[i] = s
                    missingSince[i] = now
                    missingAsks[i] = 0
                }
                statistics.packetsMissing += Int(gap)
            }
            highest = ext
            return false
        }
        let i = Int(truncatingIfNeeded: ext) & missingMask
        guard missingSequence[i] == ext else { return false }
        missingSequence[i] = -1
        guard missingAsks[i] > 0 else { return false }  // reordered before it was asked for
        let sinceAsk = Double(now - missingFirstAskedAt[i]) / 1e9
        // A packet back sooner than half a round trip after the first ask cannot be the resend:
        // it is the original, late; it counts as received in the loss statistics.
        let repaired = sinceAsk >= roundTrip / 2
        if repaired { statistics.packetsRecovered += 1 }
        if missingAsks[i] == 1 {
            roundTrip = sinceAsk > roundTrip ? sinceAsk : roundTrip + (sinceAsk - roundTrip) / 16
        }
        return repaired
    }

    private mutating func clearMissing() {
        for i in missingSequence.indices where missingSequence[i] >= 0 {
            missingSequence[i] = -1
            statistics.nacksGivenUp += 1
        }
    }

    /// Handles what the assembler queued: each frame is decoded into a free slot of the pool
    /// (the oldest pending one when the queue is full) and scheduled against the audio; a
    /// keyframe request becomes a pending PLI.
    private mutating func takeAssemblerEvents(now: MonotonicTime) {
        while let event = assembler.nextEvent() {
            switch event {
            case .keyframeRequest:
                statistics.keyframeRequests += 1
                keyframeWanted = true
                pictureLossPending = true
            case .frame(let f):
                // `f.data` is the assembler's buffer: decoded before the next event is taken.
                decode(f, now: now)
            }
        }
    }

    private mutating func decode(_ f: VP8AssembledFrame, now: MonotonicTime) {
        statistics.framesAssembled += 1
        if f.header.isKeyframe { adoptSize(width: f.header.width, height: f.header.height) }
        // A free slot, or the oldest pending one is dropped (queue full).
        var slot = due.firstIndex { $0 == nil }
        if slot == nil {
            slot = due.indices.min { due[$0]! < due[$1]! }
            statistics.framesDroppedQueueFull += 1
            due[slot!] = nil
        }
        let s = slot!
        let ok = (try? decoder.decode(f.data, into: &pool[s])) ?? nil
        guard ok == true else {
            statistics.decodeErrors += ok == nil ? 1 : 0
            if ok == nil {
                keyframeWanted = true
                pictureLossPending = true
            }
            return
        }
        statistics.framesDecoded += 1
        if f.header.isKeyframe {
            pictureLossPending = false
            statistics.keyframesDecoded += 1
        }
        ticks[s] = f.timestamp
        switch sync.decide(videoTimestamp: f.timestamp, now: now) {
        case .show(let at): due[s] = at
        case .drop: statistics.framesDroppedLate += 1
        case .unsynchronized:
            // Shown at the next render, as it is.
            due[s] = now
            statistics.framesShownUnsynchronized += 1
        }
    }

    /// Takes a keyframe's picture size: the free pictures of the pool are made at it (those
    /// waiting to be shown keep theirs; the decoder sizes each picture it writes).
    private mutating func adoptSize(width: Int, height: Int) {
        guard (1...VideoFrame.maximumDimension).contains(width), (1...VideoFrame.maximumDimension).contains(height),
              width != statistics.width || height != statistics.height else { return }
        if statistics.width != 0 { statistics.sizeChanges += 1 }
        statistics.width = width
        statistics.height = height
        for s in pool.indices where due[s] == nil && (pool[s].width != width || pool[s].height != height) {
            pool[s] = VideoFrame(validatedWidth: width, height: height)
        }
    }

    /// Shows the frames due by `now` (calls `show` with each picture, earliest first); gives up
    /// on incomplete frames past the assembler's timeout. Allocates nothing.
    public mutating func render(at now: MonotonicTime, show: (borrowing VideoFrame) -> Void) {
        assembler.advance(nowNanoseconds: now.nanoseconds)
        takeAssemblerEvents(now: now)
        // Pending frames are re-checked against the audio now: if the audio's delay changed
        // since they were decoded (the jitter buffer adapted), they follow it.
        for s in due.indices where due[s] != nil {
            switch sync.decide(videoTimestamp: ticks[s], now: now) {
            case .show(let at): due[s] = at
            case .drop:
                due[s] = nil
                statistics.framesDroppedLate += 1
            case .unsynchronized: break
            }
        }
        while let s = earliestDue(by: now) {
            due[s] = nil
            statistics.framesShown += 1
            if let skew = sync.skew(videoTimestamp: ticks[s], shownAt: now) {
                statistics.maximumAbsoluteSkewMs = max(statistics.maximumAbsoluteSkewMs, abs(skew) * 1000)
                if !sync.window.contains(skew) { statistics.framesOutsideWindow += 1 }
            }
            show(pool[s])
        }
    }

    /// The pool slot of the frame due first at or before `now`, if any (a scan: nothing allocated).
    private func earliestDue(by now: MonotonicTime) -> Int? {
        var best: Int?
        for s in due.indices {
            guard let at = due[s], at <= now else { continue }
            if best.map({ at < due[$0]! }) ?? true { best = s }
        }
        return best
    }

    /// Sends what is due at `now` to the sender over `transport` as one RTCP compound packet: a
    /// receiver report (with its block when the report interval passed), a generic NACK for the
    /// missing packets due an ask, a PLI when a picture was lost (see the type's
    /// documentation). Sends nothing when nothing is due or no packet has arrived yet.
    public mutating func sendFeedback<T: PacketTransport & ~Copyable>(at now: MonotonicTime, over transport: inout T) {
        guard let media = mediaSSRC else { return }
        if feedback.sendsNACK && !waitsForRepairs {
            // Feedback has a way back now: wait long enough for a repair.
            assembler.setCompletionTimeout(nanoseconds: clampedNanoseconds(feedback.nackCompletionTimeout))
            waitsForRepairs = true
        }
        let t = now.nanoseconds
        let reportDue = nextReportAt.map { now >= $0 } ?? true
        nackItems.removeAll(keepingCapacity: true)
        if feedback.sendsNACK { collectNACKs(now: t) }
        var pictureLossDue = false
        if feedback.sendsPictureLoss && pictureLossPending {
            pictureLossDue = lastPictureLoss.map { Double($0.nanoseconds(to: now)) >= feedback.pictureLossMinimumInterval * 1e9 } ?? true
        }
        guard reportDue || !nackItems.isEmpty || pictureLossDue else { return }
        let local = feedback.localSSRC
        let block: RTCPReceptionReport? = reportDue ? source.makeReceptionReport(ssrc: media, nowNanoseconds: t) : nil
        let estimate: UInt64? = feedback.sendsREMB ? block.map { updateEstimate(fractionLost: $0.fractionLost, now: now) } : nil
        let sent = feedbackBuffer.withUnsafeMutableBytes { out -> Bool in
            var n = 0
            do throws(RTPError) {
                n += try RTCPReceiverReport.marshal(ssrc: local, report: block, into: out)
                if !nackItems.isEmpty {
                    n += try nackItems.withUnsafeBufferPointer { items throws(RTPError) in
                        try RTCPGenericNACK.marshal(senderSSRC: local, mediaSSRC: media, items: items,
                                                    into: UnsafeMutableRawBufferPointer(rebasing: out[n...]))
                    }
                }
                if pictureLossDue {
                    n += try RTCPPictureLossIndication(senderSSRC: local, mediaSSRC: media)
                        .marshal(into: UnsafeMutableRawBufferPointer(rebasing: out[n...]))
                }
                if let estimate {
                    n += try RTCPREMB.marshal(senderSSRC: local, bitrate: estimate, mediaSSRC: media,
                                              into: UnsafeMutableRawBufferPointer(rebasing: out[n...]))
                }
            } catch {
                return false
            }
            return transport.send(UnsafeRawBufferPointer(rebasing: out[0..<n]), at: now)
        }
        guard sent else { return }
        statistics.feedbackPacketsSent += 1
        if reportDue {
            statistics.receiverReportsSent += 1
            nextReportAt = now.advanced(byNanoseconds: max(10_000_000, clampedNanoseconds(feedback.reportInterval)))
        }
        if !nackItems.isEmpty { statistics.nackMessagesSent += 1 }
        if let estimate {
            statistics.estimatesSent += 1
            statistics.receiveEstimateKbps = Int(estimate / 1000)
        }
        if pictureLossDue {
            statistics.pictureLossIndicationsSent += 1
            lastPictureLoss = now
        }
    }

    /// The bandwidth estimate at a report block (see the type's documentation), bits per second.
    private mutating func updateEstimate(fractionLost: UInt8, now: MonotonicTime) -> UInt64 {
        let ceiling = Double(max(30, feedback.maximumBitrateKbps))
        var estimate = estimateKbps ?? ceiling
        if let last = lastReportBlockAt, case let seconds = Double(last.nanoseconds(to: now)) / 1e9, seconds > 0.05 {
            let received = Double(bytesSinceReport) * 8 / 1000 / seconds
            let loss = Double(fractionLost) / 256
            if loss < 0.02 {
                estimate = max(estimate * 1.08, 1.5 * received)
            } else if loss > 0.10 {
                estimate = received * (1 - 0.5 * loss)
            }
        }
        estimate = min(ceiling, max(30, estimate))
        estimateKbps = estimate
        lastReportBlockAt = now
        bytesSinceReport = 0
        return UInt64(estimate * 1000)
    }

    /// Fills ``nackItems`` with the missing packets due an ask at `now`, forgetting those past
    /// use (their frame given up, missing too long).
    private mutating func collectNACKs(now: Int64) {
        guard let top = highest else { return }
        let limit = clampedNanoseconds(feedback.nackCompletionTimeout)
        let retry = max(clampedNanoseconds(feedback.nackRetryMinimumInterval), clampedNanoseconds(1.25 * roundTrip))
        let allowance = clampedNanoseconds(feedback.reorderingAllowance)
        let next = assembler.nextSequenceNumber
        var builder = RTCPNACKItemBuilder()
        var s = max(lowestMissing, top - Int64(missingMask))
        var firstLeft: Int64?
        while s <= top {
            let i = Int(truncatingIfNeeded: s) & missingMask
            defer { s += 1 }
            guard missingSequence[i] == s else { continue }
            let seq = UInt16(truncatingIfNeeded: s)
            // Its frame given up (the assembler delivers from `next` on) or missing too long.
            let passed = next.map { Int16(bitPattern: seq &- $0) < 0 } ?? false
            if passed || now - missingSince[i] > limit {
                missingSequence[i] = -1
                statistics.nacksGivenUp += 1
                continue
            }
            if firstLeft == nil { firstLeft = s }
            guard missingAsks[i] < feedback.maximumNACKsPerPacket else { continue }
            guard missingAsks[i] == 0 ? now - missingSince[i] >= allowance : now - missingAskedAt[i] >= retry else { continue }
            guard nackItems.count < nackItems.capacity else { continue }
            if missingAsks[i] == 0 { missingFirstAskedAt[i] = now }
            missingAsks[i] += 1
            missingAskedAt[i] = now
            statistics.nackRequests += 1
            if let item = builder.add(seq) { nackItems.append(item) }
        }
        if let item = builder.finish() { nackItems.append(item) }
        lowestMissing = firstLeft ?? (top + 1)
    }
}

/// `seconds` as nanoseconds within 0...1 hour (NaN and negatives: 0): settings a caller may
/// give out of range never trap.
private func clampedNanoseconds(_ seconds: Double) -> Int64 {
    guard seconds > 0 else { return 0 }
    return Int64(min(seconds, 3600) * 1e9)
}
