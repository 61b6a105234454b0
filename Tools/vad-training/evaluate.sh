#!/usr/bin/env bash
# Measures the shipped VAD on the figures README.md reports (docs: Tools/vad-training/README.md).
#   bash Tools/vad-training/evaluate.sh SHARED CHECK
# SHARED = the shared material (data/real-dev, data/corpus, tools/); CHECK = a work directory for
# the reserved check packages (singularity-music, openttd-opensfx: downloaded here with
# `apt-get download`, converted, never trained on). Needs a release build of parley and
# parley-vadtool. Prints Markdown tables; writes its CSVs under CHECK/out/DETECTOR.
#   DETECTOR=silero|ten bash Tools/vad-training/evaluate.sh SHARED CHECK
# scores a reference detector (Silero VAD, TEN VAD; reference.py) the same way on the same files:
# its frames for parley detect's, its probabilities after Silero's standard smoother for the
# TalkDetector's segments and live events (no dominant speaker). Default DETECTOR=parley.
# PARLEY_BIN / VADTOOL_BIN override the binaries (default .build/release/parley, parley-vadtool).
# MODEL=live|offline picks parley detect's network (default offline, detect's own default); the
# live events of the corpus conversation always come from the live network.
set -euo pipefail
S=${1:?usage: evaluate.sh SHARED CHECK}; C=${2:?usage: evaluate.sh SHARED CHECK}
S=$(cd "$S" && pwd)  # absolute: the held-out clips are symlinked from inside CHECK
P=${PARLEY_BIN:-.build/release/parley}; T=${VADTOOL_BIN:-.build/release/parley-vadtool}
M="--model ${MODEL:-offline}"
D=${DETECTOR:-parley}; R="python3 $(cd "$(dirname "$0")" && pwd)/reference.py $D"
case $D in parley) TD="the TalkDetector" ;; silero|ten) TD="Silero's smoother" ;;
  *) echo "evaluate.sh: DETECTOR must be parley, silero or ten" >&2; exit 2 ;; esac
EV="python3 $S/tools/vadeval.py"; CO=$S/data/corpus; O=$C/out/$D
mkdir -p "$O" "$C/debs" "$C/x" "$C/sing" "$C/ottd" "$C/heldout" "$C/amb"

# frames OUT FILE.wav...: file,time_s,prob per 10 ms frame.
frames() {
  local out=$1; shift
  if [ "$D" = parley ]; then $P detect $M --format frames "$@" > "$out"; else $R --format frames "$@" > "$out"; fi
}
# segments OUT FILE.wav...: file,start_s,end_s talk segments (the TalkDetector's or the smoother's).
segments() {
  local out=$1; shift
  if [ "$D" = parley ]; then
    $P detect $M --format csv "$@" | awk -F, 'NR > 1 { print $1 "," $3 "," $4 }' > "$out"
    sed -i '1i file,start_s,end_s' "$out"
  else
    $R --format segments "$@" > "$out"
  fi
}

# Reserved check material (once).
if [ ! -s "$C/ottd/ottd_all.wav" ]; then
  (cd "$C/debs" && apt-get download singularity-music openttd-opensfx)
  for d in "$C"/debs/*.deb; do dpkg-deb -x "$d" "$C/x/$(basename "$d" | cut -d_ -f1)"; done
  find "$C/x/singularity-music" -name "*.ogg" | sort | while read -r f; do
    n=$(basename "$f" .ogg | tr -c 'A-Za-z0-9\n' _)
    ffmpeg -nostdin -v error -y -t 60 -i "$f" -ac 1 -af aresample=resampler=soxr -ar 16000 -c:a pcm_s16le "$C/sing/sing_$n.wav"
  done
  # OpenTTD's sound catalogue holds RIFF/WAVE samples back to back: cut them out, join with 0.2 s gaps.
  python3 - "$C" <<'EOF'
import glob, re, struct, sys
c = sys.argv[1]
d = open(glob.glob(f"{c}/x/openttd-opensfx/**/*.cat", recursive=True)[0], "rb").read()
for k, m in enumerate(re.finditer(b"RIFF", d)):
    i = m.start(); size = struct.unpack("<I", d[i + 4:i + 8])[0]
    open(f"{c}/ottd/tmp_{k:03d}.wav", "wb").write(d[i:i + 8 + size])
EOF
  : > "$C/ottd/list.txt"
  for f in "$C"/ottd/tmp_*.wav; do
    ffmpeg -nostdin -v error -y -i "$f" -ac 1 -ar 16000 -af "aresample=resampler=soxr,apad=pad_dur=0.2" -c:a pcm_s16le "${f/tmp_/p_}" 2>/dev/null \
      && echo "file '${f/tmp_/p_}'" >> "$C/ottd/list.txt"
  done
  ffmpeg -nostdin -v error -y -f concat -safe 0 -i "$C/ottd/list.txt" -c:a pcm_s16le "$C/ottd/ottd_all.wav"
  rm -f "$C"/ottd/tmp_*.wav "$C"/ottd/p_*.wav "$C/ottd/list.txt"
