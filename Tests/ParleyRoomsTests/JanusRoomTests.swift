// ParleyRooms against a real Janus (the Debian package, started per test on 127.0.0.1 and
// stopped by process id): two library participants in one VideoRoom hear each other; a wrong
// pin, a missing room and a server that dies give typed errors and notes.

import Foundation
import JanusTestSupport
import ParleyCall
import ParleyCore
import ParleyDevices
import ParleyJanus
import ParleyRooms
import Synchronization
import Testing

/// SampleMedia's conversation: reader talks 0.4-3.4 s, carlo 2.0-2.5 s.
private let conversation = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia/conversation")

/// What one participant's call heard.
private struct Heard: Sendable {
    /// Packets received, by participant name.
    var packets: [String: Int] = [:]
    /// The energy of the audio played out, by participant name (sum of squared samples).
    var energy: [String: Double] = [:]
}

/// Runs `room`'s call on a thread of its own (the session's), publishing `file`, until
/// `seconds` have passed or the room ends.
private func runCall(_ room: JanusRoom, publishing file: String, seconds: Double) async throws -> Heard {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Heard, any Error>) in
        Thread.detachNewThread {
            do {
                let call = try room.makeCall()
                let source = WAVFileSource<Int16>(try WAVFileProvider(path: conversation.appendingPathComponent(file).path),
                                                  clock: call.session.clock)
                var send = AudioSendConfiguration()
                send.sampleRate = source.format.sampleRate
                try call.publishAudio(source, configuration: send)
                var heard = Heard()
                let session = call.session
                session.onAudio = { who, pcm in heard.energy[who, default: 0] += pcm.reduce(0) { $0 + Double($1) * Double($1) } }
                session.onFrame = { [unowned session] _ in if room.endReason != nil { session.stop() } }
                try session.run(until: MonotonicTime.now().advanced(bySeconds: seconds))
                for who in session.remoteNames { heard.packets[who] = session.receiveStatistics(of: who)?.receive.packetsBuffered }
                continuation.resume(returning: heard)
            } catch {
                continuation.resume(throwing: error)
            }
        }
    }
}

/// `ann` and `bob` publish reader's and carlo's voices for `seconds`: each one's session has the
/// other as a remote participant under its display name, with more than `packets` packets and
/// its speech (carlo talks at 2.0-2.5 s, reader from 0.4 s); then both leave without a failure.
@discardableResult
private func expectTheyHearEachOther(_ ann: JanusRoom, _ bob: JanusRoom, seconds: Double,
                                     packets: Int) async throws -> (ann: Heard, bob: Heard) {
    async let annHeard = runCall(ann, publishing: "reader.wav", seconds: seconds)
    async let bobHeard = runCall(bob, publishing: "carlo.wav", seconds: seconds)
    let (a, b) = try await (annHeard, bobHeard)
    #expect(Array(a.packets.keys) == ["bob"] && Array(b.packets.keys) == ["ann"], "\(a.packets) \(b.packets)")
    #expect((a.packets["bob"] ?? 0) > packets && (b.packets["ann"] ?? 0) > packets, "\(a.packets) \(b.packets)")
    #expect((a.energy["bob"] ?? 0) > 1e9 && (b.energy["ann"] ?? 0) > 1e9, "\(a.energy) \(b.energy)")
    #expect(await ann.leave() == [])
    #expect(await bob.leave() == [])
    return (a, b)
}

/// A Janus session with a VideoRoom handle, for creating rooms and looking into them.
private func admin(_ server: JanusServer) async throws -> (JanusClient, VideoRoomHandle) {
    let janus = JanusClient(baseURL: server.baseURL)
    try await janus.createSession()
    return (janus, try await VideoRoomHandle.attach(janus))
}

@Suite(.serialized, .enabled(if: JanusServer.binaryPath != nil,
                             "janus is not installed (apt-get install janus): the room tests are skipped"))
