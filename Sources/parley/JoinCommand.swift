import Foundation
import ParleyCall
import ParleyCore
import ParleyDevices
import ParleyJanus
import ParleyMedia
import ParleyRTP
import ParleySRTP
import Synchronization

/// `parley join`: a participant in a room on a Janus server.
let joinCommand = Command(
    name: "join",
    summary: "Join a room on a Janus server (VideoRoom or AudioBridge) as a plain-RTP participant",
    help: """
        Usage: parley join --janus URL --room ID --name NAME [--plugin videoroom|audiobridge]
                           [--audio PCM|FILE.wav] [--video DEVICE|FILE.y4m] [--pin PIN]
                           [--events FILE.jsonl] [--output FILE.wav] [--output-each DIR]
                           [--no-tui] [--srtp] [--wait-for COUNT] [--timeout S] [--muted]

        Joins room ID of the Janus server whose HTTP API is at URL (for example
        http://127.0.0.1:8088/janus) and takes part through plain RTP:
        - the local audio (Opus, 20 ms, the RFC 6464 level with the talking detector's voice
          flag) and, with --video, VP8 are published as a VideoRoom "remote publisher" named
          NAME; its RTP timestamps count from the start of the source, so the others place its
          talk in its own media time;
        - every other publisher's audio and video are forwarded by Janus (rtp_forward) to this
          participant's UDP port, as SRTP under a key generated for the call with --srtp, and
          received through the library's call session: jitter buffer, concealment, talking
          events from the senders' voice flags, the dominant speaker;
        - who joins and leaves comes from Janus's events (this participant also joins the room
          as a listener, which is where a --pin is checked): a publisher that unpublishes leaves
          at once; one whose process died leaves after --timeout seconds without a packet.
        Leaving (the source ended and everyone else left, Ctrl-C, SIGTERM) stops the forwarders
        it asked for and removes its remote publisher.

        With --plugin audiobridge it joins an AudioBridge room (one created with
        allow_rtp_participants) as a plain-RTP participant: its audio goes to Janus's mixer and
        the room's mix of everyone else comes back as one stream, shown as the participant "mix"
        (its talking from Parley's VAD on the mix). The room's participants joining and leaving
        and Janus's own talking decisions (from the RFC 6464 levels each participant sends) are
        printed beside them and written to --events as "janus_joined", "janus_left",
        "janus_talking" and "janus_silent" lines ({"t", "type", "participant"}). With a WAV
        source it leaves --timeout seconds after the file has been sent (the mix keeps coming
        while anyone is in the room).

        Options:
          --janus URL           Janus's HTTP API (the /janus path)
          --room ID             the room's numeric id (it must exist)
          --name NAME           this participant's display name (one word)
          --plugin PLUGIN       videoroom (the default) or audiobridge
          --audio SOURCE        a WAV file (mono, 8/12/16/24/48 kHz; sent paced in real time) or an
                                ALSA capture PCM (default: "default", 16 kHz mono)
          --video SOURCE        also publish video: a Y4M file (looped while the audio lasts) or
                                a V4L2 camera (/dev/videoN)
          --pin PIN             the room's pin, if it has one
          --events FILE.jsonl   write the call's events as JSON lines, as 'parley room' does (talk
                                times in the talking participant's media seconds)
          --output FILE.wav     write the others' audio, mixed (16 kHz mono), instead of playing it
                                on ALSA's "default" device
          --output-each DIR     also write each other participant's audio to DIR/NAME.wav (16 kHz
                                mono, from this participant's start) and the pictures it shows
                                of them to DIR/NAME.y4m
          --no-tui              plain text: one line per event, instead of the live grid
          --srtp                have Janus forward the others' media as SRTP (AES_CM_128_HMAC_SHA1_80)
                                under a key generated here (never printed)
          --wait-for COUNT      start sending once COUNT publishers (this one included) are in
                                the room and Janus forwards this one's audio to each of the
                                others (at most 120 s; default 1: at once)
          --timeout S           seconds without a packet before a participant counts as gone
                                (default 5)
          --muted               join muted (AudioBridge: Janus leaves this participant out of
                                the mix; either plugin: talking shows as talking while muted).
                                On the grid the key m toggles mute and q leaves; SIGUSR1 also
                                toggles mute (kill -USR1 PID)
          --receive-port PORT   the local UDP port the room's media arrive on (default: any free)
          --forward-to HOST[:PORT]
                                the address Janus sends the media to, when it cannot reach this
                                machine directly (a NAT's forwarded port, a relay); default: this
                                machine's address towards Janus and the receive port

        Prints the events (or shows the grid), then what was sent and received.
        Exit status: 0 the call ended normally, 1 Janus could not be reached or went away, the
        room does not exist, the pin is wrong, or a device, file or network error; 2 usage error.
        """,
    run: { args in runJoin(args) }
)

private struct JoinOptions {
    var janus: URL
    var room: UInt64
    var name: String
    var audio = "default"
    var video: CallVideoSourceKind?
    var pin: String?
    var events: String?
    var output: String?
    var outputEach: String?
    var tui = true
    var srtp = false
    var waitFor = 1
    var timeout = 5.0
    var audioBridge = false
    var muted = false
    /// The local UDP port Janus's media arrive on (0: any free port).
    var receivePort: UInt16 = 0
    /// Where Janus sends this participant's media, when not straight to it (a NAT's or a
    /// relay's address): host, and port (nil: the receive port).
    var forwardTo: (host: String, port: UInt16?)?
}

