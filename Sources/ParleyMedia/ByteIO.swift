// Pure Swift (no C imports): compiled standalone by the fuzz targets in Fuzz/.

/// Where a parser's bytes come from: a file descriptor (``FileByteSource``), or memory
/// (``MemoryByteSource``). Parsers only ever read forward.
///
/// Threading: not thread-safe; one reader uses a source at a time.
public protocol ByteSource: AnyObject {
    /// The name used in errors: the path, or a caller-given label for in-memory bytes.
    var name: String { get }
    /// Reads up to `buffer.count` bytes; returns how many were read, 0 only at the end.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(MediaFileError) -> Int
}

/// A file reader that parses its header from a ``ByteSource`` when created (``WAVReader``,
/// ``IVFReader``, ``Y4MReader``).
public protocol ByteSourceReader {
    /// Reads the header from `source`. Throws a ``MediaFileError`` that names the problem.
    init(source: ByteSource) throws(MediaFileError)
}

extension ByteSourceReader {
    /// Reads the header from in-memory bytes; `name` labels errors.
    public init(bytes: [UInt8], name: String = "<memory>") throws(MediaFileError) {
        try self.init(source: MemoryByteSource(bytes, name: name))
    }
}

/// Where a writer's bytes go. Writers append, and seek back only to patch header fields.
///
/// Threading: not thread-safe; one writer uses a sink at a time.
public protocol ByteSink: AnyObject {
    /// The name used in errors.
    var name: String { get }
    /// Writes all of `bytes` at the current position.
    func write(_ bytes: UnsafeRawBufferPointer) throws(MediaFileError)
    /// Moves the write position to `offset` bytes from the start.
    func seek(to offset: Int) throws(MediaFileError)
    /// Flushes and releases the sink; later writes are programming errors.
    func close() throws(MediaFileError)
}

/// A ``ByteSource`` over bytes in memory (tests, fuzzing, data already loaded).
public final class MemoryByteSource: ByteSource {
    public let name: String
    private let bytes: [UInt8]
    private var position = 0

    /// Creates a source over `bytes`; `name` labels errors.
    public init(_ bytes: [UInt8], name: String = "<memory>") {
        self.bytes = bytes
        self.name = name
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(MediaFileError) -> Int {
        let n = min(buffer.count, bytes.count - position)
        if n <= 0 { return 0 }
        bytes.withUnsafeBytes { src in
            buffer.baseAddress!.copyMemory(from: src.baseAddress! + position, byteCount: n)
        }
        position += n
        return n
    }
}

/// A ``ByteSink`` that collects bytes in memory; read them back from ``bytes``.
public final class MemoryByteSink: ByteSink {
    public let name: String
    /// Everything written so far.
    public private(set) var bytes: [UInt8] = []
    private var position = 0

    /// Creates an empty sink; `name` labels errors.
    public init(name: String = "<memory>") { self.name = name }

    public func write(_ data: UnsafeRawBufferPointer) throws(MediaFileError) {
        let end = position + data.count
        if end > bytes.count { bytes.append(contentsOf: repeatElement(0, count: end - bytes.count)) }
        bytes.withUnsafeMutableBytes { dst in
            if data.count > 0 {
                (dst.baseAddress! + position).copyMemory(from: data.baseAddress!, byteCount: data.count)
            }
        }
        position = end
    }

    public func seek(to offset: Int) throws(MediaFileError) {
        guard offset >= 0 && offset <= bytes.count else {
            throw .invalidArgument(path: name, reason: "seek to \(offset) outside 0...\(bytes.count)")
        }
        position = offset
    }

