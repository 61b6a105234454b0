// Offline talk detection: a file in, who talked when out, by exactly the code a live call runs.
//
//   file (libsndfile or FFmpeg, blocks; a Janus recording through a call's receive path)  ->  mix-down, split channels or one track at a time  ->  ParticipantTalkTracker
//   (band-limited resampling when the VAD does not take the file's rate, VAD, TalkDetector)
//   ->  TalkSegmentRecorder  ->  segments
//
// `OfflineDetector` only reads blocks and hands them to the same `ParticipantTalkTracker` a
// live pipeline feeds with its 10 ms frames, so offline equals live by construction; a test
// feeds random-sized chunks through the live API and compares.

import ParleyMedia
import ParleyVoice

/// A source of interleaved float samples read in blocks (the file reader, or memory in tests).
package protocol OfflineAudioSource {
    /// Samples per second per channel, in Hz.
    var sampleRate: Int { get }
    /// Interleaved channel count.
    var channels: Int { get }
    /// Samples per channel the source announces, if it knows.
    var expectedFrames: Int64? { get }
    /// NaN or infinite samples the source replaced by 0 so far (a decoder may clean them up
    /// before the VAD, which would otherwise count them itself).
    var nonFiniteSamplesReplaced: Int { get }
    /// Reads up to `buffer.count / channels` frames of interleaved samples into `buffer`;
    /// returns the number of frames read, 0 at the end.
    mutating func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(OfflineReadError) -> Int
}

extension OfflineAudioSource {
    var nonFiniteSamplesReplaced: Int { 0 }
}

/// A read that failed part-way (an I/O or decoding error), with the library's message.
package struct OfflineReadError: Error {
    package var message: String
}

/// Offline talk detection over files: reads a file in blocks (memory stays flat whatever its
/// length), feeds one ``ParticipantTalkTracker`` per participant, and returns the talking
/// segments, with the raw VAD probability of every 10 ms frame on request.
///
/// Threading: a value type; analyse different files on different threads at will (each call
/// owns all of its state).
public struct OfflineDetector: Sendable {
    /// Settings of the VAD and the talk detector. The talk detector's are a live call's; the
    /// VAD's network is by default `VADModel.offline`, which looks ahead, as a recording
    /// allows. With `VADModel.live` the segments are exactly those a live call shows on the
    /// same audio.
    public var configuration: TalkTrackerConfiguration
    /// Samples per channel read per block. Default 4096: large enough to amortise the read
    /// call, small enough to keep the working set in cache (64 KiB per stereo block). Must be
    /// positive: ``analyze(_:onFrame:onProgress:)`` throws otherwise.
    public var blockFrames: Int

    /// Stores the settings; ``analyze(_:onFrame:onProgress:)`` checks them.
    public init(configuration: TalkTrackerConfiguration = .init(vad: .init(model: .offline)),
                blockFrames: Int = 4096) {
        self.configuration = configuration
        self.blockFrames = blockFrames
    }

    /// Analyses the file of `request`.
    ///
    /// - Parameters:
    ///   - request: the file and how to analyse it.
    ///   - onFrame: called for every 10 ms VAD frame of every track, in order within a track:
    ///     the track's index in the result, the frame index from the file's start (frame `k`
    ///     starts at `offset + k * 0.01` s) and the raw speech probability before hysteresis.
    ///   - onProgress: called after each block with the samples per channel read so far and
    ///     the total the header announces (if any).
    /// - Returns: the tracks and the issues that did not stop the analysis (truncation,
    ///   NaN samples, no speech).
    /// - Throws: ``OfflineDetectionError`` when nothing could be analysed; of kind
    ///   ``OfflineDetectionError/Kind/invalidConfiguration`` when ``blockFrames`` is not
    ///   positive or the talk detector's settings are out of range.
    public func analyze(_ request: OfflineDetectionRequest,
                        onFrame: (_ track: Int, _ frameIndex: Int, _ probability: Float) -> Void = { _, _, _ in },
                        onProgress: (_ framesRead: Int64, _ expectedFrames: Int64?) -> Void = { _, _ in })
        throws(OfflineDetectionError) -> OfflineFileAnalysis {
        try validate(request)
        if var recording = try openJanusRecording(request) {
            // A Janus recording is one mono stream: its one track is the participant.
            var single = request
            if single.channelMode == .perTrack { single.channelMode = .mixDown }
            return try analyze(&recording, request: single, onFrame: onFrame, onProgress: onProgress)
        }
        if request.channelMode == .perTrack {
            return try analyzeTracks(request, onFrame: onFrame, onProgress: onProgress)
        }
        var source = try openOfflineAudioFile(request)
        return try analyze(&source, request: request, onFrame: onFrame, onProgress: onProgress)
    }

