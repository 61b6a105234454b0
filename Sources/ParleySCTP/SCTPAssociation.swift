// An SCTP association over usrsctp's AF_CONN sockets (RFC 8261: SCTP in DTLS records): packets
// come in from the caller and go out through it; usrsctp runs no thread of its own, and its
// timers advance on the callers' clocks.

import CUSRSCTP
import ParleyCore
import Synchronization

/// usrsctp, which is one per process: initialised once without threads
/// (`usrsctp_init_nothreads`), its timers advanced by `usrsctp_handle_timers` from the callers'
/// clocks, and its output routed to each association's `DatagramQueue` (filled by usrsctp's
/// output callback on whichever thread drove usrsctp, drained by the association's owner) by
/// the number the association registered as its AF_CONN address (a number, never a pointer: a
/// packet for an association that is gone finds no route and is dropped).
final class SCTPStack: Sendable {
    static let shared = SCTPStack()

    private let routes = Locked<[UInt: DatagramQueue]>([:])
    private let nextAddress = Atomic<UInt>(1)
    /// The last time the timers were advanced to, whole milliseconds after the first.
    private let timerClock = Locked<MonotonicTime?>(nil)

    private init() {
        usrsctp_init_nothreads(0, parleySCTPOutput, nil)
        // Room for a burst of messages each way before sends are refused.
        _ = usrsctp_sysctl_set_sctp_sendspace(SCTPStack.bufferSpace)
        _ = usrsctp_sysctl_set_sctp_recvspace(SCTPStack.bufferSpace)
        // What RFC 8831 section 6.2 asks of a data channel's association.
        _ = usrsctp_sysctl_set_sctp_pr_enable(1)
        _ = usrsctp_sysctl_set_sctp_reconfig_enable(1)
        _ = usrsctp_sysctl_set_sctp_ecn_enable(0)
    }

    /// The socket buffer each way, bytes.
    static let bufferSpace: UInt32 = 1 << 20

    /// A new AF_CONN address whose packets go to `ring`.
    func register(_ ring: DatagramQueue) -> UInt {
        let address = nextAddress.add(1, ordering: .relaxed).oldValue
        routes.withLock { $0[address] = ring }
        usrsctp_register_address(UnsafeMutableRawPointer(bitPattern: address))
        return address
    }

    /// Forgets `address`: usrsctp no longer takes its packets, and late output is dropped.
    func deregister(_ address: UInt) {
        usrsctp_deregister_address(UnsafeMutableRawPointer(bitPattern: address))
        routes.withLock { _ = $0.removeValue(forKey: address) }
    }

    /// usrsctp's output for `address`: into its ring.
    func output(address: UInt, _ bytes: UnsafeRawPointer, length: Int) {
        routes.withLock { $0[address]?.push(UnsafeRawBufferPointer(start: bytes, count: length), at: .zero) }
    }

    /// Runs usrsctp's timers up to `now`, in whole milliseconds since the last call (from any
    /// association: the timers are the process's). A time before the last one runs nothing.
    func advanceTimers(to now: MonotonicTime) {
        timerClock.withLock { last in
            guard let previous = last else { last = now; return }
            guard now > previous else { return }
            let elapsed = previous.nanoseconds(to: now) / 1_000_000
            guard elapsed > 0 else { return }
            last = previous.advanced(byNanoseconds: elapsed * 1_000_000)
            usrsctp_handle_timers(UInt32(clamping: elapsed))
        }
    }
}

/// usrsctp's output callback: the address is the association's registered number.
private func parleySCTPOutput(_ address: UnsafeMutableRawPointer?, _ buffer: UnsafeMutableRawPointer?, _ length: Int,
                              _ tos: UInt8, _ setDF: UInt8) -> Int32 {
    guard let buffer else { return 0 }
    SCTPStack.shared.output(address: UInt(bitPattern: address), buffer, length: length)
    return 0
}

/// What an ``SCTPAssociation`` reports from the packets and timers it ran.
enum SCTPEvent {
    /// The association is up, with this many streams each way.
    case up(outboundStreams: UInt16, inboundStreams: UInt16)
    /// A whole message: its stream, payload protocol and bytes (lent for the call).
    case message(stream: UInt16, ppid: UInt32, UnsafeRawBufferPointer)
    /// The peer reset its outgoing side of `stream` (incoming here), or ours finished resetting.
    case streamReset(stream: UInt16, incoming: Bool)
    /// The association ended (lost, shut down or aborted), or could not start.
    case down
}

