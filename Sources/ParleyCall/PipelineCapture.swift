// Capture into the send pipeline: any AudioCaptureSource (ParleyCore's protocol; ParleyDevices'
// microphones, files and test sources conform), paced on the call's clock.

import ParleyVoice

// The call's MediaClock (ParleyCore) paces ParleyDevices' capture and test sources too: one
// virtual clock drives a whole pipeline, capture included.

extension AudioSendPipeline {
    /// Captures one packet from `source` (ALSA capture, a tone, a sample provider) into `frame`
    /// and sends it, stamped with the source's capture time. `frame` should hold
    /// ``AudioSendConfiguration/packetSamples`` mono samples at the pipeline's rate (reused:
    /// nothing is allocated); a frame of another shape is first replaced by one that does
    /// (one allocation). Returns false at the end of a finite source.
    /// - Throws: the source's error (an ALSA failure, for example).
    public mutating func captureAndSend<S: AudioCaptureSource & ~Copyable, T: PacketTransport & ~Copyable>(
        from source: inout S, into frame: inout AudioFrame<Int16>, muted: Bool = false,
        over transport: inout T, onTalk: (TalkEvent) -> Void
    ) throws(S.Failure) -> Bool where S.Sample == Int16 {
        if frame.format.channels != 1 || frame.format.sampleRate != configuration.sampleRate
            || frame.samples.count != configuration.packetSamples {
            // The encoder took this rate, so the mono format is valid.
            frame = AudioFrame(format: AudioFormat(checkedSampleRate: configuration.sampleRate, channels: 1),
                               samplesPerChannel: configuration.packetSamples)
        }
        guard try source.read(into: &frame) else { return false }
        let captured = frame.captureTime
        _ = withoutActuallyEscaping(onTalk) { onTalk in
            frame.samples.withUnsafeBufferPointer { send($0, capturedAt: captured, muted: muted, over: &transport, onTalk: onTalk) }
        }
        return true
    }
}
