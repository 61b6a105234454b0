import Foundation
import ParleyCore
import CAllocCounter

/// One benchmark: a name (kebab-case, `group/what`), the unit its figure is in, an optional
/// baseline row it is compared with in the same run, and a body.
///
/// The body is called once per sample after warm-up; it runs `iterations` units of work and
/// returns a value that depends on the work (it is consumed so the optimiser cannot drop it).
/// The reported figure is nanoseconds per unit, unless `unit` says otherwise and the body
/// returns its own figure through ``Measurement``.
struct Benchmark {
    enum Unit: String { case nsPerFrame = "ns/frame", nsPerPacket = "ns/packet", nsPerOp = "ns/op",
                         usPerFrame = "us/frame", ratio = "ratio", percent = "%", ms = "ms",
                         realtimeFactor = "x realtime", streams = "streams/core", bytes = "bytes", db = "dB" }
    let name: String
    let unit: Unit
    let baseline: String?
    /// Units of work per sample: the harness divides the elapsed time by this.
    let iterations: Int
    /// Runs `iterations` units; returns a checksum that depends on the work.
    let body: () -> UInt64
    /// When set, the sample's figure is what this returns instead of a timing (for metrics
    /// such as delay or loss that are measured, not timed). Called once per sample.
    let metric: (() -> Double)?

    init(name: String, unit: Unit = .nsPerFrame, baseline: String? = nil, iterations: Int,
         body: @escaping () -> UInt64) {
        self.name = name; self.unit = unit; self.baseline = baseline
        self.iterations = iterations; self.body = body; self.metric = nil
    }

    init(name: String, unit: Unit, baseline: String? = nil, metric: @escaping () -> Double) {
        self.name = name; self.unit = unit; self.baseline = baseline
        self.iterations = 1; self.body = { 0 }; self.metric = metric
    }
}

/// The figures of one benchmark over its samples.
struct BenchResult {
    let name: String
    let unit: String
    let median: Double
    let min: Double
    let max: Double
    let baseline: String?
    var ratio: Double?
    /// Heap allocations per unit of work (median over the samples; the whole process, all
    /// threads), or nil for measured metrics.
    var allocationsPerUnit: Double?
}

/// Keeps a value alive so the optimiser cannot remove the work that made it.
@inline(never) func blackHole<T>(_ value: T) {
    withUnsafePointer(to: value) { p in
        if UInt(bitPattern: p) == 1 { print(value) }
    }
}

/// Runs benchmarks: warm-up, then `samples` timed samples; median, min and max per row.
struct BenchRunner {
    var samples = 7
    var warmup = 2
    var checksum: UInt64 = 0

    mutating func run(_ b: Benchmark) -> BenchResult {
        var figures: [Double] = []
        var allocations: [Double] = []
        figures.reserveCapacity(samples)
        allocations.reserveCapacity(samples)
        for i in 0..<(warmup + samples) {
            let figure: Double
            if let metric = b.metric {
                figure = metric()
            } else {
                let allocationsBefore = parley_bench_allocations()
                let start = DispatchTime.now().uptimeNanoseconds
                checksum &+= b.body()
                let elapsed = DispatchTime.now().uptimeNanoseconds - start
                let allocated = parley_bench_allocations() - allocationsBefore
                if i >= warmup { allocations.append(Double(allocated) / Double(b.iterations)) }
                let ns = Double(elapsed) / Double(b.iterations)
                switch b.unit {
                case .usPerFrame: figure = ns / 1000
                default: figure = ns
                }
            }
            if i >= warmup { figures.append(figure) }
        }
        figures.sort()
        return BenchResult(name: b.name, unit: b.unit.rawValue, median: median(figures),
                           min: figures.first ?? .nan, max: figures.last ?? .nan,
                           baseline: b.baseline, ratio: nil,
                           allocationsPerUnit: b.metric == nil ? median(allocations.sorted()) : nil)
    }

    private func median(_ sorted: [Double]) -> Double {
        if sorted.isEmpty { return .nan }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2]
            : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

/// Fills in `ratio` = median / baseline's median for rows whose baseline ran in this run.
func attachRatios(_ results: inout [BenchResult]) {
    var medians: [String: Double] = [:]
    for r in results { medians[r.name] = r.median }
    for i in results.indices {
        if let b = results[i].baseline, let m = medians[b], m != 0 {
            results[i].ratio = results[i].median / m
        }
    }
}

/// The `--json` output: one array of `{"name","unit","median","min","max","baseline","ratio",
/// "allocs"}` (`allocs`: heap allocations per unit of work, null for measured metrics).
func jsonReport(_ results: [BenchResult]) -> String {
    func num(_ x: Double?) -> String {
        guard let x, x.isFinite else { return "null" }
        return String(format: "%.6g", x)
    }
    let rows = results.map { r in
        "  {\"name\": \(jsonString(r.name)), \"unit\": \(jsonString(r.unit)), \"median\": \(num(r.median)), "
            + "\"min\": \(num(r.min)), \"max\": \(num(r.max)), \"baseline\": \(jsonString(r.baseline)), "
            + "\"ratio\": \(num(r.ratio)), \"allocs\": \(num(r.allocationsPerUnit))}"
    }
    return "[\n" + rows.joined(separator: ",\n") + "\n]"
}

/// The width of a table's name column: 44, or wider where a name needs it.
func nameColumnWidth(_ names: [String]) -> Int {
    names.reduce(44) { max($0, $1.count + 1) }
}

/// The human-readable table.
func textReport(_ results: [BenchResult]) -> String {
    let width = nameColumnWidth(results.map(\.name))
    var lines = ["name".padding(toLength: width, withPad: " ", startingAt: 0)
                 + "     median        min        max  unit          ratio  allocs/unit  baseline"]
    for r in results {
        let ratio = r.ratio.map { String(format: "%7.3f", $0) } ?? "      -"
        lines.append(r.name.padding(toLength: width, withPad: " ", startingAt: 0)
                     + String(format: " %10.4g %10.4g %10.4g  ", r.median, r.min, r.max)
                     + r.unit.padding(toLength: 12, withPad: " ", startingAt: 0)
                     + ratio + "  "
                     + (r.allocationsPerUnit.map { String(format: "%11.3g", $0) } ?? "          -") + "  "
                     + (r.baseline ?? "-"))
    }
    return lines.joined(separator: "\n")
}

/// Where SampleMedia lives, found relative to this source file's package.
let sampleMediaDirectory: URL = {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SampleMedia")
}()

/// A path in the temporary directory for a fixture file the benchmark writes
/// (`parley-bench-NAME-PID.EXT`: concurrent runs do not share it), removed when the process exits.
func benchTemporaryFile(_ name: String, extension ext: String) -> String {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("parley-bench-\(name)-\(getpid()).\(ext)").path
    BenchTemporaryFiles.shared.add(path)
    return path
}

/// The fixture files of this run, unlinked at exit.
private final class BenchTemporaryFiles: @unchecked Sendable {
    static let shared = BenchTemporaryFiles()
    private let lock = NSLock()
    private var paths: [String] = []

    private init() {
        atexit { BenchTemporaryFiles.shared.removeAll() }
    }

    func add(_ path: String) {
        lock.lock(); defer { lock.unlock() }
        paths.append(path)
    }

    func removeAll() {
        lock.lock(); defer { lock.unlock() }
        for path in paths { unlink(path) }
        paths.removeAll()
    }
}
