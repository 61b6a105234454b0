import Foundation
import ParleyCodecs
import ParleyCore
import ParleyMedia

/// `parley codec`: round-trips a WAV through Opus or a Y4M through VP8/VP9 and prints the
/// quality (waveform correlation and SNR, or luma PSNR) and the bitrate reached.
let codecCommand = Command(
    name: "codec",
    summary: "Round-trip audio or video through Opus or VP8/VP9 and report the quality",
    help: """
        Usage: parley codec [options] FILE

        Encodes FILE and decodes it again in memory, then compares with the original:
          a WAV (16-bit PCM, mono or stereo, 8/12/16/24/48 kHz) through Opus: correlation and
            SNR after aligning by the encoder's lookahead, and the bitrate of the packets;
          a Y4M (I420) through VP8 or VP9 (real-time settings, 1 thread): average and lowest
            luma PSNR, keyframes and the bitrate of the frames.

        Options:
          --kbps N              target bitrate in kbit/s (default 32 for Opus, 500 for video)
          --frame-ms MS         Opus frame: 2.5, 5, 10, 20, 40, 60, 80, 100 or 120 (default 20)
          --application APP     Opus: voip, audio or lowdelay (default voip)
          --complexity N        Opus: 0...10 (default: libopus's)
          --codec NAME          video: vp8 or vp9 (default vp8)
          --cpu-used N          video speed/quality (default -6 for VP8, 7 for VP9)
          --json                print one JSON object instead of text

        Exit status: 0 done, 1 unreadable file or codec error, 2 usage error.
        """,
    run: { args in runCodec(args) }
)

private func runCodec(_ args: [String]) -> Int32 {
    let s: ArgumentScanner
    do {
        s = try ArgumentScanner(args, valued: ["kbps", "frame-ms", "application", "complexity", "codec", "cpu-used"],
                                flagNames: ["json"])
        guard s.positionals.count == 1 else {
            throw ArgumentScanner.UsageError(description: "expected one WAV or Y4M file")
        }
    } catch {
        printError("parley codec: \(error)")
        return ExitStatus.usage
    }
    let path = s.positionals[0]
    let ext = (path as NSString).pathExtension.lowercased()
    do {
        let report: [(String, String)]
        switch ext {
        case "wav": report = try opusRoundTrip(path, s)
        case "y4m": report = try vpxRoundTrip(path, s)
        default: throw ArgumentScanner.UsageError(description: "\(path): expected a .wav or .y4m file")
        }
        if s.flag("json") {
            print("{" + report.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}")
        } else {
            for (k, v) in report { print(k.padding(toLength: 18, withPad: " ", startingAt: 0) + v.replacingOccurrences(of: "\"", with: "")) }
        }
        return ExitStatus.success
    } catch let e as ArgumentScanner.UsageError {
        printError("parley codec: \(e)")
        return ExitStatus.usage
    } catch let e as MediaFileError {
        printError("parley codec: \(e)")
        return ExitStatus.failure
    } catch {
        printError("parley codec: \(path): \(error)")
        return ExitStatus.failure
    }
}

private func codecFixed(_ x: Double, _ digits: Int) -> String {
    x.isFinite ? String(format: "%.\(digits)f", x) : "null"
}

private func opusRoundTrip(_ path: String, _ s: ArgumentScanner) throws -> [(String, String)] {
    let kbps = try s.int("kbps", default: 32, in: 1...512)
    let frameMs = try s.double("frame-ms", default: 20, in: 2.5...120)
    let application: OpusApplication
    switch s.value("application") ?? "voip" {
    case "voip": application = .voip
    case "audio": application = .audio
    case "lowdelay": application = .restrictedLowDelay
    case let other: throw ArgumentScanner.UsageError(description: "--application must be voip, audio or lowdelay, got '\(other)'")
    }
    let audio = try readCodecWAV(path)
    let frame = Int((Double(audio.sampleRate) * frameMs / 1000).rounded())
    guard isValidOpusFrameSize(samplesPerChannel: frame, sampleRate: audio.sampleRate),
          abs(Double(frame) * 1000 / Double(audio.sampleRate) - frameMs) < 1e-9 else {
        throw ArgumentScanner.UsageError(description: "--frame-ms must be 2.5, 5, 10, 20, 40, 60, 80, 100 or 120, got \(frameMs)")
    }
    var encoder = try OpusEncoder(sampleRate: audio.sampleRate, channels: audio.channels, application: application)
    try encoder.setBitrate(kbps * 1000)
    if s.value("complexity") != nil { try encoder.setComplexity(try s.int("complexity", default: 9, in: 0...10)) }
    var decoder = try OpusDecoder(sampleRate: audio.sampleRate, channels: audio.channels)
    let ch = audio.channels, step = frame * ch
    var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
    var pcm = [Int16](repeating: 0, count: step)
    var output = [Int16]()
    output.reserveCapacity(audio.samples.count)
    var bytes = 0, packets = 0
    var start = 0
    while start + step <= audio.samples.count {
        let n = try audio.samples.withUnsafeBufferPointer { all in
            try packet.withUnsafeMutableBytes { out in
                try encoder.encode(UnsafeBufferPointer(rebasing: all[start..<start + step]), into: out)
            }
        }
        bytes += n
        packets += 1
        _ = try decoder.decode(Array(packet[0..<n]), into: &pcm)
        output += pcm
        start += step
    }
    guard packets > 0 else { throw MediaFileError.unsupported(path: path, what: "audio shorter than one \(frameMs) ms frame") }
    // Compare input sample i with output sample i + lookahead, all channels interleaved.
    let lag = encoder.lookahead * ch
    var sx = 0.0, sy = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0, noise = 0.0
    let count = output.count - lag
    for i in 0..<count {
        let x = Double(audio.samples[i]), y = Double(output[i + lag])
        sx += x; sy += y; sxx += x * x; syy += y * y; sxy += x * y
        noise += (x - y) * (x - y)
    }
    let n = Double(count)
    let r = (sxy - sx * sy / n) / ((sxx - sx * sx / n).squareRoot() * (syy - sy * sy / n).squareRoot())
    let seconds = Double(packets * frame) / Double(audio.sampleRate)
    return [
        ("codec", "\"opus\""),
        ("sample_rate_hz", "\(audio.sampleRate)"),
        ("channels", "\(ch)"),
        ("application", "\"\(application)\""),
        ("frame_ms", codecFixed(frameMs, 1)),
        ("target_kbps", "\(kbps)"),
        ("packets", "\(packets)"),
        ("kbps", codecFixed(Double(bytes * 8) / seconds / 1000, 2)),
        ("lookahead_samples", "\(encoder.lookahead)"),
        ("correlation", codecFixed(r, 4)),
        ("snr_db", codecFixed(10 * log10(sxx / noise), 2)),
    ]
}

