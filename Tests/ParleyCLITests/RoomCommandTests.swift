import Foundation
import Testing

/// `parley room` over the SampleMedia conversation.
@Suite struct RoomCommandTests {
    static let files = (try? detectConversationFiles().map(\.path)) ?? []


    /// The default and `--talking sender` (the senders' RFC 6464 V bits): every turn within 100 ms
    /// of `parley detect --meeting`. `--talking receiver`: the test below.
    @Test(arguments: [[], ["--talking", "sender"]])
    func talkingEventsAtFivePercentLossAndThirtyMsJitterMatchDetectMeeting(talking: [String]) throws {
        try #require(Self.files.count == 3, "SampleMedia/conversation must hold three participants")
        let detect = try runDetectCLI(["detect", "--meeting", "--format", "csv"] + Self.files)
        let reference = try #require(detectParseSegmentsCSV(detect.stdout))
        #expect(reference.count >= 3)
        let dir = try detectTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let jsonl = dir.appendingPathComponent("events.jsonl")
        let room = try runDetectCLI(["room"] + Self.files + ["--loss", "5", "--jitter", "30", "--seed", "42",
                                                             "--speed", "max", "--no-tui", "--events", jsonl.path] + talking)
        #expect(room.status == 0, "\(room.stderr)")
        let all = try interopEvents(jsonl)
        for e in all {
            #expect(e["t"] is Double && e["type"] is String && e.keys.contains("participant"))
            #expect(["joined", "left", "talking", "silent", "dominant", "muted", "unmuted"].contains(e["type"] as! String))
        }
        let talking = all.filter { $0["type"] as? String == "talking" }
        // Every turn offline is found live (onset within 100 ms), and no extra turns.
        for seg in reference {
            let starts = talking.filter { $0["participant"] as? String == seg.participant }.compactMap { $0["start"] as? Double }
            let nearest = starts.map { abs($0 - seg.start) }.min() ?? .infinity
            #expect(nearest <= 0.1, "\(seg.participant) turn at \(seg.start) s: room onsets \(starts)")
        }
        #expect(talking.count == reference.count)
        #expect(all.filter { $0["type"] as? String == "joined" }.count == 3)
        #expect(all.filter { $0["type"] as? String == "left" }.count == 3)
        #expect(all.contains { $0["type"] as? String == "dominant" })
        // Plain-text mode prints the events and the report with every frame accounted for.
        #expect(room.stdout.contains("talking (from"))
        let reportRows = room.stdout.split(separator: "\n").filter { $0.hasSuffix(" yes") || $0.hasSuffix(" NO") }
        #expect(reportRows.count == 3 && reportRows.allSatisfy { $0.hasSuffix(" yes") })
    }

    /// `--talking receiver` (Parley's VAD re-run on every decoded stream) over eight network
    /// seeds: every turn is found and no extra one, in every run; onsets are within 100 ms of
    /// the offline ones for most turns, but the VAD on lossy decoded audio is the less robust
    /// source (a concealed packet next to a word's start can move where the rise begins), so a
    /// turn may be off by up to 0.4 s in a few runs (measured, seeds 1-8: the worst turn per run
    /// 17-343 ms, 3 of 48 turns over 100 ms; docs/calls.md, "parley room").
    @Test func receiverVADAtFivePercentLossFindsEveryTurnOverEightSeeds() throws {
        try #require(Self.files.count == 3, "SampleMedia/conversation must hold three participants")
        let detect = try runDetectCLI(["detect", "--meeting", "--format", "csv"] + Self.files)
        let reference = try #require(detectParseSegmentsCSV(detect.stdout))
        let dir = try detectTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var differences: [Double] = []
        for seed in 1...8 {
            let jsonl = dir.appendingPathComponent("events-\(seed).jsonl")
            let room = try runDetectCLI(["room"] + Self.files + ["--loss", "5", "--jitter", "30", "--seed", "\(seed)",
                                                                 "--speed", "max", "--no-tui", "--events", jsonl.path,
                                                                 "--talking", "receiver"])
            #expect(room.status == 0, "\(room.stderr)")
            let talking = try interopEvents(jsonl).filter { $0["type"] as? String == "talking" }
            #expect(talking.count == reference.count, "seed \(seed): \(talking.count) turns, offline \(reference.count)")
            for seg in reference {
                let starts = talking.filter { $0["participant"] as? String == seg.participant }.compactMap { $0["start"] as? Double }
                let nearest = starts.map { abs($0 - seg.start) }.min() ?? .infinity
                #expect(nearest <= 0.4, "seed \(seed): \(seg.participant) turn at \(seg.start) s, room onsets \(starts)")
                differences.append(nearest)
            }
        }
        let within = differences.filter { $0 <= 0.1 }.count
        #expect(Double(within) >= 0.85 * Double(differences.count), "\(within) of \(differences.count) turns within 100 ms")
    }

