// The FFmpeg backend of AudioFileReader: the audio of any container and codec Debian's FFmpeg
// reads (MP4/M4A with AAC, WebM/Matroska with Opus or Vorbis, the audio of video files, ...).
// Only CFFmpeg, Glibc and MediaFileError: compiled standalone by the `ffmpeg-audio` fuzz target.
import CFFmpeg
#if canImport(ParleyCore)
import ParleyCore
#endif
#if canImport(Glibc)
import Glibc
#endif

// FFmpeg's entry points under its own names, resolved from its libraries, which are loaded the
// first time a file needs them (`parley_ffmpeg_load` in `Opened`, before any of these is used):
// a process that reads no such file does not map FFmpeg at all.
private let av_channel_layout_copy = parley_ff_av_channel_layout_copy()
private let av_channel_layout_default = parley_ff_av_channel_layout_default()
private let av_channel_layout_uninit = parley_ff_av_channel_layout_uninit()
private let av_dict_get = parley_ff_av_dict_get()
private let av_frame_alloc = parley_ff_av_frame_alloc()
private let av_frame_free = parley_ff_av_frame_free()
private let av_frame_unref = parley_ff_av_frame_unref()
private let av_free = parley_ff_av_free()
private let av_malloc = parley_ff_av_malloc()
private let swr_alloc_set_opts2 = parley_ff_swr_alloc_set_opts2()
private let swr_convert = parley_ff_swr_convert()
private let swr_free = parley_ff_swr_free()
private let swr_init = parley_ff_swr_init()
private let av_packet_alloc = parley_ff_av_packet_alloc()
private let av_packet_free = parley_ff_av_packet_free()
private let av_packet_unref = parley_ff_av_packet_unref()
private let avcodec_alloc_context3 = parley_ff_avcodec_alloc_context3()
private let avcodec_find_decoder = parley_ff_avcodec_find_decoder()
private let avcodec_free_context = parley_ff_avcodec_free_context()
private let avcodec_get_name = parley_ff_avcodec_get_name()
private let avcodec_open2 = parley_ff_avcodec_open2()
private let avcodec_parameters_to_context = parley_ff_avcodec_parameters_to_context()
private let avcodec_receive_frame = parley_ff_avcodec_receive_frame()
private let avcodec_send_packet = parley_ff_avcodec_send_packet()
private let av_find_best_stream = parley_ff_av_find_best_stream()
private let av_read_frame = parley_ff_av_read_frame()
private let avformat_alloc_context = parley_ff_avformat_alloc_context()
private let avformat_close_input = parley_ff_avformat_close_input()
private let avformat_find_stream_info = parley_ff_avformat_find_stream_info()
private let avformat_open_input = parley_ff_avformat_open_input()
private let avio_alloc_context = parley_ff_avio_alloc_context()
private let avio_context_free = parley_ff_avio_context_free()
private let avio_seek = parley_ff_avio_seek()

/// One audio stream ("track") of a container, as FFmpeg describes it.
///
/// Threading: a value type; freely sendable.
public struct AudioTrackInfo: Sendable, Equatable {
    /// The track's position among the file's audio streams, from 0.
    public var index: Int
    /// The track's `title` metadata, when the container gives one.
    public var title: String?
    /// The track's `language` metadata (e.g. "eng"), when it gives one other than "und".
    public var language: String?
    /// FFmpeg's name of the codec, e.g. "aac", "opus".
    public var codec: String
    /// Samples per second per channel, in Hz (0 when the container does not say).
    public var sampleRate: Int
    /// Channels (0 when the container does not say).
    public var channels: Int

