// A browser calls `parley call --transport webrtc` directly, no server in between: a headless
// Chromium page POSTs its offer over HTTP (WHIP style), and the two exchange speech both ways
// and video both ways over ICE, DTLS-SRTP and SRTP, with REMB in both directions. Run inside
// the network namespace of scripts/netns.sh (its one ICE interface), as scripts/test.sh does.

import Foundation
import JanusTestSupport
import Testing

@Suite(.serialized, .enabled(if: NetworkNamespace.isInside,
                             "runs inside the network namespace of scripts/netns.sh (unshare -n, as root), as scripts/test.sh does"),
       .enabled(if: BrowserPeer.binaryPath != nil, "needs chromium (scripts/setup.sh installs it)"))
struct BrowserCallTests {
    /// The page: the offer of its microphone (capture processing off) and camera, its
    /// candidates gathered, POSTed to `endpoint`; Parley's audio recorded at 16 kHz and
    /// reported every 0.25 s (base64 PCM), its statistics every 0.5 s, a DELETE `hangUp` s after
    /// the connection is up.
    private static func page(endpoint: String, hangUp: Double) -> String {
        """
        <html><body><script>
        const t0 = performance.now();
        function report(event, fields) {
          console.log('PAGE ' + JSON.stringify(Object.assign({event, t: (performance.now() - t0) / 1000}, fields || {})));
        }
        function record(track) {
          const audio = new Audio();
          audio.muted = true;
          audio.srcObject = new MediaStream([track]);
          audio.play().catch(() => {});
          const context = new AudioContext({sampleRate: 16000});
          const node = context.createScriptProcessor(4096, 1, 1);
          let chunks = [], seq = 0;
          node.onaudioprocess = e => chunks.push(new Int16Array(e.inputBuffer.getChannelData(0).map(x => Math.max(-1, Math.min(1, x)) * 32767)));
          context.createMediaStreamSource(new MediaStream([track])).connect(node);
          node.connect(context.destination);
          context.resume();
          setInterval(() => {
            if (!chunks.length) return;
            let text = '';
            for (const c of chunks) { const b = new Uint8Array(c.buffer); for (let i = 0; i < b.length; i++) text += String.fromCharCode(b[i]); }
            chunks = [];
            report('pcm', {seq: seq++, data: btoa(text)});
          }, 250);
        }
        (async () => { try {
          const media = await navigator.mediaDevices.getUserMedia({
            audio: {echoCancellation: false, noiseSuppression: false, autoGainControl: false},
            video: {width: 640, height: 480, frameRate: 30}});
          const pc = new RTCPeerConnection();
          media.getTracks().forEach(track => pc.addTrack(track, media));
          pc.ontrack = e => { report('track', {kind: e.track.kind}); if (e.track.kind === 'audio') record(e.track); };
          await pc.setLocalDescription(await pc.createOffer());
          await new Promise(done => {
            if (pc.iceGatheringState === 'complete') done();
            pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === 'complete') done(); };
          });
          const response = await fetch('\(endpoint)', {method: 'POST', headers: {'Content-Type': 'application/sdp'}, body: pc.localDescription.sdp});
          const location = response.headers.get('Location');
          report('posted', {status: response.status, location});
          await pc.setRemoteDescription({type: 'answer', sdp: await response.text()});
          pc.onconnectionstatechange = () => {
            report('state', {state: pc.connectionState});
            if (pc.connectionState !== 'connected') return;
            setTimeout(async () => {
              const r = await fetch(new URL(location, '\(endpoint)'), {method: 'DELETE'});
              report('deleted', {status: r.status});
              pc.close();
            }, \(hangUp * 1000));
          };
          setInterval(async () => {
            const s = {};
            (await pc.getStats()).forEach(r => {
              if (r.type === 'outbound-rtp' && r.kind === 'video')
                Object.assign(s, {videoBytesSent: r.bytesSent, sentWidth: r.frameWidth, sentHeight: r.frameHeight,
                                  target: r.targetBitrate, limitation: r.qualityLimitationReason});
              if (r.type === 'inbound-rtp' && r.kind === 'video')
                Object.assign(s, {framesDecoded: r.framesDecoded, receivedWidth: r.frameWidth, receivedHeight: r.frameHeight});
              if (r.type === 'inbound-rtp' && r.kind === 'audio') s.audioReceived = r.packetsReceived;
              if (r.type === 'outbound-rtp' && r.kind === 'audio') s.audioSent = r.packetsSent;
              if (r.type === 'candidate-pair' && r.nominated && r.state === 'succeeded') s.available = r.availableOutgoingBitrate;
            });
            report('stats', s);
          }, 500);
        } catch (e) { report('error', {what: String(e)}); } })();
        </script></body></html>
        """
    }

