import ParleyCall
import ParleyCodecs
import ParleyCore
import ParleyJitter
import ParleyMedia
import ParleyRTP
import ParleySDP
import ParleySRTP
#if canImport(Glibc)
import Glibc
#endif

/// `parley receive`: receives one RTP stream (Opus or VP8) over UDP into a file.
let receiveCommand = Command(
    name: "receive",
    summary: "Receive RTP Opus or VP8 into a file",
    help: """
        Usage: parley receive --port PORT --codec opus|vp8 [--payload-type N] --output FILE [--idle-timeout S]
               parley receive --sdp FILE [--port PORT] --output FILE [--idle-timeout S]

        Listens on UDP port PORT (all IPv4 interfaces) for one RTP stream and writes it to FILE:
          --codec opus: decoded to a 16-bit mono WAV at 48 kHz (stereo streams are downmixed)
            through the library's receive pipeline: an adaptive jitter buffer (reordering,
            losses concealed with Opus PLC or recovered from FEC, silence (DTX) gaps filled
            from the timestamps), played out in real time; the file starts at the first
            packet and ends at the last;
          --codec vp8: frames reassembled (reordering, loss, keyframe requests counted), then
            written as IVF (FILE ending .ivf, compressed) or decoded to Y4M (FILE ending .y4m).
        The first packet with the right payload type fixes the SSRC; others are counted and
        dropped, as are malformed packets. Finishes the file and exits after S seconds without
        packets (also when none ever arrive), then prints the receive statistics: packets, lost,
        duplicates, malformed, jitter (RFC 3550 A.8), and more.

        Options:
          --port PORT           UDP port, 1...65535
          --codec opus|vp8      the payload format
          --payload-type N      RTP payload type to accept, 0...127 (default 111 opus, 96 vp8)
          --output FILE         .wav for opus; .ivf or .y4m for vp8
          --idle-timeout S      seconds without packets before finishing (default 5)
          --sdp FILE            take the codec, payload type, port and SRTP key from an SDP
                                (RFC 4566; the first m=audio or m=video section with opus/48000
                                or VP8/90000, and its RFC 4568 a=crypto: line when it is
                                RTP/SAVP), as 'parley send --sdp' or ffmpeg's -sdp_file write it
          --srtp-key BASE64     receive SRTP under this key (without --sdp)
          --srtp-suite SUITE    its suite: AES_CM_128_HMAC_SHA1_80 (default), AES_CM_128_HMAC_SHA1_32,
                                AEAD_AES_128_GCM or AEAD_AES_256_GCM
        With SRTP, packets that fail authentication, are replayed or malformed are dropped before
        any parser sees them and counted (srtp_auth_failed, srtp_replayed, srtp_malformed).

        Exit status: 0 file written, 1 network or file error, 2 usage error.
        """,
    run: { args in runReceive(args) }
)

private enum ReceiveCodec: String { case opus, vp8 }

private struct ReceiveOptions {
    var port: UInt16
    var codec: ReceiveCodec
    var payloadType: UInt8
    var output: String
    var idleTimeout: Double
    var key: SRTPKey?
}

