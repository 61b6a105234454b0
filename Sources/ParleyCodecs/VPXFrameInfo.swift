// Pure Swift (no C import): reads VP8/VP9 frame headers without decoding, for keyframe
// detection in the jitter buffer and RTP depacketizer. Compiles standalone for fuzzing.

/// The VPx codec of a stream.
public enum VPXCodec: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// VP8 (RFC 6386).
    case vp8
    /// VP9 (profile 0, 8-bit 4:2:0, as used in calls).
    case vp9

    public var description: String { rawValue.uppercased() }
}

/// An error from libvpx or from Parley's VP8/VP9 validation.
///
/// `code` is libvpx's `vpx_codec_err_t`, `operation` the C function or Parley operation that
/// failed, `message` libvpx's `vpx_codec_error` text (or Parley's for errors it detects) and
/// `detail` libvpx's `vpx_codec_error_detail`, which often names the exact problem.
///
/// Threading: a value type; freely sendable.
public struct VPXError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A `vpx_codec_err_t` value.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
        /// `VPX_CODEC_ERROR`: unspecified error.
        public static let error = Code(rawValue: 1)
        /// `VPX_CODEC_MEM_ERROR`: memory allocation failed.
        public static let memoryError = Code(rawValue: 2)
        /// `VPX_CODEC_ABI_MISMATCH`: headers and library disagree.
        public static let abiMismatch = Code(rawValue: 3)
        /// `VPX_CODEC_INCAPABLE`: the codec lacks a required capability.
        public static let incapable = Code(rawValue: 4)
        /// `VPX_CODEC_UNSUP_BITSTREAM`: the data is not a stream this decoder understands.
        public static let unsupportedBitstream = Code(rawValue: 5)
        /// `VPX_CODEC_UNSUP_FEATURE`: the stream uses an unsupported feature.
        public static let unsupportedFeature = Code(rawValue: 6)
        /// `VPX_CODEC_CORRUPT_FRAME`: the compressed data is corrupt or truncated.
        public static let corruptFrame = Code(rawValue: 7)
        /// `VPX_CODEC_INVALID_PARAM`: an argument or configuration value is invalid.
        public static let invalidParameter = Code(rawValue: 8)

        public var description: String {
            switch rawValue {
            case 1: return "VPX_CODEC_ERROR"
            case 2: return "VPX_CODEC_MEM_ERROR"
            case 3: return "VPX_CODEC_ABI_MISMATCH"
            case 4: return "VPX_CODEC_INCAPABLE"
            case 5: return "VPX_CODEC_UNSUP_BITSTREAM"
            case 6: return "VPX_CODEC_UNSUP_FEATURE"
            case 7: return "VPX_CODEC_CORRUPT_FRAME"
            case 8: return "VPX_CODEC_INVALID_PARAM"
            default: return "vpx error \(rawValue)"
            }
        }
    }

    /// libvpx's error code.
    public let code: Code
    /// The C function (`vpx_codec_encode`, ...) or Parley operation that failed.
    public let operation: String
    /// libvpx's error text (`vpx_codec_error`) or Parley's description.
    public let message: String
    /// libvpx's `vpx_codec_error_detail`, when it gave one.
    public let detail: String?

    public init(code: Code, operation: String, message: String, detail: String? = nil) {
        self.code = code
        self.operation = operation
        self.message = message
        self.detail = detail
    }

    public var description: String {
        "\(operation): \(message)" + (detail.map { " (\($0))" } ?? "") + " [\(code)]"
    }
}

