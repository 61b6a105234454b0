// `parley detect --meetings-from MANIFEST.csv`: meetings of one file per participant, listed
// in a CSV manifest with the header `meeting,participant,path,offset_s`.

import Foundation

/// One meeting of a manifest: its name and its participants' files, in manifest order.
struct DetectMeeting: Sendable, Equatable {
    /// One row: who, which file, where the file starts on the meeting's timeline.
    struct Participant: Sendable, Equatable {
        var name: String
        var path: String
        var offset: Double
    }

    var name: String
    var participants: [Participant]
}

/// Reads a meetings manifest: CSV (RFC 4180: fields in double quotes may hold commas, quotes
/// written twice and line breaks; CRLF or LF line ends; a UTF-8 byte-order mark is skipped)
/// whose header names the columns `meeting`, `participant`, `path` and `offset_s`, in any
/// order (other columns are ignored). Rows of one meeting need not be adjacent; meetings come
/// out in the order their first row appears. An empty `participant` takes the file's stem
/// (made unique within the meeting with `-2`, `-3`...), an empty `offset_s` is 0. Blank lines
/// are skipped. Errors name the manifest and the line.
func readMeetingsManifest(path: String) throws(DetectOutputError) -> [DetectMeeting] {
    let data: Data
    if path == "-" {
        data = FileHandle.standardInput.readDataToEndOfFile()
    } else {
        guard let d = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
            throw DetectOutputError(message: "the manifest \(path) \(reason)")
        }
        data = d
    }
    let name = path == "-" ? "the manifest on standard input" : "the manifest \(path)"
    return try parseMeetingsManifest(Array(data), name: name)
}

/// Parses the bytes of a meetings manifest (see ``readMeetingsManifest(path:)``); `name`
/// stands for the manifest in error messages.
func parseMeetingsManifest(_ bytes: [UInt8], name: String) throws(DetectOutputError) -> [DetectMeeting] {
    var reader = CSVRecordReader(bytes: bytes)
    let required = ["meeting", "participant", "path", "offset_s"]
    guard let header = try reader.next(name: name) else {
        throw DetectOutputError(message: "\(name) is empty: it needs the header \(required.joined(separator: ","))")
    }
    var column: [String: Int] = [:]
    for (i, field) in header.fields.enumerated() {
        let key = field.trimmingCharacters(in: .whitespaces)
        if column[key] == nil { column[key] = i }
    }
    let missing = required.filter { column[$0] == nil }
    guard missing.isEmpty else {
        throw DetectOutputError(message: "\(name), line 1: the header must name the columns \(required.joined(separator: ",")) "
                                + "(missing: \(missing.joined(separator: ", ")))")
    }
    let (mc, pc, fc, oc) = (column["meeting"]!, column["participant"]!, column["path"]!, column["offset_s"]!)
    let width = max(mc, pc, fc, oc) + 1

    var order: [String] = []
    var rows: [String: [(line: Int, participant: String, path: String, offset: Double)]] = [:]
    while let record = try reader.next(name: name) {
        let f = record.fields
        if f.count == 1 && f[0].isEmpty { continue }
        guard f.count >= width else {
            throw DetectOutputError(message: "\(name), line \(record.line): \(f.count) field\(f.count == 1 ? "" : "s"), "
                                    + "the header needs at least \(width)")
        }
        let meeting = f[mc], path = f[fc]
        guard !meeting.isEmpty else { throw DetectOutputError(message: "\(name), line \(record.line): the meeting is empty") }
        guard !path.isEmpty else { throw DetectOutputError(message: "\(name), line \(record.line): the path is empty") }
        let offsetText = f[oc].trimmingCharacters(in: .whitespaces)
        var offset = 0.0
        if !offsetText.isEmpty {
            guard let v = Double(offsetText), v.isFinite, v >= 0 else {
                throw DetectOutputError(message: "\(name), line \(record.line): offset_s '\(f[oc])' is not a number of seconds >= 0")
            }
            offset = v
        }
        if rows[meeting] == nil { order.append(meeting) }
        rows[meeting, default: []].append((record.line, f[pc], path, offset))
    }

    var meetings: [DetectMeeting] = []
    meetings.reserveCapacity(order.count)
    for meeting in order {
        let list = rows[meeting]!
        // Named participants keep their names; unnamed ones take their stems, made unique.
        var used = Set(list.map(\.participant).filter { !$0.isEmpty })
        var participants: [DetectMeeting.Participant] = []
        var seen: [String: Int] = [:]
        for row in list {
            var participant = row.participant
            if participant.isEmpty {
                let stem = fileStem(row.path)
                participant = stem
                var k = 1
                while used.contains(participant) { k += 1; participant = stem + "-\(k)" }
                used.insert(participant)
            }
            if let first = seen[participant] {
                throw DetectOutputError(message: "\(name), line \(row.line): meeting '\(meeting)' names participant "
                                        + "'\(participant)' twice (first on line \(first))")
            }
            seen[participant] = row.line
            participants.append(.init(name: participant, path: row.path, offset: row.offset))
        }
        meetings.append(DetectMeeting(name: meeting, participants: participants))
    }
    return meetings
}

/// Splits CSV bytes into records (RFC 4180), remembering the line each starts on.
struct CSVRecordReader {
    private let bytes: [UInt8]
    private var position = 0
    private var line = 1

    init(bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { position = 3 }
    }

    /// The next record, nil at the end.
    mutating func next(name: String) throws(DetectOutputError) -> (line: Int, fields: [String])? {
        guard position < bytes.count else { return nil }
        let startLine = line
        var fields: [String] = []
        var field: [UInt8] = []
        var quoted = false
        var wasQuoted = false
        while position < bytes.count {
            let b = bytes[position]
            position += 1
            if quoted {
                if b == UInt8(ascii: "\"") {
                    if position < bytes.count && bytes[position] == UInt8(ascii: "\"") {
                        field.append(b)
                        position += 1
                    } else {
                        quoted = false
                    }
                } else {
                    if b == 10 { line += 1 }
                    field.append(b)
                }
                continue
            }
            switch b {
            case UInt8(ascii: ","):
                fields.append(String(decoding: field, as: UTF8.self))
                field.removeAll(keepingCapacity: true)
                wasQuoted = false
            case UInt8(ascii: "\""):
                guard field.isEmpty && !wasQuoted else {
                    throw DetectOutputError(message: "\(name), line \(line): a double quote inside an unquoted field "
                                            + "(quote the whole field and write the quote twice)")
                }
                quoted = true
                wasQuoted = true
            case 10:
                line += 1
                if field.last == 13 && !wasQuoted { field.removeLast() }
                fields.append(String(decoding: field, as: UTF8.self))
                return (startLine, fields)
            case 13 where wasQuoted:
                break
            default:
                if wasQuoted {
                    throw DetectOutputError(message: "\(name), line \(line): text after the closing quote of a field")
                }
                field.append(b)
            }
        }
        if quoted { throw DetectOutputError(message: "\(name), line \(startLine): a quoted field is not closed") }
        if field.last == 13 && !wasQuoted { field.removeLast() }
        fields.append(String(decoding: field, as: UTF8.self))
        return (startLine, fields)
    }
}
