// A room's chat through a real Janus TextRoom, inside the network namespace of scripts/netns.sh:
// two Parley participants (and, in ChatBrowserTests, Chromium with janus.js) exchange messages;
// each arrives at the others exactly once, in order, whole, within 200 ms.

import Foundation
import JanusTestSupport
import ParleyCore
import ParleyJanus
import ParleyRooms
import Testing

/// The chat events of one participant, each with its arrival time on the process's monotonic
/// clock, as they come.
final class ChatLog: Sendable {
    private let entries = Locked<[(event: ChatEvent, at: MonotonicTime)]>([])

    init(_ room: JanusRoom) {
        let stream = room.chat
        // Ends with the stream, when the participant leaves.
        Task { [self] in
            for await event in stream {
                let now = MonotonicTime.now()
                entries.withLock { $0.append((event, now)) }
            }
        }
    }

    /// The messages received so far, with their arrival times.
    var messages: [(message: ChatMessage, at: MonotonicTime)] {
        entries.withLock { list in list.compactMap { if case .message(let m) = $0.event { (m, $0.at) } else { nil } } }
    }

    var events: [ChatEvent] { entries.withLock { $0.map(\.event) } }

    /// The texts received from `sender` (its display name), in order.
    func texts(from sender: String) -> [String] { messages.filter { $0.message.displayName == sender }.map(\.message.text) }

