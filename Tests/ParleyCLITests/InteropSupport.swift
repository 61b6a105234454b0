// Helpers for the interop tests: run processes, find free UDP ports, read WAV and Y4M, and
// compare decoded media with its source (audio correlation after alignment, video PSNR).

import Foundation
#if canImport(Glibc)
import Glibc
import Testing
#endif

/// The package root, found from this file's path.
let interopPackageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The built `parley` binary (`swift build` puts it in .build/debug).
let interopParleyBinary = interopPackageRoot.appendingPathComponent(".build/debug/parley").path

/// The full path of `tool` on PATH, or nil.
func interopWhich(_ tool: String) -> String? {
    for dir in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let p = "\(dir)/\(tool)"
        if FileManager.default.isExecutableFile(atPath: p) { return p }
    }
    return nil
}

/// Whether a UDP socket can bind `port` on every address right now.
private func udpPortIsFree(_ port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = INADDR_ANY
    addr.sin_port = port.bigEndian
    return withUnsafePointer(to: &addr) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    } == 0
}

/// An even UDP port that, with the next one (RTCP: ffmpeg listens there too), was free a moment
/// ago. Drawn from 20000-31998, below Linux's ephemeral range (32768-60999), so the kernel does
/// not hand it to another test's unbound socket between this check and the receiver's bind (a
/// port read back from binding port 0 is an ephemeral one, and was, under parallel tests).
func interopFreeUDPPort() -> UInt16 {
    for _ in 0..<200 {
        let port = UInt16(20_000 + 2 * Int.random(in: 0..<6_000))
        if udpPortIsFree(port) && udpPortIsFree(port + 1) { return port }
    }
    preconditionFailure("no free UDP port pair in 20000-31999")
}

/// Starts a receiver with `launch(port)` on a fresh port and waits until it has bound it. A
/// receiver that exits first (its port was taken all the same: parallel tests bind ports too)
/// is started again on another port, up to `attempts` times; the last one's output is thrown.
func startUDPReceiver(attempts: Int = 3, _ launch: (UInt16) throws -> InteropChild) throws
    -> (child: InteropChild, port: UInt16) {
    var last = ""
    for _ in 0..<attempts {
        let port = interopFreeUDPPort()
        let child = try launch(port)
        if waitForUDPListener(port: port, unless: child) { return (child, port) }
        last = "\(child.name) never bound port \(port): \(child.output)"
        child.stop(SIGKILL)
    }
    throw InteropError(last)
}

/// Waits until some process has a UDP socket bound to `port` (read from /proc/net/udp), up to
/// `seconds`; returns whether one appeared (false at once when `child` exits first). Receivers
/// are ready once bound, whatever the load.
@discardableResult
func waitForUDPListener(port: UInt16, seconds: Double = 15, unless child: InteropChild? = nil) -> Bool {
    let needle = ":" + String(format: "%04X", port) + " "
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if let child, child.hasExited { return false }   // gave up (e.g. its bind failed)
        if let table = try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8),
           table.split(separator: "\n").dropFirst().contains(where: { line in
               line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map { ($0 + " ").hasSuffix(needle) } ?? false
           }) {
            return true
        }
        usleep(20_000)
    }
    return false
}

/// A child process with its output captured in a file.
///
/// Spawned with `posix_spawn` and an empty signal mask with default dispositions: the test
/// runner's threads block most signals and a child would inherit that (Foundation's Process
/// does), so the SIGINT/SIGTERM that make GStreamer and ffmpeg finish their files would stay
/// pending forever.
final class InteropChild {
    let pid: pid_t
    let name: String
    let outputURL: URL
    private var status: Int32?

