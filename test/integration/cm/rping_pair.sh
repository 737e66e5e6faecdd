#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# droce-rping server and client in two processes over net_memif: both exit
# 0, each prints its COUNT pings' text, no data mismatch (-V).
# Usage: rping_pair.sh DROCE_RPING
set -uo pipefail

RPING=${1:?usage: rping_pair.sh DROCE_RPING}
COUNT=20
SIZE=1000
TMP=$(mktemp -d /tmp/droce-rping.XXXXXX)
SPID=
cleanup() {
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

eal() {	# eal SIDE ROLE
	local huge=--in-memory
	[ "${DROCE_NO_HUGE:-0}" = 1 ] && huge="--no-huge -m 512"
	# shellcheck disable=SC2086
	echo "--no-pci -l $1 $huge --file-prefix=rping$$x$1 --log-level=lib.eal:error" \
	     "--vdev=net_memif0,role=$2,socket=$TMP/memif.sock,socket-abstract=no"
}

# shellcheck disable=SC2046
timeout 60 "$RPING" $(eal 0 server) -- --droce-ipv4=198.18.9.1/24 \
	-s -a 198.18.9.1 -C "$COUNT" -S "$SIZE" -v -V >"$TMP/server" 2>&1 &
SPID=$!
# the client once the server's memif socket exists (its port probed): a
# fixed 2 s was too short for a sanitizer build on a loaded machine, and a
# memif client that finds no socket never connects (both sides then sat
# idle to their timeouts)
for ((i = 0; i < 300; i++)); do
	[ -S "$TMP/memif.sock" ] && break
	kill -0 "$SPID" 2>/dev/null || break
	sleep 0.1
done
# shellcheck disable=SC2046
timeout 50 "$RPING" $(eal 1 client) -- --droce-ipv4=198.18.9.2/24 \
	-c -a 198.18.9.1 -C "$COUNT" -S "$SIZE" -v -V >"$TMP/client" 2>&1
rc_c=$?
wait "$SPID"
rc_s=$?
SPID=
why=
[ "$rc_c" = 0 ] || why="$why client exit $rc_c;"
[ "$rc_s" = 0 ] || why="$why server exit $rc_s;"
n=$(grep -c '^ping data: rdma-ping-' "$TMP/client")
[ "$n" = "$COUNT" ] || why="$why client printed $n pings;"
n=$(grep -c '^server ping data: rdma-ping-' "$TMP/server")
[ "$n" = "$COUNT" ] || why="$why server printed $n pings;"
grep -q 'data mismatch' "$TMP/client" && why="$why data mismatch;"
if [ -n "$why" ]; then
	echo "FAIL:$why"
	sed 's/^/client: /' "$TMP/client" | tail -n 20
	sed 's/^/server: /' "$TMP/server" | tail -n 20
	exit 1
fi
echo "droce-rping pair: $COUNT pings of $SIZE bytes, verified on both sides"
