import Foundation
import Testing
import ParleyCore
import ParleyWebRTC

/// What one side's chat reported, in order.
private final class ChatLog {
    var events: [WebRTCChatEvent] = []
    var messages: [ChatMessage] { events.compactMap { if case .message(let m) = $0 { m } else { nil } } }
    var received: [String] { messages.filter { !$0.isOwn }.map(\.text) }
    var own: [String] { messages.filter(\.isOwn).map(\.text) }
}

/// Two transports joined on 127.0.0.1 with a chat on each: the offerer's waits for the
/// answerer's channel (as a browser's page would not), the answerer's opens its own at once.
private struct ChatPair {
    let pair: Pair
    let offerer: WebRTCChat
    let answerer: WebRTCChat
    let offererLog = ChatLog()
    let answererLog = ChatLog()

    init() throws {
        pair = try Pair(dataChannel: true)
        offerer = try WebRTCChat(transport: pair.offerer, clock: clock, local: ("o", "Offerer"), peer: ("a", "Answerer"),
                                 peerChannelWait: 60)
        answerer = try WebRTCChat(transport: pair.answerer, clock: clock, local: ("a", "Answerer"), peer: ("o", "Offerer"),
                                  label: "talk", peerChannelWait: 0)
        offerer.onEvent = { [offererLog] in offererLog.events.append($0) }
        answerer.onEvent = { [answererLog] in answererLog.events.append($0) }
    }

    /// Drives both sides until `done` (false if `seconds` passed first).
    @discardableResult
    func pump(seconds: Double = 10, until done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let now = clock.now()
            pair.offerer.receive(until: now) { _, _ in }
            offerer.advance(to: now)
            pair.answerer.receive(until: now) { _, _ in }
            answerer.advance(to: now)
            if done() { return true }
            usleep(1_000)
        }
        return done()
    }
}

@Suite(.serialized) struct WebRTCChatTests {
    @Test func messagesGoBothWaysOnceInOrderWithTheirSenders() throws {
        let p = try ChatPair()
        // Sent before the connection: it waits for the channel.
        try p.answerer.send("sent before the channel")
        #expect(p.answerer.waiting == 1 && !p.answerer.isOpen)
        p.pair.connect()
        #expect(p.pump { p.offerer.isOpen && p.answerer.isOpen })
        #expect(p.answererLog.events.first == .opened(label: "talk", byPeer: false))
        #expect(p.offererLog.events.first == .opened(label: "talk", byPeer: true), "the peer's channel, whatever its label")
        let unicode = "日本語のチャット 🎌🍣 👨‍👩‍👧‍👦 ñ"
        try p.offerer.send(unicode)
        try p.offerer.send(utf8: Array("bytes ✓".utf8))
        let long = String(repeating: "長", count: 65_536 / 3) + "x"
        try p.answerer.send(long)
        let burst = (0..<1000).map { "m-\($0)" }
        for text in burst { try p.offerer.send(text) }
        #expect(p.pump { p.answererLog.received.count == 1002 && p.offererLog.received.count == 2 })
        #expect(p.answererLog.received == [unicode, "bytes ✓"] + burst)
        #expect(p.offererLog.received == ["sent before the channel", long])
        #expect(p.offererLog.own == [unicode, "bytes ✓"] + burst, "each own message echoed as it left, in order")
        let fromAnswerer = try #require(p.offererLog.messages.first { !$0.isOwn })
        #expect(fromAnswerer.senderID == "a" && fromAnswerer.displayName == "Answerer" && fromAnswerer.serverTime.isEmpty)
        #expect(p.offererLog.messages.first { $0.isOwn }.map { $0.senderID == "o" && $0.displayName == "Offerer" } == true)
        let s = p.offerer.statistics
        #expect(s.messagesSent == 1002 && s.messagesReceived == 2 && s.unsentDropped == 0)
        #expect(s.associationUpAfterDTLS != nil && s.channelOpenAfterDTLS != nil)
    }

    @Test func badInputAndAClosedChatGiveTypedErrors() throws {
        let p = try ChatPair()
        #expect(throws: ChatError.invalidUTF8) { try p.answerer.send(utf8: [0x61, 0xFF, 0x62]) }
        let limit = p.answerer.textLimit
        #expect(limit == WebRTCChat.maximumTextSize, "the offer's a=max-message-size")
        #expect(throws: ChatError.tooLong(size: limit + 1, limit: limit)) { try p.answerer.send(String(repeating: "y", count: limit + 1)) }
        #expect(p.answerer.waiting == 0, "refused messages do not wait")
        p.pair.connect()
        #expect(p.pump { p.offerer.isOpen && p.answerer.isOpen })

        // The transport's end closes the chat on both sides.
        p.pair.offerer.close()
        #expect(p.offererLog.events.last == .closed && p.offerer.isClosed)
        #expect(throws: ChatError.channelClosed) { try p.offerer.send("after") }
        #expect(p.pump { p.answerer.isClosed })
        #expect(throws: ChatError.channelClosed) { try p.answerer.send("after") }
    }

    @Test func aTransportWithoutDataChannelsHasNoChat() throws {
        let pair = try Pair(dataChannel: false)
        #expect(throws: ChatError.notEnabled) {
            _ = try WebRTCChat(transport: pair.offerer, clock: clock, local: ("o", "o"), peer: ("a", "a"))
        }
    }
}
