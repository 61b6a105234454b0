// Pure Swift (no C imports): compiled standalone by the fuzz targets in Fuzz/.
#if canImport(ParleyCore)
import ParleyCore
#endif

/// How samples are stored in a WAV file.
public enum WAVSampleEncoding: Sendable, Hashable, CustomStringConvertible {
    /// Signed 16-bit little-endian integers (`WAVE_FORMAT_PCM`, 16 bits).
    case int16
    /// Signed 24-bit little-endian integers, packed in 3 bytes.
    case int24
    /// Signed 32-bit little-endian integers.
    case int32
    /// IEEE 754 32-bit floats (`WAVE_FORMAT_IEEE_FLOAT`), nominally in [-1, 1].
    case float32

    /// Bytes per sample (per channel).
    public var bytesPerSample: Int {
        switch self { case .int16: 2; case .int24: 3; case .int32, .float32: 4 }
    }

    public var description: String {
        switch self { case .int16: "16-bit PCM"; case .int24: "24-bit PCM"; case .int32: "32-bit PCM"
                      case .float32: "32-bit float" }
    }
}

/// What to do with NaN or infinite float samples (only float files can hold them).
public enum NonFiniteSamplePolicy: Sendable, Hashable {
    /// Throw ``MediaFileError/nonFiniteSamples(path:frame:count:)`` (the default: a detector
    /// must not silently analyse garbage).
    case reject
    /// Replace each with 0 and count them in the reader's `nonFiniteSamplesReplaced`.
    case replaceWithZero
}

/// The shape of a WAV file's audio.
public struct WAVFormat: Sendable, Hashable, CustomStringConvertible {
    /// Samples per second per channel, in Hz.
    public var sampleRate: Int
    /// Interleaved channels.
    public var channels: Int
    /// Sample storage.
    public var encoding: WAVSampleEncoding
    /// Whether the header is `WAVE_FORMAT_EXTENSIBLE`. The writer's default (`nil` in
    /// ``init(sampleRate:channels:encoding:extensible:channelMask:)``) follows Microsoft's rule: extensible
    /// when there are more than 2 channels or more than 16 bits.
    public var extensible: Bool
    /// Speaker positions (`dwChannelMask`) of an extensible header; 0 when unknown.
    public var channelMask: UInt32

    /// Creates a format. Any values are kept: ``WAVWriter/init(sink:format:)`` refuses a rate or
    /// channel count the header cannot hold (the properties are mutable, so the writer is where
    /// they are checked).
    public init(sampleRate: Int, channels: Int, encoding: WAVSampleEncoding = .int16,
                extensible: Bool? = nil, channelMask: UInt32 = 0) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.encoding = encoding
        self.extensible = extensible ?? (channels > 2 || encoding.bytesPerSample > 2)
        self.channelMask = channelMask
    }

    /// Bytes per sample frame (all channels).
    public var bytesPerFrame: Int { channels * encoding.bytesPerSample }

    public var description: String {
        "\(sampleRate) Hz, \(channels) ch, \(encoding)\(extensible ? " (extensible)" : "")"
    }
}

/// The 14 bytes that follow the 2-byte format tag in a KSDATAFORMAT_SUBTYPE GUID.
private let subformatGUIDTail: [UInt8] = [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00,
                                          0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]

private func formatTagName(_ tag: UInt16) -> String {
    let hex = String(tag, radix: 16, uppercase: true)
    let padded = "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    let known: [UInt16: String] = [0x0002: "Microsoft ADPCM", 0x0006: "A-law", 0x0007: "mu-law",
                                   0x0011: "IMA ADPCM", 0x0031: "GSM 6.10", 0x0050: "MPEG",
                                   0x0055: "MPEG Layer 3", 0x00FF: "AAC", 0x1610: "HE-AAC"]
    return known[tag].map { "\(padded) (\($0))" } ?? padded
}