struct JanusRoomTests {
    @Test func twoParticipantsInAVideoRoomHearEachOtherUnderTheirNames() async throws {
        try await JanusServer.with { server in
            let (janus, videoRoom) = try await admin(server)
            let id = try await videoRoom.createRoom(.init(room: 4100, publishers: 4))
            let ann = try await JanusRoom.join(.init(server: server.baseURL, room: id, name: "ann", transport: .plainRTP))
            let bob = try await JanusRoom.join(.init(server: server.baseURL, room: id, name: "bob", transport: .plainRTP))
            #expect(bob.members == ["ann", "bob"], "bob sees who published before it")
            // Leaving removes both remote publishers and their listeners.
            try await expectTheyHearEachOther(ann, bob, seconds: 4, packets: 100)
            #expect(try await videoRoom.listParticipants(room: id).isEmpty)
            try await janus.destroy()
        }
    }

    @Test func aWrongPinAndAMissingRoomAreTypedErrors() async throws {
        try await JanusServer.with { server in
            let (janus, videoRoom) = try await admin(server)
            let id = try await videoRoom.createRoom(.init(room: 4200, publishers: 2, pin: "right"))
            var wrong = JanusRoom.Options(server: server.baseURL, room: id, name: "eve", transport: .plainRTP)
            wrong.pin = "wrong"
            await #expect {
                try await JanusRoom.join(wrong)
            } throws: { error in
                guard case RoomError.wrongPin(let room, _) = error else { return false }
                return room == id
            }
            #expect(try await videoRoom.listParticipants(room: id).isEmpty, "nothing left behind")
            for plugin in [JanusRoom.Plugin.videoRoom, .audioBridge] {
                await #expect {
                    try await JanusRoom.join(.init(server: server.baseURL, room: 999, name: "eve", plugin: plugin, transport: .plainRTP))
                } throws: { error in
                    guard case RoomError.noSuchRoom(let room, _) = error else { return false }
                    return room == 999 && "\(error)".contains("room 999 does not exist")
                }
            }
            try await janus.destroy()
        }
        // Nothing listens any more: the server cannot be reached.
        let port = try JanusServer.freePort()
        await #expect {
            try await JanusRoom.join(.init(server: URL(string: "http://127.0.0.1:\(port)/janus")!, room: 1, name: "eve", transport: .plainRTP))
        } throws: { error in
            guard case RoomError.server(.connectionRefused) = error else { return false }
            return true
        }
    }

    @Test func janusKilledInTheMiddleOfTheCallIsNotedAsGone() async throws {
        let server = try await JanusServer()
        let (_, videoRoom) = try await admin(server)
        let id = try await videoRoom.createRoom(.init(room: 4300, publishers: 2))
        let ann = try await JanusRoom.join(.init(server: server.baseURL, room: id, name: "ann", transport: .plainRTP))
        let notes = Task { () -> [RoomNote] in
            var all: [RoomNote] = []
            for await note in ann.notes { all.append(note) }
            return all
        }
        let start = ContinuousClock.now
        async let heard = runCall(ann, publishing: "reader.wav", seconds: 30)
        try await Task.sleep(for: .seconds(1.5))
        await server.stop()
        _ = try await heard
        // The call ended on the note, long before its 30 s.
        #expect(ContinuousClock.now - start < .seconds(20))
        let reason = try #require(ann.endReason)
        #expect(await ann.leave() == [], "nothing to leave on a server that has gone")
        let all = await notes.value
        // Janus's end: its long poll failing (or, stopped by SIGTERM, a last word for the room).
        #expect(all.contains(.serverGone(reason)) || all.contains(.roomDestroyed), "\(all)")
        await #expect {
            try await ann.waitForPublishers(2)
        } throws: { error in
            guard case RoomError.serverGone = error else { return false }
            return true
        }
    }
}

/// The same over WebRTC (ICE, DTLS-SRTP, Janus's JSEP), inside the network namespace of
/// scripts/netns.sh (Janus refuses loopback candidates).
@Suite(.serialized, .enabled(if: NetworkNamespace.isInside,
                             "runs inside the network namespace of scripts/netns.sh (unshare -n, as root), as scripts/test.sh does"),
       .enabled(if: JanusServer.binaryPath != nil, "janus is not installed (apt-get install janus): the room tests are skipped"))
