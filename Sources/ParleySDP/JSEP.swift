// WebRTC's session descriptions (JSEP, RFC 9429): the offers and answers browsers, SFUs and
// Parley exchange, with ICE credentials and candidates (RFC 8839), the DTLS fingerprint and
// role (RFC 8842), BUNDLE (RFC 9143), rtcp-mux and reduced-size RTCP (RFC 5761, 5506), header
// extensions (RFC 8285), msid (RFC 8830), sources (RFC 5576) and data channels (RFC 8841); and
// the answer Parley gives to an offer.

#if canImport(ParleyRTP)
import ParleyRTP  // absent when compiled standalone with the RTP sources (Fuzz/targets/sdp)
#endif

/// Which side sends a media section's media (RFC 3264 directions).
public enum JSEPDirection: String, Sendable, Hashable, CaseIterable {
    case sendrecv, sendonly, recvonly, inactive

    /// The direction an answer gives when the offer says `self` and the answerer wants to send
    /// (`sends`) and receive (`receives`).
    public func answer(sends: Bool, receives: Bool) -> JSEPDirection {
        let peerSends = self == .sendrecv || self == .sendonly
        let peerReceives = self == .sendrecv || self == .recvonly
        switch (sends && peerReceives, receives && peerSends) {
        case (true, true): return .sendrecv
        case (true, false): return .sendonly
        case (false, true): return .recvonly
        case (false, false): return .inactive
        }
    }
}

/// The DTLS role a side takes (`a=setup`, RFC 8842): `actpass` in an offer, `active` (DTLS
/// client) or `passive` (DTLS server) in an answer.
public enum JSEPSetup: String, Sendable, Hashable {
    case actpass, active, passive

    /// What an answer says against an offer that says `self`: `passive` against `active`,
    /// otherwise `active` (RFC 5763 section 5: the answerer should be the DTLS client).
    public var answer: JSEPSetup { self == .active ? .passive : .active }
}

/// A payload format of a media section: `a=rtpmap`, `a=fmtp` and its `a=rtcp-fb` lines.
public struct JSEPCodec: Sendable, Hashable {
    public var payloadType: UInt8
    /// The encoding name as written (`opus`, `VP8`, `rtx`, ...).
    public var name: String
    public var clockRate: Int
    public var channels: Int?
    /// The `a=fmtp` parameters (the text after the payload type), if any.
    public var parameters: String?
    /// The `a=rtcp-fb` values for this payload type (`nack`, `nack pli`, `transport-cc`,
    /// `goog-remb`, `ccm fir`).
    public var feedback: [String]

    public init(payloadType: UInt8, name: String, clockRate: Int, channels: Int? = nil, parameters: String? = nil,
                feedback: [String] = []) {
        self.payloadType = payloadType
        self.name = name
        self.clockRate = clockRate
        self.channels = channels
        self.parameters = parameters
        self.feedback = feedback
    }

    /// Whether it is the same format as `other` (name case-insensitively, clock rate, channels).
    public func matches(name: String, clockRate: Int) -> Bool {
        self.name.lowercased() == name.lowercased() && self.clockRate == clockRate
    }
}

/// One `m=` section of a WebRTC description.
public struct JSEPMedia: Sendable, Hashable {
    /// `audio`, `video` or `application`.
    public var kind: String
    /// The media identification tag (`a=mid`).
    public var mid: String
    /// 9 (the port is the ICE transport's), or 0 for a section that is rejected or stopped.
    public var port: UInt16 = 9
    /// `UDP/TLS/RTP/SAVPF` for media, `UDP/DTLS/SCTP` for data channels.
    public var proto: String
    public var direction: JSEPDirection = .sendrecv
    /// Payload formats in order of preference (empty for `application`).
    public var codecs: [JSEPCodec] = []
    public var extensions: [SDPExtensionMap] = []
    /// `a=ssrc` lines.
    public var sources: [SDPSource] = []
    /// `a=ssrc-group` values (`FID 1 2`).
    public var sourceGroups: [String] = []
    /// `a=msid:<stream> <track>`.
    public var msid: String?
    public var rtcpMux = true
    public var rtcpReducedSize = true
    /// ICE credentials, when given in the section (else the session's).
    public var ice: ICECredentials?
    /// `a=candidate:` values as written (ParleyICE parses them), and `a=end-of-candidates`.
    public var candidates: [String] = []
    public var endOfCandidates = false
    /// The DTLS fingerprint and role, when given in the section (else the session's).
    public var fingerprint: SDPFingerprint?
    public var setup: JSEPSetup?
    /// Data channels (RFC 8841): `a=sctp-port` and `a=max-message-size`.
    public var sctpPort: UInt16?
    public var maxMessageSize: Int?
    /// Other attributes, kept as written.
    public var otherAttributes: [SDPAttribute] = []