    /// Starts `executable` in `directory`: standard input from `input` (a file descriptor, e.g.
    /// a pipe's read end) or /dev/null and output into `name`.log, or all three on `terminal`
    /// (a pseudo-terminal's device, see ``InteropTerminal``).
    init(_ executable: String, _ arguments: [String], in directory: URL, name: String, terminal: String? = nil,
         input: Int32? = nil) throws {
        self.name = name
        outputURL = directory.appendingPathComponent("\(name).log")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let terminal {
            posix_spawn_file_actions_addopen(&actions, 0, terminal, O_RDWR | O_NOCTTY, 0)
            posix_spawn_file_actions_adddup2(&actions, 0, 1)
        } else {
            if let input {
                posix_spawn_file_actions_adddup2(&actions, input, 0)
            } else {
                posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            }
            posix_spawn_file_actions_addopen(&actions, 1, outputURL.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attr, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for sig in [SIGINT, SIGTERM, SIGPIPE, SIGCHLD] { sigaddset(&defaults, sig) }
        posix_spawnattr_setsigdefault(&attr, &defaults)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        // /bin/sh changes into `directory` and execs the tool (glibc here lacks addchdir_np).
        let shellArgs = ["/bin/sh", "-c", "cd \"$0\" && exec \"$@\"", directory.path, executable] + arguments
        let argv: [UnsafeMutablePointer<CChar>?] = shellArgs.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let r = posix_spawn(&child, "/bin/sh", &actions, &attr, argv, environ)
        guard r == 0 else { throw InteropError("posix_spawn \(executable): \(String(cString: strerror(r)))") }
        pid = child
    }

    deinit { if status == nil { kill(pid, SIGKILL); _ = wait(seconds: 5) } }

    /// Waits up to `seconds` for exit; kills the process if it does not exit. Returns its exit
    /// status, 128 + signal when a signal ended it, or -1 when it had to be killed.
    @discardableResult
    func wait(seconds: Double) -> Int32 {
        if let status { return status }
        let deadline = Date().addingTimeInterval(seconds)
        var killed = false
        while true {
            var st: Int32 = 0
            let r = waitpid(pid, &st, WNOHANG)
            if r == pid {
                let code: Int32 = (st & 0x7F) == 0 ? (st >> 8) & 0xFF : 128 + (st & 0x7F)
                status = killed ? -1 : code
                return status!
            }
            if r < 0 { status = -1; return -1 }
            if !killed && Date() >= deadline {
                kill(pid, SIGKILL)
                killed = true
            }
            usleep(20_000)
        }
    }

    /// Whether the process exits within `seconds` (it is left running if not).
    func exits(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !hasExited {
            if Date() >= deadline { return false }
            usleep(20_000)
        }
        return true
    }

    /// Whether the process has exited (checked without waiting; -1 as its status when it
    /// cannot be waited for).
    var hasExited: Bool {
        if status != nil { return true }
        var st: Int32 = 0
        let r = waitpid(pid, &st, WNOHANG)
        if r == pid { status = (st & 0x7F) == 0 ? (st >> 8) & 0xFF : 128 + (st & 0x7F) }
        if r < 0 { status = -1 }
        return status != nil
    }

    /// Sends `signal` and waits for the exit.
    @discardableResult
    func stop(_ signal: Int32, seconds: Double = 10) -> Int32 {
        if status == nil { kill(pid, signal) }
        return wait(seconds: seconds)
    }

    var output: String { (try? String(contentsOf: outputURL, encoding: .utf8)) ?? "" }
}

/// A pseudo-terminal for a child that must see a terminal (a live grid, key presses): the
/// child opens ``device``; the test types with ``type(_:)`` and everything the child writes is
/// read (so it never blocks on a full terminal) into ``text``.
final class InteropTerminal: @unchecked Sendable {
    let device: String
    private let master: Int32
    private let lock = NSLock()
    private var received: [UInt8] = []
    private var closed = false

    init() throws {
        // posix_openpt, unlockpt and ptsname as Linux does them (Glibc's module leaves them
        // out): open the multiplexer, unlock the new terminal (TIOCSPTLCK), get its number
        // (TIOCGPTN).
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 else {
            throw InteropError("cannot open a pseudo-terminal: \(String(cString: strerror(errno)))")
        }
        device = "/dev/pts/\(number)"
        let fd = master
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                // EIO once every child's end is closed; EBADF after close().
                guard n > 0 else { return }
                lock.withLock { received += buffer[0..<n] }
            }
        }
    }

