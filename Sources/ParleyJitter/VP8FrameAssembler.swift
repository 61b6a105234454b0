#if canImport(ParleyRTP)
import ParleyRTP  // absent when compiled standalone with the RTP sources (Fuzz/targets/rtp-vp8-assembler)
#endif

/// Why ``VP8FrameAssembler`` asks the sender for a keyframe (RTCP PLI/FIR in a call).
public enum VP8KeyframeRequestReason: Equatable, Sendable {
    /// No keyframe has been assembled yet: the decoder cannot start.
    case waitingForFirstKeyframe
    /// A packet was still missing after the completion timeout; the frame was dropped.
    case incompleteFrame
    /// A packet arrived too far ahead of the oldest incomplete frame for the window.
    case windowOverflow
    /// A complete frame was dropped because it references a frame that was lost.
    case missingReference
}

/// A frame put together by ``VP8FrameAssembler``.
///
/// `data` is the assembler's internal buffer: valid only during the callback that delivers it;
/// copy it (`Array(frame.data)`) or decode it there.
public struct VP8AssembledFrame {
    /// The VP8 frame (payload descriptors removed), ready for a decoder.
    public let data: UnsafeRawBufferPointer
    /// The RTP timestamp shared by the frame's packets (90 kHz).
    public let timestamp: UInt32
    /// Extended sequence numbers of the first and last packet.
    public let sequenceRange: ClosedRange<Int64>
    /// The frame header from the first partition: keyframe flag and, for keyframes, the size.
    public let header: VP8FrameHeader
    /// The picture ID of the first packet's descriptor, if it had one.
    public let pictureID: UInt16?
}

/// What the assembler delivers.
public enum VP8AssemblerEvent {
    /// A complete frame, in sequence order.
    case frame(VP8AssembledFrame)
    /// The receiver should ask the sender for a keyframe.
    case keyframeRequest(VP8KeyframeRequestReason)
}

/// Counters of ``VP8FrameAssembler``.
public struct VP8AssemblerStatistics: Equatable, Sendable {
    public var packets = 0
    /// Packets whose VP8 descriptor or frame header did not parse.
    public var malformedPackets = 0
    public var duplicatePackets = 0
    /// Packets older than the next frame to deliver (arrived after their frame was given up).
    public var latePackets = 0
    public var framesAssembled = 0
    /// Frames given up for missing packets.
    public var framesIncomplete = 0
    /// Complete frames dropped while waiting for a keyframe.
    public var framesDroppedWaitingForKeyframe = 0
    public var keyframeRequests = 0
    public init() {}
}

/// Packets to complete VP8 frames (RFC 7741), tolerant of reordering within a window.
///
/// Packets may arrive in any order within ``Configuration/windowPackets`` sequence numbers. A
/// frame is the run of packets from one with S = 1 and PID = 0 up to the one with the marker
/// bit, consecutive in (16-bit, wrapping) sequence number and sharing one timestamp. Frames are
/// delivered in sequence order. When the next frame stays incomplete for
/// ``Configuration/completionTimeoutNanoseconds`` after a later packet arrived (or the window
/// overflows), it is dropped and a keyframe request is emitted; inter frames are then dropped
/// until a keyframe arrives, unless the lost frame was marked non-reference (N = 1). Before the
/// first keyframe, inter frames are dropped too. Keyframe requests are repeated at most every
/// ``Configuration/keyframeRequestIntervalNanoseconds``.
///
/// Memory is bounded by the window; packet storage is reused, so after warm-up inserting a
/// packet allocates nothing. Times are injected (nanoseconds of any monotonic clock).
///
/// Threading: a value type, one per video stream, used on one thread.
public struct VP8FrameAssembler {
    public struct Configuration: Sendable {
        /// Sequence numbers kept ahead of the next frame to deliver. Default 512 (a few
        /// keyframes at 1200-byte packets). Must be a positive power of two
        /// (``VP8FrameAssembler/init(configuration:)`` throws otherwise).
        public var windowPackets: Int = 512
        /// How long to wait for a missing packet once a later one has arrived. Default 100 ms:
        /// longer than typical reordering, shorter than a retransmission round trip is worth
        /// at 30 fps without NACK.
        public var completionTimeoutNanoseconds: Int64 = 100_000_000
        /// Minimum spacing of repeated keyframe requests. Default 500 ms (libwebrtc's PLI
        /// throttling is of this order).
        public var keyframeRequestIntervalNanoseconds: Int64 = 500_000_000
        public init() {}
    }

    /// The settings in force (the completion timeout follows ``setCompletionTimeout(nanoseconds:)``).
    public private(set) var configuration: Configuration
    public private(set) var statistics = VP8AssemblerStatistics()

    private let mask: Int
    private var slotSeq: [Int64]
    private var slotTimestamp: [UInt32]
    private var slotFlags: [UInt8]  // 1 frame start, 2 marker, 4 non-reference
    private var slotPictureID: [Int32]
    private var slotData: [[UInt8]]
    private var frame: [UInt8] = []
    private var unwrapper = SequenceNumberUnwrapper()
    private var nextSeq: Int64?
    private var delivered = false
    private var needKeyframe = true
    private var stalledSince: Int64?
    private var lastRequest: Int64?
    private var highestSeq: Int64 = .min

