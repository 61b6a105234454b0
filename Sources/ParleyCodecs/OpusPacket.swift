// Pure Swift (no C import): the Opus packet inspector parses untrusted bytes, so it is also
// compiled standalone with `Fuzz/` and fuzzed. It follows RFC 6716 §3 and accepts exactly the
// packets libopus's `opus_packet_parse` accepts (tests cross-check the two). The TOC byte and
// frame count come from ParleyCore's `OpusTOC`; this file reads the rest of the framing.
#if canImport(ParleyCore)
import ParleyCore
#endif

/// What an Opus packet holds, read without decoding it (for the jitter buffer and RTP).
///
/// Parsing validates the whole framing of RFC 6716 §3 (TOC byte, frame-count byte, padding,
/// frame lengths, the 1275-byte and 120 ms limits), so an accepted packet can be handed to the
/// decoder's framing layer; it does not validate the compressed frames themselves.
///
/// ```
///  0 1 2 3 4 5 6 7
/// +-+-+-+-+-+-+-+-+
/// | config  |s| c |   TOC byte: config (mode, bandwidth, frame size), s = stereo,
/// +-+-+-+-+-+-+-+-+   c = 0: 1 frame, 1: 2 equal frames, 2: 2 frames, 3: count byte follows
/// ```
///
/// Threading: a value type. Parsing allocates nothing.
public struct OpusPacketInfo: Hashable, Sendable {
    /// The table-of-contents byte (first byte of the packet).
    public let toc: UInt8
    /// Number of Opus frames in the packet (1...48).
    public let frameCount: Int
    /// Byte offset of the first frame's data (after TOC, count byte, padding and length bytes).
    public let payloadOffset: Int
    /// Bytes of padding at the end of the packet (code 3 only; 0 otherwise).
    public let paddingLength: Int
    /// Whether the frames may have different sizes (code 2, or code 3 with the VBR flag).
    public let hasVariableFrameSizes: Bool

    /// The TOC's configuration number, 0...31.
    @inlinable public var configuration: Int { Int(toc >> 3) }
    /// The frame-count code (the TOC's two low bits), 0...3.
    @inlinable public var frameCountCode: Int { Int(toc & 0x3) }
    /// Coded channels: 1 (mono) or 2 (stereo). Same as `opus_packet_get_nb_channels`.
    @inlinable public var channels: Int { (toc & 0x4) != 0 ? 2 : 1 }

    /// Coding mode.
    public var mode: OpusMode {
        let c = configuration
        return c < 12 ? .silk : (c < 16 ? .hybrid : .celt)
    }

    /// Coded audio bandwidth. Same as `opus_packet_get_bandwidth`.
    public var bandwidth: OpusBandwidth { Self.bandwidth(toc: toc) }

    /// Samples per channel in one frame at 48 kHz (120 = 2.5 ms ... 2880 = 60 ms).
    /// Same as `opus_packet_get_samples_per_frame(data, 48000)`.
    public var samplesPerFrameAt48k: Int { Self.samplesPerFrameAt48k(toc: toc) }

    /// Samples per channel in the whole packet at 48 kHz (at most 5760 = 120 ms).
    public var totalSamplesAt48k: Int { frameCount * samplesPerFrameAt48k }

    /// Samples per channel the packet decodes to at `sampleRate` Hz (8, 12, 16, 24 or 48 kHz).
    /// Same as `opus_packet_get_nb_samples`.
    public func samples(atSampleRate sampleRate: Int) -> Int {
        totalSamplesAt48k * sampleRate / 48_000
    }

    /// Duration of the packet in microseconds (multiple of 2500).
    public var durationMicroseconds: Int { totalSamplesAt48k * 1000 / 48 }

    /// Duration of one frame in microseconds (2500, 5000, 10000, 20000, 40000 or 60000).
    public var frameDurationMicroseconds: Int { samplesPerFrameAt48k * 1000 / 48 }

    /// Bandwidth encoded by a TOC byte.
    public static func bandwidth(toc: UInt8) -> OpusBandwidth {
        let c = Int(toc >> 3)
        switch c {
        case 0..<4: return .narrowband
        case 4..<8: return .mediumband
        case 8..<12: return .wideband
        case 12..<14: return .superwideband
        case 14..<16: return .fullband
        case 16..<20: return .narrowband
        case 20..<24: return .wideband
        case 24..<28: return .superwideband
        default: return .fullband
        }
    }

    /// Samples per channel of one frame at 48 kHz encoded by a TOC byte.
    public static func samplesPerFrameAt48k(toc: UInt8) -> Int { OpusTOC.samplesPerFrameAt48k(toc: toc) }

    /// The largest frame a packet may carry, in bytes (RFC 6716 §3.4 [R2]).
    public static let maxFrameBytes = 1275
    /// The largest duration a packet may carry, in samples at 48 kHz (120 ms, [R5]).
    public static let maxSamplesAt48k = OpusTOC.maxSamplesAt48k

