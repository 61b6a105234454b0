import Foundation
import ParleyCall
import ParleySimulation

// Output formats of `parley room`: the live grid, plain-text events, JSON lines, the report.

private let green = "\u{1B}[32;1m"
private let dim = "\u{1B}[2m"
private let reset = "\u{1B}[0m"

/// The live grid: ceil(sqrt(n)) columns of boxes for the present, unmuted participants; a
/// talking one has a green (bold, `#`) border, the dominant speaker a star; muted ones are
/// listed apart below. `color` adds ANSI colours; without it the border alone shows talking.
func renderRoomGrid(_ state: CallState, time: Double, color: Bool) -> String {
    let shown = state.present.filter { !$0.muted }
    let muted = state.present.filter(\.muted)
    let columns = max(1, Int(Double(shown.count).squareRoot().rounded(.up)))
    let inner = 24
    var out = "parley room   t = \(String(format: "%6.1f", time)) s   \(state.present.count) participant(s)"
    out += "   dominant: \(state.dominant ?? "-")\n\n"
    func pad(_ s: String) -> String {
        s.count >= inner ? String(s.prefix(inner)) : s + String(repeating: " ", count: inner - s.count)
    }
    var row = 0
    while row * columns < shown.count {
        let cells = shown[(row * columns)..<min(shown.count, (row + 1) * columns)]
        var lines = [String](repeating: "", count: 6)
        for p in cells {
            let talking = p.talking
            let (h, v, c) = talking ? ("=", "#", "#") : ("-", "|", "+")
            let star = state.dominant == p.id ? "* " : "  "
            let body = [
                star + p.name,
                talking ? "TALKING  \(String(format: "%5.1f", p.levelDbov)) dBov" : "",
                "talk \(String(format: "%6.1f", p.talkTime(at: time))) s  turns \(p.turns)",
                "loss \(String(format: "%4.1f", p.statistics.lossFraction * 100))%  jb \(String(format: "%3.0f", p.statistics.targetDelayMs)) ms",
            ]
            let (on, off) = color ? (talking ? green : dim, reset) : ("", "")
            lines[0] += on + c + String(repeating: h, count: inner) + c + off + " "
            for (i, b) in body.enumerated() { lines[i + 1] += on + v + off + pad(b) + on + v + off + " " }
            lines[5] += on + c + String(repeating: h, count: inner) + c + off + " "
        }
        out += lines.joined(separator: "\n") + "\n"
        row += 1
    }
    if shown.isEmpty { out += "(nobody unmuted)\n" }
    out += "\nMuted: " + (muted.isEmpty ? "-" : muted.map { $0.name + ($0.talkingWhileMuted ? " (talking while muted)" : "") }
        .joined(separator: ", ")) + "\n"
    return out
}

private func seconds(_ t: Double) -> String { String(format: "%.3f", t) }

/// Creates the `--events` file at `path` (when given) and sets the session's event output of
/// `parley call` and `parley join`: JSON lines there, and text lines on standard output
/// (unbuffered: as they happen, also into a file or a pipe) unless the grid is shown; each
/// event is then handed to `also`.
func openSessionEvents(_ path: String?, _ session: CallSession, showGrid: Bool,
                       also: @escaping (CallEvent) -> Void = { _ in }) throws -> FileHandle? {
    var eventsFile: FileHandle?
    if let path {
        guard FileManager.default.createFile(atPath: path, contents: nil), let h = FileHandle(forWritingAtPath: path) else {
            throw CommandFailure("cannot write \(path)")
        }
        eventsFile = h
    }
    session.onEvent = { event in
        if let h = eventsFile, let line = roomEventJSON(event) { h.write(Data((line + "\n").utf8)) }
        if !showGrid, let line = roomEventText(event) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
        also(event)
    }
    return eventsFile
}

