import Foundation
import ParleyCall
import ParleyJitter
import ParleySimulation

/// `parley room`: a simulated call of the given participants, showing who is talking.
let roomCommand = Command(
    name: "room",
    summary: "Simulated call room that shows who is talking",
    help: """
    Usage: parley room FILE... [--loss PCT] [--jitter MS] [--seed N] [--speed realtime|max]
                       [--no-tui] [--events PATH.jsonl] [--talking receiver|sender]

    Runs a call: each FILE (WAV, mono or stereo, 8/12/16/24/48 kHz) is one participant named
    after the file's stem; a FILE.y4m with the same stem is that participant's camera (VP8 over
    RTP, frame assembly, decoding, shown in lip sync with the audio). Every participant's audio goes through the full pipeline: level,
    VAD and talking detection, Opus (20 ms, in-band FEC), RTP with the RFC 6464 audio level,
    RTCP sender reports, a simulated network, the adaptive jitter buffer, Opus decoding with
    loss concealment, and the receiver's talking detection (on the senders' voice-activity
    bits, or its own VAD: --talking), which lights up the participant. A participant leaves
    when its audio ends.

    Options:
      --loss PCT        mean packet loss on every participant's path, percent, in
                        Gilbert-Elliott bursts of mean length 2 packets (default 0)
      --jitter MS       Gaussian network jitter, standard deviation in ms, on top of a
                        40 ms one-way delay (default 0)
      --seed N          seed of the network simulation (default 1); same seed, same events
      --speed S         realtime: run on the system clock, as a live call;
                        max: run on a virtual clock as fast as the machine allows (default
                        max without a terminal, realtime on one)
      --talking SRC     where the receiver's talking decisions come from. sender: the V bit
                        of each packet's RFC 6464 audio level, set by the sending participant's
                        VAD and talking detector on its clean capture (next to no receive
                        cost: what a client showing many participants needs; the default).
                        receiver: Parley's VAD run again on the decoded audio of every stream
                        (works with senders whose V bit is not a voice decision; costs about
                        one Opus decode per stream). The same talking detector runs on either.
      --no-tui          plain text: one line per event, instead of the live grid
      --events PATH     write every event as a JSON line:
                        {"t": <media s>, "type": "joined"|"left"|"talking"|"silent"|"dominant"|
                        "muted"|"unmuted", "participant": "<stem>", ...}
                        talking: "start" (speech onset, media s), "level_dbov", "reason",
                        "muted" (talking while muted); silent: "end", "level_dbov", "reason";
                        dominant: "participant" is the new dominant speaker (null: nobody),
                        "previous"

    On a terminal, the live grid has ceil(sqrt(n)) columns; talking participants have a green
    border, the dominant speaker a star, muted participants are listed apart. The final report
    gives per participant: talk time, turns, network loss, concealment, jitter-buffer delay,
    and the audio frame accounting (played + late + lost + discarded = sent).

    Times are media seconds from the call's start on the senders' clocks: a talking event's
    "start" is where the speech starts in the participant's audio, "t" when the receiver
    decided (after the network, the jitter buffer and the detector's onset window).
    """,
    run: runRoom
)

struct RoomInvocation {
    var files: [String] = []
    var loss = 0.0
    var jitter = 0.0
    var seed: UInt64 = 1
    var realtime: Bool?
    var tui = true
    var eventsPath: String?
    var talking = AudioReceiveConfiguration().voiceActivitySource
}

func parseRoomArguments(_ args: [String]) throws(ArgumentScanner.UsageError) -> RoomInvocation {
    let scan = try ArgumentScanner(args, valued: ["loss", "jitter", "seed", "speed", "events", "talking"], flagNames: ["no-tui"])
    var inv = RoomInvocation()
    inv.files = scan.positionals
    guard !inv.files.isEmpty else { throw .init(description: "no participant files given") }
    inv.loss = try scan.double("loss", default: 0, in: 0...95)
    inv.jitter = try scan.double("jitter", default: 0, in: 0...2000)
    if let s = scan.value("seed") {
        guard let v = UInt64(s) else { throw .init(description: "--seed must be a non-negative integer, got '\(s)'") }
        inv.seed = v
    }
    if let s = scan.value("speed") {
        switch s {
        case "realtime": inv.realtime = true
        case "max": inv.realtime = false
        default: throw .init(description: "--speed must be realtime or max, got '\(s)'")
        }
    }
    if let s = scan.value("talking") {
        switch s {
        case "receiver": inv.talking = .local
        case "sender": inv.talking = .senderAudioLevel
        default: throw .init(description: "--talking must be receiver or sender, got '\(s)'")
        }
    }
    inv.tui = !scan.flag("no-tui")
    inv.eventsPath = scan.value("events")
    return inv
}

