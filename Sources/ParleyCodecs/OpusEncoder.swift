import COpus

extension OpusError {
    /// An error for libopus's `code` returned by `operation`, with libopus's own message.
    init(code: Int32, operation: String, detail: String? = nil) {
        let text = String(cString: opus_strerror(code))
        self.init(code: Code(rawValue: code), operation: operation,
                  message: detail.map { text + ": " + $0 } ?? text)
    }

    static func unsupportedFormat(sampleRate: Int, channels: Int, operation: String) -> OpusError? {
        if !opusSampleRates.contains(sampleRate) {
            return OpusError(code: OPUS_BAD_ARG, operation: operation,
                             detail: "unsupported sample rate \(sampleRate) Hz (use 8000, 12000, 16000, 24000 or 48000)")
        }
        if channels != 1 && channels != 2 {
            return OpusError(code: OPUS_BAD_ARG, operation: operation,
                             detail: "unsupported channel count \(channels) (use 1 or 2)")
        }
        return nil
    }

    static func badFrame(count: Int, channels: Int, sampleRate: Int, operation: String) -> OpusError {
        if count % channels != 0 {
            return OpusError(code: OPUS_BAD_ARG, operation: operation,
                             detail: "\(count) interleaved samples is not a multiple of \(channels) channels")
        }
        return OpusError(code: OPUS_BAD_ARG, operation: operation,
                         detail: "\(count / channels) samples per channel at \(sampleRate) Hz is not an Opus frame "
                             + "(2.5, 5, 10, 20, 40, 60, 80, 100 or 120 ms)")
    }
}

/// The coding mode an encoder is tuned for (`OPUS_APPLICATION_*`).
public enum OpusApplication: Int32, Hashable, Sendable, CaseIterable {
    /// Best speech quality and intelligibility (`OPUS_APPLICATION_VOIP`): calls.
    case voip = 2048
    /// Faithful reproduction of any signal (`OPUS_APPLICATION_AUDIO`): music, mixed content.
    case audio = 2049
    /// Lowest delay, CELT only (`OPUS_APPLICATION_RESTRICTED_LOWDELAY`): 2.5 ms lookahead.
    case restrictedLowDelay = 2051
}

/// What the encoder is told the signal is (`OPUS_SET_SIGNAL`): a hint for mode decisions.
public enum OpusSignal: Int32, Hashable, Sendable, CaseIterable {
    /// Let the encoder detect it (`OPUS_AUTO`), the default.
    case auto = -1000
    /// Speech (`OPUS_SIGNAL_VOICE`): biases towards SILK/hybrid.
    case voice = 3001
    /// Music (`OPUS_SIGNAL_MUSIC`): biases towards CELT.
    case music = 3002
}

/// How the encoder spends bits over time.
public enum OpusBitrateMode: Hashable, Sendable, CaseIterable {
    /// Constant bitrate (`OPUS_SET_VBR(0)`): every packet of a duration has the same size.
    case cbr
    /// Unconstrained variable bitrate (`OPUS_SET_VBR(1)`, `OPUS_SET_VBR_CONSTRAINT(0)`).
    case vbr
    /// Variable bitrate bounded like CBR over a short window (`OPUS_SET_VBR(1)`,
    /// `OPUS_SET_VBR_CONSTRAINT(1)`), libopus's default.
    case constrainedVBR
}

/// An Opus encoder: owns one libopus `OpusEncoder` state for one stream.
///
/// Supports 8, 12, 16, 24 and 48 kHz, mono or stereo, and frames of 2.5 to 120 ms. Encoding
/// writes into a caller-provided buffer and allocates nothing; ``maxPacketSize`` bytes always
/// suffice. Settings are properties that call libopus's `OPUS_SET_*`/`OPUS_GET_*` requests, so
/// reading one returns what libopus holds. Settings with a limited range (bitrate, complexity,
/// expected loss) are changed through throwing `set...` methods; an out-of-range value, like bad
/// audio (wrong frame size or format, non-finite samples), throws ``OpusError``.
///
/// ```swift
/// var encoder = try OpusEncoder(sampleRate: 48_000, channels: 1, application: .voip)
/// try encoder.setBitrate(32_000)
/// var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketSize)
/// let bytes = try encoder.encode(pcm20ms, into: &packet)    // 960 Int16 samples
/// ```
///
/// Threading: `~Copyable` and `mutating`: one owner at a time, which may move it to another
/// thread; never used from two threads at once (libopus states are not thread-safe).
public struct OpusEncoder: ~Copyable, @unchecked Sendable {
    let state: OpaquePointer
    /// Input sample rate in Hz.
    public let sampleRate: Int
    /// Input channel count (1 or 2).
    public let channels: Int
    /// The application the encoder was created for.
    public let application: OpusApplication