private func parseJoinOptions(_ args: [String]) throws(ArgumentScanner.UsageError) -> JoinOptions {
    let s = try ArgumentScanner(args, valued: ["janus", "room", "name", "plugin", "audio", "video", "pin", "events", "output",
                                               "output-each", "wait-for", "timeout", "receive-port", "forward-to"],
                                flagNames: ["no-tui", "srtp", "muted"])
    guard s.positionals.isEmpty else { throw .init(description: "unexpected argument '\(s.positionals[0])'") }
    guard let u = s.value("janus") else { throw .init(description: "missing --janus URL") }
    guard let url = URL(string: u), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
        throw .init(description: "--janus must be an http:// URL of Janus's API, got '\(u)'")
    }
    guard let r = s.value("room") else { throw .init(description: "missing --room ID") }
    guard let room = UInt64(r), room > 0 else { throw .init(description: "--room must be a positive number, got '\(r)'") }
    guard let name = s.value("name") else { throw .init(description: "missing --name NAME") }
    guard !name.isEmpty, !name.contains(where: { $0 == " " || $0.isNewline }) else {
        throw .init(description: "--name must be one word, got '\(name)'")
    }
    let plugin = s.value("plugin") ?? "videoroom"
    guard ["videoroom", "audiobridge"].contains(plugin) else {
        throw .init(description: "--plugin takes videoroom or audiobridge, got '\(plugin)'")
    }
    var o = JoinOptions(janus: url, room: room, name: name)
    o.audioBridge = plugin == "audiobridge"
    o.muted = s.flag("muted")
    if let a = s.value("audio") { o.audio = a }
    if let v = s.value("video") {
        guard let kind = CallVideoSourceKind(v) else {
            throw .init(description: "--video takes a Y4M file (.y4m) or a V4L2 device (/dev/videoN), got '\(v)'")
        }
        o.video = kind
    }
    if o.audioBridge {
        for unsupported in ["video", "srtp", "output-each", "wait-for"] where s.value(unsupported) != nil || s.flag(unsupported) {
            throw .init(description: "--\(unsupported) is for --plugin videoroom (an AudioBridge room mixes audio only, in plain RTP)")
        }
    }
    o.pin = s.value("pin")
    o.events = s.value("events")
    o.output = s.value("output")
    if let out = o.output, !out.lowercased().hasSuffix(".wav") { throw .init(description: "--output writes a .wav file, got '\(out)'") }
    o.outputEach = s.value("output-each")
    o.tui = !s.flag("no-tui")
    o.srtp = s.flag("srtp")
    o.waitFor = try s.int("wait-for", default: 1, in: 1...64)
    o.timeout = try s.double("timeout", default: 5, in: 0.2...3_600)
    o.receivePort = UInt16(try s.int("receive-port", default: 0, in: 0...65_535))
    if let f = s.value("forward-to") {
        let parts = f.split(separator: ":", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), !parts[0].isEmpty,
              parts.count == 1 || UInt16(parts[1]).map({ $0 > 0 }) == true else {
            throw .init(description: "--forward-to takes HOST or HOST:PORT (an IPv4 address or a name), got '\(f)'")
        }
        o.forwardTo = (String(parts[0]), parts.count == 2 ? UInt16(parts[1]) : nil)
    }
    return o
}

/// Set by SIGINT/SIGTERM: leave the room.
private let leaveRequested = Atomic<Bool>(false)
/// Counted by SIGUSR1: each one toggles mute.
private let muteToggles = Atomic<Int>(0)

private func runJoin(_ args: [String]) -> Int32 {
    let o: JoinOptions
    do { o = try parseJoinOptions(args) } catch {
        printError("parley join: \(error)\nRun 'parley join --help' for usage.")
        return ExitStatus.usage
    }
    do {
        return try o.audioBridge ? joinAudioBridge(o) : joinVideoRoom(o)
    } catch {
        printError("parley join: \(error)")
        return ExitStatus.failure
    }
}

/// Runs `body` on the concurrency pool and waits for it (the CLI's set-up and clean-up are
/// sequential; the call itself runs on this thread).
private func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let r: Result<T, any Error>
        do { r = .success(try await body()) } catch { r = .failure(error) }
        result.withLock { $0 = r }
        done.signal()
    }
    done.wait()
    return try result.withLock { $0! }.get()
}

/// Runs the room's clean-up, waiting at most `seconds`: a server that stops answering does not
/// keep the process from ending (Janus then drops the session on its own timeout).
private func leaveRoom(_ link: any JoinedRoom, seconds: Double = 20) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await link.cleanUp()
        done.signal()
    }
    if done.wait(timeout: .now() + seconds) == .timedOut {
        printError("parley join: leaving: Janus did not answer within \(Int(seconds)) s; the room may still list this participant")
    }
}

extension JoinedRoom {
    /// Follows the room's events until cancelled, the room ends, or Janus goes away (a
    /// `serverGone` action).
    func follow() async {
        do {
            for try await event in await janus.events() {
                guard case .plugin(let sender, _, let data, _) = event, sender == handleID else { continue }
                guard try await take(event: data) else { return }
            }
        } catch is CancellationError {
        } catch {
            if Task.isCancelled { return }
            actions.withLock { $0.append(.serverGone("\(error)")) }
        }
    }
}

/// A publisher this participant receives: its name in the call and the forwarders Janus made.
private struct ReceivedPublisher: Sendable {
    var id: UInt64
    var remote: RemoteParticipant
    var forwarders: [RTPForwarder]
    /// The frame rate its video was announced with (nil without video).
    var framesPerSecond: Int?
}

/// What the Janus side hands to the call's thread.
private enum JoinAction: Sendable {
    case add(RemoteParticipant)
    case ended(ParticipantID)
    case serverGone(String)
    /// Something the room said about a participant that is not a media stream here (an
    /// AudioBridge participant joined, left, or Janus's talking decision): written as an event
    /// of type `kind` (`janus_joined`, `janus_left`, `janus_talking`, `janus_silent`).
    case roomNote(kind: String, participant: String)
}

