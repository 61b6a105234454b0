import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A headless Chromium in a Janus VideoRoom, for the WebRTC tests: a page that loads Debian's
/// `janus.js` and publishes a WAV file's audio as its microphone (capture processing off, so
/// what arrives can be compared with the file), or subscribes to a publisher and reports what
/// it receives. The page reports on Chromium's standard error as `console.log` lines
/// `PAGE {json}`, read here as ``Report``s. Started as a child process (in a process group of
/// its own, with its helpers), stopped by its id.
///
/// Janus refuses loopback ICE candidates, so a browser test runs in the network namespace of
/// `scripts/netns.sh` (``NetworkNamespace``).
public final class BrowserPeer: @unchecked Sendable {
    /// The Chromium binary, if installed.
    public static let binaryPath: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }
    /// Debian's `janus.js` (package libjs-janus-gateway).
    public static let janusScript = "/usr/share/javascript/janus-gateway/janus.js"

    /// What the page does.
    public enum Role: Sendable {
        /// Joins `room` as a publisher named `display` and sends `audio` (a WAV file) as its
        /// microphone's capture.
        case publish(audio: URL, display: String)
        /// The same with its camera too: Chromium's fake camera (its test pattern, 640x480),
        /// sent as VP8.
        case publishWithCamera(audio: URL, display: String)
        /// Joins `room` as a subscriber of the publisher whose id is `feed` (audio only).
        case subscribe(feed: UInt64)
        /// Joins TextRoom room `room` as `display` (janus.js's data channel): reports its
        /// data channel's opening (`open`, with `afterDTLS`: seconds from its DTLS transport's
        /// `connected`), the join (`chatJoined`), and each message received (`message`: `from`,
        /// `text` up to 300 UTF-8 bytes, `bytes`, `fnv`: FNV-1a 32 of its UTF-8). A message
        /// `@go-browser` makes it send `c-1` to `c-5` and a Unicode one, `@burst-browser` 1000
        /// messages `cb-0` to `cb-999`, and `ping-N` gets `pong-N` back at once.
        case chat(display: String)
    }

    /// One line the page reported: what happened (`joined`, `ice`, `webrtc`, `stats`, `error`,
    /// ...), when (seconds since the page's script started) and its fields.
    public struct Report: @unchecked Sendable {
        public var event: String
        public var time: Double
        public var fields: [String: Any]
    }

    public let folder: URL
    private let process = Process()
    private let stderrPipe = Pipe()
    private let lock = NSLock()
    private var lines: [String] = []
    /// The bytes after the last newline read so far (a line split between two reads).
    private var partial: [UInt8] = []

    /// Writes the page and starts Chromium on it.
    public convenience init(janus: URL, room: UInt64, role: Role, pin: String? = nil) throws {
        guard FileManager.default.fileExists(atPath: Self.janusScript) else {
            throw ServerError("\(Self.janusScript) is missing (apt-get install libjs-janus-gateway)")
        }
        let audio: URL? = switch role {
        case .publish(let audio, _), .publishWithCamera(let audio, _): audio
        default: nil
        }
        let page = if case .chat(let display) = role {
            Self.chatPage(janus: janus, room: room, display: display)
        } else {
            Self.page(janus: janus, room: room, role: role, pin: pin)
        }
        try self.init(page: page, audio: audio, files: [URL(fileURLWithPath: Self.janusScript)])
    }

    /// Writes `html` as the page (beside copies of `files`) and starts Chromium on it, its fake
    /// microphone playing `audio` (a WAV file; without it Chromium's beep) and its fake camera
    /// showing Chromium's test pattern. The page reports with `console.log('PAGE ' + json)`,
    /// the JSON holding `event` and `t`.
    public init(page html: String, audio: URL?, files: [URL] = []) throws {
        guard let binary = Self.binaryPath else { throw ServerError("chromium is not installed") }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-browser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for file in files {
            try FileManager.default.copyItem(at: file, to: folder.appendingPathComponent(file.lastPathComponent))
        }
        let page = folder.appendingPathComponent("page.html")
        try html.write(to: page, atomically: true, encoding: .utf8)
        var arguments = ["--headless=new", "--no-sandbox", "--no-first-run", "--disable-gpu",
                         "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                         "--enable-logging=stderr", "--v=0", "--allow-file-access-from-files",
                         "--autoplay-policy=no-user-gesture-required",
                         "--user-data-dir=" + folder.appendingPathComponent("profile").path]
        if let audio { arguments.append("--use-file-for-fake-audio-capture=" + audio.path) }
        arguments.append(page.absoluteString)
        // A child process gets a process group of its own (Foundation's Process does that): Chromium's
        // helper processes are in it too, and are stopped with it.
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderrPipe
        stderrPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            self.lock.lock()
            self.partial += data
            if let end = self.partial.lastIndex(of: 0x0A) {
                let whole = self.partial[..<end]
                self.lines.append(contentsOf: whole.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) })
                self.partial.removeSubrange(...end)
            }
            self.lock.unlock()
        }
        try process.run()
    }

    /// Chromium's process id, which is also the id of the process group its helpers are in.
    public var processGroup: pid_t { process.processIdentifier }

    /// The page's reports so far, in order.
    public var reports: [Report] {
        lock.lock()
        let all = lines
        lock.unlock()
        return all.compactMap { line in
            guard let start = line.range(of: "\"PAGE ")?.upperBound, let end = line.range(of: "\", source:")?.lowerBound,
                  start < end else { return nil }
            let json = String(line[start..<end]).replacingOccurrences(of: "\\\"", with: "\"")
            guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
                  let event = object["event"] as? String, let time = object["t"] as? Double else { return nil }
            return Report(event: event, time: time, fields: object)
        }
    }

    /// Waits up to `seconds` for a report of `event`; returns the first.
    public func waitFor(_ event: String, seconds: Double) async -> Report? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if let r = reports.first(where: { $0.event == event }) { return r }
            if !process.isRunning { return nil }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return nil
    }

    /// Chromium's own standard error, for failure messages (the last `limit` characters).
    public func log(limit: Int = 3000) -> String {
        lock.lock()
        defer { lock.unlock() }
        return String(lines.filter { !$0.contains("dbus") }.joined(separator: "\n").suffix(limit))
    }

    /// Stops Chromium and its helpers (their process group: SIGTERM, then SIGKILL) and removes
    /// the folder.
    public func stop() {
        if process.isRunning {
            let group = process.processIdentifier
            kill(-group, SIGTERM)
            for _ in 0..<40 where process.isRunning { usleep(50_000) }
            if process.isRunning { kill(-group, SIGKILL) }
            process.waitUntilExit()
        }
        stderrPipe.fileHandleForReading.readabilityHandler = nil
        try? FileManager.default.removeItem(at: folder)
    }

    deinit { stop() }

    private static func page(janus: URL, room: UInt64, role: Role, pin: String?) -> String {
        let pinField = pin.map { ", pin: '\($0)'" } ?? ""
        let join: String
        switch role {
        case .publish(_, let display), .publishWithCamera(_, let display):
            join = "{request: 'join', room: \(room), ptype: 'publisher', display: '\(display)'\(pinField)}"
        case .subscribe(let feed):
            join = "{request: 'join', room: \(room), ptype: 'subscriber', streams: [{feed: \(feed)}]\(pinField)}"
        case .chat:
            join = ""
        }
        let publishing = switch role {
        case .publish, .publishWithCamera: "true"
        default: "false"
        }
        let camera = if case .publishWithCamera = role { "true" } else { "false" }
        return """
            <html><body>
            <script>window.adapter = {browserDetails: {browser: 'chrome', version: 156}};</script>
            <script src="janus.js"></script>
            <script>
            const t0 = performance.now();
            function report(event, fields) {
              console.log('PAGE ' + JSON.stringify(Object.assign({event, t: (performance.now() - t0) / 1000}, fields || {})));
            }
            const publishing = \(publishing), camera = \(camera);
            let handle = null;
            function stats() {
              setInterval(async () => {
                const all = await handle.webrtcStuff.pc.getStats();
                all.forEach(r => {
                  if (r.type === 'outbound-rtp' && r.kind === 'audio') report('stats', {sent: r.packetsSent});
                  if (r.type === 'inbound-rtp' && r.kind === 'audio')
                    report('stats', {received: r.packetsReceived, lost: r.packetsLost, energy: r.totalAudioEnergy,
                                     concealed: r.concealedSamples});
                });
              }, 250);
            }
            Janus.init({debug: false, dependencies: Janus.useDefaultDependencies(), callback: () => {
              const janus = new Janus({server: '\(janus.absoluteString)', error: e => report('error', {what: String(e)}),
                success: () => janus.attach({plugin: 'janus.plugin.videoroom',
                  error: e => report('error', {what: String(e)}),
                  success: h => { handle = h; h.send({message: \(join)}); },
                  iceState: s => report('ice', {state: s}),
                  webrtcState: on => { report('webrtc', {up: on}); if (on) stats(); },
                  onmessage: (msg, jsep) => { try {
                    if (msg.error) report('error', {what: msg.error, code: msg.error_code});
                    if (msg.videoroom === 'joined') {
                      report('joined', {id: msg.id});
                      handle.createOffer({
                        tracks: [{type: 'audio', capture: {echoCancellation: false, noiseSuppression: false, autoGainControl: false},
                                  recv: false}].concat(camera ? [{type: 'video', capture: true, recv: false}] : []),
                        success: offer => handle.send({message: {request: 'configure', audio: true, video: camera}, jsep: offer}),
                        error: e => report('error', {what: 'offer: ' + JSON.stringify(e)})});
                    }
                    if (msg.videoroom === 'attached') report('attached', {});
                    if (jsep && jsep.type === 'answer') handle.handleRemoteJsep({jsep});
                    if (jsep && jsep.type === 'offer')
                      handle.createAnswer({jsep, tracks: [{type: 'audio', capture: false, recv: true}],
                        success: answer => handle.send({message: {request: 'start', room: \(room)}, jsep: answer}),
                        error: e => report('error', {what: 'answer: ' + JSON.stringify(e)})});
                  } catch (e) { report('error', {what: String(e)}); } },
                  onremotetrack: (track, mid, on) => {
                    report('track', {kind: track.kind, on});
                    // Played out, as a page would: the decoder's audio energy is counted as it plays.
                    if (on && track.kind === 'audio') {
                      const audio = document.createElement('audio');
                      audio.autoplay = true;
                      audio.srcObject = new MediaStream([track]);
                      document.body.appendChild(audio);
                      audio.play().catch(e => report('error', {what: 'play: ' + String(e)}));
                    }
                  },
                })});
            }});
            </script></body></html>
            """
    }
}

