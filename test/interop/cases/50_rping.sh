# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# RDMA CM (lib/cm over QP1) with the kernel's rdma_cm: the guest's rping
# (rdma-core 44) against droce-rping, each side as server and as client,
# IPv4 (100-byte pings) and IPv6 (10000 bytes: 3 packets at MTU 4096),
# data verified (-V) by both, every ping's text seen by both (-v); then
# against Debian's unmodified rping on droce through the drop-in
# librdmacm.so.1 and libibverbs.so.1 (droce-run), droce as client (IPv4)
# and as server (IPv6); then Debian's ib_write_bw -R through the drop-ins
# against the guest's, both roles.
# Sourced by interop.sh (helpers and variables: cases/README.md).

RPING=$BUILD/app/droce-rping/droce-rping
# rping ends by cancelling its CM thread, for which glibc loads libgcc_s;
# the guest image has none (rping aborts after its last ping: "libgcc_s.so.1
# must be installed for pthread_exit to work"): the host's (the same Debian
# 12) is copied in and found through LD_LIBRARY_PATH
GUEST_LIBGCC=/lib/x86_64-linux-gnu/libgcc_s.so.1
G_RPING="LD_LIBRARY_PATH=/tmp/rping-lib rping"

rping_guest_libgcc() {
	"$RXEVM" exec "$GUEST" -t 60 -i -- \
		'mkdir -p /tmp/rping-lib && cat > /tmp/rping-lib/libgcc_s.so.1' \
		<"$GUEST_LIBGCC" >"$LOGDIR/rping-libgcc" 2>&1
}

# rping_droce TMO PROG ARGS...: droce's side: PROG droce-rping, or rping
# (Debian's, through the drop-ins).
rping_droce() {
	local tmo=$1 prog=$2
	shift 2
	if [ "$prog" = droce-rping ]; then
		# shellcheck disable=SC2046
		droce_run "$tmo" "$RPING" $(eal_args) -- $(droce_args) "$@"
	else
		UNCLOSED=1 dropin_run "$tmo" rping "$@"
	fi
}

# rping_server_side TMO GLOG DLOG "GUEST CMD" PROG ARGS...: droce's rping
# server (rping_droce PROG ARGS...) and the guest's client; sets rc_g and
# rc_d.  droce's server prints nothing before its client comes, and its
# listener exists only once rdma_listen returned: a guest client that comes
# earlier is refused (REJ: no listener) or, before droce's device answers
# ARP/ND, cannot resolve the address.  It is then run again, while droce's
# server waits, RPING_TRIES times at most, each retry counted in
# RPING_RETRIES (no fixed sleep guesses how long droce takes to start).
RPING_TRIES=5
RPING_RETRIES=0
rping_server_side() {
	local tmo=$1 gl=$2 dl=$3 gcmd=$4 prog=$5 dpid attempt
	shift 5
	rping_droce $((tmo + 10)) "$prog" "$@" >"$dl" 2>&1 &
	dpid=$!
	for attempt in $(seq "$RPING_TRIES"); do
		gexec "$tmo" "$gcmd" >"$gl" 2>&1
		rc_g=$?
		[ "$rc_g" = 0 ] && break
		[ "$attempt" != "$RPING_TRIES" ] && kill -0 "$dpid" 2>/dev/null &&
			grep -qE 'cma event RDMA_CM_EVENT_(REJECTED|ADDR_ERROR|UNREACHABLE)' "$gl" ||
			break
		RPING_RETRIES=$((RPING_RETRIES + 1))
		log "attempt $attempt: $(grep -m 1 'cma event' "$gl") (droce's listener not there yet): again"
		sleep 0.2
	done
	wait "$dpid"
	rc_d=$?
}

# rping_case ROLE FAMILY COUNT SIZE [PROG]: droce's rping (PROG:
# droce-rping, the default, or rping through the drop-ins) as ROLE (server
# or client) against the guest's rping, over IPv4 or IPv6.
rping_case() {
	local role=$1 family=$2 count=$3 size=$4 prog=${5:-droce-rping}
	local gl=$LOGDIR/$T.grping dl=$LOGDIR/$T.drping
	local opts="-C $count -S $size -v -V" what rc_g rc_d why= d_ip=$D_IP g_ip=$G_IP
	[ "$family" = IPv6 ] && { d_ip=$D_IP6; g_ip=$G_IP6; }
	local name=$prog need=$RPING
	[ "$prog" = rping ] && { name="rping through the drop-ins"; need=$BUILD/lib/rdmacm/librdmacm.so.1; }
	what="guest rping vs $name (droce $role; $family, $opts)"
	if [ ! -e "$need" ]; then
		not_ok "$what: $need not built"
		return
	fi
	local retries=$RPING_RETRIES
	# shellcheck disable=SC2086
	if [ "$role" = server ]; then
		rping_server_side 80 "$gl" "$dl" "$G_RPING -c -a $d_ip $opts" \
			"$prog" -s -a "$d_ip" $opts
	else
		on_both_sides client 80 : "$gl" "$dl" "$G_RPING -s -a $g_ip $opts" \
			rping_droce "$prog" -c -a "$g_ip" $opts
	fi
	[ "$rc_g" = 0 ] || why="$why guest exit $rc_g;"
	[ "$rc_d" = 0 ] || why="$why droce exit $rc_d;"
	# the client prints "ping data: ...", the server "server ping data: ..."
	local cl=$dl sl=$gl n
	[ "$role" = server ] && { cl=$gl; sl=$dl; }
	n=$(grep -c '^ping data: rdma-ping-' "$cl")
	[ "$n" = "$count" ] || why="$why client printed $n pings;"
	n=$(grep -c '^server ping data: rdma-ping-' "$sl")
	[ "$n" = "$count" ] || why="$why server printed $n pings;"
	grep -q 'data mismatch' "$cl" && why="$why data mismatch;"
	retries=$((RPING_RETRIES - retries))
	local note=
	[ "$retries" != 0 ] && note="; the guest's client run again $retries time(s) before droce listened"
	if [ -z "$why" ]; then
		ok "$what$note"
	else
		not_ok "$what:$why" "$dl"
		sed 's/^/#   guest: /' "$gl" | tail -n 10
	fi
}

