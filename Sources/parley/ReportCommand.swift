// `parley report DIR`: the per-recording JSON results of `parley detect --output-dir` merged
// into one table (CSV or JSON) and an SVG overview, so that an archive of thousands of
// recordings can be read at a glance.

import Foundation
import ParleyCore
import ParleyDetect

/// `parley report`.
let reportCommand = Command(
    name: "report",
    summary: "Merge the results of 'parley detect --output-dir' into one table and a picture",
    help: """
    Usage: parley report [--format csv|json] [--output PATH] [--svg PATH] DIR

    Reads every JSON result (schema parley.detect/1) that 'parley detect --format json
    --output-dir DIR' wrote, and DIR/failed.tsv, and prints one table (to PATH with --output):
      csv   header recording,participant,status,duration_s,talk_s,share,fraction_of_meeting,
            turns,longest_turn_s,overlap_s,interruptions,interrupted,result,error
            One row per recording with an empty participant (its totals: talk_s is the time
            anyone talked, fraction_of_meeting that time over duration_s, turns and
            interruptions summed, longest_turn_s the longest), then one row per participant.
      json  schema parley.report/1: {"schema", "parley_version", "directory", "totals",
            "recordings": [{"recording", "status", "result", "error", "duration_s", "talk_s",
            "overlap_s", "turns", "interruptions", "participants": [{"name", "talk_s", "share",
            "fraction_of_meeting", "turns", "longest_turn_s", "overlap_s", "interruptions",
            "interrupted"}]}]}; "totals" counts recordings by status and sums their seconds.
    recording is the input's path (a meeting's name for --meetings-from results); result the
    result's file name in DIR. status: ok (every file read whole), partial (some file failed
    or was cut short; error says what), failed (listed in failed.tsv with no result), or
    unreadable (a result that is not valid parley.detect/1 JSON). Rows are sorted by recording.

    --svg PATH draws an overview: for up to 40 recordings, one bar per recording split into
    its participants' shares of talk; for more, histograms of the participants' shares of talk
    and of the fraction of each recording with talk.

    A last line on stderr counts the recordings. Exit status 0, 1 when some result is
    unreadable or DIR holds no results, 2 usage error (DIR missing or not a directory).
    """,
    run: runReport
)

/// How one recording of a report ended.
enum ReportStatus: String, Sendable {
    case ok, partial, failed, unreadable
}

/// One recording of a report: a result in DIR, or a failed.tsv entry without one.
struct ReportRecording: Sendable {
    /// The input's path, or the meeting's name.
    var recording: String
    var status: ReportStatus
    /// The result's file name in DIR; nil for a failure without a result.
    var result: String?
    var error: String?
    var duration: Double?
    var talk: Double?
    var overlap: Double?
    /// Each participant's figures, as `parley detect` wrote them.
    var participants: [ParticipantTalkStatistics] = []
    var interruptionCount = 0

    var turns: Int { participants.reduce(0) { $0 + $1.turns } }
    var longestTurn: Double { participants.map(\.longestTurn).max() ?? 0 }
}

/// The part of a `parley.detect/1` document a report reads.
private struct DetectResultDocument: Decodable {
    struct File: Decodable {
        var path: String
        var status: String
        var error: String?
        var issues: [String]?
    }

    struct Interruption: Decodable {}

    struct Recording: Decodable {
        var name: String
        var duration: Double
        var talking: Double
        var overlap: Double
        var files: [File]
        var participants: [ParticipantTalkStatistics]
        var interruptions: [Interruption]

        enum CodingKeys: String, CodingKey {
            case name, files, participants, interruptions
            case duration = "duration_s", talking = "talking_s", overlap = "overlap_s"
        }
    }

    var schema: String
    var recordings: [Recording]
}

