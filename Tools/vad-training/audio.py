"""Audio helpers of the VAD training: 16 kHz WAV I/O, the corpus's labelling rule, synthetic
noises and rooms, telephone band and an Opus round trip. numpy only (ffmpeg for Opus)."""
import subprocess, wave
import numpy as np

def read_wav(path):
    with wave.open(path) as w:
        assert w.getframerate() == 16000 and w.getsampwidth() == 2, path
        x = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768
        if w.getnchannels() > 1:
            x = x.reshape(-1, w.getnchannels())[:, 0]
    return x

def read_any(path):
    """A WAV file, or an Ogg Opus recording decoded at 16 kHz (soundfile, tooling only)."""
    if path.endswith(".wav"):
        return read_wav(path)
    import soundfile
    x, rate = soundfile.read(path, dtype="float32", always_2d=True)
    assert rate == 16000, path
    return x[:, 0].copy()

def write_wav(path, x):
    y = np.clip(np.round(x * 32768), -32768, 32767).astype(np.int16)
    with wave.open(path, "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000); w.writeframes(y.tobytes())

def read_scv(path, nframes):
    """Labels (name,start,end,label,...) sampled at 10 ms frame centres."""
    parts = open(path).read().strip().split(",")[1:]
    lab = np.zeros(nframes, dtype=np.float32)
    t = (np.arange(nframes) + 0.5) * 0.01
    for i in range(0, len(parts) - 2, 3):
        s, e, l = float(parts[i]), float(parts[i + 1]), int(float(parts[i + 2]))
        if l == 1:
            lab[(t >= s) & (t < e)] = 1
    return lab

def auto_labels(x):
    """The corpus's labelling rule (README): energy threshold, gaps < 100 ms filled, islands < 30 ms removed."""
    n = len(x) // 160
    e = 10 * np.log10(np.mean(x[: n * 160].reshape(n, 160) ** 2, axis=1) + 1e-12)
    live = e[e > -95]
    L = np.percentile(live, 99); N = np.percentile(live, 10)
    T = max(L - 38, min(N + 10, L - 30))
    lab = (e > T).astype(np.float32)
    def runs(v, val):
        out, i = [], 0
        while i < len(v):
            j = i
            while j < len(v) and v[j] == val: j += 1
            if j > i and v[i] == val: out.append((i, j))
            i = max(j, i + 1)
        return out
    for a, b in runs(lab, 0):
        if b - a < 10 and a > 0 and b < len(lab): lab[a:b] = 1
    for a, b in runs(lab, 1):
        if b - a < 3: lab[a:b] = 0
    return lab

def real_labels(x):
    """Speech labels of one real-mic clip (one utterance in its room's own noise): frames more than
    40% of the way from the clip's noise floor (10th percentile) to its loudest frames (99th),
    and at least 6 dB over the floor; gaps under 100 ms filled, islands under 30 ms removed."""
    n = len(x) // 160
    if n < 10:
        return np.zeros(n, np.float32)
    e = 10 * np.log10(np.mean(x[: n * 160].reshape(n, 160) ** 2, axis=1) + 1e-12)
    live = e[e > -95]
    if len(live) < 5:
        return np.zeros(n, np.float32)
    L = np.percentile(live, 99); N = np.percentile(live, 10)
    if L - N < 10:   # no utterance clearly over the room
        return np.zeros(n, np.float32)
    lab = (e > max(N + 0.4 * (L - N), N + 6)).astype(np.float32)
    lab = fill_gaps(lab, 10)
    idx = np.flatnonzero(np.diff(np.concatenate([[0], lab, [0]])))
    for a, b in zip(idx[::2], idx[1::2]):
        if b - a < 3: lab[a:b] = 0
    return lab

def fill_gaps(lab, maxgap):
    """Label convention of a talking detector: pauses of at most `maxgap` frames inside speech are speech."""
    lab = lab.copy(); idx = np.flatnonzero(lab > 0.5)
    if len(idx) < 2: return lab
    d = np.diff(idx)
    for k in np.flatnonzero((d > 1) & (d <= maxgap + 1)):
        lab[idx[k]:idx[k + 1]] = 1
    return lab

def stationary_noise(rng, n, kind):
    w = rng.standard_normal(n).astype(np.float32)
    if kind == "white":
        return w
    f = np.fft.rfft(w)
    k = np.arange(len(f)) + 1.0
    if kind == "pink":
        return np.fft.irfft(f / np.sqrt(k), n).astype(np.float32)
    if kind == "brown":
        return np.fft.irfft(f / k, n).astype(np.float32)
    t = np.arange(n) / 16000.0   # hum with harmonics plus a little hiss
    base = 50 if rng.random() < 0.5 else 60
    return (sum(np.sin(2 * np.pi * base * h * t + rng.random() * 6) / h for h in range(1, 8)) + 0.05 * w).astype(np.float32)

def synthetic_rir(rng, rt60):
    """A room impulse response: direct path plus exponentially decaying noise (RT60 in s)."""
    n = int(16000 * min(rt60 * 1.2, 0.9))
    t = np.arange(n) / 16000.0
    h = rng.standard_normal(n).astype(np.float32) * np.exp(-6.9 * t / rt60).astype(np.float32)
    h[: int(0.002 * 16000)] = 0
    h *= 10 ** (-(3 + 9 * rng.random()) / 20) / (np.sqrt(np.sum(h ** 2)) + 1e-9)   # direct-to-reverberant 3-12 dB
    h[0] = 1.0
    return h

def with_bed(rng, x, kind, under_db):
    """`x` plus a stationary noise of `kind`, `under_db` to `under_db` + 20 dB under it."""
    bed = stationary_noise(rng, len(x), kind)
    bed *= np.sqrt(np.mean(x ** 2) + 1e-9) / (np.sqrt(np.mean(bed ** 2)) + 1e-9) * 10 ** (-(under_db + 20 * rng.random()) / 20)
    return (x + bed).astype(np.float32)

def tonal_noise(rng, n):
    """1-4 steady tones (100-3000 Hz, each drifting by up to 3% at 0.05-0.5 Hz, switched on and
    off every 0.3-4 s), like a machine, a whine or a feedback tone, over a pink bed 10-30 dB under them."""
    t = np.arange(n) / 16000.0
    x = np.zeros(n, np.float32)
    for _ in range(int(rng.integers(1, 5))):
        f0 = 100 * 30 ** rng.random()
        drift = 1 + 0.03 * rng.random() * np.sin(2 * np.pi * (0.05 + 0.45 * rng.random()) * t + 6 * rng.random())
        tone = np.sin(2 * np.pi * np.cumsum(f0 * drift) / 16000.0 + 6 * rng.random())
        gate = np.ones(n, np.float32)
        if rng.random() < 0.6:
            at, on = 0, rng.random() < 0.5
            while at < n:
                k = int((0.3 + 3.7 * rng.random()) * 16000)
                gate[at:at + k] = 1.0 if on else 0.0
                at += k; on = not on
            gate = np.convolve(gate, np.ones(160) / 160, mode="same")   # 10 ms ramps, no clicks
        x += (tone * gate * 10 ** (-12 * rng.random() / 20)).astype(np.float32)
    return with_bed(rng, x, "pink", 10)

def click_noise(rng, n):
    """Clicks and ticks (a keyboard, a mouse, a handled microphone, a crackling line): 1-20 short
    decaying bursts a second (1-15 ms, random colour and level) over a white or pink bed 15-35 dB under them."""
    x = np.zeros(n, np.float32)
    rate = 1 + 19 * rng.random()
    at = 0
    while True:
        at += int(rng.exponential(16000 / rate)) + 1
        if at >= n: break
        k = int(16000 * (0.001 + 0.014 * rng.random()))
        burst = rng.standard_normal(k).astype(np.float32) * np.exp(-np.arange(k) / (k / 4)).astype(np.float32)
        if rng.random() < 0.5: burst = np.diff(burst, prepend=0).astype(np.float32)   # brighter
        burst *= 10 ** (-15 * rng.random() / 20)
        x[at:at + k] += burst[: n - at]
    return with_bed(rng, x, "white" if rng.random() < 0.5 else "pink", 15)

def colored_noise(rng, n, extra_kinds=False):
    """Stationary or slowly modulated noise: white, pink, brown, hum, a random spectral tilt with
    a resonance, or one of those with a slow (0.1-2 Hz) level wander; with `extra_kinds` also
    steady tones switched on and off, and clicks."""
    kinds = ["white", "pink", "brown", "hum", "tilt", "tilt"] + (["tones", "tones", "clicks", "clicks"] if extra_kinds else [])
    kind = kinds[rng.integers(len(kinds))]
    if kind == "tones":
        x = tonal_noise(rng, n)
    elif kind == "clicks":
        x = click_noise(rng, n)
    elif kind != "tilt":
        x = stationary_noise(rng, n, kind)
    else:
        w = rng.standard_normal(n).astype(np.float32)
        f = np.fft.rfft(w)
        k = np.arange(len(f)) + 1.0
        fc = 100 + 3000 * rng.random()
        shape = k ** (-rng.random() * 1.5) * (1 + 4 * rng.random() * np.exp(-0.5 * ((k * 8000 / len(f) - fc) / (fc * 0.3)) ** 2))
        x = np.fft.irfft(f * shape, n).astype(np.float32)
    if rng.random() < 0.4:
        t = np.arange(n) / 16000.0
        depth = 3 + 9 * rng.random()   # dB
        x = x * 10 ** (depth / 20 * np.sin(2 * np.pi * (0.1 + 1.9 * rng.random()) * t + 6 * rng.random()) / 2).astype(np.float32)
    return x.astype(np.float32), kind

def telephone_band(x):
    f = np.fft.rfft(x)
    fr = np.arange(len(f)) * 16000.0 / len(x)
    f[(fr < 300) | (fr > 3400)] = 0
    return np.fft.irfft(f, len(x)).astype(np.float32)

def opus_round_trip(x, kbps, work):
    """Encodes and decodes `x` with libopus (ffmpeg, VoIP mode): what a call's receiver analyses."""
    tmp_in, tmp_opus, tmp_out = f"{work}/tmp_in.wav", f"{work}/tmp.opus", f"{work}/tmp_out.wav"
    write_wav(tmp_in, x)
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", tmp_in, "-c:a", "libopus", "-b:a", f"{kbps}k",
                    "-application", "voip", tmp_opus], check=True)
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", tmp_opus, "-ar", "16000", "-ac", "1",
                    "-c:a", "pcm_s16le", tmp_out], check=True)
    y = read_wav(tmp_out)
    out = np.zeros_like(x); out[: min(len(x), len(y))] = y[: len(x)]
    return out


