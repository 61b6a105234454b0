// JSON string literals for the package's JSON outputs: the parley CLI (detect --format json,
// room --events, report) and parley-bench --json; their backslash escapes also serve the TSV
// fields of `parley detect --output-dir`. Package-visible, not public API.

/// The backslash escape of `c` that JSON strings and `parley detect`'s TSV fields share
/// (backslash, newline, carriage return, tab), or nil.
package func backslashEscape(_ c: Unicode.Scalar) -> String? {
    switch c {
    case "\\": "\\\\"
    case "\n": "\\n"
    case "\r": "\\r"
    case "\t": "\\t"
    default: nil
    }
}

/// A JSON string literal.
package func jsonString(_ s: String) -> String {
    var out = "\""
    for ch in s.unicodeScalars {
        if ch == "\"" {
            out += "\\\""
        } else if let escaped = backslashEscape(ch) {
            out += escaped
        } else if ch.value < 0x20 {
            let hex = String(ch.value, radix: 16)
            out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        } else {
            out.unicodeScalars.append(ch)
        }
    }
    return out + "\""
}

/// A JSON string literal, or `null` for nil.
package func jsonString(_ s: String?) -> String {
    s.map { jsonString($0) } ?? "null"
}
