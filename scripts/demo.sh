#!/usr/bin/env bash
# The main job on bundled SampleMedia (grows as features land).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
swift build -c release --product parley
.build/release/parley --help
