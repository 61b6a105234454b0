// `parley detect`: who talked when in recorded audio. Argument parsing, the job pool and the
// output formats only; the analysis is `OfflineDetector` in ParleyCall.

import Foundation
import ParleyCall
import ParleyMedia
import ParleyDetect
import ParleyVoice

let detectHelp = """
Usage: parley detect [--format summary|json|csv|rttm|audacity|frames] [--output PATH]
                     [--meeting [--name NAME]] [--per-channel|--per-track]
                     [--timeline PATH.svg] [--jobs N] [--model offline|live] FILE...
       parley detect [--format F] [--per-channel|--per-track] [--jobs N] [--model M]
                     [--files-from LIST [--null]] [--output-dir DIR [--skip-existing]]
                     [--shard K/N] [--input-format EXT] [FILE...]
       parley detect [--format F] [--per-channel|--per-track] [--jobs N] [--model M]
                     --meetings-from MANIFEST.csv [--output-dir DIR [--skip-existing]]
                     [--shard K/N] [--timeline P]

Find who talked when in recorded audio. Any file libsndfile reads (WAV, FLAC, Ogg
Vorbis/Opus, MP3, AIFF, ...) and any other container and codec FFmpeg reads (M4A/MP4 with
AAC as Zoom, Meet and Teams record, WebM with Opus as browsers record, Matroska, the audio
of video files, ...), at any rate and channel count; resampled (band-limited) for the voice
activity detector. A video's audio is its best audio stream (or each, with --per-track).
Janus recordings (.mjr, one per participant's stream: VideoRoom `record`, AudioBridge
`mjrs`) of Opus audio are decoded through a call's receive path (jitter buffer, loss
concealment, FEC) on the packets' own times; video and data recordings are skipped with a
note on stderr. Files are read in blocks (memory stays flat whatever their
length) and processed in parallel; the output order follows the command line. The talk
detector (hysteresis) is a live call's; the voice activity detector's network is by default
the offline one, which decides each 10 ms after hearing 0.5 s more (a recording allows it):
with --model live the segments are exactly those a live call shows on the same audio.

Modes:
  (default)      each FILE on its own, one participant named after the file's stem
                 (channels are averaged)
  --meeting      every FILE is one participant of one meeting, named after its stem;
                 NAME@SECONDS (e.g. bob.wav@12.5) starts that file 12.5 s into the meeting
                 (when a file's own name ends in @N, the name is taken literally); a Janus
                 recording starts at its first packet's recorded time, the earliest .mjr
                 given at 0 (room/*.mjr: the room's talk at its true offsets), plus any @N
  --name NAME    the meeting's name (the `file` column of csv/rttm); default "meeting"
  --per-channel  every channel is a participant, named <stem>.ch<N> (N from 1)
  --per-track    every audio stream (track) of a file is a participant (its channels
                 averaged), named after the track's title metadata, else its language,
                 else <stem>.track<N> (N from 1; also for a name an earlier track has);
                 standard input must then be a file (< FILE), not a pipe

Options:
  --format F     output format (default summary):
                   summary   per participant: talk time, share of all talk, fraction of the
                             meeting, turns, longest turn, overlap time, interruptions made
                             and suffered; the meeting's talking, overlap and silence time
                   json      the same plus every segment (schema below)
                   csv       header file,participant,start_s,end_s; one talking segment a line
                   rttm      SPEAKER <file> 1 <start> <duration> <NA> <NA> <participant> <NA> <NA>
                   audacity  label tracks (start<TAB>end<TAB>label); with several participants
                             and --output labels.txt, one file per participant:
                             labels-<participant>.txt; on stdout, all tracks one after another
                   frames    header file,time_s,prob: the detector's raw speech probability
                             for every 10 ms frame (time_s = frame start), before hysteresis;
                             `file` is the stem (the participant name with --per-channel
                             or --per-track)
  --output PATH  write there instead of standard output
  --timeline P   also write an SVG picture: one lane per participant, talking as bars,
                 overlaps shaded and in their own lane, a time axis
  --jobs N       files analysed in parallel (default: the number of cores)
  --model M      the voice activity detector's network: offline (default; looks 0.5 s
                 ahead, the best timeline of a recording) or live (causal, as in calls:
                 to check an archive against what a live call would have shown)

Batch (many recordings, each on its own):
  --files-from LIST  more FILEs, from LIST ("-": standard input), one path per line, taken
                     literally (no @SECONDS; empty lines skipped); read as the run goes with
                     --output-dir, else held (paths only: the outputs need every file)
  --null             the names in LIST end with a NUL byte instead (find -print0)
  --meetings-from MANIFEST.csv
                     many meetings, each analysed as --meeting does, from a CSV manifest
                     ("-": standard input) whose header names the columns
                     meeting,participant,path,offset_s (any order; others ignored). A row
                     is one participant's file; a meeting's rows need not be adjacent.
                     Empty participant: the file's stem; empty offset_s: 0 (a Janus
                     recording: its recorded start, as with --meeting, plus offset_s). Fields may be
                     quoted ("a, b"; a quote inside written twice: "the ""A"" team");
                     a UTF-8 byte-order mark and CRLF line ends are accepted. With
                     --output-dir, one result per meeting, named from the meeting's name
                     as below, and failed.tsv lists meetings: meeting<TAB>path: error; ...
                     ("partial: " first when the meeting still got a result); --shard and
                     --skip-existing go by meeting.
                     A bad manifest (no such header, a row too short, a negative or
                     non-numeric offset, a participant twice in a meeting) is a usage error.
  --output-dir DIR   one result per recording in DIR (created if missing) instead of
                     standard output: what `parley detect --format F FILE` prints for that
                     file alone, written under a temporary name (.parley-*.part, which a
                     killed run leaves and the next run on that host removes) and renamed
                     when complete, so a result in DIR is never half-written; nothing is
                     held once written. DIR/failed.tsv, rewritten the same way as the run
                     goes, lists path<TAB>error for each file that failed (no result) or
                     was only partly read (a result); tab, newline, CR and backslash are
                     written \\t \\n \\r \\\\. It is kept across runs: an entry goes when
                     its file succeeds.
  --skip-existing    with --output-dir: a file whose result is already in DIR is not
                     analysed again, so rerunning the same command resumes where it stopped
                     (a result's name tells its path and format, not the other options)
  --shard K/N        analyse only part K (1 <= K <= N) of N: the files whose path, as given,
                     has an FNV-1a 64-bit hash equal to K-1 modulo N; the same split on every
                     machine, whatever the order of the list
  Result names: the path as given with "%" written %25, "/" %2F, bytes below 0x20 and 0x7F
  as %XX and a leading "." as %2E (only the last 160 bytes of a longer name are kept), then
  "~", the FNV-1a 64-bit hash of the path in 16 hex digits, and .txt (summary), .json, .csv,
  .rttm, .labels.txt (audacity: all tracks one after another) or .frames.csv; e.g.
  calls/a.wav -> calls%2Fa.wav~27963a5ca339d716.csv. Distinct paths get distinct names (of
  names cut to 160 bytes, the hash tells them apart).
  With --files-from, --meetings-from, --output-dir or --shard, a last line on stderr sums up
  the run: files (or meetings) ok, partial, failed and skipped, hours of audio, wall time and
  speed (x real time). On a terminal a progress line shows files done of all, hours of audio
  done, speed (hours of audio per hour) and the time left.

Standard input:
  -              a FILE named "-" is read from standard input, its format recognised from
                 the bytes (a pipe is first copied to an unlinked file in $TMPDIR); its
                 participant and recording are named "stdin"
  --input-format EXT
                 standard input is headerless audio of the kind files named *.EXT hold:
                 sln (16-bit little-endian, mono, 8 kHz), sln12 sln16 sln24 sln32 sln44
                 sln48 sln96 sln192 (the same at 12 ... 192 kHz, sln44 = 44.1 kHz), ul
                 (G.711 mu-law, 8 kHz), al (A-law), vox and vox6 (Dialogic ADPCM, 8 and
                 6 kHz), gsm (GSM 06.10, 8 kHz)

Times are seconds on the meeting's timeline (file time plus the file's offset), 3 decimals.
Definitions: a turn is one talking segment. Overlap is time during which two or more
participants talk. B interrupts A when B starts talking while A is talking, A stops within
3 s of B's start and B is still talking when A stops (B took the floor); a back-channel that
does not stop A is not an interruption.

JSON schema (parley.detect/1):
  {"schema": "parley.detect/1", "parley_version": "X.Y.Z", "vad_model": "offline"|"live",
   "interruption_window_s": 3.0,
   "recordings": [{"name", "duration_s", "talking_s", "overlap_s", "silence_s",
     "files": [{"path", "status": "ok"|"partial"|"failed", "offset_s", "sample_rate",
                "channels", "duration_s", "issues": [text]} | {"path", "status", "error"}],
     "participants": [{"name", "channel" (with --per-channel, from 1), "talk_s", "share",
                "fraction_of_meeting", "turns", "longest_turn_s", "overlap_s",
                "interruptions", "interrupted", "segments": [[start_s, end_s], ...]}],
     "interruptions": [{"time_s", "by", "of", "stopped_s"}]}]}
  A recording is the meeting (--meeting) or one file. Ratios are in [0, 1].

Bad input: a file that cannot be read (missing, a directory, unsupported or corrupt format,
no audio, a video without an audio stream) gets a message on stderr and is left out; a
truncated file or one with NaN samples is analysed as far as possible and reported. The
other files are still processed.

Exit status: 0 every file was processed completely, 1 some file failed or was only partly
processed (the others are still reported), 2 usage error.
"""

