#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Interoperability with the Linux kernel's Soft-RoCE (rdma_rxe) in a QEMU
# guest (../shared/peers/rxe-vm): droce talks to a RoCE stack nobody here
# wrote.  One guest boots once for all cases.  Prints TAP.
#
# Layout (everything inside network namespace $NETNS, made by rxe-vm):
#   guest eth0 198.18.0.2 (rxe0) -- tap -- bridge rxebr0 (kernel 198.18.0.1)
#                                              |
#                                 veth $VETH_BR / $VETH (droce: net_af_packet)
#   droce answers ARP/ND itself at 198.18.0.3 and 2001:2::3.
# Out-of-band exchanges (the pingpong TCP handshake) use the kernel address
# on the bridge; RoCE goes through droce.
#
# Usage: interop.sh BUILD_DIR   (env: DROCE_RXE_VM, DROCE_SKIP_INTEROP,
#        DROCE_INTEROP_CASES=GLOB: only cases/GLOB.sh, for development;
#        DROCE_INTEROP_GUEST_PREFIX: the guest name's prefix, default ig;
#        DROCE_INTEROP_KEEP_LOGS=1: keep the logs and captures)
set -uo pipefail

BUILD=${1:?usage: interop.sh BUILD_DIR}
RXEVM=${DROCE_RXE_VM:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/peers/rxe-vm}
GUEST=${DROCE_INTEROP_GUEST_PREFIX:-ig}$$	# prefix: tell parallel runs apart
NETNS=rxevm-i$$
BRIDGE=rxeibr$$
TAP=rxei$$
VETH=dpi$$
VETH_BR=dpib$$
G_IP=198.18.0.2
H_IP=198.18.0.1
D_IP=198.18.0.3
D_IP6=2001:2::3
G_IP6=2001:2::2
PP=$BUILD/app/droce-pingpong/droce-pingpong
UDPP=$BUILD/app/droce-pingpong/droce-ud-pingpong
SRQPP=$BUILD/app/droce-pingpong/droce-srq-pingpong
DUMP=$BUILD/app/droce-dump/droce-dump
DROCE_RUN=$(cd "$(dirname "$0")/../.." && pwd)/usertools/droce-run
IMM=${DROCE_IMM:-$BUILD/test/interop/droce-imm}
VECTORS=${DROCE_VECTORS:-$(dirname "$RXEVM")/../vectors}
TCPDUMP_PID=
LOGDIR=$(mktemp -d /tmp/droce-interop.XXXXXX)
T=0
FAILED=0

log() { printf '# %s\n' "$*"; }

ok() {
	T=$((T + 1))
	printf 'ok %d - %s\n' "$T" "$1"
}

not_ok() {
	T=$((T + 1))
	FAILED=$((FAILED + 1))
	printf 'not ok %d - %s\n' "$T" "$1"
	[ -n "${2:-}" ] && sed 's/^/#   /' "$2" | tail -n 30
}

cleanup() {
	[ -n "$TCPDUMP_PID" ] && kill "$TCPDUMP_PID" 2>/dev/null
	"$RXEVM" stop "$GUEST" >/dev/null 2>&1
	ip netns del "$NETNS" >/dev/null 2>&1
	if [ -n "${DROCE_INTEROP_KEEP_LOGS:-}" ]; then
		echo "# logs and captures kept in $LOGDIR"
	else
		rm -rf "$LOGDIR"
	fi
}
trap cleanup EXIT

gexec() { "$RXEVM" exec "$GUEST" -t "$1" -- "${@:2}"; }

# droce side: EAL first, then droce's options, then the program's
droce_run() {
	local tmo=$1
	shift
	timeout "$tmo" ip netns exec "$NETNS" "$@"
}

# Until a TCP listener exists in $NETNS (the droce server's exchange
# port: nothing else listens there), at most $1 s: then the guest's client
# may connect.  A fixed sleep lost this race on a loaded machine, and
# perftest's client gives up at its first refused connect.
droce_listening() {
	local end=$((SECONDS + $1))
	while ((SECONDS < end)); do
		[ -n "$(ip netns exec "$NETNS" ss -Hltn 2>/dev/null)" ] && return 0
		sleep 0.2
	done
	log "no droce listener in $NETNS after $1 s"
	return 1
}

