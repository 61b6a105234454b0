import ParleyCodecs
import ParleyJitter
import ParleyMedia
import ParleyRTP
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
          --codec opus: decoded to a 16-bit mono WAV at 48 kHz (stereo streams are downmixed);
            packets are reordered in a short buffer (60 ms), losses concealed with
            Opus PLC, silence (DTX) gaps filled from the timestamps;
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
          --srtp-suite SUITE    its suite: AES_CM_128_HMAC_SHA1_80 (default), AES_CM_128_HMAC_SHA1_32
                                or AEAD_AES_128_GCM
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
    var described: ReceivedSDP?
    if let path = s.value("sdp") {
        do { described = try ReceivedSDP(path: path) } catch { throw .init(description: "--sdp \(error)") }
        if s.value("srtp-key") != nil || s.value("srtp-suite") != nil {
            throw .init(description: "--srtp-key and --srtp-suite come from the SDP's a=crypto: line with --sdp")
        }
    }
    guard s.value("port") != nil || described != nil else { throw .init(description: "missing --port PORT") }
    let port = try s.int("port", default: Int(described?.port ?? 0), in: 1...65535)
    let codec: ReceiveCodec
    if let c = s.value("codec") {
        guard let given = ReceiveCodec(rawValue: c) else { throw .init(description: "--codec must be opus or vp8, got '\(c)'") }
        if let d = described, d.codec.rawValue != given.rawValue {
            throw .init(description: "--codec \(c) differs from the SDP's \(d.codec.rawValue)")
        }
        codec = given
    } else if let d = described {
        codec = d.codec == .opus ? .opus : .vp8
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
    options.key = described?.key
    if described == nil, s.value("srtp-key") == nil, s.value("srtp-suite") != nil {
        throw .init(description: "--srtp-suite needs --srtp-key")
    }
    if described == nil, s.value("srtp-key") != nil { options.key = try parseSRTPKey(s) }
    return options
}

/// Where received packets go: a decoder and file writer for one codec.
private protocol ReceiveSink: ~Copyable {
    /// A packet accepted by sequence validation, in arrival order.
    mutating func accept(_ packet: RTPPacketView, now: MonotonicTime) throws
    /// The source restarted (RFC 3550 A.1: a confirmed large sequence jump): drain what is
    /// held and forget the sequence and timestamp state.
    mutating func restart() throws
    /// Called between packets (at least every 20 ms).
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
        let socket = try UDPSocket(bindPort: options.port)
        switch options.codec {
        case .opus:
            var sink = try OpusReceiveSink(path: options.output)
            try receiveLoop(options, socket: socket, sink: &sink, clockRate: OpusRTP.clockRate)
        case .vp8:
            var sink = try VP8ReceiveSink(path: options.output)
            try receiveLoop(options, socket: socket, sink: &sink, clockRate: VP8RTP.clockRate)
        }
        return ExitStatus.success
    } catch {
        printError("parley receive: \(error)")
        return ExitStatus.failure
    }
}

