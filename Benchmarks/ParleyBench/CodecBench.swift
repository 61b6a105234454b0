// Codec benchmarks: Opus and VP8 through the Swift API, each against the same work done by a
// direct C loop over libopus/libvpx in the same run (rows ending in `-c` are the baselines).
// Both sides get identical settings and input, prepared before timing, and produce identical
// bitstreams (the checksums are the packet bytes), so the ratio is the wrapper's overhead.
//
// How it is timed, so that a 2 % comparison survives a shared machine (other builds on the same
// 2 cores):
// - Figures are the benchmark thread's CPU time per frame (CLOCK_THREAD_CPUTIME_ID), not wall
//   time: the work is single-threaded, so on an idle machine the two agree, but CPU time does
//   not count the time the thread spent preempted.
// - Each Swift row and its C baseline are measured as a pair, in alternating blocks of a few
//   frames over the same frames (C then Swift, then Swift then C, ...), so slow drifts in
//   machine load and cache warmth hit both sides alike. A pair is measured when the baseline
//   row takes a sample; the Swift row's samples are the Swift halves of those same pairs, in
//   order (or fresh pairs if it runs alone). Each side keeps its own codec state and sees the
//   frames in the same order.

import COpus
import CVPX
import Foundation
import ParleyCodecs
import ParleyMedia

/// Benchmarks for the codec suite.
func codecBenchmarks() -> [Benchmark] {
    let speech = CodecBenchData.speech48k()
    // The sample clip is 15 frames; four passes make each timed sample 60 frames (2 s).
    var frames: [VideoFrame] = []
    for _ in 0..<4 { frames += CodecBenchData.video() }
    return opusBenchmarks(speech) + vp8Benchmarks(frames)
}

/// The calling thread's CPU time in nanoseconds.
private func threadCPUNanoseconds() -> Int64 {
    var t = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
    return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
}

/// Measures a Swift implementation and its C baseline in alternating blocks of frames (see the
/// file comment). Each closure processes the frames in the given range and returns a checksum.
private final class PairedTiming {
    let frames: Int
    let block: Int
    let baseline: (Range<Int>) -> UInt64
    let subject: (Range<Int>) -> UInt64
    private var pendingSubject: [Double] = []
    private var checksum: UInt64 = 0

    init(frames: Int, block: Int, baseline: @escaping (Range<Int>) -> UInt64, subject: @escaping (Range<Int>) -> UInt64) {
        self.frames = frames; self.block = block; self.baseline = baseline; self.subject = subject
    }

    /// One pair: ns per frame of the baseline and of the subject over all frames.
    private func measure() -> (baseline: Double, subject: Double) {
        var cTime: Int64 = 0, swiftTime: Int64 = 0
        var cSum: UInt64 = 0, swiftSum: UInt64 = 0
        for (k, start) in stride(from: 0, to: frames, by: block).enumerated() {
            let range = start..<min(start + block, frames)
            // Alternate which side goes first, so neither always finds the input warm in cache.
            if k % 2 == 0 {
                let t0 = threadCPUNanoseconds()
                cSum &+= baseline(range)
                let t1 = threadCPUNanoseconds()
                swiftSum &+= subject(range)
                let t2 = threadCPUNanoseconds()
                cTime += t1 - t0
                swiftTime += t2 - t1
            } else {
                let t0 = threadCPUNanoseconds()
                swiftSum &+= subject(range)
                let t1 = threadCPUNanoseconds()
                cSum &+= baseline(range)
                let t2 = threadCPUNanoseconds()
                swiftTime += t1 - t0
                cTime += t2 - t1
            }
        }
        // Same input, same settings, same state history: the outputs (sizes and sampled bytes)
        // must agree, which shows both sides did the same work.
        precondition(cSum == swiftSum, "the Swift and C loops produced different output")
        checksum &+= cSum
        blackHole(checksum)
        return (Double(cTime) / Double(frames), Double(swiftTime) / Double(frames))
    }

    /// The baseline row (`name` ends in `-c`).
    func baselineRow(_ name: String) -> Benchmark {
        Benchmark(name: name, unit: .nsPerFrame) { [self] in
            let m = measure()
            pendingSubject.append(m.subject)
            return m.baseline
        }
    }