# LCORE=1 before a case: droce gets a transport lcore (EAL lcore 1), which
# answers the peer while the program calls no verb (a passive perftest side).
# log_ready LOG PATTERN SECS: until LOG has a line matching PATTERN (a
# server's "waiting" line: with RDMA CM the listener exists only then, and
# perftest's client gives up at a REJ), at most SECS s.
log_ready() {
	local end=$((SECONDS + $3))
	while ((SECONDS < end)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	log "no '$2' in $(basename "$1") after $3 s"
	return 1
}

# guest_listening SECS: until the guest has a listener, at most SECS s: a
# TCP socket in LISTEN (0A) other than its agent's (port 7777, 1E61), or an
# RDMA CM ID in LISTEN (rdma resource show cm_id), so that the guest's
# server (started just before) takes connections.  One exec, polling in the
# guest every 0.1 s: a TCG guest takes 0.5-2 s to start a program.
guest_listening() {
	local n=$(($1 * 10))
	gexec $(($1 + 5)) "i=0; while [ \$i -lt $n ]; do
		cat /proc/net/tcp /proc/net/tcp6 | grep -v ':1E61 ' | grep -q ' 0A ' && exit 0
		rdma resource show cm_id 2>/dev/null | grep -q ' state LISTEN ' && exit 0
		sleep 0.1; i=\$((i + 1)); done; exit 1" >/dev/null 2>&1 && return 0
	log "no listener in the guest after $1 s"
	return 1
}

# tcp_ready LOG: droce_listening's wait, as on_both_sides' READY.
tcp_ready() { droce_listening 60; }

# on_both_sides ROLE TMO READY GLOG DLOG "GUEST CMD" RUNNER ARGS...: one
# case's two programs.  droce's side is `RUNNER TMO ARGS...` (droce_run,
# dropin_run, ...; output in DLOG), the guest's GUEST CMD (gexec, output in
# GLOG); droce as ROLE: as the server it starts first, the guest's client
# once `READY DLOG` returns (a TCP or CM listener, a log line); as the
# client it starts once the guest's server listens (guest_listening), plus
# 0.2 s.  Sets rc_g and rc_d.
on_both_sides() {
	local role=$1 tmo=$2 ready=$3 gl=$4 dl=$5 gcmd=$6 runner=$7
	shift 7
	if [ "$role" = server ]; then
		"$runner" $((tmo + 10)) "$@" >"$dl" 2>&1 &
		local dpid=$!
		"$ready" "$dl" || true
		gexec "$tmo" "$gcmd" >"$gl" 2>&1
		rc_g=$?
		wait "$dpid"
		rc_d=$?
	else
		gexec "$tmo" "$gcmd" >"$gl" 2>&1 &
		local gpid=$!
		guest_listening 30 || true
		sleep 0.2
		"$runner" "$tmo" "$@" >"$dl" 2>&1
		rc_d=$?
		wait "$gpid"
		rc_g=$?
	fi
}

# case_report WHAT WHY GLOG DLOG [DETAIL]: a case's TAP line from rc_g and
# rc_d (on_both_sides) and WHY (its own checks' complaints, empty if none):
# ok "WHAT[: DETAIL]", or not ok with both logs.
case_report() {
	local what=$1 why=$2 gl=$3 dl=$4 detail=${5:-}
	[ "$rc_g" = 0 ] || why="$why guest exit $rc_g;"
	[ "$rc_d" = 0 ] || why="$why droce exit $rc_d;"
	if [ -z "$why" ]; then
		ok "$what${detail:+: $detail}"
	else
		log "$why"
		cat "$gl" "$dl" >"$LOGDIR/$T.both"
		not_ok "$what" "$LOGDIR/$T.both"
	fi
}

# dropin_run TMO PROG ARGS...: Debian's PROG on droce through the drop-ins
# (usertools/droce-run) in $NETNS for at most TMO s, with a transport
# lcore: these programs block outside the verbs (their TCP exchange, a
# passive perftest side while the peer works; rping's CM, CQ and main
# threads all call droce), where run-to-completion answers nothing.
dropin_run() {
	local tmo=$1
	shift
	LCORE=1 DROCE_ARGS="$(LCORE=1 eal_args) -- $(LCORE=1 droce_args)" \
		droce_run "$tmo" "$DROCE_RUN" --lib "$BUILD/lib/ibverbs" -- "$@"
}

eal_args() {
	echo "--no-pci -l ${LCORE:+0,}${LCORE:-0} --in-memory --file-prefix=interop$$ --log-level=lib.eal:error" \
	     "--vdev=net_af_packet0,iface=$VETH,framesz=8192,blocksz=8192"
}

# LOSS=P: droce's port loses that fraction of frames each way (no tc netem
# here), LOSS_LIMIT=N at most N of them: both stacks must recover, the
# counters must show it.  Under loss
# droce retries as its peer does (rxe: retry_cnt 7 = retry forever, the
# rxe_retry_compat switch): the TCG guest sometimes goes silent for more
# than the 7 x 67 ms IBTA's 7 retries last (see the loss cases).  Every droce
# run also writes its own pcapng capture (--droce-capture), one file per
# run ($BASHPID: this runs in its own $(...) subshell), checked at the end
# by check_droce_captures.
# NO_CAPTURE=1: a run that is killed (its capture file would be cut off).
# UNCLOSED=1: a program that exits with droce's device still open (through
# the drop-in librdmacm, which keeps its device contexts to the end): its
# capture has no statistics block (droce.T.PID.unclosed.pcapng), so only
# that check leaves it out.
droce_args() {
	echo "--droce-ipv4=$D_IP/24 --droce-ipv6=$D_IP6/64 --droce-mtu=4200" \
	     ${LOSS:+--droce-drop=$LOSS --droce-rxe_retry_compat=1} \
	     ${LOSS_LIMIT:+--droce-drop-limit=$LOSS_LIMIT} \
	     ${LCORE:+--droce-transport-lcores=1}
	[ -n "${NO_CAPTURE:-}" ] ||
		echo "--droce-capture=$LOGDIR/droce.$T.$BASHPID${UNCLOSED:+.unclosed}.pcapng"
}

# guest_push FILE NAME LOG: the host's build of a guest program (rdma-core
# 44 and Debian 12's libc, as the guest) into the guest as /tmp/NAME.
guest_push() {
	"$RXEVM" exec "$GUEST" -t 60 -i -- "cat > /tmp/$2 && chmod +x /tmp/$2" <"$1" >"$3" 2>&1
}

# The sum of droce's recovery counters printed at exit (DROCE_COUNTERS=1).
recovered() {
	sed -n 's/^droce counters://p' "$1" | tr ' ' '\n' |
		awk -F= '$1 ~ /retransmitted_pkts|duplicate_request|out_of_seq_request/ { s += $2 } END { print s + 0 }'
}

start_guest() {
	if [ ! -x "$RXEVM" ]; then
		echo "Bail out! rxe-vm not found at $RXEVM (set DROCE_RXE_VM)"
		exit 1
	fi
	log "booting Soft-RoCE guest $GUEST (TCG: slow, ~20 s)"
	if ! "$RXEVM" start "$GUEST" --ip "$G_IP/24" --host-ip "$H_IP/24" --ip6 "$G_IP6/64" \
		--netns "$NETNS" --bridge "$BRIDGE" --tap "$TAP" --mtu 4200 \
		>"$LOGDIR/start.log" 2>&1; then
		sed 's/^/# /' "$LOGDIR/start.log"
		echo "Bail out! the Soft-RoCE guest did not start (QEMU missing?); run droce-test --skip-interop to skip"
		exit 1
	fi
	ip -n "$NETNS" link add "$VETH" mtu 4200 type veth peer name "$VETH_BR" mtu 4200
	ip -n "$NETNS" link set "$VETH_BR" master "$BRIDGE" up
	ip -n "$NETNS" link set "$VETH" up
	G_GID4=$(gexec 30 rxevm-gid 4 | tr -d '\r\n ')
	G_GID6=$(gexec 30 rxevm-gid 6g | tr -d '\r\n ')
	log "guest GID index: IPv4 $G_GID4, IPv6 $G_GID6"
}

# Why a pingpong case failed, judged from the outputs (nothing if it
# passed).  $1 rc|ud|srq|ibv, $2 guest log, $3 droce log, $4.. the options.
# Both sides print the byte and iteration counts the options ask for (srq:
# and one local and one remote address line per QP, -q of them); an RC/SRQ
# case must use -c: droce verifies every byte it received in both roles
# ("data check passed", app/droce-pingpong/pp_chk.c) and the guest's
# ibv_rc_pingpong, as the server, the page starts (it prints
# "invalid data in page N" but exits 0, so its output is what counts).
# ibv: ibv_rc_pingpong on both sides (droce's through the drop-in), so only
# the server's page check sees the data.
pingpong_failure() {
	local kind=$1 gl=$2 dl=$3 size iters=1000 chk=0 nqp=1 f
	shift 3
	size=$([ "$kind" = ud ] && echo 1024 || echo 4096)
	[ "$kind" = srq ] && nqp=16
	while [ $# -gt 0 ]; do
		case $1 in
		-s) size=$2; shift ;;
		-q) nqp=$2; shift ;;
		-n) iters=$2; shift ;;
		-c) chk=1 ;;
		esac
		shift
	done
	if [ "$kind" != ud ] && [ "$chk" = 0 ]; then
		echo "an RC case without -c checks no data"
		return
	fi
	for f in "$gl" "$dl"; do
		if [ "$(grep -c '^  local address:  LID' "$f")" != "$nqp" ] ||
		   [ "$(grep -c '^  remote address: LID' "$f")" != "$nqp" ]; then
			echo "$(basename "$f"): not $nqp local and $nqp remote address lines"
			return
		fi
		if ! grep -q "^$((size * iters * 2)) bytes in .* seconds = .* Mbit/sec" "$f" ||
		   ! grep -q "^$iters iters in .* seconds = .* usec/iter" "$f"; then
			echo "$(basename "$f"): no result lines for $((size * iters * 2)) bytes, $iters iters"
			return
		fi
		if grep -q 'invalid data' "$f"; then
			echo "$(basename "$f"): invalid data"
			return
		fi
	done
	if [ "$chk" = 1 ] && [ "$kind" != ibv ] &&
	   ! grep -q "^data check passed: all $size bytes " "$dl"; then
		echo "droce: no \"data check passed\" for $size bytes"
	fi
}

