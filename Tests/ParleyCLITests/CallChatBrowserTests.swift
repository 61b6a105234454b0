// A browser chats with `parley call --transport webrtc --chat` over a data channel of the
// direct call (no server): a headless Chromium page opens the channel and exchanges text with
// Parley's standard input and --events both ways: every message once, in order, whole
// (Japanese and emoji, a 64 KiB message, bursts of 1000), within 200 ms; the channel opens after
// DTLS no slower in Parley than in Chromium. Run inside the network namespace of
// scripts/netns.sh (its one ICE interface), as scripts/test.sh does.

import Foundation
import JanusTestSupport
import Testing

/// Text of exactly `count` UTF-8 bytes: Japanese, emoji, accents and ASCII, no line break.
private func mixedLine(bytes count: Int) -> String {
    let pieces = ["chat ", "日本語", "🎉", "é", "👩🏽‍💻", "テキスト"]
    var text = "", size = 0, i = 0
    while size + pieces[i % pieces.count].utf8.count <= count {
        text += pieces[i % pieces.count]
        size += pieces[i % pieces.count].utf8.count
        i += 1
    }
    return text + String(repeating: "x", count: count - size)
}

/// Milliseconds since 1970 of an `--events` line's ISO 8601 `time`.
private func epochMilliseconds(_ iso: String) -> Double? {
    (try? Date(iso, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))).map { $0.timeIntervalSince1970 * 1000 }
}

@Suite(.serialized, .enabled(if: NetworkNamespace.isInside,
                             "runs inside the network namespace of scripts/netns.sh (unshare -n, as root), as scripts/test.sh does"),
       .enabled(if: BrowserPeer.binaryPath != nil, "needs chromium (scripts/setup.sh installs it)"))
struct CallChatBrowserTests {
    /// The page: its microphone's offer with a data channel "chat" (or, `negotiated`, one
    /// agreed out of band, which sends no DATA_CHANNEL_OPEN), its candidates gathered, POSTed to
    /// `endpoint`. On the channel's opening (`open`, with `afterDTLS`: seconds from its DTLS
    /// transport's `connected`) it sends two lines, ten pings 30 ms apart (`ping-K@` and the wall
    /// clock in ms), a 64 KiB message (`long`: its size and FNV-1a) and a burst of 1000, then
    /// reports `sent`. Each message received is reported (`message`: `text` up to 300 bytes,
    /// `bytes`, `fnv`, `at`: the wall clock in ms, `channel`: its label); `@bye` makes it hang up.
    private static func page(endpoint: String, negotiated: Bool) -> String {
        """
        <html><body><script>
        const t0 = performance.now();
        function report(event, fields) {
          console.log('PAGE ' + JSON.stringify(Object.assign({event, t: (performance.now() - t0) / 1000}, fields || {})));
        }
        function fnv(bytes) {
          let h = 0x811c9dc5;
          for (const b of bytes) { h ^= b; h = Math.imul(h, 0x01000193) >>> 0; }
          return h >>> 0;
        }
        const sleep = ms => new Promise(done => setTimeout(done, ms));
        function longText() {
          const pieces = ['ブラウザ', '🌸', 'ñ', '🚀', 'page '];
          let text = '', size = 0, i = 0;
          const encoder = new TextEncoder();
          for (;;) {
            const p = pieces[i++ % pieces.length], n = encoder.encode(p).length;
            if (size + n > 65536) break;
            text += p; size += n;
          }
          return text + 'y'.repeat(65536 - size);
        }
        (async () => { try {
          const media = await navigator.mediaDevices.getUserMedia({audio: true});
          const pc = new RTCPeerConnection();
          media.getTracks().forEach(track => pc.addTrack(track, media));
          let dtlsUp = null, location = null;
          async function hangUp() {
            const r = await fetch(new URL(location, '\(endpoint)'), {method: 'DELETE'});
            report('deleted', {status: r.status});
            pc.close();
          }
          async function run(channel) {
            const opened = performance.now();
            report('open', {label: channel.label, afterDTLS: dtlsUp === null ? null : (opened - dtlsUp) / 1000});
            channel.send('hello from the page');
            channel.send('ブラウザから: こんにちは 🌸🚀 👩🏽‍💻 ñ');
            for (let k = 1; k <= 10; k++) { channel.send('ping-' + k + '@' + Date.now()); await sleep(30); }
            const long = longText(), bytes = new TextEncoder().encode(long);
            channel.send(long);
            report('long', {bytes: bytes.length, fnv: fnv(bytes)});
            for (let i = 0; i < 1000; i++) channel.send('pb-' + i);
            report('sent', {});
          }
          function listen(channel) {
            channel.onmessage = e => {
              const bytes = new TextEncoder().encode(e.data);
              report('message', {channel: channel.label, text: bytes.length <= 300 ? e.data : null, bytes: bytes.length,
                                 fnv: fnv(bytes), at: Date.now()});
              if (e.data === '@bye') hangUp();
            };
          }
          if (\(negotiated)) {
            // A channel agreed out of band: no DATA_CHANNEL_OPEN, so Parley opens its own.
            pc.createDataChannel('side', {negotiated: true, id: 99});
            let started = false;
            const start = channel => { if (!started) { started = true; run(channel); } };
            pc.ondatachannel = e => {
              listen(e.channel);
              e.channel.onopen = () => start(e.channel);
              if (e.channel.readyState === 'open') start(e.channel);
            };
          } else {
            const channel = pc.createDataChannel('chat');
            listen(channel);
            channel.onopen = () => run(channel);
          }
          await pc.setLocalDescription(await pc.createOffer());
          await new Promise(done => {
            if (pc.iceGatheringState === 'complete') done();
            pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === 'complete') done(); };
          });
          const response = await fetch('\(endpoint)', {method: 'POST', headers: {'Content-Type': 'application/sdp'}, body: pc.localDescription.sdp});
          location = response.headers.get('Location');
          report('posted', {status: response.status, location});
          await pc.setRemoteDescription({type: 'answer', sdp: await response.text()});
          const dtls = pc.sctp.transport;
          dtls.addEventListener('statechange', () => { if (dtls.state === 'connected' && dtlsUp === null) dtlsUp = performance.now(); });
        } catch (e) { report('error', {what: String(e)}); } })();
        </script></body></html>
        """
    }

