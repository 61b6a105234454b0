import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A Janus process for the tests: a minimal configuration in a temporary folder (HTTP on
/// 127.0.0.1 at a free port, admin off, only the AudioBridge, VideoRoom and TextRoom plugins), started as a
/// child process and stopped by its process id.
public final class JanusServer: @unchecked Sendable {
    /// The `janus` binary, if installed.
    public static let binaryPath: String? = ["/usr/bin/janus", "/usr/local/bin/janus"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    public let folder: URL
    public let port: UInt16
    let process = Process()
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/janus")! }
    public var logFile: URL { folder.appendingPathComponent("janus.log") }

    /// The one interface Janus gathers ICE candidates on (`ice_enforce_list`), for WebRTC
    /// tests in a network namespace; nil: Janus's default.
    public let iceInterface: String?

    /// Writes the configuration and starts Janus; returns once its HTTP API answers. A busy
    /// two-core machine running the other suites beside it can hold Janus's start (certificate
    /// generation, plugin loading) for many seconds: it gets up to 90 s.
    public init(iceInterface: String? = nil) async throws {
        self.iceInterface = iceInterface
        guard let binary = Self.binaryPath else { throw ServerError("janus is not installed") }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("parley-janus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = try Self.freePort()
        try writeConfiguration()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-F", folder.path, "-N", "-o", "-L", logFile.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(90)
        var request = URLRequest(url: baseURL.appendingPathComponent("info"))
        request.timeoutInterval = 5
        while true {
            if let (_, response) = try? await URLSession.shared.data(for: request),
               (response as? HTTPURLResponse)?.statusCode == 200 {
                return
            }
            if !process.isRunning || ContinuousClock.now > deadline {
                let log = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
                await stop()
                throw ServerError("Janus did not answer at \(baseURL) within 90 s; log:\n\(log.suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// Stops Janus by its process id (SIGTERM, then SIGKILL after 2 s) and removes the folder.
    /// (Started from the test process, Janus seldom exits on SIGTERM alone: the grace is short.)
    public func stop() async {
        if process.isRunning {
            let pid = process.processIdentifier
            kill(pid, SIGTERM)
            let deadline = ContinuousClock.now + .seconds(2)
            while process.isRunning && ContinuousClock.now < deadline {
                try? await Task.sleep(for: .milliseconds(20))
            }
            if process.isRunning {
                kill(pid, SIGKILL)
                process.waitUntilExit()
            }
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs `body` with a fresh Janus, stopping it afterwards whether `body` throws or not.
    public static func with<T: Sendable>(iceInterface: String? = nil, _ body: (JanusServer) async throws -> T) async throws -> T {
        let server = try await JanusServer(iceInterface: iceInterface)
        do {
            let result = try await body(server)
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// A TCP port nothing listens on (bound to port 0 on 127.0.0.1, then released).
    public static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServerError("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw ServerError("bind failed") }
        return UInt16(bigEndian: address.sin_port)
    }

    /// The plugin and transport folders, read from the installed `janus.jcfg`.
    private static func installedFolder(_ key: String) -> String? {
        guard let text = try? String(contentsOfFile: "/etc/janus/janus.jcfg", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix(key), let open = trimmed.firstIndex(of: "\"") else { continue }
            let rest = trimmed[trimmed.index(after: open)...]
            if let close = rest.firstIndex(of: "\"") { return String(rest[..<close]) }
        }
        return nil
    }

    private func writeConfiguration() throws {
        let fallback = "/usr/lib/x86_64-linux-gnu/janus"
        let plugins = Self.installedFolder("plugins_folder") ?? "\(fallback)/plugins"
        let transports = Self.installedFolder("transports_folder") ?? "\(fallback)/transports"
        let otherPlugins = (try? FileManager.default.contentsOfDirectory(atPath: plugins)) ?? []
        let disabledPlugins = otherPlugins.filter {
            $0.hasSuffix(".so") && !["libjanus_audiobridge.so", "libjanus_videoroom.so", "libjanus_textroom.so"].contains($0)
        }
        let otherTransports = (try? FileManager.default.contentsOfDirectory(atPath: transports)) ?? []
        let disabledTransports = otherTransports.filter { $0.hasSuffix(".so") && $0 != "libjanus_http.so" }
        let rtpBase = 20_000 + Int(port % 20_000)
        let files = [
            "janus.jcfg": """
                general: {
                \tconfigs_folder = "\(folder.path)"
                \tplugins_folder = "\(plugins)"
                \ttransports_folder = "\(transports)"
                \tdebug_level = 4
                \tsession_timeout = 60
                }
                media: {
                \trtp_port_range = "\(rtpBase)-\(rtpBase + 200)"
                }
                nat: {
                \t\(iceInterface.map { "ice_enforce_list = \"\($0)\"" } ?? "ice_ignore_list = \"vmnet\"")
                }
                plugins: {
                \tdisable = "\(disabledPlugins.joined(separator: ","))"
                }
                transports: {
                \tdisable = "\(disabledTransports.joined(separator: ","))"
                }
                events: {
                \tbroadcast = false
                }
                loggers: {
                \tdisable = "libjanus_jsonlog.so"
                }

                """,
            "janus.transport.http.jcfg": """
                general: {
                \tjson = "plain"
                \tbase_path = "/janus"
                \thttp = true
                \tip = "127.0.0.1"
                \tport = \(port)
                \thttps = false
                }
                admin: {
                \tadmin_http = false
                \tadmin_https = false
                }

                """,
            "janus.plugin.audiobridge.jcfg": "general: {\n\tlocal_ip = \"127.0.0.1\"\n}\n",
            "janus.plugin.videoroom.jcfg": "general: {\n}\n",
            "janus.plugin.textroom.jcfg": "general: {\n}\n",
        ]
        for (name, text) in files {
            try text.write(to: folder.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
    }
}

public struct ServerError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
