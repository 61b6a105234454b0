// The VAD front end: 10 ms frames of the internal 16 kHz stream to a feature vector.
//
// Per frame (hop 160 samples) over the last 512 samples (32 ms, Hann, causal, no look-ahead):
// band powers of 10 bands from 150 Hz to 8 kHz against a minimum-statistics noise floor,
// spectral flatness and flux over 300-4000 Hz, harmonicity (normalised autocorrelation of the
// 150-4000 Hz magnitude spectrum, lags 62.5-400 Hz, so hum below 150 Hz cannot look periodic),
// pitch change, a coarse cepstral shape, the share of energy below 150 Hz, and longer-horizon
// context: the 2-8 Hz (syllabic) modulation of the speech-band log envelope, running means of
// SNR, voicing, flux and flatness over 0.1-1 s, the maximum voicing over the last 300 ms.

/// Indices of the features in the vector handed to the model (and dumped for training).
@_spi(Training) public enum VADFeature: Int, CaseIterable, Sendable {
    case speechSNR = 0
    case band0SNR, band1SNR, band2SNR, band3SNR, band4SNR, band5SNR, band6SNR, band7SNR, band8SNR, band9SNR
    case flatness, flux, harmonicity, pitchChange, lowFrequencyShare
    case cepstrum1, cepstrum2, cepstrum3, cepstrum4
    case modulation2to8Hz, modulationFast
    case speechSNRMean100ms, speechSNRMean1s, speechSNRDeviation1s
    case harmonicityMean200ms, harmonicityMax300ms, voicedShare1s
    case fluxMean300ms, flatnessMean300ms, pitchChangeMean300ms

    /// Number of features.
    public static let count = 31
}

/// Scalar state of the front end (copied as a value).
struct FrontEndState {
    var filled = 0                  // samples in the current hop
    var frameIndex = 0
    var minCounter = 0              // frames into the current minimum-statistics sub-window
    var minSlot = 0                 // which sub-window minimum is being replaced next
    var warm = 0                    // frames analysed, saturating (noise-floor start-up)
    var fed = 0                     // frames fed to the noise-floor tracker, saturating
    var sinceSilence = Int.max / 2  // frames analysed since the last digitally silent hop
    var previousLag: Float = 0
    var envBP = BiquadState()
    var previousEnvelope: Float = 0
    var modBandEMA: Float = 0
    var modFastEMA: Float = 0
    var snr100: Float = 0, snr1s: Float = 0, snrSq1s: Float = 0
    var harm200: Float = 0, voiced1s: Float = 0
    var flux300: Float = 0, flat300: Float = 0, pitch300: Float = 0
    var harmRingPos = 0
    var melFloorReady = false       // the mel floors hold a first analysed frame
    var nonFiniteSamples = 0
}

struct BiquadState { var x1: Float = 0, x2: Float = 0, y1: Float = 0, y2: Float = 0 }

/// The evidence of the current frame, besides the feature vector.
struct FrameEvidence {
    var energyDbov: Float = -100
    var noiseFloorDbov: Float = -100
    var snrDb: Float = 0
    var harmonicity: Float = 0
    var modulationDb: Float = 0
    var flatness: Float = 0
    var flux: Float = 0
    /// The hop was digital silence: not analysed, no state changed (the VAD says 0).
    var isDigitalSilence = false
}

enum FrontEnd {
    static let rate = 16_000
    static let hop = 160
    static let window = 512
    static let bins = 257
    static let bandCount = 10
    /// Band edges in FFT bins (31.25 Hz each): 150, 300, 500, 750, 1000, 1400, 2000, 2800, 4000, 5500, 8000 Hz.
    static let bandEdges: [Int] = [5, 10, 16, 24, 32, 45, 64, 90, 128, 176, 257]
    static let speechLow = 10, speechHigh = 128        // 300-4000 Hz
    static let harmLow = 5, harmHigh = 128             // 150-4000 Hz
    static let minLag = 20, maxLag = 128               // at 8 kHz: 400 Hz down to 62.5 Hz
    static let subWindows = 8, subWindowFrames = 25    // minimum statistics over 2 s
    static let noiseBias: Float = 1.5                  // compensates the minimum's downward bias
    static let startupFrames = 3                       // hops before the 512-sample window is full
    static let harmRing = 30                           // 300 ms of harmonicity for the running max
    static let powerFloor: Float = 1e-10               // -100 dBov
    /// A hop whose mean square is below this (-90 dBov, under one 16-bit step RMS) is digital
    /// silence: a muted or not yet started stream, DTX, zero padding. It is not analysed and
    /// changes no tracker, so silence before or inside a stream does not collapse the noise floor.
    static let digitalSilencePower: Float = 1e-9
}

