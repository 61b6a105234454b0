// The simulated network: a transport that delays, loses and duplicates datagrams as the
// network simulator decides.

import ParleyCall
import ParleyNetwork
import ParleyRTP

/// Counters of a ``SimulatedLink``.
public struct LinkStatistics: Sendable, Hashable {
    /// Datagrams given to `send`.
    public var sent = 0
    /// Datagrams the simulated network lost.
    public var lost = 0
    /// Extra copies the network delivered (duplication).
    public var duplicated = 0
    /// Datagrams delivered (copies included).
    public var delivered = 0
    /// Datagrams refused because the link's queue was full (back-pressure).
    public var refused = 0
    /// Largest one-way delay applied, ms.
    public var maximumDelayMs = 0.0
    /// Of `sent`, RTCP datagrams (`RTPMultiplexing/isRTCP(_:)`, RFC 5761), and of `lost`, RTCP ones.
    public var controlSent = 0
    public var controlLost = 0

    /// RTP datagrams sent and lost (RTCP excluded).
    public var mediaSent: Int { sent - controlSent }
    public var mediaLost: Int { lost - controlLost }

    /// All counters zero.
    public init() {}
}

/// Why a ``SimulatedLink`` could not be created: one of its size arguments is out of range.
public struct SimulatedLinkError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The argument's name (`capacity`, `maximumDatagram` or `chunkPackets`).
    public var argument: String
    /// The value given.
    public var value: Int
    /// What is wrong with it.
    public var reason: String

    /// `SimulatedLink: ARGUMENT VALUE REASON`.
    public var description: String { "SimulatedLink: \(argument) \(value) \(reason)" }
}

/// An in-process network: each datagram is delayed, lost or duplicated as the
/// ``NetworkSimulator`` decides for a ``NetworkScenario`` and a seed, then delivered in arrival
/// order (so jitter reorders). Deterministic: same scenario, seed and send times, same arrivals.
///
/// The simulator's trace is drawn in chunks of ``chunkPackets`` packets (seed varied per chunk),
/// so an hour-long call uses constant memory; loss bursts and spikes restart at chunk edges.
/// Packets wait in a fixed pool of ``capacity`` slots (a min-heap by arrival time): nothing
/// is allocated per datagram, and a full pool refuses new datagrams (back-pressure).
///
/// Threading: one owner.
public struct SimulatedLink: PacketTransport {
    /// The network condition (its `driftPpm` is applied to delays as the simulator does).
    public let scenario: NetworkScenario
    /// The simulator's seed (chunk `c` draws with a seed derived from it and `c`).
    public let seed: UInt64
    /// Packets per simulator draw.
    public let chunkPackets: Int
    /// Datagrams in flight at most.
    public let capacity: Int
    /// Largest datagram, bytes.
    public let maximumDatagram: Int
    /// What the link did so far.
    public private(set) var statistics = LinkStatistics()

    // Impairments of the current chunk: per packet, first and second (duplicate) delay, ms
    // (NaN: none = lost / no duplicate).
    private var delay1: [Double]
    private var delay2: [Double]
    private var chunk = -1
    private var packetIndex = 0
    // Slot pool and heap.
    private var storage: [UInt8]
    private var lengths: [Int]
    private var freeSlots: [Int]
    private var heapArrival: [Int64]
    private var heapOrder: [Int64]
    private var heapSlot: [Int]
    private var heapCount = 0
    private var order: Int64 = 0

