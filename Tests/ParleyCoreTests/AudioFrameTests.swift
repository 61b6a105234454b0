import Testing
@testable import ParleyCore

@Suite struct AudioFrameTests {
    @Test func int16FloatConversionClampsAndRejectsNaN() {
        #expect(Int16(clampingFloat: 2.0) == .max)
        #expect(Int16(clampingFloat: -2.0) == .min)
        #expect(Int16(clampingFloat: .nan) == 0)
        #expect(Int16(clampingFloat: 0.5) == 16384)
        #expect(Float(clampingFloat: .nan) == 0)
        #expect(Int16(-32768).floatValue == -1.0)
    }

    @Test func frameGeometry() throws {
        let f = AudioFrame<Int16>(format: try AudioFormat(sampleRate: 48_000, channels: 2), samplesPerChannel: 960)
        #expect(f.samples.count == 1920)
        #expect(f.samplesPerChannel == 960)
        #expect(abs(f.duration - 0.02) < 1e-12)
        // A count that is not positive gives an empty frame, not a trap.
        #expect(AudioFrame<Int16>(format: try AudioFormat(sampleRate: 48_000, channels: 2), samplesPerChannel: -5).samples.isEmpty)
    }

    @Test func inPlaceRefillKeepsStorage() throws {
        var f = AudioFrame<Float>(format: try AudioFormat(sampleRate: 16_000, channels: 1), samplesPerChannel: 160)
        let before = f.samples.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        for round in 0..<10 {
            f.withUnsafeMutableSamples { buf in
                for i in buf.indices { buf[i] = Float(round) }
            }
        }
        let after = f.samples.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
        #expect(before == after)
        #expect(f.samples.allSatisfy { $0 == 9 })
    }

    @Test func videoFramePlaneLayout() throws {
        let v = try VideoFrame(width: 321, height: 241)
        #expect(v.chromaWidth == 161 && v.chromaHeight == 121)
        #expect(v.offsetU == 321 * 241)
        #expect(v.data.count == 321 * 241 + 2 * 161 * 121)
        #expect(v.data[0] == 16 && v.data[v.offsetU] == 128)
    }

    @Test func aVideoFrameOfNoSizeOrTooLargeIsAnError() {
        for (w, h) in [(0, 240), (320, 0), (-2, 240), (320, -1), (Int.min, Int.min)] {
            #expect(throws: VideoFrameError.sizeNotPositive(width: w, height: h)) { try VideoFrame(width: w, height: h) }
        }
        let big = VideoFrame.maximumDimension + 1
        #expect(throws: VideoFrameError.sizeTooLarge(width: big, height: 2)) { try VideoFrame(width: big, height: 2) }
        #expect(throws: VideoFrameError.sizeTooLarge(width: 2, height: Int.max)) { try VideoFrame(width: 2, height: Int.max) }
    }

    @Test func planeDataThatDoesNotFitTheSizeAndStridesIsAnError() throws {
        // 7x5: Y 9 x 5, U and V 4 x 3 each at stride 4.
        let needed = 9 * 5 + 2 * 4 * 3
        #expect(throws: VideoFrameError.dataTooSmall(needed: needed, available: needed - 1)) {
            try VideoFrame(width: 7, height: 5, strideY: 9, strideUV: 4, data: [UInt8](repeating: 0, count: needed - 1))
        }
        #expect(throws: VideoFrameError.strideOutOfRange(strideY: 6, strideUV: 4, width: 7)) {
            try VideoFrame(width: 7, height: 5, strideY: 6, strideUV: 4, data: [UInt8](repeating: 0, count: 1000))
        }
        #expect(throws: VideoFrameError.strideOutOfRange(strideY: 7, strideUV: 3, width: 7)) {
            try VideoFrame(width: 7, height: 5, strideY: 7, strideUV: 3, data: [UInt8](repeating: 0, count: 1000))
        }
        #expect(throws: VideoFrameError.strideOutOfRange(strideY: Int.max, strideUV: 4, width: 7)) {
            try VideoFrame(width: 7, height: 5, strideY: Int.max, strideUV: 4, data: [])
        }
        #expect(throws: VideoFrameError.sizeNotPositive(width: 0, height: 5)) {
            try VideoFrame(width: 0, height: 5, strideY: 8, strideUV: 4, data: [UInt8](repeating: 0, count: 1000))
        }
        let fits = try VideoFrame(width: 7, height: 5, strideY: 9, strideUV: 4, data: [UInt8](repeating: 1, count: needed))
        #expect(fits.data.count == needed && fits.offsetV == 9 * 5 + 4 * 3)
    }

    @Test func monotonicClockAdvances() {
        let a = MonotonicTime.now()
        let b = MonotonicTime.now()
        #expect(b >= a)
        #expect(MonotonicTime(seconds: 1.5).advanced(bySeconds: 0.5).nanoseconds == 2_000_000_000)
    }
}

@Test func formatsAndFramesRefuseACallersBadValues() throws {
    #expect(throws: AudioFormatError.sampleRateNotPositive(0)) { try AudioFormat(sampleRate: 0, channels: 1) }
    #expect(throws: AudioFormatError.sampleRateNotPositive(-48_000)) { try AudioFormat(sampleRate: -48_000, channels: 2) }
    #expect(throws: AudioFormatError.channelsNotPositive(0)) { try AudioFormat(sampleRate: 16_000, channels: 0) }
    let stereo = try AudioFormat(sampleRate: 48_000, channels: 2)
    #expect(throws: AudioFormatError.partialFrame(samples: 3, channels: 2)) {
        try AudioFrame<Int16>(format: stereo, samples: [1, 2, 3])
    }
    #expect(try AudioFrame<Int16>(format: stereo, samples: [1, 2, 3, 4]).samplesPerChannel == 2)
}
