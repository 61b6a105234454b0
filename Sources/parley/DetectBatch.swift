// `parley detect` over many recordings: the input list (FILE arguments, `--files-from`),
// `--shard`, and `--output-dir`, where every result is written as its file completes and
// then dropped, so memory does not grow with the length of the list.

import Foundation
import ParleyCall
import ParleyCore
import ParleyMedia
import ParleyDetect
import ParleyVoice

/// One input: a path, where it starts on the meeting's timeline, and whether it is standard
/// input (a FILE argument `-`; a `-` inside a list is a file of that name).
struct DetectInput: Sendable {
    var path: String
    var offset: Double = 0
    var isStandardInput = false
}

/// The 64-bit FNV-1a hash of `text`'s UTF-8 bytes: names results and splits shards, the
/// same on every machine.
func fnv1a64(_ text: String) -> UInt64 {
    var h: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in text.utf8 {
        h ^= UInt64(b)
        h = h &* 0x0000_0100_0000_01b3
    }
    return h
}

/// `--shard K/N`: the inputs whose path hashes (``fnv1a64(_:)``) to K-1 modulo N.
struct DetectShard: Sendable, Equatable {
    /// K, from 1.
    let index: Int
    /// N.
    let count: Int

    /// Parses `K/N` (decimal digits only, 1 <= K <= N); nil for anything else.
    init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2,
              parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
              let k = Int(parts[0]), let n = Int(parts[1]), n >= 1, k >= 1, k <= n else { return nil }
        index = k
        count = n
    }

    func contains(_ path: String) -> Bool {
        fnv1a64(path) % UInt64(count) == UInt64(index - 1)
    }
}

// MARK: - Result names

extension DetectFormat {
    /// The extension of a result file in `--output-dir`.
    var resultExtension: String {
        switch self {
        case .summary: "txt"
        case .json: "json"
        case .csv: "csv"
        case .rttm: "rttm"
        case .audacity: "labels.txt"
        case .frames: "frames.csv"
        }
    }
}

/// The longest encoded path kept in a result's name, in bytes.
let detectResultNameLimit = 160

/// The name of `path`'s result in `--output-dir`: the path with `%` written `%25`, `/` `%2F`,
/// bytes below 0x20 and 0x7F as `%XX`, only its last 160 bytes when longer and a leading `.`
/// as `%2E`; then `~`, ``fnv1a64(_:)`` of the path in 16 hex digits, `.` and the format's
/// extension. The encoding alone is one-to-one; the hash separates paths whose shortened
/// encodings meet. Temporary files (`.parley-*`) and `failed.tsv` never take such a name.
func detectResultName(_ path: String, format: DetectFormat) -> String {
    let hex = Array("0123456789ABCDEF".utf8)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(path.utf8.count + 16)
    for b in path.utf8 {
        if b == UInt8(ascii: "/") || b == UInt8(ascii: "%") || b < 0x20 || b == 0x7F {
            bytes += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]]
        } else {
            bytes.append(b)
        }
    }
    if bytes.count > detectResultNameLimit {
        var cut = bytes.count - detectResultNameLimit
        // Not inside a %XX escape, nor inside a UTF-8 sequence.
        if bytes[cut - 1] == UInt8(ascii: "%") { cut += 2 } else if cut >= 2 && bytes[cut - 2] == UInt8(ascii: "%") { cut += 1 }
        while cut < bytes.count && bytes[cut] & 0xC0 == 0x80 { cut += 1 }
        bytes.removeFirst(cut)
    }
    if bytes.first == UInt8(ascii: ".") {
        bytes.replaceSubrange(0..<1, with: Array("%2E".utf8))
    }
    var h = String(fnv1a64(path), radix: 16)
    h = String(repeating: "0", count: 16 - h.count) + h
    return String(decoding: bytes, as: UTF8.self) + "~" + h + "." + format.resultExtension
}

// MARK: - The list