private func parseReceiveOptions(_ args: [String]) throws(ArgumentScanner.UsageError) -> ReceiveOptions {
    let s = try ArgumentScanner(args, valued: ["port", "codec", "payload-type", "output", "idle-timeout", "sdp", "srtp-key", "srtp-suite"],
                                flagNames: [])
    guard s.positionals.isEmpty else { throw .init(description: "unexpected argument '\(s.positionals[0])'") }
    var file: OfferFile?
    if let path = s.value("sdp") {
        do { file = try OfferFile(path: path) } catch { throw .init(description: "--sdp \(error)") }
        if s.value("srtp-key") != nil || s.value("srtp-suite") != nil {
            throw .init(description: "--srtp-key and --srtp-suite come from the SDP's a=crypto: line with --sdp")
        }
    }
    let described = file?.first
    guard s.value("port") != nil || described != nil else { throw .init(description: "missing --port PORT") }
    let port = try s.int("port", default: Int(described?.port ?? 0), in: 1...65535)
    let codec: ReceiveCodec
    if let c = s.value("codec") {
        guard let given = ReceiveCodec(rawValue: c) else { throw .init(description: "--codec must be opus or vp8, got '\(c)'") }
        if let d = described, d.codec.isAudio != (given == .opus) {
            throw .init(description: "--codec \(c) differs from the SDP's \(d.codec.isAudio ? "opus" : "vp8")")
        }
        codec = given
    } else if let d = described {
        codec = d.codec.isAudio ? .opus : .vp8
    } else {
        throw .init(description: "missing --codec opus|vp8")
    }
    let defaultPT = described?.payloadType ?? (codec == .opus ? OpusRTP.defaultPayloadType : VP8RTP.defaultPayloadType)
    let pt = try s.int("payload-type", default: Int(defaultPT), in: 0...127)
    guard let output = s.value("output") else { throw .init(description: "missing --output FILE") }
    let ext = output.split(separator: ".").last.map { $0.lowercased() } ?? ""
    switch codec {
    case .opus where ext != "wav": throw .init(description: "--codec opus writes a .wav file, got '\(output)'")
    case .vp8 where ext != "ivf" && ext != "y4m": throw .init(description: "--codec vp8 writes a .ivf or .y4m file, got '\(output)'")
    default: break
    }
    let idle = try s.double("idle-timeout", default: 5, in: 0.05...86_400)
    var options = ReceiveOptions(port: UInt16(port), codec: codec, payloadType: UInt8(pt), output: output, idleTimeout: idle)
    options.key = file?.key
    if described == nil, s.value("srtp-key") == nil, s.value("srtp-suite") != nil {
        throw .init(description: "--srtp-suite needs --srtp-key")
    }
    if described == nil, s.value("srtp-key") != nil { options.key = try parseSRTPKey(s) }
    return options
}

/// Where received packets go: a decoder and file writer for one codec.
private protocol ReceiveSink: ~Copyable {
    /// A media packet of the stream accepted by sequence validation, in arrival order.
    mutating func accept(_ bytes: UnsafeRawBufferPointer, _ packet: RTPPacketView, at arrival: MonotonicTime) throws
    /// An RTCP datagram that arrived on the port (sender reports).
    mutating func control(_ bytes: UnsafeRawBufferPointer, at arrival: MonotonicTime)
    /// The source restarted (RFC 3550 A.1: a confirmed large sequence jump).
    mutating func restart() throws
    /// Called between datagrams, at least every 10 ms.
    mutating func tick(now: MonotonicTime) throws
    /// Drains what is held and finishes the file.
    mutating func finish() throws
    /// Extra statistics lines.
    var report: [(String, String)] { get }
}

private func runReceive(_ args: [String]) -> Int32 {
    let options: ReceiveOptions
    do { options = try parseReceiveOptions(args) } catch {
        printError("parley receive: \(error)\nRun 'parley receive --help' for usage.")
        return ExitStatus.usage
    }
    do {
        // Listens on every interface; nothing is sent back (the peer port is never used).
        let udp = try UDPTransport(localPort: options.port, bindHost: "0.0.0.0", peerPort: 9, clock: SystemMediaClock())
        if let key = options.key {
            var srtp = try SRTPTransport(udp, sendKey: key, receiveKey: key)
            try receive(options, over: &srtp)
            for (k, v) in srtpReport(srtp.statistics) { print("\(k): \(v)") }
        } else {
            var plain = udp
            try receive(options, over: &plain)
        }
        return ExitStatus.success
    } catch {
        printError("parley receive: \(error)")
        return ExitStatus.failure
    }
}

private func receive<T: WaitablePacketTransport & ~Copyable>(_ options: ReceiveOptions, over transport: inout T) throws {
    switch options.codec {
    case .opus:
        var sink = try OpusReceiveSink(path: options.output, payloadType: options.payloadType)
        try receiveLoop(options, over: &transport, sink: &sink, clockRate: OpusRTP.clockRate)
    case .vp8:
        var sink = try VP8ReceiveSink(path: options.output)
        try receiveLoop(options, over: &transport, sink: &sink, clockRate: VP8RTP.clockRate)
    }
}

