// VP8 over RTP (RFC 7741). Each payload starts with the payload descriptor (4.2):
//
//         0 1 2 3 4 5 6 7
//        +-+-+-+-+-+-+-+-+
//        |X|R|N|S|R| PID | (REQUIRED)
//        +-+-+-+-+-+-+-+-+
//   X:   |I|L|T|K| RSV   | (OPTIONAL)
//        +-+-+-+-+-+-+-+-+
//   I:   |M| PictureID   | (OPTIONAL)
//        +-+-+-+-+-+-+-+-+
//        |   PictureID   | (present when M = 1: 15-bit picture ID)
//        +-+-+-+-+-+-+-+-+
//   L:   |   TL0PICIDX   | (OPTIONAL)
//        +-+-+-+-+-+-+-+-+
//   T/K: |TID|Y| KEYIDX  | (OPTIONAL)
//        +-+-+-+-+-+-+-+-+
//
// The first packet of a frame (S = 1, PID = 0) continues with the VP8 payload header (4.3),
// the first 3 bytes of the frame itself:
//
//        |Size0|H| VER |P|
//        |     Size1     |
//        |     Size2     |
//
// P = 0 marks a keyframe, whose next 7 bytes are the start code 9d 01 2a and the 14-bit width
// and height (RFC 6386 9.1). The marker bit is set on the last packet of a frame.

/// The RTP clock rate of VP8 (RFC 7741 4.1): 90 kHz.
public enum VP8RTP {
    public static let clockRate = 90_000
    /// The dynamic payload type Parley uses unless told otherwise.
    public static let defaultPayloadType: UInt8 = 96
}

/// The RFC 7741 VP8 payload descriptor.
///
/// Threading: a value type.
public struct VP8PayloadDescriptor: Equatable, Sendable {
    /// N: the frame can be discarded without affecting other frames.
    public var nonReference: Bool
    /// S: the packet starts a VP8 partition.
    public var startOfPartition: Bool
    /// PID: the partition index, 0...7.
    public var partitionIndex: UInt8
    /// Picture ID, 7 or 15 bits, when I = 1.
    public var pictureID: UInt16?
    /// Whether the picture ID is written in 15 bits (M = 1). Default true (as libwebrtc does).
    public var longPictureID: Bool
    /// TL0PICIDX, when L = 1.
    public var tl0PictureIndex: UInt8?
    /// TID, 0...3, when T = 1.
    public var temporalLayer: UInt8?
    /// Y: layer sync (meaningful with TID).
    public var layerSync: Bool
    /// KEYIDX, 0...31, when K = 1.
    public var keyIndex: UInt8?

    public init(nonReference: Bool = false, startOfPartition: Bool, partitionIndex: UInt8 = 0,
                pictureID: UInt16? = nil, longPictureID: Bool = true, tl0PictureIndex: UInt8? = nil,
                temporalLayer: UInt8? = nil, layerSync: Bool = false, keyIndex: UInt8? = nil) {
        self.nonReference = nonReference
        self.startOfPartition = startOfPartition
        self.partitionIndex = partitionIndex
        self.pictureID = pictureID
        self.longPictureID = longPictureID
        self.tl0PictureIndex = tl0PictureIndex
        self.temporalLayer = temporalLayer
        self.layerSync = layerSync
        self.keyIndex = keyIndex
    }

    /// Whether this packet begins a frame: S = 1 and PID = 0.
    @inlinable public var isFrameStart: Bool { startOfPartition && partitionIndex == 0 }

    @inlinable var hasExtension: Bool {
        pictureID != nil || tl0PictureIndex != nil || temporalLayer != nil || keyIndex != nil
    }

    /// Bytes the descriptor takes (1...6).
    @inlinable
    public var marshalSize: Int {
        guard hasExtension else { return 1 }
        var n = 2
        if pictureID != nil { n += longPictureID ? 2 : 1 }
        if tl0PictureIndex != nil { n += 1 }
        if temporalLayer != nil || keyIndex != nil { n += 1 }
        return n
    }

