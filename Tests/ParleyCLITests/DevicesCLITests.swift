import Foundation
import Testing

/// The `parley` binary built next to these tests (`swift build --build-tests` builds it).
private let devicesParleyBinary: URL? = {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    for config in ["debug", "release"] {
        let url = root.appendingPathComponent(".build/\(config)/parley")
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    return nil
}()

private struct DevicesMissingBinary: Error, CustomStringConvertible {
    var description: String { "parley binary not built: run 'swift build' first" }
}

private struct DevicesRun {
    var status: Int32
    var stdout: String
    var stderr: String
}

private func runDevicesCLI(_ args: [String], environment: [String: String] = [:]) throws -> DevicesRun {
    let p = Process()
    guard let binary = devicesParleyBinary else { throw DevicesMissingBinary() }
    p.executableURL = binary
    p.arguments = args
    var env = ProcessInfo.processInfo.environment
    for (k, v) in environment { env[k] = v }
    p.environment = env
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return DevicesRun(status: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
               stderr: String(decoding: e, as: UTF8.self))
}

/// A temp directory with a raw input and an ALSA configuration defining `testpcm` (capture
/// from the raw file) and `testout` (playback into a raw file). The test removes it with
/// `defer { fx.remove() }`; an init that throws removes it itself.
private struct DevicesALSAFixture {
    let dir: URL
    let input: [Int16]
    var conf: String { dir.appendingPathComponent("test.conf").path }
    var raw: String { dir.appendingPathComponent("in.raw").path }
    var out: String { dir.appendingPathComponent("out.raw").path }

    init(samples: Int) throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("parley-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var x: UInt32 = 0x9E37_79B9
        input = (0..<samples).map { _ in x ^= x << 13; x ^= x >> 17; x ^= x << 5; return Int16(truncatingIfNeeded: x) }
        let text = """
        pcm.testpcm { type file; slave.pcm null; file "/dev/null"; infile "\(raw)"; format "raw" }
        pcm.testout { type file; slave.pcm null; file "\(out)"; format "raw" }
        """
        do {
            try input.withUnsafeBytes { Data($0) }.write(to: URL(fileURLWithPath: raw))
            try text.write(toFile: conf, atomically: false, encoding: .utf8)
        } catch {
            try? FileManager.default.removeItem(at: dir)
            throw error
        }
    }
    func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
    func remove() { try? FileManager.default.removeItem(at: dir) }
}

/// The samples of a 16-bit PCM WAV (parsed here, independently of the CLI's writer).
private func wavSamples(_ path: String) throws -> (rate: Int, channels: Int, samples: [Int16]) {
    let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    func u16(_ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 }
    func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
    #expect(String(decoding: b[0..<4], as: UTF8.self) == "RIFF" && String(decoding: b[8..<12], as: UTF8.self) == "WAVE")
    #expect(u32(4) == b.count - 8)
    var o = 12, rate = 0, channels = 0
    while o + 8 <= b.count {
        let id = String(decoding: b[o..<o + 4], as: UTF8.self), size = u32(o + 4)
        if id == "fmt " { channels = u16(o + 10); rate = u32(o + 12); #expect(u16(o + 8) == 1 && u16(o + 22) == 16) }
        if id == "data" {
            let samples = b[(o + 8)..<(o + 8 + size)].withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
            return (rate, channels, samples)
        }
        o += 8 + size
    }
    Issue.record("no data chunk in \(path)")
    return (0, 0, [])
}

@Suite(.tags(.realTime), .enabled(if: devicesParleyBinary != nil, "parley binary not built (run 'swift build'); CLI tests skipped"))
struct DevicesCLITests {
    @Test func devicesListsWhatIsPresentAndSaysNoneFoundOtherwise() throws {
        let r = try runDevicesCLI(["devices"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("ALSA PCMs:"))
        #expect(r.stdout.contains("null"))  // alsa-lib's own virtual PCM is always there
        #expect(r.stdout.contains("V4L2 video nodes:"))
        if !FileManager.default.fileExists(atPath: "/dev/video0") {
            #expect(r.stdout.contains("none found (no /dev/video* nodes"))
        }
    }

    @Test func recordFromAFilePCMWritesAWAVEqualToTheRawInput() throws {
        let fx = try DevicesALSAFixture(samples: 24_000)  // 1.5 s at 16 kHz
        defer { fx.remove() }
        let wav = fx.path("rec.wav")
        let r = try runDevicesCLI(["record", "--audio", "testpcm", "--rate", "16000", "--channels", "1",
                            "--seconds", "1.5", "--output", wav],
                           environment: ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:\(fx.conf)"])
        #expect(r.status == 0, "\(r.stderr)")
        let got = try wavSamples(wav)
        #expect(got.rate == 16_000 && got.channels == 1)
        #expect(got.samples.count == fx.input.count)
        #expect(got.samples == fx.input)
        #expect(r.stderr.contains("overruns 0"))
        #expect(!r.stderr.contains("\u{1B}["))  // no meter escape codes when stderr is not a terminal
    }

    @Test func recordWithAnExplicitConfigurationKeepsStereoInterleaving() throws {
        let fx = try DevicesALSAFixture(samples: 4_800 * 2)  // 0.1 s stereo at 48 kHz
        defer { fx.remove() }
        let wav = fx.path("stereo.wav")
        let r = try runDevicesCLI(["record", "--audio", "testpcm", "--alsa-config", fx.conf, "--rate", "48000",
                            "--channels", "2", "--seconds", "0.1", "--output", wav])
        #expect(r.status == 0, "\(r.stderr)")
        let got = try wavSamples(wav)
        #expect(got.channels == 2 && got.rate == 48_000)
        #expect(got.samples == fx.input)
    }

    @Test func playToAFilePCMWritesExactlyTheWAVSamples() throws {
        let fx = try DevicesALSAFixture(samples: 8_000)
        defer { fx.remove() }
        let wav = fx.path("rec.wav")
        let env = ["ALSA_CONFIG_PATH": "/usr/share/alsa/alsa.conf:\(fx.conf)"]
        let rec = try runDevicesCLI(["record", "--audio", "testpcm", "--rate", "8000", "--seconds", "1", "--output", wav],
                             environment: env)
        #expect(rec.status == 0, "\(rec.stderr)")
        let play = try runDevicesCLI(["play", wav, "--audio", "testout"], environment: env)
        #expect(play.status == 0, "\(play.stderr)")
        let played = try Data(contentsOf: URL(fileURLWithPath: fx.out)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        #expect(played == fx.input)
    }

    @Test func missingCameraExitsNonZeroNamingTheDeviceAndWhatToCheck() throws {
        let node = FileManager.default.fileExists(atPath: "/dev/video0") ? "/dev/video-parley-absent" : "/dev/video0"
        let output = FileManager.default.temporaryDirectory.path + "/parley-\(UUID().uuidString).ivf"
        defer { try? FileManager.default.removeItem(atPath: output) }  // in case the CLI created it
        let r = try runDevicesCLI(["record", "--video", node, "--size", "640x480", "--fps", "30", "--seconds", "1",
                            "--output", output])
        #expect(r.status == 1)
        #expect(r.stderr.contains(node))
        #expect(r.stderr.contains("check that the camera is connected"))
    }

    @Test func unknownPCMExitsNonZeroNamingThePCM() throws {
        let output = FileManager.default.temporaryDirectory.path + "/x-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: output) }  // in case the CLI created it
        let r = try runDevicesCLI(["record", "--audio", "no_such_pcm_parley", "--seconds", "1", "--output", output])
        #expect(r.status == 1)
        #expect(r.stderr.contains("'no_such_pcm_parley'"))
        #expect(r.stderr.contains("check the PCM name"))
    }

    @Test func patternVideoRecordsVP8IVFAndY4M() throws {
        let fx = try DevicesALSAFixture(samples: 2)
        defer { fx.remove() }
        let ivf = fx.path("p.ivf"), y4m = fx.path("p.y4m")
        let a = try runDevicesCLI(["record", "--video", "pattern", "--size", "64x48", "--fps", "50", "--seconds", "0.2", "--output", ivf])
        #expect(a.status == 0, "\(a.stderr)")
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ivf)))
        #expect(String(decoding: b[0..<4], as: UTF8.self) == "DKIF" && String(decoding: b[8..<12], as: UTF8.self) == "VP80")
        #expect(Int(b[12]) | Int(b[13]) << 8 == 64)
        #expect(Int(b[24]) == 10)  // frame count
        #expect(b[44] & 1 == 0)     // first frame is a VP8 keyframe (P bit clear)
        let c = try runDevicesCLI(["record", "--video", "pattern", "--size", "64x48", "--fps", "50", "--seconds", "0.1", "--output", y4m])
        #expect(c.status == 0, "\(c.stderr)")
        let y = try Data(contentsOf: URL(fileURLWithPath: y4m))
        let header = "YUV4MPEG2 W64 H48 F50:1 Ip A1:1 C420jpeg\n"
        #expect(y.starts(with: Array(header.utf8)))
        #expect(y.count == header.utf8.count + 5 * (6 + 64 * 48 * 3 / 2))
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "needs script(1) for a pty"))
    func recordShowsALevelMeterAndTalkingStateOnATerminal() throws {
        let fx = try DevicesALSAFixture(samples: 16_000)
        defer { fx.remove() }
        let wav = fx.path("tty.wav")
        // script(1) runs the command on a pseudo-terminal, so stderr is a tty.
        let command = "\(devicesParleyBinary!.path) record --audio testpcm --alsa-config \(fx.conf) --rate 16000 "
            + "--seconds 1 --output \(wav)"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        p.arguments = ["-qec", command, "/dev/null"]
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        p.standardInput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "\(text)")
        #expect(text.contains("dBFS"))
        #expect(text.contains("\r["))
        #expect(text.contains("talking") || text.contains("silent"))
        #expect(text.contains("1.00/1.00 s"))
    }

    @Test func aY4MFilePlaysTheCameraAtItsOwnSizeAndRate() throws {
        let fx = try DevicesALSAFixture(samples: 2)
        defer { fx.remove() }
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("SampleMedia/video/sample.y4m").path
        let ivf = fx.path("cam.ivf")
        let r = try runDevicesCLI(["record", "--video", sample, "--seconds", "0.2", "--output", ivf])
        #expect(r.status == 0, "\(r.stderr)")
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: ivf)))
        #expect(Int(b[12]) | Int(b[13]) << 8 == 320 && Int(b[14]) | Int(b[15]) << 8 == 240)
        #expect(Int(b[24]) == 6)  // 0.2 s at the file's 30 fps
    }

    @Test func usageErrorsExitWithStatusTwo() throws {
        #expect(try runDevicesCLI(["record", "--audio", "x", "--output", "a.wav"]).status == 2)         // no --seconds
        #expect(try runDevicesCLI(["record", "--audio", "x", "--seconds", "1", "--output", "a.mp3"]).status == 2)
        #expect(try runDevicesCLI(["record", "--video", "pattern", "--size", "7x7", "--seconds", "1", "--output", "a.ivf"]).status == 2)
        #expect(try runDevicesCLI(["play"]).status == 2)
        let help = try runDevicesCLI(["record", "--help"])
        #expect(help.status == 0 && help.stdout.contains("--audio PCM"))
    }

    @Test func playRejectsAFileThatIsNotAWAV() throws {
        let fx = try DevicesALSAFixture(samples: 100)
        defer { fx.remove() }
        let r = try runDevicesCLI(["play", fx.raw, "--audio", "null"])
        #expect(r.status == 1)
        #expect(r.stderr.contains(fx.raw))
    }
}