/// Streaming WAV reader: PCM 16/24/32-bit integer and 32-bit float, plain or
/// `WAVE_FORMAT_EXTENSIBLE`, any rate and channel count.
///
/// Reads a caller-chosen number of frames at a time into a caller buffer, as `Float` or
/// `Int16`; memory is constant (a fixed input buffer and a fixed conversion buffer, both
/// allocated in `init`) whatever the file's length.
///
/// Conversions: integers to Float divide by 2^(bits-1); 24/32-bit to Int16 keep the top 16
/// bits (arithmetic shift, i.e. rounding towards minus infinity); Float to Int16 rounds and
/// clamps. Unknown chunks before `data` are skipped; chunks after `data` are not read.
/// A data size of 0xFFFFFFFF (written by streaming tools) means "until the end of the file".
///
/// Threading: a value with a reference to its byte source; use it from one thread at a time.
public struct WAVReader: ByteSourceReader {
    /// The file's audio format.
    public let format: WAVFormat
    /// Sample frames the header announces, or `nil` when the size is open-ended.
    public let frameCount: Int?
    /// Sample frames delivered so far.
    public private(set) var framesRead = 0
    /// Byte offset of the first sample in the file.
    public let dataOffset: Int
    /// What to do with NaN/infinite float samples. Default ``NonFiniteSamplePolicy/reject``.
    public var nonFinitePolicy: NonFiniteSamplePolicy = .reject
    /// NaN/infinite samples replaced by 0 so far (with ``NonFiniteSamplePolicy/replaceWithZero``).
    public private(set) var nonFiniteSamplesReplaced = 0
    /// The file's name (path or label), for messages.
    public var name: String { reader.name }

    private var reader: ByteReader
    /// Data bytes left per the header (`Int.max` when open-ended).
    private var dataRemaining: Int
    private let dataSize: Int?
    private let scratch: RawBuffer
    private var pendingError: MediaFileError?

    /// Bytes of fixed buffers this reader holds (constant for its life).
    public var bufferBytes: Int { reader.bufferCapacity + scratch.count }

    /// Reads the header from `source`. Throws a ``MediaFileError`` that names the problem.
    public init(source: ByteSource) throws(MediaFileError) {
        var r = try ByteReader(source: source, header: 12)
        let name = source.name
        let riff = try r.withBytes(12) { b in (b.fourCC(0), b.fourCC(8)) }
        switch riff.0 {
        case "RIFF": break
        case "RIFX": throw .unsupported(path: name, what: "big-endian RIFX WAV")
        case "RF64": throw .unsupported(path: name, what: "RF64 (64-bit) WAV")
        default: throw .corrupt(path: name, reason: "not a RIFF file (starts with '\(riff.0)')", offset: 0)
        }
        guard riff.1 == "WAVE" else {
            throw .corrupt(path: name, reason: "RIFF form is '\(riff.1)', not 'WAVE'", offset: 8)
        }
        var fmt: WAVFormat?
        while true {
            let chunkOffset = r.offset
            let have = try r.fill(atLeast: 8)
            if have > 0 && have < 8 {
                throw .truncated(path: name, offset: chunkOffset, expected: 8, got: have)
            }
            if have < 8 {
                if fmt == nil { throw .corrupt(path: name, reason: "no 'fmt ' chunk", offset: chunkOffset) }
                throw .corrupt(path: name, reason: "no 'data' chunk", offset: chunkOffset)
            }
            let (id, size) = try r.withBytes(8) { b in (b.fourCC(0), Int(b.le32(4))) }
            if id == "fmt " {
                guard size >= 16 else {
                    throw .corrupt(path: name, reason: "'fmt ' chunk of \(size) bytes (needs 16)", offset: chunkOffset)
                }
                let readSize = min(size, 40)
                let parsed = try r.withBytes(readSize) { b in Self.parseFmt(b, name: name, offset: chunkOffset + 8) }
                fmt = try parsed.get()
                let rest = size - readSize + (size & 1)
                let restOffset = r.offset
                let skipped = try r.skip(rest)
                if skipped < rest {
                    throw .truncated(path: name, offset: restOffset, expected: rest, got: skipped)
                }
            } else if id == "data" {
                guard let f = fmt else {
                    throw .corrupt(path: name, reason: "'data' chunk before 'fmt ' chunk", offset: chunkOffset)
                }
                format = f
                dataOffset = r.offset
                if size == 0xFFFF_FFFF {
                    dataSize = nil
                    frameCount = nil
                    dataRemaining = Int.max
                } else {
                    dataSize = size
                    frameCount = size / f.bytesPerFrame
                    dataRemaining = (size / f.bytesPerFrame) * f.bytesPerFrame
                }
                break
            } else {
                let skipSize = size + (size & 1)
                let skipped = try r.skip(skipSize)
                if skipped < skipSize {
                    throw .truncated(path: name, offset: chunkOffset, expected: skipSize + 8, got: skipped + 8)
                }
            }
        }
        reader = r
        // Conversion buffer: a whole number of frames, at least one frame, about 16 KiB.
        let frames = max(1, 16384 / format.bytesPerFrame)
        scratch = RawBuffer(count: frames * format.bytesPerFrame)
    }

