import Foundation
import ParleyCall
import ParleyCore
import ParleyDevices
import ParleyMedia
import ParleyRTP
import ParleySDP
import ParleySRTP
import Synchronization

/// `parley call`: a two-party call with another host over UDP, or with a browser over WebRTC;
/// no server.
let callCommand = Command(
    name: "call",
    summary: "A two-party call with another host or a browser (no server), SRTP by default",
    help: """
        Usage: parley call --listen PORT --to HOST:PORT [--audio PCM|FILE.wav] [--video DEVICE|FILE.y4m]
                           [--sdp-out FILE] [--sdp-in FILE] [--no-srtp] [--name NAME]
                           [--output FILE.wav] [--video-output FILE.y4m] [--events FILE.jsonl] [--no-tui]
                           [--headset] [--timeout S] [--sdp-wait S]
               parley call --transport webrtc --listen PORT [--ice-address ADDR[,ADDR...]]
                           [--receive-bitrate KBPS] [--audio PCM|FILE.wav] [--video DEVICE|FILE.y4m]
                           [--name NAME] [--output FILE.wav] [--video-output FILE.y4m]
                           [--events FILE.jsonl] [--no-tui] [--headset] [--timeout S] [--sdp-wait S]
                           [--chat] [--chat-from FILE]

        Calls the host that runs the same command the other way round: sends the local audio
        (Opus, 20 ms, the RFC 6464 level with the talking detector's voice flag, RTCP sender
        reports, RTP and RTCP on one port) to HOST:PORT and receives the peer's on UDP port PORT
        (every IPv4 interface) through the library's call session: jitter buffer, concealment,
        the peer's talking from its voice flags, joined/left and dominant-speaker events.

        Keying (SDES, RFC 4568): each side writes its offer to --sdp-out (with SRTP its own
        randomly generated key in an a=crypto: line, mode 0600) and reads the peer's from
        --sdp-in, waiting for the file to appear (up to --sdp-wait seconds); media are then
        protected with SRTP and SRTCP (AES_CM_128_HMAC_SHA1_80), and packets that do not verify
        under the peer's key are dropped and counted. The peer's SDP also names it (its
        a=ssrc cname) and gives its SSRC: packets of other SSRCs are counted and dropped.
        With --no-srtp media go in the clear; --sdp-in is then optional (the first SSRC heard
        is the peer).

        Video (--video): VP8 (RFC 7741) at the source's size and frame rate, 300 kbit/s at most,
        on its own SSRC and payload type 96, on the same UDP port as the audio (demultiplexed by
        SSRC, as BUNDLE does; RTCP on that port too) and under the same SRTP key. The offer
        describes it in an m=video section (VP8/90000, a=rtcp-fb nack and nack pli, the picture
        size in a=imageattr, a=framerate, a=ssrc). The peer's video, when its offer has one, is
        decoded and shown in sync with its audio (a "video on" event at its first picture, "video
        off" when it leaves), repaired with RTCP feedback: generic NACKs answered by resending
        the packet, PLIs answered by a keyframe, receiver reports that set the sender's bitrate.
        Receiving video needs the peer's offer (--sdp-in).

        With --transport webrtc a browser (or any WHIP-style client) calls Parley, with no
        server in between: Parley serves http://ADDRESS:PORT/call on TCP port PORT (every IPv4
        interface); the peer POSTs its offer there as Content-Type: application/sdp, its ICE
        candidates gathered (not trickled), and gets Parley's answer, with Parley's candidates,
        in a 201 Created whose Location it DELETEs to hang up. CORS headers let a page from any
        origin call; a second offer while the call is up gets 409, a body that is not
        application/sdp 415, a malformed request 400, each with a line of text saying why.
        The media go over ICE, DTLS-SRTP and SRTP on one bundled transport (candidates on every
        interface but the loopback, or on --ice-address): Opus both ways; with --video, VP8 to
        the peer; the peer's VP8 is received at the size its keyframes give (a browser does not
        announce it) and follows a change of size. The peer is called "peer". Video feedback:
        NACK and PLI both ways, and REMB when the peer offers goog-remb: Parley sends its
        estimate of what the path carries (from the rate and loss it receives, at most
        --receive-bitrate), and its own VP8 keeps under the peer's estimate.

        With --chat (webrtc) the call also carries a chat over a data channel: the answer
        accepts the offer's data-channel section (SCTP over DTLS), Parley accepts the channel
        the peer opens (any label; when the peer opens none within 1 s of the association,
        Parley opens one labelled "chat"), and the peer's text messages are printed as
        "peer: TEXT" lines (the grid shows the newest) and written to --events as "message"
        lines, as 'parley join --chat' does; each line of standard input is sent, or with
        --chat-from FILE each line of FILE, once the channel is open. Parley's own lines are
        shown and written as they leave ("NAME (me): TEXT", "own": true). A line that is not
        UTF-8, or longer than the peer's a=max-message-size (262144 bytes at most), is reported
        and skipped.

        Options:
          --listen PORT         UDP port to receive on (the peer's --to port); with webrtc the
                                TCP port of the offer endpoint
          --to HOST:PORT        the peer (IPv4 address or name)
          --audio SOURCE        a WAV file (mono, 8/12/16/24/48 kHz; sent paced in real time,
                                the call ends when it has been sent and the peer has left) or an
                                ALSA capture PCM (default: "default", 16 kHz mono)
          --video SOURCE        also send video: a Y4M file (4:2:0; sent paced at its frame rate
                                and looped while the audio lasts) or a V4L2 camera (/dev/videoN,
                                640x480 at 30 fps)
          --sdp-out FILE        write this side's offer (required with SRTP)
          --sdp-in FILE         read the peer's offer (required with SRTP)
          --no-srtp             send and receive plain RTP
          --name NAME           this participant's name, in the offer (default: the host name)
          --output FILE.wav     write the received audio (16 kHz mono) instead of playing it on
                                ALSA's "default" device. Played on the device and captured from
                                a device, the capture goes through an echo canceller (the
                                microphone hears the loudspeaker; docs/echo.md)
          --headset             the device plays into headphones: no echo cancellation
          --video-output FILE.y4m
                                write the peer's video as shown (its decoded pictures, in sync
                                with its audio, at the size of the first; pictures of another
                                size are counted, not written); without it the video is decoded
                                and counted only
          --events FILE.jsonl   write the call's events as JSON lines, as 'parley room' does
          --no-tui              plain text: one line per event, instead of the live grid
          --timeout S           seconds without a packet before the peer counts as gone
                                (a "left" event; default 5); an RTCP BYE ends it at once. A
                                peer never heard ends the call S seconds after a WAV was sent
                                (S + the --sdp-wait time with a capture device)
          --sdp-wait S          seconds to wait for --sdp-in to appear, or with webrtc for the
                                peer's offer (default 30)
          --transport KIND      rtp (the default) or webrtc
          --ice-address ADDRS   webrtc: the IP addresses (comma-separated) to gather ICE
                                candidates on (default: every interface but the loopback)
          --receive-bitrate KBPS
                                webrtc: the most video bitrate Parley's REMB asks of the peer
                                (default 2000)
          --chat                webrtc: chat over a data channel, sending the lines of
                                standard input
          --chat-from FILE      webrtc: chat, sending the lines of FILE (instead of standard
                                input)
        Ctrl-C hangs up (an RTCP BYE tells the peer). The key is never printed.

        Prints the call's events (or shows the grid), then what was sent and received (with video:
        frames, keyframes, NACKs, resends, PLIs each way; with webrtc the connection's state,
        the size of the peer's pictures and the REMBs each way; with --chat the messages each
        way and the data channel's opening after DTLS).
        Exit status: 0 the peer was heard, 1 it never was or a device, file or network error,
        2 usage error.
        """,
    run: { args in runCall(args) }
)