# One pingpong case.  $1 rc|ud|srq, $2 name, $3 droce role (server|client),
# $4 droce -g, $5 guest -g, $6.. options for both sides.
pingpong_case() {
	local kind=$1 name=$2 role=$3 dg=$4 gg=$5
	local prog=$PP gprog=ibv_rc_pingpong
	shift 5
	if [ "$kind" = ud ]; then
		prog=$UDPP
		gprog=ibv_ud_pingpong
	elif [ "$kind" = srq ]; then
		prog=$SRQPP
		gprog=ibv_srq_pingpong
	fi
	local opts="$*" gl=$LOGDIR/$T.guest dl=$LOGDIR/$T.droce rc_g rc_d gcmd
	gcmd="$gprog -d rxe0 -g $gg $opts"
	# shellcheck disable=SC2046,SC2086
	if [ "$role" = server ]; then
		on_both_sides server 110 tcp_ready "$gl" "$dl" "$gcmd $H_IP" \
			droce_run "$prog" $(eal_args) -- $(droce_args) -g "$dg" $opts
	else
		on_both_sides client 110 tcp_ready "$gl" "$dl" "$gcmd" \
			droce_run "$prog" $(eal_args) -- $(droce_args) -g "$dg" $opts "$G_IP"
	fi
	local why
	why=$(pingpong_failure "$kind" "$gl" "$dl" "$@")
	if [ "$rc_g" = 0 ] && [ "$rc_d" = 0 ] && [ -z "$why" ] &&
	   { [ -z "${LOSS:-}" ] || [ "$(recovered "$dl")" -gt 0 ]; }; then
		ok "$gprog $name (droce $role; $opts; $(grep -m 1 '^data check passed' "$dl" | cut -d: -f2- | cut -c2-))${LOSS:+; $(grep '^droce counters' "$dl")}"
	else
		log "guest rc=$rc_g droce rc=$rc_d${why:+; $why}"
		cat "$gl" "$dl" >"$LOGDIR/$T.both"
		not_ok "$gprog $name (droce $role; $opts)" "$LOGDIR/$T.both"
	fi
}

