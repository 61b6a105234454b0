import Foundation
import ParleyCodecs
import ParleyJitter
import ParleyRTP

/// A malformed or unsupported WAV file given to `parley netsim`.
struct NetsimWAVError: Error, CustomStringConvertible {
    let description: String
}

/// Reads a 16-bit PCM WAV (RIFF/WAVE, `fmt ` tag 1 or WAVE_FORMAT_EXTENSIBLE) into mono
/// samples (channel 0). Only what `netsim` needs; malformed files throw, never trap.
func netsimReadWAV(_ bytes: [UInt8]) throws(NetsimWAVError) -> (samples: [Int16], sampleRate: Int) {
    func u32(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 | Int(bytes[o + 2]) << 16 | Int(bytes[o + 3]) << 24 }
    func u16(_ o: Int) -> Int { Int(bytes[o]) | Int(bytes[o + 1]) << 8 }
    guard bytes.count >= 12, bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else {
        throw NetsimWAVError(description: "not a RIFF/WAVE file")
    }
    var offset = 12
    var format: (tag: Int, channels: Int, rate: Int, bits: Int)?
    while offset + 8 <= bytes.count {
        let size = u32(offset + 4)
        let body = offset + 8
        guard size >= 0, body + size <= bytes.count || bytes[offset..<offset + 4].elementsEqual("data".utf8) else {
            throw NetsimWAVError(description: "chunk at byte \(offset) runs past the end of the file")
        }
        if bytes[offset..<offset + 4].elementsEqual("fmt ".utf8) {
            guard size >= 16 else { throw NetsimWAVError(description: "fmt chunk too short") }
            format = (u16(body), u16(body + 2), u32(body + 4), u16(body + 14))
        } else if bytes[offset..<offset + 4].elementsEqual("data".utf8) {
            guard let f = format else { throw NetsimWAVError(description: "data chunk before fmt chunk") }
            guard f.tag == 1 || f.tag == 0xFFFE, f.bits == 16, f.channels >= 1 else {
                throw NetsimWAVError(description: "only 16-bit PCM WAV is supported (format \(f.tag), \(f.bits) bits)")
            }
            let end = min(bytes.count, body + size)
            let frameBytes = 2 * f.channels
            var samples: [Int16] = []
            samples.reserveCapacity((end - body) / frameBytes)
            var o = body
            while o + frameBytes <= end {
                samples.append(Int16(bitPattern: UInt16(bytes[o]) | UInt16(bytes[o + 1]) << 8))
                o += frameBytes
            }
            return (samples, f.rate)
        }
        offset = body + size + (size & 1)
    }
    throw NetsimWAVError(description: "no data chunk")
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
