// UDP over POSIX sockets for `parley send` and `parley receive`: one small layer that retries
// EINTR and turns -1/errno into a typed error, so every socket failure reads the same.

#if canImport(Glibc)
import Glibc
#endif
import ParleyCore

/// A socket call failed: the operation, errno and its message.
struct SocketError: Error, CustomStringConvertible {
    let operation: String
    let code: Int32
    var description: String { "\(operation): \(String(cString: strerror(code))) (errno \(code))" }
}

/// Calls `body` until it does not fail with EINTR; maps -1 to ``SocketError``.
@discardableResult
private func retryingEINTR<T: BinaryInteger>(_ operation: String, _ body: () -> T) throws(SocketError) -> T {
    while true {
        let r = body()
        if r >= 0 { return r }
        let e = errno
        if e == EINTR { continue }
        throw SocketError(operation: operation, code: e)
    }
}

/// An IPv4 UDP endpoint.
struct UDPAddress {
    var storage = sockaddr_in()

    /// Resolves `host` (a name or dotted quad) and `port` to an IPv4 address.
    init(host: String, port: UInt16) throws(SocketError) {
        var hints = addrinfo()
        hints.ai_family = AF_INET
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        let r = getaddrinfo(host, String(port), &hints, &result)
        guard r == 0, let info = result, let addr = info.pointee.ai_addr else {
            throw SocketError(operation: "getaddrinfo(\(host))", code: r == EAI_SYSTEM ? errno : EINVAL)
        }
        defer { freeaddrinfo(result) }
        storage = UnsafeRawPointer(addr).loadUnaligned(as: sockaddr_in.self)
    }

    init(_ raw: sockaddr_in) { storage = raw }

    var port: UInt16 { UInt16(bigEndian: storage.sin_port) }
}

/// Parses `HOST:PORT` (the `--to` argument).
func parseHostPort(_ s: String) -> (String, UInt16)? {
    guard let colon = s.lastIndex(of: ":") else { return nil }
    let host = String(s[..<colon])
    guard !host.isEmpty, let port = UInt16(s[s.index(after: colon)...]), port > 0 else { return nil }
    return (host, port)
}

/// A UDP socket (IPv4). Closed on deinit.
///
/// Threading: `~Copyable`; used by one thread.
struct UDPSocket: ~Copyable {
    let fd: Int32

    /// Opens a socket; when `bindPort` is given, binds it on all interfaces (`INADDR_ANY`).
    init(bindPort: UInt16? = nil, receiveBufferBytes: Int32 = 4 << 20) throws(SocketError) {
        let s = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard s >= 0 else { throw SocketError(operation: "socket", code: errno) }
        var size = receiveBufferBytes
        _ = setsockopt(s, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        if let port = bindPort {
            var yes: Int32 = 1
            _ = setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = port.bigEndian
            addr.sin_addr.s_addr = INADDR_ANY
            do {
                try retryingEINTR("bind(port \(port))") {
                    withUnsafePointer(to: &addr) { p in
                        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                    }
                }
            } catch {
                close(s)
                throw error
            }
        }
        fd = s
    }

    deinit { close(fd) }

    /// Sends one datagram.
    func send(_ bytes: UnsafeRawBufferPointer, to address: UDPAddress) throws(SocketError) {
        var a = address.storage
        let fd = self.fd
        try retryingEINTR("sendto") {
            withUnsafePointer(to: &a) { p in
                p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// Waits up to `timeoutMilliseconds` for a datagram and reads it into `buffer`; returns its
    /// length (truncated datagrams are reported at the buffer's size), or nil on timeout.
    func receive(into buffer: UnsafeMutableRawBufferPointer, timeoutMilliseconds: Int32) throws(SocketError) -> Int? {
        var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let ready = try retryingEINTR("poll") { poll(&pfd, 1, timeoutMilliseconds) }
        guard ready > 0 else { return nil }
        let fd = self.fd
        let n = try retryingEINTR("recv") { recv(fd, buffer.baseAddress, buffer.count, 0) }
        return n
    }
}

/// Sleeps until the monotonic clock reaches `deadline` (returns at once if it has passed).
func sleep(until deadline: MonotonicTime) {
    while true {
        let remaining = deadline.nanoseconds - MonotonicTime.now().nanoseconds
        guard remaining > 0 else { return }
        var ts = timespec(tv_sec: Int(remaining / 1_000_000_000), tv_nsec: Int(remaining % 1_000_000_000))
        _ = nanosleep(&ts, nil)
    }
}
