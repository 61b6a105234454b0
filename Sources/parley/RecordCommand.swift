import Foundation
import ParleyCodecs
import ParleyDevices
import ParleyMedia

/// `parley record`: capture from a microphone (ALSA) into a WAV file, or from a camera (V4L2,
/// or the synthetic test pattern) into VP8/IVF or Y4M.
let recordCommand = Command(
    name: "record",
    summary: "Record from a microphone or camera",
    help: """
    Usage: parley record --audio PCM [--rate R] [--channels C] [--float] [--period-ms P]
                         [--alsa-config FILE] --seconds S --output FILE.wav [--quiet]
           parley record --video DEVICE [--size WxH] [--fps F] [--bitrate KBPS]
                         --seconds S --output FILE.ivf|FILE.y4m

    Audio: captures S seconds from the ALSA PCM named PCM ('default', 'hw:1,0',
    'plughw:1,0', or a name defined in your ALSA configuration; 'parley devices' lists them)
    into a WAV file, exactly R*S samples per channel.
      --rate R         sample rate in Hz (default 48000)
      --channels C     channel count (default 1)
      --float          capture FLOAT_LE and write a 32-bit float WAV (default: S16_LE, 16-bit)
      --period-ms P    ALSA period in milliseconds (default 10)
      --alsa-config F  also load PCM definitions from F (snd_pcm_open_lconf); alternatively
                       set ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:F
      --quiet          no live meter
    On a terminal, stderr shows a live level meter (dBFS) and the talking state from
    ParleyVoice's VAD and talk detector. Overruns are recovered and reported at the end.

    Video: captures S seconds from the V4L2 node DEVICE (e.g. /dev/video0; frames converted
    to I420 by libv4lconvert), from the synthetic moving test pattern when DEVICE is
    'pattern', or from a Y4M file played as a camera at its own size and rate when DEVICE
    ends in .y4m (stops at the file's end). FILE.ivf is VP8 (libvpx, real-time), FILE.y4m is
    raw I420.
      --size WxH       picture size (default 640x480; must be offered by the camera)
      --fps F          frame rate (default 30; the camera must reach it)
      --bitrate KBPS   VP8 target bitrate (default 800)

    Exit status: 0 recorded; 1 the device or file failed (the message names the device and
    what to check); 2 usage error.

    Example (no sound card needed): with test.conf containing
      pcm.testpcm { type file; slave.pcm null; file "/dev/null"; infile "in.raw"; format "raw" }
    ALSA_CONFIG_PATH=/usr/share/alsa/alsa.conf:test.conf \\
      parley record --audio testpcm --rate 16000 --seconds 1 --output out.wav
    writes the raw samples of in.raw into out.wav.
    """,
    run: { args in
        let scanner: ArgumentScanner
        do {
            scanner = try ArgumentScanner(args, valued: ["audio", "video", "rate", "channels", "period-ms", "alsa-config",
                                                        "seconds", "output", "size", "fps", "bitrate"],
                                          flagNames: ["float", "quiet"])
        } catch {
            printError("parley record: \(error)")
            return ExitStatus.usage
        }
        return runReportingErrors("record") { try runRecord(scanner) }
    }
)

private func runRecord(_ s: ArgumentScanner) throws -> Int32 {
    guard s.positionals.isEmpty else {
        throw ArgumentScanner.UsageError(description: "unexpected argument '\(s.positionals[0])'")
    }
    let audio = s.value("audio"), video = s.value("video")
    guard (audio == nil) != (video == nil) else {
        throw ArgumentScanner.UsageError(description: "give exactly one of --audio PCM or --video DEVICE")
    }
    guard let secondsText = s.value("seconds") else {
        throw ArgumentScanner.UsageError(description: "--seconds is required")
    }
    let seconds = try s.double("seconds", default: 0, in: 0.001...86_400)
    _ = secondsText
    guard let output = s.value("output") else {
        throw ArgumentScanner.UsageError(description: "--output is required")
    }
    if let audio {
        guard output.lowercased().hasSuffix(".wav") else {
            throw ArgumentScanner.UsageError(description: "audio is recorded to a .wav file, got '\(output)'")
        }
        let rate = try s.int("rate", default: 48_000, in: 1_000...384_000)
        let channels = try s.int("channels", default: 1, in: 1...32)
        let periodMs = try s.int("period-ms", default: 10, in: 1...1_000)
        let device = ALSAPCMChoice(pcm: audio, format: try AudioFormat(sampleRate: rate, channels: channels),
                                   periodMs: periodMs, configPath: s.value("alsa-config"))
        let options = AudioRecordOptions(device: device, seconds: seconds, output: output, quiet: s.flag("quiet"))
        if s.flag("float") {
            try recordAudio(Float.self, options)
        } else {
            try recordAudio(Int16.self, options)
        }
        return ExitStatus.success
    }
    let lower = output.lowercased()
    guard lower.hasSuffix(".ivf") || lower.hasSuffix(".y4m") else {
        throw ArgumentScanner.UsageError(description: "video is recorded to a .ivf (VP8) or .y4m file, got '\(output)'")
    }
    let sizeText = s.value("size") ?? "640x480"
    let parts = sizeText.lowercased().split(separator: "x")
    guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), (16...8192).contains(w), (16...8192).contains(h),
          w % 2 == 0, h % 2 == 0 else {
        throw ArgumentScanner.UsageError(description: "--size must be WxH with even sizes from 16 to 8192, got '\(sizeText)'")
    }
    let fps = try s.int("fps", default: 30, in: 1...240)
    let bitrate = try s.int("bitrate", default: 800, in: 10...100_000)
    let frames = max(1, Int((seconds * Double(fps)).rounded()))
    let options = VideoRecordOptions(size: FrameSize(width: w, height: h), fps: fps, bitrateKbps: bitrate,
                                     frames: frames, output: output)
    if video == "pattern" {
        var source = try PatternSource(width: w, height: h, framesPerSecond: Double(fps), frameCount: frames)
        try recordVideo(&source, name: "test pattern", options)
    } else if video!.lowercased().hasSuffix(".y4m") {
        // A recorded camera: the file's own size and rate, paced in real time.
        let file = try ParleyDevices.Y4MFileProvider(path: video!)
        var source = try Y4MFileSource(file)
        var o = options
        o.size = FrameSize(width: source.width, height: source.height)
        o.fps = max(1, Int(source.framesPerSecond.rounded()))
        o.frames = max(1, Int((seconds * source.framesPerSecond).rounded()))
        try recordVideo(&source, name: video!, o)
    } else {
        var camera = try V4L2Capture(device: video!, request: V4L2Request(size: options.size, framesPerSecond: Double(fps)))
        try recordVideo(&camera, name: video!, options)
        try camera.close()
    }
    return ExitStatus.success
}

