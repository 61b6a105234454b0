import CALSA
import CALSAClockedPCM
#if canImport(Glibc)
import Glibc
#endif

/// What to ask an ALSA PCM for. The device may round period and buffer sizes; the result is
/// in ``ALSAStreamSetup``. Sample format follows the frame type: `Int16` is `S16_LE`, `Float`
/// is `FLOAT_LE`.
///
/// Threading: a value type; freely sendable.
public struct ALSAParameters: Sendable, Hashable {
    /// Sample rate (Hz) and channel count; both must be offered exactly (a `plughw:` or
    /// `plug` PCM converts when the hardware cannot).
    public var format: AudioFormat
    /// Frames per period (samples per channel). Default: 10 ms, the usual frame of a call
    /// pipeline, short enough for low latency and long enough to avoid wake-up overhead.
    public var periodFrames: Int
    /// Periods in the ring buffer. Default 4 (40 ms at 10 ms periods): room for one late
    /// wake-up without an xrun, while keeping playback latency low.
    public var periodCount: Int
    /// Let alsa-lib resample when the hardware lacks the rate (`snd_pcm_hw_params_set_rate_resample`).
    /// Default true; set false to fail on `hw:` devices instead of converting.
    public var allowResampling: Bool
    /// Longest wait for data (capture) or room (playback) before ``ALSAError/Kind/timeout``,
    /// in milliseconds. Default 2000: far above any period, so only a stalled device hits it.
    public var timeoutMilliseconds: Int

    /// Creates parameters; `periodFrames` defaults to 10 ms of `format`. Values ALSA cannot
    /// take (fewer than two periods, an empty period) are refused when a stream is opened with
    /// them (``ALSAError/Kind/invalidArgument``).
    public init(format: AudioFormat, periodFrames: Int? = nil, periodCount: Int = 4,
                allowResampling: Bool = true, timeoutMilliseconds: Int = 2000) {
        self.format = format
        self.periodFrames = periodFrames ?? max(1, format.samplesPerChannel(milliseconds: 10))
        self.periodCount = periodCount
        self.allowResampling = allowResampling
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}

/// What an ALSA PCM agreed to: the format, and period and buffer sizes in frames.
public struct ALSAStreamSetup: Sendable, Hashable, CustomStringConvertible {
    /// Negotiated rate and channels (equal to the request: anything else is an error).
    public var format: AudioFormat
    /// `S16_LE` or `FLOAT_LE`.
    public var sampleFormat: String
    /// Frames per period as set by the device (may differ from the request).
    public var periodFrames: Int
    /// Ring buffer size in frames.
    public var bufferFrames: Int

    public var description: String {
        "\(sampleFormat), \(format), period \(periodFrames) frames, buffer \(bufferFrames) frames"
    }
}

/// Overrun, underrun and suspend counts of one stream, each recovered by `snd_pcm_recover`.
public struct XRunCounters: Sendable, Hashable {
    /// Capture overruns: the device filled the buffer before the application read it.
    public var overruns = 0
    /// Playback underruns: the device ran out of samples to play.
    public var underruns = 0
    /// Suspends (system sleep) that were resumed or re-prepared.
    public var suspends = 0
    public init() {}
}

/// Direction of a PCM stream.
enum PCMDirection {
    case capture, playback
    var alsa: snd_pcm_stream_t { self == .capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK }
}

/// Owns a `snd_pcm_t`; closes it when destroyed.
struct PCMHandle: ~Copyable {
    let raw: OpaquePointer
    /// The clocked test PCM's plugin state (nil for every other PCM).
    let clockedContext: UnsafeMutableRawPointer?
    init(raw: OpaquePointer, clockedContext: UnsafeMutableRawPointer? = nil) {
        self.raw = raw
        self.clockedContext = clockedContext
    }
    deinit { snd_pcm_close(raw) }
    /// Closes now; returns alsa-lib's result (0 or a negative errno).
    consuming func close() -> Int32 {
        let r = raw
        discard self
        return snd_pcm_close(r)
    }
}

/// Where a PCM comes from: a name resolved through alsa-lib's global configuration, the same
/// through a caller-supplied tree, or the in-process clocked test PCM.
enum PCMSource {
    case name
    case tree(OpaquePointer)
    case clocked
}

/// Where an ``ALSAPCMStream`` is opened from; made only by its opening initialisers.
public struct ALSAPCMSource {
    let kind: PCMSource
}

/// An open ALSA PCM stream of one direction: ``ALSACapture`` or ``ALSAPlayback``. Both are
/// opened the same ways: by name, from a configuration tree, or as the clocked test PCM.
public protocol ALSAPCMStream: ~Copyable {
    /// Opens `pcm` from `source` and configures it for `parameters`. Use the initialisers
    /// below (`source` cannot be made elsewhere).
    init(pcm: String, parameters: ALSAParameters, source: ALSAPCMSource) throws(ALSAError)
    /// The PCM name it was opened with.
    var pcmName: String { get }
    /// What the device agreed to.
    var setup: ALSAStreamSetup { get }
    /// Xruns and suspends recovered so far.
    var xruns: XRunCounters { get }
    /// Closes the PCM, reporting a failure to close.
    consuming func close() throws(ALSAError)
}

extension ALSAPCMStream where Self: ~Copyable {
    /// Opens `pcm` through alsa-lib's configuration (`~/.asoundrc`, `ALSA_CONFIG_PATH`, ...).
    public init(pcm: String = "default", parameters: ALSAParameters) throws(ALSAError) {
        try self.init(pcm: pcm, parameters: parameters, source: ALSAPCMSource(kind: .name))
    }