# perftest's result row (cases/40_perftest.sh, 58_dropin.sh): " SIZE ITERS ..." with every number after it non-negative
# and the last one (MsgRate; or t_min for latency) above zero.
perftest_row() {
	local file=$1 kind=$2 size=$3 iters=$4
	awk -v k="$kind" -v s="$size" -v n="$iters" '
		$1 == s && $2 == n && NF >= 5 {
			bad = 0
			for (i = 3; i <= NF; i++) if ($i + 0 < 0) bad = 1
			key = k == "bw" ? $NF + 0 : $3 + 0
			if (!bad && key > 0) found = 1
		}
		END { exit !found }' "$file"
}

# Does this side print a table?  (perftest 4.5-0.17: the client always;
# the server for the bw tests, write_lat and send_lat.)
perftest_prints() {
	local test=$1 side=$2
	[ "$side" = client ] && return 0
	case $test in *_bw|write_lat|send_lat) return 0;; esac
	return 1
}

# perftest_missing_rows TEST ROLE GLOG DLOG KIND SIZE ITERS: what is missing
# of the result rows each side must print (nothing if none is); ROLE is
# droce's.
perftest_missing_rows() {
	local test=$1 role=$2 gl=$3 dl=$4 kind=$5 size=$6 iters=$7 gside=server
	[ "$role" = server ] && gside=client
	if perftest_prints "$test" "$gside" && ! perftest_row "$gl" "$kind" "$size" "$iters"; then
		printf "%s" " no guest result row;"
	fi
	if perftest_prints "$test" "$role" && ! perftest_row "$dl" "$kind" "$size" "$iters"; then
		printf "%s" " no droce result row;"
	fi
}

