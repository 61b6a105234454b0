import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing

// End-to-end tests of `parley detect`: they run the built executable on SampleMedia and on
// fixtures written into a temporary directory, and parse its outputs back.

private func speech16k() -> URL { detectSampleMedia.appendingPathComponent("speech/speech-16k.wav") }

@Test func helpDocumentsTheWholeContract() throws {
    let r = try runDetectCLI(["detect", "--help"])
    #expect(r.status == 0)
    for word in ["--format", "summary", "json", "csv", "rttm", "audacity", "frames", "--output", "--meeting",
                 "--name", "--per-channel", "--per-track", "--timeline", "--jobs", "file,participant,start_s,end_s",
                 "file,time_s,prob", "parley.detect/1", "Exit status", "interrupts", "@", "--model",
                 "offline", "live", "vad_model"] {
        #expect(r.stdout.contains(word), "help lacks \(word)")
    }
}

@Test(arguments: [
    ["detect"],
    ["detect", "--format", "xml", "a.wav"],
    ["detect", "--name", "x", "a.wav"],
    ["detect", "--jobs", "0", "a.wav"],
    ["detect", "--jobs"],
    ["detect", "--colour", "a.wav"],
    ["detect", "--meeting=yes", "a.wav"],
    ["detect", "--model", "fast", "a.wav"],
    ["detect", "--model"],
])
func usageErrorsExitWithStatus2(args: [String]) throws {
    let r = try runDetectCLI(args)
    #expect(r.status == 2)
    #expect(r.stderr.contains("parley detect:"))
    #expect(r.stdout.isEmpty)
}

/// Frame-level agreement of predicted and true segments on a 10 ms grid: (recall, precision).
private func agreement(predicted: [(Double, Double)], truth: [(Double, Double)], duration: Double) -> (Double, Double) {
    let n = Int(duration * 100) + 1
    func raster(_ segs: [(Double, Double)]) -> [Bool] {
        var v = [Bool](repeating: false, count: n)
        for (s, e) in segs {
            var k = max(0, Int((s * 100).rounded()))
            while k < min(n, Int((e * 100).rounded())) { v[k] = true; k += 1 }
        }
        return v
    }
    let p = raster(predicted), t = raster(truth)
    var tp = 0, fp = 0, fn = 0
    for k in 0..<n {
        if p[k] && t[k] { tp += 1 } else if p[k] { fp += 1 } else if t[k] { fn += 1 }
    }
    return (Double(tp) / Double(max(1, tp + fn)), Double(tp) / Double(max(1, tp + fp)))
}

