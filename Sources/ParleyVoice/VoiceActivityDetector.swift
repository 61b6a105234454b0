// ParleyVoice: voice activity detection, talking events and the dominant speaker. Pure Swift.
@_exported import ParleyCore

/// Errors of the voice module.
public enum VADError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The sample rate is not one of 8000, 12000, 16000, 24000, 32000 or 48000 Hz.
    case unsupportedSampleRate(Int)

    public var description: String {
        switch self {
        case .unsupportedSampleRate(let r):
            return "unsupported sample rate \(r) Hz (the VAD takes 8000, 12000, 16000, 24000, 32000 or 48000 Hz mono)"
        }
    }
}

/// Which trained network decides: the same front end and layers, two sets of weights.
public enum VADModel: String, Sendable, CaseIterable {
    /// The network of live calls: it decides each 10 ms frame as soon as the frame is heard
    /// (or after its short look-ahead, ``VoiceActivityDetector/lookaheadFrames``).
    case live
    /// The network of recordings: it decides each frame after hearing about half a second
    /// more, so its decisions come that much later; more accurate where the whole file is at
    /// hand (`parley detect`'s default), not for live talking indicators.
    case offline
}

/// Settings of a ``VoiceActivityDetector``.
public struct VADConfiguration: Sendable, Equatable {
    /// Probability at or above which a frame is speech (``VADDecision/isSpeech``).
    /// Default 0.5: the network is trained with a logistic loss on soft targets, so 0.5 is its
    /// natural operating point; raise it to flag fewer non-speech frames at some cost in recall.
    public var threshold: Float
    /// The network that decides (default ``VADModel/live``).
    public var model: VADModel

    public init(threshold: Float = 0.5, model: VADModel = .live) {
        self.threshold = threshold
        self.model = model
    }
}

/// Why a frame was judged as it was: the front end's main measurements.
public struct VADEvidence: Sendable, Equatable {
    /// Level of the frame's 10 ms, in dBov (0 dBov = RMS of a full-scale square wave, 1.0).
    public var energyDbov: Float
    /// Tracked noise floor of the 300-4000 Hz band (minimum statistics over 2 s), in dBov.
    public var noiseFloorDbov: Float
    /// 300-4000 Hz power over its noise floor, in dB (clamped to 0...60).
    public var snrDb: Float
    /// Voicing: peak normalised autocorrelation of the 150-4000 Hz spectrum at pitch lags
    /// 62.5-400 Hz, in 0...1 (speech vowels ~0.5-0.9, noise ~0.1-0.3).
    public var harmonicity: Float
    /// RMS of the 2-8 Hz (syllabic-rate) modulation of the speech-band log envelope over about
    /// 0.5 s, in dB of a 1 dB fluctuation (speech is typically 5-15 dB here, steady sounds below 0).
    public var modulationDb: Float
    /// Spectral flatness of 300-4000 Hz, natural log of geometric over arithmetic mean (<= 0;
    /// 0 = white noise, very negative = tonal).
    public var spectralFlatness: Float
    /// Spectral flux: mean rise of the 300-4000 Hz log spectrum since the previous frame (nepers).
    public var spectralFlux: Float

    public init(energyDbov: Float = -100, noiseFloorDbov: Float = -100, snrDb: Float = 0,
                harmonicity: Float = 0, modulationDb: Float = 0, spectralFlatness: Float = 0,
                spectralFlux: Float = 0) {
        self.energyDbov = energyDbov; self.noiseFloorDbov = noiseFloorDbov; self.snrDb = snrDb
        self.harmonicity = harmonicity; self.modulationDb = modulationDb
        self.spectralFlatness = spectralFlatness; self.spectralFlux = spectralFlux
    }
}

/// The VAD's verdict on one 10 ms frame.
public struct VADDecision: Sendable, Equatable {
    /// Index of the frame since the start (or the last ``VoiceActivityDetector/reset()``).
    public var frameIndex: Int
    /// Start of the frame, in seconds since the start of the stream (`frameIndex * 0.01`).
    public var time: Double
    /// Speech probability in 0...1, before any hysteresis.
    public var probability: Float
    /// `probability >= configuration.threshold`.
    public var isSpeech: Bool
    /// The measurements behind the probability.
    public var evidence: VADEvidence

