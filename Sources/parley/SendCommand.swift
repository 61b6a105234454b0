#if canImport(Glibc)
import Glibc
#endif
import ParleyCall
import ParleyCodecs
import ParleyCore
import ParleyMedia
import ParleyRTP
import ParleySDP
import ParleySRTP

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
            the RFC 6464 audio level with the talking detector's voice flag, as every Parley
            sender sets it (extension ID 1, a=extmap:1 urn:ietf:params:rtp-hdrext:ssrc-audio-level);
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
          --srtp-suite SUITE    AES_CM_128_HMAC_SHA1_80 (default), AES_CM_128_HMAC_SHA1_32,
                                AEAD_AES_128_GCM or AEAD_AES_256_GCM
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
        let head = try fileMagic(options.path)
        let isAudio = head.starts(with: "RIFF".utf8)
        guard isAudio || head.starts(with: "YUV4MPEG2".utf8) else {
            printError("parley send: \(options.path): neither a WAV (RIFF) nor a Y4M (YUV4MPEG2) file")
            return ExitStatus.failure
        }
        // RTP to PORT, RTCP to PORT+1 (RFC 3550 11), from any local port on every interface.
        let udp = try UDPTransport(bindHost: "0.0.0.0", peerHost: options.host, peerPort: options.port,
                                   rtcpPeerPort: options.port &+ 1, clock: SystemMediaClock())
        let sent: SentCount
        if let key = options.key {
            // Only the send key is used; the receive side of the context never sees a packet.
            var srtp = try SRTPTransport(udp, sendKey: key, receiveKey: key)
            sent = isAudio ? try sendAudio(options, over: &srtp) : try sendVideo(options, over: &srtp)
        } else {
            var plain = udp
            sent = isAudio ? try sendAudio(options, over: &plain) : try sendVideo(options, over: &plain)
        }
        guard sent.packets > 0 || sent.refused == 0 else {
            throw CommandFailure("no packet could be sent to \(options.host):\(options.port) (\(sent.refused) refused by the network)")
        }
        print("sent \(sent.packets) RTP packets (\(sent.payloadBytes) payload bytes) to \(options.host):\(options.port), "
              + "SSRC 0x\(String(options.ssrc, radix: 16))")
        return ExitStatus.success
    } catch {
        printError("parley send: \(error)")
        return ExitStatus.failure
    }
}

/// What a send loop sent.
private struct SentCount {
    var packets: Int
    var payloadBytes: Int
    var refused: Int
}

/// A WAV through ``AudioSendPipeline`` (Opus, the RFC 6464 level with the talking detector's
/// V bit, sender reports), paced in real time: one 20 ms packet per 20 ms of the file.
private func sendAudio<T: PacketTransport & ~Copyable>(_ options: SendOptions, over transport: inout T) throws -> SentCount {
    var reader = try WAVReader(path: options.path)
    let audio = (sampleRate: reader.format.sampleRate, channels: reader.format.channels)
    guard [8_000, 12_000, 16_000, 24_000, 48_000].contains(audio.sampleRate), (1...2).contains(audio.channels) else {
        throw CommandFailure("\(options.path): Opus takes 8, 12, 16, 24 or 48 kHz mono or stereo; this WAV is "
                        + "\(audio.sampleRate) Hz, \(audio.channels) channels (convert it first)")
    }
    var c = AudioSendConfiguration()
    c.sampleRate = audio.sampleRate
    c.channels = audio.channels
    c.bitrate = options.bitrate ?? 32_000 * audio.channels
    c.inbandFEC = options.fec
    c.expectedLossPercent = options.fec ? 10 : 0
    c.dtx = options.dtx
    c.application = options.application
    c.payloadType = options.payloadType ?? OpusRTP.defaultPayloadType
    c.ssrc = options.ssrc
    // RFC 3550 5.1: random initial sequence number and timestamp.
    c.firstSequence = UInt16.random(in: 0...UInt16.max)
    c.firstTimestamp = UInt32.random(in: 0...UInt32.max)
    try writeSDP(options, .opus(channels: audio.channels, fec: options.fec, dtx: options.dtx), payloadType: c.payloadType)
    var pipeline = try AudioSendPipeline(configuration: c, ntpOffset: MonotonicTime.wallClockNTPOffset())
    let frameLength = c.packetSamples * audio.channels
    var pcm = [Int16](repeating: 0, count: frameLength)
    let start = MonotonicTime.now()
    var i: Int64 = 0
    while true {
        let got = try pcm.withUnsafeMutableBufferPointer { try reader.read(into: $0) }
        guard got > 0 else { break }
        for k in (got * audio.channels)..<frameLength { pcm[k] = 0 }  // pad the last frame
        let due = MonotonicTime(nanoseconds: start.nanoseconds + i * Int64(c.packetMs) * 1_000_000)
        SystemMediaClock().sleep(until: due)
        _ = pcm.withUnsafeBufferPointer { pipeline.send($0, capturedAt: due, muted: false, over: &transport) { _ in } }
        i += 1
    }
    let s = pipeline.statistics
    if s.encodeErrors > 0 { throw CommandFailure("\(options.path): Opus could not encode \(s.encodeErrors) of \(s.framesCaptured) frames") }
    return SentCount(packets: s.packetsSent, payloadBytes: s.payloadBytes, refused: s.packetsRefused)
}

