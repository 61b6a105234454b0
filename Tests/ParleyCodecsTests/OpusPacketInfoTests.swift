import COpus
import Testing
import ParleyCodecs

/// What libopus says about a packet, for cross-checking the Swift inspector.
struct LibopusView: Equatable {
    var count: Int
    var sizes: [Int]
    var payloadOffset: Int

    init?(_ packet: [UInt8]) {
        var toc: UInt8 = 0
        var sizes = [Int16](repeating: 0, count: 48)
        var offset: Int32 = 0
        let r = packet.withUnsafeBufferPointer { p in
            opus_packet_parse(p.baseAddress!, Int32(p.count), &toc, nil, &sizes, &offset)
        }
        guard r > 0 else { return nil }
        count = Int(r)
        self.sizes = sizes.prefix(Int(r)).map(Int.init)
        payloadOffset = Int(offset)
    }
}

func checkAgainstLibopus(_ packet: [UInt8]) -> Bool {
    let lib = packet.isEmpty ? nil : LibopusView(packet)
    var sizes = [Int](repeating: -1, count: 48)
    let swift: OpusPacketInfo?
    do {
        swift = try sizes.withUnsafeMutableBufferPointer { b throws(OpusError) in
            try packet.withUnsafeBytes { raw in
                Result { () throws(OpusError) in try OpusPacketInfo(parsing: raw, frameSizes: b) }
            }.get()
        }
    } catch {
        #expect(error.code == .invalidPacket)
        swift = nil
    }
    guard let lib, let swift else {
        #expect((lib == nil) == (swift == nil), "accept/reject differs for \(packet.prefix(8)) (\(packet.count) bytes)")
        return (lib == nil) == (swift == nil)
    }
    let ok = swift.frameCount == lib.count && Array(sizes.prefix(swift.frameCount)) == lib.sizes
        && swift.payloadOffset == lib.payloadOffset
        && swift.payloadOffset + lib.sizes.reduce(0, +) + swift.paddingLength == packet.count
        && swift.frameCount == Int(packet.withUnsafeBufferPointer { opus_packet_get_nb_frames($0.baseAddress!, Int32($0.count)) })
        && swift.bandwidth.rawValue == packet.withUnsafeBufferPointer { opus_packet_get_bandwidth($0.baseAddress!) }
        && swift.channels == Int(packet.withUnsafeBufferPointer { opus_packet_get_nb_channels($0.baseAddress!) })
        && swift.samplesPerFrameAt48k == Int(packet.withUnsafeBufferPointer { opus_packet_get_samples_per_frame($0.baseAddress!, 48_000) })
        && [8_000, 16_000, 48_000].allSatisfy { rate in
            swift.samples(atSampleRate: rate) == Int(packet.withUnsafeBufferPointer {
                opus_packet_get_nb_samples($0.baseAddress!, Int32($0.count), Int32(rate)) })
        }
    #expect(ok, "inspector and libopus differ on \(packet.prefix(8)) (\(packet.count) bytes)")
    return ok
}

/// Real packets from every application, rate, duration and channel count.
func realPackets() throws -> [[UInt8]] {
    var packets: [[UInt8]] = []
    let speech48 = toInt16(try speech(atRate: 48_000))
    for app in OpusApplication.allCases {
        for channels in [1, 2] {
            for (bitrate, tenths) in [(8_000, 200), (24_000, 25), (32_000, 100), (64_000, 400), (96_000, 600), (128_000, 1200)] {
                var e = try OpusEncoder(sampleRate: 48_000, channels: channels, application: app)
                try e.setBitrate(bitrate)
                let n = 48 * tenths / 10
                var buf = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
                for k in 0..<4 {
                    var pcm = [Int16](repeating: 0, count: n * channels)
                    for i in 0..<n { for c in 0..<channels { pcm[i * channels + c] = speech48[(k * n + i + 20_000) % speech48.count] } }
                    let len = try e.encode(pcm, into: &buf)
                    packets.append(Array(buf[0..<len]))
                }
            }
        }
    }
    return packets
}

