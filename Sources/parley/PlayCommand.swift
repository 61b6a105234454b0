import Foundation
import ParleyDevices

/// `parley play`: play a WAV file through an ALSA PCM.
let playCommand = Command(
    name: "play",
    summary: "Play a WAV file through ALSA",
    help: """
    Usage: parley play FILE.wav [--audio PCM] [--period-ms P] [--alsa-config FILE]

    Plays a 16-bit PCM or 32-bit float WAV file through the ALSA PCM named PCM (default
    'default'; 'parley devices' lists names) at the file's own rate and channel count, then
    waits until it has been played out. Underruns are recovered and reported at the end.
      --audio PCM      the PCM to play to (default 'default')
      --period-ms P    ALSA period in milliseconds (default 10)
      --alsa-config F  also load PCM definitions from F (or use ALSA_CONFIG_PATH)

    Exit status: 0 played; 1 the file or the device failed (the message says which and what
    to check); 2 usage error.
    """,
    run: { args in
        do {
            let s = try ArgumentScanner(args, valued: ["audio", "period-ms", "alsa-config"], flagNames: [])
            guard s.positionals.count == 1 else {
                throw ArgumentScanner.UsageError(description: s.positionals.isEmpty ? "give the WAV file to play"
                                                 : "give one WAV file, got \(s.positionals.count) arguments")
            }
            let periodMs = try s.int("period-ms", default: 10, in: 1...1_000)
            let wav = try DeviceWAVFile(path: s.positionals[0])
            let pcm = s.value("audio") ?? "default"
            let parameters = ALSAParameters(format: wav.format,
                                            periodFrames: max(1, wav.format.sampleRate * periodMs / 1000))
            if wav.isFloat {
                try play(wav.float, pcm: pcm, parameters: parameters, configPath: s.value("alsa-config"))
            } else {
                try play(wav.int16, pcm: pcm, parameters: parameters, configPath: s.value("alsa-config"))
            }
            return ExitStatus.success
        } catch let e as ArgumentScanner.UsageError {
            printError("parley play: \(e)\nRun 'parley play --help' for usage.")
            return ExitStatus.usage
        } catch {
            printError("parley play: \(error)")
            return ExitStatus.failure
        }
    }
)

private func openPlayback<S: AudioSample>(_: S.Type, pcm: String, parameters: ALSAParameters,
                                          configPath: String?) throws(ALSAError) -> ALSAPlayback<S> {
    if let configPath {
        let tree = try ALSAConfigurationTree(contentsOfFile: configPath)
        return try ALSAPlayback<S>(pcm: pcm, parameters: parameters, configuration: tree)
    }
    return try ALSAPlayback<S>(pcm: pcm, parameters: parameters)
}

private func play<S: AudioSample>(_ samples: [S], pcm: String, parameters: ALSAParameters, configPath: String?) throws {
    var speaker = try openPlayback(S.self, pcm: pcm, parameters: parameters, configPath: configPath)
    let chunk = speaker.setup.periodFrames * parameters.format.channels
    try samples.withUnsafeBufferPointer { all in
        var i = 0
        while i < all.count {
            let end = min(all.count, i + chunk)
            try speaker.write(UnsafeBufferPointer(rebasing: all[i..<end]))
            i = end
        }
    }
    try speaker.drain()
    let xruns = speaker.xruns
    let setup = speaker.setup
    try speaker.close()
    let frames = samples.count / parameters.format.channels
    printError("played \(String(format: "%.3f", Double(frames) / Double(parameters.format.sampleRate))) s to ALSA PCM "
               + "'\(pcm)' (\(setup)); underruns \(xruns.underruns), suspends \(xruns.suspends)")
}