/// One line of `--no-tui` output per event (statistics events are not printed).
func roomEventText(_ e: CallEvent) -> String? {
    let who = e.name ?? e.participant ?? "nobody"
    let t = String(format: "%8.3f s  ", e.time)
    switch e.kind {
    case .joined: return t + "\(who) joined"
    case .left: return t + "\(who) left"
    case .muted: return t + "\(who) muted"
    case .unmuted: return t + "\(who) unmuted"
    case .videoOn: return t + "\(who) video on"
    case .videoOff: return t + "\(who) video off"
    case .talkingStarted(let c):
        return t + "\(who) talking\(c.whileMuted ? " while muted" : "") (from \(seconds(c.segmentTime)) s, "
            + "\(String(format: "%.1f", c.levelDbov)) dBov, \(c.reason.rawValue))"
    case .talkingStopped(let c):
        return t + "\(who) silent\(c.whileMuted ? " (was talking while muted)" : "") (after \(seconds(c.segmentTime)) s, "
            + "\(c.reason.rawValue))"
    case .dominantSpeakerChanged(let previous):
        return t + "dominant speaker: \(who) (was \(previous ?? "nobody"))"
    case .statistics: return nil
    }
}

private func jsonNumber(_ x: Double) -> String { x.isFinite ? String(format: "%.3f", x) : "null" }

/// The `--events` JSON line of an event (nil for statistics and video events, which the
/// contract's types do not include). `participant` is the participant's display name; `id`
/// follows it when the participant's id in the call differs (display names may repeat).
func roomEventJSON(_ e: CallEvent) -> String? {
    let head = "{\"t\": \(jsonNumber(e.time)), \"type\": "
    var who = "\"participant\": \(jsonString(e.name ?? e.participant))"
    if let id = e.participant, let name = e.name, name != id { who += ", \"id\": \(jsonString(id))" }
    switch e.kind {
    case .joined: return head + "\"joined\", " + who + "}"
    case .left: return head + "\"left\", " + who + "}"
    case .muted: return head + "\"muted\", " + who + "}"
    case .unmuted: return head + "\"unmuted\", " + who + "}"
    case .talkingStarted(let c):
        return head + "\"talking\", " + who + ", \"start\": \(jsonNumber(c.segmentTime)), "
            + "\"level_dbov\": \(jsonNumber(Double(c.levelDbov))), \"reason\": \(jsonString(c.reason.rawValue)), "
            + "\"muted\": \(c.whileMuted)}"
    case .talkingStopped(let c):
        return head + "\"silent\", " + who + ", \"end\": \(jsonNumber(c.segmentTime)), "
            + "\"level_dbov\": \(jsonNumber(Double(c.levelDbov))), \"reason\": \(jsonString(c.reason.rawValue)), "
            + "\"muted\": \(c.whileMuted)}"
    case .dominantSpeakerChanged(let previous):
        return head + "\"dominant\", " + who + ", \"previous\": \(jsonString(previous))}"
    case .videoOn, .videoOff, .statistics: return nil
    }
}

/// The final report: one row per participant.
func roomReport(_ reports: [RoomParticipantReport]) -> String {
    var out = "\nparticipant        talk_s  turns  loss%  conceal%  jb_mean_ms  jb_target_max_ms"
        + "      sent    played  fec  late  lost  discarded  pending  balanced\n"
    for r in reports {
        let a = r.audio
        out += r.name.padding(toLength: 16, withPad: " ", startingAt: 0)
        out += String(format: " %8.2f %6d %6.2f %9.2f %11.1f %17.1f %9d %9d %4d %5d %5d %10d %8d  ",
                      r.talkTime, r.turns, a.lossFraction * 100, a.concealmentFraction * 100,
                      a.meanJitterBufferDelayMs, a.maximumTargetDelayMs, a.framesSent, a.framesPlayed,
                      a.framesRecovered, a.framesLate, a.framesLost, a.framesDiscarded,
                      a.framesPending) + (a.isBalanced ? "yes" : "NO") + "\n"
    }
    for r in reports {
        guard let v = r.video else { continue }
        var line = "\(r.name) video: \(v.framesCaptured) pictures, \(v.framesEncoded) encoded, \(v.packetsSent) packets, "
        line += "\(v.framesAssembled) assembled, \(v.framesDecoded) decoded, \(v.framesShown) shown "
        line += "(\(v.framesShownUnsynchronized) before sync), \(v.framesDroppedLate) dropped late, "
        line += "\(v.keyframeRequests) keyframe requests, max A/V skew "
        line += String(format: "%.1f", v.maximumAbsoluteSkewMs)
        line += " ms, \(v.framesOutsideWindow) outside +45/-125 ms\n"
        out += line
    }
    return out
}
