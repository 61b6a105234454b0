import Foundation
import Testing

// `parley detect` over many recordings: --files-from, --output-dir, --skip-existing, --shard
// and standard input. Each test makes its recordings from SampleMedia with sox (dither off,
// repeatable mode: the same bytes on every run) in a temporary directory it removes.

/// Thirty-seven recordings made from SampleMedia (8-48 kHz, mono and stereo, FLAC and WAV,
/// speed, tempo and pitch changed, trimmed, concatenated) and three bad files: one truncated
/// (a partial result), one empty, one text.
private struct BatchFixture {
    let dir: URL
    /// The thirty-seven good recordings, absolute paths.
    let good: [String]
    let truncated: String
    let empty: String
    let text: String
    /// The files that get a result: the good ones and the truncated one.
    var withResults: [String] { good + [truncated] }
    /// The files failed.tsv lists.
    var bad: [String] { [truncated, empty, text] }
    var all: [String] { good + bad }

    func remove() { try? FileManager.default.removeItem(at: dir) }

    /// Writes `paths` one per line (or NUL-terminated) to a list file in the fixture's directory.
    func list(_ paths: [String], null: Bool = false, name: String = "list.txt") throws -> String {
        let url = dir.appendingPathComponent(name)
        try Data(paths.map { $0 + (null ? "\0" : "\n") }.joined().utf8).write(to: url)
        return url.path
    }
}

private func makeBatchFixture() throws -> BatchFixture {
    let dir = try detectTemporaryDirectory()
    let calls = dir.appendingPathComponent("calls")
    try FileManager.default.createDirectory(at: calls, withIntermediateDirectories: true)
    let media = detectSampleMedia.path
    let speech = media + "/speech/speech-16k.wav", speech48 = media + "/speech/speech-48k.wav"
    let conversation = media + "/conversation"
    // (input, output relative to dir, output options, effects); about 3 s each, to keep the
    // tests short on a debug build.
    let recipes: [(String, String, [String], [String])] = [
        (speech, "plain-16k.wav", [], ["trim", "0", "3"]),
        (speech, "low-8k.wav", ["-r", "8000"], ["trim", "0", "3"]),
        (speech, "stereo-48k.flac", ["-r", "48000", "-c", "2"], ["trim", "0", "3"]),
        (speech, "fast.flac", [], ["trim", "0", "3.5", "speed", "1.15"]),
        (speech, "slow-22k.wav", ["-r", "22050"], ["trim", "0", "2.7", "speed", "0.9"]),
        (speech, "pitch-up.wav", [], ["trim", "0", "3", "pitch", "300"]),
        (speech, "pitch-down-44k-stereo.flac", ["-r", "44100", "-c", "2"], ["trim", "0", "3", "pitch", "-300"]),
        (speech48, "voice-48k.wav", [], ["trim", "0", "3"]),
        (speech48, "tempo-32k.flac", ["-r", "32000"], ["tempo", "1.3"]),
        (conversation + "/armelle.wav", "calls/armelle.wav", [], ["trim", "3.5", "3"]),
        (conversation + "/carlo.wav", "calls/carlo 24k stereo.flac", ["-r", "24000", "-c", "2"], ["trim", "4", "3"]),
        (media + "/conversation-mix.wav", "calls/mix-12k.wav", ["-r", "12000"], ["trim", "5", "3"]),
    ]
    var good: [String] = []
    for (input, name, options, effects) in recipes {
        let out = dir.appendingPathComponent(name).path
        try detectSox([input] + options + [out] + effects)
        good.append(out)
    }
    // Twenty-five more of 1.2 s, cut where someone talks: every rate, mono and stereo, FLAC
    // and WAV, effects, and every fifth across the join of two files (sox concatenates its
    // inputs).
    let sources: [(String, [Double])] = [
        (speech, [0.3, 1.5, 2.7, 3.6]), (speech48, [0.2, 1.2, 2.2]),
        (conversation + "/armelle.wav", [4.1, 12.7, 13.6]), (conversation + "/carlo.wav", [5.6, 6.1]),
        (conversation + "/reader.wav", [0.6, 1.7, 8.8, 10.2]), (media + "/conversation-mix.wav", [0.6, 4.1, 8.8, 12.7]),
    ]
    let rates = [8000, 11025, 16000, 22050, 32000, 44100, 48000]
    let effects: [[String]] = [[], ["speed", "1.1"], ["pitch", "200"], ["tempo", "0.9"], ["gain", "-6"]]
    try FileManager.default.createDirectory(at: dir.appendingPathComponent("extra"), withIntermediateDirectories: true)
    for i in 0..<25 {
        let joined = i % 5 == 4
        let (source, starts) = sources[i % sources.count]
        // speech-16k.wav is 6.05 s long: a cut from 4.9 s runs into armelle.wav.
        let inputs = joined ? [speech, conversation + "/armelle.wav"] : [source]
        let start = joined ? 4.9 + 0.05 * Double(i / 5) : starts[i / sources.count % starts.count]
        let rate = rates[i % rates.count], channels = i % 3 == 2 ? 2 : 1
        let name = "extra/\(i)-\(rate)-\(channels)ch\(joined ? "-joined" : "").\(i % 2 == 0 ? "flac" : "wav")"
        let out = dir.appendingPathComponent(name).path
        try detectSox(inputs + ["-r", "\(rate)", "-c", "\(channels)", out, "trim", String(format: "%.2f", start), "1.2"]
                      + effects[i % effects.count])
        good.append(out)
    }
    let whole = try Data(contentsOf: URL(fileURLWithPath: good[0]))
    let truncated = calls.appendingPathComponent("truncated.wav")
    try whole.prefix(whole.count / 2).write(to: truncated)
    let empty = dir.appendingPathComponent("empty.wav")
    try Data().write(to: empty)
    let text = dir.appendingPathComponent("notes.wav")
    try Data("minutes of the meeting, not audio\n".utf8).write(to: text)
    return BatchFixture(dir: dir, good: good, truncated: truncated.path, empty: empty.path, text: text.path)
}