    /// The Swift row, compared with `baseline`.
    func subjectRow(_ name: String, baseline: String) -> Benchmark {
        Benchmark(name: name, unit: .nsPerFrame, baseline: baseline) { [self] in
            pendingSubject.isEmpty ? measure().subject : pendingSubject.removeFirst()
        }
    }
}

enum CodecBenchData {
    /// Mono 48 kHz speech, whole 20 ms frames: SampleMedia's recording when present.
    static func speech48k() -> [Int16] {
        var samples = (try? readMono16(sampleMediaDirectory.appendingPathComponent("speech/speech-48k.wav").path))
            ?? synthetic()
        samples.removeLast(samples.count % 960)
        return samples
    }

    /// All samples of a mono WAV file, through ParleyMedia's reader.
    private static func readMono16(_ path: String) throws -> [Int16] {
        var reader = try WAVReader(path: path)
        guard reader.format.channels == 1, reader.format.sampleRate == 48_000 else { return synthetic() }
        var out: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 4096)
        while case let n = try reader.read(into: &chunk), n > 0 { out += chunk[0..<n] }
        return out
    }

    /// 5 s of a voiced, speech-like signal (used only when SampleMedia is absent).
    private static func synthetic() -> [Int16] {
        (0..<240_000).map { i in
            let t = Double(i) / 48_000
            let f0 = 120 + 30 * sin(2 * .pi * 0.7 * t)
            var v = 0.0
            for h in 1...20 { v += sin(2 * .pi * f0 * Double(h) * t) / Double(h) }
            return Int16(6000 * v * max(0, sin(2 * .pi * 2 * t)))
        }
    }

    /// The 320x240 sample clip (SampleMedia/video/sample.y4m) or a synthetic moving picture.
    static func video() -> [VideoFrame] {
        if var reader = try? Y4MReader(path: sampleMediaDirectory.appendingPathComponent("video/sample.y4m").path),
           reader.header.width == 320, reader.header.height == 240 {
            var frames: [VideoFrame] = []
            while let f = try? reader.readFrame() { frames.append(f) }
            if !frames.isEmpty { return frames }
        }
        var rng = SystemRandomNumberGenerator()
        let texture = (0..<(320 * 240)).map { _ in UInt8.random(in: 0..<24, using: &rng) }
        return (0..<60).map { k in
            var f = try! VideoFrame(width: 320, height: 240, timestamp: UInt32(k * 3000))  // a valid size
            f.withUnsafeMutablePlanes { y, _, _ in
                for r in 0..<240 {
                    for c in 0..<320 {
                        let inSquare = c >= 20 + 4 * k && c < 84 + 4 * k && r >= 60 + k && r < 124 + k
                        y[r * 320 + c] = inSquare ? UInt8(200 - (c - 20 - 4 * k)) : UInt8(40 + (c + r) / 4 + Int(texture[r * 320 + c]))
                    }
                }
            }
            return f
        }
    }
}

// MARK: Opus

private let opusBitrate: Int32 = 32_000

/// A libopus encoder made and configured directly through the C API.
private func cOpusEncoder() -> OpaquePointer {
    var err: Int32 = 0
    let st = opus_encoder_create(48_000, 1, OPUS_APPLICATION_VOIP, &err)!
    precondition(parley_opus_encoder_set_bitrate(st, opusBitrate) == OPUS_OK)
    return st
}

