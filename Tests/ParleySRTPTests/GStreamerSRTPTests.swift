// SRTP interoperability with GStreamer's srtpenc/srtpdec, one packet per file (multifilesink and
// multifilesrc keep packet boundaries, so no sockets are needed).

import Foundation
import ParleyRTP
import ParleySRTP
import Testing

private let gstLaunch = "/usr/bin/gst-launch-1.0"
private let hasGStreamerSRTP: Bool = {
    guard FileManager.default.isExecutableFile(atPath: gstLaunch) else { return false }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/gst-inspect-1.0")
    p.arguments = ["--exists", "srtpenc"]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    guard (try? p.run()) != nil else { return false }
    p.waitUntilExit()
    return p.terminationStatus == 0
}()

private func gst(_ pipeline: String) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: gstLaunch)
    p.arguments = ["-q"] + pipeline.split(separator: " ").map(String.init)
    let err = Pipe()
    p.standardError = err
    p.standardOutput = FileHandle.nullDevice
    try p.run()
    let message = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    if p.terminationStatus != 0 {
        throw GStreamerFailed(description: "gst-launch-1.0 \(pipeline): \(String(decoding: message, as: UTF8.self))")
    }
}

private struct GStreamerFailed: Error, CustomStringConvertible { let description: String }

/// The files DIR/PREFIX00000, 00001, ... in order, until one is missing.
private func packets(_ dir: URL, _ prefix: String) -> [[UInt8]] {
    var out: [[UInt8]] = []
    while let d = FileManager.default.contents(atPath: dir.appendingPathComponent(String(format: "\(prefix)%05d", out.count)).path) {
        out.append([UInt8](d))
    }
    return out
}

private func hexString(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// GStreamer's names for a suite: RTP cipher and auth, RTCP cipher and auth.
private func gstNames(_ suite: SRTPSuite) -> (String, String, String, String) {
    switch suite {
    case .aesCM128HMACSHA1_80: ("aes-128-icm", "hmac-sha1-80", "aes-128-icm", "hmac-sha1-80")
    case .aesCM128HMACSHA1_32: ("aes-128-icm", "hmac-sha1-32", "aes-128-icm", "hmac-sha1-80")
    case .aeadAES128GCM: ("aes-128-gcm", "null", "aes-128-gcm", "null")
    case .aeadAES256GCM: ("aes-256-gcm", "null", "aes-256-gcm", "null")
    }
}

private let ssrc: UInt32 = 0x0BAD_CAFE

/// Opus over RTP from GStreamer: each packet in the clear (`plainNNNNN`) and as GStreamer's
/// srtpenc protected it with `key` (`srtpNNNNN`).
private func gstreamerPackets(_ dir: URL, key: SRTPKey) throws -> (plain: [[UInt8]], secured: [[UInt8]]) {
    let (c, a, cc, ca) = gstNames(key.suite)
    try gst("audiotestsrc num-buffers=40 samplesperbuffer=960 ! audio/x-raw,rate=48000,channels=1 ! opusenc ! "
        + "rtpopuspay pt=111 ssrc=\(ssrc) seqnum-offset=65520 ! tee name=t "
        + "t. ! queue ! multifilesink location=\(dir.path)/plain%05d "
        + "t. ! queue ! srtpenc key=\(hexString(key.material)) rtp-cipher=\(c) rtp-auth=\(a) rtcp-cipher=\(cc) rtcp-auth=\(ca) ! "
        + "multifilesink location=\(dir.path)/srtp%05d")
    return (packets(dir, "plain"), packets(dir, "srtp"))
}

@Suite(.enabled(if: hasGStreamerSRTP, "needs gst-launch-1.0 with the srtp plugin (gstreamer1.0-plugins-bad)"))
struct GStreamerSRTPTests {
    private func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parley-srtp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test(arguments: SRTPSuite.allCases)
    func unprotectsWhatGStreamerProtects(_ suite: SRTPSuite) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = try SRTPKey.generate(suite: suite)
        let (plain, secured) = try gstreamerPackets(dir, key: key)
        // 40 buffers of 20 ms; opusenc may add one more packet for its look-ahead.
        #expect(plain.count >= 40 && secured.count == plain.count)
        var rx = try SRTPContext(key: key, direction: .inbound)
        for (p, s) in zip(plain, secured) {
            #expect(s.count == p.count + suite.rtpOverhead)
            #expect(try unprotect(&rx, s) == p)
        }
        // The sequence numbers wrapped inside the stream (from 65520).
        let last = try RTPPacketView.withParsed(plain[plain.count - 1]) { $0.sequenceNumber }
        #expect(Int(last) == (65520 + plain.count - 1) & 0xFFFF)
        // GStreamer's packets under another key are all rejected.
        var wrong = try SRTPContext(key: try SRTPKey.generate(suite: suite), direction: .inbound)
        #expect(secured.allSatisfy { s in srtpError { _ = try unprotect(&wrong, s) } == .authenticationFailed })
    }

    @Test(arguments: SRTPSuite.allCases)
    func gstreamerUnprotectsWhatParleyProtects(_ suite: SRTPSuite) throws {
        let dir = try scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = try SRTPKey.generate(suite: suite)
        let (plain, _) = try gstreamerPackets(dir, key: key)
        var tx = try SRTPContext(key: key, direction: .outbound)
        for (i, p) in plain.enumerated() {
            var s = try protect(&tx, p)
            if i == 20 { s[s.count / 2] ^= 0x10 }   // one tampered packet: srtpdec must drop it
            try Data(s).write(to: dir.appendingPathComponent(String(format: "ours%05d", i)))
        }
        let (c, a, cc, ca) = gstNames(suite)
        let caps = "application/x-srtp,payload=(int)111,ssrc=(uint)\(ssrc),srtp-key=(buffer)\(hexString(key.material)),"
            + "srtp-cipher=(string)\(c),srtp-auth=(string)\(a),srtcp-cipher=(string)\(cc),srtcp-auth=(string)\(ca)"
        try gst("multifilesrc location=\(dir.path)/ours%05d caps=\(caps) ! srtpdec ! multifilesink location=\(dir.path)/back%05d")
        let back = packets(dir, "back")
        var expected = plain
        expected.remove(at: 20)
        #expect(back == expected)
    }
}
