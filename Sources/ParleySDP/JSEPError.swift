// Why a WebRTC session description, or a value in it, was refused.

/// Why a WebRTC session description was refused.
public enum JSEPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The text is not valid SDP.
    case malformed(SDPError)
    /// A media section lacks what WebRTC requires (`a=mid`, ICE credentials, a fingerprint,
    /// `a=setup`), or has it in a form that cannot be read; `field` names it.
    case missing(mid: String?, field: String)
    /// A value that cannot be used: `field` and why.
    case invalid(mid: String?, field: String, reason: String)

    public var description: String {
        switch self {
        case .malformed(let e): "\(e)"
        case .missing(let mid, let field): "\(Self.place(mid))has no \(field)"
        case .invalid(let mid, let field, let reason): "\(Self.place(mid))\(field): \(reason)"
        }
    }

    private static func place(_ mid: String?) -> String { mid.map { "m= section mid \($0) " } ?? "the description " }
}
