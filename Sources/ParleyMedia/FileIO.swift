#if canImport(Glibc)
import Glibc
#endif
import ParleyCore

/// `code` (by default the current `errno`) as a ``MediaFileError/io(path:operation:errno:message:)``.
private func ioError(_ path: String, _ operation: String, _ code: Errno = .current) -> MediaFileError {
    .io(path: path, operation: operation, errno: code, message: code.description)
}

/// Opens `path` with `flags` (and `mode` when creating), retrying `EINTR`; a directory is
/// ``MediaFileError/notARegularFile(path:kind:)``, any other failure an `open` error.
private func openFile(_ path: String, _ flags: Int32, _ mode: mode_t = 0) throws(MediaFileError) -> Int32 {
    switch valueOrErrno({ open(path, flags, mode) }) {
    case .success(let fd): return fd
    case .failure(let e) where e == .isDirectory: throw .notARegularFile(path: path, kind: "a directory")
    case .failure(let e): throw ioError(path, "open", e)
    }
}

/// Opens `path` for reading after checking it is a non-empty regular file.
/// Throws ``MediaFileError/notARegularFile(path:kind:)`` for a directory, device, FIFO or socket
/// and ``MediaFileError/empty(path:)`` for a zero-length file.
func openRegularFileForReading(_ path: String) throws(MediaFileError) -> (fd: Int32, size: Int) {
    let fd = try openFile(path, O_RDONLY | O_CLOEXEC)
    var st = stat()
    if fstat(fd, &st) != 0 {
        let e = ioError(path, "fstat")
        close(fd)
        throw e
    }
    let type = st.st_mode & S_IFMT
    if type != S_IFREG {
        close(fd)
        let kind: String
        switch type {
        case S_IFDIR: kind = "a directory"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        case S_IFIFO: kind = "a FIFO"
        case S_IFSOCK: kind = "a socket"
        default: kind = "not a regular file"
        }
        throw .notARegularFile(path: path, kind: kind)
    }
    if st.st_size == 0 {
        close(fd)
        throw .empty(path: path)
    }
    return (fd, Int(st.st_size))
}

/// A ``ByteSource`` reading a regular file through its file descriptor (`read(2)`, retrying
/// `EINTR`). Owns the descriptor and closes it when released.
public final class FileByteSource: ByteSource {
    public let name: String
    /// The file's size in bytes when opened.
    public let size: Int
    private let fd: Int32

    /// Opens `path`; throws for a missing, unreadable, empty or non-regular file.
    public init(path: String) throws(MediaFileError) {
        let (fd, size) = try openRegularFileForReading(path)
        self.fd = fd
        self.size = size
        self.name = path
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(MediaFileError) -> Int {
        if buffer.count == 0 { return 0 }
        switch valueOrErrno({ Glibc.read(fd, buffer.baseAddress, buffer.count) }) {
        case .success(let n): return n
        case .failure(let e): throw ioError(name, "read", e)
        }
    }

    deinit { close(fd) }
}

/// A ``ByteSink`` writing a file (created or truncated, mode 0644) through its descriptor.
public final class FileByteSink: ByteSink {
    public let name: String
    private var fd: Int32

    /// Creates or truncates `path` for writing.
    public init(path: String) throws(MediaFileError) {
        self.fd = try openFile(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        self.name = path
    }

    /// Writes all of `bytes`. Throws ``MediaFileError/invalidArgument(path:reason:)`` after
    /// the sink was closed, ``MediaFileError/io(path:operation:errno:message:)`` when the write fails.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(MediaFileError) {
        guard fd >= 0 else { throw .invalidArgument(path: name, reason: "write after close") }
        var done = 0
        while done < bytes.count {
            switch valueOrErrno({ Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done) }) {
            case .success(let n): done += n
            case .failure(let e): throw ioError(name, "write", e)
            }
        }
    }

    public func seek(to offset: Int) throws(MediaFileError) {
        if lseek(fd, off_t(offset), SEEK_SET) < 0 { throw ioError(name, "lseek") }
    }

