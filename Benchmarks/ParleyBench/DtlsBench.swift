import ParleyDTLS

// The dtls suite. `dtls/handshake`: one DTLS-SRTP handshake, client and server in this process
// with the datagrams handed across in memory (certificates made once, connections made per
// handshake), to the exported SRTP keys. `dtls/record-1000`: one 1000-byte application-data
// record sent by one side and received by the other over an established connection.

/// Handshakes per timed sample.
private let handshakeIterations = 50
/// Records per timed sample.
private let recordIterations = 20_000

/// The datagrams one side sent and the other has not yet received.
private final class Mailbox {
    var datagrams: [[UInt8]] = []
}

/// A client and a server with finished handshake; nil when it failed.
private func connectedPair(_ client: DTLSCertificate, _ server: DTLSCertificate,
                           toServer: @escaping (UnsafeRawBufferPointer) -> Void = { _ in },
                           toClient: @escaping (UnsafeRawBufferPointer) -> Void = { _ in }) -> (DTLSConnection, DTLSConnection)? {
    let up = Mailbox(), down = Mailbox()
    var handshaking = true
    guard let c = try? DTLSConnection(role: .client, certificate: client, peerFingerprint: server.fingerprint,
                                      send: { handshaking ? up.datagrams.append(Array($0)) : toServer($0) }),
          let s = try? DTLSConnection(role: .server, certificate: server, peerFingerprint: client.fingerprint,
                                      send: { handshaking ? down.datagrams.append(Array($0)) : toClient($0) }),
          (try? c.start()) != nil else { return nil }
    while !up.datagrams.isEmpty || !down.datagrams.isEmpty {
        let u = up.datagrams, d = down.datagrams
        up.datagrams.removeAll(keepingCapacity: true)
        down.datagrams.removeAll(keepingCapacity: true)
        for x in u { guard (try? s.receive(x)) != nil else { return nil } }
        for x in d { guard (try? c.receive(x)) != nil else { return nil } }
    }
    handshaking = false
    return c.state == .connected && s.state == .connected ? (c, s) : nil
}

/// Benchmarks for the dtls suite.
func dtlsBenchmarks() -> [Benchmark] {
    guard let clientCertificate = try? DTLSCertificate(), let serverCertificate = try? DTLSCertificate() else { return [] }
    // One datagram in flight at a time, copied into a buffer made once.
    final class Slot {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 16)
        var count = 0
    }
    let slot = Slot()
    let pair = connectedPair(clientCertificate, serverCertificate, toServer: { d in
        slot.count = d.count
        slot.buffer.copyMemory(from: d)
    })
    let payload = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    var received = 0
    pair?.1.applicationDataHandler = { received &+= Int($0[$0.count - 1]) &+ $0.count }
    return [
        Benchmark(name: "dtls/handshake", unit: .nsPerOp, iterations: handshakeIterations) {
            var sum: UInt64 = 0
            for _ in 0..<handshakeIterations {
                guard let (c, _) = connectedPair(clientCertificate, serverCertificate) else { return 0 }
                sum &+= UInt64(c.srtpKeys?.local.material[0] ?? 0) &+ 1
            }
            return sum
        },
        Benchmark(name: "dtls/record-1000", unit: .nsPerPacket, iterations: recordIterations) {
            guard let (client, server) = pair else { return 0 }
            payload.withUnsafeBytes { bytes in
                for _ in 0..<recordIterations {
                    guard (try? client.send(applicationData: bytes)) != nil,
                          (try? server.receive(UnsafeRawBufferPointer(rebasing: slot.buffer[0..<slot.count]))) != nil else { return }
                }
            }
            return UInt64(received)
        },
    ]
}
