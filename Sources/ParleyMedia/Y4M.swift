// Pure Swift (no C imports): compiled standalone by the fuzz targets in Fuzz/.
#if canImport(ParleyCore)
import ParleyCore
#endif

/// A Y4M stream header: `YUV4MPEG2 W<w> H<h> F<n>:<d> I<i> A<n>:<d> C<cs> X<...>`.
public struct Y4MHeader: Sendable, Hashable {
    /// Luma width and height in pixels.
    public var width: Int
    public var height: Int
    /// Frame rate as a fraction, frames per second = numerator / denominator.
    public var frameRateNumerator: Int
    public var frameRateDenominator: Int
    /// Interlacing (`p` progressive, `t`/`b` field order, `m` mixed, `?` unknown).
    public var interlace: Character
    /// Pixel aspect ratio; 0:0 when unknown.
    public var pixelAspectNumerator: Int
    public var pixelAspectDenominator: Int
    /// Chroma siting; always 4:2:0.
    public var colourspace: Y4MColourspace
    /// Whether the `C` parameter was present (written back only if it was, for exact round trips).
    public var colourspaceGiven: Bool
    /// `X` comment parameters, without the `X`, in order.
    public var extensions: [String]

    /// Creates a header. Defaults: progressive, square pixels, `C420jpeg`.
    public init(width: Int, height: Int, frameRateNumerator: Int = 30, frameRateDenominator: Int = 1,
                interlace: Character = "p", pixelAspectNumerator: Int = 1, pixelAspectDenominator: Int = 1,
                colourspace: Y4MColourspace = .c420jpeg, colourspaceGiven: Bool = true,
                extensions: [String] = []) {
        self.width = width; self.height = height
        self.frameRateNumerator = frameRateNumerator; self.frameRateDenominator = frameRateDenominator
        self.interlace = interlace
        self.pixelAspectNumerator = pixelAspectNumerator; self.pixelAspectDenominator = pixelAspectDenominator
        self.colourspace = colourspace; self.colourspaceGiven = colourspaceGiven
        self.extensions = extensions
    }

    /// Bytes of one frame's planes: Y plus two quarter-size (rounded up) chroma planes.
    public var frameByteCount: Int {
        width * height + 2 * ((width + 1) / 2) * ((height + 1) / 2)
    }

    /// The header line, without the final newline.
    public var line: String {
        var s = "YUV4MPEG2 W\(width) H\(height) F\(frameRateNumerator):\(frameRateDenominator) I\(interlace)"
        s += " A\(pixelAspectNumerator):\(pixelAspectDenominator)"
        if colourspaceGiven { s += " C\(colourspace.rawValue)" }
        for x in extensions { s += " X\(x)" }
        return s
    }
}

/// Largest accepted width or height, so a corrupt header cannot ask for a huge allocation.
public let y4mMaxDimension = 16384
/// Longest accepted header or `FRAME` line.
let y4mMaxLine = 4096

/// Reads one `\n`-terminated line (at most ``y4mMaxLine`` bytes) and passes its bytes to `body`.
/// Returns nil at a clean end of input (no byte left).
private func readLine<R>(_ r: inout ByteReader, what: String,
                         _ body: (UnsafeRawBufferPointer) -> R) throws(MediaFileError) -> R? {
    let have = try r.fill(atLeast: min(y4mMaxLine + 1, r.bufferCapacity))
    if have == 0 { return nil }
    var nl = -1
    for i in 0..<min(have, y4mMaxLine + 1) where r.peek(i) == 0x0A { nl = i; break }
    if nl < 0 {
        if have <= y4mMaxLine {
            throw .truncated(path: r.name, offset: r.offset, expected: have + 1, got: have)
        }
        throw .corrupt(path: r.name, reason: "\(what) line longer than \(y4mMaxLine) bytes", offset: r.offset)
    }
    let result = try r.withBytes(nl) { body($0) }
    try r.consume(1)
    return result
}

private func parseInt(_ s: Substring) -> Int? {
    guard !s.isEmpty, s.count <= 9, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    return Int(s)
}

private func parseRatio(_ s: Substring) -> (Int, Int)? {
    let parts = s.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let a = parseInt(parts[0]), let b = parseInt(parts[1]) else { return nil }
    return (a, b)
}

/// Streaming Y4M reader for 4:2:0 files (`C420jpeg`, `C420paldv`, `C420mpeg2`, `C420`, or no
/// `C`); other colourspaces are refused naming them. Reads one frame at a time into a
/// caller's `VideoFrame` (no allocation when reused); memory is constant.
///
/// Frame timestamps are 90 kHz: `index * 90000 * denominator / numerator`.
///
/// Threading: use from one thread at a time.
public struct Y4MReader: ByteSourceReader {
    /// The stream header.
    public let header: Y4MHeader
    /// Frames read so far.
    public private(set) var framesRead = 0
    /// The file's name, for messages.
    public var name: String { reader.name }
    private var reader: ByteReader

