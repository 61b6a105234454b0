// Audio send pipeline: capture frame -> level / VAD / talking -> Opus -> RTP -> transport.

import ParleyCodecs
import ParleyEcho
import ParleyRTP
import ParleyVoice

/// Settings of an ``AudioSendPipeline``.
public struct AudioSendConfiguration: Sendable, Hashable {
    /// Capture rate, Hz (8, 12, 16, 24 or 48 kHz: Opus's rates). Default 16 kHz (wide-band voice).
    public var sampleRate = 16_000
    /// Packet duration, ms (10 or 20). Default 20 ms, the common VoIP packet time.
    public var packetMs = 20
    /// Opus bitrate, bits/s. Default 24 000 (good wide-band speech with FEC headroom).
    public var bitrate = 24_000
    /// In-band FEC on (recovers single losses at the receiver). Default on.
    public var inbandFEC = true
    /// Loss the encoder plans FEC for, percent. Default 10.
    public var expectedLossPercent = 10
    /// RTP payload type. Default 111 (the usual dynamic type for Opus).
    public var payloadType: UInt8 = OpusRTP.defaultPayloadType
    /// RTP SSRC.
    public var ssrc: UInt32 = 0x5041_524C
    /// RFC 8285 element ID of the RFC 6464 audio level. Default 1.
    public var audioLevelExtensionID: UInt8 = 1
    /// First RTP sequence number and timestamp (random in a real client; injected for tests).
    public var firstSequence: UInt16 = 0
    public var firstTimestamp: UInt32 = 0
    /// Interval between RTCP sender reports, s. Default 1 s (RFC 3550 allows more often for
    /// small sessions; lip sync and media times need an early mapping).
    public var senderReportInterval = 1.0
    /// Channels of the captured frames and the Opus stream: 1 (default) or 2 (interleaved). The
    /// level covers both channels; voice activity and talking are analysed on the first.
    public var channels = 1
    /// Opus discontinuous transmission: in silence the encoder emits packets of at most 2 bytes
    /// every 400 ms, which are not sent (RFC 7587 3.1.3; the receiver conceals the gap from the
    /// timestamps), and the first packet after such a gap carries the marker bit (RFC 3551 4.1).
    /// Default off.
    public var dtx = false
    /// Opus application: `.voip` (default, speech) or `.audio` (music, CELT-leaning).
    public var application = OpusApplication.voip

    public init() {}

    /// Samples per channel in one packet.
    public var packetSamples: Int { sampleRate * packetMs / 1000 }
    /// RTP timestamp units per packet (48 kHz clock, RFC 7587).
    public var packetTicks: UInt32 { UInt32(OpusRTP.clockRate * packetMs / 1000) }
}

/// Per-stage counters of an ``AudioSendPipeline``.
public struct AudioSendStatistics: Sendable, Hashable {
    /// Frames taken from the source.
    public var framesCaptured = 0
    /// Frames handed to ``AudioSendPipeline/send(_:capturedAt:muted:over:onTalk:)`` that were
    /// not one packet of samples: refused, nothing sent.
    public var framesRefused = 0
    /// Frames encoded (all captured frames unless the encoder failed).
    public var framesEncoded = 0
    /// Frames whose encoding failed (counted, not sent).
    public var encodeErrors = 0
    /// RTP packets the transport accepted.
    public var packetsSent = 0
    /// RTP packets the transport refused (back-pressure), counted as dropped at the sender.
    public var packetsRefused = 0
    /// RTCP sender reports sent.
    public var senderReports = 0
    /// Payload bytes sent.
    public var payloadBytes = 0
    /// Frames captured while muted (sent as silence).
    public var mutedFrames = 0
    /// Frames the encoder found silent under DTX and that were not sent.
    public var dtxFrames = 0
    public init() {}
}

/// The sending half of one participant's audio: each captured frame is measured (RFC 6464
/// level, VAD, talking detection, so that talking while muted is caught locally), encoded with
/// Opus, wrapped in RTP with the audio-level header extension and sent (its V bit: the talking
/// detector's view of the packet, see ``VoiceActivitySource/senderAudioLevel``); every
/// ``AudioSendConfiguration/senderReportInterval`` an RTCP sender report maps the RTP clock to
/// the capture time (smoothed by a ``DriftEstimator``, so a drifting sound card does not move
/// the mapping by its jitter).
///
/// While muted, frames are still captured and analysed (talking-while-muted events), but
/// silence is encoded in their place, keeping the RTP timeline continuous.
///
/// With an ``echoCanceller`` (``useEchoCanceller(_:)``), every frame is first cleared of the
/// playout's echo: what is sent (and its level) is the cancelled signal, and frames the
/// canceller finds echo only in it (the far end talking, the near end not rising above the
/// residual echo) start no talk and carry no voice flag, while double talk does. The voice
/// activity detector still hears the microphone: the canceller's residual suppression mutes the
/// near end at the start of double talk, which would delay its onset.
///
/// No allocation per frame after `init`. Threading: `~Copyable`, one owner thread.
public struct AudioSendPipeline: ~Copyable {
    public let configuration: AudioSendConfiguration
    private var encoder: OpusEncoder
    private var vad: VoiceActivityDetector
    private var talk: TalkDetector
    private var header: RTPHeader
    private var packet: [UInt8]
    private var payload: [UInt8]
    private var floats: [Float]
    private var silence: [Int16]
    private var sampleIndex: Int64 = 0
    private var speechFrames = 0
    /// Frames since the last sent packet were DTX silence: the next packet starts a talkspurt.
    private var inSilenceGap = false
    private var nextReportAt: MonotonicTime?
    /// The echo canceller the capture goes through, if any (``useEchoCanceller(_:)``).
    public private(set) var echoCanceller: EchoCanceller?
    /// Capture-clock drift against the monotonic clock.
    public private(set) var drift: DriftEstimator
    public private(set) var statistics = AudioSendStatistics()
    /// Wall-clock (NTP) seconds of monotonic time zero, for sender reports.
    public let ntpOffset: Double