    private static func parseFmt(_ b: UnsafeRawBufferPointer, name: String,
                                 offset: Int) -> Result<WAVFormat, MediaFileError> {
        var tag = b.le16(0)
        let channels = Int(b.le16(2))
        let rate = Int(b.le32(4))
        let blockAlign = Int(b.le16(12))
        let bits = Int(b.le16(14))
        var extensible = false
        var mask: UInt32 = 0
        if tag == 0xFFFE {
            guard b.count >= 40, b.le16(16) >= 22 else {
                return .failure(.corrupt(path: name, reason: "WAVE_FORMAT_EXTENSIBLE 'fmt ' chunk too short",
                                         offset: offset))
            }
            extensible = true
            let valid = Int(b.le16(18))
            mask = b.le32(20)
            tag = b.le16(24)
            for i in 0..<14 where b[26 + i] != subformatGUIDTail[i] {
                return .failure(.unsupported(path: name, what: "WAV extensible sub-format with a non-standard GUID"))
            }
            if valid != 0 && valid != bits {
                return .failure(.unsupported(path: name,
                                             what: "WAV with \(valid) valid bits in \(bits)-bit containers"))
            }
        }
        let encoding: WAVSampleEncoding
        switch (tag, bits) {
        case (1, 16): encoding = .int16
        case (1, 24): encoding = .int24
        case (1, 32): encoding = .int32
        case (3, 32): encoding = .float32
        case (1, _): return .failure(.unsupported(path: name, what: "\(bits)-bit integer PCM WAV"))
        case (3, _): return .failure(.unsupported(path: name, what: "\(bits)-bit float WAV"))
        default: return .failure(.unsupported(path: name, what: "WAV format tag \(formatTagName(tag))"))
        }
        guard channels > 0 else {
            return .failure(.corrupt(path: name, reason: "0 channels", offset: offset + 2))
        }
        guard rate > 0 else {
            return .failure(.corrupt(path: name, reason: "sample rate 0", offset: offset + 4))
        }
        guard blockAlign == channels * encoding.bytesPerSample else {
            return .failure(.corrupt(path: name, reason:
                "block align \(blockAlign) does not match \(channels) channels of \(bits) bits", offset: offset + 12))
        }
        return .success(WAVFormat(sampleRate: rate, channels: channels, encoding: encoding,
                                  extensible: extensible, channelMask: mask))
    }