    private static let start: UInt8 = 1, marker: UInt8 = 2, nonReference: UInt8 = 4

    /// Creates an assembler with the default settings.
    public init() {
        self.init(validated: Configuration())
    }

    /// Creates an assembler.
    ///
    /// - Throws: ``JitterConfigurationError`` when ``Configuration/windowPackets`` is not a
    ///   positive power of two.
    public init(configuration: Configuration) throws(JitterConfigurationError) {
        let n = configuration.windowPackets
        guard n > 0 && n & (n - 1) == 0 else {
            throw .outOfRange(parameter: "windowPackets", value: "\(n)", allowed: "a positive power of two")
        }
        self.init(validated: configuration)
    }

    private init(validated configuration: Configuration) {
        let n = configuration.windowPackets
        self.configuration = configuration
        mask = n - 1
        slotSeq = [Int64](repeating: -1, count: n)
        slotTimestamp = [UInt32](repeating: 0, count: n)
        slotFlags = [UInt8](repeating: 0, count: n)
        slotPictureID = [Int32](repeating: -1, count: n)
        slotData = [[UInt8]](repeating: [], count: n)
        frame.reserveCapacity(256 * 1024)
    }

    /// Adds one RTP packet (its payload is copied) that arrived at `nowNanoseconds`; delivers
    /// every frame it completes and any keyframe request through `emit`.
    public mutating func insert(_ packet: RTPPacketView, nowNanoseconds: Int64, emit: (VP8AssemblerEvent) -> Void) {
        insert(payload: packet.payload, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
               marker: packet.marker, nowNanoseconds: nowNanoseconds, emit: emit)
    }

    /// Adds one packet given by its fields; see ``insert(_:nowNanoseconds:emit:)``.
    public mutating func insert(payload: UnsafeRawBufferPointer, sequenceNumber: UInt16, timestamp: UInt32,
                                marker: Bool, nowNanoseconds: Int64, emit: (VP8AssemblerEvent) -> Void) {
        statistics.packets += 1
        let descriptor: VP8PayloadDescriptor
        do { descriptor = try VP8PayloadDescriptor(parsing: payload) } catch {
            statistics.malformedPackets += 1
            return
        }
        let data = UnsafeRawBufferPointer(rebasing: payload[descriptor.marshalSize...])
        if descriptor.isFrameStart {
            do { _ = try VP8FrameHeader(parsing: data) } catch {
                statistics.malformedPackets += 1
                return
            }
        }
        let seq = unwrapper.unwrap(sequenceNumber)
        if let next = nextSeq, seq < next {
            statistics.latePackets += 1
            return
        }
        let i = Int(truncatingIfNeeded: seq) & mask
        if slotSeq[i] == seq {
            statistics.duplicatePackets += 1
            return
        }
        if let next = nextSeq, seq - next > Int64(mask) {
            // Too far ahead: give up frames until the new packet fits the window.
            giveUp(upTo: seq - Int64(mask), reason: .windowOverflow, now: nowNanoseconds, emit: emit)
        } else if slotSeq[i] >= 0 {
            // Occupied by an older packet beyond the window (possible only before the first frame).
            slotSeq[i] = -1
        }
        slotSeq[i] = seq
        slotTimestamp[i] = timestamp
        var flags: UInt8 = 0
        if descriptor.isFrameStart { flags |= Self.start }
        if marker { flags |= Self.marker }
        if descriptor.nonReference { flags |= Self.nonReference }
        slotFlags[i] = flags
        slotPictureID[i] = descriptor.pictureID.map { Int32($0) } ?? -1
        slotData[i].removeAll(keepingCapacity: true)
        slotData[i].append(contentsOf: data)
        highestSeq = Swift.max(highestSeq, seq)
        if !delivered && descriptor.isFrameStart && (nextSeq == nil || seq < nextSeq!) {
            nextSeq = seq
        }
        drain(now: nowNanoseconds, emit: emit)
    }

    /// Changes how long a missing packet is waited for (negative values mean 0), for example
    /// once retransmissions can be asked for: from the next check on.
    public mutating func setCompletionTimeout(nanoseconds: Int64) {
        configuration.completionTimeoutNanoseconds = Swift.max(0, nanoseconds)
    }

    /// The (16-bit) sequence number of the first packet of the next frame to deliver, once a
    /// frame start has arrived: packets before it are late (their frames were delivered or
    /// given up), so asking the sender for them again is of no use.
    public var nextSequenceNumber: UInt16? { nextSeq.map { UInt16(truncatingIfNeeded: $0) } }

    /// Gives up on a frame that stayed incomplete past the timeout. Call it periodically (for
    /// example on each playout tick) so a loss is noticed even when no packets follow.
    public mutating func advance(nowNanoseconds: Int64, emit: (VP8AssemblerEvent) -> Void) {
        drain(now: nowNanoseconds, emit: emit)
    }

    private func occupied(_ seq: Int64) -> Bool { slotSeq[Int(truncatingIfNeeded: seq) & mask] == seq }