    deinit { close(master) }

    /// Types `keys` as a person at the terminal would.
    func type(_ keys: String) {
        _ = keys.utf8CString.withUnsafeBufferPointer { write(master, $0.baseAddress, $0.count - 1) }
    }

    /// What the child has written so far.
    var text: String { lock.withLock { String(decoding: received, as: UTF8.self) } }

    /// Whether the child writes `wanted` within `seconds`.
    func shows(_ wanted: String, within seconds: Double = 10) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !text.contains(wanted) {
            if Date() >= deadline { return false }
            usleep(20_000)
        }
        return true
    }
}

/// A fresh temporary directory for one test; the caller removes it when the test ends, after
/// the children writing into it have exited (`defer { try? FileManager.default.removeItem(at: dir) }`).
func interopDirectory(_ name: String) throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parley-interop-\(name)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

// MARK: Media files (test-side readers, independent of the code under test)

struct InteropWAV {
    var sampleRate: Int
    var channels: Int
    var samples: [Float]  // interleaved, full scale 1.0
}

/// Reads a 16-bit PCM WAV, tolerating streamed headers whose sizes were never patched.
func readInteropWAV(_ url: URL) throws -> InteropWAV {
    let b = [UInt8](try Data(contentsOf: url))
    func le16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
    func le32(_ i: Int) -> Int { le16(i) | le16(i + 2) << 16 }
    guard b.count >= 12, String(decoding: b[0..<4], as: UTF8.self) == "RIFF" else { throw InteropError("\(url.lastPathComponent): not a WAV") }
    var p = 12, rate = 0, channels = 0, bits = 0
    while p + 8 <= b.count {
        let id = String(decoding: b[p..<(p + 4)], as: UTF8.self)
        let size = le32(p + 4)
        if id == "fmt " { channels = le16(p + 10); rate = le32(p + 12); bits = le16(p + 22) }
        if id == "data" {
            guard bits == 16 else { throw InteropError("\(url.lastPathComponent): \(bits)-bit WAV") }
            let end = min(b.count, size > 0 && p + 8 + size <= b.count ? p + 8 + size : b.count)
            var s: [Float] = []
            s.reserveCapacity((end - p - 8) / 2)
            var i = p + 8
            while i + 1 < end { s.append(Float(Int16(truncatingIfNeeded: le16(i))) / 32768); i += 2 }
            return InteropWAV(sampleRate: rate, channels: channels, samples: s)
        }
        p += 8 + size + (size & 1)
    }
    throw InteropError("\(url.lastPathComponent): no data chunk")
}

/// Writes mono 16-bit PCM as WAV.
func writeInteropWAV(_ url: URL, sampleRate: Int, samples: [Float]) throws {
    var h: [UInt8] = Array("RIFF".utf8)
    func put32(_ v: Int) { for k in 0..<4 { h.append(UInt8(truncatingIfNeeded: v >> (8 * k))) } }
    func put16(_ v: Int) { for k in 0..<2 { h.append(UInt8(truncatingIfNeeded: v >> (8 * k))) } }
    put32(36 + samples.count * 2)
    h += Array("WAVEfmt ".utf8)
    put32(16); put16(1); put16(1); put32(sampleRate); put32(sampleRate * 2); put16(2); put16(16)
    h += Array("data".utf8)
    put32(samples.count * 2)
    for s in samples { put16(Int(Int16(max(-32768, min(32767, (s * 32768).rounded()))))) }
    try Data(h).write(to: url)
}

struct InteropY4M {
    var width: Int
    var height: Int
    var header: String
    var frames: [[UInt8]]  // packed I420 planes
}

