import CV4L2
#if canImport(Glibc)
import Glibc
#endif

/// A picture size in pixels.
public struct FrameSize: Hashable, Sendable, CustomStringConvertible {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) { self.width = width; self.height = height }
    public var description: String { "\(width)x\(height)" }
}

/// The sizes a camera offers for one pixel format (`VIDIOC_ENUM_FRAMESIZES`).
public enum FrameSizeOffer: Hashable, Sendable, CustomStringConvertible {
    /// A list of exact sizes.
    case discrete([FrameSize])
    /// Any size from `min` to `max` in steps (continuous when the steps are 1).
    case stepwise(min: FrameSize, max: FrameSize, step: FrameSize)

    /// Whether `size` is among the offered sizes.
    public func offers(_ size: FrameSize) -> Bool {
        switch self {
        case .discrete(let sizes): return sizes.contains(size)
        case .stepwise(let lo, let hi, let step):
            guard size.width >= lo.width, size.width <= hi.width,
                  size.height >= lo.height, size.height <= hi.height else { return false }
            return (size.width - lo.width) % max(1, step.width) == 0
                && (size.height - lo.height) % max(1, step.height) == 0
        }
    }

    public var description: String {
        switch self {
        case .discrete(let sizes): return sizes.map(\.description).joined(separator: ", ")
        case .stepwise(let lo, let hi, let step): return "\(lo) to \(hi) in steps of \(step)"
        }
    }
}

/// A pixel format a camera lists (`VIDIOC_ENUM_FMT`).
public struct PixelFormatDescription: Hashable, Sendable {
    /// The four-character code (`YU12` is I420, `YUYV`, `MJPG`, ...).
    public var fourcc: String
    /// The driver's description.
    public var description: String
    /// True when libv4lconvert provides it by conversion (`V4L2_FMT_FLAG_EMULATED`).
    public var emulated: Bool
}

/// What a V4L2 node says about itself (`VIDIOC_QUERYCAP`).
public struct V4L2Capabilities: Hashable, Sendable {
    /// Driver name (`uvcvideo`, `vivid`, ...).
    public var driver: String
    /// Device name (`Integrated Camera`).
    public var card: String
    /// Bus location (`usb-0000:00:14.0-5`).
    public var busInfo: String
    /// `V4L2_CAP_*` flags of this node (`device_caps` when the driver reports them).
    public var capabilities: UInt32
    /// Whether the node captures video (`V4L2_CAP_VIDEO_CAPTURE`).
    public var canCapture: Bool { capabilities & UInt32(V4L2_CAP_VIDEO_CAPTURE) != 0 }
    /// Whether it supports mmap streaming (`V4L2_CAP_STREAMING`).
    public var canStream: Bool { capabilities & UInt32(V4L2_CAP_STREAMING) != 0 }
}

/// What to ask a camera for. Defaults are the common call request: 640x480 at 30 fps.
public struct V4L2Request: Hashable, Sendable {
    /// Picture size; must be offered exactly (no silent crop or scale).
    public var size: FrameSize
    /// Requested frame rate in frames per second.
    public var framesPerSecond: Double
    /// Lowest acceptable rate the camera may settle on; default: the requested rate.
    public var minimumFramesPerSecond: Double
    /// mmap buffers. Default 3: one being filled, one being read, one spare, so latency stays
    /// at about one frame while a late reader does not stall the camera.
    public var bufferCount: Int
    /// Longest wait for a picture, in milliseconds (default 2000).
    public var timeoutMilliseconds: Int

    /// Stores the request; ``V4L2Capture/init(device:request:)`` checks it (a positive frame
    /// rate, at least two buffers).
    public init(size: FrameSize = FrameSize(width: 640, height: 480), framesPerSecond: Double = 30,
                minimumFramesPerSecond: Double? = nil, bufferCount: Int = 3, timeoutMilliseconds: Int = 2000) {
        self.size = size
        self.framesPerSecond = framesPerSecond
        self.minimumFramesPerSecond = minimumFramesPerSecond ?? framesPerSecond
        self.bufferCount = bufferCount
        self.timeoutMilliseconds = timeoutMilliseconds
    }
}

