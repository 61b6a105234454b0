#!/usr/bin/env bash
# The main job on bundled SampleMedia: who talked when in a three-person conversation.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product parley
mkdir -p .build/demo
.build/release/parley detect --meeting --name conversation \
  --timeline .build/demo/conversation.svg SampleMedia/conversation/*.wav
echo
echo "Truth (SampleMedia/conversation-truth.csv):"
cat SampleMedia/conversation-truth.csv
echo
echo "Timeline: .build/demo/conversation.svg"
