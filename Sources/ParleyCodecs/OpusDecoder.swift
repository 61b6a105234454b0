import COpus

/// An Opus decoder: owns one libopus `OpusDecoder` state for one stream.
///
/// Decodes packets of any Opus configuration into 8, 12, 16, 24 or 48 kHz, mono or stereo,
/// writing into caller-provided buffers (nothing is allocated per packet). Loss handling:
/// ``concealLoss(into:)-(UnsafeMutableBufferPointer<Int16>)`` (PLC) synthesises a missing
/// stretch; ``recoverLost(from:into:)-(_,UnsafeMutableBufferPointer<Int16>)`` rebuilds a lost
/// packet from the in-band FEC data of the packet that follows it.
///
/// ```swift
/// var decoder = try OpusDecoder(sampleRate: 48_000, channels: 1)
/// var pcm = [Int16](repeating: 0, count: OpusDecoder.maxSamplesPerChannel(sampleRate: 48_000))
/// let n = try decoder.decode(packet, into: &pcm)   // samples per channel written
/// ```
///
/// Threading: `~Copyable` and `mutating`: one owner at a time, which may move it to another
/// thread; never used from two threads at once.
public struct OpusDecoder: ~Copyable, @unchecked Sendable {
    let state: OpaquePointer
    /// Output sample rate in Hz.
    public let sampleRate: Int
    /// Output channel count (1 or 2).
    public let channels: Int

    /// Samples per channel of the longest packet (120 ms) at `sampleRate`: a buffer of this
    /// many samples per channel holds any packet's output.
    public static func maxSamplesPerChannel(sampleRate: Int) -> Int { sampleRate * 120 / 1000 }

    /// Creates a decoder (`opus_decoder_create`).
    /// - Throws: ``OpusError`` (`badArgument`) for a rate other than 8/12/16/24/48 kHz or a
    ///   channel count other than 1 or 2.
    public init(sampleRate: Int, channels: Int) throws(OpusError) {
        if let e = OpusError.unsupportedFormat(sampleRate: sampleRate, channels: channels,
                                               operation: "opus_decoder_create") { throw e }
        var err: Int32 = OPUS_OK
        guard let st = opus_decoder_create(Int32(sampleRate), Int32(channels), &err), err == OPUS_OK else {
            throw OpusError(code: err == OPUS_OK ? OPUS_ALLOC_FAIL : err, operation: "opus_decoder_create")
        }
        self.state = st
        self.sampleRate = sampleRate
        self.channels = channels
    }

    deinit { opus_decoder_destroy(state) }

    // MARK: Decoding

    /// Decodes one packet into interleaved 16-bit samples (`opus_decode`).
    ///
    /// - Parameters:
    ///   - packet: the packet; `nil` or empty means "lost": the whole of `pcm` is then filled
    ///     by loss concealment (so pass exactly the lost duration, see ``concealLoss(into:)-(UnsafeMutableBufferPointer<Int16>)``).
    ///   - pcm: output, `samplesPerChannel * channels` samples; must hold the packet's duration
    ///     (``maxSamplesPerChannel(sampleRate:)`` always suffices).
    /// - Returns: samples per channel written.
    /// - Throws: ``OpusError``: `invalidPacket` for corrupt data, `bufferTooSmall` when `pcm`
    ///   is shorter than the packet, `badArgument` for a `pcm` that is not whole frames.
    public mutating func decode(_ packet: UnsafeRawBufferPointer?,
                                into pcm: UnsafeMutableBufferPointer<Int16>) throws(OpusError) -> Int {
        try decodeFrame(packet, into: pcm, fec: false, operation: "opus_decode", opus_decode)
    }

    /// Decodes one packet into interleaved float samples (`opus_decode_float`); see the
    /// Int16 overload.
    public mutating func decode(_ packet: UnsafeRawBufferPointer?,
                                into pcm: UnsafeMutableBufferPointer<Float>) throws(OpusError) -> Int {
        try decodeFrame(packet, into: pcm, fec: false, operation: "opus_decode_float", opus_decode_float)
    }

