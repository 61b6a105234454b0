// `parley call --transport webrtc`: a browser (or any WHIP-style client) calls Parley directly.
// The offer and the answer travel over plain HTTP (the endpoint of ParleyNetwork's
// SDPExchangeServer); the media over ICE, DTLS-SRTP and SRTP (ParleyWebRTC), through the same
// call session, outputs and report as the RTP call; with --chat, text over a data channel of
// the same transport (ParleyWebRTC's WebRTCChat, see CallChat).

import Foundation
import ParleyCall
import ParleyCore
import ParleyDTLS
import ParleyNetwork
import ParleyRTP
import ParleySDP
import ParleyWebRTC

/// What the WebRTC call takes besides the common call options.
struct CallWebRTCOptions {
    /// The addresses ICE gathers candidates on (empty: every interface but the loopback).
    var iceAddresses: [String] = []
    /// The most video bitrate Parley's REMB asks of the peer, kbit/s.
    var receiveBitrateKbps = 2_000
    /// Chat over a data channel (`--chat`, `--chat-from`).
    var chat = false
    /// The file whose lines the chat sends (nil: standard input's).
    var chatFrom: String?
}

/// The name the peer of a WebRTC call goes by (a browser's cname is random).
let webRTCPeerName = "peer"

/// The offer taken and what answering it made: the transport, the offer, the answer.
private struct AnsweredOffer {
    let transport: WebRTCTransport
    let offer: JSEPDescription
    let answer: JSEPDescription
}

/// This side's sources: its SSRCs (two different ones) and whether it sends video.
private struct WebRTCLocal {
    let name: String
    let ssrc = UInt32.random(in: 1...UInt32.max)
    let videoSSRC: UInt32
    let sendsVideo: Bool

    init(name: String, sendsVideo: Bool) {
        self.name = name
        self.sendsVideo = sendsVideo
        var video = UInt32.random(in: 1...UInt32.max)
        while video == ssrc { video = UInt32.random(in: 1...UInt32.max) }
        videoSSRC = video
    }
}

/// The offer endpoint on `--listen`: it answers the first offer (once the candidates are
/// gathered: the answer carries them, no trickle), and stays up for the call (a DELETE hangs
/// up, other requests are answered: 409 for a second call).
private final class OfferEndpoint {
    private var server: SDPExchangeServer
    /// The endpoint's URL, as printed.
    let url: String
    /// The offer answered, once one is.
    private(set) var answered: AnsweredOffer?
    private let local: WebRTCLocal
    private let options: CallWebRTCOptions
    private let certificate: DTLSCertificate
    private let clock: any MediaClock

    init(listen: UInt16, local: WebRTCLocal, options: CallWebRTCOptions, clock: any MediaClock) throws {
        certificate = try DTLSCertificate()
        server = try SDPExchangeServer(port: listen, bindHost: "0.0.0.0", path: "/call")
        url = "http://\(options.iceAddresses.first ?? "0.0.0.0"):\(server.port)\(server.path)"
        self.local = local
        self.options = options
        self.clock = clock
    }

    /// Answers or refuses what was posted, reporting on standard error; whether the peer
    /// deleted its call.
    func poll() -> Bool {
        report(server.poll(at: clock.now()) { (text: String) throws(SDPExchangeRefusal) -> String in try self.answer(text) })
    }

    /// Waits up to `seconds` for the first offer and answers it; nil on a hang-up.
    func waitForOffer(seconds: Double, hangUp: () -> Bool) throws -> AnsweredOffer? {
        let waitUntil = MonotonicTime.now().advanced(bySeconds: seconds)
        while answered == nil {
            if hangUp() { return nil }
            guard MonotonicTime.now() < waitUntil else { throw CommandFailure("no offer was posted to \(url) within \(seconds) s") }
            _ = server.waitForRequest(timeoutMilliseconds: 50)
            _ = poll()
        }
        return answered
    }