/// The recordings of `directory`: its JSON results and the failed.tsv entries without one,
/// sorted by recording (then result name). Files other than `*.json`, temporary files
/// (`.parley-*`) and subdirectories are not read.
func readReport(directory: String) throws(CommandFailure) -> [ReportRecording] {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
        throw CommandFailure("\(directory): no such directory")
    }
    guard isDirectory.boolValue else { throw CommandFailure("\(directory): not a directory") }
    let names: [String]
    do {
        names = try FileManager.default.contentsOfDirectory(atPath: directory)
    } catch {
        throw CommandFailure("\(directory): cannot list: \(error.localizedDescription)")
    }
    let decoder = JSONDecoder()
    var out: [ReportRecording] = []
    var byKey: [String: [Int]] = [:]
    for name in names where name.hasSuffix(".json") && !name.hasPrefix(".parley-") {
        let path = directory + "/" + name
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir), !isDir.boolValue else { continue }
        let document: DetectResultDocument
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            document = try decoder.decode(DetectResultDocument.self, from: data)
            guard document.schema == "parley.detect/1" else {
                throw CommandFailure("schema \(document.schema), not parley.detect/1")
            }
        } catch {
            // The key of an unreadable result is its name, so a failed.tsv entry can still
            // find it below.
            out.append(ReportRecording(recording: name, status: .unreadable, result: name,
                                       error: "unreadable result: " + reportErrorText(error)))
            continue
        }
        for r in document.recordings {
            // The input that named this result: its one file's path, else the meeting's name.
            var key = r.name
            if r.files.count == 1 && detectResultName(r.files[0].path, format: .json) == name {
                key = r.files[0].path
            }
            let problems = r.files.compactMap { f -> String? in
                if f.status == "failed" { return f.path + ": " + (f.error ?? "failed") }
                if f.status == "partial" {
                    return f.path + ": " + ((f.issues ?? []).isEmpty ? "partly read" : (f.issues ?? []).joined(separator: "; "))
                }
                return nil
            }
            byKey[key, default: []].append(out.count)
            out.append(ReportRecording(
                recording: key, status: problems.isEmpty ? .ok : .partial, result: name,
                error: problems.isEmpty ? nil : problems.joined(separator: "; "),
                duration: r.duration, talk: r.talking, overlap: r.overlap,
                participants: r.participants, interruptionCount: r.interruptions.count))
        }
    }
    for (key, error) in DetectFailedList.read(directory + "/failed.tsv") {
        if let found = byKey[key] {
            for i in found where out[i].error == nil { out[i].error = error }
            continue
        }
        let resultName = detectResultName(key, format: .json)
        if let i = out.firstIndex(where: { $0.status == .unreadable && $0.result == resultName }) {
            out[i].recording = key
            out[i].error = (out[i].error ?? "") + "; " + error
            continue
        }
        out.append(ReportRecording(recording: key, status: .failed, error: error))
    }
    out.sort { a, b in
        a.recording != b.recording ? a.recording < b.recording : (a.result ?? "") < (b.result ?? "")
    }
    return out
}

/// A decoding error in a few words: where and what.
private func reportErrorText(_ error: any Error) -> String {
    switch error {
    case let e as CommandFailure: return e.description
    case let DecodingError.keyNotFound(key, _): return "no \"\(key.stringValue)\""
    case let DecodingError.typeMismatch(_, c), let DecodingError.valueNotFound(_, c):
        return "wrong type at " + (c.codingPath.map(\.stringValue).joined(separator: ".").nilIfEmpty ?? "top level")
    case DecodingError.dataCorrupted: return "not valid JSON"
    default: return error.localizedDescription
    }
}

extension String {
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}

// MARK: - Counts

/// Counts and sums over a report's recordings.
struct ReportTotals: Sendable {
    var ok = 0, partial = 0, failed = 0, unreadable = 0, participants = 0
    var duration = 0.0, talk = 0.0, overlap = 0.0
    var recordings: Int { ok + partial + failed + unreadable }

    init(_ recordings: [ReportRecording]) {
        for r in recordings {
            switch r.status {
            case .ok: ok += 1
            case .partial: partial += 1
            case .failed: failed += 1
            case .unreadable: unreadable += 1
            }
            participants += r.participants.count
            duration += r.duration ?? 0
            talk += r.talk ?? 0
            overlap += r.overlap ?? 0
        }
    }

    /// `parley report: 40 recordings: 37 ok, 1 partial, 2 failed, 0 unreadable; 81 participants,
    /// 0.412 h of recordings, 61.3% with talk`.
    var line: String {
        let n = recordings
        var s = "parley report: \(n) recording\(n == 1 ? "" : "s"): \(ok) ok, \(partial) partial, \(failed) failed, "
            + "\(unreadable) unreadable; \(participants) participant\(participants == 1 ? "" : "s"), "
            + fixed(duration / 3600, 3) + " h of recordings"
        if duration > 0 { s += ", " + percent(talk / duration) + " with talk" }
        return s
    }
}