    /// Decodes a packet held in an array into `pcm` (which keeps its size; see the pointer
    /// overload). An empty `packet` conceals a loss filling all of `pcm`.
    public mutating func decode<S: AudioSample>(_ packet: [UInt8], into pcm: inout [S]) throws(OpusError) -> Int {
        var result: Result<Int, OpusError> = .success(0)
        packet.withUnsafeBytes { p in
            pcm.withUnsafeMutableBufferPointer { out in
                result = decodeAny(p.isEmpty ? nil : p, into: out, fec: false)
            }
        }
        return try result.get()
    }

    /// Packet loss concealment: fills all of `pcm` (whose duration must be a multiple of
    /// 2.5 ms, normally the lost packet's duration, e.g. ``lastPacketDuration``) with audio
    /// extrapolated from the stream so far (`opus_decode` with no data).
    /// - Returns: samples per channel written (all of `pcm`).
    public mutating func concealLoss(into pcm: UnsafeMutableBufferPointer<Int16>) throws(OpusError) -> Int {
        try decodeFrame(nil, into: pcm, fec: false, operation: "opus_decode (PLC)", opus_decode)
    }

    /// Float version of ``concealLoss(into:)-(UnsafeMutableBufferPointer<Int16>)``.
    public mutating func concealLoss(into pcm: UnsafeMutableBufferPointer<Float>) throws(OpusError) -> Int {
        try decodeFrame(nil, into: pcm, fec: false, operation: "opus_decode_float (PLC)", opus_decode_float)
    }

    /// Rebuilds a lost packet from the in-band FEC data carried by the packet after it
    /// (`opus_decode` with `decode_fec = 1`).
    ///
    /// Call it when packet N is lost and N+1 has arrived, before decoding N+1 normally. `pcm`
    /// must be exactly the lost packet's duration (a multiple of 2.5 ms). When `nextPacket`
    /// has no FEC data (CELT-only mode, FEC off at the sender, or a loss at the start of a
    /// talk spurt) libopus conceals instead, as ``concealLoss(into:)-(UnsafeMutableBufferPointer<Int16>)`` would.
    /// - Returns: samples per channel written (all of `pcm`).
    public mutating func recoverLost(from nextPacket: UnsafeRawBufferPointer,
                                     into pcm: UnsafeMutableBufferPointer<Int16>) throws(OpusError) -> Int {
        try decodeFrame(nextPacket, into: pcm, fec: true, operation: "opus_decode (FEC)", opus_decode)
    }

    /// Float version of ``recoverLost(from:into:)-(_,UnsafeMutableBufferPointer<Int16>)``.
    public mutating func recoverLost(from nextPacket: UnsafeRawBufferPointer,
                                     into pcm: UnsafeMutableBufferPointer<Float>) throws(OpusError) -> Int {
        try decodeFrame(nextPacket, into: pcm, fec: true, operation: "opus_decode_float (FEC)", opus_decode_float)
    }

    // MARK: Internals

    private func frameSize(_ count: Int, operation: String) throws(OpusError) -> Int32 {
        let n = count / channels
        guard n > 0, n * channels == count else {
            throw OpusError(code: OPUS_BAD_ARG, operation: operation,
                            detail: "output of \(count) samples is not a whole number of \(channels)-channel frames")
        }
        return Int32(clamping: n)
    }

    /// Decodes `packet` (nil or empty: a loss) with `call` (`opus_decode` or `opus_decode_float`)
    /// into all of `pcm`; samples per channel written.
    @inline(__always)
    private mutating func decodeFrame<S>(_ packet: UnsafeRawBufferPointer?, into pcm: UnsafeMutableBufferPointer<S>,
                                         fec: Bool, operation: String,
                                         _ call: (OpaquePointer, UnsafePointer<UInt8>?, opus_int32,
                                                  UnsafeMutablePointer<S>, Int32, Int32) -> Int32) throws(OpusError) -> Int {
        let n = try frameSize(pcm.count, operation: operation)
        let data = packet.flatMap { $0.isEmpty ? nil : $0 }
        let r = call(state, data?.baseAddress?.assumingMemoryBound(to: UInt8.self),
                     Int32(clamping: data?.count ?? 0), pcm.baseAddress!, n, fec ? 1 : 0)
        guard r >= 0 else { throw OpusError(code: r, operation: operation) }
        return Int(r)
    }

