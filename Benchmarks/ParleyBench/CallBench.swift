// Call suite: receive-side streams per core, and a soak of the whole room.
//
// - call/receive-streams-opus-decode-bound: Opus decoding alone (16 kHz mono, 20 ms packets of
//   real speech), as streams one core could decode in real time: the upper bound.
// - call/receive-streams: what the receiving client does per remote participant: RTP parse,
//   RTCP sender reports, jitter buffer, Opus decode (with its PLC/FEC path), VAD and talking
//   detection, every 10 ms. Ratio to the bound = the share of the decode-only capacity left.
// - call/receive-streams-sender-vad: the same, with talking detected from the senders' RFC 6464
//   voice-activity bits (Parley senders set them from their VAD on the clean capture) instead
//   of running the VAD on every received stream (VoiceActivitySource.senderAudioLevel).
// - call/receive-streams-without-vad: no talking detection at all, to show where the time goes.
// - call/receive-ratio-webrtc-vad: the pipeline without talking detection plus WebRTC's GMM VAD
//   (libwebrtc-audio-processing, mode 1, every 10 ms) on the decoded audio: what running even
//   the cheapest common VAD on every received stream costs.
// - call/receive-ratio-*: the ratios measured pairwise: each sample decodes the
//   stream alone, runs the pipeline, decodes alone again, and gives pipeline / mean of the two
//   bounds; the row is the median of those ratios. On a shared machine whose speed drifts
//   between rows, this is the figure to quote (the ratio column of the rows above divides
//   medians taken at different moments).
// - call/soak-*: a CallRoom of 4 participants (±2.5 % capture drift, 10 % Gilbert-Elliott
//   loss, delay spikes) for PARLEY_SOAK_SECONDS media seconds (default 120; the documented soak
//   is 3600) on the virtual clock, run once: unaccounted frames, RSS growth after the first
//   minute, the largest jitter-buffer target delay.
//
// Figures are the benchmark thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so other processes
// on a shared machine do not inflate them.

import Foundation
import ParleyCall
import ParleyCodecs
import ParleyJitter
import ParleyRTP
import CWebRTCAudioProcessing
import ParleySimulation

private func callThreadCPUNanoseconds() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
}

/// 10 s of real speech as Opus RTP datagrams (plus an RTCP SR each second), with arrival times.
private struct CallBenchStream {
    var datagrams: [[UInt8]] = []
    var arrivals: [MonotonicTime] = []
    var payloads: [[UInt8]] = []
    let seconds = 10.0

    init() {
        let url = sampleMediaDirectory.appendingPathComponent("speech/speech-16k.wav")
        guard let speech = try? RoomParticipant.load(path: url.path, name: "speech") else {
            FileHandle.standardError.write(Data("call bench: cannot read \(url.path)\n".utf8))
            return
        }
        struct Recorder: PacketTransport {
            var datagrams: [[UInt8]] = []
            var times: [MonotonicTime] = []
            var inFlight: Int { 0 }
            mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool {
                datagrams.append([UInt8](bytes)); times.append(time); return true
            }
            mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {}
        }
        var sender = try! AudioSendPipeline()
        var recorder = Recorder()
        let n = sender.configuration.packetSamples
        var frame = [Int16](repeating: 0, count: n)
        let packets = Int(seconds * 1000) / sender.configuration.packetMs
        for k in 0..<packets {
            for i in 0..<n { frame[i] = speech.samples[(k * n + i) % speech.samples.count] }
            let t = MonotonicTime(nanoseconds: 1_000_000_000 + Int64(k) * 20_000_000)
            _ = frame.withUnsafeBufferPointer { f in sender.send(f, capturedAt: t, muted: false, over: &recorder) { _ in } }
        }
        for (d, t) in zip(recorder.datagrams, recorder.times) {
            datagrams.append(d)
            arrivals.append(t.advanced(byNanoseconds: 40_000_000))
            if !RTPMultiplexing.isRTCP(secondByte: d[1]) {
                d.withUnsafeBytes { raw in
                    if let v = try? RTPPacketView(parsing: raw) { payloads.append([UInt8](v.payload)) }
                }
            }
        }
    }
}

nonisolated(unsafe) private var callBenchStreamStorage: CallBenchStream?
private var callBenchStream: CallBenchStream {
    if callBenchStreamStorage == nil { callBenchStreamStorage = CallBenchStream() }
    return callBenchStreamStorage!
}

/// Streams one core sustains: media seconds processed per CPU second.
private func streamsPerCore(mediaSeconds: Double, cpuNanoseconds: Int64) -> Double {
    mediaSeconds / (Double(max(cpuNanoseconds, 1)) / 1e9)
}

