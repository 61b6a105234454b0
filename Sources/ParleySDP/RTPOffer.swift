// One side of an RTP call as its SDP tells it, built and read in one place: what `parley send`
// writes for its receiver, what `parley receive` reads from ffmpeg or GStreamer, and the offer
// each side of `parley call` writes and reads (SDES keys, RFC 4568; no negotiation: each side
// describes what it sends and where it listens).

#if canImport(ParleyRTP)
import ParleyRTP  // absent when compiled standalone with the RTP sources (Fuzz/targets/sdp)
#endif

/// A codec Parley sends and receives over RTP, with the parameters its SDP carries.
public enum RTPCodec: Sendable, Hashable {
    /// Opus (RFC 7587): `opus/48000/2`, its fmtp's `stereo`, `useinbandfec` and `usedtx`.
    case opus(channels: Int, fec: Bool, dtx: Bool)
    /// VP8 (RFC 7741): `VP8/90000`.
    case vp8

    /// The rtpmap's encoding name and clock rate (`opus/48000`, `VP8/90000`).
    public var encodingName: String {
        switch self {
        case .opus: "opus/48000"
        case .vp8: "VP8/90000"
        }
    }

    /// Whether it goes in an `m=audio` section (else `m=video`).
    public var isAudio: Bool { if case .opus = self { true } else { false } }
}

/// Why an SDP does not describe an RTP stream Parley can take part in.
public enum RTPOfferError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not valid SDP.
    case malformed(SDPError)
    /// No `m=audio` or `m=video` section.
    case noMedia
    /// The section lists no payload type of a codec Parley receives; `offered` lists what it has.
    case noCodec(media: String, offered: [String])
    /// An `RTP/SAVP` section without an `a=crypto:` line.
    case secureWithoutKey(media: String, proto: String)
    /// The audio and video sections of a bundled offer do not share one port, one SRTP key, or
    /// tell their streams apart (SSRC, payload type); `reason` says which.
    case notBundled(reason: String)
    /// A section of a bundled offer has no `a=ssrc:` line (its SSRC tells its packets apart).
    case missingSSRC(media: String)

    public var description: String {
        switch self {
        case .malformed(let e): "\(e)"
        case .noMedia: "no m=audio or m=video section"
        case .noCodec(let media, let offered):
            "m=\(media) offers no codec Parley receives (opus/48000 or VP8/90000); it offers "
                + (offered.isEmpty ? "nothing" : offered.joined(separator: ", "))
        case .secureWithoutKey(let media, let proto): "m=\(media) is \(proto) but has no a=crypto: line"
        case .notBundled(let reason): reason
        case .missingSSRC(let media): "m=\(media) has no a=ssrc line (its SSRC tells its packets apart)"
        }
    }
}

/// One RTP stream of an offer: an `m=audio` or `m=video` section with its codec, port, source,
/// RTCP feedback, picture size and key.
public struct RTPStreamOffer: Sendable, Hashable {
    public var codec: RTPCodec
    public var payloadType: UInt8
    /// Where the stream's packets go (the port its sender's peer listens on).
    public var port: UInt16
    /// The sender's SSRC and canonical name (`a=ssrc:<ssrc> cname:<cname>`, RFC 5576).
    public var ssrc: UInt32?
    public var cname: String?
    /// The section's identification tag (`a=mid`, RFC 9143), set when streams are bundled.
    public var mid: String?
    /// The RFC 8285 id of the RFC 6464 audio level (`a=extmap`), audio only.
    public var audioLevelID: UInt8?
    /// RFC 4585 feedback the receiver may send (`a=rtcp-fb:* nack`, `a=rtcp-fb:* nack pli`).
    public var nack = false
    public var pictureLoss = false
    /// RTP and RTCP on one port (`a=rtcp-mux`, RFC 5761).
    public var rtcpMux = false
    /// The picture size the sender sends (`a=imageattr:<pt> send [x=W,y=H]`, RFC 6236), video only.
    public var pictureSize: (width: Int, height: Int)? {
        get { pictureWidth.flatMap { w in pictureHeight.map { (w, $0) } } }
        set { (pictureWidth, pictureHeight) = (newValue?.width, newValue?.height) }
    }
    /// `a=framerate`, video only.
    public var framesPerSecond: Double?
    /// The SDES key (`a=crypto:`): the secret, written only into the SDP itself.
    public var crypto: SDPCrypto?
    /// Whether the section's protocol is `RTP/SAVP` (SRTP).
    public var isSecure: Bool
    private var pictureWidth: Int?
    private var pictureHeight: Int?