private struct CallOptions {
    var listen: UInt16
    var host: String
    var port: UInt16
    var sdpOut: String?
    var sdpIn: String?
    var srtp = true
    var name: String
    var io = CallIOOptions()
    var videoOutput: String?
    var timeout = 5.0
    var sdpWait = 30.0
    /// Set with --transport webrtc.
    var webRTC: CallWebRTCOptions?
}

private func parseCallOptions(_ args: [String]) throws(ArgumentScanner.UsageError) -> CallOptions {
    let s = try ArgumentScanner(args, valued: ["listen", "to", "audio", "video", "sdp-out", "sdp-in", "name", "output", "video-output",
                                               "events", "timeout", "sdp-wait", "transport", "ice-address", "receive-bitrate",
                                               "chat-from"],
                                flagNames: ["no-srtp", "no-tui", "headset", "chat"])
    guard s.positionals.isEmpty else { throw .init(description: "unexpected argument '\(s.positionals[0])'") }
    guard s.value("listen") != nil else { throw .init(description: "missing --listen PORT") }
    let listen = try s.int("listen", default: 0, in: 1...65535)
    let transport = s.value("transport") ?? "rtp"
    guard ["rtp", "webrtc"].contains(transport) else { throw .init(description: "--transport takes rtp or webrtc, got '\(transport)'") }
    var o: CallOptions
    if transport == "webrtc" {
        for unsupported in ["to", "sdp-out", "sdp-in"] where s.value(unsupported) != nil {
            throw .init(description: "--\(unsupported) is for --transport rtp (over WebRTC the offer and the answer travel over HTTP)")
        }
        if s.flag("no-srtp") { throw .init(description: "--no-srtp is for --transport rtp (WebRTC's media are always encrypted)") }
        o = CallOptions(listen: UInt16(listen), host: "", port: 0, name: ProcessInfo.processInfo.hostName)
        var w = CallWebRTCOptions()
        if let list = s.value("ice-address") {
            w.iceAddresses = list.split(separator: ",").map(String.init)
            guard !w.iceAddresses.isEmpty else { throw .init(description: "--ice-address needs at least one address") }
        }
        w.receiveBitrateKbps = try s.int("receive-bitrate", default: 2_000, in: 30...100_000)
        w.chatFrom = s.value("chat-from")
        w.chat = s.flag("chat") || w.chatFrom != nil
        if let file = w.chatFrom, !FileManager.default.isReadableFile(atPath: file) {
            throw .init(description: "--chat-from: cannot read '\(file)'")
        }
        o.webRTC = w
    } else {
        for unsupported in ["ice-address", "receive-bitrate", "chat-from"] where s.value(unsupported) != nil {
            throw .init(description: "--\(unsupported) is for --transport webrtc")
        }
        if s.flag("chat") { throw .init(description: "--chat is for --transport webrtc") }
        guard let to = s.value("to") else { throw .init(description: "missing --to HOST:PORT") }
        guard let (host, port) = parseHostPort(to) else { throw .init(description: "--to must be HOST:PORT, got '\(to)'") }
        o = CallOptions(listen: UInt16(listen), host: host, port: port, name: ProcessInfo.processInfo.hostName)
    }
    o.io = try CallIOOptions(s)
    o.videoOutput = s.value("video-output")
    if let out = o.videoOutput, !out.lowercased().hasSuffix(".y4m") {
        throw .init(description: "--video-output writes a .y4m file, got '\(out)'")
    }
    o.sdpOut = s.value("sdp-out")
    o.sdpIn = s.value("sdp-in")
    o.srtp = !s.flag("no-srtp")
    if let n = s.value("name") {
        guard !n.isEmpty, !n.contains(where: { $0 == " " || $0.isNewline }) else {
            throw .init(description: "--name must be one word, got '\(n)'")
        }
        o.name = n
    }
    o.timeout = try s.double("timeout", default: 5, in: 0.2...3_600)
    o.sdpWait = try s.double("sdp-wait", default: 30, in: 0...3_600)
    if o.srtp && o.webRTC == nil {
        guard o.sdpOut != nil else { throw .init(description: "SRTP needs --sdp-out FILE to give the peer this side's key (or --no-srtp)") }
        guard o.sdpIn != nil else { throw .init(description: "SRTP needs --sdp-in FILE with the peer's key (or --no-srtp)") }
    }
    return o
}

