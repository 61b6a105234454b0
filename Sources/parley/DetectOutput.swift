// Output formats of `parley detect`: summary, json, csv, rttm, audacity (frames rows are
// written while analysing, see DetectCommand.swift). Every writer is a pure function of the
// recordings, so the output does not depend on the order in which the jobs finished.

import Foundation
import ParleyCall
import ParleyDetect
import ParleyVoice

/// What happened to one input file.
enum DetectFileOutcome: Sendable {
    case analysed(OfflineFileAnalysis)
    case failed(path: String, error: OfflineDetectionError)

    var path: String {
        switch self {
        case let .analysed(a): a.request.path
        case let .failed(path, _): path
        }
    }
}

/// One unit of output: a meeting (`--meeting`) or one file (default mode).
struct DetectRecording: Sendable {
    /// The `file` column of csv/rttm: the meeting's name or the file's stem.
    var name: String
    /// The files that make it up, in command-line order.
    var files: [DetectFileOutcome]
    /// One track per participant, from the files that could be analysed.
    var tracks: [OfflineTrack]
    /// Seconds on the meeting's timeline: the latest end of any file (offset + length read).
    var duration: Double
    var statistics: MeetingStatistics

    init(name: String, files: [DetectFileOutcome]) {
        self.name = name
        self.files = files
        var tracks: [OfflineTrack] = []
        var duration = 0.0
        for case let .analysed(a) in files {
            tracks += a.tracks
            duration = max(duration, a.request.offset + a.duration)
        }
        self.tracks = tracks
        self.duration = duration
        statistics = MeetingStatistics(participants: tracks.map { ($0.name, $0.segments) }, duration: duration)
    }
}

// MARK: - Number and text formatting

/// Appends `x` with exactly `decimals` decimals (0...6), rounded half away from zero; fast
/// enough for the frames output's hundreds of thousands of rows.
func appendFixed(_ x: Double, decimals: Int, to out: inout String) {
    guard x.isFinite else { out += x.isNaN ? "nan" : (x > 0 ? "inf" : "-inf"); return }
    var scale: Double = 1
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(x) * scale).rounded()
    guard scaled < 9e15 else { out += String(x); return }
    let n = UInt64(scaled)
    if x < 0 && n != 0 { out += "-" }
    let p = UInt64(scale)
    out += String(n / p)
    guard decimals > 0 else { return }
    out += "."
    let frac = String(n % p)
    for _ in frac.count..<decimals { out += "0" }
    out += frac
}

func fixed(_ x: Double, _ decimals: Int = 3) -> String {
    var s = ""
    appendFixed(x, decimals: decimals, to: &s)
    return s
}

/// `m:ss.s`, or `h:mm:ss` from one hour on: durations for people.
func clock(_ seconds: Double) -> String {
    let s = max(0, seconds)
    if s >= 3600 {
        let t = Int(s.rounded())
        return "\(t / 3600):" + pad2(t / 60 % 60) + ":" + pad2(t % 60)
    }
    let tenths = Int((s * 10).rounded())
    return "\(tenths / 600):" + pad2(tenths / 10 % 60) + ".\(tenths % 10)"
}

func pad2(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

func percent(_ f: Double) -> String { fixed(f * 100, 1) + "%" }

func padded(_ s: String, _ width: Int, right: Bool = false) -> String {
    guard s.count < width else { return s }
    let fill = String(repeating: " ", count: width - s.count)
    return right ? fill + s : s + fill
}

/// A CSV field: quoted when it holds a comma, quote or line break.
func csvField(_ s: String) -> String {
    guard s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return s }
    return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}

/// An RTTM field: RTTM is space-separated, so blanks become underscores.
func rttmField(_ s: String) -> String {
    String(s.map { $0 == " " || $0 == "\t" || $0 == "\n" ? "_" : $0 })
}

/// The stem of a path: its last component without the extension; `stdin` for `-`.
func fileStem(_ path: String) -> String {
    if path == "-" { return "stdin" }
    let last = path.split(separator: "/", omittingEmptySubsequences: true).last.map(String.init) ?? path
    if let dot = last.lastIndex(of: "."), dot != last.startIndex {
        return String(last[..<dot])
    }
    return last
}

// MARK: - Formats