/// All memory of the front end in one allocation, laid out at fixed offsets.
final class FrontEndBuffers {
    let count: Int
    let base: UnsafeMutablePointer<Float>
    let window: UnsafeMutablePointer<Float>      // 512 newest samples
    let hann: UnsafeMutablePointer<Float>         // 512
    let re: UnsafeMutablePointer<Float>           // 257
    let im: UnsafeMutablePointer<Float>           // 257
    let power: UnsafeMutablePointer<Float>        // 257
    let logPower: UnsafeMutablePointer<Float>     // 257 (bins 8..<128 used: ln of the power)
    let prevLogPower: UnsafeMutablePointer<Float> // 257
    let acf: UnsafeMutablePointer<Float>          // 256
    let bandPower: UnsafeMutablePointer<Float>    // 10
    let smoothed: UnsafeMutablePointer<Float>     // 10
    let currentMin: UnsafeMutablePointer<Float>   // 10
    let subMins: UnsafeMutablePointer<Float>      // 10 * 8
    let noise: UnsafeMutablePointer<Float>        // 10
    let harmRing: UnsafeMutablePointer<Float>     // 30
    /// The network's input vector (``SpectralInput`` layout): the mel levels, the mel levels over
    /// their floors, then the hand-made features (`features` points into it).
    let inputs: UnsafeMutablePointer<Float>       // SpectralInput.stride
    let features: UnsafeMutablePointer<Float>     // VADFeature.count, inside `inputs`
    let melFloor: UnsafeMutablePointer<Float>     // MelBands.count: per band, the tracked floor (dB)
    let melWeights: UnsafeMutablePointer<Float>   // MelBands.weightCount: the triangles, band after band
    let dct: UnsafeMutablePointer<Float>          // 4 x 10 cosine table of the cepstral shape
    let bandScratch: UnsafeMutablePointer<Float>  // 2 x 12: per band SNR ratio then level (dB after the logs)
    let bandEdges: UnsafeMutablePointer<Int>      // FrontEnd.bandEdges, without array access in the loop
    let melBins: UnsafeMutablePointer<Int>        // 2 x MelBands.count: each band's first bin, then its bin count

    init() {
        let sizes = [512, 512, 257, 257, 257, 257, 257, 256, 10, 10, 10, 80, 10, 30, SpectralInput.stride,
                     MelBands.count, MelBands.weightCount, 40, 24]
        let total = sizes.reduce(0, +)
        let memory = UnsafeMutablePointer<Float>.allocate(capacity: total)
        memory.initialize(repeating: 0, count: total)
        count = total
        base = memory
        var o = 0
        func take(_ n: Int) -> UnsafeMutablePointer<Float> { defer { o += n }; return memory + o }
        window = take(512); hann = take(512)
        re = take(257); im = take(257); power = take(257); logPower = take(257); prevLogPower = take(257)
        acf = take(256); bandPower = take(10); smoothed = take(10); currentMin = take(10)
        subMins = take(80); noise = take(10); harmRing = take(30)
        inputs = take(SpectralInput.stride); features = inputs + SpectralInput.handFeatures
        melFloor = take(MelBands.count); melWeights = take(MelBands.weightCount)
        dct = take(40); bandScratch = take(24)
        bandEdges = .allocate(capacity: FrontEnd.bandEdges.count)
        for (i, e) in FrontEnd.bandEdges.enumerated() { bandEdges[i] = e }
        melBins = .allocate(capacity: 2 * MelBands.count)
        for m in 0..<MelBands.count {
            melBins[m] = MelBands.table.firstBin[m]
            melBins[MelBands.count + m] = MelBands.table.binCount[m]
        }
        fillTables()
    }

