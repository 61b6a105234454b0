import Foundation
import Testing
import ParleyCore
import ParleySCTP
import ParleyWebRTC

/// What one side's data channels reported, in order.
private final class EventLog {
    var events: [DataChannelEvent] = []
    var opened: [DataChannel] { events.compactMap { if case .opened(let c) = $0 { c } else { nil } } }
    var closed: [UInt16] { events.compactMap { if case .closed(let id) = $0 { id } else { nil } } }
    func messages(on channel: UInt16) -> [DataChannelMessage] {
        events.compactMap { if case .message(channel, let m) = $0 { m } else { nil } }
    }
}

/// A connected pair with data channels, each side's events logged.
private struct DataPair {
    let pair: Pair
    let offerer: DataChannelEndpoint
    let answerer: DataChannelEndpoint
    let offererLog = EventLog()
    let answererLog = EventLog()

    init(connect: Bool = true) throws {
        pair = try Pair(dataChannel: true)
        offerer = try #require(pair.offerer.dataChannels)
        answerer = try #require(pair.answerer.dataChannels)
        offerer.onEvent = { [offererLog] in offererLog.events.append($0) }
        answerer.onEvent = { [answererLog] in answererLog.events.append($0) }
        if connect { pair.connect() }
    }

    /// Drives both transports until `done` (false if `seconds` passed first); `media` gets the
    /// RTP and RTCP each side received (true: the offerer's).
    @discardableResult
    func pump(seconds: Double = 5, media: (Bool, [UInt8]) -> Void = { _, _ in }, until done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let now = clock.now()
            pair.offerer.receive(until: now) { bytes, _ in media(true, Array(bytes)) }
            pair.answerer.receive(until: now) { bytes, _ in media(false, Array(bytes)) }
            if done() { return true }
            usleep(1_000)
        }
        return done()
    }
}

