import CVPX

extension VPXError {
    /// An error for libvpx's `code` from `operation`, with the context's message and detail.
    init(_ code: vpx_codec_err_t, operation: String, context: UnsafeMutablePointer<vpx_codec_ctx_t>?) {
        let message: String
        if let context, let text = vpx_codec_error(context) {
            message = String(cString: text)
        } else {
            message = String(cString: vpx_codec_err_to_string(code))
        }
        let detail = context.flatMap { vpx_codec_error_detail($0) }.map { String(cString: $0) }
        self.init(code: Code(rawValue: Int32(bitPattern: code.rawValue)), operation: operation,
                  message: message, detail: detail)
    }
}

/// Settings of a ``VPXEncoder``, chosen for real-time calls (one-pass CBR, no lag).
public struct VPXEncoderConfiguration: Hashable, Sendable {
    /// VP8 or VP9.
    public var codec: VPXCodec
    /// Picture width in pixels (even sizes are best for 4:2:0).
    public var width: Int
    /// Picture height in pixels.
    public var height: Int
    /// Nominal frame rate, used for rate control and as the duration of each frame.
    /// Timestamps themselves come from `VideoFrame/timestamp` (90 kHz). Default 30.
    public var framesPerSecond: Int = 30
    /// Target bitrate in kbit/s (`rc_target_bitrate`). Default 500, a fair 320x240-480p call.
    public var targetBitrateKbps: Int = 500
    /// Speed/quality trade-off (`VP8E_SET_CPUUSED`): VP8 -16...16, VP9 -9...9, higher is
    /// faster. Default: VP8 -6 and VP9 7, WebRTC's desktop real-time choices.
    public var cpuUsed: Int?
    /// Most frames between keyframes (`kf_max_dist`, automatic placement). Default 300 (10 s
    /// at 30 fps): receivers normally ask for keyframes (``VPXEncoder/requestKeyframe()``),
    /// this bounds recovery when they cannot.
    public var keyframeMaxInterval: Int = 300
    /// Error-resilient mode (`g_error_resilient`): frames do not depend on probability
    /// context updates, so decoding can resume after a loss. Default on, as for calls.
    public var errorResilient: Bool = true
    /// Encoder threads (`g_threads`); VP9 also uses row multithreading and tile columns when
    /// more than one. Default 1.
    public var threads: Int = 1
    /// Rate-control drop threshold 0...100 (`rc_dropframe_thresh`): the encoder may skip a
    /// frame when its buffer runs low. Default 0 (never drop), so each input gives one frame.
    public var dropFrameThreshold: Int = 0
    /// Quantizer range (`rc_min_quantizer`/`rc_max_quantizer`, 0...63). Default 2...56, as WebRTC.
    public var quantizerRange: ClosedRange<Int> = 2...56

    /// Creates a configuration; see each property for its default.
    public init(codec: VPXCodec, width: Int, height: Int, framesPerSecond: Int = 30, targetBitrateKbps: Int = 500) {
        self.codec = codec
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
        self.targetBitrateKbps = targetBitrateKbps
    }

    /// ``cpuUsed`` with the codec's default applied.
    public var effectiveCPUUsed: Int { cpuUsed ?? (codec == .vp8 ? -6 : 7) }
}

/// One compressed frame as the encoder delivers it, valid only inside the callback of
/// ``VPXEncoder/encode(_:forceKeyframe:_:)`` (the bytes live in libvpx's buffer).
public struct VPXEncodedFrame {
    /// The compressed frame (one VP8 frame or one VP9 frame/superframe).
    public let bytes: UnsafeRawBufferPointer
    /// Whether libvpx marked it as a keyframe (`VPX_FRAME_IS_KEY`).
    public let isKeyframe: Bool
    /// The 90 kHz timestamp of the input picture it encodes.
    public let timestamp: UInt32
}