    /// Parley with `--chat` on a pipe: what the test writes there is what Parley sends.
    private final class ChatCall {
        let parley: InteropChild
        private let input: Int32
        let dir: URL

        init(port: Int, dir: URL, voice: URL, address: String) throws {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw InteropError("pipe: \(errno)") }
            // Neither end goes to other children (the read end is dup'ed onto Parley's input).
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            // A write after Parley exited fails (EPIPE) instead of ending the test process.
            signal(SIGPIPE, SIG_IGN)
            self.dir = dir
            input = fds[1]
            parley = try InteropChild(interopParleyBinary,
                                      ["call", "--transport", "webrtc", "--listen", "\(port)", "--ice-address", address,
                                       "--name", "parley", "--audio", voice.path, "--output", "heard.wav", "--events", "events.jsonl", "--no-tui",
                                       "--timeout", "5", "--chat"],
                                      in: dir, name: "call-parley", input: fds[0])
            close(fds[0])
        }

        deinit { close(input) }

        /// Writes `lines` to Parley's standard input, each ended by a line feed.
        func type(_ lines: [String]) {
            let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
            var done = 0
            while done < bytes.count {
                let n = bytes[done...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
                if n <= 0 { return }
                done += n
            }
        }

        /// The chat's `message` lines of --events so far.
        var messages: [[String: Any]] {
            ((try? interopEvents(dir.appendingPathComponent("events.jsonl"))) ?? []).filter { $0["type"] as? String == "message" }
        }

        func waitForOffer() async throws {
            let started = ContinuousClock.now
            while !parley.output.contains("waiting for an offer"), !parley.hasExited, ContinuousClock.now - started < .seconds(20) {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// The messages the page received, in order: text (nil over 300 bytes), UTF-8 size, FNV-1a,
    /// wall-clock arrival in ms.
    private static func pageMessages(_ browser: BrowserPeer) -> [(text: String?, bytes: Int, fnv: UInt32, at: Double)] {
        browser.reports.filter { $0.event == "message" }.compactMap { r in
            guard let bytes = r.fields["bytes"] as? Int, let fnv = (r.fields["fnv"] as? NSNumber)?.uint32Value,
                  let at = (r.fields["at"] as? NSNumber)?.doubleValue else { return nil }
            return (r.fields["text"] as? String, bytes, fnv, at)
        }
    }

    private static func eventually(seconds: Double = 30, _ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return condition()
    }

    @Test func aBrowserAndParleyChatOverTheCallsDataChannel() async throws {
        let dir = try interopDirectory("call-chat")
        defer { try? FileManager.default.removeItem(at: dir) }
        let voice = try #require(try detectConversationFiles().first)
        let address = try #require(NetworkNamespace.address)
        let call = try ChatCall(port: 8093, dir: dir, voice: voice, address: address)
        try await call.waitForOffer()
        let browser = try BrowserPeer(page: Self.page(endpoint: "http://\(address):8093/call", negotiated: false), audio: voice)
        defer { browser.stop() }
        let opened = await browser.waitFor("open", seconds: 60)
        try #require(opened != nil, "the page's channel did not open: \(browser.log())\n\(call.parley.output)")

        // Parley's lines: two, ten pings 30 ms apart (their wall-clock write times kept), a 64 KiB
        // one, a burst of 1000.
        let unicode = "日本語のチャット 🎌🍣 👨‍👩‍👧‍👦 ñ"
        let long = mixedLine(bytes: 65_536)
        var typedAt: [String: Double] = [:]
        call.type(["hello from parley", unicode])
        for k in 1...10 {
            typedAt["ping-\(k)"] = Date().timeIntervalSince1970 * 1000
            call.type(["ping-\(k)"])
            try await Task.sleep(for: .milliseconds(30))
        }
        call.type([long])
        let burst = (0..<1000).map { "b-\($0)" }
        call.type(burst)
        let parleyLines = ["hello from parley", unicode] + (1...10).map { "ping-\($0)" } + [long] + burst

        // The page's lines at Parley, and Parley's at the page, each once and in order.
        let pageLong = try #require(await browser.waitFor("long", seconds: 30))
        #expect(await Self.eventually { Self.pageMessages(browser).count >= parleyLines.count }, "\(browser.log())")
        #expect(await Self.eventually { call.messages.filter { $0["participant"] as? String == "peer" }.count >= 1013 },
                "\(call.parley.output)")
        call.type(["@bye"])
        let deleted = await browser.waitFor("deleted", seconds: 30)
        let status = call.parley.wait(seconds: 20)
        browser.stop()
        #expect(deleted?.fields["status"] as? Int == 200 && status == 0, "\(browser.log())\n\(call.parley.output)")

        let messages = call.messages
        let fromPage = messages.filter { $0["participant"] as? String == "peer" }
        let pageTexts = fromPage.compactMap { $0["text"] as? String }
        #expect(fromPage.allSatisfy { $0["own"] as? Bool == false && $0["time"] is String && $0["t"] is Double })
        #expect(Array(pageTexts.prefix(2)) == ["hello from the page", "ブラウザから: こんにちは 🌸🚀 👩🏽‍💻 ñ"])
        #expect(pageTexts.dropFirst(2).prefix(10).map { $0.split(separator: "@").first.map(String.init) ?? "" }
                == (1...10).map { "ping-\($0)" })
        let longAtParley = pageTexts.count > 12 ? pageTexts[12] : ""
        #expect(longAtParley.utf8.count == 65_536 && pageLong.fields["bytes"] as? Int == 65_536
                && (pageLong.fields["fnv"] as? NSNumber)?.uint32Value == BrowserPeer.fnv(longAtParley.utf8),
                "the page's 64 KiB message whole at Parley: \(longAtParley.utf8.count) bytes")
        #expect(Array(pageTexts.dropFirst(13)) == (0..<1000).map { "pb-\($0)" }, "the page's burst at Parley, once each, in order")
        #expect(pageTexts.count == 1013)
        let own = messages.filter { $0["participant"] as? String == "parley" }
        #expect(own.compactMap { $0["text"] as? String } == parleyLines + ["@bye"] && own.allSatisfy { $0["own"] as? Bool == true },
                "Parley's own lines, marked own, in order")
        #expect(call.parley.output.contains("peer: hello from the page") && call.parley.output.contains("parley (me): hello from parley"))

