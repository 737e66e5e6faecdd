# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# rsockets against rdma-core's: the guest's unmodified rstream and
# riostream (rdma-core 44's rsockets on the kernel's rdma_cm and rxe)
# against Debian's on droce through the drop-in librdmacm.so.1 (lib/rdmacm's
# rsockets, the same wire protocol), droce as server and as client, IPv4:
# rstream -T v (every byte verified by both), 100 transfers of 4 KiB, then
# 10 of 1 MB (the receive ring's halves and the credits going round); then
# riostream, 10 x 10 of 4 KiB (riomap's entries written into the peer's
# table, riowrite straight into the mapped buffer): both exit 0 and print
# the custom row of that size, count and total.
# Sourced by interop.sh (helpers and variables: cases/README.md).

# rsockets_server_side TOOL GLOG DLOG OPTS: droce's TOOL server, the
# guest's client once it accepts: a client that comes before droce's
# listener exists is refused (rconnect fails) and run again, 5 times at
# most.  Sets rc_g and rc_d.
rsockets_server_side() {
	local tool=$1 gl=$2 dl=$3 opts=$4 dpid attempt
	# shellcheck disable=SC2086
	UNCLOSED=1 dropin_run 120 "$tool" -b "$D_IP" $opts >"$dl" 2>&1 &
	dpid=$!
	for attempt in 1 2 3 4 5; do
		sleep 1
		gexec 100 "$tool -s $D_IP $opts" >"$gl" 2>&1
		rc_g=$?
		[ "$rc_g" = 0 ] && break
		if ! kill -0 "$dpid" 2>/dev/null || ! grep -q 'rconnect' "$gl"; then
			break
		fi
		log "attempt $attempt: $(head -n 1 "$gl") (droce's listener not there yet): again"
	done
	wait "$dpid"
	rc_d=$?
}

# rsockets_case TOOL ROLE ROW OPTS...: TOOL (rstream, riostream) with
# droce as ROLE; ROW the row's bytes, transfers, iterations and total.
rsockets_case() {
	local tool=$1 role=$2 row=$3
	shift 3
	local opts="$*" gl=$LOGDIR/$T.grs dl=$LOGDIR/$T.drs rc_g rc_d why=
	local what="guest $tool vs $tool through the drop-ins (droce $role; $opts)"
	if [ ! -e "$BUILD/lib/rdmacm/librdmacm.so.1" ]; then
		not_ok "$what: the drop-in librdmacm not built"
		return
	fi
	if [ "$role" = server ]; then
		rsockets_server_side "$tool" "$gl" "$dl" "$opts"
	else
		# shellcheck disable=SC2086
		UNCLOSED=1 on_both_sides client 100 : "$gl" "$dl" "$tool -b $G_IP $opts" \
			dropin_run "$tool" -s "$G_IP" $opts
	fi
	grep -qE "^custom +$row " "$gl" || why="$why no guest result row;"
	grep -qE "^custom +$row " "$dl" || why="$why no droce result row;"
	case_report "$what" "$why" "$gl" "$dl"
}

for _role in server client; do
	rsockets_case rstream "$_role" '4k +100 +1 +800k' -S 4096 -C 100 -T v
	rsockets_case rstream "$_role" '976k +10 +1 +19m' -S 1000000 -C 10 -T v
	rsockets_case riostream "$_role" '4k +10 +10 +800k' -S 4096 -C 10 -I 10
done
unset _role