    private enum FrameState { case complete(Int), waiting, gap, broken }

    /// Whether the frame starting at `start` is complete (and its packet count), still
    /// arriving without a hole, waiting on a hole, or impossible to complete.
    private func frameState(at start: Int64) -> FrameState {
        var s = start
        var ts: UInt32 = 0
        while true {
            let i = Int(truncatingIfNeeded: s) & mask
            guard slotSeq[i] == s else { return s > highestSeq ? .waiting : .gap }
            let isStart = slotFlags[i] & Self.start != 0
            if s == start {
                guard isStart else { return .broken }  // the frame's first packet was given up
                ts = slotTimestamp[i]
            } else if isStart || slotTimestamp[i] != ts {
                return .broken  // the next frame began before this one's marker
            }
            if slotFlags[i] & Self.marker != 0 { return .complete(Int(s - start + 1)) }
            s += 1
            if s - start > Int64(mask) { return .broken }
        }
    }

    private mutating func drain(now: Int64, emit: (VP8AssemblerEvent) -> Void) {
        while let next = nextSeq {
            switch frameState(at: next) {
            case .complete(let count):
                deliver(start: next, count: count, now: now, emit: emit)
            case .waiting:
                stalledSince = nil
                return
            case .broken:
                giveUp(upTo: next + 1, reason: .incompleteFrame, now: now, emit: emit)
            case .gap:
                // A later packet arrived while one of this frame is missing: wait for reordering.
                if stalledSince == nil { stalledSince = now; return }
                if now - stalledSince! < configuration.completionTimeoutNanoseconds { return }
                giveUp(upTo: next + 1, reason: .incompleteFrame, now: now, emit: emit)
            }
        }
    }

    /// Drops the frame(s) at the front until the next frame start at or after `limit`.
    private mutating func giveUp(upTo limit: Int64, reason: VP8KeyframeRequestReason, now: Int64,
                                 emit: (VP8AssemblerEvent) -> Void) {
        guard let next = nextSeq else { return }
        statistics.framesIncomplete += 1
        // Find the next frame start at or after `limit` within what we hold.
        var s = Swift.max(limit, next + 1)
        var found: Int64? = nil
        while s <= highestSeq {
            let i = Int(truncatingIfNeeded: s) & mask
            if slotSeq[i] == s && slotFlags[i] & Self.start != 0 { found = s; break }
            s += 1
        }
        let newNext = found ?? (Swift.max(limit, highestSeq + 1))
        // Was the abandoned frame a non-reference frame? Known when any of its packets arrived
        // (every packet's descriptor carries N).
        var abandonedIsNonReference = false
        var c = next
        while c < newNext {
            let i = Int(truncatingIfNeeded: c) & mask
            if slotSeq[i] == c {
                if slotFlags[i] & Self.nonReference != 0 { abandonedIsNonReference = true }
                slotSeq[i] = -1
            }
            c += 1
        }
        nextSeq = newNext
        stalledSince = nil
        if !abandonedIsNonReference { needKeyframe = true }
        requestKeyframe(reason, now: now, emit: emit, force: true)
    }

    private mutating func requestKeyframe(_ reason: VP8KeyframeRequestReason, now: Int64,
                                          emit: (VP8AssemblerEvent) -> Void, force: Bool) {
        if !force, let last = lastRequest, now - last < configuration.keyframeRequestIntervalNanoseconds { return }
        if force, let last = lastRequest, now - last < configuration.keyframeRequestIntervalNanoseconds / 10 { return }
        lastRequest = now
        statistics.keyframeRequests += 1
        emit(.keyframeRequest(reason))
    }

    private mutating func deliver(start: Int64, count: Int, now: Int64, emit: (VP8AssemblerEvent) -> Void) {
        frame.removeAll(keepingCapacity: true)
        let i0 = Int(truncatingIfNeeded: start) & mask
        let ts = slotTimestamp[i0]
        let pid = slotPictureID[i0]
        for k in 0..<count {
            let i = Int(truncatingIfNeeded: start + Int64(k)) & mask
            frame.append(contentsOf: slotData[i])
            slotSeq[i] = -1
        }
        nextSeq = start + Int64(count)
        stalledSince = nil
        delivered = true
        let header: VP8FrameHeader
        do { header = try frame.withUnsafeBytes { b throws(RTPError) in try VP8FrameHeader(parsing: b) } } catch {
            statistics.malformedPackets += 1
            return
        }
        if needKeyframe && !header.isKeyframe {
            statistics.framesDroppedWaitingForKeyframe += 1
            let reason: VP8KeyframeRequestReason = statistics.framesAssembled == 0 ? .waitingForFirstKeyframe : .missingReference
            requestKeyframe(reason, now: now, emit: emit, force: false)
            return
        }
        if header.isKeyframe { needKeyframe = false }
        statistics.framesAssembled += 1
        frame.withUnsafeBytes { b in
            emit(.frame(VP8AssembledFrame(data: b, timestamp: ts, sequenceRange: start...(start + Int64(count) - 1),
                                          header: header, pictureID: pid >= 0 ? UInt16(pid) : nil)))
        }
    }
}
