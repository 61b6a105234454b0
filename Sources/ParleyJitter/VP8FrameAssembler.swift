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
/// `data` is the assembler's internal buffer: valid until the next call of a `mutating` method
/// of the assembler (``VP8FrameAssembler/nextEvent()`` included). Copy it (`Array(frame.data)`)
/// or decode it first.
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

/// What the assembler delivers, taken one at a time with ``VP8FrameAssembler/nextEvent()``.
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
    /// Events still queued when the next ``VP8FrameAssembler/insert(_:nowNanoseconds:)`` or
    /// ``VP8FrameAssembler/advance(nowNanoseconds:)`` began: dropped untaken (their frames'
    /// packets may be reused). 0 when every event is taken after each call.
    public var eventsDropped = 0
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
/// Events are pulled: ``insert(_:nowNanoseconds:)`` and ``advance(nowNanoseconds:)`` queue
/// what they complete or give up, and ``nextEvent()`` takes one at a time, in order. Take them
/// all after each call; the owner is free to change its own state while doing so:
///
/// ```swift
/// assembler.insert(packet, nowNanoseconds: now)
/// while let event = assembler.nextEvent() {
///     switch event {
///     case .frame(let frame): decode(frame.data)   // valid until the next mutating call
///     case .keyframeRequest: sendPictureLossIndication()
///     }
/// }
/// ```
///
/// Memory is bounded by the window; packet storage and the event queue (a ring allocated at
/// init) are reused, so after warm-up inserting a packet and taking its events allocates
/// nothing. Times are injected (nanoseconds of any monotonic clock).
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
    private var frame: FrameBytes
    private var unwrapper = SequenceNumberUnwrapper()
    private var nextSeq: Int64?
    private var delivered = false
    private var needKeyframe = true
    private var stalledSince: Int64?
    private var lastRequest: Int64?
    private var highestSeq: Int64 = .min

    // The event queue: a ring of `queue.count` (a power of two) entries from `queueHead`.
    private var queue: [QueuedEvent]
    private var queueHead = 0
    private var queueCount = 0

    private static let start: UInt8 = 1, marker: UInt8 = 2, nonReference: UInt8 = 4

    /// A queued event. A frame is its run of packets, still in their slots: its bytes are
    /// gathered when it is taken. Nothing writes a slot's bytes until the next insert, and the
    /// next insert first drops the events not taken.
    private enum QueuedEvent {
        case frame(start: Int64, count: Int, timestamp: UInt32, header: VP8FrameHeader, pictureID: Int32)
        case keyframeRequest(VP8KeyframeRequestReason)
    }

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
        frame = FrameBytes(capacity: 256 * 1024)
        // One call queues at most 2n + 2 events: each frame delivered or given up moves past
        // at least one held packet, at most one give-up between two of them finds none, plus
        // one for the first step and one for a window overflow.
        var q = 4
        while q < 2 * n + 2 { q <<= 1 }
        queue = [QueuedEvent](repeating: .keyframeRequest(.incompleteFrame), count: q)
    }

    /// Adds one RTP packet (its payload is copied) that arrived at `nowNanoseconds`, and queues
    /// every frame it completes and any keyframe request: take them with ``nextEvent()``.
    ///
    /// Events of the previous call not taken yet are dropped first
    /// (``VP8AssemblerStatistics/eventsDropped``).
    public mutating func insert(_ packet: RTPPacketView, nowNanoseconds: Int64) {
        insert(payload: packet.payload, sequenceNumber: packet.sequenceNumber, timestamp: packet.timestamp,
               marker: packet.marker, nowNanoseconds: nowNanoseconds)
    }

    /// Adds one packet given by its fields; see ``insert(_:nowNanoseconds:)``.
    public mutating func insert(payload: UnsafeRawBufferPointer, sequenceNumber: UInt16, timestamp: UInt32,
                                marker: Bool, nowNanoseconds: Int64) {
        dropUntakenEvents()
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
            giveUp(upTo: seq - Int64(mask), reason: .windowOverflow, now: nowNanoseconds)
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
        drain(now: nowNanoseconds)
    }

    /// Gives up on a frame that stayed incomplete past the timeout, queueing what that
    /// releases (see ``nextEvent()``). Call it periodically (for example on each playout tick)
    /// so a loss is noticed even when no packets follow.
    ///
    /// Events of the previous call not taken yet are dropped first
    /// (``VP8AssemblerStatistics/eventsDropped``).
    public mutating func advance(nowNanoseconds: Int64) {
        dropUntakenEvents()
        drain(now: nowNanoseconds)
    }

    /// Takes the oldest queued event, or nil when none is left. O(frame size) for a frame,
    /// whose bytes are gathered into the assembler's buffer (reused: no allocation after
    /// warm-up); ``VP8AssembledFrame/data`` stays valid until the next `mutating` call.
    public mutating func nextEvent() -> VP8AssemblerEvent? {
        guard queueCount > 0 else { return nil }
        let event = queue[queueHead]
        queueHead = (queueHead + 1) & (queue.count - 1)
        queueCount -= 1
        switch event {
        case .keyframeRequest(let reason):
            return .keyframeRequest(reason)
        case .frame(let start, let count, let timestamp, let header, let pictureID):
            if !isKnownUniquelyReferenced(&frame) { frame = FrameBytes(capacity: frame.capacity) }  // a copy's
            var size = 0
            for k in 0..<count { size += slotData[Int(truncatingIfNeeded: start + Int64(k)) & mask].count }
            frame.reserve(size)
            let bytes = frame.base
            var at = 0
            for k in 0..<count {
                slotData[Int(truncatingIfNeeded: start + Int64(k)) & mask].withUnsafeBytes { b in
                    if let source = b.baseAddress { (bytes + at).copyMemory(from: source, byteCount: b.count) }
                    at += b.count
                }
            }
            return .frame(VP8AssembledFrame(data: UnsafeRawBufferPointer(start: bytes, count: size), timestamp: timestamp,
                                            sequenceRange: start...(start + Int64(count) - 1), header: header,
                                            pictureID: pictureID >= 0 ? UInt16(pictureID) : nil))
        }
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

    private mutating func dropUntakenEvents() {
        guard queueCount > 0 else { return }
        statistics.eventsDropped += queueCount
        queueCount = 0
    }

    private mutating func enqueue(_ event: QueuedEvent) {
        // Internal invariant, not reachable from any packet sequence: the ring holds what one
        // call can queue (see init), and each call starts with it empty.
        precondition(queueCount < queue.count, "VP8FrameAssembler event queue overflow")
        queue[(queueHead + queueCount) & (queue.count - 1)] = event
        queueCount += 1
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

    private mutating func drain(now: Int64) {
        while let next = nextSeq {
            switch frameState(at: next) {
            case .complete(let count):
                deliver(start: next, count: count, now: now)
            case .waiting:
                stalledSince = nil
                return
            case .broken:
                giveUp(upTo: next + 1, reason: .incompleteFrame, now: now)
            case .gap:
                // A later packet arrived while one of this frame is missing: wait for reordering.
                if stalledSince == nil { stalledSince = now; return }
                if now - stalledSince! < configuration.completionTimeoutNanoseconds { return }
                giveUp(upTo: next + 1, reason: .incompleteFrame, now: now)
            }
        }
    }

    /// Drops the frame(s) at the front until the next frame start at or after `limit`.
    private mutating func giveUp(upTo limit: Int64, reason: VP8KeyframeRequestReason, now: Int64) {
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
        requestKeyframe(reason, now: now, force: true)
    }

    private mutating func requestKeyframe(_ reason: VP8KeyframeRequestReason, now: Int64, force: Bool) {
        if !force, let last = lastRequest, now - last < configuration.keyframeRequestIntervalNanoseconds { return }
        if force, let last = lastRequest, now - last < configuration.keyframeRequestIntervalNanoseconds / 10 { return }
        lastRequest = now
        statistics.keyframeRequests += 1
        enqueue(.keyframeRequest(reason))
    }

    /// Queues the complete frame of `count` packets from `start` (or drops it while a keyframe
    /// is needed). Its packets stay in their slots until the frame is taken.
    private mutating func deliver(start: Int64, count: Int, now: Int64) {
        let i0 = Int(truncatingIfNeeded: start) & mask
        let ts = slotTimestamp[i0]
        let pid = slotPictureID[i0]
        for k in 0..<count { slotSeq[Int(truncatingIfNeeded: start + Int64(k)) & mask] = -1 }
        nextSeq = start + Int64(count)
        stalledSince = nil
        delivered = true
        // The header lies in the first packet (its 10 bytes were checked when it arrived).
        let header: VP8FrameHeader
        do { header = try slotData[i0].withUnsafeBytes { b throws(RTPError) in try VP8FrameHeader(parsing: b) } } catch {
            statistics.malformedPackets += 1
            return
        }
        if needKeyframe && !header.isKeyframe {
            statistics.framesDroppedWaitingForKeyframe += 1
            let reason: VP8KeyframeRequestReason = statistics.framesAssembled == 0 ? .waitingForFirstKeyframe : .missingReference
            requestKeyframe(reason, now: now, force: false)
            return
        }
        if header.isKeyframe { needKeyframe = false }
        statistics.framesAssembled += 1
        enqueue(.frame(start: start, count: count, timestamp: ts, header: header, pictureID: pid))
    }
}

/// The bytes of the frame last taken from a ``VP8FrameAssembler``: one heap block, allocated
/// at init and grown only for a larger frame, whose address the taken frame's `data` points to.
private final class FrameBytes {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    /// Makes room for `size` bytes (the old contents are not kept).
    func reserve(_ size: Int) {
        guard size > capacity else { return }
        base.deallocate()
        capacity = Swift.max(size, 2 * capacity)
        base = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    }

    deinit { base.deallocate() }
}
