// Benchmark-only baseline: the WebRTC GMM VAD exported by Debian's libwebrtc-audio-processing.
// Its public headers do not declare these C entry points, so they are declared here.
#ifndef PARLEY_CWEBRTCVAD_SHIM_H
#define PARLEY_CWEBRTCVAD_SHIM_H
#include <stddef.h>
#include <stdint.h>
typedef struct WebRtcVadInst VadInst;
VadInst *WebRtcVad_Create(void);
void WebRtcVad_Free(VadInst *handle);
int WebRtcVad_Init(VadInst *handle);
int WebRtcVad_set_mode(VadInst *handle, int mode);
int WebRtcVad_Process(VadInst *handle, int fs, const int16_t *audio_frame, size_t frame_length);
#endif