    /// Chromium calls Parley: Parley hears the page's microphone (the first speaker's file)
    /// and the page hears Parley's (the second's), each correlating with its source; Parley's
    /// video reaches the page at its source's size, the page's camera reaches Parley's
    /// --video-output at the size the page sends; Parley's REMB keeps the page's video under
    /// --receive-bitrate; the page's DELETE ends the call.
    @Test func aBrowserCallsParleyOverWHIPStyleHTTP() async throws {
        let dir = try interopDirectory("browser-call")
        defer { try? FileManager.default.removeItem(at: dir) }
        // 32 s of speech each way: two of the sample voices, in turn.
        let files = try detectConversationFiles()
        func voices(_ names: [String], _ file: String) throws -> (url: URL, samples: [Float]) {
            var samples: [Float] = []
            for name in names { samples += try readInteropWAV(try #require(files.first { $0.lastPathComponent == name })).samples }
            let url = dir.appendingPathComponent(file)
            try writeInteropWAV(url, sampleRate: 16_000, samples: samples)
            return (url, samples)
        }
        let (browserVoice, source) = try voices(["armelle.wav", "carlo.wav"], "page.wav")
        let (parleyVoice, parleySource) = try voices(["reader.wav", "armelle.wav"], "parley.wav")
        let videoURL = try #require(files.first).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("video/sample.y4m")
        let address = try #require(NetworkNamespace.address)
        let cap = 250
        let parley = try InteropChild(interopParleyBinary,
                                      ["call", "--transport", "webrtc", "--listen", "8089", "--ice-address", address,
                                       "--receive-bitrate", "\(cap)", "--name", "parley", "--audio", parleyVoice.path,
                                       "--video", videoURL.path, "--output", "heard.wav", "--video-output", "seen.y4m",
                                       "--events", "events.jsonl", "--no-tui", "--timeout", "5"],
                                      in: dir, name: "call-parley")
        let started = ContinuousClock.now
        while !parley.output.contains("waiting for an offer"), !parley.hasExited, ContinuousClock.now - started < .seconds(20) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let browser = try BrowserPeer(page: Self.page(endpoint: "http://\(address):8089/call", hangUp: 30), audio: browserVoice)
        defer { browser.stop() }
        let deleted = await browser.waitFor("deleted", seconds: 60)
        let status = parley.wait(seconds: 20)
        let reports = browser.reports
        browser.stop()
        let story = reports.filter { $0.event != "pcm" && $0.event != "stats" }.map { "\($0.event) \($0.fields)" }
        #expect(deleted != nil, "the page did not hang up: \(story)\n\(browser.log())\n\(parley.output)")
        #expect(status == 0, "\(parley.output)")
        let posted = try #require(reports.first { $0.event == "posted" })
        #expect(posted.fields["status"] as? Int == 201 && (posted.fields["location"] as? String)?.hasPrefix("/call/") == true)
        #expect(deleted?.fields["status"] as? Int == 200)
        #expect(parley.output.contains("webrtc: connected"), "\(parley.output)")

        // Audio, each way, against its source (the page's microphone loops its file).
        let heard = try readInteropWAV(dir.appendingPathComponent("heard.wav")).samples
        let toParley = interopBandEnergyWindowCorrelation(source: source, heard: heard, maxLag: 16_000 * 20)
        let toParleyWaveform = interopSpeechWindowCorrelation(source: source, heard: heard, maxLag: 16_000 * 20)
        var pcm: [Float] = []
        for r in reports.filter({ $0.event == "pcm" }).sorted(by: { ($0.fields["seq"] as? Int ?? 0) < ($1.fields["seq"] as? Int ?? 0) }) {
            let bytes = [UInt8](Data(base64Encoded: r.fields["data"] as? String ?? "") ?? Data())
            for i in stride(from: 0, to: bytes.count - 1, by: 2) { pcm.append(Float(Int16(bitPattern: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8)) / 32768) }
        }
        let toBrowser = interopBandEnergyWindowCorrelation(source: parleySource, heard: pcm, maxLag: 16_000 * 20)
        // The measure tells voices apart: the page's recording against a voice Parley did not send.
        let other = try voices(["carlo.wav", "carlo.wav"], "other.wav").samples
        let unrelated = interopBandEnergyWindowCorrelation(source: other, heard: pcm, maxLag: 16_000 * 20)
        #expect(unrelated.median < 0.8, "the page's recording against another voice: \(unrelated)")
        #expect(toParley.windows >= 8 && toParley.median >= 0.9, "Parley heard the page: \(toParley)")
        #expect(toBrowser.windows >= 8 && toBrowser.median >= 0.9, "the page heard Parley: \(toBrowser), \(pcm.count) samples")

        // Video both ways.
        let stats = reports.filter { $0.event == "stats" }
        let decoded = stats.compactMap { $0.fields["framesDecoded"] as? Int }.max() ?? 0
        let shownSize = stats.last { ($0.fields["receivedWidth"] as? Int ?? 0) > 0 }.map { ($0.fields["receivedWidth"] as? Int ?? 0, $0.fields["receivedHeight"] as? Int ?? 0) }
        #expect(decoded >= 300 && shownSize.map { $0 == (320, 240) } == true, "the page decoded \(decoded) frames at \(String(describing: shownSize))")
        let sentSizes = stats.compactMap { r -> [Int]? in
            guard let w = r.fields["sentWidth"] as? Int, let h = r.fields["sentHeight"] as? Int, w > 0 else { return nil }
            return [w, h]
        }
        let seen = try readInteropY4M(dir.appendingPathComponent("seen.y4m"))
        #expect(sentSizes.first == [seen.width, seen.height] && seen.frames.count >= 100,
                "Parley wrote \(seen.frames.count) pictures of \(seen.width)x\(seen.height); the page sent \(Set(sentSizes.map { "\($0[0])x\($0[1])" }))")
        let last = try #require(sentSizes.last)
        #expect(parley.output.contains("video received size: \(last[0])x\(last[1])"), "\(parley.output)")

        // REMB: the page's sender keeps under Parley's estimate (its own estimate, and the rate
        // it sent over the call's last 10 s).
        let available = stats.compactMap { $0.fields["available"] as? Double }
        let settled = stats.filter { $0.time >= (stats.first?.time ?? 0) + 5 }
        let lateAvailable = settled.compactMap { $0.fields["available"] as? Double }
        let window = stats.filter { $0.fields["videoBytesSent"] != nil }.suffix(20)
        let rate = window.count >= 2 ? Double((window.last!.fields["videoBytesSent"] as? Int ?? 0) - (window.first!.fields["videoBytesSent"] as? Int ?? 0)) * 8
            / (window.last!.time - window.first!.time) / 1000 : .infinity
        #expect(!lateAvailable.isEmpty && lateAvailable.allSatisfy { $0 <= Double(cap) * 1000 * 1.05 },
                "the page's estimate \(available.map { Int($0 / 1000) }) kbit/s, cap \(cap)")
        #expect(rate <= Double(cap) * 1.2, "the page sent \(rate) kbit/s of video")
        let rembLine = parley.output.split(separator: "\n").first { $0.hasPrefix("remb:") } ?? ""
        print("browser -> parley call (WHIP-style HTTP, WebRTC): median band-energy window correlation: Parley heard the page "
              + "\(String(format: "%.3f", toParley.median)) over \(toParley.windows) windows (waveform \(String(format: "%.3f", toParleyWaveform.median))), "
              + "the page heard Parley \(String(format: "%.3f", toBrowser.median)) over \(toBrowser.windows) (another voice: "
              + "\(String(format: "%.3f", unrelated.median))); the page decoded \(decoded) frames at "
              + "\(shownSize.map { "\($0.0)x\($0.1)" } ?? "-"); Parley wrote \(seen.frames.count) pictures at \(seen.width)x\(seen.height) "
              + "(the page sent \(sentSizes.first.map { "\($0[0])x\($0[1])" } ?? "-") first, \(last[0])x\(last[1]) last); "
              + "the page's estimate after 5 s at most \(Int((lateAvailable.max() ?? 0) / 1000)) kbit/s, video sent at "
              + "\(Int(rate)) kbit/s over its last \(String(format: "%.1f", (window.last?.time ?? 0) - (window.first?.time ?? 0))) s "
              + "(cap \(cap)); \(rembLine); limitation \(stats.last?.fields["limitation"] as? String ?? "-")")
        print(parley.output.split(separator: "\n").filter { $0.hasPrefix("video") || $0.hasPrefix("sent") || $0.hasPrefix("received") }
            .joined(separator: "\n"))
    }

