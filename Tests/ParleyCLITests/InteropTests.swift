// Interop: `parley send` to GStreamer and ffmpeg receivers, and GStreamer and ffmpeg senders to
// `parley receive`, over RTP/UDP on 127.0.0.1. The decoded output must match the source:
// audio by normalised correlation after alignment, video by luma PSNR. Each test moves 2 s of
// media. Tests skip (with the reason) only where gst-launch-1.0 / ffmpeg or the built `parley`
// binary are missing; CI installs the tools and `swift build --build-tests` builds the binary.

import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

private let gst = interopWhich("gst-launch-1.0")
private let ffmpeg = interopWhich("ffmpeg")
private let haveParley = FileManager.default.isExecutableFile(atPath: interopParleyBinary)
private let parleyMissing: Comment = "the parley binary is not built at .build/debug/parley (run 'swift build' first)"

/// Thresholds. Opus keeps speech close to the waveform: measured here 0.99 for the GStreamer
/// and ffmpeg encoders (CELT-leaning "audio" mode, 48 kbit/s) and 0.88-0.89 for `parley send`
/// (VoIP mode, 32 kbit/s: SILK/hybrid is less waveform-exact); unrelated audio correlates near
/// 0. VP8 at ~600-800 kbit/s on 320x240 measured 43-51 dB luma PSNR.
private let minCorrelation = 0.8
private let minPSNR = 30.0

/// 2 s of real speech at 48 kHz mono (from 0.5 s into SampleMedia/speech/speech-48k.wav).
private func makeAudioSource(in dir: URL) throws -> (URL, [Float]) {
    let wav = try readInteropWAV(interopPackageRoot.appendingPathComponent("SampleMedia/speech/speech-48k.wav"))
    let start = min(24_000, wav.samples.count / 4)
    let excerpt = Array(wav.samples[start..<min(wav.samples.count, start + 96_000)])
    let url = dir.appendingPathComponent("source.wav")
    try writeInteropWAV(url, sampleRate: 48_000, samples: excerpt)
    return (url, excerpt)
}

/// 2 s of video: SampleMedia/video/sample.y4m (0.5 s) played four times.
private func makeVideoSource(in dir: URL) throws -> (URL, InteropY4M) {
    var video = try readInteropY4M(interopPackageRoot.appendingPathComponent("SampleMedia/video/sample.y4m"))
    video.frames = Array([[[UInt8]]](repeating: video.frames, count: 4).joined())
    let url = dir.appendingPathComponent("source.y4m")
    try writeInteropY4M(url, video)
    return (url, video)
}

private func sdp(media: String, port: UInt16, payloadType: Int, rtpmap: String) -> String {
    "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=parley interop\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
        + "m=\(media) \(port) RTP/AVP \(payloadType)\r\na=rtpmap:\(payloadType) \(rtpmap)\r\n"
}

private func expectAudioMatches(_ decodedURL: URL, _ source: [Float], _ who: String) throws {
    let decoded = try readInteropWAV(decodedURL)
    #expect(decoded.sampleRate == 48_000, "\(who): sample rate")
    #expect(decoded.samples.count >= source.count * 8 / 10, "\(who): decoded \(decoded.samples.count) of \(source.count) samples")
    let (c, lag) = interopAlignedCorrelation(source: source, decoded: decoded.samples, maxLag: 24_000)
    #expect(c >= minCorrelation, "\(who): correlation \(c) at lag \(lag)")
    print("interop \(who): \(decoded.samples.count) samples, correlation \(String(format: "%.4f", c)) at lag \(lag)")
}

private func expectVideoMatches(_ decodedURL: URL, _ source: InteropY4M, _ who: String) throws {
    let decoded = try readInteropY4M(decodedURL)
    #expect(decoded.width == source.width && decoded.height == source.height, "\(who): size \(decoded.width)x\(decoded.height)")
    #expect(decoded.frames.count >= source.frames.count * 8 / 10, "\(who): \(decoded.frames.count) of \(source.frames.count) frames")
    let (psnr, n) = interopMeanPSNR(source: source, decoded: decoded)
    #expect(psnr >= minPSNR, "\(who): PSNR \(psnr) dB over \(n) frames")
    print("interop \(who): \(decoded.frames.count) frames, luma PSNR \(String(format: "%.2f", psnr)) dB over \(n)")
}

