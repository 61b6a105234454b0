import Foundation
import Testing

/// The package root and the `parley` binary built next to these tests.
private let codecCLIRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
private let codecCLIBinary: URL? = ["debug", "release"]
    .map { codecCLIRoot.appendingPathComponent(".build/\($0)/parley") }
    .first { FileManager.default.isExecutableFile(atPath: $0.path) }

private struct CodecCLIMissingBinary: Error, CustomStringConvertible {
    var description: String { "parley binary not built: run 'swift build' first" }
}

/// Runs `parley codec ARGS`; returns the exit status, stdout and stderr.
private func runCodecCLI(_ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    guard let binary = codecCLIBinary else { throw CodecCLIMissingBinary() }
    let p = Process()
    p.executableURL = binary
    p.arguments = ["codec"] + args
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
}

private func codecCLIJSON(_ text: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

@Suite("parley codec")
struct CodecCLITests {
    @Test func opusRoundTripOfSampleSpeechReportsHighCorrelation() throws {
        let wav = codecCLIRoot.appendingPathComponent("SampleMedia/speech/speech-16k.wav").path
        let r = try runCodecCLI(["--application", "audio", "--kbps", "48", "--json", wav])
        #expect(r.status == 0, "\(r.stderr)")
        let j = try codecCLIJSON(r.stdout)
        #expect(j["codec"] as? String == "opus")
        #expect(j["sample_rate_hz"] as? Int == 16_000)
        #expect((j["correlation"] as? Double ?? 0) >= 0.9)
        let kbps = j["kbps"] as? Double ?? 0
        #expect(kbps > 30 && kbps < 60)
    }

    @Test(arguments: ["vp8", "vp9"])
    func videoRoundTripOfSampleClipKeepsPSNR(codec: String) throws {
        let y4m = codecCLIRoot.appendingPathComponent("SampleMedia/video/sample.y4m").path
        let r = try runCodecCLI(["--codec", codec, "--kbps", "500", "--json", y4m])
        #expect(r.status == 0, "\(r.stderr)")
        let j = try codecCLIJSON(r.stdout)
        #expect(j["codec"] as? String == codec)
        #expect((j["luma_psnr_db"] as? Double ?? 0) >= 30)
        #expect(j["keyframes"] as? Int == 1)
    }

    @Test func badInputAndUsageGetTheirExitStatus() throws {
        let missing = try runCodecCLI(["/nonexistent/x.wav"])
        #expect(missing.status == 1 && missing.stderr.contains("/nonexistent/x.wav"))
        let wav = codecCLIRoot.appendingPathComponent("SampleMedia/speech/speech-16k.wav").path
        let badFrame = try runCodecCLI(["--frame-ms", "30", wav])
        #expect(badFrame.status == 2 && badFrame.stderr.contains("--frame-ms"))
        let badCodec = try runCodecCLI(["--codec", "h264", codecCLIRoot.appendingPathComponent("SampleMedia/video/sample.y4m").path])
        #expect(badCodec.status == 2)
        let notMedia = try runCodecCLI([codecCLIRoot.appendingPathComponent("README.md").path])
        #expect(notMedia.status == 2)
    }
}