    /// Opens `pcm` as defined in `configuration` (`snd_pcm_open_lconf`).
    public init(pcm: String, parameters: ALSAParameters,
                configuration: borrowing ALSAConfigurationTree) throws(ALSAError) {
        try self.init(pcm: pcm, parameters: parameters, source: ALSAPCMSource(kind: .tree(configuration.root)))
    }

    /// Opens an in-process PCM that keeps real time like a sound card: capture delivers
    /// silence and overruns when not read for longer than its buffer; playback discards the
    /// samples and underruns when not fed. For tests and benchmarks of xrun handling on
    /// machines without a sound card.
    public static func clocked(parameters: ALSAParameters) throws(ALSAError) -> Self {
        try Self(pcm: "parley-clocked", parameters: parameters, source: ALSAPCMSource(kind: .clocked))
    }
}

/// One open, configured PCM stream: what ``ALSACapture`` and ``ALSAPlayback`` share (opening
/// and configuring, the negotiated setup, transfers with xrun recovery, the suspend test hook,
/// closing).
struct PCMStream: ~Copyable {
    /// The PCM name it was opened with.
    let name: String
    let direction: PCMDirection
    /// What the device agreed to.
    let setup: ALSAStreamSetup
    let timeoutMilliseconds: Int
    /// Xruns and suspends recovered so far.
    private(set) var xruns = XRunCounters()
    private var handle: PCMHandle

    /// Opens `name` from `source` and configures it for `parameters` and `Sample`.
    init<Sample: AudioSample>(_ name: String, _ direction: PCMDirection, _ source: PCMSource,
                              parameters: ALSAParameters, sample: Sample.Type) throws(ALSAError) {
        guard parameters.periodCount >= 2, parameters.periodFrames >= 1, parameters.timeoutMilliseconds >= 0 else {
            throw ALSAError.invalidArgument(pcm: name, operation: "open", "ALSA needs at least two periods of at least one "
                                            + "frame and a timeout of 0 ms or more (given \(parameters.periodCount) periods of "
                                            + "\(parameters.periodFrames) frames, \(parameters.timeoutMilliseconds) ms)")
        }
        let handle = try PCM.open(name, direction, source)
        self.setup = try PCM.configure(handle.raw, name: name, direction: direction,
                                       parameters: parameters, sample: sample)
        self.handle = handle
        self.name = name
        self.direction = direction
        self.timeoutMilliseconds = parameters.timeoutMilliseconds
    }

    /// The alsa-lib PCM.
    var raw: OpaquePointer { handle.raw }

    /// Moves `frames` frames with `call` (see ``PCM/transfer(_:name:operation:direction:frames:chunk:timeoutMilliseconds:counters:_:)``).
    mutating func transfer(_ operation: String, frames: Int,
                           _ call: (_ offset: Int, _ count: snd_pcm_uframes_t) -> snd_pcm_sframes_t) throws(ALSAError) {
        try PCM.transfer(handle.raw, name: name, operation: operation, direction: direction, frames: frames,
                         chunk: setup.bufferFrames, timeoutMilliseconds: timeoutMilliseconds, counters: &xruns, call)
    }