/// One SCTP association on an AF_CONN socket of usrsctp's, carried by its owner: packets from
/// the peer go to ``receive(packet:)``, packets to the peer leave through `send` (called on the
/// owner's thread, from inside this type's methods only), and ``advance(to:)`` runs the timers.
///
/// Threading: one owner; not sendable.
final class SCTPAssociation {
    /// The stream count asked for each way.
    static let streams: UInt16 = 1024
    /// Outbound packets held between usrsctp and the owner.
    static let ringCapacity = 256

    let localPort: UInt16
    let remotePort: UInt16
    /// The largest message received whole; a longer one is dropped (counted).
    let maxMessageSize: Int
    /// The largest packet `send` takes (one DTLS record's payload).
    let maximumPacket: Int
    /// The path MTU usrsctp is given: below ``maximumPacket`` by a margin, as usrsctp's
    /// fragmentation overshoots its MTU by a few bytes (a 1163-byte MTU gave 1172-byte packets).
    let mtu: Int
    var onEvent: (SCTPEvent) -> Void = { _ in }
    /// Messages dropped as longer than ``maxMessageSize``.
    private(set) var messagesTooLarge = 0
    /// Packets `send` refused.
    private(set) var sendFailures = 0

    private let address: UInt
    private let ring: DatagramQueue
    private var socket: OpaquePointer?
    private let send: (UnsafeRawBufferPointer) -> Bool
    private let packet: UnsafeMutableRawBufferPointer
    /// A message being read: `filled` bytes so far, or discarding the rest of one too long.
    private let message: UnsafeMutableRawBufferPointer
    private var filled = 0
    private var discarding = false
    private static let notificationRoom = 4096

    /// An association to the peer's `remotePort` from `localPort`, packets of at most
    /// `maximumPacket` bytes (at least 576) leaving through `send`. Call ``connect()`` to start it.
    init(localPort: UInt16, remotePort: UInt16, maximumPacket: Int, maxMessageSize: Int,
         send: @escaping (UnsafeRawBufferPointer) -> Bool) throws(Errno) {
        guard maximumPacket >= 576 else { throw Errno(rawValue: EINVAL) }
        self.localPort = localPort
        self.remotePort = remotePort
        self.maximumPacket = maximumPacket
        mtu = (maximumPacket - 32) & ~15
        self.maxMessageSize = maxMessageSize
        self.send = send
        ring = DatagramQueue(capacity: SCTPAssociation.ringCapacity, slotSize: maximumPacket)
        address = SCTPStack.shared.register(ring)
        packet = .allocate(byteCount: maximumPacket, alignment: 16)
        message = .allocate(byteCount: maxMessageSize + SCTPAssociation.notificationRoom, alignment: 16)
        var s: OpaquePointer?
        let err = parley_sctp_open(&s, SCTPAssociation.streams, UInt32(mtu))
        guard err == 0, let s else {
            SCTPStack.shared.deregister(address)
            packet.deallocate()
            message.deallocate()
            throw Errno(rawValue: err)
        }
        socket = s
    }

    deinit {
        close()
        packet.deallocate()
        message.deallocate()
    }

    /// Sends the INIT (both ends do, RFC 8841 section 5).
    func connect() throws(Errno) {
        guard let socket else { throw Errno(rawValue: EBADF) }
        let err = parley_sctp_connect(socket, UnsafeMutableRawPointer(bitPattern: address), localPort, remotePort, UInt32(mtu))
        flush()
        guard err == 0 else { throw Errno(rawValue: err) }
    }

    /// One SCTP packet from the peer (a DTLS record's payload).
    func receive(packet bytes: UnsafeRawBufferPointer) {
        guard socket != nil, let base = bytes.baseAddress, !bytes.isEmpty else { return }
        usrsctp_conninput(UnsafeMutableRawPointer(bitPattern: address), base, bytes.count, 0)
        read()
        flush()
    }

    /// Runs usrsctp's timers up to `now` (retransmissions, delayed acknowledgements,
    /// heartbeats) and sends what they wrote.
    func advance(to now: MonotonicTime) {
        SCTPStack.shared.advanceTimers(to: now)
        guard socket != nil else { return }
        read()
        flush()
    }