    private func fillTables() {
        for i in 0..<512 {
            hann[i] = Float(0.5 - 0.5 * cosApprox(2 * Double.pi * Double(i) / 512))
        }
        for c in 1...4 {
            for band in 0..<10 {
                dct[(c - 1) * 10 + band] = Float(cosApprox(Double.pi * Double(c) * (Double(band) + 0.5) / 10)) / 40
            }
        }
        for i in 0..<MelBands.weightCount { melWeights[i] = MelBands.table.weights[i] }
    }

    deinit { base.deallocate(); bandEdges.deallocate(); melBins.deallocate() }

    func copy() -> FrontEndBuffers {
        let c = FrontEndBuffers()
        c.base.update(from: base, count: count)
        return c
    }

    func reset() {
        base.update(repeating: 0, count: count)
        fillTables()
    }
}

/// Computes the features of one 10 ms hop. All work is in place in `FrontEndBuffers`.
struct FeatureExtractor {
    var state = FrontEndState()
    var buffers = FrontEndBuffers()
    var fft512 = RealFFT(length: 512)
    var fft256 = RealFFT(length: 256)

    mutating func makeUnique() {
        if !isKnownUniquelyReferenced(&buffers) { buffers = buffers.copy() }
        if !isKnownUniquelyReferenced(&fft512) { fft512 = RealFFT(length: 512) }
        if !isKnownUniquelyReferenced(&fft256) { fft256 = RealFFT(length: 256) }
    }

    mutating func reset() {
        state = FrontEndState()
        buffers.reset()
    }

    /// Appends one 16 kHz sample; returns true when a hop is complete (then call `analyse`).
    @inline(__always)
    mutating func append(_ x: Float) -> Bool {
        buffers.window[FrontEnd.window - FrontEnd.hop + state.filled] = x
        state.filled += 1
        return state.filled == FrontEnd.hop
    }

    /// The mel levels of the current spectrum (dBov) and each over its floor. The floor follows
    /// a fall at once and a rise by at most ``MelBands/floorRise`` per frame; it is fed only by
    /// frames that feed the noise trackers (not the zero-padded start-up hops).
    @inline(__always)
    private func melLevels(feeds: Bool, _ s: inout FrontEndState) {
        let b = buffers
        let level = b.inputs, over = b.inputs + MelBands.count
        var w = 0
        for band in 0..<MelBands.count {
            let first = b.melBins[band], n = b.melBins[MelBands.count + band]
            var acc: Float = 0
            for k in 0..<n { acc += b.power[first + k] * b.melWeights[w + k] }
            w += n
            level[band] = acc + FrontEnd.powerFloor
        }
        let raw = UnsafeMutableRawPointer(level)
        var o = 0
        while o < MelBands.count * 4 {
            let v = raw.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
            raw.storeBytes(of: 3.0102999566 * fastLog2x4(v), toByteOffset: o, as: SIMD4<Float>.self)
            o += 16
        }
        let floor = b.melFloor
        if feeds {
            if s.melFloorReady {
                for band in 0..<MelBands.count { floor[band] = min(level[band], floor[band] + MelBands.floorRise) }
            } else {
                for band in 0..<MelBands.count { floor[band] = level[band] }
                s.melFloorReady = true
            }
        }
        for band in 0..<MelBands.count {
            over[band] = s.melFloorReady ? level[band] - floor[band] : 0
        }
    }

