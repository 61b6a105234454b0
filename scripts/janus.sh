#!/usr/bin/env bash
# Starts Janus (the Debian package) with a minimal configuration for Parley's rooms: the HTTP
# API on 127.0.0.1:PORT (default 8088, path /janus), no admin API, only the VideoRoom,
# AudioBridge and TextRoom plugins, RTP ports 20000-20200, and room 1234 in each plugin
# (VideoRoom: up to 6 publishers, talking events; AudioBridge: 16 kHz mix, plain-RTP participants
# allowed, talking events from 0.5 s of levels averaging above -40 dBov; TextRoom: the chat of
# `parley join --chat`).
# The configuration is written to a fresh temporary folder; Janus runs in the foreground
# (Ctrl-C stops it).
#
#   bash scripts/janus.sh [PORT]
set -euo pipefail
port="${1:-8088}"
command -v janus >/dev/null || { echo "janus is not installed: sudo apt-get install janus" >&2; exit 1; }
dir="$(mktemp -d /tmp/parley-janus.XXXXXX)"
plugins="$(sed -n 's/^[[:space:]]*plugins_folder = "\([^"]*\)".*/\1/p' /etc/janus/janus.jcfg | head -1)"
transports="$(sed -n 's/^[[:space:]]*transports_folder = "\([^"]*\)".*/\1/p' /etc/janus/janus.jcfg | head -1)"
plugins="${plugins:-/usr/lib/x86_64-linux-gnu/janus/plugins}"
transports="${transports:-/usr/lib/x86_64-linux-gnu/janus/transports}"
# The .so files of folder $1 but those named after it.
others() {
  local folder="$1" keep=()
  shift
  for name in "$@"; do keep+=(-e "$name"); done
  ls "$folder" | grep '\.so$' | grep -v -x "${keep[@]}" | paste -sd, -
}
cat > "$dir/janus.jcfg" <<CFG
general: {
	configs_folder = "$dir"
	plugins_folder = "$plugins"
	transports_folder = "$transports"
	debug_level = 4
	session_timeout = 60
}
media: {
	rtp_port_range = "20000-20200"
}
nat: {
	ice_ignore_list = "vmnet"
}
plugins: {
	disable = "$(others "$plugins" libjanus_videoroom.so libjanus_audiobridge.so libjanus_textroom.so)"
}
transports: {
	disable = "$(others "$transports" libjanus_http.so)"
}
events: {
	broadcast = false
}
loggers: {
	disable = "libjanus_jsonlog.so"
}
CFG
cat > "$dir/janus.transport.http.jcfg" <<CFG
general: {
	json = "plain"
	base_path = "/janus"
	http = true
	ip = "127.0.0.1"
	port = $port
	https = false
}
admin: {
	admin_http = false
	admin_https = false
}
CFG
cat > "$dir/janus.plugin.videoroom.jcfg" <<CFG
room-1234: {
	description = "Parley room"
	publishers = 6
	audiocodec = "opus"
	videocodec = "vp8"
	audiolevel_event = true
}
CFG
cat > "$dir/janus.plugin.textroom.jcfg" <<CFG
general: {
}
room-1234: {
	description = "Parley room"
}
CFG
cat > "$dir/janus.plugin.audiobridge.jcfg" <<CFG
general: {
	local_ip = "127.0.0.1"
}
room-1234: {
	description = "Parley room"
	sampling_rate = 16000
	allow_rtp_participants = true
	audiolevel_event = true
	audio_active_packets = 25
	audio_level_average = 40
}
CFG
echo "janus: API at http://127.0.0.1:$port/janus, configuration in $dir" >&2
exec janus -F "$dir" -o
