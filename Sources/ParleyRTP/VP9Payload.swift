// VP9 over RTP (RFC 9628). Each payload starts with the payload descriptor (4.2):
//
//          0 1 2 3 4 5 6 7
//         +-+-+-+-+-+-+-+-+
//         |I|P|L|F|B|E|V|Z| (REQUIRED)
//         +-+-+-+-+-+-+-+-+
//    I:   |M| PICTURE ID  | (REQUIRED if I)
//         +-+-+-+-+-+-+-+-+
//    M:   | EXTENDED PID  | (present when M = 1: 15-bit picture ID)
//         +-+-+-+-+-+-+-+-+
//    L:   | TID |U| SID |D| (present when L)
//         +-+-+-+-+-+-+-+-+
//         |   TL0PICIDX   | (when L and F = 0: non-flexible mode)
//         +-+-+-+-+-+-+-+-+                             -\
//  P,F:   | P_DIFF      |N| (when P and F: up to 3 times) -/
//         +-+-+-+-+-+-+-+-+
//    V:   | SS            | scalability structure (4.2.1)
//
// Scalability structure:
//
//         | N_S |Y|G|-|-|-|
//    Y:   | WIDTH (16) | HEIGHT (16) |   N_S + 1 times
//    G:   |      N_G      |
//         |  T  |U| R |-|-|  then R x P_DIFF (8 bits)   N_G times

/// The RFC 9628 VP9 payload descriptor (scalability structure validated and summarised).
///
/// Threading: a value type.
public struct VP9PayloadDescriptor: Equatable, Sendable {
    /// P: the picture is inter-picture predicted.
    public var interPicturePredicted: Bool
    /// F: flexible mode (reference indices in the descriptor).
    public var flexibleMode: Bool
    /// B: start of a layer frame.
    public var beginningOfFrame: Bool
    /// E: end of a layer frame.
    public var endOfFrame: Bool
    /// Z: not used as a reference by upper spatial layers.
    public var notReferenceForUpperSpatialLayers: Bool
    /// Picture ID (7 or 15 bits), when I = 1.
    public var pictureID: UInt16?
    /// Whether the picture ID is 15 bits (M = 1).
    public var longPictureID: Bool
    /// Layer indices, when L = 1: temporal ID (0...7), switching-up point, spatial ID (0...7),
    /// inter-layer dependency.
    public var layer: (temporalID: UInt8, switchingUp: Bool, spatialID: UInt8, interLayerDependency: Bool)?
    /// TL0PICIDX, in non-flexible mode with L = 1.
    public var tl0PictureIndex: UInt8?
    /// Reference picture ID differences (flexible mode, P = 1), 1...3 of them.
    public var referenceDiffs: [UInt8]
    /// The scalability structure's spatial layer count and resolutions, when V = 1.
    public var scalability: VP9ScalabilityStructure?
    /// Descriptor length in bytes: where the VP9 data starts.
    public var size: Int

    public static func == (a: Self, b: Self) -> Bool {
        a.interPicturePredicted == b.interPicturePredicted && a.flexibleMode == b.flexibleMode
            && a.beginningOfFrame == b.beginningOfFrame && a.endOfFrame == b.endOfFrame
            && a.notReferenceForUpperSpatialLayers == b.notReferenceForUpperSpatialLayers
            && a.pictureID == b.pictureID && a.longPictureID == b.longPictureID
            && a.layer?.temporalID == b.layer?.temporalID && a.layer?.switchingUp == b.layer?.switchingUp
            && a.layer?.spatialID == b.layer?.spatialID
            && a.layer?.interLayerDependency == b.layer?.interLayerDependency
            && (a.layer == nil) == (b.layer == nil)
            && a.tl0PictureIndex == b.tl0PictureIndex && a.referenceDiffs == b.referenceDiffs
            && a.scalability == b.scalability && a.size == b.size
    }

