import Foundation
import ParleyCall
import ParleyCore
import ParleyDevices
import ParleyJanus
import ParleyMedia
import ParleyRooms
import Synchronization

/// `parley join`: a participant in a room on a Janus server.
let joinCommand = Command(
    name: "join",
    summary: "Join a room on a Janus server (VideoRoom or AudioBridge) over WebRTC, or as a plain-RTP participant",
    help: """
        Usage: parley join --janus URL --room ID --name NAME [--plugin videoroom|audiobridge]
                           [--audio PCM|FILE.wav] [--video DEVICE|FILE.y4m] [--pin PIN]
                           [--events FILE.jsonl] [--output FILE.wav] [--output-each DIR]
                           [--no-tui] [--wait-for COUNT] [--timeout S] [--muted] [--headset]
                           [--transport webrtc|rtp] [--ice-address ADDR[,ADDR...]] [--srtp]
                           [--chat] [--chat-from FILE]

        Joins room ID of the Janus server whose HTTP API is at URL (for example
        http://127.0.0.1:8088/janus).

        Over WebRTC (the default), as a browser takes part: ICE, DTLS-SRTP, Janus's JSEP.
        - the local audio (Opus, 20 ms, the RFC 6464 level with the talking detector's voice
          flag) and, with --video, VP8 are published as a VideoRoom publisher named NAME;
        - every other publisher, browsers included, is received in one subscriber
          PeerConnection (Janus's offer, renegotiated as publishers come and go) through the
          library's call session: jitter buffer, concealment, talking events from Parley's VAD
          on each one's decoded audio, the dominant speaker;
        - a publisher that unpublishes or leaves the room leaves the call at once.
        Candidates are gathered on every interface but the loopback (Janus takes no loopback
        candidate), or on the addresses of --ice-address.

        With --transport rtp it takes part through plain RTP, by the server's side doors:
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

        With --plugin audiobridge it joins an AudioBridge room over WebRTC (with --transport
        rtp: as a plain-RTP participant, in a room created with allow_rtp_participants): its
        audio goes to Janus's mixer and the room's mix of everyone else comes back as one
        stream, shown as the participant "mix"
        (its talking from Parley's VAD on the mix). The room's participants joining and leaving
        and Janus's own talking decisions (from the RFC 6464 levels each participant sends) are
        printed beside them and written to --events as "janus_joined", "janus_left",
        "janus_talking" and "janus_silent" lines ({"t", "type", "participant"}). With a WAV
        source it leaves --timeout seconds after the file has been sent (the mix keeps coming
        while anyone is in the room).

        With --chat it also takes part in the room's chat, through Janus's TextRoom plugin (a
        TextRoom room with the same id as ID; a data channel on a PeerConnection of its own,
        joined under NAME): each line typed on standard input is sent as a message (with
        --chat-from FILE, each line of FILE, once the --wait-for participants are in the chat
        too). The messages received, this participant's own included, are shown on the grid
        under the participants (the newest last), printed with --no-tui as "NAME: TEXT", and
        written to --events as {"type": "message", "participant": NAME, "text": TEXT, "t",
        "time": ISO 8601 arrival time, "own": whether this participant sent it} lines. With
        --chat the grid's keys are off (standard input carries the messages): Ctrl-C leaves.

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
                                on ALSA's "default" device. Played on the device and captured from
                                a device, the capture goes through an echo canceller (the
                                microphone hears the loudspeaker; docs/echo.md)
          --headset             the device plays into headphones: no echo cancellation
          --output-each DIR     also write each other participant's audio to DIR/NAME.wav (16 kHz
                                mono, from this participant's start) and the pictures it shows
                                of them to DIR/NAME.y4m
          --no-tui              plain text: one line per event, instead of the live grid
          --wait-for COUNT      start sending once COUNT publishers (this one included, browsers
                                counted) are in the room and received (with --transport rtp:
                                also once Janus forwards this one's audio to each of the
                                others) (at most 120 s; default 1: at once)
          --timeout S           seconds without a packet before a participant counts as gone
                                (default 5)
          --muted               join muted (AudioBridge: Janus leaves this participant out of
                                the mix; either plugin: talking shows as talking while muted).
                                On the grid the key m toggles mute and q leaves; SIGUSR1 also
                                toggles mute (kill -USR1 PID)
          --transport KIND      webrtc (the default) or rtp
          --ice-address ADDRS   WebRTC (and the chat's PeerConnection, with any transport): the IP
                                addresses (comma-separated) to gather ICE candidates on
                                (default: every interface but the loopback)
          --srtp                rtp: have Janus forward the others' media as SRTP
                                (AES_CM_128_HMAC_SHA1_80) under a key generated here (never printed)
          --receive-port PORT   rtp: the local UDP port the room's media arrive on (default: any free)
          --forward-to HOST[:PORT]
                                rtp: the address Janus sends the media to, when it cannot reach
                                this machine directly (a NAT's forwarded port, a relay); default:
                                this machine's address towards Janus and the receive port
          --chat                chat in the room's TextRoom: lines of standard input are sent
          --chat-from FILE      chat, sending the lines of FILE (instead of standard input)

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
    var io = CallIOOptions()
    var pin: String?
    var outputEach: String?
    var srtp = false
    var waitFor = 1
    var timeout = 5.0
    var audioBridge = false
    var muted = false
    /// When the command started (the join time is counted from it).
    let started = MonotonicTime.now()
    /// Over WebRTC (else plain RTP).
    var webRTC = true
    /// Where ICE gathers candidates (empty: every interface but the loopback).
    var iceAddresses: [String] = []
    /// The local UDP port Janus's media arrive on (0: any free port).
    var receivePort: UInt16 = 0
    /// Where Janus sends this participant's media, when not straight to it (a NAT's or a
    /// relay's address): host, and port (nil: the receive port).
    var forwardTo: (host: String, port: UInt16?)?
    /// Chat through the room's TextRoom.
    var chat = false
    /// The file whose lines are sent to the chat (nil: standard input).
    var chatFrom: String?
}

private func parseJoinOptions(_ args: [String]) throws(ArgumentScanner.UsageError) -> JoinOptions {
    let s = try ArgumentScanner(args, valued: ["janus", "room", "name", "plugin", "audio", "video", "pin", "events", "output",
                                               "output-each", "wait-for", "timeout", "receive-port", "forward-to", "transport",
                                               "ice-address", "chat-from"],
                                flagNames: ["no-tui", "srtp", "muted", "chat", "headset"])
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
    o.io = try CallIOOptions(s)
    let transport = s.value("transport") ?? "webrtc"
    guard ["webrtc", "rtp"].contains(transport) else {
        throw .init(description: "--transport takes webrtc or rtp, got '\(transport)'")
    }
    o.webRTC = transport == "webrtc"
    if o.webRTC {
        for unsupported in ["srtp", "receive-port", "forward-to"] where s.value(unsupported) != nil || s.flag(unsupported) {
            throw .init(description: "--\(unsupported) is for --transport rtp (WebRTC's media are always encrypted, on ports ICE finds)")
        }
    } else if s.value("ice-address") != nil, !s.flag("chat"), s.value("chat-from") == nil {
        throw .init(description: "--ice-address is for --transport webrtc")
    }
    if let list = s.value("ice-address") {
        o.iceAddresses = list.split(separator: ",").map(String.init)
    }
    if o.audioBridge {
        for unsupported in ["video", "srtp", "output-each", "wait-for"] where s.value(unsupported) != nil || s.flag(unsupported) {
            throw .init(description: "--\(unsupported) is for --plugin videoroom (an AudioBridge room mixes audio only)")
        }
    }
    o.chatFrom = s.value("chat-from")
    o.chat = s.flag("chat") || o.chatFrom != nil
    if let file = o.chatFrom, !FileManager.default.isReadableFile(atPath: file) {
        throw .init(description: "--chat-from: cannot read '\(file)'")
    }
    o.pin = s.value("pin")
    o.outputEach = s.value("output-each")
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
/// Why the call ended early (Janus went away, the room was destroyed); set on the call's thread.
private let roomEnded = Locked<String?>(nil)

private func runJoin(_ args: [String]) -> Int32 {
    let o: JoinOptions
    do { o = try parseJoinOptions(args) } catch {
        printError("parley join: \(error)\nRun 'parley join --help' for usage.")
        return ExitStatus.usage
    }
    do {
        return try join(o)
    } catch {
        printError("parley join: \(error)")
        return ExitStatus.failure
    }
}

/// Runs `body` on the concurrency pool and waits for it (the CLI's set-up and clean-up are
/// sequential; the call itself runs on this thread).
private func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let result = Locked<Result<T, any Error>?>(nil)
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

/// Leaves the room (waiting at most 20 s for Janus); what fails is reported, never fatal.
private func leave(_ room: JanusRoom) {
    for failure in (try? blocking { await room.leave() }) ?? [] { printError("parley join: leaving: \(failure)") }
}

/// Joins the room, sets up the call (the events, the publishers waited for, the local media,
/// the outputs), runs it, leaves.
private func join(_ o: JoinOptions) throws -> Int32 {
    let clock = SystemMediaClock()
    // The camera first: its size goes into the published stream's description.
    var camera = try CallCamera(o.io.video, clock: clock)
    let wavRate = try joinWAVRate(o)
    var options = JanusRoom.Options(server: o.janus, room: o.room, name: o.name, plugin: o.audioBridge ? .audioBridge : .videoRoom,
                                    transport: o.webRTC ? .webRTC : .plainRTP)
    options.iceAddresses = o.iceAddresses
    options.pin = o.pin
    options.muted = o.muted
    options.srtp = o.srtp
    options.receivePort = o.receivePort
    options.forwardTo = o.forwardTo.map { JanusRoom.ForwardAddress(host: $0.host, port: $0.port) }
    if o.chat { options.chat = ChatOptions() }
    if let f = camera?.format {
        options.video = .init(width: f.width, height: f.height, framesPerSecond: Int(f.framesPerSecond.rounded()))
    }
    let joining = options
    let room = try blocking { try await JanusRoom.join(joining, clock: clock) }

    var settings = CallSessionConfiguration()
    settings.remoteTimeout = o.timeout
    o.io.setPlayout(&settings)
    let showGrid = o.io.tui && isatty(STDOUT_FILENO) == 1
    let call: RoomCall
    let eventsFile: FileHandle?
    let outputs: CallOutputs
    do {
        call = try room.makeCall(configuration: settings)
        eventsFile = try openSessionEvents(o.io.events, call.session, showGrid: showGrid)
        try blocking { try await room.waitForPublishers(o.waitFor, giveUp: { leaveRequested.load(ordering: .relaxed) }) }
        if o.chat { try startChatInput(o, room: room) }
        if let camera = camera.take() {
            try camera.add(to: call.session, configuration: call.videoConfiguration(), sendingOn: call.sendTransport)
        }
        var send = AudioSendConfiguration()
        if let wavRate {
            send.sampleRate = wavRate
            try call.publishAudio(WAVFileSource<Int16>(try WAVFileProvider(path: o.io.audio), clock: clock), configuration: send)
        } else {
            let format = try AudioFormat(sampleRate: 16_000, channels: 1)
            try call.publishAudio(try ALSACapture<Int16>(pcm: o.io.audio, parameters: ALSAParameters(format: format)))
        }
        // Received audio: the mix to a file or the sound card; each participant to its own files.
        outputs = try CallOutputs(session: call.session, audio: o.io.output, mixes: true, eachDirectory: o.outputEach,
                                  pictureFile: o.outputEach.map { dir in { who in
                                      ((dir as NSString).appendingPathComponent("\(who).y4m"), room.framesPerSecond(of: who) ?? 30)
                                  } })
    } catch {
        leave(room)
        throw error
    }
    return try runJoinedCall(o, call: call, eventsFile: eventsFile, outputs: outputs, showGrid: showGrid)
}

/// The call once the room is joined: the others' audio played or written, the room's notes
/// taken on the call's thread, until the source has ended and everyone has left (an
/// AudioBridge: `--timeout` seconds after the source ended), a signal, or Janus going away;
/// then the clean-up and the report.
private func runJoinedCall(_ o: JoinOptions, call: RoomCall, eventsFile: FileHandle?, outputs: CallOutputs,
                           showGrid: Bool) throws -> Int32 {
    let session = call.session, room = call.room
    let relay = relayNotes(of: room, to: session.inlet, eventsFile: eventsFile, showGrid: showGrid, audioBridge: o.audioBridge)
    let chatShown = ChatShown()
    let chatRelay = o.chat ? relayChat(of: room, to: session.inlet, eventsFile: eventsFile, showGrid: showGrid, shown: chatShown) : nil
    var someoneJoined = false
    var sourceEndedAt: Double?
    var muted = o.muted
    var handledToggles = muteToggles.load(ordering: .relaxed)
    // Keys on the grid, read from a terminal: m toggles mute, q leaves.
    let keys = showGrid && !o.chat ? TerminalKeys(["m": { muteToggles.add(1, ordering: .relaxed) },
                                        "q": { leaveRequested.store(true, ordering: .relaxed) }]) : nil   // restored at deinit too
    var grid = CallGrid(shown: showGrid)
    var connected = false
    session.onFrame = { t in
        if !connected, call.webRTCState == .connected {
            // Media flow from here: the join time, from the command's start.
            connected = true
            let ms = Double(o.started.nanoseconds(to: MonotonicTime.now())) / 1e6
            if !showGrid {
                let line = String(format: "%8.3f s  connected over WebRTC, %.0f ms after the start\n", session.mediaTime, ms)
                FileHandle.standardOutput.write(Data(line.utf8))
            }
        }
        outputs.endFrame()
        if !session.remoteNames.isEmpty { someoneJoined = true }
        let toggles = muteToggles.load(ordering: .relaxed)
        if toggles != handledToggles {
            if (toggles - handledToggles) % 2 != 0 {
                muted.toggle()
                let state = muted
                Task {
                    do { try await room.setMuted(state) } catch { printError("parley join: \(state ? "mute" : "unmute"): \(error)") }
                }
            }
            handledToggles = toggles
        }
        let othersPresent = session.state.present.contains { $0.id != o.name }
        let elapsed = Double(session.start.nanoseconds(to: session.clock.now())) / 1e9
        if session.localHasEnded && sourceEndedAt == nil { sourceEndedAt = elapsed }
        let lingered = o.audioBridge && sourceEndedAt.map { elapsed - $0 >= o.timeout } == true
        if leaveRequested.load(ordering: .relaxed) || roomEnded.withLock({ $0 }) != nil || outputs.failed || lingered
            || (session.localHasEnded && !othersPresent && (someoneJoined || elapsed > o.timeout)) {
            session.stop()
            return
        }
        grid.draw(session.state, time: t) {
            (o.audioBridge ? "In the room (Janus): " + room.members.joined(separator: ", ") + "   talking (Janus): "
                + (room.talking.isEmpty ? "-" : room.talking.joined(separator: ", ")) + "\n" : "")
                + (keys != nil ? "\nm: mute or unmute   q: leave\n" : "")
                + (o.chat ? chatShown.footer(leaving: "leaves") : "")
        }
    }
    signal(SIGINT) { _ in leaveRequested.store(true, ordering: .relaxed) }
    signal(SIGTERM) { _ in leaveRequested.store(true, ordering: .relaxed) }
    signal(SIGUSR1) { _ in muteToggles.add(1, ordering: .relaxed) }
    grid.begin()
    try session.run()
    keys?.restore()
    grid.end()
    signal(SIGINT, SIG_DFL)
    signal(SIGTERM, SIG_DFL)
    signal(SIGUSR1, SIG_DFL)
    relay.cancel()
    chatRelay?.cancel()
    let gone = roomEnded.withLock { $0 }
    let t0 = MonotonicTime.now()
    leave(room)
    let spent = Double(t0.nanoseconds(to: MonotonicTime.now())) / 1e9
    if spent > 2 { printError("parley join: leaving the room took \(String(format: "%.1f", spent)) s") }
    try? eventsFile?.close()
    try outputs.close()
    printJoinReport(call)
    try outputs.throwFailure()
    if let failure = session.localFailure { throw CommandFailure("\(o.io.audio): \(failure)") }
    if let gone {
        printError("parley join: Janus went away during the call: \(gone)")
        return ExitStatus.failure
    }
    return ExitStatus.success
}

/// Hands the room's notes to the call's thread: Janus's own view of the room is written to
/// `--events` and printed beside the call's events (`janus_talking` and `janus_silent`; in an
/// AudioBridge also `janus_joined` and `janus_left`, whose participants are no streams here), a
/// refused publisher is reported, and the room's end is kept in ``roomEnded``.
private func relayNotes(of room: JanusRoom, to inlet: CallSessionInlet, eventsFile: FileHandle?, showGrid: Bool,
                        audioBridge: Bool) -> Task<Void, Never> {
    @Sendable func write(_ kind: String, _ who: String, at t: Double) {
        if let h = eventsFile {
            h.write(Data("{\"t\": \(String(format: "%.3f", t)), \"type\": \(jsonString(kind)), \"participant\": \(jsonString(who))}\n".utf8))
        }
        if !showGrid {
            let what = kind.replacingOccurrences(of: "janus_", with: "")
            FileHandle.standardOutput.write(Data((String(format: "%8.3f s  ", t) + "\(who) \(what) (Janus)\n").utf8))
        }
    }
    return Task {
        for await note in room.notes {
            inlet.post { session in
                switch note {
                case .joined(let who) where audioBridge: write("janus_joined", who, at: session.mediaTime)
                case .left(let who) where audioBridge: write("janus_left", who, at: session.mediaTime)
                case .talking(let who, let talking): write(talking ? "janus_talking" : "janus_silent", who, at: session.mediaTime)
                case .refused(let who, let reason): printError("parley join: \(who): \(reason)")
                case .roomDestroyed, .serverGone: roomEnded.withLock { $0 = room.endReason }
                case .joined, .left: break
                }
            }
        }
    }
}

/// Hands the room's chat to the call's thread: each message is written to `--events` as a
/// `message` line, printed with `--no-tui`, and kept among the newest shown on the grid.
private func relayChat(of room: JanusRoom, to inlet: CallSessionInlet, eventsFile: FileHandle?, showGrid: Bool,
                       shown: ChatShown) -> Task<Void, Never> {
    Task {
        for await event in room.chat {
            switch event {
            case .message(let m):
                inlet.post { session in showChatMessage(m, at: session.mediaTime, eventsFile: eventsFile, showGrid: showGrid, shown: shown) }
            case .refused(let code, let reason): printError("parley join: chat: Janus refused a message: error \(code): \(reason)")
            case .closed: printError("parley join: chat: the chat's data channel closed")
            case .joined, .left: break
            }
        }
    }
}

/// Sends the chat's lines: those of `--chat-from` once the `--wait-for` participants are in
/// the chat room (at most 30 s), else those typed on standard input, from a thread of their
/// own. A line the chat refuses (too long, not UTF-8) is reported and skipped.
private func startChatInput(_ o: JoinOptions, room: JanusRoom) throws {
    @Sendable func send(_ line: ArraySlice<UInt8>) {
        do { try room.send(chatUTF8: line) } catch { printError("parley join: chat: \(error)") }
    }
    if let file = o.chatFrom {
        let lines = try chatFileLines(file)
        let waitFor = o.waitFor
        try blocking {
            let deadline = MonotonicTime.now().advanced(bySeconds: 30)
            while room.chatParticipants.count < waitFor, MonotonicTime.now() < deadline, !leaveRequested.load(ordering: .relaxed) {
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        for line in lines { send(line) }
        return
    }
    readChatLinesFromStandardInput(send)
}

/// What was sent and received.
private func printJoinReport(_ call: RoomCall) {
    let session = call.session
    if let s = session.localStatistics { print(callSentLine(s, to: call.room.destination)) }
    for who in session.remoteNames {
        guard let line = callReceivedLine(session, from: who) else { continue }
        print(line)
        if let v = session.receiveStatistics(of: who)?.video { print(callVideoReceivedLine(v, from: who)) }
    }
    print(callDatagramsLine(session.statistics))
    if let srtp = call.srtpStatistics {
        print("srtp_verified: \(srtp.unprotected)")
        for (k, v) in srtpReport(srtp) { print("\(k): \(v)") }
    }
    if let state = call.webRTCState, let w = call.webRTCStatistics {
        print("webrtc: \(state), \(w.srtp.protected) packets protected, \(w.sendsDroppedUnkeyed) dropped before the keys")
    }
    if let v = session.localVideoStatistics { print(callVideoSentLine(v, ssrc: call.videoConfiguration().ssrc)) }
}

/// The sample rate of `--audio` when it is a WAV file (checked: mono, a rate Opus takes).
private func joinWAVRate(_ o: JoinOptions) throws -> Int? {
    guard o.io.audio.lowercased().hasSuffix(".wav") else { return nil }
    let file = try WAVFileProvider<Int16>(path: o.io.audio)
    guard file.format.channels == 1, [8_000, 12_000, 16_000, 24_000, 48_000].contains(file.format.sampleRate) else {
        throw CommandFailure("\(o.io.audio): a room takes mono 8, 12, 16, 24 or 48 kHz audio; this WAV is \(file.format.sampleRate) Hz, "
                        + "\(file.format.channels) channels (convert it first)")
    }
    return file.format.sampleRate
}
