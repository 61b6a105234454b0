// Typed, prefixed shims over libopus's variadic `opus_*_ctl` requests.
//
// Swift cannot call C variadic functions, so each request used by ParleyCodecs gets one
// `static inline` function here that calls libopus's own request macro (`OPUS_SET_BITRATE(x)`
// etc.). The macros apply libopus's compile-time type checks (`__opus_check_int`,
// `__opus_check_int_ptr`), so a wrong argument type fails to compile here instead of
// corrupting the variadic call. There is deliberately no generic (request, value) shim.
// Every shim returns the libopus status (OPUS_OK or a negative error code).
#ifndef PARLEY_COPUS_SHIM_H
#define PARLEY_COPUS_SHIM_H
#include <opus/opus.h>

// MARK: Encoder setters and getters

static inline int parley_opus_encoder_set_bitrate(OpusEncoder *st, opus_int32 value) {
    return opus_encoder_ctl(st, OPUS_SET_BITRATE(value));
}
static inline int parley_opus_encoder_get_bitrate(OpusEncoder *st, opus_int32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_BITRATE(value));
}
static inline int parley_opus_encoder_set_vbr(OpusEncoder *st, opus_int32 value) {
    return opus_encoder_ctl(st, OPUS_SET_VBR(value));
}
static inline int parley_opus_encoder_get_vbr(OpusEncoder *st, opus_int32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_VBR(value));
}
static inline int parley_opus_encoder_set_vbr_constraint(OpusEncoder *st, opus_int32 value) {
    return opus_encoder_ctl(st, OPUS_SET_VBR_CONSTRAINT(value));
}
static inline int parley_opus_encoder_get_vbr_constraint(OpusEncoder *st, opus_int32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_VBR_CONSTRAINT(value));
}
static inline int parley_opus_encoder_set_complexity(OpusEncoder *st, opus_int32 value) {
    return opus_encoder_ctl(st, OPUS_SET_COMPLEXITY(value));
}
static inline int parley_opus_encoder_get_complexity(OpusEncoder *st, opus_int32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_COMPLEXITY(value));
}
static inline int parley_opus_encoder_set_inband_fec(OpusEncoder *st, opus_int32 value) {
    return opus_encoder_ctl(st, OPUS_SET_INBAND_FEC(value));
}
static inline int parley_opus_encoder_get_inband_fec(OpusEncoder *st, opus_int32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_INBAND_FEC(value));
}
static inline int parley_opus_encoder_set_packet_loss_perc(OpusEncoder *st, opus_int32 value) {
    return opus_encoder_ctl(st, OPUS_SET_PACKET_LOSS_PERC(value));
}
static inline int parley_opus_encoder_get_packet_loss_perc(OpusEncoder *st, opus_int32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_PACKET_LOSS_PERC(value));
}
static inline int parley_opus_encoder_set_dtx(OpusEncoder *st, opus_int32 value) {
    return opus_encoder_ctl(st, OPUS_SET_DTX(value));
}
static inline int parley_opus_encoder_get_dtx(OpusEncoder *st, opus_int32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_DTX(value));
}
static inline int parley_opus_encoder_set_signal(OpusEncoder *st, opus_int32 value) {
    return opus_encoder_ctl(st, OPUS_SET_SIGNAL(value));
}
static inline int parley_opus_encoder_get_signal(OpusEncoder *st, opus_int32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_SIGNAL(value));
}
static inline int parley_opus_encoder_set_max_bandwidth(OpusEncoder *st, opus_int32 value) {
    return opus_encoder_ctl(st, OPUS_SET_MAX_BANDWIDTH(value));
}
static inline int parley_opus_encoder_get_max_bandwidth(OpusEncoder *st, opus_int32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_MAX_BANDWIDTH(value));
}
static inline int parley_opus_encoder_get_lookahead(OpusEncoder *st, opus_int32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_LOOKAHEAD(value));
}
static inline int parley_opus_encoder_get_in_dtx(OpusEncoder *st, opus_int32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_IN_DTX(value));
}
static inline int parley_opus_encoder_get_final_range(OpusEncoder *st, opus_uint32 *value) {
    return opus_encoder_ctl(st, OPUS_GET_FINAL_RANGE(value));
}
static inline int parley_opus_encoder_reset_state(OpusEncoder *st) {
    return opus_encoder_ctl(st, OPUS_RESET_STATE);
}

// MARK: Decoder setters and getters

static inline int parley_opus_decoder_set_gain(OpusDecoder *st, opus_int32 value) {
    return opus_decoder_ctl(st, OPUS_SET_GAIN(value));
}
static inline int parley_opus_decoder_get_gain(OpusDecoder *st, opus_int32 *value) {
    return opus_decoder_ctl(st, OPUS_GET_GAIN(value));
}
static inline int parley_opus_decoder_get_last_packet_duration(OpusDecoder *st, opus_int32 *value) {
    return opus_decoder_ctl(st, OPUS_GET_LAST_PACKET_DURATION(value));
}
static inline int parley_opus_decoder_get_pitch(OpusDecoder *st, opus_int32 *value) {
    return opus_decoder_ctl(st, OPUS_GET_PITCH(value));
}
static inline int parley_opus_decoder_get_bandwidth(OpusDecoder *st, opus_int32 *value) {
    return opus_decoder_ctl(st, OPUS_GET_BANDWIDTH(value));
}
static inline int parley_opus_decoder_get_final_range(OpusDecoder *st, opus_uint32 *value) {
    return opus_decoder_ctl(st, OPUS_GET_FINAL_RANGE(value));
}
static inline int parley_opus_decoder_reset_state(OpusDecoder *st) {
    return opus_decoder_ctl(st, OPUS_RESET_STATE);
}

#endif
