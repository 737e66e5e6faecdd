#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Run a test program inside a network namespace of its own that holds a
# veth pair (no addresses: droce's DPDK ports own both ends).  The pair's
# names go to the program in DROCE_TEST_VETH.  The namespace is deleted on
# exit; only the program this script started is waited for.
set -uo pipefail
NS=droce-dev$$
A=dva$$
B=dvb$$
cleanup() { ip netns del "$NS" 2>/dev/null; }
trap cleanup EXIT
if ! ip netns add "$NS"; then
	echo "FAIL: cannot create network namespace $NS (root and iproute2 needed)" >&2
	exit 1
fi
ip -n "$NS" link add "$A" mtu 4200 type veth peer name "$B" mtu 4200 &&
	ip -n "$NS" link set "$A" up && ip -n "$NS" link set "$B" up &&
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 || {
	echo "FAIL: cannot set up the veth pair in $NS" >&2
	exit 1
}
DROCE_TEST_VETH="$A,$B" ip netns exec "$NS" "$@"
