// Video pipelines: picture -> VP8 -> RTP -> transport -> frame assembly -> decode -> A/V sync.

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
    public init() {}
}

/// The sending half of one participant's video: each picture is VP8-encoded (real-time
/// libvpx), split into RTP payloads (RFC 7741), sent at the 90 kHz clock, with an RTCP sender
/// report each second on the same NTP clock as the participant's audio, so that the receiver
/// can put them in sync. A keyframe request (RTCP PLI in a real call) makes the next frame a
/// keyframe.
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

    /// An encoder for `width`x`height` pictures at `framesPerSecond`, VP8 at `bitrateKbps`.
    public init(width: Int, height: Int, framesPerSecond: Int, bitrateKbps: Int = 300, ssrc: UInt32,
                payloadType: UInt8 = VP8RTP.defaultPayloadType, firstTimestamp: UInt32 = 0,
                ntpOffset: Double) throws(VPXError) {
        encoder = try VPXEncoder(VPXEncoderConfiguration(codec: .vp8, width: width, height: height,
                                                         framesPerSecond: framesPerSecond, targetBitrateKbps: bitrateKbps))
        header = RTPHeader(payloadType: payloadType, sequenceNumber: UInt16(truncatingIfNeeded: ssrc &* 7),
                           timestamp: firstTimestamp, ssrc: ssrc)
        self.ntpOffset = ntpOffset
        self.firstTimestamp = firstTimestamp
    }

    /// Asks for a keyframe next (the receiver could not decode).
    public mutating func requestKeyframe() { encoder.requestKeyframe() }

    /// Counts pictures the pacer skipped because the sender was late.
    public mutating func skipped(_ count: Int) { statistics.framesSkippedLate += count }

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
        var sentPackets = 0, refused = 0
        encoded.data.withUnsafeBytes { bytes in
            packetizer.packetize(bytes) { payload, last in
                header.marker = last
                let ok = packet.withUnsafeMutableBytes { out -> Bool in
                    guard let n = try? header.marshal(payload: payload, into: out) else { return false }
                    return transport.send(UnsafeRawBufferPointer(rebasing: out[0..<n]), at: captureTime)
                }
                if ok { sentPackets += 1; statistics.payloadBytes += payload.count } else { refused += 1 }
                header.sequenceNumber &+= 1
            }
        }
        statistics.packetsSent += sentPackets
        statistics.packetsRefused += refused
    }
}

/// The receiving half of one participant's video: RTP packets to complete VP8 frames
/// (``VP8FrameAssembler``: reordering, loss, keyframe requests), decoded into a small pool of
/// pictures, shown in sync with the participant's audio (``AVSynchronizer``): a frame waits
/// for its audio, a frame too late for the lip-sync window is dropped rather than queued.
///
/// Threading: `~Copyable`, one owner thread.
public struct VideoReceivePipeline: ~Copyable {
    private var assembler = VP8FrameAssembler()
    private var decoder: VPXDecoder
    /// Lip sync with the participant's audio.
    public var sync = AVSynchronizer()
    private var pool: [VideoFrame]
    private var due: [MonotonicTime?]
    private var ticks: [UInt32]
    private var keyframeWanted = false
    public private(set) var statistics = VideoStatistics()
    private let payloadType: UInt8

    /// A receiver for `width`x`height` VP8 pictures, with a render queue of `queue` frames.
    public init(width: Int, height: Int, payloadType: UInt8 = VP8RTP.defaultPayloadType, queue: Int = 4) throws(VPXError) {
        decoder = try VPXDecoder(codec: .vp8)
        pool = (0..<queue).map { _ in VideoFrame(width: width, height: height) }
        due = [MonotonicTime?](repeating: nil, count: queue)
        ticks = [UInt32](repeating: 0, count: queue)
        self.payloadType = payloadType
    }

    /// Whether the assembler asked for a keyframe since the last call (then cleared).
    public mutating func takeKeyframeRequest() -> Bool {
        defer { keyframeWanted = false }
        return keyframeWanted
    }

    /// Takes one datagram (RTP VP8 or an RTCP sender report) that arrived at `arrival`.
    public mutating func receive(_ bytes: UnsafeRawBufferPointer, at arrival: MonotonicTime) {
        if bytes.count >= 2 && (200...204).contains(bytes[1]) {
            guard let packets = try? RTCPCompound.parse(bytes) else { statistics.malformed += 1; return }
            for p in packets { if case .senderReport(let sr) = p { sync.videoSenderReport(sr) } }
            return
        }
        guard let view = try? RTPPacketView(parsing: bytes), view.payloadType == payloadType else {
            statistics.malformed += 1
            return
        }
        statistics.packetsReceived += 1
        assembler.insert(view, nowNanoseconds: arrival.nanoseconds) { e in
            Self.handle(e, now: arrival, decoder: &decoder, pool: &pool, due: &due, ticks: &ticks, sync: sync,
                        statistics: &statistics, keyframeWanted: &keyframeWanted)
        }
    }

    // Static, over the stored properties it needs, so the assembler's callback can run it
    // while the assembler itself is being mutated.
    private static func handle(_ event: VP8AssemblerEvent, now: MonotonicTime, decoder: inout VPXDecoder,
                               pool: inout [VideoFrame], due: inout [MonotonicTime?], ticks: inout [UInt32],
                               sync: AVSynchronizer, statistics: inout VideoStatistics, keyframeWanted: inout Bool) {
        switch event {
        case .keyframeRequest:
            statistics.keyframeRequests += 1
            keyframeWanted = true
        case .frame(let f):
            statistics.framesAssembled += 1
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
                keyframeWanted = keyframeWanted || ok == nil
                return
            }
            statistics.framesDecoded += 1
            ticks[s] = f.timestamp
            switch sync.decide(videoTimestamp: f.timestamp, now: now) {
            case .show(let at): due[s] = at
            case .drop: statistics.framesDroppedLate += 1
            case .unsynchronized:
                statistics.framesShown += 1
                statistics.framesShownUnsynchronized += 1
            }
        }
    }

    /// Shows the frames due by `now` (calls `show` with each picture); gives up on incomplete
    /// frames past the assembler's timeout.
    public mutating func render(at now: MonotonicTime, show: (borrowing VideoFrame) -> Void) {
        assembler.advance(nowNanoseconds: now.nanoseconds) { e in
            Self.handle(e, now: now, decoder: &decoder, pool: &pool, due: &due, ticks: &ticks, sync: sync,
                        statistics: &statistics, keyframeWanted: &keyframeWanted)
        }
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
        while let s = due.indices.filter({ due[$0].map { $0 <= now } ?? false }).min(by: { due[$0]! < due[$1]! }) {
            due[s] = nil
            statistics.framesShown += 1
            if let skew = sync.skew(videoTimestamp: ticks[s], shownAt: now) {
                statistics.maximumAbsoluteSkewMs = max(statistics.maximumAbsoluteSkewMs, abs(skew) * 1000)
                if !sync.window.contains(skew) { statistics.framesOutsideWindow += 1 }
            }
            show(pool[s])
        }
    }
}
