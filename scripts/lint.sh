#!/usr/bin/env bash
# Style check: swift-format's rules, configured in .swift-format, over every Swift file.
# The rules run; its layout pass does not (--debug-disable-pretty-print): the code base aligns
# continuation lines under their opening bracket, which swift-format's printer does not do.
# .swift-format still describes the layout (4-space indentation, 140 columns) for `swift format`.
set -euo pipefail
cd "$(dirname "$0")/.."
swift format lint --strict --debug-disable-pretty-print --parallel --recursive \
  Package.swift Sources Tests Benchmarks Examples Tools Fuzz