    /// Creates a link. `scenario.packetMs` should be the sender's packet interval (20 ms audio).
    /// - Throws: ``SimulatedLinkError`` when `capacity`, `maximumDatagram` or `chunkPackets` is
    ///   not positive, or the datagram pool (`capacity` x `maximumDatagram` bytes) does not fit
    ///   in memory's address range.
    public init(scenario: NetworkScenario, seed: UInt64, capacity: Int = 512, maximumDatagram: Int = RTPLimits.maximumDatagramSize,
                chunkPackets: Int = 500) throws(SimulatedLinkError) {
        for (argument, value) in [("capacity", capacity), ("maximumDatagram", maximumDatagram), ("chunkPackets", chunkPackets)]
        where value <= 0 {
            throw SimulatedLinkError(argument: argument, value: value, reason: "must be positive")
        }
        guard !capacity.multipliedReportingOverflow(by: maximumDatagram).overflow else {
            throw SimulatedLinkError(argument: "capacity", value: capacity,
                                     reason: "times maximumDatagram (\(maximumDatagram)) overflows the pool size")
        }
        self.scenario = scenario
        self.seed = seed
        self.capacity = capacity
        self.maximumDatagram = maximumDatagram
        self.chunkPackets = chunkPackets
        delay1 = [Double](repeating: .nan, count: chunkPackets)
        delay2 = [Double](repeating: .nan, count: chunkPackets)
        storage = [UInt8](repeating: 0, count: capacity * maximumDatagram)
        lengths = [Int](repeating: 0, count: capacity)
        freeSlots = Array((0..<capacity).reversed())
        heapArrival = [Int64](repeating: 0, count: capacity)
        heapOrder = [Int64](repeating: 0, count: capacity)
        heapSlot = [Int](repeating: 0, count: capacity)
    }

    public var inFlight: Int { heapCount }

    private mutating func drawChunk(_ c: Int) {
        let seconds = Double(chunkPackets) * scenario.packetMs / 1000
        let rows = NetworkSimulator.generate(scenario, seed: seed &+ UInt64(c) &* 0x9E37_79B9_7F4A_7C15,
                                             seconds: seconds + scenario.packetMs / 2000)
        for i in 0..<chunkPackets { delay1[i] = .nan; delay2[i] = .nan }
        var k = -1
        var last: UInt16?
        for r in rows {
            if r.sequence != last { k += 1; last = r.sequence }
            guard k < chunkPackets else { break }
            guard let a = r.arrivalMs else { continue }
            let d = a - Double(k) * scenario.packetMs   // the simulator's elapsed-time origin
            if delay1[k].isNaN { delay1[k] = d } else { delay2[k] = d }
        }
        chunk = c
    }

    public mutating func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool {
        let c = packetIndex / chunkPackets
        if c != chunk { drawChunk(c) }
        let i = packetIndex % chunkPackets
        packetIndex += 1
        statistics.sent += 1
        let control = RTPMultiplexing.isRTCP(bytes)
        if control { statistics.controlSent += 1 }
        let d1 = delay1[i], d2 = delay2[i]
        if d1.isNaN {
            statistics.lost += 1
            if control { statistics.controlLost += 1 }
            return true
        }
        guard bytes.count <= maximumDatagram, !freeSlots.isEmpty else { statistics.refused += 1; return false }
        enqueue(bytes, arrival: time.advanced(byNanoseconds: Int64(d1 * 1e6)))
        statistics.maximumDelayMs = max(statistics.maximumDelayMs, d1)
        if !d2.isNaN, !freeSlots.isEmpty {
            enqueue(bytes, arrival: time.advanced(byNanoseconds: Int64(d2 * 1e6)))
            statistics.duplicated += 1
        }
        return true
    }

    public mutating func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {
        while heapCount > 0 && heapArrival[0] <= time.nanoseconds {
            let slot = heapSlot[0]
            let arrival = MonotonicTime(nanoseconds: heapArrival[0])
            pop()
            statistics.delivered += 1
            let base = slot * maximumDatagram
            storage.withUnsafeBytes { raw in
                body(UnsafeRawBufferPointer(rebasing: raw[base..<(base + lengths[slot])]), arrival)
            }
            freeSlots.append(slot)
        }
    }

