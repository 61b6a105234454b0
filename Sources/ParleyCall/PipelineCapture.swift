// Sources and sinks from the other modules: capture devices and test sources (ParleyDevices),
// pacing on the call's clock.

import ParleyDevices
import ParleyVoice

// The call's MediaClock (ParleyCore) paces ParleyDevices' capture and test sources too: one
// virtual clock drives a whole pipeline, capture included.

extension AudioSendPipeline {
    /// Captures one packet from `source` (ALSA capture, a tone, a sample provider) into `frame`
    /// and sends it, stamped with the source's capture time. `frame` must hold
    /// ``AudioSendConfiguration/packetSamples`` mono samples at the pipeline's rate (reused:
    /// nothing is allocated). Returns false at the end of a finite source.
    /// - Throws: the source's error (an ALSA failure, for example).
    public mutating func captureAndSend<S: AudioCaptureSource & ~Copyable, T: PacketTransport & ~Copyable>(
        from source: inout S, into frame: inout AudioFrame<Int16>, muted: Bool = false,
        over transport: inout T, onTalk: (TalkEvent) -> Void
    ) throws(S.Failure) -> Bool where S.Sample == Int16 {
        precondition(frame.format.channels == 1 && frame.format.sampleRate == configuration.sampleRate
                     && frame.samples.count == configuration.packetSamples,
                     "the frame must be one mono packet at the pipeline's rate")
        guard try source.read(into: &frame) else { return false }
        let captured = frame.captureTime
        withoutActuallyEscaping(onTalk) { onTalk in
            frame.samples.withUnsafeBufferPointer { send($0, capturedAt: captured, muted: muted, over: &transport, onTalk: onTalk) }
        }
        return true
    }
}
