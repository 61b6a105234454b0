// `parley detect --meeting` over the .mjr files a real Janus (the Debian package, started per
// test on 127.0.0.1) recorded of an AudioBridge room (`mjrs`: one recording per participant)
// where three `parley join` participants spoke different SampleMedia files, joining at
// different times.

import Foundation
import Testing
import JanusTestSupport
import ParleyCodecs
import ParleyJanus
import ParleyMedia

@Suite(.serialized, .tags(.realTime), .enabled(if: JanusServer.binaryPath != nil,
                             "janus is not installed (apt-get install janus): the recording test is skipped"))
struct DetectJanusRecordingTests {
    /// `file,participant,start_s,end_s` rows of `parley detect --format csv`, by participant.
    private func segments(_ csv: String) -> [String: [(Double, Double)]] {
        var out: [String: [(Double, Double)]] = [:]
        for line in csv.split(separator: "\n").dropFirst() {
            let f = line.split(separator: ",")
            guard f.count == 4, let a = Double(f[2]), let b = Double(f[3]) else { continue }
            out[String(f[1]), default: []].append((a, b))
        }
        return out
    }

    @Test func aRoomJanusRecordedGivesEachParticipantsTalkAtItsTrueOffset() async throws {
        let media = try #require(try detectConversationFiles().first).deletingLastPathComponent().deletingLastPathComponent()
        let dir = try interopDirectory("detect-mjr")
        defer { try? FileManager.default.removeItem(at: dir) }
        // Three sources: the two speech samples and the first 7 s of a conversation part
        // (its talk at 4.0-6.05 s), joining 0, 1.2 and 2.4 s apart.
        let armelle = try readInteropWAV(media.appendingPathComponent("conversation/armelle.wav"))
        let armelleShort = dir.appendingPathComponent("armelle.wav")
        try writeInteropWAV(armelleShort, sampleRate: armelle.sampleRate, samples: Array(armelle.samples.prefix(7 * armelle.sampleRate)))
        let sources = [("speech16", media.appendingPathComponent("speech/speech-16k.wav")), ("armelle", armelleShort),
                       ("speech48", media.appendingPathComponent("speech/speech-48k.wav"))]
        let recordings = dir.appendingPathComponent("room")
        try FileManager.default.createDirectory(at: recordings, withIntermediateDirectories: true)

        var displays: [UInt64: String] = [:]
        try await JanusServer.with { server in
            let janus = JanusClient(baseURL: server.baseURL)
            try await janus.createSession()
            let bridge = try await AudioBridgeHandle.attach(janus)
            let room: UInt64 = 8280
            _ = try await janus.send(message: ["request": "create", "room": .int(Int64(room)), "sampling_rate": 16_000,
                                               "allow_rtp_participants": true, "mjrs": true,
                                               "mjrs_dir": .string(recordings.path)], to: bridge.id)
            var children: [InteropChild] = []
            for (k, (name, file)) in sources.enumerated() {
                if k > 0 { try await Task.sleep(for: .seconds(1.2)) }
                children.append(try InteropChild(interopParleyBinary,
                                                 ["join", "--transport", "rtp", "--plugin", "audiobridge", "--janus", server.baseURL.absoluteString,
                                                  "--room", "\(room)", "--name", name, "--audio", file.path,
                                                  "--output", "\(name)-mix.wav", "--no-tui", "--timeout", "1"],
                                                 in: dir, name: "mjr-\(name)"))
            }
            let start = ContinuousClock.now
            while !children.allSatisfy(\.hasExited), ContinuousClock.now - start < .seconds(40) {
                for p in try await bridge.listParticipants(room: room) { if let d = p.display { displays[p.id] = d } }
                try await Task.sleep(for: .milliseconds(200))
            }
            for child in children { #expect(child.wait(seconds: 20) == 0, "\(child.name): \(child.output)") }
            try await janus.destroy()
        }

        // audiobridge-<room>-user-<id>-<time>-audio.mjr, one per participant.
        let files = try FileManager.default.contentsOfDirectory(atPath: recordings.path).filter { $0.hasSuffix(".mjr") }.sorted()
        #expect(files.count == 3, "\(files)")
        var participantOf: [String: String] = [:]   // stem -> source name
        var starts: [String: Int64] = [:]
        for f in files {
            let fields = f.split(separator: "-")
            let id = try #require(fields.firstIndex(of: "user").flatMap { UInt64(fields[$0 + 1]) }, "\(f)")
            let stem = String(f.dropLast(4))
            let display = displays[id] ?? ""
            #expect(!display.isEmpty, "no participant \(id) seen: \(displays)")
            participantOf[stem] = display
            starts[stem] = try MJRReader(path: recordings.appendingPathComponent(f).path).header.startMicroseconds
        }
        let origin = try #require(starts.values.min())

        let room = try runDetectCLI(["detect", "--meeting", "--format", "csv"] + files.map { recordings.appendingPathComponent($0).path })
        #expect(room.status == 0, "\(room.stderr)")
        let found = segments(room.stdout)
        var report: [String] = []
        for (stem, name) in participantOf.sorted(by: { $0.value < $1.value }) {
            let source = try #require(sources.first { $0.0 == name }?.1)
            let alone = try runDetectCLI(["detect", "--format", "csv", source.path])
            #expect(alone.status == 0, "\(alone.stderr)")
            let offset = Double(starts[stem]! - origin) / 1e6
            let expected = (segments(alone.stdout).values.first ?? []).map { ($0.0 + offset, $0.1 + offset) }
            let got = found[stem] ?? []
            #expect(!expected.isEmpty)
            #expect(got.count == expected.count, "\(name): \(got) vs \(expected)")
            var worst = 0.0
            for (g, e) in zip(got, expected) { worst = max(worst, abs(g.0 - e.0), abs(g.1 - e.1)) }
            #expect(worst <= 0.15, "\(name): \(got) vs \(expected)")
            report.append("\(name) at \(String(format: "%.3f", offset)) s: \(got.count) segments, "
                          + "largest difference \(String(format: "%.3f", worst)) s ("
                          + zip(got, expected).map { String(format: "%.3f-%.3f vs %.3f-%.3f", $0.0.0, $0.0.1, $0.1.0, $0.1.1) }
                              .joined(separator: ", ") + ")")
        }
        print("parley detect --meeting over Janus's .mjr files: " + report.joined(separator: "; "))
    }
}

/// A Janus recording's bytes: MJR00002, the JSON header, then `packets` after "MEET".
private func mjrBytes(_ json: String, packets: [[UInt8]] = []) -> Data {
    var b = Array("MJR00002".utf8)
    let j = Array(json.utf8)
    b += [UInt8(j.count >> 8), UInt8(j.count & 0xFF)] + j
    for (k, p) in packets.enumerated() {
        b += Array("MEET".utf8) + [0, 0, 0, UInt8(20 * k)] + [UInt8(p.count >> 8), UInt8(p.count & 0xFF)] + p
    }
    return Data(b)
}

@Test(.enabled(if: detectHasSampleMedia)) func videoRecordingsAreSkippedAndBadOnesFailWhileTheOthersAreAnalysed() throws {
    let speech = detectSampleMedia.appendingPathComponent("speech/speech-16k.wav")
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let video = dir.appendingPathComponent("cam-video.mjr")
    try mjrBytes(#"{"t":"v","c":"vp8","s":1765000000000000,"u":1765000000100000}"#,
                 packets: [[0x80, 96, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4, 0x10]]).write(to: video)
    let data = dir.appendingPathComponent("chat-data.mjr")
    try mjrBytes(#"{"t":"d","c":"text","s":1765000000000000}"#).write(to: data)
    let cut = dir.appendingPathComponent("cut-audio.mjr")
    try mjrBytes(#"{"t":"a","c":"opus","s":1765000000000000,"u":1765000000100000}"#).prefix(30).write(to: cut)
    let g711 = dir.appendingPathComponent("phone-audio.mjr")
    try mjrBytes(#"{"t":"a","c":"pcmu","s":1765000000000000}"#, packets: [[0x80, 0, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4, 0xFF]])
        .write(to: g711)

    for meeting in [false, true] {
        let r = try runDetectCLI(["detect", "--format", "csv"] + (meeting ? ["--meeting"] : [])
                                 + [video.path, data.path, cut.path, g711.path, speech.path])
        #expect(r.status == 1, "\(r.stderr)")
        #expect(r.stderr.contains("parley detect: \(video.path): a Janus video recording (vp8), no audio: skipped"), "\(r.stderr)")
        #expect(r.stderr.contains("parley detect: \(data.path): a Janus data recording (text), no audio: skipped"), "\(r.stderr)")
        #expect(r.stderr.contains("parley detect: \(cut.path): Janus recording truncated at byte 10: 20 of 62 bytes"), "\(r.stderr)")
        #expect(r.stderr.contains("\(g711.path): unsupported or unrecognised audio codec 'pcmu' in a Janus recording"), "\(r.stderr)")
        let rows = try #require(detectParseSegmentsCSV(r.stdout))
        #expect(!rows.isEmpty)
        #expect(rows.allSatisfy { $0.participant == "speech-16k" }, "\(rows)")
    }
    let json = try runDetectCLI(["detect", "--format", "json", "--meeting", video.path, cut.path, speech.path])
    let root = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let files = try #require((root["recordings"] as? [[String: Any]])?.first?["files"] as? [[String: Any]])
    #expect(files.map { $0["path"] as? String } == [cut.path, speech.path])
    #expect(files.map { $0["status"] as? String } == ["failed", "ok"])
}

/// The 16 kHz speech sample as a Janus recording of Opus (20 ms packets) whose first packet
/// Janus wrote at `start` µs.
private func speechRecording(start: Int64) throws -> Data {
    var wav = try WAVReader(path: detectSampleMedia.appendingPathComponent("speech/speech-16k.wav").path)
    var samples: [Int16] = []
    var block = [Int16](repeating: 0, count: 4096)
    while true {
        let n = try wav.read(into: &block)
        if n == 0 { break }
        samples += block[0..<n]
    }
    var encoder = try OpusEncoder(sampleRate: 16_000, channels: 1)
    var out = [UInt8](repeating: 0, count: 1_500)
    var packets: [[UInt8]] = []
    var at = 0
    while at + 320 <= samples.count {
        let n = try encoder.encode(Array(samples[at..<(at + 320)]), into: &out)
        let k = packets.count, ts = UInt32(k * 960)
        packets.append([0x80, 111, UInt8(k >> 8 & 0xFF), UInt8(k & 0xFF),
                        UInt8(ts >> 24), UInt8(ts >> 16 & 0xFF), UInt8(ts >> 8 & 0xFF), UInt8(ts & 0xFF), 1, 2, 3, 4]
                       + out[0..<n])
        at += 320
    }
    var b = Array("MJR00002".utf8)
    let j = Array(#"{"t":"a","c":"opus","s":\#(start - 300_000),"u":\#(start)}"#.utf8)
    b += [UInt8(j.count >> 8), UInt8(j.count & 0xFF)] + j
    for (k, p) in packets.enumerated() {
        let arrival = UInt32(20 * k)
        b += Array("MEET".utf8) + [UInt8(arrival >> 24), UInt8(arrival >> 16 & 0xFF), UInt8(arrival >> 8 & 0xFF), UInt8(arrival & 0xFF)]
        b += [UInt8(p.count >> 8), UInt8(p.count & 0xFF)] + p
    }
    return Data(b)
}

@Test(.enabled(if: detectHasSampleMedia)) func aMeetingAndAManifestPlaceRecordingsByTheirRecordedStarts() throws {
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let early = dir.appendingPathComponent("early.mjr"), late = dir.appendingPathComponent("late.mjr")
    try speechRecording(start: 1_765_000_000_000_000).write(to: early)
    try speechRecording(start: 1_765_000_002_500_000).write(to: late)
    let manifest = dir.appendingPathComponent("rooms.csv")
    try "meeting,participant,path,offset_s\nroom,,\(late.path),1\nroom,,\(early.path),\n".write(to: manifest, atomically: true, encoding: .utf8)
    for args in [["--meeting", late.path + "@1", early.path], ["--meetings-from", manifest.path]] {
        let r = try runDetectCLI(["detect", "--format", "csv"] + args)
        #expect(r.status == 0, "\(r.stderr)")
        let rows = try #require(detectParseSegmentsCSV(r.stdout))
        let a = rows.filter { $0.participant == "early" }, b = rows.filter { $0.participant == "late" }
        #expect(!a.isEmpty && a.count == b.count, "\(rows)")
        for (x, y) in zip(a, b) {
            #expect(abs(y.start - x.start - 3.5) < 0.0015 && abs(y.end - x.end - 3.5) < 0.0015, "\(args): \(x) vs \(y)")
        }
    }
}
