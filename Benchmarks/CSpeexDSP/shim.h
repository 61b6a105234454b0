// Benchmark-only baselines: speexdsp's jitter buffer, and its echo canceller (MDF) with the
// preprocessor's residual echo suppression.
#ifndef PARLEY_CSPEEXDSP_SHIM_H
#define PARLEY_CSPEEXDSP_SHIM_H
#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>
#include <speex/speex_jitter.h>

/// Typed wrappers of the controls that take a pointer Swift cannot pass an int through.
static inline int parley_speex_echo_set_rate(SpeexEchoState *st, int rate) {
    return speex_echo_ctl(st, SPEEX_ECHO_SET_SAMPLING_RATE, &rate);
}
static inline int parley_speex_preprocess_set_int(SpeexPreprocessState *st, int request, int value) {
    return speex_preprocess_ctl(st, request, &value);
}
static inline int parley_speex_preprocess_set_echo(SpeexPreprocessState *st, SpeexEchoState *echo) {
    return speex_preprocess_ctl(st, SPEEX_PREPROCESS_SET_ECHO_STATE, echo);
}
#endif