/// Reads `--files-from` one name at a time (memory: the longest name).
final class DetectListReader {
    let path: String
    private let file: UnsafeMutablePointer<FILE>
    private let delimiter: Int32
    private var line: UnsafeMutablePointer<CChar>?
    private var capacity = 0

    /// Opens the list at `path` (`-`: standard input).
    init(path: String, nullSeparated: Bool) throws(DetectOutputError) {
        self.path = path
        delimiter = nullSeparated ? 0 : 10
        if path == "-" {
            guard let f = fdopen(dup(STDIN_FILENO), "r") else {
                throw DetectOutputError(message: "cannot read the list from standard input")
            }
            file = f
        } else {
            guard let f = fopen(path, "r") else {
                throw DetectOutputError(message: "cannot read the list \(path): \(Errno.current.description)")
            }
            file = f
        }
    }

    /// The next non-empty name, nil at the end.
    func next() throws(DetectOutputError) -> String? {
        while true {
            let n = getdelim(&line, &capacity, delimiter, file)
            if n < 0 {
                if ferror(file) != 0 {
                    throw DetectOutputError(message: "cannot read the list \(path): \(Errno.current.description)")
                }
                return nil
            }
            var length = n
            if length > 0 && Int32(UInt8(bitPattern: line![length - 1])) == delimiter { length -= 1 }
            if length == 0 { continue }
            return line!.withMemoryRebound(to: UInt8.self, capacity: length) {
                String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
            }
        }
    }

    deinit {
        free(line)
        fclose(file)
    }
}

/// One result of a batch run: a file on its own, or a meeting of `--meetings-from`.
struct DetectJob: Sendable {
    /// What names the result, splits shards and keys failed.tsv: the path, or the meeting's name.
    var key: String
    /// The recording's name in the output: the file's stem, or the meeting's name.
    var recordingName: String
    /// The files to analyse, one per participant.
    var requests: [OfflineDetectionRequest]
    var isMeeting: Bool

    /// A file on its own, its participant named after its stem.
    init(_ input: DetectInput, invocation: DetectInvocation) {
        key = input.path
        recordingName = fileStem(input.path)
        requests = [OfflineDetectionRequest(
            path: input.path, participant: fileStem(input.path), offset: input.offset,
            channelMode: invocation.channelMode,
            fileDescriptor: input.isStandardInput ? STDIN_FILENO : nil,
            rawFormat: input.isStandardInput ? invocation.inputFormat : nil)]
        isMeeting = false
    }

    /// A meeting: one request per participant, named as the manifest says, at its offset (a
    /// Janus recording's plus its recorded start).
    init(_ meeting: DetectMeeting, invocation: DetectInvocation) {
        key = meeting.name
        recordingName = meeting.name
        // Janus recordings are placed on the room's timeline by their recorded starts.
        let recordings = janusRecordingStarts(meeting.participants.map(\.path))
        requests = zip(meeting.participants, recordings).map { p, recording in
            OfflineDetectionRequest(path: p.path, participant: p.name, offset: p.offset + (recording?.start ?? 0),
                                    channelMode: invocation.channelMode)
        }
        isMeeting = true
    }
}

/// Hands out the inputs, FILE arguments first and then the list as it is read, to the jobs;
/// keeps only those of the shard.
final class DetectInputQueue: @unchecked Sendable {
    private let lock = NSLock()
    private let arguments: [DetectInput]
    private var nextArgument = 0
    private var list: DetectListReader?
    private let shard: DetectShard?
    /// Why reading the list stopped early, if it did.
    private(set) var listError: String?

    init(arguments: [DetectInput], list: DetectListReader?, shard: DetectShard?) {
        self.arguments = arguments
        self.list = list
        self.shard = shard
    }