    /// ``OfflineDetectionRequest/ChannelMode/perTrack``: each audio track analysed in turn as
    /// a mix-down, the results joined (a track's frames are reported under its index).
    private func analyzeTracks(_ request: OfflineDetectionRequest,
                               onFrame: (_ track: Int, _ frameIndex: Int, _ probability: Float) -> Void,
                               onProgress: (_ framesRead: Int64, _ expectedFrames: Int64?) -> Void)
        throws(OfflineDetectionError) -> OfflineFileAnalysis {
        let infos = try offlineAudioTracks(request)
        guard !infos.isEmpty else {
            throw OfflineDetectionError(.unsupportedFormat, path: request.path, message: "the file holds no audio track")
        }
        let names = Self.trackNames(infos, participant: request.participant)
        var tracks: [OfflineTrack] = []
        var issues: [OfflineDetectionIssue] = []
        var first: OfflineFileAnalysis?
        for (k, name) in names.enumerated() {
            var source = try openOfflineAudioFile(request, audioTrack: k)
            var single = request
            single.channelMode = .mixDown
            single.participant = name
            let a = try analyze(&source, request: single, onFrame: { _, i, p in onFrame(k, i, p) },
                                onProgress: onProgress)
            if first == nil { first = a }
            tracks.append(OfflineTrack(name: name, channel: nil, segments: a.tracks[0].segments,
                                       frameCount: a.tracks[0].frameCount))
            issues += a.issues.filter { $0 != .noSpeech }
        }
        if tracks.allSatisfy({ $0.segments.isEmpty }) { issues.append(.noSpeech) }
        let head = first!   // infos is not empty
        return OfflineFileAnalysis(request: request, sampleRate: head.sampleRate, channels: head.channels,
                                   framesRead: head.framesRead, expectedFrames: head.expectedFrames,
                                   tracks: tracks, issues: issues)
    }

    /// Participant names of audio tracks: the title, else the language, else
    /// `<participant>.track<N>` (also for a name an earlier track already has).
    static func trackNames(_ tracks: [AudioTrackInfo], participant: String) -> [String] {
        var used = Set<String>()
        return tracks.map { t in
            var name = t.title ?? t.language ?? ""
            if name.isEmpty || used.contains(name) { name = "\(participant).track\(t.index + 1)" }
            used.insert(name)
            return name
        }
    }

    private func validate(_ request: OfflineDetectionRequest) throws(OfflineDetectionError) {
        guard blockFrames > 0 else {
            throw OfflineDetectionError(.invalidConfiguration, path: request.path,
                                        message: "blockFrames \(blockFrames) must be positive")
        }
        do {
            try configuration.talk.validate()
        } catch {
            throw OfflineDetectionError(.invalidConfiguration, path: request.path,
                                        message: "invalid talk detector configuration: \(error)")
        }
    }

    /// Analyses any ``OfflineAudioSource`` (the file path above, in-memory audio in tests).
    func analyze<Source: OfflineAudioSource>(
        _ source: inout Source, request: OfflineDetectionRequest,
        onFrame: (_ track: Int, _ frameIndex: Int, _ probability: Float) -> Void,
        onProgress: (_ framesRead: Int64, _ expectedFrames: Int64?) -> Void
    ) throws(OfflineDetectionError) -> OfflineFileAnalysis {
        try validate(request)
        let channels = source.channels, rate = source.sampleRate
        let perChannel = request.channelMode == .perChannel
        let trackCount = perChannel ? channels : 1
        var trackers: [ParticipantTalkTracker] = []
        var recorders: [TalkSegmentRecorder] = []
        for _ in 0..<trackCount {
            do {
                trackers.append(try ParticipantTalkTracker(sampleRate: rate, configuration: configuration))
            } catch {
                throw OfflineDetectionError(.unsupportedAudio, path: request.path, message: "\(error)")
            }
            recorders.append(TalkSegmentRecorder(offset: request.offset))
        }

        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: blockFrames * channels)
        let mono = UnsafeMutableBufferPointer<Float>.allocate(capacity: blockFrames)
        defer { block.deallocate(); mono.deallocate() }

