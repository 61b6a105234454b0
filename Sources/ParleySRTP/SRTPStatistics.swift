// Counting SRTP's work and its drops by reason, for datagrams that may be RTP or RTCP.

import ParleyRTP

/// Counters of SRTP protection and unprotection, with drops by reason.
public struct SRTPStatistics: Sendable, Hashable {
    /// RTP and RTCP datagrams protected and handed to the transport.
    public var protected = 0
    /// Datagrams that could not be protected (malformed or too large), not sent.
    public var protectFailures = 0
    /// Datagrams received that verified and were passed on.
    public var unprotected = 0
    /// Received datagrams dropped because their tag did not verify (tampered, or the wrong key).
    public var droppedAuthentication = 0
    /// Received datagrams dropped as replays (or older than the replay window).
    public var droppedReplay = 0
    /// Received datagrams dropped as malformed (too short for a header and tag, not version 2,
    /// or larger than the buffer).
    public var droppedMalformed = 0
    /// Received datagrams dropped for another libsrtp failure.
    public var droppedOther = 0

    /// Every received datagram dropped.
    public var dropped: Int { droppedAuthentication + droppedReplay + droppedMalformed + droppedOther }

    public init() {}
}

extension SRTPContext {
    /// Protects the RTP or RTCP datagram in `buffer[0..<length]` in place (told apart by
    /// `RTPMultiplexing/isRTCP(_:length:)`, RFC 5761 4); returns its new length, or nil (counted as a protect failure).
    public mutating func protect(_ buffer: UnsafeMutableRawBufferPointer, length: Int,
                                 counting statistics: inout SRTPStatistics) -> Int? {
        let rtcp = RTPMultiplexing.isRTCP(buffer, length: length)
        guard let n = try? rtcp ? protectRTCP(buffer, length: length) : protectRTP(buffer, length: length) else {
            statistics.protectFailures += 1
            return nil
        }
        statistics.protected += 1
        return n
    }

    /// Verifies and decrypts the SRTP or SRTCP datagram in `buffer[0..<length]` in place;
    /// returns the plain length, or nil when it must be dropped (counted by reason).
    public mutating func unprotect(_ buffer: UnsafeMutableRawBufferPointer, length: Int,
                                   counting statistics: inout SRTPStatistics) -> Int? {
        do throws(SRTPError) {
            let n = RTPMultiplexing.isRTCP(buffer, length: length) ? try unprotectRTCP(buffer, length: length)
                : try unprotectRTP(buffer, length: length)
            statistics.unprotected += 1
            return n
        } catch {
            switch error {
            case .authenticationFailed: statistics.droppedAuthentication += 1
            case .replayed: statistics.droppedReplay += 1
            case .malformedPacket: statistics.droppedMalformed += 1
            default: statistics.droppedOther += 1
            }
            return nil
        }
    }
}
