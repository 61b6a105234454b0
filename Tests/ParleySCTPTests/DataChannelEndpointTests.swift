import Foundation
import Testing
import ParleyCore
import ParleySCTP

/// Two endpoints whose SCTP packets are handed across in memory (no DTLS), each side's events
/// logged.
private final class MemoryPair {
    let client: DataChannelEndpoint
    let server: DataChannelEndpoint
    var toServer: [[UInt8]] = [], toClient: [[UInt8]] = []
    /// Packets toward the server to lose, from the next one on.
    var loseTowardServer = 0
    var clientEvents: [DataChannelEvent] = [], serverEvents: [DataChannelEvent] = []
    let clock = SystemMediaClock()

    init(clientAccepts: Int? = nil, serverAccepts: Int? = nil) throws {
        client = DataChannelEndpoint(remoteMaxMessageSize: serverAccepts, isDTLSClient: true)
        server = DataChannelEndpoint(remoteMaxMessageSize: clientAccepts, isDTLSClient: false)
        // Weak: the endpoints' last packets (an ABORT) leave as the pair goes away.
        client.onEvent = { [weak self] in self?.clientEvents.append($0) }
        server.onEvent = { [weak self] in self?.serverEvents.append($0) }
        try client.start(maximumPacket: 1163) { [weak self] in self?.toServer.append(Array($0)); return true }
        try server.start(maximumPacket: 1163) { [weak self] in self?.toClient.append(Array($0)); return true }
        pump()
        #expect(client.isReady && server.isReady)
    }

    /// Delivers packets both ways until none is left.
    func pump() {
        while !toServer.isEmpty || !toClient.isEmpty {
            let (s, c) = (toServer, toClient)
            toServer.removeAll()
            toClient.removeAll()
            for p in s {
                if loseTowardServer > 0 { loseTowardServer -= 1; continue }
                p.withUnsafeBytes { server.receive(packet: $0) }
            }
            for p in c { p.withUnsafeBytes { client.receive(packet: $0) } }
            let now = clock.now()
            client.advance(to: now)
            server.advance(to: now)
        }
    }

    func messages(_ events: [DataChannelEvent], on channel: UInt16) -> [DataChannelMessage] {
        events.compactMap { if case .message(channel, let m) = $0 { m } else { nil } }
    }
}

@Suite struct DataChannelEndpointTests {
    @Test func aMessageOverThisSidesLimitIsDroppedAndCounted() throws {
        // The client believes the server takes anything (a=max-message-size:0).
        let pair = try MemoryPair(serverAccepts: 0)
        #expect(pair.client.remoteMaxMessageSize == Int.max)
        let id = try pair.client.open(DataChannelParameters(label: "big"))
        pair.pump()
        try pair.client.send(binary: [UInt8](repeating: 7, count: DataChannelEndpoint.maxMessageSize + 1000), on: id)
        try pair.client.send(binary: [UInt8](repeating: 8, count: DataChannelEndpoint.maxMessageSize), on: id)
        try pair.client.send(text: "after", on: id)
        pair.pump()
        #expect(pair.server.statistics.messagesTooLarge == 1)
        #expect(pair.messages(pair.serverEvents, on: id) == [.binary([UInt8](repeating: 8, count: DataChannelEndpoint.maxMessageSize)), .text("after")])
    }

    @Test func theAcceptingSideClosesAChannel() throws {
        let pair = try MemoryPair()
        let id = try pair.server.open(DataChannelParameters(label: "from the server"))
        #expect(id == 1)
        pair.pump()
        #expect(pair.client.channel(id)?.state == .open && pair.server.channel(id)?.state == .open)
        pair.client.close(id)
        pair.pump()
        #expect(pair.clientEvents.last == .closed(channel: id) && pair.serverEvents.last == .closed(channel: id))
        #expect(pair.server.channel(id)?.state == .closed)
        #expect(throws: DataChannelError.channelClosed(id)) { try pair.server.send(text: "gone", on: id) }
    }

    @Test func channelsClosedAtOnceAllClose() throws {
        let pair = try MemoryPair()
        let ids = try (0..<5).map { _ in try pair.client.open(DataChannelParameters(label: "short-lived")) }
        pair.pump()
        for id in ids { try pair.client.send(text: "last words", on: id) }
        for id in ids { pair.client.close(id) }
        pair.pump()
        for id in ids {
            #expect(pair.client.channel(id)?.state == .closed && pair.server.channel(id)?.state == .closed)
            #expect(pair.messages(pair.serverEvents, on: id) == [.text("last words")])
        }
        #expect(Set(pair.serverEvents.compactMap { if case .closed(let id) = $0 { id } else { nil } }) == Set(ids))
    }

