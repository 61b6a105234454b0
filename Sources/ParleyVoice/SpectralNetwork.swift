// The learned decision: a causal network over the front end's input vector (SpectralInput), one
// step per 10 ms frame:
//
//   standardise -> conv1d (kernel 3 over the last 3 frames) -> ReLU -> conv1d (kernel 3) -> ReLU
//   -> GRU -> linear -> logit
//
// The layers and equations are torch's (Conv1d with two frames of zero padding on the left; GRU
// with gates r, z, n), so a network trained by Tools/vad-training/train_spectral.py runs here
// unchanged. Its weights are generated into Generated/SpectralNetworkWeights.swift. A network
// trained with look-ahead L (train_spectral.py --lookahead) has the same layers; its output after
// frame t + L is the decision for frame t (VADEngine holds the L frames in between).

/// One trained network as export_weights.py writes it: the layer widths, the look-ahead and the
/// weights (base64 of little-endian float32, in the order ``SpectralNetwork/init(_:)`` reads).
struct SpectralNetworkWeights: Sendable {
    let inputCount: Int, kernel: Int, conv1: Int, conv2: Int, hidden: Int
    /// Weight of the previous frame's logit in the output's one-pole smoother.
    let outputSmoothing: Float
    /// Frames of future context the decisions wait for (0: a causal network).
    var lookahead: Int
    let base64: String
}

/// The network's weights, copied once into zero-padded rows laid out for ``denseLayer8``.
/// Immutable after `init`, so one instance is shared by every detector.
final class SpectralNetwork: @unchecked Sendable {   // immutable after init: safe to share
    /// The network of live calls.
    static let live = SpectralNetwork(.live)
    /// The network of recordings, which looks ahead.
    static let offline = SpectralNetwork(.offline)

    /// The shared network of `model`.
    static func model(_ model: VADModel) -> SpectralNetwork {
        switch model {
        case .live: live
        case .offline: offline
        }
    }

    let kernel: Int
    /// Frames of future context (``SpectralNetworkWeights/lookahead``).
    let lookahead: Int
    /// Padded widths (multiples of 8) of the input, the two convolutions and the GRU.
    let inputStride: Int, conv1Stride: Int, conv2Stride: Int, hiddenStride: Int
    /// Weight of the previous frame's logit in the output's one-pole smoother (0 = none).
    let smoothing: Float
    private let memory: UnsafeMutablePointer<Float>
    private let mean: UnsafeMutablePointer<Float>, invStd: UnsafeMutablePointer<Float>
    private let w1: UnsafeMutablePointer<Float>, b1: UnsafeMutablePointer<Float>
    private let w2: UnsafeMutablePointer<Float>, b2: UnsafeMutablePointer<Float>
    private let wi: UnsafeMutablePointer<Float>, bi: UnsafeMutablePointer<Float>
    private let wh: UnsafeMutablePointer<Float>, bh: UnsafeMutablePointer<Float>
    private let wo: UnsafeMutablePointer<Float>
    private let bo: Float