let detectCommand = Command(
    name: "detect",
    summary: "Find who talked when in recorded audio",
    help: detectHelp,
    run: { args in runDetect(args) }
)

/// The output formats.
enum DetectFormat: String, CaseIterable, Sendable {
    case summary, json, csv, rttm, audacity, frames
}

/// The parsed command line.
struct DetectInvocation: Sendable {
    var format: DetectFormat = .summary
    var output: String?
    var meeting = false
    var meetingName = "meeting"
    var perChannel = false
    var perTrack = false
    var timeline: String?
    var jobs = 1
    /// The FILE arguments (`-` is standard input).
    var inputs: [(path: String, offset: Double)] = []
    /// `--files-from`: the list's path, `-` for standard input.
    var filesFrom: String?
    /// `--meetings-from`: the meetings manifest's path, `-` for standard input.
    var meetingsFrom: String?
    /// `--null`: names in the list end with NUL.
    var nullSeparated = false
    /// `--output-dir`: one result per recording there.
    var outputDirectory: String?
    var skipExisting = false
    var shard: DetectShard?
    /// `--input-format`: the headerless encoding of standard input.
    var inputFormat: RawAudioFormat?
    /// `--model`: the VAD network that decides.
    var model: VADModel = .offline

    /// The analysis every file gets.
    var detector: OfflineDetector { OfflineDetector(configuration: .init(vad: .init(model: model))) }