        let atPage = Self.pageMessages(browser).filter { $0.text != "@bye" }
        #expect(atPage.count == parleyLines.count, "\(atPage.count) messages at the page")
        let shortAtPage = atPage.compactMap(\.text)
        #expect(shortAtPage == parleyLines.filter { $0.utf8.count <= 300 }, "Parley's lines at the page, once each, in order")
        let longAtPage = atPage.first { $0.text == nil }
        #expect(longAtPage.map { $0.bytes == 65_536 && $0.fnv == BrowserPeer.fnv(long.utf8) } == true,
                "Parley's 64 KiB line whole at the page")

        // Latency, one way, on the machine's wall clock: the page's pings from its send to
        // Parley's --events; Parley's from the write to its standard input to the page's
        // onmessage.
        let toParley = fromPage.compactMap { m -> Double? in
            guard let text = m["text"] as? String, text.hasPrefix("ping-"), let sent = text.split(separator: "@").last.flatMap({ Double($0) }),
                  let at = (m["time"] as? String).flatMap(epochMilliseconds) else { return nil }
            return at - sent
        }.sorted()
        let toPage = atPage.compactMap { m -> Double? in
            guard let text = m.text, let typed = typedAt[text] else { return nil }
            return m.at - typed
        }.sorted()
        #expect(toParley.count == 10 && toParley.last! <= 200, "the page to Parley (ms): \(toParley)")
        #expect(toPage.count == 10 && toPage.last! <= 200, "Parley to the page (ms): \(toPage)")

        // How long each burst took to arrive, first to last message.
        func arrival(_ text: String) -> Double? {
            fromPage.first { $0["text"] as? String == text }.flatMap { ($0["time"] as? String).flatMap(epochMilliseconds) }
        }
        let burstAtParley = (arrival("pb-999") ?? .nan) - (arrival("pb-0") ?? .nan)
        let burstAtPage = (atPage.first { $0.text == "b-999" }?.at ?? .nan) - (atPage.first { $0.text == "b-0" }?.at ?? .nan)

        // The channel's opening after DTLS: Parley's association up (when it may open a channel
        // and send) against Chromium's `open` on its own channel (its association up and
        // DATA_CHANNEL_OPEN sent).
        let chromium = try #require(opened?.fields["afterDTLS"] as? Double, "\(browser.log())")
        let chatLine = try #require(call.parley.output.split(separator: "\n").first { $0.hasPrefix("chat: ") }, "\(call.parley.output)")
        func ms(after label: String) -> Double? {
            chatLine.components(separatedBy: label + " ").dropFirst().first.flatMap { Double($0.prefix { $0.isNumber || $0 == "." }) }
        }
        let associationUp = try #require(ms(after: "association up"), "\(chatLine)")
        let channelOpen = try #require(ms(after: "channel open"), "\(chatLine)")
        print("chat in a direct call with Chromium: one way ms, the page to Parley median \(toParley[5]) max \(toParley.last!); "
              + "Parley to the page median \(toPage[5]) max \(toPage.last!); bursts of 1000, first to last: the page's at Parley "
              + "\(burstAtParley) ms, Parley's at the page \(burstAtPage) ms; after DTLS: Parley's association up \(associationUp) ms, "
              + "its channel open (the page's DATA_CHANNEL_OPEN in) \(channelOpen) ms, Chromium's open \(chromium * 1000) ms; \(chatLine)")
        // One sample each is noisy on a busy machine: Parley no slower than Chromium, or within 5 ms.
        #expect(associationUp <= max(chromium * 1000, 5), "Parley \(associationUp) ms, Chromium \(chromium * 1000) ms")
    }

    /// A page whose only channel was agreed out of band (no DATA_CHANNEL_OPEN): Parley opens
    /// its own, "chat", a second after the association is up, and the page gets it.
    @Test func parleyOpensTheChannelWhenThePageOpensNone() async throws {
        let dir = try interopDirectory("call-chat-own")
        defer { try? FileManager.default.removeItem(at: dir) }
        let voice = try #require(try detectConversationFiles().first)
        let address = try #require(NetworkNamespace.address)
        let call = try ChatCall(port: 8094, dir: dir, voice: voice, address: address)
        try await call.waitForOffer()
        call.type(["sent before the channel"])
        let browser = try BrowserPeer(page: Self.page(endpoint: "http://\(address):8094/call", negotiated: true), audio: voice)
        defer { browser.stop() }
        let opened = await browser.waitFor("open", seconds: 60)
        #expect(opened?.fields["label"] as? String == "chat", "\(browser.log())\n\(call.parley.output)")
        #expect(await Self.eventually { call.messages.filter { $0["participant"] as? String == "peer" }.count >= 1013 },
                "\(call.parley.output)")
        call.type(["@bye"])
        let deleted = await browser.waitFor("deleted", seconds: 30)
        let status = call.parley.wait(seconds: 20)
        browser.stop()
        #expect(deleted?.fields["status"] as? Int == 200 && status == 0, "\(browser.log())\n\(call.parley.output)")
        #expect(call.parley.output.contains("the data channel 'chat' is open (opened here)"), "\(call.parley.output)")
        let atPage = Self.pageMessages(browser).compactMap(\.text)
        #expect(atPage == ["sent before the channel", "@bye"], "\(atPage)")
        #expect(call.messages.filter { $0["participant"] as? String == "peer" }.compactMap { $0["text"] as? String }.last == "pb-999")
    }
}