    /// A packet buffer of this many bytes holds any packet (libopus's recommendation).
    public static let maxPacketSize = 4000

    /// Creates an encoder (`opus_encoder_create`).
    /// - Throws: ``OpusError`` (`badArgument`) for a rate other than 8/12/16/24/48 kHz or a
    ///   channel count other than 1 or 2.
    public init(sampleRate: Int, channels: Int, application: OpusApplication = .voip) throws(OpusError) {
        if let e = OpusError.unsupportedFormat(sampleRate: sampleRate, channels: channels,
                                               operation: "opus_encoder_create") { throw e }
        var err: Int32 = OPUS_OK
        guard let st = opus_encoder_create(Int32(sampleRate), Int32(channels), application.rawValue, &err),
              err == OPUS_OK else {
            throw OpusError(code: err == OPUS_OK ? OPUS_ALLOC_FAIL : err, operation: "opus_encoder_create")
        }
        self.state = st
        self.sampleRate = sampleRate
        self.channels = channels
        self.application = application
    }

    deinit { opus_encoder_destroy(state) }

    // MARK: Encoding

    /// Encodes one frame of interleaved 16-bit samples (`opus_encode`).
    ///
    /// - Parameters:
    ///   - pcm: `samplesPerChannel * channels` samples; the duration must be 2.5, 5, 10, 20, 40,
    ///     60, 80, 100 or 120 ms at ``sampleRate``.
    ///   - packet: where the packet is written; ``maxPacketSize`` bytes always suffice.
    /// - Returns: the packet's length in bytes. With DTX on, 1 or 2 bytes mean "no need to send".
    /// - Throws: ``OpusError`` `badArgument` for a wrong frame size, `bufferTooSmall`, or any
    ///   libopus failure.
    public mutating func encode(_ pcm: UnsafeBufferPointer<Int16>,
                                into packet: UnsafeMutableRawBufferPointer) throws(OpusError) -> Int {
        let n = try samplesPerChannel(pcm.count, operation: "opus_encode")
        return try encodeFrame(pcm, samplesPerChannel: n, into: packet, operation: "opus_encode", opus_encode)
    }

    /// Encodes one frame of interleaved float samples (`opus_encode_float`), nominally in [-1, 1].
    ///
    /// NaN and infinite samples are rejected before libopus sees them: the call throws
    /// ``OpusError`` `badArgument` naming the first bad index and the encoder state is unchanged
    /// (the caller decides whether to send silence, conceal or drop). Finite values beyond
    /// ±1 are passed on (libopus handles them).
    public mutating func encode(_ pcm: UnsafeBufferPointer<Float>,
                                into packet: UnsafeMutableRawBufferPointer) throws(OpusError) -> Int {
        let n = try samplesPerChannel(pcm.count, operation: "opus_encode_float")
        // A sample is NaN or ±infinity when its exponent bits are all ones; adding one to the
        // exponent then carries into bit 31. Integer OR-reduction: branch-free, vectorised.
        var carry: UInt32 = 0
        for x in pcm { carry |= ((x.bitPattern & 0x7F80_0000) &+ 0x0080_0000) & 0x8000_0000 }
        if carry != 0 {
            let i = pcm.firstIndex { !$0.isFinite } ?? 0
            throw OpusError(code: OPUS_BAD_ARG, operation: "opus_encode_float",
                            detail: "non-finite sample (\(pcm[i])) at index \(i)")
        }
        return try encodeFrame(pcm, samplesPerChannel: n, into: packet, operation: "opus_encode_float", opus_encode_float)
    }

