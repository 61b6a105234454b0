// libFuzzer target: AudioFileReader's FFmpeg backend (demuxer probing, container parsing,
// decoding, conversion) on arbitrary bytes must throw a MediaFileError or decode, never crash.
// The bytes go in through a file (unlinked, rewritten for each input), as a recording on disk
// would.
#if canImport(Glibc)
import Glibc
#endif

/// The scratch file every input is written to.
private let scratch: Int32 = {
    var template = Array("/tmp/parley-fuzz-ffmpeg-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    if fd < 0 { fatalError("cannot create a scratch file") }
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    return fd
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFFmpegAudio(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let fd = scratch
    if ftruncate(fd, 0) != 0 { return 0 }
    var written = 0
    while written < size {
        let n = pwrite(fd, data + written, size - written, off_t(written))
        if n <= 0 { return 0 }
        written += n
    }
    // Every audio track, each decoded to its end (or its error).
    let tracks = (try? FFmpegAudioDecoder.tracks(fileDescriptor: fd, name: "fuzz")) ?? []
    for k in -1..<min(tracks.count, 4) {
        let copy = dup(fd)
        if copy < 0 { break }
        guard let decoder = try? FFmpegAudioDecoder(ownedDescriptor: copy, name: "fuzz",
                                                     audioTrack: k < 0 ? nil : k) else { continue }
        var buffer = [Float](repeating: 0, count: decoder.channels * 331)
        var frames = 0
        while frames < 10_000_000,
              let n = try? buffer.withUnsafeMutableBufferPointer({ try decoder.read(into: $0) }), n > 0 {
            frames += n
        }
    }
    return 0
}