    func next() -> DetectInput? {
        lock.lock(); defer { lock.unlock() }
        while true {
            let input: DetectInput
            if nextArgument < arguments.count {
                input = arguments[nextArgument]
                nextArgument += 1
            } else if let reader = list {
                do throws(DetectOutputError) {
                    guard let name = try reader.next() else { list = nil; return nil }
                    input = DetectInput(path: name)
                } catch {
                    listError = error.message
                    list = nil
                    return nil
                }
            } else {
                return nil
            }
            if shard?.contains(input.path) ?? true { return input }
        }
    }

    /// Every input at once (for the modes whose output needs them all: paths only).
    func all() -> [DetectInput] {
        var out: [DetectInput] = []
        while let i = next() { out.append(i) }
        return out
    }
}

/// The jobs of an `--output-dir` run: the inputs' files one by one, or the meetings.
final class DetectJobQueue: @unchecked Sendable {
    private let inputs: DetectInputQueue?
    private let lock = NSLock()
    private var meetings: ArraySlice<DetectMeeting>
    private let invocation: DetectInvocation

    /// One job per input of `inputs`.
    init(inputs: DetectInputQueue, invocation: DetectInvocation) {
        self.inputs = inputs
        meetings = []
        self.invocation = invocation
    }

    /// One job per meeting (already cut to the shard).
    init(meetings: [DetectMeeting], invocation: DetectInvocation) {
        inputs = nil
        self.meetings = meetings[...]
        self.invocation = invocation
    }

    var listError: String? { inputs?.listError }

    func next() -> DetectJob? {
        if let inputs { return inputs.next().map { DetectJob($0, invocation: invocation) } }
        lock.lock(); defer { lock.unlock() }
        return meetings.popFirst().map { DetectJob($0, invocation: invocation) }
    }
}

/// How many inputs of the shard `arguments` and the list at `listPath` hold, when the list
/// can be read twice (a regular file); nil otherwise. For the progress bar only.
func countDetectInputs(arguments: [DetectInput], listPath: String?, nullSeparated: Bool,
                       shard: DetectShard?) -> Int? {
    var n = arguments.filter { shard?.contains($0.path) ?? true }.count
    guard let listPath else { return n }
    var st = stat()
    guard listPath != "-", stat(listPath, &st) == 0, st.st_mode & S_IFMT == S_IFREG,
          let reader = try? DetectListReader(path: listPath, nullSeparated: nullSeparated) else { return nil }
    while let name = try? reader.next() {
        if shard?.contains(name) ?? true { n += 1 }
    }
    return n
}

// MARK: - The summary line

/// Counts of a batch run, for the last line on stderr: of files, or of meetings with
/// `--meetings-from`.
struct DetectBatchCounts: Sendable {
    var ok = 0, partial = 0, failed = 0, skipped = 0
    /// Seconds of audio analysed (partial files count what was read).
    var audioSeconds = 0.0
    /// What is counted: "file" or "meeting".
    var noun = "file"

    /// Counts one result from its files' outcomes: ok when every file was read whole, failed
    /// when none could be analysed, else partial.
    mutating func add(_ outcomes: [DetectFileOutcome]) {
        var analysed = 0, complete = 0
        for case let .analysed(a) in outcomes {
            analysed += 1
            if a.isComplete { complete += 1 }
            audioSeconds += a.duration
        }
        if analysed == 0 { failed += 1 } else if complete == outcomes.count { ok += 1 } else { partial += 1 }
    }

    /// `parley detect: 15 files: 12 ok, 1 partial, 2 failed, 0 skipped; 0.017 h of audio in
    /// 4.2 s (14.6x real time)`.
    func line(wallSeconds: Double) -> String {
        let total = ok + partial + failed + skipped
        var s = "parley detect: \(total) \(noun)\(total == 1 ? "" : "s"): \(ok) ok, \(partial) partial, "
            + "\(failed) failed, \(skipped) skipped; " + fixed(audioSeconds / 3600, 3) + " h of audio in "
            + fixed(wallSeconds, 1) + " s"
        if wallSeconds > 0 && audioSeconds > 0 {
            let speed = audioSeconds / wallSeconds
            s += " (" + fixed(speed, speed < 10 ? 1 : 0) + "x real time)"
        }
        return s
    }
}