// MARK: - Tables

/// The CSV table (header in `parley report --help`).
func reportCSV(_ recordings: [ReportRecording]) -> String {
    func num(_ x: Double?) -> String { x.map { fixed($0, 3) } ?? "" }
    func ratio(_ x: Double?) -> String { x.map { fixed($0, 4) } ?? "" }
    var out = "recording,participant,status,duration_s,talk_s,share,fraction_of_meeting,turns,longest_turn_s,"
        + "overlap_s,interruptions,interrupted,result,error\n"
    for r in recordings {
        let has = r.duration != nil
        let fraction = r.duration.flatMap { d in r.talk.map { d > 0 ? $0 / d : 0 } }
        let fields = [csvField(r.recording), "", r.status.rawValue, num(r.duration), num(r.talk), "", ratio(fraction),
                      has ? "\(r.turns)" : "", has ? num(r.longestTurn) : "", num(r.overlap),
                      has ? "\(r.interruptionCount)" : "", "", csvField(r.result ?? ""), csvField(r.error ?? "")]
        out += fields.joined(separator: ",") + "\n"
        for p in r.participants {
            let fields = [csvField(r.recording), csvField(p.name), r.status.rawValue, num(r.duration), num(p.talkTime),
                          ratio(p.shareOfTalk), ratio(p.fractionOfMeeting), "\(p.turns)", num(p.longestTurn), num(p.overlapTime),
                          "\(p.interruptionsMade)", "\(p.timesInterrupted)", csvField(r.result ?? ""), ""]
            out += fields.joined(separator: ",") + "\n"
        }
    }
    return out
}

/// The JSON document, schema `parley.report/1` (fields in `parley report --help`).
func reportJSON(_ recordings: [ReportRecording], directory: String, version: String) -> String {
    func num(_ x: Double?) -> String { x.map { fixed($0, 3) } ?? "null" }
    let t = ReportTotals(recordings)
    var out = "{\n  \"schema\": \"parley.report/1\",\n  \"parley_version\": \(jsonString(version)),\n"
    out += "  \"directory\": \(jsonString(directory)),\n"
    out += "  \"totals\": {\"recordings\": \(t.recordings), \"ok\": \(t.ok), \"partial\": \(t.partial), "
        + "\"failed\": \(t.failed), \"unreadable\": \(t.unreadable), \"participants\": \(t.participants), "
        + "\"duration_s\": \(num(t.duration)), \"talk_s\": \(num(t.talk)), \"overlap_s\": \(num(t.overlap))},\n"
    out += "  \"recordings\": ["
    for (i, r) in recordings.enumerated() {
        out += i == 0 ? "\n" : ",\n"
        let has = r.duration != nil
        out += "    {\"recording\": \(jsonString(r.recording)), \"status\": \(jsonString(r.status.rawValue)), "
        out += "\"result\": \(jsonString(r.result)), \"error\": \(jsonString(r.error)),\n"
        out += "     \"duration_s\": \(num(r.duration)), \"talk_s\": \(num(r.talk)), \"overlap_s\": \(num(r.overlap)), "
        out += "\"turns\": \(has ? "\(r.turns)" : "null"), \"interruptions\": \(has ? "\(r.interruptionCount)" : "null"),\n"
        out += "     \"participants\": ["
        out += r.participants.map { p in
            "{\"name\": \(jsonString(p.name)), " + participantFiguresJSON(p) + "}"
        }.joined(separator: ",\n       ")
        out += "]}"
    }
    out += recordings.isEmpty ? "]\n}\n" : "\n  ]\n}\n"
    return out
}

// MARK: - Picture

/// The most recordings drawn as bars; more are drawn as histograms.
let reportBarLimit = 40