fi
# Real ambient recordings held out of training and validation (real-ambient/blanket, no talk).
for f in "$S"/data/real-ambient/blanket/*.ogg; do
  [ -s "$C/amb/$(basename "$f" .ogg).wav" ] || ffmpeg -nostdin -v error -y -i "$f" -ac 1 -ar 16000 -c:a pcm_s16le "$C/amb/$(basename "$f" .ogg).wav"
done
# Held-out corpus clips (validation sources of train_spectral.py) and no-speech label files.
for f in "$CO"/music/mu09_*.wav "$CO"/music/mu11_*.wav "$CO"/music/mu12_*.wav "$CO"/noise/no03_*.wav; do
  ln -sf "$f" "$C/heldout/$(basename "$f")"
done
for f in "$C"/sing/*.wav "$C"/ottd/*.wav "$C"/heldout/*.wav "$C"/amb/*.wav; do
  echo "$(basename "$f" .wav),0.000,$(soxi -D "$f"),0" > "${f%.wav}.scv"
done

echo "## 1. real-dev"
frames "$O/realdev.csv" "$S"/data/real-dev/*.wav
$EV --data "$S/data/real-dev" --pred "probs:$O/realdev.csv" --name "$D" | grep -E "^\|"
if [ "$D" = parley ]; then echo "### talk segments (parley detect --format csv, after the TalkDetector)"
else echo "### talk segments ($D, after Silero's smoother)"; fi
segments "$O/realdev.segs.csv" "$S"/data/real-dev/*.wav
$EV --data "$S/data/real-dev" --pred "segments:$O/realdev.segs.csv" --name talk | grep -E "^\| talk"

echo "## 1b. real-dev at other levels (32-bit float WAV, so +10 dB does not clip): frames at the default threshold"
for g in -20 -10 10; do
  mkdir -p "$C/level$g"
  for f in "$S"/data/real-dev/*.wav; do
    b=$(basename "$f" .wav)
    [ -s "$C/level$g/$b.wav" ] || python3 -c 'import sys, numpy as np; from scipy.io import wavfile
r, x = wavfile.read(sys.argv[1]); wavfile.write(sys.argv[2], r, (x / 32768.0 * 10 ** (float(sys.argv[3]) / 20)).astype(np.float32))' \
      "$f" "$C/level$g/$b.wav" "$g"
    ln -sf "${f%.wav}.scv" "$C/level$g/$b.scv"
  done
  frames "$O/level$g.csv" "$C/level$g"/*.wav
  $EV --data "$C/level$g" --pred "probs:$O/level$g.csv" --name "$D at $g dB" | grep -E "^\| $D"
done

echo "## 2. non-speech not trained on (frames at the default threshold; talking onsets after $TD)"
for set in heldout sing ottd amb; do
  frames "$O/$set.frames.csv" "$C/$set"/*.wav
  segments "$O/$set.segs.csv" "$C/$set"/*.wav
  echo "### $set"
  $EV --data "$C/$set" --pred "probs:$O/$set.frames.csv" --pred "segments:$O/$set.segs.csv" \
    --name frames talk --json > "$O/$set.json"
  python3 - "$O/$set.json" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    mins = r["nonspeech_minutes"]
    print("| %s | %.2f min | flagged %.3f | onsets %d | onsets/min %.2f |"
          % (r["name"], mins, r["pred_speech_frac"], r["pred_segs"], r["pred_segs"] / max(mins, 1e-9)))
EOF
done

echo "## 2b. speech + music/noise mixtures (corpus mix_* folders): recall per SNR at the default threshold"
frames "$O/mix.csv" "$CO"/mix_speech_music/*.wav "$CO"/mix_speech_noise/*.wav
for snr in 20 10 05 00; do
  for kind in music noise; do
    $EV --data "$CO/mix_speech_$kind" --include "snr${snr}dB" --pred "probs:$O/mix.csv" --name x --json > "$O/mix.json"
    r=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("P %.3f R %.3f F1 %.3f" % (r["precision"], r["recall"], r["f1"]))' "$O/mix.json")
    echo "| $snr dB | $kind | $r |"
  done
done

echo "## 3. conversation (corpus scene01)"
SC=$CO/conversation
if [ "$D" = parley ]; then
  $P detect $M --meeting --format csv "$SC"/scene01_spk*.wav > "$O/scene01.segs.csv"
  $T meeting "$SC"/scene01_spk*.wav > "$O/scene01.events.jsonl"
  echo "### segments (parley detect --meeting --format csv: segment starts are back-dated to the onset)"
else
  # one participant per speaker file, named by its stem, as parley detect --meeting names them
  $R --format segments "$SC"/scene01_spk*.wav \
    | awk -F, 'NR == 1 { print "file,participant,start_s,end_s"; next } { print "scene01," $1 "," $2 "," $3 }' \
    > "$O/scene01.segs.csv"
  $R --format events "$SC"/scene01_spk*.wav > "$O/scene01.events.jsonl"
  echo "### segments ($D, after Silero's smoother: segment starts at the first frame over 0.5)"
fi
python3 "$S/tools/meetingeval.py" --truth "$SC/scene01_truth.csv" --distractors "$SC/scene01_distractors.csv" \
  --segments "$O/scene01.segs.csv" || true
if [ "$D" = parley ]; then
  echo "### live events (parley-vadtool meeting: event times as a live UI sees them, and the dominant speaker)"
else
  echo "### live events ($D, Silero's smoother run live: event times as a live UI sees them; no dominant speaker)"
fi
python3 "$S/tools/meetingeval.py" --truth "$SC/scene01_truth.csv" --distractors "$SC/scene01_distractors.csv" \
  --events "$O/scene01.events.jsonl" || true