    /// Parses the descriptor at the start of a VP8 RTP payload; ``marshalSize`` of the result is
    /// where the VP8 data starts.
    /// - Throws: ``RTPError/emptyPayload``, ``RTPError/vp8DescriptorTruncated(needed:available:)``
    ///   when an announced field is missing or no VP8 data follows it.
    @inlinable
    public init(parsing payload: UnsafeRawBufferPointer) throws(RTPError) {
        let n = payload.count
        guard n >= 1 else { throw .emptyPayload }
        let b0 = payload[0]
        self.init(nonReference: b0 & 0x20 != 0, startOfPartition: b0 & 0x10 != 0, partitionIndex: b0 & 0x07)
        var p = 1
        if b0 & 0x80 != 0 {
            guard n >= 2 else { throw .vp8DescriptorTruncated(needed: 2, available: n) }
            let x = payload[1]
            p = 2
            if x & 0x80 != 0 {
                guard n > p else { throw .vp8DescriptorTruncated(needed: p + 1, available: n) }
                let m = payload[p]
                if m & 0x80 != 0 {
                    guard n > p + 1 else { throw .vp8DescriptorTruncated(needed: p + 2, available: n) }
                    pictureID = UInt16(m & 0x7F) << 8 | UInt16(payload[p + 1])
                    longPictureID = true
                    p += 2
                } else {
                    pictureID = UInt16(m)
                    longPictureID = false
                    p += 1
                }
            }
            if x & 0x40 != 0 {
                guard n > p else { throw .vp8DescriptorTruncated(needed: p + 1, available: n) }
                tl0PictureIndex = payload[p]
                p += 1
            }
            if x & 0x30 != 0 {
                guard n > p else { throw .vp8DescriptorTruncated(needed: p + 1, available: n) }
                let tk = payload[p]
                if x & 0x20 != 0 {
                    temporalLayer = tk >> 6
                    layerSync = tk & 0x20 != 0
                }
                if x & 0x10 != 0 { keyIndex = tk & 0x1F }
                p += 1
            }
        }
        guard n > p else { throw .vp8DescriptorTruncated(needed: p + 1, available: n) }
    }

    /// Writes the descriptor at the start of `buffer`; returns its length.
    /// - Throws: ``RTPError/bufferTooSmall(needed:available:)``, ``RTPError/fieldOutOfRange(_:)``
    ///   for a PID above 7, a picture ID too large for its width, TID above 3 or KEYIDX above 31.
    @inlinable
    public func marshal(into buffer: UnsafeMutableRawBufferPointer) throws(RTPError) -> Int {
        let size = marshalSize
        guard buffer.count >= size else { throw .bufferTooSmall(needed: size, available: buffer.count) }
        guard partitionIndex <= 7 else { throw .fieldOutOfRange("VP8 PID above 7") }
        let ext = hasExtension
        buffer[0] = (ext ? 0x80 : 0) | (nonReference ? 0x20 : 0) | (startOfPartition ? 0x10 : 0) | partitionIndex
        guard ext else { return 1 }
        var x: UInt8 = 0
        if pictureID != nil { x |= 0x80 }
        if tl0PictureIndex != nil { x |= 0x40 }
        if temporalLayer != nil { x |= 0x20 }
        if keyIndex != nil { x |= 0x10 }
        buffer[1] = x
        var p = 2
        if let id = pictureID {
            if longPictureID {
                guard id <= 0x7FFF else { throw .fieldOutOfRange("15-bit picture ID above 32767") }
                buffer[p] = 0x80 | UInt8(id >> 8)
                buffer[p + 1] = UInt8(truncatingIfNeeded: id)
                p += 2
            } else {
                guard id <= 0x7F else { throw .fieldOutOfRange("7-bit picture ID above 127") }
                buffer[p] = UInt8(id)
                p += 1
            }
        }
        if let t = tl0PictureIndex { buffer[p] = t; p += 1 }
        if temporalLayer != nil || keyIndex != nil {
            let tid = temporalLayer ?? 0
            let key = keyIndex ?? 0
            guard tid <= 3 else { throw .fieldOutOfRange("VP8 TID above 3") }
            guard key <= 31 else { throw .fieldOutOfRange("VP8 KEYIDX above 31") }
            buffer[p] = tid << 6 | (layerSync ? 0x20 : 0) | key
            p += 1
        }
        return p
    }
}

