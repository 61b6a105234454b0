#!/usr/bin/env python3
"""Trains the ParleyVoice VAD decision (a small MLP) and writes Sources/ParleyVoice/VADModelWeights.swift.

    swift build -c release --product parley-vadtool
    bash Tools/vad-training/gather.sh WORK          # extra Debian audio (see SOURCES.md)
    python3 Tools/vad-training/train.py --corpus ../shared/data/corpus --work WORK

The features come from the product's own Swift front end (`parley-vadtool features`), so training
and product cannot diverge. numpy only. Deterministic (fixed seeds).

Data (see SOURCES.md): corpus speech, music, noise and speech mixtures; gathered music, effects and
KLettres speech; synthetic mixtures of them at 0-20 dB SNR and with stationary noises. Whole
sources are held out for validation (unseen music, effects, speakers, languages). Singing,
human non-speech and the conversation are not trained on (see README.md). real-dev is never read.
"""
import argparse, glob, json, os, subprocess, sys, wave
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NFEAT = 31

VAL_SPEECH = ("sp05_", "sp10_", "sp15_", "sp17_")
VAL_MUSIC = ("mu09_", "mu11_", "mu12_", "warzone__")
VAL_NOISE = ("no03_", "lincity__", "lincity.wav", "fx2_bzflag")
VAL_LANGS = ("klettres__ar", "klettres__he", "klettres__uk", "klettres__nb")


def read_wav(path):
    with wave.open(path) as w:
        assert w.getframerate() == 16000 and w.getsampwidth() == 2, path
        x = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.float32) / 32768
        if w.getnchannels() > 1:
            x = x.reshape(-1, w.getnchannels())[:, 0]
    return x


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


def fill_gaps(lab, maxgap):
    """Label convention of a talking detector: pauses of at most `maxgap` frames inside speech are speech."""
    lab = lab.copy(); idx = np.flatnonzero(lab > 0.5)
    if len(idx) < 2: return lab
    d = np.diff(idx)
    for k in np.flatnonzero((d > 1) & (d <= maxgap + 1)):
        lab[idx[k]:idx[k + 1]] = 1
    return lab


def is_val(name, prefixes):
    return any(name.startswith(p) or p in name for p in prefixes)


def collect(corpus, work, dialogue=False):
    """List of dict(path, name, group, split, labels)."""
    items = []
    def add(path, group, split, labels):
        items.append(dict(path=path, name=os.path.splitext(os.path.basename(path))[0], group=group, split=split, labels=labels))
    for p in sorted(glob.glob(f"{corpus}/speech/*.wav")):
        n = os.path.basename(p)
        add(p, "speech", "val" if is_val(n, VAL_SPEECH) else "train", p[:-4] + ".scv")
    for p in sorted(glob.glob(f"{corpus}/music/*.wav")):
        add(p, "music", "val" if is_val(os.path.basename(p), VAL_MUSIC) else "train", None)
    for p in sorted(glob.glob(f"{corpus}/noise/*.wav")):
        add(p, "noise", "val" if is_val(os.path.basename(p), VAL_NOISE) else "train", None)
    for p in sorted(glob.glob(f"{corpus}/mix_speech_*/*.wav")):
        n = os.path.basename(p)
        sp, other = n.split("__")[0] + "_", n.split("__")[2] + "_"
        sv, ov = is_val(sp, VAL_SPEECH), is_val(other, VAL_MUSIC + VAL_NOISE)
        split = "train" if not sv and not ov else ("val" if sv and ov else "mixed")
        add(p, "mix", split, p[:-4] + ".scv")
    for p in sorted(glob.glob(f"{work}/wav/music/*.wav")):
        add(p, "music", "val" if is_val(os.path.basename(p), VAL_MUSIC) else "train", None)
    for p in sorted(glob.glob(f"{work}/wav/effects/*.wav")):
        add(p, "noise", "val" if is_val(os.path.basename(p), VAL_NOISE) else "train", None)
    for p in sorted(glob.glob(f"{work}/wav/speech_syll/*.wav")):
        add(p, "speech", "val" if is_val(os.path.basename(p), VAL_LANGS) else "train", "auto")
    if dialogue:
        for p in sorted(glob.glob(f"{work}/wav/speech_dialogue/*.wav")):
            add(p, "speech", "train", "auto")
    for p in sorted(glob.glob(f"{corpus}/singing/*.wav")) + sorted(glob.glob(f"{corpus}/human_nonspeech/*.wav")):
        add(p, "singing" if "singing" in p else "human", "report", None)
    return items


