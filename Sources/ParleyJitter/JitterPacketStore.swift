/// The packets an ``AudioJitterBuffer`` holds: a preallocated ring of slots indexed by the
/// unwrapped sequence number & `capacity - 1`, kept as parallel arrays (no per-packet object)
/// with one payload region of `maximumPayloadBytes` per slot.
///
/// A slot whose sequence number is -1 is empty. The buffer keeps every held packet within
/// `capacity` sequence numbers of its playout point, so a slot holds at most one of them.
/// Allocates only in `init`.
struct JitterPacketStore: Sendable {
    /// Slots; a power of two.
    let capacity: Int
    /// Bytes reserved per payload.
    let maximumPayloadBytes: Int
    private let mask: Int64

    /// Unwrapped sequence number held in each slot; -1: empty.
    private(set) var sequence: [Int64]
    /// Media time (RTP clock units on the buffer's timeline) of each slot's first sample.
    private(set) var media: [Int64]
    /// Duration of each slot's packet, RTP clock units.
    private(set) var duration: [Int64]
    /// Arrival of each slot's packet, receiver ms.
    private(set) var arrivalMs: [Double]
    /// The caller's tag of each slot's packet.
    private(set) var tag: [Int]
    /// The RTP sequence number of each slot's packet, as received.
    private(set) var sequence16: [UInt16]
    private var length: [Int]
    /// Payload bytes: slot `s`'s are at ``payloadRange(of:)``.
    private(set) var payloads: [UInt8]
    /// Packets held.
    private(set) var count = 0

    init(capacity: Int, maximumPayloadBytes: Int) {
        self.capacity = capacity
        self.maximumPayloadBytes = maximumPayloadBytes
        mask = Int64(capacity - 1)
        sequence = [Int64](repeating: -1, count: capacity)
        media = [Int64](repeating: 0, count: capacity)
        duration = [Int64](repeating: 0, count: capacity)
        arrivalMs = [Double](repeating: 0, count: capacity)
        length = [Int](repeating: 0, count: capacity)
        tag = [Int](repeating: 0, count: capacity)
        sequence16 = [UInt16](repeating: 0, count: capacity)
        payloads = [UInt8](repeating: 0, count: capacity * maximumPayloadBytes)
    }

    /// The slot unwrapped sequence number `seq` maps to.
    @inline(__always) func slot(of seq: Int64) -> Int { Int(seq & mask) }

    /// Whether the packet with unwrapped sequence number `seq` is held.
    @inline(__always) func holds(_ seq: Int64) -> Bool { sequence[slot(of: seq)] == seq }

    /// The first held sequence number after `seq` (within `seq + 1 ..< seq + capacity`, where
    /// every held packet lies when `seq` is the playout point); nil when none is.
    func firstHeld(after seq: Int64) -> Int64? {
        guard count > 0 else { return nil }
        let limit = seq + Int64(capacity)
        var q = seq + 1
        while q < limit && sequence[slot(of: q)] != q { q += 1 }
        return q < limit ? q : nil
    }

    /// Copies a packet into the slot of `seq` (the caller has made room for it).
    mutating func insert(sequence seq: Int64, media m: Int64, duration d: Int64, arrivalMs a: Double, tag t: Int,
                         sequence16 s16: UInt16, payload: UnsafeRawBufferPointer) {
        let s = slot(of: seq)
        sequence[s] = seq
        media[s] = m
        duration[s] = d
        arrivalMs[s] = a
        length[s] = payload.count
        tag[s] = t
        sequence16[s] = s16
        let base = s * maximumPayloadBytes
        payloads.withUnsafeMutableBytes { dst in
            dst.baseAddress!.advanced(by: base).copyMemory(from: payload.baseAddress!, byteCount: payload.count)
        }
        count += 1
    }

    /// Empties slot `s` (its packet was played or dropped).
    @inline(__always) mutating func release(_ s: Int) {
        sequence[s] = -1
        count -= 1
    }

    /// Empties every slot.
    mutating func removeAll() {
        for s in 0..<sequence.count where sequence[s] >= 0 { release(s) }
    }

    /// Where slot `s`'s payload lies in ``payloads``. (Read the bytes through
    /// `payloads.withUnsafeBytes`: a method of the whole store taking a closure that writes
    /// elsewhere in the buffer would copy the store, retaining all its arrays.)
    @inline(__always) func payloadRange(of s: Int) -> Range<Int> {
        let base = s * maximumPayloadBytes
        return base..<(base + length[s])
    }
}
