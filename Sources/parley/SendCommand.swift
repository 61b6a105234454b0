import ParleyCodecs
import ParleyMedia
import ParleyRTP
import ParleySRTP
import ParleyVoice

/// `parley send`: encodes a WAV as Opus or a Y4M as VP8 and sends it over RTP/UDP in real time.
let sendCommand = Command(
    name: "send",
    summary: "Send a WAV as Opus or a Y4M as VP8 over RTP",
    help: """
        Usage: parley send --to HOST:PORT [--payload-type N] [--ssrc X] [--bitrate BPS] [--fec] [--dtx]
                           [--application voip|audio] [--sdp FILE] [--srtp] [--srtp-key BASE64]
                           [--srtp-suite SUITE] FILE

        Encodes FILE and sends it as RTP over UDP to HOST:PORT, paced in real time:
          a WAV (16-bit PCM, 8/12/16/24/48 kHz, mono or stereo) as Opus (RFC 7587), 20 ms
            per packet, 48 kHz RTP clock, payload type 111 unless given; each packet carries
            the RFC 6464 audio level with the VAD's voice flag (extension ID 1, a=extmap:1
            urn:ietf:params:rtp-hdrext:ssrc-audio-level);
          a Y4M (I420) as VP8 (RFC 7741), 90 kHz RTP clock, payload type 96 unless given,
            payloads of at most 1200 bytes with a 15-bit picture ID.
        An RTCP sender report goes to PORT+1 about once a second.

        Options:
          --to HOST:PORT        destination (IPv4 address or name)
          --payload-type N      RTP payload type, 0...127 (default 111 for Opus, 96 for VP8)
          --ssrc X              SSRC, decimal or 0x-hex (default random)
          --bitrate BPS         Opus target bitrate, 6000...510000 (default 32000 per channel)
          --fec                 Opus in-band forward error correction (for 10% expected loss)
          --dtx                 Opus discontinuous transmission (few packets in silence)
          --application A       Opus application: voip (default) or audio
          --sdp FILE            write an SDP (RFC 4566) for the receiver: ffmpeg, VLC, GStreamer's
                                sdpdemux and 'parley receive --sdp' open it as it is; mode 0600
          --srtp                protect RTP and RTCP with SRTP (RFC 3711); the key goes into the
                                SDP's a=crypto: line (RFC 4568), so give --sdp or --srtp-key
          --srtp-key BASE64     the SRTP master key and salt (30 bytes in base64, 28 for GCM);
                                default: generated from the system's random source
          --srtp-suite SUITE    AES_CM_128_HMAC_SHA1_80 (default), AES_CM_128_HMAC_SHA1_32 or
                                AEAD_AES_128_GCM
        The key is never printed.

        Prints what was sent. Exit status: 0 sent, 1 bad file or network error, 2 usage error.
        """,
    run: { args in runSend(args) }
)

/// Options of `parley send`, validated.
private struct SendOptions {
    var host: String
    var port: UInt16
    var payloadType: UInt8?
    var ssrc: UInt32
    var path: String
    var bitrate: Int?
    var fec = false
    var dtx = false
    var application = OpusApplication.voip
    var sdpPath: String?
    var key: SRTPKey?
}

