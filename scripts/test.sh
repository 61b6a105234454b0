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

swift test --skip-build --parallel

# The WebRTC tests with Janus (and a browser), in a network namespace of their own, since Janus
# refuses loopback ICE candidates (needs root: unshare -n).
bash scripts/netns.sh swift test --skip-build --filter "BrowserInteropTests|JanusWebRTCTests"

if [ -x Fuzz/run.sh ]; then
  bash Fuzz/run.sh --ci
fi
