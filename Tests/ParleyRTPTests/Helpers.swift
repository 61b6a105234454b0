import ParleyRTP

/// Parses `bytes` and returns what `body` reads from the view (the view must not escape).
func parsed<R>(_ bytes: [UInt8], _ body: (RTPPacketView) -> R) throws(RTPError) -> R {
    let r: Result<R, RTPError> = bytes.withUnsafeBytes { raw in
        do throws(RTPError) { return .success(body(try RTPPacketView(parsing: raw))) } catch { return .failure(error) }
    }
    return try r.get()
}

/// The parse error for `bytes`, or nil when they parse.
func parseError(_ bytes: [UInt8]) -> RTPError? {
    do { _ = try parsed(bytes) { _ in 0 }; return nil } catch { return error }
}

func hex(_ s: String) -> [UInt8] {
    let digits = s.filter { $0.isHexDigit }
    var out: [UInt8] = []
    var i = digits.startIndex
    while i < digits.endIndex {
        let j = digits.index(i, offsetBy: 2)
        out.append(UInt8(digits[i..<j], radix: 16)!)
        i = j
    }
    return out
}
