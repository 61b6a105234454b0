// FFmpeg's libavformat, libavcodec, libswresample and libavutil: demuxing and decoding the
// audio of any container and codec they read. The headers live in the multiarch include
// directory the compiler searches by default, so no pkg-config flags are needed.
// The shims give Swift the values FFmpeg defines as macros (AVERROR codes, AVERROR(EAGAIN),
// av_err2str) and the fields it cannot reach through C bitfields or unions.
#ifndef PARLEY_CFFMPEG_SHIM_H
#define PARLEY_CFFMPEG_SHIM_H
#include <errno.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libswresample/swresample.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>

/// AVERROR(EAGAIN): the decoder wants more input (or the muxer more output) first.
static inline int parley_averror_eagain(void) { return AVERROR(EAGAIN); }
/// AVERROR_EOF: the end of the input, or a drained decoder.
static inline int parley_averror_eof(void) { return AVERROR_EOF; }
/// AVERROR_INVALIDDATA: the bytes break the format's rules.
static inline int parley_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
/// AVERROR_ENOSYS-style "operation not supported" for a seek callback: AVERROR(ENOSYS).
static inline int64_t parley_averror_enosys(void) { return AVERROR(ENOSYS); }
/// AVSEEK_SIZE: the `whence` a seek callback is given when asked for the stream's size.
static inline int parley_avseek_size(void) { return AVSEEK_SIZE; }
/// AV_NOPTS_VALUE: "no timestamp / unknown duration".
static inline int64_t parley_av_nopts_value(void) { return AV_NOPTS_VALUE; }

/// av_err2str: FFmpeg's message for an error code, written into `buffer` (a C string).
static inline const char *parley_av_err2str(int code, char *buffer, size_t size) {
    av_strerror(code, buffer, size);
    return buffer;
}

/// Silences FFmpeg's own logging on stderr (the reader reports through its typed errors).
static inline void parley_av_log_quiet(void) { av_log_set_level(AV_LOG_QUIET); }
#endif
