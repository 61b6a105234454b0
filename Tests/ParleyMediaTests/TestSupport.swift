import Foundation
import ParleyMedia

/// The package's SampleMedia directory, found from this file's path.
let sampleMedia: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("SampleMedia").path

/// A fresh temporary directory for one test; the caller removes it when the test ends
/// (`defer { try? FileManager.default.removeItem(atPath: dir) }`).
func temporaryDirectory() -> String {
    let dir = FileManager.default.temporaryDirectory
        .appendingPathComponent("parley-media-\(UUID().uuidString)").path
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

/// A deterministic pseudo-random generator (xorshift64*) so tests are repeatable.
struct TestRandom {
    var state: UInt64
    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }
    mutating func next() -> UInt64 {
        state ^= state >> 12; state ^= state << 25; state ^= state >> 27
        return state &* 2_685_821_657_736_338_717
    }
    mutating func int(in range: ClosedRange<Int64>) -> Int64 {
        let span = UInt64(range.upperBound - range.lowerBound) &+ 1
        return range.lowerBound + Int64(bitPattern: span == 0 ? next() : next() % span)
    }
}

/// Captures the typed error a throwing expression raises.
func mediaError(_ body: () throws -> Void) -> MediaFileError? {
    do { try body(); return nil } catch let e as MediaFileError { return e } catch { return nil }
}

/// Writes `samples` as a WAV into memory and returns the bytes.
func wavBytes(_ format: WAVFormat, _ samples: [Float]) throws -> [UInt8] {
    let sink = MemoryByteSink()
    var w = try WAVWriter(sink: sink, format: format)
    try w.write(samples)
    try w.close()
    return sink.bytes
}
