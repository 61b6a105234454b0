// `parley call --transport webrtc`: a browser (or any WHIP-style client) calls Parley directly.
// The offer and the answer travel over plain HTTP (the endpoint of ParleyNetwork's
// SDPExchangeServer); the media over ICE, DTLS-SRTP and SRTP (ParleyWebRTC), through the same
// call session, outputs and report as the RTP call.

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
}

/// The name the peer of a WebRTC call goes by (a browser's cname is random).
let webRTCPeerName = "peer"

/// The offer taken and what answering it made: the transport, the offer, the answer.
private struct AnsweredOffer {
    let transport: WebRTCTransport
    let offer: JSEPDescription
    let answer: JSEPDescription
}

/// Serves the offer endpoint on `--listen`, answers the first offer, and runs the call over
/// its WebRTC transport until the source has been sent and the peer has gone, a DELETE, or a
/// signal.
func callOverWebRTC(name: String, audio: String, video: CallVideoSourceKind?, output: String?, videoOutput: String?,
                    events: String?, tui: Bool, headset: Bool, timeout: Double, offerWait: Double, listen: UInt16,
                    webRTC w: CallWebRTCOptions,
                    hangUp: @escaping () -> Bool) throws -> Int32 {
    let clock = SystemMediaClock()
    let ssrc = UInt32.random(in: 1...UInt32.max)
    var videoSSRC = UInt32.random(in: 1...UInt32.max)
    while videoSSRC == ssrc { videoSSRC = UInt32.random(in: 1...UInt32.max) }
    var camera = try CallCamera(video, clock: clock)
    let sendsVideo = camera != nil
    let certificate = try DTLSCertificate()
    var server = try SDPExchangeServer(port: listen, bindHost: "0.0.0.0", path: "/call")
    let endpoint = "http://\(w.iceAddresses.first ?? "0.0.0.0"):\(server.port)\(server.path)"
    printError("parley call: waiting for an offer at \(endpoint)")

    // The offer: answered on the endpoint's poll, once the candidates are gathered (the answer
    // carries them: no trickle).
    var answered: AnsweredOffer?
    let answer = { (text: String) throws(SDPExchangeRefusal) -> String in
        let offer: JSEPDescription
        do { offer = try JSEPDescription(parsing: text, kind: .offer) } catch {
            throw SDPExchangeRefusal(status: 400, message: "the offer does not read as SDP: \(error)")
        }
        guard offer.media.contains(where: { $0.kind == "audio" && !$0.isRejected && $0.codec(named: "opus", clockRate: 48_000) != nil }) else {
            throw SDPExchangeRefusal(status: 400, message: "the offer has no Opus audio")
        }
        let transport: WebRTCTransport
        do {
            transport = try WebRTCTransport(role: .answerer, certificate: certificate, localAddresses: w.iceAddresses, clock: clock)
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
                                     + (w.iceAddresses.isEmpty ? "any interface but the loopback" : w.iceAddresses.joined(separator: ", ")))
        }
        do {
            try transport.setRemote(offer)
            let local = transport.local(cname: name, audioSSRC: ssrc, videoSSRC: videoSSRC)
            let made = try JSEPDescription.answer(to: offer, local: local) { section in
                section.kind == "video" ? JSEPWants(sends: sendsVideo, receives: true) : .both
            }
            answered = AnsweredOffer(transport: transport, offer: offer, answer: made)
            return made.text
        } catch {
            transport.close()
            throw SDPExchangeRefusal(status: 400, message: "the offer cannot be answered: \(error)")
        }
    }
    let waitUntil = MonotonicTime.now().advanced(bySeconds: offerWait)
    while answered == nil {
        if hangUp() { return ExitStatus.failure }
        guard MonotonicTime.now() < waitUntil else { throw CallError("no offer was posted to \(endpoint) within \(offerWait) s") }
        _ = server.waitForRequest(timeoutMilliseconds: 50)
        report(server.poll(at: clock.now(), answer: answer))
    }
    let call = answered!
    let transport = call.transport
    defer { transport.close() }

    // Up: ICE, the DTLS handshake, the SRTP keys (what arrives before is the handshake's).
    let upUntil = MonotonicTime.now().advanced(bySeconds: max(10, timeout))
    var ended = false
    while transport.state != .connected {
        if case .failed(let error) = transport.state { throw CallError("WebRTC: \(error)") }
        if transport.state == .closed { throw CallError("WebRTC: the connection closed") }
        guard !hangUp() && !ended else { return ExitStatus.failure }
        guard MonotonicTime.now() < upUntil else { throw CallError("the WebRTC connection did not come up within \(max(10, timeout)) s") }
        transport.receive(until: clock.now()) { _, _ in }
        ended = report(server.poll(at: clock.now(), answer: answer))
        clock.sleep(until: MonotonicTime.now().advanced(bySeconds: 0.002))
    }
    printError("parley call: connected over WebRTC")

    let audioOffer = call.offer.media.first { $0.kind == "audio" && !$0.isRejected }
    let audioAnswer = call.answer.media.first { $0.kind == "audio" && !$0.isRejected }
    let opus = audioAnswer?.codec(named: "opus", clockRate: 48_000)?.payloadType ?? OpusRTP.defaultPayloadType
    let levelID = audioAnswer?.extensionID(JSEPExtension.audioLevel)
    var settings = CallSessionConfiguration()
    settings.remoteTimeout = timeout
    settings.maximumRemotes = 1
    setPlayout(&settings, audio: audio, output: output, headset: headset)
    settings.receive.payloadType = opus
    if let levelID { settings.receive.audioLevelExtensionID = levelID }
    // A browser sets the voice flag from its own detector, or always: talking comes from the
    // local VAD on what is received.
    settings.receive.voiceActivitySource = .local
    let peerAudioSSRC = audioOffer?.ssrcs.first
    settings.admitsUndeclaredRemotes = peerAudioSSRC == nil
    settings.undeclaredRemoteName = webRTCPeerName
    let session = CallSession(configuration: settings, clock: clock)
    let showGrid = tui && isatty(STDOUT_FILENO) == 1
    let eventsFile = try openSessionEvents(events, session, showGrid: showGrid)
    let network = session.addTransport(transport)

    // The peer: its audio, and its video at the size its keyframes give, with the feedback both
    // sides negotiated (NACK, PLI, REMB under the --receive-bitrate ceiling).
    let videoAnswer = call.answer.media.first { $0.kind == "video" && !$0.isRejected }
    let vp8 = videoAnswer?.codec(named: "VP8", clockRate: 90_000)
    if let peerAudioSSRC {
        var remoteVideo: RemoteVideo?
        if let videoAnswer, let vp8, videoAnswer.direction == .sendrecv || videoAnswer.direction == .recvonly,
           let peerVideoSSRC = call.offer.section(mid: videoAnswer.mid)?.ssrcs.first {
            var feedback = VideoReceiveFeedbackConfiguration()
            feedback.localSSRC = ssrc
            feedback.sendsNACK = vp8.feedback.contains("nack")
            feedback.sendsPictureLoss = vp8.feedback.contains("nack pli")
            feedback.sendsREMB = vp8.feedback.contains("goog-remb")
            feedback.maximumBitrateKbps = w.receiveBitrateKbps
            remoteVideo = RemoteVideo(ssrc: peerVideoSSRC, payloadType: vp8.payloadType, feedback: feedback)
        }
        try session.addRemote(RemoteParticipant(id: webRTCPeerName, displayName: webRTCPeerName, audioSSRC: peerAudioSSRC, video: remoteVideo))
        if remoteVideo != nil { try session.addRole(.videoFeedback(of: webRTCPeerName), to: network) }
    }
    if let videoAnswer, let vp8, videoAnswer.direction == .sendrecv || videoAnswer.direction == .sendonly, let camera = camera.take() {
        var configuration = LocalVideoConfiguration()
        configuration.ssrc = videoSSRC
        configuration.payloadType = vp8.payloadType
        configuration.firstTimestamp = UInt32.random(in: 0...UInt32.max)
        try camera.add(to: session, configuration: configuration, sendingOn: network)
    }

    var send = AudioSendConfiguration()
    send.ssrc = ssrc
    send.payloadType = opus
    if let levelID { send.audioLevelExtensionID = levelID }
    send.firstSequence = UInt16.random(in: 0...UInt16.max)
    send.firstTimestamp = UInt32.random(in: 0...UInt32.max)
    try addCallAudio(audio, name: name, send: send, to: session, sendingOn: network, clock: clock)

    let outputs = try CallOutputs(session: session, audio: output, mixes: false,
                                  pictureFile: videoOutput.map { out in { _ in (out, 30) } })
    var grid = CallGrid(shown: showGrid)
    var peerHeard = false
    session.onFrame = { t in
        if !session.remoteNames.isEmpty { peerHeard = true }
        // The endpoint stays up: a DELETE hangs up, other requests are answered (409 for a second call).
        if report(server.poll(at: clock.now(), answer: answer)) { ended = true }
        let everyoneLeft = peerHeard && !session.state.present.contains { $0.id != name }
        let elapsed = Double(session.start.nanoseconds(to: clock.now())) / 1e9
        if hangUp() || ended || outputs.failed || (session.localHasEnded && everyoneLeft)
            || (!peerHeard && elapsed > timeout && session.localHasEnded) {
            session.stop()
            return
        }
        grid.draw(session.state, time: t)
    }
    grid.begin()
    try session.run()
    grid.end()
    try? eventsFile?.close()
    try outputs.close()
    try outputs.throwFailure()
    if let failure = session.localFailure { throw CallError("\(audio): \(failure)") }
    if let failure = session.localVideoFailure { throw CallError("video: \(failure)") }

    printCallReport(session, to: "\(webRTCPeerName) over WebRTC (\(endpoint)), SSRC 0x\(String(ssrc, radix: 16))", videoSSRC: videoSSRC)
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
    guard peerHeard, (session.receiveStatistics(of: webRTCPeerName)?.receive.packetsBuffered ?? 0) > 0 else {
        printError("parley call: nothing was heard from the peer over WebRTC")
        return ExitStatus.failure
    }
    return ExitStatus.success
}

/// Prints the endpoint's refusals on standard error; whether the peer deleted its call.
@discardableResult
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