private func receiveLoop<T: WaitablePacketTransport & ~Copyable, Sink: ReceiveSink & ~Copyable>(
    _ options: ReceiveOptions, over transport: inout T, sink: inout Sink, clockRate: Int
) throws {
    var stats = try RTPSourceStatistics(clockRate: clockRate)
    var ssrc: UInt32?
    var delivered = 0
    var lastDatagram = MonotonicTime.now()
    let idleNs = Int64(options.idleTimeout * 1e9)
    var failure: (any Error)?
    while failure == nil {
        let waiting = transport.waitForDatagram(timeoutMilliseconds: 5)
        let now = MonotonicTime.now()
        if !waiting && now.nanoseconds - lastDatagram.nanoseconds >= idleNs { break }
        transport.receive(until: now) { bytes, arrival in
            lastDatagram = arrival
            // RTCP multiplexed on the port (RFC 5761 4) is not media.
            if RTPMultiplexing.isRTCP(bytes) {
                sink.control(bytes, at: arrival)
                return
            }
            guard let packet = try? RTPPacketView(parsing: bytes) else { stats.recordMalformed(); return }
            guard packet.payloadType == options.payloadType, ssrc == nil || packet.ssrc == ssrc else {
                stats.recordUnexpected()
                return
            }
            ssrc = packet.ssrc
            let verdict = stats.update(sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
                                       arrivalNanoseconds: arrival.nanoseconds, payloadBytes: packet.payload.count)
            do {
                switch verdict {
                case .accepted, .restarted:
                    if verdict == .restarted { try sink.restart() }
                    delivered += 1
                    try sink.accept(bytes, packet, at: arrival)
                case .probation:
                    // RFC 3550 A.1 holds the first packet back until the second confirms the
                    // source; for a single unicast stream its media is still wanted.
                    if stats.received == 0 {
                        delivered += 1
                        try sink.accept(bytes, packet, at: arrival)
                    }
                case .duplicate, .badSequence: break
                }
            } catch { failure = error }
        }
        if let failure { throw failure }
        try sink.tick(now: now)
    }
    try sink.finish()
    let c = stats.counters
    var lines: [(String, String)] = [
        ("packets", "\(delivered)"),
        ("lost", "\(max(0, stats.cumulativeLost))"),
        ("duplicates", "\(c.duplicates)"),
        ("malformed", "\(c.malformed)"),
        ("jitter_ms", formatFixed(stats.jitterMilliseconds, 3)),
        ("reordered", "\(c.reordered)"),
        ("unexpected", "\(c.unexpected)"),
        ("payload_bytes", "\(c.payloadBytes)"),
        ("ssrc", ssrc.map { "0x" + String($0, radix: 16) } ?? "-"),
    ]
    lines += sink.report
    for (k, v) in lines { print("\(k): \(v)") }
}

/// A number with `digits` decimals, without Foundation's formatter.
private func formatFixed(_ x: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let v = (x * scale).rounded() / scale
    return "\(v)"
}

/// Opus: the library's receive pipeline (adaptive jitter buffer, Opus PLC and FEC, sender
/// reports), played out every 10 ms in real time into a 48 kHz mono WAV.
///
/// The file holds the stream, not the waiting around it: frames played before the first
/// packet or after the last one (buffering, concealment at the end) are not written; gaps
/// inside the stream (losses, DTX silence) are, as the buffer fills them.
private struct OpusReceiveSink: ReceiveSink, ~Copyable {
    var pipeline: AudioReceivePipeline<OpusJitterDecoder>
    var writer: WAVWriter
    let path: String
    /// The next 10 ms playout deadline; set by the first packet.
    var nextPlayout: MonotonicTime?
    /// Frames played since the last frame that held a packet's audio, written once another
    /// packet plays (so a gap inside the stream is kept and the tail after the last packet is not).
    var pending: [Int16]
    var playedPacket = false
    /// One played frame (10 ms), reused.
    var frame: [Int16]
    static let frameNs: Int64 = 10_000_000
    /// Pending audio kept in memory before it is written anyway (a long DTX silence): 10 s.
    static let pendingLimit = 48_000 * 10

