// Acoustic echo cancellation of a capture stream against what the playout sent to the device:
// WebRTC's AEC (libwebrtc-audio-processing 0.3: a partitioned frequency-domain adaptive filter
// and its non-linear residual echo suppression), a far-end reference ring fed from the playout,
// a bulk-delay estimator that follows drift, and the far-end / double-talk state a talk
// detector needs.

import CWebRTCAudioProcessing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Settings of an ``EchoCanceller``.
public struct EchoCancellerConfiguration: Sendable, Hashable {
    /// Rate of both streams, Hz: 8 or 16 kHz. Default 16 kHz.
    public var sampleRate = 16_000
    /// Longest bulk delay from the playout to the capture the delay estimator searches, ms.
    /// Default 500 ms (device buffers and the room's direct path).
    public var maximumDelayMs = 500

    /// The defaults described on each property.
    public init() {}

    /// Samples in one 10 ms frame.
    public var frameSamples: Int { sampleRate / 100 }

    /// Checks the values.
    /// - Throws: ``EchoCancellerError`` naming the first value out of range.
    public func validate() throws(EchoCancellerError) {
        guard [8_000, 16_000].contains(sampleRate) else { throw .sampleRate(sampleRate) }
        guard (0...2_000).contains(maximumDelayMs) else { throw .maximumDelay(maximumDelayMs) }
    }
}

/// Why an ``EchoCanceller`` could not be made or used.
public enum EchoCancellerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The rate is not 8 or 16 kHz.
    case sampleRate(Int)
    /// ``EchoCancellerConfiguration/maximumDelayMs`` is outside 0...2000.
    case maximumDelay(Int)
    /// The AEC could not be created or initialised.
    case aecState
    /// A capture block that is not 1...``EchoCanceller/maximumFrames`` whole 10 ms frames.
    case frameSize(expectedMultipleOf: Int, got: Int)

    public var description: String {
        switch self {
        case .sampleRate(let r): "echo cancellation runs at 8 or 16 kHz, not \(r) Hz"
        case .maximumDelay(let d): "the maximum echo delay \(d) ms is outside 0...2000 ms"
        case .aecState: "the WebRTC AEC could not be created"
        case let .frameSize(n, got): "capture frames are whole 10 ms frames (multiples of \(n) samples), not \(got) samples"
        }
    }
}

/// Counters and estimates of an ``EchoCanceller``.
public struct EchoCancellerStatistics: Sendable, Hashable {
    /// 10 ms capture frames processed.
    public var framesProcessed = 0
    /// Samples the playout reported (``EchoCanceller/playedOut(_:)``).
    public var samplesPlayed: Int64 = 0
    /// Frames during which the far end was active (its echo may be in the capture).
    public var farEndFrames = 0
    /// Frames judged echo only (far end active, near end not).
    public var echoOnlyFrames = 0
    /// The bulk delay from the played stream to the capture in use, ms: the estimator's, once
    /// confident estimates agree (nil before).
    public var estimatedDelayMs: Double?
    /// How far back from the aligned played stream the reference handed to the AEC is taken, ms.
    public var filterOffsetMs = 0.0
    /// Times the reference was moved to follow the delay.
    public var realignments = 0
    /// How much faster the capture's clock runs than the playout's, parts per million, as the
    /// drift tracker has found it (nil before its first estimate, after 4-6 s of far-end
    /// activity in the simulated rooms); the reference handed to the AEC is resampled by it.
    public var captureDriftPpm: Double?
    public init() {}
}