    private func answer(_ text: String) throws(SDPExchangeRefusal) -> String {
        let offer: JSEPDescription
        do { offer = try JSEPDescription(parsing: text, kind: .offer) } catch {
            throw SDPExchangeRefusal(status: 400, message: "the offer does not read as SDP: \(error)")
        }
        guard offer.media.contains(where: { $0.kind == "audio" && !$0.isRejected && $0.codec(named: "opus", clockRate: 48_000) != nil }) else {
            throw SDPExchangeRefusal(status: 400, message: "the offer has no Opus audio")
        }
        let transport: WebRTCTransport
        do {
            transport = try WebRTCTransport(role: .answerer, certificate: certificate, localAddresses: options.iceAddresses, clock: clock)
        } catch {
            throw SDPExchangeRefusal(status: 500, message: "\(error)")
        }
        let deadline = MonotonicTime.now().advanced(bySeconds: 5)
        while !transport.candidatesComplete && MonotonicTime.now() < deadline {
            clock.sleep(until: MonotonicTime.now().advanced(bySeconds: 0.005))
        }
        guard !transport.localCandidates.isEmpty else {
            transport.close()
            throw SDPExchangeRefusal(status: 500, message: "no ICE candidate on "
                                     + (options.iceAddresses.isEmpty ? "any interface but the loopback" : options.iceAddresses.joined(separator: ", ")))
        }
        do {
            // With the chat, the offer's data-channel section is accepted; else rejected.
            try transport.setRemote(offer, dataChannel: options.chat)
            let description = transport.local(cname: local.name, audioSSRC: local.ssrc, videoSSRC: local.videoSSRC)
            let sendsVideo = local.sendsVideo
            let made = try JSEPDescription.answer(to: offer, local: description, dataChannel: options.chat) { section in
                section.kind == "video" ? JSEPWants(sends: sendsVideo, receives: true) : .both
            }
            answered = AnsweredOffer(transport: transport, offer: offer, answer: made)
            return made.text
        } catch {
            transport.close()
            throw SDPExchangeRefusal(status: 400, message: "the offer cannot be answered: \(error)")
        }
    }
}

/// Serves the offer endpoint on `--listen`, answers the first offer, and runs the call over
/// its WebRTC transport until the source has been sent and the peer has gone, a DELETE, or a
/// signal.
func callOverWebRTC(name: String, io: CallIOOptions, videoOutput: String?, timeout: Double, offerWait: Double, listen: UInt16,
                    webRTC w: CallWebRTCOptions,
                    hangUp: @escaping () -> Bool) throws -> Int32 {
    let clock = SystemMediaClock()
    var camera = try CallCamera(io.video, clock: clock)
    let local = WebRTCLocal(name: name, sendsVideo: camera != nil)
    let endpoint = try OfferEndpoint(listen: listen, local: local, options: w, clock: clock)
    printError("parley call: waiting for an offer at \(endpoint.url)")
    guard let call = try endpoint.waitForOffer(seconds: offerWait, hangUp: hangUp) else { return ExitStatus.failure }
    let transport = call.transport
    defer { transport.close() }
    let chat = try w.chat ? CallChat(transport: transport, clock: clock, name: name, from: w.chatFrom) : nil
    guard try awaitConnection(transport, endpoint: endpoint, timeout: timeout, clock: clock, hangUp: hangUp) else {
        return ExitStatus.failure
    }
    printError("parley call: connected over WebRTC")

    let session = makeWebRTCSession(call, io: io, timeout: timeout, clock: clock)
    let showGrid = io.tui && isatty(STDOUT_FILENO) == 1
    let eventsFile = try openSessionEvents(io.events, session, showGrid: showGrid)
    let network = session.addTransport(transport)
    try addPeer(call, to: session, network: network, local: local, receiveBitrateKbps: w.receiveBitrateKbps)
    try addLocalMedia(call, to: session, network: network, local: local, camera: camera.take(), audio: io.audio, clock: clock)
    let outputs = try CallOutputs(session: session, audio: io.output, mixes: false,
                                  pictureFile: videoOutput.map { out in { _ in (out, 30) } })
    chat?.show(in: session, eventsFile: eventsFile, showGrid: showGrid)
    let peerHeard = try runWebRTCCall(session, name: name, endpoint: endpoint, outputs: outputs, chat: chat, showGrid: showGrid,
                                      timeout: timeout, hangUp: hangUp)
    chat?.stop()
    try? eventsFile?.close()
    try outputs.close()
    try outputs.throwFailure()
    if let failure = session.localFailure { throw CommandFailure("\(io.audio): \(failure)") }
    if let failure = session.localVideoFailure { throw CommandFailure("video: \(failure)") }

    printCallReport(session, to: "\(webRTCPeerName) over WebRTC (\(endpoint.url)), SSRC 0x\(String(local.ssrc, radix: 16))",
                    videoSSRC: local.videoSSRC)
    printWebRTCReport(session, transport: transport, outputs: outputs, videoOutput: videoOutput)
    if let chat { print(chat.reportLine) }
    guard peerHeard, (session.receiveStatistics(of: webRTCPeerName)?.receive.packetsBuffered ?? 0) > 0 else {
        printError("parley call: nothing was heard from the peer over WebRTC")
        return ExitStatus.failure
    }
    return ExitStatus.success
}

