import Testing
import ParleyJitter

@Suite struct JitterConfigurationTests {
    private func rejected(_ change: (inout JitterBufferConfiguration) -> Void) -> String? {
        var c = JitterBufferConfiguration()
        change(&c)
        do {
            _ = try AudioJitterBuffer(configuration: c)
            return nil
        } catch {
            guard case let .outOfRange(parameter, _, _) = error else { return nil }
            return parameter
        }
    }

    @Test func aBufferSettingOutOfRangeIsAnError() throws {
        #expect(rejected { $0.capacity = 4 } == "capacity")
        #expect(rejected { $0.capacity = 100 } == "capacity")
        #expect(rejected { $0.sampleRate = 0 } == "sampleRate")
        #expect(rejected { $0.sampleRate = 44_100 } == "clockRate")
        #expect(rejected { $0.frameMs = 30 } == "frameMs")
        #expect(rejected { $0.channels = 0 } == "channels")
        #expect(rejected { $0.maximumPayloadBytes = 0 } == "maximumPayloadBytes")
        #expect(rejected { $0.packetMs = 0 } == "packetMs")
        #expect(rejected { $0.quantile = 1 } == "quantile")
        #expect(rejected { $0.quantile = 0 } == "quantile")
        #expect(rejected { $0.minimumDelayMs = 3_000 } == "minimumDelayMs")
        #expect(rejected { $0.maximumPacketMs = 0 } == "maximumPacketMs")
        #expect(rejected { $0.forgetFactor = 1 } == "forgetFactor")
        #expect(rejected { $0.forgetFactor = 0 } == "forgetFactor")
        #expect(JitterConfigurationError.outOfRange(parameter: "frameMs", value: "30", allowed: "10 or 20")
            .description == "frameMs 30 is not allowed (10 or 20)")
        // Good settings still make a buffer.
        var good = JitterBufferConfiguration()
        good.sampleRate = 16_000
        good.frameMs = 20
        good.capacity = 8
        #expect(try AudioJitterBuffer(configuration: good).configuration == good)
        #expect(AudioJitterBuffer().configuration == JitterBufferConfiguration())
    }

    @Test func aLinearPCMDecoderRejectsANonPositiveRateOrChannelCount() throws {
        #expect(throws: JitterConfigurationError.outOfRange(parameter: "sampleRate", value: "0", allowed: "> 0")) {
            try LinearPCMDecoder(sampleRate: 0)
        }
        #expect(throws: JitterConfigurationError.outOfRange(parameter: "channels", value: "-1", allowed: "> 0")) {
            try LinearPCMDecoder(sampleRate: 16_000, channels: -1)
        }
        #expect(try LinearPCMDecoder(sampleRate: 16_000, channels: 2).channels == 2)
    }

    @Test func anOutputBufferShorterThanAFrameIsATypedErrorAndPlaysNothing() throws {
        var buffer = AudioJitterBuffer()
        var decoder = try LinearPCMDecoder(sampleRate: buffer.configuration.sampleRate)
        let frame = buffer.configuration.frameSamples * buffer.configuration.channels
        var short = [Int16](repeating: 7, count: frame - 1)
        #expect(throws: JitterBufferError.outputTooSmall(needed: frame, given: frame - 1)) {
            _ = try short.withUnsafeMutableBufferPointer { try buffer.get(at: .zero, into: $0, decoder: &decoder) }
        }
        #expect(short.allSatisfy { $0 == 7 } && buffer.lastOperations.isEmpty)
        var whole = [Int16](repeating: 7, count: frame)
        #expect(try whole.withUnsafeMutableBufferPointer { try buffer.get(at: .zero, into: $0, decoder: &decoder) } == .buffering)
    }
}
