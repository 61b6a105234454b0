import Testing
import ParleyVoice

@Test func moduleLinks() {
    #expect(AudioFormat(sampleRate: 16_000, channels: 1).samplesPerChannel(milliseconds: 10) == 160)
}
