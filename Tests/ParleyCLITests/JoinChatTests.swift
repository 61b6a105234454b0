// `parley join --chat-from FILE` between two Parley participants through Janus's TextRoom: the
// lines of each file reach the other in order, once each, as `message` lines of --events and
// "NAME: TEXT" lines of --no-tui; a line that is not UTF-8 or too long is reported and skipped.
// Run inside the network namespace of scripts/netns.sh, as scripts/test.sh does.

import Foundation
import JanusTestSupport
import ParleyJanus
import Testing

@Suite(.serialized, .enabled(if: NetworkNamespace.isInside,
                             "runs inside the network namespace of scripts/netns.sh (unshare -n, as root), as scripts/test.sh does"),
       .enabled(if: JanusServer.binaryPath != nil, "needs janus (scripts/setup.sh installs it)"))
struct JoinChatTests {
    @Test func linesOfEachFileReachTheOtherAsMessageEvents() async throws {
        let files = Array(try detectConversationFiles().prefix(2))
        let names = files.map { $0.deletingPathExtension().lastPathComponent }
        let dir = try interopDirectory("join-chat")
        defer { try? FileManager.default.removeItem(at: dir) }
        let lines = [
            ["hello from \(names[0])", "日本語のメッセージ 🎌🍣", "with \"quotes\" and \\ backslash"],
            ["hi \(names[0]), \(names[1]) here", "絵文字 👩🏽‍💻🚀", "last line"],
        ]
        for (i, name) in names.enumerated() {
            var bytes = Array((lines[i].joined(separator: "\n") + "\n").utf8)
            if i == 0 {
                bytes += [0x62, 0x61, 0x64, 0xFF, 0x0A]                               // not UTF-8
                bytes += Array((String(repeating: "y", count: 70_000) + "\n").utf8)  // too long
            }
            try Data(bytes).write(to: dir.appendingPathComponent("\(name)-chat.txt"))
        }
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let room = try await VideoRoomHandle.attach(janus).createRoom(.init(room: 5280, publishers: 4))
            try await TextRoomHandle.attach(janus).createRoom(room)
            let children = try zip(names, files).map { name, audio in
                try InteropChild(interopParleyBinary,
                                 ["join", "--janus", server.baseURL.absoluteString, "--room", "\(room)", "--name", name,
                                  "--audio", audio.path, "--events", "\(name).jsonl", "--output", "\(name)-mix.wav",
                                  "--no-tui", "--wait-for", "2", "--timeout", "3", "--chat-from", "\(name)-chat.txt"],
                                 in: dir, name: "join-\(name)")
            }
            for child in children { #expect(child.wait(seconds: 90) == 0, "\(child.output)") }
            for (i, name) in names.enumerated() {
                let other = names[1 - i]
                let events = try interopEvents(dir.appendingPathComponent("\(name).jsonl")).filter { $0["type"] as? String == "message" }
                let fromOther = events.filter { $0["participant"] as? String == other }
                #expect(fromOther.compactMap { $0["text"] as? String } == lines[1 - i], "\(name) got \(other)'s lines once each, in order")
                #expect(fromOther.allSatisfy { $0["own"] as? Bool == false && $0["time"] is String && $0["t"] is Double })
                let own = events.filter { $0["participant"] as? String == name }
                #expect(own.compactMap { $0["text"] as? String } == lines[i] && own.allSatisfy { $0["own"] as? Bool == true })
                #expect(children[i].output.contains("\(other): \(lines[1 - i][0])"), "\(children[i].output)")
            }
            #expect(children[0].output.contains("chat: the message is not UTF-8"), "\(children[0].output)")
            #expect(children[0].output.contains("over the chat's limit"), "\(children[0].output)")
            try await janus.destroy()
        }
    }

    /// On a terminal, `--chat` sends each typed line, and the grid shows the messages received
    /// under the participants, the newest last.
    @Test func aTypedLineIsSentAndTheGridShowsTheMessages() async throws {
        let files = Array(try detectConversationFiles().prefix(2))
        let dir = try interopDirectory("join-chat-grid")
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data("first from bob\nsecond from bob 🚀\n".utf8).write(to: dir.appendingPathComponent("bob-chat.txt"))
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let room = try await VideoRoomHandle.attach(janus).createRoom(.init(room: 5290, publishers: 4))
            try await TextRoomHandle.attach(janus).createRoom(room)
            let terminal = try InteropTerminal()
            let common = ["join", "--janus", server.baseURL.absoluteString, "--room", "\(room)", "--wait-for", "2", "--timeout", "3"]
            let ann = try InteropChild(interopParleyBinary, common + ["--name", "ann", "--audio", files[0].path, "--output", "ann-mix.wav", "--chat"],
                                       in: dir, name: "join-ann", terminal: terminal.device)
            let bob = try InteropChild(interopParleyBinary,
                                       common + ["--name", "bob", "--audio", files[1].path, "--output", "bob-mix.wav", "--no-tui",
                                                 "--events", "bob.jsonl", "--chat-from", "bob-chat.txt"],
                                       in: dir, name: "join-bob")
            let start = ContinuousClock.now
            #expect(terminal.shows("second from bob 🚀", within: 30), "\(terminal.text.suffix(2_000))")
            #expect(terminal.shows("Chat (type a line and Enter to send"), "\(terminal.text.suffix(2_000))")
            let screen = try #require(terminal.text.components(separatedBy: "\u{1B}[H\u{1B}[2J").last { $0.contains("bob: second from bob 🚀") })
            let first = try #require(screen.range(of: "bob: first from bob"), "\(screen)")
            let second = try #require(screen.range(of: "bob: second from bob 🚀"), "\(screen)")
            #expect(first.upperBound <= second.lowerBound, "the newest last")
            #expect(screen.range(of: "Chat (")!.lowerBound > screen.range(of: "bob")!.lowerBound, "the chat is under the participants")
            terminal.type("typed on the terminal\n")
            let typed = try await { () async throws -> Bool in
                while ContinuousClock.now - start < .seconds(45) {
                    let events = (try? interopEvents(dir.appendingPathComponent("bob.jsonl"))) ?? []
                    if events.contains(where: { $0["type"] as? String == "message" && $0["participant"] as? String == "ann"
                                                && $0["text"] as? String == "typed on the terminal" }) { return true }
                    try await Task.sleep(for: .milliseconds(100))
                }
                return false
            }()
            #expect(typed, "bob got the typed line")
            #expect(terminal.shows("ann (me): typed on the terminal"), "ann's own echo on its grid")
            #expect(ann.wait(seconds: 60) == 0, "\(terminal.text.suffix(2_000))")
            #expect(bob.wait(seconds: 30) == 0, "\(bob.output)")
            try await janus.destroy()
        }
    }
}