private func parseSendOptions(_ args: [String]) throws(ArgumentScanner.UsageError) -> SendOptions {
    let s = try ArgumentScanner(args, valued: ["to", "payload-type", "ssrc", "bitrate", "application", "sdp", "srtp-key", "srtp-suite"],
                                flagNames: ["fec", "dtx", "srtp"])
    guard s.positionals.count == 1 else {
        throw .init(description: s.positionals.isEmpty ? "missing FILE" : "expected one FILE, got \(s.positionals.count)")
    }
    guard let to = s.value("to") else { throw .init(description: "missing --to HOST:PORT") }
    guard let (host, port) = parseHostPort(to) else { throw .init(description: "--to must be HOST:PORT, got '\(to)'") }
    var pt: UInt8?
    if s.value("payload-type") != nil { pt = UInt8(try s.int("payload-type", default: 0, in: 0...127)) }
    var ssrc = UInt32.random(in: 1...UInt32.max)
    if let x = s.value("ssrc") {
        let parsed = x.hasPrefix("0x") || x.hasPrefix("0X") ? UInt32(x.dropFirst(2), radix: 16) : UInt32(x)
        guard let v = parsed else { throw .init(description: "--ssrc must be a 32-bit number (decimal or 0x-hex), got '\(x)'") }
        ssrc = v
    }
    var options = SendOptions(host: host, port: port, payloadType: pt, ssrc: ssrc, path: s.positionals[0])
    if s.value("bitrate") != nil { options.bitrate = try s.int("bitrate", default: 0, in: 6_000...510_000) }
    options.fec = s.flag("fec")
    options.dtx = s.flag("dtx")
    if let a = s.value("application") {
        switch a {
        case "voip": options.application = .voip
        case "audio": options.application = .audio
        default: throw .init(description: "--application must be voip or audio, got '\(a)'")
        }
    }
    options.sdpPath = s.value("sdp")
    options.key = try parseSRTPKey(s)
    if options.key != nil, s.value("srtp-key") == nil, options.sdpPath == nil {
        throw .init(description: "--srtp with a generated key needs --sdp FILE to give the key to the receiver (or give --srtp-key)")
    }
    return options
}

private func runSend(_ args: [String]) -> Int32 {
    let options: SendOptions
    do { options = try parseSendOptions(args) } catch {
        printError("parley send: \(error)\nRun 'parley send --help' for usage.")
        return ExitStatus.usage
    }
    do {
        let socket = try UDPSocket()
        let rtp = try UDPAddress(host: options.host, port: options.port)
        let rtcp = try UDPAddress(host: options.host, port: options.port &+ 1)
        var sender = RTPSender(ssrc: options.ssrc, rtp: rtp, rtcp: rtcp)
        if let key = options.key { sender.srtp = SRTPBox(try SRTPContext(key: key, direction: .outbound)) }
        let head = try fileMagic(options.path)
        if head.starts(with: "RIFF".utf8) {
            try sendAudio(options, socket: socket, sender: &sender)
        } else if head.starts(with: "YUV4MPEG2".utf8) {
            try sendVideo(options, socket: socket, sender: &sender)
        } else {
            printError("parley send: \(options.path): neither a WAV (RIFF) nor a Y4M (YUV4MPEG2) file")
            return ExitStatus.failure
        }
        print("sent \(sender.packets) RTP packets (\(sender.payloadBytes) payload bytes) to \(options.host):\(options.port), "
              + "SSRC 0x\(String(options.ssrc, radix: 16))")
        return ExitStatus.success
    } catch {
        printError("parley send: \(error)")
        return ExitStatus.failure
    }
}

/// Packet counting, RTP header state and periodic RTCP sender reports for one stream.
private struct RTPSender {
    var header: RTPHeader
    let rtp: UDPAddress
    let rtcp: UDPAddress
    var packets: UInt32 = 0
    var payloadBytes: UInt32 = 0
    var buffer = [UInt8](repeating: 0, count: 1600)
    var lastReport: MonotonicTime?
    /// SRTP protection of every packet and report, when on.
    var srtp: SRTPBox?

    init(ssrc: UInt32, rtp: UDPAddress, rtcp: UDPAddress) {
        // RFC 3550 5.1: random initial sequence number and timestamp.
        header = RTPHeader(payloadType: 0, sequenceNumber: UInt16.random(in: 0...UInt16.max),
                           timestamp: UInt32.random(in: 0...UInt32.max), ssrc: ssrc)
        self.rtp = rtp
        self.rtcp = rtcp
    }

    /// Sends one packet with the current header, then advances the sequence number.
    mutating func send(_ payload: UnsafeRawBufferPointer, socket: borrowing UDPSocket) throws {
        let h = header
        var n = try buffer.withUnsafeMutableBytes { try h.marshal(payload: payload, into: $0) }
        if let srtp { n = try buffer.withUnsafeMutableBytes { try srtp.context.protectRTP($0, length: n) } }
        try buffer.withUnsafeBytes { try socket.send(UnsafeRawBufferPointer(rebasing: $0[0..<n]), to: rtp) }
        header.sequenceNumber &+= 1
        packets &+= 1
        payloadBytes &+= UInt32(truncatingIfNeeded: payload.count)
    }

