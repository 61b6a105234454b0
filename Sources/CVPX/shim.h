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

// Each control shim below is one of these: `parley_vpx_<name>(ctx, value)` calls
// `vpx_codec_control(ctx, ID, value)`, so the value goes through the header's typed wrapper.
#define PARLEY_VPX_CONTROL(name, ID, Value) \
    static inline vpx_codec_err_t parley_vpx_##name(vpx_codec_ctx_t *ctx, Value value) { \
        return vpx_codec_control(ctx, ID, value); \
    }

// MARK: Encoder controls (VP8 and VP9)

/// VP8E_SET_CPUUSED: speed/quality trade-off (VP8 -16...16, VP9 -9...9; higher is faster).
PARLEY_VPX_CONTROL(set_cpuused, VP8E_SET_CPUUSED, int)
/// VP8E_SET_STATIC_THRESHOLD: skip encoding of blocks whose change is below this.
PARLEY_VPX_CONTROL(set_static_threshold, VP8E_SET_STATIC_THRESHOLD, unsigned int)
/// VP8E_SET_NOISE_SENSITIVITY: temporal denoiser strength (VP8 0...6; 0 = off).
PARLEY_VPX_CONTROL(vp8_set_noise_sensitivity, VP8E_SET_NOISE_SENSITIVITY, unsigned int)
/// VP8E_SET_ENABLEAUTOALTREF: automatic alternate reference frames (needs lag; 0 for real time).
PARLEY_VPX_CONTROL(set_enable_auto_alt_ref, VP8E_SET_ENABLEAUTOALTREF, unsigned int)
/// VP8E_SET_TOKEN_PARTITIONS: number of VP8 DCT token partitions (log2, 0...3).
PARLEY_VPX_CONTROL(vp8_set_token_partitions, VP8E_SET_TOKEN_PARTITIONS, int)
/// VP8E_SET_MAX_INTRA_BITRATE_PCT: cap on a keyframe's size, in % of the per-frame target.
PARLEY_VPX_CONTROL(set_max_intra_bitrate_pct, VP8E_SET_MAX_INTRA_BITRATE_PCT, unsigned int)
/// VP8E_GET_LAST_QUANTIZER: the quantizer of the last frame (internal 0...63 scale).
PARLEY_VPX_CONTROL(get_last_quantizer, VP8E_GET_LAST_QUANTIZER, int *)

// MARK: Encoder controls (VP9 only)

/// VP9E_SET_ROW_MT: row-based multithreading (0 off, 1 on).
PARLEY_VPX_CONTROL(vp9_set_row_mt, VP9E_SET_ROW_MT, unsigned int)
/// VP9E_SET_TILE_COLUMNS: log2 of the number of tile columns.
PARLEY_VPX_CONTROL(vp9_set_tile_columns, VP9E_SET_TILE_COLUMNS, int)
/// VP9E_SET_AQ_MODE: adaptive quantisation (0 off, 3 cyclic refresh for real time).
PARLEY_VPX_CONTROL(vp9_set_aq_mode, VP9E_SET_AQ_MODE, unsigned int)
/// VP9E_SET_NOISE_SENSITIVITY: VP9 temporal denoiser (0 off).
PARLEY_VPX_CONTROL(vp9_set_noise_sensitivity, VP9E_SET_NOISE_SENSITIVITY, unsigned int)

// MARK: Decoder controls

/// VP8D_GET_FRAME_CORRUPTED: whether the last decoded frame is known to be corrupt.
PARLEY_VPX_CONTROL(get_frame_corrupted, VP8D_GET_FRAME_CORRUPTED, int *)

#endif
