// A browser in a Janus room with `parley join`: a headless Chromium publishes SampleMedia's
// voices over WebRTC (ICE, DTLS-SRTP) into a VideoRoom; Parley, in the same room and over
// WebRTC too, hears it and sees its turns. Run inside the network namespace of scripts/netns.sh (Janus refuses loopback ICE
// candidates), as scripts/test.sh does.

import Foundation
import JanusTestSupport
import ParleyJanus
import Testing

@Suite(.serialized, .enabled(if: NetworkNamespace.isInside,
                             "runs inside the network namespace of scripts/netns.sh (unshare -n, as root), as scripts/test.sh does"),
       .enabled(if: JanusServer.binaryPath != nil && BrowserPeer.binaryPath != nil,
                "needs janus and chromium (scripts/setup.sh installs them)"))
struct BrowserInteropTests {
    /// Chromium publishes four turns of speech (armelle's file, then carlo's) into a VideoRoom;
    /// `parley join`, over WebRTC too, receives it: the browser participant's talking (from
    /// Parley's VAD on the decoded audio) starts within 150 ms of `parley detect`'s onsets on
    /// the same file, misses no turn and matches its talk frame by frame; the audio correlates
    /// with the file.
    /// Also measured here, in the same run: the join time (process start to media flowing) of
    /// `parley join` and of Chromium, and the memory (PSS) and CPU of that Parley participant
    /// (audio, three remotes: the browser and two more Parley participants) against Chromium's.
    @Test func aBrowsersTurnsReachParleyThroughAVideoRoom() async throws {
        let dir = try interopDirectory("browser-join")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (speech, voice, reference) = try turns(in: dir)
        // Parley's own voice: 40 s of silence, so it stays in the room while the browser talks.
        let quiet = dir.appendingPathComponent("quiet.wav")
        try writeInteropWAV(quiet, sampleRate: 16_000, samples: [Float](repeating: 0, count: 16_000 * 45))
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let room = try await videoRoom.createRoom(.init(room: 4242, description: "browser test", publishers: 6))
            let parleyStarted = ContinuousClock.now
            let parley = try InteropChild(interopParleyBinary,
                                          ["join", "--janus", server.baseURL.absoluteString, "--room", "\(room)", "--name", "parley",
                                           "--audio", quiet.path, "--events", "parley.jsonl", "--output", "mix.wav",
                                           "--output-each", "heard", "--no-tui", "--timeout", "3"],
                                          in: dir, name: "join-parley")
            // Parley's media flow once its publisher's DTLS is up (the line it prints then).
            while !parley.output.contains("connected over WebRTC"), !parley.hasExited,
                  ContinuousClock.now - parleyStarted < .seconds(30) {
                try await Task.sleep(for: .milliseconds(10))
            }
            let parleyJoin = ContinuousClock.now - parleyStarted
            // Two more Parley participants: three remotes for the first.
            let others = try ["p2", "p3"].map { name in
                try InteropChild(interopParleyBinary, ["join", "--janus", server.baseURL.absoluteString, "--room", "\(room)",
                                                       "--name", name, "--audio", quiet.path, "--output", "\(name)-mix.wav",
                                                       "--no-tui", "--timeout", "3"],
                                 in: dir, name: "join-\(name)")
            }
            let deadline = ContinuousClock.now + .seconds(30)
            while try await videoRoom.listParticipants(room: room).filter(\.publisher).count < 3, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            let browserStarted = ContinuousClock.now
            let browser = try BrowserPeer(janus: server.baseURL, room: room, role: .publish(audio: speech, display: "browser"))
            defer { browser.stop() }
            var up: BrowserPeer.Report?
            while up == nil, ContinuousClock.now - browserStarted < .seconds(30) {
                up = browser.reports.first { $0.event == "webrtc" }
                if up == nil { try await Task.sleep(for: .milliseconds(10)) }
            }
            let browserJoin = ContinuousClock.now - browserStarted
            let janusLog = { String(((try? String(contentsOf: server.logFile, encoding: .utf8)) ?? "").suffix(3000)) }
            try #require(up != nil, "the browser's WebRTC did not come up:\n\(browser.log())\nJanus:\n\(janusLog())")
            // The file once through, then the browser leaves (killed: Parley sees it go by its
            // silence, --timeout). Memory and CPU are taken over 20 s of it.
            try await Task.sleep(for: .seconds(5))
            let before = (parley: interopProcessUsage(parley.pid), browser: interopProcessUsage(browser.processGroup, group: true))
            try await Task.sleep(for: .seconds(20))
            let after = (parley: interopProcessUsage(parley.pid), browser: interopProcessUsage(browser.processGroup, group: true))
            try await Task.sleep(for: .seconds(max(0, Double(voice.count) / 16_000 - 25 + 0.5)))
            browser.stop()
            let status = parley.wait(seconds: 30)
            #expect(status == 0, "parley join: \(parley.output)\nJanus:\n\(janusLog())")
            for other in others { #expect(other.wait(seconds: 30) == 0, "\(other.name): \(other.output)") }
            #expect(parleyJoin < browserJoin, "join: Parley \(parleyJoin), Chromium \(browserJoin)")
            #expect(after.parley.pss * 5 <= after.browser.pss, "PSS: Parley \(after.parley.pss) B, Chromium \(after.browser.pss) B")
            #expect(parley.output.contains("webrtc: connected"), "\(parley.output)")
            let sent = browser.reports.filter { $0.event == "stats" }.compactMap { $0.fields["sent"] as? Int }.max() ?? 0
            #expect(sent >= 1_400, "the browser sent \(sent) packets")

            // The audio, aligned with the file.
            let heard = try readInteropWAV(dir.appendingPathComponent("heard/browser.wav")).samples
            let (median, windows, lag) = interopSpeechWindowCorrelation(source: voice, heard: heard, maxLag: 16_000 * 40)
            #expect(windows >= 6 && median >= 0.9, "heard the browser with median window correlation \(median) over \(windows) windows")

            // Talks, in the browser's media time (from its first packet: the heard file, on the
            // call's time, is exact zeros until that packet plays; Chromium's encoded silence is
            // not), put on the file's time through the audio's alignment.
            let events = try interopEvents(dir.appendingPathComponent("parley.jsonl"))
            let first = try #require(heard.firstIndex { $0 != 0 }, "nothing heard of the browser")
            let shift = Double(first - lag) / 16_000
            let talks = interopTalks(events, of: "browser", until: Double(heard.count) / 16_000).map { (start: $0.start + shift, end: $0.end + shift) }
            var worst = 0.0
            for turn in reference {
                let nearest = talks.map { abs($0.start - turn.start) }.min() ?? .infinity
                worst = max(worst, nearest)
                #expect(nearest <= 0.15, "the turn at \(turn.start) s starts at \(talks.map(\.start)) in Parley's events")
            }
            #expect(talks.count == reference.count, "Parley's talks \(talks), parley detect's \(reference)")
            let f1 = interopFrameF1(talks, reference, seconds: Double(voice.count) / 16_000)
            #expect(f1 >= 0.9, "frame F1 \(f1): Parley's talks \(talks), parley detect's \(reference)")
            print("browser -> Janus -> parley join (WebRTC): up \(String(format: "%.2f", up?.time ?? -1)) s after the page started, "
                  + "\(sent) packets sent; talk onsets within \(Int((worst * 1000).rounded())) ms of parley detect's, "
                  + "\(talks.count) of \(reference.count) turns, frame F1 \(String(format: "%.3f", f1)); "
                  + "median window correlation \(String(format: "%.3f", median)) over \(windows) windows")
            let mib = { (bytes: Int) in String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
            let cpu = { (a: Double, b: Double) in String(format: "%.1f%%", (b - a) / 20 * 100) }
            print("join time (process start to media flowing): Parley \(parleyJoin), Chromium \(browserJoin); "
                  + "PSS: Parley (3 remotes) \(mib(after.parley.pss)), Chromium \(mib(after.browser.pss)); "
                  + "CPU over 20 s: Parley \(cpu(before.parley.cpuSeconds, after.parley.cpuSeconds)), "
                  + "Chromium \(cpu(before.browser.cpuSeconds, after.browser.cpuSeconds))")
        }
    }

    /// Four turns of speech, 32 s (armelle's file, then carlo's), written to `dir`: the file,
    /// its samples and `parley detect`'s talks on it.
    private func turns(in dir: URL) throws -> (file: URL, samples: [Float], talks: [(start: Double, end: Double)]) {
        let files = try detectConversationFiles()
        var voice: [Float] = []
        for name in ["armelle.wav", "carlo.wav"] {
            voice += try readInteropWAV(try #require(files.first { $0.lastPathComponent == name })).samples
        }
        let speech = dir.appendingPathComponent("turns.wav")
        try writeInteropWAV(speech, sampleRate: 16_000, samples: voice)
        let detect = try runDetectCLI(["detect", "--format", "csv", speech.path])
        let reference = try #require(detectParseSegmentsCSV(detect.stdout)).map { (start: $0.start, end: $0.end) }
        #expect(reference.count == 4, "parley detect: \(reference)")
        return (speech, voice, reference)
    }

    /// `parley join` publishes the four turns over WebRTC; a Chromium subscriber receives them:
    /// its `getStats()` counts at least 95% of the packets of the time it received, none lost,
    /// and its `totalAudioEnergy` rises during the file's speech and stays flat in its
    /// silences. Janus's own talking decisions (from the RFC 6464 levels Parley sends) follow
    /// the turns.
    @Test func parleysTurnsReachABrowserThroughAVideoRoom() async throws {
        let dir = try interopDirectory("browser-subscribe")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (speech, voice, reference) = try turns(in: dir)
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            // Janus's talking decision over 25 packets (0.5 s), at a mean level above -40 dBov.
            let room = try await videoRoom.createRoom(.init(room: 4343, publishers: 4, audioLevelEvent: true, activePackets: 25,
                                                            levelAverage: 40))
            let parley = try InteropChild(interopParleyBinary,
                                          ["join", "--janus", server.baseURL.absoluteString, "--room", "\(room)", "--name", "parley",
                                           "--audio", speech.path, "--events", "parley.jsonl", "--output", "mix.wav",
                                           "--no-tui", "--timeout", "3"],
                                          in: dir, name: "join-parley")
            var feed: UInt64?
            let deadline = ContinuousClock.now + .seconds(30)
            while feed == nil, ContinuousClock.now < deadline {
                feed = try await videoRoom.listParticipants(room: room).first { $0.publisher && $0.display == "parley" }?.id
                if feed == nil { try await Task.sleep(for: .milliseconds(50)) }
            }
            let browser = try BrowserPeer(janus: server.baseURL, room: room, role: .subscribe(feed: try #require(feed, "no Parley publisher")))
            defer { browser.stop() }
            let janusLog = { String(((try? String(contentsOf: server.logFile, encoding: .utf8)) ?? "").suffix(3000)) }
            try #require(await browser.waitFor("webrtc", seconds: 30) != nil,
                         "the browser's WebRTC did not come up:\n\(browser.log())\nJanus:\n\(janusLog())")
            #expect(parley.wait(seconds: 60) == 0, "parley join: \(parley.output)")
            try await Task.sleep(for: .seconds(0.5))
            let stats = browser.reports.filter { $0.event == "stats" && $0.fields["received"] != nil }
            browser.stop()
            let last = try #require(stats.last, "no stats from the browser:\n\(browser.log())")
            let received = last.fields["received"] as? Int ?? 0, lost = last.fields["lost"] as? Int ?? -1
            // The time it received: from its first packet to its last (Parley's 50 packets a second).
            let counts = stats.map { ($0.time, $0.fields["received"] as? Int ?? 0) }
            let firstTime = counts.first { $0.1 > 0 }?.0 ?? 0, lastTime = counts.first { $0.1 == received }?.0 ?? 0
            let expected = (lastTime - firstTime) * 50
            #expect(Double(received) >= 0.95 * expected && lost == 0, "received \(received) of about \(Int(expected)), lost \(lost)")

            // Energy per report, put on the file's time by the lag that lines it up best with the
            // file's speech; then speech and silence apart.
            let energy = stats.map { (t: $0.time, e: $0.fields["energy"] as? Double ?? 0) }
            let steps = zip(energy, energy.dropFirst()).map { (from: $0.t, to: $1.t, rise: $1.e - $0.e) }
            func inSpeech(_ from: Double, _ to: Double) -> Double {
                reference.reduce(0) { $0 + max(0, min(to, $1.end) - max(from, $1.start)) } / (to - from)
            }
            // The lag: where the file's speech in each report's span correlates best with the
            // logarithm of its energy rise (spans inside the file only).
            let duration = Double(voice.count) / 16_000
            var best = (lag: 0.0, score: -Double.infinity)
            for k in -4_000...4_000 {
                let lag = Double(k) / 100
                let inside = steps.filter { $0.from + lag >= 0 && $0.to + lag <= duration }
                guard inside.count >= 40 else { continue }
                let x = inside.map { inSpeech($0.from + lag, $0.to + lag) }, y = inside.map { log10(max($0.rise, 0) + 1e-9) }
                let mx = x.reduce(0, +) / Double(x.count), my = y.reduce(0, +) / Double(y.count)
                let sxy = zip(x, y).reduce(0) { $0 + ($1.0 - mx) * ($1.1 - my) }
                let sxx = x.reduce(0) { $0 + ($1 - mx) * ($1 - mx) }, syy = y.reduce(0) { $0 + ($1 - my) * ($1 - my) }
                let score = sxy / max(1e-12, (sxx * syy).squareRoot())
                if score > best.score { best = (lag, score) }
            }
            let speechRises = steps.filter { inSpeech($0.from + best.lag, $0.to + best.lag) >= 0.99 }.map(\.rise)
            let silentRises = steps.filter { $0.from + best.lag >= 0 && $0.to + best.lag <= duration
                && inSpeech($0.from + best.lag - 0.3, $0.to + best.lag + 0.3) == 0 }.map(\.rise)
            try #require(!speechRises.isEmpty, "no report in speech at lag \(best.lag): \(energy.suffix(20))")
            let speechMedian = speechRises.sorted()[speechRises.count / 2]
            #expect(speechRises.count >= 8 && silentRises.count >= 8, "\(speechRises.count) speech, \(silentRises.count) silent reports")
            let silenceMedian = silentRises.isEmpty ? Double.infinity : silentRises.sorted()[silentRises.count / 2]
            #expect((silentRises.max() ?? 1) < (speechRises.min() ?? 0) && silenceMedian * 100 < speechMedian,
                    "energy rises in speech \(speechRises), in silence \(silentRises)")

            // Janus's talking events for Parley, from its levels, and Parley's own.
            let events = try interopEvents(dir.appendingPathComponent("parley.jsonl"))
            let janusTalks = events.filter { $0["type"] as? String == "janus_talking" && $0["participant"] as? String == "parley" }.count
            #expect(janusTalks >= 2, "Janus's talking events for parley: \(janusTalks)")
            print("parley join -> Janus -> browser (WebRTC): \(received) packets received of about \(Int(expected)), \(lost) lost; "
                  + "energy rise per 250 ms: speech median \(String(format: "%.2e", speechMedian)), least "
                  + "\(String(format: "%.2e", speechRises.min() ?? 0)), silence at most "
                  + "\(String(format: "%.2e", silentRises.max() ?? 0)); Janus talking events for parley: \(janusTalks)")
        }
    }
}
