// The local capture path of a call over recordings: what the loudspeaker played and what the
// microphone heard, through the echo canceller, the analysis and the encoder, with the talking
// events and the echo return loss enhancement.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ParleyEcho
import ParleyVoice

/// What ``EchoReplay/run(played:microphone:send:echo:)`` gives back.
public struct EchoReplayResult: Sendable {
    /// The cancelled capture (what the call would have encoded), as long as the whole packets
    /// of the microphone's recording.
    public var output: [Int16]
    /// The local participant's talking events.
    public var talks: [TalkEvent]
    /// Per 10 ms frame: whether the canceller judged it echo only (far end active, near end not).
    public var echoOnly: [Bool]
    /// The canceller's counters and delay estimate at the end.
    public var statistics: EchoCancellerStatistics
    /// Samples in a 10 ms frame.
    public var frameSamples: Int
}

/// Runs the capture path of a call (``AudioSendPipeline`` with an `EchoCanceller`) over two
/// recordings at the capture rate, sample-aligned at their start: `played`, what the playout sent
/// to the loudspeaker, and `microphone`, what the microphone heard. The playout's 10 ms frames go
/// to the canceller before each packet is captured, as in a call. The encoded packets are dropped.
public enum EchoReplay {
    /// Runs the replay. `echo` nil runs the same path without a canceller.
    /// - Throws: `OpusError` or `VADError` for a send configuration they do not take;
    ///   `EchoCancellerError` for echo settings out of range or a send rate or packet the
    ///   canceller does not take.
    public static func run(played: [Int16], microphone: [Int16], send: AudioSendConfiguration = .init(),
                           echo: EchoCancellerConfiguration? = .init()) throws -> EchoReplayResult {
        var pipeline = try AudioSendPipeline(configuration: send)
        var canceller: EchoCanceller?
        if var settings = echo {
            settings.sampleRate = send.sampleRate
            canceller = try EchoCanceller(configuration: settings)
            try pipeline.useEchoCanceller(canceller)
        }
        let packet = send.packetSamples
        let frame = send.sampleRate / 100
        let packets = microphone.count / packet
        var output = [Int16](repeating: 0, count: packets * packet)
        var talks: [TalkEvent] = []
        var echoOnly = [Bool](repeating: false, count: packets * packet / frame)
        var transport = DiscardingTransport()
        let silence = [Int16](repeating: 0, count: frame)
        for k in 0..<packets {
            if let canceller {
                for f in 0..<(packet / frame) {
                    let start = k * packet + f * frame
                    if start + frame <= played.count {
                        played.withUnsafeBufferPointer { canceller.playedOut(UnsafeBufferPointer(rebasing: $0[start..<(start + frame)])) }
                    } else {
                        silence.withUnsafeBufferPointer { canceller.playedOut($0) }
                    }
                }
            }
            let time = MonotonicTime(nanoseconds: Int64(k) * Int64(send.packetMs) * 1_000_000)
            microphone.withUnsafeBufferPointer { mic in
                _ = pipeline.send(UnsafeBufferPointer(rebasing: mic[(k * packet)..<((k + 1) * packet)]), capturedAt: time,
                                  muted: false, over: &transport) { talks.append($0) }
            }
            if let canceller {
                canceller.withLastOutput { out in
                    for i in 0..<min(out.count, packet) { output[k * packet + i] = out[i] }
                }
                for f in 0..<(packet / frame) { echoOnly[k * packet / frame + f] = canceller.isEchoOnly(frame: f) }
            } else {
                for i in 0..<packet { output[k * packet + i] = microphone[k * packet + i] }
            }
        }
        return EchoReplayResult(output: output, talks: talks, echoOnly: echoOnly,
                                statistics: canceller?.statistics ?? EchoCancellerStatistics(), frameSamples: frame)
    }

    /// Echo return loss enhancement, dB: the microphone's energy over the output's, summed over
    /// the 10 ms frames `include` selects (nil when they hold no energy).
    public static func erleDb(microphone: [Int16], output: [Int16], frameSamples: Int, include: (Int) -> Bool) -> Double? {
        var mic = 0.0, out = 0.0
        for f in 0..<(min(microphone.count, output.count) / frameSamples) where include(f) {
            for i in (f * frameSamples)..<((f + 1) * frameSamples) {
                mic += Double(microphone[i]) * Double(microphone[i])
                out += Double(output[i]) * Double(output[i])
            }
        }
        guard mic > 0 else { return nil }
        return 10 * log10(mic / max(out, 1))
    }
}

/// Drops what is sent (the replay keeps only the analysis).
private struct DiscardingTransport: PacketTransport {
    mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool { true }
    mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {}
    var inFlight: Int { 0 }
}
