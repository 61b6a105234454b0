import CALSA
#if canImport(Glibc)
import Glibc
#endif

/// A failed alsa-lib call: what kind of failure, the PCM it was on, the operation, alsa-lib's
/// own message (`snd_strerror`) and any detail alsa-lib logged (for example "Unknown PCM foo").
///
/// Threading: a value type; freely sendable.
public struct ALSAError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in terms a caller can act on.
    public enum Kind: Sendable, Equatable {
        /// The PCM name is not defined, or its card or device does not exist.
        case noSuchDevice
        /// Another program holds the device.
        case busy
        /// The user may not open the device (often: not in the `audio` group).
        case permissionDenied
        /// The device does not offer the requested sample format, rate, channel count or
        /// period/buffer size; ``ALSAError/detail`` lists what it offers.
        case notOffered
        /// An overrun or underrun that could not be recovered.
        case xrun
        /// The device was suspended and could not be resumed.
        case suspended
        /// No data (or room) arrived within the timeout: the device has stalled.
        case timeout
        /// A configuration text or file could not be parsed.
        case invalidConfiguration
        /// A value the caller passed cannot work: a frame of another format than the stream's,
        /// a buffer that does not hold whole frames, fewer than two periods, a sample type
        /// other than `Int16` and `Float`. Nothing was transferred.
        case invalidArgument
        /// Anything else; see ``ALSAError/code``.
        case other
    }

    /// The kind of failure.
    public var kind: Kind
    /// alsa-lib's return value (a negative errno), or 0 when the failure is Parley's own check.
    public var code: Int32
    /// The PCM name as given by the caller (`default`, `hw:1,0`, ...).
    public var pcm: String
    /// The alsa-lib call or step that failed (`snd_pcm_open`, `snd_pcm_hw_params_set_rate`, ...).
    public var operation: String
    /// `snd_strerror(code)`, or Parley's explanation when `code` is 0.
    public var message: String
    /// Extra detail: what the device offers, or the message alsa-lib logged.
    public var detail: String?

    public init(kind: Kind, code: Int32, pcm: String, operation: String, message: String,
                detail: String? = nil) {
        self.kind = kind; self.code = code; self.pcm = pcm; self.operation = operation
        self.message = message; self.detail = detail
    }

    /// Parley's own refusal of a caller's value on `pcm`.
    static func invalidArgument(pcm: String, operation: String, _ message: String) -> ALSAError {
        ALSAError(kind: .invalidArgument, code: 0, pcm: pcm, operation: operation, message: message)
    }

    /// Builds the error for alsa-lib's negative return `code` from `operation` on `pcm`,
    /// picking up the message alsa-lib logged on this thread, if any.
    static func from(code: Int32, pcm: String, operation: String, kind: Kind? = nil) -> ALSAError {
        let errno = Errno(rawValue: -code)
        let k: Kind
        if let kind {
            k = kind
        } else {
            switch errno {
            case .noSuchFile, .noSuchDevice, .noSuchDeviceOrAddress: k = .noSuchDevice
            case .busy: k = .busy
            case .permissionDenied, .notPermitted: k = .permissionDenied
            case .brokenPipe: k = .xrun
            case .streamsPipe: k = .suspended
            default: k = .other
            }
        }
        let logged = ALSALog.take()
        return ALSAError(kind: k, code: code, pcm: pcm, operation: operation,
                         message: String(cString: snd_strerror(code)),
                         detail: logged.isEmpty ? nil : logged)
    }

    /// What to check, by kind.
    public var advice: String {
        switch kind {
        case .noSuchDevice:
            return "check the PCM name with 'parley devices' (or 'aplay -L'), that the card is "
                + "connected, and that ALSA_CONFIG_PATH or the configuration defines it"
        case .busy: return "another program is using the device; close it or use a 'plug'/'dsnoop' PCM"
        case .permissionDenied: return "check that you may open /dev/snd/* (usually: membership of the 'audio' group)"
        case .notOffered: return "choose a rate, channel count or format the device offers, or use a 'plughw:' PCM to convert"
        case .xrun: return "the application did not keep up with the device"
        case .suspended: return "the device was suspended (power management) and did not resume"
        case .timeout: return "the device delivered nothing in time; check that it is running and not stalled"
        case .invalidConfiguration: return "check the configuration syntax (see /usr/share/alsa/alsa.conf)"
        case .invalidArgument: return "pass frames of the stream's format (see `setup`), whole frames, at least two periods"
        case .other: return "see the ALSA message above"
        }
    }

    public var description: String {
        var s = "ALSA PCM '\(pcm)': \(operation) failed: \(message)"
        if let detail { s += " (\(detail))" }
        return s + "; " + advice
    }
}

/// The alsa-lib error log of the calling thread: alsa-lib's handler is replaced (once, process
/// wide) by one that keeps each thread's last message instead of printing it, so it can go into
/// ``ALSAError/detail``.
enum ALSALog {
    private static let installed: Bool = {
        parley_alsa_capture_errors()
        return true
    }()
    static let messages = Locked<[UInt: String]>([:])

    /// Installs the handler (idempotent) and clears the calling thread's message.
    static func begin() {
        _ = installed
        _ = messages.withLock { $0.removeValue(forKey: UInt(pthread_self())) }
    }

    /// The calling thread's last logged message ("" if none); clears it.
    static func take() -> String {
        messages.withLock { $0.removeValue(forKey: UInt(pthread_self())) } ?? ""
    }
}

/// Called by the C error handler in CALSA's shim with alsa-lib's formatted message.
@_cdecl("parley_alsa_store_error")
func parleyALSAStoreError(_ message: UnsafePointer<CChar>?) {
    guard let message else { return }
    let text = String(cString: message)
    ALSALog.messages.withLock { $0[UInt(pthread_self())] = text }
}