private func opusBenchmarks(_ speech: [Int16]) -> [Benchmark] {
    let frameCount = speech.count / 960
    let input = UnsafeMutableBufferPointer<Int16>.allocate(capacity: speech.count)
    _ = input.initialize(from: speech)

    // Encode: the same frames through the Swift OpusEncoder and through opus_encode.
    let cEncoder = cOpusEncoder()
    let cPacket = UnsafeMutableRawBufferPointer.allocate(byteCount: 4000, alignment: 1)
    let encodeC = { (frames: Range<Int>) -> UInt64 in
        var sum: UInt64 = 0
        for i in frames {
            let n = opus_encode(cEncoder, input.baseAddress! + i * 960, 960,
                                cPacket.baseAddress!.assumingMemoryBound(to: UInt8.self), 4000)
            sum &+= UInt64(n) &+ UInt64(cPacket[Int(n) - 1])
        }
        return sum
    }
    let swiftEncoder = OpusEncoderBox(try! OpusEncoder(sampleRate: 48_000, channels: 1, application: .voip))
    try! swiftEncoder.encoder.setBitrate(Int(opusBitrate))  // a fixed, valid rate
    let swiftPacket = UnsafeMutableRawBufferPointer.allocate(byteCount: 4000, alignment: 1)
    let encodeSwift = { (frames: Range<Int>) -> UInt64 in
        var sum: UInt64 = 0
        for i in frames {
            let pcm = UnsafeBufferPointer(rebasing: input[i * 960..<(i + 1) * 960])
            let n = try! swiftEncoder.encoder.encode(pcm, into: swiftPacket)
            sum &+= UInt64(n) &+ UInt64(swiftPacket[n - 1])
        }
        return sum
    }

    // Decode: packets encoded before timing, decoded by both.
    var packets: [[UInt8]] = []
    let prep = cOpusEncoder()
    for i in 0..<frameCount {
        let n = opus_encode(prep, input.baseAddress! + i * 960, 960,
                            cPacket.baseAddress!.assumingMemoryBound(to: UInt8.self), 4000)
        packets.append(Array(UnsafeRawBufferPointer(rebasing: cPacket[0..<Int(n)])))
    }
    opus_encoder_destroy(prep)
    // One contiguous buffer of packets plus offsets, so neither loop touches Swift arrays.
    var offsets = [0]
    for p in packets { offsets.append(offsets.last! + p.count) }
    let stream = UnsafeMutableRawBufferPointer.allocate(byteCount: offsets.last!, alignment: 1)
    for (i, p) in packets.enumerated() { p.withUnsafeBytes { stream.baseAddress!.advanced(by: offsets[i]).copyMemory(from: $0.baseAddress!, byteCount: $0.count) } }
    let offsetBuffer = UnsafeMutableBufferPointer<Int>.allocate(capacity: offsets.count)
    _ = offsetBuffer.initialize(from: offsets)

    var err: Int32 = 0
    let cDecoder = opus_decoder_create(48_000, 1, &err)!
    let cPCM = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 5760)
    let decodeC = { (frames: Range<Int>) -> UInt64 in
        var sum: UInt64 = 0
        for i in frames {
            let start = offsetBuffer[i]
            let n = opus_decode(cDecoder, stream.baseAddress!.advanced(by: start).assumingMemoryBound(to: UInt8.self),
                                Int32(offsetBuffer[i + 1] - start), cPCM.baseAddress!, 5760, 0)
            sum &+= UInt64(n) &+ UInt64(UInt16(bitPattern: cPCM[100]))
        }
        return sum
    }
    let swiftDecoder = OpusDecoderBox(try! OpusDecoder(sampleRate: 48_000, channels: 1))
    let swiftPCM = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 5760)
    let decodeSwift = { (frames: Range<Int>) -> UInt64 in
        var sum: UInt64 = 0
        for i in frames {
            let packet = UnsafeRawBufferPointer(rebasing: stream[offsetBuffer[i]..<offsetBuffer[i + 1]])
            let n = try! swiftDecoder.decoder.decode(packet, into: swiftPCM)
            sum &+= UInt64(n) &+ UInt64(UInt16(bitPattern: swiftPCM[100]))
        }
        return sum
    }
    let encode = PairedTiming(frames: frameCount, block: 10, baseline: encodeC, subject: encodeSwift)
    let decode = PairedTiming(frames: frameCount, block: 10, baseline: decodeC, subject: decodeSwift)
    return [encode.baselineRow("codec/opus-encode-48k-20ms-c"),
            encode.subjectRow("codec/opus-encode-48k-20ms", baseline: "codec/opus-encode-48k-20ms-c"),
            decode.baselineRow("codec/opus-decode-48k-20ms-c"),
            decode.subjectRow("codec/opus-decode-48k-20ms", baseline: "codec/opus-decode-48k-20ms-c")]
}

/// Holds a non-copyable codec for a benchmark closure (the harness takes escaping closures).
private final class OpusEncoderBox {
    var encoder: OpusEncoder
    init(_ e: consuming OpusEncoder) { encoder = e }
}