    /// Samples per channel of `count` interleaved samples; throws unless they are whole frames
    /// of an Opus frame duration.
    private func samplesPerChannel(_ count: Int, operation: String) throws(OpusError) -> Int {
        let n = count / channels
        guard count == n * channels, isValidOpusFrameSize(samplesPerChannel: n, sampleRate: sampleRate) else {
            throw OpusError.badFrame(count: count, channels: channels, sampleRate: sampleRate, operation: operation)
        }
        return n
    }

    /// Encodes the checked frame `pcm` with `call` (`opus_encode` or `opus_encode_float`) into
    /// `packet`; the packet's length.
    @inline(__always)
    private mutating func encodeFrame<S>(_ pcm: UnsafeBufferPointer<S>, samplesPerChannel n: Int,
                                         into packet: UnsafeMutableRawBufferPointer, operation: String,
                                         _ call: (OpaquePointer, UnsafePointer<S>, Int32,
                                                  UnsafeMutablePointer<UInt8>, opus_int32) -> opus_int32) throws(OpusError) -> Int {
        guard let out = packet.baseAddress, packet.count > 0 else {
            throw OpusError(code: OPUS_BUFFER_TOO_SMALL, operation: operation, detail: "empty packet buffer")
        }
        let r = call(state, pcm.baseAddress!, Int32(n), out.assumingMemoryBound(to: UInt8.self), Int32(clamping: packet.count))
        guard r >= 0 else { throw OpusError(code: r, operation: operation) }
        return Int(r)
    }

    /// Encodes interleaved samples from an array into `packet` (see the pointer overload).
    /// Allocates nothing when `packet` is already uniquely owned.
    public mutating func encode<S: AudioSample>(_ pcm: [S], into packet: inout [UInt8]) throws(OpusError) -> Int {
        var result: Result<Int, OpusError> = .success(0)
        pcm.withUnsafeBufferPointer { p in
            packet.withUnsafeMutableBytes { out in
                result = encodeAny(p, into: out)
            }
        }
        return try result.get()
    }

    /// Encodes an audio frame; its format must match the encoder's.
    ///
    /// - Throws: ``OpusError`` (`OPUS_BAD_ARG`) when the frame's rate or channel count differs
    ///   from the encoder's, or for the reasons of the array overload.
    public mutating func encode<S: AudioSample>(_ frame: AudioFrame<S>, into packet: inout [UInt8]) throws(OpusError) -> Int {
        guard frame.format.sampleRate == sampleRate && frame.format.channels == channels else {
            throw OpusError(code: OPUS_BAD_ARG, operation: "opus_encode",
                            detail: "frame format \(frame.format) does not match the encoder "
                                + "(\(sampleRate) Hz, \(channels) ch)")
        }
        return try encode(frame.samples, into: &packet)
    }

    mutating func encodeAny<S: AudioSample>(_ p: UnsafeBufferPointer<S>,
                                            into out: UnsafeMutableRawBufferPointer) -> Result<Int, OpusError> {
        do throws(OpusError) {
            if S.self == Int16.self {
                return .success(try encode(UnsafeBufferPointer(start: UnsafeRawPointer(p.baseAddress)?
                    .assumingMemoryBound(to: Int16.self), count: p.count), into: out))
            } else if S.self == Float.self {
                return .success(try encode(UnsafeBufferPointer(start: UnsafeRawPointer(p.baseAddress)?
                    .assumingMemoryBound(to: Float.self), count: p.count), into: out))
            }
            // AudioSample is public: a caller's own conformance is refused, not trapped on.
            throw OpusError(code: OPUS_BAD_ARG, operation: "opus_encode", detail: "unsupported sample type \(S.self)")
        } catch {
            return .failure(error)
        }
    }

    // MARK: Settings

    func ctlGet(_ request: (OpaquePointer, UnsafeMutablePointer<opus_int32>) -> Int32, _ name: StaticString) -> Int {
        OpusControl.get(state, request, name)
    }

    /// Reads a setting that takes the values of `E`: libopus reports only those (it stores what
    /// the setter took).
    func ctlGet<E: RawRepresentable<Int32>>(_ request: (OpaquePointer, UnsafeMutablePointer<opus_int32>) -> Int32,
                                            _ name: StaticString, as: E.Type) -> E {
        let v = ctlGet(request, name)
        guard let e = E(rawValue: Int32(v)) else { preconditionFailure("unknown \(name) value \(v)") }
        return e
    }