    private mutating func enqueue(_ bytes: UnsafeRawBufferPointer, arrival: MonotonicTime) {
        let slot = freeSlots.removeLast()
        let base = slot * maximumDatagram
        storage.withUnsafeMutableBytes { raw in
            UnsafeMutableRawBufferPointer(rebasing: raw[base..<(base + bytes.count)]).copyMemory(from: bytes)
        }
        lengths[slot] = bytes.count
        // Sift up.
        var i = heapCount
        heapCount += 1
        let key = arrival.nanoseconds, ord = order
        order += 1
        while i > 0 {
            let p = (i - 1) / 2
            if heapArrival[p] < key || (heapArrival[p] == key && heapOrder[p] < ord) { break }
            heapArrival[i] = heapArrival[p]; heapOrder[i] = heapOrder[p]; heapSlot[i] = heapSlot[p]
            i = p
        }
        heapArrival[i] = key; heapOrder[i] = ord; heapSlot[i] = slot
    }

    private mutating func pop() {
        heapCount -= 1
        guard heapCount > 0 else { return }
        let key = heapArrival[heapCount], ord = heapOrder[heapCount], slot = heapSlot[heapCount]
        var i = 0
        while true {
            let l = 2 * i + 1
            guard l < heapCount else { break }
            var c = l
            let r = l + 1
            if r < heapCount && (heapArrival[r] < heapArrival[l] || (heapArrival[r] == heapArrival[l] && heapOrder[r] < heapOrder[l])) {
                c = r
            }
            if key < heapArrival[c] || (key == heapArrival[c] && ord < heapOrder[c]) { break }
            heapArrival[i] = heapArrival[c]; heapOrder[i] = heapOrder[c]; heapSlot[i] = heapSlot[c]
            i = c
        }
        heapArrival[i] = key; heapOrder[i] = ord; heapSlot[i] = slot
    }
}

extension NetworkScenario {
    /// The `parley room` network: `baseDelayMs` one way, Gaussian jitter of `jitterMs`, and
    /// `lossPercent` mean loss in Gilbert-Elliott bursts of mean length 2 packets (0: none).
    /// - Throws: ``SimulationConfigurationError/meanLossOutOfRange(_:)`` when `lossPercent` is
    ///   not in 0..<100.
    public static func room(lossPercent: Double, jitterMs: Double, baseDelayMs: Double = 40,
                            packetMs: Double = 20) throws(SimulationConfigurationError) -> NetworkScenario {
        var s = NetworkScenario(name: "room")
        s.baseDelayMs = baseDelayMs
        s.packetMs = packetMs
        s.jitter = jitterMs > 0 ? .gaussian(sigmaMs: jitterMs) : .none
        guard lossPercent >= 0 else { throw .meanLossOutOfRange(lossPercent / 100) }
        if lossPercent > 0 {
            s.loss = try GilbertElliott.bursty(meanLoss: lossPercent / 100, meanBurst: 2)
        }
        return s
    }
}

extension GilbertElliott {
    /// A two-state chain that loses every packet in the bad state and none in the good one,
    /// with stationary loss `meanLoss` (0..<1) and bursts of mean length `meanBurst` packets.
    /// - Throws: ``SimulationConfigurationError/meanLossOutOfRange(_:)`` or
    ///   ``SimulationConfigurationError/meanBurstTooShort(_:)``.
    public static func bursty(meanLoss: Double, meanBurst: Double) throws(SimulationConfigurationError) -> GilbertElliott {
        guard meanLoss >= 0 && meanLoss < 1 else { throw .meanLossOutOfRange(meanLoss) }
        guard meanBurst >= 1 else { throw .meanBurstTooShort(meanBurst) }
        let badToGood = 1 / meanBurst
        let goodToBad = meanLoss * badToGood / (1 - meanLoss)
        return GilbertElliott(goodToBad: min(1, goodToBad), badToGood: badToGood, lossInGood: 0, lossInBad: 1)
    }
}