/// Up: ICE, the DTLS handshake, the SRTP keys (what arrives before is the handshake's) and,
/// with the chat, the data channels' association (at most 2 s more: it comes up at the pace of
/// its handshake, not of the call's frames). False on a hang-up or the peer's DELETE.
private func awaitConnection(_ transport: WebRTCTransport, endpoint: OfferEndpoint, timeout: Double, clock: any MediaClock,
                             hangUp: () -> Bool) throws -> Bool {
    let upUntil = MonotonicTime.now().advanced(bySeconds: max(10, timeout))
    var associationUntil: MonotonicTime?
    var ended = false
    while true {
        if transport.state == .connected {
            guard let channels = transport.dataChannels, !channels.isReady else { return true }
            let until = associationUntil ?? MonotonicTime.now().advanced(bySeconds: 2)
            associationUntil = until
            if MonotonicTime.now() >= until { return true }
        } else {
            if case .failed(let error) = transport.state { throw CommandFailure("WebRTC: \(error)") }
            if transport.state == .closed { throw CommandFailure("WebRTC: the connection closed") }
            guard MonotonicTime.now() < upUntil else { throw CommandFailure("the WebRTC connection did not come up within \(max(10, timeout)) s") }
        }
        guard !hangUp() && !ended else { return false }
        transport.receive(until: clock.now()) { _, _ in }
        ended = endpoint.poll()
        clock.sleep(until: MonotonicTime.now().advanced(bySeconds: 0.002))
    }
}

/// The call session: the negotiated Opus and audio-level extension, one peer, playout to the
/// device or `--output`.
private func makeWebRTCSession(_ call: AnsweredOffer, io: CallIOOptions, timeout: Double, clock: any MediaClock) -> CallSession {
    let audioAnswer = call.answer.media.first { $0.kind == "audio" && !$0.isRejected }
    var settings = CallSessionConfiguration()
    settings.remoteTimeout = timeout
    settings.maximumRemotes = 1
    io.setPlayout(&settings)
    settings.receive.payloadType = audioAnswer?.codec(named: "opus", clockRate: 48_000)?.payloadType ?? OpusRTP.defaultPayloadType
    if let levelID = audioAnswer?.extensionID(JSEPExtension.audioLevel) { settings.receive.audioLevelExtensionID = levelID }
    // A browser sets the voice flag from its own detector, or always: talking comes from the
    // local VAD on what is received.
    settings.receive.voiceActivitySource = .local
    settings.admitsUndeclaredRemotes = call.offer.media.first { $0.kind == "audio" && !$0.isRejected }?.ssrcs.first == nil
    settings.undeclaredRemoteName = webRTCPeerName
    return CallSession(configuration: settings, clock: clock)
}

/// The peer: its audio, and its video at the size its keyframes give, with the feedback both
/// sides negotiated (NACK, PLI, REMB under the --receive-bitrate ceiling).
private func addPeer(_ call: AnsweredOffer, to session: CallSession, network: CallTransportID, local: WebRTCLocal,
                     receiveBitrateKbps: Int) throws {
    guard let peerAudioSSRC = call.offer.media.first(where: { $0.kind == "audio" && !$0.isRejected })?.ssrcs.first else { return }
    var remoteVideo: RemoteVideo?
    if let videoAnswer = call.answer.media.first(where: { $0.kind == "video" && !$0.isRejected }),
       let vp8 = videoAnswer.codec(named: "VP8", clockRate: 90_000),
       videoAnswer.direction == .sendrecv || videoAnswer.direction == .recvonly,
       let peerVideoSSRC = call.offer.section(mid: videoAnswer.mid)?.ssrcs.first {
        var feedback = VideoReceiveFeedbackConfiguration()
        feedback.localSSRC = local.ssrc
        feedback.sendsNACK = vp8.feedback.contains("nack")
        feedback.sendsPictureLoss = vp8.feedback.contains("nack pli")
        feedback.sendsREMB = vp8.feedback.contains("goog-remb")
        feedback.maximumBitrateKbps = receiveBitrateKbps
        remoteVideo = RemoteVideo(ssrc: peerVideoSSRC, payloadType: vp8.payloadType, feedback: feedback)
    }
    try session.addRemote(RemoteParticipant(id: webRTCPeerName, displayName: webRTCPeerName, audioSSRC: peerAudioSSRC, video: remoteVideo))
    if remoteVideo != nil { try session.addRole(.videoFeedback(of: webRTCPeerName), to: network) }
}

