// Benchmark-only baseline: speexdsp's jitter buffer.
#ifndef PARLEY_CSPEEXDSP_SHIM_H
#define PARLEY_CSPEEXDSP_SHIM_H
#include <speex/speex_jitter.h>
#endif
