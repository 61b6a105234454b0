import Foundation
import Testing

/// The `parley` executable next to the test binary.
private let netsimParley: URL = {
    var dir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    while !FileManager.default.isExecutableFile(atPath: dir.appendingPathComponent("parley").path), dir.path != "/" {
        dir = dir.deletingLastPathComponent()
    }
    return dir.appendingPathComponent("parley")
}()

private let netsimSpeech = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia/speech/speech-48k.wav")

/// Runs `parley netsim ARGS`; stdout and stderr go through files (no pipe can fill up).
private func runNetsim(_ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("netsim-run-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let outURL = dir.appendingPathComponent("out"), errURL = dir.appendingPathComponent("err")
    _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
    _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
    let p = Process()
    p.executableURL = netsimParley
    p.arguments = ["netsim"] + args
    p.standardOutput = try FileHandle(forWritingTo: outURL)
    p.standardError = try FileHandle(forWritingTo: errURL)
    try p.run()
    p.waitUntilExit()
    return (p.terminationStatus, try String(contentsOf: outURL, encoding: .utf8), try String(contentsOf: errURL, encoding: .utf8))
}

private func netsimTemp(_ name: String) -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("netsim-\(UUID().uuidString)-\(name)").path
}

@Test func netsimGeneratesTheSameTraceForTheSameSeed() throws {
    let a = netsimTemp("a.csv"), b = netsimTemp("b.csv"), c = netsimTemp("c.csv")
    defer { for f in [a, b, c] { try? FileManager.default.removeItem(atPath: f) } }
    #expect(try runNetsim(["--generate", "wifi-loss", "--seed", "9", "--seconds", "5", "--out", a]).status == 0)
    #expect(try runNetsim(["--generate", "wifi-loss", "--seed", "9", "--seconds", "5", "--out", b]).status == 0)
    #expect(try runNetsim(["--generate", "wifi-loss", "--seed", "10", "--seconds", "5", "--out", c]).status == 0)
    let ta = try String(contentsOfFile: a, encoding: .utf8)
    #expect(ta == (try String(contentsOfFile: b, encoding: .utf8)))
    #expect(ta != (try String(contentsOfFile: c, encoding: .utf8)))
    #expect(ta.hasPrefix("seq,send_ms,arrival_ms\n"))
    #expect(ta.split(separator: "\n").count == 251)
}

@Test func netsimReplayReportsOneOutcomePerTraceRow() throws {
    guard FileManager.default.fileExists(atPath: netsimSpeech.path) else {
        Issue.record("SampleMedia/speech/speech-48k.wav is missing")
        return
    }
    let trace = netsimTemp("t.csv"), report = netsimTemp("r.csv")
    defer { for f in [trace, report] { try? FileManager.default.removeItem(atPath: f) } }
    // A hand-made trace: wrap, loss, a duplicate, reordering and one hopelessly late packet.
    let rows = ["65534,0,40", "65535,20,61", "0,40,", "1,60,125", "2,80,101", "2,80,110", "3,100,122",
                "4,120,2000", "5,140,161"] + (6..<60).map { "\($0),\($0 * 20 + 20),\($0 * 20 + 41)" }
    try ("seq,send_ms,arrival_ms\n" + rows.joined(separator: "\n") + "\n").write(toFile: trace, atomically: false, encoding: .utf8)
    let r = try runNetsim(["--trace", trace, "--report", report, "--json"])
    #expect(r.status == 0, "\(r.stderr)")
    let lines = try String(contentsOfFile: report, encoding: .utf8).split(separator: "\n").map(String.init)
    #expect(lines.first == "seq,outcome,playout_ms")
    #expect(lines.count == rows.count + 1)
    #expect(lines[3] == "0,lost,")
    #expect(lines[6] == "2,duplicate,")
    #expect(lines[8] == "4,late,")
    #expect(lines[1].hasPrefix("65534,played,"))
    #expect(lines[4].hasPrefix("1,played,"), "reordered packet should be waited for: \(lines[4])")
    for line in lines.dropFirst() {
        let f = line.split(separator: ",", omittingEmptySubsequences: false)
        #expect(f.count == 3)
        #expect(["played", "late", "lost", "duplicate", "discarded"].contains(String(f[1])))
        #expect((f[1] == "played") == !f[2].isEmpty)
    }
    #expect(r.stdout.contains("\"jitterBufferDelay\""))
    #expect(r.stdout.contains("\"concealedSamples\""))
    #expect(r.stdout.contains("\"late\": 1"))
}

@Test func netsimRejectsBadInputWithClearErrors() throws {
    let bad = netsimTemp("bad.csv"), report = netsimTemp("r.csv")
    defer { for f in [bad, report] { try? FileManager.default.removeItem(atPath: f) } }
    try "seq,send_ms,arrival_ms\n1,20,30\n2,oops,50\n".write(toFile: bad, atomically: false, encoding: .utf8)
    let r = try runNetsim(["--trace", bad, "--report", report])
    #expect(r.status == 1)
    #expect(r.stderr.contains("line 3"))
    #expect(try runNetsim(["--generate", "ethernet", "--seed", "1", "--seconds", "1", "--out", report]).status == 2)
    #expect(try runNetsim(["--trace", bad]).status == 2)
    #expect(try runNetsim(["--trace", "/nonexistent/trace.csv", "--report", report]).status == 1)
    let help = try runNetsim(["--help"])
    #expect(help.status == 0 && help.stdout.contains("seq,outcome,playout_ms") && help.stdout.contains("wifi"))
}