    init(_ W: SpectralNetworkWeights) {
        let k = W.kernel, nIn = W.inputCount, c1 = W.conv1, c2 = W.conv2, h = W.hidden
        precondition(nIn == SpectralInput.count, "network and front end disagree on the input count")
        precondition(W.lookahead >= 0, "a network's look-ahead is not negative")
        lookahead = W.lookahead
        let values = decodeBase64Floats(W.base64)
        let expected = 2 * nIn + c1 * nIn * k + c1 + c2 * c1 * k + c2 + 3 * h * c2 + 3 * h * h + 6 * h + h + 1
        precondition(values.count == expected, "SpectralNetworkWeights holds \(values.count) values, its shapes need \(expected)")
        let padded = { (n: Int) in (n + 7) / 8 * 8 }
        kernel = k
        inputStride = SpectralInput.stride
        conv1Stride = padded(c1); conv2Stride = padded(c2); hiddenStride = padded(h)
        smoothing = W.outputSmoothing
        let sizes = [inputStride, inputStride,
                     conv1Stride * k * inputStride, conv1Stride,
                     conv2Stride * k * conv1Stride, conv2Stride,
                     3 * hiddenStride * conv2Stride, 3 * hiddenStride,
                     3 * hiddenStride * hiddenStride, 3 * hiddenStride, hiddenStride]
        let (m, b) = allocateWeightBlocks(sizes)
        memory = m
        mean = b[0]; invStd = b[1]; w1 = b[2]; b1 = b[3]; w2 = b[4]; b2 = b[5]
        wi = b[6]; bi = b[7]; wh = b[8]; bh = b[9]; wo = b[10]
        var o = 0
        func next() -> Float { defer { o += 1 }; return values[o] }
        for i in 0..<nIn { mean[i] = next() }
        for i in 0..<nIn { invStd[i] = next() }
        // Conv1d weight [out][in][tap]: tap t multiplies the frame t - (kernel - 1) steps back
        // from now, which sits at slot t of the layer's input window.
        for c in 0..<c1 { for i in 0..<nIn { for t in 0..<k {
            w1[interleaved8Index(row: c, input: t * inputStride + i, inputStride: k * inputStride)] = next()
        } } }
        for c in 0..<c1 { b1[c] = next() }
        for c in 0..<c2 { for i in 0..<c1 { for t in 0..<k {
            w2[interleaved8Index(row: c, input: t * conv1Stride + i, inputStride: k * conv1Stride)] = next()
        } } }
        for c in 0..<c2 { b2[c] = next() }
        // GRU, torch's gate order (r, z, n), rows gate-major with each gate padded.
        for g in 0..<3 { for j in 0..<h { for i in 0..<c2 {
            wi[interleaved8Index(row: g * hiddenStride + j, input: i, inputStride: conv2Stride)] = next()
        } } }
        for g in 0..<3 { for j in 0..<h { for i in 0..<h {
            wh[interleaved8Index(row: g * hiddenStride + j, input: i, inputStride: hiddenStride)] = next()
        } } }
        for g in 0..<3 { for j in 0..<h { bi[g * hiddenStride + j] = next() } }
        for g in 0..<3 { for j in 0..<h { bh[g * hiddenStride + j] = next() } }
        for j in 0..<h { wo[j] = next() }
        bo = next()
    }

    deinit { memory.deallocate() }

    /// One step: takes this frame's input vector (``SpectralInput/stride`` floats), updates
    /// `state` and returns the logit of speech. No allocation; a fixed order of operations, so
    /// deterministic.
    func logit(_ input: UnsafePointer<Float>, _ state: SpectralNetworkState) -> Float {
        let k = kernel
        // The input window: the last `kernel` standardised frames, oldest first.
        let x = state.inputWindow
        x.update(from: x + inputStride, count: (k - 1) * inputStride)
        let newest = x + (k - 1) * inputStride
        do {
            let src = UnsafeRawPointer(input), m = UnsafeRawPointer(mean), s = UnsafeRawPointer(invStd)
            let dst = UnsafeMutableRawPointer(newest)
            var o = 0
            while o < inputStride * 4 {
                var v = (src.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                         - m.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self))
                    * s.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                v.clamp(lowerBound: SIMD8(repeating: -8), upperBound: SIMD8(repeating: 8))
                dst.storeBytes(of: v, toByteOffset: o, as: SIMD8<Float>.self)
                o += 32
            }
        }
        let a1 = state.conv1Window
        a1.update(from: a1 + conv1Stride, count: (k - 1) * conv1Stride)
        let a1new = a1 + (k - 1) * conv1Stride
        denseLayer8(w1, b1, x, inputStride: k * inputStride, blocks: conv1Stride / 8, a1new)
        reluInPlace(a1new, conv1Stride)
        let a2 = state.conv2Output
        denseLayer8(w2, b2, a1, inputStride: k * conv1Stride, blocks: conv2Stride / 8, a2)
        reluInPlace(a2, conv2Stride)

