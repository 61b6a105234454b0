// Video for `parley call`: the looping file camera, the offer's m=video section, the peer's
// video offer, and the end-of-call video lines.

import Foundation
import ParleyCall
import ParleyCore
import ParleyDevices
import ParleyMedia
import ParleyRTP
import ParleySRTP

/// A Y4M file read over and over: a recorded camera that runs as long as the call's audio.
/// Reopening at the end allocates once per pass, not per picture.
struct LoopingY4MProvider: VideoFrameProvider {
    typealias Failure = ParleyMedia.MediaFileError
    private var provider: Y4MFileProvider
    private let path: String
    private var readThisPass = 0
    var width: Int { provider.width }
    var height: Int { provider.height }
    let framesPerSecond: Double

    /// Opens `path` and checks that it holds at least one picture.
    init(path: String) throws(ParleyMedia.MediaFileError) {
        var probe = try Y4MFileProvider(path: path)
        var frame = VideoFrame(validatedWidth: probe.width, height: probe.height)  // checked when the header was read
        guard try probe.readPicture(into: &frame) else {
            throw ParleyMedia.MediaFileError.invalidArgument(path: path, reason: "the file holds no video frames")
        }
        provider = try Y4MFileProvider(path: path)
        self.path = path
        framesPerSecond = provider.framesPerSecond
    }

    mutating func readPicture(into frame: inout VideoFrame) throws(ParleyMedia.MediaFileError) -> Bool {
        if try provider.readPicture(into: &frame) {
            readThisPass += 1
            return true
        }
        guard readThisPass > 0 else { return false }
        let next = try Y4MFileProvider(path: path)
        // A file replaced by one of another size ends the video.
        guard next.width == frame.width, next.height == frame.height else { return false }
        provider = next
        readThisPass = 0
        guard try provider.readPicture(into: &frame) else { return false }
        readThisPass = 1
        return true
    }
}

/// The call's camera: a looping Y4M file or a V4L2 device, opened before the offer is written
/// (the offer gives its picture size and rate).
enum CallVideoSourceKind {
    case file(String)
    case device(String)

    /// `--video SOURCE`: a path under /dev is a device, a `.y4m` name a file.
    init?(_ text: String) {
        if text.hasPrefix("/dev/") {
            self = .device(text)
        } else if text.lowercased().hasSuffix(".y4m") {
            self = .file(text)
        } else {
            return nil
        }
    }
}

/// The local camera of `parley call` and `parley join`, opened before signalling (the offer or
/// the published stream gives its size and rate, and a missing device fails at once), and
/// handed to the call session when the call starts.
struct CallCamera: ~Copyable {
    private var file: ClockedVideoSource<LoopingY4MProvider>?
    private var device: V4L2Capture?
    let width: Int
    let height: Int
    let framesPerSecond: Double

    /// The picture size and rate, as a value to keep while the camera is held.
    var format: (width: Int, height: Int, framesPerSecond: Double) { (width, height, framesPerSecond) }

    /// Opens `kind`; nil when there is no camera.
    init?(_ kind: CallVideoSourceKind?, clock: any MediaClock) throws {
        switch kind {
        case .file(let path):
            let source = try ClockedVideoSource(try LoopingY4MProvider(path: path), clock: clock)
            (width, height, framesPerSecond) = (source.width, source.height, source.framesPerSecond)
            file = consume source
        case .device(let path):
            let source = try V4L2Capture(device: path)
            (width, height, framesPerSecond) = (source.width, source.height, source.framesPerSecond)
            device = consume source
        case nil:
            return nil
        }
    }

    /// Makes the camera the session's local video.
    consuming func add(to session: CallSession, configuration: LocalVideoConfiguration, sendingOn network: CallTransportID) throws {
        if let source = file.take() {
            try session.addLocalVideo(source: source, configuration: configuration, sendingOn: network)
        } else if let source = device.take() {
            try session.addLocalVideo(source: source, configuration: configuration, sendingOn: network)
        }
    }
}

