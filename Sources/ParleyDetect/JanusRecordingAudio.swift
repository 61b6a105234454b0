// A Janus recording (.mjr) of Opus audio as PCM, through the receive path a call runs:
//
//   MJRReader (packets, arrival times)  ->  AudioReceivePipeline (RTP parsing, jitter buffer,
//   reordering, concealment, Opus FEC) played out on the recording's own clock  ->  PCM kept
//   on the stream's media time (RTP timestamps)

import ParleyCall
import ParleyCodecs
import ParleyJitter
import ParleyMedia
import ParleyRTP

/// The audio of a Janus recording (`.mjr`) of an Opus stream, decoded to 16-bit mono PCM by
/// the library's own receive path: each packet goes to an `AudioReceivePipeline` (RTP
/// parsing, the jitter buffer's reordering, loss concealment and Opus FEC) at the time Janus
/// wrote it, and the pipeline is played out every 10 ms on that clock, not the wall clock:
/// a recording decodes as fast as the CPU allows, the same way each time.
///
/// **Timeline.** Sample 0 is the first packet's media time (its RTP timestamp), which Janus
/// wrote at `MJRHeader.startMicroseconds`. The output follows the RTP timestamps: the jitter
/// buffer does not time-stretch here (offline, nothing needs to catch up), and where its
/// playout still drifts more than 20 ms from the media time of what it plays (a concealment
/// waiting for a late packet), silence is inserted or samples are dropped, so a
/// sound at media time `t` is at sample `t * sampleRate` within 20 ms. Gaps in the
/// recording (a muted participant, DTX) come out as silence of their length.
///
/// **Errors.** Opening: a `MediaFileError` for a file that is not a readable Janus
/// recording, and `MediaFileError.unsupported(path:what:)` for a video or data recording,
/// another codec than Opus, RFC 2198 redundancy or end-to-end encryption. Reading: a
/// truncated or corrupt packet ends the stream; everything before it is played out first,
/// then the read that reaches it throws the reader's error (with the byte offset). A packet
/// that arrives more than an hour later than its timestamp says, or more than a day after the
/// one before, is corrupt too (playing the gap out would take that long).
///
/// Memory: the pipeline's buffers, one packet and one frame, allocated when opened; reading
/// allocates nothing. Threading: use from one thread at a time.
public final class JanusRecordingAudio {
    /// The recording's info header.
    public let header: MJRHeader
    /// The file's name, for messages.
    public let path: String
    /// Samples per second of the output, in Hz.
    public let sampleRate: Int
    /// The pipeline's counters (packets buffered and played, concealed frames, ...).
    public var statistics: AudioReceiveStatistics { pipeline.statistics }
    /// The jitter buffer's counters (late, lost and concealed samples, ...).
    public var jitterStatistics: JitterBufferStatistics { pipeline.jitterStatistics }
    /// Samples inserted (silence) or dropped to keep the output on the media timeline.
    public private(set) var alignmentInserted = 0, alignmentDropped = 0

    private var reader: MJRReader
    private var pipeline: AudioReceivePipeline<OpusJitterDecoder>
    /// The packet read but not yet given to the pipeline, and when it arrived (ms).
    private var packet: [UInt8] = []
    private var pendingLength = 0
    private var pendingArrival: Int64 = 0
    private var hasPending = false
    private var readFailure: MediaFileError?
    private var lastArrival: Int64 = 0
    /// The RTP timestamps, unwrapped, and the latest one in ms from the first: they stand for
    /// the arrival times in MJR00001 and bound the gaps between arrivals.
    private var timestamps = TimestampUnwrapper()
    private var firstTimestamp: Int64?
    private var lastTimestampMs: Int64?
    private var hasArrived = false
    /// The playout clock, ms on the arrival times' scale.
    private var clock: Int64 = 0
    private var started = false
    private var finished = false
    private var drainFrames = 0
    /// The frame last played, what of it is still to be returned, and silence to return first.
    private var frame: [Int16]
    private var frameNext = 0, frameEnd = 0
    private var zeros = 0
    /// Samples scheduled for output so far (zeros and frame samples).
    private var scheduled = 0