/// The names in `dir` (results, failed.tsv and any temporary files).
private func entries(_ dir: URL) throws -> Set<String> {
    Set(try FileManager.default.contentsOfDirectory(atPath: dir.path))
}

/// failed.tsv as path -> error.
private func failedList(_ dir: URL) throws -> [String: String] {
    let text = try String(contentsOf: dir.appendingPathComponent("failed.tsv"), encoding: .utf8)
    var out: [String: String] = [:]
    for line in text.split(separator: "\n") {
        let f = line.split(separator: "\t", maxSplits: 1).map(String.init)
        #expect(f.count == 2, "\(line)")
        if f.count == 2 { out[f[0]] = f[1] }
    }
    return out
}

/// The last line of stderr, the summary.
private func summaryLine(_ r: DetectRunResult) -> String {
    r.stderr.split(separator: "\n").last.map(String.init) ?? ""
}

/// Inode and modification time of a file, to tell whether it was written again.
private func identity(_ path: String) -> String {
    var st = stat()
    guard stat(path, &st) == 0 else { return "missing" }
    return "\(st.st_ino)/\(st.st_mtim.tv_sec).\(st.st_mtim.tv_nsec)"
}

@Test func helpDocumentsTheBatchOptions() throws {
    let r = try runDetectCLI(["detect", "--help"])
    #expect(r.status == 0)
    for word in ["--files-from", "--null", "--output-dir", "--skip-existing", "--shard K/N", "--input-format",
                 "failed.tsv", "path<TAB>error", "FNV-1a", "%2F", "~", "stdin", "sln16", "x real time"] {
        #expect(r.stdout.contains(word), "help lacks \(word)")
    }
}

