import ParleyCore
import ParleySCTP

// The sctp suite. `sctp/message-1000`: one 1000-byte binary message on an open, ordered,
// reliable data channel, sent by one endpoint and received whole by the other, the SCTP
// packets (the message and the acknowledgements) handed across in memory without DTLS.

/// Messages per timed sample.
private let messageIterations = 5_000

/// The SCTP packets one endpoint sent and the other has not yet received: a ring of slots made
/// once.
private final class Wire {
    let slots = 512, slotSize = 1500
    let storage: UnsafeMutableRawBufferPointer
    var lengths: [Int]
    var head = 0, count = 0

    init() {
        storage = .allocate(byteCount: slots * slotSize, alignment: 16)
        lengths = Array(repeating: 0, count: slots)
    }

    func push(_ packet: UnsafeRawBufferPointer) -> Bool {
        guard count < slots, packet.count <= slotSize else { return false }
        let slot = (head + count) % slots
        UnsafeMutableRawBufferPointer(rebasing: storage[(slot * slotSize)...]).copyMemory(from: packet)
        lengths[slot] = packet.count
        count += 1
        return true
    }

    /// Hands the oldest packet to `endpoint`; false when there is none.
    func deliver(to endpoint: DataChannelEndpoint) -> Bool {
        guard count > 0 else { return false }
        let slot = head
        head = (head + 1) % slots
        count -= 1
        endpoint.receive(packet: UnsafeRawBufferPointer(rebasing: storage[(slot * slotSize)..<(slot * slotSize + lengths[slot])]))
        return true
    }
}

/// Benchmarks for the sctp suite.
func sctpBenchmarks() -> [Benchmark] {
    let clock = SystemMediaClock()
    let sender = DataChannelEndpoint(remoteMaxMessageSize: nil, isDTLSClient: true)
    let receiver = DataChannelEndpoint(remoteMaxMessageSize: nil, isDTLSClient: false)
    let toReceiver = Wire(), toSender = Wire()
    final class Tally { var messages = 0, bytes = 0 }
    let tally = Tally()
    receiver.onEvent = { event in
        if case .message(_, .binary(let b)) = event { tally.messages += 1; tally.bytes &+= b.count }
    }
    func pump() {
        while toReceiver.deliver(to: receiver) || toSender.deliver(to: sender) {}
        let now = clock.now()
        sender.advance(to: now)
        receiver.advance(to: now)
    }
    guard (try? sender.start(maximumPacket: 1163, send: { toReceiver.push($0) })) != nil,
          (try? receiver.start(maximumPacket: 1163, send: { toSender.push($0) })) != nil else { return [] }
    for _ in 0..<100 where !(sender.isReady && receiver.isReady) { pump() }
    guard let channel = try? sender.open(DataChannelParameters(label: "bench")) else { return [] }
    for _ in 0..<100 where sender.channel(channel)?.state != .open { pump() }
    guard sender.channel(channel)?.state == .open else { return [] }
    let payload = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 13) }
    return [
        Benchmark(name: "sctp/message-1000", unit: .nsPerOp, iterations: messageIterations) {
            let before = tally.messages
            payload.withUnsafeBytes { bytes in
                for _ in 0..<messageIterations {
                    guard (try? sender.send(binary: bytes, on: channel)) != nil else { return }
                    pump()
                }
            }
            return UInt64(tally.messages - before) &+ UInt64(tally.bytes)
        },
    ]
}