@Test(.enabled(if: detectHasSampleMedia))
func meetingOnTheSampleConversationMatchesItsTruth() throws {
    let files = try detectConversationFiles()
    #expect(files.count >= 2)
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let csvPath = dir.appendingPathComponent("segments.csv").path
    let r = try runDetectCLI(["detect", "--meeting", "--format", "csv", "--output", csvPath] + files.map(\.path))
    #expect(r.status == 0, "\(r.stderr)")
    let rows = try #require(detectParseSegmentsCSV(try String(contentsOfFile: csvPath, encoding: .utf8)))
    #expect(rows.allSatisfy { $0.file == "meeting" })

    let truthText = try String(contentsOf: detectSampleMedia.appendingPathComponent("conversation-truth.csv"), encoding: .utf8)
    var truth: [String: [(Double, Double)]] = [:]
    for line in truthText.split(separator: "\n").dropFirst() {
        let f = line.split(separator: ",")
        truth[String(f[0]), default: []].append((Double(f[1])!, Double(f[2])!))
    }
    #expect(Set(truth.keys) == Set(files.map { $0.deletingPathExtension().lastPathComponent }))
    let duration = (rows.map(\.end) + truth.values.flatMap { $0.map(\.1) }).max()! + 1
    var truthTotal = 0.0, hitTotal = 0.0
    for (name, words) in truth {
        // Talking, as ../shared/tools/meetingeval.py scores it: pauses under 0.5 s bridged.
        var segs: [(Double, Double)] = []
        for w in words.sorted(by: { $0.0 < $1.0 }) {
            if let last = segs.last, w.0 - last.1 < 0.5 { segs[segs.count - 1].1 = max(last.1, w.1) } else { segs.append(w) }
        }
        let predicted = rows.filter { $0.participant == name }.map { ($0.start, $0.end) }
        let (recall, precision) = agreement(predicted: predicted, truth: segs, duration: duration)
        // Wiring, not detector quality (ParleyVoice's tests own that): what is found belongs to
        // the right participant at the right time.
        for p in predicted {
            #expect(segs.contains { $0.0 < p.1 + 0.1 && $0.1 + 0.6 > p.0 }, "\(name): \(p) is no turn of theirs")
        }
        if !predicted.isEmpty { #expect(precision >= 0.7, "\(name): precision \(precision)") }
        let talk = segs.reduce(0) { $0 + $1.1 - $1.0 }
        truthTotal += talk
        hitTotal += recall * talk
    }
    #expect(hitTotal / truthTotal >= 0.3, "overall recall \(hitTotal / truthTotal)")

    let summary = try runDetectCLI(["detect", "--meeting", "--name", "standup"] + files.map(\.path))
    #expect(summary.status == 0)
    #expect(summary.stdout.hasPrefix("standup: \(files.count) participants"))
    for name in truth.keys { #expect(summary.stdout.contains(name)) }
    #expect(summary.stdout.contains("overlap (2+ talking)"))
}

@Test(.enabled(if: detectHasSampleMedia)) func csvAndRttmParseBackToTheSameSegments() throws {
    let files = try detectConversationFiles().map(\.path)
    let csv = try runDetectCLI(["detect", "--meeting", "--name", "m1", "--format", "csv"] + files)
    let rttm = try runDetectCLI(["detect", "--meeting", "--name", "m1", "--format", "rttm"] + files)
    #expect(csv.status == 0 && rttm.status == 0)
    let rows = try #require(detectParseSegmentsCSV(csv.stdout))
    #expect(!rows.isEmpty)
    var fromRTTM: [(String, String, Double, Double)] = []
    for line in rttm.stdout.split(separator: "\n") {
        let f = line.split(separator: " ").map(String.init)
        #expect(f.count == 10 && f[0] == "SPEAKER" && f[2] == "1" && f[5] == "<NA>" && f[6] == "<NA>"
                && f[8] == "<NA>" && f[9] == "<NA>")
        let start = try #require(Double(f[3])), duration = try #require(Double(f[4]))
        #expect(duration > 0)
        fromRTTM.append((f[1], f[7], start, start + duration))
    }
    // RTTM is by start time: compare as sets, within the 1 ms of the printed precision.
    #expect(fromRTTM.count == rows.count)
    for r in rows {
        #expect(fromRTTM.contains { $0.0 == r.file && $0.1 == r.participant && abs($0.2 - r.start) < 0.0015
                                    && abs($0.3 - r.end) < 0.0015 }, "\(r) missing from RTTM")
    }
    // Segments of a participant are sorted and disjoint.
    for name in Set(rows.map(\.participant)) {
        let segs = rows.filter { $0.participant == name }
        for (a, b) in zip(segs, segs.dropFirst()) { #expect(a.end <= b.start) }
        #expect(segs.allSatisfy { $0.start < $0.end && $0.start >= 0 })
    }
}

