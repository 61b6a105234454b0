#!/usr/bin/env bash
# Recreates every file in SampleMedia/ from Debian packages (fetched with `apt-get download`,
# never installed) and from generators (ffmpeg's testsrc2, a seeded noise generator).
# Needs: apt-get (Debian 12 archive), dpkg-deb, sox, ffmpeg, python3 with numpy.
# CI does not run this: the files it produced are committed. See README.md for sources/licences.
#
#   bash SampleMedia/make_samples.sh        # rewrites SampleMedia/ in place
set -euo pipefail
out="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

pkgs="pocketsphinx-testdata asterisk-prompt-fr-armelle asterisk-core-sounds-it-wav
      fretsonfire-songs-sectoid sonic-pi-samples"
# Exact versions used for the committed files (Debian 12 "bookworm"):
#   pocketsphinx-testdata 0.8+5prealpha+1-15, asterisk-prompt-fr-armelle 20070613-2.2,
#   asterisk-core-sounds-it-wav 1.6.1-1, fretsonfire-songs-sectoid 1.dfsg-3.1,
#   sonic-pi-samples 3.2.2~repack-8
apt-get download $pkgs >/dev/null
for deb in *.deb; do name="${deb%%_*}"; mkdir -p "x/$name"; dpkg-deb -x "$deb" "x/$name"; done

ps=x/pocketsphinx-testdata/usr/share/pocketsphinx/test/data/librivox
fr=x/asterisk-prompt-fr-armelle/usr/share/asterisk/sounds/fr
it=x/asterisk-core-sounds-it-wav/usr/share/asterisk/sounds/it_IT_m_Carlo
ff=x/fretsonfire-songs-sectoid/usr/share/games/fretsonfire/data/songs/sectoid
sp=x/sonic-pi-samples/usr/share/sonic-pi/samples

rm -rf "$out/speech" "$out/conversation" "$out/music" "$out/noise" "$out/video"
mkdir -p "$out/speech" "$out/conversation" "$out/music" "$out/noise" "$out/video"

# 16-bit mono WAV at rate $3 from $1, optional sox effects after. `rate -v -s` is sox's
# very-high-quality band-limited (linear-phase) resampler; `dither -s` on the 16-bit output.
conv() { local src="$1" dst="$2" rate="$3"; shift 3
  sox -V1 "$src" -e signed-integer -b 16 -c 1 "$dst" remix - "$@" rate -v -s "$rate" dither -s; }

# Speech: LibriVox excerpts as shipped by pocketsphinx-testdata (16 kHz originals).
conv "$ps/sense_and_sensibility_01_austen_64kb-0920.wav" "$out/speech/speech-16k.wav" 16000
# No permissive speech recorded at >= 44.1 kHz was found among the candidates, so the 48 kHz
# file is a band-limited upsample of a 16 kHz recording: it has no energy above 8 kHz.
conv "$ps/sense_and_sensibility_01_austen_64kb-0870.wav" "$out/speech/speech-48k.wav" 48000 trim 0 4.0 fade t 0 4.0 0.05

# Music (instrumental; no permissive music with vocals was found): 3 s clips.
conv "$ff/Feelings/song.ogg" "$out/music/sectoid-feelings.wav" 16000 trim 60 3.0 fade t 0.05 3.0 0.05
conv "$ff/Metal madness/song.ogg" "$out/music/sectoid-metal-madness.wav" 16000 trim 30 3.0 fade t 0.05 3.0 0.05

# Noise and effects (CC0, freesound.org via sonic-pi-samples): 3 s clips.
conv "$sp/vinyl_hiss.flac" "$out/noise/vinyl-hiss.wav" 16000 trim 1 3.0
conv "$sp/perc_door.flac" "$out/noise/door.wav" 16000 pad 0.1 0.45
conv "$sp/loop_3d_printer.flac" "$out/noise/3d-printer.wav" 16000 trim 0 3.0