# Call codecs for codec_round_trip: ffmpeg encoder options and container. The narrowband ones
# run at 8 kHz (the telephone band), the others at 16 kHz.
CODECS = {
    "gsm": (["-ar", "8000", "-c:a", "libgsm_ms"], "wav"),
    "g711u": (["-ar", "8000", "-c:a", "pcm_mulaw"], "wav"),
    "g711a": (["-ar", "8000", "-c:a", "pcm_alaw"], "wav"),
    "g726": (["-ar", "8000", "-c:a", "adpcm_g726", "-b:a", "24k"], "wav"),
    "speex": (["-ar", "8000", "-c:a", "libspeex"], "ogg"),
    "codec2": (["-ar", "8000", "-c:a", "libcodec2", "-mode", "3200"], "c2"),
    "g722": (["-ar", "16000", "-c:a", "g722"], "g722"),
    "mp3": (["-ar", "16000", "-c:a", "libmp3lame", "-b:a", "24k"], "mp3"),
}


def codec_round_trip(x, codec, work):
    """Encodes and decodes `x` with a call codec of CODECS (ffmpeg), back at 16 kHz, delay removed
    (the lag of the largest cross-correlation within 40 ms) and trimmed to the same length."""
    opts, ext = CODECS[codec]
    tmp_in, tmp_c, tmp_out = f"{work}/tmp_in.wav", f"{work}/tmp_c.{ext}", f"{work}/tmp_out.wav"
    write_wav(tmp_in, x)
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", tmp_in] + opts + [tmp_c], check=True)
    subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-y", "-i", tmp_c, "-ar", "16000", "-ac", "1",
                    "-c:a", "pcm_s16le", tmp_out], check=True)
    y = read_wav(tmp_out)
    n = min(len(x), len(y), 16000 * 4)
    nf = 1 << int(np.ceil(np.log2(2 * n)))
    c = np.fft.irfft(np.fft.rfft(y[:n], nf) * np.conj(np.fft.rfft(x[:n], nf)), nf)
    lags = np.concatenate([c[:641], c[-640:]])
    lag = int(np.argmax(lags)); lag = lag if lag <= 640 else lag - 1281
    out = np.zeros_like(x)
    if lag >= 0:
        m = min(len(x), len(y) - lag); out[:m] = y[lag:lag + m]
    else:
        m = min(len(x) + lag, len(y)); out[-lag:-lag + m] = y[:m]
    return out