/// The VP8 payload header: the first bytes of a frame's first partition (RFC 7741 4.3,
/// RFC 6386 9.1). Gives the frame type and, for keyframes, the picture size.
public struct VP8FrameHeader: Equatable, Sendable {
    /// P = 0: an intra frame that decodes without references.
    public var isKeyframe: Bool
    /// VER: the reconstruction filter and loop-filter profile, 0...3 (others reserved).
    public var version: UInt8
    /// H: whether the frame is shown.
    public var showFrame: Bool
    /// The first partition's size in bytes (19 bits).
    public var firstPartitionSize: Int
    /// Width in pixels (keyframes only; 0 otherwise).
    public var width: Int
    /// Height in pixels (keyframes only; 0 otherwise).
    public var height: Int

    /// Parses the header at the start of a VP8 frame (the payload after the descriptor of the
    /// packet with S = 1 and PID = 0).
    /// - Throws: ``RTPError/vp8PayloadHeaderTruncated(needed:available:)`` with fewer than 3
    ///   bytes (10 for a keyframe); ``RTPError/vp8BadStartCode`` for a keyframe without it.
    @inlinable
    public init(parsing frame: UnsafeRawBufferPointer) throws(RTPError) {
        let n = frame.count
        guard n >= 3 else { throw .vp8PayloadHeaderTruncated(needed: 3, available: n) }
        let b0 = frame[0]
        isKeyframe = b0 & 1 == 0
        version = (b0 >> 1) & 7
        showFrame = b0 & 0x10 != 0
        firstPartitionSize = Int(b0 >> 5) | Int(frame[1]) << 3 | Int(frame[2]) << 11
        width = 0
        height = 0
        if isKeyframe {
            guard n >= 10 else { throw .vp8PayloadHeaderTruncated(needed: 10, available: n) }
            guard frame[3] == 0x9D, frame[4] == 0x01, frame[5] == 0x2A else { throw .vp8BadStartCode }
            width = (Int(frame[6]) | Int(frame[7]) << 8) & 0x3FFF
            height = (Int(frame[8]) | Int(frame[9]) << 8) & 0x3FFF
        }
    }
}

/// Splits VP8 frames into RTP payloads of at most ``maxPayloadSize`` bytes (RFC 7741 5).
///
/// Every payload carries a 4-byte descriptor with a 15-bit picture ID that advances per frame;
/// the first payload of a frame has S = 1, PID = 0; the caller sets the RTP marker on the last
/// one (the `isLast` flag) and gives all of a frame's packets the same 90 kHz timestamp.
/// The payload scratch is allocated once in `init`.
///
/// Threading: a value type, one per stream.
public struct VP8Packetizer: Sendable {
    /// The largest RTP payload to produce, descriptor included (MTU minus IP, UDP, RTP headers).
    public let maxPayloadSize: Int
    /// The picture ID of the next frame (15 bits; wraps to 0 after 32767).
    public var pictureID: UInt16
    private var scratch: [UInt8]

    /// A packetizer with the default payload size, 1200 bytes: fits ``RTPLimits/maximumDatagramSize``
    /// with IPv6, UDP, RTP and SRTP overheads, as WebRTC stacks use. `pictureID` is the first
    /// frame's (inject for tests).
    public init(pictureID: UInt16 = 0) {
        self.init(validMaxPayloadSize: Self.defaultMaxPayloadSize, pictureID: pictureID)
    }

