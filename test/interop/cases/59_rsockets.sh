# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# rsockets against rdma-core's: the guest's unmodified rstream (rdma-core
# 44's rsockets on the kernel's rdma_cm and rxe) against Debian's rstream
# on droce through the drop-in librdmacm.so.1 (lib/rdmacm's rsockets, the
# same wire protocol), droce as server and as client, IPv4, -T v (every
# byte verified by both): 100 transfers of 4 KiB, then 10 of 1 MB (the
# receive ring's halves and the credits going round): both exit 0 and
# print the custom row of that size, count and total.
# Sourced by interop.sh (helpers and variables: cases/README.md).

# rsockets_server_side GLOG DLOG OPTS: droce's rstream server, the guest's
# client once it accepts: a client that comes before droce's listener
# exists is refused (rconnect fails) and run again, 5 times at most.
rsockets_server_side() {
	local gl=$1 dl=$2 opts=$3 dpid attempt
	# shellcheck disable=SC2086
	UNCLOSED=1 dropin_run 120 rstream -b "$D_IP" $opts >"$dl" 2>&1 &
	dpid=$!
	for attempt in 1 2 3 4 5; do
		sleep 1
		gexec 100 "rstream -s $D_IP $opts" >"$gl" 2>&1
		rc_g=$?
		[ "$rc_g" = 0 ] && break
		kill -0 "$dpid" 2>/dev/null && grep -q 'rconnect' "$gl" || break
		log "attempt $attempt: $(head -n 1 "$gl") (droce's listener not there yet): again"
	done
	wait "$dpid"
	rc_d=$?
}

# rsockets_case ROLE SIZE COUNT ROW: rstream -S SIZE -C COUNT -T v with
# droce as ROLE; ROW the row's bytes, transfers, iterations and total.
rsockets_case() {
	local role=$1 opts="-S $2 -C $3 -T v" row=$4
	local gl=$LOGDIR/$T.grs dl=$LOGDIR/$T.drs rc_g rc_d why=
	local what="guest rstream vs rstream through the drop-ins (droce $role; $opts)"
	if [ ! -e "$BUILD/lib/rdmacm/librdmacm.so.1" ]; then
		not_ok "$what: the drop-in librdmacm not built"
		return
	fi
	if [ "$role" = server ]; then
		rsockets_server_side "$gl" "$dl" "$opts"
	else
		# shellcheck disable=SC2086
		UNCLOSED=1 on_both_sides client 100 : "$gl" "$dl" "rstream -b $G_IP $opts" \
			dropin_run rstream -s "$G_IP" $opts
	fi
	grep -qE "^custom +$row " "$gl" || why="$why no guest result row;"
	grep -qE "^custom +$row " "$dl" || why="$why no droce result row;"
	case_report "$what" "$why" "$gl" "$dl"
}

rsockets_case server 4096 100 '4k +100 +1 +800k'
rsockets_case client 4096 100 '4k +100 +1 +800k'
rsockets_case server 1000000 10 '976k +10 +1 +19m'
rsockets_case client 1000000 10 '976k +10 +1 +19m'