func readInteropY4M(_ url: URL) throws -> InteropY4M {
    let b = [UInt8](try Data(contentsOf: url))
    guard let nl = b.firstIndex(of: 0x0A), b.starts(with: Array("YUV4MPEG2".utf8)) else {
        throw InteropError("\(url.lastPathComponent): not a Y4M file (\(b.count) bytes)")
    }
    let header = String(decoding: b[0..<nl], as: UTF8.self)
    var w = 0, h = 0
    for t in header.split(separator: " ") {
        if t.first == "W" { w = Int(t.dropFirst()) ?? 0 }
        if t.first == "H" { h = Int(t.dropFirst()) ?? 0 }
    }
    let size = w * h + 2 * ((w + 1) / 2) * ((h + 1) / 2)
    var frames: [[UInt8]] = []
    var p = nl + 1
    while p < b.count, let e = b[p...].firstIndex(of: 0x0A), e + 1 + size <= b.count {
        frames.append(Array(b[(e + 1)..<(e + 1 + size)]))
        p = e + 1 + size
    }
    return InteropY4M(width: w, height: h, header: header, frames: frames)
}

func writeInteropY4M(_ url: URL, _ video: InteropY4M) throws {
    var out = Data((video.header + "\n").utf8)
    for f in video.frames { out.append(Data("FRAME\n".utf8)); out.append(Data(f)) }
    try out.write(to: url)
}

struct InteropError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

// MARK: Comparison

/// The best normalised correlation of `decoded` against `source` over lags -maxLag...maxLag
/// (samples), found coarsely at 1/8 rate and refined at full rate; and the lag.
func interopAlignedCorrelation(source: [Float], decoded: [Float], maxLag: Int) -> (correlation: Double, lag: Int) {
    interopAlignedCorrelation(source: source, decoded: decoded, lags: -maxLag...maxLag)
}

/// The best normalised correlation of `decoded[i + lag]` against `source[i]` over `lags`
/// (samples; where the two overlap, at least 100 samples), found coarsely at 1/8 rate and
/// refined at full rate within `lags`; and the lag.
func interopAlignedCorrelation(source: [Float], decoded: [Float], lags: ClosedRange<Int>) -> (correlation: Double, lag: Int) {
    func correlation(_ a: UnsafeBufferPointer<Float>, _ b: UnsafeBufferPointer<Float>, lag: Int) -> Double {
        // b[i + lag] against a[i]
        var sab = 0.0, saa = 0.0, sbb = 0.0
        let start = max(0, -lag), end = min(a.count, b.count - lag)
        guard end - start > 100 else { return 0 }
        for i in start..<end {
            let x = Double(a[i]), y = Double(b[i + lag])
            sab += x * y; saa += x * x; sbb += y * y
        }
        return saa > 0 && sbb > 0 ? sab / (saa * sbb).squareRoot() : 0
    }
    func decimate(_ x: [Float]) -> [Float] {
        stride(from: 0, to: x.count - 7, by: 8).map { i in (0..<8).reduce(Float(0)) { $0 + x[i + $1] } / 8 }
    }
    let sa = decimate(source), sb = decimate(decoded)
    var best = (-2.0, lags.lowerBound)
    sa.withUnsafeBufferPointer { a in
        sb.withUnsafeBufferPointer { b in
            for lag in stride(from: lags.lowerBound >= 0 ? (lags.lowerBound + 7) / 8 : lags.lowerBound / 8, through: lags.upperBound / 8, by: 1) {
                let c = correlation(a, b, lag: lag)
                if c > best.0 { best = (c, lag * 8) }
            }
        }
    }
    var fine = (-2.0, best.1)
    source.withUnsafeBufferPointer { a in
        decoded.withUnsafeBufferPointer { b in
            for lag in max(lags.lowerBound, best.1 - 12)...min(lags.upperBound, best.1 + 12) {
                let c = correlation(a, b, lag: lag)
                if c > fine.0 { fine = (c, lag) }
            }
        }
    }
    return fine
}

/// PSNR of the luma planes of two frames of `width` x `height`, in dB (99 when identical).
func interopLumaPSNR(_ a: [UInt8], _ b: [UInt8], width: Int, height: Int) -> Double {
    var se = 0.0
    for i in 0..<(width * height) { let d = Double(a[i]) - Double(b[i]); se += d * d }
    guard se > 0 else { return 99 }
    return 10 * log10(255 * 255 / (se / Double(width * height)))
}