    @Test func aLostMessageIsGivenUpRetransmittedInOrderOrDeliveredLateByChannelType() throws {
        let pair = try MemoryPair()
        let lossy = try pair.client.open(DataChannelParameters(label: "lossy", reliability: .maxRetransmits(0)))
        let reliable = try pair.client.open(DataChannelParameters(label: "reliable"))
        let unordered = try pair.client.open(DataChannelParameters(label: "unordered", ordered: false))
        pair.pump()
        for (id, label) in [(lossy, "lossy"), (reliable, "reliable"), (unordered, "unordered")] {
            // The first message's packet is lost; the next five arrive, and their acknowledgements
            // report the gap (no timer runs in between: this is fast retransmission's path).
            pair.loseTowardServer = 1
            for i in 0..<6 { try pair.client.send(text: "\(label) \(i)", on: id) }
            pair.pump()
            #expect(pair.loseTowardServer == 0)
        }
        #expect(pair.messages(pair.serverEvents, on: lossy) == (1..<6).map { .text("lossy \($0)") })
        #expect(pair.messages(pair.serverEvents, on: reliable) == (0..<6).map { .text("reliable \($0)") })
        // Unordered: the five arrive as they come, the lost one once retransmitted.
        #expect(pair.messages(pair.serverEvents, on: unordered) == (1..<6).map { .text("unordered \($0)") } + [.text("unordered 0")])
    }

    @Test func aTimedChannelGivesUpALostMessageOnlyPastItsLifetime() throws {
        let pair = try MemoryPair()
        let timed = try pair.client.open(DataChannelParameters(label: "timed", reliability: .maxLifetime(milliseconds: 50)))
        pair.pump()
        for (label, wait) in [("young", 0.0), ("expired", 0.15)] {
            pair.loseTowardServer = 1
            try pair.client.send(text: "\(label) 0", on: timed)
            pair.pump()
            Thread.sleep(forTimeInterval: wait)
            for i in 1..<6 { try pair.client.send(text: "\(label) \(i)", on: timed) }
            pair.pump()
        }
        // Retransmitted within its 50 ms; given up once they have passed.
        #expect(pair.messages(pair.serverEvents, on: timed) == (0..<6).map { .text("young \($0)") } + (1..<6).map { .text("expired \($0)") })
    }

    @Test func streamIdsRunOutAndParametersAreChecked() throws {
        let pair = try MemoryPair()
        for i in 0..<512 { #expect(try pair.client.open(DataChannelParameters(label: "\(i)")) == UInt16(2 * i)) }
        #expect(throws: DataChannelError.noStreamAvailable) { _ = try pair.client.open(DataChannelParameters(label: "one more")) }
        pair.pump()
        #expect(pair.server.channels.count == 512 && pair.server.channels.allSatisfy { $0.state == .open && !$0.openedLocally })
        #expect(throws: DataChannelError.invalidParameters(.fieldTooLong(field: "protocol"))) {
            _ = try pair.server.open(DataChannelParameters(label: "", protocol: String(repeating: "p", count: 70_000)))
        }
        let unused = DataChannelEndpoint(remoteMaxMessageSize: nil, isDTLSClient: true)
        #expect(throws: DataChannelError.sctp(.invalidArgument)) { try unused.start(maximumPacket: 100) { _ in true } }
    }

    @Test func aFullSendBufferIsATypedErrorUntilThePeerAcknowledges() throws {
        let pair = try MemoryPair()
        let id = try pair.client.open(DataChannelParameters(label: "bulk"))
        pair.pump()
        let chunk = [UInt8](repeating: 1, count: 60_000)
        var sent = 0
        var refused: DataChannelError?
        while refused == nil, sent < 100 {
            do throws(DataChannelError) { try pair.client.send(binary: chunk, on: id); sent += 1 } catch { refused = error }
        }
        #expect(refused == .sendBufferFull, "after \(sent) messages")
        pair.pump()
        try pair.client.send(binary: chunk, on: id)
        pair.pump()
        #expect(pair.messages(pair.serverEvents, on: id).count == sent + 1)
    }
}
