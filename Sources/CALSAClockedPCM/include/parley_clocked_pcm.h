// An in-process ALSA "ioplug" PCM whose hardware pointer advances with CLOCK_MONOTONIC at the
// negotiated rate, like a sound card's DMA pointer. It carries no audio (capture delivers
// silence, playback discards) but keeps real time, so overruns and underruns happen exactly as
// on hardware: alsa-lib's own ioplug layer marks the stream XRUN when the pointer callback
// reports one, and snd_pcm_recover() recovers it. alsa-lib's `null` and `file` plugins have no
// clock (their avail is always the whole buffer), so they can never overrun; this is how
// Parley exercises its xrun handling on machines without a card (ParleyDevices'
// `ALSACapture.clocked` and `ALSAPlayback.clocked`).
#ifndef PARLEY_CLOCKED_PCM_H
#define PARLEY_CLOCKED_PCM_H
#include <alsa/asoundlib.h>

/// Opens a clocked PCM named `name` (S16_LE or FLOAT_LE, 1-8 channels, 8-192 kHz, interleaved).
/// Returns 0 or a negative errno; on success `*pcmp` is a PCM to close with snd_pcm_close()
/// and `*contextp` (if not NULL) the plugin state for parley_clocked_pcm_suspend().
int parley_clocked_pcm_open(snd_pcm_t **pcmp, void **contextp, const char *name,
                            snd_pcm_stream_t stream, int mode);

/// Suspends a running clocked PCM as system sleep would: the stream enters SUSPENDED, reads
/// and writes fail with -ESTRPIPE until snd_pcm_resume() (or snd_pcm_recover()) resumes it.
int parley_clocked_pcm_suspend(void *context);

#endif