/// The Janus side of a joined participant, whatever the plugin: it follows the room's events
/// (handing what the call must do to its thread through `actions`) and cleans up on leaving.
private protocol JoinedRoom: Sendable {
    var actions: Mutex<[JoinAction]> { get }
    /// The room's id.
    var room: UInt64 { get }
    /// What the final report says this participant sent to.
    var sentTo: String { get }
    /// Whether a participant whose source has ended leaves `--timeout` seconds later whoever
    /// is still in (an AudioBridge's mix keeps coming while anyone is in the room), rather than
    /// once everyone else has left.
    var leavesAfterSourceEnds: Bool { get }
    var janus: JanusClient { get }
    /// The handle whose plugin events are the room's.
    var handleID: UInt64 { get }
    /// Takes one plugin event of the room's handle; false when the room has ended.
    func take(event data: JSONValue) async throws -> Bool
    func cleanUp() async
    /// Tells the room this participant muted or unmuted (AudioBridge: `configure`, which takes
    /// it out of the mix; VideoRoom: nothing to tell, its audio is still forwarded).
    func setMuted(_ muted: Bool) async
    /// The frame rate a participant's video was announced with, if it sends video.
    func framesPerSecond(of participant: ParticipantID) -> Int?
    /// What the grid shows of the room beyond the call's participants (nil: nothing).
    var gridNote: String? { get }
    /// `participant` left the call. When the room did not say so (no packet for the timeout:
    /// its process died), the VideoRoom link removes its remote publisher, which only its owner
    /// removes otherwise and Janus keeps until the room ends; otherwise nothing is done.
    func timedOut(_ participant: ParticipantID) async
}

extension JoinedRoom {
    /// Hands Janus's talking decision about `participant` to the call's thread as a room note.
    func noteJanusTalking(_ talking: Bool, of participant: String) {
        actions.withLock { $0.append(.roomNote(kind: talking ? "janus_talking" : "janus_silent", participant: participant)) }
    }

    /// Hands the room's end to the call's thread; returns false (no more events to take).
    func roomDestroyed() -> Bool {
        actions.withLock { $0.append(.serverGone("room \(room) was destroyed")) }
        return false
    }
}

/// The Janus side of a joined participant: the listener handle, the publishers it receives,
/// the forwarders it asked for; shared between the event task and the call's thread.
private final class JanusRoomLink: JoinedRoom {
    let janus: JanusClient
    let handle: VideoRoomHandle
    let room: UInt64
    let ownID: UInt64
    let ownName: String
    let host: String
    let port: UInt16
    let srtp: RTPForwardSRTP?
    let publishers = Mutex<[UInt64: ReceivedPublisher]>([:])
    let actions = Mutex<[JoinAction]>([])
    let sentTo: String
    var leavesAfterSourceEnds: Bool { false }
    func setMuted(_ muted: Bool) async {}
    var gridNote: String? { nil }

    func timedOut(_ participant: ParticipantID) async {
        let gone = publishers.withLock { p -> UInt64? in
            guard let id = p.first(where: { $0.value.remote.name == participant })?.key else { return nil }
            p[id] = nil
            return id
        }
        guard let gone else { return }   // Janus announced it: it is gone already
        // Another participant may have removed it first: an error here changes nothing.
        try? await handle.removeRemotePublisher(room: room, id: gone)
    }
    func framesPerSecond(of participant: ParticipantID) -> Int? {
        publishers.withLock { $0.values.first { $0.remote.name == participant }?.framesPerSecond }
    }

    init(janus: JanusClient, handle: VideoRoomHandle, room: UInt64, ownID: UInt64, ownName: String, host: String, port: UInt16,
         srtp: RTPForwardSRTP?, sentTo: String) {
        self.janus = janus; self.handle = handle; self.room = room; self.ownID = ownID; self.ownName = ownName
        self.sentTo = sentTo
        self.host = host; self.port = port; self.srtp = srtp
    }

    /// Asks Janus to forward a new publisher's streams here; returns it, named uniquely.
    func receive(_ p: VideoRoomPublisher) async throws -> ReceivedPublisher? {
        guard p.id != ownID, publishers.withLock({ $0[p.id] == nil }) else { return nil }
        let audio = p.streams.first { $0.type == "audio" && !$0.disabled && $0.codec == "opus" }
        guard let audio else { return nil }
        let video = p.streams.first { $0.type == "video" && !$0.disabled && $0.codec == "vp8" }
        let size = video?.pictureSize
        var audioSSRC = UInt32.random(in: 2_000...UInt32.max - 2)
        let taken = publishers.withLock { Set($0.values.flatMap { [$0.remote.audioSSRC, $0.remote.video?.ssrc ?? 0] }) }
        while taken.contains(audioSSRC) || taken.contains(audioSSRC + 1) { audioSSRC = UInt32.random(in: 2_000...UInt32.max - 2) }
        var name = p.display ?? "publisher-\(p.id)"
        if name.contains(where: { $0 == " " || $0.isNewline }) { name = name.replacingOccurrences(of: " ", with: "_") }
        if name == ownName || publishers.withLock({ $0.values.contains { $0.remote.name == name } }) { name += "-\(p.id)" }
        var remoteVideo: RemoteVideo?
        var streams = [(mid: audio.mid, port: port, ssrc: audioSSRC)]
        if let video, let size {
            var feedback = VideoReceiveFeedbackConfiguration()
            feedback.sendsNACK = false
            feedback.sendsPictureLoss = false
            // Counted from 0 at the start of the source, as the audio: in sync without RTCP.
            remoteVideo = RemoteVideo(ssrc: audioSSRC + 1, width: size.width, height: size.height,
                                      payloadType: VP8RTP.defaultPayloadType, feedback: feedback, senderTimestampOrigin: 0)
            streams.append((mid: video.mid, port: port, ssrc: audioSSRC + 1))
        }
        let received = ReceivedPublisher(id: p.id, remote: RemoteParticipant(name: name, audioSSRC: audioSSRC, video: remoteVideo),
                                         forwarders: [], framesPerSecond: remoteVideo == nil ? nil : size?.framesPerSecond)
        publishers.withLock { $0[p.id] = received }
        let forwarders = try await handle.rtpForward(room: room, publisher: p.id, host: host, streams: streams, srtp: srtp)
        publishers.withLock { $0[p.id]?.forwarders = forwarders }
        return received
    }

