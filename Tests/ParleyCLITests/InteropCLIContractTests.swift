// The `parley send` / `parley receive` command-line contract without external tools: usage
// errors exit 2, bad files exit 1, and malformed datagrams are counted and dropped while the
// valid stream is written.

import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

private let haveParley = FileManager.default.isExecutableFile(atPath: interopParleyBinary)

/// Runs `parley` with `args` to completion; returns the exit status and the output.
private func runParley(_ args: [String], in dir: URL) throws -> (Int32, String) {
    let child = try InteropChild(interopParleyBinary, args, in: dir, name: "parley-\(UUID().uuidString.prefix(8))")
    let status = child.wait(seconds: 30)
    return (status, child.output)
}

/// Sends one datagram to 127.0.0.1:`port`.
private func sendDatagram(_ bytes: [UInt8], port: UInt16) {
    let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(fd) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    addr.sin_port = port.bigEndian
    _ = withUnsafePointer(to: &addr) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
}

@Suite(.serialized, .tags(.realTime), .enabled(if: haveParley, "the parley binary is not built at .build/debug/parley (run 'swift build' first)"))
struct SendReceiveCommandContract {
    @Test func usageErrorsExitWithStatus2() throws {
        let dir = try interopDirectory("usage")
        defer { try? FileManager.default.removeItem(at: dir) }
        for args in [["send"], ["send", "--to", "127.0.0.1", "x.wav"], ["send", "--to", "127.0.0.1:5004"],
                     ["send", "--to", "127.0.0.1:5004", "--payload-type", "200", "x.wav"],
                     ["send", "--to", "127.0.0.1:5004", "--ssrc", "zz", "x.wav"],
                     ["receive", "--codec", "opus", "--output", "a.wav"],
                     ["receive", "--port", "0", "--codec", "opus", "--output", "a.wav"],
                     ["receive", "--port", "5004", "--codec", "h264", "--output", "a.wav"],
                     ["receive", "--port", "5004", "--codec", "opus", "--output", "a.ivf"],
                     ["receive", "--port", "5004", "--codec", "vp8", "--output", "a.wav"],
                     ["receive", "--port", "5004", "--codec", "opus", "--output", "a.wav", "--idle-timeout", "-1"]] {
            let (status, output) = try runParley(args, in: dir)
            #expect(status == 2, "\(args): \(output)")
        }
        let (status, output) = try runParley(["send", "--help"], in: dir)
        #expect(status == 0 && output.contains("--to HOST:PORT"))
    }

    @Test func unreadableOrWrongFilesExitWithStatus1() throws {
        let dir = try interopDirectory("bad-files")
        defer { try? FileManager.default.removeItem(at: dir) }
        try "not media".write(to: dir.appendingPathComponent("notes.txt"), atomically: false, encoding: .utf8)
        try Data("RIFF\u{0}\u{0}\u{0}\u{0}WAVE".utf8).write(to: dir.appendingPathComponent("empty.wav"))
        for file in ["missing.wav", "notes.txt", "empty.wav"] {
            let (status, output) = try runParley(["send", "--to", "127.0.0.1:9", file], in: dir)
            #expect(status == 1, "\(file): \(output)")
            #expect(output.contains("parley send:"), "\(file): \(output)")
        }
    }

    /// Every kind of malformed packet (truncated header, bad version, padding longer than the
    /// packet, CSRCs and extension past the end), interleaved with a real stream: each is
    /// counted as malformed and dropped; the stream is received whole.
    @Test func malformedPacketsAreCountedAndDroppedWhileTheStreamIsWritten() throws {
        let dir = try interopDirectory("malformed")
        defer { try? FileManager.default.removeItem(at: dir) }
        let tone = (0..<19_200).map { Float(0.3 * sin(2 * Double.pi * 440 * Double($0) / 48_000)) }  // 0.4 s
        try writeInteropWAV(dir.appendingPathComponent("tone.wav"), sampleRate: 48_000, samples: tone)
        let (receiver, port) = try startUDPReceiver { port in
            try InteropChild(interopParleyBinary, ["receive", "--port", "\(port)", "--codec", "opus",
                                                   "--output", "out.wav", "--idle-timeout", "2"],
                             in: dir, name: "receive")
        }
        let malformed: [[UInt8]] = [
            [0x80, 0x6F, 0x00],                                                    // truncated header
            [0x40, 0x6F, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xF8],                       // version 1
            [0xA0, 0x6F, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xF8, 0x09],                 // padding 9 > 2
            [0x83, 0x6F, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xAA, 0xAA],                 // 3 CSRCs, 2 bytes
            [0x90, 0x6F, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0xBE, 0xDE, 0x00, 0x09],     // extension past end
        ]
        for _ in 0..<10 { for m in malformed { sendDatagram(m, port: port) } }
        let (status, output) = try runParley(["send", "--to", "127.0.0.1:\(port)", "--ssrc", "0x1234", "tone.wav"], in: dir)
        #expect(status == 0, "\(output)")
        #expect(receiver.wait(seconds: 10) == 0, "\(receiver.output)")
        var stats: [String: String] = [:]
        for line in receiver.output.split(separator: "\n") {
            let kv = line.split(separator: ":", maxSplits: 1)
            if kv.count == 2 { stats[String(kv[0])] = kv[1].trimmingCharacters(in: .whitespaces) }
        }
        #expect(stats["malformed"] == "50", "\(receiver.output)")
        #expect(stats["packets"] == "20" && stats["lost"] == "0" && stats["ssrc"] == "0x1234", "\(receiver.output)")
        let wav = try readInteropWAV(dir.appendingPathComponent("out.wav"))
        #expect(wav.samples.count == 19_200, "decoded \(wav.samples.count) samples")
        let (c, _) = interopAlignedCorrelation(source: tone, decoded: wav.samples, maxLag: 2_000)
        #expect(c > 0.9, "correlation \(c)")
    }
}
