#if canImport(Glibc)
import Glibc
#endif

/// A synthetic microphone: a sine tone, delivered paced in real time (or on an injected
/// clock) through `AudioCaptureSource`, with the timing a device would give: a frame is
/// returned once its last sample is due, `captureTime` is the due time of its first sample.
///
/// Threading: not copyable; use from one thread.
public struct ToneSource<Sample: AudioSample>: ~Copyable, AudioCaptureSource {
    public typealias Failure = Never
    public let format: AudioFormat
    public let framesPerRead: Int
    /// Tone frequency in Hz.
    public let frequency: Double
    /// Peak amplitude as a fraction of full scale (0...1).
    public let amplitude: Double
    /// Total length in samples per channel, or nil for an endless tone.
    public let totalFrames: Int?
    /// Samples per channel delivered so far.
    public private(set) var framesDelivered = 0
    private let clock: any MediaClock
    private var start: MonotonicTime?

    /// - Parameters:
    ///   - format: the rate and channels it delivers.
    ///   - frequency: Hz (default 440).
    ///   - amplitude: peak, fraction of full scale (default 0.5, -6 dBFS: loud but unclipped).
    ///   - seconds: length, or nil (default) for endless.
    ///   - framesPerRead: samples per channel per read (default: 10 ms).
    ///   - clock: pacing clock (default: the system monotonic clock).
    public init(format: AudioFormat, frequency: Double = 440, amplitude: Double = 0.5,
                seconds: Double? = nil, framesPerRead: Int? = nil,
                clock: any MediaClock = SystemMediaClock()) {
        self.format = format
        self.frequency = frequency
        self.amplitude = amplitude
        self.totalFrames = seconds.map { Int(($0 * Double(format.sampleRate)).rounded()) }
        self.framesPerRead = framesPerRead ?? max(1, format.samplesPerChannel(milliseconds: 10))
        self.clock = clock
    }

    /// The interleaved value of sample `index` (all channels carry the same tone).
    @inlinable func value(at index: Int) -> Sample {
        let phase = 2 * Double.pi * frequency * Double(index) / Double(format.sampleRate)
        return Sample(clampingFloat: Float(amplitude * sin(phase)))
    }

    /// Fills `frame` with the next samples (the final frame of a finite tone is padded with
    /// silence); waits until its last sample is due. Returns false once the tone has ended.
    public mutating func read(into frame: inout AudioFrame<Sample>) -> Bool {
        adopt(&frame, format: format, framesPerRead: framesPerRead)
        if let total = totalFrames, framesDelivered >= total { return false }
        let n = frame.samplesPerChannel
        let channels = format.channels
        let first = framesDelivered
        let limit = totalFrames.map { min($0 - first, n) } ?? n
        frame.withUnsafeMutableSamples { buf in
            for i in 0..<n {
                let v = i < limit ? value(at: first + i) : .silence
                for c in 0..<channels { buf[i * channels + c] = v }
            }
        }
        let origin = start ?? clock.now()
        start = origin
        let rate = Int64(format.sampleRate)
        frame.captureTime = origin.advanced(byNanoseconds: Int64(first) * 1_000_000_000 / rate)
        frame.timestamp = UInt32(truncatingIfNeeded: first)
        clock.sleep(until: origin.advanced(byNanoseconds: Int64(first + n) * 1_000_000_000 / rate))
        framesDelivered += n
        return true
    }
}

/// Where ``SampleProviderSource`` gets its samples: a WAV reader, a decoder, an array.
///
/// Threading: used from one thread at a time.
public protocol AudioSampleProvider: ~Copyable {
    associatedtype Sample: AudioSample
    associatedtype Failure: Error
    /// Rate and channel count of the samples.
    var format: AudioFormat { get }
    /// Writes up to `buffer.count` interleaved samples (whole frames) and returns how many it
    /// wrote; 0 means the end.
    mutating func readSamples(into buffer: UnsafeMutableBufferPointer<Sample>) throws(Failure) -> Int
}

