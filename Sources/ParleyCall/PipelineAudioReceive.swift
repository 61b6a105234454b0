// Audio receive pipeline: transport -> RTP -> jitter buffer -> decode -> VAD/talking -> sink.

import ParleyCodecs
import ParleyJitter
import ParleyRTP
import ParleyVoice

/// Settings of an ``AudioReceivePipeline``.
public struct AudioReceiveConfiguration: Sendable, Hashable {
    /// Decoder output and analysis rate, Hz. Default 16 kHz (what the VAD works at natively).
    public var sampleRate = 16_000
    /// Playout frame, ms (10 or 20). Default 10 ms: the VAD's frame, and low playout latency.
    public var frameMs = 10
    /// Expected RTP payload type; others are counted and dropped. Default 111.
    public var payloadType: UInt8 = OpusRTP.defaultPayloadType
    /// RFC 8285 element ID of the RFC 6464 audio level. Default 1.
    public var audioLevelExtensionID: UInt8 = 1
    /// Jitter-buffer settings (its rates and frame are set from the fields above).
    public var jitterBuffer = JitterBufferConfiguration()
    /// Sender NTP seconds of the call's media time zero: event and decision times are reported
    /// as sender NTP time minus this (from RTCP sender reports). Default: the first sender
    /// report's time minus its RTP offset from the first packet... see ``AudioReceivePipeline``.
    public var callStartNTP: Double?
    /// The RTP timestamp of the sender's media time zero, when signalling tells it (a Parley
    /// participant in a Janus room sends timestamps counted from the start of its source, so
    /// this is 0 there; a server in between forwards RTP but not the sender's RTCP). Used when
    /// no sender report maps the stream (see ``callStartNTP``), and as the stream's
    /// ``AudioReceivePipeline/mapping`` until a sender report arrives (time 0 at this
    /// timestamp: lip sync with a video stream that declares its origin too, see
    /// ``RemoteVideo/senderTimestampOrigin``). Default nil: media time counts from the first
    /// packet received.
    public var senderTimestampOrigin: UInt32?
    /// Whether talking is detected at all. Default true. Off, no VAD decisions or talking
    /// events are produced (the cheapest receive path).
    public var analysis = true
    /// Where the talking detector's per-frame speech decisions come from (when ``analysis`` is
    /// on). Default ``VoiceActivitySource/senderAudioLevel`` (the `parley` tool's default too):
    /// every Parley sender sets the V bit by one rule, and a stream without the audio level
    /// falls back to the local VAD by itself.
    public var voiceActivitySource = VoiceActivitySource.senderAudioLevel

    public init() {}

    /// The jitter-buffer configuration actually used.
    public var effectiveJitterBuffer: JitterBufferConfiguration {
        var j = jitterBuffer
        j.clockRate = OpusRTP.clockRate
        j.sampleRate = sampleRate
        j.channels = 1
        j.frameMs = frameMs
        return j
    }
    /// Samples per playout frame.
    public var frameSamples: Int { sampleRate * frameMs / 1000 }
}

/// Where a receiver's talking decisions come from.
public enum VoiceActivitySource: Sendable, Hashable {
    /// Parley's VAD runs on the decoded audio of every received stream: works with any sender,
    /// costs the VAD per stream (about as much as decoding the Opus at 16 kHz).
    case local
    /// The sender's own decision, carried in each packet's RFC 6464 audio-level extension (its
    /// V bit, set by a Parley sender from its VAD on the clean capture; see
    /// ``AudioSendPipeline``): the receiver only feeds those bits through its `TalkDetector`,
    /// which costs next to nothing. Each 10 ms frame takes the V bit and level of the packet it
    /// was decoded from; concealed frames keep the last packet's bit; frames of a packet without
    /// the extension, and frames before the first packet, count as not speech. A V frame has
    /// probability 1; a frame without V has 0.3 when its signalled level is at least 6 dB over
    /// the level's tracked floor (energy that may be the start of a word: the talking
    /// detector's start-of-rise rule reaches back over it, as it does over a rising VAD
    /// probability) and 0 otherwise. The evidence carries the signalled level as
    /// `VADEvidence/energyDbov`, the floor of the levels (the lowest, rising by 2 dB/s) as
    /// `VADEvidence/noiseFloorDbov`, and as `VADEvidence/snrDb` the level over the floor
    /// (60 dB for a V frame: the sender has vouched for it).
    ///
    /// A sender that does not send the audio level (ffmpeg, GStreamer without it): from the
    /// first packet without the extension on, the stream is analysed as with ``local``.
    case senderAudioLevel
}