/// Mean luma PSNR of decoded frames against the source, at the frame offset (0...3 frames lost
/// at the start) that matches best; and how many frames were compared.
func interopMeanPSNR(source: InteropY4M, decoded: InteropY4M) -> (psnr: Double, frames: Int) {
    var best = (0.0, 0)
    for offset in 0...min(3, max(0, source.frames.count - 1)) {
        let n = min(decoded.frames.count, source.frames.count - offset)
        guard n > 0 else { continue }
        var sum = 0.0
        for i in 0..<n {
            sum += interopLumaPSNR(source.frames[i + offset], decoded.frames[i], width: source.width, height: source.height)
        }
        if sum / Double(n) > best.0 { best = (sum / Double(n), n) }
    }
    return best
}

/// How well a live receiver's recording follows its source: the median correlation over the
/// source's 1 s windows with speech, each aligned on its own (a live receiver time-stretches to
/// follow the network, so one lag does not fit a whole file), searched from 0.25 s before to
/// `drift` samples (default 0.75 s) after the lag over the whole file, with the whole window
/// inside the recording. Both are compared above 100 Hz (``interopHighPass(_:)``): a codec's
/// high-pass filter takes out what a source has below, a DC offset included, and a window
/// whose power is mostly that offset would otherwise measure the filter, not the receiver.
/// Returns the median, the number of windows, and the lag over the whole file.
func interopSpeechWindowCorrelation(source: [Float], heard: [Float], maxLag: Int = 16_000,
                                    drift: Int = 12_000) -> (median: Double, windows: Int, lag: Int) {
    let filteredSource = interopHighPass(source), filteredHeard = interopHighPass(heard)
    let (_, lag) = interopAlignedCorrelation(source: filteredSource, decoded: filteredHeard, maxLag: maxLag)
    var windows: [Double] = []
    for w in stride(from: 0, to: source.count - 16_000, by: 16_000) {
        guard source[w..<(w + 16_000)].map({ Double($0 * $0) }).reduce(0, +) / 16_000 > 1e-4 else { continue }
        let from = max(0, w + lag - 4_000), to = min(heard.count, w + lag + 16_000 + drift)
        guard to - from >= 16_000 else { continue }
        let part = Array(filteredSource[w..<(w + 16_000)])
        let lags = 0...(to - from - 16_000)
        windows.append(interopAlignedCorrelation(source: part, decoded: Array(filteredHeard[from..<to]), lags: lags).correlation)
    }
    guard !windows.isEmpty else { return (0, 0, lag) }
    return (windows.sorted()[windows.count / 2], windows.count, lag)
}

/// `x` (16 kHz) through a second-order Butterworth high-pass at 100 Hz.
func interopHighPass(_ x: [Float]) -> [Float] {
    let w = 2 * Double.pi * 100 / 16_000, alpha = sin(w) / 2.squareRoot(), c = cos(w), a0 = 1 + alpha
    let b0 = (1 + c) / 2 / a0
    return interopBiquad(x, b: (b0, -(1 + c) / a0, b0), a: (-2 * c / a0, (1 - alpha) / a0)).map { Float($0) }
}

/// `x` through a biquad (RBJ's coefficients, divided by a0), computed in Double.
func interopBiquad(_ x: [Float], b: (Double, Double, Double), a: (Double, Double)) -> [Double] {
    var y = [Double](repeating: 0, count: x.count)
    var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
    for i in x.indices {
        let v = Double(x[i]), o = b.0 * v + b.1 * x1 + b.2 * x2 - a.0 * y1 - a.1 * y2
        x2 = x1; x1 = v; y2 = y1; y1 = o
        y[i] = o
    }
    return y
}