    /// Drift from the media timeline allowed before the output is corrected, ms.
    static let alignmentToleranceMs = 20
    /// The longest gap between two packets' arrivals beyond what their timestamps say (a
    /// sender whose clock paused), ms: 1 hour.
    static let maximumUnexplainedGapMs: Int64 = 3_600_000
    /// The longest gap between two packets' arrivals (a participant muted for that long), ms:
    /// 1 day.
    static let maximumGapMs: Int64 = 86_400_000
    /// Frames played after the last packet before giving up on the buffer draining.
    static let maximumDrainFrames = 6_000

    /// Opens the recording at `path`, decoding at `sampleRate` (8, 12, 16, 24 or 48 kHz;
    /// default 16 kHz, the VAD's rate). See the type's notes for the errors.
    public convenience init(path: String, sampleRate: Int = 16_000) throws(MediaFileError) {
        try self.init(reader: MJRReader(path: path), sampleRate: sampleRate)
    }

    /// Decodes the recording `reader` has opened (its header read, no packet yet).
    public init(reader: MJRReader, sampleRate: Int = 16_000) throws(MediaFileError) {
        let name = reader.name
        let h = reader.header
        guard h.kind == .audio else {
            throw .unsupported(path: name, what: "Janus recording of \(h.kind == .video ? "video" : "data") (\(h.codec)), not audio")
        }
        guard h.codec == "opus" else {
            throw .unsupported(path: name, what: "audio codec '\(h.codec)' in a Janus recording (Opus is decoded)")
        }
        guard h.redPayloadType == nil else {
            throw .unsupported(path: name, what: "Opus with RFC 2198 redundancy (RED) in a Janus recording")
        }
        guard !h.isEncrypted else {
            throw .unsupported(path: name, what: "end-to-end encrypted media in a Janus recording")
        }
        guard [8_000, 12_000, 16_000, 24_000, 48_000].contains(sampleRate) else {
            throw .invalidArgument(path: name, reason: "sample rate \(sampleRate) Hz (Opus decodes at 8, 12, 16, 24 or 48 kHz)")
        }
        var configuration = AudioReceiveConfiguration()
        configuration.sampleRate = sampleRate
        configuration.analysis = false
        // No time stretching: offline, playout need not catch up with a listener's clock, and
        // the audio keeps its media timing (a stretch would move what follows it).
        configuration.jitterBuffer.stretchThresholdMs = configuration.jitterBuffer.maximumDelayMs
        var r = reader
        var first: [UInt8] = []
        var firstPacket: MJRPacket?
        do throws(MediaFileError) {
            firstPacket = try r.read(into: &first)
        } catch {
            readFailure = error
        }
        // The payload type is the stream's own (whatever was negotiated): the first packet's.
        if let p = firstPacket, p.length >= 12 { configuration.payloadType = first[1] & 0x7F }
        do {
            pipeline = try AudioReceivePipeline(configuration: configuration,
                                                decoder: OpusJitterDecoder(sampleRate: sampleRate, channels: 1))
        } catch {
            throw .invalidArgument(path: name, reason: "cannot set up the decoder: \(error)")
        }
        self.reader = r
        header = h
        path = name
        self.sampleRate = sampleRate
        frame = [Int16](repeating: 0, count: configuration.frameSamples)
        packet = first
        if let p = firstPacket {
            packet.reserveCapacity(1_500)
            take(p)
        }
    }

