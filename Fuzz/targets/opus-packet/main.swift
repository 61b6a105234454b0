// libFuzzer target: the Opus packet inspector (RFC 6716 §3 framing: TOC, frame-count byte,
// padding, frame lengths), which parses untrusted RTP payloads for the jitter buffer.
// Properties: parsing never traps; an accepted packet's parts add up to its length exactly,
// every frame fits the limits, and the duration is at most 120 ms.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var sizes = [Int](repeating: -1, count: 48)
    let parsed: OpusPacketInfo? = sizes.withUnsafeMutableBufferPointer { b in
        try? OpusPacketInfo(parsing: bytes, frameSizes: b)
    }
    guard let info = parsed else { return 0 }
    precondition((1...48).contains(info.frameCount))
    let frames = sizes.prefix(info.frameCount)
    precondition(frames.allSatisfy { (0...OpusPacketInfo.maxFrameBytes).contains($0) })
    precondition(info.payloadOffset + frames.reduce(0, +) + info.paddingLength == size)
    precondition(info.totalSamplesAt48k <= OpusPacketInfo.maxSamplesAt48k)
    precondition(info.durationMicroseconds % 2500 == 0 && info.channels >= 1 && info.channels <= 2)
    precondition(info.hasVariableFrameSizes || Set(frames).count == 1)
    _ = info.bandwidth.passbandHz + info.samples(atSampleRate: 8000)
    return 0
}
