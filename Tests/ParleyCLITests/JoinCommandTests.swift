// `parley join` against a real Janus (the Debian package, started per test on 127.0.0.1 and
// stopped by process id): three participants, SampleMedia's conversation files as their
// sources, in one VideoRoom; and its failures (no server, no room, a wrong pin, the server
// stopping in the middle of a call).

import Foundation
import ParleyCore
import Testing
import JanusTestSupport
import ParleyJanus
import Synchronization

@Suite(.serialized, .tags(.realTime), .enabled(if: JanusServer.binaryPath != nil,
                             "janus is not installed (apt-get install janus): the room tests are skipped"))
struct JoinCommandTests {

    /// Remote publishers in the room, by display name.
    private func publishers(_ room: VideoRoomHandle, _ id: UInt64) async throws -> [String] {
        try await room.listParticipants(room: id).filter { $0.publisher }.compactMap(\.display).sorted()
    }

    private func join(_ name: String, _ audio: URL, server: JanusServer, room: UInt64, waitFor: Int = 3, extra: [String] = [],
                      in dir: URL) throws -> InteropChild {
        try InteropChild(interopParleyBinary,
                         ["join", "--transport", "rtp", "--janus", server.baseURL.absoluteString, "--room", "\(room)", "--name", name,
                          "--audio", audio.path, "--events", "\(name).jsonl", "--output", "\(name)-mix.wav",
                          "--output-each", "\(name)-heard", "--no-tui", "--wait-for", "\(waitFor)"] + extra,
                         in: dir, name: "join-\(name)")
    }

