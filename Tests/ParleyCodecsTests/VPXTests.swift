import CVPX
import Foundation
import Testing
import ParleyCodecs

@Suite("VP8 and VP9 encoder and decoder")
struct VPXTests {
    @Test("A round trip of the sample clip at 500 kbit/s keeps luma PSNR at 30 dB or more", arguments: VPXCodec.allCases)
    func roundTripKeepsLumaPSNR(codec: VPXCodec) throws {
        let frames = try sampleVideo()
        let config = VPXEncoderConfiguration(codec: codec, width: frames[0].width, height: frames[0].height,
                                             framesPerSecond: 30, targetBitrateKbps: 500)
        var encoder = try VPXEncoder(config)
        var decoder = try VPXDecoder(codec: codec)
        var packet = VPXPacket()
        var decoded = try VideoFrame(width: 16, height: 16)
        var psnr = 0.0, bytes = 0
        for (i, f) in frames.enumerated() {
            #expect(try encoder.encode(f, into: &packet))
            #expect(packet.timestamp == f.timestamp)
            #expect(packet.isKeyframe == (i == 0))
            bytes += packet.data.count
            #expect(try decoder.decode(packet.data, into: &decoded))
            #expect(decoded.width == f.width && decoded.height == f.height)
            psnr += lumaPSNR(f, decoded)
        }
        psnr /= Double(frames.count)
        let kbps = Double(bytes * 8) / (Double(frames.count) / 30) / 1000
        print("\(codec) round trip of \(frames.count) frames \(frames[0].width)x\(frames[0].height): "
              + "luma PSNR \(psnr) dB at \(kbps) kbit/s")
        #expect(psnr >= 30)
        #expect(kbps < 500 * 1.5)
    }