/// This side's media: the camera's VP8 when the answer sends video, and the audio source's Opus.
private func addLocalMedia(_ call: AnsweredOffer, to session: CallSession, network: CallTransportID, local: WebRTCLocal,
                           camera: consuming CallCamera?, audio: String, clock: any MediaClock) throws {
    if let videoAnswer = call.answer.media.first(where: { $0.kind == "video" && !$0.isRejected }),
       let vp8 = videoAnswer.codec(named: "VP8", clockRate: 90_000),
       videoAnswer.direction == .sendrecv || videoAnswer.direction == .sendonly, let camera = camera.take() {
        var configuration = LocalVideoConfiguration()
        configuration.ssrc = local.videoSSRC
        configuration.payloadType = vp8.payloadType
        configuration.firstTimestamp = UInt32.random(in: 0...UInt32.max)
        try camera.add(to: session, configuration: configuration, sendingOn: network)
    }
    let audioAnswer = call.answer.media.first { $0.kind == "audio" && !$0.isRejected }
    var send = AudioSendConfiguration()
    send.ssrc = local.ssrc
    send.payloadType = audioAnswer?.codec(named: "opus", clockRate: 48_000)?.payloadType ?? OpusRTP.defaultPayloadType
    if let levelID = audioAnswer?.extensionID(JSEPExtension.audioLevel) { send.audioLevelExtensionID = levelID }
    send.firstSequence = UInt16.random(in: 0...UInt16.max)
    send.firstTimestamp = UInt32.random(in: 0...UInt32.max)
    try addCallAudio(audio, name: local.name, send: send, to: session, sendingOn: network, clock: clock)
}

/// Runs the session until the source has been sent and the peer has gone (or was never heard
/// within `timeout`), the peer's DELETE, an output's failure or a hang-up; whether the peer
/// was heard. The chat's lines go out and its channels are driven on the call's thread.
private func runWebRTCCall(_ session: CallSession, name: String, endpoint: OfferEndpoint, outputs: CallOutputs, chat: CallChat?,
                           showGrid: Bool, timeout: Double, hangUp: @escaping () -> Bool) throws -> Bool {
    var grid = CallGrid(shown: showGrid)
    var peerHeard = false
    var ended = false
    session.onFrame = { t in
        if !session.remoteNames.isEmpty { peerHeard = true }
        if endpoint.poll() { ended = true }
        chat?.advance(to: session.clock.now())
        let everyoneLeft = peerHeard && !session.state.present.contains { $0.id != name }
        let elapsed = Double(session.start.nanoseconds(to: session.clock.now())) / 1e9
        if hangUp() || ended || outputs.failed || (session.localHasEnded && everyoneLeft)
            || (!peerHeard && elapsed > timeout && session.localHasEnded) {
            session.stop()
            return
        }
        grid.draw(session.state, time: t) { chat?.shown.footer(leaving: "hangs up") ?? "" }
    }
    grid.begin()
    try session.run()
    grid.end()
    return peerHeard
}

/// The connection's lines of the report: its state and SRTP, the size of the peer's pictures,
/// the REMBs each way, and what `--video-output` did not get.
private func printWebRTCReport(_ session: CallSession, transport: WebRTCTransport, outputs: CallOutputs, videoOutput: String?) {
    let s = transport.statistics
    print("webrtc: \(transport.state), \(s.srtp.protected) packets protected, \(s.sendsDroppedUnkeyed) dropped before the keys")
    let received = session.receiveStatistics(of: webRTCPeerName)?.video
    if let received {
        print("video received size: \(received.width)x\(received.height), \(received.sizeChanges) changes")
    }
    if received != nil || session.localVideoStatistics != nil {
        print("remb: sent \(received?.estimatesSent ?? 0) (last \(received?.receiveEstimateKbps ?? 0) kbit/s), "
              + "received \(session.localVideoStatistics?.estimatesReceived ?? 0) "
              + "(last \(session.localVideoStatistics?.receiverEstimateKbps ?? 0) kbit/s, "
              + "lowest \(session.localVideoStatistics?.lowestReceiverEstimateKbps ?? 0))")
    }
    if let out = videoOutput, !outputs.wrotePictures { printError("parley call: no video was received; \(out) was not written") }
    if let out = videoOutput, outputs.picturesOfOtherSize > 0 {
        printError("parley call: \(outputs.picturesOfOtherSize) pictures of another size than the first were not written to \(out)")
    }
}

/// Prints the endpoint's refusals on standard error; whether the peer deleted its call.
private func report(_ events: [SDPExchangeEvent]) -> Bool {
    var ended = false
    for e in events {
        switch e {
        case .answered(let location): printError("parley call: answered the offer; the call is \(location)")
        case .refused(let status, let reason): printError("parley call: refused a request (\(status)): \(reason)")
        case .ended: ended = true
        }
    }
    return ended
}