    /// How a file's channels and tracks become participants.
    var channelMode: OfflineDetectionRequest.ChannelMode {
        perChannel ? .perChannel : perTrack ? .perTrack : .mixDown
    }

    /// Batch mode (`--files-from`, `--meetings-from`, `--output-dir` or `--shard`): a summary
    /// line ends stderr.
    var isBatch: Bool { filesFrom != nil || meetingsFrom != nil || outputDirectory != nil || shard != nil }

    init(_ args: [String], standardInputIsTerminal: Bool = isatty(STDIN_FILENO) == 1) throws(ArgumentScanner.UsageError) {
        let scan = try ArgumentScanner(args, valued: ["format", "output", "name", "timeline", "jobs", "files-from",
                                                      "meetings-from", "output-dir", "shard", "input-format", "model"],
                                       flagNames: ["meeting", "per-channel", "per-track", "null", "skip-existing"])
        if let f = scan.value("format") {
            guard let parsed = DetectFormat(rawValue: f) else {
                throw .init(description: "unknown format '\(f)' (one of: \(DetectFormat.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            format = parsed
        }
        if let m = scan.value("model") {
            guard let parsed = VADModel(rawValue: m) else {
                throw .init(description: "unknown model '\(m)' (one of: \(VADModel.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            model = parsed
        }
        output = scan.value("output")
        meeting = scan.flag("meeting")
        perChannel = scan.flag("per-channel")
        perTrack = scan.flag("per-track")
        if perChannel && perTrack { throw .init(description: "--per-channel and --per-track exclude each other") }
        if let n = scan.value("name") {
            guard meeting else { throw .init(description: "--name only applies with --meeting") }
            guard !n.isEmpty else { throw .init(description: "--name must not be empty") }
            meetingName = n
        }
        timeline = scan.value("timeline")
        jobs = try scan.int("jobs", default: ProcessInfo.processInfo.activeProcessorCount, in: 1...1024)

        filesFrom = scan.value("files-from")
        if filesFrom?.isEmpty == true { throw .init(description: "--files-from needs a file name (or - for standard input)") }
        nullSeparated = scan.flag("null")
        meetingsFrom = scan.value("meetings-from")
        if let m = meetingsFrom {
            guard !m.isEmpty else { throw .init(description: "--meetings-from needs a file name (or - for standard input)") }
            if meeting { throw .init(description: "--meetings-from lists its meetings; --meeting does not apply with it") }
            if filesFrom != nil || !scan.positionals.isEmpty {
                throw .init(description: "--meetings-from takes every file from its manifest: give no FILE and no --files-from")
            }
        }
        if nullSeparated && filesFrom == nil { throw .init(description: "--null only applies with --files-from") }
        outputDirectory = scan.value("output-dir")
        if let dir = outputDirectory {
            guard !dir.isEmpty else { throw .init(description: "--output-dir needs a directory name") }
            if meeting {
                throw .init(description: "--output-dir writes one result per file or per meeting of --meetings-from; "
                            + "it does not apply with --meeting")
            }
            if output != nil { throw .init(description: "--output and --output-dir exclude each other") }
            if timeline != nil { throw .init(description: "--timeline does not apply with --output-dir") }
        }
        skipExisting = scan.flag("skip-existing")
        if skipExisting && outputDirectory == nil { throw .init(description: "--skip-existing only applies with --output-dir") }
        if let k = scan.value("shard") {
            guard let parsed = DetectShard(k) else {
                throw .init(description: "--shard must be K/N with integers 1 <= K <= N, got '\(k)'")
            }
            if meeting { throw .init(description: "--shard does not apply with --meeting (a meeting is analysed whole)") }
            shard = parsed
        }

        guard !scan.positionals.isEmpty || filesFrom != nil || meetingsFrom != nil else {
            throw .init(description: "no input FILE given")
        }
        for p in scan.positionals {
            inputs.append(p == "-" ? ("-", 0) : Self.splitOffset(p))
        }
        let stdinAudio = inputs.filter { $0.path == "-" }.count
        if stdinAudio > 1 { throw .init(description: "standard input (-) can be read only once") }
        if stdinAudio == 1 && filesFrom == "-" {
            throw .init(description: "standard input cannot hold both the list (--files-from -) and audio (-)")
        }
        if stdinAudio == 1 && standardInputIsTerminal {
            throw .init(description: "standard input is a terminal: pipe the audio in, or name a file")
        }
        if let ext = scan.value("input-format") {
            guard let raw = RawAudioFormat(extension: ext) else {
                throw .init(description: "unknown --input-format '\(ext)' (headerless formats: "
                            + RawAudioFormat.extensions.joined(separator: ", ")
                            + "; other formats are recognised from their bytes)")
            }
            guard stdinAudio == 1 else { throw .init(description: "--input-format applies to standard input (-) only") }
            inputFormat = raw
        }
    }

    /// `name.wav@12.5` -> (`name.wav`, 12.5) unless a file of that exact name exists.
    static func splitOffset(_ arg: String) -> (path: String, offset: Double) {
        guard let at = arg.lastIndex(of: "@"), !FileManager.default.fileExists(atPath: arg),
              let v = Double(arg[arg.index(after: at)...]), v.isFinite, v >= 0,
              at != arg.startIndex else {
            return (arg, 0)
        }
        return (String(arg[..<at]), v)
    }
}

/// Participant names for the inputs: the stems, made unique with `-2`, `-3`... when two
/// files share a stem.
func uniqueParticipantNames(_ paths: [String]) -> [String] {
    var used: [String: Int] = [:]
    var out: [String] = []
    for p in paths {
        let stem = fileStem(p)
        var name = stem
        if let n = used[stem] {
            var k = n + 1
            while used[stem + "-\(k)"] != nil { k += 1 }
            name = stem + "-\(k)"
            used[stem] = k
        }
        used[name] = used[name] ?? 1
        out.append(name)
    }
    return out
}

func runDetect(_ args: [String]) -> Int32 {
    let start = Date()
    let inv: DetectInvocation
    var list: DetectListReader?
    var meetings: [DetectMeeting]?
    do throws(ArgumentScanner.UsageError) {
        inv = try DetectInvocation(args)
        do throws(DetectOutputError) {
            if let path = inv.filesFrom {
                list = try DetectListReader(path: path, nullSeparated: inv.nullSeparated)
            }
            if let path = inv.meetingsFrom {
                meetings = try readMeetingsManifest(path: path).filter { inv.shard?.contains($0.name) ?? true }
            }
        } catch {
            throw ArgumentScanner.UsageError(description: error.message)
        }
    } catch {
        printError("parley detect: \(error.description)\nRun 'parley detect --help' for usage.")
        return ExitStatus.usage
    }
    if inv.outputDirectory != nil { return runDetectBatch(inv, list: list, meetings: meetings) }

    // Every output below needs every file: the list is read whole (paths only).
    let requests: [OfflineDetectionRequest]
    if let meetings {
        requests = meetings.flatMap { DetectJob($0, invocation: inv).requests }
    } else {
        do throws(DetectOutputError) {
            requests = try detectFileRequests(inv, list: list)
        } catch {
            printError("parley detect: \(error.message)")
            return ExitStatus.failure
        }
    }

    let framesDirectory: String? = inv.format == .frames ? makeTemporaryDirectory() : nil
    defer { if let d = framesDirectory { try? FileManager.default.removeItem(atPath: d) } }
    let outcomes = analyseDetectRequests(requests, detector: inv.detector, jobs: inv.jobs, framesDirectory: framesDirectory,
                                         namesParticipants: meetings != nil)
    var status = ExitStatus.success
    for o in outcomes {
        switch o {
        case let .analysed(a):
            for issue in a.issues { printError("parley detect: \(a.request.path): \(issue)") }
            if !a.isComplete { status = ExitStatus.failure }
        case let .failed(path, error):
            printError("parley detect: \(path): \(error.message)")
            status = ExitStatus.failure
        }
    }

    let (recordings, counts) = detectRecordings(outcomes, inv, meetings: meetings)
    do {
        let frameParts = framesDirectory.map { d in outcomes.indices.map { d + "/\($0).csv" } } ?? []
        try writeDetectResult(recordings, frameParts: frameParts, inv)
    } catch {
        printError("parley detect: \(error)")
        return ExitStatus.failure
    }
    if inv.isBatch { printError(counts.line(wallSeconds: Date().timeIntervalSince(start))) }
    return status
}

/// The requests for the files named on the command line and in the list, each participant named
/// after its file's stem (made unique). Throws the list's error, once the list is read.
private func detectFileRequests(_ inv: DetectInvocation, list: DetectListReader?) throws(DetectOutputError)
    -> [OfflineDetectionRequest] {
    let arguments = inv.inputs.map { DetectInput(path: $0.path, offset: $0.offset, isStandardInput: $0.path == "-") }
    let queue = DetectInputQueue(arguments: arguments, list: list, shard: inv.shard)
    let inputs = janusRecordingsPlaced(queue.all(), meeting: inv.meeting)
    if let e = queue.listError { throw DetectOutputError(message: "\(e)") }
    let names = uniqueParticipantNames(inputs.map(\.path))
    return zip(inputs, names).map { input, name in
        OfflineDetectionRequest(path: input.path, participant: name,
                                offset: input.offset, channelMode: inv.channelMode,
                                fileDescriptor: input.isStandardInput ? STDIN_FILENO : nil,
                                rawFormat: input.isStandardInput ? inv.inputFormat : nil)
    }
}

/// The inputs with Janus recordings (`.mjr`, recognised by their bytes) sorted out: a video or
/// data recording is left out with a note on stderr; with `meeting`, an audio one is placed on
/// the room's timeline (see ``janusRecordingStarts(_:)``) plus the offset given with it. One
/// whose header cannot be read stays, for its analysis to report.
private func janusRecordingsPlaced(_ inputs: [DetectInput], meeting: Bool) -> [DetectInput] {
    let placed = janusRecordingStarts(inputs.map { $0.isStandardInput ? nil : $0.path })
    var kept: [DetectInput] = []
    for (input, recording) in zip(inputs, placed) {
        guard let recording else { kept.append(input); continue }
        guard recording.header.kind == .audio else {
            printError("parley detect: \(input.path): a Janus \(recording.header.kind == .video ? "video" : "data") recording "
                       + "(\(recording.header.codec)), no audio: skipped")
            continue
        }
        var moved = input
        if meeting { moved.offset += recording.start }
        kept.append(moved)
    }
    return kept
}

/// The Janus recordings among `paths` (nil: not a file) and where each starts on the room's
/// timeline: its first packet's recorded time (else its creation's) in seconds after the
/// earliest of them (of any kind). Nil for other files and recordings whose header cannot be
/// read.
func janusRecordingStarts(_ paths: [String?]) -> [(header: MJRHeader, start: Double)?] {
    let headers = paths.map { path -> MJRHeader? in path.flatMap { (try? janusRecordingHeader(path: $0)) ?? nil } }
    let origin = headers.compactMap { $0?.startMicroseconds }.min() ?? 0
    return headers.map { h in h.map { ($0, Double($0.startMicroseconds - origin) / 1e6) } }
}

/// Analyses `requests` on `jobs` threads with a progress line on a terminal; with
/// `framesDirectory`, request `i`'s frame rows go to `framesDirectory/i.csv`.
private func analyseDetectRequests(_ requests: [OfflineDetectionRequest], detector: OfflineDetector, jobs: Int,
                                   framesDirectory: String?,
                                   namesParticipants: Bool) -> [DetectFileOutcome] {
    let weights = requests.map { fileWeight($0.path) }
    let progress = DetectProgress(total: requests.count, totalWeight: weights.reduce(0, +), enabled: isatty(STDERR_FILENO) == 1)
    defer { progress.stop() }
    return runJobs(count: requests.count, jobs: jobs) { i -> DetectFileOutcome in
        let request = requests[i]
        var frames: FramesWriter?
        if let dir = framesDirectory {
            frames = FramesWriter(path: dir + "/\(i).csv")
        }
        defer { frames?.close() }
        do throws(OfflineDetectionError) {
            let analysis = try detector.analyze(
                request,
                onFrame: { track, index, probability in
                    frames?.append(track: track, frameIndex: index, probability: probability)
                },
                onProgress: { read, expected in
                    guard let expected, expected > 0 else { return }
                    progress.update(i, weight: weights[i], fraction: Double(read) / Double(expected))
                })
            // A meeting of a manifest names its participants; files are named by their stems.
            let name = namesParticipants ? request.participant : fileStem(request.path)
            frames?.finish(names: analysis.tracks.map { request.channelMode == .mixDown ? name : $0.name },
                           offset: request.offset)
            progress.finish(i, weight: weights[i], audioSeconds: analysis.duration)
            return .analysed(analysis)
        } catch {
            progress.finish(i, weight: weights[i], audioSeconds: 0)
            return .failed(path: request.path, error: error)
        }
    }
}

/// The recordings the outcomes make up (the manifest's meetings, one meeting of all files with
/// `--meeting`, else one per file) and their counts for the batch line.
private func detectRecordings(_ outcomes: [DetectFileOutcome], _ inv: DetectInvocation,
                              meetings: [DetectMeeting]?) -> ([DetectRecording], DetectBatchCounts) {
    var counts = DetectBatchCounts()
    guard let meetings else {
        for o in outcomes { counts.add([o]) }
        let recordings = inv.meeting
            ? [DetectRecording(name: inv.meetingName, files: outcomes)]
            : outcomes.map { DetectRecording(name: fileStem($0.path), files: [$0]) }
        return (recordings, counts)
    }
    var rest = outcomes[...]
    let recordings = meetings.map { m in
        let files = Array(rest.prefix(m.participants.count))
        rest = rest.dropFirst(m.participants.count)
        counts.add(files)
        return DetectRecording(name: m.name, files: files)
    }
    counts.noun = "meeting"
    return (recordings, counts)
}

/// Writes the result of a run without `--output-dir` to `--output` (standard output without it;
/// with `--format audacity` and several tracks, one file per participant) and the `--timeline` SVG.
/// `frameParts` are the files of frame rows, in outcome order (`--format frames`).
private func writeDetectResult(_ recordings: [DetectRecording], frameParts: [String], _ inv: DetectInvocation) throws {
    switch inv.format {
    case .audacity:
        let tracks = audacityTracks(recordings)
        if let out = inv.output, tracks.count > 1 {
            for t in tracks { try writeOutput(t.text, to: audacityPath(output: out, participant: t.participant)) }
        } else {
            try writeOutput(tracks.map(\.text).joined(), to: inv.output)
        }
    case .frames:
        try writeFrames(parts: frameParts, to: inv.output)
    case .summary, .json, .csv, .rttm:
        try writeOutput(detectResultText(recordings, format: inv.format, model: inv.model), to: inv.output)
    }
    if let svgPath = inv.timeline {
        try writeOutput(timelineSVG(recordings, version: parleyVersion), to: svgPath)
    }
}

// MARK: - Jobs

/// Runs `body(0..<count)` on `jobs` threads, each taking the next index as it becomes free;
/// returns the results in index order.
func runJobs<T: Sendable>(count: Int, jobs: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
    let slots = JobSlots<T>(count: count)
    let workers = max(1, min(jobs, count))
    let group = DispatchGroup()
    for _ in 0..<workers {
        group.enter()
        Thread.detachNewThread {
            while let i = slots.take() {
                slots.store(i, body(i))
            }
            group.leave()
        }
    }
    group.wait()
    return slots.results()
}

/// The work queue and result slots of ``runJobs(count:jobs:_:)``.
final class JobSlots<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var next = 0
    private var slots: [T?]

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    func take() -> Int? {
        lock.lock(); defer { lock.unlock() }
        guard next < slots.count else { return nil }
        next += 1
        return next - 1
    }

    func store(_ i: Int, _ value: T) {
        lock.lock(); defer { lock.unlock() }
        slots[i] = value
    }

    func results() -> [T] {
        lock.lock(); defer { lock.unlock() }
        return slots.map { $0! }
    }
}

// MARK: - Progress

/// The progress bar of `parley detect` on stderr: shown only when `enabled` (stderr is a
/// terminal), redrawn at most every 200 ms. Work is counted in items (files, or the jobs of an
/// `--output-dir` run), each with a weight; the bar's fraction is the weight finished plus the
/// finished part of the items in flight, over the total weight. Without a total (a list still
/// being read) only the count of items done is shown.
final class DetectProgress: @unchecked Sendable {
    private let lock = NSLock()
    private let totalWeight: Double?
    private let total: Int?
    private let noun: String
    private let enabled: Bool
    /// Weight times finished fraction of the items in flight, by key.
    private var inFlight: [Int: Double] = [:]
    private var doneWeight = 0.0
    private var done = 0
    private var audio = 0.0
    private var lastDraw = 0.0
    private let start = Date()
    private var drawn = false

    /// A bar over `total` items (nil: not known yet) weighing `totalWeight` together (nil: one each).
    init(total: Int?, totalWeight: Double? = nil, enabled: Bool, noun: String = "file") {
        self.total = total
        self.totalWeight = totalWeight ?? total.map(Double.init)
        self.enabled = enabled
        self.noun = noun
        inFlight.reserveCapacity(64)
    }

    /// Item `key`, of `weight`, is `fraction` (0...1) done.
    func update(_ key: Int, weight: Double = 1, fraction: Double) {
        guard enabled else { return }
        lock.lock(); defer { lock.unlock() }
        inFlight[key] = weight * min(1, max(0, fraction))
        drawLocked()
    }

    /// Item `key`, of `weight`, is done; it held `audioSeconds` of audio.
    func finish(_ key: Int, weight: Double = 1, audioSeconds: Double) {
        guard enabled else { return }
        lock.lock(); defer { lock.unlock() }
        inFlight[key] = nil
        doneWeight += weight
        done += 1
        audio += audioSeconds
        drawLocked()
    }

    func stop() {
        guard enabled else { return }
        lock.lock(); defer { lock.unlock() }
        if drawn { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// Prints a message line on stderr, clearing the bar first (it is drawn again below it).
    func message(_ text: String) {
        guard enabled else { printError(text); return }
        lock.lock(); defer { lock.unlock() }
        FileHandle.standardError.write(Data(((drawn ? "\r\u{1B}[K" : "") + text + "\n").utf8))
        drawn = false
        drawLocked(force: true)
    }

    private func drawLocked(force: Bool = false) {
        let now = Date().timeIntervalSince(start)
        guard force || now - lastDraw >= 0.2 else { return }
        lastDraw = now
        drawn = true
        var fraction: Double?
        if let totalWeight, totalWeight > 0 { fraction = min(1, (doneWeight + inFlight.values.reduce(0, +)) / totalWeight) }
        FileHandle.standardError.write(Data(progressBarLine(fraction: fraction, done: done, total: fraction == nil ? nil : total,
                                                            seconds: now, audioSeconds: audio, noun: noun).utf8))
    }
}

/// One redraw of a progress bar, from the line's start: `[###---] 40%  2/5 files  0.52 h
/// of audio  870x  0:03 ETA 0:05` (speed: hours of audio of the finished files per hour; the
/// ETA from the fraction done). Without a fraction and total (a list still being read):
/// `12 files  0.52 h of audio  870x  0:03`.
func progressBarLine(fraction: Double?, done: Int, total: Int?, seconds: Double, audioSeconds: Double,
                     noun: String = "file") -> String {
    var line = "\r"
    if let f = fraction, let total {
        let width = 30
        let filled = Int((f * Double(width)).rounded(.down))
        line += "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            + "\(Int(f * 100))%  \(done)/\(total) \(noun)s"
    } else {
        line += "\(done) \(noun)\(done == 1 ? "" : "s")"
    }
    line += "  " + fixed(audioSeconds / 3600, 2) + " h of audio"
    if seconds >= 1 && audioSeconds > 0 { line += "  " + fixed(audioSeconds / seconds, 0) + "x" }
    line += "  " + clockText(seconds)
    if let f = fraction, f >= 0.01, seconds >= 1 { line += " ETA " + clockText(seconds * (1 - f) / f) }
    return line
}

/// `m:ss`, or `h:mm:ss` from an hour.
func clockText(_ seconds: Double) -> String {
    let t = Int(seconds.rounded())
    let (h, m, s) = (t / 3600, t / 60 % 60, t % 60)
    let two = { (v: Int) in v < 10 ? "0\(v)" : "\(v)" }
    return h > 0 ? "\(h):\(two(m)):\(two(s))" : "\(m):\(two(s))"
}

/// The size of the file at `path` in bytes (1 when unknown), to weight progress.
func fileWeight(_ path: String) -> Double {
    let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)??.doubleValue
    return max(1, size ?? 1)
}

// MARK: - Output files

func writeOutput(_ text: String, to path: String?) throws {
    if let path {
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw DetectOutputError(message: "cannot write \(path)")
        }
    } else {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

struct DetectOutputError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

func makeTemporaryDirectory() -> String {
    let base = FileManager.default.temporaryDirectory.path
    let dir = base + "/parley-detect-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
    try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    return dir
}

/// Writes one file's frames rows to a temporary file while it is analysed, so memory stays
/// flat; `finish` fills in the names (known once the file is open) when rows are copied out.
/// Rows are stored as `track,time_s,prob` and rewritten with the name by ``writeFrames``.
struct FramesWriter {
    private let path: String
    private var file: UnsafeMutablePointer<FILE>?
    private var buffer = ""

    /// Whether the rows file could be created.
    var isOpen: Bool { file != nil }

    init(path: String) {
        self.path = path
        file = fopen(path, "w")
        buffer.reserveCapacity(1 << 16)
    }

    mutating func append(track: Int, frameIndex: Int, probability: Float) {
        buffer += String(track)
        buffer += ","
        buffer += String(frameIndex)
        buffer += ","
        appendFixed(Double(probability), decimals: 4, to: &buffer)
        buffer += "\n"
        if buffer.utf8.count >= 1 << 16 { flush() }
    }

    private mutating func flush() {
        guard let file else { return }
        buffer.withCString { _ = fputs($0, file) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Ends the rows and writes the header line `#names,offset` to a side file.
    mutating func finish(names: [String], offset: Double) {
        flush()
        let meta = names.joined(separator: "\u{1F}") + "\n" + String(offset) + "\n"
        _ = FileManager.default.createFile(atPath: path + ".meta", contents: Data(meta.utf8))
    }

    mutating func close() {
        flush()
        if let file { fclose(file) }
        file = nil
    }
}

/// Concatenates the frames parts, in input order, as `file,time_s,prob`.
func writeFrames(parts: [String], to output: String?) throws {
    let sink: UnsafeMutablePointer<FILE>
    if let output {
        guard let f = fopen(output, "w") else { throw DetectOutputError(message: "cannot write \(output)") }
        sink = f
    } else {
        guard let f = fdopen(STDOUT_FILENO, "w") else { throw DetectOutputError(message: "cannot write standard output") }
        sink = f
    }
    // Standard output's descriptor stays open: only flush it.
    defer { if output != nil { fclose(sink) } else { fflush(sink) } }
    fputs("file,time_s,prob\n", sink)
    for part in parts {
        guard let meta = try? String(contentsOfFile: part + ".meta", encoding: .utf8) else { continue }
        let lines = meta.split(separator: "\n", omittingEmptySubsequences: false)
        let names = lines[0].split(separator: "\u{1F}", omittingEmptySubsequences: false).map { csvField(String($0)) }
        let offset = Double(lines.count > 1 ? lines[1] : "0") ?? 0
        // Frame starts are multiples of 10 ms: two decimals, three when the offset needs them.
        let decimals = (offset * 100).rounded() == offset * 100 ? 2 : 3
        guard let input = fopen(part, "r") else { continue }
        defer { fclose(input) }
        var linePointer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        var out = ""
        out.reserveCapacity(1 << 16)
        while getline(&linePointer, &capacity, input) > 0 {
            let row = String(cString: linePointer!)
            let fields = row.split(separator: ",", maxSplits: 2)
            guard fields.count == 3, let track = Int(fields[0]), let index = Int(fields[1]),
                  track < names.count else { continue }
            out += names[track]
            out += ","
            appendFixed(offset + Double(index) * 0.01, decimals: decimals, to: &out)
            out += ","
            out += fields[2]
            if out.utf8.count >= 1 << 16 {
                out.withCString { _ = fputs($0, sink) }
                out.removeAll(keepingCapacity: true)
            }
        }
        free(linePointer)
        out.withCString { _ = fputs($0, sink) }
    }
}