/// A Y4M through ``VideoSendPipeline`` (VP8, RFC 7741 payloads of at most 1200 bytes, sender
/// reports), paced at the file's frame rate.
private func sendVideo<T: PacketTransport & ~Copyable>(_ options: SendOptions, over transport: inout T) throws -> SentCount {
    var reader = try Y4MReader(path: options.path)
    let h = reader.header
    let fps = max(1, (h.frameRateNumerator + h.frameRateDenominator / 2) / h.frameRateDenominator)
    let payloadType = options.payloadType ?? VP8RTP.defaultPayloadType
    try writeSDP(options, .vp8, payloadType: payloadType)
    // About 0.25 bit per pixel at 30 fps for 320x240 (576 kbit/s), at least 500 kbit/s.
    var pipeline = try VideoSendPipeline(width: h.width, height: h.height, framesPerSecond: fps,
                                         bitrateKbps: max(500, h.width * h.height * fps / 4_000), ssrc: options.ssrc,
                                         payloadType: payloadType, firstTimestamp: UInt32.random(in: 0...UInt32.max),
                                         ntpOffset: MonotonicTime.wallClockNTPOffset())
    let start = MonotonicTime.now()
    var frame = try VideoFrame(width: h.width, height: h.height)
    var i = 0
    while try reader.read(into: &frame) {
        defer { i += 1 }
        let mediaNs = Int64(i) * 1_000_000_000 * Int64(h.frameRateDenominator) / Int64(h.frameRateNumerator)
        let due = MonotonicTime(nanoseconds: start.nanoseconds + mediaNs)
        SystemMediaClock().sleep(until: due)
        pipeline.send(frame, mediaTicks: UInt32(truncatingIfNeeded: mediaNs * 90_000 / 1_000_000_000), capturedAt: due, over: &transport)
    }
    guard i > 0 else { throw CommandFailure("\(options.path): no frames") }
    let s = pipeline.statistics
    if s.encodeErrors > 0 { throw CommandFailure("\(options.path): VP8 could not encode \(s.encodeErrors) of \(s.framesCaptured) frames") }
    return SentCount(packets: s.packetsSent, payloadBytes: s.payloadBytes, refused: s.packetsRefused)
}

/// Writes the `--sdp` file, if asked for, before the first packet goes out.
private func writeSDP(_ options: SendOptions, _ codec: RTPCodec, payloadType: UInt8) throws {
    let stream = RTPStreamOffer(codec: codec, payloadType: payloadType, port: options.port, ssrc: options.ssrc, cname: "parley",
                                crypto: options.key?.sdpCrypto)
    try writeOffer(RTPOffer(host: options.host, sessionName: "parley send", streams: [stream]), to: options.sdpPath)
}

/// The first bytes of a file (up to 9), to tell a WAV from a Y4M.
private func fileMagic(_ path: String) throws(ParleyMedia.MediaFileError) -> [UInt8] {
    let source = try FileByteSource(path: path)
    let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: 9, alignment: 1)
    defer { raw.deallocate() }
    let n = try source.read(into: raw)
    return Array(raw[0..<n])
}