    /// Analyses the completed hop: fills `buffers.inputs` (and so `buffers.features`) and
    /// returns the evidence.
    mutating func analyse() -> FrameEvidence {
        var s = state
        defer { state = s }
        s.filled = 0
        let frameEnergy = newestHopPower()
        if frameEnergy < FrontEnd.digitalSilencePower { return digitalSilence(&s) }
        s.sinceSilence = min(s.sinceSilence + 1, 1_000)

        powerSpectrum()
        s.warm = min(s.warm + 1, 1_000)
        // The first hops see a window still padded with zeros (at the start, or after digital
        // silence): they neither seed nor feed the minimum statistics (a low minimum would
        // inflate every SNR for 2 s). After silence the floor already tracked is kept.
        let startup = s.warm <= FrontEnd.startupFrames
        let feeds = !startup && s.sinceSilence > FrontEnd.startupFrames
        if feeds { s.fed = min(s.fed + 1, 1_000) }
        let bands = bandLevels(feeds: feeds, &s)
        melLevels(feeds: feeds, &s)
        let speechSNR = min(max(decibels((bands.speechPower + FrontEnd.powerFloor) / bands.speechNoise), 0), 60)
        let lowShare = min(max(decibels((bands.low + FrontEnd.powerFloor)
                                        / (bands.low + bands.total + FrontEnd.powerFloor)), -60), 0)
        let (flatness, flux) = flatnessAndFlux(startup: startup)
        let (harm, lag) = harmonicity()
        let pitchLag = Float(lag)
        var pitchChange: Float = 1
        if lag > 0 && s.previousLag > 0 {
            pitchChange = min(abs(fastLog2(pitchLag / s.previousLag)), 1)
        }
        s.previousLag = harm > 0.3 ? pitchLag : 0
        cepstrum()
        let (modBand, modFast) = modulation(speechPower: bands.speechPower, speechNoise: bands.speechNoise,
                                            speechSNR: speechSNR, startup: startup, &s)
        longHorizonContext(speechSNR: speechSNR, harm: harm, flux: flux, flatness: flatness,
                           pitchChange: pitchChange, &s)

        let f = buffers.features
        f[VADFeature.speechSNR.rawValue] = speechSNR
        f[VADFeature.flatness.rawValue] = flatness
        f[VADFeature.flux.rawValue] = flux
        f[VADFeature.harmonicity.rawValue] = harm
        f[VADFeature.pitchChange.rawValue] = pitchChange
        f[VADFeature.lowFrequencyShare.rawValue] = lowShare
        f[VADFeature.modulation2to8Hz.rawValue] = modBand
        f[VADFeature.modulationFast.rawValue] = modFast
        slideWindow(&s)
        return FrameEvidence(energyDbov: decibels(frameEnergy + FrontEnd.powerFloor),
                             noiseFloorDbov: decibels(bands.speechNoise), snrDb: speechSNR,
                             harmonicity: harm, modulationDb: modBand, flatness: flatness, flux: flux)
    }

    /// Mean square of the newest 10 ms.
    @inline(__always)
    private func newestHopPower() -> Float {
        let w = buffers.window
        var e: Float = 0
        for i in (FrontEnd.window - FrontEnd.hop)..<FrontEnd.window { e += w[i] * w[i] }
        return e / Float(FrontEnd.hop)
    }

    /// Moves the analysis window on by one hop.
    @inline(__always)
    private func slideWindow(_ s: inout FrontEndState) {
        let w = buffers.window
        w.update(from: w + FrontEnd.hop, count: FrontEnd.window - FrontEnd.hop)
        s.frameIndex += 1
    }

    /// A digitally silent hop: not analysed, no tracker changes; the evidence carries the
    /// 300-4000 Hz noise floor of the last analysed hop (bands 1...8).
    @inline(__always)
    private func digitalSilence(_ s: inout FrontEndState) -> FrameEvidence {
        s.sinceSilence = 0
        slideWindow(&s)
        var silent = FrameEvidence()
        silent.isDigitalSilence = true
        if s.fed > 0 {
            var floor: Float = 0
            for band in 1...8 { floor += buffers.noise[band] }
            silent.noiseFloorDbov = decibels(floor)
        }
        return silent
    }

    /// The power spectrum of the last 32 ms into `buffers.power`, scaled so that the band powers
    /// add up to the mean square of a stationary signal.
    @inline(__always)
    private func powerSpectrum() {
        let b = buffers
        fft512.forward(b.window, windowedBy: b.hann, re: b.re, im: b.im)
        let scale: Float = 2 / (Float(FrontEnd.window) * 192)    // sum of hann^2 over 512 = 192
        for k in 0..<FrontEnd.bins {
            b.power[k] = (b.re[k] * b.re[k] + b.im[k] * b.im[k]) * scale
        }
    }