# Conversation: utterances converted to 16 kHz, then placed, levelled and mixed by Python.
mkdir -p utt
conv "$ps/sense_and_sensibility_01_austen_64kb-0880.wav" utt/reader-1.wav 16000
conv "$ps/sense_and_sensibility_01_austen_64kb-0930.wav" utt/reader-2.wav 16000
conv "$fr/hello-world.gsm" utt/armelle-1.wav 16000
conv "$fr/queue-thankyou.gsm" utt/armelle-2.wav 16000
conv "$it/auth-thankyou.wav" utt/carlo-backchannel.wav 16000
conv "$it/conf-placeintoconf.wav" utt/carlo-1.wav 16000
python3 - "$out" <<'PY'
import sys, wave, numpy as np
out = sys.argv[1]
SR, LENGTH = 16000, 16.0
# (participant, utterance file, start second). carlo's 0.55 s "grazie" at 2.0 s is the
# back-channel inside reader's turn; carlo's turn at 5.5 s starts before armelle finishes
# (the overlap).
placement = [
    ("reader", "utt/reader-1.wav", 0.40),
    ("carlo", "utt/carlo-backchannel.wav", 2.00),
    ("armelle", "utt/armelle-1.wav", 4.00),
    ("carlo", "utt/carlo-1.wav", 5.50),
    ("reader", "utt/reader-2.wav", 8.60),
    ("armelle", "utt/armelle-2.wav", 12.60),
]
def read(p):
    with wave.open(p) as w:
        assert w.getframerate() == SR and w.getnchannels() == 1 and w.getsampwidth() == 2
        return np.frombuffer(w.readframes(w.getnframes()), np.int16).astype(np.float64) / 32768
def write(p, x):
    y = np.clip(np.round(x * 32768), -32768, 32767).astype('<i2')
    with wave.open(p, "wb") as w:
        w.setnchannels(1); w.setsampwidth(2); w.setframerate(SR); w.writeframes(y.tobytes())
FRAME = SR // 100          # 10 ms
def frame_db(x):
    n = len(x) // FRAME
    r = np.sqrt(np.mean(x[:n * FRAME].reshape(n, FRAME) ** 2, axis=1) + 1e-20)
    return 20 * np.log10(r)
def speech_runs(x):
    # Truth rule: a 10 ms frame of an utterance is speech when its level is within 35 dB of
    # the utterance's loudest frame and above -55 dBFS; gaps under 250 ms are bridged; runs
    # under 40 ms dropped. Times are frame edges relative to the utterance start.
    db = frame_db(x)
    on = (db > db.max() - 35) & (db > -55)
    runs, i = [], 0
    while i < len(on):
        if on[i]:
            j = i
            while j < len(on) and on[j]: j += 1
            runs.append([i, j]); i = j
        else: i += 1
    merged = []
    for r in runs:
        if merged and r[0] - merged[-1][1] < 25: merged[-1][1] = r[1]
        else: merged.append(r)
    return [(a / 100, b / 100) for a, b in merged if b - a >= 4]
names = sorted({p for p, _, _ in placement})
n = int(LENGTH * SR)
tracks = {p: np.zeros(n) for p in names}
truth = []
for p, f, start in placement:
    x = read(f)
    db = frame_db(x)
    active = x[:len(db) * FRAME].reshape(len(db), FRAME)[db > db.max() - 35]
    x = x * (10 ** (-20 / 20) / np.sqrt(np.mean(active ** 2)))   # active level -20 dBFS
    x *= min(1.0, 0.7 / np.max(np.abs(x)))                       # peak at most -3 dBFS
    s = int(round(start * SR))
    tracks[p][s:s + len(x)] += x
    truth += [(p, round(start + a, 2), round(start + b, 2)) for a, b in speech_runs(x)]
rng = np.random.default_rng(20261130)
mix = np.zeros(n)
for k, p in enumerate(names):
    # Low room noise (not digital silence): white noise through a one-pole low-pass, -60 dBFS.
    w = rng.standard_normal(n)
    lp = np.empty(n); acc = 0.0
    for i in range(n): acc = 0.9 * acc + 0.1 * w[i]; lp[i] = acc
    lp *= 10 ** (-60 / 20) / np.sqrt(np.mean(lp ** 2))
    tracks[p] += lp
    write(f"{out}/conversation/{p}.wav", tracks[p])
    mix += tracks[p]
mix *= min(1.0, 0.9 / np.max(np.abs(mix)))
write(f"{out}/conversation-mix.wav", mix)
with open(f"{out}/conversation-truth.csv", "w") as fh:
    fh.write("participant,start_s,end_s\n")
    for p, a, b in sorted(truth, key=lambda t: (t[1], t[0])):
        fh.write(f"{p},{a:.2f},{b:.2f}\n")
PY

# Video: 15 frames (0.5 s) of ffmpeg's testsrc2 pattern, 320x240 I420, 30 fps. Length is
# limited by the 5 MB budget (each frame is 115,200 bytes raw).
ffmpeg -v error -f lavfi -i "testsrc2=size=320x240:rate=30" -frames:v 15 -pix_fmt yuv420p \
  -f yuv4mpegpipe -y "$out/video/sample.y4m"

du -cb "$out"/speech/* "$out"/conversation/* "$out"/conversation-* "$out"/music/* "$out"/noise/* "$out"/video/* | tail -1
