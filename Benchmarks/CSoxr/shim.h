// Benchmark-only baseline: libsoxr, the resampler the media benchmark compares with.
#ifndef PARLEY_CSOXR_SHIM_H
#define PARLEY_CSOXR_SHIM_H
#include <soxr.h>
#endif
