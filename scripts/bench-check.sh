#!/usr/bin/env bash
# Benchmark regression check: builds parley-bench in release, runs the rows that
# Benchmarks/thresholds.txt names (with their baselines, in the same run) and prints each ratio
# or allocation count beside its stored maximum. A failing run is repeated once, since a
# shared machine's speed drifts between rows; exits 1 when both runs are past a maximum.
#   bash scripts/bench-check.sh [--samples N]     (default 7 samples a row; medians are used)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product parley-bench 2>&1 | tail -1
samples=7
if [ "${1:-}" = "--samples" ]; then samples=${2:?--samples needs a number}; fi
for attempt in 1 2; do
  if .build/release/parley-bench --check Benchmarks/thresholds.txt --samples "$samples"; then exit 0; fi
  [ $attempt = 1 ] && echo "bench-check: a figure is past its maximum; measuring again" >&2
done
echo "bench-check: regressed in two runs (above)" >&2
exit 1