    /// Recovers from the xrun or suspend `code` (a negative errno), counting it.
    mutating func recover(code: Int) throws(ALSAError) {
        try PCM.recover(handle.raw, name: name, code: code, direction: direction, counters: &xruns)
    }

    /// Suspends a clocked PCM as system sleep would. Traps for other PCMs (a test hook).
    func simulateSuspend() {
        guard let context = handle.clockedContext else { preconditionFailure("only clocked PCMs can be suspended") }
        _ = parley_clocked_pcm_suspend(context)
    }

    /// Closes the PCM, first dropping what is queued if `dropping`; reports a failure to close.
    consuming func close(dropping: Bool) throws(ALSAError) {
        let name = self.name
        if dropping { _ = snd_pcm_drop(handle.raw) }
        let r = handle.close()
        if r < 0 { throw ALSAError.from(code: r, pcm: name, operation: "snd_pcm_close") }
    }
}

/// The shared open/configure/transfer code of ``ALSACapture`` and ``ALSAPlayback``.
enum PCM {
    /// The ALSA format of `Sample`, or nil for a sample type ALSA streams do not carry.
    static func alsaFormat<Sample: AudioSample>(_: Sample.Type) -> (snd_pcm_format_t, String)? {
        if Sample.self == Int16.self { return (SND_PCM_FORMAT_S16_LE, "S16_LE") }
        if Sample.self == Float.self { return (SND_PCM_FORMAT_FLOAT_LE, "FLOAT_LE") }
        return nil
    }

    /// Opens `name` in non-blocking mode (reads wait in `snd_pcm_wait` with a timeout).
    static func open(_ name: String, _ direction: PCMDirection, _ source: PCMSource) throws(ALSAError) -> PCMHandle {
        ALSALog.begin()
        var raw: OpaquePointer?
        var context: UnsafeMutableRawPointer?
        let mode = Int32(SND_PCM_NONBLOCK)
        let result: Result<Int32, Errno>
        let op: String
        switch source {
        case .name:
            op = "snd_pcm_open"
            result = valueOrNegatedErrno { snd_pcm_open(&raw, name, direction.alsa, mode) }
        case .tree(let tree):
            op = "snd_pcm_open_lconf"
            result = valueOrNegatedErrno { snd_pcm_open_lconf(&raw, name, direction.alsa, mode, tree) }
        case .clocked:
            op = "parley_clocked_pcm_open"
            result = valueOrNegatedErrno { parley_clocked_pcm_open(&raw, &context, name, direction.alsa, mode) }
        }
        switch result {
        case .success:
            guard let raw else { preconditionFailure("snd_pcm_open succeeded without a handle") }
            return PCMHandle(raw: raw, clockedContext: context)
        case .failure(let e):
            throw ALSAError.from(code: -e.rawValue, pcm: name, operation: op)
        }
    }