        var framesRead: Int64 = 0
        var nonFinite = 0
        var firstNonFinite = 0.0
        var readFailure: String?
        var replacedBefore = source.nonFiniteSamplesReplaced
        while true {
            let n: Int
            do {
                n = try source.read(into: block)
            } catch {
                readFailure = error.message
                break
            }
            if n == 0 { break }
            let replaced = source.nonFiniteSamplesReplaced - replacedBefore
            if replaced > 0 {
                if nonFinite == 0 { firstNonFinite = Double(framesRead) / Double(rate) }
                nonFinite += replaced
                replacedBefore += replaced
            }
            for t in 0..<trackCount {
                let samples: UnsafeBufferPointer<Float>
                if channels == 1 {
                    samples = UnsafeBufferPointer(rebasing: block[0..<n])
                } else if perChannel {
                    deinterleave(block, channel: t, of: channels, frames: n, into: mono)
                    samples = UnsafeBufferPointer(rebasing: mono[0..<n])
                } else {
                    mixDown(block, channels: channels, frames: n, into: mono)
                    samples = UnsafeBufferPointer(rebasing: mono[0..<n])
                }
                let before = trackers[t].nonFiniteSampleCount
                trackers[t].process(samples, onDecision: { d in onFrame(t, d.frameIndex, d.probability) },
                                    onEvent: { e in recorders[t].record(e) })
                let added = trackers[t].nonFiniteSampleCount - before
                if added > 0 {
                    if nonFinite == 0 { firstNonFinite = Double(framesRead) / Double(rate) }
                    nonFinite += added
                }
            }
            framesRead += Int64(n)
            onProgress(framesRead, source.expectedFrames)
        }

        if framesRead == 0 {
            if let readFailure {
                throw OfflineDetectionError(.readFailed, path: request.path, message: "cannot read audio: \(readFailure)")
            }
            throw OfflineDetectionError(.empty, path: request.path, message: "contains no audio samples (zero length)")
        }

        var tracks: [OfflineTrack] = []
        for t in 0..<trackCount {
            trackers[t].finish(onDecision: { d in onFrame(t, d.frameIndex, d.probability) },
                               onEvent: { e in recorders[t].record(e) })
            tracks.append(OfflineTrack(name: perChannel ? "\(request.participant).ch\(t + 1)" : request.participant,
                                       channel: perChannel ? t : nil,
                                       segments: recorders[t].segments,
                                       frameCount: trackers[t].framesDecided))
        }
        var issues: [OfflineDetectionIssue] = []
        let expected = source.expectedFrames
        if let readFailure {
            issues.append(.truncated(readSeconds: Double(framesRead) / Double(rate),
                                     expectedSeconds: Double(expected ?? framesRead) / Double(rate),
                                     reason: readFailure))
        } else if let expected, framesRead < expected {
            issues.append(.truncated(readSeconds: Double(framesRead) / Double(rate),
                                     expectedSeconds: Double(expected) / Double(rate),
                                     reason: "the data ends early"))
        }
        if nonFinite > 0 {
            issues.append(.nonFiniteSamples(count: nonFinite, firstAt: firstNonFinite))
        }
        if tracks.allSatisfy({ $0.segments.isEmpty }) {
            issues.append(.noSpeech)
        }
        return OfflineFileAnalysis(request: request, sampleRate: rate, channels: channels,
                                   framesRead: framesRead, expectedFrames: expected,
                                   tracks: tracks, issues: issues)
    }
}

/// Averages `frames` interleaved frames of `channels` channels into `out`.
@inline(__always)
func mixDown(_ input: UnsafeMutableBufferPointer<Float>, channels: Int, frames: Int,
             into out: UnsafeMutableBufferPointer<Float>) {
    let scale = 1 / Float(channels)
    if channels == 2 {
        for i in 0..<frames { out[i] = (input[2 * i] + input[2 * i + 1]) * scale }
        return
    }
    for i in 0..<frames {
        var s: Float = 0
        for c in 0..<channels { s += input[i * channels + c] }
        out[i] = s * scale
    }
}

/// Copies channel `channel` of `frames` interleaved frames into `out`.
@inline(__always)
func deinterleave(_ input: UnsafeMutableBufferPointer<Float>, channel: Int, of channels: Int, frames: Int,
                  into out: UnsafeMutableBufferPointer<Float>) {
    for i in 0..<frames { out[i] = input[i * channels + channel] }
}