    public func close() throws(MediaFileError) {}
}

/// Buffered forward reading over a ``ByteSource`` with the absolute offset kept for errors.
///
/// The buffer is allocated once (default 64 KiB); large reads bypass it. Memory use is
/// constant whatever the length of the input.
public struct ByteReader {
    /// The source's name, for errors.
    public let name: String
    private let source: ByteSource
    /// Fixed storage, shared by copies of this reader (read-forward state is in the struct;
    /// callers copy-then-assign-back, so no copy ever reads stale bytes).
    private let storage: RawBuffer
    private var buffer: UnsafeMutableRawBufferPointer { storage.bytes }
    private var start = 0
    private var end = 0
    private var atEnd = false
    /// Absolute offset of the next byte to be consumed.
    public private(set) var offset = 0

    /// Creates a reader over `source` with a `bufferSize`-byte buffer.
    /// - Throws: ``MediaFileError/invalidArgument(path:reason:)`` when `bufferSize` is under 64.
    public init(source: ByteSource, bufferSize: Int = 65536) throws(MediaFileError) {
        guard bufferSize >= 64 else {
            throw .invalidArgument(path: source.name, reason: "read buffer of \(bufferSize) bytes is under 64")
        }
        self.source = source
        self.name = source.name
        self.storage = RawBuffer(count: bufferSize)
    }

    /// Creates a reader over `source` and buffers its first `count` bytes (a file header).
    /// - Throws: ``MediaFileError/empty(path:)`` for an empty source,
    ///   ``MediaFileError/truncated(path:offset:expected:got:)`` for one shorter than `count`.
    init(source: ByteSource, header count: Int) throws(MediaFileError) {
        try self.init(source: source)
        let have = try fill(atLeast: count)
        if have == 0 { throw .empty(path: name) }
        if have < count { throw .truncated(path: name, offset: 0, expected: count, got: have) }
    }

    /// Bytes buffered and not yet consumed.
    public var buffered: Int { end - start }

    /// Capacity of the internal buffer, in bytes (constant).
    public var bufferCapacity: Int { buffer.count }

    /// Refills until at least `count` bytes are buffered or the source ends.
    /// Returns the number of bytes then buffered. Throws
    /// ``MediaFileError/invalidArgument(path:reason:)`` when `count` exceeds the capacity.
    @discardableResult
    public mutating func fill(atLeast count: Int) throws(MediaFileError) -> Int {
        guard count <= buffer.count else {
            throw .invalidArgument(path: name, reason: "request of \(count) bytes is larger than the \(buffer.count)-byte buffer")
        }
        if end - start >= count || atEnd { return end - start }
        if start > 0 {
            let n = end - start
            if n > 0 { buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: n) }
            start = 0
            end = n
        }
        while end < count && !atEnd {
            let got = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[end...]))
            if got == 0 { atEnd = true } else { end += got }
        }
        return end - start
    }

    /// The byte at `index` past the read position (it must be buffered).
    @inline(__always) public func peek(_ index: Int) -> UInt8 { buffer[start + index] }

    /// Consumes `count` buffered bytes. Throws ``MediaFileError/invalidArgument(path:reason:)``
    /// when fewer than `count` (or a negative count) are buffered; nothing is consumed then.
    public mutating func consume(_ count: Int) throws(MediaFileError) {
        guard count >= 0 && count <= end - start else {
            throw .invalidArgument(path: name, reason: "cannot consume \(count) bytes with \(end - start) buffered")
        }
        start += count
        offset += count
    }

    /// Reads exactly `count` bytes (at most the buffer capacity) into the internal buffer and
    /// calls `body` with them; throws ``MediaFileError/truncated(path:offset:expected:got:)``
    /// if the input ends first.
    public mutating func withBytes<R>(_ count: Int,
                                      _ body: (UnsafeRawBufferPointer) -> R) throws(MediaFileError) -> R {
        let have = try fill(atLeast: count)
        if have < count {
            throw .truncated(path: name, offset: offset, expected: count, got: have)
        }
        let r = body(UnsafeRawBufferPointer(rebasing: buffer[start..<(start + count)]))
        try consume(count)
        return r
    }

    /// Reads up to `destination.count` bytes; fewer only at the end of the input.
    public mutating func read(into destination: UnsafeMutableRawBufferPointer) throws(MediaFileError) -> Int {
        var done = 0
        while done < destination.count {
            if end - start == 0 {
                if atEnd { break }
                let want = destination.count - done
                if want >= buffer.count {
                    // Large read: straight from the source, no copy through the buffer.
                    let got = try source.read(
                        into: UnsafeMutableRawBufferPointer(rebasing: destination[done...]))
                    if got == 0 { atEnd = true; break }
                    done += got
                    offset += got
                    continue
                }
                try fill(atLeast: min(want, buffer.count))
                if end - start == 0 { break }
            }
            let n = min(end - start, destination.count - done)
            (destination.baseAddress! + done).copyMemory(from: buffer.baseAddress! + start, byteCount: n)
            try consume(n)
            done += n
        }
        return done
    }

    /// Skips up to `count` bytes; returns how many were skipped (fewer only at the end).
    public mutating func skip(_ count: Int) throws(MediaFileError) -> Int {
        var left = count
        while left > 0 {
            if end - start == 0 {
                try fill(atLeast: min(left, buffer.count))
                if end - start == 0 { break }
            }
            let n = min(left, end - start)
            try consume(n)
            left -= n
        }
        return count - left
    }
}

