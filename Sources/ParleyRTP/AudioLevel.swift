// Client-to-mixer audio level (RFC 6464), carried as an RFC 8285 element of one byte:
//
//    0 1 2 3 4 5 6 7
//   +-+-+-+-+-+-+-+-+
//   |V|   level     |
//   +-+-+-+-+-+-+-+-+
//
// level: the audio level of the packet's samples in -dBov, 0 (loudest) ... 127 (digital
// silence); V: the sender's voice activity decision.

/// An RFC 6464 audio level: -dBov 0...127 and a voice-activity flag.
///
/// The level is the RMS of the packet's samples relative to the overload point (full scale),
/// so a full-scale sine is 3 and a half-scale sine 9. 127 is reserved for digital silence
/// (all samples zero); any non-zero signal is at most 126.
///
/// Threading: a value type.
public struct AudioLevel: Equatable, Sendable {
    /// -dBov, 0...127.
    public var level: UInt8
    /// The sender's VAD decision (the V bit).
    public var voiceActivity: Bool

    /// Creates a level; values above 127 are clamped.
    public init(level: UInt8, voiceActivity: Bool) {
        self.level = Swift.min(level, 127)
        self.voiceActivity = voiceActivity
    }

    /// Measures the level of 16-bit samples (full scale 32768) and pairs it with `voiceActivity`.
    public init(samples: UnsafeBufferPointer<Int16>, voiceActivity: Bool) {
        var sum: Double = 0
        for s in samples { let x = Double(s); sum += x * x }
        let meanSquare = samples.isEmpty ? 0 : sum / Double(samples.count) / (32768.0 * 32768.0)
        self.init(level: Self.level(meanSquare: meanSquare), voiceActivity: voiceActivity)
    }

    /// Measures the level of float samples (full scale 1.0). NaNs count as silence.
    public init(samples: UnsafeBufferPointer<Float>, voiceActivity: Bool) {
        var sum: Double = 0
        for s in samples where s == s { let x = Double(s); sum += x * x }
        let meanSquare = samples.isEmpty ? 0 : sum / Double(samples.count)
        self.init(level: Self.level(meanSquare: meanSquare), voiceActivity: voiceActivity)
    }

    /// -dBov of a mean square relative to full scale: round(-10 log10(ms)) clamped to 0...126,
    /// and 127 for exactly zero. Computed by stepping 0.1 decades down from the rounding
    /// boundary -0.5 dB so the module needs no libm.
    public static func level(meanSquare: Double) -> UInt8 {
        guard meanSquare > 0 else { return 127 }
        var level: UInt8 = 0
        var boundary = 0.8912509381337456  // 10^(-0.05): between 0 and 1 dB
        while level < 126 && meanSquare < boundary {
            level += 1
            boundary *= 0.7943282347242815  // 10^(-0.1): one dB further down
        }
        return level
    }

    /// The element's one byte: V in the top bit, the level below.
    public var extensionByte: UInt8 { (voiceActivity ? 0x80 : 0) | (level & 0x7F) }

    /// Reads the level from an element's data (its first byte); nil when the data is empty.
    public init?(extensionData: UnsafeRawBufferPointer) {
        guard let b = extensionData.first else { return nil }
        self.init(level: b & 0x7F, voiceActivity: b & 0x80 != 0)
    }

    /// The URI negotiated for this element in SDP `a=extmap`.
    public static let uri = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"
}

extension RTPPacketView {
    /// The RFC 6464 audio level carried in element `id`, or nil when absent.
    public func audioLevel(id: UInt8) -> AudioLevel? {
        extensionElement(id: id).flatMap { AudioLevel(extensionData: $0) }
    }
}