    /// Reads the stream header from `source`.
    public init(source: ByteSource) throws(MediaFileError) {
        var r = try ByteReader(source: source, header: 1)
        let name = source.name
        guard let line = try readLine(&r, what: "header", { String(decoding: $0, as: UTF8.self) }) else {
            throw .empty(path: name)
        }
        let tokens = line.split(separator: " ", omittingEmptySubsequences: true)
        guard tokens.first == "YUV4MPEG2" else {
            throw .corrupt(path: name, reason: "not a Y4M file (no YUV4MPEG2 signature)", offset: 0)
        }
        var h = Y4MHeader(width: 0, height: 0, frameRateNumerator: 0, frameRateDenominator: 0,
                          interlace: "?", pixelAspectNumerator: 0, pixelAspectDenominator: 0,
                          colourspace: .c420jpeg, colourspaceGiven: false)
        for t in tokens.dropFirst() {
            let value = t.dropFirst()
            func bad(_ what: String) -> MediaFileError {
                .corrupt(path: name, reason: "bad \(what) '\(t.prefix(40))' in the Y4M header", offset: 0)
            }
            switch t.first! {
            case "W": guard let v = parseInt(value) else { throw bad("width") }; h.width = v
            case "H": guard let v = parseInt(value) else { throw bad("height") }; h.height = v
            case "F":
                guard let (n, d) = parseRatio(value), n > 0, d > 0 else { throw bad("frame rate") }
                h.frameRateNumerator = n; h.frameRateDenominator = d
            case "A":
                guard let (n, d) = parseRatio(value) else { throw bad("pixel aspect") }
                h.pixelAspectNumerator = n; h.pixelAspectDenominator = d
            case "I":
                guard value.count == 1, "ptbm?".contains(value.first!) else { throw bad("interlace") }
                h.interlace = value.first!
            case "C":
                guard let cs = Y4MColourspace(rawValue: String(value)) else {
                    throw .unsupported(path: name, what: "Y4M colourspace C\(value.prefix(40)) (only 4:2:0 is supported)")
                }
                h.colourspace = cs; h.colourspaceGiven = true
            case "X": h.extensions.append(String(value))
            default: throw bad("parameter")
            }
        }
        guard h.width > 0, h.height > 0 else {
            throw .corrupt(path: name, reason: "missing or zero width/height in the Y4M header", offset: 0)
        }
        guard h.width <= y4mMaxDimension, h.height <= y4mMaxDimension else {
            throw .unsupported(path: name, what: "Y4M frame \(h.width)x\(h.height) (largest side \(y4mMaxDimension))")
        }
        guard h.frameRateNumerator > 0 else {
            throw .corrupt(path: name, reason: "missing frame rate (F) in the Y4M header", offset: 0)
        }
        header = h
        reader = r
    }

    /// Reads the next frame into `frame`, which must have the stream's width and height (any
    /// strides). Returns false at the end of the stream. Sets the frame's 90 kHz timestamp.
    public mutating func read(into frame: inout VideoFrame) throws(MediaFileError) -> Bool {
        guard frame.width == header.width, frame.height == header.height else {
            throw .invalidArgument(path: name, reason:
                "frame is \(frame.width)x\(frame.height), stream is \(header.width)x\(header.height)")
        }
        let lineOffset = reader.offset
        guard let ok = try readLine(&reader, what: "FRAME", { b in
            b.count >= 5 && b[0] == 0x46 && b[1] == 0x52 && b[2] == 0x41 && b[3] == 0x4D && b[4] == 0x45
                && (b.count == 5 || b[5] == 0x20)
        }) else { return false }
        guard ok else {
            throw .corrupt(path: name, reason: "expected a FRAME line", offset: lineOffset)
        }
        let dataOffset = reader.offset
        let w = header.width, h = header.height, cw = frame.chromaWidth, ch = frame.chromaHeight
        let expected = header.frameByteCount
        var got = 0
        let sy = frame.strideY, suv = frame.strideUV
        var r = reader
        let result = frame.withUnsafeMutablePlanes { y, u, v -> Result<Int, MediaFileError> in
            Result { () throws(MediaFileError) -> Int in
                var total = 0
                func rows(_ base: UnsafeMutablePointer<UInt8>, _ width: Int, _ height: Int, _ stride: Int) throws(MediaFileError) -> Bool {
                    if stride == width {
                        let n = try r.read(into: UnsafeMutableRawBufferPointer(start: base, count: width * height))
                        total += n
                        return n == width * height
                    }
                    for row in 0..<height {
                        let n = try r.read(into: UnsafeMutableRawBufferPointer(start: base + row * stride, count: width))
                        total += n
                        if n < width { return false }
                    }
                    return true
                }
                if try rows(y, w, h, sy), try rows(u, cw, ch, suv) { _ = try rows(v, cw, ch, suv) }
                return total
            }
        }
        reader = r
        got = try result.get()
        if got < expected {
            throw .truncated(path: name, offset: dataOffset, expected: expected, got: got)
        }
        let fps = Double(header.frameRateNumerator) / Double(header.frameRateDenominator)
        frame.timestamp = UInt32(truncatingIfNeeded:
            framesRead * 90_000 * header.frameRateDenominator / header.frameRateNumerator)
        frame.captureTime = MonotonicTime(seconds: Double(framesRead) / fps)
        framesRead += 1
        return true
    }