    /// A stream to describe; `crypto` makes it SRTP.
    public init(codec: RTPCodec, payloadType: UInt8, port: UInt16, ssrc: UInt32? = nil, cname: String? = nil,
                crypto: SDPCrypto? = nil) {
        self.codec = codec
        self.payloadType = payloadType
        self.port = port
        self.ssrc = ssrc
        self.cname = cname
        self.crypto = crypto
        isSecure = crypto != nil
        if codec.isAudio { audioLevelID = 1 }
    }

    /// Reads a section: the first listed payload type of a codec Parley receives, and what the
    /// section says of it.
    /// - Throws: ``RTPOfferError/noCodec(media:offered:)`` or
    ///   ``RTPOfferError/secureWithoutKey(media:proto:)``.
    public init(reading section: SDPMedia) throws(RTPOfferError) {
        var found: (RTPCodec, UInt8)?
        var offered: [String] = []
        for pt in section.payloadTypes {
            // Static payload types carry no rtpmap; none of them is Opus or VP8.
            guard let map = section.rtpMap(for: pt) else {
                offered.append("payload type \(pt)")
                continue
            }
            switch (map.encoding.lowercased(), map.clockRate) {
            case ("opus", 48_000):
                let fmtp = Self.parameters(section.formatParameters(for: pt))
                found = (.opus(channels: fmtp["stereo"] == "1" ? 2 : 1, fec: fmtp["useinbandfec"] == "1", dtx: fmtp["usedtx"] == "1"), pt)
            case ("vp8", 90_000): found = (.vp8, pt)
            default: offered.append("\(map.encoding)/\(map.clockRate)")
            }
            if found != nil { break }
        }
        guard let (codec, pt) = found else { throw .noCodec(media: section.media, offered: offered) }
        self.init(codec: codec, payloadType: pt, port: section.port)
        // ffmpeg's RTP muxer writes its a=crypto: line under RTP/AVP: the line decides.
        crypto = section.cryptos.first
        isSecure = crypto != nil
        if crypto == nil && section.isSecure { throw .secureWithoutKey(media: section.media, proto: section.proto) }
        let source = section.sources.first
        ssrc = source?.ssrc
        cname = section.sources.first { $0.attribute == "cname" }?.value
        mid = section.value(of: "mid")
        audioLevelID = section.extensionMaps.first { $0.uri == AudioLevel.uri }?.id
        rtcpMux = section.has("rtcp-mux")
        readVideoAttributes(section)
    }

    private mutating func readVideoAttributes(_ section: SDPMedia) {
        for a in section.attributes {
            let value = a.value ?? ""
            let fields = value.split(separator: " ")
            let forThis = fields.first.map { $0 == "*" || UInt8($0) == payloadType } ?? false
            switch a.name {
            case "rtcp-fb" where forThis:
                let kind = fields.dropFirst().joined(separator: " ")
                if kind == "nack" { nack = true }
                if kind == "nack pli" { pictureLoss = true }
            case "imageattr" where forThis && fields.count >= 3 && fields[1] == "send":
                if let size = Self.imageSize(fields[2]) { pictureSize = size }
            case "framerate":
                if let fps = Double(value), fps.isFinite, fps >= 1, fps <= 240 { framesPerSecond = fps }
            default: break
            }
        }
    }