    public init(index: Int, title: String?, language: String?, codec: String, sampleRate: Int, channels: Int) {
        self.index = index
        self.title = title
        self.language = language
        self.codec = codec
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

/// Where FFmpeg reads from: a descriptor read with `pread` from the offset it had when opened,
/// so that the demuxer's seeks never move the caller's descriptor.
private final class FFmpegInput {
    let fd: Int32
    let base: Int64
    let size: Int64
    var position: Int64 = 0

    init(fd: Int32, base: Int64, size: Int64) {
        self.fd = fd
        self.base = base
        self.size = size
    }
}

private let inputBufferSize: Int32 = 1 << 16

private let readInput: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = {
    opaque, buffer, size in
    guard let opaque, let buffer, size > 0 else { return parley_averror_eof() }
    let input = Unmanaged<FFmpegInput>.fromOpaque(opaque).takeUnretainedValue()
    while true {
        let n = pread(input.fd, buffer, Int(size), off_t(input.base + input.position))
        if n > 0 {
            input.position += Int64(n)
            return Int32(n)
        }
        if n == 0 { return parley_averror_eof() }
        if errno != EINTR { return -errno }
    }
}

private let seekInput: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
    guard let opaque else { return parley_averror_enosys() }
    let input = Unmanaged<FFmpegInput>.fromOpaque(opaque).takeUnretainedValue()
    let length = input.size - input.base
    if whence & parley_avseek_size() != 0 { return length }
    let target: Int64
    switch whence & ~Int32(AVSEEK_FORCE) {
    case SEEK_SET: target = offset
    case SEEK_CUR: target = input.position + offset
    case SEEK_END: target = length + offset
    default: return parley_averror_enosys()
    }
    guard target >= 0 else { return -Int64(EINVAL) }
    input.position = target
    return target
}

/// FFmpeg's message for an error code.
private func ffmpegMessage(_ code: Int32) -> String {
    withUnsafeTemporaryAllocation(of: CChar.self, capacity: 256) { b in
        String(cString: parley_av_err2str(code, b.baseAddress!, 256))
    }
}

private func metadataValue(_ dictionary: OpaquePointer?, _ key: String) -> String? {
    guard let dictionary, let entry = av_dict_get(dictionary, key, nil, 0), let value = entry.pointee.value else {
        return nil
    }
    let s = String(cString: value)
    return s.isEmpty ? nil : s
}

/// Demuxes one audio stream of a container with libavformat, decodes it with libavcodec and
/// converts it with libswresample to interleaved Float at the stream's own rate and channels.
///
/// Decoding goes a frame at a time into one output buffer that grows only when a frame is
/// larger than any before, so memory stays flat over long files and a steady-state read
/// allocates nothing. Owns the descriptor it is given and closes it on release. Threading:
/// use from one thread at a time.
final class FFmpegAudioDecoder {
    /// The name that stands for the input in errors.
    let path: String
    /// Samples per second per channel, in Hz.
    let sampleRate: Int
    /// Interleaved channels.
    let channels: Int
    /// Frames the container announces for the stream (from its duration), or nil.
    let frameCount: Int?
    /// Whether ``frameCount`` comes from the container itself (not estimated from a bit rate),
    /// so that ending well short of it means the file is truncated.
    let frameCountIsExact: Bool
    /// e.g. "matroska,webm / opus".
    let formatName: String
    /// The decoded stream's description.
    let track: AudioTrackInfo

    private let input: FFmpegInput
    private let inputRetain: Unmanaged<FFmpegInput>
    private var io: UnsafeMutablePointer<AVIOContext>?
    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var resampler: OpaquePointer?
    private let packet: UnsafeMutablePointer<AVPacket>
    private let frame: UnsafeMutablePointer<AVFrame>
    private let streamIndex: Int32
    /// swr's current input: sample format and channel count of the frames it was set up for.
    private var resamplerFormat: Int32 = -1
    private var resamplerChannels: Int32 = -1
    /// Converted interleaved samples not yet delivered: `pending` frames from `pendingStart`.
    private var output: UnsafeMutablePointer<Float>
    private var outputFrames: Int
    private let outputPlane: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>
    private var pendingStart = 0
    private var pending = 0
    private var draining = false
    private var finished = false
    /// Frames delivered so far.
    private(set) var framesDecoded = 0

