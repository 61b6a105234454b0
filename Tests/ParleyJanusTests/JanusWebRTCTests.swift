// Janus's WebRTC signalling with ICE to Janus: Parley publishes into a VideoRoom, subscribes to
// a browser's and another Parley's publications in one PeerConnection, follows a publisher
// leaving, and joins an AudioBridge over WebRTC. The SDP is ParleySDP's, the ICE agent
// ParleyICE's; DTLS is not part of these tests (the fingerprint is a well-formed stand-in), so
// each checks ICE reaching connected with Janus and Janus's first DTLS record arriving over it.
// Run inside the network namespace of scripts/netns.sh (Janus refuses loopback candidates):
//   bash scripts/netns.sh swift test --skip-build --filter JanusWebRTCTests

import Foundation
import JanusTestSupport
import ParleyCore
import ParleyICE
import ParleyJanus
import ParleySDP
import Testing

/// A session's events, collected as they come, for a test to wait on.
private final class EventLog: Sendable {
    let events = Locked<[JanusEvent]>([])

    /// Follows `janus`'s events until the task is cancelled.
    func follow(_ janus: JanusClient) -> Task<Void, Never> {
        Task {
            do {
                for try await event in await janus.events() { self.events.withLock { $0.append(event) } }
            } catch {}
        }
    }

    /// How many events have come so far (a mark to wait after).
    var count: Int { events.withLock { $0.count } }

    /// The first plugin event of handle `sender` after `mark` that `pick` takes, waiting up to
    /// `seconds` for it.
    func plugin<T>(_ sender: UInt64, after mark: Int = 0, seconds: Double = 20,
                   _ pick: (JSONValue, JSONValue?) throws -> T?) async throws -> T? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var seen = mark
        while true {
            let now = events.withLock { Array($0.dropFirst(seen)) }
            for event in now {
                seen += 1
                if case .plugin(sender, _, let data, let jsep) = event, let found = try pick(data, jsep) { return found }
            }
            if ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Janus's trickled candidates for handle `sender` so far.
    func trickles(_ sender: UInt64) -> [JanusTrickle] {
        events.withLock { $0.compactMap(JanusTrickle.trickles(in:)).filter { $0.sender == sender }.flatMap(\.trickles) }
    }
}

/// What one ICE agent reported.
private final class Recorder: Sendable {
    struct Log {
        var candidates: [ICECandidate] = []
        var gathered = false
        var states: [(state: ICEConnectionState, at: ContinuousClock.Instant)] = []
        var datagrams: [[UInt8]] = []
    }
    let log = Locked(Log())

    /// Polls `condition` until it holds (true) or `seconds` pass (false).
    func wait(seconds: Double, until condition: (Log) -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if log.withLock({ condition($0) }) { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return log.withLock { condition($0) }
    }
}

/// Parley's side of one PeerConnection with Janus, up to ICE: an agent on the namespace's
/// address, its credentials and candidates in ParleySDP's terms, a stand-in fingerprint.
private struct WebRTCPeer {
    let agent: ICEAgent
    let recorder: Recorder
    let fingerprint = try! SDPFingerprint.sha256((0..<32).map { _ in UInt8.random(in: 0...255) })

    init(_ role: ICERole) throws {
        let address = try #require(NetworkNamespace.address)
        let recorder = Recorder()
        self.recorder = recorder
        agent = try ICEAgent(role: role, localAddresses: [address], onEvent: { event in
            recorder.log.withLock { log in
                switch event {
                case .localCandidate(let c): log.candidates.append(c)
                case .gatheringComplete: log.gathered = true
                case .stateChanged(let s): log.states.append((s, .now))
                case .selectedPair: break
                }
            }
        }, onDatagram: { bytes in
            recorder.log.withLock { if $0.datagrams.count < 100 { $0.datagrams.append(Array(bytes)) } }
        })
    }

    /// Gathers the local candidates.
    func gather() async throws {
        try agent.gatherCandidates()
        #expect(try await recorder.wait(seconds: 5) { $0.gathered })
        #expect(!recorder.log.withLock { $0.candidates }.isEmpty)
    }