@Suite(.serialized) struct DataChannelTests {
    @Test func channelsOpenBothWaysAndCarryWholeMessagesInOrder() throws {
        let p = try DataPair()
        #expect(p.pair.answerer.dtlsRole == .client)
        // Opened the moment DTLS is up: the time to an open channel includes SCTP's handshake.
        let start = clock.now()
        let fromAnswerer = try p.answerer.open(DataChannelParameters(label: "chat", protocol: "text/plain"))
        let fromOfferer = try p.offerer.open(DataChannelParameters(label: "files"))
        #expect(fromAnswerer % 2 == 0, "the DTLS client's stream ids are even")
        #expect(fromOfferer % 2 == 1, "the DTLS server's stream ids are odd")
        #expect(p.pump { p.answerer.channel(fromAnswerer)?.state == .open && p.offerer.channel(fromOfferer)?.state == .open })
        let openMs = Double(start.nanoseconds(to: clock.now())) / 1e6
        print("data channel open after DTLS connected: \(String(format: "%.1f", openMs)) ms (both channels, SCTP association included)")
        #expect(p.offererLog.events.first == .ready && p.answererLog.events.first == .ready)
        let accepted = try #require(p.offererLog.opened.first { $0.id == fromAnswerer })
        #expect(accepted.parameters == DataChannelParameters(label: "chat", protocol: "text/plain"))
        #expect(!accepted.openedLocally && accepted.state == .open)
        #expect(p.answererLog.opened.contains { $0.id == fromOfferer && $0.parameters.label == "files" && !$0.openedLocally })
        #expect(p.answererLog.opened.contains { $0.id == fromAnswerer && $0.openedLocally })

        // Text (Japanese, emoji, empty) and binary both ways.
        let texts = ["こんにちは、世界", "👋🏽 emoji 🎉 and 家族 👨‍👩‍👧‍👦", "", "plain"]
        for t in texts { try p.answerer.send(text: t, on: fromAnswerer) }
        try p.answerer.send(binary: [], on: fromAnswerer)
        try p.answerer.send(binary: [0, 1, 2, 255], on: fromAnswerer)
        try p.offerer.send(text: "返事", on: fromAnswerer)
        try p.offerer.send(binary: [9, 8, 7], on: fromOfferer)
        // A 64 KiB message, and a burst of 1,000.
        let big = (0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        try p.offerer.send(binary: big, on: fromOfferer)
        for i in 0..<1_000 { try p.offerer.send(text: "message \(i)", on: fromOfferer) }
        let sent = texts.map(DataChannelMessage.text) + [.binary([]), .binary([0, 1, 2, 255])]
        let burst = (0..<1_000).map { DataChannelMessage.text("message \($0)") }
        #expect(p.pump(seconds: 10) {
            p.offererLog.messages(on: fromAnswerer).count == sent.count && p.answererLog.messages(on: fromOfferer).count == 1_002
                && p.answererLog.messages(on: fromAnswerer).count == 1
        })
        #expect(p.offererLog.messages(on: fromAnswerer) == sent)
        #expect(p.answererLog.messages(on: fromAnswerer) == [.text("返事")])
        let got = p.answererLog.messages(on: fromOfferer)
        #expect(got.count == 1_002)
        #expect(got.first == .binary([9, 8, 7]))
        #expect(got.dropFirst().first == .binary(big), "the 64 KiB message whole")
        #expect(Array(got.dropFirst(2)) == burst, "the burst whole and in order")
        for s in [p.offerer.statistics, p.answerer.statistics] {
            #expect(s.packetsDropped == 0 && s.packetsRefused == 0 && s.messagesTooLarge == 0, "\(s)")
        }
        #expect(p.offerer.statistics.messagesSent == 1_003 && p.answerer.statistics.messagesReceived == 1_003)
        #expect(p.pair.offerer.state == .connected && p.pair.answerer.state == .connected)
    }

    @Test func mediaAndDataShareTheTransport() throws {
        let p = try DataPair()
        let id = try p.offerer.open(DataChannelParameters(label: "beside the media"))
        #expect(p.pump { p.offerer.channel(id)?.state == .open })
        var sentRTP: [[UInt8]] = []
        for seq in UInt16(1)...100 {
            let packet = try rtp(seq, ssrc: 0x1111)
            sentRTP.append(packet)
            #expect(packet.withUnsafeBytes { p.pair.offerer.send($0, at: clock.now()) })
            try p.offerer.send(text: "message \(seq)", on: id)
        }
        var gotRTP: [[UInt8]] = []
        #expect(p.pump(media: { atOfferer, bytes in if !atOfferer { gotRTP.append(bytes) } },
                       until: { gotRTP.count == 100 && p.answererLog.messages(on: id).count == 100 }))
        #expect(gotRTP == sentRTP)
        #expect(p.answererLog.messages(on: id) == (1...100).map { .text("message \($0)") })
        #expect(p.pair.answerer.statistics.srtp.dropped == 0)
    }

    @Test func unorderedAndPartiallyReliableChannelsOpenWithTheirParameters() throws {
        let p = try DataPair()
        let wanted = [
            DataChannelParameters(label: "positions", ordered: false, reliability: .maxRetransmits(0)),
            DataChannelParameters(label: "cursor", protocol: "v1", ordered: true, reliability: .maxLifetime(milliseconds: 150), priority: 128),
            DataChannelParameters(label: "unordered reliable", ordered: false),
        ]
        var ids: [UInt16] = []
        for w in wanted { ids.append(try p.offerer.open(w)) }
        #expect(ids == [1, 3, 5])
        #expect(p.pump { p.answererLog.opened.count == 3 && ids.allSatisfy { p.offerer.channel($0)?.state == .open } })
        for (id, w) in zip(ids, wanted) {
            #expect(p.answerer.channel(id)?.parameters == w)
            try p.offerer.send(text: "on \(w.label)", on: id)
        }
        #expect(p.pump { ids.allSatisfy { p.answererLog.messages(on: $0).count == 1 } })
        for (id, w) in zip(ids, wanted) { #expect(p.answererLog.messages(on: id) == [.text("on \(w.label)")]) }
    }

    @Test func misuseGivesTypedErrors() throws {
        let p = try DataPair(connect: false)
        // Opened before the association: connecting, and opened once it is up.
        let early = try p.answerer.open(DataChannelParameters(label: "early"))
        #expect(throws: DataChannelError.channelNotOpen(early)) { try p.answerer.send(text: "too soon", on: early) }
        p.pair.connect()
        #expect(p.pump { p.answerer.channel(early)?.state == .open })
        #expect(throws: DataChannelError.invalidUTF8) {
            try [UInt8]([0x61, 0xC3, 0x28]).withUnsafeBytes { try p.answerer.send(utf8: $0, on: early) }
        }
        try [UInt8]("ok ✓".utf8).withUnsafeBytes { try p.answerer.send(utf8: $0, on: early) }
        let limit = DataChannelEndpoint.maxMessageSize
        #expect(p.answerer.remoteMaxMessageSize == limit, "the offer's a=max-message-size")
        #expect(throws: DataChannelError.messageTooLarge(size: limit + 1, limit: limit)) {
            try p.answerer.send(binary: [UInt8](repeating: 1, count: limit + 1), on: early)
        }
        #expect(throws: DataChannelError.channelClosed(400)) { try p.answerer.send(text: "nobody", on: 400) }
        #expect(p.pump { p.offererLog.messages(on: early) == [.text("ok ✓")] })

        // Closed by the opener: both sides report it, and neither sends on it again.
        p.answerer.close(early)
        #expect(p.answerer.channel(early)?.state == .closing)
        #expect(throws: DataChannelError.channelClosed(early)) { try p.answerer.send(text: "late", on: early) }
        #expect(p.pump { p.answererLog.closed == [early] && p.offererLog.closed == [early] })
        #expect(p.offerer.channel(early)?.state == .closed)
        #expect(throws: DataChannelError.channelClosed(early)) { try p.offerer.send(binary: [1], on: early) }
        // The stream id is free again.
        #expect(try p.answerer.open(DataChannelParameters(label: "again")) == early)
        #expect(p.pump { p.offererLog.opened.filter { $0.id == early }.count == 2 })

        // Closing the transport ends the channels.
        p.pair.offerer.close()
        #expect(throws: DataChannelError.associationDown) { _ = try p.offerer.open(DataChannelParameters(label: "after")) }
        #expect(p.offererLog.events.last == .down)
    }

    @Test func aSectionTheAnswerRejectedMakesNoDataChannels() throws {
        let pair = try Pair(dataChannel: true, answerDataChannel: false)
        #expect(pair.offerer.dataChannels == nil && pair.answerer.dataChannels == nil)
        pair.connect()
    }

    @Test func pairsDrivenFromTwoThreadsAtOnceKeepTheirMessages() {
        // usrsctp is one per process: each pair lives on its own thread, and each thread's
        // timers may write the other's packets, which wait for their owner.
        let delivered = Locked<[Int: Bool]>([:])
        let done = DispatchSemaphore(value: 0)
        for t in 0..<2 {
            Thread {
                defer { done.signal() }
                guard let p = try? DataPair(), let id = try? p.answerer.open(DataChannelParameters(label: "thread \(t)")),
                      p.pump(until: { p.answerer.channel(id)?.state == .open }) else { return }
                let sent = (0..<500).map { DataChannelMessage.text("thread \(t) message \($0)") }
                for case .text(let m) in sent { guard (try? p.answerer.send(text: m, on: id)) != nil else { return } }
                p.pump(seconds: 10) { p.offererLog.messages(on: id).count == sent.count }
                let whole = p.offererLog.messages(on: id) == sent
                delivered.withLock { $0[t] = whole }
            }.start()
        }
        done.wait()
        done.wait()
        #expect(delivered.withLock { $0 } == [0: true, 1: true])
    }
}