private func receiveLoop<Sink: ReceiveSink & ~Copyable>(_ options: ReceiveOptions, socket: borrowing UDPSocket, sink: inout Sink,
                                            clockRate: Int) throws {
    var stats = RTPSourceStatistics(clockRate: clockRate)
    var ssrc: UInt32?
    var delivered = 0
    var buffer = [UInt8](repeating: 0, count: 65_536)
    var lastPacket = MonotonicTime.now()
    let idleNs = Int64(options.idleTimeout * 1e9)
    let srtp = try options.key.map { key throws(SRTPError) in SRTPBox(try SRTPContext(key: key, direction: .inbound)) }
    while true {
        let got = try buffer.withUnsafeMutableBytes { try socket.receive(into: $0, timeoutMilliseconds: 20) }
        let now = MonotonicTime.now()
        guard var n = got else {
            if now.nanoseconds - lastPacket.nanoseconds >= idleNs { break }
            try sink.tick(now: now)
            continue
        }
        lastPacket = now
        if let srtp {
            // Only what verifies under the key reaches the parser.
            guard let m = buffer.withUnsafeMutableBytes({ srtp.unprotect($0, length: n) }) else {
                try sink.tick(now: now)
                continue
            }
            n = m
        }
        try buffer.withUnsafeBytes { raw in
            let bytes = UnsafeRawBufferPointer(rebasing: raw[0..<n])
            let packet: RTPPacketView
            do { packet = try RTPPacketView(parsing: bytes) } catch {
                // RTCP multiplexed on the port (PT 200...204 with the marker bit) is not media.
                if n >= 2, (200...204).contains(bytes[1]) { return }
                stats.recordMalformed()
                return
            }
            if packet.marker && (72...76).contains(packet.payloadType) { return }  // RTCP, RFC 5761 4
            guard packet.payloadType == options.payloadType, ssrc == nil || packet.ssrc == ssrc else {
                stats.recordUnexpected()
                return
            }
            ssrc = packet.ssrc
            let verdict = stats.update(sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
                                       arrivalNanoseconds: now.nanoseconds, payloadBytes: packet.payload.count)
            switch verdict {
            case .accepted, .restarted:
                if verdict == .restarted { try sink.restart() }
                delivered += 1
                try sink.accept(packet, now: now)
            case .probation:
                // RFC 3550 A.1 holds the first packet back until the second confirms the source;
                // for a single unicast stream we still want its media.
                if stats.received == 0 {
                    delivered += 1
                    try sink.accept(packet, now: now)
                }
            case .duplicate, .badSequence: break
            }
        }
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
    if let srtp { lines += srtp.report }
    for (k, v) in lines { print("\(k): \(v)") }
}

/// A number with `digits` decimals, without Foundation's formatter.
private func formatFixed(_ x: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let v = (x * scale).rounded() / scale
    return "\(v)"
}

/// Opus: a short reordering buffer, Opus decoding with PLC, WAV output.
private struct OpusReceiveSink: ReceiveSink, ~Copyable {
    /// Packets held for reordering before playout: 3 x 20 ms.
    static let depth = 3
    var writer: WAVWriter
    let path: String
    var decoder: OpusDecoder
    let channels = 1
    var held: [Int64: (timestamp: Int64, payload: [UInt8])] = [:]
    var seqUnwrapper = SequenceNumberUnwrapper()
    var tsUnwrapper = TimestampUnwrapper()
    var nextSeq: Int64?
    var nextTimestamp: Int64?
    var pcm = [Int16](repeating: 0, count: 5760 * 2)
    var late = 0, concealedSamples = 0, silenceSamples = 0, decodeErrors = 0, decodedPackets = 0

    init(path: String) throws {
        self.path = path
        let d = try OpusDecoder(sampleRate: 48_000, channels: 1)
        let w = try WAVWriter(path: path, format: WAVFormat(sampleRate: 48_000, channels: 1))
        decoder = d
        writer = w
    }

    mutating func accept(_ packet: RTPPacketView, now: MonotonicTime) throws {
        let seq = seqUnwrapper.unwrap(packet.sequenceNumber)
        let ts = tsUnwrapper.unwrap(packet.timestamp)
        if let next = nextSeq, seq < next { late += 1; return }
        held[seq] = (ts, Array(packet.payload))
        while held.count > Self.depth { try playOldest() }
    }

    mutating func tick(now: MonotonicTime) throws {}

    mutating func restart() throws {
        while !held.isEmpty { try playOldest() }
        seqUnwrapper = SequenceNumberUnwrapper()
        tsUnwrapper = TimestampUnwrapper()
        nextSeq = nil
        nextTimestamp = nil
    }

    mutating func playOldest() throws {
        guard let seq = held.keys.min(), let (ts, payload) = held.removeValue(forKey: seq) else { return }
        if let expected = nextTimestamp, ts > expected {
            // A gap: conceal lost packets with PLC, fill a silence (DTX) gap with zeros.
            var gap = Int(min(ts - expected, 48_000 * 10))
            let lostPackets = nextSeq.map { seq - $0 } ?? 0
            if lostPackets > 0 {
                var plc = min(gap, 48_000)  // at most 1 s of concealment
                plc -= plc % 120            // whole 2.5 ms steps
                while plc > 0 {
                    let chunk = min(plc, 960)
                    let got = (try? pcm.withUnsafeMutableBufferPointer {
                        try decoder.concealLoss(into: UnsafeMutableBufferPointer(rebasing: $0[0..<(chunk * channels)]))
                    }) ?? 0
                    if got == 0 { break }
                    try pcm.withUnsafeBufferPointer { try writer.write(UnsafeBufferPointer(rebasing: $0[0..<(got * channels)])) }
                    concealedSamples += got
                    plc -= got
                    gap -= got
                }
            }
            if gap > 0 {
                let zeros = [Int16](repeating: 0, count: gap * channels)
                try zeros.withUnsafeBufferPointer { try writer.write($0) }
                silenceSamples += gap
            }
        }
        var decoded = 0
        do {
            decoded = try payload.withUnsafeBytes { p in
                try pcm.withUnsafeMutableBufferPointer { try decoder.decode(p, into: $0) }
            }
            decodedPackets += 1
        } catch {
            decodeErrors += 1
            decoded = payload.withUnsafeBytes { (try? OpusRTP.samples48k($0)) ?? 960 }
            let zeros = [Int16](repeating: 0, count: decoded * channels)
            try zeros.withUnsafeBufferPointer { try writer.write($0) }
        }
        if decodeErrors == 0 || decoded > 0 {
            try pcm.withUnsafeBufferPointer { try writer.write(UnsafeBufferPointer(rebasing: $0[0..<(decoded * channels)])) }
        }
        nextSeq = seq + 1
        nextTimestamp = ts + Int64(decoded)
    }

    mutating func finish() throws {
        while !held.isEmpty { try playOldest() }
        try writer.close()
    }

    var report: [(String, String)] {
        [("late", "\(late)"), ("decoded_packets", "\(decodedPackets)"), ("decode_errors", "\(decodeErrors)"),
         ("concealed_samples", "\(concealedSamples)"), ("silence_samples", "\(silenceSamples)"),
         ("output", path)]
    }
}

/// VP8: frame assembly, then IVF (compressed) or Y4M (decoded) output.
private struct VP8ReceiveSink: ReceiveSink, ~Copyable {
    let path: String
    let decodeToY4M: Bool
    var assembler = VP8FrameAssembler()
    var decoder: VPXDecoder
    var picture = VideoFrame(width: 16, height: 16)
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

    mutating func accept(_ packet: RTPPacketView, now: MonotonicTime) throws {
        var events: [(data: [UInt8], ts: UInt32, key: Bool, w: Int, h: Int)] = []
        assembler.insert(packet, nowNanoseconds: now.nanoseconds) { e in
            switch e {
            case .frame(let f): events.append((Array(f.data), f.timestamp, f.header.isKeyframe, f.header.width, f.header.height))
            case .keyframeRequest: keyframeRequests += 1
            }
        }
        for e in events { try write(e.data, ts: e.ts, key: e.key, w: e.w, h: e.h) }
    }

    mutating func tick(now: MonotonicTime) throws {
        assembler.advance(nowNanoseconds: now.nanoseconds) { e in
            if case .keyframeRequest = e { keyframeRequests += 1 }
        }
    }

    mutating func restart() throws {
        assembler = VP8FrameAssembler()
    }

    mutating func write(_ data: [UInt8], ts: UInt32, key: Bool, w: Int, h: Int) throws {
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