    /// Reads raw sample bytes for up to `maxFrames` frames into the scratch buffer.
    /// Returns the frame count; throws a deferred truncation error once all data is consumed.
    private mutating func readRaw(maxFrames: Int) throws(MediaFileError) -> Int {
        if let e = pendingError { throw e }
        let bpf = format.bytesPerFrame
        let frames = min(maxFrames, scratch.count / bpf, dataRemaining / bpf)
        if frames == 0 { return 0 }
        let want = frames * bpf
        var got = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: scratch.bytes[0..<want]))
        if got < want {
            if dataSize == nil {
                dataRemaining = 0            // open-ended data: the end of the file is the end
            } else {
                let readSoFar = dataSize! - dataRemaining + got
                pendingError = .truncated(path: name, offset: dataOffset + readSoFar,
                                          expected: dataSize!, got: readSoFar)
                dataRemaining = 0
            }
            got -= got % bpf
            if got == 0, let e = pendingError { throw e }
        } else if dataRemaining != Int.max {
            dataRemaining -= got
        }
        return got / bpf
    }

    /// Reads up to `buffer.count / channels` frames as Float into `buffer` (interleaved).
    /// Returns the number of frames read: 0 at the end of the data. A truncated file first
    /// delivers what it has, then throws ``MediaFileError/truncated(path:offset:expected:got:)``.
    /// Throws ``MediaFileError/invalidArgument(path:reason:)`` when `buffer` is not whole frames.
    public mutating func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(MediaFileError) -> Int {
        try readSamples(into: buffer)
    }

    /// Reads up to `buffer.count / channels` frames as Int16 into `buffer` (interleaved).
    /// Same contract as the Float variant.
    public mutating func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(MediaFileError) -> Int {
        try readSamples(into: buffer)
    }

    /// Converts `n` samples of `encoding` at `s` into `out`, a non-finite one as 0; returns how
    /// many were non-finite and the first one's index. A 24-bit sample is read as the top three
    /// bytes of a 32-bit one, which it is.
    @inline(__always)
    private static func convert<S: WAVSample>(_ s: UnsafeRawBufferPointer, _ encoding: WAVSampleEncoding,
                                              into out: UnsafeMutablePointer<S>, count n: Int) -> (bad: Int, firstBad: Int) {
        let p = s.baseAddress!
        switch encoding {
        case .int16:
            for i in 0..<n { out[i] = S(wavInt16: Int16(littleEndian: p.loadUnaligned(fromByteOffset: 2 * i, as: Int16.self))) }
        case .int24:
            let b = s.bindMemory(to: UInt8.self)
            for i in 0..<n {
                out[i] = S(wavInt32: Int32(bitPattern: UInt32(b[3 * i]) << 8 | UInt32(b[3 * i + 1]) << 16 | UInt32(b[3 * i + 2]) << 24))
            }
        case .int32:
            for i in 0..<n { out[i] = S(wavInt32: Int32(littleEndian: p.loadUnaligned(fromByteOffset: 4 * i, as: Int32.self))) }
        case .float32:
            var bad = 0, firstBad = -1
            for i in 0..<n {
                let v = Float(bitPattern: UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self)))
                if !v.isFinite { bad += 1; if firstBad < 0 { firstBad = i } }
                out[i] = S(wavFloat: v.isFinite ? v : 0)
            }
            return (bad, firstBad)
        }
        return (0, -1)
    }

    /// The read loop both sample types share: whole frames from the data chunk, converted by
    /// `convert`, which writes 0 for a non-finite sample; those are then
    /// rejected or counted as the policy says.
    private mutating func readSamples<S: WAVSample>(into buffer: UnsafeMutableBufferPointer<S>) throws(MediaFileError) -> Int {
        let ch = format.channels
        guard buffer.count % ch == 0 else {
            throw .invalidArgument(path: name, reason: "buffer of \(buffer.count) samples is not whole frames of \(ch) channels")
        }
        var done = 0
        let total = buffer.count / ch
        while done < total {
            if pendingError != nil && done > 0 { break }   // deliver what was read first
            let frames = try readRaw(maxFrames: total - done)
            if frames == 0 { break }
            let (bad, firstBad) = Self.convert(UnsafeRawBufferPointer(scratch.bytes), format.encoding,
                                               into: buffer.baseAddress! + done * ch, count: frames * ch)
            if bad > 0 {
                if nonFinitePolicy == .reject {
                    throw .nonFiniteSamples(path: name, frame: framesRead + firstBad / ch, count: bad)
                }
                nonFiniteSamplesReplaced += bad
            }
            done += frames
            framesRead += frames
        }
        return done
    }

    /// Convenience: reads up to `buffer.count / channels` frames into an array.
    public mutating func read(into buffer: inout [Float]) throws(MediaFileError) -> Int {
        try buffer.withUnsafeMutableBufferPointer { b in
            Result { () throws(MediaFileError) -> Int in try read(into: b) }
        }.get()
    }

    /// Convenience: reads up to `buffer.count / channels` frames into an array.
    public mutating func read(into buffer: inout [Int16]) throws(MediaFileError) -> Int {
        try buffer.withUnsafeMutableBufferPointer { b in
            Result { () throws(MediaFileError) -> Int in try read(into: b) }
        }.get()
    }
}

/// Streaming WAV writer. Writes the header at once with placeholder sizes and patches the
/// RIFF and `data` sizes in ``close()``; memory is constant (one conversion buffer).
///
/// Conversions: Float to integers scale by 2^(bits-1), round to nearest and clamp; Int16 to
/// 24/32-bit shift left (exact). A file not closed keeps size fields of 0xFFFFFFFF, which
/// ``WAVReader`` reads as "until the end of the file".
///
/// Threading: use from one thread at a time.
public struct WAVWriter {
    /// The format being written.
    public let format: WAVFormat
    /// Sample frames written so far.
    public private(set) var framesWritten = 0
    private let sink: ByteSink
    private let dataSizeOffset: Int
    private let headerSize: Int
    private let scratch: RawBuffer
    private var closed = false

