// SRTP and SDP interop of `parley send` / `parley receive` with ffmpeg (srtp:// and SDP files
// with a=crypto: lines, both ways), and SRTP failures at the command line: a wrong key, a
// generated key nobody can learn, the SDP file's mode. Over UDP on 127.0.0.1.

import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

private let ffmpeg = interopWhich("ffmpeg")
private let haveParley = FileManager.default.isExecutableFile(atPath: interopParleyBinary)
private let parleyMissing: Comment = "the parley binary is not built at .build/debug/parley (run 'swift build' first)"

/// 2 s of SampleMedia speech at 48 kHz mono (from 0.5 s in), and a 40 ms excerpt of it.
private func audioSources(in dir: URL) throws -> (url: URL, samples: [Float], short: URL) {
    let wav = try readInteropWAV(interopPackageRoot.appendingPathComponent("SampleMedia/speech/speech-48k.wav"))
    let excerpt = Array(wav.samples[24_000..<120_000])
    let url = dir.appendingPathComponent("source.wav"), short = dir.appendingPathComponent("short.wav")
    try writeInteropWAV(url, sampleRate: 48_000, samples: excerpt)
    try writeInteropWAV(short, sampleRate: 48_000, samples: Array(excerpt[0..<1_920]))
    return (url, excerpt, short)
}

