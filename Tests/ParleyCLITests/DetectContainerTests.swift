import Foundation
import Testing

// `parley detect` on the recordings people have: AAC in M4A and MP4 (with video), Opus in
// WebM, Matroska with one track per participant. The files are made here with ffmpeg from
// SampleMedia's WAVs, and must give the WAVs' segments.

private let hasFFmpeg = FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg")

/// Runs `ffmpeg -v error -y ARGS`; records an issue and throws when it fails.
private func ffmpeg(_ args: [String]) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    p.arguments = ["-nostdin", "-v", "error", "-y"] + args
    let err = Pipe()
    p.standardError = err
    p.standardOutput = FileHandle.nullDevice
    try p.run()
    let message = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    if p.terminationStatus != 0 {
        Issue.record("ffmpeg \(args.joined(separator: " ")): \(String(decoding: message, as: UTF8.self))")
        throw CocoaError(.fileWriteUnknown)
    }
}

/// The encoder options of each container's test file.
private func encode(_ wav: URL, to out: URL) throws {
    switch out.pathExtension {
    case "mp4":
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-i", wav.path, "-map", "0:v", "-map", "1:a",
                    "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k", "-shortest", out.path])
    case "webm":
        try ffmpeg(["-i", wav.path, "-c:a", "libopus", "-b:a", "64k", out.path])
    case "mkv":
        try ffmpeg(["-i", wav.path, "-c:a", "libvorbis", "-q:a", "6", out.path])
    default:
        try ffmpeg(["-i", wav.path, "-c:a", "aac", "-b:a", "128k", out.path])
    }
}

/// Whether two CSV results hold the same segments, each boundary within 20 ms (two VAD
/// frames; the CSV's millisecond decimals compared with a margin for their rounding).
private func sameSegments(_ a: String, _ b: String) -> Bool {
    guard let x = detectParseSegmentsCSV(a), let y = detectParseSegmentsCSV(b), x.count == y.count, !x.isEmpty else {
        return false
    }
    return zip(x, y).allSatisfy {
        $0.file == $1.file && $0.participant == $1.participant && abs($0.start - $1.start) <= 0.0205
            && abs($0.end - $1.end) <= 0.0205
    }
}

@Test(.enabled(if: detectHasSampleMedia && hasFFmpeg), arguments: ["m4a", "mp4", "webm", "mkv"])
func aContainerGivesTheSegmentsOfItsWAV(ext: String) throws {
    let wav = detectSampleMedia.appendingPathComponent("speech/speech-48k.wav")
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let file = dir.appendingPathComponent("speech-48k.\(ext)")
    try encode(wav, to: file)
    let reference = try runDetectCLI(["detect", "--format", "csv", wav.path])
    let r = try runDetectCLI(["detect", "--format", "csv", file.path])
    #expect(reference.status == 0 && r.status == 0, "\(r.stderr)")
    #expect(sameSegments(r.stdout, reference.stdout), "\(ext):\n\(r.stdout)\nWAV:\n\(reference.stdout)")
    // Standard input, a pipe: copied, then recognised from its bytes like the file.
    let piped = try runDetectCLI(["detect", "--format", "csv", "-"], standardInput: .bytes(Data(contentsOf: file)))
    #expect(piped.status == 0, "\(piped.stderr)")
    #expect(piped.stdout.replacingOccurrences(of: "stdin,stdin,", with: "speech-48k,speech-48k,") == r.stdout)
}