    /// The audio streams of the input on `fd` (which the caller keeps), in file order.
    static func tracks(fileDescriptor fd: Int32, name: String) throws(MediaFileError) -> [AudioTrackInfo] {
        let owned = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        if owned < 0 { throw .io(path: name, operation: "dup", errno: Errno(rawValue: errno), message: String(cString: strerror(errno))) }
        let opened = try Opened(ownedDescriptor: owned, name: name)
        defer { opened.close() }
        return opened.audioTracks()
    }

    /// Opens the audio on `fd` (owned from here on: closed on failure or release), reading
    /// from the descriptor's current offset. `audioTrack` picks the nth audio stream (from 0);
    /// nil picks FFmpeg's best audio stream.
    init(ownedDescriptor fd: Int32, name: String, audioTrack: Int?) throws(MediaFileError) {
        let opened = try Opened(ownedDescriptor: fd, name: name)
        var ok = false
        defer { if !ok { opened.close() } }
        let tracks = opened.audioTracks()
        guard !tracks.isEmpty else {
            throw .unsupported(path: name, what: "no audio stream in this \(opened.containerName) file")
        }
        let fmt = opened.format
        let chosen: Int32
        if let audioTrack {
            guard audioTrack >= 0, audioTrack < tracks.count else {
                throw .invalidArgument(path: name, reason: "no audio track \(audioTrack + 1) (the file has \(tracks.count))")
            }
            chosen = opened.audioStreamIndices[audioTrack]
        } else {
            let best = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
            chosen = best >= 0 ? best : opened.audioStreamIndices[0]
        }
        let info = tracks[opened.audioStreamIndices.firstIndex(of: chosen) ?? 0]
        let stream = fmt.pointee.streams[Int(chosen)]!
        for i in 0..<Int(fmt.pointee.nb_streams) where Int32(i) != chosen {
            fmt.pointee.streams[i]!.pointee.discard = AVDISCARD_ALL
        }
        let parameters = stream.pointee.codecpar!
        guard let decoder = avcodec_find_decoder(parameters.pointee.codec_id) else {
            throw .unsupported(path: name, what: "audio codec \(info.codec) (no FFmpeg decoder)")
        }
        var allocated = avcodec_alloc_context3(decoder)
        guard let context = allocated else {
            throw .library(path: name, message: "FFmpeg: cannot allocate a decoder")
        }
        defer { if !ok { avcodec_free_context(&allocated) } }
        var r = avcodec_parameters_to_context(context, parameters)
        if r >= 0 {
            context.pointee.pkt_timebase = stream.pointee.time_base
            r = avcodec_open2(context, decoder, nil)
        }
        guard r >= 0 else {
            throw .unsupported(path: name, what: "audio codec \(info.codec) (FFmpeg: \(ffmpegMessage(r)))")
        }
        let rate = Int(context.pointee.sample_rate)
        let channelCount = Int(context.pointee.ch_layout.nb_channels)
        guard rate > 0, channelCount > 0 else {
            throw .corrupt(path: name, reason: "audio stream of \(channelCount) channels at \(rate) Hz", offset: 0)
        }
        guard let packet = av_packet_alloc() else { throw .library(path: name, message: "FFmpeg: cannot allocate a packet") }
        guard let frame = av_frame_alloc() else {
            var p: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&p)
            throw .library(path: name, message: "FFmpeg: cannot allocate a frame")
        }
        ok = true
        self.path = name
        self.codec = context
        self.input = opened.input
        self.inputRetain = opened.retain
        self.io = opened.io
        self.format = fmt
        self.packet = packet
        self.frame = frame
        self.streamIndex = chosen
        self.sampleRate = rate
        self.channels = channelCount
        self.track = info
        self.formatName = "\(opened.containerName) / \(info.codec)"
        // The stream's duration, else the container's when the stream is its only one (with
        // video beside it, the container's is the longer of the two): exact unless estimated
        // from the bit rate.
        let nopts = parley_av_nopts_value()
        var frames: Int? = nil
        if stream.pointee.duration != nopts, stream.pointee.duration > 0 {
            let tb = stream.pointee.time_base
            frames = Int(Double(stream.pointee.duration) * Double(tb.num) / Double(tb.den) * Double(rate))
        } else if fmt.pointee.nb_streams == 1, fmt.pointee.duration != nopts, fmt.pointee.duration > 0 {
            frames = Int(Double(fmt.pointee.duration) / Double(AV_TIME_BASE) * Double(rate))
        }
        frameCount = frames
        frameCountIsExact = frames != nil && fmt.pointee.duration_estimation_method != AVFMT_DURATION_FROM_BITRATE
        outputFrames = 4096
        output = .allocate(capacity: outputFrames * channelCount)
        outputPlane = .allocate(capacity: 1)
    }