// MARK: - --output-dir

/// A sanitised host name for temporary names: letters, digits and dots, at most 32.
private func detectHostTag() -> String {
    var buf = [CChar](repeating: 0, count: 256)
    let raw = gethostname(&buf, buf.count) == 0
        ? String(decoding: buf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self) : "host"
    let tag = String(raw.unicodeScalars.map { s -> Character in
        (s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s) || s == ".")) ? Character(s) : "_"
    }.prefix(32))
    return tag.isEmpty ? "host" : tag
}

/// Writes `text` to `path`, flushed to the disk before it returns.
private func writeSynced(_ text: String, to path: String) throws(DetectOutputError) {
    guard let f = fopen(path, "w") else {
        throw DetectOutputError(message: "cannot write \(path): \(Errno.current.description)")
    }
    let ok = text.utf8.withContiguousStorageIfAvailable { b in
        b.isEmpty || fwrite(b.baseAddress, 1, b.count, f) == b.count
    } ?? (fputs(text, f) >= 0)
    let flushed = fflush(f) == 0 && fsync(fileno(f)) == 0
    let code = Errno.current
    fclose(f)
    guard ok && flushed else { throw DetectOutputError(message: "cannot write \(path): \(code)") }
}

/// Flushes the file at `path` to the disk.
private func syncFile(_ path: String) throws(DetectOutputError) {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw DetectOutputError(message: "cannot open \(path): \(Errno.current.description)") }
    defer { close(fd) }
    guard fsync(fd) == 0 else { throw DetectOutputError(message: "cannot sync \(path): \(Errno.current.description)") }
}

/// `path<TAB>error` fields: backslash, tab, newline and CR escaped.
func tsvEscape(_ s: String) -> String {
    guard s.contains(where: { $0 == "\\" || $0 == "\t" || $0 == "\n" || $0 == "\r" }) else { return s }
    var out = ""
    for c in s.unicodeScalars {
        if let escaped = backslashEscape(c) { out += escaped } else { out.unicodeScalars.append(c) }
    }
    return out
}

func tsvUnescape(_ s: Substring) -> String {
    guard s.contains("\\") else { return String(s) }
    var out = ""
    var escaped = false
    for c in s.unicodeScalars {
        if escaped {
            switch c {
            case "t": out += "\t"
            case "n": out += "\n"
            case "r": out += "\r"
            default: out.unicodeScalars.append(c)
            }
            escaped = false
        } else if c == "\\" {
            escaped = true
        } else {
            out.unicodeScalars.append(c)
        }
    }
    return out
}

/// `DIR/failed.tsv`: every file that failed or was only partly read, by path. Entries of
/// earlier runs (or of other shards writing the same DIR) are kept until their file succeeds;
/// each rewrite merges with what is on disk under an exclusive lock on DIR, writes a
/// temporary file and renames it. Rewritten at once when a result depends on it (see
/// ``fail(_:_:durable:)`` and ``succeed(_:)``), else at most once a second, and at the end.
final class DetectFailedList: @unchecked Sendable {
    private let lock = NSLock()
    private let directory: String
    private let path: String
    private let temporaryPath: String
    /// Paths listed when the run started (their success must remove them).
    private let listedBefore: Set<String>
    private var failures: [String: String] = [:]
    private var cleared: Set<String> = []
    private var dirty = false
    private var lastWrite = Date.distantPast
    private(set) var writeError: String?

    init(directory: String, temporaryPath: String) {
        self.directory = directory
        path = directory + "/failed.tsv"
        self.temporaryPath = temporaryPath
        listedBefore = Set(DetectFailedList.read(directory + "/failed.tsv").keys)
    }

