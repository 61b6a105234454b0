#!/usr/bin/env bash
# The call and WebRTC suites under ThreadSanitizer: libnice's thread, the DTLS and SCTP
# callbacks, the call's own threads and the locks between them. Builds the tests with
# --sanitize=thread in .build/tsan (the plain build stays as it is) and fails on any report, so
# a data race fails CI even where the suites pass.
#   bash scripts/tsan.sh
set -euo pipefail
cd "$(dirname "$0")/.."
suites="ParleyCallTests|ParleyWebRTCTests|ParleySCTPTests|ParleyICETests|ParleyDTLSTests"
log=$(mktemp)
reports=$(mktemp -d)
trap 'rm -rf "$log" "$reports"' EXIT
swift build --scratch-path .build/tsan --build-tests --sanitize=thread 2>&1 | tee "$log"
if grep -q "warning:" "$log"; then
  echo "tsan.sh: the sanitized build has warnings" >&2
  exit 1
fi
# The sanitizer slows the code 5-15 times, so a test that keeps wall-clock deadlines may miss
# one here (a resend asked for too late); such failures are shown but do not fail the step,
# which is about races: every report does.
status=0
TSAN_OPTIONS="log_path=$reports/report halt_on_error=0 second_deadlock_stack=1" \
  swift test --scratch-path .build/tsan --skip-build --disable-xctest --no-parallel --sanitize=thread \
  --filter "$suites" || echo "tsan.sh: some tests failed under the sanitizer's slowdown (not a race)" >&2
if compgen -G "$reports/report*" >/dev/null; then
  cat "$reports"/report* >&2
  echo "tsan.sh: ThreadSanitizer reported $(cat "$reports"/report* | grep -c '^WARNING: ThreadSanitizer') problem(s)" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "tsan.sh: $suites ran with no ThreadSanitizer report"
exit "$status"
