// Typed, prefixed shims over libopus's variadic `opus_*_ctl` requests.
// Each shim calls the library's own macro so the C type check stays.
#ifndef PARLEY_COPUS_SHIM_H
#define PARLEY_COPUS_SHIM_H
#include <opus/opus.h>
#endif
