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
    summary: "Join a room on a Janus server (VideoRoom) as a plain-RTP participant",
    help: """
        Usage: parley join --janus URL --room ID --name NAME [--plugin videoroom]
                           [--audio PCM|FILE.wav] [--video DEVICE|FILE.y4m] [--pin PIN]
                           [--events FILE.jsonl] [--output FILE.wav] [--output-each DIR]
                           [--no-tui] [--srtp] [--wait-for COUNT] [--timeout S]

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

        Options:
          --janus URL           Janus's HTTP API (the /janus path)
          --room ID             the room's numeric id (it must exist)
          --name NAME           this participant's display name (one word)
          --plugin videoroom    the Janus plugin (videoroom, the default)
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
                                mono, from this participant's start)
          --no-tui              plain text: one line per event, instead of the live grid
          --srtp                have Janus forward the others' media as SRTP (AES_CM_128_HMAC_SHA1_80)
                                under a key generated here (never printed)
          --wait-for COUNT      start sending once COUNT publishers (this one included) are in
                                the room and Janus forwards this one's audio to each of the
                                others (at most 120 s; default 1: at once)
          --timeout S           seconds without a packet before a participant counts as gone
                                (default 5)

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
}

private func parseJoinOptions(_ args: [String]) throws(ArgumentScanner.UsageError) -> JoinOptions {
    let s = try ArgumentScanner(args, valued: ["janus", "room", "name", "plugin", "audio", "video", "pin", "events", "output",
                                               "output-each", "wait-for", "timeout"],
                                flagNames: ["no-tui", "srtp"])
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
    if let plugin = s.value("plugin"), plugin != "videoroom" {
        throw .init(description: "--plugin takes videoroom, got '\(plugin)'")
    }
    var o = JoinOptions(janus: url, room: room, name: name)
    if let a = s.value("audio") { o.audio = a }
    if let v = s.value("video") {
        guard let kind = CallVideoSourceKind(v) else {
            throw .init(description: "--video takes a Y4M file (.y4m) or a V4L2 device (/dev/videoN), got '\(v)'")
        }
        o.video = kind
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
    return o
}

/// Set by SIGINT/SIGTERM: leave the room.
private let leaveRequested = Atomic<Bool>(false)

private func runJoin(_ args: [String]) -> Int32 {
    let o: JoinOptions
    do { o = try parseJoinOptions(args) } catch {
        printError("parley join: \(error)\nRun 'parley join --help' for usage.")
        return ExitStatus.usage
    }
    do {
        return try joinRoom(o)
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

/// A publisher this participant receives: its name in the call and the forwarders Janus made.
private struct ReceivedPublisher: Sendable {
    var id: UInt64
    var remote: RemoteParticipant
    var forwarders: [RTPForwarder]
}

/// What the Janus side hands to the call's thread.
private enum JoinAction: Sendable {
    case add(RemoteParticipant)
    case ended(ParticipantID)
    case serverGone(String)
}

/// The Janus side of a joined participant: the listener handle, the publishers it receives,
/// the forwarders it asked for; shared between the event task and the call's thread.
private final class JanusRoomLink: Sendable {
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

    init(janus: JanusClient, handle: VideoRoomHandle, room: UInt64, ownID: UInt64, ownName: String, host: String, port: UInt16,
         srtp: RTPForwardSRTP?) {
        self.janus = janus; self.handle = handle; self.room = room; self.ownID = ownID; self.ownName = ownName
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
            remoteVideo = RemoteVideo(ssrc: audioSSRC + 1, width: size.width, height: size.height,
                                      payloadType: VP8RTP.defaultPayloadType, feedback: feedback)
            streams.append((mid: video.mid, port: port, ssrc: audioSSRC + 1))
        }
        let received = ReceivedPublisher(id: p.id, remote: RemoteParticipant(name: name, audioSSRC: audioSSRC, video: remoteVideo),
                                         forwarders: [])
        publishers.withLock { $0[p.id] = received }
        let forwarders = try await handle.rtpForward(room: room, publisher: p.id, host: host, streams: streams, srtp: srtp)
        publishers.withLock { $0[p.id]?.forwarders = forwarders }
        return received
    }

    /// Follows the room's events until cancelled or Janus goes away.
    func follow() async {
        do {
            for try await event in await janus.events() {
                guard case .plugin(let sender, _, let data, _) = event, sender == handle.id else { continue }
                switch VideoRoomEvent(data) {
                case .publishers(let list):
                    for p in list {
                        if let r = try await receive(p) { actions.withLock { $0.append(.add(r.remote)) } }
                    }
                case .unpublished(let id), .leaving(let id):
                    if let r = publishers.withLock({ $0.removeValue(forKey: id) }) {
                        actions.withLock { $0.append(.ended(r.remote.name)) }
                    }
                case .destroyed:
                    actions.withLock { $0.append(.serverGone("room \(room) was destroyed")) }
                    return
                default: break
                }
            }
        } catch is CancellationError {
        } catch {
            if Task.isCancelled { return }
            actions.withLock { $0.append(.serverGone("\(error)")) }
        }
    }

    /// Removes this participant's publisher (its forwarders go with it), stops the forwarders
    /// it asked for, leaves; what fails is reported on standard error, never fatal.
    func cleanUp(publisherID: UInt64) async {
        func attempt(_ what: String, _ body: () async throws -> Void) async {
            do { try await body() } catch { printError("parley join: leaving: \(what): \(error)") }
        }
        await attempt("remove_remote_publisher") { try await handle.removeRemotePublisher(room: room, id: publisherID) }
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

private func joinRoom(_ o: JoinOptions) throws -> Int32 {
    let clock = SystemMediaClock()
    guard let janusHost = o.janus.host else { throw CallError("--janus has no host") }

    // The camera first: its size goes into the published stream's description.
    var fileCamera: ClockedVideoSource<LoopingY4MProvider>?
    var deviceCamera: V4L2Capture?
    var camera: (width: Int, height: Int, fps: Double)?
    switch o.video {
    case .file(let path):
        let source = ClockedVideoSource(try LoopingY4MProvider(path: path), clock: clock)
        camera = (source.width, source.height, source.framesPerSecond)
        fileCamera = consume source
    case .device(let path):
        let source = try V4L2Capture(device: path)
        camera = (source.width, source.height, source.framesPerSecond)
        deviceCamera = consume source
    case nil: break
    }
    var wavRate: Int?
    if o.audio.lowercased().hasSuffix(".wav") {
        let file = try WAVFileProvider<Int16>(path: o.audio)
        guard file.format.channels == 1, [8_000, 12_000, 16_000, 24_000, 48_000].contains(file.format.sampleRate) else {
            throw CallError("\(o.audio): a room takes mono 8, 12, 16, 24 or 48 kHz audio; this WAV is \(file.format.sampleRate) Hz, "
                            + "\(file.format.channels) channels (convert it first)")
        }
        wavRate = file.format.sampleRate
    }

    // Janus: a session, the listener (pin check, the room's events), the remote publisher.
    let started = MonotonicTime.now()
    let janus = JanusClient(baseURL: o.janus)
    try blocking { _ = try await janus.createSession() }
    let handle = try blocking { try await VideoRoomHandle.attach(janus) }
    let room = o.room
    guard try blocking({ try await handle.exists(room: room) }) else {
        try? blocking { try await janus.destroy() }
        throw CallError("room \(room) does not exist on \(o.janus.absoluteString)")
    }
    let name = o.name, pin = o.pin
    try blocking { try await handle.join(room: room, display: name + ".listener", pin: pin) }
    // The answer to the join, and whatever else arrives with or before it.
    var known: [VideoRoomPublisher]?
    var backlog: [VideoRoomEvent] = []
    while known == nil {
        let events = try blocking { try await janus.poll() }
        for case .plugin(let sender, _, let data, _) in events where sender == handle.id {
            switch VideoRoomEvent(data) {
            case .joined(_, let publishers) where known == nil:
                known = publishers
            case .error(let code, let text) where known == nil:
                try? blocking { try await janus.destroy() }
                throw CallError(code == 433 ? "room \(room): wrong or missing pin (Janus: \(text))" : "room \(room): Janus error \(code): \(text)")
            case let e: backlog.append(e)
            }
        }
        if known == nil && MonotonicTime.now() >= started.advanced(bySeconds: 30) {
            try? blocking { try await janus.destroy() }
            throw CallError("room \(room): Janus did not answer the join within 30 s")
        }
    }
    var streams = [VideoRoomHandle.RemoteStream(type: "audio", codec: "opus", audioLevelExtensionID: 1, fec: true)]
    if let camera {
        streams.append(.init(type: "video", codec: "vp8", description: "\(camera.width)x\(camera.height)@\(Int(camera.fps.rounded()))"))
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
    let receiveUDP = try UDPTransport(localPort: 0, bindHost: "0.0.0.0", peerHost: janusHost, peerPort: me.rtcpPort, clock: clock)
    let receivePort = receiveUDP.localPort
    let key = o.srtp ? try SRTPKey.generate(suite: .aesCM128HMACSHA1_80) : nil
    let forwardHost = UDPTransport.localAddress(towards: janusHost) ?? "127.0.0.1"
    let link = JanusRoomLink(janus: janus, handle: handle, room: room, ownID: me.id, ownName: name, host: forwardHost, port: receivePort,
                             srtp: key.map { RTPForwardSRTP(suite: 80, crypto: $0.base64) })

    var settings = CallSessionConfiguration()
    settings.remoteTimeout = o.timeout
    settings.admitsUndeclaredRemotes = false
    settings.receive.senderTimestampOrigin = 0
    let session = CallSession(configuration: settings, clock: clock)
    let network = session.addTransport(sendUDP)
    if let key {
        session.addTransport(try SRTPTransport(receiveUDP, sendKey: key, receiveKey: key))
    } else {
        session.addTransport(receiveUDP)
    }

    var eventsFile: FileHandle?
    if let path = o.events {
        guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
            try? blocking { await link.cleanUp(publisherID: me.id) }
            throw CallError("cannot write \(path)")
        }
        eventsFile = h
    }
    let showGrid = o.tui && isatty(STDOUT_FILENO) == 1
    session.onEvent = { event in
        if let h = eventsFile, let line = roomEventJSON(event) { h.write(Data((line + "\n").utf8)) }
        // Unbuffered: the events as they happen, also into a file or a pipe.
        if !showGrid, let line = roomEventText(event) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
    }

    // The publishers already in, and those this participant waits for.
    func take(_ list: [VideoRoomPublisher]) throws {
        for p in list {
            if let r = try blocking({ try await link.receive(p) }) { try session.addRemote(r.remote) }
        }
    }
    do {
        try take(known ?? [])
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
        try? blocking { await link.cleanUp(publisherID: me.id) }
        throw error
    }

    var send = AudioSendConfiguration()
    send.ssrc = VideoRoomHandle.remotePublisherSSRC(mindex: 0)
    send.firstSequence = UInt16.random(in: 0...UInt16.max)
    send.firstTimestamp = 0
    do {
        if camera != nil {
            var video = LocalVideoConfiguration()
            video.ssrc = VideoRoomHandle.remotePublisherSSRC(mindex: 1)
            video.payloadType = callVideoPayloadType
            video.firstTimestamp = 0
            if let source = fileCamera.take() {
                try session.addLocalVideo(source: source, configuration: video, sendingOn: network)
            } else if let source = deviceCamera.take() {
                try session.addLocalVideo(source: source, configuration: video, sendingOn: network)
            }
        }
        if let wavRate {
            send.sampleRate = wavRate
            let file = WAVFileSource<Int16>(try WAVFileProvider(path: o.audio), clock: clock)
            try session.addLocal(name: o.name, source: file, configuration: send, sendingOn: network)
        } else {
            let mic = try ALSACapture<Int16>(pcm: o.audio, parameters: ALSAParameters(format: AudioFormat(sampleRate: 16_000, channels: 1)))
            try session.addLocal(name: o.name, source: mic, configuration: send, sendingOn: network)
        }
    } catch {
        try? blocking { await link.cleanUp(publisherID: me.id) }
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
            speaker = try ALSAPlayback<Int16>(parameters: ALSAParameters(format: AudioFormat(sampleRate: rate, channels: 1)))
        }
        if let dir = o.outputEach { try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true) }
    } catch {
        try? blocking { await link.cleanUp(publisherID: me.id) }
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

    let follower = Task { await link.follow() }
    var serverGone: String?
    var someoneJoined = !session.remoteNames.isEmpty
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
            }
        }
        if !session.remoteNames.isEmpty { someoneJoined = true }
        let othersPresent = session.state.present.contains { $0.id != o.name }
        let elapsed = Double(session.start.nanoseconds(to: clock.now())) / 1e9
        if leaveRequested.load(ordering: .relaxed) || serverGone != nil || outputFailure != nil
            || (session.localHasEnded && !othersPresent && (someoneJoined || elapsed > o.timeout)) {
            session.stop()
            return
        }
        if showGrid, t >= nextDraw {
            nextDraw = t + 0.1
            FileHandle.standardOutput.write(Data(("\u{1B}[H\u{1B}[2J" + renderRoomGrid(session.state, time: t, color: true)).utf8))
        }
    }
    signal(SIGINT) { _ in leaveRequested.store(true, ordering: .relaxed) }
    signal(SIGTERM) { _ in leaveRequested.store(true, ordering: .relaxed) }
    if showGrid { FileHandle.standardOutput.write(Data("\u{1B}[?25l".utf8)) }
    session.run()
    if showGrid { FileHandle.standardOutput.write(Data("\u{1B}[?25h\n".utf8)) }
    signal(SIGINT, SIG_DFL)
    signal(SIGTERM, SIG_DFL)
    follower.cancel()
    if serverGone == nil {
        let t0 = MonotonicTime.now()
        try? blocking { await link.cleanUp(publisherID: me.id) }
        let spent = Double(t0.nanoseconds(to: MonotonicTime.now())) / 1e9
        if spent > 2 { printError("parley join: leaving the room took \(String(format: "%.1f", spent)) s") }
    }
    try? eventsFile?.close()
    try mixWriter?.close()
    for (who, _) in eachWriters { try eachWriters[who]!.close() }

    if let s = session.localStatistics {
        print("sent: \(s.packetsSent) RTP packets (\(s.payloadBytes) payload bytes) to Janus \(me.host ?? janusHost):\(me.port) "
              + "as publisher \(me.id) in room \(room)")
    }
    for who in session.remoteNames {
        guard let r = session.receiveStatistics(of: who) else { continue }
        print("received from \(who): \(r.receive.packetsBuffered) RTP packets, \(r.jitter.packetsLost) lost, "
              + "\(r.jitter.concealedSamples) samples concealed")
        if let v = r.video { print(callVideoReceivedLine(v, from: who)) }
    }
    let s = session.statistics
    print("datagrams: \(s.datagrams), malformed: \(s.malformed), unknown_ssrc: \(s.unknownSSRC + s.refusedRemotes)")
    if let v = session.localVideoStatistics { print(callVideoSentLine(v, ssrc: VideoRoomHandle.remotePublisherSSRC(mindex: 1))) }
    if let outputFailure { throw CallError("received audio: \(outputFailure)") }
    if let failure = session.localFailure { throw CallError("\(o.audio): \(failure)") }
    if let serverGone {
        printError("parley join: Janus went away during the call: \(serverGone)")
        return ExitStatus.failure
    }
    return ExitStatus.success
}
