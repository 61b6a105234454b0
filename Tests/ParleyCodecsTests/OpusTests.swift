import Foundation
import Testing
import ParleyCodecs

/// Encodes `signal` in frames of `frame` samples; returns the packets.
func encodePackets(_ encoder: inout OpusEncoder, _ signal: [Int16], frame: Int) throws -> [[UInt8]] {
    var packets: [[UInt8]] = []
    var buffer = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
    var start = 0
    while start + frame * encoder.channels <= signal.count {
        let n = try encoder.encode(Array(signal[start..<start + frame * encoder.channels]), into: &buffer)
        packets.append(Array(buffer[0..<n]))
        start += frame * encoder.channels
    }
    return packets
}

/// Decodes `packets` back to back; lost ones (empty) are concealed.
func decodePackets(_ decoder: inout OpusDecoder, _ packets: [[UInt8]], frame: Int) throws -> [Float] {
    var out: [Float] = []
    var pcm = [Float](repeating: 0, count: frame * decoder.channels)
    for p in packets {
        let n = try decoder.decode(p, into: &pcm)
        #expect(n == frame)
        out += pcm[0..<n * decoder.channels]
    }
    return out
}

@Suite("Opus encoder and decoder")
struct OpusTests {
    static let rates = [8_000, 12_000, 16_000, 24_000, 48_000]

    @Test("A speech round trip reproduces the waveform after aligning by the lookahead", arguments: rates)
    func speechRoundTripCorrelates(rate: Int) throws {
        let input = try speech(atRate: rate)
        var encoder = try OpusEncoder(sampleRate: rate, channels: 1, application: .audio)
        try encoder.setBitrate(rate >= 24_000 ? 64_000 : 32_000)
        try encoder.setComplexity(10)
        var decoder = try OpusDecoder(sampleRate: rate, channels: 1)
        let frame = rate / 50
        let packets = try encodePackets(&encoder, toInt16(input), frame: frame)
        let output = try decodePackets(&decoder, packets, frame: frame)
        let lookahead = encoder.lookahead
        #expect(lookahead > 0 && lookahead < rate / 50)
        let n = output.count - lookahead
        let r = correlation(input[0..<n], output[lookahead..<lookahead + n])
        // Aligning by the lookahead is the best alignment: one sample off is worse.
        let off = correlation(input[0..<n - 1], output[lookahead + 1..<lookahead + n])
        print("opus round trip \(rate) Hz, \(encoder.bitrate) bit/s, lookahead \(lookahead): correlation \(r)")
        #expect(r >= 0.9)
        #expect(r > off)
    }

    @Test("Every frame duration from 2.5 to 120 ms encodes and decodes at every rate", arguments: rates)
    func everyFrameDurationWorks(rate: Int) throws {
        var encoder = try OpusEncoder(sampleRate: rate, channels: 2, application: .audio)
        var decoder = try OpusDecoder(sampleRate: rate, channels: 2)
        var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
        var pcm = [Int16](repeating: 0, count: 2 * OpusDecoder.maxSamplesPerChannel(sampleRate: rate))
        for tenthsOfMs in [25, 50, 100, 200, 400, 600, 800, 1000, 1200] {
            let n = rate * tenthsOfMs / 10_000
            let input = (0..<2 * n).map { Int16(8000 * sin(Double($0 / 2) * 0.05)) }
            let bytes = try encoder.encode(input, into: &packet)
            let info = try OpusPacketInfo(parsing: Array(packet[0..<bytes]))
            #expect(info.samples(atSampleRate: rate) == n)
            #expect(info.durationMicroseconds == tenthsOfMs * 100)
            #expect(try decoder.decode(Array(packet[0..<bytes]), into: &pcm) == n)
            #expect(decoder.lastPacketDuration == n)
        }
    }

