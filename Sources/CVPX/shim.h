// Typed, prefixed shims over libvpx's variadic `vpx_codec_control` and function-like macros.
//
// Swift cannot call the variadic `vpx_codec_control_()` nor expand the function-like macros
// `vpx_codec_enc_init` / `vpx_codec_dec_init` (which pass the ABI version the headers were
// built for). Each shim below calls libvpx's own macro, so `vpx_codec_control(ctx, ID, v)`
// still goes through the header's typed `vpx_codec_control_##ID` wrapper: a value of the wrong
// type for a control fails to compile here. There is deliberately no generic (id, value) shim.
// The interface getters (`vpx_codec_vp8_cx()` etc.) are ordinary functions Swift calls directly.
#ifndef PARLEY_CVPX_SHIM_H
#define PARLEY_CVPX_SHIM_H
#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

// MARK: Macros

/// vpx_codec_enc_init(ctx, iface, cfg, flags) with this header's VPX_ENCODER_ABI_VERSION.
static inline vpx_codec_err_t parley_vpx_codec_enc_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                                        const vpx_codec_enc_cfg_t *cfg, vpx_codec_flags_t flags) {
    return vpx_codec_enc_init(ctx, iface, cfg, flags);
}

/// vpx_codec_dec_init(ctx, iface, cfg, flags) with this header's VPX_DECODER_ABI_VERSION.
static inline vpx_codec_err_t parley_vpx_codec_dec_init(vpx_codec_ctx_t *ctx, vpx_codec_iface_t *iface,
                                                        const vpx_codec_dec_cfg_t *cfg, vpx_codec_flags_t flags) {
    return vpx_codec_dec_init(ctx, iface, cfg, flags);
}

/// VPX_DL_REALTIME (the `deadline` argument of vpx_codec_encode), as a typed constant.
static inline unsigned long parley_vpx_dl_realtime(void) { return VPX_DL_REALTIME; }

// MARK: Encoder controls (VP8 and VP9)

/// VP8E_SET_CPUUSED: speed/quality trade-off (VP8 -16...16, VP9 -9...9; higher is faster).
static inline vpx_codec_err_t parley_vpx_set_cpuused(vpx_codec_ctx_t *ctx, int value) {
    return vpx_codec_control(ctx, VP8E_SET_CPUUSED, value);
}
/// VP8E_SET_STATIC_THRESHOLD: skip encoding of blocks whose change is below this.
static inline vpx_codec_err_t parley_vpx_set_static_threshold(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP8E_SET_STATIC_THRESHOLD, value);
}
/// VP8E_SET_NOISE_SENSITIVITY: temporal denoiser strength (VP8 0...6; 0 = off).
static inline vpx_codec_err_t parley_vpx_vp8_set_noise_sensitivity(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP8E_SET_NOISE_SENSITIVITY, value);
}
/// VP8E_SET_ENABLEAUTOALTREF: automatic alternate reference frames (needs lag; 0 for real time).
static inline vpx_codec_err_t parley_vpx_set_enable_auto_alt_ref(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP8E_SET_ENABLEAUTOALTREF, value);
}
/// VP8E_SET_TOKEN_PARTITIONS: number of VP8 DCT token partitions (log2, 0...3).
static inline vpx_codec_err_t parley_vpx_vp8_set_token_partitions(vpx_codec_ctx_t *ctx, int value) {
    return vpx_codec_control(ctx, VP8E_SET_TOKEN_PARTITIONS, value);
}
/// VP8E_SET_MAX_INTRA_BITRATE_PCT: cap on a keyframe's size, in % of the per-frame target.
static inline vpx_codec_err_t parley_vpx_set_max_intra_bitrate_pct(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP8E_SET_MAX_INTRA_BITRATE_PCT, value);
}
/// VP8E_GET_LAST_QUANTIZER: the quantizer of the last frame (internal 0...63 scale).
static inline vpx_codec_err_t parley_vpx_get_last_quantizer(vpx_codec_ctx_t *ctx, int *value) {
    return vpx_codec_control(ctx, VP8E_GET_LAST_QUANTIZER, value);
}

// MARK: Encoder controls (VP9 only)

/// VP9E_SET_ROW_MT: row-based multithreading (0 off, 1 on).
static inline vpx_codec_err_t parley_vpx_vp9_set_row_mt(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP9E_SET_ROW_MT, value);
}
/// VP9E_SET_TILE_COLUMNS: log2 of the number of tile columns.
static inline vpx_codec_err_t parley_vpx_vp9_set_tile_columns(vpx_codec_ctx_t *ctx, int value) {
    return vpx_codec_control(ctx, VP9E_SET_TILE_COLUMNS, value);
}
/// VP9E_SET_AQ_MODE: adaptive quantisation (0 off, 3 cyclic refresh for real time).
static inline vpx_codec_err_t parley_vpx_vp9_set_aq_mode(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP9E_SET_AQ_MODE, value);
}
/// VP9E_SET_NOISE_SENSITIVITY: VP9 temporal denoiser (0 off).
static inline vpx_codec_err_t parley_vpx_vp9_set_noise_sensitivity(vpx_codec_ctx_t *ctx, unsigned int value) {
    return vpx_codec_control(ctx, VP9E_SET_NOISE_SENSITIVITY, value);
}

// MARK: Decoder controls

/// VP8D_GET_FRAME_CORRUPTED: whether the last decoded frame is known to be corrupt.
static inline vpx_codec_err_t parley_vpx_get_frame_corrupted(vpx_codec_ctx_t *ctx, int *value) {
    return vpx_codec_control(ctx, VP8D_GET_FRAME_CORRUPTED, value);
}

#endif
