// SRTP and SDP for `parley send` and `parley receive`: the --srtp options, the SDP a sender
// writes for its receiver, and what a receiver takes from an SDP.

import Foundation
import ParleyRTP
import ParleySRTP
#if canImport(Glibc)
import Glibc
#endif

/// The RFC 6464 audio-level extension's URI (`a=extmap:1 ...`).
let audioLevelExtensionURI = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"

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

/// The stream a sender describes in its SDP.
struct SDPStream {
    enum Kind { case opus(channels: Int, fec: Bool, dtx: Bool), vp8 }
    var kind: Kind
    var host: String
    var port: UInt16
    var payloadType: UInt8
    var ssrc: UInt32
    var key: SRTPKey?
    /// The s= line and the a=ssrc cname.
    var sessionName = "parley send"
    var cname = "parley"

    /// The description: RFC 4566 with RFC 7587 / 7741 rtpmap and fmtp, the audio-level extmap,
    /// and with SRTP `RTP/SAVP` and an RFC 4568 crypto line.
    var description: SessionDescription {
        let isAudio: Bool
        var attributes: [SDPAttribute] = []
        switch kind {
        case .opus(let channels, let fec, let dtx):
            isAudio = true
            attributes.append(SDPAttribute("rtpmap", "\(payloadType) opus/48000/2"))
            var fmtp = ["minptime=10", "useinbandfec=\(fec ? 1 : 0)"]
            if channels == 2 { fmtp += ["stereo=1", "sprop-stereo=1"] }
            if dtx { fmtp.append("usedtx=1") }
            attributes.append(SDPAttribute("fmtp", "\(payloadType) " + fmtp.joined(separator: ";")))
            attributes.append(SDPAttribute("extmap", "1 \(audioLevelExtensionURI)"))
        case .vp8:
            isAudio = false
            attributes.append(SDPAttribute("rtpmap", "\(payloadType) VP8/90000"))
        }
        attributes.append(SDPAttribute("ssrc", "\(ssrc) cname:\(cname)"))
        if let key { attributes.append(SDPCrypto(suite: key.suite.rawValue, key: key.base64).attribute) }
        let media = SDPMedia(media: isAudio ? "audio" : "video", port: port, proto: key == nil ? "RTP/AVP" : "RTP/SAVP",
                             formats: [String(payloadType)], attributes: attributes)
        return SessionDescription(origin: "- \(ssrc) 1 IN IP4 127.0.0.1", sessionName: sessionName,
                                  connectionAddress: host, media: [media])
    }
}

/// A failure reading or writing an SDP file.
struct SDPFileError: Error, CustomStringConvertible {
    let description: String
}

/// Writes `text` to `path`, mode 0600 (an SDP may hold a key), replacing the file.
func writePrivateFile(_ text: String, to path: String) throws(SDPFileError) {
    let fd: Int32
    switch valueOrErrno({ open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600) }) {
    case .success(let opened): fd = opened
    case .failure(let e): throw SDPFileError(description: "\(path): \(e)")
    }
    defer { close(fd) }
    // An existing file keeps its mode through O_CREAT: set it.
    if case .failure(let e) = valueOrErrno({ fchmod(fd, 0o600) }) { throw SDPFileError(description: "\(path): \(e)") }
    let bytes = Array(text.utf8)
    var done = 0
    while done < bytes.count {
        switch bytes.withUnsafeBytes({ b in valueOrErrno { write(fd, b.baseAddress! + done, b.count - done) } }) {
        case .success(let n): done += n
        case .failure(let e): throw SDPFileError(description: "\(path): \(e)")
        }
    }
}

/// What `parley receive` and `parley call` take from an SDP: the first audio or video
/// section's codec, payload type, port, SRTP key, and the sender's SSRC and audio-level ID.
struct ReceivedSDP {
    enum Codec: String { case opus, vp8 }
    var codec: Codec
    var payloadType: UInt8
    var port: UInt16
    var key: SRTPKey?
    /// The sender's SSRC and cname (a=ssrc, RFC 5576), when the SDP gives them.
    var ssrc: UInt32?
    var cname: String?
    /// The RFC 8285 ID of the RFC 6464 audio level (a=extmap), when the SDP maps it.
    var audioLevelID: UInt8?
    /// The whole description (for the sections after the first).
    var session: SessionDescription

    /// Reads and checks `path`.
    init(path: String) throws(SDPFileError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SDPFileError(description: "\(path): cannot read the file")
        }
        let sdp: SessionDescription
        do { sdp = try SessionDescription(parsing: String(decoding: data, as: UTF8.self)) } catch {
            throw SDPFileError(description: "\(path): \(error)")
        }
        guard let media = sdp.media.first(where: { $0.media == "audio" || $0.media == "video" }) else {
            throw SDPFileError(description: "\(path): no m=audio or m=video section")
        }
        // The first listed payload type with a codec Parley receives.
        var found: (Codec, UInt8)?
        var seen: [String] = []
        for pt in media.payloadTypes {
            guard let map = media.rtpMap(for: pt) else {
                // Static payload types carry no rtpmap; none of them is Opus or VP8.
                seen.append("payload type \(pt)")
                continue
            }
            switch (map.encoding.lowercased(), map.clockRate) {
            case ("opus", 48_000): found = (.opus, pt)
            case ("vp8", 90_000): found = (.vp8, pt)
            default: seen.append("\(map.encoding)/\(map.clockRate)")
            }
            if found != nil { break }
        }
        guard let (codec, pt) = found else {
            throw SDPFileError(description: "\(path): m=\(media.media) offers no codec parley receives (opus/48000 or VP8/90000); "
                               + "it offers \(seen.isEmpty ? "nothing" : seen.joined(separator: ", "))")
        }
        session = sdp
        self.codec = codec
        payloadType = pt
        port = media.port
        audioLevelID = media.extensionMaps.first { $0.uri == audioLevelExtensionURI }?.id
        if let line = media.attributes.first(where: { $0.name == "ssrc" })?.value {
            let parts = line.split(separator: " ", maxSplits: 1)
            ssrc = parts.first.flatMap { UInt32($0) }
            if parts.count == 2, parts[1].hasPrefix("cname:") { cname = String(parts[1].dropFirst(6)) }
        }
        // ffmpeg's RTP muxer writes its a=crypto: line under RTP/AVP: the line decides.
        if let crypto = media.cryptos.first {
            do {
                key = try SRTPKey(suite: try SRTPSuite(name: crypto.suite), base64: crypto.key)
            } catch {
                throw SDPFileError(description: "\(path): a=crypto: \(error)")
            }
        } else if media.isSecure {
            throw SDPFileError(description: "\(path): m=\(media.media) is \(media.proto) but has no a=crypto: line")
        }
    }
}