    /// Parses the descriptor at the start of a VP9 RTP payload.
    /// - Throws: ``RTPError/emptyPayload``, ``RTPError/vp9DescriptorTruncated(needed:available:)``
    ///   when an announced field is missing (or no VP9 data follows, except for a payload that
    ///   only carries a scalability structure), ``RTPError/fieldOutOfRange(_:)`` for more than
    ///   3 reference differences.
    public init(parsing payload: UnsafeRawBufferPointer) throws(RTPError) {
        let n = payload.count
        guard n >= 1 else { throw .emptyPayload }
        let b0 = payload[0]
        interPicturePredicted = b0 & 0x40 != 0
        flexibleMode = b0 & 0x10 != 0
        beginningOfFrame = b0 & 0x08 != 0
        endOfFrame = b0 & 0x04 != 0
        notReferenceForUpperSpatialLayers = b0 & 0x01 != 0
        pictureID = nil
        longPictureID = false
        layer = nil
        tl0PictureIndex = nil
        referenceDiffs = []
        scalability = nil
        var p = 1
        func need(_ k: Int) throws(RTPError) {
            guard p + k <= n else { throw .vp9DescriptorTruncated(needed: p + k, available: n) }
        }
        if b0 & 0x80 != 0 {
            try need(1)
            let m = payload[p]
            if m & 0x80 != 0 {
                try need(2)
                pictureID = UInt16(m & 0x7F) << 8 | UInt16(payload[p + 1])
                longPictureID = true
                p += 2
            } else {
                pictureID = UInt16(m)
                p += 1
            }
        }
        if b0 & 0x20 != 0 {
            try need(1)
            let l = payload[p]
            layer = (l >> 5, l & 0x10 != 0, (l >> 1) & 7, l & 1 != 0)
            p += 1
            if !flexibleMode {
                try need(1)
                tl0PictureIndex = payload[p]
                p += 1
            }
        }
        if flexibleMode && interPicturePredicted {
            while true {
                try need(1)
                let d = payload[p]
                p += 1
                referenceDiffs.append(d >> 1)
                if d & 1 == 0 { break }
                guard referenceDiffs.count < 3 else { throw .fieldOutOfRange("more than 3 VP9 reference differences") }
            }
        }
        if b0 & 0x02 != 0 {
            try need(1)
            let v = payload[p]
            p += 1
            let layers = Int(v >> 5) + 1
            var ss = VP9ScalabilityStructure(spatialLayers: layers, resolutions: [], pictureGroupSize: nil)
            if v & 0x10 != 0 {
                try need(4 * layers)
                for i in 0..<layers {
                    let q = p + 4 * i
                    ss.resolutions.append((Int(payload[q]) << 8 | Int(payload[q + 1]), Int(payload[q + 2]) << 8 | Int(payload[q + 3])))
                }
                p += 4 * layers
            }
            if v & 0x08 != 0 {
                try need(1)
                let groups = Int(payload[p])
                p += 1
                ss.pictureGroupSize = groups
                for _ in 0..<groups {
                    try need(1)
                    let r = Int((payload[p] >> 2) & 3)
                    p += 1
                    try need(r)
                    p += r
                }
            }
            scalability = ss
        }
        // A payload may carry only a scalability structure; otherwise VP9 data must follow.
        guard p < n || scalability != nil else { throw .vp9DescriptorTruncated(needed: p + 1, available: n) }
        size = p
    }

    /// Whether this packet starts a picture's first (lowest spatial) layer frame.
    public var isPictureStart: Bool { beginningOfFrame && (layer?.spatialID ?? 0) == 0 }

    /// Whether the picture decodes without earlier pictures (P = 0 on the base spatial layer).
    public var isKeyPicture: Bool { !interPicturePredicted && (layer?.spatialID ?? 0) == 0 }
}

/// The scalability structure (SS) of a VP9 payload descriptor, summarised.
public struct VP9ScalabilityStructure: Equatable, Sendable {
    /// N_S + 1.
    public var spatialLayers: Int
    /// Width and height per spatial layer, when Y = 1.
    public var resolutions: [(width: Int, height: Int)]
    /// N_G, when G = 1.
    public var pictureGroupSize: Int?

    public static func == (a: Self, b: Self) -> Bool {
        a.spatialLayers == b.spatialLayers && a.pictureGroupSize == b.pictureGroupSize
            && a.resolutions.count == b.resolutions.count
            && zip(a.resolutions, b.resolutions).allSatisfy { $0.width == $1.width && $0.height == $1.height }
    }
}
