// Loading a room participant's audio from a file.

import ParleyCall
import ParleyCore
import ParleyDetect

/// Why a participant's file cannot join a room.
public struct RoomMediaError: Error, Sendable, CustomStringConvertible {
    /// The file.
    public var path: String
    /// A sentence for the user.
    public var message: String
    /// `PATH: MESSAGE`.
    public var description: String { "\(path): \(message)" }
}

extension RoomParticipant {
    /// Opus's sample rates: a participant's capture rate must be one of them.
    public static let supportedSampleRates = [8_000, 12_000, 16_000, 24_000, 48_000]

    /// Loads an audio file (WAV or anything libsndfile reads, via the offline detector's reader)
    /// as a participant named `name`: channels are averaged to mono, samples converted to
    /// 16-bit (NaN becomes silence).
    /// - Throws: ``RoomMediaError`` for a missing, empty, corrupt or truncated file, or a rate
    ///   Opus does not take.
    public static func load(path: String, name: ParticipantID, driftPpm: Double = 0) throws(RoomMediaError) -> RoomParticipant {
        var source: AudioFileSource
        do {
            source = try openOfflineAudioFile(path)
        } catch {
            throw RoomMediaError(path: path, message: error.message)
        }
        guard supportedSampleRates.contains(source.sampleRate) else {
            throw RoomMediaError(path: path, message: "\(source.sampleRate) Hz is not an Opus rate (8, 12, 16, 24 or 48 kHz); "
                                 + "resample it first, e.g. `sox IN.wav -r 16000 OUT.wav`")
        }
        let ch = source.channels
        var samples: [Int16] = []
        if let n = source.expectedFrames { samples.reserveCapacity(Int(n)) }
        var block = [Float](repeating: 0, count: 4096 * ch)
        while true {
            let n: Int
            do {
                n = try block.withUnsafeMutableBufferPointer { b throws(OfflineReadError) in try source.read(into: b) }
            } catch {
                throw RoomMediaError(path: path, message: "read failed: \(error.message)")
            }
            if n == 0 { break }
            for i in 0..<n {
                var sum: Float = 0
                for c in 0..<ch { sum += block[i * ch + c] }
                samples.append(Int16(clampingFloat: sum / Float(ch)))
            }
        }
        if let expected = source.expectedFrames, Int64(samples.count) < expected {
            throw RoomMediaError(path: path, message: "truncated: \(samples.count) of \(expected) samples")
        }
        guard !samples.isEmpty else { throw RoomMediaError(path: path, message: "no audio samples") }
        return RoomParticipant(name: name, samples: samples, sampleRate: source.sampleRate, driftPpm: driftPpm)
    }
}

import ParleyMedia

extension RoomParticipant {
    /// Most pictures kept from a Y4M file (they loop): 600, 20 s at 30 fps, about 70 MB at 320x240.
    public static let maximumVideoFrames = 600

    /// Adds the participant's camera from a Y4M file (I420): its pictures loop while the audio
    /// lasts. At most ``maximumVideoFrames`` are kept.
    /// - Throws: ``RoomMediaError`` for a missing, corrupt or truncated file, or one without frames.
    public mutating func attachVideo(path: String) throws(RoomMediaError) {
        do {
            var reader = try Y4MReader(path: path)
            let h = reader.header
            var frames: [VideoFrame] = []
            var frame = VideoFrame(validatedWidth: h.width, height: h.height)  // checked when the header was read
            while frames.count < Self.maximumVideoFrames, try reader.read(into: &frame) {
                frames.append(frame)
            }
            guard !frames.isEmpty else { throw RoomMediaError(path: path, message: "no video frames") }
            guard h.frameRateNumerator > 0, h.frameRateDenominator > 0 else {
                throw RoomMediaError(path: path, message: "invalid frame rate")
            }
            video = frames
            videoFramesPerSecond = Double(h.frameRateNumerator) / Double(h.frameRateDenominator)
        } catch let e as RoomMediaError {
            throw e
        } catch {
            throw RoomMediaError(path: path, message: "\(error)")
        }
    }
}