    /// Sums of the band powers of the current spectrum.
    struct BandSums {
        /// All ten bands (150 Hz to 8 kHz).
        var total: Float = 0
        /// Below 150 Hz (bins 1 to 4).
        var low: Float = 0
        /// The speech bands 1...8 (300-4000 Hz) and their noise floors.
        var speechPower: Float = 0, speechNoise: Float = 0
    }

    /// Band powers, their minimum-statistics noise floors (fed when `feeds`) and the band SNR
    /// features; leaves each band's level (dB) in `bandScratch[12...]` for the cepstrum.
    @inline(__always)
    private func bandLevels(feeds: Bool, _ s: inout FrontEndState) -> BandSums {
        let b = buffers
        var sums = BandSums()
        let edges = b.bandEdges
        for k in 1..<edges[0] { sums.low += b.power[k] }
        let tracked = s.fed                                   // frames fed to the tracker so far
        let newSubWindow = feeds && s.minCounter == FrontEnd.subWindowFrames - 1
        // Sub-window minima written so far (slot j is written at the end of fed frame 25(j+1)).
        let filledSubs = min(max(tracked - 1, 0) / FrontEnd.subWindowFrames, FrontEnd.subWindows)
        // Per band, the two arguments of `decibels` (SNR ratio, level) are collected and their logs
        // taken four bands at a time afterwards (the same values as one `decibels` per band).
        let ratio = b.bandScratch, lb = b.bandScratch + 12
        for band in 0..<FrontEnd.bandCount {
            var p: Float = 0
            for k in edges[band]..<edges[band + 1] { p += b.power[k] }
            b.bandPower[band] = p
            sums.total += p
            var floor = p
            let subs = b.subMins + band * FrontEnd.subWindows
            if feeds {
                let sm = tracked == 1 ? p : 0.7 * b.smoothed[band] + 0.3 * p
                b.smoothed[band] = sm
                let cm = s.minCounter == 0 ? sm : min(b.currentMin[band], sm)
                b.currentMin[band] = cm
                floor = cm
                for j in 0..<filledSubs { floor = min(floor, subs[j]) }
                if newSubWindow { subs[s.minSlot] = cm }
            } else if tracked > 0 {
                floor = b.currentMin[band]
                for j in 0..<filledSubs { floor = min(floor, subs[j]) }
            }
            let nfl = floor * FrontEnd.noiseBias + FrontEnd.powerFloor
            b.noise[band] = nfl
            ratio[band] = (p + FrontEnd.powerFloor) / nfl
            lb[band] = p + FrontEnd.powerFloor
            if band >= 1 && band <= 8 { sums.speechPower += p; sums.speechNoise += nfl }
        }
        let raw = UnsafeMutableRawPointer(b.bandScratch)
        var o = 0
        while o < 24 * 4 {      // 10 ratios and 10 levels, each padded to 12
            let v = raw.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
            raw.storeBytes(of: 3.0102999566 * fastLog2x4(v), toByteOffset: o, as: SIMD4<Float>.self)
            o += 16
        }
        for band in 0..<FrontEnd.bandCount {
            b.features[VADFeature.band0SNR.rawValue + band] = min(max(ratio[band], 0), 60)
        }
        if newSubWindow {
            s.minSlot = (s.minSlot + 1) % FrontEnd.subWindows
            s.minCounter = 0
        } else if feeds {
            s.minCounter += 1
        }
        return sums
    }