# perftest_dropin_cm_ready LOG: ib_write_bw -R's server is about to listen
# for its exchange once it says it waits (its " Waiting for client rdma_cm
# QP" line comes only with the test's table, after a client connected);
# a REQ that beats the listen is held for it (lib/cm's README).
perftest_dropin_cm_ready() { log_ready "$1" 'Waiting for client to connect' 60; }

# perftest_cm_client GLOG DLOG OPTS: the guest's ib_write_bw -R server,
# Debian's as the client on droce once it listens (on_both_sides' client
# role); sets rc_g and rc_d.  perftest
# 4.5-0.17 listens for its QPs' connections only after the exchange on its
# first connection, so a client that is quicker than the TCG guest there
# gets REJ 8 (no listener: the guest's ib_cm is right), and perftest's own
# retry of it then crashes: it passes rdma_resolve_addr a cma_id read from
# the nodes it has just freed (under gdb: a safe-linked malloc pointer as
# the id, in the drop-in's rdma_resolve_addr).  Such an attempt is run again, twice at most, and said so (REJECTS
# counts them); its guest server, still waiting, is stopped by its PID.
perftest_cm_client() {
	local gl=$1 dl=$2 opts=$3 gpid attempt pidf=/tmp/perftest_cm.pid
	for attempt in 1 2 3; do
		# shellcheck disable=SC2086
		gexec 140 "echo \$\$ >$pidf; exec ib_write_bw -d rxe0 -x $G_GID4 $opts" >"$gl" 2>&1 &
		gpid=$!
		guest_listening 30 || true
		sleep 0.2
		# shellcheck disable=SC2086
		UNCLOSED=1 dropin_run 140 ib_write_bw -x 0 $opts "$G_IP" >"$dl" 2>&1
		rc_d=$?
		if [ "$rc_d" != 0 ] && [ "$attempt" != 3 ] &&
		   grep -q 'RDMA_CM_EVENT_REJECTED; error: 8\.' "$dl"; then
			REJECTS=$((REJECTS + 1))
			log "attempt $attempt: REJ 8 (the guest's QP listener not yet there), exit $rc_d: again"
			gexec 10 "kill \$(cat $pidf)" >/dev/null 2>&1
			wait "$gpid"
			continue
		fi
		wait "$gpid"
		rc_g=$?
		return
	done
}

# perftest_cm_case ROLE SIZE ITERS: Debian's ib_write_bw -R through the
# drop-ins as ROLE (server or client) against the guest's ib_write_bw -R
# (the kernel's rdma_cm), IPv4: both exit 0 and print the row of SIZE and
# ITERS.
perftest_cm_case() {
	local role=$1 size=$2 iters=$3 gl=$LOGDIR/$T.gperf dl=$LOGDIR/$T.dperf rc_g rc_d why=
	local opts="-R -F -s $2 -n $3" what
	what="guest ib_write_bw vs ib_write_bw through the drop-ins (droce $role; $opts)"
	if [ ! -e "$BUILD/lib/rdmacm/librdmacm.so.1" ]; then
		not_ok "$what: the drop-in librdmacm not built"
		return
	fi
	# shellcheck disable=SC2086
	if [ "$role" = server ]; then
		UNCLOSED=1 on_both_sides server 140 perftest_dropin_cm_ready "$gl" "$dl" \
			"ib_write_bw -d rxe0 -x $G_GID4 $opts $D_IP" dropin_run stdbuf -oL ib_write_bw -x 0 $opts
	else
		REJECTS=0
		perftest_cm_client "$gl" "$dl" "$opts"
	fi
	grep -qE "^ $size +$iters " "$gl" || why="$why no guest result row;"
	grep -qE "^ $size +$iters " "$dl" || why="$why no droce result row;"
	case_report "$what" "$why" "$gl" "$dl" \
		"$([ "$role" = client ] && [ "$REJECTS" != 0 ] && echo "attempt $((REJECTS + 1)) (REJ 8 before)")"
}

if rping_guest_libgcc; then
	rping_case client IPv4 10 100
	rping_case server IPv4 10 100
	rping_case client IPv6 20 10000
	rping_case server IPv6 20 10000
	rping_case client IPv4 10 100 rping
	rping_case server IPv6 20 10000 rping
else
	for c in 1 2 3 4 5 6; do
		not_ok "guest rping vs droce-rping case $c: libgcc_s not copied into the guest" \
			"$LOGDIR/rping-libgcc"
	done
fi

perftest_cm_case client 65536 10
perftest_cm_case server 65536 10