/// `summary`: a table per recording, for people.
func summaryText(_ recordings: [DetectRecording]) -> String {
    var out = ""
    for (i, r) in recordings.enumerated() {
        if i > 0 { out += "\n" }
        let st = r.statistics
        let n = r.tracks.count
        out += "\(r.name): \(n) participant\(n == 1 ? "" : "s"), \(clock(r.duration))"
        let failed = r.files.filter { if case .failed = $0 { true } else { false } }.count
        if failed > 0 { out += " (\(failed) file\(failed == 1 ? "" : "s") failed, see below)" }
        out += "\n"
        if n > 0 {
            let nameWidth = max(11, r.tracks.map(\.name.count).max() ?? 0)
            out += padded("participant", nameWidth) + "  " + padded("talk", 9, right: true)
                + "  " + padded("share", 6, right: true) + "  " + padded("of mtg", 6, right: true)
                + "  " + padded("turns", 5, right: true) + "  " + padded("longest", 9, right: true)
                + "  " + padded("overlap", 9, right: true) + "  " + padded("interrupts", 10, right: true)
                + "  " + padded("interrupted", 11, right: true) + "\n"
            for p in st.participants {
                out += padded(p.name, nameWidth) + "  " + padded(clock(p.talkTime), 9, right: true)
                    + "  " + padded(percent(p.shareOfTalk), 6, right: true)
                    + "  " + padded(percent(p.fractionOfMeeting), 6, right: true)
                    + "  " + padded("\(p.turns)", 5, right: true)
                    + "  " + padded(clock(p.longestTurn), 9, right: true)
                    + "  " + padded(clock(p.overlapTime), 9, right: true)
                    + "  " + padded("\(p.interruptionsMade)", 10, right: true)
                    + "  " + padded("\(p.timesInterrupted)", 11, right: true) + "\n"
            }
            out += "talking: \(clock(r.duration - st.silenceTime))  overlap (2+ talking): \(clock(st.overlapTime))"
                + "  silence: \(clock(st.silenceTime))  interruptions: \(st.interruptions.count)\n"
        }
        for f in r.files {
            switch f {
            case let .analysed(a):
                for issue in a.issues { out += "  \(a.request.path): \(issue)\n" }
            case let .failed(path, error):
                out += "  \(path): FAILED: \(error.message)\n"
            }
        }
    }
    return out
}

/// `csv`: `file,participant,start_s,end_s`, one talking segment a line.
func csvText(_ recordings: [DetectRecording]) -> String {
    var out = "file,participant,start_s,end_s\n"
    for r in recordings {
        for t in r.tracks {
            for s in t.segments {
                out += csvField(r.name) + "," + csvField(t.name) + ","
                appendFixed(s.start, decimals: 3, to: &out)
                out += ","
                appendFixed(s.end, decimals: 3, to: &out)
                out += "\n"
            }
        }
    }
    return out
}

/// `rttm`: `SPEAKER <file> 1 <start> <duration> <NA> <NA> <participant> <NA> <NA>`, by start time.
func rttmText(_ recordings: [DetectRecording]) -> String {
    var out = ""
    for r in recordings {
        var rows: [(start: Double, track: Int, segment: TalkSegment)] = []
        for (ti, t) in r.tracks.enumerated() {
            for s in t.segments { rows.append((s.start, ti, s)) }
        }
        rows.sort { ($0.start, $0.track) < ($1.start, $1.track) }
        for row in rows {
            out += "SPEAKER " + rttmField(r.name) + " 1 "
            appendFixed(row.segment.start, decimals: 3, to: &out)
            out += " "
            appendFixed(row.segment.duration, decimals: 3, to: &out)
            out += " <NA> <NA> " + rttmField(r.tracks[row.track].name) + " <NA> <NA>\n"
        }
    }
    return out
}

/// `audacity`: one label track (`start\tend\tlabel`) per participant, keyed by participant name.
func audacityTracks(_ recordings: [DetectRecording]) -> [(participant: String, text: String)] {
    var out: [(String, String)] = []
    for r in recordings {
        for t in r.tracks {
            var text = ""
            for s in t.segments {
                appendFixed(s.start, decimals: 6, to: &text)
                text += "\t"
                appendFixed(s.end, decimals: 6, to: &text)
                text += "\t" + t.name + "\n"
            }
            out.append((t.name, text))
        }
    }
    return out
}