/// What a compressed VP8 or VP9 frame is, read from its header without decoding.
///
/// VP8 (RFC 6386 §9.1): a 3-byte frame tag whose bit 0 is 0 for a keyframe; a keyframe then
/// has the start code `9d 01 2a` and 14-bit width and height. VP9 (VP9 bitstream spec §6.2):
/// the uncompressed header's `frame_type` (0 = key frame); a keyframe has the sync code
/// `49 83 42`, a colour config and 16-bit `frame_width_minus_1`/`frame_height_minus_1`.
/// A VP9 superframe (several frames in one packet, with an index at the end) is described by
/// its first frame, the one that starts the packet.
///
/// Threading: a value type. Parsing allocates nothing.
public struct VPXFrameInfo: Hashable, Sendable {
    /// The codec the frame was parsed as.
    public let codec: VPXCodec
    /// Whether the frame is a keyframe (decodable without earlier frames).
    public let isKeyframe: Bool
    /// Whether the frame is meant to be displayed (VP8 `show_frame`, VP9 `show_frame`, or a
    /// VP9 `show_existing_frame`).
    public let isShown: Bool
    /// Picture width in pixels (keyframes only; 0 otherwise).
    public let width: Int
    /// Picture height in pixels (keyframes only; 0 otherwise).
    public let height: Int
    /// VP8 version (0-3) or VP9 profile (0-3).
    public let profile: Int
    /// VP8: size in bytes of the first partition (modes and motion vectors), after the 3-byte
    /// tag (10-byte header for keyframes). 0 for VP9. It may exceed the bytes given: only the
    /// header is needed, so the first RTP packet of a frame is enough to parse.
    public let firstPartitionSize: Int

    /// Parses a frame's header.
    /// - Throws: ``VPXError`` ``VPXError/Code/corruptFrame`` when the header is truncated or
    ///   inconsistent (wrong start/sync code, zero size, unknown version),
    ///   ``VPXError/Code/unsupportedBitstream`` for a VP9 frame marker that is not VP9.
    public init(parsing data: UnsafeRawBufferPointer, codec: VPXCodec) throws(VPXError) {
        switch codec {
        case .vp8: self = try Self.parseVP8(data)
        case .vp9: self = try Self.parseVP9(data)
        }
    }

    /// Parses a frame held in an array. See ``init(parsing:codec:)``.
    public init(parsing data: [UInt8], codec: VPXCodec) throws(VPXError) {
        let r: Result<VPXFrameInfo, VPXError> = data.withUnsafeBytes { raw in
            do throws(VPXError) { return .success(try VPXFrameInfo(parsing: raw, codec: codec)) } catch { return .failure(error) }
        }
        self = try r.get()
    }

    private init(codec: VPXCodec, isKeyframe: Bool, isShown: Bool, width: Int, height: Int, profile: Int,
                 firstPartitionSize: Int = 0) {
        self.codec = codec; self.isKeyframe = isKeyframe; self.isShown = isShown
        self.width = width; self.height = height; self.profile = profile
        self.firstPartitionSize = firstPartitionSize
    }

    private static func corrupt(_ codec: VPXCodec, _ what: String) -> VPXError {
        VPXError(code: .corruptFrame, operation: "VPXFrameInfo.parse(\(codec))", message: what)
    }

    // RFC 6386 §9.1:
    //   frame tag (little endian, 24 bits): key_frame_flag (1 bit, 0 = key), version (3),
    //   show_frame (1), first_part_size (19); keyframes add 9d 01 2a, then
    //   width (14 bits) + horizontal_scale (2), height (14) + vertical_scale (2).
    private static func parseVP8(_ d: UnsafeRawBufferPointer) throws(VPXError) -> VPXFrameInfo {
        guard d.count >= 3 else { throw corrupt(.vp8, "frame of \(d.count) bytes is shorter than the 3-byte frame tag") }
        let tag = Int(d[0]) | Int(d[1]) << 8 | Int(d[2]) << 16
        let key = tag & 1 == 0
        let version = (tag >> 1) & 7
        let shown = (tag >> 4) & 1 == 1
        let firstPartition = tag >> 5
        guard version <= 3 else { throw corrupt(.vp8, "unsupported version \(version) in the frame tag") }
        // The first partition may extend past `d` (a frame's first RTP packet): not an error here.
        guard key else {
            return VPXFrameInfo(codec: .vp8, isKeyframe: false, isShown: shown, width: 0, height: 0, profile: version,
                                firstPartitionSize: firstPartition)
        }
        guard d.count >= 10 else { throw corrupt(.vp8, "keyframe of \(d.count) bytes is shorter than its 10-byte header") }
        guard d[3] == 0x9D, d[4] == 0x01, d[5] == 0x2A else {
            throw corrupt(.vp8, "keyframe without the start code 9d 01 2a at offset 3")
        }
        let w = (Int(d[6]) | Int(d[7]) << 8) & 0x3FFF
        let h = (Int(d[8]) | Int(d[9]) << 8) & 0x3FFF
        guard w > 0, h > 0 else { throw corrupt(.vp8, "keyframe with a zero size (\(w)x\(h))") }
        return VPXFrameInfo(codec: .vp8, isKeyframe: true, isShown: shown, width: w, height: h, profile: version,
                            firstPartitionSize: firstPartition)
    }