/// A compressed frame that owns its bytes, for code that keeps frames (tests, files).
/// Reusing one value across ``VPXEncoder/encode(_:forceKeyframe:into:)`` calls allocates only
/// when a frame is larger than any before it.
public struct VPXPacket: Sendable {
    /// The compressed frame.
    public var data: [UInt8] = []
    /// Whether the encoder marked it as a keyframe.
    public var isKeyframe = false
    /// The 90 kHz timestamp of the input picture it encodes.
    public var timestamp: UInt32 = 0

    public init() {}
}

/// A VP8 or VP9 encoder (libvpx) set up for real-time calls: realtime deadline, one-pass CBR,
/// `lag_in_frames = 0` (each input picture comes out at once), error resilience, keyframes
/// on request.
///
/// Encoding reads the `VideoFrame`'s planes in place (libvpx copies what it needs) and hands
/// the compressed frame to a callback without copying: nothing is allocated per frame by
/// Parley (libvpx itself keeps its buffers between frames).
///
/// Threading: `~Copyable` and `mutating`: one owner at a time, which may move it to another
/// thread; never used from two threads at once.
public struct VPXEncoder: ~Copyable, @unchecked Sendable {
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
    private let config: UnsafeMutablePointer<vpx_codec_enc_cfg_t>
    private let image: UnsafeMutablePointer<vpx_image_t>
    /// The settings in force (``VPXEncoderConfiguration/targetBitrateKbps`` follows
    /// ``setTargetBitrate(kbps:)``).
    public private(set) var configuration: VPXEncoderConfiguration
    private var keyframeRequested = false
    private var lastTimestamp: UInt32 = 0
    private var pts: Int64 = -1
    private let frameDuration: Int

