// Janus recordings (.mjr): the reader on files written here in Janus's format (record.c), and
// their Opus audio through the receive path against the source it was encoded from.

import Foundation
import Testing
@testable import ParleyDetect
import ParleyCodecs
import ParleyMedia

private let speechPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia/speech/speech-16k.wav").path
private let hasSpeech = FileManager.default.fileExists(atPath: speechPath)

/// Writes recordings in Janus's MJR00002 format.
private struct MJRFile {
    var bytes: [UInt8] = Array("MJR00002".utf8)
    /// Byte offsets of the packets' frame headers.
    var packetOffsets: [Int] = []

    init(json: String) {
        let j = Array(json.utf8)
        bytes += [UInt8(j.count >> 8), UInt8(j.count & 0xFF)] + j
    }

    init(kind: String = "a", codec: String = "opus", start: Int64 = 1_765_000_000_000_000) {
        self.init(json: #"{"t":"\#(kind)","c":"\#(codec)","x":{"1":"urn:ietf:params:rtp-hdrext:ssrc-audio-level"},"#
                  + #""s":\#(start - 250_000),"u":\#(start)}"#)
    }

    mutating func append(arrival: UInt32, packet: [UInt8]) {
        packetOffsets.append(bytes.count)
        bytes += Array("MEET".utf8)
        bytes += [UInt8(arrival >> 24), UInt8(arrival >> 16 & 0xFF), UInt8(arrival >> 8 & 0xFF), UInt8(arrival & 0xFF)]
        bytes += [UInt8(packet.count >> 8), UInt8(packet.count & 0xFF)]
        bytes += packet
    }

    func write(_ name: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-mjr-\(UUID().uuidString)-\(name)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }
}

/// An RTP packet (version 2, payload type 111, no extension).
private func rtp(sequence: UInt16, timestamp: UInt32, payload: [UInt8]) -> [UInt8] {
    [0x80, 111, UInt8(sequence >> 8), UInt8(sequence & 0xFF),
     UInt8(timestamp >> 24), UInt8(timestamp >> 16 & 0xFF), UInt8(timestamp >> 8 & 0xFF), UInt8(timestamp & 0xFF),
     0x12, 0x34, 0x56, 0x78] + payload
}

/// The speech sample as 20 ms Opus packets (16 kHz, in-band FEC on), with `silence` seconds
/// of silence before it.
private func speechPackets(silence: Double = 0) throws -> [[UInt8]] {
    var wav = try WAVReader(path: speechPath)
    var samples = [Int16](repeating: 0, count: Int(silence * 16_000))
    var block = [Int16](repeating: 0, count: 4096)
    while true {
        let n = try wav.read(into: &block)
        if n == 0 { break }
        samples += block[0..<n]
    }
    var encoder = try OpusEncoder(sampleRate: 16_000, channels: 1)
    encoder.inbandFEC = true
    try encoder.setExpectedPacketLossPercent(10)
    var packets: [[UInt8]] = []
    var out = [UInt8](repeating: 0, count: 1_500)
    var at = 0
    while at + 320 <= samples.count {
        let n = try encoder.encode(Array(samples[at..<(at + 320)]), into: &out)
        packets.append(Array(out[0..<n]))
        at += 320
    }
    return packets
}

/// A recording of `packets` (20 ms each) written in order; `arrival(k)` gives packet k's
/// arrival, `order` the order in which they are written.
private func recording(_ packets: [[UInt8]], order: [Int]? = nil, arrival: (Int) -> UInt32 = { UInt32($0 * 20) },
                       start: Int64 = 1_765_000_000_000_000, timestampGap: (Int) -> UInt32 = { _ in 0 }) -> MJRFile {
    var f = MJRFile(start: start)
    for k in order ?? Array(packets.indices) {
        f.append(arrival: arrival(k),
                 packet: rtp(sequence: UInt16(truncatingIfNeeded: 1000 + k), timestamp: UInt32(k * 960) &+ timestampGap(k),
                             payload: packets[k]))
    }
    return f
}

private func segments(_ path: String, offset: Double = 0) throws -> OfflineFileAnalysis {
    try OfflineDetector().analyze(OfflineDetectionRequest(path: path, participant: "p", offset: offset))
}

@Suite struct MJRReaderTests {
    @Test func aGoodFileGivesItsHeaderAndEveryPacketWithItsArrival() throws {
        var f = MJRFile()
        f.append(arrival: 0, packet: rtp(sequence: 1, timestamp: 0, payload: [0x78, 1, 2]))
        f.append(arrival: 21, packet: rtp(sequence: 2, timestamp: 960, payload: [0x78, 3]))
        let path = try f.write("good.mjr")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var r = try MJRReader(path: path)
        #expect(r.header == MJRHeader(version: 2, kind: .audio, codec: "opus", createdMicroseconds: 1_764_999_999_750_000,
                                      firstPacketMicroseconds: 1_765_000_000_000_000,
                                      extensions: [1: "urn:ietf:params:rtp-hdrext:ssrc-audio-level"]))
        var buffer: [UInt8] = []
        let a = try #require(try r.read(into: &buffer))
        #expect(a == MJRPacket(offset: f.packetOffsets[0], arrivalMilliseconds: 0, length: 15))
        #expect(Array(buffer[12..<15]) == [0x78, 1, 2])
        let b = try #require(try r.read(into: &buffer))
        #expect(b == MJRPacket(offset: f.packetOffsets[1], arrivalMilliseconds: 21, length: 14))
        #expect(try r.read(into: &buffer) == nil)
        #expect(r.packetsRead == 2)
    }

    @Test func aTruncatedHeaderIsTruncatedAtItsOffset() throws {
        let f = MJRFile()
        #expect(throws: MediaFileError.truncated(path: "h", offset: 8, expected: 2, got: 1)) {
            _ = try MJRReader(bytes: Array(f.bytes[0..<9]), name: "h")
        }
        let jsonLength = Int(f.bytes[8]) << 8 | Int(f.bytes[9])
        #expect(throws: MediaFileError.truncated(path: "h", offset: 10, expected: jsonLength, got: 20)) {
            _ = try MJRReader(bytes: Array(f.bytes[0..<30]), name: "h")
        }
        #expect(throws: MediaFileError.empty(path: "h")) { _ = try MJRReader(bytes: [], name: "h") }
    }

    @Test func aTruncatedPacketIsTruncatedAtItsOffsetAfterTheWholeOnes() throws {
        var f = MJRFile()
        f.append(arrival: 0, packet: rtp(sequence: 1, timestamp: 0, payload: [0x78, 1, 2]))
        f.append(arrival: 20, packet: rtp(sequence: 2, timestamp: 960, payload: [0x78, 3, 4, 5]))
        var r = try MJRReader(bytes: Array(f.bytes.dropLast(5)), name: "t")
        var buffer: [UInt8] = []
        #expect(try r.read(into: &buffer) != nil)
        #expect(throws: MediaFileError.truncated(path: "t", offset: f.packetOffsets[1] + 10, expected: 16, got: 11)) {
            _ = try r.read(into: &buffer)
        }
        // A frame header cut short.
        var s = try MJRReader(bytes: Array(f.bytes[0..<(f.packetOffsets[1] + 6)]), name: "t")
        #expect(try s.read(into: &buffer) != nil)
        #expect(throws: MediaFileError.truncated(path: "t", offset: f.packetOffsets[1], expected: 10, got: 6)) {
            _ = try s.read(into: &buffer)
        }
    }

    @Test func badMagicAndABadPacketPrefixAreCorruptAtTheirOffsets() throws {
        var f = MJRFile()
        f.append(arrival: 0, packet: rtp(sequence: 1, timestamp: 0, payload: [0x78]))
        var wav = f.bytes
        wav.replaceSubrange(0..<8, with: Array("RIFF\0\0\0\0".utf8))
        #expect(throws: MediaFileError.corrupt(path: "m", reason: "not a Janus recording (no MJR00001/MJR00002 magic)", offset: 0)) {
            _ = try MJRReader(bytes: wav, name: "m")
        }
        var bad = f.bytes
        bad[f.packetOffsets[0] + 1] = UInt8(ascii: "X")
        var r = try MJRReader(bytes: bad, name: "m")
        var buffer: [UInt8] = []
        #expect(throws: MediaFileError.corrupt(path: "m", reason: "packet 0 does not start with 'MEET'", offset: f.packetOffsets[0])) {
            _ = try r.read(into: &buffer)
        }
        for json in [#"{"t":"a","c":"opus""#, #"["a"]"#, #"{"t":"a","c":"opus","s":1} x"#, #"{"t":"a","c":"opus","s":"#] {
            #expect(throws: MediaFileError.self) { _ = try MJRReader(bytes: MJRFile(json: json).bytes, name: "j") }
        }
        #expect(throws: MediaFileError.corrupt(path: "j", reason: "the info header has no creation time (\"s\")", offset: 10)) {
            _ = try MJRReader(bytes: MJRFile(json: #"{"t":"a","c":"opus"}"#).bytes, name: "j")
        }
        #expect(throws: MediaFileError.unsupported(path: "j", what: "Janus recording in the pre-0.x format (MEETECHO, no JSON header)")) {
            _ = try MJRReader(bytes: Array("MEETECHO\0\u{5}audio".utf8), name: "j")
        }
    }

    @Test func aWrongCodecAndAVideoRecordingAreUnsupportedForAudio() throws {
        var g711 = MJRFile(codec: "pcmu")
        g711.append(arrival: 0, packet: rtp(sequence: 1, timestamp: 0, payload: [0xFF]))
        let pcmu = try g711.write("pcmu.mjr")
        var vp8 = MJRFile(kind: "v", codec: "vp8")
        vp8.append(arrival: 0, packet: rtp(sequence: 1, timestamp: 0, payload: [0x10]))
        let video = try vp8.write("video.mjr")
        defer { try? FileManager.default.removeItem(atPath: pcmu); try? FileManager.default.removeItem(atPath: video) }

        #expect(throws: MediaFileError.unsupported(path: pcmu, what: "audio codec 'pcmu' in a Janus recording (Opus is decoded)")) {
            _ = try JanusRecordingAudio(path: pcmu)
        }
        #expect(try janusRecordingHeader(path: video)?.kind == .video)
        #expect(try janusRecordingHeader(path: video)?.codec == "vp8")
        #expect(throws: MediaFileError.unsupported(path: video, what: "Janus recording of video (vp8), not audio")) {
            _ = try JanusRecordingAudio(path: video)
        }
        let e = try #require(throws: OfflineDetectionError.self) { _ = try segments(pcmu) }
        #expect(e.kind == .unsupportedFormat)
        #expect(try janusRecordingHeader(path: speechPath) == nil)
    }
}

