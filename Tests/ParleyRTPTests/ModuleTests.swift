import Testing
import ParleyRTP

@Test func moduleLinks() {
    #expect(AudioFormat(sampleRate: 16_000, channels: 1).samplesPerChannel(milliseconds: 10) == 160)
}