/// Per-stage counters of an ``AudioReceivePipeline``.
public struct AudioReceiveStatistics: Sendable, Equatable {
    /// Datagrams received.
    public var datagrams = 0
    /// Datagrams that were not valid RTP/RTCP (counted and dropped).
    public var malformed = 0
    /// RTP packets with another payload type (dropped).
    public var unexpectedPayloadType = 0
    /// RTCP sender reports taken.
    public var senderReports = 0
    /// RTP packets handed to the jitter buffer.
    public var packetsBuffered = 0
    /// Packets that played (their first sample was emitted).
    public var packetsPlayed = 0
    /// Playout frames emitted, of which some concealment, and before playout started.
    public var frames = 0
    public var concealedFrames = 0
    public var bufferingFrames = 0
    /// Largest target delay seen, ms.
    public var maximumTargetDelayMs = 0.0
    /// Latest RFC 6464 level the sender signalled.
    public var lastAudioLevel: AudioLevel?
    public init() {}
}

/// The receiving half of one participant's audio: datagrams are parsed (RTP with the RFC 6464
/// level, or RTCP sender reports for the NTP/RTP mapping), buffered in an `AudioJitterBuffer`,
/// played out every ``AudioReceiveConfiguration/frameMs`` through `Decoder` (Opus with PLC/FEC in
/// a call), analysed by the VAD and a `TalkDetector`, and handed to a sink.
///
/// **Media time.** Talking events and VAD decisions carry the sender's media time (seconds from
/// the call start on the sender's clock), not the playout time: each played packet's RTP
/// timestamp is mapped through the latest sender report, so a jitter-buffer delay of 80 ms does
/// not move an onset by 80 ms. Before the first sender report, media time counts from the
/// first packet's timestamp.
///
/// No allocation per packet or frame after `init`. Threading: `~Copyable`, one owner thread.
public struct AudioReceivePipeline<Decoder: JitterBufferDecoder & ~Copyable>: ~Copyable {
    public let configuration: AudioReceiveConfiguration
    private var buffer: AudioJitterBuffer
    private var decoder: Decoder
    private var vad: VoiceActivityDetector
    private var talk: TalkDetector
    private var unwrapper = TimestampUnwrapper()
    private var firstTimestamp: Int64?
    /// The NTP/RTP mapping from the sender's reports (or from
    /// ``AudioReceiveConfiguration/senderTimestampOrigin`` before the first).
    public private(set) var mapping = RTPTimeMapping(positiveClockRate: OpusRTP.clockRate)
    private var pcm: [Int16]
    private var floats: [Float]
    private var mediaRing: [Double]
    private let ringMask = 1023
    /// RFC 6464 levels of recent packets by unwrapped RTP timestamp (slot = 10 ms step of the
    /// timestamp): `levelTags` holds the timestamp, `levelCodes` the level | 0x80 for V (0xFF =
    /// no extension).
    private var levelTags: [Int64]
    private var levelCodes: [UInt8]
    private let levelMask = 255
    /// The code of the packet now playing (``VoiceActivitySource/senderAudioLevel``).
    private var currentLevelCode: UInt8 = 0xFF
    /// Floor of the signalled levels, dBov (``VoiceActivitySource/senderAudioLevel``).
    private var levelFloor = Float.nan
    /// A packet without the audio level arrived: the sender's bits cannot be used (sticky).
    private var levelMissing = false
    private var lastOffset = 0.0          // stream time minus media time of the latest mapped frame
    private var anchorFrame = -1          // the latest frame in which a packet started playing
    public private(set) var statistics = AudioReceiveStatistics()
    /// The latest packet that started playing: its RTP timestamp and local play time (for lip sync).
    public private(set) var lastPlayed: (timestamp: UInt32, at: MonotonicTime)?

    /// Creates the pipeline around `decoder` (producing ``AudioReceiveConfiguration/sampleRate``).
    /// - Throws: `VADError` for a rate the VAD does not take; `JitterConfigurationError` when
    ///   ``AudioReceiveConfiguration/effectiveJitterBuffer`` is out of range.
    public init(configuration: AudioReceiveConfiguration = .init(), decoder: consuming Decoder) throws {
        let vad = try VoiceActivityDetector(sampleRate: configuration.sampleRate)
        let buffer = try AudioJitterBuffer(configuration: configuration.effectiveJitterBuffer)
        self.configuration = configuration
        self.decoder = decoder
        self.vad = vad
        self.buffer = buffer
        talk = TalkDetector()
        pcm = [Int16](repeating: 0, count: configuration.frameSamples)
        floats = [Float](repeating: 0, count: configuration.frameSamples)
        mediaRing = [Double](repeating: .nan, count: 1024)
        levelTags = [Int64](repeating: -1, count: 256)
        levelCodes = [UInt8](repeating: 0xFF, count: 256)
        if let origin = configuration.senderTimestampOrigin { mapping.assume(rtpTimestamp: origin, atSenderSeconds: 0) }
    }

