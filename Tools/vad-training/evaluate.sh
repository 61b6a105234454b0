#!/usr/bin/env bash
# Measures the shipped VAD against issue 3's "Done when" list (the figures in README.md).
#   bash Tools/vad-training/evaluate.sh SHARED CHECK
# SHARED = the shared material (data/real-dev, data/corpus, tools/); CHECK = a work directory for
# the reserved check packages (singularity-music, openttd-opensfx: downloaded here with
# `apt-get download`, converted, never trained on). Needs a release build of parley and
# parley-vadtool. Prints Markdown tables; writes its CSVs under CHECK/out.
set -euo pipefail
S=${1:?usage: evaluate.sh SHARED CHECK}; C=${2:?usage: evaluate.sh SHARED CHECK}
S=$(cd "$S" && pwd)  # absolute: the held-out clips are symlinked from inside CHECK
P=.build/release/parley; T=.build/release/parley-vadtool
EV="python3 $S/tools/vadeval.py"; CO=$S/data/corpus
mkdir -p "$C/out" "$C/debs" "$C/x" "$C/sing" "$C/ottd" "$C/heldout"

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
# Held-out corpus clips (validation sources of train.py) and no-speech label files.
for f in "$CO"/music/mu09_*.wav "$CO"/music/mu11_*.wav "$CO"/music/mu12_*.wav "$CO"/noise/no03_*.wav; do
  ln -sf "$f" "$C/heldout/$(basename "$f")"
done
for f in "$C"/sing/*.wav "$C"/ottd/*.wav "$C"/heldout/*.wav; do
  echo "$(basename "$f" .wav),0.000,$(soxi -D "$f"),0" > "${f%.wav}.scv"
done

echo "## 1. real-dev"
$P detect --format frames "$S"/data/real-dev/*.wav > "$C/out/realdev.csv"
$EV --data "$S/data/real-dev" --pred "probs:$C/out/realdev.csv" --name parley | grep -E "^\|"
echo "### talk segments (parley detect --format csv, after the TalkDetector)"
$P detect --format csv "$S"/data/real-dev/*.wav | awk -F, 'NR > 1 { print $1 "," $3 "," $4 }' > "$C/out/realdev.segs.csv"
sed -i '1i file,start_s,end_s' "$C/out/realdev.segs.csv"
$EV --data "$S/data/real-dev" --pred "segments:$C/out/realdev.segs.csv" --name talk | grep -E "^\| talk"

echo "## 2. non-speech not trained on (frames at the default threshold; talking onsets after the TalkDetector)"
for set in heldout sing ottd; do
  $P detect --format frames "$C/$set"/*.wav > "$C/out/$set.frames.csv"
  $P detect --format csv "$C/$set"/*.wav | awk -F, 'NR > 1 { print $1 "," $3 "," $4 }' > "$C/out/$set.segs.csv"
  sed -i '1i file,start_s,end_s' "$C/out/$set.segs.csv"
  echo "### $set"
  $EV --data "$C/$set" --pred "probs:$C/out/$set.frames.csv" --pred "segments:$C/out/$set.segs.csv" \
    --name frames talk --json > "$C/out/$set.json"
  python3 - "$C/out/$set.json" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    mins = r["nonspeech_minutes"]
    print("| %s | %.2f min | flagged %.3f | onsets %d | onsets/min %.2f |"
          % (r["name"], mins, r["pred_speech_frac"], r["pred_segs"], r["pred_segs"] / max(mins, 1e-9)))
EOF
done

echo "## 2b. speech + music/noise mixtures (corpus mix_* folders): recall per SNR at the default threshold"
$P detect --format frames "$CO"/mix_speech_music/*.wav "$CO"/mix_speech_noise/*.wav > "$C/out/mix.csv"
for snr in 20 10 05 00; do
  for kind in music noise; do
    $EV --data "$CO/mix_speech_$kind" --include "snr${snr}dB" --pred "probs:$C/out/mix.csv" --name x --json > "$C/out/mix.json"
    r=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"][0]; print("P %.3f R %.3f F1 %.3f" % (r["precision"], r["recall"], r["f1"]))' "$C/out/mix.json")
    echo "| $snr dB | $kind | $r |"
  done
done

echo "## 3. conversation (corpus scene01)"
SC=$CO/conversation
$P detect --meeting --format csv "$SC"/scene01_spk*.wav > "$C/out/scene01.segs.csv"
$T meeting "$SC"/scene01_spk*.wav > "$C/out/scene01.events.jsonl"
echo "### segments (parley detect --meeting --format csv: segment starts are back-dated to the onset)"
python3 "$S/tools/meetingeval.py" --truth "$SC/scene01_truth.csv" --distractors "$SC/scene01_distractors.csv" \
  --segments "$C/out/scene01.segs.csv" || true
echo "### live events (parley-vadtool meeting: event times as a live UI sees them, and the dominant speaker)"
python3 "$S/tools/meetingeval.py" --truth "$SC/scene01_truth.csv" --distractors "$SC/scene01_distractors.csv" \
  --events "$C/out/scene01.events.jsonl" || true
