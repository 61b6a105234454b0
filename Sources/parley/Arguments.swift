/// A small, strict argument scanner shared by the subcommands.
///
/// Options are `--name value` or `--name=value`; flags are `--name`. Everything else is a
/// positional argument; `--` ends option parsing. Unknown options are a usage error.
struct ArgumentScanner {
    /// A usage error, printed with the command's name and exit status 2.
    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    private(set) var options: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    /// Scans `args`. `valued` lists options that take a value, `flagNames` those that do not.
    init(_ args: [String], valued: Set<String>, flagNames: Set<String>) throws(UsageError) {
        var i = 0
        var onlyPositionals = false
        while i < args.count {
            let a = args[i]
            i += 1
            if onlyPositionals || !a.hasPrefix("--") || a == "-" {
                positionals.append(a)
                continue
            }
            if a == "--" { onlyPositionals = true; continue }
            var name = String(a.dropFirst(2))
            var inlineValue: String?
            if let eq = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if valued.contains(name) {
                if let v = inlineValue {
                    options[name, default: []].append(v)
                } else {
                    guard i < args.count else { throw UsageError(description: "option --\(name) needs a value") }
                    options[name, default: []].append(args[i])
                    i += 1
                }
            } else if flagNames.contains(name) {
                guard inlineValue == nil else { throw UsageError(description: "flag --\(name) takes no value") }
                flags.insert(name)
            } else {
                throw UsageError(description: "unknown option --\(name)")
            }
        }
    }

    /// The last value given for `name`, if any.
    func value(_ name: String) -> String? { options[name]?.last }

    /// Whether the flag `name` was given.
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// The value of `name` parsed as an integer in `range`, or `defaultValue` when absent.
    func int(_ name: String, default defaultValue: Int, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        guard let s = value(name) else { return defaultValue }
        guard let v = Int(s), range.contains(v) else {
            throw UsageError(description: "--\(name) must be an integer in \(range.lowerBound)...\(range.upperBound), got '\(s)'")
        }
        return v
    }

    /// The value of `name` parsed as a finite number in `range`, or `defaultValue` when absent.
    func double(_ name: String, default defaultValue: Double, in range: ClosedRange<Double>) throws(UsageError) -> Double {
        guard let s = value(name) else { return defaultValue }
        guard let v = Double(s), v.isFinite, range.contains(v) else {
            throw UsageError(description: "--\(name) must be a number in \(range.lowerBound)...\(range.upperBound), got '\(s)'")
        }
        return v
    }
}

/// Parses `HOST:PORT` (a `--to` argument).
func parseHostPort(_ s: String) -> (String, UInt16)? {
    guard let colon = s.lastIndex(of: ":") else { return nil }
    let host = String(s[..<colon])
    guard !host.isEmpty, let port = UInt16(s[s.index(after: colon)...]), port > 0 else { return nil }
    return (host, port)
}
