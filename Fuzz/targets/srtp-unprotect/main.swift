// libFuzzer target: SRTP and SRTCP unprotect (libsrtp2 behind SRTPContext's header checks).
// Input: one selector byte (suite, RTP or RTCP), then the packet.
// Properties: unprotect throws or returns a length shorter than the packet; a packet that
// protects under the same key unprotects back to itself.

private let keyBytes = (0..<44).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }

private final class Receiver {
    let key: SRTPKey
    var inbound: SRTPContext
    init(_ suite: SRTPSuite) {
        key = try! SRTPKey(suite: suite, material: Array(keyBytes.prefix(suite.keyMaterialLength)))
        inbound = try! SRTPContext(key: key, direction: .inbound)
    }
}

nonisolated(unsafe) private let receivers = SRTPSuite.allCases.map { Receiver($0) }
nonisolated(unsafe) private var buffer = [UInt8](repeating: 0, count: 70_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1, size - 1 + SRTPContext.trailerRoom <= buffer.count else { return 0 }
    let selector = Int(data[0])
    let receiver = receivers[selector % receivers.count]
    let rtcp = selector & 0x80 != 0
    let packet = UnsafeBufferPointer(start: data + 1, count: size - 1)
    buffer.withUnsafeMutableBytes { raw in
        // As received: never trusted, never trapping.
        UnsafeMutableRawBufferPointer(rebasing: raw[0..<packet.count]).copyMemory(from: UnsafeRawBufferPointer(packet))
        if let n = try? (rtcp ? receiver.inbound.unprotectRTCP(raw, length: packet.count)
                              : receiver.inbound.unprotectRTP(raw, length: packet.count)) {
            precondition(n >= 0 && n < packet.count, "unprotect grew the packet")
        }
        // As sent: protect, then unprotect, with fresh contexts, gives the bytes back.
        UnsafeMutableRawBufferPointer(rebasing: raw[0..<packet.count]).copyMemory(from: UnsafeRawBufferPointer(packet))
        var tx = try! SRTPContext(key: receiver.key, direction: .outbound)
        guard let p = try? (rtcp ? tx.protectRTCP(raw, length: packet.count) : tx.protectRTP(raw, length: packet.count)) else { return }
        var rx = try! SRTPContext(key: receiver.key, direction: .inbound)
        let u: Int
        do { u = try rtcp ? rx.unprotectRTCP(raw, length: p) : rx.unprotectRTP(raw, length: p) } catch {
            preconditionFailure("a packet Parley protected does not unprotect: \(error)")
        }
        precondition(u == packet.count && raw.prefix(u).elementsEqual(UnsafeRawBufferPointer(packet)), "round trip changed the packet")
    }
    return 0
}