    public init(kind: String, mid: String, proto: String? = nil) {
        self.kind = kind
        self.mid = mid
        self.proto = proto ?? (kind == "application" ? "UDP/DTLS/SCTP" : "UDP/TLS/RTP/SAVPF")
        rtcpMux = kind != "application"
        rtcpReducedSize = kind != "application"
    }

    /// Whether the section was rejected or stopped (port 0).
    public var isRejected: Bool { port == 0 }

    /// The first codec named `name` at `clockRate`.
    public func codec(named name: String, clockRate: Int) -> JSEPCodec? { codecs.first { $0.matches(name: name, clockRate: clockRate) } }

    /// The id the section maps `uri` to, if any.
    public func extensionID(_ uri: String) -> UInt8? { extensions.first { $0.uri == uri }?.id }

    /// The SSRCs of the section's sources, in order, each once.
    public var ssrcs: [UInt32] {
        var seen: [UInt32] = []
        for s in sources where !seen.contains(s.ssrc) { seen.append(s.ssrc) }
        return seen
    }
}

/// A WebRTC session description: an offer or an answer (RFC 9429).
public struct JSEPDescription: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable { case offer, answer }

    public var kind: Kind
    /// The `o=` line's session id and version.
    public var sessionID: UInt64
    public var sessionVersion: UInt64 = 2
    /// The mids of the `a=group:BUNDLE` group, in order (empty: not bundled).
    public var bundle: [String] = []
    /// Session-level ICE credentials and DTLS fingerprint and role (sections may override).
    public var ice: ICECredentials?
    public var fingerprint: SDPFingerprint?
    public var setup: JSEPSetup?
    /// `a=ice-lite` (Janus is a full agent; some SFUs are lite).
    public var iceLite = false
    public var media: [JSEPMedia] = []

    public init(kind: Kind, sessionID: UInt64 = UInt64.random(in: 1...(1 << 62)), media: [JSEPMedia] = []) {
        self.kind = kind
        self.sessionID = sessionID
        self.media = media
    }

    /// The ICE credentials that apply to `section`: its own, else the session's.
    public func iceCredentials(of section: JSEPMedia) -> ICECredentials? { section.ice ?? ice }
    /// The fingerprint that applies to `section`.
    public func fingerprint(of section: JSEPMedia) -> SDPFingerprint? { section.fingerprint ?? fingerprint }
    /// The DTLS role that applies to `section`.
    public func setup(of section: JSEPMedia) -> JSEPSetup? { section.setup ?? setup }

    /// The section whose mid is `mid`.
    public func section(mid: String) -> JSEPMedia? { media.first { $0.mid == mid } }
}

