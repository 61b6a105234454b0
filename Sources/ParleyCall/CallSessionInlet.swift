
/// A call's inlet from other threads: closures posted from anywhere run on the call's thread,
/// in order, at the start of the session's next playout frame (``CallSession/post(_:)``).
///
/// It is `Sendable`, so a signalling task holds it instead of the session: a task that learns of
/// a new participant posts `{ session in try? session.addRemote(...) }`. Two buffers swap under
/// the lock, so draining allocates nothing once both have grown to the largest batch.
public final class CallSessionInlet: Sendable {
    private let pending = Locked<[@Sendable (CallSession) -> Void]>([])
    /// The batch being run, kept between frames for its capacity (touched by the call's thread only).
    private let running = Locked<[@Sendable (CallSession) -> Void]>([])

    /// An empty inlet (each ``CallSession`` has its own).
    public init() {}

    /// Queues `body` to run on the call's thread at the start of its next frame.
    public func post(_ body: @escaping @Sendable (CallSession) -> Void) {
        pending.withLock { $0.append(body) }
    }

    /// How many closures wait for the next frame.
    public var count: Int { pending.withLock { $0.count } }

    /// Runs what was posted before this call, on `session`'s thread.
    func run(on session: CallSession) {
        running.withLock { batch in
            pending.withLock { swap(&$0, &batch) }
            guard !batch.isEmpty else { return }
            for body in batch { body(session) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}
