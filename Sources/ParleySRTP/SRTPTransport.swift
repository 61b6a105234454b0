// SRTP over any transport: protects what is sent, verifies and decrypts what arrives, and drops
// (and counts) every packet that fails before a parser sees it.

import ParleyNetwork
import ParleyRTP

/// Wraps a `PacketTransport` with SRTP and SRTCP (RFC 3711): datagrams given to ``send(_:at:)``
/// are protected with the send key, and only datagrams that verify under the receive key reach
/// ``receive(until:_:)``'s body, decrypted. RTP and RTCP share the transport and are told apart
/// by `RTPMultiplexing/isRTCP(_:)` (RFC 5761 4).
///
/// Nothing is allocated per datagram: one scratch buffer of ``maximumDatagram`` bytes plus
/// libsrtp's trailer room is reused.
///
/// Threading: one owner (the call's scheduler thread), as for the wrapped transport.
public final class SRTPTransport<Base: PacketTransport & ~Copyable>: PacketTransport {
    /// The wrapped transport.
    public var base: Base
    /// Counters, drops by reason.
    public private(set) var statistics = SRTPStatistics()
    /// Largest datagram accepted, bytes (before protection on send, as received on receive).
    public let maximumDatagram: Int
    private var outbound: SRTPContext
    private var inbound: SRTPContext
    private let scratch: UnsafeMutableRawBufferPointer

    /// Wraps `base`. `sendKey` protects what this side sends; `receiveKey` (the peer's send
    /// key) verifies what arrives. Each key may have its own suite. `allowRetransmission` lets
    /// the same packet be sent again (a `VideoSendPipeline` answering a NACK with a plain
    /// resend); without it libsrtp refuses a repeated index and the resend is counted as a
    /// protect failure.
    /// - Throws: `SRTPError` if libsrtp cannot set up a context.
    public init(_ base: consuming Base, sendKey: SRTPKey, receiveKey: SRTPKey, replayWindow: Int = 1024,
                maximumDatagram: Int = RTPLimits.maximumDatagramSize, allowRetransmission: Bool = false) throws(SRTPError) {
        outbound = try SRTPContext(key: sendKey, direction: .outbound, allowRetransmission: allowRetransmission)
        inbound = try SRTPContext(key: receiveKey, direction: .inbound, replayWindow: replayWindow)
        self.maximumDatagram = max(maximumDatagram, 64)
        scratch = .allocate(byteCount: self.maximumDatagram + SRTPContext.trailerRoom, alignment: 16)
        self.base = base
    }

    deinit { scratch.deallocate() }

    public func send(_ bytes: UnsafeRawBufferPointer, at time: MonotonicTime) -> Bool {
        guard bytes.count <= maximumDatagram else { statistics.protectFailures += 1; return false }
        UnsafeMutableRawBufferPointer(rebasing: scratch[0..<bytes.count]).copyMemory(from: bytes)
        guard let n = outbound.protect(scratch, length: bytes.count, counting: &statistics) else { return false }
        return base.send(UnsafeRawBufferPointer(rebasing: scratch[0..<n]), at: time)
    }

    public func receive(until time: MonotonicTime, _ body: (UnsafeRawBufferPointer, MonotonicTime) -> Void) {
        base.receive(until: time) { bytes, arrival in
            guard bytes.count <= maximumDatagram else { statistics.droppedMalformed += 1; return }
            UnsafeMutableRawBufferPointer(rebasing: scratch[0..<bytes.count]).copyMemory(from: bytes)
            guard let n = inbound.unprotect(scratch, length: bytes.count, counting: &statistics) else { return }
            body(UnsafeRawBufferPointer(rebasing: scratch[0..<n]), arrival)
        }
    }

    public var inFlight: Int { base.inFlight }
}

extension SRTPTransport: WaitablePacketTransport where Base: WaitablePacketTransport & ~Copyable {
    public func waitForDatagram(timeoutMilliseconds: Int32) -> Bool { base.waitForDatagram(timeoutMilliseconds: timeoutMilliseconds) }
}