    @Test func restrictedLowDelayHasTheShortestLookahead() throws {
        let low = try OpusEncoder(sampleRate: 48_000, channels: 1, application: .restrictedLowDelay)
        let voip = try OpusEncoder(sampleRate: 48_000, channels: 1, application: .voip)
        let lowLookahead = low.lookahead, voipLookahead = voip.lookahead, app = low.application
        #expect(lowLookahead == 120)           // 2.5 ms
        #expect(voipLookahead > lowLookahead)
        #expect(app == .restrictedLowDelay)
    }

    @Test func everySettingReadsBackWhatWasSet() throws {
        var e = try OpusEncoder(sampleRate: 48_000, channels: 2, application: .voip)
        for b in [6_000, 24_000, 32_000, 128_000, 510_000] { try e.setBitrate(b); #expect(e.bitrate == b) }
        for m in OpusBitrateMode.allCases { e.bitrateMode = m; #expect(e.bitrateMode == m) }
        for c in 0...10 { try e.setComplexity(c); #expect(e.complexity == c) }
        e.inbandFEC = true; #expect(e.inbandFEC == true)
        e.inbandFEC = false; #expect(e.inbandFEC == false)
        for p in [0, 1, 15, 100] { try e.setExpectedPacketLossPercent(p); #expect(e.expectedPacketLossPercent == p) }
        e.dtx = true; #expect(e.dtx == true)
        e.dtx = false; #expect(e.dtx == false)
        for s in OpusSignal.allCases { e.signal = s; #expect(e.signal == s) }
        for b in OpusBandwidth.allCases { e.maxBandwidth = b; #expect(e.maxBandwidth == b) }
        var d = try OpusDecoder(sampleRate: 48_000, channels: 2)
        try d.setGainQ8dB(-512); #expect(d.gainQ8dB == -512)
        #expect(d.bandwidth == nil)
    }

    @Test func aSettingOutOfRangeThrowsAndLeavesTheSettingUnchanged() throws {
        var e = try OpusEncoder(sampleRate: 48_000, channels: 1, application: .voip)
        try e.setBitrate(32_000)
        try e.setComplexity(5)
        try e.setExpectedPacketLossPercent(10)
        for b in [499, 512_001, -1] {
            #expect(throws: OpusError.self) { try e.setBitrate(b) }
        }
        for c in [-1, 11] {
            #expect(throws: OpusError.self) { try e.setComplexity(c) }
        }
        for p in [-1, 101] {
            #expect(throws: OpusError.self) { try e.setExpectedPacketLossPercent(p) }
        }
        do {
            try e.setBitrate(600_000)
            Issue.record("bitrate 600000 was accepted")
        } catch {
            #expect(error.code == .badArgument && error.message.contains("600000"))
        }
        #expect(e.bitrate == 32_000 && e.complexity == 5 && e.expectedPacketLossPercent == 10)
        try e.setBitrate(500); try e.setBitrate(512_000)
        try e.setComplexity(0); try e.setComplexity(10)
        try e.setExpectedPacketLossPercent(0); try e.setExpectedPacketLossPercent(100)

        var d = try OpusDecoder(sampleRate: 48_000, channels: 1)
        try d.setGainQ8dB(256)
        for g in [-32_769, 32_768] {
            #expect(throws: OpusError.self) { try d.setGainQ8dB(g) }
        }
        #expect(d.gainQ8dB == 256)
    }

    @Test func encodingAFrameOfAnotherFormatThrows() throws {
        var e = try OpusEncoder(sampleRate: 48_000, channels: 1, application: .voip)
        var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
        let wrongRate = AudioFrame<Int16>(format: try AudioFormat(sampleRate: 16_000, channels: 1), samplesPerChannel: 320)
        let wrongChannels = AudioFrame<Int16>(format: try AudioFormat(sampleRate: 48_000, channels: 2), samplesPerChannel: 960)
        for frame in [wrongRate, wrongChannels] {
            do {
                _ = try e.encode(frame, into: &packet)
                Issue.record("a frame of format \(frame.format) was encoded")
            } catch {
                #expect(error.code == .badArgument && error.message.contains("does not match the encoder"))
            }
        }
        let good = AudioFrame<Int16>(format: try AudioFormat(sampleRate: 48_000, channels: 1), samplesPerChannel: 960)
        #expect(try e.encode(good, into: &packet) > 0)
    }

    @Test func maxBandwidthLimitsTheCodedBandwidth() throws {
        var e = try OpusEncoder(sampleRate: 48_000, channels: 1, application: .audio)
        e.maxBandwidth = .wideband
        try e.setBitrate(64_000)
        let input = toInt16(try speech(atRate: 48_000))
        let packets = try encodePackets(&e, Array(input.prefix(48_000)), frame: 960)
        for p in packets { #expect(try OpusPacketInfo(parsing: p).bandwidth <= .wideband) }
        var d = try OpusDecoder(sampleRate: 48_000, channels: 1)
        _ = try decodePackets(&d, packets, frame: 960)
        #expect(d.bandwidth.map { $0 <= .wideband } == true)
    }

    @Test func cbrPacketsHaveConstantSize() throws {
        var e = try OpusEncoder(sampleRate: 48_000, channels: 1, application: .audio)
        e.bitrateMode = .cbr
        try e.setBitrate(64_000)
        let packets = try encodePackets(&e, toInt16(try speech(atRate: 48_000)), frame: 960)
        #expect(Set(packets.map(\.count)) == [64_000 / 8 / 50])
    }

    @Test func packetLossConcealmentReturnsAFullFrame() throws {
        let input = toInt16(try speech(atRate: 48_000))
        var e = try OpusEncoder(sampleRate: 48_000, channels: 1)
        var d = try OpusDecoder(sampleRate: 48_000, channels: 1)
        let packets = try encodePackets(&e, input, frame: 960)
        var pcm = [Int16](repeating: 0, count: 960)
        for p in packets.prefix(40) { _ = try d.decode(p, into: &pcm) }
        var concealed = [Int16](repeating: 0, count: 960)
        let n = try concealed.withUnsafeMutableBufferPointer { b throws(OpusError) in try d.concealLoss(into: b) }
        #expect(n == 960)
        #expect(concealed.contains { $0 != 0 })   // continues the voice, not silence
        // An empty packet through decode() conceals too, filling the whole buffer.
        var short = [Float](repeating: .nan, count: 480)
        #expect(try d.decode([], into: &short) == 480)
        #expect(short.allSatisfy { $0.isFinite })
    }

    @Test func fecRecoversALostPacketBetterThanConcealment() throws {
        let rate = 16_000, frame = 320
        let input = try speech(atRate: rate)
        var e = try OpusEncoder(sampleRate: rate, channels: 1, application: .voip)
        try e.setBitrate(32_000)
        e.inbandFEC = true
        try e.setExpectedPacketLossPercent(20)
        let packets = try encodePackets(&e, toInt16(input), frame: frame)
        let lookahead = e.lookahead
        // Lose every 7th packet (not the first ones).
        let lost = Set(stride(from: 10, to: packets.count - 1, by: 7))
        var plc = try OpusDecoder(sampleRate: rate, channels: 1)
        var fec = try OpusDecoder(sampleRate: rate, channels: 1)
        var plcOut = [Float](repeating: 0, count: packets.count * frame)
        var fecOut = plcOut
        var counts: [Int] = []
        try plcOut.withUnsafeMutableBufferPointer { (po) in
            try fecOut.withUnsafeMutableBufferPointer { (fo) in
                for (i, p) in packets.enumerated() {
                    let ps = UnsafeMutableBufferPointer(rebasing: po[i * frame..<(i + 1) * frame])
                    let fs = UnsafeMutableBufferPointer(rebasing: fo[i * frame..<(i + 1) * frame])
                    if lost.contains(i) {
                        counts.append(try plc.concealLoss(into: ps))
                        try packets[i + 1].withUnsafeBytes { (next) in
                            counts.append(try fec.recoverLost(from: next, into: fs))
                        }
                    } else {
                        try p.withUnsafeBytes { (raw) in
                            counts.append(try plc.decode(raw, into: ps))
                            counts.append(try fec.decode(raw, into: fs))
                        }
                    }
                }
            }
        }
        #expect(counts.allSatisfy { $0 == frame })
        var plcError = 0.0, fecError = 0.0
        for i in lost {
            for k in i * frame..<(i + 1) * frame where k + lookahead < plcOut.count && k < input.count {
                let x = Double(input[k])
                plcError += (Double(plcOut[k + lookahead]) - x) * (Double(plcOut[k + lookahead]) - x)
                fecError += (Double(fecOut[k + lookahead]) - x) * (Double(fecOut[k + lookahead]) - x)
            }
        }
        print("opus loss of \(lost.count) packets: squared error PLC \(plcError), FEC \(fecError)")
        #expect(fecError < plcError * 0.8)
    }

    @Test func invalidRatesAndChannelCountsThrow() {
        for (rate, channels) in [(44_100, 1), (96_000, 1), (0, 1), (48_000, 0), (48_000, 3), (16_000, -1)] {
            #expect(throws: OpusError.self) { _ = try OpusEncoder(sampleRate: rate, channels: channels) }
            do {
                _ = try OpusDecoder(sampleRate: rate, channels: channels)
                Issue.record("decoder accepted \(rate) Hz \(channels) ch")
            } catch {
                #expect(error.code == .badArgument)
                #expect(error.operation == "opus_decoder_create")
                #expect(error.message.contains("invalid argument"))
            }
        }
    }

    @Test func invalidFrameSizesThrow() throws {
        var e = try OpusEncoder(sampleRate: 48_000, channels: 2)
        var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
        for count in [0, 1, 959, 961 * 2, 1440 * 2, 5761 * 2, 11_520 * 2] {
            do {
                _ = try e.encode([Int16](repeating: 0, count: count), into: &packet)
                Issue.record("encoder accepted \(count) samples")
            } catch {
                #expect(error.code == .badArgument)
            }
        }
        var tiny = [UInt8]()
        #expect(throws: OpusError.self) { _ = try e.encode([Int16](repeating: 0, count: 1920), into: &tiny) }
    }

    @Test func corruptPacketsThrowInvalidPacket() throws {
        var d = try OpusDecoder(sampleRate: 48_000, channels: 1)
        var pcm = [Int16](repeating: 0, count: 5760)
        let corrupt: [[UInt8]] = [
            [0x03],                       // code 3 without its count byte
            [0x03, 0x00],                 // code 3 with zero frames
            [0x01, 1, 2, 3],              // code 1 with an odd payload
            [0x02, 0xFC],                 // code 2 with a truncated two-byte length
            [0x02, 200, 1, 2],            // code 2 whose first frame overruns the packet
            [0xFB, 0x31] + [UInt8](repeating: 0, count: 49),  // 49 x 20 ms > 120 ms
            [0x03, 0x41, 0xFF],           // padding that runs past the end
            [0x00] + [UInt8](repeating: 0, count: 1276),       // frame longer than 1275 bytes
        ]
        for p in corrupt {
            do {
                _ = try d.decode(p, into: &pcm)
                Issue.record("decoder accepted \(p.prefix(4))")
            } catch {
                #expect(error.code == .invalidPacket)
                #expect(error.operation == "opus_decode")
            }
            #expect(throws: OpusError.self) { _ = try OpusPacketInfo(parsing: p) }
        }
        // A buffer too small for the packet's duration is its own error.
        var e = try OpusEncoder(sampleRate: 48_000, channels: 1)
        var packet = [UInt8](repeating: 0, count: 4000)
        let n = try e.encode([Int16](repeating: 0, count: 960), into: &packet)
        var small = [Int16](repeating: 0, count: 480)
        do {
            _ = try d.decode(Array(packet[0..<n]), into: &small)
            Issue.record("decoded 20 ms into 10 ms")
        } catch {
            #expect(error.code == .bufferTooSmall)
        }
    }

    @Test func nonFiniteFloatSamplesAreRejectedAndTheEncoderContinues() throws {
        var e = try OpusEncoder(sampleRate: 48_000, channels: 1)
        var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
        for bad: Float in [.nan, .infinity, -.infinity, .signalingNaN] {
            var frame = [Float](repeating: 0.1, count: 960)
            frame[123] = bad
            do {
                _ = try e.encode(frame, into: &packet)
                Issue.record("encoder accepted \(bad)")
            } catch {
                #expect(error.code == .badArgument)
                #expect(error.message.contains("index 123"))
            }
        }
        let n = try e.encode([Float](repeating: 0.1, count: 960), into: &packet)
        #expect(n > 0)
    }

    @Test func stereoRoundTripKeepsChannelsApart() throws {
        let mono = try speech(atRate: 48_000)
        // Left: speech; right: the same speech inverted and halved.
        var stereo = [Int16](repeating: 0, count: 2 * mono.count)
        for i in mono.indices {
            stereo[2 * i] = Int16(clampingFloat: mono[i])
            stereo[2 * i + 1] = Int16(clampingFloat: -0.5 * mono[i])
        }
        var e = try OpusEncoder(sampleRate: 48_000, channels: 2, application: .audio)
        try e.setBitrate(128_000)
        var d = try OpusDecoder(sampleRate: 48_000, channels: 2)
        let out = try decodePackets(&d, try encodePackets(&e, stereo, frame: 960), frame: 960)
        let la = e.lookahead
        let frames = out.count / 2 - la
        let left = (0..<frames).map { out[2 * ($0 + la)] }, right = (0..<frames).map { out[2 * ($0 + la) + 1] }
        #expect(correlation(mono[0..<frames], left[...]) > 0.9)
        #expect(correlation(mono[0..<frames], right[...]) < -0.9)
    }
}

/// A caller's own sample type: the codec wrappers refuse it with a typed error.
private struct OtherSample: AudioSample {
    var value: Float
    static var silence: OtherSample { OtherSample(value: 0) }
    var floatValue: Float { value }
    init(value: Float) { self.value = value }
    init(clampingFloat value: Float) { self.value = value }
}

@Test func sampleTypesOtherThanInt16AndFloatAreErrors() throws {
    var enc = try OpusEncoder(sampleRate: 48_000, channels: 1, application: .voip)
    var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
    #expect(throws: OpusError.self) { try enc.encode([OtherSample](repeating: .silence, count: 960), into: &packet) }
    do {
        _ = try enc.encode([OtherSample](repeating: .silence, count: 960), into: &packet)
    } catch {
        #expect(error.code == .badArgument && error.message.contains("OtherSample"))
    }
    var dec = try OpusDecoder(sampleRate: 48_000, channels: 1)
    let good = try enc.encode([Float](repeating: 0, count: 960), into: &packet)
    var out = [OtherSample](repeating: .silence, count: 960)
    #expect(throws: OpusError.self) { try dec.decode(Array(packet[0..<good]), into: &out) }
}

@Test func frameSizeBuffersUnder48ElementsAreErrors() {
    let packet: [UInt8] = [0x78, 0x01, 0x02]
    var sizes = [Int](repeating: 0, count: 10)
    do {
        _ = try sizes.withUnsafeMutableBufferPointer { b throws(OpusError) in
            try packet.withUnsafeBytes { raw in
                Result { () throws(OpusError) in try OpusPacketInfo(parsing: raw, frameSizes: b) }
            }.get()
        }
        Issue.record("a 10-element frameSizes buffer was accepted")
    } catch {
        #expect(error.code == .badArgument && error.message == "frameSizes holds 10 elements, fewer than 48")
    }
}