@Suite("Opus packet inspector")
struct OpusPacketInfoTests {
    @Test func agreesWithLibopusOnRealPackets() throws {
        let packets = try realPackets()
        #expect(packets.count == 3 * 2 * 6 * 4)
        var codes = Set<Int>(), modes = Set<String>()
        for p in packets {
            #expect(checkAgainstLibopus(p))
            let info = try OpusPacketInfo(parsing: p)
            codes.insert(info.frameCountCode); modes.insert("\(info.mode)")
        }
        #expect(codes.contains(0) && codes.contains(3))   // single frames and multi-frame packets
        #expect(modes == ["silk", "hybrid", "celt"])
    }

    @Test func agreesWithLibopusOnRandomAndMutatedPackets() throws {
        var rng = SplitMix64(state: 0x0_9E5)
        var accepted = 0, total = 0
        // Random short packets with each TOC code, biased towards plausible framing.
        for _ in 0..<20_000 {
            let len = Int(rng.next() % 40)
            var p = (0..<len).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if len > 1, rng.next() % 2 == 0 { p[1] = UInt8(truncatingIfNeeded: rng.next() % 8) | (p[1] & 0xC0) }
            if checkAgainstLibopus(p), !p.isEmpty, LibopusView(p) != nil { accepted += 1 }
            total += 1
        }
        // Real packets with one byte changed, truncated or extended.
        for p in try realPackets() {
            for _ in 0..<20 {
                var q = p
                switch rng.next() % 3 {
                case 0: q[Int(rng.next() % UInt64(q.count))] = UInt8(truncatingIfNeeded: rng.next())
                case 1: q.removeLast(Int(rng.next() % UInt64(q.count)))
                default: q += (0..<Int(rng.next() % 300)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                }
                if checkAgainstLibopus(q), LibopusView(q) != nil { accepted += 1 }
                total += 1
            }
        }
        #expect(accepted > total / 10 && accepted < total)   // both outcomes were exercised
    }

    @Test func describesACode3PacketWithPadding() throws {
        // TOC: config 31 (CELT FB 20 ms), stereo, code 3; VBR + padding, 3 frames;
        // padding 255 -> 254 bytes, then 1 -> 1 byte; lengths 2 and 3; last frame 4 bytes.
        let packet: [UInt8] = [0xFF, 0xC3, 255, 1, 2, 3] + [UInt8](repeating: 7, count: 9) + [UInt8](repeating: 0, count: 255)
        var sizes = [Int](repeating: 0, count: 48)
        let info = try sizes.withUnsafeMutableBufferPointer { b throws(OpusError) in
            try packet.withUnsafeBytes { raw in
                Result { () throws(OpusError) in try OpusPacketInfo(parsing: raw, frameSizes: b) }
            }.get()
        }
        #expect(info.configuration == 31)
        #expect(info.mode == .celt && info.bandwidth == .fullband && info.channels == 2)
        #expect(info.frameCount == 3 && info.hasVariableFrameSizes)
        #expect(info.paddingLength == 255 && info.payloadOffset == 6)
        #expect(Array(sizes.prefix(3)) == [2, 3, 4])
        #expect(info.durationMicroseconds == 60_000 && info.samples(atSampleRate: 16_000) == 960)
        #expect(checkAgainstLibopus(packet))
    }

    @Test func rejectsMalformedFramingWithADescriptiveError() {
        let cases: [([UInt8], String)] = [
            ([], "empty"),
            ([0x03], "frame-count"),
            ([0x03, 0x00], "0 frames"),
            ([0x1B, 0x03], "exceeds 120 ms"),          // SILK 60 ms x 3
            ([0x01, 1, 2, 3], "odd"),
            ([0x02, 0xFD], "second length byte"),
            ([0x02, 9, 1], "exceeds"),
            ([0x03, 0x42, 0xFF], "padding"),
            ([0x03, 0x83, 1, 5, 1], "exceed"),
            ([0x03, 0x03, 1, 2, 3, 4], "multiple of 3"),
            ([0x00] + [UInt8](repeating: 1, count: 1276), "1275"),
        ]
        for (packet, words) in cases {
            do {
                _ = try OpusPacketInfo(parsing: packet)
                Issue.record("accepted \(packet.prefix(6))")
            } catch {
                #expect(error.code == .invalidPacket)
                #expect(error.description.contains(words), "\(error)")
            }
            #expect(checkAgainstLibopus(packet))
        }
    }
}