    public init(frameIndex: Int, time: Double, probability: Float, isSpeech: Bool, evidence: VADEvidence) {
        self.frameIndex = frameIndex; self.time = time; self.probability = probability
        self.isSpeech = isSpeech; self.evidence = evidence
    }
}

/// A streaming voice activity detector for one mono stream: any number of samples in, one
/// ``VADDecision`` per 10 ms out.
///
/// Inputs at 8, 12, 24, 32 or 48 kHz are converted to an internal 16 kHz stream by ParleyCore's
/// band-limited `Resampler` (16 kHz input is analysed as it is). Each 10 ms hop is analysed
/// over the last 32 ms (causal, no look-ahead; the resampler delays what the front end hears by
/// 1.2 ms at 32 and 48 kHz, 1.3 ms at 24 kHz, 3.3 ms at 12 kHz, 4.8 ms at 8 kHz) into 32 mel band
/// levels, the same levels over their floors, and 31 spectral and temporal features (band SNRs
/// against a minimum-statistics noise floor, harmonicity, flux, flatness, the 2-8 Hz envelope
/// modulation, 0.1-1 s context); a trained causal network (two convolutions over the last three
/// frames, a GRU; `Tools/vad-training/`) maps them to a speech probability.
///
/// - Digital silence (a 10 ms hop under -90 dBov: a muted or not yet started stream, DTX, zero
///   padding) is never speech (probability 0) and leaves every tracker as it was, so a stream
///   that starts with or pauses in silence is judged as if the silence were not there.
/// - Samples are floats nominally in [-1, 1]. Non-finite samples (NaN, +/-inf) are replaced by 0
///   and counted in ``nonFiniteSampleCount``; finite samples are clamped to [-4, 4], so no input
///   can poison the state.
/// - Deterministic: the same samples give the same decisions bit for bit, however they are split
///   into calls (no libm, no randomness).
/// - No allocation per frame; about 64 KB of state per detector, plus 4 KB for the network.
/// - Threading: a value type; use one detector per stream from one thread at a time. Copies are
///   independent (copy-on-write).
public struct VoiceActivityDetector: Sendable {
    /// Duration of one decision frame, in seconds.
    public static let frameDuration: Double = 0.010
    /// Rates the detector accepts, in Hz.
    public static let supportedSampleRates: [Int] = [8_000, 12_000, 16_000, 24_000, 32_000, 48_000]

    /// The input sample rate, in Hz.
    public let sampleRate: Int
    /// The settings. Choosing another ``VADConfiguration/model`` starts the stream afresh, as
    /// ``reset()`` does.
    public var configuration: VADConfiguration {
        didSet {
            if configuration.model != oldValue.model {
                engine = VADEngine(sampleRate: sampleRate, network: .model(configuration.model))
            }
        }
    }
    /// Non-finite input samples seen (and treated as 0) since creation or ``reset()``.
    public var nonFiniteSampleCount: Int { engine.nonFinite }

    private var engine: VADEngine

    /// Creates a detector for a mono stream at `sampleRate` Hz.
    /// - Throws: ``VADError/unsupportedSampleRate(_:)`` for a rate not in ``supportedSampleRates``.
    public init(sampleRate: Int, configuration: VADConfiguration = .init()) throws(VADError) {
        guard Self.supportedSampleRates.contains(sampleRate) else {
            throw .unsupportedSampleRate(sampleRate)
        }
        self.sampleRate = sampleRate
        self.configuration = configuration
        self.engine = VADEngine(sampleRate: sampleRate, network: .model(configuration.model))
    }

    /// A detector running `network` (for tests of other networks than the live one).
    init(sampleRate: Int, configuration: VADConfiguration = .init(), network: SpectralNetwork) throws(VADError) {
        try self.init(sampleRate: sampleRate, configuration: configuration)
        engine = VADEngine(sampleRate: sampleRate, network: network)
    }