/// Owns a libv4l2 file descriptor and its mmap buffers; stops streaming, unmaps and closes
/// when destroyed. Only trivially destroyed fields, so `close()` can `discard self`.
struct V4L2Handle: ~Copyable {
    let fd: Int32
    var streaming = false
    /// (address, length) of each mmap buffer; allocated once at setup.
    var mappings: UnsafeMutableBufferPointer<(UnsafeMutableRawPointer, Int)>

    init(fd: Int32) {
        self.fd = fd
        self.mappings = UnsafeMutableBufferPointer(start: nil, count: 0)
    }

    private static func release(fd: Int32, streaming: Bool,
                                mappings: UnsafeMutableBufferPointer<(UnsafeMutableRawPointer, Int)>) -> Int32 {
        if streaming { _ = parley_v4l2_streamoff(fd, V4L2_BUF_TYPE_VIDEO_CAPTURE) }
        for (address, length) in mappings { _ = v4l2_munmap(address, length) }
        mappings.deallocate()
        return v4l2_close(fd)
    }

    deinit { _ = Self.release(fd: fd, streaming: streaming, mappings: mappings) }

    consuming func close() -> Int32 {
        let (fd, streaming, mappings) = (self.fd, self.streaming, self.mappings)
        discard self
        return Self.release(fd: fd, streaming: streaming, mappings: mappings)
    }
}

/// A camera through libv4l2, delivering I420 `VideoFrame`s.
///
/// Opening checks, in order: the node exists and is a character device, it answers
/// `VIDIOC_QUERYCAP`, it captures video and streams; then it sets I420 (`V4L2_PIX_FMT_YUV420`,
/// converted by libv4lconvert from whatever the camera sends) at the requested size, asks for
/// the frame rate (`VIDIOC_S_PARM`), maps ``V4L2Request/bufferCount`` buffers and starts
/// streaming. Each failure is a ``V4L2Error`` naming the device, the step and what is offered.
///
/// Timestamps: `captureTime` is the driver's buffer timestamp when it is on the monotonic
/// clock (`V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC`, what UVC cameras report), else the time the
/// picture was dequeued; `timestamp` is `captureTime` on a 90 kHz clock from the first picture.
///
/// Threading: not copyable; use from one thread (or hand it to ``VideoCaptureStream``).
public struct V4L2Capture: ~Copyable, VideoCaptureSource {
    public typealias Failure = V4L2Error

    /// The device path.
    public let device: String
    /// What the node reported.
    public let capabilities: V4L2Capabilities
    /// The size agreed.
    public let size: FrameSize
    /// The frame rate the driver settled on (the request when the driver cannot say).
    public let framesPerSecond: Double
    /// Bytes per row of the Y plane in the mapped buffers.
    public let bytesPerLine: Int
    /// Pictures delivered so far.
    public private(set) var framesDelivered = 0

    public var width: Int { size.width }
    public var height: Int { size.height }

    private var handle: V4L2Handle
    private let timeoutMilliseconds: Int
    private var firstCapture: MonotonicTime?

