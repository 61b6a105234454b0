import Foundation
import Testing
import ParleyDTLS
import ParleySCTP
import ParleySDP
import ParleyWebRTC

/// aiortc (Python; scripts/setup.sh installs it) as the peer: an implementation of ICE, DTLS,
/// SCTP and DCEP other than Parley's and usrsctp (`Peers/aiortc_peer.py`), with data-only
/// descriptions, Parley offering (the DTLS server against aiortc's `a=setup:active`) and
/// answering (the DTLS client).
@Suite(.serialized) struct AiortcInteropTests {
    /// The aiortc peer in `role` (`offer` or `answer`), its standard input and output.
    private final class Peer {
        let process = Process()
        let input = Pipe(), output = Pipe()

        init(role: String) throws {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Peers/aiortc_peer.py")
            process.arguments = ["python3", script.path, role]
            process.standardInput = input
            process.standardOutput = output
            try process.run()
        }

        func write(_ description: JSEPDescription) throws {
            input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: ["sdp": description.text]) + Data("\n".utf8))
        }

        func read(_ kind: JSEPDescription.Kind) throws -> JSEPDescription {
            var line = Data()
            while !line.contains(UInt8(ascii: "\n")) {
                let chunk = output.fileHandleForReading.availableData
                guard !chunk.isEmpty else { break }
                line += chunk
            }
            let json = try #require(try JSONSerialization.jsonObject(with: line) as? [String: String])
            return try JSEPDescription(parsing: try #require(json["sdp"]), kind: kind)
        }

        func finish() {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
    }

    @Test(arguments: [WebRTCTransportRole.offerer, .answerer])
    func dataChannelsWorkBothWaysWithAiortc(_ role: WebRTCTransportRole) throws {
        let transport = try WebRTCTransport(role: role, certificate: DTLSCertificate(), localAddresses: ["127.0.0.1"], clock: clock)
        let gathering = Date().addingTimeInterval(5)
        while !transport.candidatesComplete, Date() < gathering { usleep(5_000) }
        let local = transport.local(cname: "parley", audioSSRC: 1, videoSSRC: 2)
        let peer = try Peer(role: role == .offerer ? "answer" : "offer")
        defer { peer.finish() }
        if role == .offerer {
            try peer.write(JSEPDescription.offer(local: local, audio: nil, video: nil, dataChannel: true))
            try transport.setRemote(try peer.read(.answer), dataChannel: true)
            #expect(transport.dtlsRole == .server, "aiortc answers a=setup:active")
        } else {
            let offer = try peer.read(.offer)
            try peer.write(try JSEPDescription.answer(to: offer, local: local, dataChannel: true) { _ in .both })
            try transport.setRemote(offer, dataChannel: true)
            #expect(transport.dtlsRole == .client)
        }
        let channels = try #require(transport.dataChannels)
        var events: [DataChannelEvent] = []
        channels.onEvent = { events.append($0) }
        func pump(until done: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(10)
            while Date() < deadline {
                transport.receive(until: clock.now()) { _, _ in }
                if done() { return true }
                usleep(1_000)
            }
            return done()
        }
        func messages(on id: UInt16) -> [DataChannelMessage] {
            events.compactMap { if case .message(id, let m) = $0 { m } else { nil } }
        }

        let chat = try channels.open(DataChannelParameters(label: "chat", protocol: "text"))
        #expect(chat % 2 == (transport.dtlsRole == .client ? 0 : 1))
        #expect(pump { channels.channel(chat)?.state == .open }, "\(transport.state) \(events)")
        let big = (0..<60_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try channels.send(text: "こんにちは 👋", on: chat)
        try channels.send(binary: [1, 2, 3], on: chat)
        try channels.send(binary: big, on: chat)
        #expect(pump { messages(on: chat).count == 3 })
        #expect(messages(on: chat) == [.text("echo こんにちは 👋"), .binary([3, 2, 1]), .binary(big.reversed())])

        // aiortc's own channel: the other parity, its parameters, its message.
        #expect(pump { events.contains { if case .opened(let c) = $0 { !c.openedLocally } else { false } } })
        let theirs = try #require(events.lazy.compactMap { if case .opened(let c) = $0, !c.openedLocally { c } else { nil } }.first)
        #expect(theirs.id % 2 != chat % 2)
        #expect(theirs.parameters == DataChannelParameters(label: "from-aiortc", protocol: "p", ordered: false, reliability: .maxRetransmits(2),
                                                        priority: 0))   // aiortc writes priority 0
        #expect(pump { messages(on: theirs.id) == [.text("hello from aiortc")] })

        channels.close(chat)
        #expect(pump { events.contains(.closed(channel: chat)) })
        #expect(channels.statistics.packetsDropped == 0 && channels.statistics.packetsRefused == 0)
        transport.close()
    }
}
