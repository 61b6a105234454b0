import Foundation
import Testing
import ParleyRTP

@Suite struct OpusPayloadDuration {
    func samples(_ bytes: [UInt8]) throws(RTPError) -> Int {
        let r: Result<Int, RTPError> = bytes.withUnsafeBytes { b in
            do throws(RTPError) { return .success(try OpusRTP.samples48k(b)) } catch { return .failure(error) }
        }
        return try r.get()
    }

    @Test func tocConfigGivesFrameDurationAt48kHz() throws {
        // config << 3 | stereo << 2 | code
        #expect(try samples([0 << 3]) == 480)       // SILK NB 10 ms
        #expect(try samples([1 << 3]) == 960)       // SILK NB 20 ms
        #expect(try samples([2 << 3]) == 1920)      // 40 ms
        #expect(try samples([3 << 3]) == 2880)      // 60 ms
        #expect(try samples([12 << 3]) == 480)      // hybrid SWB 10 ms
        #expect(try samples([15 << 3]) == 960)      // hybrid FB 20 ms
        #expect(try samples([16 << 3]) == 120)      // CELT 2.5 ms
        #expect(try samples([31 << 3 | 4]) == 960)  // CELT FB 20 ms stereo
        #expect(try samples([31 << 3 | 1, 0]) == 1920)  // two equal frames
        #expect(try samples([31 << 3 | 2, 1, 0]) == 1920)  // two frames, sizes coded
        #expect(try samples([31 << 3 | 3, 3]) == 2880)  // code 3, M = 3
    }

    @Test func malformedOpusPacketsThrow() {
        #expect(throws: RTPError.emptyPayload) { try samples([]) }
        #expect(throws: RTPError.self) { try samples([31 << 3 | 3]) }           // no count byte
        #expect(throws: RTPError.self) { try samples([31 << 3 | 3, 0]) }        // zero frames
        #expect(throws: RTPError.self) { try samples([3 << 3 | 3, 3]) }         // 3 x 60 ms > 120 ms
        #expect(throws: RTPError.self) { try samples([31 << 3 | 2]) }           // code 2 without length
    }
}

@Suite struct VP8PayloadFormat {
    func descriptor(_ bytes: [UInt8]) throws(RTPError) -> VP8PayloadDescriptor {
        let r: Result<VP8PayloadDescriptor, RTPError> = bytes.withUnsafeBytes { b in
            do throws(RTPError) { return .success(try VP8PayloadDescriptor(parsing: b)) } catch { return .failure(error) }
        }
        return try r.get()
    }

    func written(_ d: VP8PayloadDescriptor) throws -> [UInt8] {
        var out = [UInt8](repeating: 0, count: d.marshalSize)
        let n = try out.withUnsafeMutableBytes { try d.marshal(into: $0) }
        #expect(n == out.count)
        return out
    }

    /// RFC 7741 4.2 layouts: the minimal descriptor, a 7-bit picture ID, and a 15-bit picture ID
    /// with TL0PICIDX and TID/Y/KEYIDX.
    @Test func descriptorFieldsAreReadFromTheRFCLayout() throws {
        let minimal = try descriptor([0x10, 0x9D])
        #expect(minimal == VP8PayloadDescriptor(startOfPartition: true))
        #expect(minimal.isFrameStart && minimal.marshalSize == 1)

        let short = try descriptor([0x90, 0x80, 0x05, 0x00])
        #expect(short.pictureID == 5 && !short.longPictureID && short.marshalSize == 3)

        let full = try descriptor([0xB3, 0xF0, 0x81, 0x23, 0x07, 0x65, 0xAA])
        #expect(full.nonReference && full.startOfPartition && full.partitionIndex == 3)
        #expect(!full.isFrameStart)
        #expect(full.pictureID == 0x123 && full.longPictureID)
        #expect(full.tl0PictureIndex == 7)
        #expect(full.temporalLayer == 1 && full.layerSync && full.keyIndex == 5)
        #expect(full.marshalSize == 6)
        #expect(try written(full) == [0xB3, 0xF0, 0x81, 0x23, 0x07, 0x65])
        #expect(try written(short) == [0x90, 0x80, 0x05])
    }

    @Test func missingDescriptorBytesThrow() {
        #expect(throws: RTPError.emptyPayload) { try descriptor([]) }
        #expect(throws: RTPError.vp8DescriptorTruncated(needed: 2, available: 1)) { try descriptor([0x90]) }
        #expect(throws: RTPError.vp8DescriptorTruncated(needed: 4, available: 3)) { try descriptor([0x90, 0x80, 0x81]) }
        #expect(throws: RTPError.vp8DescriptorTruncated(needed: 4, available: 3)) { try descriptor([0x90, 0xC0, 0x05]) }
        #expect(throws: RTPError.vp8DescriptorTruncated(needed: 3, available: 2)) { try descriptor([0x90, 0x10]) }
        // A descriptor with no VP8 data after it.
        #expect(throws: RTPError.vp8DescriptorTruncated(needed: 2, available: 1)) { try descriptor([0x10]) }
    }