/// The RTP payload type of the call's VP8 (Opus is 111).
let callVideoPayloadType = VP8RTP.defaultPayloadType

/// The offer's m=video section: VP8 on the audio's port (BUNDLE, demultiplexed by SSRC, RTCP
/// on the same port), RFC 4585 NACK and PLI, the picture size (RFC 6236) and rate.
func callVideoSection(port: UInt16, ssrc: UInt32, key: SRTPKey?, cname: String, width: Int, height: Int,
                      framesPerSecond: Double) -> SDPMedia {
    let pt = callVideoPayloadType
    let rate = framesPerSecond == framesPerSecond.rounded() ? String(Int(framesPerSecond)) : String(format: "%.2f", framesPerSecond)
    var attributes = [SDPAttribute("mid", "1"),
                      SDPAttribute("rtpmap", "\(pt) VP8/90000"),
                      SDPAttribute("rtcp-fb", "* nack"),
                      SDPAttribute("rtcp-fb", "* nack pli"),
                      SDPAttribute("rtcp-mux"),
                      SDPAttribute("imageattr", "\(pt) send [x=\(width),y=\(height)]"),
                      SDPAttribute("framerate", rate),
                      SDPAttribute("ssrc", "\(ssrc) cname:\(cname)")]
    if let key { attributes.append(SDPCrypto(suite: key.suite.rawValue, key: key.base64).attribute) }
    return SDPMedia(media: "video", port: port, proto: key == nil ? "RTP/AVP" : "RTP/SAVP", formats: [String(pt)],
                    attributes: attributes)
}

/// What the peer's offer says of the video it sends (its m=video section).
struct PeerVideoOffer {
    var payloadType: UInt8
    var ssrc: UInt32
    /// The picture size from a=imageattr, or 640x480 (the decoder takes the size of the first
    /// keyframe anyway; the size only sizes the receiver's pictures up front).
    var width = 640
    var height = 480
    /// a=framerate, or 30 (the rate --video-output's header gives).
    var framesPerSecond = 30
    /// Whether the peer takes generic NACKs and PLIs (a=rtcp-fb).
    var nack = false
    var pictureLoss = false

    /// The peer's m=video section, or nil if it offers none.
    /// - Throws: ``CallError`` for a section parley call cannot receive, with the reason.
    static func parse(_ peer: ReceivedSDP, path: String) throws -> PeerVideoOffer? {
        guard let media = peer.session.media.first(where: { $0.media == "video" }) else { return nil }
        guard let pt = media.payloadTypes.first(where: { pt in
            media.rtpMap(for: pt).map { $0.encoding.lowercased() == "vp8" && $0.clockRate == 90_000 } ?? false
        }) else {
            let offered = media.payloadTypes.map { pt in media.rtpMap(for: pt).map { "\($0.encoding)/\($0.clockRate)" } ?? "payload type \(pt)" }
            throw CallError("\(path): m=video offers no VP8/90000 (it offers \(offered.isEmpty ? "nothing" : offered.joined(separator: ", ")))")
        }
        guard media.port == peer.port else {
            throw CallError("\(path): m=video is on port \(media.port) and m=audio on \(peer.port); parley call carries both on one port")
        }
        guard let line = media.attributes.first(where: { $0.name == "ssrc" })?.value,
              let ssrc = line.split(separator: " ").first.flatMap({ UInt32($0) }) else {
            throw CallError("\(path): m=video has no a=ssrc line (its SSRC tells the video apart from the audio)")
        }
        guard ssrc != peer.ssrc else { throw CallError("\(path): m=video has the audio's SSRC \(ssrc)") }
        guard pt != peer.payloadType else { throw CallError("\(path): m=video uses the audio's payload type \(pt)") }
        if let crypto = media.cryptos.first {
            let key: SRTPKey
            do { key = try SRTPKey(suite: try SRTPSuite(name: crypto.suite), base64: crypto.key) } catch {
                throw CallError("\(path): m=video a=crypto: \(error)")
            }
            guard key == peer.key else {
                throw CallError("\(path): m=video has another key than m=audio; parley call protects both with one key")
            }
        } else if media.isSecure != (peer.key != nil) {
            throw CallError("\(path): m=video is \(media.proto) but the audio is \(peer.key == nil ? "plain RTP" : "SRTP")")
        }
        var offer = PeerVideoOffer(payloadType: pt, ssrc: ssrc)
        for a in media.attributes {
            let value = a.value ?? ""
            let fields = value.split(separator: " ")
            switch a.name {
            case "rtcp-fb":
                guard let target = fields.first, target == "*" || UInt8(target) == pt else { continue }
                let kind = fields.dropFirst().joined(separator: " ")
                if kind == "nack" { offer.nack = true }
                if kind == "nack pli" { offer.pictureLoss = true }
            case "imageattr":
                guard fields.count >= 3, fields[0] == "*" || UInt8(fields[0]) == pt, fields[1] == "send",
                      let size = Self.imageSize(String(fields[2])) else { continue }
                (offer.width, offer.height) = size
            case "framerate":
                if let fps = Double(value), fps.isFinite, fps >= 1, fps <= 240 { offer.framesPerSecond = Int(fps.rounded()) }
            default: break
            }
        }
        return offer
    }