extension BrowserPeer {
    /// FNV-1a (32 bits) of `bytes`, as the chat page computes it over a message's UTF-8.
    public static func fnv(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var h: UInt32 = 0x811C_9DC5
        for b in bytes { h = (h ^ UInt32(b)) &* 0x0100_0193 }
        return h
    }

    fileprivate static func chatPage(janus: URL, room: UInt64, display: String) -> String {
        """
        <html><body>
        <script>window.adapter = {browserDetails: {browser: 'chrome', version: 156}};</script>
        <script src="janus.js"></script>
        <script>
        const t0 = performance.now();
        function report(event, fields) {
          console.log('PAGE ' + JSON.stringify(Object.assign({event, t: (performance.now() - t0) / 1000}, fields || {})));
        }
        const username = '\(display)-' + Math.random().toString(16).slice(2, 10);
        let handle = null, dtlsUp = null, tx = 0;
        function send(text) {
          handle.data({text: JSON.stringify({textroom: 'message', room: \(room), text, ack: false, transaction: 't' + (++tx)}),
                       error: e => report('error', {what: 'send: ' + String(e)})});
        }
        function fnv(bytes) {
          let h = 0x811c9dc5;
          for (const b of bytes) { h ^= b; h = Math.imul(h, 0x01000193) >>> 0; }
          return h >>> 0;
        }
        function watchDTLS() {
          const pc = handle.webrtcStuff.pc;
          const dtls = pc && pc.sctp ? pc.sctp.transport : null;
          if (!dtls) { setTimeout(watchDTLS, 1); return; }
          if (dtls.state === 'connected') { dtlsUp = performance.now(); return; }
          dtls.addEventListener('statechange', () => { if (dtls.state === 'connected' && dtlsUp === null) dtlsUp = performance.now(); });
        }
        Janus.init({debug: false, dependencies: Janus.useDefaultDependencies(), callback: () => {
          const janus = new Janus({server: '\(janus.absoluteString)', error: e => report('error', {what: String(e)}),
            success: () => janus.attach({plugin: 'janus.plugin.textroom',
              error: e => report('error', {what: String(e)}),
              success: h => { handle = h; h.send({message: {request: 'setup'}}); },
              onmessage: (msg, jsep) => {
                if (msg.error) report('error', {what: msg.error});
                if (jsep) handle.createAnswer({jsep, tracks: [{type: 'data'}],
                  success: answer => { handle.send({message: {request: 'ack'}, jsep: answer}); watchDTLS(); },
                  error: e => report('error', {what: 'answer: ' + JSON.stringify(e)})});
              },
              ondataopen: () => {
                const opened = performance.now();
                report('open', {afterDTLS: dtlsUp === null ? null : (opened - dtlsUp) / 1000});
                handle.data({text: JSON.stringify({textroom: 'join', room: \(room), username, display: '\(display)', transaction: 'join'})});
              },
              ondata: data => {
                const m = JSON.parse(data);
                if (m.textroom === 'success' && m.transaction === 'join') report('chatJoined', {username, participants: m.participants});
                if (m.textroom === 'error') report('error', {what: m.error, code: m.error_code});
                if (m.textroom !== 'message') return;
                const bytes = new TextEncoder().encode(m.text);
                report('message', {from: m.from, text: bytes.length <= 300 ? m.text : null, bytes: bytes.length, fnv: fnv(bytes)});
                if (m.from === username) return;
                if (m.text === '@go-browser') {
                  for (let i = 1; i <= 5; i++) send('c-' + i);
                  send('ブラウザから: こんにちは 🌸🚀 👩🏽‍💻');
                } else if (m.text === '@burst-browser') {
                  for (let i = 0; i < 1000; i++) send('cb-' + i);
                } else if (m.text.startsWith('ping-')) {
                  send('pong-' + m.text.slice(5));
                }
              },
            })});
        }});
        </script></body></html>
        """
    }
}

/// The network namespace of `scripts/netns.sh`, when this process runs inside it: its one
/// ICE interface and address.
public enum NetworkNamespace {
    /// The interface ICE may use (`PARLEY_NETNS_INTERFACE`), nil outside the namespace.
    public static var interface: String? { ProcessInfo.processInfo.environment["PARLEY_NETNS_INTERFACE"] }
    /// Its address (`PARLEY_NETNS_ADDRESS`).
    public static var address: String? { ProcessInfo.processInfo.environment["PARLEY_NETNS_ADDRESS"] }
    /// Whether this process runs inside the namespace.
    public static var isInside: Bool { interface != nil }
}