    var handleID: UInt64 { handle.id }

    func take(event data: JSONValue) async throws -> Bool {
        switch VideoRoomEvent(data) {
        case .publishers(let list):
            for p in list {
                if let r = try await receive(p) { actions.withLock { $0.append(.add(r.remote)) } }
            }
        case .unpublished(let id), .leaving(let id):
            if let r = publishers.withLock({ $0.removeValue(forKey: id) }) {
                actions.withLock { $0.append(.ended(r.remote.name)) }
            }
        case .talking(let id, let talking):
            // Janus's own decision from the RFC 6464 levels publishers send (rooms created
            // with audiolevel_event).
            if let who = id == ownID ? ownName : publishers.withLock({ $0[id]?.remote.name }) {
                noteJanusTalking(talking, of: who)
            }
        case .destroyed:
            return roomDestroyed()
        default: break
        }
        return true
    }

    /// Removes this participant's publisher (its forwarders go with it), stops the forwarders
    /// it asked for, leaves; what fails is reported on standard error, never fatal.
    func cleanUp() async {
        func attempt(_ what: String, _ body: () async throws -> Void) async {
            do { try await body() } catch { printError("parley join: leaving: \(what): \(error)") }
        }
        await attempt("remove_remote_publisher") { try await handle.removeRemotePublisher(room: room, id: ownID) }
        let all = publishers.withLock { $0 }
        for (id, p) in all {
            for f in p.forwarders {
                // A publisher that has gone took its forwarders with it.
                try? await handle.stopRTPForward(room: room, publisher: id, streamID: f.streamID)
            }
        }
        await attempt("leave") { try await handle.leave() }
        await attempt("destroy session") { try await janus.destroy() }
    }
}

private func joinVideoRoom(_ o: JoinOptions) throws -> Int32 {
    let clock = SystemMediaClock()
    guard let janusHost = o.janus.host else { throw CallError("--janus has no host") }

    // The camera first: its size goes into the published stream's description.
    var camera = try CallCamera(o.video, clock: clock)
    let cameraFormat = camera?.format
    let wavRate = try joinWAVRate(o)

    // Janus: a session, the listener (pin check, the room's events), the remote publisher.
    let (janus, handle) = try openJanusRoom(o, attach: VideoRoomHandle.attach, exists: { try await $0.exists(room: $1) })
    let room = o.room
    let name = o.name, pin = o.pin
    try blocking { try await handle.join(room: room, display: name + ".listener", pin: pin) }
    // The answer to the join, and whatever else arrives with or before it.
    let (known, backlog) = try awaitJoinAnswer(
        janus, handleID: handle.id, room: room, pinCode: 433, parse: VideoRoomEvent.init,
        answer: { if case .joined(_, let publishers) = $0 { publishers } else { nil } },
        error: { if case .error(let code, let text) = $0 { (code, text) } else { nil } })
    var streams = [VideoRoomHandle.RemoteStream(type: "audio", codec: "opus", audioLevelExtensionID: 1, fec: true)]
    if let camera = cameraFormat {
        streams.append(.init(type: "video", codec: "vp8", description: "\(camera.width)x\(camera.height)@\(Int(camera.framesPerSecond.rounded()))"))
    }
    let publishing = streams
    let me: RemotePublisherEndpoint
    do {
        me = try blocking { try await handle.addRemotePublisher(room: room, display: name, streams: publishing) }
    } catch {
        try? blocking { try await janus.destroy() }
        throw error
    }

    // Sockets: one sends to Janus (RTP to the publisher's port, RTCP to its RTCP port, where
    // Janus learns where to send PLIs back); one receives what Janus forwards.
    let sendUDP = try UDPTransport(localPort: 0, bindHost: "0.0.0.0", peerHost: me.host ?? janusHost, peerPort: me.port,
                                   rtcpPeerPort: me.rtcpPort, clock: clock)
    let receiveUDP = try UDPTransport(localPort: o.receivePort, bindHost: "0.0.0.0", peerHost: janusHost, peerPort: me.rtcpPort,
                                      clock: clock)
    let key = o.srtp ? try SRTPKey.generate(suite: .aesCM128HMACSHA1_80) : nil
    let forward = forwardAddress(o, janusHost: janusHost, receivePort: receiveUDP.localPort)
    let link = JanusRoomLink(janus: janus, handle: handle, room: room, ownID: me.id, ownName: name, host: forward.host, port: forward.port,
                             srtp: key.map { RTPForwardSRTP(suite: 80, crypto: $0.base64) },
                             sentTo: "Janus \(me.host ?? janusHost):\(me.port) as publisher \(me.id) in room \(room)")

    var settings = CallSessionConfiguration()
    settings.remoteTimeout = o.timeout
    settings.admitsUndeclaredRemotes = false
    settings.receive.senderTimestampOrigin = 0
    let session = CallSession(configuration: settings, clock: clock)
    let network = session.addTransport(sendUDP)
    var srtp: SRTPTransport<UDPTransport>?
    if let key {
        let t = try SRTPTransport(receiveUDP, sendKey: key, receiveKey: key)
        srtp = t
        session.addTransport(t)
    } else {
        session.addTransport(receiveUDP)
    }

    let eventsFile: FileHandle?
    do { eventsFile = try openJoinEvents(o, session, link) } catch {
        leaveRoom(link)
        throw error
    }

    // The publishers already in, and those this participant waits for.
    func take(_ list: [VideoRoomPublisher]) throws {
        for p in list {
            if let r = try blocking({ try await link.receive(p) }) { try session.addRemote(r.remote) }
        }
    }
    do {
        try take(known)
        for event in backlog {
            switch event {
            case .publishers(let list): try take(list)
            case .unpublished(let id), .leaving(let id):
                if let r = link.publishers.withLock({ $0.removeValue(forKey: id) }) { session.remoteEnded(r.remote.name) }
            default: break
            }
        }
        let waitUntil = MonotonicTime.now().advanced(bySeconds: 120)
        func othersForwardMe() throws -> Bool {
            guard o.waitFor > 1 else { return true }
            let audio = try blocking { try await handle.listForwarders(room: room)[me.id] ?? [] }.filter { $0.type == "audio" }
            return audio.count >= o.waitFor - 1
        }
        while try link.publishers.withLock({ $0.count }) + 1 < o.waitFor || !othersForwardMe() {
            guard MonotonicTime.now() < waitUntil else { throw CallError("room \(room): fewer than \(o.waitFor) publishers after 120 s") }
            guard !leaveRequested.load(ordering: .relaxed) else { break }
            if link.publishers.withLock({ $0.count }) + 1 >= o.waitFor {
                // Everyone is in; the others are still setting up their forwarders of this one.
                Thread.sleep(forTimeInterval: 0.05)
                continue
            }
            let events = try blocking { try await janus.poll() }
            for case .plugin(let sender, _, let data, _) in events where sender == handle.id {
                switch VideoRoomEvent(data) {
                case .publishers(let list): try take(list)
                case .unpublished(let id), .leaving(let id):
                    if let r = link.publishers.withLock({ $0.removeValue(forKey: id) }) { session.remoteEnded(r.remote.name) }
                default: break
                }
            }
        }
    } catch {
        leaveRoom(link)
        throw error
    }

    do {
        if let camera = camera.take() {
            var video = LocalVideoConfiguration()
            video.ssrc = VideoRoomHandle.remotePublisherSSRC(mindex: 1)
            video.payloadType = callVideoPayloadType
            video.firstTimestamp = 0
            try camera.add(to: session, configuration: video, sendingOn: network)
        }
    } catch {
        leaveRoom(link)
        throw error
    }
    var send = AudioSendConfiguration()
    send.ssrc = VideoRoomHandle.remotePublisherSSRC(mindex: 0)
    return try runJoinedCall(o, session: session, room: link, network: network, send: send, wavRate: wavRate, eventsFile: eventsFile,
                             srtp: srtp)
}

