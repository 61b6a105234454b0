// libFuzzer target: Y4MReader on arbitrary bytes must throw a MediaFileError or read, never crash.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzY4M(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard var r = try? Y4MReader(bytes: bytes, name: "fuzz") else { return 0 }
    // Allocate a frame only when the input could hold one (keeps each run fast).
    guard r.header.frameByteCount <= size else { return 0 }
    guard var frame = try? VideoFrame(width: r.header.width, height: r.header.height) else { return 0 }
    while let more = try? r.read(into: &frame), more {}
    return 0
}
