#!/usr/bin/env bash
# Builds and runs the libFuzzer targets under Fuzz/targets/<name>/ (see Fuzz/README.md).
#
#   bash Fuzz/run.sh                 # every target, 60 s each
#   bash Fuzz/run.sh --ci            # every target, 90 s shared (what scripts/test.sh runs)
#   bash Fuzz/run.sh --time 300 wav  # one target, 5 minutes
#
# Fails (exit 1) when a target does not build or a run finds a crash, leak, timeout or
# out-of-memory; the crashing input is left in .build/fuzz/<name>/ and its path printed.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=60
ci=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) ci=1 ;;
    --time) shift; seconds="$1" ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
if [ ${#targets[@]} -eq 0 ]; then
  for dir in Fuzz/targets/*/; do targets+=("$(basename "$dir")"); done
fi
# --ci: a total run-time budget (default 90 s) shared by the targets, at least 5 s each,
# so CI time stays bounded as targets are added (the builds, ~5 s per target, overlap the runs).
if [ $ci -eq 1 ]; then
  seconds=$(( ${FUZZ_CI_TOTAL_SECONDS:-90} / ${#targets[@]} ))
  [ $seconds -lt 5 ] && seconds=5
fi

status=0
# Builds one target into .build/fuzz/<name>/fuzzer; leaves "built" or "failed" beside it.
build() {
  local name=$1 dir="Fuzz/targets/$1" out=".build/fuzz/$1"
  mkdir -p "$out"
  if [ ! -f "$dir/main.swift" ] || [ ! -f "$dir/sources.txt" ]; then
    echo "fuzz: $dir needs main.swift and sources.txt" >&2; touch "$out/failed"; return
  fi
  # sources.txt: one path per line, relative to the repository root; '#' starts a comment.
  local sources=() flags=()
  mapfile -t sources < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$dir/sources.txt" | grep -v '^$')
  # flags.txt (optional): extra swiftc flags, e.g. a C module's include path and its library.
  [ -f "$dir/flags.txt" ] && mapfile -t flags < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$dir/flags.txt" | grep -v '^$')
  echo "fuzz: building $name (${#sources[@]} source files)"
  # ld.gold prints harmless "Cannot export local symbol '__asan_...'" lines; hide only those.
  if ! swiftc -sanitize=fuzzer,address -parse-as-library -O -package-name parley -module-name "Fuzz_${name//[^A-Za-z0-9_]/_}" \
        "${flags[@]}" "${sources[@]}" "$dir/main.swift" -o "$out/fuzzer" 2> "$out/build.log"; then
    grep -v "Cannot export local symbol" "$out/build.log" >&2 || true
    echo "fuzz: $name failed to build" >&2; touch "$out/failed"; return
  fi
  grep -v "Cannot export local symbol" "$out/build.log" | grep -E "warning:|error:" >&2 || true
  touch "$out/built"
}

# The targets are built one after another in the background while the built ones run (a
# compile and a fuzzer each keep one core busy), so the builds cost little on top.
for name in "${targets[@]}"; do rm -f ".build/fuzz/$name/built" ".build/fuzz/$name/failed"; done
( for name in "${targets[@]}"; do build "$name"; done ) &
builder=$!
for name in "${targets[@]}"; do
  dir="Fuzz/targets/$name"
  out=".build/fuzz/$name"
  while [ ! -e "$out/built" ] && [ ! -e "$out/failed" ]; do
    kill -0 "$builder" 2>/dev/null || [ -e "$out/built" ] || [ -e "$out/failed" ] || { echo "fuzz: the build of $name stopped" >&2; break; }
    sleep 0.2
  done
  if [ ! -e "$out/built" ]; then status=1; continue; fi
  # New inputs go to a scratch corpus under .build; the seed corpus in the repo is only read.
  rm -rf "$out/corpus"; mkdir -p "$out/corpus" "$dir/corpus"
  echo "fuzz: running $name for ${seconds}s on $(ls "$dir/corpus" | wc -l) seeds"
  if ! "$out/fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 -artifact_prefix="$out/" "$out/corpus" "$dir/corpus" > "$out/run.log" 2>&1; then
    tail -n 60 "$out/run.log" >&2
    echo "fuzz: $name FAILED; input saved as: $(ls -t "$out"/crash-* "$out"/leak-* "$out"/timeout-* "$out"/oom-* 2>/dev/null | head -1)" >&2
    status=1; continue
  fi
  grep -E "stat::number_of_executed_units|DONE" "$out/run.log" | tr '\n' ' ' | sed "s/^/fuzz: $name ok: /"; echo
done
wait "$builder"
exit $status