struct AudioRecordOptions {
    var device: ALSAPCMChoice
    var seconds: Double
    var output: String
    var quiet: Bool
}

private func recordAudio<S: AudioSample>(_: S.Type, _ o: AudioRecordOptions) throws {
    var mic = try o.device.open(ALSACapture<S>.self)
    let format = o.device.parameters.format
    var writer = try ParleyMedia.WAVWriter(path: o.output, format: WAVFormat(sampleRate: format.sampleRate, channels: format.channels,
                                                                 encoding: S.self == Float.self ? .float32 : .int16))
    let total = Int((o.seconds * Double(format.sampleRate)).rounded())
    var frame = mic.makeFrame()
    var meter = DeviceLevelMeter(format: format, framesPerRead: frame.samplesPerChannel,
                                 totalSeconds: o.seconds, quiet: o.quiet)
    var done = 0
    while done < total {
        let n = min(frame.samplesPerChannel, total - done)
        if n == frame.samplesPerChannel {
            try mic.read(into: &frame)
        } else {
            // The tail: exactly the samples still wanted, so the file has R*S samples.
            try frame.withUnsafeMutableSamples { buf in
                try mic.read(into: UnsafeMutableBufferPointer(rebasing: buf[0..<(n * format.channels)]))
            }
        }
        try frame.samples.withUnsafeBufferPointer { buf in
            let part = UnsafeBufferPointer(rebasing: buf[0..<(n * format.channels)])
            if S.self == Float.self {
                try writer.write(UnsafeBufferPointer(start: UnsafeRawPointer(part.baseAddress)?.assumingMemoryBound(to: Float.self),
                                                     count: part.count))
            } else {
                try writer.write(UnsafeBufferPointer(start: UnsafeRawPointer(part.baseAddress)?.assumingMemoryBound(to: Int16.self),
                                                     count: part.count))
            }
        }
        done += n
        meter.update(frame, elapsedSeconds: Double(done) / Double(format.sampleRate))
    }
    meter.finish()
    try writer.close()
    let (setup, xruns) = try closeALSA(mic)
    printError("recorded \(String(format: "%.3f", Double(done) / Double(format.sampleRate))) s (\(done) samples per channel) "
               + "from ALSA PCM '\(o.device.pcm)' (\(setup)) to \(o.output); overruns \(xruns.overruns), suspends \(xruns.suspends)")
}

struct VideoRecordOptions {
    var size: FrameSize
    var fps: Int
    var bitrateKbps: Int
    var frames: Int
    var output: String
}

private func recordVideo<Source: VideoCaptureSource & ~Copyable>(_ source: inout Source, name: String,
                                                                 _ o: VideoRecordOptions) throws {
    var frame = try VideoFrame(width: o.size.width, height: o.size.height)
    var written = 0
    if o.output.lowercased().hasSuffix(".y4m") {
        var y4m = try ParleyMedia.Y4MWriter(path: o.output, header: ParleyMedia.Y4MHeader(width: o.size.width, height: o.size.height,
                                                                  frameRateNumerator: o.fps, frameRateDenominator: 1))
        while written < o.frames, try source.read(into: &frame) {
            try y4m.write(frame)
            written += 1
        }
        try y4m.close()
    } else {
        var config = VPXEncoderConfiguration(codec: .vp8, width: o.size.width, height: o.size.height,
                                             framesPerSecond: o.fps, targetBitrateKbps: o.bitrateKbps)
        config.keyframeMaxInterval = max(1, o.fps * 2)
        var encoder = try VPXEncoder(config)
        // Timebase 1/fps: frame n has timestamp n.
        var ivf = try ParleyMedia.IVFWriter(path: o.output, header: ParleyMedia.IVFHeader(codec: .vp8, width: o.size.width, height: o.size.height,
                                                                   timebaseNumerator: 1, timebaseDenominator: o.fps))
        var writeError: ParleyMedia.MediaFileError?
        while written < o.frames, try source.read(into: &frame) {
            let pts = UInt64(written)
            try encoder.encode(frame, forceKeyframe: written == 0) { f in
                do throws(ParleyMedia.MediaFileError) { try ivf.write(f.bytes, timestamp: pts) } catch { writeError = error }
            }
            if let writeError { throw writeError }
            written += 1
        }
        try ivf.close()
    }
    printError("recorded \(written) frames (\(o.size) at \(o.fps) fps) from \(name) to \(o.output)")
}
