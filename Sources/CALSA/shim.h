// alsa-lib, with typed shims for what Swift cannot import or call directly.
//
// - snd_pcm_hw_params_alloca / snd_pcm_sw_params_alloca are macros (alloca): the Swift side
//   uses the snd_pcm_*_params_malloc / _free functions instead, so no shim is needed.
// - the variadic error handler alsa-lib reports details through (below).
// The clocked test PCM (an alsa-lib ioplug plugin) is the C target CALSAClockedPCM.
#ifndef PARLEY_CALSA_SHIM_H
#define PARLEY_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#include <stdarg.h>
#include <stdio.h>

/// alsa-lib reports details ("Unknown PCM foo", config parse errors) through a variadic error
/// handler Swift cannot implement. This one formats the message and hands it to
/// `parley_alsa_store_error`, which ParleyDevices implements (`@_cdecl`) to keep the calling
/// thread's last message for its typed error, instead of letting alsa-lib print to stderr.
/// (Storage lives on the Swift side: Swift does not emit thread-local statics of headers.)
void parley_alsa_store_error(const char *message);

static void parley_alsa_error_handler(const char *file, int line, const char *function,
                                      int err, const char *fmt, ...) {
    char text[512];
    (void)file; (void)line; (void)function; (void)err;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    parley_alsa_store_error(text);
}

/// Installs the forwarding error handler (process-wide; idempotent).
static inline void parley_alsa_capture_errors(void) {
    snd_lib_error_set_handler(parley_alsa_error_handler);
}

#endif