    /// The entries of the failed list at `path` (none when it is absent or unreadable).
    static func read(_ path: String) -> [String: String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [:] }
        var out: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let tab = line.firstIndex(of: "\t") else { continue }
            out[tsvUnescape(line[..<tab])] = tsvUnescape(line[line.index(after: tab)...])
        }
        return out
    }

    /// Lists `path` with `error`. With `durable`, on disk before this returns: a file that
    /// gets a result (partly read) must be listed before its result appears, since
    /// `--skip-existing` will not look at it again; a file without a result is retried by the
    /// next run, so its entry may wait for the next rewrite.
    func fail(_ path: String, _ error: String, durable: Bool = false) {
        lock.lock(); defer { lock.unlock() }
        failures[path] = error
        cleared.remove(path)
        dirty = true
        if durable || Date().timeIntervalSince(lastWrite) >= 1 { rewriteLocked() }
    }

    /// Unlists `path`. An entry of an earlier run goes from the disk before this returns (call
    /// it before the result appears: a run killed in between leaves neither, and the file is
    /// analysed again).
    func succeed(_ path: String) {
        lock.lock(); defer { lock.unlock() }
        if failures.removeValue(forKey: path) != nil { dirty = true }
        if listedBefore.contains(path) && !cleared.contains(path) {
            cleared.insert(path)
            rewriteLocked()
        } else if dirty && Date().timeIntervalSince(lastWrite) >= 1 {
            rewriteLocked()
        }
    }

    /// The last rewrite, at the end of the run (also when nothing changed: the file exists
    /// after every complete run).
    func finish() {
        lock.lock(); defer { lock.unlock() }
        rewriteLocked()
    }

    private func rewriteLocked() {
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 { flock(dirFD, LOCK_EX) }
        defer { if dirFD >= 0 { flock(dirFD, LOCK_UN); close(dirFD) } }
        var entries = DetectFailedList.read(path)
        for p in cleared { entries.removeValue(forKey: p) }
        for (p, e) in failures { entries[p] = e }
        var text = ""
        for (p, e) in entries.sorted(by: { $0.key < $1.key }) {
            text += tsvEscape(p) + "\t" + tsvEscape(e) + "\n"
        }
        do throws(DetectOutputError) {
            try writeSynced(text, to: temporaryPath)
            guard rename(temporaryPath, path) == 0 else {
                throw DetectOutputError(message: "cannot rename \(temporaryPath) to \(path): \(Errno.current.description)")
            }
            dirty = false
        } catch {
            unlink(temporaryPath)
            writeError = error.message
        }
        lastWrite = Date()
    }
}

/// The text of a result of `format` (not `frames`): what `parley detect --format F` prints.
func detectResultText(_ recordings: [DetectRecording], format: DetectFormat, model: VADModel) -> String {
    switch format {
    case .summary: summaryText(recordings)
    case .json: jsonText(recordings, version: parleyVersion, model: model)
    case .csv: csvText(recordings)
    case .rttm: rttmText(recordings)
    case .audacity: audacityTracks(recordings).map(\.text).joined()
    case .frames: ""
    }
}

/// The state shared by the jobs of an `--output-dir` run.
private final class DetectBatchRun: @unchecked Sendable {
    let invocation: DetectInvocation
    let directory: String
    let failed: DetectFailedList
    let progress: DetectProgress
    private let tempPrefix: String
    private let lock = NSLock()
    private var sequence = 0
    private(set) var counts = DetectBatchCounts()

    init(invocation: DetectInvocation, directory: String, tempPrefix: String, progress: DetectProgress) {
        self.invocation = invocation
        self.directory = directory
        self.tempPrefix = tempPrefix
        self.progress = progress
        failed = DetectFailedList(directory: directory, temporaryPath: directory + "/" + tempPrefix + "failed.part")
    }

    /// A fresh temporary path in DIR, `.parley-<host>-<pid>-<n>.part`.
    func temporaryPath() -> String {
        lock.lock(); defer { lock.unlock() }
        sequence += 1
        return directory + "/" + tempPrefix + "\(sequence).part"
    }