/// The lines of a `--events` JSON-lines file, as objects.
func interopEvents(_ path: URL) throws -> [[String: Any]] {
    try String(contentsOf: path, encoding: .utf8).split(separator: "\n").map { line in
        try #require(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    }
}

/// Onsets (`start`) of `participant`'s talks in a `--events` file's lines.
func interopOnsets(_ all: [[String: Any]], of participant: String) -> [Double] {
    all.filter { $0["type"] as? String == "talking" && $0["participant"] as? String == participant }
        .compactMap { $0["start"] as? Double }
}

/// `participant`'s talks in a `--events` file's lines, `start` to `end` (a talk not ended
/// before the file does ends at `end`).
func interopTalks(_ all: [[String: Any]], of participant: String, until end: Double) -> [(start: Double, end: Double)] {
    var talks: [(start: Double, end: Double)] = []
    var open: Double?
    for e in all where e["participant"] as? String == participant {
        switch e["type"] as? String {
        case "talking": open = e["start"] as? Double
        case "silent":
            if let s = open, let t = e["end"] as? Double { talks.append((s, t)) }
            open = nil
        default: break
        }
    }
    if let s = open { talks.append((s, end)) }
    return talks
}

/// Frame F1 (10 ms frames) of talks `found` against `truth`, over `0..<seconds`.
func interopFrameF1(_ found: [(start: Double, end: Double)], _ truth: [(start: Double, end: Double)], seconds: Double) -> Double {
    let frames = Int(seconds * 100)
    func mask(_ talks: [(start: Double, end: Double)]) -> [Bool] {
        var m = [Bool](repeating: false, count: max(frames, 0))
        for t in talks {
            let a = max(0, Int((t.start * 100).rounded())), b = min(frames, Int((t.end * 100).rounded()))
            if a < b { for i in a..<b { m[i] = true } }
        }
        return m
    }
    let f = mask(found), r = mask(truth)
    let tp = zip(f, r).filter { $0 && $1 }.count, fp = zip(f, r).filter { $0 && !$1 }.count, fn = zip(f, r).filter { !$0 && $1 }.count
    return tp == 0 ? 0 : 2 * Double(tp) / Double(2 * tp + fp + fn)
}

/// The proportional set size (PSS, bytes, from /proc/PID/smaps_rollup) and CPU time (user +
/// system, seconds) of process `pid` alone, or with `group: true` of every process in its
/// process group (Chromium and its helpers).
func interopProcessUsage(_ pid: pid_t, group: Bool = false) -> (pss: Int, cpuSeconds: Double) {
    var pss = 0, ticks = 0
    let ids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    for id in ids {
        guard let number = Int32(id), let stat = try? String(contentsOfFile: "/proc/\(id)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { continue }
        // Fields after "(comm)": state, ppid, pgrp, ...; utime and stime are the 14th and 15th.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, group ? Int32(fields[2]) == pid : number == pid else { continue }
        ticks += (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
        if let rollup = try? String(contentsOfFile: "/proc/\(id)/smaps_rollup", encoding: .utf8),
           let line = rollup.split(separator: "\n").first(where: { $0.hasPrefix("Pss:") }),
           let kb = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) }) {
            pss += kb * 1024
        }
    }
    return (pss, Double(ticks) / Double(sysconf(Int32(_SC_CLK_TCK))))
}