    /// On a narrow path (the namespace's loopback shaped to 300 kbit/s by a token bucket, for
    /// everything: both videos, both voices), Parley's VP8 goes down from its 300 kbit/s
    /// under the page's REMBs and its reports' loss, and the call goes on to the page's DELETE.
    @Test func parleysVideoGoesDownOnANarrowPath() async throws {
        let dir = try interopDirectory("browser-call-narrow")
        defer { try? FileManager.default.removeItem(at: dir) }
        let files = try detectConversationFiles()
        let voice = try #require(files.first { $0.lastPathComponent == "armelle.wav" })
        let videoURL = voice.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("video/sample.y4m")
        let address = try #require(NetworkNamespace.address)
        func tc(_ arguments: [String]) throws -> Int32 {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/sbin/tc")
            p.arguments = arguments
            try p.run()
            p.waitUntilExit()
            return p.terminationStatus
        }
        try #require(try tc(["qdisc", "add", "dev", "lo", "root", "tbf", "rate", "300kbit", "burst", "16kb", "latency", "300ms"]) == 0)
        defer { _ = try? tc(["qdisc", "del", "dev", "lo", "root"]) }
        let parley = try InteropChild(interopParleyBinary,
                                      ["call", "--transport", "webrtc", "--listen", "8090", "--ice-address", address, "--name", "parley",
                                       "--audio", voice.path, "--video", videoURL.path, "--output", "heard.wav", "--no-tui", "--timeout", "5"],
                                      in: dir, name: "call-parley")
        let started = ContinuousClock.now
        while !parley.output.contains("waiting for an offer"), !parley.hasExited, ContinuousClock.now - started < .seconds(20) {
            try await Task.sleep(for: .milliseconds(20))
        }
        let browser = try BrowserPeer(page: Self.page(endpoint: "http://\(address):8090/call", hangUp: 20), audio: voice)
        defer { browser.stop() }
        let deleted = await browser.waitFor("deleted", seconds: 60)
        let status = parley.wait(seconds: 20)
        browser.stop()
        #expect(deleted?.fields["status"] as? Int == 200 && status == 0, "\(browser.log())\n\(parley.output)")
        let sentLine = try #require(parley.output.split(separator: "\n").first { $0.hasPrefix("video sent:") }, "\(parley.output)")
        let lowest = try #require(sentLine.split(separator: "(lowest ").last.flatMap { Int($0.prefix { $0.isNumber }) })
        let rembLine = parley.output.split(separator: "\n").first { $0.hasPrefix("remb:") } ?? ""
        #expect(lowest <= 200 && rembLine.contains("received") && !rembLine.contains("received 0 "), "\(parley.output)")
        print("parley call, 300 kbit/s path: \(sentLine.split(separator: ";").last ?? "") ; \(rembLine)")
    }
}