/// A Janus session and a handle of one plugin, checked to hold room `o.room` (else the session
/// is destroyed and the error says the room does not exist).
private func openJanusRoom<Handle: Sendable>(
    _ o: JoinOptions, attach: @escaping @Sendable (JanusClient) async throws -> Handle,
    exists: @escaping @Sendable (Handle, UInt64) async throws -> Bool
) throws -> (JanusClient, Handle) {
    let janus = JanusClient(baseURL: o.janus)
    try blocking { _ = try await janus.createSession() }
    let handle = try blocking { try await attach(janus) }
    let room = o.room
    guard try blocking({ try await exists(handle, room) }) else {
        try? blocking { try await janus.destroy() }
        throw CallError("room \(room) does not exist on \(o.janus.absoluteString)")
    }
    return (janus, handle)
}

/// Polls the session's events for handle `handleID` until `answer` takes one (the answer to a
/// join); the handle's other events come back, in order, as the backlog. An error answering the
/// join ends it with the reason (`pinCode`: the plugin's code for a wrong pin), as do 30 s
/// without an answer; the Janus session is destroyed first.
private func awaitJoinAnswer<Event, Answer>(
    _ janus: JanusClient, handleID: UInt64, room: UInt64, pinCode: Int, hint: String = "",
    parse: (JSONValue) -> Event, answer: (Event) -> Answer?, error: (Event) -> (code: Int, text: String)?
) throws -> (answer: Answer, backlog: [Event]) {
    let deadline = MonotonicTime.now().advanced(bySeconds: 30)
    var result: Answer?
    var backlog: [Event] = []
    while result == nil {
        let events = try blocking { try await janus.poll() }
        for case .plugin(let sender, _, let data, _) in events where sender == handleID {
            let event = parse(data)
            if result == nil, let a = answer(event) {
                result = a
            } else if result == nil, let (code, text) = error(event) {
                try? blocking { try await janus.destroy() }
                throw CallError(code == pinCode ? "room \(room): wrong or missing pin (Janus: \(text))"
                                                : "room \(room): Janus error \(code): \(text)")
            } else {
                backlog.append(event)
            }
        }
        if result == nil && MonotonicTime.now() >= deadline {
            try? blocking { try await janus.destroy() }
            throw CallError("room \(room): Janus did not answer the join within 30 s\(hint)")
        }
    }
    return (result!, backlog)
}

/// The sample rate of `--audio` when it is a WAV file (checked: mono, a rate Opus takes).
private func joinWAVRate(_ o: JoinOptions) throws -> Int? {
    guard o.audio.lowercased().hasSuffix(".wav") else { return nil }
    let file = try WAVFileProvider<Int16>(path: o.audio)
    guard file.format.channels == 1, [8_000, 12_000, 16_000, 24_000, 48_000].contains(file.format.sampleRate) else {
        throw CallError("\(o.audio): a room takes mono 8, 12, 16, 24 or 48 kHz audio; this WAV is \(file.format.sampleRate) Hz, "
                        + "\(file.format.channels) channels (convert it first)")
    }
    return file.format.sampleRate
}

