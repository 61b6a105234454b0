#!/usr/bin/env bash
# Memory of `parley join` over a long VideoRoom call: starts Janus (scripts/janus.sh) on a
# free port, runs three release `parley join` (SampleMedia's conversation files looped to
# MINUTES minutes, carlo also sending SampleMedia's video) in room 1234, and samples each
# process's resident memory (VmRSS) every 10 s into OUT/rss.tsv; prints the first sample after
# start-up (20 s), the last, and each participant's final report.
#
#   bash scripts/janus-soak.sh [MINUTES] [OUT]     (defaults: 5, /tmp/parley-janus-soak)
set -euo pipefail
minutes="${1:-5}"; out="${2:-/tmp/parley-janus-soak}"
root="$(cd "$(dirname "$0")/.." && pwd)"
swift build -c release --product parley --package-path "$root" >/dev/null
parley="$root/.build/release/parley"
mkdir -p "$out"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
bash "$root/scripts/janus.sh" "$port" > "$out/janus.log" 2>&1 &
janus_pid=$!
trap 'kill $janus_pid 2>/dev/null; pkill -P $janus_pid 2>/dev/null || true' EXIT
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$port/janus/info" >/dev/null && break; sleep 0.2; done
repeats=$(( (minutes * 60 + 15) / 16 ))
pids=()
for n in reader carlo armelle; do
  sox $(for _ in $(seq "$repeats"); do echo "$root/SampleMedia/conversation/$n.wav"; done) "$out/$n.wav"
  extra=(); [ "$n" = carlo ] && extra=(--video "$root/SampleMedia/video/sample.y4m")
  "$parley" join --janus "http://127.0.0.1:$port/janus" --room 1234 --name "$n" --audio "$out/$n.wav" \
    --no-tui --wait-for 3 --output "$out/$n-mix.wav" "${extra[@]}" > "$out/$n.out" 2>&1 &
  pids+=($!)
done
echo "t_s reader_kb carlo_kb armelle_kb" > "$out/rss.tsv"
t=0
while kill -0 "${pids[@]}" 2>/dev/null; do
  line="$t"
  for p in "${pids[@]}"; do line="$line $(awk '/VmRSS/{print $2}' /proc/$p/status 2>/dev/null || echo -)"; done
  echo "$line" >> "$out/rss.tsv"; sleep 10; t=$((t + 10))
done
wait "${pids[@]}" || true
echo "resident memory, kB (t_s reader carlo armelle):"
awk '$1 == 20' "$out/rss.tsv"
grep -v ' -' "$out/rss.tsv" | tail -1
for n in reader carlo armelle; do echo "== $n"; tail -6 "$out/$n.out"; done