# WRITE and SEND with immediate (single, multi-packet, zero-length) with the
# guest's rxevm-imm: the side with an address sends, the other checks.
imm_case() {
	local role=$1 gl=$LOGDIR/$T.gimm dl=$LOGDIR/$T.dimm rc_g rc_d what
	if [ "$role" = server ]; then	# droce receives, the guest sends
		what="rxevm-imm (guest) sends WRITE/SEND with immediate to droce"
		# shellcheck disable=SC2046
		timeout 120 ip netns exec "$NETNS" "$IMM" $(eal_args) -- $(droce_args) -g 0 \
			>"$dl" 2>&1 &
		local dpid=$!
		droce_listening 60 || true
		gexec 110 "rxevm-imm -g $G_GID4 $H_IP" >"$gl" 2>&1
		rc_g=$?
		wait "$dpid"
		rc_d=$?
	else				# droce sends, the guest checks
		what="droce sends WRITE/SEND with immediate to rxevm-imm (guest)"
		gexec 110 "rxevm-imm -g $G_GID4" >"$gl" 2>&1 &
		local gpid=$!
		guest_listening 30 || true
		# shellcheck disable=SC2046
		droce_run 110 "$IMM" $(eal_args) -- $(droce_args) -g 0 "$G_IP" >"$dl" 2>&1
		rc_d=$?
		wait "$gpid"
		rc_g=$?
	fi
	if [ "$rc_g" = 0 ] && [ "$rc_d" = 0 ] && grep -qx OK "$gl" && grep -qx OK "$dl"; then
		ok "$what"
	else
		log "guest rc=$rc_g droce rc=$rc_d"
		cat "$gl" "$dl" >"$LOGDIR/$T.both"
		not_ok "$what" "$LOGDIR/$T.both"
	fi
}