/// Set by SIGINT/SIGTERM: hang up.
private let hangUp = Atomic<Bool>(false)

private func runCall(_ args: [String]) -> Int32 {
    let o: CallOptions
    do { o = try parseCallOptions(args) } catch {
        printError("parley call: \(error)\nRun 'parley call --help' for usage.")
        return ExitStatus.usage
    }
    do {
        if let w = o.webRTC {
            signal(SIGINT) { _ in hangUp.store(true, ordering: .relaxed) }
            signal(SIGTERM) { _ in hangUp.store(true, ordering: .relaxed) }
            defer {
                signal(SIGINT, SIG_DFL)
                signal(SIGTERM, SIG_DFL)
            }
            return try callOverWebRTC(name: o.name, io: o.io, videoOutput: o.videoOutput, timeout: o.timeout, offerWait: o.sdpWait,
                                      listen: o.listen, webRTC: w, hangUp: { hangUp.load(ordering: .relaxed) })
        }
        return try call(o)
    } catch {
        printError("parley call: \(error)")
        return ExitStatus.failure
    }
}

/// A plain-RTP call (`--transport rtp`), SRTP unless `--no-srtp`.
private func call(_ o: CallOptions) throws -> Int32 {
    let clock = SystemMediaClock()
    let ssrc = UInt32.random(in: 1...UInt32.max)
    let key = o.srtp ? try SRTPKey.generate(suite: .aesCM128HMACSHA1_80) : nil

    // The camera, opened first: the offer gives its size and rate, and a missing one fails now.
    var camera = try CallCamera(o.io.video, clock: clock)
    let cameraFormat = camera?.format
    var videoSSRC = UInt32.random(in: 1...UInt32.max)
    while videoSSRC == ssrc { videoSSRC = UInt32.random(in: 1...UInt32.max) }

    // The offer: where the peer sends to, what this side sends, and its key.
    try writeOffer(callOffer(o, ssrc: ssrc, videoSSRC: videoSSRC, key: key, camera: cameraFormat), to: o.sdpOut)
    var peer: PeerOffer?
    if let path = o.sdpIn {
        peer = try PeerOffer(try waitForSDP(path, seconds: o.sdpWait), path: path, srtp: o.srtp)
    }

    var settings = CallSessionConfiguration()
    settings.remoteTimeout = o.timeout
    settings.maximumRemotes = 1
    o.io.setPlayout(&settings)
    if let p = peer?.audio {
        settings.receive.payloadType = p.payloadType
        if let id = p.audioLevelID { settings.receive.audioLevelExtensionID = id }
        settings.admitsUndeclaredRemotes = p.ssrc == nil
    }
    let session = CallSession(configuration: settings, clock: clock)
    let showGrid = o.io.tui && isatty(STDOUT_FILENO) == 1
    let eventsFile = try openSessionEvents(o.io.events, session, showGrid: showGrid)
    let udp = try UDPTransport(localPort: o.listen, bindHost: "0.0.0.0", peerHost: o.host, peerPort: o.port, clock: clock)
    let network: CallTransportID
    if let key, let peerKey = peer?.key {
        // A plain resend of a video packet protects the same index again.
        network = session.addTransport(try SRTPTransport(udp, sendKey: key, receiveKey: peerKey, allowRetransmission: cameraFormat != nil))
    } else {
        network = session.addTransport(udp)
    }
    try peer?.declare(in: session, localName: o.name, localSSRC: ssrc, network: network)
    if let camera = camera.take() {
        var video = LocalVideoConfiguration()
        video.ssrc = videoSSRC
        video.payloadType = callVideoPayloadType
        video.firstTimestamp = UInt32.random(in: 0...UInt32.max)
        try camera.add(to: session, configuration: video, sendingOn: network)
    }

    var send = AudioSendConfiguration()
    send.ssrc = ssrc
    send.firstSequence = UInt16.random(in: 0...UInt16.max)
    send.firstTimestamp = UInt32.random(in: 0...UInt32.max)
    try addCallAudio(o.io.audio, name: o.name, send: send, to: session, sendingOn: network, clock: clock)

    // Received audio: a file, or the sound card; the peer's video: a Y4M file, opened at the
    // first picture (its size).
    let framesPerSecond = Int((peer?.video?.framesPerSecond ?? 30).rounded())
    let outputs = try CallOutputs(session: session, audio: o.io.output, mixes: false,
                                  pictureFile: o.videoOutput.map { out in { _ in (out, framesPerSecond) } })

    var grid = CallGrid(shown: showGrid)
    var peerHeard = false
    session.onFrame = { t in
        if !session.remoteNames.isEmpty { peerHeard = true }
        // Hang up on a signal; end when this side has sent everything and the peer has gone.
        let everyoneLeft = peerHeard && !session.state.present.contains { $0.id != o.name }
        let elapsed = Double(session.start.nanoseconds(to: clock.now())) / 1e9
        if hangUp.load(ordering: .relaxed) || outputs.failed || (session.localHasEnded && everyoneLeft)
            || (!peerHeard && elapsed > o.timeout && (session.localHasEnded || elapsed > o.timeout + o.sdpWait)) {
            session.stop()
            return
        }
        grid.draw(session.state, time: t)
    }
    signal(SIGINT) { _ in hangUp.store(true, ordering: .relaxed) }
    signal(SIGTERM) { _ in hangUp.store(true, ordering: .relaxed) }
    grid.begin()
    try session.run()
    grid.end()
    signal(SIGINT, SIG_DFL)
    signal(SIGTERM, SIG_DFL)
    try? eventsFile?.close()
    try outputs.close()
    try outputs.throwFailure()
    if let failure = session.localFailure { throw CommandFailure("\(o.io.audio): \(failure)") }
    if let failure = session.localVideoFailure { throw CommandFailure("video: \(failure)") }

    printCallReport(session, to: "\(o.host):\(o.port), SSRC 0x\(String(ssrc, radix: 16))", videoSSRC: videoSSRC)
    if let out = o.videoOutput, !outputs.wrotePictures { printError("parley call: no video was received; \(out) was not written") }
    guard peerHeard, session.remoteNames.contains(where: { (session.receiveStatistics(of: $0)?.receive.packetsBuffered ?? 0) > 0 }) else {
        printError("parley call: nothing was heard from \(o.host):\(o.port) on port \(o.listen)")
        return ExitStatus.failure
    }
    return ExitStatus.success
}