    /// Creates an encoder (`vpx_codec_enc_config_default`, `vpx_codec_enc_init`, controls).
    /// - Throws: ``VPXError`` `invalidParameter` for a bad size, rate, bitrate or thread count,
    ///   or whatever libvpx reports.
    public init(_ configuration: VPXEncoderConfiguration) throws(VPXError) {
        let c = configuration
        func invalid(_ what: String) -> VPXError {
            VPXError(code: .invalidParameter, operation: "VPXEncoder.init", message: what)
        }
        guard (2...16_384).contains(c.width), (2...16_384).contains(c.height) else {
            throw invalid("unsupported picture size \(c.width)x\(c.height)")
        }
        guard (1...240).contains(c.framesPerSecond) else { throw invalid("frame rate \(c.framesPerSecond) outside 1...240") }
        guard (10...100_000).contains(c.targetBitrateKbps) else {
            throw invalid("target bitrate \(c.targetBitrateKbps) kbit/s outside 10...100000")
        }
        guard (1...64).contains(c.threads) else { throw invalid("thread count \(c.threads) outside 1...64") }
        guard c.keyframeMaxInterval >= 1 else { throw invalid("keyframe interval must be at least 1 frame") }
        guard (0...100).contains(c.dropFrameThreshold) else { throw invalid("drop threshold outside 0...100") }
        guard c.quantizerRange.lowerBound >= 0, c.quantizerRange.upperBound <= 63 else {
            throw invalid("quantizer range \(c.quantizerRange) outside 0...63")
        }
        let cpuRange = c.codec == .vp8 ? -16...16 : -9...9
        guard cpuRange.contains(c.effectiveCPUUsed) else { throw invalid("cpu-used \(c.effectiveCPUUsed) outside \(cpuRange)") }

        let iface = c.codec == .vp8 ? vpx_codec_vp8_cx() : vpx_codec_vp9_cx()
        let cfg = UnsafeMutablePointer<vpx_codec_enc_cfg_t>.allocate(capacity: 1)
        var r = vpx_codec_enc_config_default(iface, cfg, 0)
        guard r == VPX_CODEC_OK else {
            cfg.deallocate()
            throw VPXError(r, operation: "vpx_codec_enc_config_default", context: nil)
        }
        cfg.pointee.g_w = UInt32(c.width)
        cfg.pointee.g_h = UInt32(c.height)
        cfg.pointee.g_timebase = vpx_rational(num: 1, den: 90_000)   // pts = 90 kHz RTP time
        cfg.pointee.g_threads = UInt32(c.threads)
        cfg.pointee.g_lag_in_frames = 0
        cfg.pointee.g_pass = VPX_RC_ONE_PASS
        cfg.pointee.g_error_resilient = c.errorResilient ? vpx_codec_er_flags_t(VPX_ERROR_RESILIENT_DEFAULT) : 0
        cfg.pointee.rc_end_usage = VPX_CBR
        cfg.pointee.rc_target_bitrate = UInt32(c.targetBitrateKbps)
        cfg.pointee.rc_min_quantizer = UInt32(c.quantizerRange.lowerBound)
        cfg.pointee.rc_max_quantizer = UInt32(c.quantizerRange.upperBound)
        cfg.pointee.rc_dropframe_thresh = UInt32(c.dropFrameThreshold)
        cfg.pointee.rc_undershoot_pct = 100       // WebRTC's real-time rate-control buffer
        cfg.pointee.rc_overshoot_pct = 15
        cfg.pointee.rc_buf_initial_sz = 500
        cfg.pointee.rc_buf_optimal_sz = 600
        cfg.pointee.rc_buf_sz = 1000
        cfg.pointee.kf_mode = VPX_KF_AUTO
        cfg.pointee.kf_min_dist = 0
        cfg.pointee.kf_max_dist = UInt32(c.keyframeMaxInterval)

        let ctx = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
        ctx.initialize(to: vpx_codec_ctx_t())
        r = parley_vpx_codec_enc_init(ctx, iface, cfg, 0)
        guard r == VPX_CODEC_OK else {
            let e = VPXError(r, operation: "vpx_codec_enc_init", context: ctx)
            ctx.deallocate(); cfg.deallocate()
            throw e
        }
        func control(_ status: vpx_codec_err_t, _ name: String) throws(VPXError) {
            guard status == VPX_CODEC_OK else {
                let e = VPXError(status, operation: "vpx_codec_control(\(name))", context: ctx)
                vpx_codec_destroy(ctx); ctx.deallocate(); cfg.deallocate()
                throw e
            }
        }
        try control(parley_vpx_set_cpuused(ctx, Int32(c.effectiveCPUUsed)), "VP8E_SET_CPUUSED")
        try control(parley_vpx_set_enable_auto_alt_ref(ctx, 0), "VP8E_SET_ENABLEAUTOALTREF")
        // Keyframes may be up to 3x a frame's share of the bitrate (WebRTC's rule for 30 fps),
        // so a forced keyframe does not stall the stream.
        try control(parley_vpx_set_max_intra_bitrate_pct(ctx, 300), "VP8E_SET_MAX_INTRA_BITRATE_PCT")
        switch c.codec {
        case .vp8:
            try control(parley_vpx_set_static_threshold(ctx, 1), "VP8E_SET_STATIC_THRESHOLD")
            try control(parley_vpx_vp8_set_noise_sensitivity(ctx, 0), "VP8E_SET_NOISE_SENSITIVITY")
            try control(parley_vpx_vp8_set_token_partitions(ctx, 0), "VP8E_SET_TOKEN_PARTITIONS")
        case .vp9:
            try control(parley_vpx_vp9_set_aq_mode(ctx, 3), "VP9E_SET_AQ_MODE")   // cyclic refresh
            try control(parley_vpx_vp9_set_row_mt(ctx, c.threads > 1 ? 1 : 0), "VP9E_SET_ROW_MT")
            var tiles: Int32 = 0
            while (1 << (tiles + 1)) <= c.threads && (c.width >> (tiles + 1)) >= 256 { tiles += 1 }
            try control(parley_vpx_vp9_set_tile_columns(ctx, tiles), "VP9E_SET_TILE_COLUMNS")
            try control(parley_vpx_vp9_set_noise_sensitivity(ctx, 0), "VP9E_SET_NOISE_SENSITIVITY")
        }
        self.context = ctx
        self.config = cfg
        self.image = UnsafeMutablePointer<vpx_image_t>.allocate(capacity: 1)
        self.image.initialize(to: vpx_image_t())
        self.configuration = c
        self.frameDuration = 90_000 / c.framesPerSecond
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
        config.deallocate()
        image.deallocate()
    }