/// The `key: value` statistics `parley receive` printed.
private func receiveStatistics(_ output: String) -> [String: String] {
    var d: [String: String] = [:]
    for line in output.split(separator: "\n") {
        let parts = line.split(separator: ":", maxSplits: 1)
        if parts.count == 2 { d[String(parts[0])] = parts[1].trimmingCharacters(in: .whitespaces) }
    }
    return d
}

/// ffmpeg reading an SDP stops by itself after `-t` seconds of output; a lone SIGTERM is the
/// fallback (ffmpeg then finishes the file, but its RTP read may block up to 10 s first; a
/// second signal would abort without writing the trailer).
private func finishFFmpegReceiver(_ receiver: InteropChild) {
    if !receiver.exits(within: 5) { receiver.stop(SIGTERM, seconds: 15) }
}

private func runParleySend(_ file: URL, port: UInt16, in dir: URL) throws {
    let send = try InteropChild(interopParleyBinary, ["send", "--to", "127.0.0.1:\(port)", file.path], in: dir, name: "parley-send")
    let status = send.wait(seconds: 30)
    #expect(status == 0, "parley send failed: \(send.output)")
}

@Suite(.serialized, .tags(.realTime)) struct InteropTests {
    // MARK: parley send -> GStreamer / ffmpeg

    @Test(.enabled(if: gst != nil, "gst-launch-1.0 not installed"), .enabled(if: haveParley, parleyMissing))
    func parleySendsOpusToGStreamer() throws {
        let dir = try interopDirectory("send-opus-gst")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (src, samples) = try makeAudioSource(in: dir)
        let (receiver, port) = try startUDPReceiver { port in
            try InteropChild(gst!, ["-q", "-e", "udpsrc", "port=\(port)",
                                    "caps=application/x-rtp,media=audio,clock-rate=48000,encoding-name=OPUS,payload=111",
                                    "!", "rtpjitterbuffer", "latency=100", "!", "rtpopusdepay", "!", "opusdec", "!",
                                    "audioconvert", "!", "audioresample", "!",
                                    "audio/x-raw,rate=48000,channels=1,format=S16LE", "!", "wavenc", "!",
                                    "filesink", "location=gst.wav"], in: dir, name: "gst")
        }
        usleep(300_000)  // bound, then let the pipeline reach PLAYING
        try runParleySend(src, port: port, in: dir)
        usleep(300_000)
        #expect(receiver.stop(SIGINT) == 0, "gst-launch: \(receiver.output)")
        try expectAudioMatches(dir.appendingPathComponent("gst.wav"), samples, "parley send opus -> gstreamer")
    }

    @Test(.enabled(if: gst != nil, "gst-launch-1.0 not installed"), .enabled(if: haveParley, parleyMissing))
    func parleySendsVP8ToGStreamer() throws {
        let dir = try interopDirectory("send-vp8-gst")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (src, video) = try makeVideoSource(in: dir)
        let (receiver, port) = try startUDPReceiver { port in
            try InteropChild(gst!, ["-q", "-e", "udpsrc", "port=\(port)",
                                    "caps=application/x-rtp,media=video,clock-rate=90000,encoding-name=VP8,payload=96",
                                    "!", "rtpjitterbuffer", "latency=100", "!", "rtpvp8depay", "!", "vp8dec", "!",
                                    "y4menc", "!", "filesink", "location=gst.y4m"], in: dir, name: "gst")
        }
        usleep(300_000)  // bound, then let the pipeline reach PLAYING
        try runParleySend(src, port: port, in: dir)
        usleep(300_000)
        #expect(receiver.stop(SIGINT) == 0, "gst-launch: \(receiver.output)")
        try expectVideoMatches(dir.appendingPathComponent("gst.y4m"), video, "parley send vp8 -> gstreamer")
    }

    @Test(.enabled(if: ffmpeg != nil, "ffmpeg not installed"), .enabled(if: haveParley, parleyMissing))
    func parleySendsOpusToFFmpeg() throws {
        let dir = try interopDirectory("send-opus-ffmpeg")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (src, samples) = try makeAudioSource(in: dir)
        let (receiver, port) = try startUDPReceiver { port in
            try sdp(media: "audio", port: port, payloadType: 111, rtpmap: "opus/48000/2")
                .write(to: dir.appendingPathComponent("stream.sdp"), atomically: false, encoding: .utf8)
            return try InteropChild(ffmpeg!, ["-hide_banner", "-loglevel", "warning", "-y", "-protocol_whitelist", "file,udp,rtp",
                                              "-i", "stream.sdp", "-t", "1.9", "-ac", "1", "-ar", "48000", "ff.wav"],
                                    in: dir, name: "ffmpeg")
        }
        usleep(300_000)  // bound, then let the pipeline reach PLAYING
        try runParleySend(src, port: port, in: dir)
        finishFFmpegReceiver(receiver)
        try expectAudioMatches(dir.appendingPathComponent("ff.wav"), samples, "parley send opus -> ffmpeg")
    }

    @Test(.enabled(if: ffmpeg != nil, "ffmpeg not installed"), .enabled(if: haveParley, parleyMissing))
    func parleySendsVP8ToFFmpeg() throws {
        let dir = try interopDirectory("send-vp8-ffmpeg")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (src, video) = try makeVideoSource(in: dir)
        let (receiver, port) = try startUDPReceiver { port in
            try sdp(media: "video", port: port, payloadType: 96, rtpmap: "VP8/90000")
                .write(to: dir.appendingPathComponent("stream.sdp"), atomically: false, encoding: .utf8)
            return try InteropChild(ffmpeg!, ["-hide_banner", "-loglevel", "warning", "-y", "-protocol_whitelist", "file,udp,rtp",
                                              "-i", "stream.sdp", "-t", "1.9", "-f", "yuv4mpegpipe", "-pix_fmt", "yuv420p",
                                              "ff.y4m"],
                                    in: dir, name: "ffmpeg")
        }
        usleep(300_000)  // bound, then let the pipeline reach PLAYING
        try runParleySend(src, port: port, in: dir)
        finishFFmpegReceiver(receiver)
        try expectVideoMatches(dir.appendingPathComponent("ff.y4m"), video, "parley send vp8 -> ffmpeg")
    }

    // MARK: GStreamer / ffmpeg -> parley receive

    /// Starts `parley receive`, runs the sender to completion, waits for the receiver's idle
    /// exit and returns its statistics.
    private func receive(codec: String, output: String, in dir: URL,
                         sender: (UInt16) throws -> InteropChild) throws -> [String: String] {
        let (receiver, port) = try startUDPReceiver { port in
            try InteropChild(interopParleyBinary, ["receive", "--port", "\(port)", "--codec", codec, "--output", output,
                                                   "--idle-timeout", "3"], in: dir, name: "parley-receive")
        }
        let s = try sender(port)
        #expect(s.wait(seconds: 30) == 0, "sender failed: \(s.output)")
        #expect(receiver.wait(seconds: 10) == 0, "parley receive: \(receiver.output)")
        let stats = receiveStatistics(receiver.output)
        #expect(Int(stats["packets"] ?? "0") ?? 0 > 0, "parley receive printed: \(receiver.output)")
        #expect(stats["malformed"] == "0" && stats["lost"] == "0", "parley receive printed: \(receiver.output)")
        return stats
    }

    @Test(.enabled(if: gst != nil, "gst-launch-1.0 not installed"), .enabled(if: haveParley, parleyMissing))
    func gstreamerSendsOpusToParleyReceive() throws {
        let dir = try interopDirectory("gst-opus-receive")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (src, samples) = try makeAudioSource(in: dir)
        _ = try receive(codec: "opus", output: "received.wav", in: dir) { port in
            try InteropChild(gst!, ["-q", "filesrc", "location=\(src.path)", "!", "wavparse", "!", "audioconvert", "!",
                             "audioresample", "!", "opusenc", "bitrate=48000", "!", "rtpopuspay", "pt=111", "!",
                             "udpsink", "host=127.0.0.1", "port=\(port)"], in: dir, name: "gst")
        }
        try expectAudioMatches(dir.appendingPathComponent("received.wav"), samples, "gstreamer opus -> parley receive")
    }

    @Test(.enabled(if: gst != nil, "gst-launch-1.0 not installed"), .enabled(if: haveParley, parleyMissing))
    func gstreamerSendsVP8ToParleyReceive() throws {
        let dir = try interopDirectory("gst-vp8-receive")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (src, video) = try makeVideoSource(in: dir)
        let stats = try receive(codec: "vp8", output: "received.y4m", in: dir) { port in
            try InteropChild(gst!, ["-q", "filesrc", "location=\(src.path)", "!", "y4mdec", "!", "vp8enc", "deadline=1",
                             "target-bitrate=800000", "!", "rtpvp8pay", "pt=96", "!",
                             "udpsink", "host=127.0.0.1", "port=\(port)"], in: dir, name: "gst")
        }
        #expect(stats["frames"] == "\(video.frames.count)")
        try expectVideoMatches(dir.appendingPathComponent("received.y4m"), video, "gstreamer vp8 -> parley receive")
    }

    @Test(.enabled(if: ffmpeg != nil, "ffmpeg not installed"), .enabled(if: haveParley, parleyMissing))
    func ffmpegSendsOpusToParleyReceive() throws {
        let dir = try interopDirectory("ffmpeg-opus-receive")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (src, samples) = try makeAudioSource(in: dir)
        _ = try receive(codec: "opus", output: "received.wav", in: dir) { port in
            try InteropChild(ffmpeg!, ["-hide_banner", "-loglevel", "error", "-re", "-i", src.path, "-c:a", "libopus", "-b:a", "48k",
                                "-f", "rtp", "-payload_type", "111", "rtp://127.0.0.1:\(port)"], in: dir, name: "ffmpeg")
        }
        try expectAudioMatches(dir.appendingPathComponent("received.wav"), samples, "ffmpeg opus -> parley receive")
    }

    @Test(.enabled(if: ffmpeg != nil, "ffmpeg not installed"), .enabled(if: haveParley, parleyMissing))
    func ffmpegSendsVP8ToParleyReceiveAsIVF() throws {
        let dir = try interopDirectory("ffmpeg-vp8-receive")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (src, video) = try makeVideoSource(in: dir)
        let stats = try receive(codec: "vp8", output: "received.ivf", in: dir) { port in
            try InteropChild(ffmpeg!, ["-hide_banner", "-loglevel", "error", "-re", "-i", src.path, "-c:v", "libvpx", "-b:v", "800k",
                                "-deadline", "realtime", "-f", "rtp", "-payload_type", "96", "rtp://127.0.0.1:\(port)"],
                      in: dir, name: "ffmpeg")
        }
        #expect(stats["frames"] == "\(video.frames.count)")
        // The IVF file must be valid for another demuxer: decode it with ffmpeg and compare.
        let convert = try InteropChild(ffmpeg!, ["-hide_banner", "-loglevel", "error", "-y", "-i", "received.ivf",
                                          "-f", "yuv4mpegpipe", "-pix_fmt", "yuv420p", "decoded.y4m"], in: dir, name: "convert")
        #expect(convert.wait(seconds: 30) == 0, "ffmpeg could not read the IVF: \(convert.output)")
        try expectVideoMatches(dir.appendingPathComponent("decoded.y4m"), video, "ffmpeg vp8 -> parley receive (IVF)")
    }
}
