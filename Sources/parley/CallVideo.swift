// Video for `parley call` and `parley join`: the looping file camera and the end-of-call video
// lines.

import Foundation
import ParleyCall
import ParleyCore
import ParleyDevices
import ParleyMedia
import ParleyRTP

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
