import Foundation
import Testing

/// The package root, found from this file.
let detectPackageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
let detectSampleMedia = detectPackageRoot.appendingPathComponent("SampleMedia")
/// Whether SampleMedia's speech and conversation files are present.
let detectHasSampleMedia = FileManager.default.fileExists(atPath: detectSampleMedia.appendingPathComponent("speech/speech-16k.wav").path)
    && FileManager.default.fileExists(atPath: detectSampleMedia.appendingPathComponent("conversation-truth.csv").path)

/// The `parley` executable built next to the test binary.
let detectParleyExecutable: URL = {
    let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    var dir = exe.deletingLastPathComponent()
    // The test binary is `.../debug/ParleyPackageTests.xctest` (a file or a bundle directory).
    while !FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("parley").path),
          dir.path != "/" {
        dir = dir.deletingLastPathComponent()
    }
    return dir.appendingPathComponent("parley")
}()

struct DetectRunResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// What a run of `parley` reads on standard input.
enum DetectStandardInput {
    /// These bytes, through a pipe.
    case bytes(Data)
    /// This file, opened for reading (a regular file, as with `< file`).
    case file(URL)
}

/// Runs `parley ARGS` and collects its output and exit status.
func runDetectCLI(_ args: [String], wrappedBy wrapper: [String] = [],
                  standardInput: DetectStandardInput? = nil) throws -> DetectRunResult {
    let p = Process()
    if wrapper.isEmpty {
        p.executableURL = detectParleyExecutable
        p.arguments = args
    } else {
        p.executableURL = URL(fileURLWithPath: wrapper[0])
        p.arguments = Array(wrapper.dropFirst()) + [detectParleyExecutable.path] + args
    }
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    var feeder: Thread?
    switch standardInput {
    case let .bytes(data):
        let pipe = Pipe()
        p.standardInput = pipe
        feeder = Thread {
            // A process that stops reading early must not kill the tests with SIGPIPE: blocked
            // on this thread, the write fails with EPIPE instead.
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &set, nil)
            try? pipe.fileHandleForWriting.write(contentsOf: data)
            try? pipe.fileHandleForWriting.close()
        }
    case let .file(url):
        p.standardInput = try FileHandle(forReadingFrom: url)
    case nil:
        break
    }
    try p.run()
    feeder?.start()
    // Read both pipes while the process runs so a large output cannot block it.
    let errData = DetectLockedData()
    let errThread = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
    errThread.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    while errData.get() == nil { usleep(1000) }
    return DetectRunResult(status: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                     stderr: String(decoding: errData.get()!, as: UTF8.self))
}

final class DetectLockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ d: Data) { lock.lock(); data = d; lock.unlock() }
    func get() -> Data? { lock.lock(); defer { lock.unlock() }; return data }
}