    /// Spectral flatness and flux over 300-4000 Hz (natural-log units); keeps this frame's log
    /// spectrum for the next flux. The flux is 0 while `startup`.
    @inline(__always)
    private func flatnessAndFlux(startup: Bool) -> (flatness: Float, flux: Float) {
        let b = buffers
        // The logs four bins at a time into `logPower` (bins 8..<128, a whole number of SIMD4
        // blocks over 10..<128), then the sums in the scalar order.
        let pw = UnsafeRawPointer(b.power), lp = UnsafeMutableRawPointer(b.logPower)
        var k = 8
        while k < FrontEnd.speechHigh {
            let p = pw.loadUnaligned(fromByteOffset: 4 * k, as: SIMD4<Float>.self) + FrontEnd.powerFloor
            lp.storeBytes(of: fastLog2x4(p) * 0.6931472, toByteOffset: 4 * k, as: SIMD4<Float>.self)
            k += 4
        }
        var sumLog: Float = 0, sumP: Float = 0, flux: Float = 0
        for k in FrontEnd.speechLow..<FrontEnd.speechHigh {
            let p = b.power[k] + FrontEnd.powerFloor
            let l = b.logPower[k]
            sumLog += l
            sumP += p
            let d = l - b.prevLogPower[k]
            flux += d > 0 ? d : 0       // + 0 leaves flux (>= +0) unchanged: no branch
            b.prevLogPower[k] = l
        }
        let speechBins = Float(FrontEnd.speechHigh - FrontEnd.speechLow)
        let flatness = sumLog / speechBins - fastLog2(sumP / speechBins) * 0.6931472
        return (flatness, startup ? 0 : min(flux / speechBins, 10))
    }

    /// Harmonicity in [0, 1] and its lag (0 when none): the highest normalised autocorrelation
    /// peak, at 8 kHz lags 20...128, of the 150-4000 Hz magnitude spectrum.
    @inline(__always)
    private func harmonicity() -> (harm: Float, lag: Int) {
        let b = buffers
        let pw = UnsafeRawPointer(b.power), mag = UnsafeMutableRawPointer(b.re)
        b.re.update(repeating: 0, count: FrontEnd.harmLow)
        b.im.update(repeating: 0, count: 129)
        var k = FrontEnd.harmLow      // 5..<129 in SIMD4 blocks, then bin 128 back to 0
        while k < 129 {
            let p = pw.loadUnaligned(fromByteOffset: 4 * k, as: SIMD4<Float>.self)
            let r = p.replacing(with: 0, where: .!(p .> 0)).squareRoot()   // root(): max(p, 0)
            mag.storeBytes(of: r, toByteOffset: 4 * k, as: SIMD4<Float>.self)
            k += 4
        }
        b.re[128] = 0
        fft256.inverse(re: b.re, im: b.im, output: b.acf, count: FrontEnd.maxLag + 1)   // lags 0...128 used
        var harm: Float = 0
        var lag = 0
        let r0 = b.acf[0]
        if r0 > 1e-9 {
            // Lags in order; a block of four none of which beats the current maximum is skipped
            // with one SIMD comparison (the maximum cannot change inside it).
            var threshold: Float = 0                        // harm * r0, recomputed only when harm changes
            let acf = b.acf, raw = UnsafeRawPointer(b.acf)
            var l = FrontEnd.minLag
            while l <= FrontEnd.maxLag {
                let end = min(l + 4, FrontEnd.maxLag + 1)
                if end == l + 4 && !any(raw.loadUnaligned(fromByteOffset: 4 * l, as: SIMD4<Float>.self) .> threshold) {
                    l = end
                    continue
                }
                while l < end {
                    if acf[l] > threshold {
                        harm = acf[l] / r0
                        threshold = harm * r0
                        lag = l
                    }
                    l += 1
                }
            }
        }
        return (min(max(harm, 0), 1), lag)
    }

    /// Cepstral shape of the log band energies (DCT-II, coefficients 1-4) into the features.
    @inline(__always)
    private func cepstrum() {
        let b = buffers
        let lb = b.bandScratch + 12
        for c in 1...4 {
            var acc: Float = 0
            let row = b.dct + (c - 1) * 10
            for band in 0..<FrontEnd.bandCount { acc += lb[band] * row[band] }
            b.features[VADFeature.cepstrum1.rawValue + c - 1] = acc
        }
    }