    /// Creates the pipeline. `ntpOffset` maps monotonic seconds to the sender's NTP wall clock.
    /// - Throws: `OpusError` or `VADError` for an unsupported rate; `OpusError` for a
    ///   bitrate outside 500...512_000 bit/s or an expected loss outside 0...100 %.
    public init(configuration: AudioSendConfiguration = .init(), ntpOffset: Double = 3_900_000_000) throws {
        var encoder = try OpusEncoder(sampleRate: configuration.sampleRate, channels: configuration.channels,
                                      application: configuration.application)
        try encoder.setBitrate(configuration.bitrate)
        encoder.inbandFEC = configuration.inbandFEC
        try encoder.setExpectedPacketLossPercent(configuration.expectedLossPercent)
        encoder.dtx = configuration.dtx
        let vad = try VoiceActivityDetector(sampleRate: configuration.sampleRate)
        self.configuration = configuration
        self.encoder = encoder
        self.vad = vad
        talk = TalkDetector()
        header = RTPHeader(payloadType: configuration.payloadType, sequenceNumber: configuration.firstSequence,
                           timestamp: configuration.firstTimestamp, ssrc: configuration.ssrc,
                           extensions: [RTPHeaderExtension(id: configuration.audioLevelExtensionID, bytes: [0])])
        packet = [UInt8](repeating: 0, count: RTPLimits.maximumDatagramSize)
        payload = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
        floats = [Float](repeating: 0, count: configuration.packetSamples)
        silence = [Int16](repeating: 0, count: configuration.packetSamples * configuration.channels)
        drift = DriftEstimator(checkedSampleRate: configuration.sampleRate)   // the encoder took this rate
        self.ntpOffset = ntpOffset
    }

    /// Puts `canceller` (nil: none) in front of the analysis and the encoder. Feed it what the
    /// playout sends to the device (`EchoCanceller.playedOut(_:)`).
    /// - Throws: `EchoCancellerError.sampleRate(_:)` when its rate is not the capture's, and
    ///   `EchoCancellerError.frameSize(expectedMultipleOf:got:)` when a packet is not whole
    ///   10 ms frames of one channel; the pipeline is unchanged then.
    public mutating func useEchoCanceller(_ canceller: EchoCanceller?) throws(EchoCancellerError) {
        if let canceller {
            guard canceller.configuration.sampleRate == configuration.sampleRate else {
                throw .sampleRate(canceller.configuration.sampleRate)
            }
            let samples = configuration.packetSamples * configuration.channels
            guard configuration.channels == 1, samples % canceller.frameSamples == 0,
                  samples / canceller.frameSamples <= EchoCanceller.maximumFrames else {
                throw .frameSize(expectedMultipleOf: canceller.frameSamples, got: samples)
            }
        }
        echoCanceller = canceller
    }

    /// Whether the local VAD says the participant is talking (muted or not).
    public var isTalking: Bool { talk.isTalking }

