// A call client on CallSession: the local microphone (or a WAV file) goes to a peer over UDP,
// and every participant heard is printed as they join, talk, stop and leave.
//
//   call-client LOCAL_PORT PEER_PORT [FILE.wav]
//
// Two of them on one machine call each other:
//   swift run call-client 5004 5006 SampleMedia/conversation/reader.wav &
//   swift run call-client 5006 5004 SampleMedia/conversation/carlo.wav

import Foundation
import ParleyCall
import ParleyCore
import ParleyDevices

let args = CommandLine.arguments
guard args.count >= 3, let localPort = UInt16(args[1]), let peerPort = UInt16(args[2]) else {
    print("usage: call-client LOCAL_PORT PEER_PORT [FILE.wav]")
    exit(2)
}

func startCall() throws {
    let clock = SystemMediaClock()
    var settings = CallSessionConfiguration()
    settings.endsWhenEveryoneLeft = true           // hang up when the peer has gone
    let session = CallSession(configuration: settings, clock: clock)
    let socket = try UDPTransport(localPort: localPort, peerPort: peerPort, clock: clock)
    let network = session.addTransport(socket)

    var send = AudioSendConfiguration()
    send.ssrc = UInt32(localPort) << 16 | UInt32(peerPort)   // any value unique in the call
    if args.count > 3 {
        let file = WAVFileSource<Int16>(try WAVFileProvider(path: args[3]), clock: clock)
        send.sampleRate = file.format.sampleRate
        try session.addLocal(id: "me", source: file, configuration: send, sendingOn: network)
    } else {
        let mic = try ALSACapture<Int16>(parameters: ALSAParameters(format: try AudioFormat(sampleRate: 16_000, channels: 1)))
        try session.addLocal(id: "me", source: mic, configuration: send, sendingOn: network)
    }

    session.onEvent = { event in                  // on the call's thread: update the grid here
        let who = event.participant ?? "nobody"
        switch event.kind {
        case .joined: print("\(who) joined")
        case .left: print("\(who) left")
        case .talkingStarted(let c) where !c.whileMuted: print("\(who) is talking (\(Int(c.levelDbov)) dBov)")
        case .talkingStopped(let c) where !c.whileMuted: print("\(who) stopped talking")
        case .dominantSpeakerChanged: print("dominant speaker: \(who)")
        default: break
        }
    }
    try session.run(until: clock.now().advanced(bySeconds: 60))
    if let failure = session.localFailure { print("capture stopped: \(failure)") }
}

do {
    try startCall()
} catch {
    print("call-client: \(error)")
    exit(1)
}