    /// Sends one message; `policy` is SCTP's PR-SCTP policy (none, retransmissions, lifetime).
    /// - Throws: the errno usrsctp gave (`EAGAIN`: the send buffer is full).
    func send(stream: UInt16, ppid: UInt32, unordered: Bool, reliability: DataChannelReliability,
              _ bytes: UnsafeRawBufferPointer) throws(Errno) {
        guard let socket else { throw Errno(rawValue: ENOTCONN) }
        let policy: UInt16, value: UInt32
        switch reliability {
        case .reliable: (policy, value) = (UInt16(SCTP_PR_SCTP_NONE), 0)
        case .maxRetransmits(let n): (policy, value) = (UInt16(SCTP_PR_SCTP_RTX), n)
        case .maxLifetime(let ms): (policy, value) = (UInt16(SCTP_PR_SCTP_TTL), ms)
        }
        let n = parley_sctp_send(socket, bytes.baseAddress, bytes.count, stream, ppid, unordered ? 1 : 0, policy, value)
        flush()
        if n < 0 { throw Errno(rawValue: Int32(-n)) }
    }

    /// Resets the outgoing side of `stream`.
    func resetOutgoing(stream: UInt16) throws(Errno) {
        guard let socket else { throw Errno(rawValue: ENOTCONN) }
        let err = parley_sctp_reset_outgoing(socket, stream)
        flush()
        if err != 0 { throw Errno(rawValue: err) }
    }

    /// Packets usrsctp wrote that the ring had no room for.
    var packetsDropped: Int { ring.drops.full + ring.drops.oversized }

    /// Aborts the association and closes the socket. Idempotent.
    func close() {
        guard let socket else { return }
        usrsctp_close(socket)   // SO_LINGER 0: an ABORT, nothing lingers
        self.socket = nil
        flush()
        SCTPStack.shared.deregister(address)
    }

    /// Sends what usrsctp wrote for this association.
    private func flush() {
        while let n = ring.pop(into: packet)?.length {
            if !send(UnsafeRawBufferPointer(rebasing: packet[0..<n])) { sendFailures += 1 }
        }
    }

    /// Reads every message and notification the socket has.
    private func read() {
        while let socket {
            var sid: UInt16 = 0, ppid: UInt32 = 0
            var end: Int32 = 0, notification: Int32 = 0, error: Int32 = 0
            let room = discarding ? message.count : maxMessageSize - filled
            let start = discarding ? 0 : filled
            let n = parley_sctp_receive(socket, message.baseAddress! + start, room + (discarding ? 0 : SCTPAssociation.notificationRoom),
                                        &sid, &ppid, &end, &notification, &error)
            guard n >= 0 else { return }
            if n == 0 && end == 0 && notification == 0 {
                onEvent(.down)
                return
            }
            if notification != 0 {
                notify(UnsafeRawBufferPointer(rebasing: message[start..<(start + n)]))
                continue
            }
            if discarding {
                if end != 0 { discarding = false }
                continue
            }
            filled += n
            if filled > maxMessageSize {
                messagesTooLarge += 1
                filled = 0
                discarding = end == 0
                continue
            }
            guard end != 0 else { continue }
            let length = filled
            filled = 0
            onEvent(.message(stream: sid, ppid: ppid, UnsafeRawBufferPointer(rebasing: message[0..<length])))
        }
    }

    /// An SCTP notification (RFC 6458 section 6.1), read from its bytes.
    private func notify(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= 8 else { return }
        let type = Int32(bytes.loadUnaligned(fromByteOffset: 0, as: UInt16.self))
        let flags = Int32(bytes.loadUnaligned(fromByteOffset: 2, as: UInt16.self))
        let length = min(bytes.count, Int(bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        switch type {
        case Int32(SCTP_ASSOC_CHANGE):
            guard length >= 16 else { return }
            switch Int32(bytes.loadUnaligned(fromByteOffset: 8, as: UInt16.self)) {
            case Int32(SCTP_COMM_UP), Int32(SCTP_RESTART):
                onEvent(.up(outboundStreams: bytes.loadUnaligned(fromByteOffset: 12, as: UInt16.self),
                            inboundStreams: bytes.loadUnaligned(fromByteOffset: 14, as: UInt16.self)))
            case Int32(SCTP_COMM_LOST), Int32(SCTP_SHUTDOWN_COMP), Int32(SCTP_CANT_STR_ASSOC):
                onEvent(.down)
            default: break
            }
        case Int32(SCTP_STREAM_RESET_EVENT):
            guard flags & Int32(SCTP_STREAM_RESET_DENIED | SCTP_STREAM_RESET_FAILED) == 0 else { return }
            let incoming = flags & Int32(SCTP_STREAM_RESET_INCOMING_SSN) != 0
            var offset = 12
            while offset + 2 <= length {
                onEvent(.streamReset(stream: bytes.loadUnaligned(fromByteOffset: offset, as: UInt16.self), incoming: incoming))
                offset += 2
            }
        default:
            break
        }
    }
}
