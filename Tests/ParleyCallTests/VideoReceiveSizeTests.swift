import Testing
import ParleyCall
import ParleyCodecs

@Test func aVideoReceiverOfNoSizeOrTooLargeIsAnInvalidParameter() {
    for (w, h) in [(0, 240), (320, -4), (1 << 20, 240)] {
        do {
            _ = try VideoReceivePipeline(width: w, height: h)
            Issue.record("made a \(w)x\(h) receiver")
        } catch {
            #expect(error.code == .invalidParameter)
        }
    }
}
