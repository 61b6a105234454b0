import Foundation
import ParleyCall
import ParleyCore
import ParleyDevices
import ParleyMedia

// What `parley call` and `parley join` do with what they receive: the audio played or
// written, each participant's audio and pictures in files of their own, the live grid, and the
// report's lines.

/// Where a call's received media go: the audio to a WAV file (at the receive rate, mono) or
/// ALSA's "default" device, and optionally each participant's audio and pictures to files.
final class CallOutputs {
    private var writer: WAVWriter?
    private var speaker: ALSAPlayback<Int16>?
    private var eachWriters: [ParticipantID: WAVWriter] = [:]
    private var pictureWriters: [ParticipantID: Y4MWriter] = [:]
    private var mix: [Int32]
    private var mixOut: [Int16]
    private var framesPlayed = 0
    private var audioFailure: (any Error)?
    private var videoFailure: (any Error)?
    private let mixes: Bool

    /// Sets `session`'s audio and video outputs.
    /// - Parameters:
    ///   - audio: the WAV file the received audio goes to (nil: ALSA's "default" device).
    ///   - mixes: whether everyone's audio is summed and written once a playout frame
    ///     (``endFrame()``); without, each frame is written as it comes (a call with one peer).
    ///   - eachDirectory: also write each participant's audio to DIR/NAME.wav, from this
    ///     participant's start (silence before it was heard).
    ///   - pictureFile: where each participant's pictures go, as shown, and their frame rate
    ///     (nil: pictures are not written). A file keeps the size of its first picture: pictures
    ///     of another size (the sender changed it) are counted in ``picturesOfOtherSize``, not written.
    init(session: CallSession, audio path: String?, mixes: Bool, eachDirectory: String? = nil,
         pictureFile: ((ParticipantID) -> (path: String, framesPerSecond: Int))?) throws {
        let rate = session.configuration.receive.sampleRate
        let frameSamples = session.configuration.receive.frameSamples
        if let path {
            writer = try WAVWriter(path: path, format: WAVFormat(sampleRate: rate, channels: 1))
        } else {
            speaker = try ALSAPlayback<Int16>(parameters: ALSAParameters(format: try AudioFormat(sampleRate: rate, channels: 1)))
        }
        if let eachDirectory { try FileManager.default.createDirectory(atPath: eachDirectory, withIntermediateDirectories: true) }
        self.mixes = mixes
        mix = [Int32](repeating: 0, count: mixes ? frameSamples : 0)
        mixOut = [Int16](repeating: 0, count: mixes ? frameSamples : 0)
        session.onAudio = { [unowned self] who, pcm in
            guard audioFailure == nil else { return }
            do {
                if mixes {
                    for i in 0..<min(pcm.count, mix.count) { mix[i] += Int32(pcm[i]) }
                } else if writer != nil { try writer!.write(pcm) } else { try speaker?.write(pcm) }
                guard let dir = eachDirectory else { return }
                if eachWriters[who] == nil {
                    var w = try WAVWriter(path: (dir as NSString).appendingPathComponent("\(who).wav"),
                                          format: WAVFormat(sampleRate: rate, channels: 1))
                    // From this participant's start: silence for the frames before it was heard.
                    let silence = [Int16](repeating: 0, count: frameSamples)
                    for _ in 0..<framesPlayed { try w.write(silence) }
                    eachWriters[who] = w
                }
                try eachWriters[who]!.write(pcm)
            } catch { audioFailure = error }
        }
        guard let pictureFile else { return }
        session.onVideo = { [unowned self] who, picture in
            guard videoFailure == nil else { return }
            do {
                if pictureWriters[who] == nil {
                    let (path, fps) = pictureFile(who)
                    pictureWriters[who] = try Y4MWriter(path: path, header: Y4MHeader(width: picture.width, height: picture.height,
                                                                                      frameRateNumerator: fps, frameRateDenominator: 1))
                }
                guard picture.width == pictureWriters[who]!.header.width, picture.height == pictureWriters[who]!.header.height else {
                    picturesOfOtherSize += 1
                    return
                }
                try pictureWriters[who]!.write(picture)
            } catch { videoFailure = error }
        }
    }

    /// Ends a playout frame: with ``mixes``, the frame's mix is written.
    func endFrame() {
        framesPlayed += 1
        guard mixes, audioFailure == nil else { return }
        for i in 0..<mix.count { mixOut[i] = Int16(clamping: mix[i]); mix[i] = 0 }
        do {
            try mixOut.withUnsafeBufferPointer { p in
                if writer != nil { try writer!.write(p) } else { try speaker?.write(p) }
            }
        } catch { audioFailure = error }
    }

    /// Whether writing failed (the call should stop).
    var failed: Bool { audioFailure != nil || videoFailure != nil }