@Test(.enabled(if: detectHasSampleMedia)) func jsonCarriesTheVersionTheStatisticsAndEverySegment() throws {
    let files = try detectConversationFiles().map(\.path)
    let json = try runDetectCLI(["detect", "--meeting", "--format", "json"] + files)
    let csv = try runDetectCLI(["detect", "--meeting", "--format", "csv"] + files)
    #expect(json.status == 0)
    let root = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    #expect(root["schema"] as? String == "parley.detect/1")
    let version = try runDetectCLI(["--version"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect("parley " + (root["parley_version"] as? String ?? "?") == version)
    let recordings = try #require(root["recordings"] as? [[String: Any]])
    #expect(recordings.count == 1)
    let participants = try #require(recordings[0]["participants"] as? [[String: Any]])
    #expect(participants.count == files.count)
    var shareSum = 0.0
    var segmentCount = 0
    for p in participants {
        let segs = try #require(p["segments"] as? [[Double]])
        let talk = try #require(p["talk_s"] as? Double)
        let sum = segs.reduce(0) { $0 + $1[1] - $1[0] }
        #expect(abs(sum - talk) < 0.01 * Double(max(1, segs.count)))
        #expect(p["turns"] as? Int == segs.count)
        shareSum += p["share"] as? Double ?? 0
        segmentCount += segs.count
        for key in ["longest_turn_s", "overlap_s", "fraction_of_meeting"] { #expect(p[key] is Double, "\(key)") }
        for key in ["interruptions", "interrupted"] { #expect(p[key] is Int, "\(key)") }
    }
    #expect(abs(shareSum - 1) < 0.01)
    #expect(segmentCount == detectParseSegmentsCSV(csv.stdout)?.count)
    let fileEntries = try #require(recordings[0]["files"] as? [[String: Any]])
    #expect(fileEntries.allSatisfy { $0["status"] as? String == "ok" && $0["sample_rate"] as? Int == 16000 })
}

/// `--model` picks the VAD's network: offline by default, named in the JSON; the live network's
/// frames differ from the offline one's, and every frame of the file is decided with either.
@Test(.enabled(if: detectHasSampleMedia)) func modelPicksTheNetworkAndTheJSONNamesIt() throws {
    let file = try detectConversationFiles()[0].path
    for (args, name) in [([String](), "offline"), (["--model", "offline"], "offline"), (["--model", "live"], "live")] {
        let r = try runDetectCLI(["detect", "--format", "json"] + args + [file])
        #expect(r.status == 0, "\(r.stderr)")
        let root = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(root["vad_model"] as? String == name)
    }
    let offline = try runDetectCLI(["detect", "--format", "frames", file]).stdout.split(separator: "\n")
    let live = try runDetectCLI(["detect", "--format", "frames", "--model", "live", file]).stdout.split(separator: "\n")
    #expect(offline.count == live.count && offline.count > 100)
    let differing = zip(offline.dropFirst(), live.dropFirst()).filter { $0 != $1 }.count
    #expect(differing > offline.count / 2, "\(differing) of \(offline.count) frames differ")
}

@Test(.enabled(if: detectHasSampleMedia)) func audacityWritesOneLabelTrackPerParticipant() throws {
    let files = try detectConversationFiles()
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let out = dir.appendingPathComponent("labels.txt").path
    let r = try runDetectCLI(["detect", "--meeting", "--format", "audacity", "--output", out] + files.map(\.path))
    #expect(r.status == 0)
    let csv = try #require(detectParseSegmentsCSV(try runDetectCLI(["detect", "--meeting", "--format", "csv"] + files.map(\.path)).stdout))
    for f in files {
        let name = f.deletingPathExtension().lastPathComponent
        let text = try String(contentsOfFile: dir.appendingPathComponent("labels-\(name).txt").path, encoding: .utf8)
        let labels = text.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        let expected = csv.filter { $0.participant == name }
        #expect(labels.count == expected.count)
        for (l, e) in zip(labels, expected) {
            #expect(l.count == 3 && l[2] == name)
            #expect(abs(Double(l[0])! - e.start) < 0.001 && abs(Double(l[1])! - e.end) < 0.001)
        }
    }
}

@Test(.enabled(if: detectHasSampleMedia)) func framesHaveOneRowPer10msFrameWithRawProbabilities() throws {
    let (samples, rate) = try detectReadPCM16(speech16k())
    let r = try runDetectCLI(["detect", "--format", "frames", speech16k().path, speech16k().path + "@1.005"])
    #expect(r.status == 0, "\(r.stderr)")
    let lines = r.stdout.split(separator: "\n")
    #expect(lines.first == "file,time_s,prob")
    let expectedFrames = samples.count / (rate / 100)
    #expect(lines.count == 1 + 2 * expectedFrames)
    let rows = lines.dropFirst().map { $0.split(separator: ",").map(String.init) }
    #expect(rows.allSatisfy { $0.count == 3 && $0[0] == "speech-16k" })
    let probs = rows.map { Double($0[2])! }
    #expect(probs.allSatisfy { $0 >= 0 && $0 <= 1 })
    #expect(probs.contains { $0 > 0.5 } && probs.contains { $0 < 0.5 })
    #expect(Double(rows[0][1]) == 0 && Double(rows[1][1]) == 0.01)
    // The second copy is offset by 1.005 s and printed with three decimals.
    #expect(rows[expectedFrames][1] == "1.005")
    #expect(rows[expectedFrames][2] == rows[0][2])
}

@Test(.enabled(if: detectHasSampleMedia)) func timelineIsAnSVGWithOneLanePerParticipantAndATimeAxis() throws {
    let files = try detectConversationFiles()
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let svgPath = dir.appendingPathComponent("t.svg").path
    let r = try runDetectCLI(["detect", "--meeting", "--timeline", svgPath] + files.map(\.path))
    #expect(r.status == 0)
    let svg = try String(contentsOfFile: svgPath, encoding: .utf8)
    #expect(svg.hasPrefix("<?xml") && svg.contains("<svg") && svg.hasSuffix("</svg>\n"))
    for f in files { #expect(svg.contains(">\(f.deletingPathExtension().lastPathComponent)</text>")) }
    #expect(svg.contains("overlap (2+ talking)"))
    #expect(svg.components(separatedBy: "class=\"tick\"").count - 1 >= 3)
    // Well-formed XML.
    _ = try XMLDocument(data: Data(svg.utf8))
}

@Test(.enabled(if: detectHasSampleMedia)) func offsetsShiftAFilesSegmentsOnTheMeetingTimeline() throws {
    let plain = try #require(detectParseSegmentsCSV(try runDetectCLI(["detect", "--format", "csv", speech16k().path]).stdout))
    let shifted = try #require(detectParseSegmentsCSV(try runDetectCLI(["detect", "--format", "csv", "--meeting",
                                                             speech16k().path + "@12.5"]).stdout))
    #expect(!plain.isEmpty && plain.count == shifted.count)
    for (a, b) in zip(plain, shifted) {
        #expect(abs(b.start - a.start - 12.5) < 0.0015 && abs(b.end - a.end - 12.5) < 0.0015)
        #expect(a.file == "speech-16k" && b.file == "meeting" && b.participant == "speech-16k")
    }
}

@Test(.enabled(if: detectHasSampleMedia)) func perChannelMakesEachChannelAParticipant() throws {
    let (samples, rate) = try detectReadPCM16(speech16k())
    var stereo: [Float] = []
    for s in samples { stereo.append(s); stereo.append(0) }   // speech left, silence right
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("call.wav")
    try detectWAVBytes(stereo, sampleRate: rate, channels: 2).write(to: path)
    let r = try runDetectCLI(["detect", "--per-channel", "--format", "csv", path.path])
    #expect(r.status == 0)
    let rows = try #require(detectParseSegmentsCSV(r.stdout))
    #expect(!rows.isEmpty && rows.allSatisfy { $0.file == "call" && $0.participant == "call.ch1" })
    let mono = try #require(detectParseSegmentsCSV(try runDetectCLI(["detect", "--format", "csv", speech16k().path]).stdout))
    #expect(rows.map(\.start) == mono.map(\.start) && rows.map(\.end) == mono.map(\.end))
    let summary = try runDetectCLI(["detect", "--per-channel", path.path])
    #expect(summary.stdout.contains("call.ch1") && summary.stdout.contains("call.ch2"))
}

@Test(.enabled(if: detectHasSampleMedia))
func otherSampleRatesAreResampledAndFindTheSameTalk() throws {
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let out = dir.appendingPathComponent("speech-44k.wav").path
    let sox = Process()
    sox.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
    sox.arguments = [speech16k().path, "-r", "44100", out]
    try sox.run()
    sox.waitUntilExit()
    #expect(sox.terminationStatus == 0)
    let a = try #require(detectParseSegmentsCSV(try runDetectCLI(["detect", "--format", "csv", speech16k().path]).stdout))
    let b = try #require(detectParseSegmentsCSV(try runDetectCLI(["detect", "--format", "csv", out]).stdout))
    #expect(!a.isEmpty && a.count == b.count)
    for (x, y) in zip(a, b) { #expect(abs(x.start - y.start) <= 0.05 && abs(x.end - y.end) <= 0.05) }
}

@Test(.enabled(if: detectHasSampleMedia)) func outputIsTheSameWithOneJobOrMany() throws {
    let files = try detectConversationFiles().map(\.path) + [speech16k().path]
    for format in ["csv", "json", "frames"] {
        let one = try runDetectCLI(["detect", "--jobs", "1", "--format", format] + files)
        let many = try runDetectCLI(["detect", "--jobs", "4", "--format", format] + files)
        #expect(one.status == 0 && many.status == 0)
        #expect(one.stdout == many.stdout, "\(format) differs between --jobs 1 and --jobs 4")
    }
}

/// Bad inputs, each next to a good file: a message naming the file, exit status 1, and the good
/// file still analysed.
@Test(.enabled(if: detectHasSampleMedia), arguments: ["missing", "directory", "empty", "text", "corrupt", "headerOnly"])
func aBadFileIsReportedAndTheOthersAreStillProcessed(kind: String) throws {
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    var bad = dir.appendingPathComponent("bad.wav")
    let expectedMessage: String
    switch kind {
    case "missing":
        expectedMessage = "no such file"
    case "directory":
        bad = dir.appendingPathComponent("folder.wav")
        try FileManager.default.createDirectory(at: bad, withIntermediateDirectories: true)
        expectedMessage = "directory"
    case "empty":
        try Data().write(to: bad)
        expectedMessage = "empty file"
    case "text":
        try Data("this is not audio\n".utf8).write(to: bad)
        expectedMessage = "unsupported"
    case "corrupt":
        var rng = SystemRandomNumberGenerator()
        try Data((0..<4096).map { _ in UInt8.random(in: 0...255, using: &rng) }).write(to: bad)
        expectedMessage = "unsupported"
    default: // a valid header and no samples
        try detectWAVBytes([], sampleRate: 16000).write(to: bad)
        expectedMessage = "no audio"
    }
    let r = try runDetectCLI(["detect", "--format", "csv", bad.path, speech16k().path])
    #expect(r.status == 1)
    #expect(r.stderr.contains(bad.path), "\(r.stderr)")
    #expect(r.stderr.lowercased().contains(expectedMessage), "\(kind): \(r.stderr)")
    let rows = try #require(detectParseSegmentsCSV(r.stdout))
    #expect(!rows.isEmpty && rows.allSatisfy { $0.file == "speech-16k" })
    let summary = try runDetectCLI(["detect", bad.path, speech16k().path])
    #expect(summary.status == 1 && summary.stdout.contains("FAILED"))
}

@Test(.enabled(if: detectHasSampleMedia)) func aTruncatedFileReportsHowMuchWasReadAndKeepsItsResults() throws {
    let full = try Data(contentsOf: speech16k())
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let cut = dir.appendingPathComponent("cut.wav")
    try full.prefix(full.count / 2).write(to: cut)
    let r = try runDetectCLI(["detect", "--format", "json", cut.path])
    #expect(r.status == 1)
    #expect(r.stderr.contains("truncated: read"), "\(r.stderr)")
    let root = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
    let rec = try #require((root["recordings"] as? [[String: Any]])?.first)
    let file = try #require((rec["files"] as? [[String: Any]])?.first)
    #expect(file["status"] as? String == "partial")
    let (samples, rate) = try detectReadPCM16(speech16k())
    let read = try #require(file["duration_s"] as? Double)
    #expect(abs(read - Double(samples.count) / Double(rate) / 2) < 0.05)
}

@Test(.enabled(if: detectHasSampleMedia)) func nanSamplesAreReportedAndAnalysedAsSilence() throws {
    let (samples, rate) = try detectReadPCM16(speech16k())
    var poisoned = samples
    for i in stride(from: rate, to: rate + 100, by: 1) { poisoned[i] = .nan }
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("nan.wav")
    try detectWAVBytes(poisoned, sampleRate: rate, float: true).write(to: path)
    let r = try runDetectCLI(["detect", "--format", "csv", path.path])
    #expect(r.status == 1)
    #expect(r.stderr.contains("100 NaN or infinite samples"), "\(r.stderr)")
    #expect(try #require(detectParseSegmentsCSV(r.stdout)).count > 0)
}

@Test func silenceOnlyIsReportedButIsNotAnError() throws {
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let path = dir.appendingPathComponent("quiet.wav")
    try detectWAVBytes([Float](repeating: 0, count: 16000 * 3), sampleRate: 16000).write(to: path)
    let r = try runDetectCLI(["detect", path.path])
    #expect(r.status == 0)
    #expect(r.stdout.contains("quiet: 1 participant, 0:03.0"))
    #expect(r.stdout.contains("no speech detected"))
    let csv = try runDetectCLI(["detect", "--format", "csv", path.path])
    #expect(csv.stdout == "file,participant,start_s,end_s\n")
}

/// Peak memory (kB) of `parley ARGS`, measured by /usr/bin/time.
private func peakRSS(_ args: [String]) throws -> Int {
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let report = dir.appendingPathComponent("rss").path
    let r = try runDetectCLI(args, wrappedBy: ["/usr/bin/time", "-f", "%M", "-o", report])
    #expect(r.status == 0, "\(r.stderr)")
    return Int(try String(contentsOfFile: report, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
}

@Test(.enabled(if: detectHasSampleMedia)) func memoryStaysFlatOnALongFile() throws {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else {
        Issue.record("/usr/bin/time is missing (scripts/setup.sh installs it)")
        return
    }
    let (samples, rate) = try detectReadPCM16(speech16k())
    // A short file and one 24 times longer (about 3 minutes), speech and silence alternating.
    var unit = samples
    unit += [Float](repeating: 0, count: rate * 2)
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let short = dir.appendingPathComponent("short.wav"), long = dir.appendingPathComponent("long.wav")
    try detectWAVBytes(unit, sampleRate: rate).write(to: short)
    try detectWAVBytes(Array([[Float]](repeating: unit, count: 24).joined()), sampleRate: rate).write(to: long)
    let shortRSS = try peakRSS(["detect", "--format", "json", short.path])
    let longRSS = try peakRSS(["detect", "--format", "json", long.path])
    // The long file's samples alone would take ~\(24 * unit.count * 4 / 1024) kB as floats.
    #expect(shortRSS > 0 && longRSS - shortRSS < 4 * 1024, "short \(shortRSS) kB, long \(longRSS) kB")
    let csv = try #require(detectParseSegmentsCSV(try runDetectCLI(["detect", "--format", "csv", long.path]).stdout))
    #expect(csv.count >= 24)
}

@Test(.enabled(if: detectHasSampleMedia))
func theProgressBarShowsOnATerminalOnly() throws {
    let files = try detectConversationFiles().map(\.path)
    // Not a terminal (a pipe): nothing but messages on stderr.
    let piped = try runDetectCLI(["detect", "--format", "csv"] + files)
    #expect(piped.status == 0 && piped.stderr.isEmpty, "\(piped.stderr)")
    // On a pseudo-terminal (util-linux `script`): the bar is drawn and cleared at the end.
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/script") else { return }
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let log = dir.appendingPathComponent("tty.log").path
    // Enough work (120 files, about a second on an idle machine) that the bar, redrawn every
    // 200 ms, shows at least once.
    let command = ([detectParleyExecutable.path, "detect", "--jobs", "1", "--format", "csv", "--output",
                    dir.appendingPathComponent("o.csv").path] + Array(repeating: files, count: 40).flatMap { $0 }).map { "'\($0)'" }.joined(separator: " ")
    let script = Process()
    script.executableURL = URL(fileURLWithPath: "/usr/bin/script")
    script.arguments = ["-qec", command, log]
    script.standardOutput = FileHandle.nullDevice
    try script.run()
    script.waitUntilExit()
    #expect(script.terminationStatus == 0)
    let text = try String(contentsOfFile: log, encoding: .utf8)
    #expect(text.contains("files") && text.contains("%") && text.contains("\u{1B}[K"), "\(text)")
}