    /// Feeds `samples` (any count, including 0) and calls `onDecision` once for each 10 ms frame
    /// completed, in order. Leftover samples are kept for the next call.
    public mutating func process(_ samples: UnsafeBufferPointer<Float>, _ onDecision: (VADDecision) -> Void) {
        makeUnique()
        let threshold = configuration.threshold
        engine.process(samples) { index, probability, evidence in
            onDecision(VADDecision(frameIndex: index, time: Double(index) * Self.frameDuration,
                                   probability: probability, isSpeech: probability >= threshold,
                                   evidence: evidence))
        }
    }

    /// Frames of look-ahead: a frame's decision is handed out once the detector has analysed
    /// this many frames after it (0 for a causal network: every decision at once).
    public var lookaheadFrames: Int { engine.network.lookahead }

    /// Ends the stream: hands out the decisions of the frames still waiting for look-ahead
    /// (none without look-ahead), deciding them on what was heard. Samples of a partial frame
    /// are kept; feeding more continues the stream.
    public mutating func finish(_ onDecision: (VADDecision) -> Void) {
        makeUnique()
        let threshold = configuration.threshold
        engine.flushPending { index, probability, evidence in
            onDecision(VADDecision(frameIndex: index, time: Double(index) * Self.frameDuration,
                                   probability: probability, isSpeech: probability >= threshold,
                                   evidence: evidence))
        }
    }

    /// Convenience for arrays: feeds `samples` and returns the decisions of the frames completed.
    /// Allocates the result; real-time callers use the closure form.
    public mutating func process(_ samples: [Float]) -> [VADDecision] {
        var out: [VADDecision] = []
        samples.withUnsafeBufferPointer { buffer in process(buffer) { out.append($0) } }
        return out
    }

    /// Forgets all history (noise floor, context, partial frame); frame indices restart at 0.
    public mutating func reset() {
        makeUnique()
        engine.reset()
    }

    /// Feeds samples and hands out, per frame, the network's input vector (``SpectralInput``
    /// layout; empty for a digitally silent frame, which the network does not see) and the
    /// probability: for the training tool, so that training uses exactly this front end.
    @_spi(Training)
    public mutating func processInputs(_ samples: UnsafeBufferPointer<Float>,
                                       _ onFrame: (Int, UnsafeBufferPointer<Float>, Float) -> Void) {
        makeUnique()
        let inputs = engine.extractor.buffers.inputs
        let engine = self.engine
        engine.process(samples) { index, probability, _ in
            let n = engine.frameWasSilent ? 0 : SpectralInput.count
            onFrame(index, UnsafeBufferPointer(start: inputs, count: n), probability)
        }
    }

    private mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&engine) { engine = engine.copy() }
        engine.extractor.makeUnique()
    }
}

/// The mutable state behind a ``VoiceActivityDetector`` (copy-on-write).
final class VADEngine: @unchecked Sendable {   // mutated only through a uniquely referenced owner
    let sampleRate: Int
    /// Converts the input to the front end's 16 kHz; nil at 16 kHz, where the samples go to the
    /// front end untouched (the rate the network was trained at).
    var resampler: Resampler?
    /// The sanitised input block handed to the resampler (``resampleBlock`` samples), and room
    /// for what it produces.
    let resampleInput: UnsafeMutablePointer<Float>
    let resampleOutput: UnsafeMutableBufferPointer<Float>
    var extractor = FeatureExtractor()
    let network: SpectralNetwork
    var networkState: SpectralNetworkState
    /// Frames the network has seen whose decisions wait for ``SpectralNetwork/lookahead`` more
    /// (empty for a causal network).
    let pending: PendingFrames
    /// The last analysed frame's input vector (repeated to decide the pending frames when the
    /// sound stops) and the state that rollout runs on, so the real state is left as it was.
    let lastInput: UnsafeMutablePointer<Float>
    let rolloutState: SpectralNetworkState
    var nonFinite = 0
    var previousLogit: Float = 0
    /// Whether the previous frame was analysed (its logit is the smoother's state).
    var smootherPrimed = false
    /// Whether the frame just handed out was digital silence (not analysed).
    var frameWasSilent = false

