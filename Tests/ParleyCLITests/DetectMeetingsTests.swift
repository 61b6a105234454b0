import Foundation
import Testing

// `parley detect --meetings-from MANIFEST.csv`: many meetings from one CSV manifest, each
// analysed as `--meeting` does, on standard output or one result per meeting in
// `--output-dir`. The recordings are cut from SampleMedia's conversation with sox.

/// Four short recordings of SampleMedia's conversation, each a participant's own file.
private struct MeetingsFixture {
    let dir: URL
    let armelle: String, carlo: String, reader: String, late: String

    func remove() { try? FileManager.default.removeItem(at: dir) }

    /// Writes `text` as the manifest `name` in the fixture's directory.
    func manifest(_ text: String, name: String = "meetings.csv") throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }
}

private func makeMeetingsFixture() throws -> MeetingsFixture {
    let dir = try detectTemporaryDirectory()
    let c = detectSampleMedia.path + "/conversation/"
    let names = ["armelle.wav", "carlo.flac", "reader 8k.wav", "armelle-late.flac"]
    let recipes: [[String]] = [
        [c + "armelle.wav", dir.appendingPathComponent(names[0]).path, "trim", "3.5", "3"],
        [c + "carlo.wav", dir.appendingPathComponent(names[1]).path, "trim", "4.5", "3"],
        [c + "reader.wav", "-r", "8000", dir.appendingPathComponent(names[2]).path, "trim", "0", "3.5"],
        [c + "armelle.wav", "-r", "24000", dir.appendingPathComponent(names[3]).path, "trim", "12", "3"],
    ]
    for r in recipes { try detectSox(r) }
    let p = names.map { dir.appendingPathComponent($0).path }
    return MeetingsFixture(dir: dir, armelle: p[0], carlo: p[1], reader: p[2], late: p[3])
}

/// A CSV field as the manifest writes it (quoted when needed).
private func field(_ s: String) -> String {
    s.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" }) ? "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : s
}

@Test(.enabled(if: detectHasSampleMedia))
func eachMeetingOfAManifestGetsWhatMeetingPrintsForIt() throws {
    let fx = try makeMeetingsFixture()
    defer { fx.remove() }
    // Columns in another order plus one the tool ignores, rows of the two meetings mixed,
    // CRLF line ends and a byte-order mark; one participant named by its file's stem.
    let review = "review, \"second\""
    let rows = [
        "path,offset_s,meeting,participant,notes",
        "\(field(fx.armelle)),0,standup,armelle,first",
        "\(field(fx.reader)),,\(field(review)),reader 8k,",
        "\(field(fx.carlo)),1.25,standup,,late join",
        "\(field(fx.late)),0.5,\(field(review)),armelle-late,",
    ]
    let manifest = try fx.manifest("\u{FEFF}" + rows.joined(separator: "\r\n") + "\r\n")
    let meetings: [(name: String, files: [String])] = [
        ("standup", [fx.armelle, fx.carlo + "@1.25"]),
        (review, [fx.reader, fx.late + "@0.5"]),
    ]

    let out = fx.dir.appendingPathComponent("out")
    let r = try runDetectCLI(["detect", "--format", "json", "--jobs", "2", "--meetings-from", manifest,
                              "--output-dir", out.path])
    #expect(r.status == 0, "\(r.stderr)")
    let summary = r.stderr.split(separator: "\n").last.map(String.init) ?? ""
    #expect(summary.hasPrefix("parley detect: 2 meetings: 2 ok, 0 partial, 0 failed, 0 skipped; "), "\(summary)")
    let names = meetings.map { detectDocumentedResultName($0.name, ext: "json") }
    #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out.path)) == Set(names + ["failed.tsv"]))
    for (m, name) in zip(meetings, names) {
        let single = try runDetectCLI(["detect", "--format", "json", "--meeting", "--name", m.name] + m.files)
        #expect(single.status == 0, "\(single.stderr)")
        let result = try String(contentsOf: out.appendingPathComponent(name), encoding: .utf8)
        #expect(result == single.stdout, "\(m.name)")
        #expect(result.contains("\"fraction_of_meeting\"") && result.contains("\"segments\": [["), "\(m.name): no talk")
    }
    #expect(try String(contentsOf: out.appendingPathComponent("failed.tsv"), encoding: .utf8).isEmpty)

    // On standard output (the manifest read from standard input): the meetings one after
    // another, as the two --meeting runs print them.
    let csv = try runDetectCLI(["detect", "--format", "csv", "--meetings-from", "-"],
                               standardInput: .file(URL(fileURLWithPath: manifest)))
    #expect(csv.status == 0, "\(csv.stderr)")
    var expected = "file,participant,start_s,end_s\n"
    for m in meetings {
        let single = try runDetectCLI(["detect", "--format", "csv", "--meeting", "--name", m.name] + m.files)
        expected += single.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropFirst().joined(separator: "\n")
    }
    #expect(csv.stdout == expected)
}