    /// Negotiates hardware and software parameters; see ``ALSAParameters``.
    static func configure<Sample: AudioSample>(_ pcm: OpaquePointer, name: String, direction: PCMDirection,
                                               parameters p: ALSAParameters,
                                               sample: Sample.Type) throws(ALSAError) -> ALSAStreamSetup {
        ALSALog.begin()
        var hwp: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&hwp) >= 0, let hw = hwp else {
            throw ALSAError.from(code: -ENOMEM, pcm: name, operation: "snd_pcm_hw_params_malloc")
        }
        defer { snd_pcm_hw_params_free(hw) }
        func check(_ r: Int32, _ op: String, kind: ALSAError.Kind? = nil,
                   detail: @autoclosure () -> String? = nil) throws(ALSAError) {
            guard r < 0 else { return }
            var e = ALSAError.from(code: r, pcm: name, operation: op, kind: kind)
            if let d = detail() { e.detail = d }
            throw e
        }
        try check(snd_pcm_hw_params_any(pcm, hw), "snd_pcm_hw_params_any")
        try check(snd_pcm_hw_params_set_rate_resample(pcm, hw, p.allowResampling ? 1 : 0),
                  "snd_pcm_hw_params_set_rate_resample")
        try check(snd_pcm_hw_params_set_access(pcm, hw, SND_PCM_ACCESS_RW_INTERLEAVED),
                  "snd_pcm_hw_params_set_access", kind: .notOffered,
                  detail: "interleaved read/write access not offered")
        guard let (format, formatName) = alsaFormat(Sample.self) else {
            throw ALSAError.invalidArgument(pcm: name, operation: "snd_pcm_hw_params_set_format",
                                            "ALSA streams carry Int16 (S16_LE) or Float (FLOAT_LE) samples, not \(Sample.self)")
        }
        try check(snd_pcm_hw_params_set_format(pcm, hw, format), "snd_pcm_hw_params_set_format",
                  kind: .notOffered, detail: "\(formatName) not offered; offered: \(offeredFormats(pcm, hw))")
        let channels = UInt32(p.format.channels)
        try check(snd_pcm_hw_params_set_channels(pcm, hw, channels), "snd_pcm_hw_params_set_channels",
                  kind: .notOffered, detail: "\(channels) channels not offered; offered: \(channelRange(hw))")
        let rate = UInt32(p.format.sampleRate)
        try check(snd_pcm_hw_params_set_rate(pcm, hw, rate, 0), "snd_pcm_hw_params_set_rate",
                  kind: .notOffered, detail: "\(rate) Hz not offered; offered: \(rateRange(hw))")
        var period = snd_pcm_uframes_t(p.periodFrames)
        var dir: Int32 = 0
        try check(snd_pcm_hw_params_set_period_size_near(pcm, hw, &period, &dir),
                  "snd_pcm_hw_params_set_period_size_near", kind: .notOffered)
        var buffer = period * snd_pcm_uframes_t(p.periodCount)
        try check(snd_pcm_hw_params_set_buffer_size_near(pcm, hw, &buffer),
                  "snd_pcm_hw_params_set_buffer_size_near", kind: .notOffered)
        try check(snd_pcm_hw_params(pcm, hw), "snd_pcm_hw_params", kind: .notOffered)
        _ = snd_pcm_hw_params_get_period_size(hw, &period, &dir)
        _ = snd_pcm_hw_params_get_buffer_size(hw, &buffer)

