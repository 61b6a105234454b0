import CSRTP
import ParleyRTP
import ParleySRTP

// The srtp suite: a send and a receive of one Opus RTP packet (12-byte header, the RFC 6464
// audio-level element, 80-byte payload), per packet. Baseline `srtp/plain`: serialise, then
// parse, as the pipelines do without SRTP. The `srtp/libsrtp-SUITE` rows add libsrtp2's
// srtp_protect after the serialise and its srtp_unprotect before the parse, called directly, in
// the same buffer; the `srtp/protect-unprotect-SUITE` rows do the same through SRTPContext with
// the same key and policy, and have the libsrtp row of their suite as baseline, so their ratio is
// the wrapper's cost. Each packet has a new sequence number, so the receive side's replay check
// runs as in a call.

/// Packets per timed sample.
private let srtpIterations = 100_000

/// One direction of SRTP each way, kept in a class so the benchmark closures can share it.
private final class SRTPPair {
    var outbound: SRTPContext
    var inbound: SRTPContext
    init(_ key: SRTPKey) {
        outbound = try! SRTPContext(key: key, direction: .outbound)
        inbound = try! SRTPContext(key: key, direction: .inbound)
    }
}

/// The same two directions as libsrtp2 sessions made through its C API, with the policy
/// SRTPContext gives libsrtp for the suite (any SSRC, a 1024-packet replay window). Made after
/// an SRTPContext, which has run libsrtp's one-time srtp_init (a second call fails).
private final class DirectSRTPPair {
    let outbound: srtp_t
    let inbound: srtp_t
    init(_ key: SRTPKey, _ setPolicy: (UnsafeMutablePointer<srtp_crypto_policy_t>) -> Void) {
        func session(_ ssrcType: srtp_ssrc_type_t) -> srtp_t {
            var policy = srtp_policy_t()
            setPolicy(&policy.rtp)
            setPolicy(&policy.rtcp)
            policy.ssrc.type = ssrcType
            policy.window_size = 1024
            var material = key.material
            var created: srtp_t?
            let status = material.withUnsafeMutableBufferPointer { bytes in
                policy.key = bytes.baseAddress
                return srtp_create(&created, &policy)
            }
            precondition(status == srtp_err_status_ok, "srtp_create failed: \(status.rawValue)")
            return created!
        }
        outbound = session(ssrc_any_outbound)
        inbound = session(ssrc_any_inbound)
    }
    deinit {
        srtp_dealloc(outbound)
        srtp_dealloc(inbound)
    }
}

/// Serialises packet `i`, passes it through `secure` (protect, then unprotect, in place), and
/// parses it; returns a checksum of what the parser read.
@inline(__always)
private func roundTrip(_ i: Int, header: inout RTPHeader, payload: UnsafeRawBufferPointer, buffer: UnsafeMutableRawBufferPointer,
                       _ secure: (Int) -> Int) -> UInt64 {
    header.sequenceNumber = UInt16(truncatingIfNeeded: i)
    header.timestamp = UInt32(truncatingIfNeeded: i &* 960)
    header.extensions[0].bytes[0] = 0x80 | UInt8(i & 127)
    guard let n = try? header.marshal(payload: payload, into: buffer) else { return 0 }
    let m = secure(n)
    guard m > 0, let v = try? RTPPacketView(parsing: UnsafeRawBufferPointer(rebasing: buffer[0..<m])) else { return 0 }
    return UInt64(v.sequenceNumber) &+ UInt64(v.payload.count) &+ UInt64(v.payload[3])
}

/// Benchmarks for the srtp suite.
func srtpBenchmarks() -> [Benchmark] {
    let payloadBytes = (0..<80).map { UInt8(truncatingIfNeeded: $0 &* 13) }
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: RTPLimits.maximumDatagramSize + SRTPContext.trailerRoom,
                                                        alignment: 16)
    // Sequence numbers keep advancing across samples (the rollover counter follows the wraps),
    // as in a long call: a replayed number would fail and skip the work.
    final class Sequence { var next = 0 }
    func row(_ name: String, baseline: String?, _ secure: @escaping (UnsafeMutableRawBufferPointer, Int) -> Int) -> Benchmark {
        let sequence = Sequence()
        return Benchmark(name: name, unit: .nsPerPacket, baseline: baseline, iterations: srtpIterations) {
            var header = RTPHeader(payloadType: 111, sequenceNumber: 0, timestamp: 0, ssrc: 0x1234_5678,
                                   extensions: [RTPHeaderExtension(id: 1, bytes: [0])])
            var sum: UInt64 = 0
            let first = sequence.next
            payloadBytes.withUnsafeBytes { payload in
                for i in first..<(first + srtpIterations) {
                    sum &+= roundTrip(i, header: &header, payload: payload, buffer: buffer) { n in secure(buffer, n) }
                }
            }
            sequence.next = first + srtpIterations
            return sum
        }
    }
    var rows = [row("srtp/plain", baseline: nil) { _, n in n }]
    let suites: [(SRTPSuite, String, (UnsafeMutablePointer<srtp_crypto_policy_t>) -> Void)] = [
        (.aesCM128HMACSHA1_80, "aes-cm-128-hmac-sha1-80", { parley_srtp_policy_aes_cm_128_hmac_sha1_80($0) }),
        (.aeadAES128GCM, "aead-aes-128-gcm", { srtp_crypto_policy_set_aes_gcm_128_16_auth($0) }),
        (.aeadAES256GCM, "aead-aes-256-gcm", { srtp_crypto_policy_set_aes_gcm_256_16_auth($0) }),
    ]
    for (suite, label, setPolicy) in suites {
        let key = try! SRTPKey.generate(suite: suite)
        let pair = SRTPPair(key)  // first: it initialises libsrtp
        let direct = DirectSRTPPair(key, setPolicy)
        let directName = "srtp/libsrtp-\(label)"
        rows.append(row(directName, baseline: "srtp/plain") { raw, n in
            var length = Int32(n)
            guard srtp_protect(direct.outbound, raw.baseAddress, &length) == srtp_err_status_ok,
                  srtp_unprotect(direct.inbound, raw.baseAddress, &length) == srtp_err_status_ok else { return 0 }
            return Int(length)
        })
        rows.append(row("srtp/protect-unprotect-\(label)", baseline: directName) { raw, n in
            guard let p = try? pair.outbound.protectRTP(raw, length: n),
                  let u = try? pair.inbound.unprotectRTP(raw, length: p) else { return 0 }
            return u
        })
    }
    return rows
}
