// parley-bench: times every hot path, each against a baseline measured in the same run.
//
//   swift run -c release parley-bench [--filter SUBSTRING] [--json] [--samples N]
//   swift run -c release parley-bench --check Benchmarks/thresholds.txt [--samples N]
//
// --check runs only the rows its file names (and their baselines), prints each figure beside
// its stored maximum and exits 1 when one is past it (scripts/bench-check.sh).
//
// Each suite lives in its own file and returns its benchmarks; this file only runs them.

import Foundation

#if DEBUG
let isDebugBuild = true
#else
let isDebugBuild = false
#endif

let suites: [(String, () -> [Benchmark])] = [
    ("codec", codecBenchmarks),
    ("media", mediaBenchmarks),
    ("rtp", rtpBenchmarks),
    ("srtp", srtpBenchmarks),
    ("session", sessionBenchmarks),
    ("dtls", dtlsBenchmarks),
    ("sctp", sctpBenchmarks),
    ("jitter", jitterBenchmarks),
    ("video", videoBenchmarks),
    ("vad", vadBenchmarks),
    ("echo", echoBenchmarks),
    ("detect", detectBenchmarks),
    ("capture", captureBenchmarks),
    ("call", callBenchmarks),
]

var filter: String?
var thresholds: [BenchThreshold]?
var json = false
var runner = BenchRunner()
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--filter": filter = args.popFirst()
    case "--json": json = true
    case "--samples":
        guard let s = args.popFirst(), let n = Int(s), n > 0 else {
            FileHandle.standardError.write("parley-bench: --samples needs a positive integer\n".data(using: .utf8)!)
            exit(2)
        }
        runner.samples = n
    case "--check":
        guard let path = args.popFirst() else {
            FileHandle.standardError.write("parley-bench: --check needs a thresholds file\n".data(using: .utf8)!)
            exit(2)
        }
        do { thresholds = try readThresholds(path) } catch {
            FileHandle.standardError.write("parley-bench: \(error.message)\n".data(using: .utf8)!)
            exit(2)
        }
    case "--allow-debug": break
    case "-h", "--help":
        print("Usage: parley-bench [--filter SUBSTRING] [--json] [--samples N] [--check THRESHOLDS]\n"
              + "Build with -c release; debug builds are refused (pass --allow-debug to override).")
        exit(0)
    default:
        FileHandle.standardError.write("parley-bench: unknown argument '\(a)'\n".data(using: .utf8)!)
        exit(2)
    }
}
if isDebugBuild && !CommandLine.arguments.contains("--allow-debug") {
    FileHandle.standardError.write("parley-bench: refusing to run a debug build; use 'swift run -c release parley-bench'\n".data(using: .utf8)!)
    exit(2)
}

var benchmarks: [Benchmark] = []
for (_, make) in suites { benchmarks += make() }

// With --check: the named rows and the baselines they are compared with.
var checked: Set<String>?
if let thresholds {
    var names = Set(thresholds.map(\.name))
    var baselineOf: [String: String] = [:]
    for b in benchmarks { if let base = b.baseline { baselineOf[b.name] = base } }
    var frontier = Array(names)
    while let n = frontier.popLast() {
        if let b = baselineOf[n], !names.contains(b) { names.insert(b); frontier.append(b) }
    }
    checked = names
}

var results: [BenchResult] = []
for b in benchmarks where (filter.map({ b.name.contains($0) }) ?? true) && (checked?.contains(b.name) ?? true) {
    if !json { FileHandle.standardError.write("running \(b.name)\n".data(using: .utf8)!) }
    results.append(runner.run(b))
}
attachRatios(&results)
print(json ? jsonReport(results) : textReport(results))
blackHole(runner.checksum)
if let thresholds {
    print("")
    if !checkThresholds(thresholds, results) { exit(1) }
}
