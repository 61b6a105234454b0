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
    @Test func aBrowsersTurnsReachParleyThroughAVideoRoom() async throws {
        let files = try detectConversationFiles()
        let dir = try interopDirectory("browser-join")
        defer { try? FileManager.default.removeItem(at: dir) }
        // The browser's voice: armelle then carlo, 32 s, four turns.
        var voice: [Float] = []
        for name in ["armelle.wav", "carlo.wav"] {
            voice += try readInteropWAV(try #require(files.first { $0.lastPathComponent == name })).samples
        }
        let speech = dir.appendingPathComponent("turns.wav")
        try writeInteropWAV(speech, sampleRate: 16_000, samples: voice)
        let detect = try runDetectCLI(["detect", "--format", "csv", speech.path])
        let reference = try #require(detectParseSegmentsCSV(detect.stdout)).map { (start: $0.start, end: $0.end) }
        #expect(reference.count == 4, "parley detect: \(reference)")
        // Parley's own voice: 40 s of silence, so it stays in the room while the browser talks.
        let quiet = dir.appendingPathComponent("quiet.wav")
        try writeInteropWAV(quiet, sampleRate: 16_000, samples: [Float](repeating: 0, count: 16_000 * 40))
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let room = try await videoRoom.createRoom(.init(room: 4242, description: "browser test", publishers: 6))
            let parley = try InteropChild(interopParleyBinary,
                                          ["join", "--janus", server.baseURL.absoluteString, "--room", "\(room)", "--name", "parley",
                                           "--audio", quiet.path, "--events", "parley.jsonl", "--output", "mix.wav",
                                           "--output-each", "heard", "--no-tui", "--timeout", "3"],
                                          in: dir, name: "join-parley")
            // Parley is in the room before the browser starts.
            let deadline = ContinuousClock.now + .seconds(30)
            while try await videoRoom.listParticipants(room: room).filter(\.publisher).isEmpty, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))
            }
            let browser = try BrowserPeer(janus: server.baseURL, room: room, role: .publish(audio: speech, display: "browser"))
            defer { browser.stop() }
            let up = await browser.waitFor("webrtc", seconds: 30)
            let janusLog = { String(((try? String(contentsOf: server.logFile, encoding: .utf8)) ?? "").suffix(3000)) }
            try #require(up != nil, "the browser's WebRTC did not come up:\n\(browser.log())\nJanus:\n\(janusLog())")
            // The file once through, then the browser leaves (killed: Parley sees it go by its
            // silence, --timeout).
            try await Task.sleep(for: .seconds(Double(voice.count) / 16_000 + 0.5))
            browser.stop()
            let status = parley.wait(seconds: 30)
            #expect(status == 0, "parley join: \(parley.output)\nJanus:\n\(janusLog())")
            #expect(parley.output.contains("webrtc: connected"), "\(parley.output)")
            let sent = browser.reports.filter { $0.event == "stats" }.compactMap { $0.fields["sent"] as? Int }.max() ?? 0
            #expect(sent >= 1_400, "the browser sent \(sent) packets")

            // The audio, aligned with the file.
            let heard = try readInteropWAV(dir.appendingPathComponent("heard/browser.wav")).samples
            let (median, windows, lag) = interopSpeechWindowCorrelation(source: voice, heard: heard, maxLag: 16_000 * 20)
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
        }
    }
}
