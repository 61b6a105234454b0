// libFuzzer target: WAVReader on arbitrary bytes must throw a MediaFileError or read, never crash.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWAV(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard var floats = try? WAVReader(bytes: bytes, name: "fuzz") else { return 0 }
    floats.nonFinitePolicy = .replaceWithZero
    var f = [Float](repeating: 0, count: floats.format.channels * 37)
    while let n = try? floats.read(into: &f), n > 0 {}
    if var ints = try? WAVReader(bytes: bytes, name: "fuzz") {
        var s = [Int16](repeating: 0, count: ints.format.channels * 53)
        while let n = try? ints.read(into: &s), n > 0 {}
    }
    return 0
}
