// Typed, prefixed shims over libvpx's variadic `vpx_codec_control` and function-like macros.
#ifndef PARLEY_CVPX_SHIM_H
#define PARLEY_CVPX_SHIM_H
#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>
#endif