    /// Parses and validates a packet's framing without decoding.
    ///
    /// - Parameters:
    ///   - packet: one complete Opus packet (not self-delimited), e.g. an RTP payload.
    ///   - frameSizes: optional output for each frame's size in bytes; must hold at least
    ///     48 elements (the most a packet can carry). Sizes of frames past `frameCount` are
    ///     left untouched. Frame `i` starts at `payloadOffset + sum(frameSizes[0..<i])`.
    /// - Throws: ``OpusError`` with code ``OpusError/Code/invalidPacket`` and a message naming
    ///   the rule and byte offset that failed (the `OpusPacketError` of the parse);
    ///   ``OpusError/Code/badArgument`` when `frameSizes` holds fewer than 48 elements.
    public init(parsing packet: UnsafeRawBufferPointer,
                frameSizes: UnsafeMutableBufferPointer<Int>? = nil) throws(OpusError) {
        if let frameSizes, frameSizes.count < 48 {
            throw OpusError(code: .badArgument, operation: "OpusPacketInfo(parsing:)",
                            message: "frameSizes holds \(frameSizes.count) elements, fewer than 48")
        }
        do throws(OpusPacketError) {
            let header = try OpusTOC(parsing: packet)
            let framing = try Self.framing(packet, header, frameSizes)
            self.toc = header.toc
            self.frameCount = header.frameCount
            self.payloadOffset = framing.payloadOffset
            self.paddingLength = framing.padding
            self.hasVariableFrameSizes = header.frameCountCode == 2 || framing.vbr
        } catch {
            throw OpusError(code: .invalidPacket, operation: "OpusPacketInfo.parse",
                            message: "corrupted stream: " + error.reason)
        }
    }

    /// Reads what follows the TOC (RFC 6716 3.2): padding, frame lengths, the frames' sizes;
    /// returns where the first frame starts, the padding and whether code 3 is VBR.
    private static func framing(_ packet: UnsafeRawBufferPointer, _ header: OpusTOC,
                                _ frameSizes: UnsafeMutableBufferPointer<Int>?)
        throws(OpusPacketError) -> (payloadOffset: Int, padding: Int, vbr: Bool) {
        func fail(_ detail: String) -> OpusPacketError { OpusPacketError(.malformed, detail) }
        let len = packet.count
        let count = header.frameCount
        var pos = header.length  // next byte to read
        var end = len            // one past the last frame byte (padding excluded)
        var padding = 0
        var vbr = false
        // Reads a frame length (RFC 6716 §3.2.1) at `pos`, not past `end`.
        func readLength(_ what: String) throws(OpusPacketError) -> Int {
            guard pos < end else { throw fail("\(what): missing length byte at offset \(pos)") }
            let b0 = Int(packet[pos])
            if b0 < 252 { pos += 1; return b0 }
            guard pos + 1 < end else { throw fail("\(what): missing second length byte at offset \(pos + 1)") }
            let v = 4 * Int(packet[pos + 1]) + b0
            pos += 2
            return v
        }
        var lastSize: Int
        switch header.frameCountCode {
        case 0:
            lastSize = end - pos
        case 1:
            let rest = end - pos
            guard rest % 2 == 0 else {
                throw fail("code 1 packet with an odd payload of \(rest) bytes (two equal frames needed)")
            }
            lastSize = rest / 2
            frameSizes?[0] = lastSize
        case 2:
            let first = try readLength("code 2 first frame")
            guard first <= end - pos else {
                throw fail("code 2 first frame of \(first) bytes exceeds the \(end - pos) bytes left")
            }
            frameSizes?[0] = first
            lastSize = end - pos - first
        default:
            let ch = packet[1]   // the frame-count byte, read by OpusTOC
            if ch & 0x40 != 0 {
                var p: Int
                repeat {
                    guard pos < end else { throw fail("padding length runs past the end at offset \(pos)") }
                    p = Int(packet[pos])
                    pos += 1
                    let add = p == 255 ? 254 : p
                    padding += add
                    end -= add
                } while p == 255
                guard end >= pos else {
                    throw fail("padding of \(padding) bytes exceeds the packet (\(len) bytes)")
                }
            }
            vbr = ch & 0x80 != 0
            if vbr {
                var sum = 0
                for i in 0..<(count - 1) {
                    let s = try readLength("code 3 frame \(i)")
                    frameSizes?[i] = s
                    sum += s
                    guard sum <= end - pos else {
                        throw fail("code 3 frame sizes (\(sum) bytes by frame \(i)) exceed the \(end - pos) bytes left")
                    }
                }
                lastSize = end - pos - sum
            } else {
                let rest = end - pos
                guard rest % count == 0 else {
                    throw fail("code 3 CBR payload of \(rest) bytes is not a multiple of \(count) frames")
                }
                lastSize = rest / count
                if let frameSizes { for i in 0..<(count - 1) { frameSizes[i] = lastSize } }
            }
        }
        guard lastSize <= maxFrameBytes else {
            throw fail("implicit frame of \(lastSize) bytes exceeds \(maxFrameBytes)")
        }
        frameSizes?[count - 1] = lastSize
        return (pos, padding, vbr)
    }

    /// Parses a packet held in an array. See ``init(parsing:frameSizes:)``.
    public init(parsing packet: [UInt8]) throws(OpusError) {
        let result: Result<OpusPacketInfo, OpusError> = packet.withUnsafeBytes { raw in
            do throws(OpusError) { return .success(try OpusPacketInfo(parsing: raw)) } catch { return .failure(error) }
        }
        self = try result.get()
    }
}

/// The coding mode of an Opus packet (RFC 6716 §3.1, TOC configurations 0-11, 12-15, 16-31).
public enum OpusMode: Hashable, Sendable {
    /// SILK only: speech, up to wideband.
    case silk
    /// SILK below 8 kHz plus CELT above: super-wideband or fullband speech.
    case hybrid
    /// CELT only: music and low-delay.
    case celt
}