    /// Input samples per resampler call: 20 ms at 48 kHz.
    static let resampleBlock = 960
    /// The resampler's design: 60 dB down where it would fold back and, when decimating, the
    /// stopband from 1.1 of the 8 kHz Nyquist (what folds lands above 7.2 kHz, in the top mel
    /// band's edge). Chosen by measurement against the default (90 dB, stopband from 8 kHz): on
    /// SampleMedia at 8 and 48 kHz the decisions agree with the 16 kHz path's as often (99.7%,
    /// 99.9%), with 20% (48 kHz) and 4% (8 kHz) fewer instructions per frame and less delay
    /// (1.2 ms instead of 3.6 ms at 48 kHz, 4.8 ms instead of 7.4 ms at 8 kHz).
    static let stopbandAttenuation: Double = 60

    init(sampleRate: Int, network: SpectralNetwork) {
        self.sampleRate = sampleRate
        self.network = network
        networkState = SpectralNetworkState(network)
        rolloutState = SpectralNetworkState(network)
        pending = PendingFrames(capacity: network.lookahead)
        lastInput = .allocate(capacity: SpectralInput.stride)
        lastInput.initialize(repeating: 0, count: SpectralInput.stride)
        if sampleRate == FrontEnd.rate {
            resampler = nil
            resampleInput = .allocate(capacity: 0)
            resampleOutput = .allocate(capacity: 0)
        } else {
            // The rate is one of VoiceActivityDetector.supportedSampleRates (positive) and the
            // block size a positive constant, so the design cannot fail.
            let r = try! Resampler(inputRate: sampleRate, outputRate: FrontEnd.rate,
                                   maxInputFrames: Self.resampleBlock,
                                   stopbandAttenuation: Self.stopbandAttenuation,
                                   aliasIntoTransitionBand: true)
            resampler = r
            resampleInput = .allocate(capacity: Self.resampleBlock)
            resampleInput.initialize(repeating: 0, count: Self.resampleBlock)
            let outputs = r.maxOutputFrames(forInput: Self.resampleBlock)
            resampleOutput = .allocate(capacity: outputs)
            resampleOutput.initialize(repeating: 0)
            primeResampler()
        }
    }

    /// Makes the resampled stream causal: the resampler's output is time-aligned with its input
    /// and so waits for ``Resampler/latencyFrames`` of look-ahead; fed that much silence first
    /// (rounded up to whole 16 kHz samples), every input sample is converted as it arrives, a
    /// stream of N samples gives as many 10 ms frames as at 16 kHz, and the front end hears the
    /// input that much later (``Resampler/latencyFrames`` + 1, rounded up: 1.2 ms at 32 and
    /// 48 kHz, 1.3 ms at 24 kHz, 3.3 ms at 12 kHz, 4.8 ms at 8 kHz). The silence it produces
    /// starts the first hop.
    private func primeResampler() {
        guard var r = resampler else { return }
        resampler = nil
        let step = r.inputFramesPerStep
        let delay = (r.latencyFrames + 1 + step - 1) / step * step
        resampleInput.update(repeating: 0, count: delay)
        // A mono block of at most maxInputFrames into a buffer of maxOutputFrames: cannot throw.
        let produced = try! r.process(UnsafeBufferPointer(start: resampleInput, count: delay), into: resampleOutput)
        let slot = extractor.buffers.window + (FrontEnd.window - FrontEnd.hop)
        slot.update(from: resampleOutput.baseAddress!, count: produced)
        extractor.state.filled = produced
        resampler = r
    }

    deinit {
        resampleInput.deallocate()
        resampleOutput.deallocate()
        lastInput.deallocate()
    }

