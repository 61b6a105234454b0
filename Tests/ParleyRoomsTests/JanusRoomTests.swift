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
            let ann = try await JanusRoom.join(.init(server: server.baseURL, room: id, name: "ann"))
            let bob = try await JanusRoom.join(.init(server: server.baseURL, room: id, name: "bob"))
            #expect(bob.members == ["ann", "bob"], "bob sees who published before it")
            async let annHeard = runCall(ann, publishing: "reader.wav", seconds: 4)
            async let bobHeard = runCall(bob, publishing: "carlo.wav", seconds: 4)
            let (a, b) = try await (annHeard, bobHeard)
            // Each one's session has the other as a remote participant under its display name,
            // with its packets and its speech (carlo talks at 2.0-2.5 s, reader from 0.4 s).
            #expect(Array(a.packets.keys) == ["bob"] && Array(b.packets.keys) == ["ann"], "\(a.packets) \(b.packets)")
            #expect((a.packets["bob"] ?? 0) > 100 && (b.packets["ann"] ?? 0) > 100, "\(a.packets) \(b.packets)")
            #expect((a.energy["bob"] ?? 0) > 1e9 && (b.energy["ann"] ?? 0) > 1e9, "\(a.energy) \(b.energy)")
            // Leaving removes both remote publishers and their listeners.
            #expect(await ann.leave() == [])
            #expect(await bob.leave() == [])
            #expect(try await videoRoom.listParticipants(room: id).isEmpty)
            try await janus.destroy()
        }
    }

    @Test func aWrongPinAndAMissingRoomAreTypedErrors() async throws {
        try await JanusServer.with { server in
            let (janus, videoRoom) = try await admin(server)
            let id = try await videoRoom.createRoom(.init(room: 4200, publishers: 2, pin: "right"))
            var wrong = JanusRoom.Options(server: server.baseURL, room: id, name: "eve")
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
                    try await JanusRoom.join(.init(server: server.baseURL, room: 999, name: "eve", plugin: plugin))
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
            try await JanusRoom.join(.init(server: URL(string: "http://127.0.0.1:\(port)/janus")!, room: 1, name: "eve"))
        } throws: { error in
            guard case RoomError.server(.connectionRefused) = error else { return false }
            return true
        }
    }

    @Test func janusKilledInTheMiddleOfTheCallIsNotedAsGone() async throws {
        let server = try await JanusServer()
        let (_, videoRoom) = try await admin(server)
        let id = try await videoRoom.createRoom(.init(room: 4300, publishers: 2))
        let ann = try await JanusRoom.join(.init(server: server.baseURL, room: id, name: "ann"))
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
