import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

// `parley report DIR`: the JSON results of `parley detect --output-dir` and its failed.tsv
// merged into one CSV or JSON table and an SVG overview. The results are made by real
// `parley detect` runs over cuts of SampleMedia, and every figure of the report is checked
// against the result it came from.

/// Short recordings cut from SampleMedia with sox, in a temporary directory.
private struct ReportFixture {
    let dir: URL

    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
    func remove() { try? FileManager.default.removeItem(at: dir) }

    func write(_ text: String, to name: String) throws -> String {
        try Data(text.utf8).write(to: dir.appendingPathComponent(name))
        return path(name)
    }
}

private func makeReportFixture() throws -> ReportFixture {
    let dir = try detectTemporaryDirectory()
    let c = detectSampleMedia.path + "/conversation/"
    let fx = ReportFixture(dir: dir)
    try detectSox([c + "armelle.wav", fx.path("armelle.wav"), "trim", "3.5", "3"])
    try detectSox([c + "carlo.wav", "-r", "8000", fx.path("carlo.flac"), "trim", "4.5", "3"])
    try detectSox([c + "reader.wav", fx.path("reader.wav"), "trim", "0", "3.5"])
    try detectSox([detectSampleMedia.path + "/noise/vinyl-hiss.wav", fx.path("hiss.wav"), "trim", "0", "2"])
    // A WAV whose data stops a quarter of the way through what its header announces.
    let whole = try Data(contentsOf: URL(fileURLWithPath: fx.path("reader.wav")))
    try whole.prefix(44 + (whole.count - 44) / 4).write(to: dir.appendingPathComponent("cut.wav"))
    return fx
}

/// Rows of a CSV table without quoted fields, as dictionaries by the header's names.
private func csvRows(_ text: String) -> (header: String, rows: [[String: String]]) {
    let lines = text.split(separator: "\n").map(String.init)
    guard let header = lines.first else { return ("", []) }
    let names = header.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    let rows = lines.dropFirst().map { line -> [String: String] in
        let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        return Dictionary(uniqueKeysWithValues: zip(names, fields))
    }
    return (header, rows)
}

/// The first recording of the parley.detect/1 result `name` in `dir`.
private func detectResult(_ dir: URL, _ name: String) throws -> [String: Any] {
    let data = try Data(contentsOf: dir.appendingPathComponent(name))
    let doc = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let recordings = try #require(doc["recordings"] as? [[String: Any]])
    return try #require(recordings.first)
}

private func number(_ x: Any?) -> Double? { (x as? NSNumber)?.doubleValue }

/// `x` as the report writes it, with `decimals` decimals.
private func text(_ x: Any?, _ decimals: Int) -> String? {
    number(x).map { String(format: "%.\(decimals)f", $0) }
}

private let reportHeader = "recording,participant,status,duration_s,talk_s,share,fraction_of_meeting,turns,"
    + "longest_turn_s,overlap_s,interruptions,interrupted,result,error"