    func ctlSet(_ request: (OpaquePointer, opus_int32) -> Int32, _ value: Int, _ name: StaticString) {
        let r = request(state, opus_int32(value))
        // Every caller passes a value already checked (the throwing setters validate their
        // ranges first) or taken from an enum or a Bool, so libopus cannot refuse it.
        precondition(r == OPUS_OK, "\(name)(\(value)) failed: \(String(cString: opus_strerror(r)))")
    }

    /// Target bitrate in bits per second, 500...512_000 (`OPUS_SET_BITRATE`/`OPUS_GET_BITRATE`).
    /// Default: libopus's automatic choice from rate and channels (reads back as the value it
    /// computes); 32_000 is a good mono wideband speech setting, 24_000 still clear. Set it with
    /// ``setBitrate(_:)``.
    public var bitrate: Int { ctlGet(parley_opus_encoder_get_bitrate, "OPUS_GET_BITRATE") }

    /// Sets ``bitrate``, in bits per second.
    ///
    /// - Throws: ``OpusError`` (`OPUS_BAD_ARG`) when `bitsPerSecond` is outside 500...512_000;
    ///   the bitrate is then unchanged.
    public mutating func setBitrate(_ bitsPerSecond: Int) throws(OpusError) {
        try Self.check(bitsPerSecond, in: 500...512_000, "bitrate", unit: " bit/s", operation: "OPUS_SET_BITRATE")
        ctlSet(parley_opus_encoder_set_bitrate, bitsPerSecond, "OPUS_SET_BITRATE")
    }

    private static func check(_ value: Int, in range: ClosedRange<Int>, _ name: String, unit: String = "",
                              operation: String) throws(OpusError) {
        guard range.contains(value) else {
            throw OpusError(code: OPUS_BAD_ARG, operation: operation,
                            detail: "\(name) \(value)\(unit) outside \(range.lowerBound)...\(range.upperBound)")
        }
    }

    /// CBR, VBR or constrained VBR (`OPUS_SET_VBR` + `OPUS_SET_VBR_CONSTRAINT`). Default
    /// ``OpusBitrateMode/constrainedVBR`` (libopus's default).
    public var bitrateMode: OpusBitrateMode {
        get {
            if ctlGet(parley_opus_encoder_get_vbr, "OPUS_GET_VBR") == 0 { return .cbr }
            return ctlGet(parley_opus_encoder_get_vbr_constraint, "OPUS_GET_VBR_CONSTRAINT") != 0 ? .constrainedVBR : .vbr
        }
        set {
            switch newValue {
            case .cbr:
                ctlSet(parley_opus_encoder_set_vbr, 0, "OPUS_SET_VBR")
            case .vbr:
                ctlSet(parley_opus_encoder_set_vbr, 1, "OPUS_SET_VBR")
                ctlSet(parley_opus_encoder_set_vbr_constraint, 0, "OPUS_SET_VBR_CONSTRAINT")
            case .constrainedVBR:
                ctlSet(parley_opus_encoder_set_vbr, 1, "OPUS_SET_VBR")
                ctlSet(parley_opus_encoder_set_vbr_constraint, 1, "OPUS_SET_VBR_CONSTRAINT")
            }
        }
    }

    /// Computational complexity 0 (fastest) ... 10 (best) (`OPUS_SET_COMPLEXITY`). Default 9
    /// in libopus 1.3 (10 before); 5 or more keeps speech quality on a busy core. Set it with
    /// ``setComplexity(_:)``.
    public var complexity: Int { ctlGet(parley_opus_encoder_get_complexity, "OPUS_GET_COMPLEXITY") }

    /// Sets ``complexity``.
    ///
    /// - Throws: ``OpusError`` (`OPUS_BAD_ARG`) when `complexity` is outside 0...10; the
    ///   setting is then unchanged.
    public mutating func setComplexity(_ complexity: Int) throws(OpusError) {
        try Self.check(complexity, in: 0...10, "complexity", operation: "OPUS_SET_COMPLEXITY")
        ctlSet(parley_opus_encoder_set_complexity, complexity, "OPUS_SET_COMPLEXITY")
    }