    func copy() -> VADEngine {
        let c = VADEngine(sampleRate: sampleRate, network: network)
        c.pending.copy(from: pending)
        c.lastInput.update(from: lastInput, count: SpectralInput.stride)
        c.resampler = resampler
        c.extractor.state = extractor.state
        c.extractor.buffers = extractor.buffers.copy()
        c.nonFinite = nonFinite
        c.previousLogit = previousLogit
        c.smootherPrimed = smootherPrimed
        c.networkState = networkState.copy(network)
        return c
    }

    func reset() {
        resampler?.reset()
        extractor.reset()
        primeResampler()
        nonFinite = 0
        previousLogit = 0
        smootherPrimed = false
        networkState.reset()
        pending.removeAll()
    }

    /// Decides the frames still waiting for look-ahead: the network runs on a copy of its state
    /// with the last analysed frame's input repeated, as at the end of a training sequence.
    func flushPending(_ onFrame: (Int, Float, VADEvidence) -> Void) {
        let waiting = pending.count
        guard waiting > 0 else { return }
        rolloutState.memory.update(from: networkState.memory, count: networkState.count)
        var previous = previousLogit
        for step in 0..<network.lookahead {
            var logit = network.logit(lastInput, rolloutState)
            let a = network.smoothing
            if a > 0 { logit = a * previous + (1 - a) * logit }
            previous = logit
            // The first lookahead - waiting outputs decide frames before the stream's first.
            if step >= network.lookahead - waiting {
                let f = pending.removeFirst()
                onFrame(f.index, sigmoid(logit), f.evidence)
            }
        }
    }

    func process(_ samples: UnsafeBufferPointer<Float>, _ onFrame: (Int, Float, VADEvidence) -> Void) {
        // Hot loop on locals: the hop's slot in the analysis window, its fill count and the
        // non-finite count are written back before each frame's analysis.
        let slot = extractor.buffers.window + (FrontEnd.window - FrontEnd.hop)
        var filled = extractor.state.filled
        var bad = 0
        guard let src = samples.baseAddress else { return }
        let n = samples.count
        if resampler == nil {
            bad = feedHops(src, n, into: slot, filled: &filled, onFrame, copy: sanitize)
        } else {
            // Blocks: sanitise into the resampler's input, resample, then hand the outputs to
            // the hop slot, analysing each hop as it completes.
            let dst = resampleInput, out = resampleOutput
            var i = 0
            while i < n {
                let take = min(Self.resampleBlock, n - i)
                bad += sanitize(src + i, dst, take)
                i += take
                // Mono blocks of at most maxInputFrames into a buffer sized by maxOutputFrames
                // in init: the resampler cannot refuse them.
                let produced = try! resampler!.process(UnsafeBufferPointer(start: dst, count: take), into: out)
                _ = feedHops(out.baseAddress!, produced, into: slot, filled: &filled, onFrame) { from, to, m in
                    to.update(from: from, count: m)
                    return 0
                }
            }
        }
        extractor.state.filled = filled
        nonFinite += bad
    }

    /// Moves `count` samples from `src` into `slot` (the hop's place in the analysis window)
    /// with `copy` (which returns how many it found non-finite), analysing each hop as it
    /// completes; `filled` is the slot's fill count. Returns the non-finite count.
    @inline(__always)
    private func feedHops(_ src: UnsafePointer<Float>, _ count: Int, into slot: UnsafeMutablePointer<Float>,
                          filled: inout Int,
                          _ onFrame: (Int, Float, VADEvidence) -> Void,
                          copy: (UnsafePointer<Float>, UnsafeMutablePointer<Float>, Int) -> Int) -> Int {
        let hop = FrontEnd.hop
        var bad = 0
        var i = 0
        while i < count {
            let take = min(hop - filled, count - i)
            bad += copy(src + i, slot + filled, take)
            filled += take
            i += take
            if filled == hop {
                extractor.state.filled = 0
                filled = 0
                frame(onFrame)
            }
        }
        return bad
    }

