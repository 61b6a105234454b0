import Foundation

/// One stored limit of `--check`: a row's ratio to its baseline, or its heap allocations per
/// unit of work, may not exceed `maximum`. The ratio checked is of the two rows' fastest
/// samples: another process on the machine only ever slows a sample, so the minimum is the
/// figure least moved by it (the report's ratio column, of medians, is printed as well).
struct BenchThreshold {
    enum Figure: String { case ratio, allocs }
    let name: String
    let figure: Figure
    let maximum: Double
}

/// Reads a thresholds file: one `NAME FIGURE MAXIMUM` per line (whitespace-separated;
/// FIGURE is `ratio` or `allocs`); `#` starts a comment. Throws a message naming the line.
func readThresholds(_ path: String) throws(BenchThresholdError) -> [BenchThreshold] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        throw BenchThresholdError(message: "cannot read \(path)")
    }
    var out: [BenchThreshold] = []
    for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
        let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
        if fields.isEmpty { continue }
        guard fields.count == 3, let figure = BenchThreshold.Figure(rawValue: String(fields[1])),
              let maximum = Double(fields[2]), maximum.isFinite, maximum >= 0 else {
            throw BenchThresholdError(message: "\(path):\(i + 1): expected 'NAME ratio|allocs MAXIMUM', got '\(raw)'")
        }
        out.append(BenchThreshold(name: String(fields[0]), figure: figure, maximum: maximum))
    }
    if out.isEmpty { throw BenchThresholdError(message: "\(path): no thresholds") }
    return out
}

/// A thresholds file that cannot be used.
struct BenchThresholdError: Error { let message: String }

/// Prints each checked figure beside its threshold; returns whether all are within them.
/// A row that did not run, or has no figure, fails.
func checkThresholds(_ thresholds: [BenchThreshold], _ results: [BenchResult]) -> Bool {
    var byName: [String: BenchResult] = [:]
    for r in results { byName[r.name] = r }
    func minimumRatio(_ name: String) -> Double? {
        guard let r = byName[name], let b = r.baseline.flatMap({ byName[$0] }), b.min > 0 else { return nil }
        return r.min / b.min
    }
    var ok = true
    let width = nameColumnWidth(thresholds.map(\.name))
    print("name".padding(toLength: width, withPad: " ", startingAt: 0) + " figure     measured    maximum  verdict"
          + "   (ratio: of the fastest samples)")
    for t in thresholds {
        let value: Double?
        switch t.figure {
        case .ratio: value = minimumRatio(t.name)
        case .allocs: value = byName[t.name]?.allocationsPerUnit
        }
        let pass = value.map { $0.isFinite && $0 <= t.maximum } ?? false
        ok = ok && pass
        let shown = value.map { String(format: "%10.4g", $0) } ?? "   missing"
        print(t.name.padding(toLength: width, withPad: " ", startingAt: 0) + " "
              + t.figure.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
              + shown + String(format: " %10.4g  ", t.maximum) + (pass ? "ok" : "REGRESSED"))
    }
    return ok
}
