import CALSA

/// An alsa-lib configuration tree the caller supplies, so PCMs defined in it can be opened
/// without touching the user's or the system's files (`snd_config_load` +
/// `snd_pcm_open_lconf`).
///
/// By default the system configuration (`/usr/share/alsa/alsa.conf` and what it includes, as
/// alsa-lib itself loads it, honouring `ALSA_CONFIG_PATH`) is loaded first, so definitions in
/// the supplied text may refer to standard PCMs such as `null`, `hw` or `plug` by name.
///
/// Example (capture reads the raw samples of `/tmp/in.raw`; playback writes to a file):
/// ```
/// pcm.testcap  { type file; slave.pcm null; file "/dev/null"; infile "/tmp/in.raw"; format "raw" }
/// pcm.testplay { type file; slave.pcm null; file "/tmp/out.raw"; format "raw" }
/// ```
///
/// Threading: owns its tree; use it from one thread at a time. Not copyable: the tree is
/// freed (`snd_config_delete`) when the value is destroyed.
public struct ALSAConfigurationTree: ~Copyable {
    let root: OpaquePointer

    /// Parses `text` in alsa-lib's configuration syntax.
    /// - Parameters:
    ///   - text: the configuration.
    ///   - includingSystemConfiguration: load the system configuration first (default true, so
    ///     standard PCM names resolve).
    /// - Throws: ``ALSAError`` of kind `.invalidConfiguration` with alsa-lib's message.
    public init(text: String, includingSystemConfiguration: Bool = true) throws(ALSAError) {
        ALSALog.begin()
        let root = try Self.makeRoot(includingSystemConfiguration, source: "<text>")
        var input: OpaquePointer?
        let bytes = Array(text.utf8)
        let openResult = bytes.withUnsafeBufferPointer { buf in
            buf.withMemoryRebound(to: CChar.self) { c in
                snd_input_buffer_open(&input, c.baseAddress, c.count)
            }
        }
        guard openResult >= 0, let input else {
            snd_config_delete(root)
            throw ALSAError.from(code: openResult, pcm: "<configuration>", operation: "snd_input_buffer_open",
                                 kind: .invalidConfiguration)
        }
        let loaded = snd_config_load(root, input)
        snd_input_close(input)
        guard loaded >= 0 else {
            snd_config_delete(root)
            throw ALSAError.from(code: loaded, pcm: "<configuration>", operation: "snd_config_load",
                                 kind: .invalidConfiguration)
        }
        self.root = root
    }

    /// Reads and parses the configuration file at `path`.
    /// - Throws: ``ALSAError`` (`.noSuchDevice` when the file cannot be opened,
    ///   `.invalidConfiguration` when it cannot be parsed).
    public init(contentsOfFile path: String, includingSystemConfiguration: Bool = true) throws(ALSAError) {
        ALSALog.begin()
        let root = try Self.makeRoot(includingSystemConfiguration, source: path)
        var input: OpaquePointer?
        let opened = snd_input_stdio_open(&input, path, "r")
        guard opened >= 0, let input else {
            snd_config_delete(root)
            throw ALSAError.from(code: opened, pcm: path, operation: "snd_input_stdio_open")
        }
        let loaded = snd_config_load(root, input)
        snd_input_close(input)
        guard loaded >= 0 else {
            snd_config_delete(root)
            throw ALSAError.from(code: loaded, pcm: path, operation: "snd_config_load",
                                 kind: .invalidConfiguration)
        }
        self.root = root
    }

    private static func makeRoot(_ withSystem: Bool, source: String) throws(ALSAError) -> OpaquePointer {
        if withSystem {
            var top: OpaquePointer?
            let r = snd_config_update_ref(&top)
            guard r >= 0, let top else {
                throw ALSAError.from(code: r, pcm: source, operation: "snd_config_update_ref",
                                     kind: .invalidConfiguration)
            }
            defer { snd_config_unref(top) }
            var copy: OpaquePointer?
            let c = snd_config_copy(&copy, top)
            guard c >= 0, let copy else {
                throw ALSAError.from(code: c, pcm: source, operation: "snd_config_copy")
            }
            return copy
        }
        var root: OpaquePointer?
        let r = snd_config_top(&root)
        guard r >= 0, let root else {
            throw ALSAError.from(code: r, pcm: source, operation: "snd_config_top")
        }
        return root
    }

    deinit { snd_config_delete(root) }
}
