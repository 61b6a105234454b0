// JSON string literals for the command-line outputs (detect --format json, room --events).

/// A JSON string literal.
func jsonString(_ s: String) -> String {
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
func jsonString(_ s: String?) -> String {
    s.map { jsonString($0) } ?? "null"
}