    @Test(arguments: [false, true])
    func threeParticipantsInAVideoRoomHearEachOtherAndSeeTheOfflineTurns(srtp: Bool) async throws {
        let files = try detectConversationFiles()
        #expect(files.count == 3)
        let detect = try runDetectCLI(["detect", "--meeting", "--format", "csv"] + files.map(\.path))
        let reference = try #require(detectParseSegmentsCSV(detect.stdout))
        let names = files.map { $0.deletingPathExtension().lastPathComponent }

        let dir = try interopDirectory("join")
        defer { try? FileManager.default.removeItem(at: dir) }
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            // Janus's own talking decision: the mean RFC 6464 level of each 25 packets (0.5 s)
            // under 40 dBov (SampleMedia's speech: 20-30; its pauses: 60).
            let room = try await videoRoom.createRoom(.init(room: 5150, description: "parley join test", publishers: 6,
                                                            activePackets: 25, levelAverage: 40))

            let start = ContinuousClock.now
            let children = try zip(names, files).map { name, file in
                try join(name, file, server: server, room: room, extra: srtp ? ["--srtp"] : [], in: dir)
            }
            // Janus lists the three publishers while they are in, and none once they have left.
            var allIn: Duration?
            var most = 0
            while !children.allSatisfy(\.hasExited), ContinuousClock.now - start < .seconds(60) {
                let now = try await publishers(videoRoom, room)
                most = max(most, now.count)
                if allIn == nil, now == names.sorted() { allIn = ContinuousClock.now - start }
                try await Task.sleep(for: .milliseconds(200))
            }
            for child in children { #expect(child.wait(seconds: 45) == 0, "\(child.name): \(child.output)") }
            #expect(most == 3)
            let joinTime = try #require(allIn, "the three never were in the room together")
            #expect(try await publishers(videoRoom, room).isEmpty, "publishers left behind")
            print("parley join\(srtp ? " --srtp" : ""): three publishers listed by Janus \(joinTime) after the start")
            for child in children {
                #expect(child.output.contains("unknown_ssrc: 0"), "\(child.output)")
            }

            for name in names {
                let all = try interopEvents(dir.appendingPathComponent("\(name).jsonl"))
                for other in names where other != name {
                    // Joined and left; every turn of the other, as Janus forwarded it, within
                    // 150 ms of the offline detector on the other's file (its own media time).
                    #expect(all.contains { $0["type"] as? String == "joined" && $0["participant"] as? String == other })
                    #expect(all.contains { $0["type"] as? String == "left" && $0["participant"] as? String == other })
                    let live = all.filter { $0["type"] as? String == "talking" && $0["participant"] as? String == other }
                        .compactMap { $0["start"] as? Double }
                    let offline = reference.filter { $0.participant == other }
                    #expect(live.count == offline.count, "\(name) sees \(other) talk at \(live), offline \(offline.map(\.start))")
                    var gaps: [String] = []
                    for seg in offline {
                        let nearest = live.map { abs($0 - seg.start) }.min() ?? .infinity
                        #expect(nearest <= 0.15, "\(name) sees \(other)'s turn at \(seg.start) s at \(live)")
                        gaps.append(String(format: "%.0f", nearest * 1000))
                    }
                    // The other's audio, after Opus (24 kbit/s) and Janus: aligned with its file. The
                    // reader's voice keeps less of its waveform through the codec (a median of
                    // 0.78 whoever listens, plain or SRTP) than the others' (0.89-0.97); with the
                    // whole suite running beside it, a receiver time-stretches more (down to 0.65
                    // seen).
                    let heard = try readInteropWAV(dir.appendingPathComponent("\(name)-heard/\(other).wav"))
                    let source = try readInteropWAV(try #require(files.first { $0.lastPathComponent == "\(other).wav" }))
                    let (c, count, lag) = interopSpeechWindowCorrelation(source: source.samples, heard: heard.samples)
                    #expect(count >= 3 && c >= 0.6, "\(name) hears \(other): median correlation \(c) over \(count) windows, lag \(lag)")
                    print("parley join: \(name) hears \(other) at lag \(lag), correlation median \(String(format: "%.3f", c)) "
                          + "over \(count) speech windows; "
                          + "onsets off by \(gaps.joined(separator: ", ")) ms")

                    // Janus's talking events for the other, from the levels its Parley sends (in
                    // this participant's media time, which starts with the others' within tens
                    // of ms): each one inside a turn of the offline detector's (0.3 s before its
                    // start to 0.6 s after its end), and most turns found (a turn is missed when
                    // Janus's 0.5-s blocks cut it in halves that each average over 40 dBov).
                    let janusOn = all.filter { $0["type"] as? String == "janus_talking" && $0["participant"] as? String == other }
                        .compactMap { $0["t"] as? Double }
                    for t in janusOn {
                        #expect(offline.contains { t >= $0.start - 0.3 && t <= $0.end + 0.6 }, "\(name): Janus says \(other) talks at \(t)")
                    }
                    let delays = offline.compactMap { seg in janusOn.filter { $0 >= seg.start - 0.3 && $0 <= seg.end + 0.6 }.min().map { $0 - seg.start } }
                    #expect(Double(delays.count) >= 0.5 * Double(offline.count), "\(name): Janus found \(other)'s turns at \(janusOn)")
                    print("parley join: \(name) is told by Janus that \(other) talks for \(delays.count) of \(offline.count) turns, "
                          + "\(delays.map { String(format: "%.0f", $0 * 1000) }.joined(separator: ", ")) ms after the offline onsets")
                }
            }
            try await janus.destroy()
        }
    }

    @Test func threeParticipantsInAnAudioBridgeHearTheOthersInTheMixAndNotThemselves() async throws {
        let files = try detectConversationFiles()
        // The truth's turns, cut where two overlap: (participant, start, end) with one talker.
        let truthURL = try #require(files.first).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("conversation-truth.csv")
        let turns = try String(contentsOf: truthURL, encoding: .utf8).split(separator: "\n").dropFirst().compactMap { line in
            let f = line.split(separator: ",")
            return f.count == 3 ? (String(f[0]), Double(f[1])!, Double(f[2])!) : nil
        }
        var solo: [(String, Double, Double)] = []
        for (who, from, to) in turns {
            var pieces = [(from, to)]
            for (other, a, b) in turns where other != who {
                pieces = pieces.flatMap { p -> [(Double, Double)] in
                    guard a < p.1, b > p.0 else { return [p] }
                    return [(p.0, a), (b, p.1)].filter { $0.1 - $0.0 > 0.6 }
                }
            }
            solo += pieces.map { (who, $0.0, $0.1) }
        }
        let names = files.map { $0.deletingPathExtension().lastPathComponent }
        let dir = try interopDirectory("join-bridge")
        defer { try? FileManager.default.removeItem(at: dir) }
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let bridge = try await AudioBridgeHandle.attach(janus)
            let room = try await bridge.createRoom(.init(room: 8180, samplingRate: 16_000, allowRTPParticipants: true))
            let children = try zip(names, files).map { name, file in
                try InteropChild(interopParleyBinary,
                                 ["join", "--transport", "rtp", "--plugin", "audiobridge", "--janus", server.baseURL.absoluteString, "--room", "\(room)",
                                  "--name", name, "--audio", file.path, "--events", "\(name).jsonl", "--output", "\(name)-mix.wav",
                                  "--no-tui"] + (name == "reader" ? ["--muted"] : []), in: dir, name: "bridge-\(name)")
            }
            // The reader joins muted (out of the mix: its first turn, 0.4-3.4 s) and unmutes
            // (SIGUSR1: a `configure`) before its second, at 8.6 s.
            let reader = try #require(zip(names, children).first { $0.0 == "reader" }?.1)
            try await Task.sleep(for: .seconds(5.5))
            kill(reader.pid, SIGUSR1)
            var most = 0
            let start = ContinuousClock.now
            while !children.allSatisfy(\.hasExited), ContinuousClock.now - start < .seconds(60) {
                most = max(most, try await bridge.listParticipants(room: room).count)
                try await Task.sleep(for: .milliseconds(200))
            }
            for child in children { #expect(child.wait(seconds: 45) == 0, "\(child.name): \(child.output)") }
            #expect(most == 3)
            #expect(try await bridge.listParticipants(room: room).isEmpty, "participants left behind")

            for name in names {
                let lines = try String(contentsOf: dir.appendingPathComponent("\(name).jsonl"), encoding: .utf8)
                    .split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                for other in names where other != name {
                    #expect(lines.contains { $0["type"] as? String == "janus_joined" && $0["participant"] as? String == other },
                            "\(name) is told \(other) is in the room")
                }
                #expect(lines.contains { $0["type"] as? String == "joined" && $0["participant"] as? String == "mix" })
                // The mix: loud where another participant talks alone, near the floor where
                // this one does or the reader talks muted (the truth's turns without overlap,
                // from 0.4 s in: the mix comes through Janus's mixer and two Opus passes, a few
                // hundred ms late).
                let mix = try readInteropWAV(dir.appendingPathComponent("\(name)-mix.wav")).samples
                func level(_ from: Double, _ to: Double) -> Double {
                    let a = Int((from + 0.4) * 16_000), b = min(Int(to * 16_000), mix.count)
                    guard b - a > 1_600 else { return .nan }
                    return 10 * log10(mix[a..<b].reduce(0) { $0 + Double($1 * $1) } / Double(b - a) + 1e-12)
                }
                var own: [Double] = [], others: [Double] = []
                for (who, from, to) in solo {
                    let l = level(from, to)
                    guard l.isFinite else { continue }
                    if who == name || (who == "reader" && to < 5) { own.append(l) } else { others.append(l) }
                }
                #expect(!own.isEmpty && !others.isEmpty)
                let margin = (others.min() ?? -200) - (own.max() ?? 0)
                #expect(margin >= 10, "\(name)'s mix: others' turns at \(others) dBFS, its own and muted ones at \(own) dBFS")
                print("parley join --plugin audiobridge: \(name)'s mix is \(String(format: "%.1f", margin)) dB louder over the others' "
                      + "solo turns (\(others.map { String(format: "%.1f", $0) }.joined(separator: ", ")) dBFS) than over its own "
                      + "and the muted reader's (\(own.map { String(format: "%.1f", $0) }.joined(separator: ", ")) dBFS)")
            }
            try await janus.destroy()
        }
    }