    /// Opens `device` and starts streaming as `request` asks.
    /// - Throws: ``V4L2Error``; see ``V4L2Error/Kind`` for each case
    ///   (``V4L2Error/Kind/invalidRequest`` for a frame rate that is not positive, a size not
    ///   within 1...`VideoFrame.maximumDimension` a side or fewer than two buffers, before the
    ///   device is opened).
    public init(device: String, request: V4L2Request = V4L2Request()) throws(V4L2Error) {
        guard request.framesPerSecond > 0 else {
            throw V4L2Error(kind: .invalidRequest, device: device, operation: "request",
                            detail: "frame rate \(request.framesPerSecond) is not positive")
        }
        guard request.size.width > 0 && request.size.height > 0,
              request.size.width <= VideoFrame.maximumDimension && request.size.height <= VideoFrame.maximumDimension else {
            throw V4L2Error(kind: .invalidRequest, device: device, operation: "request",
                            detail: "picture size \(request.size) is not within 1...\(VideoFrame.maximumDimension) a side")
        }
        guard request.bufferCount >= 2 else {
            throw V4L2Error(kind: .invalidRequest, device: device, operation: "request",
                            detail: "\(request.bufferCount) buffers; streaming needs at least two")
        }
        let fd = try V4L2.open(device)
        var handle = V4L2Handle(fd: fd)
        let caps = try V4L2.queryCapabilities(fd, device: device)
        guard caps.canCapture else {
            throw V4L2Error(kind: .notACaptureDevice, device: device, operation: "VIDIOC_QUERYCAP",
                            detail: "\(caps.card) (\(caps.driver)), capabilities 0x\(String(caps.capabilities, radix: 16))")
        }
        guard caps.canStream else {
            throw V4L2Error(kind: .streamingNotSupported, device: device, operation: "VIDIOC_QUERYCAP",
                            detail: "\(caps.card) (\(caps.driver))")
        }
        let formats = V4L2.formats(fd)
        let i420 = parley_V4L2_PIX_FMT_YUV420()

        // Size: S_FMT adjusts to the nearest size it supports; anything else is refused.
        var format = v4l2_format()
        format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        format.fmt.pix.width = UInt32(request.size.width)
        format.fmt.pix.height = UInt32(request.size.height)
        format.fmt.pix.pixelformat = i420
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        if case .failure(let e) = valueOrErrno({ parley_v4l2_s_fmt(fd, &format) }) {
            throw V4L2Error.from(e, device: device, operation: "VIDIOC_S_FMT")
        }
        guard format.fmt.pix.pixelformat == i420 else {
            throw V4L2Error(kind: .formatNotOffered, device: device, operation: "VIDIOC_S_FMT",
                            detail: "offered: " + formats.map { "\($0.fourcc) (\($0.description))" }.joined(separator: ", "))
        }
        let got = FrameSize(width: Int(format.fmt.pix.width), height: Int(format.fmt.pix.height))
        guard got == request.size else {
            let offer = V4L2.frameSizes(fd, pixelFormat: i420)
            throw V4L2Error(kind: .sizeNotOffered, device: device, operation: "VIDIOC_S_FMT",
                            detail: "\(request.size) not offered (nearest \(got)); offered: \(offer.map(\.description) ?? "unknown")")
        }
        let bytesPerLine = max(Int(format.fmt.pix.bytesperline), got.width)

        // Frame rate: ask for 1/fps per frame; check what the driver settled on.
        var fps = request.framesPerSecond
        var parm = v4l2_streamparm()
        parm.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        if case .success = valueOrErrno({ parley_v4l2_g_parm(fd, &parm) }),
           parm.parm.capture.capability & UInt32(V4L2_CAP_TIMEPERFRAME) != 0 {
            let (num, den) = V4L2.fraction(for: request.framesPerSecond)
            parm.parm.capture.timeperframe = v4l2_fract(numerator: num, denominator: den)
            if case .failure(let e) = valueOrErrno({ parley_v4l2_s_parm(fd, &parm) }) {
                throw V4L2Error.from(e, device: device, operation: "VIDIOC_S_PARM")
            }
            let tpf = parm.parm.capture.timeperframe
            if tpf.numerator > 0 { fps = Double(tpf.denominator) / Double(tpf.numerator) }
            guard fps + 1e-6 >= request.minimumFramesPerSecond else {
                let rates = V4L2.frameRates(fd, pixelFormat: i420, size: got)
                throw V4L2Error(kind: .rateNotOffered, device: device, operation: "VIDIOC_S_PARM",
                                detail: "asked \(request.framesPerSecond) fps (minimum \(request.minimumFramesPerSecond)), "
                                    + "got \(fps); offered at \(got): \(rates)")
            }
        }

        // Buffers: request, map, queue, stream.
        var req = v4l2_requestbuffers()
        req.count = UInt32(request.bufferCount)
        req.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
        req.memory = V4L2_MEMORY_MMAP.rawValue
        if case .failure(let e) = valueOrErrno({ parley_v4l2_reqbufs(fd, &req) }) {
            throw V4L2Error.from(e, device: device, operation: "VIDIOC_REQBUFS")
        }
        guard req.count >= 2 else {
            throw V4L2Error(kind: .other, device: device, operation: "VIDIOC_REQBUFS",
                            detail: "driver granted \(req.count) buffers")
        }
        // The handle owns the storage from here on and sees only the buffers mapped so far,
        // so a failure part-way unmaps exactly those.
        let storage = UnsafeMutableBufferPointer<(UnsafeMutableRawPointer, Int)>.allocate(capacity: Int(req.count))
        handle.mappings = UnsafeMutableBufferPointer(rebasing: storage[0..<0])
        for i in 0..<Int(req.count) {
            var buf = v4l2_buffer()
            buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            buf.memory = V4L2_MEMORY_MMAP.rawValue
            buf.index = UInt32(i)
            if case .failure(let e) = valueOrErrno({ parley_v4l2_querybuf(fd, &buf) }) {
                throw V4L2Error.from(e, device: device, operation: "VIDIOC_QUERYBUF")
            }
            let length = Int(buf.length)
            guard let address = v4l2_mmap(nil, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                                          Int64(parley_v4l2_buffer_offset(&buf))),
                  address != MAP_FAILED else {
                throw V4L2Error.from(.current, device: device, operation: "v4l2_mmap")
            }
            storage[i] = (address, length)
            handle.mappings = UnsafeMutableBufferPointer(rebasing: storage[0...i])
            if case .failure(let e) = valueOrErrno({ parley_v4l2_qbuf(fd, &buf) }) {
                throw V4L2Error.from(e, device: device, operation: "VIDIOC_QBUF")
            }
        }
        if case .failure(let e) = valueOrErrno({ parley_v4l2_streamon(fd, V4L2_BUF_TYPE_VIDEO_CAPTURE) }) {
            throw V4L2Error.from(e, device: device, operation: "VIDIOC_STREAMON")
        }
        handle.streaming = true
        self.handle = handle
        self.device = device
        self.capabilities = caps
        self.size = got
        self.framesPerSecond = fps
        self.bytesPerLine = bytesPerLine
        self.timeoutMilliseconds = request.timeoutMilliseconds
    }

