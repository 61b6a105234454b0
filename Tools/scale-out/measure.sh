#!/usr/bin/env bash
# Throughput of dask_detect.py with two local workers against one `parley detect --jobs 2` on
# the same list, interleaved, three runs each (release build).
#   bash Tools/scale-out/measure.sh [FILES]     (default 400 links to SampleMedia's speech)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd); N=${1:-400}
(cd "$ROOT" && swift build -c release --product parley >/dev/null)
P=$ROOT/.build/release/parley
T=$(mktemp -d); trap 'kill -9 $pids 2>/dev/null || true; rm -rf "$T"' EXIT
for i in $(seq 1 "$N"); do
  src=$ROOT/SampleMedia/speech/speech-16k.wav; [ $((i % 2)) = 0 ] && src=$ROOT/SampleMedia/conversation/reader.wav
  ln -s "$src" "$T/r$i.wav"; echo "$T/r$i.wav"
done > "$T/list.txt"
port=$((30000 + RANDOM % 20000))
dask scheduler --host 127.0.0.1 --port $port --no-dashboard >"$T/s.log" 2>&1 & pids=$!
sleep 3
for w in 1 2; do dask worker tcp://127.0.0.1:$port --nthreads 1 --no-nanny --no-dashboard >"$T/w$w.log" 2>&1 & pids="$pids $!"; done
sleep 5
secs() { local a b; a=$(date +%s.%N); "$@" 2>/dev/null || true; b=$(date +%s.%N); echo "$b - $a" | bc; }
for run in 1 2 3; do
  rm -rf "$T/o1" "$T/o2"
  d=$(secs python3 "$ROOT/Tools/scale-out/dask_detect.py" --scheduler tcp://127.0.0.1:$port --files-from "$T/list.txt" \
        --output-dir "$T/o1" --format json --batch 25 --parley "$P")
  j=$(secs "$P" detect --jobs 2 --format json --files-from "$T/list.txt" --output-dir "$T/o2")
  echo "run $run: dask 2 workers $d s, parley detect --jobs 2 $j s, ratio $(echo "scale=3; $j / $d" | bc)"
done