struct RoomsOverWebRTCTests {
    private func options(_ server: JanusServer, room: UInt64, name: String,
                         plugin: JanusRoom.Plugin = .videoRoom) throws -> JanusRoom.Options {
        var o = JanusRoom.Options(server: server.baseURL, room: room, name: name, plugin: plugin)
        o.iceAddresses = [try #require(NetworkNamespace.address)]
        return o
    }

    /// Two participants publish and subscribe over WebRTC: each hears the other under its
    /// name; the second subscribes to the first at once, the first to the second when it
    /// publishes (Janus's renegotiated offer); leaving leaves nothing behind.
    @Test func twoParticipantsInAVideoRoomHearEachOther() async throws {
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let (janus, videoRoom) = try await admin(server)
            let id = try await videoRoom.createRoom(.init(room: 4400, publishers: 4))
            let started = ContinuousClock.now
            let ann = try await JanusRoom.join(try options(server, room: id, name: "ann"))
            let joined = ContinuousClock.now - started
            let bob = try await JanusRoom.join(try options(server, room: id, name: "bob"))
            #expect(bob.destination.contains("over WebRTC"))
            let (a, b) = try await expectTheyHearEachOther(ann, bob, seconds: 5, packets: 150)
            #expect(try await videoRoom.listParticipants(room: id).isEmpty)
            try await janus.destroy()
            print("rooms over WebRTC: join (publisher answered) in \(joined); ann heard \(a.packets), bob heard \(b.packets)")
        }
    }

    /// Two participants in an AudioBridge over WebRTC: each hears the mix of the other.
    @Test func twoParticipantsInAnAudioBridgeHearTheMix() async throws {
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let bridge = try await AudioBridgeHandle.attach(janus)
            let id = try await bridge.createRoom(.init(room: 4500, samplingRate: 16_000))
            let ann = try await JanusRoom.join(try options(server, room: id, name: "ann", plugin: .audioBridge))
            let bob = try await JanusRoom.join(try options(server, room: id, name: "bob", plugin: .audioBridge))
            #expect(bob.members == ["ann", "bob"])
            async let annHeard = runCall(ann, publishing: "reader.wav", seconds: 4)
            async let bobHeard = runCall(bob, publishing: "carlo.wav", seconds: 4)
            let (a, b) = try await (annHeard, bobHeard)
            #expect(Array(a.packets.keys) == ["mix"] && Array(b.packets.keys) == ["mix"], "\(a.packets) \(b.packets)")
            // bob hears reader's talk (0.4-3.4 s) in the mix; ann hears carlo's (2.0-2.5 s).
            #expect((b.energy["mix"] ?? 0) > 1e9 && (a.energy["mix"] ?? 0) > 1e8, "\(a.energy) \(b.energy)")
            let annLeft = await ann.leave(), bobLeft = await bob.leave()
            #expect(annLeft == [] && bobLeft == [], "\(annLeft) \(bobLeft)")
            #expect(try await bridge.listParticipants(room: id).isEmpty)
            try await janus.destroy()
        }
    }

    @Test func aWrongPinIsATypedErrorOverWebRTCToo() async throws {
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let (janus, videoRoom) = try await admin(server)
            let id = try await videoRoom.createRoom(.init(room: 4600, publishers: 2, pin: "right"))
            var wrong = try options(server, room: id, name: "eve")
            wrong.pin = "wrong"
            await #expect {
                try await JanusRoom.join(wrong)
            } throws: { error in
                guard case RoomError.wrongPin(let room, _) = error else { return false }
                return room == id
            }
            var srtp = try options(server, room: id, name: "eve")
            srtp.srtp = true
            await #expect {
                try await JanusRoom.join(srtp)
            } throws: { error in
                guard case RoomError.invalidOptions(let text) = error else { return false }
                return text.contains("plain RTP")
            }
            #expect(try await videoRoom.listParticipants(room: id).isEmpty, "nothing left behind")
            try await janus.destroy()
        }
    }
}