    /// Sends an RTCP sender report if a second has passed; `mediaTimestamp` is the RTP time of
    /// `now`. Failures are ignored: nobody may listen on the RTCP port.
    mutating func maybeReport(now: MonotonicTime, mediaTimestamp: UInt32, socket: borrowing UDPSocket) {
        if let last = lastReport, now.nanoseconds - last.nanoseconds < 1_000_000_000 { return }
        lastReport = now
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let ntp = NTPTimestamp(unixSeconds: Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9)
        let sr = RTCPPacket.senderReport(RTCPSenderReport(ssrc: header.ssrc, ntpTimestamp: ntp, rtpTimestamp: mediaTimestamp,
                                                          packetCount: packets, octetCount: payloadBytes))
        // In the packet buffer, protected in place as the RTP packets are.
        guard var n = try? buffer.withUnsafeMutableBytes({ try RTCPCompound.marshal([sr], into: $0) }) else { return }
        if let srtp {
            guard let m = try? buffer.withUnsafeMutableBytes({ try srtp.context.protectRTCP($0, length: n) }) else { return }
            n = m
        }
        try? buffer.withUnsafeBytes { try socket.send(UnsafeRawBufferPointer(rebasing: $0[0..<n]), to: rtcp) }
    }
}

#if canImport(Glibc)
import Glibc
#endif

private func sendAudio(_ options: SendOptions, socket: borrowing UDPSocket, sender: inout RTPSender) throws {
    var reader = try WAVReader(path: options.path)
    let audio = (sampleRate: reader.format.sampleRate, channels: reader.format.channels)
    guard [8_000, 12_000, 16_000, 24_000, 48_000].contains(audio.sampleRate), (1...2).contains(audio.channels) else {
        throw SendError("\(options.path): Opus takes 8, 12, 16, 24 or 48 kHz mono or stereo; this WAV is "
                        + "\(audio.sampleRate) Hz, \(audio.channels) channels (convert it first)")
    }
    var encoder = try OpusEncoder(sampleRate: audio.sampleRate, channels: audio.channels, application: options.application)
    encoder.bitrate = options.bitrate ?? 32_000 * audio.channels
    if options.fec {
        encoder.inbandFEC = true
        encoder.expectedPacketLossPercent = 10
    }
    encoder.dtx = options.dtx
    let frameSamples = audio.sampleRate / 50  // 20 ms per channel
    let frameLength = frameSamples * audio.channels
    sender.header.payloadType = options.payloadType ?? OpusRTP.defaultPayloadType
    sender.header.extensions = [RTPHeaderExtension(id: 1, bytes: [0])]
    try writeSDP(options, .opus(channels: audio.channels, fec: options.fec, dtx: options.dtx), payloadType: sender.header.payloadType)
    var pcm = [Int16](repeating: 0, count: frameLength)
    // The V flag of the RFC 6464 level comes from ParleyVoice's VAD on the first channel
    // (an energy decision, above -50 dBov, at 12 kHz which the VAD does not take).
    var vad = try? VoiceActivityDetector(sampleRate: audio.sampleRate)
    var mono = [Float](repeating: 0, count: frameSamples)
    var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
    let start = MonotonicTime.now()
    var i = 0
    var skipped = false
    while true {
        let got = try pcm.withUnsafeMutableBufferPointer { try reader.read(into: $0) }
        guard got > 0 else { break }
        for k in (got * audio.channels)..<frameLength { pcm[k] = 0 }  // pad the last frame
        defer { i += 1 }
        let n = try pcm.withUnsafeBufferPointer { p in try packet.withUnsafeMutableBytes { try encoder.encode(p, into: $0) } }
        let level = pcm.withUnsafeBufferPointer { AudioLevel(samples: $0, voiceActivity: false) }
        var voice = level.level < 50
        if vad != nil {
            for k in 0..<frameSamples { mono[k] = Float(pcm[k * audio.channels]) / 32768 }
            voice = false
            mono.withUnsafeBufferPointer { m in vad!.process(m) { d in voice = voice || d.isSpeech } }
        }
        let withVoice = AudioLevel(level: level.level, voiceActivity: voice)
        sender.header.extensions[0].bytes[0] = withVoice.extensionByte
        sleep(until: MonotonicTime(nanoseconds: start.nanoseconds + Int64(i) * 20_000_000))
        // In DTX the encoder marks silence with packets of at most 2 bytes: not sent (RFC 7587
        // 3.1.3); the receiver conceals the gap from the timestamps.
        if options.dtx && n <= 2 {
            skipped = true
        } else {
            sender.header.marker = i == 0 || skipped  // first packet of a talkspurt (RFC 3551 4.1)
            skipped = false
            try packet.withUnsafeBytes { try sender.send(UnsafeRawBufferPointer(rebasing: $0[0..<n]), socket: socket) }
        }
        sender.maybeReport(now: MonotonicTime.now(), mediaTimestamp: sender.header.timestamp, socket: socket)
        sender.header.timestamp &+= 960  // 20 ms at the 48 kHz Opus RTP clock (RFC 7587 4.1)
    }
}