    @Test func sameSeedSameEvents() throws {
        try #require(Self.files.count == 3)
        let dir = try detectTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var outputs: [String] = []
        for (i, seed) in ["9", "9", "10"].enumerated() {
            let path = dir.appendingPathComponent("e\(i).jsonl")
            let r = try runDetectCLI(["room"] + Self.files + ["--loss", "20", "--seed", seed, "--speed", "max", "--no-tui",
                                                              "--events", path.path])
            #expect(r.status == 0)
            outputs.append(try String(contentsOf: path, encoding: .utf8) + r.stdout)
        }
        #expect(outputs[0] == outputs[1])
        #expect(outputs[0] != outputs[2])
    }

    @Test(arguments: [
        ["room"],
        ["room", "a.wav", "--speed", "fast"],
        ["room", "a.wav", "--loss", "120"],
        ["room", "a.wav", "--seed", "-1"],
        ["room", "a.wav", "--frobnicate"],
        ["room", "a.wav", "--talking", "both"],
    ])
    func usageErrorsExitWithStatus2(args: [String]) throws {
        let r = try runDetectCLI(args)
        #expect(r.status == 2, "\(args): \(r.stderr)")
        #expect(r.stderr.contains("parley room:"))
    }

    @Test func badFilesAreReportedClearly() throws {
        let dir = try detectTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = try runDetectCLI(["room", dir.appendingPathComponent("nobody.wav").path, "--speed", "max", "--no-tui"])
        #expect(missing.status == 1 && missing.stderr.contains("no such file"))
        let garbage = dir.appendingPathComponent("garbage.wav")
        try Data("RIFF this is not a wave file at all".utf8).write(to: garbage)
        let bad = try runDetectCLI(["room", garbage.path, "--speed", "max", "--no-tui"])
        #expect(bad.status == 1 && bad.stderr.contains("garbage.wav"))
        let odd = dir.appendingPathComponent("odd.wav")
        try detectWAVBytes([Float](repeating: 0.1, count: 44_100), sampleRate: 44_100).write(to: odd)
        let rate = try runDetectCLI(["room", odd.path, "--speed", "max", "--no-tui"])
        #expect(rate.status == 1 && rate.stderr.contains("44100 Hz is not an Opus rate"))
    }

    /// The live grid on a real terminal (tmux): 3 participants in ceil(sqrt(3)) = 2 columns, a
    /// talking participant with a green border.
    @Test(.tags(.realTime)) func liveGridOnATerminalHighlightsTalking() throws {
        try #require(Self.files.count == 3)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux") else {
            print("skipping: tmux is not installed")
            return
        }
        let dir = try detectTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }  // after the tmux server is killed (below)
        // The server's socket lives in `dir`: tmux leaves it behind after kill-server.
        let socket = dir.appendingPathComponent("tmux.sock").path
        let captureFile = dir.appendingPathComponent("capture.txt")
        // Through system(3), which waits for the shell alone: Foundation's Process watches its
        // child through a descriptor the daemonised tmux server inherits, and would wait for it.
        func tmux(_ args: [String]) -> String {
            let quoted = (["/usr/bin/tmux", "-S", socket] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            let status = system("TERM=xterm-256color SHELL=/bin/sh " + quoted.joined(separator: " ")
                                + " </dev/null >'\(captureFile.path)' 2>&1")
            let text = (try? String(contentsOf: captureFile, encoding: .utf8)) ?? ""
            return status == 0 ? text : "tmux failed (\(status)): " + text
        }
        let command = ([detectParleyExecutable.path, "room"] + Self.files + ["--speed", "realtime"])
            .map { "'\($0)'" }.joined(separator: " ")
        let started = tmux(["-f", "/dev/null", "new-session", "-d", "-x", "130", "-y", "40", "-s", "room", command + "; sleep 30"])
        defer { _ = tmux(["kill-server"]) }
        #expect(started.isEmpty, "\(started)")
        var capture = ""
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            capture = tmux(["capture-pane", "-p", "-e", "-t", "room"])
            if capture.contains("TALKING") { break }
            usleep(100_000)
        }
        #expect(capture.contains("TALKING"), "grid never showed a talker:\n\(capture)")
        #expect(capture.contains("\u{1B}[32m"), "no green border")   // tmux re-encodes 32;1 as 1 then 32
        #expect(capture.contains("parley room"))
        // Two columns: the first row of boxes holds two participants' names.
        let lines = capture.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let nameRow = try #require(lines.first { $0.contains("armelle") })
        #expect(nameRow.contains("carlo"), "expected armelle and carlo side by side: \(nameRow)")
        #expect(!nameRow.contains("reader"))
        #expect(lines.contains { $0.contains("reader") })
    }
}
