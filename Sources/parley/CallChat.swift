// The chat of `parley call --transport webrtc --chat`: a `WebRTCChat` on the call's transport,
// driven on the call's thread; the lines of --chat-from or standard input are sent, the
// messages shown as `parley join` shows a room's.

import Foundation
import ParleyCall
import ParleyCore
import ParleyWebRTC

/// Lines read on standard input's thread, waiting for the call's thread to send them.
private final class ChatLineQueue: Sendable {
    private let lines = Locked<[ArraySlice<UInt8>]>([])

    func add(_ line: ArraySlice<UInt8>) { lines.withLock { $0.append(line) } }

    /// Takes what waits (the call's thread), in order.
    func take(_ body: (ArraySlice<UInt8>) -> Void) {
        let taken = lines.withLock { list -> [ArraySlice<UInt8>] in
            guard !list.isEmpty else { return [] }
            defer { list.removeAll(keepingCapacity: true) }
            return list
        }
        for line in taken { body(line) }
    }
}

/// A direct call's chat in the command: its channel, the lines to send, what is shown.
final class CallChat {
    /// The newest messages, for the grid.
    let shown = ChatShown()
    private let chat: WebRTCChat?
    private let typed: ChatLineQueue?
    /// Events before the call's outputs exist (the channel may open as the call starts).
    private var early: [WebRTCChatEvent] = []

    /// The chat of `transport` (whose answer accepted the offer's data channel): the lines of
    /// `file` are queued to leave once its channel is open, or standard input's are read and
    /// sent as typed. An offer without a data channel leaves the call without a chat (said on
    /// standard error).
    init(transport: WebRTCTransport, clock: any MediaClock, name: String, from file: String?) throws {
        var made: WebRTCChat?
        do {
            made = try WebRTCChat(transport: transport, clock: clock, local: (name, name), peer: (webRTCPeerName, webRTCPeerName))
        } catch {
            printError("parley call: chat: the offer has no data channel; the call goes on without a chat")
        }
        chat = made
        typed = made != nil && file == nil ? ChatLineQueue() : nil
        guard let made else { return }
        made.onEvent = { [unowned self] event in early.append(event) }
        if let file {
            for line in try chatFileLines(file) { send(line) }
        }
        if let typed { readChatLinesFromStandardInput { line in typed.add(line) } }
    }

    /// From here the chat's events are shown: messages on standard output (or the grid) and as
    /// `message` lines of `--events`, at the session's media time.
    func show(in session: CallSession, eventsFile: FileHandle?, showGrid: Bool) {
        let shown = shown
        let handle = { (event: WebRTCChatEvent) in
            switch event {
            case .opened(let label, let byPeer):
                printError("parley call: chat: the data channel '\(label)' is open (opened \(byPeer ? "by the peer" : "here"))")
            case .message(let m):
                showChatMessage(m, at: session.mediaTime, eventsFile: eventsFile, showGrid: showGrid, shown: shown)
            case .closed:
                printError("parley call: chat: the chat's data channel closed")
            }
        }
        for event in early { handle(event) }
        early = []
        chat?.onEvent = handle
    }

    /// On the call's thread, after the transport's receive: sends the lines typed since, and
    /// drives the chat (its own channel when due, what waits).
    func advance(to now: MonotonicTime) {
        typed?.take { line in send(line) }
        chat?.advance(to: now)
    }

    /// Stops showing the events (the transport's closing ends the chat).
    func stop() { chat?.onEvent = nil }

    /// The report's line: messages each way and the opening's times after DTLS.
    var reportLine: String {
        guard let s = chat?.statistics else { return "chat: none (the offer had no data channel)" }
        func ms(_ x: Double?) -> String { x.map { String(format: "%.2f ms", $0 * 1000) } ?? "-" }
        return "chat: \(s.messagesSent) sent, \(s.messagesReceived) received, \(s.unsentDropped) unsent; after DTLS: "
            + "association up \(ms(s.associationUpAfterDTLS)), channel open \(ms(s.channelOpenAfterDTLS))"
    }

    /// Sends a line; one the chat refuses (too long, not UTF-8, closed) is reported and skipped.
    private func send(_ line: ArraySlice<UInt8>) {
        do { try chat?.send(utf8: line) } catch { printError("parley call: chat: \(error)") }
    }
}
