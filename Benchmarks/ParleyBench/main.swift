// parley-bench: times every hot path, each against a baseline measured in the same run.
//
//   swift run -c release parley-bench [--filter SUBSTRING] [--json] [--samples N]
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
    ("jitter", jitterBenchmarks),
    ("vad", vadBenchmarks),
    ("detect", detectBenchmarks),
    ("capture", captureBenchmarks),
    ("call", callBenchmarks),
]

var filter: String?
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
    case "--allow-debug": break
    case "-h", "--help":
        print("Usage: parley-bench [--filter SUBSTRING] [--json] [--samples N]\n"
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

var results: [BenchResult] = []
for (_, make) in suites {
    for b in make() where filter.map({ b.name.contains($0) }) ?? true {
        if !json { FileHandle.standardError.write("running \(b.name)\n".data(using: .utf8)!) }
        results.append(runner.run(b))
    }
}
attachRatios(&results)
print(json ? jsonReport(results) : textReport(results))
blackHole(runner.checksum)
