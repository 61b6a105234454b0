// alsa-lib, with typed shims for the macros Swift cannot import.
#ifndef PARLEY_CALSA_SHIM_H
#define PARLEY_CALSA_SHIM_H
#include <alsa/asoundlib.h>
#endif
