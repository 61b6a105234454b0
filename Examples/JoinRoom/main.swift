// A room client on ParleyRooms: joins a Janus VideoRoom over WebRTC, publishes the microphone
// (or a WAV file), receives every other publisher (browsers included), and prints who joins,
// talks and leaves. ICE uses every interface but the loopback, which Janus does not take.
//
//   join-room JANUS_URL ROOM NAME [FILE.wav [SECONDS]]
//
// Two of them in room 1234 of a Janus on this machine:
//   swift run join-room http://127.0.0.1:8088/janus 1234 ann SampleMedia/conversation/reader.wav &
//   swift run join-room http://127.0.0.1:8088/janus 1234 bob SampleMedia/conversation/carlo.wav

import Foundation
import ParleyCall
import ParleyCore
import ParleyDevices
import ParleyRooms

let args = CommandLine.arguments
guard args.count >= 4, let server = URL(string: args[1]), let roomID = UInt64(args[2]) else {
    print("usage: join-room JANUS_URL ROOM NAME [FILE.wav [SECONDS]]")
    exit(2)
}
let seconds = args.count > 5 ? Double(args[5]) ?? 60 : 60

/// The call, on this thread: the local audio published, the others' events printed.
func runCall(_ room: JanusRoom) throws {
    let call = try room.makeCall()
    let session = call.session
    if args.count > 4 {
        let file = WAVFileSource<Int16>(try WAVFileProvider(path: args[4]), clock: session.clock)
        var send = AudioSendConfiguration()
        send.sampleRate = file.format.sampleRate
        try call.publishAudio(file, configuration: send)
    } else {
        let format = try AudioFormat(sampleRate: 16_000, channels: 1)
        try call.publishAudio(try ALSACapture<Int16>(parameters: ALSAParameters(format: format)))
    }
    session.onEvent = { event in                  // on the call's thread
        guard let who = event.participant else { return }
        let line: String? = switch event.kind {
        case .joined: "\(who) joined"
        case .left: "\(who) left"
        case .talkingStarted(let c): "\(who) is talking\(c.whileMuted ? " (muted)" : "") at \(Int(c.levelDbov)) dBov"
        case .talkingStopped: "\(who) stopped talking"
        default: nil
        }
        if let line { print(line) }
    }
    session.onFrame = { [unowned session] _ in     // the room ended: so does the call
        if room.endReason != nil { session.stop() }
    }
    try session.run(until: MonotonicTime.now().advanced(bySeconds: seconds))
}

do {
    let room = try await JanusRoom.join(.init(server: server, room: roomID, name: args[3]))
    print("joined room \(roomID) as \(args[3]) (\(room.destination))")
    let notes = Task.detached {                   // off the call's thread, which run() holds
        for await note in room.notes {
            if case .serverGone(let why) = note { print("Janus went away: \(why)") }
        }
    }
    try runCall(room)
    for failure in await room.leave(timeout: 5) { print("leaving: \(failure)") }
    await notes.value
    print("left room \(roomID)")
} catch {
    print("join-room: \(error)")
    exit(1)
}
