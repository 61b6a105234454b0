#!/usr/bin/env bash
# The whole training of the VAD network, resumable: run it again after an interruption and it
# continues where it stopped (gathered audio, mixture shards and per-epoch checkpoints are files).
#   bash Tools/vad-training/run.sh SHARED WORK [SEEDS]
# SHARED = the shared material (its data/corpus); WORK = a work directory; SEEDS default "1 2 3".
# Trains one network per seed (two at a time, one thread each), keeps the seed with the best
# validation score (train_model.py: F1 on the held-out mixtures minus twice the share of
# held-out music and noise frames flagged) as Tools/vad-training/model/spectral-vad.npz and
# writes Sources/ParleyVoice/Generated/SpectralNetworkWeights.swift from it.
set -euo pipefail
S=$(cd "${1:?usage: run.sh SHARED WORK [SEEDS]}" && pwd); W=${2:?usage: run.sh SHARED WORK [SEEDS]}
SEEDS=${3:-1 2 3}
H=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$H/../.." && pwd)
mkdir -p "$W"
[ -x "$ROOT/.build/release/parley-vadtool" ] || (cd "$ROOT" && swift build -c release --product parley-vadtool)
[ -f "$W/wav/.gathered" ] || { bash "$H/gather.sh" "$W" && bash "$H/gather_speech.sh" "$W" && touch "$W/wav/.gathered"; }
[ -f "$W/wav/.gathered-effects" ] || { bash "$H/gather_effects.sh" "$W" && touch "$W/wav/.gathered-effects"; }

python3 "$H/train_spectral.py" prepare --corpus "$S/data/corpus" --real "$S/data" --work "$W" --part 0 --parts 2 &
p0=$!
python3 "$H/train_spectral.py" prepare --corpus "$S/data/corpus" --real "$S/data" --work "$W" --part 1 --parts 2
wait $p0

running=0
for seed in $SEEDS; do
  python3 "$H/train_spectral.py" train --work "$W" --seed "$seed" --out "$W/seed$seed" > "$W/seed$seed.log" 2>&1 &
  running=$((running + 1))
  if [ $running -ge 2 ]; then wait -n; running=$((running - 1)); fi
done
wait

best=$(for seed in $SEEDS; do sort -t$'\t' -k6,6g "$W/seed$seed/log.tsv" | tail -1 | awk -v s="$seed" -F'\t' '{ print $6 "\t" s }'; done \
  | sort -g | tail -1 | cut -f2)
echo "best validation score: seed $best"
mkdir -p "$H/model"
cp "$W/seed$best/best.npz" "$H/model/spectral-vad.npz"
python3 "$H/export_weights.py" "$H/model/spectral-vad.npz"
