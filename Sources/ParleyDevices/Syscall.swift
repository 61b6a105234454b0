#if canImport(Glibc)
import Glibc
#endif

/// A POSIX error number, with the C library's message.
///
/// Threading: a value type; freely sendable.
public struct Errno: Error, RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The `errno` value (positive).
    public var rawValue: Int32
    @inlinable public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `ENOENT`: no such file or directory.
    public static let noSuchFile = Errno(rawValue: ENOENT)
    /// `ENODEV`: no such device.
    public static let noSuchDevice = Errno(rawValue: ENODEV)
    /// `ENXIO`: no such device or address.
    public static let noSuchDeviceOrAddress = Errno(rawValue: ENXIO)
    /// `EBUSY`: device or resource busy.
    public static let busy = Errno(rawValue: EBUSY)
    /// `EACCES`: permission denied.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EPERM`: operation not permitted.
    public static let notPermitted = Errno(rawValue: EPERM)
    /// `EINTR`: interrupted system call (retried by the syscall layer, never surfaced).
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EAGAIN`: try again (non-blocking I/O).
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `EINVAL`: invalid argument.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `ENOTTY`: inappropriate ioctl for device (not a V4L2 device).
    public static let inappropriateIOControl = Errno(rawValue: ENOTTY)
    /// `EPIPE`: broken pipe (ALSA: overrun or underrun).
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ESTRPIPE`: streams pipe error (ALSA: suspended).
    public static let streamsPipe = Errno(rawValue: ESTRPIPE)
    /// `EISDIR`: is a directory.
    public static let isDirectory = Errno(rawValue: EISDIR)

    /// The `strerror` text.
    public var description: String { String(cString: strerror(rawValue)) }

    /// The calling thread's current `errno`.
    static var current: Errno { Errno(rawValue: errno) }
}

/// The one path every device call takes: retries while the call is interrupted (`EINTR`) and
/// maps a failure to ``Errno``.
enum Syscall {
    /// Calls `body` (a libc-style call returning -1 and setting errno on failure) until it is
    /// not interrupted; returns its result or the errno.
    @inline(__always)
    static func retrying<R: BinaryInteger>(_ body: () -> R) -> Result<R, Errno> {
        while true {
            let r = body()
            if r != -1 { return .success(r) }
            let e = Errno.current
            if e == .interrupted { continue }
            return .failure(e)
        }
    }

    /// Calls `body` (an alsa-lib-style call returning a negative errno on failure) until it is
    /// not interrupted; returns its non-negative result or the errno.
    @inline(__always)
    static func retryingNegative<R: SignedInteger & FixedWidthInteger>(_ body: () -> R) -> Result<R, Errno> {
        while true {
            let r = body()
            if r >= 0 { return .success(r) }
            let e = Errno(rawValue: Int32(truncatingIfNeeded: -r))
            if e == .interrupted { continue }
            return .failure(e)
        }
    }
}