@Suite(.enabled(if: hasSpeech, "SampleMedia/speech is missing")) struct JanusRecordingAudioTests {
    /// Segment bounds of `a` minus those of `b`, pairwise (nil when their counts differ).
    private func shifts(_ a: OfflineFileAnalysis, _ b: OfflineFileAnalysis, by offset: Double = 0) -> [Double]? {
        let x = a.tracks[0].segments, y = b.tracks[0].segments
        guard x.count == y.count else { return nil }
        return zip(x, y).flatMap { [$0.start - $1.start - offset, $0.end - $1.end - offset] }
    }

    @Test func theOpusAudioDetectsAsItsSourceDoes() throws {
        let f = recording(try speechPackets())
        let path = try f.write("speech.mjr")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let source = try segments(speechPath), decoded = try segments(path)
        #expect(!source.tracks[0].segments.isEmpty)
        let d = try #require(shifts(decoded, source), "\(decoded.tracks[0].segments) vs \(source.tracks[0].segments)")
        #expect(d.allSatisfy { abs($0) <= 0.03 }, "\(d)")
        #expect(decoded.isComplete)
        #expect(abs(decoded.duration - source.duration) < 0.1)
    }

    @Test func reorderedJitteryAndLostPacketsStillDecodeOnTheMediaTimeline() throws {
        let packets = try speechPackets(silence: 1)
        // Pairs swapped every 7th packet, every 23rd lost, arrivals jittered by up to 30 ms.
        var order: [Int] = []
        var k = 0
        while k < packets.count {
            if k % 7 == 0, k + 1 < packets.count { order += [k + 1, k]; k += 2 } else { order.append(k); k += 1 }
        }
        order.removeAll { $0 % 23 == 11 }
        let f = recording(packets, order: order, arrival: { UInt32($0 * 20 + ($0 * 37) % 31) })
        let path = try f.write("jitter.mjr")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let audio = try JanusRecordingAudio(path: path)
        var pcm = [Int16](repeating: 0, count: 1024)
        while try pcm.withUnsafeMutableBufferPointer({ try audio.read(into: $0) }) > 0 {}
        #expect(audio.jitterStatistics.concealedSamples > 0)
        #expect(audio.statistics.packetsBuffered == order.count)
        let source = try segments(speechPath), decoded = try segments(path)
        let d = try #require(shifts(decoded, source, by: 1), "\(decoded.tracks[0].segments) vs \(source.tracks[0].segments)")
        #expect(d.allSatisfy { abs($0) <= 0.03 }, "\(d) \(audio.alignmentInserted) \(audio.alignmentDropped) \(audio.jitterStatistics)")
    }

    @Test func aPauseInTheStreamIsSilenceOfItsLength() throws {
        // The sender stops for 3 s half-way (no packets; the timestamps and arrivals move on).
        let packets = try speechPackets()
        let half = packets.count / 2
        let f = recording(packets, arrival: { UInt32($0 * 20 + ($0 >= half ? 3_000 : 0)) },
                          timestampGap: { $0 >= half ? 3 * 48_000 : 0 })
        let path = try f.write("pause.mjr")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let decoded = try segments(path)
        #expect(abs(decoded.duration - (Double(packets.count) * 0.02 + 3)) < 0.1, "\(decoded.duration)")
        let last = try #require(decoded.tracks[0].segments.last), sourceLast = try #require(try segments(speechPath).tracks[0].segments.last)
        #expect(abs(last.end - sourceLast.end - 3) <= 0.03, "\(last) vs \(sourceLast)")
    }

    @Test func anArrivalHoursAfterItsTimestampIsCorruptAndEndsTheStreamThere() throws {
        let packets = try speechPackets()
        let half = packets.count / 2
        let f = recording(packets, arrival: { UInt32($0 * 20 + ($0 >= half ? 7_200_000 : 0)) })
        let path = try f.write("late.mjr")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let a = try segments(path)
        #expect(!a.isComplete)
        #expect(abs(a.duration - Double(half) * 0.02) < 0.05, "\(a.duration)")
        guard case let .truncated(_, _, reason)? = a.issues.first else {
            Issue.record("no issue: \(a.issues)")
            return
        }
        #expect(reason == "corrupt at byte \(f.packetOffsets[half]): packet \(half) arrives 7200020 ms after the one before, "
                + "its timestamp 20 ms", "\(reason)")
    }

    @Test func aTruncatedRecordingIsAnalysedUpToTheCutAndReportedPartial() throws {
        let f = recording(try speechPackets())
        let cut = f.packetOffsets[f.packetOffsets.count / 2] + 14
        var short = MJRFile(json: "")
        short.bytes = Array(f.bytes[0..<cut])
        let path = try short.write("cut.mjr")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let a = try segments(path)
        #expect(!a.isComplete)
        guard case let .truncated(read, _, reason)? = a.issues.first else {
            Issue.record("no truncation issue: \(a.issues)")
            return
        }
        #expect(abs(read - Double(f.packetOffsets.count / 2) * 0.02) < 0.05, "\(read)")
        let packet = f.packetOffsets[f.packetOffsets.count / 2]
        #expect(reason == "truncated at byte \(packet + 10): 4 of \(f.packetOffsets[f.packetOffsets.count / 2 + 1] - packet - 10) bytes",
                "\(reason)")
    }
}
