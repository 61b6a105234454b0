// `parley join` over WebRTC between Parley participants: video through Janus (VP8, pictures at
// the source's size), and a Janus that goes away mid-call. Run inside the network namespace of
// scripts/netns.sh (Janus refuses loopback ICE candidates), as scripts/test.sh does.

import Foundation
import JanusTestSupport
import ParleyJanus
import Testing

@Suite(.serialized, .enabled(if: NetworkNamespace.isInside,
                             "runs inside the network namespace of scripts/netns.sh (unshare -n, as root), as scripts/test.sh does"),
       .enabled(if: JanusServer.binaryPath != nil, "needs janus (scripts/setup.sh installs it)"))
struct JoinOverWebRTCTests {
    private func join(_ name: String, _ audio: URL, server: JanusServer, room: UInt64, extra: [String] = [],
                      in dir: URL) throws -> InteropChild {
        try InteropChild(interopParleyBinary,
                         ["join", "--janus", server.baseURL.absoluteString, "--room", "\(room)", "--name", name,
                          "--audio", audio.path, "--events", "\(name).jsonl", "--output", "\(name)-mix.wav",
                          "--output-each", "\(name)-heard", "--no-tui", "--wait-for", "2", "--timeout", "3"] + extra,
                         in: dir, name: "join-\(name)")
    }

