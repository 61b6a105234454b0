// The clocked test PCM: an in-process alsa-lib "ioplug" PCM; see parley_clocked_pcm.h.
#include "parley_clocked_pcm.h"
#include <alsa/pcm_external.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/// State of one clocked PCM. `io` must stay the first member (callbacks cast back to it).
typedef struct parley_clocked_pcm {
    snd_pcm_ioplug_t io;
    int timer_fd;
    int running;
    struct timespec start;
} parley_clocked_pcm;

static inline int64_t parley_clocked_elapsed_frames(const parley_clocked_pcm *c) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t ns = (int64_t)(now.tv_sec - c->start.tv_sec) * 1000000000LL
                 + (int64_t)(now.tv_nsec - c->start.tv_nsec);
    if (ns < 0) ns = 0;
    return (int64_t)((__int128)ns * c->io.rate / 1000000000LL);
}

static inline int parley_clocked_arm(parley_clocked_pcm *c, int on) {
    struct itimerspec spec;
    memset(&spec, 0, sizeof spec);
    if (on && c->io.rate > 0) {
        int64_t period_ns = (int64_t)c->io.period_size * 1000000000LL / c->io.rate;
        if (period_ns <= 0) period_ns = 1000000;
        spec.it_interval.tv_sec = period_ns / 1000000000LL;
        spec.it_interval.tv_nsec = period_ns % 1000000000LL;
        spec.it_value = spec.it_interval;
    }
    return timerfd_settime(c->timer_fd, 0, &spec, NULL) < 0 ? -errno : 0;
}

static int parley_clocked_start(snd_pcm_ioplug_t *io) {
    parley_clocked_pcm *c = (parley_clocked_pcm *)io;
    clock_gettime(CLOCK_MONOTONIC, &c->start);
    c->running = 1;
    return parley_clocked_arm(c, 1);
}

static int parley_clocked_stop(snd_pcm_ioplug_t *io) {
    parley_clocked_pcm *c = (parley_clocked_pcm *)io;
    c->running = 0;
    return parley_clocked_arm(c, 0);
}

static int parley_clocked_prepare(snd_pcm_ioplug_t *io) {
    parley_clocked_pcm *c = (parley_clocked_pcm *)io;
    c->running = 0;
    return parley_clocked_arm(c, 0);
}

/// The position, in frames since start (the BOUNDARY_WA flag lets it run past buffer_size),
/// or -EPIPE once the application has fallen a whole buffer behind (capture: more than
/// buffer_size frames captured and unread; playback: more frames played than written).
static snd_pcm_sframes_t parley_clocked_pointer(snd_pcm_ioplug_t *io) {
    parley_clocked_pcm *c = (parley_clocked_pcm *)io;
    if (!c->running) return 0;
    int64_t hw = parley_clocked_elapsed_frames(c);
    int64_t appl = (int64_t)io->appl_ptr;
    if (io->stream == SND_PCM_STREAM_CAPTURE) {
        if (hw - appl > (int64_t)io->buffer_size) return -EPIPE;
    } else {
        if (hw > appl) return -EPIPE;
    }
    return (snd_pcm_sframes_t)hw;
}

static snd_pcm_sframes_t parley_clocked_transfer(snd_pcm_ioplug_t *io,
                                                 const snd_pcm_channel_area_t *areas,
                                                 snd_pcm_uframes_t offset,
                                                 snd_pcm_uframes_t size) {
    if (io->stream == SND_PCM_STREAM_CAPTURE)
        snd_pcm_areas_silence(areas, offset, io->channels, size, io->format);
    return (snd_pcm_sframes_t)size;
}

static int parley_clocked_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd,
                                       unsigned int nfds, unsigned short *revents) {
    parley_clocked_pcm *c = (parley_clocked_pcm *)io;
    uint64_t expirations;
    (void)nfds;
    if (pfd[0].revents & POLLIN) {
        ssize_t r = read(c->timer_fd, &expirations, sizeof expirations);
        (void)r;
        *revents = io->stream == SND_PCM_STREAM_CAPTURE ? POLLIN : POLLOUT;
    } else {
        *revents = 0;
    }
    return 0;
}