    /// A packetizer producing payloads of at most `maxPayloadSize` bytes, descriptor included.
    /// `pictureID` is the first frame's (inject for tests).
    ///
    /// - Throws: ``RTPError/fieldOutOfRange(_:)`` when `maxPayloadSize` is 4 bytes or less (no
    ///   room for the payload descriptor and data).
    public init(maxPayloadSize: Int, pictureID: UInt16 = 0) throws(RTPError) {
        guard maxPayloadSize > 4 else {
            throw .fieldOutOfRange("VP8 payload size \(maxPayloadSize) leaves no room after the 4-byte descriptor")
        }
        self.init(validMaxPayloadSize: maxPayloadSize, pictureID: pictureID)
    }

    /// The default ``maxPayloadSize``, bytes.
    public static let defaultMaxPayloadSize = 1200

    private init(validMaxPayloadSize maxPayloadSize: Int, pictureID: UInt16) {
        self.maxPayloadSize = maxPayloadSize
        self.pictureID = pictureID & 0x7FFF
        self.scratch = [UInt8](repeating: 0, count: maxPayloadSize)
    }

    /// Number of payloads `frameSize` bytes will be split into.
    public func packetCount(frameSize: Int) -> Int {
        let room = maxPayloadSize - 4
        return Swift.max(1, (frameSize + room - 1) / room)
    }

    /// Splits `frame` and calls `emit(payload, isLast)` for each RTP payload in order. The
    /// payload buffer is reused: copy it (or send it) before returning from `emit`.
    public mutating func packetize(_ frame: UnsafeRawBufferPointer,
                                   _ emit: (UnsafeRawBufferPointer, Bool) throws -> Void) rethrows {
        let room = maxPayloadSize - 4
        let count = packetCount(frameSize: frame.count)
        let id = pictureID
        pictureID = (pictureID &+ 1) & 0x7FFF
        var offset = 0
        try scratch.withUnsafeMutableBytes { out in
            for i in 0..<count {
                let chunk = Swift.min(room, frame.count - offset)
                out[0] = 0x80 | (i == 0 ? 0x10 : 0)  // X, S on the first, PID 0
                out[1] = 0x80                        // I
                out[2] = 0x80 | UInt8(id >> 8)       // M + high 7 bits
                out[3] = UInt8(truncatingIfNeeded: id)
                if chunk > 0 {
                    UnsafeMutableRawBufferPointer(rebasing: out[4..<(4 + chunk)])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: frame[offset..<(offset + chunk)]))
                }
                offset += chunk
                try emit(UnsafeRawBufferPointer(rebasing: out[0..<(4 + chunk)]), i == count - 1)
            }
        }
    }
}

/// Reassembles VP8 frames from RTP payloads given in sequence order without loss; a packet
/// that does not continue the frame in progress discards it. For reordering and loss, use
/// `VP8FrameAssembler` in ParleyJitter.
///
/// Threading: a value type, one per stream.
public struct VP8Depacketizer: Sendable {
    private var frame: [UInt8] = []
    private var inFrame = false
    private var expectedSequence: UInt16 = 0
    private var timestamp: UInt32 = 0
    /// Frames discarded because a packet was missing.
    public private(set) var discardedFrames = 0

    public init() { frame.reserveCapacity(64 * 1024) }

    /// Adds one packet; returns the complete frame when `marker` ends it.
    /// - Throws: ``RTPError`` when the descriptor is malformed (the packet is ignored).
    public mutating func push(payload: UnsafeRawBufferPointer, sequenceNumber: UInt16, timestamp: UInt32,
                              marker: Bool) throws(RTPError) -> [UInt8]? {
        let d = try VP8PayloadDescriptor(parsing: payload)
        let data = UnsafeRawBufferPointer(rebasing: payload[d.marshalSize...])
        if d.isFrameStart {
            if inFrame { discardedFrames += 1 }
            frame.removeAll(keepingCapacity: true)
            inFrame = true
            self.timestamp = timestamp
        } else if !inFrame || sequenceNumber != expectedSequence || timestamp != self.timestamp {
            if inFrame { discardedFrames += 1 }
            inFrame = false
            return nil
        }
        frame.append(contentsOf: data)
        expectedSequence = sequenceNumber &+ 1
        if marker {
            inFrame = false
            return frame
        }
        return nil
    }
}
