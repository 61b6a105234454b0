import Foundation
import Testing
import ParleyMedia

/// `parley echo` over a microphone that hears the conversation's other speakers through a
/// loudspeaker (two reflections, 50 and 75 ms) while its reader talks.
@Suite struct EchoCommandTests {
    private static func read(_ url: URL) throws -> [Int16] {
        var reader = try WAVReader(path: url.path)
        var all: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 4096)
        while case let n = try reader.read(into: &chunk), n > 0 { all += chunk[0..<n] }
        return all
    }

    private static func write(_ samples: [Int16], to url: URL) throws {
        var w = try WAVWriter(path: url.path, format: WAVFormat(sampleRate: 16_000, channels: 1))
        try samples.withUnsafeBufferPointer { try w.write($0) }
        try w.close()
    }

    @Test func theReadersTurnsAreItsTalksAndTheEchoIsCancelled() throws {
        let files = try detectConversationFiles()
        let named = { (name: String) in try Self.read(try #require(files.first { $0.lastPathComponent == name + ".wav" })) }
        let armelle = try named("armelle"), carlo = try named("carlo"), reader = try named("reader")
        let far = zip(armelle, carlo).map { Int16(clamping: Int32($0) + Int32($1)) }
        var mic = reader
        for i in 0..<mic.count {
            let echo = (i >= 800 ? 0.4 * Double(far[i - 800]) : 0) + (i >= 1_200 ? 0.2 * Double(far[i - 1_200]) : 0)
            mic[i] = Int16(clamping: Int(Double(mic[i]) + echo))
        }
        let dir = try detectTemporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let farURL = dir.appendingPathComponent("far.wav"), micURL = dir.appendingPathComponent("mic.wav")
        let out = dir.appendingPathComponent("out.wav"), events = dir.appendingPathComponent("local.jsonl")
        try Self.write(far, to: farURL)
        try Self.write(mic, to: micURL)
        let run = try runDetectCLI(["echo", "--far", farURL.path, "--mic", micURL.path, "--output", out.path, "--events", events.path])
        #expect(run.status == 0, "\(run.stderr)")
        let line = try #require(run.stdout.split(separator: "\n").first { $0.hasPrefix("echo: ERLE ") })
        let erle = try #require(Double(line.split(separator: " ")[2]))
        // Over all the far end's time, its first words (the canceller converging) included.
        #expect(erle >= 25, "\(line)")
        let talks = try interopEvents(events).filter { $0["type"] as? String == "talking" }
        #expect(line.contains(" \(talks.count) talks started"), "\(line)")
        // Both files come from one clock: the drift found is near 0.
        let drift = try #require(line.components(separatedBy: ", clock drift ").last?.split(separator: " ").first)
        #expect(abs(try #require(Double(drift))) <= 10, "\(line)")
        #expect(talks.allSatisfy { $0["participant"] as? String == "local" })
        // The reader's two turns and nothing else: the far end's first words, under the reader's
        // talk, start none.
        let starts = talks.compactMap { $0["start"] as? Double }
        #expect(starts.count == 2, "\(starts)")
        #expect(starts.contains { abs($0 - 0.4) <= 0.2 } && starts.contains { abs($0 - 8.6) <= 0.2 }, "\(starts)")
        let cancelled = try Self.read(out)
        #expect(cancelled.count == mic.count / 320 * 320)
        // armelle's last turn (12.6-15.09 s), the reader silent: at least 25 dB of the echo gone.
        var heard = 0.0, left = 0.0
        for i in (12_600 * 16)..<(15_090 * 16) {
            heard += Double(mic[i]) * Double(mic[i]); left += Double(cancelled[i]) * Double(cancelled[i])
        }
        #expect(10 * log10(heard / max(left, 1)) >= 25)
    }

    @Test func missingFilesAreAUsageError() throws {
        let run = try runDetectCLI(["echo", "--far", "a.wav"])
        #expect(run.status == 2)
        #expect(run.stderr.contains("give --far, --mic and --output"))
    }
}