/// Makes `audio` (a WAV file or an ALSA capture PCM) the session's local participant `name`,
/// sent as `send` says (its rate: the file's).
func addCallAudio(_ audio: String, name: String, send: AudioSendConfiguration, to session: CallSession,
                  sendingOn network: CallTransportID, clock: any MediaClock) throws {
    var send = send
    if audio.lowercased().hasSuffix(".wav") {
        let file = WAVFileSource<Int16>(try WAVFileProvider(path: audio), clock: clock)
        guard file.format.channels == 1, callSendRates.contains(file.format.sampleRate) else {
            throw CommandFailure("\(audio): the call sends mono 8, 12, 16, 24 or 48 kHz audio; this WAV is \(file.format.sampleRate) Hz, "
                            + "\(file.format.channels) channels (convert it first)")
        }
        send.sampleRate = file.format.sampleRate
        try session.addLocal(id: name, source: file, configuration: send, sendingOn: network)
    } else {
        let mic = try ALSACapture<Int16>(pcm: audio, parameters: ALSAParameters(format: try AudioFormat(sampleRate: 16_000, channels: 1)))
        try session.addLocal(id: name, source: mic, configuration: send, sendingOn: network)
    }
}

/// What was sent to `destination` and received, audio then video.
func printCallReport(_ session: CallSession, to destination: String, videoSSRC: UInt32) {
    if let s = session.localStatistics { print(callSentLine(s, to: destination)) }
    for name in session.remoteNames {
        if let line = callReceivedLine(session, from: name) { print(line) }
    }
    print(callDatagramsLine(session.statistics))
    if let v = session.localVideoStatistics { print(callVideoSentLine(v, ssrc: videoSSRC)) }
    for name in session.remoteNames {
        if let v = session.receiveStatistics(of: name)?.video { print(callVideoReceivedLine(v, from: name)) }
    }
}