    /// A black frame of the capture size, to pass to ``read(into:)`` repeatedly.
    public func makeFrame() -> VideoFrame { VideoFrame(validatedWidth: size.width, height: size.height) }  // the request's, checked at init

    /// Waits (poll, up to the request's timeout) for the next picture, copies it into `frame`
    /// (reallocated only if its size differs) and requeues the buffer. Always returns true.
    @discardableResult
    public mutating func read(into frame: inout VideoFrame) throws(V4L2Error) -> Bool {
        let fd = handle.fd
        var buf = v4l2_buffer()
        while true {
            buf = v4l2_buffer()
            buf.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            buf.memory = V4L2_MEMORY_MMAP.rawValue
            switch valueOrErrno({ parley_v4l2_dqbuf(fd, &buf) }) {
            case .success: break
            case .failure(.wouldBlock):
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                switch valueOrErrno({ poll(&pfd, 1, Int32(clamping: timeoutMilliseconds)) }) {
                case .success(0):
                    throw V4L2Error(kind: .timeout, device: device, operation: "poll",
                                    detail: "no picture within \(timeoutMilliseconds) ms")
                case .success: continue
                case .failure(let e): throw V4L2Error.from(e, device: device, operation: "poll")
                }
            case .failure(let e):
                throw V4L2Error.from(e, device: device, operation: "VIDIOC_DQBUF")
            }
            break
        }
        let (address, length) = handle.mappings[Int(buf.index)]
        let used = buf.bytesused > 0 ? min(Int(buf.bytesused), length) : length
        if frame.width != size.width || frame.height != size.height {
            frame = makeFrame()
        }
        let complete = V4L2.copyI420(from: UnsafeRawBufferPointer(start: address, count: used),
                                     bytesPerLine: bytesPerLine, into: &frame)
        // Requeue before reporting anything, so the camera never runs out of buffers.
        if case .failure(let e) = valueOrErrno({ parley_v4l2_qbuf(fd, &buf) }) {
            throw V4L2Error.from(e, device: device, operation: "VIDIOC_QBUF")
        }
        guard complete else {
            throw V4L2Error(kind: .other, device: device, operation: "VIDIOC_DQBUF",
                            detail: "picture of \(used) bytes is shorter than \(size) I420")
        }
        let captured: MonotonicTime
        if buf.flags & UInt32(V4L2_BUF_FLAG_TIMESTAMP_MASK) == UInt32(V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC),
           buf.timestamp.tv_sec != 0 || buf.timestamp.tv_usec != 0 {
            captured = MonotonicTime(nanoseconds: Int64(buf.timestamp.tv_sec) * 1_000_000_000
                                     + Int64(buf.timestamp.tv_usec) * 1_000)
        } else {
            captured = .now()
        }
        let first = firstCapture ?? captured
        firstCapture = first
        frame.captureTime = captured
        frame.timestamp = UInt32(truncatingIfNeeded: first.nanoseconds(to: captured) * 9 / 100_000)
        framesDelivered += 1
        return true
    }

