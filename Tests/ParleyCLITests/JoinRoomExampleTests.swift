// The `join-room` example (Examples/JoinRoom) against a real Janus: two of them in one VideoRoom
// see each other join and talk over WebRTC, and leave cleanly. Run inside the network namespace
// of scripts/netns.sh (Janus refuses loopback ICE candidates), as scripts/test.sh does.

import Foundation
import Testing
import JanusTestSupport
import ParleyJanus

@Suite(.serialized, .enabled(if: NetworkNamespace.isInside,
                             "runs inside the network namespace of scripts/netns.sh (unshare -n, as root), as scripts/test.sh does"),
       .enabled(if: JanusServer.binaryPath != nil,
                             "janus is not installed (apt-get install janus): the room tests are skipped"))
struct JoinRoomExampleTests {
    @Test func twoExampleClientsInAVideoRoomSeeEachOtherJoinAndTalk() async throws {
        let binary = interopPackageRoot.appendingPathComponent(".build/debug/join-room").path
        let files = try detectConversationFiles().filter { ["reader", "carlo"].contains($0.deletingPathExtension().lastPathComponent) }
        #expect(files.count == 2)
        let dir = try interopDirectory("join-room")
        defer { try? FileManager.default.removeItem(at: dir) }
        try await JanusServer.with(iceInterface: NetworkNamespace.interface) { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let room = try await videoRoom.createRoom(.init(room: 9100, publishers: 4))
            // carlo talks at 2.0-2.5 and 5.5-7.5 s of its file, reader from 0.4 s to 3.4 s.
            let children = try zip(["ann", "bob"], files).map { name, file in
                try InteropChild(binary, [server.baseURL.absoluteString, "\(room)", name, file.path, "9"], in: dir, name: name)
            }
            for child in children { #expect(child.wait(seconds: 45) == 0, "\(child.name): \(child.output)") }
            for (child, other) in zip(children, ["bob", "ann"]) {
                let lines = child.output.split(separator: "\n").map(String.init)
                #expect(lines.first?.hasPrefix("joined room \(room) as \(child.name)") == true, "\(child.output)")
                #expect(lines.contains("\(other) joined"), "\(child.output)")
                #expect(lines.contains { $0.hasPrefix("\(other) is talking") }, "\(child.output)")
                #expect(lines.last == "left room \(room)", "\(child.output)")
            }
            #expect(try await videoRoom.listParticipants(room: room).isEmpty, "participants left behind")
            try await janus.destroy()
        }
    }
}
