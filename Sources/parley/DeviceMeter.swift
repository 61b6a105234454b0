// The live level meter (and talking state) `parley record --audio` draws on a terminal.
import Foundation
import ParleyCore
import ParleyVoice
#if canImport(Glibc)
import Glibc
#endif

/// Draws one status line on standard error, redrawn in place at most every 100 ms:
/// `[#########.....................]  -23.4 dBFS  talking  1.20/5.00 s`.
/// Only active when standard error is a terminal (so logs and pipes get no escape codes).
struct DeviceLevelMeter {
    let enabled: Bool
    let totalSeconds: Double
    private var vad: VoiceActivityDetector?
    private var talk = TalkDetector()
    private var mono: [Float]
    private var lastDraw = MonotonicTime.zero
    private var peakDb: Float = -100
    private var lastDb: Float = -100
    private var lastElapsed = 0.0

    init(format: AudioFormat, framesPerRead: Int, totalSeconds: Double, quiet: Bool) {
        enabled = !quiet && isatty(STDERR_FILENO) != 0
        self.totalSeconds = totalSeconds
        vad = enabled ? try? VoiceActivityDetector(sampleRate: format.sampleRate) : nil
        mono = [Float](repeating: 0, count: framesPerRead)
    }

    /// Measures `frame` (level of all channels; VAD on channel 0) and redraws if due.
    mutating func update<S: AudioSample>(_ frame: borrowing AudioFrame<S>, elapsedSeconds: Double) {
        guard enabled else { return }
        let channels = frame.format.channels
        let n = frame.samplesPerChannel
        if mono.count < n { mono = [Float](repeating: 0, count: n) }
        var sum: Float = 0
        frame.samples.withUnsafeBufferPointer { s in
            mono.withUnsafeMutableBufferPointer { m in
                for i in 0..<n {
                    let v = s[i * channels].floatValue
                    m[i] = v
                    for c in 0..<channels { let x = s[i * channels + c].floatValue; sum += x * x }
                }
            }
        }
        let rms = (sum / Float(max(1, n * channels))).squareRoot()
        let db = rms > 0 ? max(-100, 20 * log10(rms)) : -100
        peakDb = max(peakDb, db)
        lastDb = db
        lastElapsed = elapsedSeconds
        if vad != nil {
            mono.withUnsafeBufferPointer { m in
                vad!.process(UnsafeBufferPointer(rebasing: m[0..<n])) { d in _ = talk.process(d) }
            }
        }
        let now = MonotonicTime.now()
        guard lastDraw.nanoseconds(to: now) >= 100_000_000 else { return }
        lastDraw = now
        draw(db: peakDb, elapsed: elapsedSeconds)
        peakDb = -100
    }

    private func draw(db: Float, elapsed: Double) {
        let width = 30
        let filled = Int(((db + 60) / 60 * Float(width)).rounded())
        let bar = String(repeating: "#", count: max(0, min(width, filled)))
            + String(repeating: ".", count: max(0, width - max(0, filled)))
        let state = vad == nil ? "" : (talk.isTalking ? "  talking" : "  silent ")
        let line = String(format: "\r[%@] %6.1f dBFS%@  %.2f/%.2f s\u{1B}[K", bar, db, state, elapsed, totalSeconds)
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Draws the final state (so even a recording shorter than one redraw shows it) and
    /// ends the status line.
    func finish() {
        guard enabled else { return }
        draw(db: max(peakDb, lastDb), elapsed: lastElapsed)
        FileHandle.standardError.write(Data("\n".utf8))
    }
}
