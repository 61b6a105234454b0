// ICE credentials as SDP carries them (RFC 8839), shared by the SDP layer and the ICE agent.

/// An ICE agent's username fragment and password (SDP `a=ice-ufrag` and `a=ice-pwd`, RFC 8839
/// §5.4): the fragment is 4 to 256 characters and the password 22 to 256, of `A-Z a-z 0-9 + /`.
///
/// The password is a secret: `description`, `debugDescription` and reflection (`dump`) show it
/// as `<redacted>`; only ``password`` itself gives it.
///
/// Threading: a value type; freely sendable.
public struct ICECredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable {
    /// The username fragment (public: it goes in the SDP and in every check).
    public let usernameFragment: String
    /// The password (secret: it keys the checks' MESSAGE-INTEGRITY).
    public let password: String

    /// Credentials from their two strings.
    /// - Throws: ``JSEPError/invalid(mid:field:reason:)`` naming `a=ice-ufrag` or `a=ice-pwd` when
    ///   either is out of its length or holds a character other than `A-Z a-z 0-9 + /`.
    public init(usernameFragment: String, password: String) throws(JSEPError) {
        try Self.check(usernameFragment: usernameFragment, password: password, mid: nil)
        self.usernameFragment = usernameFragment
        self.password = password
    }

    /// Credentials as read or made, checked later (``check(usernameFragment:password:mid:)``).
    package init(unchecked usernameFragment: String, password: String) {
        self.usernameFragment = usernameFragment
        self.password = password
    }

    public var description: String { "ICECredentials(usernameFragment: \(usernameFragment), password: <redacted>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["usernameFragment": usernameFragment, "password": "<redacted>"])
    }

    /// New credentials from the system's random source: a 4-character fragment and a
    /// 24-character password.
    public static func random() -> ICECredentials {
        var rng = SystemRandomNumberGenerator()
        let chars = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        func token(_ n: Int) -> String { String((0..<n).map { _ in chars[Int(rng.next() % UInt64(chars.count))] }) }
        return ICECredentials(unchecked: token(4), password: token(24))
    }

    /// Checks RFC 8839's grammar; `mid` names the section in the error.
    static func check(usernameFragment: String, password: String, mid: String?) throws(JSEPError) {
        guard isICEChars(usernameFragment, 4...256) else {
            throw .invalid(mid: mid, field: "a=ice-ufrag", reason: "not 4-256 ICE characters")
        }
        guard isICEChars(password, 22...256) else { throw .invalid(mid: mid, field: "a=ice-pwd", reason: "not 22-256 ICE characters") }
    }

    private static func isICEChars(_ s: String, _ lengths: ClosedRange<Int>) -> Bool {
        lengths.contains(s.utf8.count) && s.utf8.allSatisfy {
            ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z"))
                || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "/")
        }
    }
}
