#!/usr/bin/env bash
# Runs a command in a network namespace of its own, for the WebRTC tests: the loopback up, and
# a veth pair (v0, v1) with the private address 10.77.0.1/24 on v0, the one interface that ICE
# candidates are gathered on (Janus refuses loopback candidates). Nothing inside reaches or is
# reached from outside the namespace, and fixed ports cannot collide with other tests.
#
#   bash scripts/netns.sh COMMAND [ARG...]
#
# Needs root (unshare -n). The command sees PARLEY_NETNS_INTERFACE=v0 and
# PARLEY_NETNS_ADDRESS=10.77.0.1 in its environment.
set -euo pipefail
if [ "${1:-}" = "--inside" ]; then
  shift
  ip link set lo up
  ip link add v0 type veth peer name v1
  ip addr add 10.77.0.1/24 dev v0
  ip link set v0 up
  ip link set v1 up
  export PARLEY_NETNS_INTERFACE=v0 PARLEY_NETNS_ADDRESS=10.77.0.1
  exec "$@"
fi
exec unshare -n bash "$0" --inside "$@"