    /// The local side for ParleySDP: the agent's credentials, its candidates (or none, to
    /// trickle them), the fingerprint.
    func local(withCandidates: Bool) -> JSEPLocal {
        let credentials = agent.localCredentials
        let candidates = withCandidates ? recorder.log.withLock { $0.candidates }.map { String($0.attribute.dropFirst("candidate:".count)) } : []
        return JSEPLocal(ice: credentials,
                         fingerprint: fingerprint, candidates: candidates, candidatesComplete: withCandidates,
                         cname: "parley", audioSSRC: UInt32.random(in: 1...UInt32.max), videoSSRC: UInt32.random(in: 1...UInt32.max))
    }

    /// Gives the agent Janus's credentials and candidates (the description's and the trickled
    /// ones), then the end of them.
    /// - Returns: how many candidates the agent took.
    @discardableResult
    func connect(to remote: JSEPDescription, trickled: [JanusTrickle] = []) throws -> Int {
        let first = try #require(remote.media.first { !$0.isRejected })
        let ice = try #require(remote.iceCredentials(of: first))
        try agent.setRemoteCredentials(ice)
        var lines = remote.media.flatMap(\.candidates).map { "candidate:" + $0 }
        for case .candidate(let line, _, _) in trickled { lines.append(line) }
        var taken = 0
        for line in Set(lines) {
            if try agent.addRemoteCandidate(ICECandidate(parsing: line)) { taken += 1 }
        }
        try agent.endOfRemoteCandidates()
        return taken
    }

    /// When the agent first reached connected or ready, waiting up to `seconds`.
    func connected(seconds: Double = 15) async throws -> ContinuousClock.Instant? {
        _ = try await recorder.wait(seconds: seconds) { $0.states.contains { $0.state == .connected || $0.state == .ready } }
        return recorder.log.withLock { $0.states.first { $0.state == .connected || $0.state == .ready }?.at }
    }

    /// Whether a DTLS record (content types 20 to 63, RFC 7983) arrived from Janus over the pair.
    func receivedDTLS(seconds: Double = 5) async throws -> Bool {
        try await recorder.wait(seconds: seconds) { $0.datagrams.contains { (20...63).contains($0.first ?? 0) } }
    }
}

/// A Parley publisher in a VideoRoom room, up to ICE connected.
private struct ParleyPublisher {
    let handle: VideoRoomHandle
    let peer: WebRTCPeer
    let id: UInt64
    /// From `join` to ICE connected, and to Janus's answer.
    let iceTime: Duration
    let answerTime: Duration
    let answer: JSEPDescription