    /// Waits up to `seconds` until `condition` holds of the log; whether it did.
    @discardableResult
    func wait(seconds: Double = 10, until condition: (ChatLog) -> Bool) async -> Bool {
        let deadline = MonotonicTime.now().advanced(bySeconds: seconds)
        while MonotonicTime.now() < deadline {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition(self)
    }
}

/// Options for a VideoRoom participant `name` over WebRTC in the namespace, chatting in
/// TextRoom room `chat`.
func chatOptions(_ server: JanusServer, room: UInt64, chat: UInt64, name: String) throws -> JanusRoom.Options {
    var o = JanusRoom.Options(server: server.baseURL, room: room, name: name)
    o.iceAddresses = [try #require(NetworkNamespace.address)]
    o.chat = ChatOptions(room: chat)
    return o
}

/// A text of `count` UTF-8 bytes mixing ASCII, Japanese, emoji and JSON's escaped characters.
func mixedText(bytes count: Int) -> String {
    let pieces = ["chat ", "日本語", "🎉", "\"q\"", "\\", "\n", "é", "👩🏽‍💻", "\u{1}"]
    var text = ""
    var size = 0, i = 0
    while true {
        let p = pieces[i % pieces.count]
        i += 1
        let escaped = p.utf8.reduce(0) { n, b in
            n + (b == 0x22 || b == 0x5C || b == 0x0A ? 2 : b < 0x20 ? 6 : 1)
        }
        if size + escaped > count { break }
        text += p
        size += escaped
    }
    text += String(repeating: "x", count: count - size)
    return text
}

@Suite(.serialized, .enabled(if: NetworkNamespace.isInside,
                             "runs inside the network namespace of scripts/netns.sh (unshare -n, as root), as scripts/test.sh does"),
       .enabled(if: JanusServer.binaryPath != nil, "janus is not installed (apt-get install janus): the chat tests are skipped"))
struct RoomChatTests {
    /// Two participants chat: messages in order, once each, with their echoes marked own;
    /// Unicode whole; the longest message and a burst of 1000 arrive whole; each within 200 ms
    /// of its sending, on this process's clock; bad input gets typed errors; leaving leaves the
    /// chat room empty.
    @Test func twoParticipantsChatThroughTextRoom() async throws {
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let textRoom = try await TextRoomHandle.attach(janus)
            let media = try await videoRoom.createRoom(.init(room: 5100, publishers: 4))
            let chat = try await textRoom.createRoom(5100)
            let ann = try await JanusRoom.join(try chatOptions(server, room: media, chat: chat, name: "ann"))
            let bob = try await JanusRoom.join(try chatOptions(server, room: media, chat: chat, name: "bob"))
            let annLog = ChatLog(ann), bobLog = ChatLog(bob)
            #expect(await annLog.wait { log in log.events.contains(.joined(TextRoomParticipant(username: String(bob.participantID), display: "bob"))) },
                    "ann sees bob join the chat: \(annLog.events)")

            // Ordering, exactly once, own echoes, latency (one clock: this process's).
            var sent: [String: MonotonicTime] = [:]
            for i in 1...20 {
                let (sender, text) = i % 2 == 0 ? (bob, "b-\(i)") : (ann, "a-\(i)")
                sent[text] = MonotonicTime.now()
                try sender.send(chat: text)
                try await Task.sleep(for: .milliseconds(20))
            }
            let unicode = "こんにちは、世界 🎌🍣 👨‍👩‍👧 Ünïcödé"
            try ann.send(chat: unicode)
            #expect(await bobLog.wait { $0.messages.count >= 21 })
            #expect(await annLog.wait { $0.messages.count >= 21 })
            let annTexts = (1...20).filter { $0 % 2 == 1 }.map { "a-\($0)" } + [unicode]
            let bobTexts = (1...20).filter { $0 % 2 == 0 }.map { "b-\($0)" }
            #expect(bobLog.texts(from: "ann") == annTexts, "bob got ann's once each, in order")
            #expect(annLog.texts(from: "bob") == bobTexts, "ann got bob's once each, in order")
            #expect(annLog.texts(from: "ann") == annTexts && annLog.messages.filter { $0.message.displayName == "ann" }.allSatisfy(\.message.isOwn))
            #expect(bobLog.messages.filter { $0.message.displayName == "ann" }.allSatisfy { !$0.message.isOwn && $0.message.senderID == String(ann.participantID) })
            var latencies: [Double] = []
            for (m, at) in bobLog.messages + annLog.messages where !m.isOwn {
                if let start = sent[m.text] { latencies.append(Double(start.nanoseconds(to: at)) / 1e6) }
            }
            latencies.sort()
            #expect(latencies.count == 20 && latencies.last! <= 200, "latencies (ms): \(latencies)")

            // The longest message, whole; one byte more is refused.
            let longest = mixedText(bytes: JanusRoom.chatTextLimit)
            try ann.send(chat: longest)
            #expect(await bobLog.wait { $0.texts(from: "ann").last == longest }, "the longest message arrives whole")
            #expect(throws: ChatError.tooLong(size: JanusRoom.chatTextLimit + 1, limit: JanusRoom.chatTextLimit)) {
                try ann.send(chat: longest + "x")
            }
            #expect(throws: ChatError.invalidUTF8) { try ann.send(chatUTF8: [0x61, 0xFF, 0x62]) }

            // A burst of 1000, all whole and in order.
            let burstStart = MonotonicTime.now()
            for i in 0..<1000 { try bob.send(chat: "burst-\(i) " + String(repeating: "·", count: i % 50)) }
            let expected = (0..<1000).map { "burst-\($0) " + String(repeating: "·", count: $0 % 50) }
            #expect(await annLog.wait(seconds: 20) { $0.texts(from: "bob").count >= bobTexts.count + 1000 })
            #expect(Array(annLog.texts(from: "bob").suffix(1000)) == expected, "the burst arrives whole, once, in order")
            let burstEnd = try #require(annLog.messages.last?.at)
            let annOpen = try #require(ann.chatStatistics?.channelOpenAfterDTLS)
            print("chat (Parley-Parley through TextRoom): latency ms median \(latencies[latencies.count / 2]) max \(latencies.last!); "
                  + "1000-message burst in \(Double(burstStart.nanoseconds(to: burstEnd)) / 1e6) ms; "
                  + "data channel open after DTLS \(annOpen * 1000) ms; \(bob.chatStatistics!)")

            // Leaving: bob sees ann leave; afterwards ann's sends are refused as closed.
            #expect(await ann.leave() == [])
            #expect(await bobLog.wait { $0.events.contains(.left(TextRoomParticipant(username: String(ann.participantID), display: "ann"))) })
            #expect(throws: ChatError.channelClosed) { try ann.send(chat: "too late") }
            #expect(await bob.leave() == [])
            try await janus.destroy()
        }
    }

    /// A wrong chat pin is Janus's refusal, typed, and leaves nothing behind; kicked out of the
    /// chat room, the chat closes; a room joined without a chat refuses to send.
    @Test func aWrongChatPinIsATypedErrorAndNoChatIsNotEnabled() async throws {
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let media = try await videoRoom.createRoom(.init(room: 5200, publishers: 4))
            let chat = try await TextRoomHandle.attach(janus).createRoom(5200, pin: "right")
            var o = try chatOptions(server, room: media, chat: chat, name: "eve")
            o.chat?.pin = "wrong"
            await #expect {
                try await JanusRoom.join(o)
            } throws: { error in
                guard case RoomError.chat(.refused(let code, _)) = error else { return false }
                return code == TextRoomHandle.ErrorCode.unauthorized
            }
            #expect(try await videoRoom.listParticipants(room: media).isEmpty, "nothing left behind")

            // Kicked out of the chat room: the chat closes, and sending is refused as closed.
            let open = try await TextRoomHandle.attach(janus)
            let kickable = try await open.createRoom(5201, secret: "admin")
            o.chat = ChatOptions(room: kickable)
            let kicked = try await JanusRoom.join(o)
            let log = ChatLog(kicked)
            try await open.kick(String(kicked.participantID), room: kickable, secret: "admin")
            #expect(await log.wait { $0.events.last == .closed }, "\(log.events)")
            #expect(throws: ChatError.channelClosed) { try kicked.send(chat: "still here?") }
            #expect(await kicked.leave() == [])
            o.chat = nil
            let plain = try await JanusRoom.join(o)
            #expect(throws: ChatError.notEnabled) { try plain.send(chat: "hello") }
            #expect(await plain.leave() == [])
            try await janus.destroy()
        }
    }
}