    /// Writes the header of a `format` file to `sink`.
    /// - Throws: ``MediaFileError/invalidArgument(path:reason:)`` when the rate or the channel
    ///   count does not fit the header (1...2^32-1 Hz, 1...65535 channels); the sink's errors.
    public init(sink: ByteSink, format: WAVFormat) throws(MediaFileError) {
        guard format.sampleRate > 0 && format.sampleRate <= Int(UInt32.max) else {
            throw .invalidArgument(path: sink.name, reason: "WAV sample rate \(format.sampleRate) Hz is not in 1...\(UInt32.max)")
        }
        guard format.channels > 0 && format.channels <= 65535 else {
            throw .invalidArgument(path: sink.name, reason: "WAV channel count \(format.channels) is not in 1...65535")
        }
        self.sink = sink
        self.format = format
        var h = LEBytes()
        let tag: UInt16 = format.encoding == .float32 ? 3 : 1
        h.ascii("RIFF"); h.u32(0xFFFF_FFFF); h.ascii("WAVE")
        h.ascii("fmt "); h.u32(format.extensible ? 40 : 16)
        h.u16(format.extensible ? 0xFFFE : tag)
        h.u16(UInt16(format.channels)); h.u32(UInt32(format.sampleRate))
        h.u32(UInt32(format.sampleRate * format.bytesPerFrame))
        h.u16(UInt16(format.bytesPerFrame)); h.u16(UInt16(format.encoding.bytesPerSample * 8))
        if format.extensible {
            h.u16(22); h.u16(UInt16(format.encoding.bytesPerSample * 8)); h.u32(format.channelMask)
            h.u16(tag); h.bytes.append(contentsOf: subformatGUIDTail)
        }
        h.ascii("data")
        dataSizeOffset = h.bytes.count
        h.u32(0xFFFF_FFFF)
        headerSize = h.bytes.count
        try sink.write(bytes: h.bytes)
        scratch = RawBuffer(count: max(1, 16384 / format.bytesPerFrame) * format.bytesPerFrame)
    }

    /// Appends interleaved Float samples (a whole number of frames). Throws
    /// ``MediaFileError/invalidArgument(path:reason:)`` for a partial frame or after ``close()``.
    public mutating func write(_ samples: UnsafeBufferPointer<Float>) throws(MediaFileError) {
        try writeSamples(samples)
    }

    /// Appends interleaved Int16 samples (a whole number of frames). Throws
    /// ``MediaFileError/invalidArgument(path:reason:)`` for a partial frame or after ``close()``.
    public mutating func write(_ samples: UnsafeBufferPointer<Int16>) throws(MediaFileError) {
        try writeSamples(samples)
    }

    /// Encodes `n` samples at `src` as `encoding` into `s`.
    @inline(__always)
    private static func encode<S: WAVSample>(_ src: UnsafePointer<S>, count n: Int, as encoding: WAVSampleEncoding,
                                             into s: UnsafeMutableRawBufferPointer) {
        let p = s.baseAddress!
        switch encoding {
        case .int16:
            for k in 0..<n { p.storeBytes(of: src[k].wavInt16.littleEndian, toByteOffset: 2 * k, as: Int16.self) }
        case .int24:
            for k in 0..<n {
                let u = UInt32(bitPattern: src[k].wavInt24)
                s[3 * k] = UInt8(u & 0xff); s[3 * k + 1] = UInt8((u >> 8) & 0xff); s[3 * k + 2] = UInt8((u >> 16) & 0xff)
            }
        case .int32:
            for k in 0..<n { p.storeBytes(of: src[k].wavInt32.littleEndian, toByteOffset: 4 * k, as: Int32.self) }
        case .float32:
            for k in 0..<n { p.storeBytes(of: src[k].wavFloat.bitPattern.littleEndian, toByteOffset: 4 * k, as: UInt32.self) }
        }
    }

    /// The write loop both sample types share: the samples encoded into the scratch buffer a
    /// chunk at a time, each chunk written to the sink.
    private mutating func writeSamples<S: WAVSample>(_ samples: UnsafeBufferPointer<S>) throws(MediaFileError) {
        let ch = format.channels
        guard samples.count % ch == 0 else {
            throw .invalidArgument(path: sink.name, reason: "\(samples.count) samples are not whole frames of \(ch) channels")
        }
        guard !closed else { throw .invalidArgument(path: sink.name, reason: "write after close") }
        let bps = format.encoding.bytesPerSample
        let chunk = scratch.count / bps
        var i = 0
        while i < samples.count {
            let n = min(chunk, samples.count - i)
            Self.encode(samples.baseAddress! + i, count: n, as: format.encoding, into: scratch.bytes)
            try sink.write(UnsafeRawBufferPointer(rebasing: scratch.bytes[0..<(n * bps)]))
            i += n
        }
        framesWritten += samples.count / ch
    }

