// `parley call`: two processes call each other over loopback UDP with SRTP, each sending a
// SampleMedia conversation file; the received audio and the talking events are checked against
// the sources and `parley detect --meeting`.

import Foundation
import Testing

@Suite(.serialized) struct CallCommandTests {
    private func events(_ path: URL) throws -> [[String: Any]] {
        try String(contentsOf: path, encoding: .utf8).split(separator: "\n").map { line in
            try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    /// Onsets of `participant`'s talks in an events file.
    private func onsets(_ all: [[String: Any]], of participant: String) -> [Double] {
        all.filter { $0["type"] as? String == "talking" && $0["participant"] as? String == participant }
            .compactMap { $0["start"] as? Double }
    }

    @Test func twoCallsOnLoopbackHearEachOtherAndSeeTheOfflineTurns() throws {
        let files = try detectConversationFiles()
        let carlo = try #require(files.first { $0.lastPathComponent == "carlo.wav" })
        let armelle = try #require(files.first { $0.lastPathComponent == "armelle.wav" })
        let detect = try runDetectCLI(["detect", "--meeting", "--format", "csv", carlo.path, armelle.path])
        let reference = try #require(detectParseSegmentsCSV(detect.stdout))
        #expect(reference.contains { $0.participant == "carlo" } && reference.contains { $0.participant == "armelle" })

        let dir = try interopDirectory("call")
        defer { try? FileManager.default.removeItem(at: dir) }
        let portA = interopFreeUDPPort()
        var portB = interopFreeUDPPort()
        while portB == portA { portB = interopFreeUDPPort() }
        func side(_ name: String, _ audio: URL, listen: UInt16, to: UInt16, out: String, peer: String) -> [String] {
            ["call", "--listen", "\(listen)", "--to", "127.0.0.1:\(to)", "--audio", audio.path, "--name", name,
             "--sdp-out", "\(name).sdp", "--sdp-in", "\(peer).sdp", "--output", "\(name)-heard.wav",
             "--events", "\(name).jsonl", "--no-tui"]
        }
        let a = try InteropChild(interopParleyBinary, side("carlo", carlo, listen: portA, to: portB, out: "a", peer: "armelle"),
                                 in: dir, name: "call-carlo")
        let b = try InteropChild(interopParleyBinary, side("armelle", armelle, listen: portB, to: portA, out: "b", peer: "carlo"),
                                 in: dir, name: "call-armelle")
        #expect(a.wait(seconds: 60) == 0, "carlo: \(a.output)")
        #expect(b.wait(seconds: 60) == 0, "armelle: \(b.output)")

        // Offers: SRTP with a key, private files; the key is never printed.
        for name in ["carlo", "armelle"] {
            let sdp = try String(contentsOf: dir.appendingPathComponent("\(name).sdp"), encoding: .utf8)
            #expect(sdp.contains("RTP/SAVP") && sdp.contains("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:"), "\(sdp)")
            #expect(sdp.contains("cname:\(name)"))
            let mode = try FileManager.default.attributesOfItem(atPath: dir.appendingPathComponent("\(name).sdp").path)[.posixPermissions]
            #expect(mode as? Int == 0o600)
            let key = try #require(sdp.split(whereSeparator: \.isNewline).first { $0.hasPrefix("a=crypto:") }?.split(separator: ":").last)
            #expect(!a.output.contains(key.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(!b.output.contains(key.trimmingCharacters(in: .whitespacesAndNewlines)))
        }

        // Each side hears the other's file through Opus and SRTP.
        for (listener, source) in [("carlo", armelle), ("armelle", carlo)] {
            let heard = try readInteropWAV(dir.appendingPathComponent("\(listener)-heard.wav"))
            let original = try readInteropWAV(source)
            #expect(heard.sampleRate == 16_000)
            #expect(heard.samples.count >= original.samples.count * 9 / 10, "\(listener) heard \(heard.samples.count) samples")
            let (c, lag) = interopAlignedCorrelation(source: original.samples, decoded: heard.samples, maxLag: 16_000)
            // A live receiver time-stretches to follow the network, so one lag does not fit the
            // whole file: the median over the 1 s windows with speech, each at its own lag.
            var windows: [Double] = []
            for w in stride(from: 0, to: original.samples.count - 16_000, by: 16_000) {
                let part = Array(original.samples[w..<(w + 16_000)])
                guard part.map({ Double($0 * $0) }).reduce(0, +) / 16_000 > 1e-4 else { continue }
                let from = max(0, w + lag - 4_000), to = min(heard.samples.count, w + lag + 20_000)
                guard to - from > 16_000 else { continue }
                windows.append(interopAlignedCorrelation(source: part, decoded: Array(heard.samples[from..<to]), maxLag: 8_000).correlation)
            }
            let median = windows.sorted()[windows.count / 2]
            #expect(windows.count >= 3 && median >= 0.8, "\(listener) hears its peer: windows \(windows)")
            print("parley call: \(listener) hears its peer with correlation \(String(format: "%.3f", c)) at lag \(lag) over the file, "
                  + "median \(String(format: "%.3f", median)) over \(windows.count) speech windows")
        }

        // Each side's events: both participants' turns (its own from its capture, the peer's from
        // the received stream), each within 150 ms of the offline detector, none extra; the peer
        // joins and leaves.
        for (name, peer) in [("carlo", "armelle"), ("armelle", "carlo")] {
            let all = try events(dir.appendingPathComponent("\(name).jsonl"))
            #expect(all.contains { $0["type"] as? String == "joined" && $0["participant"] as? String == peer })
            #expect(all.contains { $0["type"] as? String == "left" && $0["participant"] as? String == peer })
            for who in [name, peer] {
                let live = onsets(all, of: who)
                let offline = reference.filter { $0.participant == who }
                #expect(live.count == offline.count, "\(name) sees \(who) talk at \(live), offline \(offline.map(\.start))")
                for seg in offline {
                    let nearest = live.map { abs($0 - seg.start) }.min() ?? .infinity
                    #expect(nearest <= 0.15, "\(name) sees \(who)'s turn at \(seg.start) s at \(live)")
                }
            }
        }
    }

    @Test func aPeerThatNeverAnswersEndsTheCallWithAClearError() throws {
        let dir = try interopDirectory("call-alone")
        defer { try? FileManager.default.removeItem(at: dir) }
        let short = dir.appendingPathComponent("short.wav")
        let tone = (0..<16_000).map { i in Float(0.3 * sin(Double(i) * 2 * .pi * 440 / 16_000)) }
        try writeInteropWAV(short, sampleRate: 16_000, samples: tone)
        let port = interopFreeUDPPort()
        let alone = try InteropChild(interopParleyBinary, ["call", "--listen", "\(port)", "--to", "127.0.0.1:9", "--audio", short.path,
                                                          "--no-srtp", "--timeout", "1", "--output", "heard.wav", "--no-tui"],
                                     in: dir, name: "call-alone")
        #expect(alone.wait(seconds: 20) == 1, "\(alone.output)")
        #expect(alone.output.contains("nothing was heard"), "\(alone.output)")
    }

    @Test func usageAndSetUpErrors() throws {
        let dir = try interopDirectory("call-usage")
        defer { try? FileManager.default.removeItem(at: dir) }
        for (args, fragment) in [(["call", "--to", "127.0.0.1:5000"], "missing --listen"),
                                 (["call", "--listen", "5000"], "missing --to"),
                                 (["call", "--listen", "5000", "--to", "127.0.0.1:5002"], "SRTP needs --sdp-out"),
                                 (["call", "--listen", "5000", "--to", "127.0.0.1:5002", "--sdp-out", "a.sdp"], "SRTP needs --sdp-in"),
                                 (["call", "--listen", "0", "--to", "127.0.0.1:5002", "--no-srtp"], "--listen"),
                                 (["call", "--listen", "5000", "--to", "127.0.0.1:5002", "--no-srtp", "--video", "x.y4m"], "--video")] {
            let child = try InteropChild(interopParleyBinary, args, in: dir, name: "call-usage")
            #expect(child.wait(seconds: 10) == 2, "\(args): \(child.output)")
            #expect(child.output.contains(fragment), "\(args): \(child.output)")
        }
        // A port in use: exit 1, the port named.
        let port = interopFreeUDPPort()
        let first = try InteropChild(interopParleyBinary, ["call", "--listen", "\(port)", "--to", "127.0.0.1:9", "--audio",
                                                          interopPackageRoot.appendingPathComponent("SampleMedia/conversation/carlo.wav").path,
                                                          "--no-srtp", "--output", "a.wav", "--no-tui"], in: dir, name: "call-first")
        #expect(waitForUDPListener(port: port, seconds: 10, unless: first))
        let second = try InteropChild(interopParleyBinary, ["call", "--listen", "\(port)", "--to", "127.0.0.1:9", "--audio",
                                                           interopPackageRoot.appendingPathComponent("SampleMedia/conversation/carlo.wav").path,
                                                           "--no-srtp", "--output", "b.wav", "--no-tui"], in: dir, name: "call-second")
        #expect(second.wait(seconds: 10) == 1, "\(second.output)")
        #expect(second.output.contains("\(port)") && second.output.contains("in use"), "\(second.output)")
        kill(first.pid, SIGINT)
        _ = first.wait(seconds: 10)
    }
}