/// A fresh temporary directory for one test; the caller removes it when the test ends
/// (`defer { try? FileManager.default.removeItem(at: dir) }`).
func detectTemporaryDirectory() throws -> URL {
    let d = FileManager.default.temporaryDirectory.appendingPathComponent("parley-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
    return d
}

/// A WAV file's bytes: 16-bit PCM or 32-bit float, interleaved `samples` (test fixtures only).
func detectWAVBytes(_ samples: [Float], sampleRate: Int, channels: Int = 1, float: Bool = false) -> Data {
    var d = Data()
    func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
    func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
    let bytesPerSample = float ? 4 : 2
    let dataBytes = samples.count * bytesPerSample
    d.append(contentsOf: Array("RIFF".utf8)); u32(UInt32(36 + dataBytes + (float ? 12 : 0)))
    d.append(contentsOf: Array("WAVE".utf8))
    d.append(contentsOf: Array("fmt ".utf8)); u32(float ? 18 : 16); u16(float ? 3 : 1); u16(UInt16(channels))
    u32(UInt32(sampleRate)); u32(UInt32(sampleRate * channels * bytesPerSample))
    u16(UInt16(channels * bytesPerSample)); u16(UInt16(bytesPerSample * 8))
    if float {
        u16(0)
        d.append(contentsOf: Array("fact".utf8)); u32(4); u32(UInt32(samples.count / channels))
    }
    d.append(contentsOf: Array("data".utf8)); u32(UInt32(dataBytes))
    for s in samples {
        if float {
            u32(s.bitPattern)
        } else {
            let v = Int16(max(-32768, min(32767, (s * 32768).rounded())))
            u16(UInt16(bitPattern: v))
        }
    }
    return d
}

/// The 16-bit mono samples of a canonical WAV file written by SampleMedia's tools (test
/// fixtures only: finds the `data` chunk and reads it).
func detectReadPCM16(_ url: URL) throws -> (samples: [Float], sampleRate: Int) {
    let d = try Data(contentsOf: url)
    func u32(_ o: Int) -> Int { Int(d[o]) | Int(d[o + 1]) << 8 | Int(d[o + 2]) << 16 | Int(d[o + 3]) << 24 }
    var o = 12
    var rate = 0
    while o + 8 <= d.count {
        let id = String(decoding: d[o..<o + 4], as: UTF8.self)
        let size = u32(o + 4)
        if id == "fmt " { rate = u32(o + 12) }
        if id == "data" {
            var out: [Float] = []
            out.reserveCapacity(size / 2)
            var i = o + 8
            while i + 1 < min(d.count, o + 8 + size) {
                out.append(Float(Int16(bitPattern: UInt16(d[i]) | UInt16(d[i + 1]) << 8)) / 32768)
                i += 2
            }
            return (out, rate)
        }
        o += 8 + size + (size & 1)
    }
    throw CocoaError(.fileReadCorruptFile)
}

/// The participant WAVs of SampleMedia's conversation, sorted.
func detectConversationFiles() throws -> [URL] {
    let dir = detectSampleMedia.appendingPathComponent("conversation")
    return try FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)
        .filter { $0.pathExtension == "wav" }.sorted { $0.path < $1.path }
}

/// Parses `file,participant,start_s,end_s` CSV (no quoting needed for these names).
func detectParseSegmentsCSV(_ text: String) -> [(file: String, participant: String, start: Double, end: Double)]? {
    var lines = text.split(separator: "\n").map(String.init)
    guard lines.first == "file,participant,start_s,end_s" else { return nil }
    lines.removeFirst()
    var out: [(String, String, Double, Double)] = []
    for l in lines {
        let f = l.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard f.count == 4, let s = Double(f[2]), let e = Double(f[3]) else { return nil }
        out.append((f[0], f[1], s, e))
    }
    return out
}

/// Runs `sox -D -R ARGS` (no dither, repeatable: the same bytes on every run); records an
/// issue and throws when it fails.
func detectSox(_ args: [String]) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
    p.arguments = ["-D", "-R"] + args
    let err = Pipe()
    p.standardError = err
    try p.run()
    let message = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    if p.terminationStatus != 0 {
        Issue.record("sox \(args.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))")
        throw CocoaError(.fileWriteUnknown)
    }
}


/// The name of a result in `--output-dir` as the help documents it: the path with %, / and
/// control bytes %-encoded and a leading dot as %2E, `~`, the FNV-1a 64-bit hash in 16 hex
/// digits, `.` extension.
func detectDocumentedResultName(_ path: String, ext: String) -> String {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    var encoded = ""
    for b in path.utf8 {
        h = (h ^ UInt64(b)) &* 0x100_0000_01b3
        if b == 0x2F || b == 0x25 || b < 0x20 || b == 0x7F {
            encoded += "%" + String(format: "%02X", b)
        } else {
            encoded += String(decoding: [b], as: UTF8.self)
        }
    }
    if encoded.hasPrefix(".") { encoded = "%2E" + encoded.dropFirst() }
    return encoded + "~" + String(format: "%016llx", h) + "." + ext
}

/// The shard (1...n) `--shard K/n` puts `path` in: its FNV-1a 64-bit hash modulo n, plus 1.
func detectFNVShard(_ path: String, of n: UInt64) -> Int {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in path.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
    return Int(h % n) + 1
}