private func decodeOnlyStreams() -> Double {
    let s = callBenchStream
    guard !s.payloads.isEmpty else { return .nan }
    var decoder = try! OpusDecoder(sampleRate: 16_000, channels: 1)
    var pcm = [Int16](repeating: 0, count: OpusDecoder.maxSamplesPerChannel(sampleRate: 16_000))
    var sum = 0
    let start = callThreadCPUNanoseconds()
    for p in s.payloads {
        let n = p.withUnsafeBytes { raw in
            pcm.withUnsafeMutableBufferPointer { out in (try? decoder.decode(raw, into: out)) ?? 0 }
        }
        sum &+= n &+ Int(pcm[n / 2])
    }
    let cpu = callThreadCPUNanoseconds() - start
    blackHole(sum)
    return streamsPerCore(mediaSeconds: s.seconds, cpuNanoseconds: cpu)
}

/// `receiveStreams` without Parley's talking detection, with WebRTC's VAD on each decoded frame.
private func receiveStreamsWithWebRTCVAD() -> Double {
    guard let vad = WebRtcVad_Create() else { return .nan }
    defer { WebRtcVad_Free(vad) }
    _ = WebRtcVad_Init(vad)
    _ = WebRtcVad_set_mode(vad, 1)
    var voiced = 0
    let streams = receiveStreams(analysis: false) { pcm in
        voiced &+= Int(max(0, WebRtcVad_Process(vad, 16_000, pcm.baseAddress!, pcm.count)))
    }
    blackHole(voiced)
    return streams
}

private func receiveStreams(analysis: Bool, source: VoiceActivitySource = .local,
                            sink: (UnsafeBufferPointer<Int16>) -> Void = { _ in }) -> Double {
    let s = callBenchStream
    guard !s.datagrams.isEmpty else { return .nan }
    var configuration = AudioReceiveConfiguration()
    configuration.analysis = analysis
    configuration.voiceActivitySource = source
    configuration.callStartNTP = 3_900_000_001
    var receiver = try! AudioReceivePipeline(configuration: configuration,
                                             decoder: try! OpusJitterDecoder(sampleRate: 16_000, channels: 1))
    var next = 0
    var talks = 0
    var decisions = 0
    let frames = Int(s.seconds * 100) + 10
    let start = callThreadCPUNanoseconds()
    for f in 0..<frames {
        let now = MonotonicTime(nanoseconds: 1_000_000_000 + Int64(f) * 10_000_000)
        while next < s.datagrams.count && s.arrivals[next] <= now {
            s.datagrams[next].withUnsafeBytes { receiver.receive($0, at: s.arrivals[next]) }
            next += 1
        }
        receiver.playout(at: now, sink: sink, onDecision: { _ in decisions += 1 }, onTalk: { _ in talks += 1 })
    }
    let cpu = callThreadCPUNanoseconds() - start
    blackHole(talks &+ decisions)
    return streamsPerCore(mediaSeconds: s.seconds, cpuNanoseconds: cpu)
}

/// Pipeline streams per core over the decode-only bound, measured back to back (bound,
/// pipeline, bound) so that a change of machine speed between rows does not enter the ratio.
private func pairedReceiveRatio(_ pipelineStreams: () -> Double) -> Double {
    let before = decodeOnlyStreams()
    let pipeline = pipelineStreams()
    let after = decodeOnlyStreams()
    return pipeline / ((before + after) / 2)
}

/// The soak: run once, its figures shared by the soak rows.
private struct SoakResult {
    var unaccountedFrames = 0
    var sentFrames = 0
    var rssGrowthBytes = 0.0
    var rssAtOneMinute = 0
    var rssAtEnd = 0
    var maximumTargetDelayMs = 0.0
    var seconds = 0.0
}

/// Resident set size, bytes (`/proc/self/statm`).
func callResidentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

