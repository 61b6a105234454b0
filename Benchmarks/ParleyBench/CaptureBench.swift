// Capture suite: what ParleyDevices adds on top of alsa-lib per 10 ms frame.
//
// All rows read 16 kHz mono S16_LE in 160-frame (10 ms) periods from an alsa-lib `file` PCM
// (`infile` = a raw file of noise, slave = null), so the device costs the same in every row
// and the difference is Parley's own work:
//   capture/readi-raw-10ms       baseline: a bare snd_pcm_readi loop (blocking) into one buffer
//   capture/alsa-capture-10ms    ALSACapture.read(into:) into a reused AudioFrame: non-blocking
//                                read + wait path, xrun handling, snd_pcm_delay + CLOCK_MONOTONIC
//                                capture time, RTP-style timestamp
//   capture/stream-10ms          AudioCaptureStream: capture thread -> AsyncThrowingStream ->
//                                consumer task (includes opening the PCM once per sample), with
//                                the default 8-frame buffer (frames a slow consumer misses are
//                                dropped and counted, as in a call)
import CALSA
import Dispatch
import Foundation
import ParleyDevices

private let captureFormat = try! AudioFormat(sampleRate: 16_000, channels: 1)   // a valid format
private let captureFramesPerSample = 2_000
/// 10 ms periods in the input file. A persistent reader reopens its PCM (before its frame
/// loop) when a sample would read past the end, so every row always reads real data.
private let captureInputPeriods = captureFramesPerSample * 4

/// The raw input every row reads: enough noise for warm-up plus samples of the persistent rows.
private let captureInput: String = {
    let path = benchTemporaryFile("capture", extension: "raw")
    var x: UInt32 = 0x2545_F491
    let samples = (0..<(captureInputPeriods * 160)).map { _ -> Int16 in
        x ^= x << 13; x ^= x >> 17; x ^= x << 5
        return Int16(truncatingIfNeeded: x)
    }
    precondition(FileManager.default.createFile(atPath: path, contents: samples.withUnsafeBytes { Data($0) }),
                 "cannot write \(path)")
    return path
}()

/// `pcm.benchcap`, self-contained (inline null slave), so both rows can load it without the
/// system configuration.
private var captureConfigText: String {
    "pcm.benchcap { type file; slave { pcm { type null } }; file \"/dev/null\"; infile \"\(captureInput)\"; format \"raw\" }\n"
}

/// State of the raw baseline: the PCM, opened with the C API only.
private final class RawReader {
    var pcm: OpaquePointer?
    var buffer = [Int16](repeating: 0, count: 160)
    var periodsRead = 0
    init() { open() }
    func open() {
        if pcm != nil { snd_pcm_close(pcm) }
        periodsRead = 0
        var top: OpaquePointer?
        snd_config_top(&top)
        var input: OpaquePointer?
        let text = Array(captureConfigText.utf8CString)
        text.withUnsafeBufferPointer { _ = snd_input_buffer_open(&input, $0.baseAddress, $0.count - 1) }
        snd_config_load(top, input)
        snd_input_close(input)
        precondition(snd_pcm_open_lconf(&pcm, "benchcap", SND_PCM_STREAM_CAPTURE, 0, top) == 0, "raw open failed")
        snd_config_delete(top)
        precondition(snd_pcm_set_params(pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 1, 16_000, 1, 40_000) == 0)
    }
    func run(_ n: Int) -> UInt64 {
        if periodsRead + n > captureInputPeriods { open() }
        periodsRead += n
        var sum: UInt64 = 0
        buffer.withUnsafeMutableBufferPointer { b in
            for _ in 0..<n {
                let r = snd_pcm_readi(pcm, b.baseAddress, 160)
                precondition(r == 160, "raw readi returned \(r)")
                sum &+= UInt64(UInt16(bitPattern: b[0]))
            }
        }
        return sum
    }
}

/// State of the ALSACapture row.
private final class ParleyReader {
    var capture: ALSACapture<Int16>
    var frame: AudioFrame<Int16>
    var periodsRead = 0
    static func open() -> ALSACapture<Int16> {
        let tree = try! ALSAConfigurationTree(text: captureConfigText, includingSystemConfiguration: false)
        let capture = try! ALSACapture<Int16>(pcm: "benchcap", parameters: .init(format: captureFormat), configuration: tree)
        precondition(capture.setup.periodFrames == 160)
        return capture
    }
    init() {
        capture = Self.open()
        frame = capture.makeFrame()
    }
    func run(_ n: Int) -> UInt64 {
        if periodsRead + n > captureInputPeriods {
            capture = Self.open()
            periodsRead = 0
        }
        periodsRead += n
        var sum: UInt64 = 0
        for _ in 0..<n {
            try! capture.read(into: &frame)
            sum &+= UInt64(UInt16(bitPattern: frame.samples[0])) &+ UInt64(frame.timestamp)
        }
        return sum
    }
}

/// Opens a PCM, streams `n` frames through AudioCaptureStream into a consumer task, waits.
private func streamFrames(_ n: Int) -> UInt64 {
    let tree = try! ALSAConfigurationTree(text: captureConfigText, includingSystemConfiguration: false)
    let mic = try! ALSACapture<Int16>(pcm: "benchcap", parameters: .init(format: captureFormat), configuration: tree)
    // The default-sized buffer (as a client would use it): frames the consumer cannot keep up
    // with are dropped and counted, and every captured frame still costs its capture and yield.
    let stream = try! AudioCaptureStream(try! PrefixAudioSource(mic, frames: n))   // n >= 0, default capacity
    let done = DispatchSemaphore(value: 0)
    final class Box: @unchecked Sendable { var sum: UInt64 = 0; var count = 0 }
    let box = Box()
    Task.detached {
        for try await frame in stream {
            box.sum &+= UInt64(UInt16(bitPattern: frame.samples[0]))
            box.count += 1
        }
        done.signal()
    }
    done.wait()
    precondition(box.count + stream.droppedFrames == n && stream.capturedFrames == n, "stream lost frames")
    return box.sum
}

/// Benchmarks for the capture suite.
func captureBenchmarks() -> [Benchmark] {
    let raw = RawReader()
    let parley = ParleyReader()
    return [
        Benchmark(name: "capture/readi-raw-10ms", unit: .nsPerFrame, iterations: captureFramesPerSample) {
            raw.run(captureFramesPerSample)
        },
        Benchmark(name: "capture/alsa-capture-10ms", unit: .nsPerFrame, baseline: "capture/readi-raw-10ms",
                  iterations: captureFramesPerSample) {
            parley.run(captureFramesPerSample)
        },
        Benchmark(name: "capture/stream-10ms", unit: .nsPerFrame, baseline: "capture/readi-raw-10ms",
                  iterations: captureFramesPerSample) {
            streamFrames(captureFramesPerSample)
        },
    ]
}
