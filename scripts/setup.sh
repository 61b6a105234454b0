#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages Parley needs to build, test and benchmark, if missing.
# Safe to run again: it only calls apt-get when a package is absent. Needs root (or sudo).
set -euo pipefail

packages=(
  pkg-config
  # libraries the package links
  libopus-dev libvpx-dev libasound2-dev libasound2-plugins libv4l-dev libsndfile1-dev libavformat-dev libavcodec-dev libswresample-dev libavutil-dev libsrtp2-dev libnice-dev libssl-dev libusrsctp-dev
  # benchmark-only baselines
  libwebrtc-audio-processing-dev libspeexdsp-dev libsoxr-dev
  # interoperability peers and media tools used by tests
  gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad ffmpeg sox
  # the CPU hog beside a call in the real-time tests
  stress-ng
  # the media server the Janus client tests run against
  janus
  # a browser peer for the WebRTC tests (headless Chromium running janus.js), iproute2 for their network namespace
  chromium libjs-janus-gateway iproute2
  # /usr/bin/time for memory measurements
  time
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# numpy for the check that the VAD network's generated weights match their checkpoint.
if ! python3 -c "import numpy" 2>/dev/null; then
  echo "setup: installing numpy for python3" >&2
  python3 -m pip install -q numpy
fi

# aiortc, an independent WebRTC peer (ICE, DTLS, SCTP, DCEP) for the data-channel interoperability test.
if ! python3 -c "import aiortc" 2>/dev/null; then
  echo "setup: installing aiortc for python3" >&2
  python3 -m pip install -q aiortc
fi

# Dask distributed for the optional scale-out driver and its test (Tools/scale-out/).
if ! python3 -c "import distributed" 2>/dev/null; then
  echo "setup: installing Tools/scale-out/requirements.txt for python3" >&2
  python3 -m pip install -q -r "$(dirname "$0")/../Tools/scale-out/requirements.txt"
fi
