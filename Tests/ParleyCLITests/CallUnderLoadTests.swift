// `parley call` beside a CPU hog: two processes call each other over loopback while stress-ng
// keeps every core busy, so both calls' threads are preempted again and again. Late playout and
// capture ticks must come out as jitter the buffer absorbs: each side still hears its peer.

import Foundation
import Testing

private let stressNG = interopWhich("stress-ng")
private let haveParley = FileManager.default.isExecutableFile(atPath: interopParleyBinary)

@Suite(.serialized, .tags(.realTime),
       .enabled(if: stressNG != nil, "stress-ng is not installed (scripts/setup.sh installs it)"),
       .enabled(if: haveParley, "the parley binary is not built at .build/debug/parley (run 'swift build' first)"))
struct CallUnderLoadTests {
    /// A number after `label` in the line of `text` that starts with `prefix`.
    private func figure(_ text: String, line prefix: String, after label: String) -> Int? {
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }),
              let r = line.range(of: label) else { return nil }
        return Int(line[r.upperBound...].prefix { $0.isNumber })
    }

    @Test func twoCallsBesideACPUHogOnEveryCoreHearEachOther() throws {
        let dir = try interopDirectory("call-load")
        defer { try? FileManager.default.removeItem(at: dir) }
        let files = try detectConversationFiles()
        let carlo = try #require(files.first { $0.lastPathComponent == "carlo.wav" })
        let armelle = try #require(files.first { $0.lastPathComponent == "armelle.wav" })
        let sources = ["carlo": carlo, "armelle": armelle]

        // One CPU-bound worker per core, bounded in time whatever happens to this test.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let hog = try InteropChild(stressNG!, ["--cpu", "\(cores)", "--timeout", "90s", "--quiet"], in: dir, name: "stress-ng")
        defer {
            kill(hog.pid, SIGTERM)   // stress-ng stops its workers and exits
            hog.wait(seconds: 10)
        }
        usleep(500_000)  // the workers are running before the calls start

        let portA = interopFreeUDPPort()
        var portB = interopFreeUDPPort()
        while portB == portA { portB = interopFreeUDPPort() }
        func side(_ name: String, listen: UInt16, to: UInt16, peer: String) -> [String] {
            ["call", "--listen", "\(listen)", "--to", "127.0.0.1:\(to)", "--audio", sources[name]!.path, "--name", name,
             "--sdp-out", "\(name).sdp", "--sdp-in", "\(peer).sdp", "--output", "\(name)-heard.wav", "--no-tui"]
        }
        let a = try InteropChild(interopParleyBinary, side("carlo", listen: portA, to: portB, peer: "armelle"), in: dir, name: "load-carlo")
        let b = try InteropChild(interopParleyBinary, side("armelle", listen: portB, to: portA, peer: "carlo"), in: dir, name: "load-armelle")
        #expect(a.wait(seconds: 60) == 0, "carlo: \(a.output)")
        #expect(b.wait(seconds: 60) == 0, "armelle: \(b.output)")
        #expect(kill(hog.pid, 0) == 0, "stress-ng ended before the calls did: \(hog.output)")

        for (listener, child, peer) in [("carlo", a, "armelle"), ("armelle", b, "carlo")] {
            let heard = try readInteropWAV(dir.appendingPathComponent("\(listener)-heard.wav"))
            let original = try readInteropWAV(sources[peer]!)
            let concealed = figure(child.output, line: "received from \(peer):", after: "lost, ") ?? -1
            let inserted = figure(child.output, line: "received from \(peer):", after: "concealed, ") ?? -1
            let removed = figure(child.output, line: "received from \(peer):", after: "inserted and ") ?? -1
            let fraction = Double(concealed) / Double(max(1, heard.samples.count))
            let (median, count, lag) = interopSpeechWindowCorrelation(source: original.samples, heard: heard.samples)
            print("parley call under load (stress-ng --cpu \(cores)): \(listener) hears \(peer) at lag \(lag), correlation median "
                  + String(format: "%.3f", median) + " over \(count) speech windows, concealed "
                  + String(format: "%.4f", fraction) + " (\(concealed) of \(heard.samples.count) samples), stretched: \(inserted) samples inserted, \(removed) removed")
            #expect(heard.samples.count >= original.samples.count * 9 / 10, "\(listener) heard \(heard.samples.count) samples")
            #expect(concealed >= 0 && inserted >= 0 && removed >= 0, "\(child.output)")
            #expect(fraction <= 0.05, "\(listener) concealed \(concealed) of \(heard.samples.count) samples")
            #expect(count >= 3 && median >= 0.8, "\(listener) hears \(peer): median \(median) over \(count) windows")
        }
    }
}