    /// Reads the next frame into a new `VideoFrame` (allocates; reuse a frame with
    /// ``read(into:)`` in loops). Returns nil at the end of the stream.
    public mutating func readFrame() throws(MediaFileError) -> VideoFrame? {
        var frame = VideoFrame(validatedWidth: header.width, height: header.height)  // checked when the header was read
        return try read(into: &frame) ? frame : nil
    }
}

/// Streaming Y4M writer (4:2:0): the header at once, then `FRAME` + planes per frame.
///
/// Threading: use from one thread at a time.
public struct Y4MWriter {
    /// The header written.
    public let header: Y4MHeader
    /// Frames written so far.
    public private(set) var framesWritten = 0
    private let sink: ByteSink
    private static let frameLine: [UInt8] = Array("FRAME\n".utf8)

    /// Writes `header` to `sink`.
    /// - Throws: ``MediaFileError/invalidArgument(path:reason:)`` when the frame size or the
    ///   frame rate is not positive; the sink's errors.
    public init(sink: ByteSink, header: Y4MHeader) throws(MediaFileError) {
        guard header.width > 0 && header.height > 0 else {
            throw .invalidArgument(path: sink.name, reason: "Y4M frame size \(header.width)x\(header.height) is not positive")
        }
        guard header.frameRateNumerator > 0 && header.frameRateDenominator > 0 else {
            throw .invalidArgument(path: sink.name,
                                   reason: "Y4M frame rate \(header.frameRateNumerator):\(header.frameRateDenominator) is not positive")
        }
        self.sink = sink
        self.header = header
        try sink.write(bytes: Array((header.line + "\n").utf8))
    }

    /// Appends `frame`, which must have the header's width and height (any strides).
    public mutating func write(_ frame: VideoFrame) throws(MediaFileError) {
        guard frame.width == header.width, frame.height == header.height else {
            throw .invalidArgument(path: sink.name, reason:
                "frame is \(frame.width)x\(frame.height), stream is \(header.width)x\(header.height)")
        }
        try sink.write(bytes: Self.frameLine)
        let w = header.width, h = header.height, cw = frame.chromaWidth, ch = frame.chromaHeight
        let sy = frame.strideY, suv = frame.strideUV
        let s = sink
        try frame.withUnsafePlanes { y, u, v in
            Result { () throws(MediaFileError) in
                func rows(_ base: UnsafePointer<UInt8>, _ width: Int, _ height: Int, _ stride: Int) throws(MediaFileError) {
                    if stride == width {
                        try s.write(UnsafeRawBufferPointer(start: base, count: width * height))
                    } else {
                        for row in 0..<height { try s.write(UnsafeRawBufferPointer(start: base + row * stride, count: width)) }
                    }
                }
                try rows(y, w, h, sy); try rows(u, cw, ch, suv); try rows(v, cw, ch, suv)
            }
        }.get()
        framesWritten += 1
    }

    /// Closes the sink.
    public func close() throws(MediaFileError) { try sink.close() }
}

/// The 4:2:0 chroma sitings a Y4M file can declare (the `C` header parameter). All are stored
/// the same way (I420 planes); only the chroma sample position differs.
public enum Y4MColourspace: String, Sendable, Hashable, CaseIterable {
    /// `C420jpeg`: chroma centred (JPEG/MPEG-1); the default when `C` is absent.
    case c420jpeg = "420jpeg"
    /// `C420paldv`: PAL-DV siting.
    case c420paldv = "420paldv"
    /// `C420mpeg2`: MPEG-2 siting (left-aligned horizontally).
    case c420mpeg2 = "420mpeg2"
    /// `C420`: unspecified 4:2:0.
    case c420 = "420"
}
