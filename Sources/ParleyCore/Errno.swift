// Compiled standalone by the fuzz targets in Fuzz/ (with the file-format errors that carry it):
// it imports only the platform's C library, and declares nothing `package`.
#if canImport(Glibc)
import Glibc
#endif

/// A POSIX error number, with the C library's message: the one errno type of every Parley
/// module (device, file, socket and clock calls).
///
/// Threading: a value type; freely sendable.
public struct Errno: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value (positive).
    public var rawValue: Int32
    /// Wraps an `errno` value.
    @inlinable public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `ENOENT`: no such file or directory.
    public static let noSuchFile = Errno(rawValue: ENOENT)
    /// `ENOTDIR`: a path component is not a directory.
    public static let notADirectory = Errno(rawValue: ENOTDIR)
    /// `EISDIR`: is a directory.
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// `ENODEV`: no such device.
    public static let noSuchDevice = Errno(rawValue: ENODEV)
    /// `ENXIO`: no such device or address.
    public static let noSuchDeviceOrAddress = Errno(rawValue: ENXIO)
    /// `ESRCH`: no such process.
    public static let noSuchProcess = Errno(rawValue: ESRCH)
    /// `EBUSY`: device or resource busy.
    public static let busy = Errno(rawValue: EBUSY)
    /// `EACCES`: permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EPERM`: operation not permitted.
    public static let notPermitted = Errno(rawValue: EPERM)
    /// `EINTR`: interrupted system call (retried by `valueOrErrno(retryOnInterrupt:_:)`, so
    /// callers normally never see it).
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EAGAIN`: try again (non-blocking I/O has nothing to do now).
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `EINVAL`: invalid argument.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `ENOMEM`: out of memory.
    public static let outOfMemory = Errno(rawValue: ENOMEM)
    /// `ENOTTY`: inappropriate ioctl for device (e.g. not a V4L2 device).
    public static let inappropriateIOControl = Errno(rawValue: ENOTTY)
    /// `EPIPE`: broken pipe (ALSA: overrun or underrun).
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ESTRPIPE`: streams pipe error (ALSA: suspended).
    public static let streamsPipe = Errno(rawValue: ESTRPIPE)

    /// The C library's message for it (`strerror`).
    public var description: String { String(cString: strerror(rawValue)) }
}
