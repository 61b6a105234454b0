import Foundation
import ParleyCodecs
import ParleyMedia

/// The package's SampleMedia directory, found relative to this file.
let sampleMedia = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("SampleMedia")

/// A deterministic generator (SplitMix64) for random test data.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct TestDataError: Error, CustomStringConvertible { let description: String }

/// Reads a mono WAV file (any encoding ParleyMedia reads) as Float samples.
func readMonoWAV(_ url: URL) throws -> (rate: Int, samples: [Float]) {
    var reader = try WAVReader(path: url.path)
    guard reader.format.channels == 1 else { throw TestDataError(description: "\(url.lastPathComponent) is not mono") }
    var samples: [Float] = []
    var chunk = [Float](repeating: 0, count: 4096)
    while case let n = try reader.read(into: &chunk), n > 0 { samples += chunk[0..<n] }
    return (reader.format.sampleRate, samples)
}

/// Decimates by an integer factor after a windowed-sinc low-pass (cutoff 0.9 x new Nyquist).
func decimate(_ x: [Float], by factor: Int) -> [Float] {
    let taps = 64 * factor + 1
    let half = taps / 2
    let fc = 0.9 / Double(2 * factor)   // cycles per input sample
    var h = [Float](repeating: 0, count: taps)
    var sum: Double = 0
    for i in 0..<taps {
        let n = Double(i - half)
        let sinc = n == 0 ? 2 * fc : sin(2 * .pi * fc * n) / (.pi * n)
        let t = Double(i) / Double(taps - 1)
        let w = 0.42 - 0.5 * cos(2 * .pi * t) + 0.08 * cos(4 * .pi * t)   // Blackman
        h[i] = Float(sinc * w)
        sum += sinc * w
    }
    for i in 0..<taps { h[i] /= Float(sum) }
    var y = [Float](repeating: 0, count: x.count / factor)
    for j in 0..<y.count {
        let c = j * factor
        var acc: Float = 0
        for k in 0..<taps {
            let idx = c + k - half
            if idx >= 0 && idx < x.count { acc += h[k] * x[idx] }
        }
        y[j] = acc
    }
    return y
}

/// Pearson correlation of two equally long signals.
func correlation(_ a: ArraySlice<Float>, _ b: ArraySlice<Float>) -> Double {
    precondition(a.count == b.count)
    var sa = 0.0, sb = 0.0, saa = 0.0, sbb = 0.0, sab = 0.0
    for (x, y) in zip(a, b) {
        let dx = Double(x), dy = Double(y)
        sa += dx; sb += dy; saa += dx * dx; sbb += dy * dy; sab += dx * dy
    }
    let n = Double(a.count)
    let cov = sab - sa * sb / n
    return cov / ((saa - sa * sa / n).squareRoot() * (sbb - sb * sb / n).squareRoot())
}

/// Real recorded speech at `rate` Hz as floats in [-1, 1]: SampleMedia's 48 kHz or 16 kHz
/// recording, decimated when the rate is lower (48 -> 24, 12; 16 -> 8).
func speech(atRate rate: Int) throws -> [Float] {
    let source = (rate == 16_000 || rate == 8_000) ? "speech-16k.wav" : "speech-48k.wav"
    let wav = try readMonoWAV(sampleMedia.appendingPathComponent("speech").appendingPathComponent(source))
    let x = wav.samples
    guard wav.rate % rate == 0 else { throw TestDataError(description: "\(source) at \(wav.rate) Hz -> \(rate) Hz") }
    return wav.rate == rate ? x : decimate(x, by: wav.rate / rate)
}

func toInt16(_ x: [Float]) -> [Int16] { x.map { Int16(clampingFloat: $0) } }

/// A synthetic 320x240 clip longer than the sample's 15 frames (for rate-control and keyframe
/// tests): gradients, a textured background and a square moving across it.
func syntheticVideo(frames: Int = 60) -> [VideoFrame] {
    var rng = SplitMix64(state: 3)
    let texture = (0..<(320 * 240)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 24) }
    return (0..<frames).map { k in
        var f = try! VideoFrame(width: 320, height: 240, timestamp: UInt32(k * 3000))  // a valid size
        f.withUnsafeMutablePlanes { y, u, v in
            for r in 0..<240 {
                for c in 0..<320 {
                    var value = 40 + (c + r) / 4 + Int(texture[r * 320 + c])
                    let sx = 20 + k * 4, sy = 60 + k
                    if c >= sx && c < sx + 64 && r >= sy && r < sy + 64 { value = 200 - (c - sx) }
                    y[r * 320 + c] = UInt8(min(235, value))
                }
            }
            for r in 0..<120 {
                for c in 0..<160 {
                    u[r * 160 + c] = UInt8(100 + c / 8)
                    v[r * 160 + c] = UInt8(150 - r / 8)
                }
            }
        }
        return f
    }
}

/// The sample clip, SampleMedia/video/sample.y4m, read with ParleyMedia's Y4M reader.
func sampleVideo() throws -> [VideoFrame] {
    var reader = try Y4MReader(path: sampleMedia.appendingPathComponent("video/sample.y4m").path)
    var frames: [VideoFrame] = []
    while let f = try reader.readFrame() { frames.append(f) }
    return frames
}

/// Luma PSNR in dB between two pictures of the same size.
func lumaPSNR(_ a: VideoFrame, _ b: VideoFrame) -> Double {
    precondition(a.width == b.width && a.height == b.height)
    var se = 0.0
    for r in 0..<a.height {
        for c in 0..<a.width {
            let d = Double(a.data[r * a.strideY + c]) - Double(b.data[r * b.strideY + c])
            se += d * d
        }
    }
    let mse = se / Double(a.width * a.height)
    return mse == 0 ? 99 : 10 * log10(255 * 255 / mse)
}