/// The SVG overview: share bars for up to ``reportBarLimit`` recordings, histograms beyond.
func reportSVG(_ recordings: [ReportRecording], version: String) -> String {
    let width = 1000.0
    let t = ReportTotals(recordings)
    var body = ""
    var height: Double
    func px(_ v: Double) -> String { fixed(v, 1) }
    if recordings.count <= reportBarLimit {
        let label = 300.0, plot = width - label - 90
        var y = 44.0
        for r in recordings {
            body += "<text x=\"8\" y=\"\(px(y + 15))\" class=\"name\">\(xmlEscaped(shortened(r.recording, 44)))</text>\n"
            body += "<rect x=\"\(px(label))\" y=\"\(px(y))\" width=\"\(px(plot))\" height=\"20\" class=\"lane\"/>\n"
            if !r.participants.contains(where: { $0.shareOfTalk > 0 }) {
                let why = r.status == .failed || r.status == .unreadable ? r.status.rawValue
                    : r.participants.isEmpty ? "no participants" : "no talk"
                body += "<text x=\"\(px(label + 6))\" y=\"\(px(y + 15))\" class=\"note\">\(why)</text>\n"
            }
            var x = label
            for (i, p) in r.participants.enumerated() {
                let w = plot * max(0, min(1, p.shareOfTalk))
                let tip = "\(p.name): \(percent(p.shareOfTalk)) of talk, \(clock(p.talkTime))"
                body += "<rect x=\"\(px(x))\" y=\"\(px(y))\" width=\"\(px(w))\" height=\"20\" "
                    + "fill=\"\(participantPalette[i % participantPalette.count])\"><title>\(xmlEscaped(tip))</title></rect>\n"
                if w >= 60 {
                    body += "<text x=\"\(px(x + 4))\" y=\"\(px(y + 14))\" class=\"bar\">"
                        + "\(xmlEscaped(shortened(p.name, Int(w / 7) - 6))) \(percent(p.shareOfTalk))</text>\n"
                }
                x += w
            }
            let right = r.duration.map { d in clock(d) + (r.status == .partial ? " partial" : "") } ?? ""
            body += "<text x=\"\(px(label + plot + 6))\" y=\"\(px(y + 15))\" class=\"note\">\(right)</text>\n"
            y += 26
        }
        height = y + 16
    } else {
        var shares: [Double] = [], fractions: [Double] = []
        for r in recordings {
            shares += r.participants.map(\.shareOfTalk)
            if let d = r.duration, d > 0, let talk = r.talk { fractions.append(talk / d) }
        }
        body += histogramSVG(shares, title: "share of talk per participant (\(shares.count) participants)",
                             x: 60, y: 50, width: width - 90, height: 220)
        body += histogramSVG(fractions, title: "fraction of each recording with talk (\(fractions.count) recordings)",
                             x: 60, y: 340, width: width - 90, height: 220)
        height = 620
    }
    let title = "\(t.recordings) recording\(t.recordings == 1 ? "" : "s"): \(t.ok) ok, \(t.partial) partial, "
        + "\(t.failed) failed, \(t.unreadable) unreadable; " + fixed(t.duration / 3600, 2) + " h of recordings"
    var svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height.rounded(.up)))\" "
        + "viewBox=\"0 0 \(Int(width)) \(Int(height.rounded(.up)))\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
    svg += "<!-- parley \(xmlEscaped(version)) report -->\n"
    svg += "<style>.lane{fill:#f3f3f3}.name{font-size:12px;fill:#222}.note{font-size:11px;fill:#666}"
        + ".bar{font-size:11px;fill:#fff}.hist{fill:#1f77b4}.axis{stroke:#444}.grid{stroke:#000;stroke-opacity:0.08}"
        + ".tick{font-size:11px;fill:#444;text-anchor:middle}.count{font-size:11px;fill:#444;text-anchor:end}"
        + ".title{font-size:15px;font-weight:bold;fill:#111}.sub{font-size:13px;fill:#222}</style>\n"
    svg += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
    svg += "<text x=\"8\" y=\"24\" class=\"title\">\(xmlEscaped(title))</text>\n"
    return svg + body + "</svg>\n"
}