/// Where Janus sends this participant's media: `--forward-to`, else this machine's address
/// towards Janus, at the receive socket's port.
private func forwardAddress(_ o: JoinOptions, janusHost: String, receivePort: UInt16) -> (host: String, port: UInt16) {
    (o.forwardTo?.host ?? UDPTransport.localAddress(towards: janusHost) ?? "127.0.0.1", o.forwardTo?.port ?? receivePort)
}

/// `--events` and the session's event output (see ``openSessionEvents(_:_:showGrid:also:)``);
/// a participant who leaves the call is also reported to the room link (see
/// ``JoinedRoom/timedOut(_:)``).
private func openJoinEvents(_ o: JoinOptions, _ session: CallSession, _ link: any JoinedRoom) throws -> FileHandle? {
    let me = o.name
    return try openSessionEvents(o.events, session, showGrid: o.tui && isatty(STDOUT_FILENO) == 1) { event in
        if event.kind == .left, let who = event.participant, who != me { Task { await link.timedOut(who) } }
    }
}

/// The call once the room is joined: the local audio sent (RTP timestamps from 0), the
/// others' audio played or written, the room's actions taken on the call's thread, until the
/// source has ended and everyone has left, a signal, or Janus going away; then the clean-up
/// and the report.
private func runJoinedCall(_ o: JoinOptions, session: CallSession, room link: any JoinedRoom, network: CallTransportID,
                           send configured: AudioSendConfiguration, wavRate: Int?, eventsFile: FileHandle?,
                           srtp: SRTPTransport<UDPTransport>? = nil) throws -> Int32 {
    let clock = session.clock
    let settings = session.configuration
    let showGrid = o.tui && isatty(STDOUT_FILENO) == 1
    var send = configured
    send.firstSequence = UInt16.random(in: 0...UInt16.max)
    send.firstTimestamp = 0
    do {
        if o.muted { session.setLocalMuted(true) }
        if let wavRate {
            send.sampleRate = wavRate
            let file = WAVFileSource<Int16>(try WAVFileProvider(path: o.audio), clock: clock)
            try session.addLocal(name: o.name, source: file, configuration: send, sendingOn: network)
        } else {
            let mic = try ALSACapture<Int16>(pcm: o.audio, parameters: ALSAParameters(format: try AudioFormat(sampleRate: 16_000, channels: 1)))
            try session.addLocal(name: o.name, source: mic, configuration: send, sendingOn: network)
        }
    } catch {
        leaveRoom(link)
        throw error
    }

    // Received audio: the mix to a file or the sound card; each participant to its own file.
    let rate = settings.receive.sampleRate
    let frameSamples = settings.receive.frameSamples
    var mixWriter: WAVWriter?
    var speaker: ALSAPlayback<Int16>?
    var eachWriters: [ParticipantID: WAVWriter] = [:]
    var outputFailure: (any Error)?
    do {
        if let out = o.output {
            mixWriter = try WAVWriter(path: out, format: WAVFormat(sampleRate: rate, channels: 1))
        } else {
            speaker = try ALSAPlayback<Int16>(parameters: ALSAParameters(format: try AudioFormat(sampleRate: rate, channels: 1)))
        }
        if let dir = o.outputEach { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
    } catch {
        leaveRoom(link)
        throw error
    }
    var mix = [Int32](repeating: 0, count: frameSamples)
    var mixOut = [Int16](repeating: 0, count: frameSamples)
    var framesPlayed = 0
    session.onAudio = { who, pcm in
        guard outputFailure == nil else { return }
        for i in 0..<min(pcm.count, mix.count) { mix[i] += Int32(pcm[i]) }
        guard let dir = o.outputEach else { return }
        do {
            if eachWriters[who] == nil {
                var w = try WAVWriter(path: (dir as NSString).appendingPathComponent("\(who).wav"),
                                      format: WAVFormat(sampleRate: rate, channels: 1))
                // From this participant's start: silence for the frames before it was heard.
                let silence = [Int16](repeating: 0, count: frameSamples)
                for _ in 0..<max(0, framesPlayed) { try w.write(silence) }
                eachWriters[who] = w
            }
            try eachWriters[who]!.write(pcm)
        } catch { outputFailure = error }
    }

    // Received video, with --output-each: each participant's pictures as shown, in its own Y4M file.
    var pictureWriters: [ParticipantID: Y4MWriter] = [:]
    if let dir = o.outputEach {
        session.onVideo = { who, picture in
            guard outputFailure == nil else { return }
            do {
                if pictureWriters[who] == nil {
                    let fps = link.framesPerSecond(of: who) ?? 30
                    pictureWriters[who] = try Y4MWriter(path: (dir as NSString).appendingPathComponent("\(who).y4m"),
                                                        header: Y4MHeader(width: picture.width, height: picture.height,
                                                                          frameRateNumerator: fps, frameRateDenominator: 1))
                }
                try pictureWriters[who]!.write(picture)
            } catch { outputFailure = error }
        }
    }

    let follower = Task { await link.follow() }
    var serverGone: String?
    var someoneJoined = !session.remoteNames.isEmpty
    var sourceEndedAt: Double?
    var muted = o.muted
    var handledToggles = muteToggles.load(ordering: .relaxed)
    // Keys on the grid, read from a terminal: m toggles mute, q leaves.
    let keys = showGrid ? TerminalKeys(["m": { muteToggles.add(1, ordering: .relaxed) },
                                        "q": { leaveRequested.store(true, ordering: .relaxed) }]) : nil   // restored at deinit too
    var nextDraw = 0.0
    session.onFrame = { t in
        // The mix of this frame.
        if outputFailure == nil {
            for i in 0..<frameSamples { mixOut[i] = Int16(clamping: mix[i]); mix[i] = 0 }
            do {
                try mixOut.withUnsafeBufferPointer { p in
                    if mixWriter != nil { try mixWriter!.write(p) } else { try speaker?.write(p) }
                }
            } catch { outputFailure = error }
        }
        framesPlayed += 1
        for action in link.actions.withLock({ a in defer { a.removeAll(keepingCapacity: true) }; return a }) {
            switch action {
            case .add(let remote):
                do { try session.addRemote(remote); someoneJoined = true } catch { printError("parley join: \(remote.name): \(error)") }
            case .ended(let who): session.remoteEnded(who)
            case .serverGone(let why): serverGone = why
            case .roomNote(let kind, let who):
                let t = session.mediaTime
                if let h = eventsFile {
                    h.write(Data("{\"t\": \(String(format: "%.3f", t)), \"type\": \(jsonString(kind)), \"participant\": \(jsonString(who))}\n".utf8))
                }
                if !showGrid {
                    let what = kind.replacingOccurrences(of: "janus_", with: "")
                    FileHandle.standardOutput.write(Data((String(format: "%8.3f s  ", t) + "\(who) \(what) (Janus)\n").utf8))
                }
            }
        }
        if !session.remoteNames.isEmpty { someoneJoined = true }
        let toggles = muteToggles.load(ordering: .relaxed)
        if toggles != handledToggles {
            if (toggles - handledToggles) % 2 != 0 {
                muted.toggle()
                session.setLocalMuted(muted)
                let state = muted
                Task { await link.setMuted(state) }
            }
            handledToggles = toggles
        }
        let othersPresent = session.state.present.contains { $0.id != o.name }
        let elapsed = Double(session.start.nanoseconds(to: clock.now())) / 1e9
        if session.localHasEnded && sourceEndedAt == nil { sourceEndedAt = elapsed }
        let lingered = link.leavesAfterSourceEnds && sourceEndedAt.map { elapsed - $0 >= o.timeout } == true
        if leaveRequested.load(ordering: .relaxed) || serverGone != nil || outputFailure != nil || lingered
            || (session.localHasEnded && !othersPresent && (someoneJoined || elapsed > o.timeout)) {
            session.stop()
            return
        }
        if showGrid, t >= nextDraw {
            nextDraw = t + 0.1
            let grid = renderRoomGrid(session.state, time: t, color: true) + (link.gridNote ?? "")
                + (keys != nil ? "\nm: mute or unmute   q: leave\n" : "")
            FileHandle.standardOutput.write(Data(("\u{1B}[H\u{1B}[2J" + grid).utf8))
        }
    }
    signal(SIGINT) { _ in leaveRequested.store(true, ordering: .relaxed) }
    signal(SIGTERM) { _ in leaveRequested.store(true, ordering: .relaxed) }
    signal(SIGUSR1) { _ in muteToggles.add(1, ordering: .relaxed) }
    if showGrid { FileHandle.standardOutput.write(Data("\u{1B}[?25l".utf8)) }
    try session.run()
    keys?.restore()
    if showGrid { FileHandle.standardOutput.write(Data("\u{1B}[?25h\n".utf8)) }
    signal(SIGINT, SIG_DFL)
    signal(SIGTERM, SIG_DFL)
    signal(SIGUSR1, SIG_DFL)
    follower.cancel()
    if serverGone == nil {
        let t0 = MonotonicTime.now()
        leaveRoom(link)
        let spent = Double(t0.nanoseconds(to: MonotonicTime.now())) / 1e9
        if spent > 2 { printError("parley join: leaving the room took \(String(format: "%.1f", spent)) s") }
    }
    try? eventsFile?.close()
    try mixWriter?.close()
    for (who, _) in eachWriters { try eachWriters[who]!.close() }
    for (who, _) in pictureWriters { try pictureWriters[who]!.close() }

    if let s = session.localStatistics {
        print("sent: \(s.packetsSent) RTP packets (\(s.payloadBytes) payload bytes) to \(link.sentTo)")
    }
    for who in session.remoteNames {
        guard let r = session.receiveStatistics(of: who) else { continue }
        print("received from \(who): \(r.receive.packetsBuffered) RTP packets, \(r.jitter.packetsLost) lost, "
              + "\(r.jitter.concealedSamples) samples concealed")
        if let v = r.video { print(callVideoReceivedLine(v, from: who)) }
    }
    let s = session.statistics
    print("datagrams: \(s.datagrams), malformed: \(s.malformed), unknown_ssrc: \(s.unknownSSRC + s.refusedRemotes)")
    if let srtp {
        print("srtp_verified: \(srtp.statistics.unprotected)")
        for (k, v) in srtpReport(srtp.statistics) { print("\(k): \(v)") }
    }
    if let v = session.localVideoStatistics { print(callVideoSentLine(v, ssrc: VideoRoomHandle.remotePublisherSSRC(mindex: 1))) }
    if let outputFailure { throw CallError("received audio: \(outputFailure)") }
    if let failure = session.localFailure { throw CallError("\(o.audio): \(failure)") }
    if let serverGone {
        printError("parley join: Janus went away during the call: \(serverGone)")
        return ExitStatus.failure
    }
    return ExitStatus.success
}

/// The Janus side of an AudioBridge participant: the room's participants by id, their
/// membership and Janus's talking decisions handed to the call's thread as room notes.
private final class AudioBridgeLink: JoinedRoom {
    let janus: JanusClient
    let handle: AudioBridgeHandle
    let room: UInt64
    let ownID: UInt64
    let actions = Mutex<[JoinAction]>([])
    let sentTo: String
    var leavesAfterSourceEnds: Bool { true }

    func setMuted(_ muted: Bool) async {
        do { try await handle.setMuted(muted) } catch { printError("parley join: \(muted ? "mute" : "unmute"): \(error)") }
    }
    /// Display names by participant id (this participant included).
    let names = Mutex<[UInt64: String]>([:])

    init(janus: JanusClient, handle: AudioBridgeHandle, room: UInt64, ownID: UInt64, ownName: String, sentTo: String) {
        self.janus = janus; self.handle = handle; self.room = room; self.ownID = ownID; self.sentTo = sentTo
        names.withLock { $0[ownID] = ownName }
    }

    /// Takes participants the room announced: new ones are noted as joined.
    func take(_ list: [AudioBridgeEvent.Participant]) {
        for p in list {
            let name = p.display ?? "participant-\(p.id)"
            let isNew = names.withLock { n in
                defer { n[p.id] = name }
                return n[p.id] == nil
            }
            if isNew { actions.withLock { $0.append(.roomNote(kind: "janus_joined", participant: name)) } }
        }
    }

    func name(_ id: UInt64) -> String { names.withLock { $0[id] } ?? "participant-\(id)" }
    func framesPerSecond(of participant: ParticipantID) -> Int? { nil }
    func timedOut(_ participant: ParticipantID) async {}

    /// The room as Janus tells it: its members, and whom Janus's level events call talking.
    var gridNote: String? {
        let talkingIDs = janusTalking.withLock { $0 }
        let (members, talking) = names.withLock { n in
            (n.values.sorted(), n.filter { talkingIDs.contains($0.key) }.map(\.value).sorted())
        }
        return "In the room (Janus): " + members.joined(separator: ", ")
            + "   talking (Janus): " + (talking.isEmpty ? "-" : talking.joined(separator: ", ")) + "\n"
    }
    /// Participants Janus last reported talking.
    let janusTalking = Mutex<Set<UInt64>>([])

    var handleID: UInt64 { handle.id }

    func take(event data: JSONValue) async throws -> Bool {
        switch AudioBridgeEvent(data) {
        case .participants(let list), .joined(_, let list, _): take(list)
        case .leaving(let id):
            let who = name(id)
            names.withLock { _ = $0.removeValue(forKey: id) }
            janusTalking.withLock { _ = $0.remove(id) }
            actions.withLock { $0.append(.roomNote(kind: "janus_left", participant: who)) }
        case .talking(let id, let talking):
            janusTalking.withLock { if talking { $0.insert(id) } else { $0.remove(id) } }
            noteJanusTalking(talking, of: name(id))
        case .destroyed:
            return roomDestroyed()
        default: break
        }
        return true
    }

    func cleanUp() async {
        do { try await handle.leave() } catch { printError("parley join: leaving: leave: \(error)") }
        do { try await janus.destroy() } catch { printError("parley join: leaving: destroy session: \(error)") }
    }
}

/// `parley join --plugin audiobridge`: a plain-RTP participant of an AudioBridge room. Its audio
/// goes to the mixer; the room's mix (everyone but this participant) comes back as one stream,
/// the remote participant "mix"; the room's membership and Janus's talking decisions are
/// printed and written beside the call's own events.
private func joinAudioBridge(_ o: JoinOptions) throws -> Int32 {
    let clock = SystemMediaClock()
    guard let janusHost = o.janus.host else { throw CallError("--janus has no host") }
    let wavRate = try joinWAVRate(o)
    let (janus, handle) = try openJanusRoom(o, attach: AudioBridgeHandle.attach, exists: { try await $0.exists(room: $1) })
    let room = o.room
    let udp = try UDPTransport(localPort: o.receivePort, bindHost: "0.0.0.0", peerHost: janusHost, peerPort: 9, clock: clock)
    let forward = forwardAddress(o, janusHost: janusHost, receivePort: udp.localPort)
    let plain = AudioBridgeHandle.PlainRTP(host: forward.host, port: forward.port)
    let name = o.name, pin = o.pin, muted = o.muted
    try blocking { try await handle.join(room: room, display: name, pin: pin, muted: muted, rtp: plain) }
    let (me, backlog) = try awaitJoinAnswer(
        janus, handleID: handle.id, room: room, pinCode: 489, hint: " (is the room open to plain-RTP participants?)",
        parse: AudioBridgeEvent.init,
        answer: { if case .joined(let id, let list, let rtp?) = $0 { (id: id, participants: list, rtp: rtp) } else { nil } },
        error: { if case .error(let code, let text) = $0 { (code, text) } else { nil } })
    var network = udp
    try network.setPeer(host: me.rtp.host, port: me.rtp.port)
    let link = AudioBridgeLink(janus: janus, handle: handle, room: room, ownID: me.id, ownName: name,
                               sentTo: "Janus \(me.rtp.host):\(me.rtp.port) as participant \(me.id) in room \(room)")

    var settings = CallSessionConfiguration()
    settings.remoteTimeout = o.timeout
    settings.maximumRemotes = 1
    settings.undeclaredRemoteName = "mix"
    settings.receive.payloadType = me.rtp.payloadType
    let session = CallSession(configuration: settings, clock: clock)
    let transport = session.addTransport(network)
    let eventsFile: FileHandle?
    do { eventsFile = try openJoinEvents(o, session, link) } catch {
        leaveRoom(link)
        throw error
    }
    link.take(me.participants)
    for case .participants(let list) in backlog { link.take(list) }
    var send = AudioSendConfiguration()
    send.ssrc = UInt32.random(in: 1...UInt32.max)
    send.payloadType = me.rtp.payloadType
    return try runJoinedCall(o, session: session, room: link, network: transport, send: send, wavRate: wavRate, eventsFile: eventsFile)
}