    func count(_ update: (inout DetectBatchCounts) -> Void) {
        lock.lock(); defer { lock.unlock() }
        update(&counts)
    }

    /// Analyses one job's files and writes its result; `slot` is the worker's index (progress).
    func process(_ job: DetectJob, slot: Int) {
        var audioSeconds = 0.0
        defer { progress.finish(slot, audioSeconds: audioSeconds) }
        let format = invocation.format
        let final = directory + "/" + detectResultName(job.key, format: format)
        if invocation.skipExisting {
            var st = stat()
            if stat(final, &st) == 0 && st.st_mode & S_IFMT == S_IFREG {
                count { $0.skipped += 1 }
                return
            }
        }
        let rows = format == .frames ? job.requests.map { _ in temporaryPath() } : []
        defer { for r in rows { unlink(r); unlink(r + ".meta") } }
        var outcomes: [DetectFileOutcome] = []
        var framesOpened = true
        let parts = Double(job.requests.count)
        for (i, request) in job.requests.enumerated() {
            var frames = rows.isEmpty ? nil : FramesWriter(path: rows[i])
            do throws(OfflineDetectionError) {
                let analysis = try invocation.detector.analyze(
                    request,
                    onFrame: { track, index, probability in
                        frames?.append(track: track, frameIndex: index, probability: probability)
                    },
                    onProgress: { read, expected in
                        guard let expected, expected > 0 else { return }
                        self.progress.update(slot, fraction: (Double(i) + Double(read) / Double(expected)) / parts)
                    })
                frames?.finish(names: analysis.tracks.map { request.channelMode == .mixDown ? request.participant : $0.name },
                               offset: request.offset)
                outcomes.append(.analysed(analysis))
            } catch {
                outcomes.append(.failed(path: request.path, error: error))
            }
            framesOpened = framesOpened && (frames?.isOpen ?? true)
            frames?.close()
        }

        // What failed.tsv says: each file's error or failed issues, named by path in a meeting.
        var problems: [String] = []
        for outcome in outcomes {
            let problem: String
            switch outcome {
            case let .failed(path, error):
                progress.message("parley detect: \(job.isMeeting ? "meeting \(job.key): " : "")\(path): \(error.message)")
                problem = error.message
            case let .analysed(a):
                for issue in a.issues {
                    progress.message("parley detect: \(job.isMeeting ? "meeting \(job.key): " : "")\(a.request.path): \(issue)")
                }
                guard !a.isComplete else { continue }
                problem = a.issues.filter(\.isFailure).map(\.description).joined(separator: "; ")
            }
            problems.append(job.isMeeting ? outcome.path + ": " + problem : problem)
        }
        audioSeconds = outcomes.reduce(0.0) { sum, o in
            if case let .analysed(a) = o { sum + a.duration } else { sum }
        }
        guard outcomes.contains(where: { if case .analysed = $0 { true } else { false } }) else {
            failed.fail(job.key, problems.joined(separator: "; "))
            count { $0.add(outcomes) }
            return
        }

        let temp = temporaryPath()
        do throws(DetectOutputError) {
            if !rows.isEmpty {
                guard framesOpened else { throw DetectOutputError(message: "cannot write \(rows[0])") }
                do { try writeFrames(parts: rows, to: temp) } catch {
                    throw DetectOutputError(message: "\(error)")
                }
                try syncFile(temp)
            } else {
                let recording = DetectRecording(name: job.recordingName, files: outcomes)
                try writeSynced(detectResultText([recording], format: format, model: invocation.model), to: temp)
            }
            // failed.tsv first, then the result (see DetectFailedList).
            if problems.isEmpty {
                failed.succeed(job.key)
            } else {
                failed.fail(job.key, "partial: " + problems.joined(separator: "; "), durable: true)
            }
            guard rename(temp, final) == 0 else {
                throw DetectOutputError(message: "cannot rename \(temp) to \(final): \(Errno.current.description)")
            }
        } catch {
            unlink(temp)
            progress.message("parley detect: \(job.key): cannot write its result: \(error.message)")
            failed.fail(job.key, "cannot write its result: \(error.message)")
            count { $0.failed += 1; $0.audioSeconds += audioSeconds }
            return
        }
        count { $0.add(outcomes) }
    }
}