// MARK: Little-endian field helpers.

extension UnsafeRawBufferPointer {
    @inline(__always) func le16(_ at: Int) -> UInt16 {
        UInt16(self[at]) | UInt16(self[at + 1]) << 8
    }
    @inline(__always) func le32(_ at: Int) -> UInt32 {
        UInt32(self[at]) | UInt32(self[at + 1]) << 8 | UInt32(self[at + 2]) << 16 | UInt32(self[at + 3]) << 24
    }
    @inline(__always) func le64(_ at: Int) -> UInt64 {
        UInt64(le32(at)) | UInt64(le32(at + 4)) << 32
    }
    /// Four bytes as ASCII text (non-printable bytes shown as `?`), for messages.
    func fourCC(_ at: Int) -> String {
        String(decoding: (0..<4).map { i -> UInt8 in
            let c = self[at + i]
            return (c >= 0x20 && c < 0x7f) ? c : 0x3f
        }, as: UTF8.self)
    }
}

/// Appends little-endian integers to a byte array (header building; not a hot path).
struct LEBytes {
    var bytes: [UInt8] = []
    mutating func u16(_ v: UInt16) { bytes.append(UInt8(v & 0xff)); bytes.append(UInt8(v >> 8)) }
    mutating func u32(_ v: UInt32) { for s in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8((v >> UInt32(s)) & 0xff)) } }
    mutating func u64(_ v: UInt64) { u32(UInt32(v & 0xffff_ffff)); u32(UInt32(v >> 32)) }
    mutating func ascii(_ s: String) { bytes.append(contentsOf: Array(s.utf8)) }
}

extension ByteSink {
    /// Writes all of `bytes` (header fields; not for hot paths).
    func write(bytes: [UInt8]) throws(MediaFileError) {
        try bytes.withUnsafeBytes { b in Result { () throws(MediaFileError) in try write(b) } }.get()
    }

    /// Writes `count` bytes of `buffer` from its start.
    func write(prefix count: Int, of buffer: [UInt8]) throws(MediaFileError) {
        try buffer.withUnsafeBytes { b in
            Result { () throws(MediaFileError) in try write(UnsafeRawBufferPointer(rebasing: b[0..<count])) }
        }.get()
    }
}

/// A fixed-size, manually allocated byte buffer owned by a reader or writer: its pointer can
/// be handed to a `mutating` method without the copy-on-write an array would risk.
final class RawBuffer {
    let bytes: UnsafeMutableRawBufferPointer
    init(count: Int) {
        bytes = .allocate(byteCount: count, alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
    }
    var count: Int { bytes.count }
    deinit { bytes.deallocate() }
}