@Test(.enabled(if: detectHasSampleMedia && hasFFmpeg))
func perTrackMakesEachTrackOfAMatroskaFileAParticipant() throws {
    let files = try detectConversationFiles()
    #expect(files.count == 3)
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let titled = dir.appendingPathComponent("call.mkv"), bare = dir.appendingPathComponent("bare.mkv")
    var inputs: [String] = [], maps: [String] = [], titles: [String] = []
    for (k, f) in files.enumerated() {
        inputs += ["-i", f.path]
        maps += ["-map", "\(k):a"]
        titles += ["-metadata:s:a:\(k)", "title=\(f.deletingPathExtension().lastPathComponent)"]
    }
    try ffmpeg(inputs + maps + ["-c:a", "flac"] + titles + [titled.path])
    try ffmpeg(inputs + maps + ["-c:a", "libopus", "-b:a", "64k", bare.path])

    let separate = try runDetectCLI(["detect", "--meeting", "--format", "csv"] + files.map(\.path))
    let tracks = try runDetectCLI(["detect", "--meeting", "--per-track", "--format", "csv", titled.path])
    #expect(separate.status == 0 && tracks.status == 0, "\(tracks.stderr)")
    #expect(tracks.stdout == separate.stdout, "\(tracks.stdout)\nseparately:\n\(separate.stdout)")

    // Without titles: <stem>.track<N>, Opus-coded, within 20 ms of the WAVs.
    let opus = try runDetectCLI(["detect", "--meeting", "--per-track", "--format", "csv", bare.path])
    #expect(opus.status == 0, "\(opus.stderr)")
    var renamed = separate.stdout
    for (k, f) in files.enumerated() {
        renamed = renamed.replacingOccurrences(of: ",\(f.deletingPathExtension().lastPathComponent),",
                                               with: ",bare.track\(k + 1),")
    }
    let sorted = { (text: String) in
        text.split(separator: "\n").enumerated().sorted { a, b in
            a.offset == 0 || (b.offset != 0 && a.element < b.element)
        }.map(\.element).joined(separator: "\n")
    }
    #expect(sameSegments(sorted(opus.stdout), sorted(renamed)), "\(opus.stdout)\nWAVs:\n\(renamed)")

    // As --per-channel does: a file on its own, and in batch mode.
    let single = try runDetectCLI(["detect", "--per-track", "--format", "json", titled.path])
    #expect(single.status == 0)
    for f in files { #expect(single.stdout.contains("\"name\": \"\(f.deletingPathExtension().lastPathComponent)\"")) }
    let out = dir.appendingPathComponent("out")
    let batch = try runDetectCLI(["detect", "--per-track", "--format", "csv", "--output-dir", out.path, titled.path])
    #expect(batch.status == 0, "\(batch.stderr)")
    let written = try String(contentsOf: out.appendingPathComponent(detectDocumentedResultName(titled.path, ext: "csv")),
                             encoding: .utf8)
    #expect(written == (try runDetectCLI(["detect", "--per-track", "--format", "csv", titled.path])).stdout)
    #expect(try runDetectCLI(["detect", "--per-track", "--per-channel", titled.path]).status == 2)

    // A meeting of a manifest, and standard input when it is the file itself.
    let manifest = dir.appendingPathComponent("meetings.csv")
    try "meeting,participant,path,offset_s\nm1,call,\(bare.path),0\n".write(to: manifest, atomically: true, encoding: .utf8)
    let listed = try runDetectCLI(["detect", "--per-track", "--format", "csv", "--meetings-from", manifest.path])
    #expect(listed.status == 0, "\(listed.stderr)")
    #expect(listed.stdout == opus.stdout.replacingOccurrences(of: "meeting,bare.", with: "m1,call."))
    let stdin = try runDetectCLI(["detect", "--per-track", "--format", "csv", "-"], standardInput: .file(bare))
    #expect(stdin.status == 0, "\(stdin.stderr)")
    #expect(stdin.stdout == opus.stdout.replacingOccurrences(of: "meeting,bare.", with: "stdin,stdin."))
    let piped = try runDetectCLI(["detect", "--per-track", "-"], standardInput: .bytes(Data(contentsOf: bare)))
    #expect(piped.status == 1 && piped.stderr.contains("not an audio file"), "\(piped.stderr)")
}

@Test(.enabled(if: detectHasSampleMedia && hasFFmpeg))
func perParticipantM4AFilesMakeTheMeetingOfTheWAVs() throws {
    let files = try detectConversationFiles()
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    var m4a: [String] = []
    for f in files {
        let out = dir.appendingPathComponent(f.deletingPathExtension().lastPathComponent + ".m4a")
        try encode(f, to: out)
        m4a.append(out.path)
    }
    let wavs = try runDetectCLI(["detect", "--meeting", "--format", "csv"] + files.map(\.path))
    let r = try runDetectCLI(["detect", "--meeting", "--format", "csv"] + m4a)
    #expect(r.status == 0, "\(r.stderr)")
    #expect(sameSegments(r.stdout, wavs.stdout), "\(r.stdout)\nWAVs:\n\(wavs.stdout)")
}

@Test(.enabled(if: detectHasSampleMedia && hasFFmpeg))
func badContainersGetTypedErrorsAndTheOthersAreStillProcessed() throws {
    let wav = detectSampleMedia.appendingPathComponent("speech/speech-48k.wav")
    let dir = try detectTemporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let good = dir.appendingPathComponent("good.m4a"), whole = dir.appendingPathComponent("whole.webm")
    try encode(wav, to: good)
    try encode(wav, to: whole)
    let garbage = dir.appendingPathComponent("garbage.m4a")
    try Data(String(repeating: "not a recording at all ", count: 400).utf8).write(to: garbage)
    let cut = dir.appendingPathComponent("cut.webm")
    let bytes = try Data(contentsOf: whole)
    try bytes.prefix(bytes.count / 2).write(to: cut)
    let video = dir.appendingPathComponent("video.mp4")
    try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-t", "2", "-c:v", "libx264",
                "-pix_fmt", "yuv420p", video.path])
    let empty = dir.appendingPathComponent("empty.mkv")
    try Data().write(to: empty)

    let r = try runDetectCLI(["detect", "--format", "csv", garbage.path, cut.path, video.path, empty.path, good.path])
    #expect(r.status == 1)
    let lines = r.stderr.split(separator: "\n")
    func message(_ url: URL) -> String { lines.first { $0.contains(url.path) }.map(String.init) ?? "" }
    #expect(message(garbage).contains("unsupported or unrecognised audio format"), "\(r.stderr)")
    #expect(message(cut).contains("truncated"), "\(r.stderr)")
    #expect(message(video).contains("no audio stream"), "\(r.stderr)")
    #expect(message(empty).contains("empty file"), "\(r.stderr)")
    let rows = try #require(detectParseSegmentsCSV(r.stdout))
    #expect(Set(rows.map(\.file)).isSubset(of: ["cut", "good"]) && rows.contains { $0.file == "good" })
    let alone = try runDetectCLI(["detect", "--format", "csv", good.path])
    #expect(rows.filter { $0.file == "good" }.count == detectParseSegmentsCSV(alone.stdout)?.count)
}