    /// Makes the next encoded frame a keyframe (e.g. on an RTCP PLI/FIR from a receiver).
    public mutating func requestKeyframe() { keyframeRequested = true }

    /// Changes the target bitrate while running (`vpx_codec_enc_config_set`); takes effect
    /// from the next frame, without a keyframe.
    public mutating func setTargetBitrate(kbps: Int) throws(VPXError) {
        guard (10...100_000).contains(kbps) else {
            throw VPXError(code: .invalidParameter, operation: "VPXEncoder.setTargetBitrate",
                           message: "target bitrate \(kbps) kbit/s outside 10...100000")
        }
        config.pointee.rc_target_bitrate = UInt32(kbps)
        let r = vpx_codec_enc_config_set(context, config)
        guard r == VPX_CODEC_OK else { throw VPXError(r, operation: "vpx_codec_enc_config_set", context: context) }
        configuration.targetBitrateKbps = kbps
    }

    /// The quantizer libvpx used for the last frame, 0...63 (`VP8E_GET_LAST_QUANTIZER`).
    public var lastQuantizer: Int {
        var q: Int32 = 0
        let r = parley_vpx_get_last_quantizer(context, &q)
        // Internal invariant: the context is a live encoder (made at init), the only case
        // libvpx can fail this control for; no caller's value reaches it.
        precondition(r == VPX_CODEC_OK, "VP8E_GET_LAST_QUANTIZER failed")
        return Int(q)
    }

    /// Encodes one picture (`vpx_codec_encode` with `VPX_DL_REALTIME`) and passes each
    /// compressed frame to `body` (with lag 0 and no frame dropping: exactly one).
    ///
    /// - Parameters:
    ///   - frame: an I420 picture of the configured size; its `VideoFrame/timestamp`
    ///     (90 kHz) becomes the frame's presentation time (a non-increasing timestamp is
    ///     replaced by the previous one plus one frame duration).
    ///   - forceKeyframe: makes this frame a keyframe (`VPX_EFLAG_FORCE_KF`); so does a
    ///     pending ``requestKeyframe()``.
    ///   - body: receives each compressed frame; its bytes are valid only during the call.
    /// - Returns: how many compressed frames were delivered (0 if rate control dropped it).
    /// - Throws: ``VPXError`` `invalidParameter` for a picture of another size, or libvpx's error.
    @discardableResult
    public mutating func encode(_ frame: borrowing VideoFrame, forceKeyframe: Bool = false,
                                _ body: (VPXEncodedFrame) -> Void) throws(VPXError) -> Int {
        guard frame.width == configuration.width, frame.height == configuration.height else {
            throw VPXError(code: .invalidParameter, operation: "vpx_codec_encode",
                           message: "picture of \(frame.width)x\(frame.height) does not match the encoder's "
                               + "\(configuration.width)x\(configuration.height)")
        }
        // Unwrap the 32-bit RTP timestamp into libvpx's increasing 64-bit pts.
        let delta = Int64(Int32(bitPattern: frame.timestamp &- lastTimestamp))
        pts = pts < 0 ? Int64(frame.timestamp) : pts + (delta > 0 ? delta : Int64(frameDuration))
        lastTimestamp = frame.timestamp
        var flags: vpx_enc_frame_flags_t = 0
        if forceKeyframe || keyframeRequested { flags |= vpx_enc_frame_flags_t(VPX_EFLAG_FORCE_KF) }
        let img = image, ctx = context, w = Int32(frame.width), h = Int32(frame.height)
        let strideY = Int32(frame.strideY), strideUV = Int32(frame.strideUV)
        let pts = self.pts, duration = UInt(frameDuration)
        let r = frame.withUnsafePlanes { y, u, v in
            _ = vpx_img_wrap(img, VPX_IMG_FMT_I420, UInt32(w), UInt32(h), 1, UnsafeMutablePointer(mutating: y))
            img.pointee.planes.0 = UnsafeMutablePointer(mutating: y)
            img.pointee.planes.1 = UnsafeMutablePointer(mutating: u)
            img.pointee.planes.2 = UnsafeMutablePointer(mutating: v)
            img.pointee.stride.0 = strideY
            img.pointee.stride.1 = strideUV
            img.pointee.stride.2 = strideUV
            return vpx_codec_encode(ctx, img, pts, duration, flags, parley_vpx_dl_realtime())
        }
        guard r == VPX_CODEC_OK else { throw VPXError(r, operation: "vpx_codec_encode", context: context) }
        keyframeRequested = false
        return drain(body)
    }

