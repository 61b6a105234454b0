import ParleyCodecs
import ParleyJitter
import ParleyMedia
import ParleyRTP

/// The first channel of a 16-bit PCM WAV file, and its sample rate.
func netsimReadWAV(_ path: String) throws(MediaFileError) -> (samples: [Int16], sampleRate: Int) {
    var reader = try WAVReader(path: path)
    let format = reader.format
    guard format.encoding == .int16 else {
        throw .unsupported(path: path, what: "\(format) (parley netsim takes 16-bit PCM)")
    }
    var samples: [Int16] = []
    var chunk = [Int16](repeating: 0, count: 4096 * format.channels)
    while true {
        let frames = try reader.read(into: &chunk)
        if frames == 0 { break }
        for i in 0..<frames { samples.append(chunk[i * format.channels]) }
    }
    return (samples, format.sampleRate)
}

/// Speech encoded as 20 ms Opus packets (VoIP, in-band FEC on, 10 % expected loss).
func netsimOpusFrames(samples: [Int16], sampleRate: Int) throws -> [[UInt8]] {
    var encoder = try OpusEncoder(sampleRate: sampleRate, channels: 1, application: .voip)
    encoder.inbandFEC = true
    try encoder.setExpectedPacketLossPercent(10)
    let n = sampleRate / 50
    var frames: [[UInt8]] = []
    var packet = [UInt8](repeating: 0, count: RTPLimits.maximumDatagramSize)
    var start = 0
    while start + n <= samples.count {
        let len = try samples.withUnsafeBufferPointer { s in
            try packet.withUnsafeMutableBytes { p in
                try encoder.encode(UnsafeBufferPointer(rebasing: s[start..<(start + n)]), into: p)
            }
        }
        frames.append(Array(packet[0..<len]))
        start += n
    }
    return frames
}