    @Test func forwardedSRTPIsEncryptedDropsATamperedPacketAndKeepsVideoInSync() async throws {
        let files = Array(try detectConversationFiles().prefix(2))
        let names = files.map { $0.deletingPathExtension().lastPathComponent }
        let videoURL = try #require(files.first).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("video/sample.y4m")
        let dir = try interopDirectory("join-tamper")
        defer { try? FileManager.default.removeItem(at: dir) }
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let room = try await videoRoom.createRoom(.init(room: 5160, publishers: 4))
            // The first participant's media come through a relay that flips one payload bit in
            // every 40th audio packet on the way.
            let receivePort = try JanusServer.freePort()
            let relay = try TamperingRelay(to: receivePort, payloadType: 111, every: 40)
            let listener = try join(names[0], files[0], server: server, room: room, waitFor: 2,
                                    extra: ["--srtp", "--receive-port", "\(receivePort)", "--forward-to", "127.0.0.1:\(relay.port)"],
                                    in: dir)
            let talker = try join(names[1], files[1], server: server, room: room, waitFor: 2,
                                  extra: ["--srtp", "--video", videoURL.path], in: dir)
            #expect(listener.wait(seconds: 90) == 0, "\(listener.output)")
            #expect(talker.wait(seconds: 30) == 0, "\(talker.output)")
            let seen = relay.stop()

            // SRTP on the wire: the Opus TOC byte, constant in plain RTP from one encoder, is
            // ciphertext here and takes many values.
            #expect(seen.packets > 500, "the relay saw \(seen.packets) audio packets")
            #expect(seen.firstPayloadBytes.count > 64, "first payload bytes: \(seen.firstPayloadBytes.count) values")
            // Every tampered packet, and nothing else, failed authentication and was dropped.
            #expect(seen.tampered >= 10)
            #expect(listener.output.contains("srtp_auth_failed: \(seen.tampered)\n"), "\(seen.tampered) tampered: \(listener.output)")
            #expect(listener.output.contains("srtp_replayed: 0") && listener.output.contains("srtp_malformed: 0"))
            #expect(talker.output.contains("srtp_auth_failed: 0"), "\(talker.output)")
            // The rest of the stream played: every other packet reached the jitter buffer, and
            // each dropped one is a gap it concealed. (The window correlation with the source is
            // printed, not asserted: concealing a packet every 0.8 s makes the buffer stretch
            // time, and the median over the talker's four windows ranged 0.54-0.95 in runs.)
            let received = try #require(listener.output.split(separator: "\n").first { $0.hasPrefix("received from \(names[1]):") })
            #expect(received.contains(": \(seen.packets - seen.tampered) RTP packets, "), "\(received)")
            #expect(received.contains(" \(seen.tampered) lost,") || received.contains(" \(seen.tampered - 1) lost,"), "\(received)")
            let heard = try readInteropWAV(dir.appendingPathComponent("\(names[0])-heard/\(names[1]).wav"))
            let source = try readInteropWAV(files[1])
            let (c, _, _) = interopSpeechWindowCorrelation(source: source.samples, heard: heard.samples)

            // The talker's video: close to the source (the file loops: each picture is matched
            // to the best of the source's), and in sync with its audio from the first pictures
            // (both streams count RTP time from the start of the source; no sender report
            // crosses Janus).
            let video = try readInteropY4M(videoURL)
            let shown = try readInteropY4M(dir.appendingPathComponent("\(names[0])-heard/\(names[1]).y4m"))
            let psnr = shown.frames.map { f in
                video.frames.map { interopLumaPSNR($0, f, width: video.width, height: video.height) }.max() ?? 0
            }
            let mean = psnr.reduce(0, +) / Double(max(1, psnr.count))
            #expect(shown.frames.count >= 300 && mean >= 30 && (psnr.min() ?? 0) >= 25,
                    "\(shown.frames.count) pictures, mean PSNR \(mean), lowest \(psnr.min() ?? 0)")
            let line = try #require(listener.output.split(separator: "\n").first { $0.hasPrefix("video received from \(names[1])") })
            func number(before marker: String) -> Double? {
                guard let r = line.range(of: marker) else { return nil }
                return Double(String(line[..<r.lowerBound].split(separator: " ").last ?? "").trimmingCharacters(in: ["("]))
            }
            let early = try #require(number(before: " before lip sync"))
            let skew = try #require(number(before: " ms, "))
            let outside = try #require(number(before: " outside the lip-sync window"))
            #expect(early <= 10 && outside == 0 && skew <= 45, "\(line)")
            print("parley join --srtp: \(seen.packets) forwarded audio packets relayed, \(seen.firstPayloadBytes.count) distinct first "
                  + "payload bytes, \(seen.tampered) tampered and all dropped (srtp_auth_failed); audio correlation "
                  + "\(String(format: "%.3f", c)); video: \(shown.frames.count) pictures, luma PSNR mean \(String(format: "%.2f", mean)) dB, "
                  + "lowest \(String(format: "%.2f", psnr.min() ?? 0)) dB, \(Int(early)) before lip sync, skew at most \(Int(skew)) ms")
            try await janus.destroy()
        }
    }

    @Test func keysOnTheGridMuteUnmuteAndLeaveAnAudioBridgeRoom() async throws {
        let audio = try #require(try detectConversationFiles().first)
        let dir = try interopDirectory("join-keys")
        defer { try? FileManager.default.removeItem(at: dir) }
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let bridge = try await AudioBridgeHandle.attach(janus)
            let room = try await bridge.createRoom(.init(room: 8190, samplingRate: 16_000, allowRTPParticipants: true))
            let terminal = try InteropTerminal()
            let child = try InteropChild(interopParleyBinary,
                                         ["join", "--transport", "rtp", "--plugin", "audiobridge", "--janus", server.baseURL.absoluteString,
                                          "--room", "\(room)", "--name", "keys", "--audio", audio.path, "--output", "mix.wav", "--muted"],
                                         in: dir, name: "join-keys", terminal: terminal.device)
            /// Waits until Janus lists the participant with `muted`, or it has left (nil).
            func mutedState(is wanted: Bool?) async throws -> Bool {
                let start = ContinuousClock.now
                while ContinuousClock.now - start < .seconds(15) {
                    let list = try await bridge.listParticipants(room: room)
                    if list.first?.muted == wanted || (wanted == nil && list.isEmpty) { return true }
                    try await Task.sleep(for: .milliseconds(100))
                }
                return false
            }
            #expect(try await mutedState(is: true), "joined muted")
            #expect(terminal.shows("m: mute or unmute"), "the grid shows the keys")
            #expect(terminal.shows("In the room (Janus): keys"), "the grid shows the room's members")
            terminal.type("m")
            #expect(try await mutedState(is: false), "m unmutes")
            terminal.type("M")
            #expect(try await mutedState(is: true), "M mutes again")
            terminal.type("q")
            #expect(try await mutedState(is: nil), "q leaves the room")
            #expect(child.wait(seconds: 30) == 0, "\(terminal.text.suffix(2_000))")
            #expect(terminal.shows("sent: "), "the report follows the grid")
            try await janus.destroy()
        }
    }

    @Test func janusNotRunningAMissingRoomAndAWrongPinFailClearly() async throws {
        let dir = try interopDirectory("join-errors")
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = try #require(try detectConversationFiles().first)
        let port = try JanusServer.freePort()
        let down = try InteropChild(interopParleyBinary, ["join", "--transport", "rtp", "--janus", "http://127.0.0.1:\(port)/janus", "--room", "1",
                                                         "--name", "a", "--audio", audio.path, "--no-tui"], in: dir, name: "join-down")
        #expect(down.wait(seconds: 30) == 1)
        #expect(down.output.contains("connection refused"), "\(down.output)")

        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let room = try await videoRoom.createRoom(.init(room: 6160, description: "pinned", publishers: 3, pin: "right"))
            let missing = try InteropChild(interopParleyBinary, ["join", "--transport", "rtp", "--janus", server.baseURL.absoluteString, "--room", "999",
                                                                "--name", "a", "--audio", audio.path, "--no-tui", "--output", "m.wav"],
                                           in: dir, name: "join-missing")
            #expect(missing.wait(seconds: 30) == 1)
            #expect(missing.output.contains("room 999 does not exist"), "\(missing.output)")
            let wrong = try InteropChild(interopParleyBinary, ["join", "--transport", "rtp", "--janus", server.baseURL.absoluteString, "--room", "\(room)",
                                                              "--name", "a", "--pin", "wrong", "--audio", audio.path, "--no-tui",
                                                              "--output", "w.wav"], in: dir, name: "join-pin")
            #expect(wrong.wait(seconds: 30) == 1)
            #expect(wrong.output.contains("wrong or missing pin"), "\(wrong.output)")
            #expect(try await videoRoom.listParticipants(room: room).isEmpty)
            try await janus.destroy()
        }
    }

    @Test func aParticipantWhoseProcessDiesLeavesTheOthersWithinTheTimeout() async throws {
        let files = Array(try detectConversationFiles().prefix(2))
        let names = files.map { $0.deletingPathExtension().lastPathComponent }
        let dir = try interopDirectory("join-died")
        defer { try? FileManager.default.removeItem(at: dir) }
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let videoRoom = try await VideoRoomHandle.attach(janus)
            let room = try await videoRoom.createRoom(.init(room: 7180, publishers: 4))
            let children = try zip(names, files).map { name, file in
                try join(name, file, server: server, room: room, waitFor: 2, extra: ["--timeout", "2"], in: dir)
            }
            let start = ContinuousClock.now
            while try await publishers(videoRoom, room).count < 2, ContinuousClock.now - start < .seconds(30) {
                try await Task.sleep(for: .milliseconds(50))
            }
            let allIn = ContinuousClock.now
            try await Task.sleep(for: .seconds(3))
            // The first one dies without a word to Janus or the others.
            kill(children[0].pid, SIGKILL)
            let killedAt = ContinuousClock.now - allIn
            // Its remote publisher, which Janus would keep until the room ends, is removed by
            // the one who saw it time out.
            var ghostGone: Duration?
            while ghostGone == nil, ContinuousClock.now - allIn - killedAt < .seconds(15) {
                if try await publishers(videoRoom, room) == [names[1]] { ghostGone = ContinuousClock.now - allIn - killedAt }
                try await Task.sleep(for: .milliseconds(100))
            }
            let removed = try #require(ghostGone, "Janus still lists \(names[0]) 15 s after it died")
            #expect(removed < .seconds(5))
            #expect(children[1].wait(seconds: 45) == 0, "\(children[1].output)")
            let events = try interopEvents(dir.appendingPathComponent("\(names[1]).jsonl"))
            let left = try #require(events.first { $0["type"] as? String == "left" && $0["participant"] as? String == names[0] }?["t"] as? Double,
                                    "\(names[1]) never saw \(names[0]) leave")
            // Media time counts from the start of sending, which follows "both listed" by a
            // fraction of a second (the wait for Janus's forwarders): the delay is approximate.
            let delay = left - Double(killedAt.components.seconds) - Double(killedAt.components.attoseconds) / 1e18
            #expect(delay > 0.5 && delay < 4, "left \(delay) s after the kill (timeout 2 s)")
            print("parley join: \(names[0]) killed; \(names[1]) saw it leave \(String(format: "%.2f", delay)) s later (--timeout 2), "
                  + "and Janus no longer listed it \(removed) after the kill")
            try await janus.destroy()
        }
    }

    @Test func janusStoppedInTheMiddleEndsEveryParticipantCleanly() async throws {
        let files = try detectConversationFiles()
        let dir = try interopDirectory("join-gone")
        defer { try? FileManager.default.removeItem(at: dir) }
        let server = try await JanusServer()
        let janus = JanusClient(baseURL: server.baseURL)
        try await janus.createSession()
        let videoRoom = try await VideoRoomHandle.attach(janus)
        let room = try await videoRoom.createRoom(.init(room: 7170, publishers: 6))
        let names = files.prefix(2).map { $0.deletingPathExtension().lastPathComponent }
        let children = try zip(names, files).map { name, file in
            try InteropChild(interopParleyBinary,
                             ["join", "--transport", "rtp", "--janus", server.baseURL.absoluteString, "--room", "\(room)", "--name", name,
                              "--audio", file.path, "--events", "\(name).jsonl", "--output", "\(name)-mix.wav",
                              "--no-tui", "--wait-for", "2"], in: dir, name: "join-gone-\(name)")
        }
        // Once both are in and talking, Janus goes away.
        let start = ContinuousClock.now
        while try await videoRoom.listParticipants(room: room).filter(\.publisher).count < 2, ContinuousClock.now - start < .seconds(30) {
            try await Task.sleep(for: .milliseconds(100))
        }
        try await Task.sleep(for: .seconds(2))
        await server.stop()
        for (child, name) in zip(children, names) {
            #expect(child.wait(seconds: 45) == 1, "\(child.name): \(child.output)")
            #expect(child.output.contains("Janus went away"), "\(child.output)")
            // What was written so far is a complete WAV file.
            let mix = try readInteropWAV(dir.appendingPathComponent("\(name)-mix.wav"))
            #expect(mix.sampleRate == 16_000 && mix.samples.count >= 16_000)
        }
    }
}