    private func frame(_ onFrame: (Int, Float, VADEvidence) -> Void) {
        let index = extractor.state.frameIndex
        let ev = extractor.analyse()
        frameWasSilent = ev.isDigitalSilence
        let evidence = VADEvidence(energyDbov: ev.energyDbov, noiseFloorDbov: ev.noiseFloorDbov,
                                   snrDb: ev.snrDb, harmonicity: ev.harmonicity,
                                   modulationDb: ev.modulationDb, spectralFlatness: ev.flatness,
                                   spectralFlux: ev.flux)
        if ev.isDigitalSilence {
            // Never speech; the smoother restarts on the next sound, and frames waiting for
            // look-ahead are decided before this one (decisions stay in order).
            flushPending(onFrame)
            smootherPrimed = false
            onFrame(index, 0, evidence)
            return
        }
        // Digital silence above leaves the network's state as it was.
        var logit = network.logit(extractor.buffers.inputs, networkState)
        let a = network.smoothing
        if a > 0 && smootherPrimed { logit = a * previousLogit + (1 - a) * logit }
        previousLogit = logit
        smootherPrimed = true
        guard network.lookahead > 0 else {
            onFrame(index, sigmoid(logit), evidence)
            return
        }
        lastInput.update(from: extractor.buffers.inputs, count: SpectralInput.stride)
        pending.append(PendingFrame(index: index, evidence: evidence))
        // This output is the decision for the frame `lookahead` analysed frames back.
        if pending.count > network.lookahead {
            let f = pending.removeFirst()
            onFrame(f.index, sigmoid(logit), f.evidence)
        }
    }
}

/// A frame the network has seen, waiting for its decision.
struct PendingFrame {
    var index: Int
    var evidence: VADEvidence
}

/// A first-in first-out ring of ``PendingFrame``s, allocated once (look-ahead + 1 frames).
final class PendingFrames {
    private let slots: UnsafeMutablePointer<PendingFrame>
    private let capacity: Int
    private var head = 0
    private(set) var count = 0

    init(capacity lookahead: Int) {
        capacity = lookahead + 1
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: PendingFrame(index: 0, evidence: VADEvidence()), count: capacity)
    }

    deinit {
        slots.deinitialize(count: capacity)
        slots.deallocate()
    }

    func append(_ f: PendingFrame) {
        slots[(head + count) % capacity] = f
        count += 1
    }

    func removeFirst() -> PendingFrame {
        let f = slots[head]
        head = (head + 1) % capacity
        count -= 1
        return f
    }

    func removeAll() { head = 0; count = 0 }

    func copy(from other: PendingFrames) {
        slots.update(from: other.slots, count: capacity)
        head = other.head
        count = other.count
    }
}

/// Copies `count` input samples to `dst`, non-finite ones as 0 and the others clamped to
/// [-4, 4], four at a time; returns how many were non-finite.
@inline(__always)
private func sanitize(_ src: UnsafePointer<Float>, _ dst: UnsafeMutablePointer<Float>, _ count: Int) -> Int {
    var j = 0
    var bad = SIMD4<UInt32>()
    let s = UnsafeRawPointer(src), d = UnsafeMutableRawPointer(dst)
    while j + 4 <= count {
        let v = s.loadUnaligned(fromByteOffset: 4 * j, as: SIMD4<Float>.self)
        let nonFinite = (unsafeBitCast(v, to: SIMD4<UInt32>.self) & 0x7F80_0000) .== 0x7F80_0000
        var c = v.replacing(with: -4, where: v .< -4)
        c.replace(with: 4, where: c .> 4)
        c.replace(with: 0, where: nonFinite)
        bad &+= SIMD4<UInt32>().replacing(with: 1, where: nonFinite)
        d.storeBytes(of: c, toByteOffset: 4 * j, as: SIMD4<Float>.self)
        j += 4
    }
    var count2 = Int(bad[0] &+ bad[1] &+ bad[2] &+ bad[3])
    while j < count {
        let x = src[j]
        if x.isFinite {
            dst[j] = min(max(x, -4), 4)
        } else {
            dst[j] = 0
            count2 += 1
        }
        j += 1
    }
    return count2
}
