import Foundation
import ParleyDTLS
import ParleySDP
import ParleySRTP
import Testing
#if canImport(Glibc)
import Glibc
#endif

private let opensslPath = "/usr/bin/openssl"
private let hasOpenSSLCLI = FileManager.default.isExecutableFile(atPath: opensslPath)

/// A UDP socket on 127.0.0.1 that sends to one peer (given, or learnt from the first datagram).
private final class LoopbackUDP {
    let fd: Int32
    let port: UInt16
    var peer: sockaddr_in?

    init() throws {
        let s = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard s >= 0 else { throw POSIXError(.EIO) }
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
                bind(s, p, length) == 0 && getsockname(s, p, &length) == 0
            }
        }
        guard bound else { Glibc.close(s); throw POSIXError(.EADDRINUSE) }
        fd = s
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { Glibc.close(fd) }

    static func loopback(port: UInt16) -> sockaddr_in {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = port.bigEndian
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        return a
    }

    /// A port nobody listens on right now (bound, read, released).
    static func freePort() throws -> UInt16 { try LoopbackUDP().port }

    func send(_ bytes: UnsafeRawBufferPointer) {
        guard var peer else { return }
        _ = withUnsafePointer(to: &peer) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }

    /// The next datagram within `milliseconds`, or nil.
    func receive(milliseconds: Int32) -> [UInt8]? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, milliseconds) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65536)
        var from = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = withUnsafeMutablePointer(to: &from) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, &buffer, buffer.count, 0, $0, &length) }
        }
        guard n >= 0 else { return nil }
        if peer == nil { peer = from }
        return Array(buffer.prefix(n))
    }
}

/// `openssl s_server` or `s_client` over DTLS 1.2 with use_srtp, printing the RFC 5764 keying
/// material; its own P-256 certificate; stdout into a file, stdin kept open.
private final class OpenSSLPeer {
    let directory: URL
    let fingerprint: SDPFingerprint
    let process = Process()
    let input = Pipe()

    init(serverPort: UInt16, asServer: Bool, profile: String) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("parley-dtls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let cert = directory.appendingPathComponent("cert.pem").path, key = directory.appendingPathComponent("key.pem").path
        _ = try Self.run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                          "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=openssl-peer"])
        // "sha256 Fingerprint=AB:CD:..." -> SDP's form.
        let line = try Self.run(["x509", "-in", cert, "-noout", "-fingerprint", "-sha256"])
        let hex = try #require(line.split(separator: "=").last).trimmingCharacters(in: .whitespacesAndNewlines)
        fingerprint = try SDPFingerprint(parsing: "sha-256 " + hex)

        process.executableURL = URL(fileURLWithPath: opensslPath)
        let common = ["-dtls1_2", "-cert", cert, "-key", key, "-use_srtp", profile,
                      "-keymatexport", "EXTRACTOR-dtls_srtp", "-keymatexportlen", "60"]
        process.arguments = asServer
            ? ["s_server", "-accept", "127.0.0.1:\(serverPort)", "-naccept", "1", "-verify", "1"] + common
            : ["s_client", "-connect", "127.0.0.1:\(serverPort)"] + common
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = process.standardOutput
        process.standardInput = input
        try process.run()
    }

    var outputPath: String { directory.appendingPathComponent("out.txt").path }
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// The hex after "Keying material: ", once printed.
    var keyingMaterial: [UInt8]? {
        guard let range = output.range(of: "Keying material: ") else { return nil }
        let hex = output[range.upperBound...].prefix { $0.isHexDigit }
        guard hex.count == 120 else { return nil }
        var bytes: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex {
            let j = hex.index(i, offsetBy: 2)
            bytes.append(UInt8(hex[i..<j], radix: 16)!)
            i = j
        }
        return bytes
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }

    static func run(_ arguments: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: opensslPath)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw POSIXError(.EIO) }
        return String(decoding: data, as: UTF8.self)
    }
}

@Suite(.enabled(if: hasOpenSSLCLI, "needs the openssl command-line tool"))
struct OpenSSLInteropTests {
    /// Parley as `role` against OpenSSL's own s_server or s_client on a loopback UDP port: the
    /// handshake completes, both derive the same RFC 5764 keying material, data flows both ways.
    @Test(arguments: [DTLSRole.client, .server])
    func handshakeKeysAndDataAgreeWithOpenSSL(_ role: DTLSRole) throws {
        let udp = try LoopbackUDP()
        let serverPort = role == .client ? try LoopbackUDP.freePort() : udp.port
        if role == .client { udp.peer = LoopbackUDP.loopback(port: serverPort) }
        let peer = try OpenSSLPeer(serverPort: serverPort, asServer: role == .client, profile: "SRTP_AES128_CM_SHA1_80")
        defer { peer.stop() }
        let certificate = try DTLSCertificate()
        let connection = try DTLSConnection(
            role: role, certificate: certificate, peerFingerprint: peer.fingerprint,
            configuration: .init(srtpSuites: [.aeadAES128GCM, .aesCM128HMACSHA1_80], initialRetransmitTimeout: .milliseconds(200)),
            send: udp.send)
        var received: [UInt8] = []
        connection.applicationDataHandler = { received += $0 }
        try connection.start()
        let deadline = Date().addingTimeInterval(20)
        while connection.state != .connected, Date() < deadline {
            if let d = udp.receive(milliseconds: 20) { try connection.receive(d) }
            try connection.handleTimeout()
        }
        try #require(connection.state == .connected, "\(connection.state); openssl said: \(peer.output)")
        let keys = try #require(connection.srtpKeys)
        #expect(keys.suite == .aesCM128HMACSHA1_80)

        // OpenSSL's export: client key, server key, client salt, server salt.
        var material: [UInt8]?
        while material == nil, Date() < deadline {
            if let d = udp.receive(milliseconds: 20) { try connection.receive(d) }
            material = peer.keyingMaterial
        }
        let exported = try #require(material, "openssl said: \(peer.output)")
        let (client, server) = role == .client ? (keys.local, keys.remote) : (keys.remote, keys.local)
        #expect(exported == Array(client.material[0..<16] + server.material[0..<16] + client.material[16...] + server.material[16...]))

        // Application data both ways: OpenSSL prints what it gets and sends its stdin.
        try connection.send(applicationData: Array("parley to openssl\n".utf8))
        peer.input.fileHandleForWriting.write(Data("openssl to parley\n".utf8))
        while !peer.output.contains("parley to openssl") || received.isEmpty, Date() < deadline {
            if let d = udp.receive(milliseconds: 20) { try connection.receive(d) }
        }
        #expect(peer.output.contains("parley to openssl"))
        #expect(String(decoding: received, as: UTF8.self) == "openssl to parley\n")
        connection.close()
    }
}