/// Samples held in memory, as an ``AudioSampleProvider``.
public struct ArraySampleProvider<Sample: AudioSample>: AudioSampleProvider {
    public typealias Failure = Never
    public let format: AudioFormat
    public let samples: [Sample]
    private var position = 0

    /// Interleaved `samples` (a whole number of frames) in `format`.
    /// - Throws: `AudioFormatError/partialFrame(samples:channels:)`.
    public init(format: AudioFormat, samples: [Sample]) throws(AudioFormatError) {
        guard samples.count % format.channels == 0 else {
            throw .partialFrame(samples: samples.count, channels: format.channels)
        }
        self.format = format
        self.samples = samples
    }

    public mutating func readSamples(into buffer: UnsafeMutableBufferPointer<Sample>) -> Int {
        let whole = buffer.count - buffer.count % format.channels
        let n = min(whole, samples.count - position)
        guard n > 0 else { return 0 }
        samples.withUnsafeBufferPointer { src in
            buffer.baseAddress!.update(from: src.baseAddress! + position, count: n)
        }
        position += n
        return n
    }
}

/// A recorded microphone: samples from a provider (a WAV file, an array) delivered paced like
/// a device through `AudioCaptureSource`. The last frame is padded with silence.
///
/// Threading: not copyable; use from one thread.
public struct SampleProviderSource<Provider: AudioSampleProvider & ~Copyable>: ~Copyable, AudioCaptureSource {
    public typealias Sample = Provider.Sample
    public typealias Failure = Provider.Failure
    public var format: AudioFormat { provider.format }
    public let framesPerRead: Int
    /// Samples per channel delivered so far (padding included).
    public private(set) var framesDelivered = 0
    private var provider: Provider
    private let clock: any MediaClock
    private var start: MonotonicTime?
    private var ended = false

    /// Wraps `provider`; frames default to 10 ms; `clock` defaults to the system clock.
    public init(_ provider: consuming Provider, framesPerRead: Int? = nil,
                clock: any MediaClock = SystemMediaClock()) {
        let format = provider.format
        self.provider = provider
        self.framesPerRead = framesPerRead ?? max(1, format.samplesPerChannel(milliseconds: 10))
        self.clock = clock
    }

    public mutating func read(into frame: inout AudioFrame<Sample>) throws(Failure) -> Bool {
        adopt(&frame, format: format, framesPerRead: framesPerRead)
        if ended { return false }
        let total = frame.samples.count
        let filled: Result<Int, Failure> = frame.withUnsafeMutableSamples { buf in
            var done = 0
            while done < total {
                let r: Int
                do throws(Failure) {
                    r = try provider.readSamples(into: UnsafeMutableBufferPointer(rebasing: buf[done...]))
                } catch {
                    return .failure(error)
                }
                if r == 0 { break }
                done += r
            }
            for i in done..<total { buf[i] = .silence }
            return .success(done)
        }
        let done = try filled.get()
        if done == 0 { ended = true; return false }
        if done < total { ended = true }
        let origin = start ?? clock.now()
        start = origin
        let rate = Int64(format.sampleRate)
        let n = frame.samplesPerChannel
        frame.captureTime = origin.advanced(byNanoseconds: Int64(framesDelivered) * 1_000_000_000 / rate)
        frame.timestamp = UInt32(truncatingIfNeeded: framesDelivered)
        clock.sleep(until: origin.advanced(byNanoseconds: Int64(framesDelivered + n) * 1_000_000_000 / rate))
        framesDelivered += n
        return true
    }
}

/// Gives `frame` the source's format and `framesPerRead` samples per channel when it has
/// another format (a caller's frame: refilled, not refused). A frame of the right format,
/// whatever its length, is left as it is.
@inline(__always)
func adopt<Sample: AudioSample>(_ frame: inout AudioFrame<Sample>, format: AudioFormat, framesPerRead: Int) {
    if frame.format != format {
        frame = AudioFrame(format: format, samplesPerChannel: framesPerRead,
                           timestamp: frame.timestamp, captureTime: frame.captureTime)
    }
}
