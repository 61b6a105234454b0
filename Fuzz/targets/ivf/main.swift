// libFuzzer target: IVFReader on arbitrary bytes must throw a MediaFileError or read, never crash.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzIVF(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard var r = try? IVFReader(bytes: bytes, name: "fuzz") else { return 0 }
    var buffer: [UInt8] = []
    while (try? r.read(into: &buffer)) != nil {}
    return 0
}
