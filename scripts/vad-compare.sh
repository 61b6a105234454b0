#!/usr/bin/env bash
# Compares the VAD of two builds on SampleMedia (and real-dev, when SHARED is given):
#   bash scripts/vad-compare.sh BEFORE_BIN AFTER_BIN [SHARED]
# BEFORE_BIN and AFTER_BIN hold release builds of parley and parley-vadtool. At 16 kHz, the
# rate the network was trained at, the network inputs and probabilities (parley-vadtool
# features, raw float32) and parley detect's frames and segments must be the same byte for
# byte: the script fails otherwise. At 8 and 48 kHz (SampleMedia converted with sox) it prints
# the talk segments that differ. Needs sox.
set -euo pipefail
A=${1:?usage: vad-compare.sh BEFORE_BIN AFTER_BIN [SHARED]}; B=${2:?usage: vad-compare.sh BEFORE_BIN AFTER_BIN [SHARED]}
cd "$(dirname "$0")/.."
W=$(mktemp -d); trap 'rm -rf "$W"' EXIT
files16=$(ls SampleMedia/*.wav SampleMedia/*/*.wav | grep -v 48k)
if [ $# -ge 3 ]; then files16="$files16 $(ls "$3"/data/real-dev/*.wav)"; fi
mkdir -p "$W/a" "$W/b" "$W/8" "$W/48"
"$A/parley-vadtool" features "$W/a" $files16
"$B/parley-vadtool" features "$W/b" $files16
diff -r -q "$W/a" "$W/b"
echo "16 kHz network inputs and probabilities: $(ls "$W/a" | wc -l) files, $(cat "$W"/a/*.f32 | wc -c) bytes, identical"
for fmt in frames csv; do
  "$A/parley" detect --format $fmt $files16 > "$W/a.$fmt" 2>/dev/null
  "$B/parley" detect --format $fmt $files16 > "$W/b.$fmt" 2>/dev/null
  cmp "$W/a.$fmt" "$W/b.$fmt"
  echo "16 kHz parley detect --format $fmt: $(($(wc -l < "$W/a.$fmt") - 1)) lines, identical"
done
for f in SampleMedia/conversation/*.wav SampleMedia/conversation-mix.wav SampleMedia/speech/speech-16k.wav \
         SampleMedia/music/*.wav SampleMedia/noise/*.wav; do
  sox "$f" -r 8000 "$W/8/$(basename "$f")" rate -v
  sox "$f" -r 48000 "$W/48/$(basename "$f")" rate -v
done
cp SampleMedia/speech/speech-48k.wav "$W/48/"
for r in 8 48; do
  "$A/parley" detect --format csv "$W/$r"/*.wav > "$W/a$r.csv" 2>/dev/null
  "$B/parley" detect --format csv "$W/$r"/*.wav > "$W/b$r.csv" 2>/dev/null
  echo "$r kHz talk segments: $(($(wc -l < "$W/a$r.csv") - 1)) before, $(($(wc -l < "$W/b$r.csv") - 1)) after; differing (< before, > after):"
  diff "$W/a$r.csv" "$W/b$r.csv" || true
done