    /// Whether any picture was written.
    var wrotePictures: Bool { !pictureWriters.isEmpty }

    /// Pictures not written because their size was not their file's.
    private(set) var picturesOfOtherSize = 0

    /// Completes the files.
    func close() throws {
        try writer?.close()
        for who in eachWriters.keys { try eachWriters[who]!.close() }
        for who in pictureWriters.keys { try pictureWriters[who]!.close() }
    }

    /// Throws what made writing fail, if anything did.
    func throwFailure() throws {
        if let audioFailure { throw CommandFailure("received audio: \(audioFailure)") }
        if let videoFailure { throw CommandFailure("received video: \(videoFailure)") }
    }
}

/// The live grid of the call's participants, redrawn at most ten times a second on a terminal.
struct CallGrid {
    /// Whether it is shown (else nothing is drawn).
    let isShown: Bool
    private var nextDraw = 0.0

    init(shown: Bool) { isShown = shown }

    /// Hides the cursor while the grid is shown.
    func begin() {
        if isShown { FileHandle.standardOutput.write(Data("\u{1B}[?25l".utf8)) }
    }

    /// Redraws the grid of `state` at media time `time` (when a tenth of a second has passed),
    /// with `footer` below it.
    mutating func draw(_ state: CallState, time: Double, footer: () -> String = { "" }) {
        guard isShown, time >= nextDraw else { return }
        nextDraw = time + 0.1
        FileHandle.standardOutput.write(Data(("\u{1B}[H\u{1B}[2J" + renderRoomGrid(state, time: time, color: true) + footer()).utf8))
    }

    /// Shows the cursor again, below the grid.
    func end() {
        if isShown { FileHandle.standardOutput.write(Data("\u{1B}[?25h\n".utf8)) }
    }
}

/// `sent: N RTP packets (B payload bytes) to DESTINATION`.
func callSentLine(_ s: AudioSendStatistics, to destination: String) -> String {
    "sent: \(s.packetsSent) RTP packets (\(s.payloadBytes) payload bytes) to \(destination)"
}

/// `received from NAME: ...`, the audio a remote participant sent (nil: no such participant):
/// packets, lost, samples concealed, and samples the jitter buffer's time stretching inserted
/// (to let its delay grow) and removed (to let it shrink).
func callReceivedLine(_ session: CallSession, from name: ParticipantID) -> String? {
    guard let r = session.receiveStatistics(of: name) else { return nil }
    return "received from \(name): \(r.receive.packetsBuffered) RTP packets, \(r.jitter.packetsLost) lost, "
        + "\(r.jitter.concealedSamples) samples concealed, \(r.jitter.insertedSamplesForDeceleration) inserted and "
        + "\(r.jitter.removedSamplesForAcceleration) removed by stretching"
}

/// `datagrams: ...`, the session's demultiplexer counters.
func callDatagramsLine(_ s: CallSessionStatistics) -> String {
    "datagrams: \(s.datagrams), malformed: \(s.malformed), unknown_ssrc: \(s.unknownSSRC + s.refusedRemotes)"
}

/// What `parley call` and `parley join` read and write on this machine: the local audio and
/// video (`--audio`, `--video`), the received audio's file (`--output`), the events' file
/// (`--events`), the grid (`--no-tui`) and the playout (`--headset`).
struct CallIOOptions {
    /// An ALSA PCM, or a WAV file (`.wav`).
    var audio = "default"
    var video: CallVideoSourceKind?
    /// The WAV file the received audio is written to (nil: ALSA's "default" device).
    var output: String?
    var events: String?
    var tui = true
    var headset = false

    /// Tells the session where its audio is played, for the local capture's echo canceller
    /// (`CallSessionConfiguration.playout`): with no output file the call plays on ALSA's
    /// "default" device, a loudspeaker the microphone hears unless `headset`; a capture read
    /// from a WAV file hears nothing, so it gets no canceller.
    func setPlayout(_ settings: inout CallSessionConfiguration) {
        settings.playout = output != nil ? .file : (headset ? .headset : .loudspeaker)
        if audio.lowercased().hasSuffix(".wav") { settings.echoCancellation = false }
    }
}

extension CallIOOptions {
    /// The options as `s` gives them.
    init(_ s: ArgumentScanner) throws(ArgumentScanner.UsageError) {
        if let a = s.value("audio") { audio = a }
        if let v = s.value("video") {
            guard let kind = CallVideoSourceKind(v) else {
                throw .init(description: "--video takes a Y4M file (.y4m) or a V4L2 device (/dev/videoN), got '\(v)'")
            }
            video = kind
        }
        output = s.value("output")
        if let out = output, !out.lowercased().hasSuffix(".wav") { throw .init(description: "--output writes a .wav file, got '\(out)'") }
        events = s.value("events")
        tui = !s.flag("no-tui")
        headset = s.flag("headset")
    }
}