/// Cancels the echo of a loudspeaker in a microphone's capture.
///
/// Feed it, on one thread, exactly the samples the playout sends to the device
/// (``playedOut(_:)``, any block size) and the capture in whole 10 ms frames
/// (``process(_:)``). The two streams run on different clocks and the device buffers delay
/// the played audio by an unknown amount: the capture is aligned to the played stream by a
/// bulk-delay estimator (normalised cross-correlation of 5 ms amplitude envelopes over the last
/// 2 s, every 250 ms, searching 0...``EchoCancellerConfiguration/maximumDelayMs``; only strong,
/// sharp peaks count, and a change of more than 20 ms must hold for 2 s, so the near end's
/// talk does not move it), and the
/// reference handed to the AEC is moved (to 32 ms before the direct path) only when the echo's
/// direct path comes before it or more than 120 ms after it. The clocks' drift is followed by
/// resampling the reference (a 16-tap windowed sinc): a tracker cross-correlates the capture
/// with the reference at the lags around the echo's main one, finds that lag to a fraction of a
/// sample over each half second of far-end activity (not across a pause of it), and takes the
/// drift (``EchoCancellerStatistics/captureDriftPpm``, up to 200 ppm) from the slope of the last
/// 32 such lags over 2 s or more, once that slope is known to 5 ppm or is three times its
/// standard error. Without it, the filter is a fraction of a sample off after each pause of the far
/// end (0.8 samples after 0.5 s at 100 ppm), and cancels little above 1 kHz until it adapts.
/// WebRTC's AEC removes the linear echo and suppresses what is left.
///
/// Each frame also says whether it is **echo only** (``isEchoOnly(frame:)``): the far end was
/// active (its loudest frame whose echo may be arriving, held with a room's decay, above
/// -50 dBov) and the cancelled signal did not rise 20 dB above the residual echo that the far
/// end's level predicts (a tracked residual-to-far ratio, falling fast and rising at most
/// 20 dB/s), or the microphone's level did not rise 2 dB above the echo it predicts (the same
/// tracking).
/// Near-end speech over the far end (double talk) rises above it; residual echo does not. A
/// frame 32 dB above that residual is certainly double talk (``isDoubleTalk(frame:)``).
///
/// No allocation after `init`. Threading: one thread at a time.
public final class EchoCanceller {
    public let configuration: EchoCancellerConfiguration
    /// Samples in one 10 ms frame.
    public let frameSamples: Int
    public private(set) var statistics = EchoCancellerStatistics()

    private let aec: UnsafeMutableRawPointer
    /// Played samples by absolute index (& ringMask).
    private let ring: UnsafeMutableBufferPointer<Int16>
    private let ringMask: Int
    private var played: Int64 = 0
    /// Capture samples processed.
    private var captured: Int64 = 0
    /// Played index aligned with capture index 0 (nil before the first capture).
    private var base: Int64?
    /// The played position (fractional) of the reference for the next capture sample.
    private var referencePosition = 0.0
    /// Played samples a capture sample: the two clocks' ratio, as the drift tracker has found it.
    private var step = 1.0
    /// How far back from the nominally aligned played index the reference is taken, samples.
    private var offset: Double { base.map { Double($0 + captured) - referencePosition } ?? 0 }
    private let interpolation: UnsafeMutableBufferPointer<Float>
    // The drift tracker: cross-correlation of the capture with the reference fed to the AEC at
    // lags around the echo's main one, over windows of the far end's activity.
    private let fed: UnsafeMutableBufferPointer<Float>
    private var fedCount = 0
    private let crossCorrelation: UnsafeMutableBufferPointer<Double>
    private let window: UnsafeMutableBufferPointer<Float>
    private var trackedLag: Int?
    private var searchHalfWidth = 0
    private var windowFrames = 0
    private var windowMicEnergy = 0.0
    private var windowRefEnergy = 0.0
    private var windowOffset = 0.0
    private var windowPosition = 0.0
    private var windowsWithoutPeak = 0
    private var framesSinceFarEnd = 0
    /// The lag the echo would have without the resampling (the measured one plus ``offset``),
    /// by window: its slope is the drift.
    private let unresampledLags: UnsafeMutableBufferPointer<(at: Double, lag: Double)>
    private var lagCount = 0
    private let reference: UnsafeMutableBufferPointer<Float>
    private let near: UnsafeMutableBufferPointer<Float>
    private let cancelled: UnsafeMutableBufferPointer<Float>
    private let output: UnsafeMutableBufferPointer<Int16>
    private let echoOnly: UnsafeMutableBufferPointer<Bool>
    private let doubleTalk: UnsafeMutableBufferPointer<Bool>
    private var echoOnlyCount = 0

    // Envelopes: 5 ms blocks.
    private let blockSamples: Int
    private let refEnvelope: UnsafeMutableBufferPointer<Float>
    private let refEnvelopeMask: Int
    private var refBlockEnergy: Float = 0
    private var refBlockFill = 0
    private let micEnvelope: UnsafeMutableBufferPointer<Float>
    private let micRefBlock: UnsafeMutableBufferPointer<Int64>
    private var micBlocks: Int64 = 0
    private var micBlockEnergy: Float = 0
    private var micBlockFill = 0
    private let windowBlocks = 400
    private let maxLagBlocks: Int
    private let correlation: UnsafeMutableBufferPointer<Float>
    private var candidate: Int?
    private var agreeing = 0

