// A browser in a Janus room with `parley join`: a headless Chromium publishes one of
// SampleMedia's voices over WebRTC (ICE, DTLS-SRTP) into a VideoRoom; Parley, in the same room,
// hears it. Run inside the network namespace of scripts/netns.sh (Janus refuses loopback ICE
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
    /// Chromium publishes carlo.wav into a room; `parley join` receives it through the room and
    /// writes what it heard of the browser, which follows the file.
    @Test func aBrowsersVoiceReachesParleyThroughAVideoRoom() async throws {
        let files = try detectConversationFiles()
        let carlo = try #require(files.first { $0.lastPathComponent == "carlo.wav" })
        let dir = try interopDirectory("browser-join")
        defer { try? FileManager.default.removeItem(at: dir) }
        // Parley's own voice: 24 s of silence, so it stays in the room while the browser talks.
        let quiet = dir.appendingPathComponent("quiet.wav")
        try writeInteropWAV(quiet, sampleRate: 16_000, samples: [Float](repeating: 0, count: 16_000 * 24))
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
            let browser = try BrowserPeer(janus: server.baseURL, room: room, role: .publish(audio: carlo, display: "browser"))
            defer { browser.stop() }
            let up = await browser.waitFor("webrtc", seconds: 30)
            let janusLog = { String(((try? String(contentsOf: server.logFile, encoding: .utf8)) ?? "").suffix(3000)) }
            try #require(up != nil, "the browser's WebRTC did not come up:\n\(browser.log())\nJanus:\n\(janusLog())")
            // The file (16 s) once through, then the browser leaves.
            try await Task.sleep(for: .seconds(17))
            browser.stop()
            let status = parley.wait(seconds: 30)
            #expect(status == 0, "parley join: \(parley.output)\nJanus:\n\(janusLog())")
            let sent = browser.reports.filter { $0.event == "stats" }.compactMap { $0.fields["sent"] as? Int }.max() ?? 0
            #expect(sent >= 700, "the browser sent \(sent) packets")

            let source = try readInteropWAV(carlo).samples
            let heard = try readInteropWAV(dir.appendingPathComponent("heard/browser.wav")).samples
            let (median, windows, _) = interopSpeechWindowCorrelation(source: source, heard: heard, maxLag: 16_000 * 20)
            // Every 1 s window of the file with speech in it (the rule interopSpeechWindowCorrelation uses).
            let speechWindows = stride(from: 0, to: source.count - 16_000, by: 16_000).filter { w in
                source[w..<(w + 16_000)].map { Double($0 * $0) }.reduce(0, +) / 16_000 > 1e-4
            }.count
            #expect(windows == speechWindows && median >= 0.9,
                    "heard the browser with median window correlation \(median) over \(windows) of \(speechWindows) windows")
            let events = try String(contentsOf: dir.appendingPathComponent("parley.jsonl"), encoding: .utf8)
            #expect(events.contains("\"participant\": \"browser\""), "\(events.prefix(2000))")
            print("browser -> Janus -> parley join: WebRTC up \(String(format: "%.2f", up?.time ?? -1)) s after the page started, "
                  + "\(sent) packets sent, median window correlation \(String(format: "%.3f", median)) over \(windows) windows")
        }
    }
}