        var swp: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&swp) >= 0, let sw = swp else {
            throw ALSAError.from(code: -ENOMEM, pcm: name, operation: "snd_pcm_sw_params_malloc")
        }
        defer { snd_pcm_sw_params_free(sw) }
        try check(snd_pcm_sw_params_current(pcm, sw), "snd_pcm_sw_params_current")
        try check(snd_pcm_sw_params_set_avail_min(pcm, sw, period), "snd_pcm_sw_params_set_avail_min")
        // Capture starts with the first read; playback once two periods are queued, so the
        // first wake-up has a period of slack.
        let start: snd_pcm_uframes_t = direction == .capture ? 1 : min(buffer, 2 * period)
        try check(snd_pcm_sw_params_set_start_threshold(pcm, sw, start), "snd_pcm_sw_params_set_start_threshold")
        try check(snd_pcm_sw_params_set_stop_threshold(pcm, sw, buffer), "snd_pcm_sw_params_set_stop_threshold")
        // Kernel timestamps on the monotonic clock where the device supports them (plugins
        // without a clock ignore this; capture times then come from CLOCK_MONOTONIC).
        _ = snd_pcm_sw_params_set_tstamp_mode(pcm, sw, SND_PCM_TSTAMP_ENABLE)
        _ = snd_pcm_sw_params_set_tstamp_type(pcm, sw, SND_PCM_TSTAMP_TYPE_MONOTONIC)
        try check(snd_pcm_sw_params(pcm, sw), "snd_pcm_sw_params")
        try check(snd_pcm_prepare(pcm), "snd_pcm_prepare")
        return ALSAStreamSetup(format: p.format, sampleFormat: formatName,
                               periodFrames: Int(period), bufferFrames: Int(buffer))
    }

    private static func offeredFormats(_ pcm: OpaquePointer, _ hw: OpaquePointer) -> String {
        let candidates: [(snd_pcm_format_t, String)] = [
            (SND_PCM_FORMAT_S16_LE, "S16_LE"), (SND_PCM_FORMAT_FLOAT_LE, "FLOAT_LE"),
            (SND_PCM_FORMAT_S24_LE, "S24_LE"), (SND_PCM_FORMAT_S32_LE, "S32_LE"),
            (SND_PCM_FORMAT_U8, "U8"), (SND_PCM_FORMAT_S24_3LE, "S24_3LE"),
        ]
        let names = candidates.filter { snd_pcm_hw_params_test_format(pcm, hw, $0.0) == 0 }.map(\.1)
        return names.isEmpty ? "none of S16_LE, FLOAT_LE, S24_LE, S32_LE, U8" : names.joined(separator: ", ")
    }

    private static func channelRange(_ hw: OpaquePointer) -> String {
        var lo: UInt32 = 0, hi: UInt32 = 0
        _ = snd_pcm_hw_params_get_channels_min(hw, &lo)
        _ = snd_pcm_hw_params_get_channels_max(hw, &hi)
        return lo == hi ? "\(lo)" : "\(lo)-\(hi)"
    }

    private static func rateRange(_ hw: OpaquePointer) -> String {
        var lo: UInt32 = 0, hi: UInt32 = 0
        var dir: Int32 = 0
        _ = snd_pcm_hw_params_get_rate_min(hw, &lo, &dir)
        _ = snd_pcm_hw_params_get_rate_max(hw, &hi, &dir)
        return lo == hi ? "\(lo) Hz" : "\(lo)-\(hi) Hz"
    }

    /// Recovers from an xrun or suspend (`snd_pcm_recover`, silent), counting it.
    static func recover(_ pcm: OpaquePointer, name: String, code: Int, direction: PCMDirection,
                        counters: inout XRunCounters) throws(ALSAError) {
        let c = Int32(truncatingIfNeeded: code)
        if c == -EPIPE {
            if direction == .capture { counters.overruns += 1 } else { counters.underruns += 1 }
        } else if c == -ESTRPIPE {
            counters.suspends += 1
        }
        let r = snd_pcm_recover(pcm, c, 1)
        if r < 0 {
            throw ALSAError.from(code: r, pcm: name, operation: "snd_pcm_recover")
        }
    }

    /// Waits until the PCM is ready (`snd_pcm_wait`); returns a negative code to recover
    /// from (xrun, suspend) or throws on timeout / hard error.
    static func wait(_ pcm: OpaquePointer, name: String, timeoutMilliseconds: Int) throws(ALSAError) -> Int {
        switch valueOrNegatedErrno({ snd_pcm_wait(pcm, Int32(clamping: timeoutMilliseconds)) }) {
        case .success(let ready) where ready > 0:
            return 0
        case .success:
            throw ALSAError(kind: .timeout, code: 0, pcm: name, operation: "snd_pcm_wait",
                            message: "no data within \(timeoutMilliseconds) ms")
        case .failure(let e) where e == .brokenPipe || e == .streamsPipe:
            return -Int(e.rawValue)
        case .failure(let e):
            throw ALSAError.from(code: -e.rawValue, pcm: name, operation: "snd_pcm_wait")
        }
    }

    /// Moves `frames` frames through `pcm` with `call` (`snd_pcm_readi` or `snd_pcm_writei`
    /// given a frame offset and a frame count, at most `chunk` frames a call: plugins such as
    /// `file` cannot serve more than one buffer). Waits while the device is not ready and
    /// recovers xruns and suspends, counting them. No allocation.
    static func transfer(_ pcm: OpaquePointer, name: String, operation: String, direction: PCMDirection,
                         frames: Int, chunk: Int, timeoutMilliseconds: Int, counters: inout XRunCounters,
                         _ call: (_ offset: Int, _ count: snd_pcm_uframes_t) -> snd_pcm_sframes_t) throws(ALSAError) {
        var done = 0
        while done < frames {
            var code: Int
            switch valueOrNegatedErrno({ call(done, snd_pcm_uframes_t(min(chunk, frames - done))) }) {
            case .success(let n) where n > 0:
                done += n
                continue
            case .success:
                code = try wait(pcm, name: name, timeoutMilliseconds: timeoutMilliseconds)
            case .failure(let e) where e == .wouldBlock:
                code = try wait(pcm, name: name, timeoutMilliseconds: timeoutMilliseconds)
            case .failure(let e):
                code = -Int(e.rawValue)
            }
            if code == 0 { continue }
            if code == -Int(EPIPE) || code == -Int(ESTRPIPE) {
                try recover(pcm, name: name, code: code, direction: direction, counters: &counters)
                continue
            }
            throw ALSAError.from(code: Int32(truncatingIfNeeded: code), pcm: name, operation: operation)
        }
    }
}