    /// Sends one captured frame of ``AudioSendConfiguration/packetSamples`` samples per channel
    /// (interleaved when stereo) captured at `captureTime`. Talking changes of the local analysis go to `onTalk`.
    /// Returns false, sending nothing, when `frame` is not one packet of samples (counted in
    /// ``AudioSendStatistics/framesRefused``).
    @discardableResult
    public mutating func send<T: PacketTransport & ~Copyable>(
        _ frame: UnsafeBufferPointer<Int16>, capturedAt captureTime: MonotonicTime, muted: Bool,
        over transport: inout T, onTalk: (TalkEvent) -> Void
    ) -> Bool {
        let c = configuration
        guard frame.count == c.packetSamples * c.channels else {
            statistics.framesRefused += 1
            return false
        }
        statistics.framesCaptured += 1
        drift.observe(sample: sampleIndex, capturedAt: captureTime)
        sampleIndex += Int64(c.packetSamples)
        if muted { statistics.mutedFrames += 1 }
        // The packet's size was checked against the canceller when it was put in.
        let heard = frame
        let frame = echoCanceller.flatMap { try? $0.process(frame) } ?? frame
        let echo = echoCanceller

        // Voice activity of what the microphone hears (the cancelled signal's residual
        // suppression mutes the near end at the start of double talk; whether a frame may start
        // a talk is the canceller's verdict on the cancelled signal); the level of what is sent.
        for i in 0..<c.packetSamples { floats[i] = Float(heard[i * c.channels]) * (1.0 / 32768.0) }
        var probabilitySum: Float = 0
        var snrSum: Float = 0
        var decisions = 0
        var wasTalking = false
        var echoOnlyFrames = 0
        var talkEvent: TalkEvent?
        floats.withUnsafeBufferPointer { f in
            vad.process(f) { d in
                wasTalking = wasTalking || talk.isTalking
                probabilitySum += d.probability
                snrSum += d.evidence.snrDb
                let echoOnly = echo?.isEchoOnly(frame: decisions) ?? false
                let doubleTalk = echo?.isDoubleTalk(frame: decisions) ?? false
                if echoOnly { echoOnlyFrames += 1 }
                decisions += 1
                if let e = talk.process(d, muted: muted, echoOnly: echoOnly, doubleTalk: doubleTalk) { talkEvent = e }
            }
        }
        // The V bit is the talking detector's view of the packet (means over its frames): inside
        // a talk, a probability at or above the detector's off threshold (its hysteresis) with
        // the SNR that holds a talk; outside, at or above the VAD's threshold with the SNR an
        // onset needs. A receiver that runs a TalkDetector on the bits then starts, bridges and
        // ends talks as the sender does.
        var voiced = false
        if decisions > 0 {
            let p = probabilitySum / Float(decisions)
            let t = talk.configuration
            let snr = snrSum / Float(decisions)
            voiced = wasTalking ? p >= t.offThreshold && snr >= t.holdMinimumSNR
                                : p >= vad.configuration.threshold && snr >= t.onsetMinimumSNR && echoOnlyFrames < decisions
        }
        if let e = talkEvent { onTalk(e) }
        let level = muted ? AudioLevel(level: 127, voiceActivity: false)
                          : AudioLevel(samples: frame, voiceActivity: voiced)

        // Sender report first when due (the mapping of the packet about to go).
        if nextReportAt.map({ captureTime >= $0 }) ?? true {
            sendReport(at: captureTime, over: &transport)
            nextReportAt = captureTime.advanced(bySeconds: c.senderReportInterval)
        }

        // Encode (silence while muted).
        let n: Int
        do {
            let source = muted ? silence.withUnsafeBufferPointer { $0 } : frame
            n = try payload.withUnsafeMutableBytes { out throws(OpusError) in try encoder.encode(source, into: out) }
        } catch {
            statistics.encodeErrors += 1
            header.timestamp &+= c.packetTicks
            return true
        }
        statistics.framesEncoded += 1
        if c.dtx && n <= 2 {
            statistics.dtxFrames += 1
            inSilenceGap = true
            header.timestamp &+= c.packetTicks
            return true
        }
        // The first packet of the stream and of each talkspurt after a DTX gap (RFC 3551 4.1).
        header.marker = statistics.packetsSent + statistics.packetsRefused == 0 || inSilenceGap
        inSilenceGap = false
        header.extensions[0].bytes[0] = level.extensionByte
        let sent = packet.withUnsafeMutableBytes { out -> Bool in
            payload.withUnsafeBytes { p -> Bool in
                guard let length = try? header.marshal(payload: UnsafeRawBufferPointer(rebasing: p[0..<n]), into: out) else {
                    return false
                }
                return transport.send(UnsafeRawBufferPointer(rebasing: out[0..<length]), at: captureTime)
            }
        }
        if sent {
            statistics.packetsSent += 1
            statistics.payloadBytes += n
        } else {
            statistics.packetsRefused += 1
        }
        header.sequenceNumber &+= 1
        header.timestamp &+= c.packetTicks
        return true
    }

    private mutating func sendReport<T: PacketTransport & ~Copyable>(at time: MonotonicTime, over transport: inout T) {
        let captured = drift.smoothedTime(ofSample: sampleIndex - Int64(configuration.packetSamples)) ?? time
        let sr = RTCPSenderReport(ssrc: configuration.ssrc,
                                  ntpTimestamp: NTPTimestamp(secondsSince1900: ntpOffset + captured.seconds),
                                  rtpTimestamp: header.timestamp, packetCount: UInt32(truncatingIfNeeded: statistics.packetsSent),
                                  octetCount: UInt32(truncatingIfNeeded: statistics.payloadBytes))
        // 28 bytes: header + sender info, no report blocks; written into the packet buffer.
        let ok = packet.withUnsafeMutableBytes { out -> Bool in
            guard let length = try? RTCPPacket.senderReport(sr).marshal(into: out) else { return false }
            return transport.send(UnsafeRawBufferPointer(rebasing: out[0..<length]), at: time)
        }
        if ok { statistics.senderReports += 1 }
    }
}
