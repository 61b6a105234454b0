// A real transport: RTP/RTCP datagrams over a UDP socket (IPv4).

#if canImport(Glibc)
import Glibc
#endif
import ParleyRTP

/// A socket failure: the call that failed and its errno (the UDP transport's, and the HTTP
/// offer endpoint's, ``SDPExchangeServerError``).
public struct UDPTransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed, with its argument (`socket`, `bind 127.0.0.1:5004`, `resolve HOST: REASON`).
    public var operation: String
    /// Why: the call's errno (`Errno/invalidArgument` for an address that does not parse or resolve).
    public var errno: Errno
    /// `OPERATION: MESSAGE (errno N)`.
    public var description: String { "\(operation): \(errno) (errno \(errno.rawValue))" }
}

/// Datagrams over UDP: sends to one peer, receives what arrives on its own bound port.
///
/// Receiving is non-blocking: ``receive(until:_:)`` drains what the kernel holds and stamps each
/// datagram with the clock's time as it is read (so call it at least every playout frame).
/// Datagrams longer than `RTPLimits/maximumDatagramSize` are truncated by the kernel and dropped here (counted).
///
/// Threading: `~Copyable`, one owner; the socket closes when it is destroyed.
public struct UDPTransport: WaitablePacketTransport, ~Copyable {
    private let fd: Int32
    private var peer: sockaddr_in
    private var rtcpPeer: sockaddr_in?
    private let clock: any MediaClock
    private var buffer = [UInt8](repeating: 0, count: 2048)
    /// The bound local port.
    public let localPort: UInt16
    /// Counters: sent, send failures (counted as refused), received, oversized.
    public private(set) var sent = 0
    public private(set) var sendFailures = 0
    public private(set) var received = 0
    public private(set) var oversized = 0

    /// Binds `bindHost:localPort` (0: any free port; `bindHost` an IPv4 address, "0.0.0.0" for
    /// every interface) and sends to `peerHost:peerPort` (an IPv4 address or a host name,
    /// resolved once here). With `rtcpPeerPort`, RTCP datagrams (`RTPMultiplexing/isRTCP(_:)`, RFC 5761)
    /// go to that port of the peer instead (RFC 3550's separate RTCP port, PORT+1 by custom);
    /// without it RTP and RTCP share the port (RFC 5761 multiplexing).
    /// - Throws: ``UDPTransportError`` if the socket cannot be created or bound, or a host does
    ///   not resolve to an IPv4 address.
    public init(localPort: UInt16 = 0, bindHost: String = "127.0.0.1", peerHost: String = "127.0.0.1",
                peerPort: UInt16, rtcpPeerPort: UInt16? = nil, clock: any MediaClock) throws(UDPTransportError) {
        let s: Int32
        switch valueOrErrno({ socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0) }) {
        case .success(let fd): s = fd
        case .failure(let e): throw UDPTransportError(operation: "socket", errno: e)
        }
        let local: sockaddr_in, remote: sockaddr_in
        do {
            local = try Self.bindAddress(bindHost, port: localPort)
            remote = try Self.resolve(peerHost, port: peerPort)
        } catch {
            close(s)
            throw error
        }
        self.localPort = try Self.bind(s, to: local, named: "\(bindHost):\(localPort)")
        fd = s
        peer = remote
        rtcpPeer = rtcpPeerPort.map { port in
            var a = remote
            a.sin_port = port.bigEndian
            return a
        }
        self.clock = clock
    }

    deinit { close(fd) }

    /// Points the transport at another peer port (e.g. once the peer's port is known).
    public mutating func setPeer(port: UInt16) { peer.sin_port = port.bigEndian }

    /// Points the transport at another peer (e.g. the address a server answered with).
    /// - Throws: ``UDPTransportError`` if `host` does not resolve to an IPv4 address.
    public mutating func setPeer(host: String, port: UInt16) throws(UDPTransportError) {
        peer = try Self.resolve(host, port: port)
    }

    public var inFlight: Int { 0 }

    public mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool {
        var target = peer
        if let rtcpPeer, RTPMultiplexing.isRTCP(bytes) { target = rtcpPeer }
        let r = withUnsafePointer(to: &target) { address in
            address.withMemoryRebound(to: sockaddr.self, capacity: 1) { a in
                valueOrErrno {
                    sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), a, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard case .success(bytes.count) = r else { sendFailures += 1; return false }
        sent += 1
        return true
    }

    public func waitForDatagram(timeoutMilliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard case .success(let ready) = valueOrErrno({ poll(&p, 1, timeoutMilliseconds) }) else { return false }
        return ready > 0
    }

    /// The local IPv4 address this machine sends from towards `host` (an address or a name),
    /// as the kernel's routing picks it: what a peer there should send to (an SDP's c= line).
    /// Nil if `host` does not resolve or no route leads there.
    public static func localAddress(towards host: String) -> String? {
        guard var remote = try? resolve(host, port: 9) else { return nil }
        let s = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard s >= 0 else { return nil }
        defer { close(s) }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        var local = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &length) }
        }
        guard named == 0 else { return nil }
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &local.sin_addr, &text, socklen_t(text.count)) != nil else { return nil }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The address to bind a socket to: `host`, an IPv4 address ("0.0.0.0" for every
    /// interface), and `port`.
    static func bindAddress(_ host: String, port: UInt16) throws(UDPTransportError) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        guard inet_pton(AF_INET, host, &a.sin_addr) == 1 else {
            throw UDPTransportError(operation: "bind address \(host) (not an IPv4 address)", errno: .invalidArgument)
        }
        return a
    }

    /// Binds socket `s` to `local` and returns the port bound (the kernel's choice for port 0);
    /// when that fails, closes `s` and throws, naming the address as `name`.
    static func bind(_ s: Int32, to local: sockaddr_in, named name: String) throws(UDPTransportError) -> UInt16 {
        var local = local
        let bound = withUnsafePointer(to: &local) { address in
            address.withMemoryRebound(to: sockaddr.self, capacity: 1) { a in
                valueOrErrno(retryOnInterrupt: false) { Glibc.bind(s, a, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        if case .failure(let e) = bound {
            close(s)
            throw UDPTransportError(operation: "bind \(name)", errno: e)
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(s, $0, &length) }
        }
        return UInt16(bigEndian: actual.sin_port)
    }

    /// `host` (an IPv4 address or a name) and `port` as a socket address.
    static func resolve(_ host: String, port: UInt16) throws(UDPTransportError) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        if inet_pton(AF_INET, host, &a.sin_addr) == 1 { return a }
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let r = getaddrinfo(host, nil, &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard r == 0, let first = list, let address = first.pointee.ai_addr else {
            let reason = r == 0 ? "no IPv4 address" : String(cString: gai_strerror(r))
            throw UDPTransportError(operation: "resolve \(host): \(reason)", errno: .invalidArgument)
        }
        address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { a.sin_addr = $0.pointee.sin_addr }
        return a
    }

    public mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {
        while true {
            let result = buffer.withUnsafeMutableBytes { b in
                valueOrErrno { recv(fd, b.baseAddress, b.count, Int32(MSG_DONTWAIT | MSG_TRUNC)) }
            }
            // EAGAIN: nothing more (other errors: ICMP port unreachable etc., ignored).
            guard case .success(let n) = result else { return }
            guard n <= RTPLimits.maximumDatagramSize else { oversized += 1; continue }
            received += 1
            let arrival = clock.now()
            buffer.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<n]), arrival) }
        }
    }
}