/// Removes the temporary files that runs on this host left in `directory` when they were
/// killed (`.parley-<host>-<pid>-*` of processes that no longer exist).
private func removeStaleTemporaryFiles(in directory: String, host: String) {
    guard let dir = opendir(directory) else { return }
    defer { closedir(dir) }
    let prefix = ".parley-\(host)-"
    while let entry = readdir(dir) {
        let name = withUnsafePointer(to: &entry.pointee.d_name) {
            String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self))
        }
        guard name.hasPrefix(prefix) else { continue }
        let rest = name.dropFirst(prefix.count)
        guard let dash = rest.firstIndex(of: "-"), let pid = Int32(rest[..<dash]), pid > 0 else { continue }
        if case .failure(let e) = valueOrErrno(retryOnInterrupt: false, { kill(pid, 0) }), e == .noSuchProcess {
            unlink(directory + "/" + name)
        }
    }
}

/// `parley detect --output-dir DIR ...`: the inputs' files one by one, or `meetings` (of
/// `--meetings-from`, already cut to the shard).
func runDetectBatch(_ inv: DetectInvocation, list: DetectListReader?, meetings: [DetectMeeting]?) -> Int32 {
    let start = Date()
    let directory = inv.outputDirectory!
    do {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    } catch {
        printError("parley detect: cannot create the output directory \(directory): \(error.localizedDescription)")
        return ExitStatus.failure
    }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
        printError("parley detect: \(directory) is not a directory")
        return ExitStatus.failure
    }
    let host = detectHostTag()
    removeStaleTemporaryFiles(in: directory, host: host)

    let showProgress = isatty(STDERR_FILENO) == 1
    let queue: DetectJobQueue
    let total: Int?
    let workers: Int
    if let meetings {
        queue = DetectJobQueue(meetings: meetings, invocation: inv)
        total = meetings.count
        workers = max(1, min(inv.jobs, meetings.count))
    } else {
        let arguments = inv.inputs.map { DetectInput(path: $0.path, offset: $0.offset, isStandardInput: $0.path == "-") }
        queue = DetectJobQueue(inputs: DetectInputQueue(arguments: arguments, list: list, shard: inv.shard), invocation: inv)
        total = showProgress
            ? countDetectInputs(arguments: arguments, listPath: inv.filesFrom, nullSeparated: inv.nullSeparated, shard: inv.shard)
            : nil
        workers = list == nil ? max(1, min(inv.jobs, arguments.count)) : inv.jobs
    }
    let noun = meetings == nil ? "file" : "meeting"
    let progress = DetectProgress(total: total, enabled: showProgress, noun: noun)
    let run = DetectBatchRun(invocation: inv, directory: directory, tempPrefix: ".parley-\(host)-\(getpid())-",
                             progress: progress)
    run.count { $0.noun = noun }

    let group = DispatchGroup()
    for slot in 0..<workers {
        group.enter()
        Thread.detachNewThread {
            while let job = queue.next() { run.process(job, slot: slot) }
            group.leave()
        }
    }
    group.wait()
    run.failed.finish()
    progress.stop()

    var status = ExitStatus.success
    if let e = queue.listError {
        printError("parley detect: \(e)")
        status = ExitStatus.failure
    }
    if let e = run.failed.writeError {
        printError("parley detect: cannot update \(directory)/failed.tsv: \(e)")
        status = ExitStatus.failure
    }
    let counts = run.counts
    if counts.failed + counts.partial > 0 { status = ExitStatus.failure }
    printError(counts.line(wallSeconds: Date().timeIntervalSince(start)))
    return status
}