/// A histogram of `values` in [0, 1] over 20 bins of 5%, with its title above, counts on the
/// left and percentages below.
private func histogramSVG(_ values: [Double], title: String, x: Double, y: Double, width: Double, height: Double) -> String {
    func px(_ v: Double) -> String { fixed(v, 1) }
    let bins = 20
    var counts = [Int](repeating: 0, count: bins)
    for v in values where v.isFinite { counts[min(bins - 1, max(0, Int(v * Double(bins))))] += 1 }
    let top = max(1, counts.max() ?? 1)
    let plotTop = y + 16, bottom = y + height
    var out = "<text x=\"\(px(x))\" y=\"\(px(y))\" class=\"sub\">\(xmlEscaped(title))</text>\n"
    // Count axis: 0, half and the highest bin.
    for c in Set([0, top / 2, top]).sorted() {
        let cy = bottom - (bottom - plotTop) * Double(c) / Double(top)
        out += "<line x1=\"\(px(x))\" y1=\"\(px(cy))\" x2=\"\(px(x + width))\" y2=\"\(px(cy))\" class=\"grid\"/>"
        out += "<text x=\"\(px(x - 6))\" y=\"\(px(cy + 4))\" class=\"count\">\(c)</text>\n"
    }
    let bw = width / Double(bins)
    for (i, c) in counts.enumerated() where c > 0 {
        let h = (bottom - plotTop) * Double(c) / Double(top)
        out += "<rect x=\"\(px(x + Double(i) * bw + 1))\" y=\"\(px(bottom - h))\" width=\"\(px(bw - 2))\" height=\"\(px(h))\" class=\"hist\">"
            + "<title>\(i * 5)-\(i * 5 + 5)%: \(c)</title></rect>\n"
    }
    out += "<line x1=\"\(px(x))\" y1=\"\(px(bottom))\" x2=\"\(px(x + width))\" y2=\"\(px(bottom))\" class=\"axis\"/>\n"
    for i in stride(from: 0, through: bins, by: 2) {
        out += "<text x=\"\(px(x + Double(i) * bw))\" y=\"\(px(bottom + 16))\" class=\"tick\">\(i * 5)%</text>"
    }
    return out + "\n"
}

/// `s` cut to `limit` characters, with an ellipsis in the middle when cut.
private func shortened(_ s: String, _ limit: Int) -> String {
    guard limit > 3, s.count > limit else { return limit > 3 ? s : "" }
    let keep = limit - 1
    return String(s.prefix(keep / 2)) + "…" + String(s.suffix(keep - keep / 2))
}

// MARK: - The command

private func runReport(_ args: [String]) -> Int32 {
    let scanner: ArgumentScanner
    do {
        scanner = try ArgumentScanner(args, valued: ["format", "output", "svg"], flagNames: [])
    } catch {
        printError("parley report: \(error)\nUsage: parley report [--format csv|json] [--output PATH] [--svg PATH] DIR")
        return ExitStatus.usage
    }
    let format = scanner.value("format") ?? "csv"
    guard format == "csv" || format == "json" else {
        printError("parley report: --format must be csv or json, got '\(format)'")
        return ExitStatus.usage
    }
    guard scanner.positionals.count == 1 else {
        printError("parley report: expected one DIR, got \(scanner.positionals.count)\n"
                   + "Usage: parley report [--format csv|json] [--output PATH] [--svg PATH] DIR")
        return ExitStatus.usage
    }
    var directory = scanner.positionals[0]
    while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
    let recordings: [ReportRecording]
    do {
        recordings = try readReport(directory: directory)
    } catch {
        printError("parley report: \(error)")
        return ExitStatus.usage
    }
    let table = format == "csv" ? reportCSV(recordings) : reportJSON(recordings, directory: directory, version: parleyVersion)
    do {
        if let output = scanner.value("output") {
            try table.write(toFile: output, atomically: true, encoding: .utf8)
        } else {
            FileHandle.standardOutput.write(Data(table.utf8))
        }
        if let svg = scanner.value("svg") {
            try reportSVG(recordings, version: parleyVersion).write(toFile: svg, atomically: true, encoding: .utf8)
        }
    } catch {
        printError("parley report: cannot write: \(error.localizedDescription)")
        return ExitStatus.failure
    }
    let totals = ReportTotals(recordings)
    for r in recordings where r.status == .unreadable {
        printError("parley report: \(directory)/\(r.result ?? r.recording): \(r.error ?? "unreadable")")
    }
    if recordings.isEmpty {
        printError("parley report: \(directory) holds no results (write them with "
                   + "'parley detect --format json --output-dir \(directory) ...')")
        return ExitStatus.failure
    }
    printError(totals.line)
    return totals.unreadable > 0 ? ExitStatus.failure : ExitStatus.success
}