# The kernel's remote access checks seen from droce: a WRITE with a wrong
# R_Key, or past the end of the guest's region, must come back as
# DROCE_WC_REM_ACCESS_ERR (the guest's rxevm-imm then fails, as it should).
bad_access_case() {
	local mode=$1 gl=$LOGDIR/$T.gbad dl=$LOGDIR/$T.dbad rc_d
	gexec 60 "rxevm-imm -g $G_GID4" >"$gl" 2>&1 &
	local gpid=$!
	guest_listening 30 || true
	# shellcheck disable=SC2046
	droce_run 60 "$IMM" $(eal_args) -- $(droce_args) -g 0 -b "$mode" "$G_IP" >"$dl" 2>&1
	rc_d=$?
	wait "$gpid"
	if [ "$rc_d" = 0 ] && grep -q 'REM_ACCESS_ERR as expected' "$dl"; then
		ok "the kernel refuses a WRITE with a bad $mode: droce completes it with REM_ACCESS_ERR"
	else
		cat "$gl" "$dl" >"$LOGDIR/$T.both"
		not_ok "the kernel refuses a WRITE with a bad $mode" "$LOGDIR/$T.both"
	fi
}

# tshark decodes the RoCE layers (Eth/IP/UDP/BTH/.../ICRC); the payload is
# the application's bytes, which tshark's InfiniBand payload heuristics
# (ULPs: SMC-R, SMB Direct, RPC-over-RDMA, NVMe, LNet, iSER, EoIB, SDP, FC,
# DRBD) may take for their own protocol and then call malformed: a 1-byte
# rc_pingpong SEND is "malformed RPC-over-RDMA", the guest kernel's
# identical frames too.  They are off for the malformed checks.
TSHARK_ROCE_ONLY=$(printf -- '--disable-heuristic %s ' smcr_infiniband \
	smb_direct_infiniband rpcrdma_infiniband nvme_rdma lnet_ib iser_infiniband \
	eth_over_ib mellanox_eoib sdp_infiniband fc_infiniband drbd_rdma)

# tshark_count FILE OPTS...: the frames tshark lists from FILE with OPTS;
# fails (its stderr in $LOGDIR/tshark.err) when tshark does, so that a
# tshark error never reads as "no frame matched".
tshark_count() {
	local f=$1 out
	shift
	out=$(tshark -r "$f" "$@" 2>"$LOGDIR/tshark.err") || return 1
	printf '%s' "$out" | grep -c . || true
}

# Every RoCEv2 frame on droce's link (both directions) must carry a valid
# ICRC (the independent checker) and decode cleanly in tshark and droce-dump.
check_capture() {
	local cap=$LOGDIR/wire.pcap out=$LOGDIR/check malformed
	kill "$TCPDUMP_PID" 2>/dev/null
	wait "$TCPDUMP_PID" 2>/dev/null
	TCPDUMP_PID=
	if python3 "$VECTORS/check_icrc.py" --summary "$cap" >"$out" 2>&1; then
		ok "every captured RoCEv2 frame has a valid ICRC: $(tail -n 1 "$out")"
	else
		not_ok "captured frames: ICRC check" "$out"
	fi
	# both directions: droce's frames too (a capture point that misses them
	# would leave droce's own ICRCs unchecked here)
	local from_droce frames
	if ! from_droce=$(tshark_count "$cap" -Y "ip.src == $D_IP || ipv6.src == $D_IP6"); then
		not_ok "tshark reads the capture (droce's frames)" "$LOGDIR/tshark.err"
	elif [ "$from_droce" -gt 0 ]; then
		ok "the capture holds droce's frames too ($from_droce sent by droce)"
	else
		not_ok "the capture holds droce's frames too (none sent by droce)"
	fi
	# shellcheck disable=SC2086
	if ! frames=$(tshark_count "$cap" $TSHARK_ROCE_ONLY); then
		not_ok "tshark decodes the capture" "$LOGDIR/tshark.err"
	elif ! malformed=$(tshark_count "$cap" $TSHARK_ROCE_ONLY -Y _ws.malformed); then
		not_ok "tshark decodes the capture (malformed filter)" "$LOGDIR/tshark.err"
	elif [ "$malformed" != 0 ] || [ "$frames" = 0 ]; then
		not_ok "tshark decodes the capture without malformed packets ($malformed of $frames malformed)"
	else
		ok "tshark decodes the capture without malformed packets ($frames frames)"
	fi
	if "$DUMP" "$cap" >"$out" 2>&1; then
		ok "droce-dump decodes the capture: $(tail -n 1 "$out" | cut -c1-80)"
	else
		not_ok "droce-dump decodes the capture" "$out"
	fi
}