    @Test func keyframeHeaderGivesSizeAndType() throws {
        // Size 0x1234 = 4660; show_frame; version 0; keyframe; 320x240.
        let size = 0x1234
        let b0 = UInt8((size & 7) << 5) | 0x10
        let frame: [UInt8] = [b0, UInt8((size >> 3) & 0xFF), UInt8(size >> 11), 0x9D, 0x01, 0x2A, 0x40, 0x01, 0xF0, 0x00]
        let h = try frame.withUnsafeBytes { try VP8FrameHeader(parsing: $0) }
        #expect(h.isKeyframe && h.showFrame && h.version == 0)
        #expect(h.firstPartitionSize == size)
        #expect(h.width == 320 && h.height == 240)
        var inter = frame
        inter[0] |= 1
        let hi = try inter.withUnsafeBytes { try VP8FrameHeader(parsing: $0) }
        #expect(!hi.isKeyframe && hi.width == 0)
        #expect(throws: RTPError.vp8BadStartCode) {
            var bad = frame; bad[3] = 0
            _ = try bad.withUnsafeBytes { try VP8FrameHeader(parsing: $0) }
        }
        #expect(throws: RTPError.vp8PayloadHeaderTruncated(needed: 10, available: 5)) {
            _ = try Array(frame[0..<5]).withUnsafeBytes { try VP8FrameHeader(parsing: $0) }
        }
    }

    @Test func aVP8PayloadSizeWithoutRoomForDataIsAnError() throws {
        for size in [4, 0, -1] {
            #expect(throws: RTPError.self) { try VP8Packetizer(maxPayloadSize: size) }
        }
        #expect(try VP8Packetizer(maxPayloadSize: 5).maxPayloadSize == 5)
        #expect(VP8Packetizer().maxPayloadSize == VP8Packetizer.defaultMaxPayloadSize)
    }

    @Test func packetizerSplitsAtTheMTUAndDepacketizerRestoresTheFrame() throws {
        let frame = (0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var packetizer = try VP8Packetizer(maxPayloadSize: 1200, pictureID: 0x7FFF)
        var payloads: [([UInt8], Bool)] = []
        frame.withUnsafeBytes { f in packetizer.packetize(f) { p, last in payloads.append((Array(p), last)) } }
        #expect(payloads.count == 5)  // 4996 / 1196 -> 5
        #expect(payloads.allSatisfy { $0.0.count <= 1200 })
        #expect(payloads.map(\.1) == [false, false, false, false, true])
        #expect(packetizer.pictureID == 0)  // 15-bit wrap
        var depacketizer = VP8Depacketizer()
        var out: [UInt8]?
        for (i, (p, last)) in payloads.enumerated() {
            let d = try descriptor(p)
            #expect(d.pictureID == 0x7FFF && d.isFrameStart == (i == 0))
            out = try p.withUnsafeBytes {
                try depacketizer.push(payload: $0, sequenceNumber: UInt16(truncatingIfNeeded: 65533 &+ i), timestamp: 9000, marker: last)
            }
        }
        #expect(out == frame)
    }

    @Test func depacketizerDropsAFrameWithAMissingPacket() throws {
        let frame = [UInt8](repeating: 0xAB, count: 3000)
        var packetizer = try VP8Packetizer(maxPayloadSize: 1000)
        var payloads: [([UInt8], Bool)] = []
        frame.withUnsafeBytes { f in packetizer.packetize(f) { p, last in payloads.append((Array(p), last)) } }
        var d = VP8Depacketizer()
        var out: [UInt8]?
        for (i, (p, last)) in payloads.enumerated() where i != 1 {
            out = try p.withUnsafeBytes { try d.push(payload: $0, sequenceNumber: UInt16(i), timestamp: 0, marker: last) }
        }
        #expect(out == nil)
        #expect(d.discardedFrames == 1)
    }
}

@Suite struct AudioLevelRFC6464 {
    func sine(amplitude: Double, count: Int = 960) -> [Int16] {
        (0..<count).map { i in Int16((amplitude * sin(2 * Double.pi * 1000 * Double(i) / 48000)).rounded()) }
    }

    @Test func fullScaleSineIs3AndHalfScaleIs9() {
        let full = sine(amplitude: 32767)
        let half = sine(amplitude: 16384)
        #expect(full.withUnsafeBufferPointer { AudioLevel(samples: $0, voiceActivity: true) }.level == 3)
        #expect(half.withUnsafeBufferPointer { AudioLevel(samples: $0, voiceActivity: true) }.level == 9)
    }

    @Test func digitalSilenceIs127AndFaintSignalIs126() {
        let silence = [Int16](repeating: 0, count: 960)
        #expect(silence.withUnsafeBufferPointer { AudioLevel(samples: $0, voiceActivity: false) }.level == 127)
        let faint = [Float](repeating: 1e-8, count: 960)
        #expect(faint.withUnsafeBufferPointer { AudioLevel(samples: $0, voiceActivity: false) }.level == 126)
        var oneLSB = silence
        oneLSB[100] = 1
        let l = oneLSB.withUnsafeBufferPointer { AudioLevel(samples: $0, voiceActivity: false) }.level
        #expect(l < 127 && l > 110)
    }

    @Test func levelAndVoiceFlagAreWrittenAndReadBackFromTheExtension() throws {
        let half = sine(amplitude: 16384)
        let level = half.withUnsafeBufferPointer { AudioLevel(samples: $0, voiceActivity: true) }
        #expect(level.extensionByte == 0x89)
        let header = RTPHeader(payloadType: 111, sequenceNumber: 7, timestamp: 960, ssrc: 42,
                               extensions: [RTPHeaderExtension(id: 1, bytes: [level.extensionByte])])
        let bytes = try header.marshalled(payload: [0xF8])
        #expect(Array(bytes[12..<20]) == [0xBE, 0xDE, 0x00, 0x01, 0x10, 0x89, 0x00, 0x00])
        let back = try parsed(bytes) { $0.audioLevel(id: 1) }
        #expect(back == AudioLevel(level: 9, voiceActivity: true))
        #expect(try parsed(bytes) { $0.audioLevel(id: 2) } == nil)
    }
}