    /// In-band forward error correction (`OPUS_SET_INBAND_FEC`): each SILK/hybrid packet also
    /// carries a low-rate copy of the previous frame, so a lost packet can be rebuilt from the
    /// next one (``OpusDecoder/recoverLost(from:into:)-(_,UnsafeMutableBufferPointer<Int16>)``). Only effective with
    /// ``expectedPacketLossPercent`` > 0 and a SILK or hybrid mode. Default off.
    public var inbandFEC: Bool {
        get { ctlGet(parley_opus_encoder_get_inband_fec, "OPUS_GET_INBAND_FEC") != 0 }
        set { ctlSet(parley_opus_encoder_set_inband_fec, newValue ? 1 : 0, "OPUS_SET_INBAND_FEC") }
    }

    /// Expected packet loss, 0...100 % (`OPUS_SET_PACKET_LOSS_PERC`): makes the encoder more
    /// robust (and sizes FEC). Default 0. Set it with ``setExpectedPacketLossPercent(_:)``.
    public var expectedPacketLossPercent: Int {
        ctlGet(parley_opus_encoder_get_packet_loss_perc, "OPUS_GET_PACKET_LOSS_PERC")
    }

    /// Sets ``expectedPacketLossPercent``.
    ///
    /// - Throws: ``OpusError`` (`OPUS_BAD_ARG`) when `percent` is outside 0...100; the setting
    ///   is then unchanged.
    public mutating func setExpectedPacketLossPercent(_ percent: Int) throws(OpusError) {
        try Self.check(percent, in: 0...100, "packet loss", unit: "%", operation: "OPUS_SET_PACKET_LOSS_PERC")
        ctlSet(parley_opus_encoder_set_packet_loss_perc, percent, "OPUS_SET_PACKET_LOSS_PERC")
    }

    /// Discontinuous transmission (`OPUS_SET_DTX`): during silence, packets of 1-2 bytes that
    /// need not be sent. Default off.
    public var dtx: Bool {
        get { ctlGet(parley_opus_encoder_get_dtx, "OPUS_GET_DTX") != 0 }
        set { ctlSet(parley_opus_encoder_set_dtx, newValue ? 1 : 0, "OPUS_SET_DTX") }
    }

    /// The signal-type hint (`OPUS_SET_SIGNAL`). Default ``OpusSignal/auto``.
    public var signal: OpusSignal {
        get { ctlGet(parley_opus_encoder_get_signal, "OPUS_GET_SIGNAL", as: OpusSignal.self) }
        set { ctlSet(parley_opus_encoder_set_signal, Int(newValue.rawValue), "OPUS_SET_SIGNAL") }
    }

    /// The widest bandwidth the encoder may use (`OPUS_SET_MAX_BANDWIDTH`). Default fullband;
    /// the input rate limits it further (e.g. 16 kHz input codes at most wideband).
    public var maxBandwidth: OpusBandwidth {
        get { ctlGet(parley_opus_encoder_get_max_bandwidth, "OPUS_GET_MAX_BANDWIDTH", as: OpusBandwidth.self) }
        set { ctlSet(parley_opus_encoder_set_max_bandwidth, Int(newValue.rawValue), "OPUS_SET_MAX_BANDWIDTH") }
    }

    /// The encoder's lookahead in samples per channel at ``sampleRate`` (`OPUS_GET_LOOKAHEAD`):
    /// how much later an input sample appears in the decoded output (decoder delay included).
    public var lookahead: Int { ctlGet(parley_opus_encoder_get_lookahead, "OPUS_GET_LOOKAHEAD") }

    /// Whether the last frame encoded was in DTX (`OPUS_GET_IN_DTX`).
    public var isInDTX: Bool { ctlGet(parley_opus_encoder_get_in_dtx, "OPUS_GET_IN_DTX") != 0 }

    /// The range coder's final state after the last packet (`OPUS_GET_FINAL_RANGE`); equals the
    /// decoder's ``OpusDecoder/finalRange`` when the packet decoded correctly.
    public var finalRange: UInt32 { OpusControl.finalRange(state, parley_opus_encoder_get_final_range) }

    /// Resets the codec state as if freshly created, keeping settings (`OPUS_RESET_STATE`).
    public mutating func reset() { OpusControl.reset(state, parley_opus_encoder_reset_state) }
}