/// Rates the call's send pipeline takes (its VAD's, which are Opus's).
private let callSendRates: Set<Int> = [8_000, 12_000, 16_000, 24_000, 48_000]

/// This side's offer: Opus (and VP8 from the camera, bundled on the same port) to the listen
/// port, under `key`.
private func callOffer(_ o: CallOptions, ssrc: UInt32, videoSSRC: UInt32, key: SRTPKey?,
                       camera: (width: Int, height: Int, framesPerSecond: Double)?) -> RTPOffer {
    var audio = RTPStreamOffer(codec: .opus(channels: 1, fec: true, dtx: false), payloadType: OpusRTP.defaultPayloadType,
                               port: o.listen, ssrc: ssrc, cname: o.name, crypto: key?.sdpCrypto)
    var offer = RTPOffer(host: UDPTransport.localAddress(towards: o.host) ?? "127.0.0.1", sessionName: "parley call", streams: [audio])
    if let camera {
        audio.mid = "0"
        var video = RTPStreamOffer(codec: .vp8, payloadType: callVideoPayloadType, port: o.listen, ssrc: videoSSRC, cname: o.name,
                                   crypto: key?.sdpCrypto)
        video.mid = "1"
        video.nack = true
        video.pictureLoss = true
        video.rtcpMux = true
        video.pictureSize = (camera.width, camera.height)
        video.framesPerSecond = camera.framesPerSecond
        offer.streams = [audio, video]
    }
    return offer
}