    /// The section: rtpmap and fmtp (RFC 7587 / 7741), the audio level's extmap, mid, RTCP
    /// feedback, rtcp-mux, imageattr and framerate as set, the source, and the key.
    public var section: SDPMedia {
        var attributes: [SDPAttribute] = []
        if let mid { attributes.append(SDPAttribute("mid", mid)) }
        switch codec {
        case .opus(let channels, let fec, let dtx):
            attributes.append(SDPAttribute("rtpmap", "\(payloadType) opus/48000/2"))
            var fmtp = ["minptime=10", "useinbandfec=\(fec ? 1 : 0)"]
            if channels == 2 { fmtp += ["stereo=1", "sprop-stereo=1"] }
            if dtx { fmtp.append("usedtx=1") }
            attributes.append(SDPAttribute("fmtp", "\(payloadType) " + fmtp.joined(separator: ";")))
            if let id = audioLevelID { attributes.append(SDPAttribute("extmap", "\(id) \(AudioLevel.uri)")) }
        case .vp8:
            attributes.append(SDPAttribute("rtpmap", "\(payloadType) VP8/90000"))
        }
        if nack { attributes.append(SDPAttribute("rtcp-fb", "* nack")) }
        if pictureLoss { attributes.append(SDPAttribute("rtcp-fb", "* nack pli")) }
        if rtcpMux { attributes.append(SDPAttribute("rtcp-mux")) }
        if let (w, h) = pictureSize { attributes.append(SDPAttribute("imageattr", "\(payloadType) send [x=\(w),y=\(h)]")) }
        if let fps = framesPerSecond {
            attributes.append(SDPAttribute("framerate", fps == fps.rounded() ? String(Int(fps)) : Self.twoDecimals(fps)))
        }
        if let ssrc { attributes.append(SDPSource(ssrc: ssrc, attribute: cname == nil ? "" : "cname", value: cname).sdpAttribute) }
        if let crypto { attributes.append(crypto.attribute) }
        return SDPMedia(media: codec.isAudio ? "audio" : "video", port: port, proto: isSecure ? "RTP/SAVP" : "RTP/AVP",
                        formats: [String(payloadType)], attributes: attributes)
    }

    /// `a=fmtp` parameters `k=v;k=v` as a dictionary.
    private static func parameters(_ text: String?) -> [String: String] {
        var out: [String: String] = [:]
        for pair in (text ?? "").split(separator: ";") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { out[kv[0].trimmingSpaces] = kv[1].trimmingSpaces }
        }
        return out
    }

    /// `[x=W,y=H]` (single values only; a range gives nil).
    private static func imageSize(_ text: Substring) -> (width: Int, height: Int)? {
        guard text.hasPrefix("["), text.hasSuffix("]") else { return nil }
        var w: Int?, h: Int?
        for part in text.dropFirst().dropLast().split(separator: ",") {
            if part.hasPrefix("x=") { w = Int(part.dropFirst(2)) }
            if part.hasPrefix("y=") { h = Int(part.dropFirst(2)) }
        }
        guard let w, let h, (1...16_384).contains(w), (1...16_384).contains(h) else { return nil }
        return (w, h)
    }

    private static func twoDecimals(_ v: Double) -> String {
        let hundredths = Int((v * 100).rounded())
        let frac = hundredths % 100
        return "\(hundredths / 100)." + (frac < 10 ? "0" : "") + String(frac)
    }
}

/// One side of an RTP call: where it listens and the streams it sends there (an Opus stream, a
/// VP8 stream, or both bundled on one port, RFC 9143), as one SDP.
public struct RTPOffer: Sendable, Hashable {
    /// The address the peer sends to (`c=`); empty when the description gives none.
    public var host: String
    /// The `s=` line.
    public var sessionName: String
    /// The streams, audio first.
    public var streams: [RTPStreamOffer]

    /// An offer of `streams` at `host`.
    public init(host: String, sessionName: String = "Parley", streams: [RTPStreamOffer]) {
        self.host = host
        self.sessionName = sessionName
        self.streams = streams
    }