    // Far-end and double-talk state, dB.
    private var farLevelDb: Float = -120
    /// The reference's level of the last 64 frames (dB), by frame (& 63).
    private let farHistory: UnsafeMutableBufferPointer<Float>
    private var residualRatioDb: Float = 0
    private var echoRatioDb: Float = 0
    private let farDecayDbPerFrame: Float

    /// A canceller with `configuration`.
    /// - Throws: ``EchoCancellerError`` for a value out of range or an AEC that could not be made.
    public init(configuration: EchoCancellerConfiguration = .init()) throws(EchoCancellerError) {
        try configuration.validate()
        self.configuration = configuration
        let rate = configuration.sampleRate
        frameSamples = rate / 100
        guard let a = WebRtcAec_Create() else { throw .aecState }
        guard WebRtcAec_Init(a, Int32(rate), Int32(rate)) == 0, let core = WebRtcAec_aec_core(a) else {
            WebRtcAec_Free(a)
            throw .aecState
        }
        WebRtcAec_enable_delay_agnostic(core, 1)
        WebRtcAec_enable_extended_filter(core, 1)
        aec = a

        let span = rate * (configuration.maximumDelayMs + 1_500) / 1000
        var size = 1
        while size < span { size <<= 1 }
        ring = .filled(size, with: 0)
        ringMask = size - 1
        reference = .filled(frameSamples, with: 0)
        near = .filled(frameSamples, with: 0)
        cancelled = .filled(frameSamples, with: 0)
        output = .filled(frameSamples * Self.maximumFrames, with: 0)
        echoOnly = .filled(Self.maximumFrames, with: false)
        doubleTalk = .filled(Self.maximumFrames, with: false)

        blockSamples = rate / 200
        maxLagBlocks = configuration.maximumDelayMs / 5
        var envelopeSize = 1
        while envelopeSize < windowBlocks + maxLagBlocks + 800 { envelopeSize <<= 1 }
        refEnvelope = .filled(envelopeSize, with: 0)
        refEnvelopeMask = envelopeSize - 1
        micEnvelope = .filled(windowBlocks, with: 0)
        micRefBlock = .filled(windowBlocks, with: 0)
        farHistory = .filled(64, with: -120)
        correlation = .filled(maxLagBlocks + 1, with: 0)
        farDecayDbPerFrame = 60 / Float(Self.echoTailMs) * 10
        interpolation = .filled((Self.phases + 1) * Self.taps, with: 0)
        let half = Self.taps / 2
        for p in 0...Self.phases {
            for j in 0..<Self.taps {
                let x = Double(j - half + 1) - Double(p) / Double(Self.phases)
                let w = 0.42 + 0.5 * cos(Double.pi * x / Double(half)) + 0.08 * cos(2 * Double.pi * x / Double(half))
                interpolation[p * Self.taps + j] = Float((x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x)) * w)
            }
        }
        fed = .filled(Self.fedSize, with: 0)
        crossCorrelation = .filled(2 * Self.acquisitionHalfWidth + 1, with: 0)
        window = .filled(frameSamples + 4 * Self.acquisitionHalfWidth, with: 0)
        unresampledLags = .filled(Self.driftWindows, with: (0, 0))
    }

    /// Taps and phases of the reference's band-limited interpolation (a Blackman-windowed sinc).
    static let taps = 16
    static let phases = 256
    /// Reference samples kept for the drift tracker (more than the filter's 152 ms window).
    static let fedSize = 4096
    /// Lags searched (every other one) either side of 6 ms after the delay estimate to find the
    /// echo's main lag, and then either side of it to follow it.
    static let acquisitionHalfWidth = 96
    static let trackingHalfWidth = 16

    deinit {
        WebRtcAec_Free(aec)
        ring.deallocate(); reference.deallocate(); near.deallocate(); cancelled.deallocate(); echoOnly.deallocate(); doubleTalk.deallocate()
        output.deallocate()
        refEnvelope.deallocate(); micEnvelope.deallocate(); micRefBlock.deallocate(); correlation.deallocate(); farHistory.deallocate()
        interpolation.deallocate(); fed.deallocate(); crossCorrelation.deallocate(); window.deallocate(); unresampledLags.deallocate()
    }

    /// Takes samples the playout has just sent to the device (the mix the loudspeaker plays).
    public func playedOut(_ samples: UnsafeBufferPointer<Int16>) {
        for s in samples {
            ring[Int(played & Int64(ringMask))] = s
            played += 1
            let v = Float(s)
            refBlockEnergy += v * v
            refBlockFill += 1
            if refBlockFill == blockSamples {
                let block = played / Int64(blockSamples) - 1
                refEnvelope[Int(block & Int64(refEnvelopeMask))] = (refBlockEnergy / Float(blockSamples)).squareRoot()
                refBlockEnergy = 0
                refBlockFill = 0
            }
        }
        statistics.samplesPlayed = played
    }

    /// Most 10 ms frames one ``process(_:)`` call takes (120 ms, the longest Opus packet).
    public static let maximumFrames = 12

    /// Cancels the echo in `captured` (1...``maximumFrames`` whole 10 ms frames); returns the
    /// cancelled samples, which stay valid until the next call.
    /// - Throws: ``EchoCancellerError/frameSize(expectedMultipleOf:got:)``; nothing is processed then.
    public func process(_ captured: UnsafeBufferPointer<Int16>) throws(EchoCancellerError) -> UnsafeBufferPointer<Int16> {
        let n = frameSamples
        guard captured.count % n == 0, captured.count > 0, captured.count / n <= Self.maximumFrames else {
            throw .frameSize(expectedMultipleOf: n, got: captured.count)
        }
        // The first block's end is aligned with the newest played sample.
        if base == nil {
            base = played - Int64(captured.count)
            referencePosition = Double(base!)
        }
        echoOnlyCount = captured.count / n
        for f in 0..<echoOnlyCount {
            let input = UnsafeBufferPointer(rebasing: captured[(f * n)..<((f + 1) * n)])
            observeMicrophone(input)
            var refEnergy: Float = 0, micEnergy: Float = 0
            for i in 0..<n {
                let v = referenceSample(at: referencePosition)
                referencePosition += step
                reference[i] = v
                refEnergy += v * v
                near[i] = Float(input[i])
                micEnergy += near[i] * near[i]
            }
            self.captured += Int64(n)
            trackDrift(microphoneEnergy: micEnergy)
            let out = UnsafeMutableBufferPointer(rebasing: output[(f * n)..<((f + 1) * n)])
            _ = WebRtcAec_BufferFarend(aec, reference.baseAddress, n)
            var outEnergy: Float = 0
            if parley_webrtc_aec_process(aec, near.baseAddress, cancelled.baseAddress, n) == 0 {
                for i in 0..<n {
                    let v = max(-32_768, min(32_767, cancelled[i].rounded()))
                    out[i] = Int16(v)
                    outEnergy += v * v
                }
            } else {
                for i in 0..<n { out[i] = input[i]; outEnergy += near[i] * near[i] }
            }
            (echoOnly[f], doubleTalk[f]) = classify(referenceEnergy: refEnergy / Float(n), outputEnergy: outEnergy / Float(n),
                                                    microphoneEnergy: micEnergy / Float(n))
            statistics.framesProcessed += 1
        }
        return UnsafeBufferPointer(rebasing: output[0..<captured.count])
    }

    /// Calls `body` with the cancelled samples of the last ``process(_:)`` call (empty before the first).
    public func withLastOutput<R>(_ body: (UnsafeBufferPointer<Int16>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(rebasing: output[0..<(echoOnlyCount * frameSamples)]))
    }

    /// Whether frame `frame` (0-based, 10 ms each) of the last ``process(_:)`` call was echo
    /// only: the far end active and no near-end speech above its residual echo. False for a frame
    /// beyond the last call's.
    public func isEchoOnly(frame: Int) -> Bool { frame >= 0 && frame < echoOnlyCount && echoOnly[frame] }

    /// Whether frame `frame` (0-based, 10 ms each) of the last ``process(_:)`` call was certainly
    /// double talk: the far end active and the cancelled signal risen far above its residual
    /// echo (more than any leak of the residual suppression on the far end alone). The
    /// suppression mutes the first 100-200 ms of a near end that starts over a loud far end;
    /// a talk detector may count the speech it heard during them once this says so. False for a
    /// frame beyond the last call's.
    public func isDoubleTalk(frame: Int) -> Bool { frame >= 0 && frame < echoOnlyCount && doubleTalk[frame] }

    /// Whether the far end's audio (or its echo's tail) is in the capture now.
    public var isFarEndActive: Bool { farLevelDb > Self.farActiveDb }

    /// The echo's tail the far end's level is held for (60 dB of decay), ms.
    static let echoTailMs = 600
    /// The far end counts as active while its level, held with the tail's decay, is above this.
    static let farActiveDb: Float = -50
    /// Near-end speech must rise this far above the predicted residual echo.
    static let nearMarginDb: Float = 20
    /// A frame this far above the predicted residual echo is certainly double talk: on the far
    /// end alone the suppression's leaks stay under 30 dB over it in the simulated rooms, where
    /// a near end starting over the far end opens at 36-52 dB.
    static let doubleTalkMarginDb: Float = 32
    /// ... and the microphone's level this far above the echo the far end's level predicts.
    static let nearOverEchoDb: Float = 2
    /// The echo of the far end's level has arrived when the level of the frames 50-60 ms older
    /// than the echo's delay is within this of the loudest since (50 ms of margin: a path that
    /// has just grown longer, which the estimate has not followed yet).
    static let arrivedWithinDb: Float = 3

    /// An envelope correlation this high is an estimate of the delay: under double talk the
    /// wrong peaks stay under it (0.41-0.68 in the simulated rooms, where the echo alone gives
    /// mostly 0.7-0.98).
    static let confidentCorrelation: Float = 0.7
    /// A peak whose rise (the lags within 1 dB under it) is longer than this many 5 ms blocks
    /// is too broad to place the delay (in the simulated rooms: 5-15 ms for the echo alone).
    static let broadestRiseBlocks = 4
    /// Agreeing estimates in a row (250 ms apart) that replace the delay in use by one more
    /// than 20 ms away.
    static let changeEstimates = 8

    private static func db(_ meanSquare: Float) -> Float {
        10 * log10f(max(meanSquare, 1e-3) / (32_768 * 32_768))
    }

    /// Whether the frame is echo only, and whether it is certainly double talk.
    private func classify(referenceEnergy: Float, outputEnergy: Float, microphoneEnergy: Float)
        -> (echoOnly: Bool, doubleTalk: Bool) {
        // The far end's level: the loudest reference frame whose echo may be arriving now (back
        // to the delay after the reference's start, plus 60 ms, at most 630 ms; before the first
        // delay is found, the longest the estimator searches), held with the decay of a room's
        // tail.
        let frame = statistics.framesProcessed
        farHistory[frame & 63] = Self.db(referenceEnergy)
        let echoDelayMs = statistics.estimatedDelayMs.map { max(0, $0 - statistics.filterOffsetMs) } ?? Double(configuration.maximumDelayMs)
        var recent: Float = -120, arrived: Float = -120
        // The newest frames' echo may still be on its way (the delay beyond the filter's offset).
        let first = Int((echoDelayMs + 50) / 10)
        for k in 0...min(63, Int((echoDelayMs + 60) / 10)) {
            let level = farHistory[(frame - k) & 63]
            recent = max(recent, level)
            if k >= first { arrived = max(arrived, level) }
        }
        farLevelDb = max(recent, farLevelDb - farDecayDbPerFrame)
        guard isFarEndActive else { return (false, false) }
        statistics.farEndFrames += 1
        let ratio = Self.db(outputEnergy) - farLevelDb
        let micRatio = Self.db(microphoneEnergy) - farLevelDb
        // Near-end speech rises above the residual echo in the cancelled signal and above the
        // echo in the microphone (a leak of the residual suppression does neither).
        let overEcho = micRatio > echoRatioDb + Self.nearOverEchoDb
        let near = ratio > residualRatioDb + Self.nearMarginDb && overEcho
        let certain = ratio > residualRatioDb + Self.doubleTalkMarginDb && overEcho
        if !near { statistics.echoOnlyFrames += 1 }
        // The ratios are learnt only once the echo of the far end's level has arrived: at a
        // far-end onset the microphone still holds the room's floor, and learning it would set
        // them far under the echo that follows.
        guard arrived > recent - Self.arrivedWithinDb else { return (!near, certain) }
        echoRatioDb = micRatio < echoRatioDb ? echoRatioDb + 0.5 * (micRatio - echoRatioDb)
                                             : echoRatioDb + min(micRatio - echoRatioDb, 0.2)
        // The residual-to-far ratio: follows down at once, up by at most 0.2 dB a frame, so a
        // changed echo path is learnt within a second or two and a near-end turn is not.
        residualRatioDb = ratio < residualRatioDb ? residualRatioDb + 0.5 * (ratio - residualRatioDb)
                                                  : residualRatioDb + min(ratio - residualRatioDb, 0.2)
        return (!near, certain)
    }

    /// The played stream at `position`, band-limited interpolation; silence where nothing was played.
    private func referenceSample(at position: Double) -> Float {
        let whole = position.rounded(.down)
        var k = Int64(whole)
        var phase = Int(((position - whole) * Double(Self.phases)).rounded())
        if phase == Self.phases { k += 1; phase = 0 }
        if phase == 0 { return k >= 0 && k < played && played - k <= Int64(ringMask) ? Float(ring[Int(k & Int64(ringMask))]) : 0 }
        let first = k - Int64(Self.taps / 2) + 1
        let coefficients = interpolation.baseAddress! + phase * Self.taps
        var v: Float = 0
        let start = Int(first & Int64(ringMask))
        if first >= 0, first + Int64(Self.taps) <= played, played - first <= Int64(ringMask), start + Self.taps <= ring.count {
            let samples = ring.baseAddress! + start
            for j in 0..<Self.taps { v += Float(samples[j]) * coefficients[j] }
            return v
        }
        for j in 0..<Self.taps {
            let m = first + Int64(j)
            guard m >= 0 && m < played && played - m <= Int64(ringMask) else { continue }
            v += Float(ring[Int(m & Int64(ringMask))]) * coefficients[j]
        }
        return v
    }

    /// Cross-correlates this frame of the capture (`near`, its summed squares `microphoneEnergy`)
    /// with the reference fed to the AEC at the lags around the echo's main one. At the end of
    /// each half second of far-end activity, finds the peak to a fraction of a sample; the lag it
    /// would have without the resampling, over the last windows, moves by the clocks' drift: its
    /// least-squares slope sets ``step``.
    private func trackDrift(microphoneEnergy: Float) {
        let n = frameSamples, mask = Self.fedSize - 1
        for i in 0..<n { fed[(fedCount + i) & mask] = reference[i] }
        defer { fedCount += n }
        if trackedLag == nil, let delayMs = statistics.estimatedDelayMs {
            // The estimate is the envelope's rise; the main lag is up to 20 ms after it (and not
            // before the reference's start).
            let estimate = Int((delayMs * Double(configuration.sampleRate) / 1000 - offset).rounded())
            let lag = max(2 * Self.acquisitionHalfWidth, estimate + Self.acquisitionHalfWidth)
            guard lag + 2 * Self.acquisitionHalfWidth + n < Self.fedSize else { return }
            trackedLag = lag
            searchHalfWidth = Self.acquisitionHalfWidth
            resetWindow()
        }
        guard let center = trackedLag else { return }
        guard isFarEndActive else {
            // A window does not span a pause of the far end: the lag moves with the drift
            // meanwhile (8 samples over 5 s at 100 ppm).
            framesSinceFarEnd += 1
            if framesSinceFarEnd == Self.driftPauseFrames, windowFrames > 0 { resetWindow() }
            return
        }
        framesSinceFarEnd = 0
        let h = searchHalfWidth, stride = h == Self.trackingHalfWidth ? 1 : 2
        // The reference from the longest lag's first sample to the shortest's last, in a row.
        let span = n + 2 * h * stride
        let oldest = fedCount - center - h * stride
        for j in 0..<span { window[j] = fed[(oldest + j) & mask] }
        var refEnergy: Float = 0
        for i in 0..<n { refEnergy += window[h * stride + i] * window[h * stride + i] }
        windowMicEnergy += Double(microphoneEnergy)
        windowRefEnergy += Double(refEnergy)
        for l in 0...(2 * h) {
            // Lag center + (l - h) * stride.
            let shifted = window.baseAddress! + (2 * h - l) * stride
            var sum: Float = 0
            for i in 0..<n { sum += near[i] * shifted[i] }
            crossCorrelation[l] += Double(sum)
        }
        windowFrames += 1
        windowOffset += offset
        windowPosition += Double(fedCount) + Double(n) / 2
        guard windowFrames == Self.driftWindowFrames else { return }
        defer { resetWindow() }
        var m = 0
        for l in 1...(2 * h) where crossCorrelation[l] > crossCorrelation[m] { m = l }
        let peak = crossCorrelation[m]
        guard peak > 0, peak >= Self.driftPeakCorrelation * (windowMicEnergy * windowRefEnergy).squareRoot() else {
            // The echo's lag lost (a changed path, a near end talking throughout): search again.
            windowsWithoutPeak += 1
            if windowsWithoutPeak >= 5 { forgetLag() }
            return
        }
        windowsWithoutPeak = 0
        let lag = center + (m - h) * stride
        guard m > 0 && m < 2 * h && stride == 1 else {
            // Found, or at the edge: followed from the next window.
            trackedLag = lag
            searchHalfWidth = Self.trackingHalfWidth
            return
        }
        let a = crossCorrelation[m - 1], b = peak, c = crossCorrelation[m + 1]
        let fraction = (a - c) / (2 * (a - 2 * b + c))
        let frames = Double(windowFrames)
        let point = (at: windowPosition / frames, lag: Double(lag) + (fraction.isFinite ? max(-0.5, min(0.5, fraction)) : 0) + windowOffset / frames)
        // A lag that has walked out of the kept reference is searched for again.
        guard lag - h >= 0, lag + h + n < Self.fedSize else { forgetLag(); return }
        unresampledLags[lagCount % Self.driftWindows] = point
        lagCount += 1
        trackedLag = lag
        updateStep()
    }

    /// Fits a line to the unresampled lags (dropping those more than a sample off a first fit:
    /// a window whose peak was another one's); its slope is the capture's excess over the played
    /// stream, so the reference is read `1 - slope` played samples a capture sample.
    private func updateStep() {
        let count = min(lagCount, Self.driftWindows)
        guard count >= 4 else { return }
        var first = Double.infinity, last = -Double.infinity
        for k in 0..<count { first = min(first, unresampledLags[k].at); last = max(last, unresampledLags[k].at) }
        guard last - first >= Double(2 * configuration.sampleRate) else { return }
        var fit = line(count: count, within: .infinity, of: nil)
        if let f = fit { fit = line(count: count, within: 1, of: (f.slope, f.intercept)) }
        // A slope is taken once it is known to 5 ppm, or sooner when it is three times its
        // standard error: a wrong early estimate misplaces the filter after a pause as much as
        // no estimate does.
        guard let fit, abs(fit.slope) <= Self.maximumDrift,
              fit.standardError <= Self.driftStandardError || abs(fit.slope) >= 3 * fit.standardError else { return }
        step = 1 - fit.slope
        statistics.captureDriftPpm = (1 / step - 1) * 1e6
    }

    /// The least-squares line through the unresampled lags within `within` samples of `around`,
    /// with its slope's standard error.
    private func line(count: Int, within: Double, of around: (slope: Double, intercept: Double)?)
        -> (slope: Double, intercept: Double, standardError: Double)? {
        var n = 0.0, sx = 0.0, sy = 0.0, sxx = 0.0, sxy = 0.0, syy = 0.0
        let origin = unresampledLags[0].at
        for k in 0..<count {
            let x = unresampledLags[k].at - origin, y = unresampledLags[k].lag
            if let around, abs(y - (around.intercept + around.slope * x)) > within { continue }
            n += 1; sx += x; sy += y; sxx += x * x; sxy += x * y; syy += y * y
        }
        let d = n * sxx - sx * sx
        guard n >= 4, d > 0 else { return nil }
        let slope = (n * sxy - sx * sy) / d
        let intercept = (sy - slope * sx) / n
        let squaredResiduals = max(0, syy - intercept * sy - slope * sxy)
        return (slope, intercept, (squaredResiduals / (n - 2) / (sxx - sx * sx / n)).squareRoot())
    }

    /// Forgets the echo's lag and its history: found again from the next delay estimate.
    private func forgetLag() {
        trackedLag = nil
        lagCount = 0
        windowsWithoutPeak = 0
    }

    /// The largest clock drift followed, as a fraction (200 ppm: two crystals of +-100 ppm).
    static let maximumDrift = 2e-4
    /// 10 ms frames of far-end activity a drift window correlates.
    static let driftWindowFrames = 50
    /// Windows the drift is fitted over (the last 16 s of far-end activity).
    static let driftWindows = 32
    /// Frames of the far end's silence (after its level's hold) that end a drift window unfinished.
    static let driftPauseFrames = 30
    /// The standard error under which a fitted drift is taken whatever its size (5 ppm).
    static let driftStandardError = 5e-6
    /// A window's peak counts when its normalised correlation is at least this (the echo alone
    /// gives 0.4-0.9 in the simulated rooms).
    static let driftPeakCorrelation = 0.2

    private func resetWindow() {
        for l in 0..<crossCorrelation.count { crossCorrelation[l] = 0 }
        windowFrames = 0
        windowOffset = 0
        windowPosition = 0
        windowMicEnergy = 0
        windowRefEnergy = 0
    }

    /// Adds one frame of the raw capture to the envelopes; estimates the delay every 250 ms.
    private func observeMicrophone(_ input: UnsafeBufferPointer<Int16>) {
        for (i, s) in input.enumerated() {
            let v = Float(s)
            micBlockEnergy += v * v
            micBlockFill += 1
            guard micBlockFill == blockSamples else { continue }
            let slot = Int(micBlocks % Int64(windowBlocks))
            micEnvelope[slot] = (micBlockEnergy / Float(blockSamples)).squareRoot()
            // The played block aligned with this capture block's start.
            let start = captured + base! + Int64(i + 1 - blockSamples)
            micRefBlock[slot] = start >= 0 ? start / Int64(blockSamples) : -1
            micBlocks += 1
            micBlockEnergy = 0
            micBlockFill = 0
            if micBlocks >= Int64(windowBlocks), micBlocks % 50 == 0 { estimateDelay() }
        }
    }

    /// Cross-correlates the capture's envelope with the played one over the window; moves the
    /// filter's window when two estimates in a row agree and the direct path has left its first part.
    private func estimateDelay() {
        let w = windowBlocks
        var micMean: Float = 0
        for i in 0..<w { micMean += micEnvelope[i] }
        micMean /= Float(w)
        var micVar: Float = 0
        for i in 0..<w { let d = micEnvelope[i] - micMean; micVar += d * d }
        guard micVar > 0 else { return }
        let newestRef = played / Int64(blockSamples) - 1
        var best = -1
        var bestValue: Float = 0
        for lag in 0...maxLagBlocks {
            var sr: Float = 0, srr: Float = 0, smr: Float = 0
            var valid = true
            for i in 0..<w {
                let b = micRefBlock[i] - Int64(lag)
                // Before the first played block and after the newest: silence.
                if newestRef - b > Int64(refEnvelopeMask) { valid = false; break }
                let r = b < 0 || b > newestRef ? 0 : refEnvelope[Int(b & Int64(refEnvelopeMask))]
                sr += r; srr += r * r; smr += (micEnvelope[i] - micMean) * r
            }
            guard valid else { correlation[lag] = 0; continue }
            let refVar = srr - sr * sr / Float(w)
            guard refVar > Float(w) * 100 else { correlation[lag] = 0; continue }  // a far end of some level
            let value = smr / (micVar * refVar).squareRoot()
            correlation[lag] = value
            if value > bestValue { bestValue = value; best = lag }
        }
        guard best >= 0, bestValue >= Self.confidentCorrelation else { return }
        // The rise of the peak: the earliest lag within 1 dB of it (the direct path, before the
        // room's smear moves the peak later).
        var direct = best
        while direct > 0 && correlation[direct - 1] >= bestValue * 0.89 { direct -= 1 }
        // A broad peak does not place the delay: a window of little structure (a far end's lone
        // word after a pause, its tail and silence) correlates at the lags of the speech's own
        // rhythm.
        guard best - direct <= Self.broadestRiseBlocks else { return }
        let delay = direct * blockSamples
        // Estimates in a row that agree within 10 ms (a weak or broad window is no vote).
        if let previous = candidate, abs(previous - delay) <= 2 * blockSamples {
            agreeing += 1
        } else {
            agreeing = 1
        }
        candidate = delay
        // The first delay takes two; a change of more than 20 ms from the one in use takes 2 s
        // of them (a near end talking over the far end can give a confident peak by chance for a
        // few windows, not for eight in a row); drift, a few ms a minute, takes one.
        let rate = configuration.sampleRate
        let inUse = statistics.estimatedDelayMs.map { Int(($0 * Double(rate) / 1000).rounded()) }
        let needed = inUse.map { abs($0 - delay) <= 4 * blockSamples ? 1 : Self.changeEstimates } ?? 2
        guard agreeing >= needed else { return }
        // A new echo path: its main lag is searched for again.
        if let inUse, abs(inUse - delay) > 4 * blockSamples { forgetLag() }
        statistics.estimatedDelayMs = Double(delay) * 1000 / Double(rate)
        let margin = rate * 32 / 1000
        let current = offset
        if Double(delay) < current || Double(delay) > current + Double(rate * 120 / 1000) {
            let moved = current - Double(max(0, delay - margin))
            referencePosition += moved
            // The echo's lag in the reference moves with it; its unresampled lag does not.
            if let lag = trackedLag {
                let shifted = lag - Int(moved.rounded())
                trackedLag = shifted - searchHalfWidth >= 0 && shifted + searchHalfWidth + frameSamples < Self.fedSize ? shifted : nil
            }
            resetWindow()
            statistics.realignments += 1
        }
        statistics.filterOffsetMs = offset * 1000 / Double(rate)
    }
}

extension UnsafeMutableBufferPointer {
    /// A new buffer of `count` elements, each `value` (the caller deallocates it).
    fileprivate static func filled(_ count: Int, with value: Element) -> Self {
        let buffer = allocate(capacity: count)
        buffer.initialize(repeating: value)
        return buffer
    }
}