    static func publish(_ janus: JanusClient, _ log: EventLog, room: UInt64, display: String) async throws -> ParleyPublisher {
        let handle = try await VideoRoomHandle.attach(janus)
        let peer = try WebRTCPeer(.controlling)
        let start = ContinuousClock.now
        let mark = log.count
        try await handle.join(room: room, display: display)
        async let gathered: Void = peer.gather()
        let joined = try await log.plugin(handle.id, after: mark) { data, _ -> UInt64? in
            if case .joined(let id, _) = VideoRoomEvent(data) { return id }
            if case .error(let code, let text) = VideoRoomEvent(data) { throw JanusError.plugin(code: code, text: text) }
            return nil
        }
        let id = try #require(joined, "no joined event")
        try await gathered
        let offer = JSEPDescription.offer(local: peer.local(withCandidates: true), audio: .sendOnly, video: nil)
        let configured = log.count
        try await handle.configure(offer: JanusJSEP(type: .offer, sdp: offer.text))
        let jsep = try await log.plugin(handle.id, after: configured) { data, jsep -> JanusJSEP? in
            if case .error(let code, let text) = VideoRoomEvent(data) { throw JanusError.plugin(code: code, text: text) }
            guard let jsep else { return nil }
            #expect(data["configured"]?.stringValue == "ok", "\(data)")
            return try JanusJSEP(jsep)
        }
        let answerJSEP = try #require(jsep, "no answer to configure")
        #expect(answerJSEP.type == .answer)
        let answered = ContinuousClock.now
        let answer = try JSEPDescription(parsing: answerJSEP.sdp, kind: .answer)
        try peer.connect(to: answer, trickled: log.trickles(handle.id))
        let up = try #require(try await peer.connected(), "ICE did not connect with Janus: \(peer.recorder.log.withLock { $0.states.map(\.state) })")
        return ParleyPublisher(handle: handle, peer: peer, id: id, iceTime: up - start, answerTime: answered - start, answer: answer)
    }
}

/// Runs `body` with a Janus on the namespace's interface, a session on it, and that session's
/// events followed into a log.
private func withJanus(_ body: (JanusServer, JanusClient, EventLog) async throws -> Void) async throws {
    try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
        let janus = JanusClient(baseURL: server.baseURL)
        try await janus.createSession()
        let log = EventLog()
        let follower = log.follow(janus)
        defer { follower.cancel() }
        try await body(server, janus, log)
    }
}

private func ms(_ d: Duration) -> String {
    String(format: "%.0f ms", Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15)
}

@Suite(.serialized, .enabled(if: NetworkNamespace.isInside,
                             "runs inside the network namespace of scripts/netns.sh (unshare -n, as root): bash scripts/netns.sh swift test --skip-build --filter JanusWebRTCTests"),
       .enabled(if: JanusServer.binaryPath != nil, "needs janus (scripts/setup.sh installs it)"))
struct JanusWebRTCTests {
    /// Parley publishes audio: its offer (ParleySDP, a real agent's candidates) is answered by
    /// Janus, the answer parses, and ICE connects with Janus.
    @Test func parleyPublishesIntoAVideoRoom() async throws {
        try await withJanus { server, janus, log in
            let admin = try await VideoRoomHandle.attach(janus)
            let room = try await admin.createRoom(.init(room: 5151, publishers: 4))
            let publisher = try await ParleyPublisher.publish(janus, log, room: room, display: "parley")
            defer { publisher.peer.agent.close() }
            let audio = try #require(publisher.answer.media.first)
            #expect(audio.kind == "audio" && !audio.isRejected && audio.direction == .recvonly)
            #expect(audio.codec(named: "opus", clockRate: 48_000) != nil)
            #expect(publisher.answer.fingerprint(of: audio)?.algorithm == "sha-256")
            #expect(publisher.answer.setup(of: audio) == .active)
            let pair = try #require(publisher.peer.agent.selectedPair)
            #expect(pair.local.address == NetworkNamespace.address && pair.remote.address == NetworkNamespace.address)
            // Janus, the DTLS client, starts its handshake over the pair.
            #expect(try await publisher.peer.receivedDTLS(), "no DTLS record from Janus")
            let participants = try await admin.listParticipants(room: room)
            #expect(participants.contains { $0.id == publisher.id && $0.display == "parley" })
            print("Parley -> Janus VideoRoom publish: answer \(ms(publisher.answerTime)), ICE connected "
                  + "\(ms(publisher.iceTime)) after join; pair \(pair)")
        }
    }

