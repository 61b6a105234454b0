// The transport seam: what sends and receives datagrams, whatever carries them.

/// Carries datagrams from one sender to one receiver.
///
/// Threading: one owner (the call's scheduler thread) sends and receives.
public protocol PacketTransport: ~Copyable {
    /// Sends one datagram at local time `time`. Returns false when the transport refused it
    /// (back-pressure: a full queue); the caller counts it as dropped.
    mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool
    /// Hands every datagram that has arrived by `time` to `body` with its arrival time, in
    /// arrival order. The bytes are valid only during the call.
    mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void)
    /// Datagrams sent but not yet received (in flight).
    var inFlight: Int { get }
}

/// A transport backed by a socket, whose owner can sleep until a datagram arrives instead of
/// polling (a receive-only loop with nothing else to do between datagrams).
public protocol WaitablePacketTransport: PacketTransport, ~Copyable {
    /// Waits until a datagram can be read or `timeoutMilliseconds` pass (0: just checks).
    /// Returns whether one is waiting.
    func waitForDatagram(timeoutMilliseconds: Int32) -> Bool
}