# droce's own captures (--droce-capture, pcapng written by lib/device with
# rte_pcapng), one per droce run: every file must hold RoCEv2 frames with a
# valid ICRC (check_icrc.py reads pcapng itself), decode in tshark without
# malformed packets and in droce-dump.  With --droce-drop the capture sits
# above the loss: it shows what droce sent and what reached it.
check_droce_captures() {
	local f out=$LOGDIR/check.droce n=0 frames=0 bad_icrc='' bad_tshark='' bad_dump='' bad_lost='' c
	local unclosed=0
	for f in "$LOGDIR"/droce.*.pcapng; do
		[ -s "$f" ] || continue
		n=$((n + 1))
		# nothing lost: the statistics block droce writes at close says
		# every frame offered was written (a leak once capped each at 255);
		# pcapng_stats.py fails a file without one
		if [[ $f == *.unclosed.pcapng ]]; then
			unclosed=$((unclosed + 1))
			echo "$f: device left open at exit (UNCLOSED): no statistics block expected" >>"$out"
		elif ! python3 "$(dirname "$0")/pcapng_stats.py" "$f" >"$out.one" 2>&1; then
			bad_lost="$bad_lost $(basename "$f")"
			cat "$out.one" >>"$out.lost"
		fi
		[ -e "$out.one" ] && cat "$out.one" >>"$out" && rm -f "$out.one"
		if ! python3 "$VECTORS/check_icrc.py" "$f" >>"$out" 2>&1; then
			bad_icrc="$bad_icrc $(basename "$f")"
		fi
		# (the _ws.malformed filter: as -V | grep, without the text); a
		# tshark that fails counts as a failure, not as "none malformed"
		# shellcheck disable=SC2086
		if ! c=$(tshark_count "$f" -n $TSHARK_ROCE_ONLY -Y _ws.malformed) || [ "$c" != 0 ]; then
			bad_tshark="$bad_tshark $(basename "$f")"
			cat "$LOGDIR/tshark.err" >>"$out"
		fi
		c=$(tail -n 1 "$out" | sed -n 's/^.*: \([0-9]*\) packets.*$/\1/p')
		frames=$((frames + ${c:-0}))
		if ! "$DUMP" "$f" >>"$out" 2>&1; then
			bad_dump="$bad_dump $(basename "$f")"
		fi
	done
	if [ "$n" = 0 ] || [ "$frames" = 0 ]; then
		not_ok "droce wrote its own captures (--droce-capture): none found in $LOGDIR"
		return
	fi
	if [ -z "$bad_lost" ]; then
		ok "droce's own captures lost no frame ($((n - unclosed)) of $n closed with statistics, all ifdrop 0; $unclosed UNCLOSED)"
	else
		not_ok "droce's own captures lost frames or have no statistics block:$bad_lost" "$out.lost"
	fi
	if [ -z "$bad_icrc" ]; then
		ok "droce's own captures (runs: $n, frames: $frames): every RoCEv2 frame has a valid ICRC"
	else
		not_ok "droce's own captures: ICRC check failed in$bad_icrc" "$out"
	fi
	if [ -z "$bad_tshark" ]; then
		ok "tshark decodes droce's own captures without malformed packets"
	else
		not_ok "tshark decodes droce's own captures: malformed in$bad_tshark"
	fi
	if [ -z "$bad_dump" ]; then
		ok "droce-dump decodes droce's own captures"
	else
		not_ok "droce-dump decodes droce's own captures: failed on$bad_dump" "$out"
	fi
}