        let hdn = state.hidden, gi = state.inputGates, gh = state.hiddenGates
        denseLayer8(wi, bi, a2, inputStride: conv2Stride, blocks: 3 * hiddenStride / 8, gi)
        denseLayer8(wh, bh, hdn, inputStride: hiddenStride, blocks: 3 * hiddenStride / 8, gh)
        // r = sigmoid(gi_r + gh_r), z = sigmoid(gi_z + gh_z), n = tanh(gi_n + r * gh_n),
        // h' = (1 - z) n + z h. Padding lanes: all zero, so r = z = 1/2, n = 0, h' stays 0.
        let gir = UnsafeRawPointer(gi), ghr = UnsafeRawPointer(gh), hr = UnsafeMutableRawPointer(hdn)
        let s = hiddenStride * 4
        var o = 0
        while o < s {
            @inline(__always) func load(_ p: UnsafeRawPointer, _ gate: Int) -> SIMD8<Float> {
                p.loadUnaligned(fromByteOffset: gate * s + o, as: SIMD8<Float>.self)
            }
            let r = sigmoid8(load(gir, 0) + load(ghr, 0))
            let z = sigmoid8(load(gir, 1) + load(ghr, 1))
            let n = fastTanh8(load(gir, 2) + r * load(ghr, 2))
            let old = hr.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
            hr.storeBytes(of: n + z * (old - n), toByteOffset: o, as: SIMD8<Float>.self)
            o += 32
        }
        return bo + dot8(wo, hdn, hiddenStride)
    }
}

/// One stream's memory of the network: the convolutions' input windows and the GRU's hidden
/// vector (all zero after a reset, as torch's zero padding and initial state), and per-step
/// scratch. One allocation, made when the detector is created.
final class SpectralNetworkState {
    let count: Int
    let memory: UnsafeMutablePointer<Float>
    let inputWindow: UnsafeMutablePointer<Float>
    let conv1Window: UnsafeMutablePointer<Float>
    let conv2Output: UnsafeMutablePointer<Float>
    let hidden: UnsafeMutablePointer<Float>
    let inputGates: UnsafeMutablePointer<Float>
    let hiddenGates: UnsafeMutablePointer<Float>

    init(_ n: SpectralNetwork) {
        let sizes = [n.kernel * n.inputStride, n.kernel * n.conv1Stride, n.conv2Stride, n.hiddenStride,
                     3 * n.hiddenStride, 3 * n.hiddenStride]
        count = sizes.reduce(0, +)
        let (m, b) = allocateWeightBlocks(sizes)
        memory = m
        inputWindow = b[0]; conv1Window = b[1]; conv2Output = b[2]; hidden = b[3]
        inputGates = b[4]; hiddenGates = b[5]
    }

    deinit { memory.deallocate() }

    func reset() { memory.update(repeating: 0, count: count) }

    func copy(_ n: SpectralNetwork) -> SpectralNetworkState {
        let c = SpectralNetworkState(n)
        c.memory.update(from: memory, count: count)
        return c
    }
}

/// `max(v, 0)` for `v[0..<n]` in place, `n` a multiple of 8.
@inline(__always)
func reluInPlace(_ v: UnsafeMutablePointer<Float>, _ n: Int) {
    let raw = UnsafeMutableRawPointer(v)
    var o = 0
    while o < n * 4 {
        let x = raw.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
        raw.storeBytes(of: x.replacing(with: 0, where: x .< 0), toByteOffset: o, as: SIMD8<Float>.self)
        o += 32
    }
}

/// Little-endian Float32 values from base64 text (line breaks and other characters outside the
/// alphabet are skipped). For the generated weights: a string literal type-checks in a moment,
/// where an array literal of tens of thousands of floats takes the compiler minutes.
func decodeBase64Floats(_ text: String) -> [Float] {
    var table = [Int8](repeating: -1, count: 256)
    for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
        table[Int(c)] = Int8(i)
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count * 3 / 4)
    var acc: UInt32 = 0, bits = 0
    for c in text.utf8 {
        let v = table[Int(c)]
        guard v >= 0 else { continue }
        acc = acc << 6 | UInt32(v)
        bits += 6
        if bits >= 8 {
            bits -= 8
            bytes.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
        }
    }
    var out = [Float](repeating: 0, count: bytes.count / 4)
    for i in 0..<out.count {
        let u = UInt32(bytes[4 * i]) | UInt32(bytes[4 * i + 1]) << 8 | UInt32(bytes[4 * i + 2]) << 16 | UInt32(bytes[4 * i + 3]) << 24
        out[i] = Float(bitPattern: u)
    }
    return out
}

/// The logistic function of eight values (``fastExp2x8``, as ``sigmoid``).
@inline(__always)
func sigmoid8(_ x: SIMD8<Float>) -> SIMD8<Float> {
    1 / (1 + fastExp2x8(-x * 1.4426950408889634))
}