/// How well a recording follows its source in its spectrum's shape over time, where its
/// waveform need not (a browser's jitter buffer stretches and squeezes time, its resampler
/// shifts phase): the median, over the source's 1 s windows with speech, of the correlation
/// between the log energies of 20 ms frames in five bands (100-500, 500-1000, 1000-2000,
/// 2000-4000, 4000-7000 Hz; RBJ band-pass biquads; each band about its mean over the window,
/// then each frame about its mean over the bands: the spectrum's shape as it moves, not its
/// tilt nor the loudness) of the source window and of the recording
/// from 0.25 s before to 0.75 s after the lag over the whole file (searched within ±`maxLag`
/// samples, at 16 kHz). Returns the median, the number of windows and the lag.
func interopBandEnergyWindowCorrelation(source: [Float], heard: [Float], maxLag: Int) -> (median: Double, windows: Int, lag: Int) {
    let frame = 320, step = 80
    // Prefix sums of each band's squared output: a frame's energy at any offset in O(1).
    func prefixes(_ x: [Float]) -> [[Double]] {
        [(100.0, 500.0), (500, 1000), (1000, 2000), (2000, 4000), (4000, 7000)].map { band in
            let f0 = (band.0 * band.1).squareRoot(), q = f0 / (band.1 - band.0)
            let w = 2 * Double.pi * f0 / 16_000, alpha = sin(w) / (2 * q), a0 = 1 + alpha
            let y = interopBiquad(x, b: (alpha / a0, 0, -alpha / a0), a: (-2 * cos(w) / a0, (1 - alpha) / a0))
            var sums = [Double](repeating: 0, count: x.count + 1)
            for i in y.indices { sums[i + 1] = sums[i] + y[i] * y[i] }
            return sums
        }
    }
    let ps = prefixes(source), ph = prefixes(heard)
    func vector(_ p: [[Double]], at start: Int, frames: Int) -> [Double]? {
        guard start >= 0, start + frames * frame < p[0].count else { return nil }
        var v: [Double] = []
        v.reserveCapacity(frames * p.count)
        for f in 0..<frames {
            for b in p.indices { v.append(log10(p[b][start + (f + 1) * frame] - p[b][start + f * frame] + 1e-9)) }
        }
        // Each band about its own mean (the spectrum's tilt, the same for any voice, does not
        // count), then each frame about its mean (nor does loudness: speech against pauses).
        for b in p.indices {
            let mean = stride(from: b, to: v.count, by: p.count).reduce(0) { $0 + v[$1] } / Double(frames)
            for i in stride(from: b, to: v.count, by: p.count) { v[i] -= mean }
        }
        for f in 0..<frames {
            let mean = v[(f * p.count)..<((f + 1) * p.count)].reduce(0, +) / Double(p.count)
            for i in (f * p.count)..<((f + 1) * p.count) { v[i] -= mean }
        }
        return v
    }
    func correlation(_ a: [Double], _ b: [Double]) -> Double {
        let ma = a.reduce(0, +) / Double(a.count), mb = b.reduce(0, +) / Double(b.count)
        var sab = 0.0, saa = 0.0, sbb = 0.0
        for i in a.indices { sab += (a[i] - ma) * (b[i] - mb); saa += (a[i] - ma) * (a[i] - ma); sbb += (b[i] - mb) * (b[i] - mb) }
        return sab / max(1e-12, (saa * sbb).squareRoot())
    }
    // The lag over the whole file, on the frame grid, then each window around it.
    let frames = (source.count - frame) / frame
    guard frames > 0, let whole = vector(ps, at: 0, frames: frames) else { return (0, 0, 0) }
    var lag = 0, best = -Double.infinity
    for d in stride(from: -maxLag, through: maxLag, by: frame) {
        let n = min(frames, (heard.count - max(0, d)) / frame - 1, (source.count - max(0, -d)) / frame - 1)
        guard n >= 50, let a = vector(ps, at: max(0, -d), frames: n), let b = vector(ph, at: max(0, d), frames: n) else { continue }
        let c = correlation(a, b)
        if c > best { (best, lag) = (c, d) }
    }
    _ = whole
    var windows: [Double] = []
    for w in stride(from: 0, to: source.count - 16_000, by: 16_000) {
        let part = source[w..<(w + 16_000)]
        guard part.map({ Double($0 * $0) }).reduce(0, +) / 16_000 > 1e-4, let a = vector(ps, at: w, frames: 50) else { continue }
        var top = -Double.infinity
        for d in stride(from: -4_000, through: 12_000, by: step) {
            if let b = vector(ph, at: w + lag + d, frames: 50) { top = max(top, correlation(a, b)) }
        }
        if top > -Double.infinity { windows.append(top) }
    }
    guard !windows.isEmpty else { return (0, 0, lag) }
    return (windows.sorted()[windows.count / 2], windows.count, lag)
}