/// The peer's offer as `parley call` takes it: Opus audio, optionally VP8 video on the same
/// port under the same key, SRTP exactly when this side uses it.
private struct PeerOffer {
    var audio: RTPStreamOffer?
    var video: RTPStreamOffer?
    var key: SRTPKey?

    init(_ file: OfferFile, path: String, srtp: Bool) throws {
        guard let audio = file.offer.audio, case .opus = audio.codec else {
            throw CommandFailure("\(path): the peer offers no Opus audio")
        }
        let key: SRTPKey?
        do { key = try audio.crypto.map { c throws(SRTPError) in try SRTPKey(c) } } catch {
            throw CommandFailure("\(path): a=crypto: \(error)")
        }
        if srtp && key == nil { throw CommandFailure("\(path): the peer's offer has no a=crypto: key (it runs --no-srtp?)") }
        if !srtp && key != nil { throw CommandFailure("\(path): the peer's offer is SRTP; drop --no-srtp") }
        if let video = file.offer.refused.first(where: { if case .noCodec("video", _) = $0 { true } else { false } }) {
            throw CommandFailure("\(path): \(video)")
        }
        do { try file.offer.checkBundled() } catch { throw CommandFailure("\(path): \(error)") }
        (self.audio, self.video, self.key) = (audio, file.offer.video, key)
    }
}

extension PeerOffer {
    /// Declares the peer in `session` when its offer gives its SSRC: shown by its cname, told
    /// apart from this side by its SSRC when both have one name; its video, with the feedback
    /// its offer takes, sent under this side's audio SSRC on `network`.
    func declare(in session: CallSession, localName: String, localSSRC: UInt32, network: CallTransportID) throws {
        guard let p = audio, let peerSSRC = p.ssrc else { return }
        var remoteVideo: RemoteVideo?
        if let v = video, let videoSSRC = v.ssrc {
            var feedback = VideoReceiveFeedbackConfiguration()
            feedback.localSSRC = localSSRC
            feedback.sendsNACK = v.nack
            feedback.sendsPictureLoss = v.pictureLoss
            // The size only sizes the receiver's pictures up front: the decoder takes the first keyframe's.
            let size = v.pictureSize ?? (640, 480)
            remoteVideo = RemoteVideo(ssrc: videoSSRC, width: size.width, height: size.height, payloadType: v.payloadType,
                                      feedback: feedback)
        }
        let shown = p.cname ?? "peer"
        let id = shown == localName ? "\(shown)-\(String(peerSSRC, radix: 16))" : shown
        try session.addRemote(RemoteParticipant(id: id, displayName: shown, audioSSRC: peerSSRC, video: remoteVideo))
        if remoteVideo != nil { try session.addRole(.videoFeedback(of: id), to: network) }
    }
}

/// Reads the peer's SDP, waiting up to `seconds` for the file to appear and be complete.
private func waitForSDP(_ path: String, seconds: Double) throws -> OfferFile {
    let deadline = MonotonicTime.now().advanced(bySeconds: seconds)
    while true {
        if FileManager.default.fileExists(atPath: path) {
            do { return try OfferFile(path: path) } catch {
                // A file being written may be incomplete for a moment; a broken one stays broken.
                if MonotonicTime.now() >= deadline { throw error }
            }
        } else if MonotonicTime.now() >= deadline {
            throw CommandFailure("\(path): the peer's offer did not appear within \(seconds) s")
        }
        SystemMediaClock().sleep(until: MonotonicTime.now().advanced(bySeconds: 0.05))
    }
}