    /// Parley subscribes to a browser and to another Parley publisher in one PeerConnection:
    /// Janus's offer parses, ParleySDP's receive-only answer is accepted (`start`), Parley's
    /// candidates go by trickle, ICE connects; the streams name the browser; when the Parley
    /// publisher leaves, the subscriber hears of it and answers Janus's new offer. (The other
    /// Parley publisher is fed by plain RTP: one publishing over WebRTC is no feed until its
    /// PeerConnection is up, which needs DTLS.)
    @Test func parleySubscribesToABrowserAndToParley() async throws {
        let carlo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("SampleMedia/conversation/carlo.wav")
        try await withJanus { server, janus, log in
            let admin = try await VideoRoomHandle.attach(janus)
            let room = try await admin.createRoom(.init(room: 5252, publishers: 6))
            let publisher = try await ParleyPublisher.publish(janus, log, room: room, display: "parley-pub")
            defer { publisher.peer.agent.close() }

            var browser: BrowserPeer?
            defer { browser?.stop() }
            if BrowserPeer.binaryPath != nil {
                let peer = try BrowserPeer(janus: server.baseURL, room: room, role: .publish(audio: carlo, display: "browser"))
                browser = peer
                let up = await peer.waitFor("webrtc", seconds: 30)
                try #require(up != nil, "the browser's WebRTC did not come up:\n\(peer.log())")
            }
            let participants = try await admin.listParticipants(room: room)
            let browserID = participants.first { $0.display == "browser" }?.id
            #expect(BrowserPeer.binaryPath == nil || browserID != nil, "\(participants)")

            // A publisher whose PeerConnection is not up (ICE only, no DTLS) is no feed yet.
            let early = try await VideoRoomHandle.attach(janus)
            var mark = log.count
            try await early.joinAsSubscriber(room: room, streams: [VideoRoomFeedStream(feed: publisher.id)])
            let refused = try await log.plugin(early.id, after: mark) { data, _ -> Int? in
                if case .error(let code, _) = VideoRoomSubscriberEvent(data) { return code }
                return nil
            }
            #expect(refused == VideoRoomHandle.ErrorCode.noSuchFeed)
            // The other Parley publisher: one fed by plain RTP (a remote publisher).
            let rtpPublisher = try await admin.addRemotePublisher(
                room: room, display: "parley-rtp", streams: [.init(type: "audio", codec: "opus", audioLevelExtensionID: 1, fec: true)])

            // One subscriber handle, both publishers.
            let subscriber = try await VideoRoomHandle.attach(janus)
            let peer = try WebRTCPeer(.controlled)
            defer { peer.agent.close() }
            let start = ContinuousClock.now
            mark = log.count
            let feeds = [VideoRoomFeedStream(feed: rtpPublisher.id)] + (browserID.map { [VideoRoomFeedStream(feed: $0)] } ?? [])
            try await subscriber.joinAsSubscriber(room: room, streams: feeds)
            async let gathered: Void = peer.gather()
            let attached = try await log.plugin(subscriber.id, after: mark) { data, jsep -> ([VideoRoomSubscribedStream], JanusJSEP)? in
                switch VideoRoomSubscriberEvent(data) {
                case .attached(let r, let streams):
                    #expect(r == room)
                    return (streams, try #require(try jsep.map(JanusJSEP.init)))
                case .error(let code, let text): throw JanusError.plugin(code: code, text: text)
                default: return nil
                }
            }
            let (streams, offerJSEP) = try #require(attached, "no attached event")
            #expect(offerJSEP.type == .offer)
            #expect(streams.contains { $0.feedID == rtpPublisher.id && $0.feedDisplay == "parley-rtp" && $0.type == "audio" && $0.active })
            if let browserID {
                #expect(streams.contains { $0.feedID == browserID && $0.feedDisplay == "browser" && $0.type == "audio"
                    && $0.codec == "opus" && $0.active }, "\(streams)")
            }
            let offer = try JSEPDescription(parsing: offerJSEP.sdp, kind: .offer)
            #expect(offer.media.filter { $0.kind == "audio" }.count == feeds.count)
            try await gathered
            let answer = try JSEPDescription.answer(to: offer, local: peer.local(withCandidates: false)) { _ in .receiveOnly }
            #expect(answer.media.filter { $0.kind == "audio" && !$0.isRejected }.allSatisfy { $0.direction == .recvonly })
            let started = log.count
            try await subscriber.start(answer: JanusJSEP(type: .answer, sdp: answer.text))
            let mid = answer.bundle.first ?? answer.media[0].mid
            for candidate in peer.recorder.log.withLock({ $0.candidates }) {
                try await janus.trickle(.candidate(candidate.attribute, sdpMid: mid, sdpMLineIndex: 0), to: subscriber.id)
            }
            try await janus.trickle(.completed, to: subscriber.id)
            let accepted = try await log.plugin(subscriber.id, after: started) { data, _ -> Bool? in
                switch VideoRoomSubscriberEvent(data) {
                case .started: return true
                case .error(let code, let text): throw JanusError.plugin(code: code, text: text)
                default: return nil
                }
            }
            #expect(accepted == true, "start not accepted")
            try peer.connect(to: offer, trickled: log.trickles(subscriber.id))
            let up = try #require(try await peer.connected(), "ICE did not connect with Janus")
            #expect(try await peer.receivedDTLS(seconds: 2) == false, "Janus, the DTLS server here, waits for Parley's hello")
            print("Parley <- Janus VideoRoom subscribe (\(feeds.count) feeds): ICE connected \(ms(up - start)) after join; "
                  + "streams \(streams.map { "\($0.mid):\($0.feedDisplay ?? "-")/\($0.codec ?? "-")" })")

            // The Parley publisher leaves: the subscriber hears of it with a new offer, which it answers.
            let left = log.count
            try await admin.removeRemotePublisher(room: room, id: rtpPublisher.id)
            try await expectUpdate(log, subscriber: subscriber, peer: peer, after: left, gone: [rtpPublisher.id], streams: streams)
        }
    }