    public func close() throws(MediaFileError) {
        guard fd >= 0 else { return }
        // Not retried: after EINTR the descriptor is already released on Linux.
        let r = valueOrErrno(retryOnInterrupt: false) { Glibc.close(fd) }
        fd = -1
        if case .failure(let e) = r, e != .interrupted { throw ioError(name, "close", e) }
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }
}

extension WAVReader {
    /// Opens the WAV file at `path` and reads its header.
    public init(path: String) throws(MediaFileError) {
        try self.init(source: FileByteSource(path: path))
    }
}

extension WAVWriter {
    /// Creates (or truncates) the WAV file at `path` and writes its header.
    public init(path: String, format: WAVFormat) throws(MediaFileError) {
        try self.init(sink: FileByteSink(path: path), format: format)
    }
}

extension Y4MReader {
    /// Opens the Y4M file at `path` and reads its header.
    public init(path: String) throws(MediaFileError) { try self.init(source: FileByteSource(path: path)) }
}

extension Y4MWriter {
    /// Creates (or truncates) the Y4M file at `path` and writes its header.
    public init(path: String, header: Y4MHeader) throws(MediaFileError) {
        try self.init(sink: FileByteSink(path: path), header: header)
    }
}

extension IVFReader {
    /// Opens the IVF file at `path` and reads its header.
    public init(path: String) throws(MediaFileError) { try self.init(source: FileByteSource(path: path)) }
}

extension MJRReader {
    /// Opens the Janus recording at `path` and reads its header.
    public init(path: String) throws(MediaFileError) { try self.init(source: FileByteSource(path: path)) }
}

extension IVFWriter {
    /// Creates (or truncates) the IVF file at `path` and writes its header.
    public init(path: String, header: IVFHeader) throws(MediaFileError) {
        try self.init(sink: FileByteSink(path: path), header: header)
    }
}

/// A descriptor libsndfile can read and seek for the bytes on `fd`, owned by the caller of
/// this function: a duplicate of `fd` when it is a regular file, else (a pipe, socket,
/// terminal, device) an unlinked temporary file in `temporaryDirectory` (default `$TMPDIR`,
/// else `/tmp`) holding everything read from `fd` up to its end.
/// Throws ``MediaFileError/empty(path:)`` when there are no bytes, and names `name` in errors.
func readableCopy(of fd: Int32, name: String, temporaryDirectory: String?) throws(MediaFileError) -> Int32 {
    var st = stat()
    if fstat(fd, &st) != 0 { throw ioError(name, "fstat") }
    let type = st.st_mode & S_IFMT
    if type == S_IFDIR { throw .notARegularFile(path: name, kind: "a directory") }
    if type == S_IFREG {
        let offset = lseek(fd, 0, SEEK_CUR)
        if offset >= 0 {
            if st.st_size <= offset { throw .empty(path: name) }
            let copy = fcntl(fd, F_DUPFD_CLOEXEC, 0)
            if copy < 0 { throw ioError(name, "dup") }
            return copy
        }
    }
    var dir = temporaryDirectory ?? getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    if dir.isEmpty { dir = "/tmp" }
    var template = Array((dir + "/parley-stream-XXXXXX").utf8CString)
    let spool = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    if spool < 0 { throw ioError(dir, "create a temporary file in") }
    _ = fcntl(spool, F_SETFD, FD_CLOEXEC)
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    var total = 0
    let chunk = 1 << 16
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
    defer { buffer.deallocate() }
    while true {
        let n: Int
        switch valueOrErrno({ Glibc.read(fd, buffer, chunk) }) {
        case .success(let count): n = count
        case .failure(let e):
            close(spool)
            throw ioError(name, "read", e)
        }
        if n == 0 { break }
        var done = 0
        while done < n {
            switch valueOrErrno({ Glibc.write(spool, buffer + done, n - done) }) {
            case .success(let w): done += w
            case .failure(let e):
                close(spool)
                throw ioError(dir, "write a temporary copy of \(name) in", e)
            }
        }
        total += n
    }
    if total == 0 {
        close(spool)
        throw .empty(path: name)
    }
    if lseek(spool, 0, SEEK_SET) < 0 {
        let e = ioError(name, "lseek")
        close(spool)
        throw e
    }
    return spool
}