/// A random 30-byte SRTP key and salt in base64 (as `--srtp-key` and ffmpeg's -srtp_out_params take it).
private func randomKey() -> String {
    Data((0..<30).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
}

private func statistics(_ output: String) -> [String: String] {
    var d: [String: String] = [:]
    for line in output.split(separator: "\n") {
        let parts = line.split(separator: ":", maxSplits: 1)
        if parts.count == 2 { d[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
    }
    return d
}

private func expectSpeech(_ url: URL, _ source: [Float], _ who: String, minimumShare: Double = 0.8) throws {
    let decoded = try readInteropWAV(url)
    #expect(Double(decoded.samples.count) >= Double(source.count) * minimumShare, "\(who): \(decoded.samples.count) samples")
    let (c, lag) = interopAlignedCorrelation(source: source, decoded: decoded.samples, maxLag: 24_000)
    #expect(c >= 0.8, "\(who): correlation \(c) at lag \(lag)")
    print("srtp interop \(who): \(decoded.samples.count) samples, correlation \(String(format: "%.4f", c)) at lag \(lag)")
}

@Suite(.serialized, .tags(.realTime)) struct SRTPInteropTests {
    /// `parley send --srtp --sdp` writes an SDP that ffmpeg opens as it is and decrypts.
    @Test(.enabled(if: ffmpeg != nil, "ffmpeg not installed"), .enabled(if: haveParley, parleyMissing))
    func parleySendsSRTPToFFmpegThroughItsSDP() throws {
        let dir = try interopDirectory("srtp-send-ffmpeg")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (src, samples, short) = try audioSources(in: dir)
        let key = randomKey()
        let (receiver, port) = try startUDPReceiver { port in
            // The SDP comes from parley itself: a 40 ms send with the same key, port and SSRC
            // writes it (its two packets go nowhere), then ffmpeg opens it and the real send runs.
            let first = try InteropChild(interopParleyBinary, ["send", "--to", "127.0.0.1:\(port)", "--ssrc", "0x5EC0", "--srtp-key", key,
                                                               "--sdp", "stream.sdp", short.path], in: dir, name: "parley-sdp")
            #expect(first.wait(seconds: 20) == 0, "parley send: \(first.output)")
            return try InteropChild(ffmpeg!, ["-hide_banner", "-loglevel", "warning", "-y", "-protocol_whitelist", "file,udp,rtp,srtp",
                                              "-i", "stream.sdp", "-t", "1.9", "-ac", "1", "-ar", "48000", "ff.wav"],
                                    in: dir, name: "ffmpeg")
        }
        let sdpPath = dir.appendingPathComponent("stream.sdp").path
        let sdp = try String(contentsOfFile: sdpPath, encoding: .utf8)
        #expect(sdp.contains("m=audio \(port) RTP/SAVP 111\r\n"))
        #expect(sdp.contains("a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\(key)\r\n"))
        let mode = (try FileManager.default.attributesOfItem(atPath: sdpPath)[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600, "the SDP holds the key: mode \(String(mode ?? 0, radix: 8))")
        usleep(300_000)
        let send = try InteropChild(interopParleyBinary, ["send", "--to", "127.0.0.1:\(port)", "--ssrc", "0x5EC0", "--srtp-key", key,
                                                          src.path], in: dir, name: "parley-send")
        #expect(send.wait(seconds: 30) == 0, "parley send: \(send.output)")
        #expect(!send.output.contains(key), "parley send printed the key")
        if !receiver.exits(within: 5) { receiver.stop(SIGTERM, seconds: 15) }
        try expectSpeech(dir.appendingPathComponent("ff.wav"), samples, "parley send --srtp -> ffmpeg")
    }

    /// ffmpeg's srtp:// output and its -sdp_file (with the a=crypto: line) drive `parley receive --sdp`.
    @Test(.enabled(if: ffmpeg != nil, "ffmpeg not installed"), .enabled(if: haveParley, parleyMissing))
    func ffmpegSendsSRTPToParleyReceiveThroughItsSDP() throws {
        let dir = try interopDirectory("srtp-ffmpeg-receive")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (src, samples, short) = try audioSources(in: dir)
        let key = randomKey()
        func ffmpegSend(_ file: URL, port: UInt16, name: String) throws -> InteropChild {
            try InteropChild(ffmpeg!, ["-hide_banner", "-loglevel", "error", "-re", "-i", file.path, "-c:a", "libopus", "-b:a", "48k",
                                       "-f", "rtp", "-payload_type", "111", "-srtp_out_suite", "AES_CM_128_HMAC_SHA1_80",
                                       "-srtp_out_params", key, "-sdp_file", "ffmpeg.sdp", "srtp://127.0.0.1:\(port)"],
                             in: dir, name: name)
        }
        let (receiver, port) = try startUDPReceiver { port in
            let first = try ffmpegSend(short, port: port, name: "ffmpeg-sdp")
            #expect(first.wait(seconds: 20) == 0, "ffmpeg: \(first.output)")
            return try InteropChild(interopParleyBinary, ["receive", "--sdp", "ffmpeg.sdp", "--output", "received.wav",
                                                          "--idle-timeout", "3"], in: dir, name: "parley-receive")
        }
        let sdp = try String(contentsOfFile: dir.appendingPathComponent("ffmpeg.sdp").path, encoding: .utf8)
        #expect(sdp.contains("a=crypto:"), "ffmpeg wrote: \(sdp)")
        let send = try ffmpegSend(src, port: port, name: "ffmpeg")
        #expect(send.wait(seconds: 30) == 0, "ffmpeg: \(send.output)")
        #expect(receiver.wait(seconds: 10) == 0, "parley receive: \(receiver.output)")
        let stats = statistics(receiver.output)
        #expect(Int(stats["packets"] ?? "0") ?? 0 >= 90, "\(receiver.output)")
        #expect(stats["srtp_auth_failed"] == "0" && stats["malformed"] == "0", "\(receiver.output)")
        #expect(!receiver.output.contains(key), "parley receive printed the key")
        try expectSpeech(dir.appendingPathComponent("received.wav"), samples, "ffmpeg srtp -> parley receive --sdp")
    }

    /// A receiver with the wrong key plays nothing and counts every packet as failing authentication.
    @Test(.enabled(if: haveParley, parleyMissing))
    func aWrongKeyPlaysNothingAndIsCounted() throws {
        let dir = try interopDirectory("srtp-wrong-key")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (_, _, short) = try audioSources(in: dir)
        let (receiver, port) = try startUDPReceiver { port in
            try InteropChild(interopParleyBinary, ["receive", "--port", "\(port)", "--codec", "opus", "--srtp-key", randomKey(),
                                                   "--output", "received.wav", "--idle-timeout", "2"], in: dir, name: "parley-receive")
        }
        let send = try InteropChild(interopParleyBinary, ["send", "--to", "127.0.0.1:\(port)", "--srtp-key", randomKey(), short.path],
                                    in: dir, name: "parley-send")
        #expect(send.wait(seconds: 20) == 0, "parley send: \(send.output)")
        #expect(receiver.wait(seconds: 10) == 0, "parley receive: \(receiver.output)")
        let stats = statistics(receiver.output)
        #expect(stats["packets"] == "0", "\(receiver.output)")
        #expect(stats["srtp_auth_failed"] == "2", "\(receiver.output)")
    }

    @Test(.enabled(if: haveParley, parleyMissing))
    func srtpUsageErrors() throws {
        let dir = try interopDirectory("srtp-usage")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (_, _, short) = try audioSources(in: dir)
        func run(_ args: [String]) -> (Int32, String) {
            guard let p = try? InteropChild(interopParleyBinary, args, in: dir, name: "parley") else { return (-1, "") }
            return (p.wait(seconds: 20), p.output)
        }
        var (status, out) = run(["send", "--to", "127.0.0.1:9", "--srtp", short.path])
        #expect(status == 2 && out.contains("needs --sdp FILE"), "\(out)")
        (status, out) = run(["send", "--to", "127.0.0.1:9", "--srtp-key", "c2hvcnQ=", short.path])
        #expect(status == 2 && out.contains("30 bytes"), "\(out)")
        #expect(!out.contains("c2hvcnQ="))
        (status, out) = run(["send", "--to", "127.0.0.1:9", "--srtp-suite", "NULL_NULL", "--sdp", "x.sdp", short.path])
        #expect(status == 2 && out.contains("unknown SRTP suite 'NULL_NULL'"), "\(out)")
        try "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nm=audio 5004 RTP/SAVP 96\na=rtpmap:96 opus/48000/2\n"
            .write(to: dir.appendingPathComponent("nocrypto.sdp"), atomically: false, encoding: .utf8)
        (status, out) = run(["receive", "--sdp", "nocrypto.sdp", "--output", "r.wav"])
        #expect(status == 2 && out.contains("no a=crypto: line"), "\(out)")
        try "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nm=audio 5004 RTP/AVP 0 8\n"
            .write(to: dir.appendingPathComponent("pcmu.sdp"), atomically: false, encoding: .utf8)
        (status, out) = run(["receive", "--sdp", "pcmu.sdp", "--output", "r.wav"])
        #expect(status == 2 && out.contains("offers no codec Parley receives"), "\(out)")
        try "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nm=audio port RTP/AVP 96\n"
            .write(to: dir.appendingPathComponent("bad.sdp"), atomically: false, encoding: .utf8)
        (status, out) = run(["receive", "--sdp", "bad.sdp", "--output", "r.wav"])
        #expect(status == 2 && out.contains("line 4, m= port"), "\(out)")
    }
}