extension JSEPDescription {
    /// Reads a WebRTC description of `kind` (the JSEP `type` travels beside the SDP).
    /// - Throws: ``JSEPError``: malformed SDP; a section without a mid; a section in use
    ///   without ICE credentials, a fingerprint or a DTLS role (its own or the session's); bad
    ///   credentials, fingerprint or role values.
    public init(parsing text: String, kind: Kind) throws(JSEPError) {
        let sdp: SessionDescription
        do { sdp = try SessionDescription(parsing: text) } catch { throw .malformed(error) }
        let originFields = sdp.origin.split(separator: " ")
        self.init(kind: kind, sessionID: UInt64(originFields.count > 1 ? originFields[1] : "") ?? 0)
        sessionVersion = UInt64(originFields.count > 2 ? originFields[2] : "") ?? 0
        var ufrag: String?, pwd: String?
        for a in sdp.attributes {
            let v = a.value ?? ""
            switch a.name {
            case "group" where v.hasPrefix("BUNDLE"): bundle = v.split(separator: " ").dropFirst().map(String.init)
            case "ice-ufrag": ufrag = v
            case "ice-pwd": pwd = v
            case "ice-lite": iceLite = true
            case "fingerprint": fingerprint = SDPFingerprint.preferred(fingerprint, try SDPFingerprint(parsing: v))
            case "setup": setup = try Self.setup(v, mid: nil)
            default: break
            }
        }
        if let ufrag, let pwd { ice = ICECredentials(unchecked: ufrag, password: pwd) }
        for section in sdp.media { media.append(try Self.section(section)) }
        for m in media where !m.isRejected {
            guard let credentials = iceCredentials(of: m) else { throw .missing(mid: m.mid, field: "a=ice-ufrag/a=ice-pwd") }
            try ICECredentials.check(usernameFragment: credentials.usernameFragment, password: credentials.password, mid: m.mid)
            guard fingerprint(of: m) != nil else { throw .missing(mid: m.mid, field: "a=fingerprint") }
            guard setup(of: m) != nil else { throw .missing(mid: m.mid, field: "a=setup") }
        }
    }

    private static func setup(_ value: String, mid: String?) throws(JSEPError) -> JSEPSetup {
        guard let s = JSEPSetup(rawValue: value) else {
            throw .invalid(mid: mid, field: "a=setup", reason: "'\(value.prefix(16))' is not actpass, active or passive")
        }
        return s
    }

    private static func section(_ s: SDPMedia) throws(JSEPError) -> JSEPMedia {
        guard let mid = s.value(of: "mid"), !mid.isEmpty else { throw .missing(mid: nil, field: "a=mid (m=\(s.media) section)") }
        var m = JSEPMedia(kind: s.media, mid: mid, proto: s.proto)
        m.port = s.port
        m.rtcpMux = false
        m.rtcpReducedSize = false
        var ufrag: String?, pwd: String?
        var feedback: [String: [String]] = [:]
        for a in s.attributes {
            let v = a.value ?? ""
            switch a.name {
            case "mid", "rtpmap", "fmtp", "ice-options": break
            case "sendrecv", "sendonly", "recvonly", "inactive": m.direction = JSEPDirection(rawValue: a.name)!
            case "rtcp-mux": m.rtcpMux = true
            case "rtcp-rsize": m.rtcpReducedSize = true
            case "ice-ufrag": ufrag = v
            case "ice-pwd": pwd = v
            case "candidate": m.candidates.append(v)
            case "end-of-candidates": m.endOfCandidates = true
            case "fingerprint": m.fingerprint = SDPFingerprint.preferred(m.fingerprint, try SDPFingerprint(parsing: v, mid: mid))
            case "setup": m.setup = try setup(v, mid: mid)
            case "msid": m.msid = v
            case "ssrc-group": m.sourceGroups.append(v)
            case "sctp-port":
                guard let p = UInt16(v) else { throw .invalid(mid: mid, field: "a=sctp-port", reason: "'\(v.prefix(16))' is not a port") }
                m.sctpPort = p
            case "max-message-size":
                guard let n = Int(v), n >= 0 else {
                    throw .invalid(mid: mid, field: "a=max-message-size", reason: "'\(v.prefix(16))' is not a size")
                }
                m.maxMessageSize = n
            case "rtcp-fb":
                let fields = v.split(separator: " ", maxSplits: 1)
                if fields.count == 2 { feedback[String(fields[0]), default: []].append(String(fields[1])) }
            case "extmap", "ssrc": break
            default: m.otherAttributes.append(a)
            }
        }
        if let ufrag, let pwd { m.ice = ICECredentials(unchecked: ufrag, password: pwd) }
        m.extensions = s.extensionMaps
        m.sources = s.sources
        for pt in s.payloadTypes where s.proto.contains("RTP") {
            guard let map = s.rtpMap(for: pt) else { continue }
            m.codecs.append(JSEPCodec(payloadType: pt, name: map.encoding, clockRate: map.clockRate, channels: map.channels,
                                      parameters: s.formatParameters(for: pt),
                                      feedback: (feedback["*"] ?? []) + (feedback[String(pt)] ?? [])))
        }
        return m
    }

