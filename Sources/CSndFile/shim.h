// libsndfile: reads WAV, FLAC, Ogg Vorbis/Opus, MP3 and more.
#ifndef PARLEY_CSNDFILE_SHIM_H
#define PARLEY_CSNDFILE_SHIM_H
#include <sndfile.h>
#endif