# ping, pingpong, immediate data and the kernel's access checks
builtin_cases() {
	# ping from the guest: droce answers ARP/ND and ICMP echo itself
	local pl=$LOGDIR/ping
	# (not through droce_run: $! must be timeout's own PID to stop it;
	# killed at the end: NO_CAPTURE)
	# shellcheck disable=SC2046
	timeout 60 ip netns exec "$NETNS" "$PP" $(eal_args) -- $(NO_CAPTURE=1 droce_args) -g 0 \
		>"$LOGDIR/pp-idle" 2>&1 &
	local idle=$!
	droce_listening 60 || true
	if gexec 30 "ping -c 3 -W 3 $D_IP" >"$pl" 2>&1; then ok "guest pings droce over IPv4"
	else not_ok "guest pings droce over IPv4" "$pl"; fi
	if gexec 30 "ping -6 -c 3 -W 3 $D_IP6" >"$pl" 2>&1; then ok "guest pings droce over IPv6"
	else not_ok "guest pings droce over IPv6" "$pl"; fi
	kill "$idle" 2>/dev/null
	wait "$idle" 2>/dev/null

	for role in client server; do
		for size in 1 64 4096 65536; do
			pingpong_case rc "IPv4 -s $size" "$role" 0 "$G_GID4" \
				-m 1024 -s "$size" -n 20 -c
		done
		pingpong_case rc "IPv4 MTU 4096" "$role" 0 "$G_GID4" \
			-m 4096 -s 65536 -n 20 -c
		pingpong_case rc "IPv6" "$role" 1 "$G_GID6" -m 1024 -s 4096 -n 20 -c
		pingpong_case ud "IPv4" "$role" 0 "$G_GID4" -s 512 -n 20 -c
	done
	imm_case client
	imm_case server
	for mode in rkey range; do
		bad_access_case "$mode"
	done
}

main() {
	start_guest
	# every RoCEv2 frame on droce's link, both directions (ip netns exec
	# execs tcpdump: $! is tcpdump's own PID).  On the bridge's end of the
	# veth: net_af_packet sends with PACKET_QDISC_BYPASS, so a capture on
	# droce's own end sees only what droce receives.
	ip netns exec "$NETNS" tcpdump -i "$VETH_BR" -s 0 -w "$LOGDIR/wire.pcap" -U \
		'udp port 4791' >"$LOGDIR/tcpdump.log" 2>&1 &
	TCPDUMP_PID=$!

	if [ -z "${DROCE_INTEROP_CASES:-}" ]; then
		builtin_cases
	fi
	# more cases, one file per topic (perftest, guest-side access checks, ...):
	# each is sourced here and runs its cases with the helpers above
	local f
	for f in "$(dirname "$0")"/cases/${DROCE_INTEROP_CASES:-*}.sh; do
		[ -e "$f" ] || continue
		log "cases from $(basename "$f")"
		# shellcheck disable=SC1090
		. "$f"
	done
	if [ -n "${DROCE_INTEROP_CASES:-}" ]; then
		# a developer's run of selected case files only
		check_capture
		check_droce_captures
		echo "1..$T"
		[ "$FAILED" = 0 ]
		return
	fi
	# go-back-N on both sides against each other: droce's port loses 1%
	# each way.  droce as the client failed here 1 run in 2 before the
	# requester's window shrank after a loss; after that, 1 of 24 runs with
	# IBTA's retry_cnt 7 (7 retries) failed with "transport retry counter
	# exceeded": the guest answered nothing for 0.48 s while droce resent
	# the NAKed PSN with AckReq every 67 ms (captures: the frames were on
	# the wire, correct).  Most likely a TCG stall (guest silences of
	# 0.1-0.25 s in most runs, up to ~1 s elsewhere); an rxe hang would
	# still fail here, by timeout.  Linux rxe retries forever at
	# retry_cnt 7, so under loss droce does too (droce_args): 26 of 26
	# client runs passed that way (23 of 24 without it).
	# The loss stops after 30 frames (LOSS_LIMIT, about the first third of
	# the run): ibv_rc_pingpong exits once its own last SEND is ACKed, so
	# when the ACK of the other side's last SEND is lost, nothing answers
	# that side's retries any more (seen about once in 100 runs, either
	# role: droce retried into the timeout against a guest that had
	# exited).  Lost frames before the end are recovered by both stacks.
	export DROCE_COUNTERS=1
	LOSS=0.01 LOSS_LIMIT=30 pingpong_case rc "IPv4 with 1% loss each way, first 30 frames" \
		server 0 "$G_GID4" -m 1024 -s 65536 -n 50 -c
	LOSS=0.01 LOSS_LIMIT=30 pingpong_case rc "IPv4 with 1% loss each way, first 30 frames" \
		client 0 "$G_GID4" -m 1024 -s 65536 -n 50 -c
	unset DROCE_COUNTERS
	check_capture
	check_droce_captures

	echo "1..$T"
	[ "$FAILED" = 0 ]
}

main "$@"
