#if canImport(Glibc)
import Glibc
#endif

// The one path every system and C-library call takes in Parley: retry while interrupted
// (`EINTR`, when asked), and turn the C convention's failure into an ``Errno``. Three
// conventions exist, one function each:
//   valueOrErrno          -1 and `errno` set (open, read, write, ioctl, socket, clock_gettime)
//   valueOrNegatedErrno   a negative errno returned (alsa-lib)
//   zeroOrErrno           0, or the errno returned (clock_nanosleep, the pthread calls)

extension Errno {
    /// The calling thread's current `errno`.
    package static var current: Errno { Errno(rawValue: errno) }
}

/// Calls `body`, a C call that returns -1 and sets `errno` on failure, again while it fails
/// with `EINTR` (unless `retryOnInterrupt` is false); returns its result or the errno.
@inline(__always)
package func valueOrErrno<R: BinaryInteger>(retryOnInterrupt: Bool = true,
                                            _ body: () -> R) -> Result<R, Errno> {
    while true {
        let r = body()
        if r != -1 { return .success(r) }
        let e = Errno.current
        if retryOnInterrupt && e == .interrupted { continue }
        return .failure(e)
    }
}

/// Calls `body`, a C call that returns a negative errno on failure (alsa-lib's convention),
/// again while it fails with `-EINTR` (unless `retryOnInterrupt` is false); returns its
/// non-negative result or the errno.
@inline(__always)
package func valueOrNegatedErrno<R: SignedInteger & FixedWidthInteger>(retryOnInterrupt: Bool = true,
                                                                       _ body: () -> R) -> Result<R, Errno> {
    while true {
        let r = body()
        if r >= 0 { return .success(r) }
        let e = Errno(rawValue: Int32(truncatingIfNeeded: -r))
        if retryOnInterrupt && e == .interrupted { continue }
        return .failure(e)
    }
}

/// Calls `body`, a C call that returns 0 on success and the errno itself on failure, again
/// while it returns `EINTR` (unless `retryOnInterrupt` is false).
@inline(__always)
package func zeroOrErrno(retryOnInterrupt: Bool = true, _ body: () -> Int32) -> Result<Void, Errno> {
    while true {
        let r = body()
        if r == 0 { return .success(()) }
        let e = Errno(rawValue: r)
        if retryOnInterrupt && e == .interrupted { continue }
        return .failure(e)
    }
}
