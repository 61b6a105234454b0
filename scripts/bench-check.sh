#!/usr/bin/env bash
# Benchmark regression check: builds parley-bench in release, runs the rows that
# Benchmarks/thresholds.txt names (with their baselines, in the same run) and prints each ratio
# or allocation count beside its stored maximum. A failing run is repeated once, since a
# shared machine's speed drifts between rows; exits 1 when the same figure is past its maximum
# in both runs (a regression shows in its row every time; a slow moment of the machine in one
# row of one run does not).
#   bash scripts/bench-check.sh [--samples N]     (default 7 samples a row; medians are used)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product parley-bench 2>&1 | tail -1
samples=7
if [ "${1:-}" = "--samples" ]; then samples=${2:?--samples needs a number}; fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for attempt in 1 2; do
  if .build/release/parley-bench --check Benchmarks/thresholds.txt --samples "$samples" | tee "$out/$attempt"; then exit 0; fi
  awk '$NF == "REGRESSED" { print $1, $2 }' "$out/$attempt" | sort > "$out/$attempt.past"
  if [ ! -s "$out/$attempt.past" ]; then
    echo "bench-check: parley-bench failed (above)" >&2
    exit 1
  fi
  [ $attempt = 1 ] && echo "bench-check: a figure is past its maximum; measuring again" >&2
done
both=$(comm -12 "$out/1.past" "$out/2.past")
if [ -z "$both" ]; then
  echo "bench-check: no figure was past its maximum in both runs" >&2
  exit 0
fi
echo "bench-check: past its maximum in both runs: $both" >&2
exit 1