private func vpxRoundTrip(_ path: String, _ s: ArgumentScanner) throws -> [(String, String)] {
    let codec: VPXCodec
    switch s.value("codec") ?? "vp8" {
    case "vp8": codec = .vp8
    case "vp9": codec = .vp9
    case let other: throw ArgumentScanner.UsageError(description: "--codec must be vp8 or vp9, got '\(other)'")
    }
    let kbps = try s.int("kbps", default: 500, in: 10...100_000)
    let video = try readCodecY4M(path)
    guard !video.frames.isEmpty else { throw MediaFileError.unsupported(path: path, what: "a Y4M file with no frames") }
    let header = video.header
    let fps = max(1, Int((Double(header.frameRateNumerator) / Double(header.frameRateDenominator)).rounded()))
    var config = VPXEncoderConfiguration(codec: codec, width: header.width, height: header.height,
                                         framesPerSecond: fps, targetBitrateKbps: kbps)
    if s.value("cpu-used") != nil { config.cpuUsed = try s.int("cpu-used", default: 0, in: -16...16) }
    var encoder = try VPXEncoder(config)
    var decoder = try VPXDecoder(codec: codec)
    var packet = VPXPacket()
    var decoded = try VideoFrame(width: header.width, height: header.height)
    var bytes = 0, keyframes = 0, psnrSum = 0.0, psnrMin = Double.infinity, compared = 0
    for f in video.frames {
        guard try encoder.encode(f, into: &packet) else { continue }
        bytes += packet.data.count
        if packet.isKeyframe { keyframes += 1 }
        guard try decoder.decode(packet.data, into: &decoded) else { continue }
        var se = 0.0
        for row in 0..<f.height {
            for col in 0..<f.width {
                let d = Double(f.data[row * f.strideY + col]) - Double(decoded.data[row * decoded.strideY + col])
                se += d * d
            }
        }
        let psnr = se == 0 ? 99 : 10 * log10(255 * 255 * Double(f.width * f.height) / se)
        psnrSum += psnr
        psnrMin = min(psnrMin, psnr)
        compared += 1
    }
    let seconds = Double(video.frames.count) * Double(header.frameRateDenominator) / Double(header.frameRateNumerator)
    return [
        ("codec", "\"\(codec.rawValue)\""),
        ("width", "\(header.width)"),
        ("height", "\(header.height)"),
        ("fps", codecFixed(Double(header.frameRateNumerator) / Double(header.frameRateDenominator), 2)),
        ("target_kbps", "\(kbps)"),
        ("frames", "\(compared)"),
        ("keyframes", "\(keyframes)"),
        ("kbps", codecFixed(Double(bytes * 8) / seconds / 1000, 2)),
        ("luma_psnr_db", codecFixed(psnrSum / Double(max(compared, 1)), 2)),
        ("luma_psnr_min_db", codecFixed(psnrMin, 2)),
    ]
}

/// A WAV file's interleaved samples, read whole: 16-bit PCM, mono or stereo.
private func readCodecWAV(_ path: String) throws(MediaFileError) -> (sampleRate: Int, channels: Int, samples: [Int16]) {
    var reader = try WAVReader(path: path)
    let format = reader.format
    guard format.encoding == .int16, format.channels <= 2 else {
        throw .unsupported(path: path, what: "\(format) (parley codec takes 16-bit PCM, mono or stereo)")
    }
    var samples: [Int16] = []
    var chunk = [Int16](repeating: 0, count: 4096 * format.channels)
    while true {
        let frames = try reader.read(into: &chunk)
        if frames == 0 { break }
        samples += chunk[0..<(frames * format.channels)]
    }
    return (format.sampleRate, format.channels, samples)
}

/// A Y4M file read whole: size, frame rate and the pictures.
private func readCodecY4M(_ path: String) throws(MediaFileError) -> (header: Y4MHeader, frames: [VideoFrame]) {
    var reader = try Y4MReader(path: path)
    var frames: [VideoFrame] = []
    while let frame = try reader.readFrame() { frames.append(frame) }
    return (reader.header, frames)
}
