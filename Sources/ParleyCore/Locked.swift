#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a POSIX mutex: the project's one lock.
///
/// The same contract as the standard library's `Synchronization.Mutex` (the value is reached
/// only inside ``withLock(_:)``; a value that is not `Sendable` goes in and out as `sending`), on
/// `pthread_mutex_t`, which ThreadSanitizer understands. `Mutex` on Linux parks on a futex that
/// the sanitizer does not see, so every access it guards is reported as a race. Uncontended,
/// locking costs one atomic operation either way.
///
/// Threading: any thread; not reentrant (locking again from inside ``withLock(_:)`` deadlocks).
public final class Locked<Value: ~Copyable>: @unchecked Sendable {   // the mutex guards `value`
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    /// A lock guarding `value`.
    public init(_ value: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.value = value
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock, and returns what it returns.
    @inline(__always)
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
