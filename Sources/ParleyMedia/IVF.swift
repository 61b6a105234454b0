// Pure Swift (no C imports): compiled standalone by the fuzz targets in Fuzz/.

/// The 32-byte IVF file header.
///
/// ```
///  0  "DKIF"   4  version (0)   6  header size (32)   8  FourCC
/// 12  width   14  height        16  timebase denominator (rate)
/// 20  timebase numerator (scale)   24  frame count   28  unused
/// ```
public struct IVFHeader: Sendable, Hashable {
    public var codec: IVFCodec
    /// Frame size in pixels.
    public var width: Int
    public var height: Int
    /// Timestamps count units of `timebaseNumerator / timebaseDenominator` seconds.
    public var timebaseNumerator: Int
    public var timebaseDenominator: Int
    /// Frame count from the header (writers patch it on close; streaming tools may leave 0).
    public var frameCount: Int

    public init(codec: IVFCodec, width: Int, height: Int, timebaseNumerator: Int = 1,
                timebaseDenominator: Int = 90_000, frameCount: Int = 0) {
        self.codec = codec; self.width = width; self.height = height
        self.timebaseNumerator = timebaseNumerator; self.timebaseDenominator = timebaseDenominator
        self.frameCount = frameCount
    }
}

/// One IVF frame's 12-byte header: payload size and presentation timestamp.
public struct IVFFrameHeader: Sendable, Hashable {
    /// Payload bytes.
    public var size: Int
    /// Presentation timestamp in timebase units.
    public var timestamp: UInt64
}

/// Largest accepted IVF frame payload (a corrupt size cannot ask for more memory).
public let ivfMaxFrameSize = 16 << 20

/// Streaming IVF reader (VP8/VP9): one compressed frame at a time into a caller buffer that
/// only grows when a larger frame arrives, so steady-state reading allocates nothing.
///
/// Threading: use from one thread at a time.
public struct IVFReader: ByteSourceReader {
    /// The file header.
    public let header: IVFHeader
    /// Frames read so far.
    public private(set) var framesRead = 0
    /// The file's name, for messages.
    public var name: String { reader.name }
    private var reader: ByteReader

    /// Reads the file header from `source`.
    public init(source: ByteSource) throws(MediaFileError) {
        var r = try ByteReader(source: source, header: 32)
        let name = source.name
        let parsed = try r.withBytes(32) { b -> Result<(IVFHeader, Int), MediaFileError> in
            guard b.fourCC(0) == "DKIF" else {
                return .failure(.corrupt(path: name, reason: "not an IVF file (starts with '\(b.fourCC(0))')", offset: 0))
            }
            let version = b.le16(4)
            guard version == 0 else { return .failure(.unsupported(path: name, what: "IVF version \(version)")) }
            let size = Int(b.le16(6))
            guard size >= 32 else {
                return .failure(.corrupt(path: name, reason: "IVF header size \(size) (needs 32)", offset: 6))
            }
            guard let codec = IVFCodec(rawValue: b.fourCC(8)) else {
                return .failure(.unsupported(path: name, what: "IVF FourCC '\(b.fourCC(8))' (VP80 and VP90 are supported)"))
            }
            let rate = Int(b.le32(16)), scale = Int(b.le32(20))
            guard rate > 0, scale > 0 else {
                return .failure(.corrupt(path: name, reason: "IVF timebase \(scale)/\(rate)", offset: 16))
            }
            return .success((IVFHeader(codec: codec, width: Int(b.le16(12)), height: Int(b.le16(14)),
                                       timebaseNumerator: scale, timebaseDenominator: rate,
                                       frameCount: Int(b.le32(24))), size))
        }
        let (h, size) = try parsed.get()
        if size > 32 {
            let skipped = try r.skip(size - 32)
            if skipped < size - 32 { throw .truncated(path: name, offset: 32, expected: size - 32, got: skipped) }
        }
        header = h
        reader = r
    }

