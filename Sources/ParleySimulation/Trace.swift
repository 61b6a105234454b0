// Network traces: one row per packet, and their CSV file format.

#if canImport(ParleyCore)
import ParleyCore
#endif

/// One row of a network trace: a packet's 16-bit RTP sequence number, its send (media) time
/// and its arrival time on the receiver's clock, or `nil` when it was lost.
public struct TraceRow: Sendable, Hashable {
    /// RTP sequence number (wraps at 65 536).
    public var sequence: UInt16
    /// Media time of the packet, ms (its RTP timestamp in ms).
    public var sendMs: Double
    /// Arrival on the receiver's clock, ms; `nil` for a lost packet.
    public var arrivalMs: Double?

    /// A row for packet `sequence` sent at `sendMs` and arriving at `arrivalMs` (`nil`: lost).
    public init(sequence: UInt16, sendMs: Double, arrivalMs: Double?) {
        self.sequence = sequence; self.sendMs = sendMs; self.arrivalMs = arrivalMs
    }
}

/// A malformed trace file, with the 1-based line it was found on.
public enum TraceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The first line is not `seq,send_ms,arrival_ms`.
    case badHeader(found: String)
    /// A row does not have exactly three comma-separated fields.
    case wrongFieldCount(line: Int, count: Int)
    /// `seq` is not an integer in 0...65535.
    case badSequence(line: Int, text: String)
    /// A time is not a finite decimal number (or `send_ms` is empty).
    case badTime(line: Int, field: String, text: String)
    /// The file is not UTF-8 text.
    case notText

    /// A sentence for the user, with the line number where there is one.
    public var description: String {
        switch self {
        case .badHeader(let found): return "trace header must be 'seq,send_ms,arrival_ms', found '\(found.prefix(80))'"
        case .wrongFieldCount(let line, let count): return "trace line \(line): expected 3 fields, found \(count)"
        case .badSequence(let line, let text): return "trace line \(line): seq must be an integer 0...65535, found '\(text.prefix(40))'"
        case .badTime(let line, let field, let text): return "trace line \(line): \(field) must be a finite number, found '\(text.prefix(40))'"
        case .notText: return "trace is not UTF-8 text"
        }
    }
}

/// Reads and writes trace CSV: header `seq,send_ms,arrival_ms`, one row per packet in send
/// order, `arrival_ms` empty for a lost packet. Blank lines and a trailing newline are
/// accepted; `\r\n` line ends too. Everything else malformed is a ``TraceError``.
public enum TraceFile {
    /// The header line.
    public static let header = "seq,send_ms,arrival_ms"

    /// Parses trace CSV bytes.
    public static func parse(_ bytes: [UInt8]) throws(TraceError) -> [TraceRow] {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notText }
        return try parse(text)
    }

    /// Parses trace CSV text.
    public static func parse(_ text: String) throws(TraceError) -> [TraceRow] {
        var rows: [TraceRow] = []
        var lineNumber = 0
        var sawHeader = false
        for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            var line = Substring(raw)
            if line.hasSuffix("\r") { line = line.dropLast() }
            if !sawHeader {
                let h = line.hasPrefix("\u{FEFF}") ? line.dropFirst() : line
                guard h.trimmingSpaces() == header else { throw .badHeader(found: String(h)) }
                sawHeader = true
                continue
            }
            if line.trimmingSpaces().isEmpty { continue }
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count == 3 else { throw .wrongFieldCount(line: lineNumber, count: fields.count) }
            let seqText = fields[0].trimmingSpaces()
            guard let seq = UInt16(seqText) else { throw .badSequence(line: lineNumber, text: String(seqText)) }
            let sendText = fields[1].trimmingSpaces()
            guard let send = Double(sendText), send.isFinite else {
                throw .badTime(line: lineNumber, field: "send_ms", text: String(sendText))
            }
            let arrivalText = fields[2].trimmingSpaces()
            var arrival: Double?
            if !arrivalText.isEmpty {
                guard let a = Double(arrivalText), a.isFinite else {
                    throw .badTime(line: lineNumber, field: "arrival_ms", text: String(arrivalText))
                }
                arrival = a
            }
            rows.append(TraceRow(sequence: seq, sendMs: send, arrivalMs: arrival))
        }
        guard sawHeader else { throw .badHeader(found: "") }
        return rows
    }

    /// Formats rows as trace CSV (times with up to three decimals).
    public static func format(_ rows: [TraceRow]) -> String {
        var out = header + "\n"
        out.reserveCapacity(rows.count * 24)
        for r in rows {
            out += "\(r.sequence),\(formatMs(r.sendMs)),"
            if let a = r.arrivalMs { out += formatMs(a) }
            out += "\n"
        }
        return out
    }

    /// A time in ms with at most three decimals, without trailing zeros.
    public static func formatMs(_ x: Double) -> String {
        let scaled = (x * 1000).rounded()
        if abs(scaled) < 9e15 {
            let i = Int64(scaled)
            let sign = i < 0 ? "-" : ""
            let a = i.magnitude
            let whole = a / 1000, frac = a % 1000
            if frac == 0 { return "\(sign)\(whole)" }
            var f = String(frac)
            while f.count < 3 { f = "0" + f }
            while f.hasSuffix("0") { f.removeLast() }
            return "\(sign)\(whole).\(f)"
        }
        return "\(x)"
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var s = self
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return s
    }
}
