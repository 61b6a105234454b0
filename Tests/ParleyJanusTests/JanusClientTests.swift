import Foundation
import Testing
@testable import ParleyJanus
import JanusTestSupport

/// Against a real Janus (the Debian package), started per test on 127.0.0.1 and stopped by
/// process id. Serialized: one Janus at a time on a small machine.
@Suite(.serialized, .tags(.realTime), .enabled(if: JanusServer.binaryPath != nil,
                             "janus is not installed (apt-get install janus): the Janus client tests are skipped"))
struct JanusClientTests {
    @Test func audioBridgeRoomLifecycle() async throws {
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            let session = try await janus.createSession()
            #expect(session != 0)
            let bridge = try await AudioBridgeHandle.attach(janus)
            let room = try await bridge.createRoom(.init(description: "parley test", samplingRate: 48_000,
                                                         allowRTPParticipants: true, audioLevelEvent: true))
            #expect(try await bridge.exists(room: room))
            #expect(try await bridge.listParticipants(room: room).isEmpty)
            try await bridge.destroyRoom(room)
            #expect(try await bridge.exists(room: room) == false)
            try await janus.destroy()
            #expect(await janus.sessionID == nil)
        }
    }

    @Test func videoRoomLifecycle() async throws {
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let room = try await videoRoom.createRoom(.init(room: 4242, description: "parley test", publishers: 4))
            #expect(room == 4242)
            #expect(try await videoRoom.exists(room: 4242))
            #expect(try await videoRoom.exists(room: 4243) == false)
            #expect(try await videoRoom.listParticipants(room: 4242).isEmpty)
            try await janus.destroy()
        }
    }

    @Test func wrongRoomIsAPluginError() async throws {
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let bridge = try await AudioBridgeHandle.attach(janus)
            // 485: JANUS_AUDIOBRIDGE_ERROR_NO_SUCH_ROOM.
            do {
                _ = try await bridge.listParticipants(room: 987_654)
                Issue.record("listparticipants of a missing room succeeded")
            } catch JanusError.plugin(let code, let text) {
                #expect(code == 485)
                #expect(text.contains("987654"))
            }
            let videoRoom = try await VideoRoomHandle.attach(janus)
            do {
                _ = try await videoRoom.listParticipants(room: 987_654)
                Issue.record("listparticipants of a missing room succeeded")
            } catch JanusError.plugin(let code, _) {
                #expect(code == 426) // JANUS_VIDEOROOM_ERROR_NO_SUCH_ROOM
            }
            try await janus.destroy()
        }
    }

    @Test func janusErrorsCarryCodeAndReason() async throws {
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            do {
                _ = try await janus.attach(plugin: "janus.plugin.nonexistent")
                Issue.record("attaching to a missing plugin succeeded")
            } catch JanusError.janus(let code, let reason) {
                #expect(code == 460) // JANUS_ERROR_PLUGIN_NOT_FOUND
                #expect(!reason.isEmpty)
            }
            try await janus.destroy()
        }
    }

    @Test func serverNotRunningIsConnectionRefused() async throws {
        let port = try JanusServer.freePort()
        let url = URL(string: "http://127.0.0.1:\(port)/janus")!
        let janus = JanusClient(baseURL: url, requestTimeout: 5)
        let start = ContinuousClock.now
        do {
            try await janus.createSession()
            Issue.record("createSession succeeded with nothing listening")
        } catch let error as JanusError {
            #expect(error == .connectionRefused(url: url))
            #expect(error.description.contains("127.0.0.1:\(port)"))
        }
        #expect(ContinuousClock.now - start < .seconds(3))
    }

    @Test func longPollDeliversEventsAndKeepAlivesAreAcknowledged() async throws {
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL, keepAliveInterval: .milliseconds(300))
            try await janus.createSession()
            try await janus.keepAlive()
            let handle = try await janus.attach(plugin: JanusClient.audioBridgePlugin)
            try await janus.detach(handle)
            // The detach is already queued: the long poll returns at once, well within Janus's 30 s.
            let start = ContinuousClock.now
            let events = try await janus.poll(maxEvents: 5)
            #expect(ContinuousClock.now - start < .seconds(5))
            #expect(events.contains(.detached(sender: handle)))
            // The event stream: a plugin event answers an asynchronous request.
            let bridge = try await AudioBridgeHandle.attach(janus)
            let room = try await bridge.createRoom()
            let stream = await janus.events()
            let reply = try await janus.send(message: ["request": "join", "room": .int(Int64(room)), "display": "parley"],
                                             to: bridge.id)
            #expect(reply == .ack)
            // Bounded: a long poll without events ends with `.timeout` after Janus's 30 s.
            var joined = false
            waiting: for try await event in stream {
                switch event {
                case .plugin(let sender, let plugin, let data, _) where sender == bridge.id:
                    #expect(plugin == JanusClient.audioBridgePlugin)
                    #expect(data["audiobridge"]?.stringValue == "joined")
                    joined = true
                    break waiting
                case .timeout:
                    break waiting
                default:
                    continue
                }
            }
            #expect(joined)
            #expect(try await bridge.listParticipants(room: room).count == 1)
            try await Task.sleep(for: .seconds(1))
            #expect(await janus.keepAlivesAcknowledged >= 1)
            try await janus.destroy()
        }
    }

}

/// Janus's 30 s long poll, which mostly waits: it runs beside the other tests, not in the
/// one-at-a-time real-time pass.
@Suite(.enabled(if: JanusServer.binaryPath != nil,
                "janus is not installed (apt-get install janus): the Janus client tests are skipped"))
struct JanusLongPollTests {
    @Test func emptyLongPollEndsWithTimeout() async throws {
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            // Janus holds a long poll without events for 30 s, then answers a keepalive.
            let start = ContinuousClock.now
            let events = try await janus.poll()
            #expect(events == [.timeout])
            #expect(ContinuousClock.now - start < .seconds(40))
            try await janus.destroy()
        }
    }
}