    deinit {
        if resampler != nil { swr_free(&resampler) }
        avcodec_free_context(&codec)
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
        var f: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&f)
        Opened.close(format: &format, io: &io, input: input, retain: inputRetain)
        output.deallocate()
        outputPlane.deallocate()
    }

    /// The byte position the demuxer has reached.
    private var position: Int {
        guard let io else { return -1 }
        return Int(avio_seek(io, 0, SEEK_CUR))
    }

    /// Reads up to `buffer.count / channels` interleaved frames; 0 at the end. Corrupt data
    /// throws ``MediaFileError/corrupt(path:reason:offset:)`` at the byte position reached;
    /// an input that ends well before the length its container announces throws
    /// ``MediaFileError/truncated(path:offset:expected:got:)`` (frames) once what is there
    /// has been delivered. `buffer.count` must be whole frames (the caller checks).
    func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(MediaFileError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        let want = buffer.count / channels
        var done = 0
        while done < want {
            if pending == 0 {
                if finished { break }
                try decodeMore()
                continue
            }
            let n = min(pending, want - done)
            (base + done * channels).update(from: output + pendingStart * channels, count: n * channels)
            pendingStart += n
            pending -= n
            done += n
        }
        framesDecoded += done
        if done == 0, finished, frameCountIsExact, let expected = frameCount,
           framesDecoded < expected - max(sampleRate / 4, 4096) {
            throw .truncated(path: path, offset: position, expected: expected, got: framesDecoded)
        }
        return done
    }

    /// Decodes until some converted frames are pending or the stream is finished.
    private func decodeMore() throws(MediaFileError) {
        let context = codec!
        while true {
            let r = avcodec_receive_frame(context, frame)
            if r == 0 {
                try convert()
                av_frame_unref(frame)
                if pending > 0 { return }
                continue
            }
            if r == parley_averror_eof() {
                try flushResampler()
                finished = true
                return
            }
            if r != parley_averror_eagain() {
                throw .corrupt(path: path, reason: "FFmpeg cannot decode the audio: \(ffmpegMessage(r))", offset: position)
            }
            // The decoder wants a packet.
            if draining {
                finished = true
                return
            }
            let read = av_read_frame(format, packet)
            if read == parley_averror_eof() {
                draining = true
                _ = avcodec_send_packet(context, nil)
                continue
            }
            if read < 0 {
                throw .corrupt(path: path, reason: "FFmpeg cannot read the container: \(ffmpegMessage(read))", offset: position)
            }
            defer { av_packet_unref(packet) }
            if packet.pointee.stream_index != streamIndex { continue }
            let sent = avcodec_send_packet(context, packet)
            if sent < 0 && sent != parley_averror_eagain() {
                let at = packet.pointee.pos >= 0 ? Int(packet.pointee.pos) : position
                throw .corrupt(path: path, reason: "FFmpeg cannot decode the audio: \(ffmpegMessage(sent))", offset: at)
            }
        }
    }

    /// Makes room for `frames` converted frames (grows only past the largest frame so far).
    private func reserve(_ frames: Int) {
        if frames <= outputFrames { return }
        output.deallocate()
        outputFrames = frames
        output = .allocate(capacity: frames * channels)
    }

    /// Sets swr up for the frame's sample format and channels (again only when they change).
    private func configureResampler() throws(MediaFileError) {
        let f = frame.pointee
        if resampler != nil, f.format == resamplerFormat, f.ch_layout.nb_channels == resamplerChannels { return }
        guard f.ch_layout.nb_channels == Int32(channels), f.sample_rate == Int32(sampleRate) else {
            throw .unsupported(path: path, what: "a change of the audio stream from \(channels) channels at \(sampleRate) Hz to \(f.ch_layout.nb_channels) at \(f.sample_rate) Hz")
        }
        if resampler != nil { swr_free(&resampler) }
        var inLayout = AVChannelLayout()
        var outLayout = AVChannelLayout()
        defer {
            av_channel_layout_uninit(&inLayout)
            av_channel_layout_uninit(&outLayout)
        }
        if f.ch_layout.order == AV_CHANNEL_ORDER_UNSPEC {
            av_channel_layout_default(&inLayout, f.ch_layout.nb_channels)
        } else {
            var source = f.ch_layout
            _ = av_channel_layout_copy(&inLayout, &source)
        }
        _ = av_channel_layout_copy(&outLayout, &inLayout)
        var r = swr_alloc_set_opts2(&resampler, &outLayout, AV_SAMPLE_FMT_FLT, Int32(sampleRate),
                                    &inLayout, AVSampleFormat(f.format), f.sample_rate, 0, nil)
        if r >= 0 { r = swr_init(resampler) }
        guard r >= 0 else {
            if resampler != nil { swr_free(&resampler) }
            throw .unsupported(path: path, what: "audio sample format \(f.format) (FFmpeg: \(ffmpegMessage(r)))")
        }
        resamplerFormat = f.format
        resamplerChannels = f.ch_layout.nb_channels
    }

    /// Converts the decoded frame into the (empty) pending buffer.
    private func convert() throws(MediaFileError) {
        try configureResampler()
        let samples = Int(frame.pointee.nb_samples)
        reserve(samples + 256)
        outputPlane.pointee = UnsafeMutableRawPointer(output).assumingMemoryBound(to: UInt8.self)
        let inputPlanes = frame.pointee.extended_data.map {
            UnsafeMutableRawPointer($0).assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        }
        let n = swr_convert(resampler, outputPlane, Int32(outputFrames), inputPlanes, Int32(samples))
        guard n >= 0 else {
            throw .corrupt(path: path, reason: "FFmpeg cannot convert the audio: \(ffmpegMessage(n))", offset: position)
        }
        pendingStart = 0
        pending = Int(n)
    }

    /// Takes what swr still holds at the end of the stream.
    private func flushResampler() throws(MediaFileError) {
        guard resampler != nil else { return }
        outputPlane.pointee = UnsafeMutableRawPointer(output).assumingMemoryBound(to: UInt8.self)
        let n = swr_convert(resampler, outputPlane, Int32(outputFrames), nil, 0)
        pendingStart = 0
        pending = max(0, Int(n))
    }
}

