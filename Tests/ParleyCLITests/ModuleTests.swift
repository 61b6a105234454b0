import Testing
import ParleyMedia

@Test func moduleLinks() throws {
    #expect(try AudioFormat(sampleRate: 16_000, channels: 1).samplesPerChannel(milliseconds: 10) == 160)
}
