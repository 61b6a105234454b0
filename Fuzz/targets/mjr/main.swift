// libFuzzer target: MJRReader on arbitrary bytes must throw a MediaFileError or read, never crash.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMJR(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard var r = try? MJRReader(bytes: bytes, name: "fuzz") else { return 0 }
    var buffer: [UInt8] = []
    while let p = try? r.read(into: &buffer) {
        precondition(p.length > 0 && p.length <= buffer.count && p.offset < size, "packet outside the input")
    }
    return 0
}
