// FFmpeg's libavformat, libavcodec, libswresample and libavutil: demuxing and decoding the
// audio of any container and codec they read. The headers live in the multiarch include
// directory the compiler searches by default, so no pkg-config flags are needed.
// The libraries are not linked: they and the ~140 libraries they pull in would cost every
// process about 20 MB of memory at start-up. They are loaded (dlopen) the first time a file
// needs them, and their entry points resolved then: parley_ffmpeg_load, then parley_ff_NAME
// gives FFmpeg's NAME.
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
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

/// The entry points used, each with the library that defines it.
#define PARLEY_FFMPEG_FUNCTIONS(X) \
    X(avutil, av_channel_layout_copy) X(avutil, av_channel_layout_default) X(avutil, av_channel_layout_uninit) \
    X(avutil, av_dict_get) X(avutil, av_frame_alloc) X(avutil, av_frame_free) X(avutil, av_frame_unref) \
    X(avutil, av_free) X(avutil, av_log_set_level) X(avutil, av_malloc) X(avutil, av_strerror) \
    X(swresample, swr_alloc_set_opts2) X(swresample, swr_convert) X(swresample, swr_free) X(swresample, swr_init) \
    X(avcodec, av_packet_alloc) X(avcodec, av_packet_free) X(avcodec, av_packet_unref) \
    X(avcodec, avcodec_alloc_context3) X(avcodec, avcodec_find_decoder) X(avcodec, avcodec_free_context) \
    X(avcodec, avcodec_get_name) X(avcodec, avcodec_open2) X(avcodec, avcodec_parameters_to_context) \
    X(avcodec, avcodec_receive_frame) X(avcodec, avcodec_send_packet) \
    X(avformat, av_find_best_stream) X(avformat, av_read_frame) X(avformat, avformat_alloc_context) \
    X(avformat, avformat_close_input) X(avformat, avformat_find_stream_info) X(avformat, avformat_open_input) \
    X(avformat, avio_alloc_context) X(avformat, avio_context_free) X(avformat, avio_seek)

#define PARLEY_FFMPEG_STRING2(x) #x
#define PARLEY_FFMPEG_STRING(x) PARLEY_FFMPEG_STRING2(x)

/// The resolved entry points, and why loading failed (NULL when it did not). Its storage is a
/// function's static (Swift emits a header's functions, not its variables).
typedef struct {
    const char *_Nullable error;
    char message[512];
#define PARLEY_FFMPEG_FIELD(library, name) __typeof__(name) *_Nullable name;
    PARLEY_FFMPEG_FUNCTIONS(PARLEY_FFMPEG_FIELD)
#undef PARLEY_FFMPEG_FIELD
} parley_ffmpeg_table;

static inline parley_ffmpeg_table *_Nonnull parley_ffmpeg(void) {
    static parley_ffmpeg_table table;
    return &table;
}

/// Loads the four libraries (the major versions of the headers) and resolves the entry points.
static inline void parley_ffmpeg_open(void) {
    parley_ffmpeg_table *t = parley_ffmpeg();
    static const char *const names[4] = {
        "libavutil.so." PARLEY_FFMPEG_STRING(LIBAVUTIL_VERSION_MAJOR),
        "libswresample.so." PARLEY_FFMPEG_STRING(LIBSWRESAMPLE_VERSION_MAJOR),
        "libavcodec.so." PARLEY_FFMPEG_STRING(LIBAVCODEC_VERSION_MAJOR),
        "libavformat.so." PARLEY_FFMPEG_STRING(LIBAVFORMAT_VERSION_MAJOR),
    };
    void *handles[4];
    for (int i = 0; i < 4; i++) {
        handles[i] = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (handles[i] == NULL) {
            const char *e = dlerror();
            snprintf(t->message, sizeof t->message, "%s", e ? e : names[i]);
            t->error = t->message;
            return;
        }
    }
    void *avutil = handles[0], *swresample = handles[1], *avcodec = handles[2], *avformat = handles[3];
#define PARLEY_FFMPEG_RESOLVE(library, name) \
    t->name = (__typeof__(name) *)dlsym(library, #name); \
    if (t->name == NULL) { \
        snprintf(t->message, sizeof t->message, "%s has no %s", "lib" #library, #name); \
        t->error = t->message; \
        return; \
    }
    PARLEY_FFMPEG_FUNCTIONS(PARLEY_FFMPEG_RESOLVE)
#undef PARLEY_FFMPEG_RESOLVE
}

/// Loads FFmpeg's libraries once (thread-safe); NULL when they are ready, else why not.
/// Call it, and see NULL, before any parley_ff_NAME.
static inline const char *_Nullable parley_ffmpeg_load(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, parley_ffmpeg_open);
    return parley_ffmpeg()->error;
}

/// parley_ff_NAME(): FFmpeg's NAME, resolved by parley_ffmpeg_load.
#define PARLEY_FFMPEG_GETTER(library, name) \
    static inline __typeof__(name) *_Nonnull parley_ff_##name(void) { return parley_ffmpeg()->name; }
PARLEY_FFMPEG_FUNCTIONS(PARLEY_FFMPEG_GETTER)
#undef PARLEY_FFMPEG_GETTER

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
static inline const char *_Nonnull parley_av_err2str(int code, char *_Nonnull buffer, size_t size) {
    parley_ffmpeg()->av_strerror(code, buffer, size);
    return buffer;
}

/// Silences FFmpeg's own logging on stderr (the reader reports through its typed errors).
static inline void parley_av_log_quiet(void) { parley_ffmpeg()->av_log_set_level(AV_LOG_QUIET); }
#endif