/// A UDP relay on 127.0.0.1 in front of a receiver: every datagram is passed on to `target`,
/// and every `every`-th RTP packet of payload type `payloadType` with one payload bit flipped
/// first.
private final class TamperingRelay: @unchecked Sendable {
    struct Seen {
        var packets = 0
        var tampered = 0
        var firstPayloadBytes = Set<UInt8>()
    }

    let port: UInt16
    private let fd: Int32
    private let seen = Locked(Seen())
    private let running = Atomic<Bool>(true)
    private let done = DispatchSemaphore(value: 0)

    init(to target: UInt16, payloadType: UInt8, every: Int) throws {
        let s = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &a) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &length) } }
        guard s >= 0, bound == 0 else { throw ServerError("relay: cannot bind a UDP socket") }
        fd = s
        port = UInt16(bigEndian: a.sin_port)
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_addr.s_addr = inet_addr("127.0.0.1")
        to.sin_port = target.bigEndian
        let destination = to
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 2048)
            var destination = destination
            while running.load(ordering: .relaxed) {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 50) > 0 else { continue }
                let n = recv(fd, &buffer, buffer.count, 0)
                guard n >= 12 else { continue }
                let isRTCP = (192...223).contains(buffer[1])
                if !isRTCP && buffer[1] & 0x7F == payloadType {
                    // The payload starts after the CSRCs and the header extension.
                    var start = 12 + 4 * Int(buffer[0] & 0x0F)
                    if buffer[0] & 0x10 != 0, n >= start + 4 { start += 4 + 4 * (Int(buffer[start + 2]) << 8 | Int(buffer[start + 3])) }
                    let tamper = seen.withLock { s in
                        s.packets += 1
                        if start < n - 10 { s.firstPayloadBytes.insert(buffer[start]) }
                        guard s.packets % every == 0, start < n - 10 else { return false }
                        s.tampered += 1
                        return true
                    }
                    if tamper { buffer[(start + n - 10) / 2] ^= 0x04 }
                }
                _ = withUnsafePointer(to: &destination) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        sendto(fd, buffer, n, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
            }
            done.signal()
        }
    }

    /// Stops relaying; returns what went through.
    func stop() -> Seen {
        running.store(false, ordering: .relaxed)
        done.wait()
        close(fd)
        return seen.withLock { $0 }
    }
}
