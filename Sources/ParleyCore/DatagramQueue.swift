// Datagrams handed from one thread to another (what ICE's thread receives, what usrsctp writes):
// a fixed ring of slots behind a lock, so steady-state traffic allocates nothing.


/// A bounded FIFO of datagrams, each with a time (its arrival), filled on one thread and drained
/// on another. Its storage is allocated once: `capacity` slots of `slotSize` bytes.
///
/// Sendable by its lock: the slots, lengths and arrival times are read and written only while
/// `ring` is held.
package final class DatagramQueue: @unchecked Sendable {
    /// The ring's position and its drops.
    private struct Ring {
        var head = 0
        var count = 0
        var droppedFull = 0
        var droppedOversized = 0
    }

    package let capacity: Int
    package let slotSize: Int
    private let ring = Locked(Ring())
    private let storage: UnsafeMutableRawBufferPointer
    private let lengths: UnsafeMutableBufferPointer<Int>
    private let arrivals: UnsafeMutableBufferPointer<MonotonicTime>

    /// A queue of `capacity` datagrams of up to `slotSize` bytes.
    package init(capacity: Int, slotSize: Int) {
        self.capacity = capacity
        self.slotSize = slotSize
        storage = .allocate(byteCount: capacity * slotSize, alignment: 16)
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: 0)
        arrivals = .allocate(capacity: capacity)
        arrivals.initialize(repeating: .zero)
    }

    deinit {
        storage.deallocate()
        lengths.deallocate()
        arrivals.deallocate()
    }

    /// Appends a copy of `datagram` with its time `arrival`; drops it (counted) when the queue is
    /// full or the datagram larger than a slot.
    package func push(_ datagram: UnsafeRawBufferPointer, at arrival: MonotonicTime) {
        let n = datagram.count
        let source = datagram.baseAddress
        ring.withLock { r in
            guard n <= slotSize else { r.droppedOversized += 1; return }
            guard r.count < capacity else { r.droppedFull += 1; return }
            let slot = (r.head + r.count) % capacity
            if let source, n > 0 { (storage.baseAddress! + slot * slotSize).copyMemory(from: source, byteCount: n) }
            lengths[slot] = n
            arrivals[slot] = arrival
            r.count += 1
        }
    }

    /// Moves the oldest datagram into `buffer` (at least a slot long) and returns its length and
    /// arrival time; nil when the queue is empty.
    package func pop(into buffer: UnsafeMutableRawBufferPointer) -> (length: Int, arrival: MonotonicTime)? {
        let target = buffer.baseAddress!
        return ring.withLock { r -> (length: Int, arrival: MonotonicTime)? in
            guard r.count > 0 else { return nil }
            let slot = r.head
            let n = lengths[slot]
            target.copyMemory(from: storage.baseAddress! + slot * slotSize, byteCount: n)
            r.head = (r.head + 1) % capacity
            r.count -= 1
            return (n, arrivals[slot])
        }
    }

    /// Datagrams dropped because the queue was full, and because they were larger than a slot.
    package var drops: (full: Int, oversized: Int) { ring.withLock { ($0.droppedFull, $0.droppedOversized) } }
}