    /// Reads the next frame's payload into `buffer` (grown only if too small; the payload is
    /// `buffer[0..<header.size]`). Returns nil at a clean end of file.
    public mutating func read(into buffer: inout [UInt8]) throws(MediaFileError) -> IVFFrameHeader? {
        let offset = reader.offset
        let have = try reader.fill(atLeast: 12)
        if have == 0 { return nil }
        if have < 12 { throw .truncated(path: name, offset: offset, expected: 12, got: have) }
        let fh = try reader.withBytes(12) { b in IVFFrameHeader(size: Int(b.le32(0)), timestamp: b.le64(4)) }
        guard fh.size <= ivfMaxFrameSize else {
            throw .corrupt(path: name, reason: "IVF frame \(framesRead) claims \(fh.size) bytes (limit \(ivfMaxFrameSize))",
                           offset: offset)
        }
        // Grow the buffer as the bytes actually arrive (doubling), so a corrupt size on a short
        // file cannot make us allocate the whole claimed size.
        var got = 0
        while got < fh.size {
            if buffer.count < fh.size && buffer.count <= got {
                let grown = min(fh.size, max(buffer.count * 2, 65536))
                buffer.append(contentsOf: repeatElement(0, count: grown - buffer.count))
            }
            let want = min(fh.size, buffer.count) - got
            var r = reader
            let n = try buffer.withUnsafeMutableBytes { b in
                Result { () throws(MediaFileError) -> Int in
                    try r.read(into: UnsafeMutableRawBufferPointer(rebasing: b[got..<(got + want)]))
                }
            }.get()
            reader = r
            got += n
            if n < want { break }
        }
        if got < fh.size { throw .truncated(path: name, offset: offset + 12, expected: fh.size, got: got) }
        framesRead += 1
        return fh
    }
}

/// Streaming IVF writer: header at once, frames appended, frame count patched on close.
///
/// Threading: use from one thread at a time.
public struct IVFWriter {
    /// The header written (its frame count is patched on ``close()``).
    public let header: IVFHeader
    /// Frames written so far.
    public private(set) var framesWritten = 0
    private let sink: ByteSink

    /// Writes `header` to `sink`.
    /// - Throws: ``MediaFileError/invalidArgument(path:reason:)`` when a size does not fit the
    ///   16-bit fields or the timebase is not positive; the sink's errors.
    public init(sink: ByteSink, header: IVFHeader) throws(MediaFileError) {
        guard header.width >= 0 && header.width <= 65535 && header.height >= 0 && header.height <= 65535 else {
            throw .invalidArgument(path: sink.name, reason: "IVF frame size \(header.width)x\(header.height) does not fit 16 bits")
        }
        guard header.timebaseNumerator > 0 && header.timebaseDenominator > 0 else {
            throw .invalidArgument(path: sink.name,
                                   reason: "IVF timebase \(header.timebaseNumerator)/\(header.timebaseDenominator) is not positive")
        }
        self.sink = sink
        self.header = header
        var h = LEBytes()
        h.ascii("DKIF"); h.u16(0); h.u16(32); h.ascii(header.codec.rawValue)
        h.u16(UInt16(header.width)); h.u16(UInt16(header.height))
        h.u32(UInt32(header.timebaseDenominator)); h.u32(UInt32(header.timebaseNumerator))
        h.u32(UInt32(truncatingIfNeeded: header.frameCount)); h.u32(0)
        try sink.write(bytes: h.bytes)
    }

    /// Appends one compressed frame with its timestamp (timebase units). Throws
    /// ``MediaFileError/invalidArgument(path:reason:)`` for a frame over 4 GiB (IVF sizes are 32-bit).
    public mutating func write(_ payload: UnsafeRawBufferPointer, timestamp: UInt64) throws(MediaFileError) {
        guard payload.count <= Int(UInt32.max) else {
            throw .invalidArgument(path: sink.name, reason: "IVF frame of \(payload.count) bytes does not fit 32 bits")
        }
        var h = LEBytes()
        h.u32(UInt32(payload.count)); h.u64(timestamp)
        try sink.write(bytes: h.bytes)
        try sink.write(payload)
        framesWritten += 1
    }

    /// Appends one compressed frame from an array.
    public mutating func write(_ payload: [UInt8], timestamp: UInt64) throws(MediaFileError) {
        try payload.withUnsafeBytes { b in
            Result { () throws(MediaFileError) in try write(b, timestamp: timestamp) }
        }.get()
    }

    /// Patches the frame count and closes the sink.
    public mutating func close() throws(MediaFileError) {
        var c = LEBytes(); c.u32(UInt32(truncatingIfNeeded: framesWritten))
        try sink.seek(to: 24)
        try sink.write(bytes: c.bytes)
        try sink.close()
    }
}

/// The codecs an IVF file can carry here (the header's FourCC).
public enum IVFCodec: String, Sendable, Hashable {
    /// `VP80`.
    case vp8 = "VP80"
    /// `VP90`.
    case vp9 = "VP90"
}