    /// Encodes one picture into `packet`, reusing its storage; returns false when rate control
    /// dropped the frame. See ``encode(_:forceKeyframe:_:)``.
    @discardableResult
    public mutating func encode(_ frame: borrowing VideoFrame, forceKeyframe: Bool = false,
                                into packet: inout VPXPacket) throws(VPXError) -> Bool {
        var delivered = 0
        try encode(frame, forceKeyframe: forceKeyframe) { f in
            delivered += 1
            // Internal invariant: the encoder is configured with no lag (init), so libvpx gives at
            // most one frame per picture whatever the caller passes.
            precondition(delivered == 1, "libvpx returned several frames for one picture with lag 0")
            packet.data.removeAll(keepingCapacity: true)
            packet.data.append(contentsOf: f.bytes)
            packet.isKeyframe = f.isKeyframe
            packet.timestamp = f.timestamp
        }
        return delivered == 1
    }

    private func drain(_ body: (VPXEncodedFrame) -> Void) -> Int {
        var iter: vpx_codec_iter_t? = nil
        var count = 0
        while let pkt = vpx_codec_get_cx_data(context, &iter) {
            guard pkt.pointee.kind == VPX_CODEC_CX_FRAME_PKT else { continue }
            let f = pkt.pointee.data.frame
            body(VPXEncodedFrame(bytes: UnsafeRawBufferPointer(start: f.buf, count: f.sz),
                                 isKeyframe: f.flags & vpx_codec_frame_flags_t(VPX_FRAME_IS_KEY) != 0,
                                 timestamp: UInt32(truncatingIfNeeded: f.pts)))
            count += 1
        }
        return count
    }
}

/// A VP8 or VP9 decoder (libvpx) producing I420 `VideoFrame`s.
///
/// The decoded picture is copied from libvpx's buffer into the caller's frame, reusing its
/// storage: nothing is allocated per frame unless the picture size changes (then the frame is
/// replaced by one of the new size).
///
/// Threading: `~Copyable` and `mutating`: one owner at a time; never shared between threads.
public struct VPXDecoder: ~Copyable, @unchecked Sendable {
    private let context: UnsafeMutablePointer<vpx_codec_ctx_t>
    /// The codec this decoder reads.
    public let codec: VPXCodec

    /// Creates a decoder (`vpx_codec_dec_init`).
    public init(codec: VPXCodec, threads: Int = 1) throws(VPXError) {
        guard (1...64).contains(threads) else {
            throw VPXError(code: .invalidParameter, operation: "VPXDecoder.init", message: "thread count \(threads) outside 1...64")
        }
        let ctx = UnsafeMutablePointer<vpx_codec_ctx_t>.allocate(capacity: 1)
        ctx.initialize(to: vpx_codec_ctx_t())
        var cfg = vpx_codec_dec_cfg_t(threads: UInt32(threads), w: 0, h: 0)
        let r = parley_vpx_codec_dec_init(ctx, codec == .vp8 ? vpx_codec_vp8_dx() : vpx_codec_vp9_dx(), &cfg, 0)
        guard r == VPX_CODEC_OK else {
            let e = VPXError(r, operation: "vpx_codec_dec_init", context: ctx)
            ctx.deallocate()
            throw e
        }
        self.context = ctx
        self.codec = codec
    }

