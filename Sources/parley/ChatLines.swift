// The chat of `parley join --chat` and `parley call --transport webrtc --chat`: the lines sent
// (standard input's or a file's) and the messages shown, printed and written to --events.

import Foundation
import ParleyCore
import ParleyWebRTC

/// The newest chat messages, as the grid shows them under the participants (the newest last).
final class ChatShown: Sendable {
    /// How many are shown.
    static let count = 8
    let lines = Locked<[String]>([])

    func add(_ line: String) {
        lines.withLock { list in
            list.append(line.replacingOccurrences(of: "\n", with: " "))
            if list.count > Self.count { list.removeFirst(list.count - Self.count) }
        }
    }

    /// The grid's footer: the prompt and the newest messages.
    func footer(leaving: String) -> String {
        "\nChat (type a line and Enter to send; Ctrl-C \(leaving)):\n" + lines.withLock { $0.map { "  " + $0 + "\n" }.joined() }
    }
}

/// One chat message, at media time `t`: written to `--events` as a `message` line, printed
/// with `--no-tui`, and kept among the newest shown on the grid.
func showChatMessage(_ m: ChatMessage, at t: Double, eventsFile: FileHandle?, showGrid: Bool, shown: ChatShown) {
    let line = "\(m.displayName)\(m.isOwn ? " (me)" : ""): \(m.text)"
    shown.add(line)
    if let h = eventsFile {
        let time = Date.ISO8601FormatStyle(includingFractionalSeconds: true).format(m.time)
        h.write(Data(("{\"type\": \"message\", \"participant\": \(jsonString(m.displayName)), \"text\": \(jsonString(m.text)), "
            + "\"t\": \(String(format: "%.3f", t)), \"time\": \(jsonString(time)), \"own\": \(m.isOwn)}\n").utf8))
    }
    if !showGrid {
        FileHandle.standardOutput.write(Data((String(format: "%8.3f s  ", t) + line + "\n").utf8))
    }
}

/// A line to send: without its carriage return; nil when empty.
private func chatLine(_ raw: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
    var bytes = raw
    if bytes.last == 0x0D { bytes.removeLast() }
    return bytes.isEmpty ? nil : bytes
}

/// The lines of `--chat-from FILE` to send, empty ones left out.
func chatFileLines(_ file: String) throws -> [ArraySlice<UInt8>] {
    let data: [UInt8]
    do { data = Array(try Data(contentsOf: URL(fileURLWithPath: file))) } catch { throw CommandFailure("\(file): \(error.localizedDescription)") }
    return data.split(separator: 0x0A, omittingEmptySubsequences: false).compactMap(chatLine)
}

/// Reads standard input on a thread of its own and hands each line (empty ones left out) to
/// `send`, until its end.
func readChatLinesFromStandardInput(_ send: @escaping @Sendable (ArraySlice<UInt8>) -> Void) {
    Thread.detachNewThread {
        var line: [UInt8] = []
        var block = [UInt8](repeating: 0, count: 4096)
        // A read returns what is there (a typed line, or a pasted burst), up to a block.
        while case .success(let n) = valueOrErrno({ read(STDIN_FILENO, &block, block.count) }), n > 0 {
            for byte in block[0..<n] {
                if byte == 0x0A {
                    if let l = chatLine(line[...]) { send(l) }
                    line.removeAll(keepingCapacity: true)
                } else {
                    line.append(byte)
                }
            }
        }
        if let l = chatLine(line[...]) { send(l) }
    }
}