    @Test("A forced keyframe is a keyframe, by the encoder's flag and by the header inspector",
          arguments: VPXCodec.allCases)
    func forcedKeyframeIsAKeyframe(codec: VPXCodec) throws {
        let frames = syntheticVideo(frames: 12)
        var encoder = try VPXEncoder(VPXEncoderConfiguration(codec: codec, width: 320, height: 240))
        var packet = VPXPacket()
        var flags: [Bool] = []
        for (i, f) in frames.enumerated() {
            if i == 8 { encoder.requestKeyframe() }
            try encoder.encode(f, forceKeyframe: i == 5, into: &packet)
            let info = try VPXFrameInfo(parsing: packet.data, codec: codec)
            #expect(info.isKeyframe == packet.isKeyframe)
            if info.isKeyframe { #expect(info.width == 320 && info.height == 240) }
            flags.append(packet.isKeyframe)
        }
        #expect(flags == (0..<12).map { [0, 5, 8].contains($0) })
    }

    @Test func bitrateChangeWhileRunningTakesEffect() throws {
        let frames = syntheticVideo(frames: 90)
        var encoder = try VPXEncoder(VPXEncoderConfiguration(codec: .vp8, width: 320, height: 240, targetBitrateKbps: 1200))
        var packet = VPXPacket()
        var high = 0, low = 0
        for (i, f) in frames.enumerated() {
            if i == 45 { try encoder.setTargetBitrate(kbps: 150) }
            try encoder.encode(f, into: &packet)
            #expect(!packet.isKeyframe || i == 0)
            if (15..<45).contains(i) { high += packet.data.count }
            if (60..<90).contains(i) { low += packet.data.count }
        }
        let lowTarget = encoder.configuration.targetBitrateKbps
        #expect(lowTarget == 150)
        print("vp8 bytes over 30 frames: \(high) at 1200 kbit/s, \(low) at 150 kbit/s")
        #expect(Double(low) < Double(high) * 0.5)
    }

    @Test(arguments: VPXCodec.allCases)
    func corruptDataThrowsTypedErrors(codec: VPXCodec) throws {
        var encoder = try VPXEncoder(VPXEncoderConfiguration(codec: codec, width: 320, height: 240))
        var key = VPXPacket()
        try encoder.encode(syntheticVideo(frames: 1)[0], into: &key)
        var rng = SplitMix64(state: 11)
        let garbage = (0..<500).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
        var headerless = key.data
        for i in 0..<min(12, headerless.count) { headerless[i] ^= 0xA5 }
        let cases: [[UInt8]] = [[], Array(key.data.prefix(5)), Array(key.data.prefix(12)), garbage, headerless]
        for data in cases {
            var decoder = try VPXDecoder(codec: codec)
            var out = try VideoFrame(width: 320, height: 240)
            do {
                try decoder.decode(data, into: &out)
                Issue.record("\(codec) decoder accepted \(data.count) corrupt bytes")
            } catch {
                #expect([.corruptFrame, .unsupportedBitstream, .error, .invalidParameter].contains(error.code), "\(error)")
                #expect(!error.message.isEmpty)
            }
        }
        // The header inspector refuses short and garbled keyframe headers too.
        #expect(throws: VPXError.self) { _ = try VPXFrameInfo(parsing: Array(key.data.prefix(2)), codec: codec) }
        #expect(throws: VPXError.self) { _ = try VPXFrameInfo(parsing: Array(key.data.prefix(5)), codec: codec) }
        var badSync = key.data
        if codec == .vp8 { badSync[3] = 0 } else { badSync[1] ^= 0xFF }
        #expect(throws: VPXError.self) { _ = try VPXFrameInfo(parsing: badSync, codec: codec) }
    }

    @Test func wrongPictureSizeAndBadSettingsThrow() throws {
        var encoder = try VPXEncoder(VPXEncoderConfiguration(codec: .vp8, width: 320, height: 240))
        var packet = VPXPacket()
        let larger = try VideoFrame(width: 640, height: 480)
        do {
            try encoder.encode(larger, into: &packet)
            Issue.record("encoded a 640x480 picture with a 320x240 encoder")
        } catch {
            #expect(error.code == .invalidParameter)
        }
        #expect(throws: VPXError.self) { try encoder.setTargetBitrate(kbps: 0) }
        var bad = VPXEncoderConfiguration(codec: .vp9, width: 320, height: 240)
        bad.cpuUsed = 12
        #expect(throws: VPXError.self) { _ = try VPXEncoder(bad) }
        #expect(throws: VPXError.self) { _ = try VPXEncoder(VPXEncoderConfiguration(codec: .vp8, width: 0, height: 240)) }
        #expect(throws: VPXError.self) { _ = try VPXDecoder(codec: .vp8, threads: 0) }
    }

    @Test(arguments: VPXCodec.allCases)
    func multithreadedEncodingRoundTrips(codec: VPXCodec) throws {
        var config = VPXEncoderConfiguration(codec: codec, width: 320, height: 240)
        config.threads = 2
        var encoder = try VPXEncoder(config)
        var decoder = try VPXDecoder(codec: codec, threads: 2)
        var packet = VPXPacket()
        var decoded = try VideoFrame(width: 320, height: 240)
        var psnr = 0.0
        let frames = try sampleVideo()
        for f in frames {
            try encoder.encode(f, into: &packet)
            try decoder.decode(packet.data, into: &decoded)
            psnr += lumaPSNR(f, decoded)
        }
        #expect(psnr / Double(frames.count) >= 30)
    }

    @Test func inspectorReadsKeyframeSizeAndInterframes() throws {
        for codec in VPXCodec.allCases {
            var encoder = try VPXEncoder(VPXEncoderConfiguration(codec: codec, width: 176, height: 144))
            var packet = VPXPacket()
            var f = try VideoFrame(width: 176, height: 144)
            try encoder.encode(f, into: &packet)
            let key = try VPXFrameInfo(parsing: packet.data, codec: codec)
            #expect(key.isKeyframe && key.width == 176 && key.height == 144 && key.isShown && key.profile == 0)
            if codec == .vp8 {
                #expect(key.firstPartitionSize > 0 && key.firstPartitionSize + 10 <= packet.data.count)
                // The header alone (a frame's first RTP packet) is enough to recognise a keyframe.
                let head = try VPXFrameInfo(parsing: Array(packet.data.prefix(10)), codec: .vp8)
                #expect(head.isKeyframe && head.width == 176)
            }
            f.timestamp = 3000
            try encoder.encode(f, into: &packet)
            let inter = try VPXFrameInfo(parsing: packet.data, codec: codec)
            #expect(!inter.isKeyframe && inter.width == 0)
        }
    }
}

@Suite("VP8/VP9 header inspector")
struct VPXFrameInfoTests {
    /// libvpx's own header parse (`vpx_codec_peek_stream_info`): keyframe flag and size.
    static func peek(_ data: [UInt8], _ codec: VPXCodec) -> (key: Bool, w: Int, h: Int)? {
        var si = vpx_codec_stream_info_t()
        si.sz = UInt32(MemoryLayout<vpx_codec_stream_info_t>.size)
        let r = data.withUnsafeBufferPointer {
            vpx_codec_peek_stream_info(codec == .vp8 ? vpx_codec_vp8_dx() : vpx_codec_vp9_dx(),
                                       $0.baseAddress, UInt32($0.count), &si)
        }
        return r == VPX_CODEC_OK ? (si.is_kf != 0, Int(si.w), Int(si.h)) : nil
    }

    @Test(arguments: VPXCodec.allCases)
    func agreesWithLibvpxOnRealFrames(codec: VPXCodec) throws {
        var encoder = try VPXEncoder(VPXEncoderConfiguration(codec: codec, width: 320, height: 240))
        var packet = VPXPacket()
        for (i, f) in syntheticVideo(frames: 20).enumerated() {
            try encoder.encode(f, forceKeyframe: i % 7 == 0, into: &packet)
            let info = try VPXFrameInfo(parsing: packet.data, codec: codec)
            #expect(info.isKeyframe == packet.isKeyframe)
            if info.isKeyframe {
                let lib = try #require(Self.peek(packet.data, codec))
                #expect(lib.key && lib.w == info.width && lib.h == info.height)
            }
        }
    }

    @Test(arguments: VPXCodec.allCases)
    func randomBytesNeverCrashTheInspector(codec: VPXCodec) {
        var rng = SplitMix64(state: 99)
        var keyframes = 0
        for _ in 0..<20_000 {
            let bytes = (0..<Int(rng.next() % 24)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if let info = try? VPXFrameInfo(parsing: bytes, codec: codec), info.isKeyframe {
                keyframes += 1
                #expect(info.width > 0 && info.height > 0)
            }
        }
        #expect(keyframes < 20_000)
    }
}