    /// Stops streaming, unmaps the buffers and closes the node; reports a failure to close.
    public consuming func close() throws(V4L2Error) {
        let device = self.device
        let r = handle.close()
        if r != 0 { throw V4L2Error.from(.current, device: device, operation: "close") }
    }
}

/// V4L2 helpers shared by ``V4L2Capture`` and ``V4L2Devices``.
enum V4L2 {
    /// Checks the path, then opens it through libv4l2 (non-blocking: reads wait in poll).
    static func open(_ device: String) throws(V4L2Error) -> Int32 {
        var st = stat()
        if case .failure(let e) = valueOrErrno({ stat(device, &st) }) {
            throw V4L2Error.from(e, device: device, operation: "stat")
        }
        let type = st.st_mode & S_IFMT
        guard type == S_IFCHR else {
            throw V4L2Error(kind: .notACharacterDevice, device: device, operation: "stat",
                            detail: type == S_IFDIR ? "a directory" : (type == S_IFREG ? "a regular file" : "not a device node"))
        }
        switch valueOrErrno({ parley_v4l2_open(device, O_RDWR | O_NONBLOCK | O_CLOEXEC) }) {
        case .success(let fd): return fd
        case .failure(let e) where e == .inappropriateIOControl || e == .invalidArgument:
            // libv4l2's open queries the capabilities and fails when the node is not V4L2.
            throw V4L2Error(kind: .notAVideoDevice, device: device, operation: "v4l2_open (VIDIOC_QUERYCAP)", errno: e)
        case .failure(let e): throw V4L2Error.from(e, device: device, operation: "open")
        }
    }

    static func queryCapabilities(_ fd: Int32, device: String) throws(V4L2Error) -> V4L2Capabilities {
        var cap = v4l2_capability()
        if case .failure(let e) = valueOrErrno({ parley_v4l2_querycap(fd, &cap) }) {
            throw V4L2Error.from(e, device: device, operation: "VIDIOC_QUERYCAP")
        }
        let flags = cap.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? cap.device_caps : cap.capabilities
        return V4L2Capabilities(driver: string(cap.driver), card: string(cap.card),
                                busInfo: string(cap.bus_info), capabilities: flags)
    }

    /// Pixel formats offered for capture, including libv4lconvert's emulated ones.
    static func formats(_ fd: Int32) -> [PixelFormatDescription] {
        var out: [PixelFormatDescription] = []
        var index: UInt32 = 0
        while true {
            var desc = v4l2_fmtdesc()
            desc.index = index
            desc.type = V4L2_BUF_TYPE_VIDEO_CAPTURE.rawValue
            guard case .success = valueOrErrno({ parley_v4l2_enum_fmt(fd, &desc) }) else { break }
            out.append(PixelFormatDescription(fourcc: fourcc(desc.pixelformat), description: string(desc.description),
                                              emulated: desc.flags & UInt32(V4L2_FMT_FLAG_EMULATED) != 0))
            index += 1
        }
        return out
    }