/// An opened container: the input, its AVIO context and the demuxer with stream information.
private struct Opened {
    let input: FFmpegInput
    let retain: Unmanaged<FFmpegInput>
    let io: UnsafeMutablePointer<AVIOContext>
    let format: UnsafeMutablePointer<AVFormatContext>
    let containerName: String
    let audioStreamIndices: [Int32]

    init(ownedDescriptor fd: Int32, name: String) throws(MediaFileError) {
        if let e = parley_ffmpeg_load() {
            Glibc.close(fd)
            throw .unsupported(path: name, what: "audio format (libsndfile does not read it, and FFmpeg's libraries cannot be loaded: \(String(cString: e)))")
        }
        parley_av_log_quiet()
        var st = stat()
        if fstat(fd, &st) != 0 {
            let e = errno
            Glibc.close(fd)
            throw .io(path: name, operation: "fstat", errno: Errno(rawValue: e), message: String(cString: strerror(e)))
        }
        let base = max(0, Int64(lseek(fd, 0, SEEK_CUR)))
        if Int64(st.st_size) <= base {
            Glibc.close(fd)
            throw .empty(path: name)
        }
        let input = FFmpegInput(fd: fd, base: base, size: Int64(st.st_size))
        let retain = Unmanaged.passRetained(input)
        guard let buffer = av_malloc(Int(inputBufferSize)),
              let io = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), inputBufferSize, 0,
                                          retain.toOpaque(), readInput, nil, seekInput) else {
            retain.release()
            Glibc.close(fd)
            throw .library(path: name, message: "FFmpeg: cannot allocate an I/O context")
        }
        var ioPointer: UnsafeMutablePointer<AVIOContext>? = io
        var format: UnsafeMutablePointer<AVFormatContext>? = avformat_alloc_context()
        guard let allocated = format else {
            Opened.close(format: &format, io: &ioPointer, input: input, retain: retain)
            throw .library(path: name, message: "FFmpeg: cannot allocate a demuxer")
        }
        allocated.pointee.pb = io
        allocated.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        let r = avformat_open_input(&format, nil, nil, nil)   // frees the context on failure
        if r < 0 {
            Opened.close(format: &format, io: &ioPointer, input: input, retain: retain)
            if r == parley_averror_invaliddata() {
                throw .unsupported(path: name, what: "audio format (neither libsndfile nor FFmpeg recognises it)")
            }
            throw .corrupt(path: name, reason: "FFmpeg cannot open the container: \(ffmpegMessage(r))", offset: 0)
        }
        let opened = format!
        let s = avformat_find_stream_info(opened, nil)
        if s < 0 {
            Opened.close(format: &format, io: &ioPointer, input: input, retain: retain)
            throw .corrupt(path: name, reason: "FFmpeg cannot read the streams: \(ffmpegMessage(s))", offset: 0)
        }
        self.input = input
        self.retain = retain
        self.io = io
        self.format = opened
        containerName = opened.pointee.iformat.flatMap { $0.pointee.name.map { String(cString: $0) } } ?? "unknown"
        var audio: [Int32] = []
        for i in 0..<Int(opened.pointee.nb_streams) {
            if opened.pointee.streams[i]!.pointee.codecpar.pointee.codec_type == AVMEDIA_TYPE_AUDIO {
                audio.append(Int32(i))
            }
        }
        audioStreamIndices = audio
    }

    func audioTracks() -> [AudioTrackInfo] {
        audioStreamIndices.enumerated().map { n, i in
            let stream = format.pointee.streams[Int(i)]!
            let p = stream.pointee.codecpar!.pointee
            let language = metadataValue(stream.pointee.metadata, "language")
            return AudioTrackInfo(index: n, title: metadataValue(stream.pointee.metadata, "title"),
                                  language: language == "und" ? nil : language,
                                  codec: avcodec_get_name(p.codec_id).map { String(cString: $0) } ?? "unknown",
                                  sampleRate: Int(p.sample_rate), channels: Int(p.ch_layout.nb_channels))
        }
    }

    func close() {
        var f: UnsafeMutablePointer<AVFormatContext>? = format
        var i: UnsafeMutablePointer<AVIOContext>? = io
        Opened.close(format: &f, io: &i, input: input, retain: retain)
    }

    /// Closes the demuxer, frees the AVIO context and its buffer, closes the descriptor.
    static func close(format: inout UnsafeMutablePointer<AVFormatContext>?, io: inout UnsafeMutablePointer<AVIOContext>?,
                      input: FFmpegInput, retain: Unmanaged<FFmpegInput>) {
        if format != nil { avformat_close_input(&format) }
        if let context = io {
            av_free(context.pointee.buffer)
            avio_context_free(&io)
        }
        Glibc.close(input.fd)
        retain.release()
    }
}
