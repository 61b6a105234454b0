// `parley join` against a real Janus (the Debian package, started per test on 127.0.0.1 and
// stopped by process id): its failures (no server, no room, a wrong pin, the server stopping
// in the middle of a call).

import Foundation
import Testing
import JanusTestSupport
import ParleyJanus

@Suite(.serialized, .enabled(if: JanusServer.binaryPath != nil,
                             "janus is not installed (apt-get install janus): the room tests are skipped"))
struct JoinCommandTests {
    @Test func janusNotRunningAMissingRoomAndAWrongPinFailClearly() async throws {
        let dir = try interopDirectory("join-errors")
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = try #require(try detectConversationFiles().first)
        let port = try JanusServer.freePort()
        let down = try InteropChild(interopParleyBinary, ["join", "--janus", "http://127.0.0.1:\(port)/janus", "--room", "1",
                                                         "--name", "a", "--audio", audio.path, "--no-tui"], in: dir, name: "join-down")
        #expect(down.wait(seconds: 30) == 1)
        #expect(down.output.contains("connection refused"), "\(down.output)")

        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let room = try await videoRoom.createRoom(.init(room: 6160, description: "pinned", publishers: 3, pin: "right"))
            let missing = try InteropChild(interopParleyBinary, ["join", "--janus", server.baseURL.absoluteString, "--room", "999",
                                                                "--name", "a", "--audio", audio.path, "--no-tui", "--output", "m.wav"],
                                           in: dir, name: "join-missing")
            #expect(missing.wait(seconds: 30) == 1)
            #expect(missing.output.contains("room 999 does not exist"), "\(missing.output)")
            let wrong = try InteropChild(interopParleyBinary, ["join", "--janus", server.baseURL.absoluteString, "--room", "\(room)",
                                                              "--name", "a", "--pin", "wrong", "--audio", audio.path, "--no-tui",
                                                              "--output", "w.wav"], in: dir, name: "join-pin")
            #expect(wrong.wait(seconds: 30) == 1)
            #expect(wrong.output.contains("wrong or missing pin"), "\(wrong.output)")
            #expect(try await videoRoom.listParticipants(room: room).isEmpty)
            try await janus.destroy()
        }
    }

    @Test func janusStoppedInTheMiddleEndsEveryParticipantCleanly() async throws {
        let files = try detectConversationFiles()
        let dir = try interopDirectory("join-gone")
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try await JanusServer()
        let janus = JanusClient(baseURL: server.baseURL)
        try await janus.createSession()
        let videoRoom = try await VideoRoomHandle.attach(janus)
        let room = try await videoRoom.createRoom(.init(room: 7170, publishers: 6))
        let names = files.prefix(2).map { $0.deletingPathExtension().lastPathComponent }
        let children = try zip(names, files).map { name, file in
            try InteropChild(interopParleyBinary,
                             ["join", "--janus", server.baseURL.absoluteString, "--room", "\(room)", "--name", name,
                              "--audio", file.path, "--events", "\(name).jsonl", "--output", "\(name)-mix.wav",
                              "--no-tui", "--wait-for", "2"], in: dir, name: "join-gone-\(name)")
        }
        // Once both are in and talking, Janus goes away.
        let start = ContinuousClock.now
        while try await videoRoom.listParticipants(room: room).filter(\.publisher).count < 2, ContinuousClock.now - start < .seconds(30) {
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .seconds(2))
        await server.stop()
        for (child, name) in zip(children, names) {
            #expect(child.wait(seconds: 45) == 1, "\(child.name): \(child.output)")
            #expect(child.output.contains("Janus went away"), "\(child.output)")
            // What was written so far is a complete WAV file.
            let mix = try readInteropWAV(dir.appendingPathComponent("\(name)-mix.wav"))
            #expect(mix.sampleRate == 16_000 && mix.samples.count >= 16_000)
        }
    }
}
