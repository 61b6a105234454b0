#!/usr/bin/env bash
# The test command: a warning-free build, the test suite, and short fuzz runs of the parsers.
set -euo pipefail
cd "$(dirname "$0")/.."

# What the build and the tests need (installs only what is missing; quick when all is there).
bash scripts/setup.sh

# A build that prints a warning fails here: the package builds warning-free.
# The debug configuration (testable imports, .build/debug/parley for the CLI tests) compiled
# with -O: the DSP, the jitter scenarios and the parley runs the CLI tests make are several
# times faster than at -Onone, which keeps the suite within CI's time on 2 cores.
log=$(mktemp)
swift build --build-tests -Xswiftc -O 2>&1 | tee "$log"
if grep -E "warning:" "$log" | grep -v "^warning: 'parley': found .* file(s) which are unhandled" >/dev/null; then
  echo "test.sh: the build printed warnings (above); fix them" >&2
  exit 1
fi
rm -f "$log"

# The VAD network's weights are generated: the Swift file must be what its checkpoint gives.
python3 Tools/vad-training/export_weights.py Tools/vad-training/model/spectral-vad.npz --check
python3 Tools/vad-training/export_weights.py Tools/vad-training/model/spectral-vad-offline.npz --name offline --check

# The tests, in two passes. Those tagged .realTime (see Tests/*/Tags.swift) run parley
# processes, Janus, GStreamer and ffmpeg peers, sockets and clocked devices in wall-clock time;
# they run one at a time after the rest. Beside the rest they would not: each blocks one of the
# test pool's threads (as many as the cores) while its processes run, and the CPU-heavy tests
# around it starve those processes.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SWT_EXPERIMENTAL_EVENT_STREAM_FIELDS_ENABLED=1 "$(swift build --show-bin-path)/ParleyPackageTests.xctest" \
  --testing-library swift-testing --list-tests \
  --experimental-event-stream-output "$tmp/tests.jsonl" --experimental-event-stream-version 0 >"$tmp/tests.txt"
realtime=$(python3 scripts/realtime-tests.py "$tmp/tests.jsonl" "$tmp/tests.txt")
# Suites that run only inside scripts/netns.sh's namespace (they skip themselves elsewhere).
webrtc="BrowserInteropTests|BrowserCallTests|JanusWebRTCTests|RoomsOverWebRTCTests|JoinRoomExampleTests|JoinOverWebRTCTests|RoomChatTests|ChatBrowserTests|JoinChatTests|CallChatBrowserTests"
status=0
swift test --skip-build --disable-xctest --parallel --skip "$realtime" 2>&1 | tee "$tmp/rest.log" || status=1
swift test --skip-build --disable-xctest --no-parallel --filter "$realtime" 2>&1 | tee "$tmp/realtime.log" || status=1
# Every test ran in one of the passes.
ran=$(cat "$tmp/rest.log" "$tmp/realtime.log" | sed -nE 's/.*Test run with ([0-9]+) tests?.*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
total=$(grep -c . "$tmp/tests.txt")
echo "test.sh: $ran of $total tests ran (real-time ones apart)"
if [ "$ran" -lt "$total" ]; then
  echo "test.sh: the two passes ran $ran tests, the package has $total" >&2
  status=1
fi
# The WebRTC tests with a browser and Janus, in a network namespace of their own
# (scripts/netns.sh): Janus refuses loopback ICE candidates. Outside it they are skipped.
if unshare -n true 2>/dev/null; then
  bash scripts/netns.sh swift test --skip-build --disable-xctest --no-parallel --filter "$webrtc" 2>&1 | tee "$tmp/webrtc.log" || status=1
else
  echo "test.sh: unshare -n is not permitted here (needs root): the WebRTC tests in a network namespace are skipped" >&2
fi
[ "$status" -eq 0 ] || exit 1

if [ -x Fuzz/run.sh ]; then
  bash Fuzz/run.sh --ci
fi