private final class OpusDecoderBox {
    var decoder: OpusDecoder
    init(_ d: consuming OpusDecoder) { decoder = d }
}

private final class VPXEncoderBox {
    var encoder: VPXEncoder
    init(_ e: consuming VPXEncoder) { encoder = e }
}

private final class VPXDecoderBox {
    var decoder: VPXDecoder
    init(_ d: consuming VPXDecoder) { decoder = d }
}

// MARK: VP8

/// A libvpx VP8 encoder configured through the C API exactly as ``VPXEncoder`` does for
/// `VPXEncoderConfiguration(codec: .vp8, width: 320, height: 240)` (500 kbit/s, 30 fps).
private func cVP8Encoder() -> UnsafeMutablePointer<vpx_codec_ctx_t> {
    let iface = vpx_codec_vp8_cx()
    var cfg = vpx_codec_enc_cfg_t()
    precondition(vpx_codec_enc_config_default(iface, &cfg, 0) == VPX_CODEC_OK)
    cfg.g_w = 320; cfg.g_h = 240
    cfg.g_timebase = vpx_rational(num: 1, den: 90_000)
    cfg.g_threads = 1
    cfg.g_lag_in_frames = 0
    cfg.g_pass = VPX_RC_ONE_PASS
    cfg.g_error_resilient = vpx_codec_er_flags_t(VPX_ERROR_RESILIENT_DEFAULT)
    cfg.rc_end_usage = VPX_CBR
    cfg.rc_target_bitrate = 500
    cfg.rc_min_quantizer = 2; cfg.rc_max_quantizer = 56
    cfg.rc_dropframe_thresh = 0
    cfg.rc_undershoot_pct = 100; cfg.rc_overshoot_pct = 15
    cfg.rc_buf_initial_sz = 500; cfg.rc_buf_optimal_sz = 600; cfg.rc_buf_sz = 1000
    cfg.kf_mode = VPX_KF_AUTO; cfg.kf_min_dist = 0; cfg.kf_max_dist = 300
    let ctx = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
    ctx.initialize(to: vpx_codec_ctx_t())
    precondition(parley_vpx_codec_enc_init(ctx, iface, &cfg, 0) == VPX_CODEC_OK)
    precondition(parley_vpx_set_cpuused(ctx, -6) == VPX_CODEC_OK)
    precondition(parley_vpx_set_enable_auto_alt_ref(ctx, 0) == VPX_CODEC_OK)
    precondition(parley_vpx_set_max_intra_bitrate_pct(ctx, 300) == VPX_CODEC_OK)
    precondition(parley_vpx_set_static_threshold(ctx, 1) == VPX_CODEC_OK)
    precondition(parley_vpx_vp8_set_noise_sensitivity(ctx, 0) == VPX_CODEC_OK)
    precondition(parley_vpx_vp8_set_token_partitions(ctx, 0) == VPX_CODEC_OK)
    return ctx
}