@Test(arguments: [
    ["detect", "--shard", "0/3", "a.wav"],
    ["detect", "--shard", "4/3", "a.wav"],
    ["detect", "--shard", "junk", "a.wav"],
    ["detect", "--shard", "1/0", "a.wav"],
    ["detect", "--shard", "-1/3", "a.wav"],
    ["detect", "--shard", "1/3/3", "a.wav"],
    ["detect", "--shard", "1/2", "--meeting", "a.wav"],
    ["detect", "--skip-existing", "a.wav"],
    ["detect", "--null", "a.wav"],
    ["detect", "--output-dir", "/nonexistent/out", "--meeting", "a.wav"],
    ["detect", "--output-dir", "/nonexistent/out", "--output", "x.csv", "a.wav"],
    ["detect", "--output-dir", "/nonexistent/out", "--timeline", "x.svg", "a.wav"],
    ["detect", "--files-from", "/nonexistent/list.txt"],
    ["detect", "-", "-"],
    ["detect", "--files-from", "-", "-"],
    ["detect", "--input-format", "sln16", "a.wav"],
    ["detect", "--input-format", "mp4", "-"],
])
func batchUsageErrorsExitWithStatus2(args: [String]) throws {
    let r = try runDetectCLI(args, standardInput: .bytes(Data()))
    #expect(r.status == 2, "\(args): \(r.stderr)")
    #expect(r.stderr.contains("parley detect:"))
    #expect(r.stdout.isEmpty)
    #expect(!FileManager.default.fileExists(atPath: "/nonexistent/out"))
}

@Test(.enabled(if: detectHasSampleMedia))
func outputDirHoldsEachFilesOwnResultAndFailedTSVTheBadOnes() throws {
    let fx = try makeBatchFixture()
    defer { fx.remove() }
    let out = fx.dir.appendingPathComponent("out")
    let r = try runDetectCLI(["detect", "--format", "csv", "--jobs", "2", "--files-from", try fx.list(fx.all),
                              "--output-dir", out.path])
    #expect(r.status == 1, "\(r.stderr)")
    #expect(r.stdout.isEmpty)
    let summary = summaryLine(r)
    #expect(summary.hasPrefix("parley detect: 40 files: 37 ok, 1 partial, 2 failed, 0 skipped; "), "\(summary)")
    #expect(summary.contains(" h of audio in ") && summary.hasSuffix("x real time)"), "\(summary)")

    // Exactly one result per file that could be read, named as documented, and failed.tsv.
    let names = fx.withResults.map { detectDocumentedResultName($0, ext: "csv") }
    #expect(try entries(out) == Set(names + ["failed.tsv"]))
    for (path, name) in zip(fx.withResults, names) {
        let single = try runDetectCLI(["detect", "--format", "csv", path])
        let result = try String(contentsOf: out.appendingPathComponent(name), encoding: .utf8)
        #expect(result == single.stdout, "\(path)")
        #expect(try #require(detectParseSegmentsCSV(result)).count > 0 || path == fx.truncated, "\(path): no talk found")
    }
    let failed = try failedList(out)
    #expect(Set(failed.keys) == Set(fx.bad))
    #expect(failed[fx.truncated]?.hasPrefix("partial: truncated: read ") == true, "\(failed)")
    #expect(failed[fx.empty]?.contains("empty") == true && failed[fx.text]?.contains("unsupported") == true, "\(failed)")
}

@Test(.enabled(if: detectHasSampleMedia), arguments: ["summary", "json", "rttm", "audacity", "frames"])
func everyFormatsResultIsWhatASingleFileRunPrints(format: String) throws {
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let ext = ["summary": "txt", "json": "json", "rttm": "rttm", "audacity": "labels.txt", "frames": "frames.csv"][format]!
    // A stereo file split per channel (two tracks) and a truncated one.
    let speech = detectSampleMedia.path + "/speech/speech-16k.wav"
    let stereo = dir.appendingPathComponent("two voices.flac").path
    try detectSox(["-M", speech, speech, stereo, "trim", "0", "3"])
    let whole = try Data(contentsOf: URL(fileURLWithPath: speech))
    let truncated = dir.appendingPathComponent("cut.wav").path
    try whole.prefix(whole.count / 3).write(to: URL(fileURLWithPath: truncated))
    let files = [stereo, truncated]
    let out = dir.appendingPathComponent("out")
    let r = try runDetectCLI(["detect", "--per-channel", "--format", format, "--output-dir", out.path] + files)
    #expect(r.status == 1, "\(r.stderr)")
    for path in files {
        let single = try runDetectCLI(["detect", "--per-channel", "--format", format, path])
        let result = try String(contentsOf: out.appendingPathComponent(detectDocumentedResultName(path, ext: ext)), encoding: .utf8)
        #expect(!result.isEmpty && result == single.stdout, "\(format) \(path)")
    }
    #expect(try entries(out).count == files.count + 1)
}