    /// One participant publishes the sample video with its voice; the other receives both over
    /// its subscriber PeerConnection: pictures at the source's size, close to the source.
    @Test func videoReachesTheOtherParticipantAtTheSourcesSize() async throws {
        let files = Array(try detectConversationFiles().prefix(2))
        let names = files.map { $0.deletingPathExtension().lastPathComponent }
        let videoURL = try #require(files.first).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("video/sample.y4m")
        let dir = try interopDirectory("join-webrtc-video")
        defer { try? FileManager.default.removeItem(at: dir) }
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let room = try await videoRoom.createRoom(.init(room: 5260, publishers: 4))
            let listener = try join(names[0], files[0], server: server, room: room, in: dir)
            let talker = try join(names[1], files[1], server: server, room: room, extra: ["--video", videoURL.path], in: dir)
            #expect(listener.wait(seconds: 90) == 0, "\(listener.output)")
            #expect(talker.wait(seconds: 30) == 0, "\(talker.output)")
            #expect(talker.output.contains("webrtc: connected"), "\(talker.output)")
            let video = try readInteropY4M(videoURL)
            let shown = try readInteropY4M(dir.appendingPathComponent("\(names[0])-heard/\(names[1]).y4m"))
            #expect(shown.width == video.width && shown.height == video.height)
            let psnr = shown.frames.map { f in
                video.frames.map { interopLumaPSNR($0, f, width: video.width, height: video.height) }.max() ?? 0
            }
            let mean = psnr.reduce(0, +) / Double(max(1, psnr.count))
            // Every picture sent after the subscription reached the decoder; those shown (the
            // others wait for the audio's time in the lip-sync queue) are the source's.
            func count(_ output: String, _ prefix: String, before marker: String) -> Int? {
                guard let line = output.split(separator: "\n").first(where: { $0.contains(prefix) }),
                      let r = line.range(of: marker) else { return nil }
                return Int(line[..<r.lowerBound].split(separator: " ").last ?? "")
            }
            let sent = try #require(count(talker.output, "video sent:", before: " frames"), "\(talker.output)")
            let decoded = try #require(count(listener.output, "video received from", before: " frames decoded"), "\(listener.output)")
            #expect(decoded * 10 >= sent * 8, "\(decoded) of \(sent) pictures decoded")
            #expect(shown.frames.count >= 50 && mean >= 30,
                    "\(shown.frames.count) pictures, mean PSNR \(mean), lowest \(psnr.min() ?? 0)\n\(listener.output)\n\(talker.output)")
            print("parley join over WebRTC, video: \(decoded) of \(sent) pictures decoded, \(shown.frames.count) shown, "
                  + "\(shown.width)x\(shown.height), luma PSNR mean "
                  + "\(String(format: "%.2f", mean)) dB, lowest \(String(format: "%.2f", psnr.min() ?? 0)) dB")
            try await janus.destroy()
        }
    }

    /// A browser publishes its camera (Chromium's fake one, whose size its SDP does not
    /// announce) with its voice; `parley join` receives the pictures at the size the keyframes
    /// give.
    @Test func aBrowsersCameraReachesParleyAtItsSize() async throws {
        guard BrowserPeer.binaryPath != nil else { return }
        let files = Array(try detectConversationFiles().prefix(1))
        let dir = try interopDirectory("join-webrtc-browser-video")
        defer { try? FileManager.default.removeItem(at: dir) }
        let quiet = dir.appendingPathComponent("quiet.wav")
        try writeInteropWAV(quiet, sampleRate: 16_000, samples: [Float](repeating: 0, count: 16_000 * 14))
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let room = try await videoRoom.createRoom(.init(room: 5262, publishers: 4))
            let parley = try join("parley", quiet, server: server, room: room, in: dir)
            let browser = try BrowserPeer(janus: server.baseURL, room: room,
                                          role: .publishWithCamera(audio: try #require(files.first), display: "browser"))
            defer { browser.stop() }
            let up = await browser.waitFor("webrtc", seconds: 30)
            try #require(up != nil, "the browser's WebRTC did not come up:\n\(browser.log())")
            try await Task.sleep(for: .seconds(8))
            browser.stop()
            #expect(parley.wait(seconds: 40) == 0, "\(parley.output)")
            let shown = try readInteropY4M(dir.appendingPathComponent("parley-heard/browser.y4m"))
            #expect(shown.width == 640 && shown.height == 480, "\(shown.width)x\(shown.height)\n\(parley.output)")
            #expect(shown.frames.count >= 50, "\(shown.frames.count) pictures\n\(parley.output)")
            print("browser camera -> Janus -> parley join (WebRTC): \(shown.frames.count) pictures shown at "
                  + "\(shown.width)x\(shown.height)")
            try await janus.destroy()
        }
    }

    /// Janus stopped in the middle of a call over WebRTC: `parley join` ends with exit status 1,
    /// says so, and leaves complete output files (the WAV and events written up to then).
    @Test func janusGoingAwayEndsTheCallWithExit1AndCompleteFiles() async throws {
        let files = Array(try detectConversationFiles().prefix(2))
        let names = files.map { $0.deletingPathExtension().lastPathComponent }
        let dir = try interopDirectory("join-webrtc-gone")
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try await JanusServer(iceInterface: NetworkNamespace.interface)
        let janus = JanusClient(baseURL: server.baseURL)
        try await janus.createSession()
        let room = try await VideoRoomHandle.attach(janus).createRoom(.init(room: 5270, publishers: 4))
        let children = try zip(names, files).map { try join($0, $1, server: server, room: room, in: dir) }
        for child in children {
            let start = ContinuousClock.now
            while !child.output.contains("connected over WebRTC"), !child.hasExited, ContinuousClock.now - start < .seconds(20) {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try await Task.sleep(for: .seconds(3))
        let stopped = ContinuousClock.now
        await server.stop()
        for (child, name) in zip(children, names) {
            #expect(child.wait(seconds: 30) == 1, "\(child.output)")
            #expect(child.output.contains("Janus went away"), "\(child.output)")
            let mix = try readInteropWAV(dir.appendingPathComponent("\(name)-mix.wav"))
            #expect(mix.samples.count >= 16_000 * 3, "\(name)-mix.wav: \(mix.samples.count) samples")
            let events = try interopEvents(dir.appendingPathComponent("\(name).jsonl"))
            #expect(events.contains { $0["type"] as? String == "joined" && $0["participant"] as? String != name }, "\(events.prefix(5))")
        }
        print("parley join over WebRTC, Janus stopped: both ended with exit 1 within \(ContinuousClock.now - stopped)")
    }
}
