// parley-vadtool: a dev-only tool for training and evaluating the VAD (not shipped).
//
//   parley-vadtool frames FILE.wav...            CSV `file,time_s,prob` on stdout (10 ms frames)
//   parley-vadtool features OUTDIR FILE.wav...   OUTDIR/<stem>.f32: per frame [prob, analysed, inputs...]
//                                                (SpectralInput.count inputs; analysed 0 = digital
//                                                silence, inputs then 0: the network skips it)
//   parley-vadtool evidence FILE.wav...          CSV `file,time_s,prob,energy_dbov,snr_db,harmonicity,modulation_db`
//   parley-vadtool talk FILE.wav...              TalkDetector segments `file,participant,start_s,end_s`
//   parley-vadtool meeting FILE.wav...           JSON lines of talking/silent/dominant events,
//                                                one participant per file (meetingeval.py --events)
//
// It reads mono or multi-channel (first channel) WAV (ParleyMedia's reader: 16/24/32-bit PCM or
// 32-bit float) at the rates the VAD takes. The features come from the product's own front end (`@_spi(Training)`), so training
// and product cannot diverge.

import Foundation
import ParleyMedia
@_spi(Training) import ParleyVoice

struct ToolError: Error, CustomStringConvertible { let description: String }

/// The first channel of a WAV file as Float samples, and its sample rate.
func readWAV(_ path: String) throws -> (rate: Int, samples: [Float]) {
    var reader = try WAVReader(path: path)
    let channels = reader.format.channels
    var samples: [Float] = []
    var chunk = [Float](repeating: 0, count: 4096 * channels)
    while true {
        let frames = try reader.read(into: &chunk)
        if frames == 0 { break }
        for i in 0..<frames { samples.append(chunk[i * channels]) }
    }
    return (reader.format.sampleRate, samples)
}

func stem(_ path: String) -> String { URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent }

func decisions(_ path: String) throws -> [VADDecision] {
    let (rate, samples) = try readWAV(path)
    var vad = try VoiceActivityDetector(sampleRate: rate)
    var out: [VADDecision] = []
    samples.withUnsafeBufferPointer { b in vad.process(b) { out.append($0) } }
    return out
}

var args = Array(CommandLine.arguments.dropFirst())
guard let mode = args.first else {
    FileHandle.standardError.write("usage: parley-vadtool frames|evidence|features|talk|meeting|time ...\n".data(using: .utf8)!)
    exit(2)
}
args.removeFirst()
nonisolated(unsafe) var out = ""   // single-threaded tool
func flush() { FileHandle.standardOutput.write(out.data(using: .utf8)!); out = "" }
do {
    switch mode {
    case "frames":
        out += "file,time_s,prob\n"
        for path in args {
            for d in try decisions(path) { out += "\(stem(path)),\(String(format: "%.2f", d.time)),\(String(format: "%.5f", d.probability))\n" }
            flush()
        }
    case "evidence":   // per-frame probability and evidence, for tuning the TalkDetector offline
        out += "file,time_s,prob,energy_dbov,snr_db,harmonicity,modulation_db\n"
        for path in args {
            for d in try decisions(path) {
                let e = d.evidence
                out += "\(stem(path)),\(String(format: "%.2f,%.5f,%.2f,%.2f,%.3f,%.2f", d.time, d.probability, e.energyDbov, e.snrDb, e.harmonicity, e.modulationDb))\n"
            }
            flush()
        }
    case "features":
        let dir = args.removeFirst()
        for path in args {
            let (rate, samples) = try readWAV(path)
            var vad = try VoiceActivityDetector(sampleRate: rate)
            var rows: [Float] = []
            samples.withUnsafeBufferPointer { b in
                vad.processInputs(b) { _, x, p in
                    rows.append(p)
                    if x.isEmpty {
                        rows.append(0)
                        rows.append(contentsOf: repeatElement(0, count: SpectralInput.count))
                    } else {
                        rows.append(1)
                        rows.append(contentsOf: x)
                    }
                }
            }
            try rows.withUnsafeBufferPointer { Data(buffer: $0) }
                .write(to: URL(fileURLWithPath: dir).appendingPathComponent(stem(path) + ".f32"))
        }
    case "talk":
        out += "file,participant,start_s,end_s\n"
        for path in args {
            let ds = try decisions(path)
            var talk = TalkDetector()
            var start: Double?
            for d in ds {
                if let e = talk.process(d) {
                    if e.kind == .started { start = e.segmentTime } else if let s = start {
                        out += "\(stem(path)),\(stem(path)),\(String(format: "%.2f", s)),\(String(format: "%.2f", e.segmentTime))\n"
                        start = nil
                    }
                }
            }
            if let e = talk.finish(at: Double(ds.count) * 0.01), let s = start {
                out += "\(stem(path)),\(stem(path)),\(String(format: "%.2f", s)),\(String(format: "%.2f", e.segmentTime))\n"
            }
            flush()
        }
    case "meeting":
        let all = try args.map { try decisions($0) }
        let names = args.map(stem)
        var talks = [TalkDetector](repeating: TalkDetector(), count: all.count)
        var speaker = ActiveSpeakerDetector<String>()
        for n in names { speaker.join(n) }
        let frames = all.map(\.count).max() ?? 0
        for i in 0..<frames {
            for (p, ds) in all.enumerated() where i < ds.count {
                if let e = talks[p].process(ds[i]) {
                    out += "{\"t\": \(String(format: "%.2f", e.time)), \"type\": \"\(e.kind == .started ? "talking" : "silent")\", \"participant\": \"\(names[p])\"}\n"
                }
                speaker.update(names[p], decision: ds[i])
            }
            if i % 10 == 9, let e = speaker.decide(at: Double(i + 1) * 0.01) {
                let who = e.dominant.map { "\"\($0)\"" } ?? "null"
                out += "{\"t\": \(String(format: "%.2f", e.time)), \"type\": \"dominant\", \"participant\": \(who)}\n"
            }
        }
        flush()
    case "time":   // quick cost check: median of 5 passes over the file, us per 10 ms frame
        let (rate, samples) = try readWAV(args[0])
        var times: [Double] = []
        var sink: Float = 0
        for _ in 0..<5 {
            var vad = try VoiceActivityDetector(sampleRate: rate)
            let start = DispatchTime.now().uptimeNanoseconds
            var frames = 0
            samples.withUnsafeBufferPointer { b in
                let n = rate / 100
                var i = 0
                while i + n <= b.count {
                    vad.process(UnsafeBufferPointer(rebasing: b[i..<i + n])) { sink += $0.probability; frames += 1 }
                    i += n
                }
            }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1000 / Double(max(frames, 1)))
        }
        times.sort()
        out += "\(String(format: "%.2f", times[2])) us/frame (min \(String(format: "%.2f", times[0]))) \(sink > 0 ? "" : " ")\n"
        flush()
    default:
        throw ToolError(description: "unknown mode \(mode)")
    }
} catch {
    FileHandle.standardError.write("parley-vadtool: \(error)\n".data(using: .utf8)!)
    exit(1)
}