    init(path: String, payloadType: UInt8) throws {
        var c = AudioReceiveConfiguration()
        c.sampleRate = 48_000
        c.payloadType = payloadType
        c.analysis = false
        // A file wants the sender's waveform: no time-stretching (the delay adapts in silence
        // only), and at least the 60 ms of reordering a receiver of 20 ms packets expects.
        c.jitterBuffer.stretchThresholdMs = .infinity
        c.jitterBuffer.minimumDelayMs = 60
        let decoder = try OpusJitterDecoder(sampleRate: 48_000, channels: 1)
        let w = try WAVWriter(path: path, format: WAVFormat(sampleRate: 48_000, channels: 1))
        pipeline = try AudioReceivePipeline(configuration: c, decoder: decoder)
        writer = w
        self.path = path
        pending = []
        pending.reserveCapacity(Self.pendingLimit + 960)
        frame = []
        frame.reserveCapacity(960)
    }

    mutating func accept(_ bytes: UnsafeRawBufferPointer, _ packet: RTPPacketView, at arrival: MonotonicTime) throws {
        pipeline.receive(bytes, at: arrival)
        if nextPlayout == nil { nextPlayout = arrival }
    }

    mutating func control(_ bytes: UnsafeRawBufferPointer, at arrival: MonotonicTime) { pipeline.receive(bytes, at: arrival) }

    /// The jitter buffer follows the source's restarts itself (a re-based timeline).
    mutating func restart() throws {}

    mutating func tick(now: MonotonicTime) throws {
        while let t = nextPlayout, t <= now {
            try playFrame(at: t)
            nextPlayout = t.advanced(byNanoseconds: Self.frameNs)
        }
    }

    private mutating func playFrame(at t: MonotonicTime) throws {
        var copy = [Int16]()
        swap(&copy, &frame)
        defer { swap(&copy, &frame) }
        let kind = pipeline.playout(at: t, sink: { samples in
            copy.removeAll(keepingCapacity: true)
            copy.append(contentsOf: samples)
        }, onDecision: { _ in }, onTalk: { _ in })
        if kind == .normal {
            playedPacket = true
            if !pending.isEmpty { try writer.write(pending); pending.removeAll(keepingCapacity: true) }
            try writer.write(copy)
        } else if playedPacket {
            pending.append(contentsOf: copy)
            if pending.count > Self.pendingLimit { try writer.write(pending); pending.removeAll(keepingCapacity: true) }
        }
    }

    mutating func finish() throws {
        // What is still buffered plays out at once; then the tail after the last packet is dropped.
        if var t = nextPlayout {
            var frames = 0
            while pipeline.bufferedPackets > 0 && frames < 100 * 60 {
                try playFrame(at: t)
                t = t.advanced(byNanoseconds: Self.frameNs)
                frames += 1
            }
        }
        try writer.close()
    }

    var report: [(String, String)] {
        let j = pipeline.jitterStatistics
        let silence = j.silentConcealedSamples
        return [("late", "\(j.late)"), ("decoded_packets", "\(pipeline.statistics.packetsPlayed)"),
                ("decode_errors", "\(j.decodeFailures)"), ("concealed_samples", "\(j.concealedSamples - silence)"),
                ("silence_samples", "\(silence)"), ("output", path)]
    }
}

