import Foundation
import ParleyCall
import ParleyEcho
import ParleyMedia

/// `parley echo`: the capture path of a call over two recordings, with echo cancellation.
let echoCommand = Command(
    name: "echo",
    summary: "Cancel a loudspeaker's echo in a microphone recording",
    help: """
    Usage: parley echo --far FAR.wav --mic MIC.wav --output OUT.wav [--events PATH.jsonl]

    Runs the capture path of a call over two recordings: FAR.wav, what the playout sent to the
    loudspeaker, and MIC.wav, what the microphone heard at the same time (both mono, 8 or 16 kHz,
    the same rate, aligned at their start). The microphone's signal goes through the echo
    canceller (WebRTC's AEC behind a bulk-delay estimator and a drift tracker), the voice activity
    and talking analysis of the local participant (talks start only from what is not the far
    end's echo) and the Opus encoder, as in a call; the cancelled signal is written to OUT.wav.
      --far FAR.wav     what was played
      --mic MIC.wav     what the microphone heard
      --output OUT.wav  the echo-cancelled capture
      --events PATH     the local participant's talking events as JSON lines, as 'parley room'
                        writes them (participant "local")

    Prints one summary line:
      echo: ERLE E dB over S s of far-end-only time, T talks started, delay D ms, clock drift P ppm
    far-end-only time being the 10 ms frames the canceller judged echo only outside the local
    participant's talks (ERLE: the microphone's energy over the output's there; "n/a" without
    such time); P how much faster the microphone's clock ran than the far end's, as the
    canceller measured it ("not measured" before 4-6 s of far-end speech).

    Exit status: 0 done; 1 a file could not be read or written; 2 usage error.
    """,
    run: { args in
        runReportingErrors("echo") {
            let s = try ArgumentScanner(args, valued: ["far", "mic", "output", "events"], flagNames: [])
            guard s.positionals.isEmpty else {
                throw ArgumentScanner.UsageError(description: "unexpected argument \(s.positionals[0])")
            }
            guard let farPath = s.value("far"), let micPath = s.value("mic"), let outPath = s.value("output") else {
                throw ArgumentScanner.UsageError(description: "give --far, --mic and --output")
            }
            let (farRate, far) = try readMonoPCM(farPath)
            let (micRate, mic) = try readMonoPCM(micPath)
            guard farRate == micRate, [8_000, 16_000].contains(micRate) else {
                throw CommandFailure("the recordings are at \(farRate) and \(micRate) Hz; both must be 8 or 16 kHz (resample them first)")
            }
            var send = AudioSendConfiguration()
            send.sampleRate = micRate
            let result = try EchoReplay.run(played: far, microphone: mic, send: send)
            var writer = try WAVWriter(path: outPath, format: WAVFormat(sampleRate: micRate, channels: 1))
            try result.output.withUnsafeBufferPointer { try writer.write($0) }
            try writer.close()
            if let path = s.value("events") {
                var text = ""
                for e in result.talks {
                    let change = TalkingChange(levelDbov: e.levelDbov, reason: e.reason, whileMuted: e.muted,
                                               segmentTime: e.segmentTime, probability: e.probability)
                    let event = CallEvent(time: e.time, participant: "local", name: "local",
                                          kind: e.kind == .started ? .talkingStarted(change) : .talkingStopped(change))
                    if let line = roomEventJSON(event) { text += line + "\n" }
                }
                guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
                    throw CommandFailure("cannot write \(path)")
                }
            }
            // Far-end-only time: echo-only frames outside the local participant's talks.
            var talking = [Bool](repeating: false, count: result.echoOnly.count)
            var start: Double?
            for e in result.talks {
                if e.kind == .started { start = e.segmentTime; continue }
                guard let from = start else { continue }
                for f in max(0, Int(from * 100))..<max(0, min(talking.count, Int(e.time * 100))) { talking[f] = true }
                start = nil
            }
            if let from = start { for f in max(0, Int(from * 100))..<talking.count { talking[f] = true } }
            let farOnly = result.echoOnly.indices.map { result.echoOnly[$0] && !talking[$0] }
            let frames = farOnly.filter { $0 }.count
            let erle = EchoReplay.erleDb(microphone: mic, output: result.output, frameSamples: result.frameSamples) { farOnly[$0] }
            let delay = result.statistics.estimatedDelayMs.map { String(format: "%.0f ms", $0) } ?? "not measured"
            let drift = result.statistics.captureDriftPpm.map { String(format: "%+.1f ppm", $0) } ?? "not measured"
            print("echo: ERLE \(erle.map { String(format: "%.1f dB", $0) } ?? "n/a") over \(String(format: "%.2f", Double(frames) / 100)) s "
                  + "of far-end-only time, \(result.talks.filter { $0.kind == .started }.count) talks started, delay \(delay), "
                  + "clock drift \(drift)")
            return ExitStatus.success
        }
    })

/// The first channel of a WAV file as 16-bit samples, and its rate.
private func readMonoPCM(_ path: String) throws -> (rate: Int, samples: [Int16]) {
    var reader = try WAVReader(path: path)
    let channels = reader.format.channels
    var all: [Int16] = []
    var buffer = [Int16](repeating: 0, count: 4096 * channels)
    while true {
        let n = try reader.read(into: &buffer)
        if n == 0 { break }
        for i in 0..<n { all.append(buffer[i * channels]) }
    }
    return (reader.format.sampleRate, all)
}