    /// The jitter buffer's webrtc-stats counters.
    public var jitterStatistics: JitterBufferStatistics { buffer.statistics }
    /// Current target delay, ms.
    public var targetDelayMs: Double { buffer.targetDelayMs }
    /// Packets waiting in the jitter buffer.
    public var bufferedPackets: Int { buffer.bufferedPackets }
    /// Whether the remote participant is talking (by the receiver's analysis).
    public var isTalking: Bool { talk.isTalking }

    /// Takes one datagram that arrived at `arrival`.
    @_specialize(exported: true, where Decoder == OpusJitterDecoder)
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, at arrival: MonotonicTime) {
        statistics.datagrams += 1
        if RTPMultiplexing.isRTCP(bytes) {
            guard let packets = try? RTCPCompound.parse(bytes, reducedSize: true) else { statistics.malformed += 1; return }
            for p in packets {
                if case .senderReport(let sr) = p { mapping.update(sr); statistics.senderReports += 1 }
            }
            return
        }
        guard let view = try? RTPPacketView(parsing: bytes) else { statistics.malformed += 1; return }
        guard view.payloadType == configuration.payloadType else { statistics.unexpectedPayloadType += 1; return }
        let payload = view.payload
        guard let duration = try? OpusRTP.samples48k(payload) else { statistics.malformed += 1; return }
        let level = view.audioLevel(id: configuration.audioLevelExtensionID)
        if let level { statistics.lastAudioLevel = level } else { levelMissing = true }
        let ts = unwrapper.unwrap(view.timestamp)
        let slot = Int((ts / 480) & Int64(levelMask))
        levelTags[slot] = ts
        levelCodes[slot] = level.map { $0.level | ($0.voiceActivity ? 0x80 : 0) } ?? 0xFF
        if firstTimestamp == nil {
            // The origin, unwrapped next to the first packet: the latest timestamp at or before it.
            firstTimestamp = configuration.senderTimestampOrigin.map { ts - Int64(view.timestamp &- $0) } ?? ts
        }
        statistics.packetsBuffered += 1
        buffer.put(sequence: view.sequenceNumber, timestamp: view.timestamp, arrival: arrival,
                   payload: payload, duration: duration, tag: Int(ts))
    }

    /// Media seconds of unwrapped RTP timestamp `ts`.
    private func mediaSeconds(ofTimestamp ts: Int64) -> Double {
        if let start = configuration.callStartNTP,
           let ntp = mapping.senderSeconds(ofRTPTimestamp: UInt32(truncatingIfNeeded: ts)) {
            return ntp - start
        }
        return Double(ts - (firstTimestamp ?? ts)) / Double(OpusRTP.clockRate)
    }

    /// Frames between two packet starts were given media times by extrapolation (10 ms per
    /// frame). That is right while a packet's later samples play or a lost packet is concealed,
    /// but wrong when the buffer concealed while waiting for a late packet (the stream moved on,
    /// the media did not): the next packet then starts earlier in media time than extrapolated.
    /// Clamp those frames to end at the new packet's media time, no earlier than the previous
    /// anchor, so onsets found in them map to the right media time.
    private mutating func correctFramesSinceAnchor(upTo f: Int, media: Double, frame: Double) {
        let g = anchorFrame
        guard g >= 0, f - g > 1, f - g <= ringMask, !media.isNaN else { return }
        let floor = mediaRing[g & ringMask]
        for k in (g + 1)..<f {
            let bound = media - Double(f - k) * frame
            let v = mediaRing[k & ringMask]
            if v.isNaN || v > bound { mediaRing[k & ringMask] = floor.isNaN ? bound : max(bound, floor) }
        }
    }

    /// Media seconds of a point of the played stream (`streamTime` = samples emitted / rate).
    public func mediaTime(ofStreamTime streamTime: Double) -> Double {
        let frame = Double(configuration.frameMs) / 1000
        let index = Int((streamTime / frame + 1e-6).rounded(.down))
        if index >= 0, index < statistics.frames, statistics.frames - index <= ringMask {
            let m = mediaRing[index & ringMask]
            if !m.isNaN { return m + (streamTime - Double(index) * frame) }
        }
        return streamTime - lastOffset
    }

    /// Plays one frame at local time `now`: the samples go to `sink`; each VAD decision (with
    /// its time in media seconds) to `onDecision`; talking changes (times in media seconds) to
    /// `onTalk`. Returns what the jitter buffer produced.
    @discardableResult
    @_specialize(exported: true, where Decoder == OpusJitterDecoder)
    public mutating func playout(at now: MonotonicTime, sink: (UnsafeBufferPointer<Int16>) -> Void,
                                 onDecision: (VADDecision) -> Void, onTalk: (TalkEvent) -> Void) -> JitterFrameKind {
        let kind = pcm.withUnsafeMutableBufferPointer { out in buffer.getFrame(at: now, into: out, decoder: &decoder) }
        let f = statistics.frames
        let frame = Double(configuration.frameMs) / 1000
        let streamTime = Double(f) * frame
        var media = Double.nan
        if let p = buffer.lastPlayedPackets.first {
            media = mediaSeconds(ofTimestamp: Int64(p.tag)) - Double(p.offsetInFrame) / Double(configuration.sampleRate)
            lastPlayed = (UInt32(truncatingIfNeeded: p.tag),
                          now.advanced(byNanoseconds: Int64(p.offsetInFrame) * 1_000_000_000 / Int64(configuration.sampleRate)))
            correctFramesSinceAnchor(upTo: f, media: media, frame: frame)
            anchorFrame = f
        } else if f > 0 {
            let previous = mediaRing[(f - 1) & ringMask]
            if !previous.isNaN { media = previous + frame }
        }
        mediaRing[f & ringMask] = media
        if !media.isNaN { lastOffset = streamTime - media }
        statistics.packetsPlayed += buffer.lastPlayedPackets.count
        statistics.frames += 1
        switch kind {
        case .buffering: statistics.bufferingFrames += 1
        case .concealed: statistics.concealedFrames += 1
        case .normal: break
        }
        statistics.maximumTargetDelayMs = max(statistics.maximumTargetDelayMs, buffer.targetDelayMs)
        pcm.withUnsafeBufferPointer { sink($0) }

        guard configuration.analysis else { return kind }
        if configuration.voiceActivitySource == .senderAudioLevel && !levelMissing {
            senderDecisions(kind: kind, streamTime: streamTime, onDecision: onDecision, onTalk: onTalk)
            return kind
        }
        for i in 0..<pcm.count { floats[i] = Float(pcm[i]) * (1.0 / 32768.0) }
        // Decisions of this frame (one per 10 ms) collected on the stack, then mapped to media time.
        withUnsafeTemporaryAllocation(of: VADDecision.self, capacity: 8) { decided in
            var count = 0
            floats.withUnsafeBufferPointer { samples in
                vad.process(samples) { d in
                    if count < decided.count { decided.initializeElement(at: count, to: d); count += 1 }
                }
            }
            for i in 0..<count {
                let d = decided.moveElement(from: i)
                if let e = talk.process(d) { onTalk(mapped(e)) }
                var m = d
                m.time = mediaTime(ofStreamTime: d.time)
                onDecision(m)
            }
        }
        return kind
    }

    /// The frame's decisions from the sender's RFC 6464 bits (one per 10 ms of the frame).
    private mutating func senderDecisions(kind: JitterFrameKind, streamTime: Double,
                                          onDecision: (VADDecision) -> Void, onTalk: (TalkEvent) -> Void) {
        if let p = buffer.lastPlayedPackets.first {
            let ts = Int64(p.tag)
            let slot = Int((ts / 480) & Int64(levelMask))
            currentLevelCode = levelTags[slot] == ts ? levelCodes[slot] : 0xFF
        } else if kind == .buffering {
            currentLevelCode = 0xFF
        }
        let code = currentLevelCode
        let voiced = code != 0xFF && code & 0x80 != 0
        let level = code == 0xFF ? Float(-127) : -Float(code & 0x7F)
        let frames = max(1, configuration.frameMs / 10)
        for k in 0..<frames {
            if code != 0xFF { levelFloor = levelFloor.isNaN ? level : min(level, levelFloor + 0.02) }
            let above = levelFloor.isNaN ? 0 : level - levelFloor
            var evidence = VADEvidence(energyDbov: level, snrDb: voiced ? 60 : above)
            evidence.noiseFloorDbov = levelFloor
            let probability: Float = voiced ? 1 : (above >= 6 ? 0.3 : 0)
            let t = streamTime + Double(k) * VoiceActivityDetector.frameDuration
            let d = VADDecision(frameIndex: Int((t * 100).rounded()), time: t, probability: probability,
                                isSpeech: voiced, evidence: evidence)
            if let e = talk.process(d) { onTalk(mapped(e)) }
            var m = d
            m.time = mediaTime(ofStreamTime: d.time)
            onDecision(m)
        }
    }

    /// Ends the stream: a final `stopped` event if talking (media time of the last frame).
    public mutating func finish(onTalk: (TalkEvent) -> Void) {
        let end = Double(statistics.frames * configuration.frameMs) / 1000
        if let e = talk.finish(at: end) { onTalk(mapped(e)) }
    }

    private func mapped(_ e: TalkEvent) -> TalkEvent {
        var m = e
        m.time = mediaTime(ofStreamTime: e.time)
        m.segmentTime = mediaTime(ofStreamTime: e.segmentTime)
        return m
    }
}
