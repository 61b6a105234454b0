import COpus

/// The typed `opus_*_ctl` shims of COpus, called on the state of a live ``OpusEncoder`` or
/// ``OpusDecoder``. libopus fails these requests only on a corrupt state, which no caller's
/// value can cause, so a failure is a precondition failure.
enum OpusControl {
    /// Reads an integer setting or statistic with `request` (named `name` in a failure).
    static func get(_ state: OpaquePointer, _ request: (OpaquePointer, UnsafeMutablePointer<opus_int32>) -> Int32,
                    _ name: StaticString) -> Int {
        var v: opus_int32 = 0
        let r = request(state, &v)
        precondition(r == OPUS_OK, "\(name) failed: \(String(cString: opus_strerror(r)))")
        return Int(v)
    }

    /// The range coder's final state after the last packet (`OPUS_GET_FINAL_RANGE`).
    static func finalRange(_ state: OpaquePointer,
                           _ request: (OpaquePointer, UnsafeMutablePointer<opus_uint32>) -> Int32) -> UInt32 {
        var v: opus_uint32 = 0
        let r = request(state, &v)
        precondition(r == OPUS_OK, "OPUS_GET_FINAL_RANGE failed")
        return v
    }

    /// Resets the state as if freshly created (`OPUS_RESET_STATE`).
    static func reset(_ state: OpaquePointer, _ request: (OpaquePointer) -> Int32) {
        let r = request(state)
        precondition(r == OPUS_OK, "OPUS_RESET_STATE failed")
    }
}