    /// The description as SDP, CRLF line ends.
    public var text: String { sessionDescription.text }

    /// The description as a ``SessionDescription``.
    public var sessionDescription: SessionDescription {
        var attributes: [SDPAttribute] = []
        if !bundle.isEmpty { attributes.append(SDPAttribute("group", "BUNDLE " + bundle.joined(separator: " "))) }
        if iceLite { attributes.append(SDPAttribute("ice-lite")) }
        if let ice { attributes += [SDPAttribute("ice-ufrag", ice.usernameFragment), SDPAttribute("ice-pwd", ice.password)] }
        if let fingerprint { attributes.append(SDPAttribute("fingerprint", fingerprint.description)) }
        if let setup { attributes.append(SDPAttribute("setup", setup.rawValue)) }
        attributes.append(SDPAttribute("msid-semantic", " WMS *"))
        return SessionDescription(origin: "- \(sessionID) \(sessionVersion) IN IP4 127.0.0.1", sessionName: "-", attributes: attributes,
                                  media: media.map(Self.section))
    }

    private static func section(_ m: JSEPMedia) -> SDPMedia {
        var a: [SDPAttribute] = []
        if !m.isRejected {
            if let ice = m.ice { a += [SDPAttribute("ice-ufrag", ice.usernameFragment), SDPAttribute("ice-pwd", ice.password)] }
            a.append(SDPAttribute("ice-options", "trickle"))
            if let f = m.fingerprint { a.append(SDPAttribute("fingerprint", f.description)) }
            if let s = m.setup { a.append(SDPAttribute("setup", s.rawValue)) }
        }
        a.append(SDPAttribute("mid", m.mid))
        a += m.extensions.map { SDPAttribute("extmap", "\($0.id) \($0.uri)") }
        a.append(SDPAttribute(m.direction.rawValue))
        if let msid = m.msid { a.append(SDPAttribute("msid", msid)) }
        if m.rtcpMux { a.append(SDPAttribute("rtcp-mux")) }
        if m.rtcpReducedSize { a.append(SDPAttribute("rtcp-rsize")) }
        for c in m.codecs {
            a.append(SDPAttribute("rtpmap", "\(c.payloadType) \(c.name)/\(c.clockRate)" + (c.channels.map { "/\($0)" } ?? "")))
            a += c.feedback.map { SDPAttribute("rtcp-fb", "\(c.payloadType) \($0)") }
            if let p = c.parameters { a.append(SDPAttribute("fmtp", "\(c.payloadType) \(p)")) }
        }
        a += m.sourceGroups.map { SDPAttribute("ssrc-group", $0) }
        a += m.sources.map(\.sdpAttribute)
        if let p = m.sctpPort { a.append(SDPAttribute("sctp-port", String(p))) }
        if let n = m.maxMessageSize { a.append(SDPAttribute("max-message-size", String(n))) }
        a += m.otherAttributes
        a += m.candidates.map { SDPAttribute("candidate", $0) }
        if m.endOfCandidates { a.append(SDPAttribute("end-of-candidates")) }
        let formats = m.kind == "application" ? ["webrtc-datachannel"] : m.codecs.map { String($0.payloadType) }
        return SDPMedia(media: m.kind, port: m.port, proto: m.proto, formats: formats.isEmpty ? ["0"] : formats,
                        connectionAddress: "0.0.0.0", attributes: a)
    }
}