@Sendable func runRoom(_ args: [String]) -> Int32 {
    let inv: RoomInvocation
    do {
        inv = try parseRoomArguments(args)
    } catch {
        printError("parley room: \(error.description)\nRun 'parley room --help' for usage.")
        return ExitStatus.usage
    }
    // Participants: one per WAV, named after its stem (unique); a Y4M with the same stem is
    // that participant's camera.
    var participants: [RoomParticipant] = []
    var names = Set<String>()
    let isVideo = { (path: String) in path.lowercased().hasSuffix(".y4m") }
    for path in inv.files where !isVideo(path) {
        let stem = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        guard names.insert(stem).inserted else {
            printError("parley room: two participants are named '\(stem)'; rename one file")
            return ExitStatus.usage
        }
        do {
            participants.append(try RoomParticipant.load(path: path, name: stem))
        } catch {
            printError("parley room: \(error.description)")
            return ExitStatus.failure
        }
    }
    for path in inv.files where isVideo(path) {
        let stem = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        guard let i = participants.firstIndex(where: { $0.name == stem }) else {
            printError("parley room: \(path): no WAV named '\(stem)' to pair this video with")
            return ExitStatus.usage
        }
        guard participants[i].video.isEmpty else {
            printError("parley room: two videos for '\(stem)'")
            return ExitStatus.usage
        }
        do {
            try participants[i].attachVideo(path: path)
        } catch {
            printError("parley room: \(error.description)")
            return ExitStatus.failure
        }
    }
    var eventsFile: FileHandle?
    if let path = inv.eventsPath {
        guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
            printError("parley room: cannot write \(path)")
            return ExitStatus.failure
        }
        eventsFile = h
    }
    let terminal = isatty(STDOUT_FILENO) == 1
    let showGrid = inv.tui && terminal
    let realtime = inv.realtime ?? terminal
    let clock: any MediaClock = realtime ? SystemMediaClock() : VirtualMediaClock()
    // --loss is parsed within 0...95, so the scenario cannot be refused.
    var configuration = RoomConfiguration(network: try! .room(lossPercent: inv.loss, jitterMs: inv.jitter), seed: inv.seed)
    configuration.receive.voiceActivitySource = inv.talking
    let room: CallRoom
    do {
        room = try CallRoom(participants: participants, configuration: configuration, clock: clock)
    } catch {
        printError("parley room: \(error.description)")
        return ExitStatus.usage
    }

    var lines = [String]()
    lines.reserveCapacity(64)
    room.onEvent = { event in
        if let h = eventsFile, let line = roomEventJSON(event) { h.write(Data((line + "\n").utf8)) }
        if !showGrid, let line = roomEventText(event) { print(line) }
    }
    var nextDraw = 0.0
    if showGrid {
        FileHandle.standardOutput.write(Data("\u{1B}[?25l".utf8))   // hide the cursor while drawing
        room.onFrame = { t in
            guard t >= nextDraw else { return }
            nextDraw = t + (realtime ? 0.1 : 0.5)
            FileHandle.standardOutput.write(Data(("\u{1B}[H\u{1B}[2J" + renderRoomGrid(room.state, time: t, color: true)).utf8))
        }
    }
    do {
        try room.run()
    } catch {
        printError("parley room: \(error)")
        return ExitStatus.failure
    }
    if showGrid {
        FileHandle.standardOutput.write(Data(("\u{1B}[H\u{1B}[2J" + renderRoomGrid(room.state, time: room.state.time, color: true)
                                              + "\u{1B}[?25h").utf8))
    }
    try? eventsFile?.close()
    print(roomReport(room.reports))
    return room.reports.allSatisfy(\.audio.isBalanced) ? ExitStatus.success : ExitStatus.failure
}