@Test(.enabled(if: detectHasSampleMedia))
func theCSVReportHoldsEveryResultAndEveryFailure() throws {
    let fx = try makeReportFixture()
    defer { fx.remove() }
    let good = ["armelle.wav", "carlo.flac", "reader.wav", "hiss.wav"].map(fx.path)
    let missing = fx.path("missing.wav")
    let list = try fx.write((good + [fx.path("cut.wav"), missing]).joined(separator: "\n") + "\n", to: "list.txt")
    let out = fx.dir.appendingPathComponent("out")
    let detect = try runDetectCLI(["detect", "--format", "json", "--files-from", list, "--output-dir", out.path])
    #expect(detect.status == 1, "\(detect.stderr)")

    let r = try runDetectCLI(["report", out.path])
    #expect(r.status == 0, "\(r.stderr)")
    let (header, rows) = csvRows(r.stdout)
    let seconds = rows.filter { $0["participant"] == "" }.compactMap { Double($0["duration_s"] ?? "") }.reduce(0, +)
    #expect(r.stderr.contains("parley report: 6 recordings: 4 ok, 1 partial, 1 failed, 0 unreadable; 5 participants, "
        + String(format: "%.3f", seconds / 3600) + " h of recordings, "), "\(r.stderr)")
    #expect(header == reportHeader)
    // Sorted by recording, each recording's totals row first.
    let recordings = rows.filter { $0["participant"] == "" }.map { $0["recording"]! }
    #expect(recordings == (good + [fx.path("cut.wav"), missing]).sorted())
    #expect(rows.count == 6 + 5)

    for path in good {
        let name = detectDocumentedResultName(path, ext: "json")
        let result = try detectResult(out, name)
        let total = try #require(rows.first { $0["recording"] == path && $0["participant"] == "" })
        #expect(total["status"] == "ok" && total["result"] == name && total["error"] == "")
        #expect(total["duration_s"] == text(result["duration_s"], 3))
        #expect(total["talk_s"] == text(result["talking_s"], 3))
        #expect(total["overlap_s"] == text(result["overlap_s"], 3))
        let participant = try #require((result["participants"] as? [[String: Any]])?.first)
        let row = try #require(rows.first { $0["recording"] == path && $0["participant"] != "" })
        #expect(row["participant"] == participant["name"] as? String)
        for key in ["talk_s", "longest_turn_s", "overlap_s"] { #expect(row[key] == text(participant[key], 3), "\(key)") }
        for key in ["share", "fraction_of_meeting"] { #expect(row[key] == text(participant[key], 4), "\(key)") }
        for key in ["turns", "interruptions", "interrupted"] { #expect(row[key] == text(participant[key], 0), "\(key)") }
        #expect(total["turns"] == row["turns"])
    }
    // Speech was found in the three voices, none in the hiss.
    for stem in ["armelle", "carlo", "reader"] {
        let row = try #require(rows.first { $0["participant"] == stem })
        #expect(Double(row["talk_s"]!)! > 0.5 && row["share"] == "1.0000", "\(stem)")
    }
    #expect(rows.first { $0["participant"] == "hiss" }?["talk_s"] == "0.000")

    let cut = try #require(rows.first { $0["recording"] == fx.path("cut.wav") && $0["participant"] == "" })
    #expect(cut["status"] == "partial" && cut["error"]!.contains("truncated"), "\(cut)")
    let gone = try #require(rows.first { $0["recording"] == missing })
    #expect(gone["status"] == "failed" && gone["error"] == "no such file" && gone["result"] == "" && gone["talk_s"] == "")

    // --output and --svg write files and leave standard output empty.
    let table = fx.path("table.csv"), svg = fx.path("overview.svg")
    let w = try runDetectCLI(["report", "--output", table, "--svg", svg, out.path + "/"])
    #expect(w.status == 0 && w.stdout.isEmpty)
    #expect(try String(contentsOfFile: table, encoding: .utf8) == r.stdout)
    let picture = try String(contentsOfFile: svg, encoding: .utf8)
    #expect(svgIsWellFormed(picture))
    for stem in ["armelle", "carlo", "reader"] { #expect(picture.contains("<title>\(stem): 100.0% of talk"), "\(stem)") }
    #expect(picture.contains(">failed</text>") && picture.contains(">no talk</text>"))
}

@Test(.enabled(if: detectHasSampleMedia))
func theJSONReportOfMeetingsMatchesTheirResults() throws {
    let fx = try makeReportFixture()
    defer { fx.remove() }
    let manifest = try fx.write("""
        meeting,participant,path,offset_s
        standup,armelle,\(fx.path("armelle.wav")),0
        standup,carlo,\(fx.path("carlo.flac")),1.5
        standup,reader,\(fx.path("reader.wav")),0.5
        review,reader,\(fx.path("reader.wav")),0
        review,ghost,\(fx.path("missing.wav")),0
        gone,nobody,\(fx.path("missing.wav")),0

        """, to: "meetings.csv")
    let out = fx.dir.appendingPathComponent("out")
    let detect = try runDetectCLI(["detect", "--format", "json", "--meetings-from", manifest, "--output-dir", out.path])
    #expect(detect.status == 1, "\(detect.stderr)")

    let r = try runDetectCLI(["report", "--format", "json", out.path])
    #expect(r.status == 0, "\(r.stderr)")
    let doc = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    #expect(doc["schema"] as? String == "parley.report/1")
    #expect(doc["directory"] as? String == out.path)
    let totals = try #require(doc["totals"] as? [String: Any])
    #expect(totals["recordings"] as? Int == 3 && totals["ok"] as? Int == 1 && totals["partial"] as? Int == 1)
    #expect(totals["failed"] as? Int == 1 && totals["unreadable"] as? Int == 0 && totals["participants"] as? Int == 4)
    let recordings = try #require(doc["recordings"] as? [[String: Any]])
    #expect(recordings.map { $0["recording"] as? String } == ["gone", "review", "standup"])

    let gone = recordings[0]
    #expect(gone["status"] as? String == "failed" && gone["result"] is NSNull && gone["duration_s"] is NSNull)
    #expect(gone["error"] as? String == fx.path("missing.wav") + ": no such file")
    let review = recordings[1]
    #expect(review["status"] as? String == "partial")
    #expect((review["error"] as? String)?.contains("missing.wav: no such file") == true)

    var sum = 0.0
    for rec in recordings.dropFirst() {
        let name = try #require(rec["result"] as? String)
        #expect(name == detectDocumentedResultName(rec["recording"] as! String, ext: "json"))
        let result = try detectResult(out, name)
        #expect(number(rec["talk_s"]) == number(result["talking_s"]))
        #expect(number(rec["duration_s"]) == number(result["duration_s"]))
        #expect(rec["interruptions"] as? Int == (result["interruptions"] as? [Any])?.count)
        sum += number(rec["duration_s"]) ?? 0
        let mine = try #require(rec["participants"] as? [[String: Any]])
        let theirs = try #require(result["participants"] as? [[String: Any]])
        #expect(mine.count == theirs.count)
        for (a, b) in zip(mine, theirs) {
            #expect(a["name"] as? String == b["name"] as? String)
            for key in ["talk_s", "share", "fraction_of_meeting", "turns", "longest_turn_s", "overlap_s",
                        "interruptions", "interrupted"] {
                #expect(number(a[key]) == number(b[key]), "\(key)")
            }
        }
        #expect(rec["turns"] as? Int == theirs.reduce(0) { $0 + ($1["turns"] as? Int ?? 0) })
    }
    #expect(abs((number(totals["duration_s"]) ?? 0) - sum) < 0.002)
    let standup = try #require(recordings[2]["participants"] as? [[String: Any]])
    #expect(standup.map { $0["name"] as? String } == ["armelle", "carlo", "reader"])
    #expect(abs(standup.reduce(0) { $0 + (number($1["share"]) ?? 0) } - 1) < 0.001)
}

@Test(.enabled(if: detectHasSampleMedia))
func unreadableResultsAreReportedAndTheRestStillCounted() throws {
    let fx = try makeReportFixture()
    defer { fx.remove() }
    let out = fx.dir.appendingPathComponent("out")
    let detect = try runDetectCLI(["detect", "--format", "json", "--output-dir", out.path, fx.path("armelle.wav")])
    #expect(detect.status == 0, "\(detect.stderr)")
    // A result cut short, another program's JSON, a temporary file, a CSV result and a folder.
    let name = detectDocumentedResultName(fx.path("reader.wav"), ext: "json")
    let whole = try runDetectCLI(["detect", "--format", "json", fx.path("reader.wav")]).stdout
    try Data(whole.utf8.prefix(200)).write(to: out.appendingPathComponent(name))
    try Data(#"{"schema": "other/2", "recordings": []}"#.utf8).write(to: out.appendingPathComponent("other.json"))
    try Data("{".utf8).write(to: out.appendingPathComponent(".parley-host-1-1.json"))
    try Data("file,participant,start_s,end_s\n".utf8).write(to: out.appendingPathComponent("x~0000000000000000.csv"))
    try FileManager.default.createDirectory(at: out.appendingPathComponent("sub.json"), withIntermediateDirectories: false)

    let r = try runDetectCLI(["report", out.path])
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr.contains("parley report: \(out.path)/\(name): unreadable result: not valid JSON"), "\(r.stderr)")
    #expect(r.stderr.contains("parley report: \(out.path)/other.json: unreadable result: schema other/2"), "\(r.stderr)")
    #expect(r.stderr.contains("3 recordings: 1 ok, 0 partial, 0 failed, 2 unreadable"), "\(r.stderr)")
    let (_, rows) = csvRows(r.stdout)
    #expect(rows.filter { $0["status"] == "unreadable" }.map { $0["result"] } == [name, "other.json"])
    #expect(rows.filter { $0["status"] == "ok" }.count == 2)
}

@Test func reportUsageErrors() throws {
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("plain.txt")
    try Data("x".utf8).write(to: file)
    let cases: [([String], String)] = [
        (["report"], "expected one DIR, got 0"),
        (["report", dir.path, dir.path], "expected one DIR, got 2"),
        (["report", "--format", "xml", dir.path], "--format must be csv or json, got 'xml'"),
        (["report", "--colour", dir.path], "unknown option --colour"),
        (["report", dir.appendingPathComponent("absent").path], "absent: no such directory"),
        (["report", file.path], "plain.txt: not a directory"),
    ]
    for (args, message) in cases {
        let r = try runDetectCLI(args)
        #expect(r.status == 2, "\(args)")
        #expect(r.stderr.contains(message), "\(args): \(r.stderr)")
    }
    let empty = try runDetectCLI(["report", dir.path])
    #expect(empty.status == 1 && empty.stderr.contains("holds no results"), "\(empty.stderr)")
    #expect(empty.stdout == reportHeader + "\n")
}

@Test(.enabled(if: detectHasSampleMedia))
func manyRecordingsAreDrawnAsHistograms() throws {
    let fx = try makeReportFixture()
    defer { fx.remove() }
    // 45 names for two recordings: 30 of speech, 15 of hiss.
    var paths: [String] = []
    for i in 0..<45 {
        let link = fx.path("r\(i).wav")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: fx.path(i < 30 ? "reader.wav" : "hiss.wav"))
        paths.append(link)
    }
    let list = try fx.write(paths.joined(separator: "\n") + "\n", to: "list.txt")
    let out = fx.dir.appendingPathComponent("out")
    let detect = try runDetectCLI(["detect", "--format", "json", "--files-from", list, "--output-dir", out.path])
    #expect(detect.status == 0, "\(detect.stderr)")
    let svg = fx.path("many.svg")
    let r = try runDetectCLI(["report", "--svg", svg, "--format", "json", out.path])
    #expect(r.status == 0, "\(r.stderr)")
    let picture = try String(contentsOfFile: svg, encoding: .utf8)
    #expect(svgIsWellFormed(picture))
    #expect(picture.contains("45 recordings: 45 ok, 0 partial, 0 failed, 0 unreadable"))
    #expect(picture.contains("share of talk per participant (45 participants)"))
    // Every participant is alone in its recording: 30 with all the talk, 15 with none.
    #expect(picture.contains("<title>95-100%: 30</title>") && picture.contains("<title>0-5%: 15</title>"), "\(picture)")
    #expect(!picture.contains("r0.wav"), "bars drawn instead of histograms")
    // The speech recording is mostly talk; the hiss none.
    let reader = try detectResult(out, detectDocumentedResultName(paths[0], ext: "json"))
    let fraction = number(reader["talking_s"])! / number(reader["duration_s"])!
    #expect(picture.contains("<title>\(Int(fraction * 20) * 5)-\(Int(fraction * 20) * 5 + 5)%: 30</title>"), "\(fraction)")
}

/// Whether `svg` parses as XML.
private func svgIsWellFormed(_ svg: String) -> Bool {
    XMLParser(data: Data(svg.utf8)).parse()
}
