// Debian's libwebrtc-audio-processing (0.3): its AEC (behind ParleyEcho's EchoCanceller) and its
// GMM VAD (a benchmark baseline). Its public headers do not declare these C entry points, so
// they are declared here.
#ifndef PARLEY_CWEBRTCAUDIOPROCESSING_SHIM_H
#define PARLEY_CWEBRTCAUDIOPROCESSING_SHIM_H
#include <stddef.h>
#include <stdint.h>
typedef struct WebRtcVadInst VadInst;
VadInst *WebRtcVad_Create(void);
void WebRtcVad_Free(VadInst *handle);
int WebRtcVad_Init(VadInst *handle);
int WebRtcVad_set_mode(VadInst *handle, int mode);
int WebRtcVad_Process(VadInst *handle, int fs, const int16_t *audio_frame, size_t frame_length);

// The AEC: 10 ms frames (80 or 160 samples, one band at 8 or 16 kHz), floats in the 16-bit range.
void *WebRtcAec_Create(void);
void WebRtcAec_Free(void *aecInst);
int32_t WebRtcAec_Init(void *aecInst, int32_t sampFreq, int32_t scSampFreq);
int32_t WebRtcAec_BufferFarend(void *aecInst, const float *farend, size_t nrOfSamples);
int32_t WebRtcAec_Process(void *aecInst, const float *const *nearend, size_t num_bands, float *const *out,
                          size_t nrOfSamples, int16_t msInSndCardBuf, int32_t skew);
// The AEC's core, and its delay-agnostic mode (its own delay estimator) and extended filter.
struct AecCore;
struct AecCore *WebRtcAec_aec_core(void *handle);
void WebRtcAec_enable_delay_agnostic(struct AecCore *self, int enable);
void WebRtcAec_enable_extended_filter(struct AecCore *self, int enable);

/// One 10 ms frame of the near end through the AEC (one band): `out` may not be `near`.
static inline int32_t parley_webrtc_aec_process(void *aec, const float *near, float *out, size_t samples) {
    const float *const nearBands[1] = { near };
    float *const outBands[1] = { out };
    return WebRtcAec_Process(aec, nearBands, 1, outBands, samples, 0, 0);
}
#endif
