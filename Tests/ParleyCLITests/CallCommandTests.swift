// `parley call`: two processes call each other over loopback UDP with SRTP, each sending a
// SampleMedia conversation file; the received audio and the talking events are checked against
// the sources and `parley detect --meeting`. With video, each also sends the sample video and
// writes what it sees, checked against the source by PSNR.

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

@Suite(.serialized, .tags(.realTime)) struct CallCommandTests {


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

        // Each side hears the other's file through Opus and SRTP: the spectrum's shape over time
        // follows the peer's file (the receiver's jitter buffer stretches time when the machine
        // is busy, which the waveform's correlation, printed too, does not forgive), and not the
        // listener's own file.
        for (listener, source, own) in [("carlo", armelle, carlo), ("armelle", carlo, armelle)] {
            let heard = try readInteropWAV(dir.appendingPathComponent("\(listener)-heard.wav"))
            let original = try readInteropWAV(source)
            #expect(heard.sampleRate == 16_000)
            #expect(heard.samples.count >= original.samples.count * 9 / 10, "\(listener) heard \(heard.samples.count) samples")
            let (median, count, lag) = interopBandEnergyWindowCorrelation(source: original.samples, heard: heard.samples, maxLag: 16_000)
            let control = interopBandEnergyWindowCorrelation(source: try readInteropWAV(own).samples, heard: heard.samples, maxLag: 16_000)
            let waveform = interopSpeechWindowCorrelation(source: original.samples, heard: heard.samples)
            #expect(count >= 3 && median >= 0.9 && control.median < 0.7,
                    "\(listener) hears its peer: median \(median) over \(count) windows; its own file \(control.median)")
            print("parley call: \(listener) hears its peer at lag \(lag), band-energy correlation median "
                  + "\(String(format: "%.3f", median)) over \(count) speech windows (its own file: "
                  + "\(String(format: "%.3f", control.median))), waveform \(String(format: "%.3f", waveform.median))")
        }

        // Each side's events: both participants' turns (its own from its capture, the peer's from
        // the received stream), each within 150 ms of the offline detector, none extra; the peer
        // joins and leaves.
        for (name, peer) in [("carlo", "armelle"), ("armelle", "carlo")] {
            let all = try interopEvents(dir.appendingPathComponent("\(name).jsonl"))
            #expect(all.contains { $0["type"] as? String == "joined" && $0["participant"] as? String == peer })
            #expect(all.contains { $0["type"] as? String == "left" && $0["participant"] as? String == peer })
            for who in [name, peer] {
                let live = interopOnsets(all, of: who)
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
                                 (["call", "--listen", "5000", "--to", "127.0.0.1:5002", "--no-srtp", "--video", "x.mp4"], "--video"),
                                 (["call", "--listen", "5000", "--to", "127.0.0.1:5002", "--no-srtp", "--video-output", "x.ivf"],
                                  "--video-output")] {
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

    /// `--transport webrtc`: its usage errors; its endpoint refuses what is not an offer it
    /// can answer, with the reason, and the call waits on for a proper one (Ctrl-C ends it);
    /// no offer within --sdp-wait is a clear error.
    @Test func aWebRTCCallRefusesBadOffersClearly() async throws {
        let dir = try interopDirectory("call-webrtc-usage")
        defer { try? FileManager.default.removeItem(at: dir) }
        for (args, fragment) in [(["call", "--listen", "5000", "--transport", "sip"], "--transport takes rtp or webrtc"),
                                 (["call", "--listen", "5000", "--transport", "webrtc", "--to", "127.0.0.1:5002"], "--to is for --transport rtp"),
                                 (["call", "--listen", "5000", "--transport", "webrtc", "--no-srtp"], "--no-srtp is for --transport rtp"),
                                 (["call", "--listen", "5000", "--to", "127.0.0.1:5002", "--no-srtp", "--ice-address", "127.0.0.1"],
                                  "--ice-address is for --transport webrtc"),
                                 (["call", "--listen", "5000", "--transport", "webrtc", "--receive-bitrate", "5"], "--receive-bitrate"),
                                 (["call", "--listen", "5000", "--to", "127.0.0.1:5002", "--no-srtp", "--chat"], "--chat is for --transport webrtc"),
                                 (["call", "--listen", "5000", "--to", "127.0.0.1:5002", "--no-srtp", "--chat-from", "lines.txt"],
                                  "--chat-from is for --transport webrtc"),
                                 (["call", "--listen", "5000", "--transport", "webrtc", "--chat-from", "missing.txt"],
                                  "--chat-from: cannot read 'missing.txt'")] {
            let child = try InteropChild(interopParleyBinary, args, in: dir, name: "call-usage")
            #expect(child.wait(seconds: 10) == 2, "\(args): \(child.output)")
            #expect(child.output.contains(fragment), "\(args): \(child.output)")
        }
        let carlo = interopPackageRoot.appendingPathComponent("SampleMedia/conversation/carlo.wav").path
        let port = interopFreeUDPPort()
        let call = try InteropChild(interopParleyBinary, ["call", "--transport", "webrtc", "--listen", "\(port)", "--ice-address", "127.0.0.1",
                                                         "--audio", carlo, "--output", "heard.wav", "--no-tui", "--sdp-wait", "30"],
                                    in: dir, name: "call-webrtc")
        let started = ContinuousClock.now
        while !call.output.contains("waiting for an offer"), !call.hasExited, ContinuousClock.now - started < .seconds(10) {
            try await Task.sleep(for: .milliseconds(20))
        }
        func post(_ body: String, type: String) async throws -> (Int, String) {
            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)/call")!)
            request.httpMethod = "POST"
            request.setValue(type, forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(body.utf8)
            let (data, response) = try await URLSession.shared.data(for: request)
            return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
        }
        let json = try await post("{\"sdp\": \"v=0\"}", type: "application/json")
        #expect(json.0 == 415 && json.1.contains("application/sdp"), "\(json)")
        let noAudio = try await post("v=0\r\no=- 1 1 IN IP4 0.0.0.0\r\ns=-\r\nt=0 0\r\n", type: "application/sdp")
        #expect(noAudio.0 == 400 && noAudio.1.contains("no Opus audio"), "\(noAudio)")
        let garbage = try await post("hello", type: "application/sdp")
        #expect(garbage.0 == 400 && garbage.1.contains("does not read as SDP"), "\(garbage)")
        #expect(call.stop(SIGINT) == 1, "\(call.output)")
        #expect(call.output.contains("refused a request (415)") && call.output.contains("refused a request (400)"), "\(call.output)")
        let lonely = try InteropChild(interopParleyBinary, ["call", "--transport", "webrtc", "--listen", "\(interopFreeUDPPort())",
                                                           "--audio", carlo, "--output", "heard.wav", "--no-tui", "--sdp-wait", "0.5"],
                                      in: dir, name: "call-webrtc-alone")
        #expect(lonely.wait(seconds: 10) == 1 && lonely.output.contains("no offer was posted"), "\(lonely.output)")
    }

    /// The first `seconds` of a SampleMedia conversation file, as a WAV in `dir`.
    private func shortConversation(_ name: String, seconds: Double, in dir: URL) throws -> URL {
        let full = try readInteropWAV(interopPackageRoot.appendingPathComponent("SampleMedia/conversation/\(name).wav"))
        let url = dir.appendingPathComponent("\(name)-short.wav")
        try writeInteropWAV(url, sampleRate: full.sampleRate, samples: Array(full.samples.prefix(Int(seconds * Double(full.sampleRate)))))
        return url
    }

    /// A number after `label` in a line of `text` that starts with `prefix`.
    private func figure(_ text: String, line prefix: String, after label: String) -> Int? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
              let r = line.range(of: label) else { return nil }
        return Int(line[r.upperBound...].prefix { $0.isNumber })
    }

    @Test func twoCallsWithVideoOverSRTPSeeEachOther() throws {
        let dir = try interopDirectory("call-video")
        defer { try? FileManager.default.removeItem(at: dir) }
        let video = interopPackageRoot.appendingPathComponent("SampleMedia/video/sample.y4m")
        let source = try readInteropY4M(video)
        let portA = interopFreeUDPPort()
        var portB = interopFreeUDPPort()
        while portB == portA { portB = interopFreeUDPPort() }
        func side(_ name: String, listen: UInt16, to: UInt16, peer: String) throws -> [String] {
            ["call", "--listen", "\(listen)", "--to", "127.0.0.1:\(to)", "--audio", try shortConversation(name, seconds: 3, in: dir).path,
             "--video", video.path, "--name", name, "--sdp-out", "\(name).sdp", "--sdp-in", "\(peer).sdp",
             "--output", "\(name)-heard.wav", "--video-output", "\(name)-seen.y4m", "--no-tui"]
        }
        let a = try InteropChild(interopParleyBinary, try side("carlo", listen: portA, to: portB, peer: "armelle"), in: dir, name: "video-carlo")
        let b = try InteropChild(interopParleyBinary, try side("armelle", listen: portB, to: portA, peer: "carlo"), in: dir, name: "video-armelle")
        #expect(a.wait(seconds: 60) == 0, "carlo: \(a.output)")
        #expect(b.wait(seconds: 60) == 0, "armelle: \(b.output)")

        // Offers: audio and video on one port, VP8 with NACK and PLI, both under SRTP.
        for name in ["carlo", "armelle"] {
            let sdp = try String(contentsOf: dir.appendingPathComponent("\(name).sdp"), encoding: .utf8)
            let lines = sdp.split(whereSeparator: \.isNewline).map(String.init)
            let ports = lines.filter { $0.hasPrefix("m=") }.map { $0.split(separator: " ")[1] }
            #expect(ports.count == 2 && ports[0] == ports[1], "\(sdp)")
            #expect(lines.contains { $0.hasPrefix("m=video") && $0.contains("RTP/SAVP") }, "\(sdp)")
            for expected in ["a=rtpmap:96 VP8/90000", "a=rtcp-fb:* nack", "a=rtcp-fb:* nack pli", "a=group:BUNDLE 0 1"] {
                #expect(lines.contains(expected), "\(expected) in \(sdp)")
            }
            #expect(lines.filter { $0.hasPrefix("a=ssrc:") }.count == 2 && lines.filter { $0.hasPrefix("a=crypto:") }.count == 2, "\(sdp)")
            let key = try #require(lines.first { $0.hasPrefix("a=crypto:") }?.split(separator: ":").last)
            #expect(!a.output.contains(key) && !b.output.contains(key))
        }

        // Each side sees the other's video: enough pictures, close to the source, and the feedback counted.
        for (viewer, peer, child, sender) in [("carlo", "armelle", a, b), ("armelle", "carlo", b, a)] {
            #expect(child.output.contains("\(peer) video on"), "\(child.output)")
            #expect(child.output.contains("\(peer) video off"), "\(child.output)")
            let seen = try readInteropY4M(dir.appendingPathComponent("\(viewer)-seen.y4m"))
            #expect(seen.width == source.width && seen.height == source.height)
            // The file loops, so each picture seen is matched to the best of the source's pictures.
            let psnr = seen.frames.map { f in
                source.frames.map { interopLumaPSNR($0, f, width: source.width, height: source.height) }.max() ?? 0
            }
            let mean = psnr.reduce(0, +) / Double(max(1, psnr.count))
            let decoded = figure(child.output, line: "video received from \(peer):", after: ": ") ?? -1
            let sent = figure(sender.output, line: "video sent:", after: "video sent: ") ?? -1
            #expect(seen.frames.count >= 60, "\(viewer) saw \(seen.frames.count) pictures")
            #expect(decoded >= seen.frames.count, "\(child.output)")
            #expect(mean >= 30 && (psnr.min() ?? 0) >= 25, "\(viewer): mean PSNR \(mean), lowest \(psnr.min() ?? 0)")
            print("parley call video: \(viewer) saw \(seen.frames.count) pictures of \(sent) sent (\(decoded) decoded), luma PSNR mean "
                  + String(format: "%.2f", mean) + " dB, lowest " + String(format: "%.2f", psnr.min() ?? 0) + " dB")
            for line in child.output.split(separator: "\n") where line.hasPrefix("video ") { print("  \(viewer): \(line)") }
        }
        // Receiver reports flowed back to each sender.
        for child in [a, b] {
            #expect((figure(child.output, line: "video sent:", after: "receiver reports: ") ?? 0) >= 1, "\(child.output)")
            #expect((figure(child.output, line: "video received from", after: "receiver reports: ") ?? 0) >= 1, "\(child.output)")
        }
    }

    @Test func aCameraThatIsNotThereOrAMissingVideoFileFailsClearly() throws {
        let dir = try interopDirectory("call-camera")
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = try shortConversation("carlo", seconds: 1, in: dir)
        for (video, fragment) in [("/dev/video-parley-none", "camera /dev/video-parley-none"), ("missing.y4m", "missing.y4m")] {
            let port = interopFreeUDPPort()
            let child = try InteropChild(interopParleyBinary, ["call", "--listen", "\(port)", "--to", "127.0.0.1:9", "--audio", audio.path,
                                                              "--video", video, "--no-srtp", "--output", "a.wav", "--no-tui"],
                                         in: dir, name: "call-camera")
            #expect(child.wait(seconds: 10) == 1, "\(video): \(child.output)")
            #expect(child.output.contains(fragment), "\(video): \(child.output)")
        }
    }

    /// Two people may share a name, as two `parley call`s on one host without `--name` do (both
    /// take the host name): each tells the other apart by its SSRC, and the events show the
    /// shared name with the peer's id beside it.
    @Test func twoCallsWithTheSameNameHearEachOther() throws {
        let dir = try interopDirectory("call-same-name")
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = try shortConversation("carlo", seconds: 2, in: dir)
        let portA = interopFreeUDPPort()
        var portB = interopFreeUDPPort()
        while portB == portA { portB = interopFreeUDPPort() }
        func side(_ me: String, listen: UInt16, to: UInt16, peer: String) -> [String] {
            ["call", "--listen", "\(listen)", "--to", "127.0.0.1:\(to)", "--audio", audio.path, "--name", "vm",
             "--sdp-out", "\(me).sdp", "--sdp-in", "\(peer).sdp", "--output", "\(me).wav", "--events", "\(me).jsonl", "--no-tui",
             "--timeout", "2"]
        }
        let a = try InteropChild(interopParleyBinary, side("a", listen: portA, to: portB, peer: "b"), in: dir, name: "call-a")
        let b = try InteropChild(interopParleyBinary, side("b", listen: portB, to: portA, peer: "a"), in: dir, name: "call-b")
        #expect(a.wait(seconds: 30) == 0, "a: \(a.output)")
        #expect(b.wait(seconds: 30) == 0, "b: \(b.output)")
        for me in ["a", "b"] {
            let all = try interopEvents(dir.appendingPathComponent("\(me).jsonl"))
            let joined = all.filter { $0["type"] as? String == "joined" }
            #expect(joined.count == 2 && joined.allSatisfy { $0["participant"] as? String == "vm" }, "\(joined)")
            let peer = try #require(joined.compactMap { $0["id"] as? String }.first, "\(joined)")
            #expect(peer.hasPrefix("vm-"), "the peer's id: \(peer)")
        }
    }

    @Test func aPeerVideoOfferParleyCannotReceiveIsRefusedWithTheReason() throws {
        let dir = try interopDirectory("call-peer-video")
        defer { try? FileManager.default.removeItem(at: dir) }
        let audio = try shortConversation("carlo", seconds: 1, in: dir)
        let head = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=peer\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
            + "m=audio 5000 RTP/AVP 111\r\na=rtpmap:111 opus/48000/2\r\na=ssrc:1234 cname:peer\r\n"
        for (video, fragment) in [("m=video 5000 RTP/AVP 97\r\na=rtpmap:97 H264/90000\r\na=ssrc:5678\r\n", "offers no codec Parley receives (opus/48000 or VP8/90000); it offers H264/90000"),
                                  ("m=video 5002 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\na=ssrc:5678\r\n", "on one port"),
                                  ("m=video 5000 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\n", "no a=ssrc line")] {
            try (head + video).write(to: dir.appendingPathComponent("peer.sdp"), atomically: true, encoding: .utf8)
            let child = try InteropChild(interopParleyBinary, ["call", "--listen", "\(interopFreeUDPPort())", "--to", "127.0.0.1:9",
                                                              "--audio", audio.path, "--no-srtp", "--sdp-in", "peer.sdp",
                                                              "--output", "a.wav", "--no-tui"], in: dir, name: "call-peer-video")
            #expect(child.wait(seconds: 10) == 1, "\(video): \(child.output)")
            #expect(child.output.contains(fragment), "\(video): \(child.output)")
        }
    }
}
