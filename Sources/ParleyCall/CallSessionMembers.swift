// What a CallSession holds per transport and per participant: boxed transports, a remote's
// receive side and lifecycle, what is kept of a remote that left, the local participant's
// capture and send side.

import ParleyCodecs
import ParleyJitter
import ParleyRTP
import ParleyVoice

/// A transport of any type, boxed so that a session holds several.
package class SessionTransport {
    func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool { false }
    func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {}
    var inFlight: Int { 0 }
}

package final class BoxedTransport<T: PacketTransport & ~Copyable>: SessionTransport {
    package var base: T
    init(_ base: consuming T) { self.base = base }
    override func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool { base.send(bytes, at: time) }
    override func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {
        base.receive(until: time, body)
    }
    override var inFlight: Int { base.inFlight }
}

/// A boxed transport as a value the send pipelines take `inout`.
package struct TransportHandle: PacketTransport {
    package let box: SessionTransport
    package mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool { box.send(bytes, at: time) }
    package mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {
        box.receive(until: time, body)
    }
    package var inFlight: Int { box.inFlight }
}

/// Where a remote participant is in its life in the call.
enum SessionRemoteLifecycle: Equatable {
    /// Receiving and playing out.
    case active
    /// Ended (an RTCP BYE, ``CallSession/remoteEnded(_:)``, the silence timeout): its audio
    /// plays out, and once its audio transports and jitter buffer are empty it leaves after
    /// `drainFramesLeft` more playout frames.
    case ending(drainFramesLeft: Int)
    /// Gone (its `left` event is out): released at the end of the playout frame.
    case left
}

/// One remote participant's receive side.
final class SessionRemote {
    let name: ParticipantID
    /// Its place in the join order.
    let serial: Int
    let audioSSRC: UInt32
    var receiver: AudioReceivePipeline<OpusJitterDecoder>
    var video: SessionRemoteVideo?
    /// Its own audio transports (``CallTransportRole/audio(of:)``) and video ones.
    var audioTransports: [SessionTransport] = []
    var videoTransports: [SessionTransport] = []
    /// Where its video's RTCP feedback goes (``CallTransportRole/videoFeedback(of:)``).
    var videoFeedbackTransports: [SessionTransport] = []
    var lastArrival: MonotonicTime?
    /// The sender packet counts of the last sender reports on its audio and its video.
    var reportedAudioPackets: UInt32?
    var reportedVideoPackets: UInt32?
    var lifecycle = SessionRemoteLifecycle.active

    init(name: ParticipantID, serial: Int, audioSSRC: UInt32, configuration: AudioReceiveConfiguration) throws {
        self.name = name
        self.serial = serial
        self.audioSSRC = audioSSRC
        let decoder = try OpusJitterDecoder(sampleRate: configuration.sampleRate, channels: 1)
        receiver = try AudioReceivePipeline(configuration: configuration, decoder: decoder)
    }

    /// Ends an active remote: it drains, then leaves after `drainFrames` empty frames.
    func end(drainFrames: Int) {
        if lifecycle == .active { lifecycle = .ending(drainFramesLeft: drainFrames) }
    }
}

/// A remote's receive-side counters, as ``CallSession/receiveStatistics(of:)`` returns them.
typealias RemoteReceiveStatistics = (receive: AudioReceiveStatistics, jitter: JitterBufferStatistics,
                                     audio: ParticipantAudioStatistics, video: VideoStatistics?)

/// What is kept of a remote participant that left: its final counters.
struct DepartedRemote {
    let serial: Int
    let name: ParticipantID
    /// Before ``CallSession/refineStatistics`` (applied when read).
    let statistics: RemoteReceiveStatistics
}

final class SessionRemoteVideo {
    let ssrc: UInt32
    var receiver: VideoReceivePipeline
    var shownAny = false
    var lastAudioPlayed: UInt32?

    init(_ v: RemoteVideo) throws(VPXError) {
        ssrc = v.ssrc
        if let width = v.width, let height = v.height {
            receiver = try VideoReceivePipeline(width: width, height: height, payloadType: v.payloadType, feedback: v.feedback)
        } else {
            receiver = try VideoReceivePipeline(payloadType: v.payloadType, feedback: v.feedback)
        }
        if let origin = v.senderTimestampOrigin {
            var mapping = RTPTimeMapping(positiveClockRate: receiver.sync.video.clockRate)
            mapping.assume(rtpTimestamp: origin, atSenderSeconds: 0)
            receiver.sync.useVideoMapping(mapping)
        }
    }
}

/// The local participant's capture and send side.
final class SessionLocal {
    let name: ParticipantID
    var sender: AudioSendPipeline
    let transport: SessionTransport
    let read: (inout AudioSendPipeline, inout TransportHandle, Bool, (TalkEvent) -> Void) throws -> Bool
    var muted = false
    var talkingWhileMuted = false
    var ended = false

    init(name: ParticipantID, sender: consuming AudioSendPipeline, transport: SessionTransport,
         read: @escaping (inout AudioSendPipeline, inout TransportHandle, Bool, (TalkEvent) -> Void) throws -> Bool) {
        self.name = name; self.sender = sender; self.transport = transport; self.read = read
    }
}

final class CaptureBox<S: AudioCaptureSource<Int16> & ~Copyable> {
    var source: S
    var frame: AudioFrame<Int16>
    init(_ source: consuming S, frame: AudioFrame<Int16>) { self.source = source; self.frame = frame }
}

final class VideoCaptureBox<S: VideoCaptureSource & ~Copyable> {
    var source: S
    init(_ source: consuming S) { self.source = source }
}

/// The local participant's video: its source, sender, and the feedback held for it.
final class SessionLocalVideo {
    var sender: VideoSendPipeline
    let transport: SessionTransport
    let framesPerSecond: Double
    let read: (inout VideoFrame) throws -> Bool
    var frame: VideoFrame
    var ended = false
    /// Feedback datagrams taken while a transport was being read, answered once it is not (a
    /// resend cannot go out on a transport in the middle of its receive): fixed slots.
    var held: [UInt8]
    var heldLength: [Int]
    var heldArrival: [MonotonicTime]
    var heldCount = 0

    init(sender: consuming VideoSendPipeline, transport: SessionTransport, framesPerSecond: Double, frame: VideoFrame,
         slots: Int, read: @escaping (inout VideoFrame) throws -> Bool) {
        self.sender = sender; self.transport = transport; self.framesPerSecond = framesPerSecond
        self.frame = frame; self.read = read
        held = [UInt8](repeating: 0, count: slots * RTPLimits.maximumDatagramSize)
        heldLength = [Int](repeating: 0, count: slots)
        heldArrival = [MonotonicTime](repeating: .zero, count: slots)
    }
}