    /// Convenience: appends an array of interleaved samples.
    public mutating func write(_ samples: [Float]) throws(MediaFileError) {
        try samples.withUnsafeBufferPointer { b in Result { () throws(MediaFileError) in try write(b) } }.get()
    }

    /// Convenience: appends an array of interleaved samples.
    public mutating func write(_ samples: [Int16]) throws(MediaFileError) {
        try samples.withUnsafeBufferPointer { b in Result { () throws(MediaFileError) in try write(b) } }.get()
    }

    /// Pads the data to an even length, patches the RIFF and `data` sizes and closes the sink.
    /// Throws ``MediaFileError/unsupported(path:what:)`` if the data exceeds the 4 GiB WAV limit,
    /// ``MediaFileError/invalidArgument(path:reason:)`` when called a second time.
    public mutating func close() throws(MediaFileError) {
        guard !closed else { throw .invalidArgument(path: sink.name, reason: "close called twice") }
        closed = true
        let dataBytes = framesWritten * format.bytesPerFrame
        if dataBytes & 1 == 1 {
            let pad: [UInt8] = [0]
            try sink.write(bytes: pad)
        }
        let riffSize = headerSize - 8 + dataBytes + (dataBytes & 1)
        guard riffSize <= Int(UInt32.max) else {
            try sink.close()
            throw .unsupported(path: sink.name, what: "WAV data over 4 GiB (\(dataBytes) bytes)")
        }
        var riff = LEBytes(); riff.u32(UInt32(riffSize))
        var data = LEBytes(); data.u32(UInt32(dataBytes))
        try sink.seek(to: 4)
        try sink.write(bytes: riff.bytes)
        try sink.seek(to: dataSizeOffset)
        try sink.write(bytes: data.bytes)
        try sink.close()
    }
}

/// A sample type WAV data are read as and written from: its value for a sample of each stored
/// encoding, and the other way round.
private protocol WAVSample {
    /// From a 16-bit sample.
    init(wavInt16 value: Int16)
    /// From a 32-bit sample (a 24-bit one in its top three bytes).
    init(wavInt32 value: Int32)
    /// From a finite 32-bit float sample.
    init(wavFloat value: Float)
    /// As a 16-bit sample.
    var wavInt16: Int16 { get }
    /// As a 24-bit sample, in the low three bytes.
    var wavInt24: Int32 { get }
    /// As a 32-bit sample.
    var wavInt32: Int32 { get }
    /// As a 32-bit float sample.
    var wavFloat: Float { get }
}

/// Float samples are scaled by 2^(bits-1); written ones are rounded to nearest and clamped, NaN
/// as 0.
extension Float: WAVSample {
    init(wavInt16 value: Int16) { self = Float(value) * (1.0 / 32768.0) }
    init(wavInt32 value: Int32) { self = Float(value) * (1.0 / 2147483648.0) }
    init(wavFloat value: Float) { self = value }
    var wavInt16: Int16 { Int16(clampingFloat: self) }
    var wavInt24: Int32 { self == self ? Int32(max(-8_388_608, min(8_388_607, (Double(self) * 8_388_608).rounded()))) : 0 }
    var wavInt32: Int32 {
        self == self ? Int32(max(-2_147_483_648, min(2_147_483_647, (Double(self) * 2_147_483_648).rounded()))) : 0
    }
    var wavFloat: Float { self }
}

/// Int16 samples are the top 16 bits of wider ones.
extension Int16: WAVSample {
    init(wavInt16 value: Int16) { self = value }
    init(wavInt32 value: Int32) { self = Int16(truncatingIfNeeded: value >> 16) }
    init(wavFloat value: Float) { self = Int16(clampingFloat: value) }
    var wavInt16: Int16 { self }
    var wavInt24: Int32 { Int32(self) << 8 }
    var wavInt32: Int32 { Int32(self) << 16 }
    var wavFloat: Float { Float(self) * (1.0 / 32768.0) }
}