    // VP9 bitstream spec §6.2 uncompressed_header():
    //   frame_marker f(2) = 2, profile_low_bit, profile_high_bit, [reserved_zero if profile 3],
    //   show_existing_frame f(1) [frame_to_show_map_idx f(3)], frame_type f(1) (0 = KEY_FRAME),
    //   show_frame f(1), error_resilient_mode f(1); key frames: frame_sync_code 0x49 0x83 0x42,
    //   color_config(), frame_width_minus_1 f(16), frame_height_minus_1 f(16).
    private static func parseVP9(_ d: UnsafeRawBufferPointer) throws(VPXError) -> VPXFrameInfo {
        var reader = BitReader(d)
        func bits(_ n: Int) throws(VPXError) -> Int {
            guard let v = reader.read(n) else {
                throw corrupt(.vp9, "uncompressed header truncated at bit \(reader.position) of \(d.count * 8)")
            }
            return v
        }
        guard try bits(2) == 2 else {
            throw VPXError(code: .unsupportedBitstream, operation: "VPXFrameInfo.parse(vp9)",
                           message: "frame marker is not 2: not a VP9 frame")
        }
        let low = try bits(1), high = try bits(1)
        let profile = high << 1 | low
        if profile == 3, try bits(1) != 0 { throw corrupt(.vp9, "reserved bit set after profile 3") }
        if try bits(1) == 1 {   // show_existing_frame
            _ = try bits(3)
            return VPXFrameInfo(codec: .vp9, isKeyframe: false, isShown: true, width: 0, height: 0, profile: profile)
        }
        let key = try bits(1) == 0
        let shown = try bits(1) == 1
        _ = try bits(1)         // error_resilient_mode
        guard key else {
            return VPXFrameInfo(codec: .vp9, isKeyframe: false, isShown: shown, width: 0, height: 0, profile: profile)
        }
        guard try bits(8) == 0x49, try bits(8) == 0x83, try bits(8) == 0x42 else {
            throw corrupt(.vp9, "keyframe without the sync code 49 83 42")
        }
        if profile >= 2 { _ = try bits(1) }             // ten_or_twelve_bit
        let colorSpace = try bits(3)
        if colorSpace != 7 {                            // not CS_RGB
            _ = try bits(1)                             // color_range
            if profile == 1 || profile == 3 {
                _ = try bits(2)                         // subsampling_x, subsampling_y
                if try bits(1) != 0 { throw corrupt(.vp9, "reserved bit set in the colour config") }
            }
        } else {
            guard profile == 1 || profile == 3 else { throw corrupt(.vp9, "RGB colour space in profile \(profile)") }
            if try bits(1) != 0 { throw corrupt(.vp9, "reserved bit set in the colour config") }
        }
        let w = try bits(16) + 1, h = try bits(16) + 1
        return VPXFrameInfo(codec: .vp9, isKeyframe: true, isShown: shown, width: w, height: h, profile: profile)
    }
}

/// Reads big-endian bit fields (the VP9 uncompressed header's `f(n)`).
struct BitReader {
    let data: UnsafeRawBufferPointer
    private(set) var position = 0

    init(_ data: UnsafeRawBufferPointer) { self.data = data }

    mutating func read(_ n: Int) -> Int? {
        guard position + n <= data.count * 8 else { return nil }
        var v = 0
        for _ in 0..<n {
            let byte = data[position >> 3]
            v = v << 1 | Int((byte >> (7 - UInt8(position & 7))) & 1)
            position += 1
        }
        return v
    }
}
