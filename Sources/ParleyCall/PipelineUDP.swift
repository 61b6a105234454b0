// A real transport: RTP/RTCP datagrams over a UDP socket (IPv4).

#if canImport(Glibc)
import Glibc
#endif
import ParleyRTP

/// A socket failure: the call that failed and its `errno`.
public struct UDPTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    public var operation: String
    public var errno: Int32
    public var description: String { "\(operation): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// Datagrams over UDP: sends to one peer, receives what arrives on its own bound port.
///
/// Receiving is non-blocking: ``receive(until:_:)`` drains what the kernel holds and stamps each
/// datagram with the clock's time as it is read (so call it at least every playout frame).
/// Datagrams longer than ``RTPLimits/maximumDatagramSize`` are truncated by the kernel and dropped here (counted).
///
/// Threading: `~Copyable`, one owner; the socket closes when it is destroyed.
public struct UDPTransport: PacketTransport, ~Copyable {
    private let fd: Int32
    private var peer: sockaddr_in
    private let clock: any MediaClock
    private var buffer = [UInt8](repeating: 0, count: 2048)
    /// The bound local port.
    public let localPort: UInt16
    /// Counters: sent, send failures (counted as refused), received, oversized.
    public private(set) var sent = 0
    public private(set) var sendFailures = 0
    public private(set) var received = 0
    public private(set) var oversized = 0

    /// Binds `127.0.0.1:localPort` (0: any free port) and sends to `peerHost:peerPort`.
    /// - Throws: ``UDPTransportError`` if the socket cannot be created or bound, or the host is
    ///   not an IPv4 address.
    public init(localPort: UInt16 = 0, bindHost: String = "127.0.0.1", peerHost: String = "127.0.0.1",
                peerPort: UInt16, clock: any MediaClock) throws(UDPTransportError) {
        let s = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard s >= 0 else { throw UDPTransportError(operation: "socket", errno: Glibc.errno) }
        func address(_ host: String, _ port: UInt16) -> sockaddr_in? {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &a.sin_addr) == 1 else { return nil }
            return a
        }
        guard var local = address(bindHost, localPort), let remote = address(peerHost, peerPort) else {
            close(s)
            throw UDPTransportError(operation: "inet_pton", errno: EINVAL)
        }
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let e = Glibc.errno
            close(s)
            throw UDPTransportError(operation: "bind \(bindHost):\(localPort)", errno: e)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &length) }
        }
        fd = s
        peer = remote
        self.clock = clock
        self.localPort = UInt16(bigEndian: actual.sin_port)
    }

    deinit { close(fd) }

    /// Points the transport at another peer port (e.g. once the peer's port is known).
    public mutating func setPeer(port: UInt16) { peer.sin_port = port.bigEndian }

    public var inFlight: Int { 0 }

    public mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool {
        var r: Int
        repeat {
            r = withUnsafePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        } while r < 0 && Glibc.errno == EINTR
        guard r == bytes.count else { sendFailures += 1; return false }
        sent += 1
        return true
    }

    public mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {
        while true {
            let n = buffer.withUnsafeMutableBytes { b in recv(fd, b.baseAddress, b.count, Int32(MSG_DONTWAIT | MSG_TRUNC)) }
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                return   // EAGAIN: nothing more (other errors: ICMP port unreachable etc., ignored)
            }
            guard n <= RTPLimits.maximumDatagramSize else { oversized += 1; continue }
            received += 1
            let arrival = clock.now()
            buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<n]), arrival) }
        }
    }
}