/// VP8: frame assembly, then IVF (compressed) or Y4M (decoded) output.
private struct VP8ReceiveSink: ReceiveSink, ~Copyable {
    let path: String
    let decodeToY4M: Bool
    var assembler = VP8FrameAssembler()
    var decoder: VPXDecoder
    var picture = VideoFrame(validatedWidth: 16, height: 16)  // resized by the decoder
    var tsUnwrapper = TimestampUnwrapper()
    var firstTimestamp: Int64?
    var frames = 0, keyframeRequests = 0, decodeErrors = 0
    /// IVF: opened at the first frame (a keyframe: the assembler waits for one), which gives the size.
    var ivf: IVFWriter?
    /// Y4M: opened at the second picture, whose timestamp gives the frame rate.
    var y4m: Y4MWriter?
    var pendingFirst: (frame: VideoFrame, ts: Int64)?

    init(path: String) throws {
        self.path = path
        decodeToY4M = path.lowercased().hasSuffix(".y4m")
        decoder = try VPXDecoder(codec: .vp8)
    }

    mutating func control(_ bytes: UnsafeRawBufferPointer, at arrival: MonotonicTime) {}

    mutating func accept(_ bytes: UnsafeRawBufferPointer, _ packet: RTPPacketView, at now: MonotonicTime) throws {
        assembler.insert(packet, nowNanoseconds: now.nanoseconds)
        try takeEvents()
    }

    mutating func tick(now: MonotonicTime) throws {
        assembler.advance(nowNanoseconds: now.nanoseconds)
        try takeEvents()
    }

    /// Writes each frame the assembler completed; counts its keyframe requests.
    mutating func takeEvents() throws {
        while let e = assembler.nextEvent() {
            switch e {
            case .frame(let f): try write(f.data, ts: f.timestamp, key: f.header.isKeyframe, w: f.header.width, h: f.header.height)
            case .keyframeRequest: keyframeRequests += 1
            }
        }
    }

    mutating func restart() throws {
        assembler = VP8FrameAssembler()
    }

    mutating func write(_ data: UnsafeRawBufferPointer, ts: UInt32, key: Bool, w: Int, h: Int) throws {
        let t = tsUnwrapper.unwrap(ts)
        if firstTimestamp == nil { firstTimestamp = t }
        frames += 1
        if !decodeToY4M {
            if ivf == nil {
                ivf = try IVFWriter(path: path, header: IVFHeader(codec: .vp8, width: w, height: h,
                                                                   timebaseNumerator: 1, timebaseDenominator: 90_000))
            }
            try ivf!.write(data, timestamp: UInt64(max(0, t - firstTimestamp!)))
            return
        }
        do { try decoder.decode(data, into: &picture) } catch {
            decodeErrors += 1
            return
        }
        if y4m == nil {
            guard let first = pendingFirst else {
                pendingFirst = (picture, t)
                return
            }
            let fps = max(1, Int((90_000.0 / Double(max(1, t - first.ts))).rounded()))
            try openY4M(fps: fps)
            try y4m!.write(first.frame)
            pendingFirst = nil
        }
        try y4m!.write(picture)
    }

    mutating func openY4M(fps: Int) throws {
        y4m = try Y4MWriter(path: path, header: Y4MHeader(width: picture.width, height: picture.height,
                                                           frameRateNumerator: fps, frameRateDenominator: 1))
    }

    mutating func finish() throws {
        if decodeToY4M {
            if let first = pendingFirst {
                try openY4M(fps: 30)
                try y4m!.write(first.frame)
            }
            if y4m == nil { try openY4M(fps: 30) }  // an empty stream: a header only
            try y4m!.close()
        } else {
            if ivf == nil { ivf = try IVFWriter(path: path, header: IVFHeader(codec: .vp8, width: 0, height: 0,
                                                                               timebaseNumerator: 1, timebaseDenominator: 90_000)) }
            try ivf!.close()
        }
    }

    var report: [(String, String)] {
        let s = assembler.statistics
        return [("frames", "\(frames)"), ("frames_incomplete", "\(s.framesIncomplete)"),
                ("frames_dropped_waiting_for_keyframe", "\(s.framesDroppedWaitingForKeyframe)"),
                ("keyframe_requests", "\(keyframeRequests)"), ("decode_errors", "\(decodeErrors)"),
                ("output", path)]
    }
}