    /// Reads the `m=audio` and `m=video` sections of `text` (other sections are left out). A
    /// section with no codec Parley receives is left out of ``streams`` and listed in
    /// ``refused``.
    /// - Throws: ``RTPOfferError``: malformed SDP, no audio or video section, no section with a
    ///   codec Parley receives (the first section's reason), or an SRTP section without a key.
    public init(parsing text: String) throws(RTPOfferError) {
        let sdp: SessionDescription
        do { sdp = try SessionDescription(parsing: text) } catch { throw .malformed(error) }
        let sections = sdp.media.filter { $0.media == "audio" || $0.media == "video" }
        guard !sections.isEmpty else { throw .noMedia }
        var streams: [RTPStreamOffer] = []
        var refused: [RTPOfferError] = []
        for section in sections {
            do { streams.append(try RTPStreamOffer(reading: section)) } catch {
                if case .noCodec = error { refused.append(error) } else { throw error }
            }
        }
        guard !streams.isEmpty else { throw refused[0] }
        self.init(host: sdp.address(of: sections[0]) ?? "", sessionName: sdp.sessionName, streams: streams)
        self.refused = refused
    }

    /// The audio and video sections read but left out, each with its reason
    /// (``RTPOfferError/noCodec(media:offered:)``).
    public var refused: [RTPOfferError] = []

    /// The first stream (what a one-stream receiver takes).
    public var first: RTPStreamOffer? { streams.first }
    /// The first audio stream.
    public var audio: RTPStreamOffer? { streams.first { $0.codec.isAudio } }
    /// The first video stream.
    public var video: RTPStreamOffer? { streams.first { !$0.codec.isAudio } }

    /// The description with CRLF line ends. With more than one stream the sections are bundled:
    /// `a=group:BUNDLE` of their mids (each stream without a mid gets its index).
    public var description: SessionDescription {
        var media = streams.map(\.section)
        var attributes: [SDPAttribute] = []
        if streams.count > 1 {
            var mids: [String] = []
            for i in media.indices {
                let mid = streams[i].mid ?? String(i)
                if streams[i].mid == nil { media[i].attributes.insert(SDPAttribute("mid", mid), at: 0) }
                mids.append(mid)
            }
            attributes.append(SDPAttribute("group", "BUNDLE " + mids.joined(separator: " ")))
        }
        let origin = "- \(streams.first?.ssrc ?? 0) 1 IN IP4 127.0.0.1"
        return SessionDescription(origin: origin, sessionName: sessionName, connectionAddress: host.isEmpty ? nil : host,
                                  attributes: attributes, media: media)
    }

    /// Checks that the audio and video streams share one port and one key, and have SSRCs and
    /// payload types of their own, as a call that carries both on one socket needs.
    /// - Throws: ``RTPOfferError/notBundled(reason:)`` or ``RTPOfferError/missingSSRC(media:)``.
    public func checkBundled() throws(RTPOfferError) {
        guard let audio, let video else { return }
        guard video.port == audio.port else {
            throw .notBundled(reason: "m=video is on port \(video.port) and m=audio on \(audio.port); both must be on one port")
        }
        guard let ssrc = video.ssrc else { throw .missingSSRC(media: "video") }
        guard ssrc != audio.ssrc else { throw .notBundled(reason: "m=video has the audio's SSRC \(ssrc)") }
        guard video.payloadType != audio.payloadType else {
            throw .notBundled(reason: "m=video uses the audio's payload type \(video.payloadType)")
        }
        guard video.isSecure == audio.isSecure else {
            throw .notBundled(reason: "m=video is \(video.isSecure ? "SRTP" : "plain RTP") but the audio is \(audio.isSecure ? "SRTP" : "plain RTP")")
        }
        guard video.crypto?.suite == audio.crypto?.suite, video.crypto?.key == audio.crypto?.key else {
            throw .notBundled(reason: "m=video has another key than m=audio; both must be protected with one key")
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
