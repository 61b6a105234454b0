import Foundation
import Testing

// Tools/scale-out/dask_detect.py on a real Dask cluster: a scheduler and two worker processes
// on 127.0.0.1 (started here and stopped by process id), one of them killed during the run.

/// A background process whose output goes to a log file, killed by process id.
private final class DaskProcess {
    let process = Process()
    let log: URL

    init(_ args: [String], log: URL) throws {
        self.log = log
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = args
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
    }

    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Waits until the log contains `text`; false after `seconds` or when the process ended.
    func waitFor(_ text: String, seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if output.contains(text) { return true }
            if !process.isRunning { return false }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return false
    }

    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Whether python3 can import Dask distributed (CI installs it through scripts/setup.sh).
private let daskInstalled: Bool = {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = ["python3", "-c", "import distributed"]
    p.standardOutput = FileHandle.nullDevice
    p.standardError = FileHandle.nullDevice
    guard (try? p.run()) != nil else { return false }
    p.waitUntilExit()
    return p.terminationStatus == 0
}()

/// The last line of `text` that starts with `prefix`.
private func lastLine(_ text: String, _ prefix: String) -> String {
    text.split(separator: "\n").last { $0.hasPrefix(prefix) }.map(String.init) ?? ""
}

@Test(.enabled(if: detectHasSampleMedia))
func daskDriverGetsEveryResultWhenAWorkerIsKilled() throws {
    #expect(daskInstalled, "python3 cannot import 'distributed': run scripts/setup.sh (it installs Tools/scale-out/requirements.txt)")
    guard daskInstalled else { return }
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    var started: [DaskProcess] = []
    defer { for p in started { p.kill() } }

    // Six cuts of SampleMedia at several rates, each listed under five names, and a corrupt file.
    let c = detectSampleMedia.path + "/conversation/"
    let cuts: [[String]] = [
        [c + "armelle.wav", "a.wav", "trim", "3.5", "1.5"],
        [c + "carlo.wav", "-r", "8000", "b.flac", "trim", "4.5", "1.5"],
        [c + "reader.wav", "-r", "48000", "c.wav", "trim", "0", "1.5"],
        [c + "reader.wav", "-c", "2", "d.wav", "trim", "5", "1.5"],
        [detectSampleMedia.path + "/speech/speech-16k.wav", "-r", "22050", "e.wav", "trim", "0", "1.5"],
        [detectSampleMedia.path + "/noise/vinyl-hiss.wav", "f.wav", "trim", "0", "1.5"],
    ]
    var good: [String] = []
    for cut in cuts {
        let name = cut.first { $0.contains(".") && !$0.hasPrefix("/") }!
        try detectSox(cut.map { $0 == name ? dir.appendingPathComponent(name).path : $0 })
        for k in 0..<5 {
            let link = dir.appendingPathComponent("\(k)-\(name)").path
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir.appendingPathComponent(name).path)
            good.append(link)
        }
    }
    let corrupt = dir.appendingPathComponent("corrupt.wav")
    try Data("RIFF\u{0}\u{0}\u{0}\u{0}WAVEjunkjunkjunk".utf8).write(to: corrupt)
    let list = dir.appendingPathComponent("list.txt")
    try Data((good + [corrupt.path]).map { $0 + "\n" }.joined().utf8).write(to: list)