    /// Sizes offered for `pixelFormat`, or nil when the driver does not enumerate them.
    static func frameSizes(_ fd: Int32, pixelFormat: UInt32) -> FrameSizeOffer? {
        var sizes: [FrameSize] = []
        var index: UInt32 = 0
        while true {
            var e = v4l2_frmsizeenum()
            e.index = index
            e.pixel_format = pixelFormat
            guard case .success = valueOrErrno({ parley_v4l2_enum_framesizes(fd, &e) }) else { break }
            if e.type == V4L2_FRMSIZE_TYPE_DISCRETE.rawValue {
                sizes.append(FrameSize(width: Int(e.discrete.width), height: Int(e.discrete.height)))
            } else {
                let s = e.stepwise
                return .stepwise(min: FrameSize(width: Int(s.min_width), height: Int(s.min_height)),
                                 max: FrameSize(width: Int(s.max_width), height: Int(s.max_height)),
                                 step: FrameSize(width: Int(s.step_width), height: Int(s.step_height)))
            }
            index += 1
        }
        return sizes.isEmpty ? nil : .discrete(sizes)
    }

    /// Frame rates offered for `pixelFormat` at `size`, as text ("30, 15 fps" or a range).
    static func frameRates(_ fd: Int32, pixelFormat: UInt32, size: FrameSize) -> String {
        var rates: [String] = []
        var index: UInt32 = 0
        while true {
            var e = v4l2_frmivalenum()
            e.index = index
            e.pixel_format = pixelFormat
            e.width = UInt32(size.width)
            e.height = UInt32(size.height)
            guard case .success = valueOrErrno({ parley_v4l2_enum_frameintervals(fd, &e) }) else { break }
            if e.type == V4L2_FRMIVAL_TYPE_DISCRETE.rawValue {
                rates.append(rate(e.discrete))
            } else {
                return "\(rate(e.stepwise.max))-\(rate(e.stepwise.min)) fps"
            }
            index += 1
        }
        return rates.isEmpty ? "unknown" : rates.joined(separator: ", ") + " fps"
    }

    static func rate(_ f: v4l2_fract) -> String {
        guard f.numerator > 0 else { return "?" }
        let r = Double(f.denominator) / Double(f.numerator)
        return r == r.rounded() ? Swift.String(Int(r)) : Swift.String(Double(Int(r * 100)) / 100)
    }

    /// The time per frame for `fps` as a fraction: integer rates exactly (1/30), others with
    /// a 1000 numerator (29.97 -> 1000/29970).
    static func fraction(for fps: Double) -> (UInt32, UInt32) {
        if fps == fps.rounded() { return (1, UInt32(fps)) }
        return (1000, UInt32((fps * 1000).rounded()))
    }

    /// Copies an I420 picture whose Y rows are `bytesPerLine` apart (chroma rows half that)
    /// into `frame`. Returns false if `source` is too short (the frame is then incomplete).
    static func copyI420(from source: UnsafeRawBufferPointer, bytesPerLine: Int, into frame: inout VideoFrame) -> Bool {
        let w = frame.width, h = frame.height
        let cw = frame.chromaWidth, ch = frame.chromaHeight
        let chromaLine = (bytesPerLine + 1) / 2
        let ySize = bytesPerLine * h
        let cSize = chromaLine * ch
        guard source.count >= ySize + 2 * cSize, let src = source.baseAddress else { return false }
        let sy = frame.strideY, suv = frame.strideUV
        frame.withUnsafeMutablePlanes { y, u, v in
            for row in 0..<h {
                (y + row * sy).update(from: src.advanced(by: row * bytesPerLine).assumingMemoryBound(to: UInt8.self), count: w)
            }
            for row in 0..<ch {
                (u + row * suv).update(from: src.advanced(by: ySize + row * chromaLine).assumingMemoryBound(to: UInt8.self), count: cw)
                (v + row * suv).update(from: src.advanced(by: ySize + cSize + row * chromaLine).assumingMemoryBound(to: UInt8.self), count: cw)
            }
        }
        return true
    }

    static func fourcc(_ code: UInt32) -> Swift.String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: code >> (8 * $0)) }
        return Swift.String(decoding: bytes, as: UTF8.self)
    }

    /// A NUL-terminated fixed-size C char array (imported as a tuple) as a String.
    static func string<T>(_ tuple: T) -> Swift.String {
        withUnsafeBytes(of: tuple) { raw in
            let bytes = raw.prefix { $0 != 0 }
            return Swift.String(decoding: bytes, as: UTF8.self)
        }
    }
}