    /// Modulation of the speech-band log envelope (floored at the noise so noise is flat): the
    /// 2-8 Hz band and the frame-to-frame change, as decibels of their running mean squares.
    @inline(__always)
    private func modulation(speechPower: Float, speechNoise: Float, speechSNR: Float, startup: Bool,
                            _ s: inout FrontEndState) -> (band: Float, fast: Float) {
        let envelope = decibels(max(speechPower, 2 * speechNoise))
        if startup {   // start the envelope filters from the first full window, without a step
            s.envBP = BiquadState(x1: envelope, x2: envelope, y1: 0, y2: 0)
            s.previousEnvelope = envelope
        }
        // RBJ band-pass, centre 4 Hz, Q 0.67, at 100 frames/s (constant 0 dB peak gain).
        let y = Modulation.b0 * envelope + Modulation.b2 * s.envBP.x2
            - Modulation.a1 * s.envBP.y1 - Modulation.a2 * s.envBP.y2
        s.envBP.x2 = s.envBP.x1; s.envBP.x1 = envelope
        s.envBP.y2 = s.envBP.y1; s.envBP.y1 = y
        let fast = envelope - s.previousEnvelope
        s.previousEnvelope = envelope
        // Tau 0.5 s; 50 ms while the speech band is at its noise floor (bounded memory after speech).
        let modRate: Float = speechSNR < 3 ? 0.2 : 0.02
        s.modBandEMA += modRate * (min(y * y, 2_500) - s.modBandEMA)
        s.modFastEMA += modRate * (min(fast * fast, 2_500) - s.modFastEMA)
        return (decibels(s.modBandEMA + 0.01), decibels(s.modFastEMA + 0.01))
    }

    /// Longer-horizon context: running means of SNR, voicing, flux, flatness and pitch change
    /// over 0.1-1 s and the maximum harmonicity over 300 ms, into the features.
    @inline(__always)
    private func longHorizonContext(speechSNR: Float, harm: Float, flux: Float, flatness: Float,
                                    pitchChange: Float, _ s: inout FrontEndState) {
        let b = buffers
        s.snr100 += 0.1 * (speechSNR - s.snr100)
        // Tau 1 s; 0.1 s while the speech band is at its noise floor.
        let snrRate: Float = speechSNR < 3 ? 0.1 : 0.01
        s.snr1s += snrRate * (speechSNR - s.snr1s)
        s.snrSq1s += snrRate * (speechSNR * speechSNR - s.snrSq1s)
        s.harm200 += 0.05 * (harm - s.harm200)
        s.voiced1s += 0.01 * ((harm > 0.45 && speechSNR > 3 ? 1 : 0) - s.voiced1s)
        s.flux300 += 0.033 * (flux - s.flux300)
        s.flat300 += 0.033 * (flatness - s.flat300)
        s.pitch300 += 0.033 * (pitchChange - s.pitch300)
        b.harmRing[s.harmRingPos] = harm
        s.harmRingPos = (s.harmRingPos + 1) % FrontEnd.harmRing
        var harmMax: Float = 0
        for i in 0..<FrontEnd.harmRing { harmMax = max(harmMax, b.harmRing[i]) }

        let f = b.features
        f[VADFeature.speechSNRMean100ms.rawValue] = s.snr100
        f[VADFeature.speechSNRMean1s.rawValue] = s.snr1s
        f[VADFeature.speechSNRDeviation1s.rawValue] = root(s.snrSq1s - s.snr1s * s.snr1s)
        f[VADFeature.harmonicityMean200ms.rawValue] = s.harm200
        f[VADFeature.harmonicityMax300ms.rawValue] = harmMax
        f[VADFeature.voicedShare1s.rawValue] = s.voiced1s
        f[VADFeature.fluxMean300ms.rawValue] = s.flux300
        f[VADFeature.flatnessMean300ms.rawValue] = s.flat300
        f[VADFeature.pitchChangeMean300ms.rawValue] = s.pitch300
    }
}

/// Coefficients of the 2-8 Hz envelope band-pass (RBJ cookbook, f0 = 4 Hz, Q = 0.667, fs = 100 Hz).
enum Modulation {
    // w0 = 2 pi 4 / 100; alpha = sin(w0) / (2 Q); normalised by a0 = 1 + alpha.
    static let b0: Float = 0.157197
    static let b2: Float = -0.157197
    static let a1: Float = -1.632649
    static let a2: Float = 0.685605
}
