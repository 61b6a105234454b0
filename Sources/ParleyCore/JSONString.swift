// JSON string literals for the package's JSON outputs: the parley CLI (detect --format json,
// room --events, report) and parley-bench --json. Package-visible, not public API.

/// A JSON string literal.
package func jsonString(_ s: String) -> String {
    var out = "\""
    for ch in s.unicodeScalars {
        switch ch {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            if ch.value < 0x20 {
                let hex = String(ch.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            } else {
                out.unicodeScalars.append(ch)
            }
        }
    }
    return out + "\""
}

/// A JSON string literal, or `null` for nil.
package func jsonString(_ s: String?) -> String {
    s.map { jsonString($0) } ?? "null"
}