@Test(.enabled(if: detectHasSampleMedia))
func aMeetingWithAMissingFileIsPartialAndOneWithNoneIsRetried() throws {
    let fx = try makeMeetingsFixture()
    defer { fx.remove() }
    let missing = fx.dir.appendingPathComponent("missing.wav").path
    let manifest = try fx.manifest("""
        meeting,participant,path,offset_s
        solo,armelle,\(field(fx.armelle)),0
        solo,ghost,\(field(missing)),0
        gone,nobody,\(field(missing)),2
        pair,carlo,\(field(fx.carlo)),0
        pair,reader,\(field(fx.reader)),0

        """)
    let out = fx.dir.appendingPathComponent("out")
    let run = { try runDetectCLI(["detect", "--format", "csv", "--meetings-from", manifest, "--output-dir", out.path,
                                  "--skip-existing"]) }
    let r = try run()
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stderr.contains("parley detect: meeting solo: \(missing): no such file"), "\(r.stderr)")
    let summary = r.stderr.split(separator: "\n").last.map(String.init) ?? ""
    #expect(summary.hasPrefix("parley detect: 3 meetings: 1 ok, 1 partial, 1 failed, 0 skipped; "), "\(summary)")
    let results = ["solo", "pair"].map { detectDocumentedResultName($0, ext: "csv") }
    #expect(Set(try FileManager.default.contentsOfDirectory(atPath: out.path)) == Set(results + ["failed.tsv"]))
    let failed = try String(contentsOf: out.appendingPathComponent("failed.tsv"), encoding: .utf8)
    #expect(failed == "gone\t\(missing): no such file\nsolo\tpartial: \(missing): no such file\n", "\(failed)")
    // The partial meeting's result holds the participant whose file was read.
    let solo = try String(contentsOf: out.appendingPathComponent(results[0]), encoding: .utf8)
    #expect(solo.contains("solo,armelle,") && !solo.contains("ghost"), "\(solo)")

    // Resuming: the meetings with a result are skipped, the one without is tried again.
    let again = try run()
    #expect(again.status == 1)
    let summary2 = again.stderr.split(separator: "\n").last.map(String.init) ?? ""
    #expect(summary2.hasPrefix("parley detect: 3 meetings: 0 ok, 0 partial, 1 failed, 2 skipped; "), "\(summary2)")
}

@Test(.enabled(if: detectHasSampleMedia))
func shardsSplitAManifestByMeetingExactlyOnce() throws {
    let fx = try makeMeetingsFixture()
    defer { fx.remove() }
    let names = (1...7).map { "call-\($0)" }
    var text = "meeting,participant,path,offset_s\n"
    for (i, n) in names.enumerated() {
        text += "\(n),a,\(field(i % 2 == 0 ? fx.armelle : fx.carlo)),0\n"
        text += "\(n),b,\(field(fx.reader)),\(Double(i) * 0.5)\n"
    }
    let manifest = try fx.manifest(text)
    var seen: [String: Int] = [:]
    for k in 1...3 {
        let r = try runDetectCLI(["detect", "--format", "csv", "--meetings-from", manifest, "--shard", "\(k)/3"])
        #expect(r.status == 0, "\(r.stderr)")
        let files = Set(try #require(detectParseSegmentsCSV(r.stdout)).map(\.file))
        for f in files {
            seen[f, default: 0] += 1
            #expect(detectFNVShard(f, of: 3) == k, "\(f) in shard \(k)")
        }
    }
    #expect(seen == Dictionary(uniqueKeysWithValues: names.map { ($0, 1) }))
}

@Test(arguments: [
    ("meeting,participant,path\nm,a,x.wav\n", "line 1: the header must name the columns meeting,participant,path,offset_s (missing: offset_s)"),
    ("", "is empty"),
    ("meeting,participant,path,offset_s\nm,a,x.wav\n", "line 2: 3 fields"),
    ("meeting,participant,path,offset_s\nm,a,x.wav,-1\n", "line 2: offset_s '-1' is not a number"),
    ("meeting,participant,path,offset_s\nm,a,x.wav,soon\n", "line 2: offset_s 'soon'"),
    ("meeting,participant,path,offset_s\nm,a,x.wav,0\n\nm,a,y.wav,0\n", "line 4: meeting 'm' names participant 'a' twice (first on line 2)"),
    ("meeting,participant,path,offset_s\n,a,x.wav,0\n", "line 2: the meeting is empty"),
    ("meeting,participant,path,offset_s\nm,a,,0\n", "line 2: the path is empty"),
    ("meeting,participant,path,offset_s\nm,\"a,x.wav,0\n", "line 2: a quoted field is not closed"),
    ("meeting,participant,path,offset_s\nm,a\"b,x.wav,0\n", "line 2: a double quote inside an unquoted field"),
    ("meeting,participant,path,offset_s\nm,\"a\"b,x.wav,0\n", "line 2: text after the closing quote"),
])
func aMalformedManifestIsAUsageErrorNamingTheLine(text: String, message: String) throws {
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("m.csv").path
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    let out = dir.appendingPathComponent("out")
    let r = try runDetectCLI(["detect", "--meetings-from", path, "--output-dir", out.path])
    #expect(r.status == 2)
    #expect(r.stderr.contains("parley detect: the manifest \(path)"), "\(r.stderr)")
    #expect(r.stderr.contains(message), "\(r.stderr)")
    #expect(!FileManager.default.fileExists(atPath: out.path))
}

@Test(arguments: [
    ["detect", "--meetings-from", "m.csv", "a.wav"],
    ["detect", "--meetings-from", "m.csv", "--files-from", "list.txt"],
    ["detect", "--meetings-from", "m.csv", "--meeting"],
    ["detect", "--meetings-from", ""],
    ["detect", "--meetings-from", "/nonexistent/m.csv"],
])
func meetingsFromUsageErrorsExitWithStatus2(args: [String]) throws {
    let r = try runDetectCLI(args)
    #expect(r.status == 2, "\(args): \(r.stderr)")
    #expect(r.stderr.contains("parley detect:") && r.stdout.isEmpty)
}