    /// Makes `p` (its bytes in `packet`) the pending packet; a corrupt arrival time (see
    /// ``maximumUnexplainedGapMs``) ends the stream there instead.
    private func take(_ p: MJRPacket) {
        var timestampMs: Int64?
        if p.length >= 12 {
            let ts = timestamps.unwrap(UInt32(packet[4]) << 24 | UInt32(packet[5]) << 16 | UInt32(packet[6]) << 8 | UInt32(packet[7]))
            if firstTimestamp == nil { firstTimestamp = ts }
            timestampMs = (ts - firstTimestamp!) / Int64(OpusRTP.clockRate / 1000)
        }
        var arrival = p.arrivalMilliseconds.map(Int64.init) ?? timestampMs ?? lastArrival
        if hasArrived {
            // A gap the timestamps do not explain, or one of more than a day, is a corrupt time:
            // playing it out would take as long as the gap.
            let step = arrival - lastArrival, explained = max(0, (timestampMs ?? 0) - (lastTimestampMs ?? 0))
            if step > explained + Self.maximumUnexplainedGapMs || step > Self.maximumGapMs {
                readFailure = .corrupt(path: reader.name, reason: "packet \(reader.packetsRead - 1) arrives \(step) ms after the "
                                       + "one before, its timestamp \(explained) ms", offset: p.offset)
                return
            }
        }
        if let timestampMs { lastTimestampMs = timestampMs }
        hasArrived = true
        arrival = max(arrival, lastArrival)
        lastArrival = arrival
        pendingArrival = arrival
        pendingLength = p.length
        hasPending = true
    }

    /// Reads the next packet into `packet`, or notes the end (or the failure) of the file.
    private func advance() {
        hasPending = false
        guard readFailure == nil else { return }
        do throws(MediaFileError) {
            if let p = try reader.read(into: &packet) { take(p) }
        } catch {
            readFailure = error
        }
    }

    /// Reads up to `buffer.count` samples (mono); returns how many, 0 at the end. Throws the
    /// reader's error (truncated or corrupt, with its byte offset) once the audio before it
    /// has been returned.
    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(MediaFileError) -> Int {
        var done = 0
        while done < buffer.count {
            if zeros > 0 {
                let n = min(zeros, buffer.count - done)
                for i in 0..<n { buffer[done + i] = 0 }
                zeros -= n
                done += n
            } else if frameNext < frameEnd {
                let n = min(frameEnd - frameNext, buffer.count - done)
                for i in 0..<n { buffer[done + i] = frame[frameNext + i] }
                frameNext += n
                done += n
            } else if !playFrame() {
                break
            }
        }
        if done == 0, let failure = readFailure, finished {
            readFailure = nil
            throw failure
        }
        return done
    }

    /// Plays one frame: feeds the packets that have arrived by the clock, plays out, and
    /// schedules the frame on the media timeline. Returns false at the end of the stream.
    private func playFrame() -> Bool {
        if finished { return false }
        if !hasPending && !started { finished = true; return false }
        if !started { clock = pendingArrival; started = true }
        while hasPending && pendingArrival <= clock {
            let arrival = MonotonicTime(nanoseconds: pendingArrival * 1_000_000)
            packet.withUnsafeBytes { b in pipeline.receive(UnsafeRawBufferPointer(rebasing: b[0..<pendingLength]), at: arrival) }
            advance()
        }
        let now = MonotonicTime(nanoseconds: clock * 1_000_000)
        clock += Int64(pipeline.configuration.frameMs)
        let kind = pipeline.playout(at: now, sink: { pcm in
            for i in 0..<pcm.count { frame[i] = pcm[i] }
        }, onDecision: { _ in }, onTalk: { _ in })
        let input = hasPending
        if !input && pipeline.bufferedPackets == 0 {
            // After the last packet: what is still queued plays; the first concealment ends it.
            drainFrames += 1
            if kind != .normal || drainFrames > Self.maximumDrainFrames { finished = true; return false }
        }
        if kind == .buffering && scheduled == 0 { return true }   // before the first packet plays
        let n = frame.count
        let streamTime = Double(pipeline.statistics.frames - 1) * Double(pipeline.configuration.frameMs) / 1000
        let media = pipeline.mediaTime(ofStreamTime: streamTime)
        let desired = media.isFinite ? Int((media * Double(sampleRate)).rounded()) : scheduled
        let tolerance = Self.alignmentToleranceMs * sampleRate / 1000
        var drop = 0
        if desired - scheduled > tolerance {
            zeros = desired - scheduled
            alignmentInserted += zeros
            scheduled += zeros
        } else if scheduled - desired > tolerance {
            drop = min(scheduled - desired, n)
            alignmentDropped += drop
        }
        frameNext = drop
        frameEnd = n
        scheduled += n - drop
        return true
    }
}