    deinit {
        vpx_codec_destroy(context)
        context.deallocate()
    }

    /// Decodes one compressed frame (`vpx_codec_decode`) into `frame`.
    ///
    /// - Returns: true when a picture was written to `frame` (false for a frame that is not
    ///   shown, e.g. a VP9 frame decoded only as a reference). `frame`'s timestamp and capture
    ///   time are left as they were: the caller knows them from RTP.
    /// - Throws: ``VPXError``: `corruptFrame` or `unsupportedBitstream` for bad data (empty,
    ///   truncated, not this codec, or flagged corrupt by `VP8D_GET_FRAME_CORRUPTED`), with
    ///   libvpx's detail.
    @discardableResult
    public mutating func decode(_ data: UnsafeRawBufferPointer, into frame: inout VideoFrame) throws(VPXError) -> Bool {
        guard let base = data.baseAddress, !data.isEmpty else {
            throw VPXError(code: .corruptFrame, operation: "vpx_codec_decode", message: "empty compressed frame")
        }
        let r = vpx_codec_decode(context, base.assumingMemoryBound(to: UInt8.self), UInt32(clamping: data.count), nil, 0)
        guard r == VPX_CODEC_OK else { throw VPXError(r, operation: "vpx_codec_decode", context: context) }
        var corrupted: Int32 = 0
        if parley_vpx_get_frame_corrupted(context, &corrupted) == VPX_CODEC_OK, corrupted != 0 {
            throw VPXError(code: .corruptFrame, operation: "vpx_codec_decode",
                           message: "decoder flagged the frame as corrupt (VP8D_GET_FRAME_CORRUPTED)")
        }
        var iter: vpx_codec_iter_t? = nil
        var wrote = false
        while let img = vpx_codec_get_frame(context, &iter) {
            guard img.pointee.fmt == VPX_IMG_FMT_I420 else {
                throw VPXError(code: .unsupportedFeature, operation: "vpx_codec_get_frame",
                               message: "decoded picture format \(img.pointee.fmt.rawValue) is not I420")
            }
            Self.copy(img, into: &frame)
            wrote = true
        }
        return wrote
    }

    /// Decodes a compressed frame held in an array. See ``decode(_:into:)-(UnsafeRawBufferPointer,_)``.
    @discardableResult
    public mutating func decode(_ data: [UInt8], into frame: inout VideoFrame) throws(VPXError) -> Bool {
        var result: Result<Bool, VPXError> = .success(false)
        data.withUnsafeBytes { raw in
            do throws(VPXError) { result = .success(try decode(raw, into: &frame)) } catch { result = .failure(error) }
        }
        return try result.get()
    }

    private static func copy(_ img: UnsafeMutablePointer<vpx_image_t>, into frame: inout VideoFrame) {
        let w = Int(img.pointee.d_w), h = Int(img.pointee.d_h)
        if frame.width != w || frame.height != h {
            frame = VideoFrame(validatedWidth: w, height: h, timestamp: frame.timestamp, captureTime: frame.captureTime)  // libvpx: 1...16383
        }
        let cw = frame.chromaWidth, ch = frame.chromaHeight
        let dsY = frame.strideY, dsUV = frame.strideUV
        let src = (img.pointee.planes.0!, img.pointee.planes.1!, img.pointee.planes.2!)
        let ss = (Int(img.pointee.stride.0), Int(img.pointee.stride.1), Int(img.pointee.stride.2))
        frame.withUnsafeMutablePlanes { y, u, v in
            for row in 0..<h { (y + row * dsY).update(from: src.0 + row * ss.0, count: w) }
            for row in 0..<ch {
                (u + row * dsUV).update(from: src.1 + row * ss.1, count: cw)
                (v + row * dsUV).update(from: src.2 + row * ss.2, count: cw)
            }
        }
    }
}