private func vp8Benchmarks(_ frames: [VideoFrame]) -> [Benchmark] {
    let count = frames.count
    // Encode: pts continue across samples so rate control sees one long stream on both sides.
    let cEncoder = cVP8Encoder()
    let image = UnsafeMutablePointer<vpx_image_t>.allocate(capacity: 1)
    image.initialize(to: vpx_image_t())
    let planes = UnsafeMutableRawBufferPointer.allocate(byteCount: count * 320 * 240 * 3 / 2, alignment: 64)
    for (i, f) in frames.enumerated() {
        f.data.withUnsafeBytes { planes.baseAddress!.advanced(by: i * 115_200).copyMemory(from: $0.baseAddress!, byteCount: 115_200) }
    }
    var cPTS: Int64 = 0
    let encodeC = { (range: Range<Int>) -> UInt64 in
        var sum: UInt64 = 0
        for i in range {
            let y = planes.baseAddress!.advanced(by: i * 115_200).assumingMemoryBound(to: UInt8.self)
            _ = vpx_img_wrap(image, VPX_IMG_FMT_I420, 320, 240, 1, y)
            image.pointee.planes.0 = y
            image.pointee.planes.1 = y + 76_800
            image.pointee.planes.2 = y + 96_000
            image.pointee.stride = (320, 160, 160, 0)
            let r = vpx_codec_encode(cEncoder, image, cPTS, 3000, 0, parley_vpx_dl_realtime())
            precondition(r == VPX_CODEC_OK)
            cPTS += 3000
            var iter: vpx_codec_iter_t? = nil
            while let pkt = vpx_codec_get_cx_data(cEncoder, &iter) {
                if pkt.pointee.kind == VPX_CODEC_CX_FRAME_PKT {
                    sum &+= UInt64(pkt.pointee.data.frame.sz)
                }
            }
        }
        return sum
    }
    let swiftEncoder = VPXEncoderBox(try! VPXEncoder(VPXEncoderConfiguration(codec: .vp8, width: 320, height: 240)))
    var swiftFrames = frames
    var swiftTimestamp: UInt32 = 0
    let encodeSwift = { (range: Range<Int>) -> UInt64 in
        var sum: UInt64 = 0
        for i in range {
            swiftFrames[i].timestamp = swiftTimestamp
            swiftTimestamp &+= 3000
            try! swiftEncoder.encoder.encode(swiftFrames[i]) { sum &+= UInt64($0.bytes.count) }
        }
        return sum
    }

    // Decode: a stream encoded before timing (keyframe first), decoded by both; the C loop
    // copies each picture out as VPXDecoder does into its VideoFrame.
    var stream: [[UInt8]] = []
    var prep = try! VPXEncoder(VPXEncoderConfiguration(codec: .vp8, width: 320, height: 240))
    for (i, f) in frames.enumerated() {
        var p = VPXPacket()
        try! prep.encode(f, forceKeyframe: i == 0, into: &p)
        stream.append(p.data)
    }
    var cDecoder = vpx_codec_ctx_t()
    var dcfg = vpx_codec_dec_cfg_t(threads: 1, w: 0, h: 0)
    precondition(parley_vpx_codec_dec_init(&cDecoder, vpx_codec_vp8_dx(), &dcfg, 0) == VPX_CODEC_OK)
    let cDecoderPointer = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
    cDecoderPointer.initialize(to: cDecoder)
    let picture = UnsafeMutablePointer<UInt8>.allocate(capacity: 115_200)
    let decodeC = { (range: Range<Int>) -> UInt64 in
        var sum: UInt64 = 0
        for packet in stream[range] {
            let r = packet.withUnsafeBufferPointer {
                vpx_codec_decode(cDecoderPointer, $0.baseAddress, UInt32($0.count), nil, 0)
            }
            precondition(r == VPX_CODEC_OK)
            var iter: vpx_codec_iter_t? = nil
            while let img = vpx_codec_get_frame(cDecoderPointer, &iter) {
                let s = img.pointee.stride, p = img.pointee.planes
                for row in 0..<240 { (picture + row * 320).update(from: p.0! + row * Int(s.0), count: 320) }
                for row in 0..<120 {
                    (picture + 76_800 + row * 160).update(from: p.1! + row * Int(s.1), count: 160)
                    (picture + 96_000 + row * 160).update(from: p.2! + row * Int(s.2), count: 160)
                }
                sum &+= UInt64(picture[1000])
            }
        }
        return sum
    }
    let swiftDecoder = VPXDecoderBox(try! VPXDecoder(codec: .vp8))
    var decoded = try! VideoFrame(width: 320, height: 240)  // a valid size
    let decodeSwift = { (range: Range<Int>) -> UInt64 in
        var sum: UInt64 = 0
        for packet in stream[range] {
            if try! swiftDecoder.decoder.decode(packet, into: &decoded) { sum &+= UInt64(decoded.data[1000]) }
        }
        return sum
    }
    let encode = PairedTiming(frames: count, block: 5, baseline: encodeC, subject: encodeSwift)
    let decode = PairedTiming(frames: count, block: 5, baseline: decodeC, subject: decodeSwift)
    return [encode.baselineRow("codec/vp8-encode-320x240-c"),
            encode.subjectRow("codec/vp8-encode-320x240", baseline: "codec/vp8-encode-320x240-c"),
            decode.baselineRow("codec/vp8-decode-320x240-c"),
            decode.subjectRow("codec/vp8-decode-320x240", baseline: "codec/vp8-decode-320x240-c")]
}