private func sendVideo(_ options: SendOptions, socket: borrowing UDPSocket, sender: inout RTPSender) throws {
    var reader = try Y4MReader(path: options.path)
    let h = reader.header
    let fps = max(1, (h.frameRateNumerator + h.frameRateDenominator / 2) / h.frameRateDenominator)
    // About 0.25 bit per pixel at 30 fps for 320x240 (576 kbit/s), at least 500 kbit/s.
    var config = VPXEncoderConfiguration(codec: .vp8, width: h.width, height: h.height, framesPerSecond: fps,
                                         targetBitrateKbps: max(500, h.width * h.height * fps / 4_000))
    config.keyframeMaxInterval = 3 * fps
    var encoder = try VPXEncoder(config)
    var packetizer = VP8Packetizer(maxPayloadSize: 1200, pictureID: UInt16.random(in: 0...0x7FFF))
    sender.header.payloadType = options.payloadType ?? VP8RTP.defaultPayloadType
    try writeSDP(options, .vp8, payloadType: sender.header.payloadType)
    let baseTimestamp = sender.header.timestamp
    let start = MonotonicTime.now()
    var failure: Error?
    var frame = VideoFrame(width: h.width, height: h.height)
    var i = 0
    while try reader.read(into: &frame) {
        defer { i += 1 }
        let mediaNs = Int64(i) * 1_000_000_000 * Int64(h.frameRateDenominator) / Int64(h.frameRateNumerator)
        sleep(until: MonotonicTime(nanoseconds: start.nanoseconds + mediaNs))
        let ts = baseTimestamp &+ UInt32(truncatingIfNeeded: mediaNs * 90_000 / 1_000_000_000)
        sender.header.timestamp = ts
        try encoder.encode(frame) { encoded in
            packetizer.packetize(encoded.bytes) { payload, last in
                sender.header.marker = last  // last packet of the frame (RFC 7741 4.1)
                do { try sender.send(payload, socket: socket) } catch { failure = error }
            }
        }
        if let failure { throw failure }
        sender.maybeReport(now: MonotonicTime.now(), mediaTimestamp: ts, socket: socket)
    }
    guard i > 0 else { throw SendError("\(options.path): no frames") }
}

/// Writes the `--sdp` file, if asked for, before the first packet goes out.
private func writeSDP(_ options: SendOptions, _ kind: SDPStream.Kind, payloadType: UInt8) throws {
    guard let path = options.sdpPath else { return }
    let stream = SDPStream(kind: kind, host: options.host, port: options.port, payloadType: payloadType, ssrc: options.ssrc,
                           key: options.key)
    try writePrivateFile(stream.description.text, to: path)
}

/// A failure of `parley send` with its message.
private struct SendError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// The first bytes of a file (up to 9), to tell a WAV from a Y4M.
private func fileMagic(_ path: String) throws(ParleyMedia.MediaFileError) -> [UInt8] {
    let source = try FileByteSource(path: path)
    let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: 9, alignment: 1)
    defer { raw.deallocate() }
    let n = try source.read(into: raw)
    return Array(raw[0..<n])
}
