// ParleyRTP module. See README.md for the module map.
@_exported import ParleyCore

/// Sizes that every RTP sender and receiver in Parley shares.
public enum RTPLimits {
    /// The largest datagram Parley sends or accepts, in bytes: the 1500-byte Ethernet MTU.
    /// Receive buffers have this size; a longer datagram is dropped (and counted) as
    /// oversized. Payloaders keep packets well below it (see
    /// ``VP8Packetizer/init(maxPayloadSize:pictureID:)`` and the Opus frame sizes).
    public static let maximumDatagramSize = 1500
}