    /// Waits for the `updated` event telling `subscriber` that the publishers `gone` left:
    /// none of its streams relays them any more, and Janus's new offer has their sections
    /// inactive. Answers that offer (Janus holds further updates until it is answered).
    private func expectUpdate(_ log: EventLog, subscriber: VideoRoomHandle, peer: WebRTCPeer, after mark: Int,
                              gone: [UInt64], streams: [VideoRoomSubscribedStream]) async throws {
        let updated = try await log.plugin(subscriber.id, after: mark) { data, jsep -> ([VideoRoomSubscribedStream], JanusJSEP?)? in
            if case .updated(_, let streams) = VideoRoomSubscriberEvent(data) { return (streams, try jsep.map(JanusJSEP.init)) }
            return nil
        }
        let (after, renegotiation) = try #require(updated, "no updated event after \(gone.last!) left: \(log.events.withLock { $0.dropFirst(mark) })")
        #expect(!after.contains { $0.active && $0.feedID.map(gone.contains) == true }, "\(after)")
        let offerJSEP = try #require(renegotiation, "no new offer")
        let offer = try JSEPDescription(parsing: offerJSEP.sdp, kind: .offer)
        for stream in streams where stream.feedID.map(gone.contains) == true {
            #expect(offer.section(mid: stream.mid).map { $0.isRejected || $0.direction == .inactive } ?? true,
                    "section \(stream.mid) still in use")
        }
        let answer = try JSEPDescription.answer(to: offer, local: peer.local(withCandidates: true)) { _ in .receiveOnly }
        let started = log.count
        try await subscriber.start(answer: JanusJSEP(type: .answer, sdp: answer.text))
        let accepted = try await log.plugin(subscriber.id, after: started) { data, _ -> Bool? in
            switch VideoRoomSubscriberEvent(data) {
            case .started: return true
            case .error(let code, let text): throw JanusError.plugin(code: code, text: text)
            default: return nil
            }
        }
        #expect(accepted == true, "the answer to the new offer was not accepted")
    }

    /// Parley joins an AudioBridge room as a WebRTC participant: `join`, `configure` with its
    /// offer, Janus's answer, ICE connected.
    @Test func parleyJoinsAnAudioBridgeOverWebRTC() async throws {
        try await withJanus { server, janus, log in
            let bridge = try await AudioBridgeHandle.attach(janus)
            let room = try await bridge.createRoom(.init(room: 5353, samplingRate: 48_000))
            let peer = try WebRTCPeer(.controlling)
            defer { peer.agent.close() }
            let start = ContinuousClock.now
            var mark = log.count
            try await bridge.join(room: room, display: "parley")
            async let gathered: Void = peer.gather()
            let joined = try await log.plugin(bridge.id, after: mark) { data, _ -> UInt64? in
                switch AudioBridgeEvent(data) {
                case .joined(let id, _, let rtp):
                    #expect(rtp == nil)
                    return id
                case .error(let code, let text): throw JanusError.plugin(code: code, text: text)
                default: return nil
                }
            }
            let id = try #require(joined, "no joined event")
            try await gathered
            let offer = JSEPDescription.offer(local: peer.local(withCandidates: true), audio: .both, video: nil)
            mark = log.count
            try await bridge.configure(offer: JanusJSEP(type: .offer, sdp: offer.text))
            let jsep = try await log.plugin(bridge.id, after: mark) { data, jsep -> JanusJSEP? in
                if case .error(let code, let text) = AudioBridgeEvent(data) { throw JanusError.plugin(code: code, text: text) }
                guard let jsep else { return nil }
                #expect(data["result"]?.stringValue == "ok", "\(data)")
                return try JanusJSEP(jsep)
            }
            let answerJSEP = try #require(jsep, "no answer to configure")
            let answer = try JSEPDescription(parsing: answerJSEP.sdp, kind: .answer)
            let audio = try #require(answer.media.first)
            #expect(audio.direction == .sendrecv && audio.codec(named: "opus", clockRate: 48_000) != nil)
            try peer.connect(to: answer, trickled: log.trickles(bridge.id))
            let up = try #require(try await peer.connected(), "ICE did not connect with Janus")
            #expect(try await peer.receivedDTLS(), "no DTLS record from Janus")
            #expect(try await bridge.listParticipants(room: room).contains { $0.id == id && $0.display == "parley" })
            print("Parley -> Janus AudioBridge over WebRTC: ICE connected \(ms(up - start)) after join")
        }
    }
}