@Test(.enabled(if: detectHasSampleMedia))
func aRunKilledHalfwayResumesWithSkipExistingAndRedoesNoFinishedFile() throws {
    let fx = try makeBatchFixture()
    defer { fx.remove() }
    let list = try fx.list(fx.all)
    let reference = fx.dir.appendingPathComponent("reference")
    _ = try runDetectCLI(["detect", "--format", "json", "--jobs", "2", "--files-from", list, "--output-dir", reference.path])
    let expected = try entries(reference)
    #expect(expected.count == fx.withResults.count + 1)

    let out = fx.dir.appendingPathComponent("out")
    let p = Process()
    p.executableURL = detectParleyExecutable
    p.arguments = ["detect", "--format", "json", "--jobs", "1", "--files-from", list, "--output-dir", out.path]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    try p.run()
    // Kill it once a few results are there, long before the last.
    let deadline = Date().addingTimeInterval(60)
    while p.isRunning && Date() < deadline {
        if let names = try? entries(out), names.filter({ $0.contains("~") }).count >= 3 { break }
        usleep(5000)
    }
    let killedWhileRunning = p.isRunning
    kill(p.processIdentifier, SIGKILL)
    p.waitUntilExit()
    #expect(killedWhileRunning && p.terminationReason == .uncaughtSignal, "the run ended before it was killed")

    // What is there is whole: each result equals the uninterrupted run's.
    let finished = try entries(out).filter { $0.contains("~") && !$0.hasPrefix(".") }
    #expect(finished.count >= 3 && finished.count < fx.withResults.count, "\(finished.count) results when killed")
    var before: [String: String] = [:]
    for name in finished {
        #expect(try Data(contentsOf: out.appendingPathComponent(name)) == Data(contentsOf: reference.appendingPathComponent(name)),
                "\(name) is not complete")
        before[name] = identity(out.appendingPathComponent(name).path)
    }

    let rerun = try runDetectCLI(["detect", "--format", "json", "--jobs", "2", "--skip-existing", "--files-from", list,
                                  "--output-dir", out.path])
    #expect(rerun.status == 1, "\(rerun.stderr)")
    // The finished files were skipped, not redone: same inode, same modification time.
    #expect(summaryLine(rerun).contains(", \(finished.count) skipped;"), "\(summaryLine(rerun))")
    let redone = before.filter { identity(out.appendingPathComponent($0.key).path) != $0.value }
    #expect(redone.isEmpty, "written again: \(redone.keys.sorted())")
    // And the directory ends as the uninterrupted run left its own: no temporary file left.
    #expect(try entries(out) == expected)
    for name in expected {
        #expect(try Data(contentsOf: out.appendingPathComponent(name)) == Data(contentsOf: reference.appendingPathComponent(name)),
                "\(name)")
    }
}