/// Where `audacity` writes the track of `participant` when there are several: next to
/// `output`, the participant's name inserted before the extension (`labels.txt` ->
/// `labels-alice.txt`).
func audacityPath(output: String, participant: String) -> String {
    let safe = String(participant.map { $0 == "/" ? "_" : $0 })
    let dir: String, last: String
    if let slash = output.lastIndex(of: "/") {
        dir = String(output[...slash])
        last = String(output[output.index(after: slash)...])
    } else {
        dir = ""
        last = output
    }
    if let dot = last.lastIndex(of: "."), dot != last.startIndex {
        return dir + last[..<dot] + "-" + safe + last[dot...]
    }
    return dir + last + "-" + safe + ".txt"
}

/// A participant's figures as the JSON of `parley detect` and `parley report` write them:
/// `"talk_s": …, "share": …, … "interrupted": …`.
func participantFiguresJSON(_ p: ParticipantTalkStatistics) -> String {
    "\"talk_s\": \(fixed(p.talkTime, 3)), \"share\": \(fixed(p.shareOfTalk, 4)), "
        + "\"fraction_of_meeting\": \(fixed(p.fractionOfMeeting, 4)), \"turns\": \(p.turns), "
        + "\"longest_turn_s\": \(fixed(p.longestTurn, 3)), \"overlap_s\": \(fixed(p.overlapTime, 3)), "
        + "\"interruptions\": \(p.interruptionsMade), \"interrupted\": \(p.timesInterrupted)"
}

/// `json`: schema `parley.detect/1`, documented in `parley detect --help` and docs/detect.md.
func jsonText(_ recordings: [DetectRecording], version: String, model: VADModel) -> String {
    func num(_ x: Double) -> String { fixed(x, 3) }
    var out = "{\n  \"schema\": \"parley.detect/1\",\n  \"parley_version\": \(jsonString(version)),\n"
    out += "  \"vad_model\": \(jsonString(model.rawValue)),\n"
    out += "  \"interruption_window_s\": \(num(MeetingStatistics.defaultInterruptionWindow)),\n"
    out += "  \"recordings\": ["
    for (ri, r) in recordings.enumerated() {
        let st = r.statistics
        out += ri == 0 ? "\n" : ",\n"
        out += "    {\n      \"name\": \(jsonString(r.name)),\n      \"duration_s\": \(num(r.duration)),\n"
        out += "      \"talking_s\": \(num(r.duration - st.silenceTime)), \"overlap_s\": \(num(st.overlapTime)), "
        out += "\"silence_s\": \(num(st.silenceTime)),\n"
        out += "      \"files\": ["
        for (fi, f) in r.files.enumerated() {
            out += fi == 0 ? "\n" : ",\n"
            switch f {
            case let .analysed(a):
                out += "        {\"path\": \(jsonString(a.request.path)), \"status\": \(jsonString(a.isComplete ? "ok" : "partial")), "
                out += "\"offset_s\": \(num(a.request.offset)), \"sample_rate\": \(a.sampleRate), \"channels\": \(a.channels), "
                out += "\"duration_s\": \(num(a.duration)), \"issues\": [" + a.issues.map { jsonString($0.description) }.joined(separator: ", ") + "]}"
            case let .failed(path, error):
                out += "        {\"path\": \(jsonString(path)), \"status\": \"failed\", \"error\": \(jsonString(error.message))}"
            }
        }
        out += r.files.isEmpty ? "],\n" : "\n      ],\n"
        out += "      \"participants\": ["
        for (pi, p) in st.participants.enumerated() {
            let t = r.tracks[pi]
            out += pi == 0 ? "\n" : ",\n"
            out += "        {\"name\": \(jsonString(p.name)), "
            if let ch = t.channel { out += "\"channel\": \(ch + 1), " }
            out += participantFiguresJSON(p) + ",\n"
            out += "         \"segments\": [" + t.segments.map { "[\(num($0.start)), \(num($0.end))]" }.joined(separator: ", ") + "]}"
        }
        out += st.participants.isEmpty ? "],\n" : "\n      ],\n"
        out += "      \"interruptions\": ["
        out += st.interruptions.map { i in
            "{\"time_s\": \(num(i.time)), \"by\": \(jsonString(r.tracks[i.interrupter].name)), "
                + "\"of\": \(jsonString(r.tracks[i.interrupted].name)), \"stopped_s\": \(num(i.interruptedStopTime))}"
        }.joined(separator: ", ")
        out += "]\n    }"
    }
    out += recordings.isEmpty ? "]\n}\n" : "\n  ]\n}\n"
    return out
}
