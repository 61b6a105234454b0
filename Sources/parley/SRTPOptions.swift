// SRTP and SDP files for `parley send`, `parley receive` and `parley call`: the --srtp options,
// and offers written to and read from files (the offers themselves are ParleySDP's).

import Foundation
import ParleyCore
import ParleySDP
import ParleySRTP
#if canImport(Glibc)
import Glibc
#endif

/// The receive statistics lines of SRTP drops, by reason.
func srtpReport(_ statistics: SRTPStatistics) -> [(String, String)] {
    [("srtp_auth_failed", String(statistics.droppedAuthentication)), ("srtp_replayed", String(statistics.droppedReplay)),
     ("srtp_malformed", String(statistics.droppedMalformed + statistics.droppedOther))]
}

/// `--srtp [--srtp-key BASE64] [--srtp-suite SUITE]`: the key to protect with, or nil without
/// SRTP. `--srtp-key` or `--srtp-suite` alone also turn SRTP on. Without `--srtp-key` a key is
/// generated from the system's random source. The key is never echoed in an error.
func parseSRTPKey(_ s: ArgumentScanner) throws(ArgumentScanner.UsageError) -> SRTPKey? {
    guard s.flag("srtp") || s.value("srtp-key") != nil || s.value("srtp-suite") != nil else { return nil }
    var suite = SRTPSuite.aesCM128HMACSHA1_80
    if let name = s.value("srtp-suite") {
        do { suite = try SRTPSuite(name: name) } catch { throw .init(description: "--srtp-suite: \(error)") }
    }
    do {
        if let text = s.value("srtp-key") { return try SRTPKey(suite: suite, base64: text) }
        return try SRTPKey.generate(suite: suite)
    } catch {
        throw .init(description: "--srtp-key: \(error)")
    }
}

/// Writes `text` to `path`, mode 0600 (an SDP may hold a key), replacing the file.
func writePrivateFile(_ text: String, to path: String) throws(CommandFailure) {
    let fd: Int32
    switch valueOrErrno({ open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }) {
    case .success(let opened): fd = opened
    case .failure(let e): throw CommandFailure("\(path): \(e)")
    }
    defer { close(fd) }
    // An existing file keeps its mode through O_CREAT: set it.
    if case .failure(let e) = valueOrErrno({ fchmod(fd, 0o600) }) { throw CommandFailure("\(path): \(e)") }
    let bytes = Array(text.utf8)
    var done = 0
    while done < bytes.count {
        switch bytes.withUnsafeBytes({ b in valueOrErrno { write(fd, b.baseAddress! + done, b.count - done) } }) {
        case .success(let n): done += n
        case .failure(let e): throw CommandFailure("\(path): \(e)")
        }
    }
}

/// An offer read from an SDP file (`parley receive --sdp`, `parley call --sdp-in`), with the SRTP
/// key of its first stream.
struct OfferFile {
    var offer: RTPOffer
    var key: SRTPKey?

    /// Reads and checks `path`.
    init(path: String) throws(CommandFailure) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure("\(path): cannot read the file")
        }
        do { offer = try RTPOffer(parsing: String(decoding: data, as: UTF8.self)) } catch {
            throw CommandFailure("\(path): \(error)")
        }
        if let crypto = offer.first?.crypto {
            do { key = try SRTPKey(crypto) } catch { throw CommandFailure("\(path): a=crypto: \(error)") }
        }
    }

    /// The first stream (an offer has at least one).
    var first: RTPStreamOffer { offer.streams[0] }
}

/// Writes `offer` to `path` when asked for (mode 0600: it may hold a key).
func writeOffer(_ offer: RTPOffer, to path: String?) throws(CommandFailure) {
    guard let path else { return }
    try writePrivateFile(offer.description.text, to: path)
}