/// The header extensions Parley reads and writes in WebRTC media (RFC 8285 URIs).
public enum JSEPExtension {
    /// RFC 6464's audio level with its voice flag (ParleyRTP's `AudioLevel`).
    public static let audioLevel = AudioLevel.uri
    /// RFC 9143's media identification (`a=mid` carried in each packet, how BUNDLE routes).
    public static let mid = "urn:ietf:params:rtp-hdrext:sdes:mid"
    /// Every URI above: an answer keeps these of the offer's and drops the rest.
    public static let supported: Set<String> = [audioLevel, mid]
}

/// What one side of a WebRTC connection puts in its offers and answers: its ICE credentials and
/// candidates, its certificate's fingerprint, and the sources it sends.
public struct JSEPLocal: Sendable, Hashable {
    public var ice: ICECredentials
    public var fingerprint: SDPFingerprint
    /// `a=candidate:` values (trickled ones may follow in later messages).
    public var candidates: [String]
    /// Whether all candidates are in (`a=end-of-candidates`).
    public var candidatesComplete: Bool
    /// The RTCP canonical name of the sources (`a=ssrc:<ssrc> cname:`).
    public var cname: String
    /// The media stream id of `a=msid` (one stream, its tracks `audio` and `video`).
    public var streamID: String
    /// The SSRCs of the local audio and video (used where a section sends).
    public var audioSSRC: UInt32
    public var videoSSRC: UInt32

    public init(ice: ICECredentials, fingerprint: SDPFingerprint, candidates: [String] = [], candidatesComplete: Bool = false,
                cname: String, streamID: String = "parley", audioSSRC: UInt32, videoSSRC: UInt32) {
        self.ice = ice
        self.fingerprint = fingerprint
        self.candidates = candidates
        self.candidatesComplete = candidatesComplete
        self.cname = cname
        self.streamID = streamID
        self.audioSSRC = audioSSRC
        self.videoSSRC = videoSSRC
    }
}

/// What a side wants of one media section: to send, to receive, both or neither.
public struct JSEPWants: Sendable, Hashable {
    public var sends: Bool
    public var receives: Bool

    public init(sends: Bool, receives: Bool) {
        self.sends = sends
        self.receives = receives
    }

    public static let sendOnly = JSEPWants(sends: true, receives: false)
    public static let receiveOnly = JSEPWants(sends: false, receives: true)
    public static let both = JSEPWants(sends: true, receives: true)
}

extension JSEPDescription {
    /// Opus as Parley sends and receives it: 48 kHz, in-band FEC, and the feedback it answers.
    public static func opus(payloadType: UInt8 = 111) -> JSEPCodec {
        JSEPCodec(payloadType: payloadType, name: "opus", clockRate: 48_000, channels: 2, parameters: "minptime=10;useinbandfec=1")
    }

    /// VP8 as Parley sends and receives it, with generic NACK, PLI and REMB feedback.
    public static func vp8(payloadType: UInt8 = 96) -> JSEPCodec {
        JSEPCodec(payloadType: payloadType, name: "VP8", clockRate: 90_000, feedback: ["goog-remb", "nack", "nack pli"])
    }

    /// An offer of an audio section and, optionally, a video section (each with `wants`), and a
    /// data-channel section when `dataChannel`; all bundled on one transport; DTLS role actpass.
    public static func offer(local: JSEPLocal, audio: JSEPWants?, video: JSEPWants?, dataChannel: Bool = false) -> JSEPDescription {
        var d = JSEPDescription(kind: .offer)
        var mid = 0
        func add(_ kind: String, _ wants: JSEPWants?) {
            guard let wants else { return }
            var m = JSEPMedia(kind: kind, mid: String(mid))
            m.direction = JSEPDirection.sendrecv.answer(sends: wants.sends, receives: wants.receives)
            m.codecs = [kind == "audio" ? opus() : vp8()]
            m.extensions = [SDPExtensionMap(id: 1, uri: JSEPExtension.audioLevel), SDPExtensionMap(id: 4, uri: JSEPExtension.mid)]
                .filter { kind == "audio" || $0.uri != JSEPExtension.audioLevel }
            d.media.append(m)
            mid += 1
        }
        add("audio", audio)
        add("video", video)
        if dataChannel {
            var m = JSEPMedia(kind: "application", mid: String(mid))
            m.sctpPort = 5000
            m.maxMessageSize = 262_144
            d.media.append(m)
        }
        d.finish(local: local, setup: .actpass)
        return d
    }