    let port = Int.random(in: 30_000..<60_000)
    let address = "tcp://127.0.0.1:\(port)"
    let scheduler = try DaskProcess(["dask", "scheduler", "--host", "127.0.0.1", "--port", "\(port)", "--no-dashboard"],
                                    log: dir.appendingPathComponent("scheduler.log"))
    started.append(scheduler)
    try #require(scheduler.waitFor("Scheduler at:", seconds: 30), "the scheduler did not start: \(scheduler.output)")
    var workers: [DaskProcess] = []
    for i in 0..<2 {
        let w = try DaskProcess(["dask", "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                 "--name", "w\(i)"], log: dir.appendingPathComponent("worker\(i).log"))
        started.append(w)
        workers.append(w)
    }
    for w in workers { try #require(w.waitFor("Registered to:", seconds: 30), "a worker did not start: \(w.output)") }

    let out = dir.appendingPathComponent("out")
    let driver = detectPackageRoot.appendingPathComponent("Tools/scale-out/dask_detect.py").path
    let args = ["python3", driver, "--scheduler", address, "--files-from", list.path, "--output-dir", out.path,
                "--format", "json", "--batch", "3", "--parley", detectParleyExecutable.path]
    let run = try DaskProcess(args, log: dir.appendingPathComponent("driver.log"))
    started.append(run)
    // Kill the first worker once some results are in.
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline && run.process.isRunning {
        let n = ((try? FileManager.default.contentsOfDirectory(atPath: out.path)) ?? []).filter { $0.hasSuffix(".json") }.count
        if n >= 4 { break }
        Thread.sleep(forTimeInterval: 0.05)
    }
    let killedDuringRun = run.process.isRunning
    workers[0].kill()
    run.process.waitUntilExit()
    #expect(killedDuringRun, "the run ended before a worker could be killed")

    #expect(run.process.terminationStatus == 1, "\(run.output)")
    let summary = lastLine(run.output, "parley detect: 31 files: ")
    let counts = summary.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
    // files, ok, partial, failed, skipped: the files a killed attempt finished count as skipped.
    #expect(counts.count >= 5 && counts[0] == 31 && counts[1] + counts[4] == 30 && counts[2] == 0 && counts[3] == 1,
            "\(run.output)")
    #expect(run.output.contains("\(corrupt.path): "), "\(run.output)")
    for path in good {
        let name = detectDocumentedResultName(path, ext: "json")
        #expect(FileManager.default.fileExists(atPath: out.appendingPathComponent(name).path), "no result for \(path)")
    }
    let failed = try String(contentsOf: out.appendingPathComponent("failed.tsv"), encoding: .utf8)
    #expect(failed.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) } == [corrupt.path], "\(failed)")
    // A result is what parley detect prints for the file alone.
    let single = try runDetectCLI(["detect", "--format", "json", good[7]])
    let result = try String(contentsOf: out.appendingPathComponent(detectDocumentedResultName(good[7], ext: "json")), encoding: .utf8)
    #expect(result == single.stdout)

    // The same command again, on the one worker left: everything is skipped but the corrupt file.
    let again = try DaskProcess(args, log: dir.appendingPathComponent("driver2.log"))
    started.append(again)
    again.process.waitUntilExit()
    #expect(again.process.terminationStatus == 1)
    #expect(lastLine(again.output, "parley detect: ").hasPrefix("parley detect: 31 files: 0 ok, 0 partial, 1 failed, 30 skipped; "),
            "\(again.output)")
}

@Test func daskDriverUsageErrorsExitTwo() throws {
    #expect(daskInstalled, "python3 cannot import 'distributed': run scripts/setup.sh")
    guard daskInstalled else { return }
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let driver = detectPackageRoot.appendingPathComponent("Tools/scale-out/dask_detect.py").path
    let list = dir.appendingPathComponent("list.txt")
    try Data("a.wav\n".utf8).write(to: list)
    let cases: [([String], String)] = [
        (["--scheduler", "tcp://127.0.0.1:9", "--files-from", dir.appendingPathComponent("none.txt").path,
          "--output-dir", dir.path], "cannot read"),
        (["--scheduler", "tcp://127.0.0.1:9", "--files-from", list.path, "--output-dir", dir.path, "--batch", "0"],
         "--batch must be at least 1"),
        (["--scheduler", "tcp://127.0.0.1:9", "--files-from", list.path, "--output-dir", dir.path, "--format", "xml"],
         "--format must be"),
        (["--files-from", list.path, "--output-dir", dir.path], "--scheduler"),
    ]
    for (i, (args, message)) in cases.enumerated() {
        let p = try DaskProcess(["python3", driver] + args, log: dir.appendingPathComponent("usage\(i).log"))
        p.process.waitUntilExit()
        #expect(p.process.terminationStatus == 2, "\(args): \(p.output)")
        #expect(p.output.contains(message), "\(args): \(p.output)")
    }
}