    /// `[x=W,y=H]` (single values only; a range leaves the default).
    private static func imageSize(_ text: String) -> (Int, Int)? {
        guard text.hasPrefix("["), text.hasSuffix("]") else { return nil }
        var w: Int?, h: Int?
        for part in text.dropFirst().dropLast().split(separator: ",") {
            if part.hasPrefix("x=") { w = Int(part.dropFirst(2)) }
            if part.hasPrefix("y=") { h = Int(part.dropFirst(2)) }
        }
        guard let w, let h, (1...16_384).contains(w), (1...16_384).contains(h) else { return nil }
        return (w, h)
    }
}

/// The end-of-call line of the video this side sent.
func callVideoSentLine(_ v: VideoStatistics, ssrc: UInt32) -> String {
    "video sent: \(v.framesEncoded) frames (\(v.keyframesEncoded) keyframes, \(v.keyframesForPictureLoss) for PLIs; "
        + "\(v.framesSkippedLate) pictures skipped late), "
        + "\(v.packetsSent) RTP packets (\(v.payloadBytes) payload bytes), SSRC 0x\(String(ssrc, radix: 16)); "
        + "NACKs received: \(v.nacksReceived) asking \(v.retransmissionsRequested) packets, \(v.packetsRetransmitted) resent; "
        + "PLIs received: \(v.pictureLossIndicationsReceived); receiver reports: \(v.receiverReportsReceived); "
        + "bitrate \(v.targetBitrateKbps) kbit/s (lowest \(v.lowestTargetBitrateKbps))"
}

/// The end-of-call line of the video received from `name`.
func callVideoReceivedLine(_ v: VideoStatistics, from name: String) -> String {
    "video received from \(name): \(v.framesDecoded) frames decoded (\(v.keyframesDecoded) keyframes), \(v.framesShown) shown "
        + "(\(v.framesShownUnsynchronized) before lip sync; skew at most \(String(format: "%.0f", v.maximumAbsoluteSkewMs)) ms, "
        + "\(v.framesOutsideWindow) outside the lip-sync window), \(v.framesDroppedLate) dropped late, \(v.framesDroppedQueueFull) dropped with "
        + "the queue full, "
        + "\(v.packetsReceived) RTP packets, \(v.packetsMissing) missing, \(v.packetsRecovered) recovered by resend; "
        + "NACKs sent: \(v.nackMessagesSent) asking \(v.nackRequests) packets; PLIs sent: \(v.pictureLossIndicationsSent); "
        + "receiver reports: \(v.receiverReportsSent)"
}
