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

// Each shim below is one of these; `REQUEST` names libopus's `OPUS_SET_<REQUEST>` and
// `OPUS_GET_<REQUEST>` macros, `kind` the state (`encoder` or `decoder`, type `Opus<Kind>`).
#define PARLEY_OPUS_SETTER(kind, Kind, name, REQUEST) \
    static inline int parley_opus_##kind##_set_##name(Opus##Kind *st, opus_int32 value) { \
        return opus_##kind##_ctl(st, OPUS_SET_##REQUEST(value)); \
    }
#define PARLEY_OPUS_GETTER(kind, Kind, name, REQUEST, Value) \
    static inline int parley_opus_##kind##_get_##name(Opus##Kind *st, Value *value) { \
        return opus_##kind##_ctl(st, OPUS_GET_##REQUEST(value)); \
    }
#define PARLEY_OPUS_SETTER_GETTER(kind, Kind, name, REQUEST) \
    PARLEY_OPUS_SETTER(kind, Kind, name, REQUEST) \
    PARLEY_OPUS_GETTER(kind, Kind, name, REQUEST, opus_int32)
#define PARLEY_OPUS_RESET(kind, Kind) \
    static inline int parley_opus_##kind##_reset_state(Opus##Kind *st) { \
        return opus_##kind##_ctl(st, OPUS_RESET_STATE); \
    }

// MARK: Encoder setters and getters

PARLEY_OPUS_SETTER_GETTER(encoder, Encoder, bitrate, BITRATE)
PARLEY_OPUS_SETTER_GETTER(encoder, Encoder, vbr, VBR)
PARLEY_OPUS_SETTER_GETTER(encoder, Encoder, vbr_constraint, VBR_CONSTRAINT)
PARLEY_OPUS_SETTER_GETTER(encoder, Encoder, complexity, COMPLEXITY)
PARLEY_OPUS_SETTER_GETTER(encoder, Encoder, inband_fec, INBAND_FEC)
PARLEY_OPUS_SETTER_GETTER(encoder, Encoder, packet_loss_perc, PACKET_LOSS_PERC)
PARLEY_OPUS_SETTER_GETTER(encoder, Encoder, dtx, DTX)
PARLEY_OPUS_SETTER_GETTER(encoder, Encoder, signal, SIGNAL)
PARLEY_OPUS_SETTER_GETTER(encoder, Encoder, max_bandwidth, MAX_BANDWIDTH)
PARLEY_OPUS_GETTER(encoder, Encoder, lookahead, LOOKAHEAD, opus_int32)
PARLEY_OPUS_GETTER(encoder, Encoder, in_dtx, IN_DTX, opus_int32)
PARLEY_OPUS_GETTER(encoder, Encoder, final_range, FINAL_RANGE, opus_uint32)
PARLEY_OPUS_RESET(encoder, Encoder)

// MARK: Decoder setters and getters

PARLEY_OPUS_SETTER_GETTER(decoder, Decoder, gain, GAIN)
PARLEY_OPUS_GETTER(decoder, Decoder, last_packet_duration, LAST_PACKET_DURATION, opus_int32)
PARLEY_OPUS_GETTER(decoder, Decoder, pitch, PITCH, opus_int32)
PARLEY_OPUS_GETTER(decoder, Decoder, bandwidth, BANDWIDTH, opus_int32)
PARLEY_OPUS_GETTER(decoder, Decoder, final_range, FINAL_RANGE, opus_uint32)
PARLEY_OPUS_RESET(decoder, Decoder)

#endif