nonisolated(unsafe) private var soakStorage: SoakResult?
private var soak: SoakResult {
    if let s = soakStorage { return s }
    let seconds = Double(ProcessInfo.processInfo.environment["PARLEY_SOAK_SECONDS"] ?? "") ?? 120
    var network = try! NetworkScenario.room(lossPercent: 0, jitterMs: 10)   // valid constants
    network.loss = try! GilbertElliott.bursty(meanLoss: 0.10, meanBurst: 3)
    network.spikesPerSecond = 0.05
    network.spikeHeightMs = 400
    let dir = sampleMediaDirectory.appendingPathComponent("conversation")
    let files = ((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []).filter { $0.hasSuffix(".wav") }.sorted()
    var participants: [RoomParticipant] = []
    let drifts = [25_000.0, -25_000, 12_500, -12_500]
    for i in 0..<4 where !files.isEmpty {
        let f = files[i % files.count]
        if var p = try? RoomParticipant.load(path: dir.appendingPathComponent(f).path, name: "p\(i)-" + f) {
            p.driftPpm = drifts[i]
            participants.append(p)
        }
    }
    var result = SoakResult()
    result.seconds = seconds
    let room = try! CallRoom(participants: participants, configuration: RoomConfiguration(network: network, seed: 2026, duration: seconds),
                         clock: VirtualMediaClock())
    var lastMinute = 0
    room.onFrame = { t in
        let minute = Int(t / 60)
        if minute > lastMinute {
            lastMinute = minute
            let rss = callResidentBytes()
            if minute == 1 { result.rssAtOneMinute = rss }
            FileHandle.standardError.write(Data("call/soak: \(minute) min, RSS \(rss / 1024) KiB\n".utf8))
        }
    }
    try? room.run()
    result.rssAtEnd = callResidentBytes()
    result.rssGrowthBytes = Double(result.rssAtEnd - (result.rssAtOneMinute == 0 ? result.rssAtEnd : result.rssAtOneMinute))
    for r in room.reports {
        let a = r.audio
        result.sentFrames += a.framesSent
        result.unaccountedFrames += abs(a.framesSent - (a.framesPlayed + a.framesLate + a.framesLost + a.framesDiscarded + a.framesPending))
        result.maximumTargetDelayMs = max(result.maximumTargetDelayMs, a.maximumTargetDelayMs)
        FileHandle.standardError.write(Data(("call/soak: \(r.name): sent \(a.framesSent) played \(a.framesPlayed) late \(a.framesLate) "
            + "lost \(a.framesLost) discarded \(a.framesDiscarded) pending \(a.framesPending) fec \(a.framesRecovered) "
            + "loss \(String(format: "%.2f", a.lossFraction * 100))% conceal \(String(format: "%.2f", a.concealmentFraction * 100))% "
            + "jb mean \(String(format: "%.1f", a.meanJitterBufferDelayMs)) ms max target \(String(format: "%.1f", a.maximumTargetDelayMs)) ms "
            + "drift measured \(String(format: "%.0f", r.measuredDriftPpm ?? .nan)) ppm\n").utf8))
    }
    FileHandle.standardError.write(Data("call/soak: \(seconds) s media, RSS at 1 min \(result.rssAtOneMinute / 1024) KiB, at end \(result.rssAtEnd / 1024) KiB\n".utf8))
    soakStorage = result
    return result
}

/// Benchmarks for the call suite.
func callBenchmarks() -> [Benchmark] {
    [
        Benchmark(name: "call/receive-streams-opus-decode-bound", unit: .streams, metric: decodeOnlyStreams),
        Benchmark(name: "call/receive-streams", unit: .streams, baseline: "call/receive-streams-opus-decode-bound",
                  metric: { receiveStreams(analysis: true) }),
        Benchmark(name: "call/receive-streams-sender-vad", unit: .streams, baseline: "call/receive-streams-opus-decode-bound",
                  metric: { receiveStreams(analysis: true, source: .senderAudioLevel) }),
        Benchmark(name: "call/receive-streams-without-vad", unit: .streams, baseline: "call/receive-streams-opus-decode-bound",
                  metric: { receiveStreams(analysis: false) }),
        Benchmark(name: "call/receive-ratio-local-vad", unit: .ratio) {
            pairedReceiveRatio { receiveStreams(analysis: true) }
        },
        Benchmark(name: "call/receive-ratio-sender-vad", unit: .ratio) {
            pairedReceiveRatio { receiveStreams(analysis: true, source: .senderAudioLevel) }
        },
        Benchmark(name: "call/receive-ratio-webrtc-vad", unit: .ratio) { pairedReceiveRatio(receiveStreamsWithWebRTCVAD) },
        Benchmark(name: "call/receive-ratio-without-vad", unit: .ratio) {
            pairedReceiveRatio { receiveStreams(analysis: false) }
        },
        Benchmark(name: "call/soak-unaccounted-frames", unit: .percent) {
            let s = soak
            return s.sentFrames == 0 ? .nan : Double(s.unaccountedFrames) / Double(s.sentFrames) * 100
        },
        Benchmark(name: "call/soak-rss-growth-after-1-min", unit: .bytes) { soak.rssGrowthBytes },
        Benchmark(name: "call/soak-max-target-delay", unit: .ms) { soak.maximumTargetDelayMs },
    ]
}
