// libFuzzer target: the VP8/VP9 frame-header inspector (keyframe flag and size, read without
// decoding from untrusted RTP payloads). Each input is parsed as VP8 and as VP9.
// Properties: parsing never traps; a keyframe has a positive size, other frames none.

@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    for codec in VPXCodec.allCases {
        guard let info = try? VPXFrameInfo(parsing: bytes, codec: codec) else { continue }
        precondition(info.codec == codec && (0...3).contains(info.profile))
        if info.isKeyframe {
            precondition(info.width > 0 && info.height > 0 && size >= 10 - (codec == .vp9 ? 2 : 0))
        } else {
            precondition(info.width == 0 && info.height == 0)
        }
    }
    return 0
}