/// ``JanusRecordingAudio`` as an ``OfflineAudioSource`` (floats in [-1, 1)).
struct JanusRecordingSource: OfflineAudioSource {
    let audio: JanusRecordingAudio
    private let staging: UnsafeMutableBufferPointer<Int16>
    private let owner: StagingOwner

    init(_ audio: JanusRecordingAudio) {
        self.audio = audio
        owner = StagingOwner(count: 4096)
        staging = owner.buffer
    }

    var sampleRate: Int { audio.sampleRate }
    var channels: Int { 1 }
    var expectedFrames: Int64? { nil }

    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(OfflineReadError) -> Int {
        let want = min(buffer.count, staging.count)
        let n: Int
        do {
            n = try audio.read(into: UnsafeMutableBufferPointer(rebasing: staging[0..<want]))
        } catch {
            throw OfflineReadError(message: janusRecordingProblem(error))
        }
        for i in 0..<n { buffer[i] = Float(staging[i]) * (1.0 / 32768.0) }
        return n
    }

    /// The staging buffer's storage, released with the last copy of the source.
    private final class StagingOwner {
        let buffer: UnsafeMutableBufferPointer<Int16>
        init(count: Int) { buffer = .allocate(capacity: count); buffer.initialize(repeating: 0) }
        deinit { buffer.deallocate() }
    }
}

/// The header of the Janus recording at `path`, or nil when the file is not one (it does
/// not start with a Janus recording's magic, or cannot be opened: the audio-file path then
/// reports why).
/// - Throws: ``OfflineDetectionError`` when it is a Janus recording whose header cannot be
///   read (truncated, corrupt).
public func janusRecordingHeader(path: String) throws(OfflineDetectionError) -> MJRHeader? {
    guard isJanusRecording(path: path) else { return nil }
    do {
        return try MJRReader(path: path).header
    } catch {
        throw OfflineDetectionError(janusRecordingError: error, path: path)
    }
}

/// Whether the file at `path` starts like a Janus recording (`MJR0000`, or the oldest
/// format's `MEETECHO`); false when it cannot be read.
func isJanusRecording(path: String) -> Bool {
    guard let source = try? FileByteSource(path: path) else { return false }
    var magic = [UInt8](repeating: 0, count: 8)
    var have = 0
    while have < 8 {
        let n = magic.withUnsafeMutableBytes { b in
            (try? source.read(into: UnsafeMutableRawBufferPointer(rebasing: b[have...]))) ?? 0
        }
        if n == 0 { break }
        have += n
    }
    guard have == 8 else { return false }
    let text = String(decoding: magic, as: UTF8.self)
    return text.hasPrefix("MJR0000") || text == "MEETECHO"
}

/// Opens the Janus recording of `request` for ``OfflineDetector``, or nil when its file is not
/// one (or is read from a descriptor).
func openJanusRecording(_ request: OfflineDetectionRequest) throws(OfflineDetectionError) -> JanusRecordingSource? {
    guard request.fileDescriptor == nil, isJanusRecording(path: request.path) else { return nil }
    do {
        return JanusRecordingSource(try JanusRecordingAudio(path: request.path))
    } catch {
        throw OfflineDetectionError(janusRecordingError: error, path: request.path)
    }
}

/// A truncated or corrupt Janus recording's problem with its byte offset, without the path.
func janusRecordingProblem(_ error: MediaFileError) -> String {
    switch error {
    case let .truncated(_, offset, expected, got): "truncated at byte \(offset): \(got) of \(expected) bytes"
    case let .corrupt(_, reason, offset): "corrupt at byte \(offset): \(reason)"
    default: "\(error)"
    }
}

extension OfflineDetectionError {
    /// The user-facing form of a ``MediaFileError`` met while opening the Janus recording at
    /// `path`: a truncated or corrupt header with its byte offset.
    init(janusRecordingError error: MediaFileError, path: String) {
        switch error {
        case .truncated:
            self.init(.readFailed, path: path, message: "Janus recording \(janusRecordingProblem(error))")
        case .corrupt:
            self.init(.unsupportedFormat, path: path, message: "Janus recording \(janusRecordingProblem(error))")
        default:
            self.init(mediaError: error, path: path)
        }
    }
}