@Test(.enabled(if: detectHasSampleMedia))
func shardsOneTwoAndThreeOfThreeCoverTheListExactlyOnce() throws {
    let fx = try makeBatchFixture()
    defer { fx.remove() }
    let list = try fx.list(fx.all)
    // The three shards one after another into one directory: each adds only its own files,
    // rewrites none of the others', and failed.tsv gathers the three runs' entries.
    let out = fx.dir.appendingPathComponent("out")
    var seen: [String: String] = [:]   // result name -> identity
    var counted = 0
    var shardOf: [String: Int] = [:]
    for k in 1...3 {
        let r = try runDetectCLI(["detect", "--format", "rttm", "--jobs", "2", "--shard", "\(k)/3", "--files-from", list,
                                  "--output-dir", out.path])
        #expect(r.status == 0 || r.status == 1, "\(r.stderr)")
        let line = summaryLine(r)
        let total = Int(line.split(separator: " ").dropFirst(2).first ?? "") ?? -1
        counted += total
        for (name, id) in seen { #expect(identity(out.appendingPathComponent(name).path) == id, "shard \(k) rewrote \(name)") }
        let now = try entries(out).filter { $0.contains("~") }
        for name in now where seen[name] == nil {
            seen[name] = identity(out.appendingPathComponent(name).path)
            shardOf[name] = k
        }
        for path in fx.bad where r.stderr.contains(path + ":") { shardOf[path] = k }
    }
    #expect(counted == fx.all.count)
    #expect(Set(seen.keys) == Set(fx.withResults.map { detectDocumentedResultName($0, ext: "rttm") }))
    #expect(Set(try failedList(out).keys) == Set(fx.bad))
    // The documented split: FNV-1a 64 of the path modulo N.
    for path in fx.withResults { #expect(shardOf[detectDocumentedResultName(path, ext: "rttm")] == detectFNVShard(path, of: 3), "\(path)") }
    for path in [fx.empty, fx.text] { #expect(shardOf[path] == detectFNVShard(path, of: 3), "\(path)") }
}

@Test(.enabled(if: detectHasSampleMedia))
func standardInputCarriesTheListOrTheAudio() throws {
    let fx = try makeBatchFixture()
    defer { fx.remove() }
    // The list on standard input, NUL-separated.
    let some = [fx.good[2], fx.good[10], fx.empty]
    let out = fx.dir.appendingPathComponent("out")
    let r = try runDetectCLI(["detect", "--format", "csv", "--files-from", "-", "--null", "--output-dir", out.path],
                             standardInput: .bytes(Data(some.map { $0 + "\0" }.joined().utf8)))
    #expect(r.status == 1 && summaryLine(r).hasPrefix("parley detect: 3 files: 2 ok, 0 partial, 1 failed"), "\(r.stderr)")
    for path in some.prefix(2) {
        let result = try String(contentsOf: out.appendingPathComponent(detectDocumentedResultName(path, ext: "csv")), encoding: .utf8)
        #expect(result == (try runDetectCLI(["detect", "--format", "csv", path])).stdout)
    }
    #expect(Set(try failedList(out).keys) == [fx.empty])

    // The audio on standard input: a FLAC through a pipe, a WAV as a regular file, headerless
    // 16-bit PCM with --input-format. The same talk as the files, named "stdin".
    func rows(_ r: DetectRunResult) -> [String] {
        r.stdout.split(separator: "\n").dropFirst().map { $0.split(separator: ",").dropFirst(2).joined(separator: ",") }
    }
    let raw = fx.dir.appendingPathComponent("speech.raw").path
    try detectSox([fx.good[0], "-t", "raw", "-e", "signed", "-b", "16", "-L", raw])
    let cases: [(file: String, input: DetectStandardInput, extra: [String])] = [
        (fx.good[2], .bytes(try Data(contentsOf: URL(fileURLWithPath: fx.good[2]))), []),
        (fx.good[4], .file(URL(fileURLWithPath: fx.good[4])), []),
        (fx.good[0], .bytes(try Data(contentsOf: URL(fileURLWithPath: raw))), ["--input-format", "sln16"]),
    ]
    for c in cases {
        let fromFile = try runDetectCLI(["detect", "--format", "csv", c.file])
        let fromStdin = try runDetectCLI(["detect", "--format", "csv"] + c.extra + ["-"], standardInput: c.input)
        #expect(fromStdin.status == 0, "\(c.file): \(fromStdin.stderr)")
        #expect(!rows(fromFile).isEmpty && rows(fromStdin) == rows(fromFile), "\(c.file)")
        #expect(fromStdin.stdout.split(separator: "\n").dropFirst().allSatisfy { $0.hasPrefix("stdin,stdin,") })
    }
    // `-` in batch mode too: its result is named after the path "-".
    let piped = fx.dir.appendingPathComponent("piped")
    let b = try runDetectCLI(["detect", "--format", "csv", "--output-dir", piped.path, "-"],
                             standardInput: .bytes(try Data(contentsOf: URL(fileURLWithPath: fx.good[2]))))
    #expect(b.status == 0, "\(b.stderr)")
    let result = try String(contentsOf: piped.appendingPathComponent(detectDocumentedResultName("-", ext: "csv")), encoding: .utf8)
    #expect(result == (try runDetectCLI(["detect", "--format", "csv", "-"], standardInput: .file(URL(fileURLWithPath: fx.good[2])))).stdout)
}