    /// The answer to `offer`: each section Parley can take part in is accepted with the first
    /// offered codec Parley has (Opus/48000 for audio, VP8/90000 for video), the feedback and
    /// header extensions both sides know, and the direction `wants(section)` gives; data channels
    /// when `dataChannel`; everything else is rejected (port 0). Parley takes DTLS's client role
    /// when the offer leaves it the choice (as browsers do).
    /// - Throws: ``JSEPError/invalid(mid:field:reason:)`` when `offer` is not an offer.
    public static func answer(to offer: JSEPDescription, local: JSEPLocal, dataChannel: Bool = false,
                              wants: (JSEPMedia) -> JSEPWants) throws(JSEPError) -> JSEPDescription {
        guard offer.kind == .offer else { throw .invalid(mid: nil, field: "type", reason: "an answer answers an offer") }
        var d = JSEPDescription(kind: .answer)
        for o in offer.media {
            var m = JSEPMedia(kind: o.kind, mid: o.mid, proto: o.proto)
            let codec: JSEPCodec? = switch o.kind {
            case "audio": o.codec(named: "opus", clockRate: 48_000)
            case "video": o.codec(named: "VP8", clockRate: 90_000)
            default: nil
            }
            if o.isRejected || (codec == nil && !(o.kind == "application" && dataChannel && o.sctpPort != nil)) {
                m.port = 0
                m.direction = .inactive
                m.codecs = Array(o.codecs.prefix(1))
                m.rtcpMux = false
                m.rtcpReducedSize = false
                d.media.append(m)
                continue
            }
            if let codec {
                let ours = o.kind == "audio" ? opus(payloadType: codec.payloadType) : vp8(payloadType: codec.payloadType)
                var accepted = ours
                accepted.feedback = ours.feedback.filter { codec.feedback.contains($0) }
                m.codecs = [accepted]
                m.extensions = o.extensions.filter { JSEPExtension.supported.contains($0.uri) }
                    .filter { o.kind == "audio" || $0.uri != JSEPExtension.audioLevel }
                m.direction = o.direction.answer(sends: wants(o).sends, receives: wants(o).receives)
                m.rtcpMux = o.rtcpMux
                m.rtcpReducedSize = o.rtcpReducedSize
            } else {
                m.sctpPort = 5000
                m.maxMessageSize = 262_144
            }
            d.media.append(m)
        }
        d.bundle = offer.bundle.filter { mid in d.section(mid: mid).map { !$0.isRejected } ?? false }
        d.finish(local: local, setup: (offer.media.first.flatMap { offer.setup(of: $0) } ?? .actpass).answer)
        return d
    }

    /// Puts `local`'s credentials, fingerprint, role and candidates into every section in use,
    /// its sources into every sending section, and bundles the sections if not yet bundled.
    private mutating func finish(local: JSEPLocal, setup role: JSEPSetup) {
        for i in media.indices where !media[i].isRejected {
            media[i].ice = local.ice
            media[i].fingerprint = local.fingerprint
            media[i].setup = role
            let sends = media[i].direction == .sendrecv || media[i].direction == .sendonly
            if sends && media[i].kind != "application" {
                let ssrc = media[i].kind == "audio" ? local.audioSSRC : local.videoSSRC
                let track = "\(local.streamID)-\(media[i].kind)"
                media[i].msid = "\(local.streamID) \(track)"
                media[i].sources = [SDPSource(ssrc: ssrc, attribute: "cname", value: local.cname),
                                    SDPSource(ssrc: ssrc, attribute: "msid", value: "\(local.streamID) \(track)")]
            }
        }
        // Candidates once, in the first section in use (the bundle's transport).
        if let first = media.firstIndex(where: { !$0.isRejected }) {
            media[first].candidates = local.candidates
            media[first].endOfCandidates = local.candidatesComplete
        }
        if bundle.isEmpty { bundle = media.filter { !$0.isRejected }.map(\.mid) }
    }
}