    private mutating func decodeAny<S: AudioSample>(_ p: UnsafeRawBufferPointer?, into out: UnsafeMutableBufferPointer<S>,
                                                    fec: Bool) -> Result<Int, OpusError> {
        let raw = UnsafeMutableRawPointer(out.baseAddress)
        do throws(OpusError) {
            if S.self == Int16.self {
                let buf = UnsafeMutableBufferPointer(start: raw?.assumingMemoryBound(to: Int16.self), count: out.count)
                return .success(try decodeFrame(p, into: buf, fec: fec, operation: "opus_decode", opus_decode))
            } else if S.self == Float.self {
                let buf = UnsafeMutableBufferPointer(start: raw?.assumingMemoryBound(to: Float.self), count: out.count)
                return .success(try decodeFrame(p, into: buf, fec: fec, operation: "opus_decode_float", opus_decode_float))
            }
            // AudioSample is public: a caller's own conformance is refused, not trapped on.
            throw OpusError(code: OPUS_BAD_ARG, operation: "opus_decode", detail: "unsupported sample type \(S.self)")
        } catch {
            return .failure(error)
        }
    }

    private func ctlGet(_ request: (OpaquePointer, UnsafeMutablePointer<opus_int32>) -> Int32, _ name: StaticString) -> Int {
        OpusControl.get(state, request, name)
    }

    // MARK: Settings and state

    /// Output gain in Q8 dB (256 = +1 dB), -32768...32767 (`OPUS_GET_GAIN`). Default 0. Set it
    /// with ``setGainQ8dB(_:)``.
    public var gainQ8dB: Int { ctlGet(parley_opus_decoder_get_gain, "OPUS_GET_GAIN") }

    /// Sets ``gainQ8dB`` (`OPUS_SET_GAIN`).
    ///
    /// - Throws: ``OpusError`` (`OPUS_BAD_ARG`) when `gain` is outside -32768...32767; the gain
    ///   is then unchanged.
    public mutating func setGainQ8dB(_ gain: Int) throws(OpusError) {
        guard (-32768...32767).contains(gain) else {
            throw OpusError(code: OPUS_BAD_ARG, operation: "OPUS_SET_GAIN", detail: "gain \(gain) outside -32768...32767")
        }
        let r = parley_opus_decoder_set_gain(state, opus_int32(gain))
        // The range was checked above, the only reason libopus refuses a gain.
        precondition(r == OPUS_OK, "OPUS_SET_GAIN failed")
    }

    /// Samples per channel of the last packet decoded or concealed
    /// (`OPUS_GET_LAST_PACKET_DURATION`): the duration to conceal when the next one is lost.
    public var lastPacketDuration: Int { ctlGet(parley_opus_decoder_get_last_packet_duration, "OPUS_GET_LAST_PACKET_DURATION") }

    /// Bandwidth of the last packet decoded (`OPUS_GET_BANDWIDTH`); nil before the first.
    public var bandwidth: OpusBandwidth? {
        OpusBandwidth(rawValue: Int32(ctlGet(parley_opus_decoder_get_bandwidth, "OPUS_GET_BANDWIDTH")))
    }

    /// Pitch period of the last decoded frame at 48 kHz (`OPUS_GET_PITCH`), 0 if unvoiced.
    public var pitch: Int { ctlGet(parley_opus_decoder_get_pitch, "OPUS_GET_PITCH") }

    /// The range decoder's final state after the last packet (`OPUS_GET_FINAL_RANGE`).
    public var finalRange: UInt32 { OpusControl.finalRange(state, parley_opus_decoder_get_final_range) }

    /// Resets the decoder as if freshly created (`OPUS_RESET_STATE`), e.g. on a stream change.
    public mutating func reset() { OpusControl.reset(state, parley_opus_decoder_reset_state) }
}
