import ParleyMedia

/// A WAV file (ParleyMedia's streaming `WAVReader`: 16/24/32-bit PCM or float) as an
/// ``AudioSampleProvider`` of `Int16` or `Float` samples, so ``SampleProviderSource`` can
/// deliver it paced like a microphone (see ``WAVFileSource``).
///
/// Threading: use from one thread at a time.
public struct WAVFileProvider<Sample: AudioSample>: AudioSampleProvider {
    public typealias Failure = MediaFileError
    private var reader: WAVReader
    public let format: AudioFormat

    /// Reads the header of `path`.
    public init(path: String) throws(MediaFileError) {
        try self.init(reader: WAVReader(path: path))
    }

    /// Wraps an open reader.
    /// - Throws: `MediaFileError/invalidArgument(path:reason:)` when `Sample` is neither
    ///   `Int16` nor `Float` (`AudioSample` is public, so a caller may bring another type).
    public init(reader: WAVReader) throws(MediaFileError) {
        guard Sample.self == Int16.self || Sample.self == Float.self else {
            throw .invalidArgument(path: reader.name, reason: "WAV samples are read as Int16 or Float, not \(Sample.self)")
        }
        self.reader = reader
        // WAVReader accepts only headers with a positive rate and channel count.
        self.format = AudioFormat(checkedSampleRate: reader.format.sampleRate, channels: reader.format.channels)
    }

    public mutating func readSamples(into buffer: UnsafeMutableBufferPointer<Sample>) throws(MediaFileError) -> Int {
        let raw = UnsafeMutableRawBufferPointer(buffer)
        let frames: Int
        if Sample.self == Int16.self {
            frames = try reader.read(into: raw.assumingMemoryBound(to: Int16.self))
        } else {
            frames = try reader.read(into: raw.assumingMemoryBound(to: Float.self))
        }
        return frames * format.channels
    }
}

/// A recorded microphone: a WAV file delivered in real time (or on an injected clock).
///
/// ```
/// var mic = WAVFileSource<Int16>(try WAVFileProvider(path: "speech.wav"))
/// var frame = AudioFrame<Int16>(format: mic.format, samplesPerChannel: mic.framesPerRead)
/// while try mic.read(into: &frame) { ... }   // one 10 ms frame every 10 ms
/// ```
public typealias WAVFileSource<Sample: AudioSample> = SampleProviderSource<WAVFileProvider<Sample>>

/// A Y4M file (ParleyMedia's streaming `Y4MReader`, 4:2:0) as a ``VideoFrameProvider``.
///
/// Threading: use from one thread at a time.
public struct Y4MFileProvider: VideoFrameProvider {
    public typealias Failure = MediaFileError
    private var reader: Y4MReader
    public var width: Int { reader.header.width }
    public var height: Int { reader.header.height }
    /// The header's `F` rate (numerator / denominator).
    public let framesPerSecond: Double

    /// Reads the header of `path`.
    /// - Throws: `MediaFileError` (also for a header with a zero frame rate, which cannot be paced).
    public init(path: String) throws(MediaFileError) {
        try self.init(reader: Y4MReader(path: path))
    }

    /// Wraps an open reader.
    public init(reader: Y4MReader) throws(MediaFileError) {
        let h = reader.header
        guard h.frameRateNumerator > 0, h.frameRateDenominator > 0 else {
            throw .unsupported(path: reader.name, what: "frame rate F\(h.frameRateNumerator):\(h.frameRateDenominator) (cannot pace)")
        }
        self.reader = reader
        self.framesPerSecond = Double(h.frameRateNumerator) / Double(h.frameRateDenominator)
    }

    public mutating func readPicture(into frame: inout VideoFrame) throws(MediaFileError) -> Bool {
        try reader.read(into: &frame)
    }
}

/// A recorded camera: a Y4M file delivered at its frame rate (or on an injected clock).
public typealias Y4MFileSource = PacedVideoSource<Y4MFileProvider>
