import Foundation
import ParleyDevices
import ParleyMedia

/// `parley play`: play a WAV file through an ALSA PCM.
let playCommand = Command(
    name: "play",
    summary: "Play a WAV file through ALSA",
    help: """
    Usage: parley play FILE.wav [--audio PCM] [--period-ms P] [--alsa-config FILE]

    Plays a WAV file (16/24/32-bit PCM or 32-bit float; 24/32-bit are played as float) through the ALSA PCM named PCM (default
    'default'; 'parley devices' lists names) at the file's own rate and channel count, then
    waits until it has been played out. Underruns are recovered and reported at the end.
      --audio PCM      the PCM to play to (default 'default')
      --period-ms P    ALSA period in milliseconds (default 10)
      --alsa-config F  also load PCM definitions from F (or use ALSA_CONFIG_PATH)

    Exit status: 0 played; 1 the file or the device failed (the message says which and what
    to check); 2 usage error.
    """,
    run: { args in
        runReportingErrors("play") {
            let s = try ArgumentScanner(args, valued: ["audio", "period-ms", "alsa-config"], flagNames: [])
            guard s.positionals.count == 1 else {
                throw ArgumentScanner.UsageError(description: s.positionals.isEmpty ? "give the WAV file to play"
                                                 : "give one WAV file, got \(s.positionals.count) arguments")
            }
            let periodMs = try s.int("period-ms", default: 10, in: 1...1_000)
            let wav = try WAVReader(path: s.positionals[0])
            let device = ALSAPCMChoice(pcm: s.value("audio") ?? "default",
                                       format: try AudioFormat(sampleRate: wav.format.sampleRate, channels: wav.format.channels),
                                       periodMs: periodMs, configPath: s.value("alsa-config"))
            if wav.format.encoding == .int16 {
                try play(WAVFileProvider<Int16>(reader: wav), to: device)
            } else {
                try play(WAVFileProvider<Float>(reader: wav), to: device)
            }
            return ExitStatus.success
        }
    }
)

/// The ALSA PCM that `parley play` and `parley record` open: its name, the parameters asked
/// for, and the file that defines it (`--alsa-config`), if any.
struct ALSAPCMChoice {
    var pcm: String
    var parameters: ALSAParameters
    var configPath: String?

    /// PCM `pcm` in `format`, with periods of `periodMs` (`--period-ms`).
    init(pcm: String, format: AudioFormat, periodMs: Int, configPath: String?) {
        self.pcm = pcm
        parameters = ALSAParameters(format: format, periodFrames: max(1, format.sampleRate * periodMs / 1000))
        self.configPath = configPath
    }

    /// Opens the PCM, as defined in the file `configPath` when given.
    func open<Stream: ALSAPCMStream & ~Copyable>(_: Stream.Type) throws(ALSAError) -> Stream {
        if let configPath {
            let tree = try ALSAConfigurationTree(contentsOfFile: configPath)
            return try Stream(pcm: pcm, parameters: parameters, configuration: tree)
        }
        return try Stream(pcm: pcm, parameters: parameters)
    }
}

/// Closes `stream`; returns what the device agreed to and the xruns recovered, for the last line.
func closeALSA<Stream: ALSAPCMStream & ~Copyable>(_ stream: consuming Stream) throws(ALSAError)
    -> (setup: ALSAStreamSetup, xruns: XRunCounters) {
    let setup = stream.setup, xruns = stream.xruns
    try stream.close()
    return (setup, xruns)
}

private func play<S: AudioSample>(_ file: consuming WAVFileProvider<S>, to device: ALSAPCMChoice) throws {
    var provider = file
    let format = device.parameters.format
    var speaker = try device.open(ALSAPlayback<S>.self)
    // Stream the file through one period-sized buffer (nothing is loaded whole).
    var buffer = [S](repeating: .silence, count: speaker.setup.periodFrames * format.channels)
    var frames = 0
    while true {
        let n = try buffer.withUnsafeMutableBufferPointer { try provider.readSamples(into: $0) }
        if n == 0 { break }
        try buffer.withUnsafeBufferPointer { try speaker.write(UnsafeBufferPointer(rebasing: $0[0..<n])) }
        frames += n / format.channels
    }
    try speaker.drain()
    let (setup, xruns) = try closeALSA(speaker)
    printError("played \(String(format: "%.3f", Double(frames) / Double(format.sampleRate))) s to ALSA PCM "
               + "'\(device.pcm)' (\(setup)); underruns \(xruns.underruns), suspends \(xruns.suspends)")
}
