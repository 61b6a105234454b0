// libFuzzer target: arbitrary datagrams into a server-side DTLSConnection (OpenSSL's DTLS 1.2
// behind the connection's own checks and callbacks).
// Input: datagrams, each a 2-byte big-endian length and that many bytes (fewer at the end).
// Properties: receive returns or throws a DTLSError, never traps; every datagram the server
// sends fits the MTU; no SRTP keys unless connected (the peer's fingerprint matches no
// certificate, so never); the timer and close work in whatever state the input left.

private let certificate = try! DTLSCertificate()
private let stranger = try! SDPFingerprint.sha256([UInt8](repeating: 0xA5, count: 32))
private let mtu = 1200

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let server = try! DTLSConnection(role: .server, certificate: certificate, peerFingerprint: stranger,
                                     configuration: .init(mtu: mtu, initialRetransmitTimeout: .milliseconds(20))) { out in
        precondition(out.count <= mtu, "a datagram of \(out.count) bytes over the MTU")
    }
    var offset = 0
    while offset < size {
        var length = size - offset
        if length >= 2 {
            length = min(Int(data[offset]) << 8 | Int(data[offset + 1]), size - offset - 2)
            offset += 2
        }
        let datagram = UnsafeRawBufferPointer(start: data + offset, count: length)
        offset += length
        do { try server.receive(datagram) } catch {
            if case .failed = server.state { break }
        }
    }
    precondition(server.srtpKeys == nil && server.state != .connected, "connected to a certificate nobody has")
    _ = server.nextTimeout(now: .zero)
    try? server.handleTimeout()
    server.close()
    return 0
}