def labels_for(item, x):
    n = len(x) // 160
    if item["labels"] is None:
        return np.zeros(n, dtype=np.float32)
    if isinstance(item["labels"], np.ndarray):
        return item["labels"][:n]
    if item["labels"] == "auto":
        return auto_labels(x)[:n]
    return read_scv(item["labels"], n)


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


def mixture_sources(items, work, split):
    """The output folder, the speech and non-speech clips of `split`, and a caching loader
    returning (samples, frame labels) for a clip."""
    out_dir = f"{work}/mix_{split}"
    os.makedirs(out_dir, exist_ok=True)
    speech = [i for i in items if i["group"] == "speech" and i["split"] == split]
    other = [i for i in items if i["group"] in ("music", "noise") and i["split"] == split]
    cache = {}
    def load(i):
        if i["path"] not in cache:
            x = read_wav(i["path"]); cache[i["path"]] = (x, labels_for(i, x))
        return cache[i["path"]]
    return out_dir, speech, other, load


def make_mixtures_v1(items, work, split, count, seed):
    """Mixer 1 (the shipped model): speech + non-speech (or stationary noise) at 0-20 dB SNR, random overall level."""
    rng = np.random.default_rng(seed)
    out_dir, speech, other, load = mixture_sources(items, work, split)
    made = []
    for m in range(count):
        s = speech[rng.integers(len(speech))]
        x, lab = load(s)
        n = 8 * 16000
        if len(x) < n: continue
        a = rng.integers(0, len(x) - n) // 160 * 160
        xs, ls = x[a:a + n].copy(), lab[a // 160:(a + n) // 160]
        if ls.sum() < 50: continue
        if rng.random() < 0.25:
            kind = ["white", "pink", "brown", "hum"][rng.integers(4)]
            bg, tag = stationary_noise(rng, n, kind), kind
        else:
            o = other[rng.integers(len(other))]
            y, _ = load(o)
            if len(y) < n: y = np.tile(y, n // max(len(y), 1) + 1)
            b = rng.integers(0, len(y) - n + 1)
            bg, tag = y[b:b + n].copy(), o["name"]
        snr = [0, 5, 10, 15, 20][rng.integers(5)]
        ps = np.mean(xs.reshape(-1, 160)[ls > 0] ** 2)
        pb = np.mean(bg ** 2) + 1e-12
        mix = xs + bg * np.sqrt(ps / pb / 10 ** (snr / 10))
        level = -3 - 37 * rng.random()
        mix *= 10 ** (level / 20) / (np.max(np.abs(mix)) + 1e-9)
        name = f"mx{m:04d}__{s['name']}__{tag}__snr{snr:02d}"
        path = f"{out_dir}/{name}.wav"
        write_wav(path, mix)
        made.append(dict(path=path, name=name, group="synmix", split=split, labels=ls.copy(), snr=snr))
    return made


def with_colored_noise(rng, bg, n, tags):
    """`bg` (unit RMS) plus a coloured or modulated noise 5-20 dB under it; the noise's kind is
    appended to `tags`."""
    extra, kind = colored_noise(rng, n)
    tags.append(kind)
    return bg + extra / (np.sqrt(np.mean(extra ** 2)) + 1e-9) * 10 ** (-(5 + 15 * rng.random()) / 20)


def babble(rng, speech, load, n, exclude):
    """2-5 talkers of the split (not the foreground's clip) overlapped, each reverberant and at a
    random level within 6 dB: background voices (a TV, a neighbouring desk, a cafe), which a
    talking indicator must not take for the participant."""
    pool = [i for i in speech if i["path"] != exclude] or speech
    out = np.zeros(n, np.float32)
    for _ in range(int(rng.integers(2, 6))):
        x, _ = load(pool[rng.integers(len(pool))])
        if len(x) < n: x = np.tile(x, n // max(len(x), 1) + 1)
        a = rng.integers(0, len(x) - n + 1)
        v = x[a:a + n].astype(np.float64)
        h = synthetic_rir(rng, 0.3 + 0.6 * rng.random())
        m = 1 << int(np.ceil(np.log2(n + len(h))))
        v = np.fft.irfft(np.fft.rfft(v, m) * np.fft.rfft(h, m), m)[:n]
        out += (v / (np.sqrt(np.mean(v ** 2)) + 1e-9) * 10 ** (-6 * rng.random() / 20)).astype(np.float32)
    return out


def make_mixtures(items, work, split, count, seed, music_share=None, babble_share=0.0, long_gap_share=0.0,
                  extra_noise=False):
    """Speech (sometimes reverberant or telephone-band) plus non-speech (a clip of the same split,
    a stationary or modulated noise, or both) at -5 to 30 dB SNR, 3-12 s long, random level."""
    rng = np.random.default_rng(seed)
    out_dir, speech, other, load = mixture_sources(items, work, split)
    made = []
    for m in range(count):
        s = speech[rng.integers(len(speech))]
        x, lab = load(s)
        n = int(3 + 9 * rng.random()) * 16000
        if len(x) < n + 160: continue
        a = rng.integers(0, len(x) - n) // 160 * 160
        xs, ls = x[a:a + n].copy(), lab[a // 160:(a + n) // 160]
        if ls.sum() < 30: continue
        tags = []
        if long_gap_share > 0 and rng.random() < long_gap_share:
            # 1-2 long pauses (0.8-3 s) inserted where the speech pauses: a meeting's turn ends,
            # and the background after a short utterance must read as the background before it.
            for _ in range(int(rng.integers(1, 3))):
                quiet = np.flatnonzero(ls[:len(xs) // 160] == 0)
                if len(quiet) == 0: break
                at = int(quiet[rng.integers(len(quiet))]) * 160
                k = int((0.8 + 2.2 * rng.random()) * 100) * 160
                xs = np.concatenate([xs[:at], np.zeros(k, np.float32), xs[at:]])
                ls = np.concatenate([ls[:at // 160], np.zeros(k // 160, ls.dtype), ls[at // 160:]])
            n = len(xs); tags.append("gap")
        if rng.random() < 0.35:
            h = synthetic_rir(rng, 0.2 + 0.6 * rng.random())
            nf = 1 << int(np.ceil(np.log2(n + len(h))))   # not `m`: that is the mixture's number
            xs = np.fft.irfft(np.fft.rfft(xs, nf) * np.fft.rfft(h, nf), nf)[:n].astype(np.float32); tags.append("rev")
        if rng.random() < 0.15:
            xs = telephone_band(xs); tags.append("tel")
        r = rng.random()
        if babble_share > 0 and rng.random() < babble_share:
            bg = babble(rng, speech, load, n, s["path"]); tags.append("babble")
            if rng.random() < 0.5:
                bg = with_colored_noise(rng, bg / (np.sqrt(np.mean(bg ** 2)) + 1e-9), n, tags)
        elif r < 0.35:
            bg, kind = colored_noise(rng, n, extra_noise); tags.append(kind)
        else:
            if music_share is None:
                o = other[rng.integers(len(other))]
            else:   # music and noise/effects clips in a fixed proportion, whatever their counts
                want_music = rng.random() < music_share
                pool = [i for i in other if (i["group"] == "music") == want_music]
                pool = pool or other
                o = pool[rng.integers(len(pool))]
            y, _ = load(o)
            if len(y) < n: y = np.tile(y, n // max(len(y), 1) + 1)
            b = rng.integers(0, len(y) - n + 1)
            bg = y[b:b + n].copy(); tags.append(o["name"][:24])
            bg = bg / (np.sqrt(np.mean(bg ** 2)) + 1e-9)
            if r > 0.8:
                bg = with_colored_noise(rng, bg, n, tags)
        snr = [0, 5, 10, 10, 15, 15, 20, 25, 30][rng.integers(9)]
        if "babble" in tags: snr = [10, 15, 20, 25][rng.integers(4)]   # voices behind the participant
        ps = np.mean(xs.reshape(-1, 160)[ls > 0] ** 2)
        pb = np.mean(bg ** 2) + 1e-12
        bg = bg * np.sqrt(ps / pb / 10 ** (snr / 10))
        mix = xs + bg
        # Speech frames buried more than 6 dB under the background (local SNR) are not trained
        # on either way: asking for them teaches the model that loud music is speech.
        es = np.mean(xs.reshape(-1, 160) ** 2, axis=1); eb = np.mean(bg.reshape(-1, 160) ** 2, axis=1) + 1e-12
        ignore = (ls > 0) & (es < eb * 10 ** (-6 / 10))
        level = -3 - 42 * rng.random()
        mix *= 10 ** (level / 20) / (np.max(np.abs(mix)) + 1e-9)
        if rng.random() < 0.3:
            # Opus has no look-ahead-free alignment in ffmpeg's output: trimmed to the same length,
            # its delay (6.5 ms) is under one frame.
            mix = opus_round_trip(mix, [12, 16, 24, 32][rng.integers(4)], work); tags.append("opus")
        name = f"mx{m:04d}__{s['name']}__{'_'.join(tags)}__snr{snr + 5:02d}"
        path = f"{out_dir}/{name}.wav"
        write_wav(path, mix)
        made.append(dict(path=path, name=name, group="synmix", split=split, labels=ls.copy(), snr=snr, ignore=ignore))
    return made


def add_room_noise(items, work):
    """Adds a faint stationary noise (white, pink or brown, 30-55 dB under the clip's loud level)
    to every clip, so that no training audio contains digital silence: against digital silence
    the noise floor collapses and speech reads as 60 dB SNR, which no real microphone gives."""
    ndir = f"{work}/noised"
    os.makedirs(ndir, exist_ok=True)
    for i in items:
        out = f"{ndir}/{i['name']}.wav"
        if not os.path.exists(out):
            x = read_wav(i["path"])
            seed = int.from_bytes(i["name"].encode()[-8:].rjust(8, b"\0"), "little") % (2 ** 32)
            rng = np.random.default_rng(seed)
            n = len(x) // 160
            e = np.mean(x[: n * 160].reshape(n, 160) ** 2, axis=1) if n else np.array([1e-6])
            loud = np.percentile(e, 99) if n else 1e-6
            kind = ["white", "pink", "brown"][rng.integers(3)]
            noise = stationary_noise(rng, len(x), kind)
            gain = np.sqrt(loud / (np.mean(noise ** 2) + 1e-12) / 10 ** ((30 + 25 * rng.random()) / 10))
            write_wav(out, x + gain * noise)
        i["orig_path"] = i["path"]
        i["path"] = out


def features(items, work, tool):
    fdir = f"{work}/features"
    os.makedirs(fdir, exist_ok=True)
    add_room_noise(items, work)
    todo = [i["path"] for i in items]
    for k in range(0, len(todo), 50):
        subprocess.run([tool, "features", fdir] + todo[k:k + 50], check=True)
    for i in items:
        f = np.fromfile(f"{fdir}/{i['name']}.f32", dtype=np.float32).reshape(-1, NFEAT + 1)
        i["prob"], i["X"] = f[:, 0], f[:, 1:]
        x = read_wav(i.get("orig_path", i["path"]))   # labels from the clean clip
        lab = labels_for(i, x)
        n = min(len(lab), len(f))
        i["y"] = lab[:n]; i["X"] = i["X"][:n]; i["prob"] = i["prob"][:n]


class MLP:
    def __init__(self, nin, h1, h2, rng):
        self.p = {"W1": rng.standard_normal((h1, nin)) / np.sqrt(nin), "b1": np.zeros(h1),
                  "W2": rng.standard_normal((h2, h1)) / np.sqrt(h1), "b2": np.zeros(h2),
                  "W3": rng.standard_normal(h2) / np.sqrt(h2), "b3": np.zeros(1)}
    def forward(self, X):
        a1 = np.tanh(X @ self.p["W1"].T + self.p["b1"])
        a2 = np.tanh(a1 @ self.p["W2"].T + self.p["b2"])
        return a2 @ self.p["W3"] + self.p["b3"][0], (a1, a2)
    def train(self, X, y, w, epochs, rng, lr=3e-3, l2=1e-4, batch=4096):
        m = {k: np.zeros_like(v) for k, v in self.p.items()}; v = {k: np.zeros_like(x) for k, x in self.p.items()}
        t = 0
        for ep in range(epochs):
            order = rng.permutation(len(X))
            tot = 0.0
            for s in range(0, len(X), batch):
                idx = order[s:s + batch]
                xb, yb, wb = X[idx], y[idx], w[idx]
                z, (a1, a2) = self.forward(xb)
                pr = 1 / (1 + np.exp(-z))
                tot += float(np.sum(wb * (np.logaddexp(0, z) - yb * z)))
                dz = wb * (pr - yb) / wb.sum()
                g = {"W3": a2.T @ dz, "b3": np.array([dz.sum()])}
                d2 = np.outer(dz, self.p["W3"]) * (1 - a2 ** 2)
                g["W2"] = d2.T @ a1; g["b2"] = d2.sum(0)
                d1 = (d2 @ self.p["W2"]) * (1 - a1 ** 2)
                g["W1"] = d1.T @ xb; g["b1"] = d1.sum(0)
                t += 1
                for k in self.p:
                    gk = g[k] + (l2 * self.p[k] if k.startswith("W") else 0)
                    m[k] = 0.9 * m[k] + 0.1 * gk; v[k] = 0.999 * v[k] + 0.001 * gk ** 2
                    self.p[k] -= lr * (m[k] / (1 - 0.9 ** t)) / (np.sqrt(v[k] / (1 - 0.999 ** t)) + 1e-8)
            if ep % 5 == 4 or ep == epochs - 1:
                print(f"  epoch {ep + 1}: loss {tot / w.sum():.4f}", flush=True)


def smooth(z, alpha):
    if alpha <= 0: return z
    out = np.empty_like(z); prev = 0.0
    for t in range(len(z)):
        prev = z[t] if t == 0 else alpha * prev + (1 - alpha) * z[t]
        out[t] = prev
    return out


def evaluate(model, mean, inv, items, alpha, thr=0.5):
    for i in items:
        Xs = np.clip((i["X"] - mean) * inv, -8, 8)
        z, _ = model.forward(Xs)
        i["p"] = 1 / (1 + np.exp(-smooth(z, alpha)))
    return tabulate(items, thr)


def tabulate(items, thr=0.5):
    """Per (split, group) precision/recall/F1 or share of frames flagged, from each item's "p"."""
    rows = {}
    for i in items:
        p = i["p"]
        key = (i["split"], i["group"] if i["group"] != "synmix" else f"synmix{i.get('snr', '')}")
        r = rows.setdefault(key, [0, 0, 0, 0, 0])
        pred = p >= thr; y = i["y"] > 0.5
        r[0] += np.sum(pred & y); r[1] += np.sum(pred & ~y); r[2] += np.sum(~pred & y); r[3] += len(y)
    out = {}
    for k, (tp, fp, fn, n, _) in sorted(rows.items()):
        prec = tp / max(tp + fp, 1); rec = tp / max(tp + fn, 1)
        f1 = 2 * prec * rec / max(prec + rec, 1e-9)
        out[k] = dict(P=prec, R=rec, F1=f1, flagged=fp / max(n, 1) if tp + fn == 0 else None, n=n)
    return out


def pr_auc(p, y):
    """Area under the precision-recall curve (average precision) and ROC-AUC."""
    order = np.argsort(-p, kind="stable"); y = y[order] > 0.5
    tp = np.cumsum(y); fp = np.cumsum(~y)
    prec = tp / np.maximum(tp + fp, 1); rec = tp / max(tp[-1], 1)
    ap = float(np.sum(np.diff(np.concatenate([[0], rec])) * prec))
    roc = float(np.sum(np.diff(np.concatenate([[0], fp / max(fp[-1], 1)])) * tp / max(tp[-1], 1)))
    return ap, roc


def write_swift(path, model, mean, inv, alpha, h1, h2, note):
    def arr(a):
        a = np.asarray(a, dtype=np.float64).ravel()
        lines, cur = [], []
        for x in a:
            cur.append(f"{x:.7g}")
            if len(cur) == 8: lines.append(", ".join(cur)); cur = []
        if cur: lines.append(", ".join(cur))
        return "[\n        " + ",\n        ".join(lines) + ",\n    ]"
    p = model.p
    with open(path, "w") as f:
        f.write(f"""// GENERATED by Tools/vad-training/train.py: do not edit by hand.
// {note}

enum VADModelWeights {{
    static let inputCount = {NFEAT}
    static let hidden1 = {h1}
    static let hidden2 = {h2}
    static let outputSmoothing: Float = {alpha}
    static let mean: [Float] = {arr(mean)}
    static let invStd: [Float] = {arr(inv)}
    static let w1: [Float] = {arr(p['W1'])}
    static let b1: [Float] = {arr(p['b1'])}
    static let w2: [Float] = {arr(p['W2'])}
    static let b2: [Float] = {arr(p['b2'])}
    static let w3: [Float] = {arr(p['W3'])}
    static let b3: Float = {float(p['b3'][0]):.7g}
}}
""")


def load_items(a):
    """The clips with features and labels: WORK/items.pkl with --reuse, else collected, mixed and
    extracted (and saved there)."""
    import pickle
    if a.reuse:
        return pickle.load(open(f"{a.work}/items.pkl", "rb"))
    if not glob.glob(f"{a.work}/wav/*/*.wav"):
        sys.exit(f"train.py: no gathered audio under {a.work}/wav: run gather.sh {a.work} first, or link the "
                 f"wav/ folder of an earlier gather.sh run there (ln -s GATHERED/wav {a.work}/wav)")
    items = collect(a.corpus, a.work, a.mixer == 2)
    mix = make_mixtures if a.mixer == 2 else make_mixtures_v1
    kw = dict(music_share=a.music_share, babble_share=a.babble_share, long_gap_share=a.long_gap_share,
              extra_noise=a.extra_noise) if a.mixer == 2 else {}
    items += mix(items, a.work, "train", a.mixtures, 1, **kw)
    items += mix(items, a.work, "val", a.mixtures // 4, 2, **kw)
    print(f"{len(items)} clips; extracting features", flush=True)
    features(items, a.work, a.tool)
    with open(f"{a.work}/items.pkl", "wb") as f:
        pickle.dump([{k: v for k, v in i.items() if k != "labels"} for i in items], f)
    return items


def fit_items(items, final):
    splits = ("train", "val") if final else ("train",)
    return [i for i in items if i["split"] in splits and i["group"] in ("speech", "music", "noise", "mix", "synmix")]


def frame_weights(fit, weights, sub=1):
    """Per-clip arrays of loss weights (every `sub`th frame): each group of clips gets its share
    (`weights`: speech, corpus mixtures, synthetic mixtures, music, noise); within a group long
    clips count less than in proportion; frames marked "ignore" get 0; then the two classes are
    balanced and the mean weight is 1."""
    group_weight = dict(zip(("speech", "mix", "synmix", "music", "noise"), (float(v) for v in weights.split(","))))
    totals = {}
    for i in fit: totals[i["group"]] = totals.get(i["group"], 0) + len(i["y"][::sub])
    w = []
    for i in fit:
        cw = group_weight[i["group"]] / totals[i["group"]] * (min(len(i["y"]), 3000) / len(i["y"])) ** 0.5
        wi = np.full(len(i["y"][::sub]), cw)
        if "ignore" in i: wi[i["ignore"][: len(i["y"])][::sub]] = 0
        w.append(wi)
    y = np.concatenate([i["y"][::sub] for i in fit]) > 0.5
    allw = np.concatenate(w)
    pos = allw[y].sum(); neg = allw[~y].sum()
    out, k = [], 0
    for wi in w:
        yi = y[k:k + len(wi)]; k += len(wi)
        wi = wi.copy(); wi[yi] *= neg / pos
        out.append(wi)
    scale = len(allw) / sum(wi.sum() for wi in out)
    return [wi * scale for wi in out]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--tool", default=f"{ROOT}/.build/release/parley-vadtool")
    ap.add_argument("--hidden", default="16,8")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--gap", type=int, default=25, help="fill label gaps up to this many 10 ms frames")
    ap.add_argument("--l2", type=float, default=1e-3)
    ap.add_argument("--subsample", type=int, default=3, help="train on every Nth frame (neighbours are correlated)")
    ap.add_argument("--weights", default="1,0.3,0.5,1.5,1", help="loss share of speech, corpus mixtures, synthetic mixtures, music, noise")
    ap.add_argument("--reuse", action="store_true", help="reuse WORK/items.pkl instead of re-extracting")
    ap.add_argument("--mixtures", type=int, default=400)
    ap.add_argument("--mixer", type=int, default=1, choices=(1, 2),
                    help="1: the shipped model's mixtures; 2: Fillets dialogue speech, reverberation, telephone band, "
                         "Opus round trips, modulated noises, -5..30 dB, 3-12 s (see README.md)")
    ap.add_argument("--music-share", type=float, default=None,
                    help="mixer 2: share of music among the clip backgrounds (default: uniform over clips, mostly music)")
    ap.add_argument("--babble-share", type=float, default=0.0,
                    help="mixer 2: share of mixtures whose background is babble (2-5 reverberant talkers of the split, 10-25 dB under the speech)")
    ap.add_argument("--long-gap-share", type=float, default=0.0,
                    help="mixer 2: share of mixtures with 1-2 pauses of 0.8-3 s inserted into the speech")
    ap.add_argument("--extra-noise", action="store_true",
                    help="mixer 2: synthetic backgrounds also include steady tones switched on and off, and clicks")
    ap.add_argument("--init", help="start from this VADModelWeights.swift (fine-tuning; its shape and standardisation)")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--final", action="store_true", help="train on train+val for the shipped weights")
    ap.add_argument("--out", default=f"{ROOT}/Sources/ParleyVoice/VADModelWeights.swift")
    a = ap.parse_args()
    assert "real-dev" not in a.corpus and "real-dev" not in a.work
    items = load_items(a)
    for i in items:
        i["y"] = fill_gaps(i["y"], a.gap)
    sub = a.subsample
    fit = fit_items(items, a.final)
    X = np.concatenate([i["X"][::sub] for i in fit]); y = np.concatenate([i["y"][::sub] for i in fit])
    w = np.concatenate(frame_weights(fit, a.weights, sub))
    mean = X.mean(0); std = X.std(0) + 1e-3; inv = 1 / std
    Xs = np.clip((X - mean) * inv, -8, 8)
    h1, h2 = (int(v) for v in a.hidden.split(","))
    rng = np.random.default_rng(0)
    model = MLP(NFEAT, h1, h2, rng)
    if a.init:   # fine-tune a written model (e.g. a merge.py mean): its standardisation and weights
        sys.path.insert(0, HERE)
        import merge
        W = merge.load(a.init)
        mean, inv = W["mean"], W["invStd"]
        Xs = np.clip((X - mean) * inv, -8, 8)
        h1, h2 = W["h1"], W["h2"]
        model.p = {"W1": W["W1"].copy(), "b1": W["b1"].copy(), "W2": W["W2"].copy(), "b2": W["b2"].copy(),
                   "W3": W["w3"].copy(), "b3": np.array([W["b3"]])}
    print(f"training on {len(X)} frames ({(y > 0.5).mean():.2f} speech), {h1}-{h2} hidden", flush=True)
    model.train(Xs, y, w, a.epochs, rng, lr=a.lr, l2=a.l2)
    best = None
    for alpha in (0.0, 0.3, 0.5, 0.7):
        ev = evaluate(model, mean, inv, items, alpha)
        vs = [v["F1"] for k, v in ev.items() if k[0] == "val" and k[1] in ("speech",) or (k[0] == "val" and k[1].startswith("synmix"))]
        vf = [v["flagged"] for k, v in ev.items() if k[0] == "val" and k[1] in ("music", "noise")]
        score = float(np.mean(vs)) - float(np.mean(vf))
        print(f"alpha {alpha}: val speech/mix F1 {np.mean(vs):.3f}, val non-speech flagged {np.mean(vf):.3f}")
        if best is None or score > best[0]: best = (score, alpha, ev)
    _, alpha, ev = best
    print(f"chosen output smoothing {alpha}")
    evaluate(model, mean, inv, items, alpha)
    vals = [i for i in items if i["split"] == "val" and i["group"] in ("speech", "synmix")]
    pv = np.concatenate([i["p"] for i in vals]); yv = np.concatenate([i["y"] for i in vals])
    ap, roc = pr_auc(pv, yv)
    best_thr = max(np.arange(0.1, 0.91, 0.05), key=lambda t: 2 * np.sum((pv >= t) & (yv > 0.5)) / (np.sum(pv >= t) + np.sum(yv > 0.5)))
    print(f"val speech+synmix PR-AUC {ap:.3f} ROC-AUC {roc:.3f}, best-F1 threshold {best_thr:.2f}")
    for k, v in ev.items():
        fl = f"flagged {v['flagged']:.3f}" if v["flagged"] is not None else f"P {v['P']:.3f} R {v['R']:.3f} F1 {v['F1']:.3f}"
        print(f"  {k[0]:6s} {k[1]:10s} frames {v['n']:7d}  {fl}")
    worst = sorted(((float(np.mean(i['p'] >= 0.5)), i['name']) for i in items if i['group'] in ('music', 'noise', 'singing', 'human')), reverse=True)[:12]
    print("most flagged non-speech clips:", ", ".join(f"{n} {f:.2f}" for f, n in worst))
    note = (f"{'train+val' if a.final else 'train'} split, {len(X)} frames (every {sub}th), labels' gaps <= {a.gap} frames filled, "
            f"MLP {NFEAT}-{h1}-{h2}-1, L2 {a.l2}, {a.epochs} epochs, output smoothing {alpha}")
    write_swift(a.out, model, mean, inv, alpha, h1, h2, note)
    print("wrote", a.out)


if __name__ == "__main__":
    main()
