// libFuzzer target: payload formats: the Opus TOC duration (RFC 7587/6716), the VP8 payload
// descriptor (RFC 7741), VP8 frame header and VP9 payload descriptor (RFC 9628). Properties: a
// parsed VP8 descriptor rewrites to the same fields; durations stay within 120 ms; a VP9
// descriptor lies within the payload.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let samples = try? OpusRTP.samples48k(bytes) {
        precondition(samples > 0 && samples <= OpusRTP.maxSamplesPerPacket)
    }
    if let d = try? VP8PayloadDescriptor(parsing: bytes) {
        let n = d.marshalSize
        precondition(n < size)
        var out = [UInt8](repeating: 0, count: n)
        let w = out.withUnsafeMutableBytes { try? d.marshal(into: $0) }
        precondition(w == n)
        // Reserved bits aside, the rewritten descriptor parses to the same fields.
        var padded = out
        padded.append(0)
        let back = padded.withUnsafeBytes { try? VP8PayloadDescriptor(parsing: $0) }
        precondition(back == d)
        if d.isFrameStart {
            _ = try? VP8FrameHeader(parsing: UnsafeRawBufferPointer(rebasing: bytes[n...]))
        }
    }
    _ = try? VP8FrameHeader(parsing: bytes)
    if let d = try? VP9PayloadDescriptor(parsing: bytes) {
        precondition(d.size <= size && d.referenceDiffs.count <= 3)
    }
    return 0
}
