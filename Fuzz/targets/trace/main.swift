// libFuzzer target: the network-trace CSV reader (`seq,send_ms,arrival_ms`).
// Property: any input either throws a TraceError or parses to rows that format and parse
// back to the same rows (times are kept to the microsecond the writer prints).

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let rows = try? TraceFile.parse(bytes) else { return 0 }
    let text = TraceFile.format(rows)
    guard let again = try? TraceFile.parse(text) else { preconditionFailure("formatted trace does not parse") }
    precondition(again.count == rows.count)
    for (a, b) in zip(rows, again) {
        precondition(a.sequence == b.sequence)
        precondition((a.arrivalMs == nil) == (b.arrivalMs == nil))
        if abs(a.sendMs) < 1e12 { precondition(abs(a.sendMs - b.sendMs) <= 0.0005 + abs(a.sendMs) * 1e-12) }
    }
    return 0
}
