// SDES keying (RFC 4568): an SRTP key from and to an SDP `a=crypto:` line.

import ParleySDP

extension SRTPKey {
    /// The key an `a=crypto:` line offers: its suite and its first `inline:` key.
    /// - Throws: ``SRTPError/unknownSuite(_:)`` or ``SRTPError/malformedKey`` (and a key of the
    ///   wrong length for the suite), never showing the key.
    public init(_ crypto: SDPCrypto) throws(SRTPError) {
        try self.init(suite: SRTPSuite(name: crypto.suite), base64: crypto.key)
    }

    /// The `a=crypto:` offer of this key (tag 1). It holds the secret: write it only into the
    /// SDP given to the peer.
    public var sdpCrypto: SDPCrypto { SDPCrypto(suite: suite.rawValue, key: base64) }
}