/// Resume after ``parley_clocked_pcm_suspend``: like hardware that resumes where it stopped,
/// the clock continues from the last hardware position (nothing was captured or played while
/// suspended) and the stream is running again.
static int parley_clocked_resume(snd_pcm_ioplug_t *io) {
    parley_clocked_pcm *c = (parley_clocked_pcm *)io;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t back = io->rate ? (int64_t)io->hw_ptr * 1000000000LL / io->rate : 0;
    int64_t ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec - back;
    c->start.tv_sec = ns / 1000000000LL;
    c->start.tv_nsec = ns % 1000000000LL;
    c->running = 1;
    snd_pcm_ioplug_set_state(io, SND_PCM_STATE_RUNNING);
    return parley_clocked_arm(c, 1);
}

static int parley_clocked_close(snd_pcm_ioplug_t *io) {
    parley_clocked_pcm *c = (parley_clocked_pcm *)io;
    close(c->timer_fd);
    free(c);
    return 0;
}

static const snd_pcm_ioplug_callback_t parley_clocked_callbacks = {
    .start = parley_clocked_start,
    .stop = parley_clocked_stop,
    .pointer = parley_clocked_pointer,
    .transfer = parley_clocked_transfer,
    .close = parley_clocked_close,
    .prepare = parley_clocked_prepare,
    .poll_revents = parley_clocked_poll_revents,
    .resume = parley_clocked_resume,
};

int parley_clocked_pcm_open(snd_pcm_t **pcmp, void **contextp, const char *name,
                                          snd_pcm_stream_t stream, int mode) {
    static const unsigned int access_list[] = { SND_PCM_ACCESS_RW_INTERLEAVED };
    static const unsigned int format_list[] = { SND_PCM_FORMAT_S16_LE, SND_PCM_FORMAT_FLOAT_LE };
    parley_clocked_pcm *c = (parley_clocked_pcm *)calloc(1, sizeof *c);
    if (!c) return -ENOMEM;
    c->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (c->timer_fd < 0) { int e = -errno; free(c); return e; }
    c->io.version = SND_PCM_IOPLUG_VERSION;
    c->io.name = "Parley clocked PCM";
    c->io.flags = SND_PCM_IOPLUG_FLAG_BOUNDARY_WA | SND_PCM_IOPLUG_FLAG_MONOTONIC;
    c->io.poll_fd = c->timer_fd;
    c->io.poll_events = POLLIN;
    c->io.mmap_rw = 0;
    c->io.callback = &parley_clocked_callbacks;
    c->io.private_data = c;
    int err = snd_pcm_ioplug_create(&c->io, name, stream, mode);
    if (err < 0) { close(c->timer_fd); free(c); return err; }
    if ((err = snd_pcm_ioplug_set_param_list(&c->io, SND_PCM_IOPLUG_HW_ACCESS, 1, access_list)) < 0 ||
        (err = snd_pcm_ioplug_set_param_list(&c->io, SND_PCM_IOPLUG_HW_FORMAT, 2, format_list)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(&c->io, SND_PCM_IOPLUG_HW_CHANNELS, 1, 8)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(&c->io, SND_PCM_IOPLUG_HW_RATE, 8000, 192000)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(&c->io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 16, 1 << 20)) < 0 ||
        (err = snd_pcm_ioplug_set_param_minmax(&c->io, SND_PCM_IOPLUG_HW_PERIODS, 2, 64)) < 0) {
        snd_pcm_ioplug_delete(&c->io);  // calls the close callback, which frees `c`
        return err;
    }
    *pcmp = c->io.pcm;
    if (contextp) *contextp = c;
    return 0;
}

int parley_clocked_pcm_suspend(void *context) {
    parley_clocked_pcm *c = (parley_clocked_pcm *)context;
    c->running = 0;
    parley_clocked_arm(c, 0);
    return snd_pcm_ioplug_set_state(&c->io, SND_PCM_STATE_SUSPENDED);
}
