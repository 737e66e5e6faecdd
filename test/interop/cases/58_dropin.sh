# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# The drop-in libibverbs.so.1 (lib/ibverbs) against the kernel: Debian's
# unmodified ibv_rc_pingpong and perftest on droce (usertools/droce-run,
# droce's options in DROCE_ARGS) against the same programs (rdma-core 44,
# perftest 4.5-0.17) on the guest's Soft-RoCE, droce as server and as
# client.  ibv_rc_pingpong polling and -e (-m 1024 -s 4096 -n 20 -c:
# pingpong_failure, kind ibv); ib_write_bw and ib_read_lat (-m 1024
# -s 65536 / 8192 -n 10): both exit 0, every side that prints a table
# (perftest_prints) has the row of that size and iteration count, and
# droce's side ran on droce0.  droce has a transport lcore in every case
# (dropin_run, LCORE=1): these programs block outside the verbs (in their TCP exchange,
# or as a passive perftest side while the peer READs or WRITEs), where
# run-to-completion answers nothing, not even the guest's ARP request when
# its modify to RTR resolves droce's address (an ibv_rc_pingpong -e server
# in the guest failed "Failed to modify QP to RTR" that way).
# Sourced by interop.sh (helpers and variables: cases/README.md).

# dropin_pair ROLE GLOG DLOG "GUEST CMD" PROG ARGS...: PROG on droce
# through the drop-in as ROLE (server|client; a client gets $G_IP last),
# GUEST CMD in the guest (a client gets $H_IP last); sets rc_g and rc_d.
dropin_pair() {
	local role=$1 gl=$2 dl=$3 gcmd=$4
	shift 4
	if [ "$role" = server ]; then
		on_both_sides server 110 tcp_ready "$gl" "$dl" "$gcmd $H_IP" dropin_run "$@"
	else
		on_both_sides client 110 tcp_ready "$gl" "$dl" "$gcmd" dropin_run "$@" "$G_IP"
	fi
}

# dropin_pingpong ROLE OPTS...: ibv_rc_pingpong on both sides.
dropin_pingpong() {
	local role=$1
	shift
	local gl=$LOGDIR/$T.gdrop dl=$LOGDIR/$T.ddrop rc_g rc_d why
	local what="ibv_rc_pingpong on the drop-in vs the guest's (droce $role; $*)"
	dropin_pair "$role" "$gl" "$dl" "ibv_rc_pingpong -d rxe0 -g $G_GID4 $*" \
		ibv_rc_pingpong -g 0 "$@"
	why=$(pingpong_failure ibv "$gl" "$dl" "$@")
	case_report "$what" "$why" "$gl" "$dl"
}

# dropin_perftest TEST ROLE OPTS...: ib_TEST on both sides.
dropin_perftest() {
	local test=$1 role=$2
	shift 2
	local gl=$LOGDIR/$T.gdperf dl=$LOGDIR/$T.ddperf rc_g rc_d why kind=bw size iters
	[ "${test%_lat}" != "$test" ] && kind=lat
	size=$(echo " $*" | sed -n 's/.* -s \([0-9]*\).*/\1/p')
	iters=$(echo " $*" | sed -n 's/.* -n \([0-9]*\).*/\1/p')
	local what="ib_$test on the drop-in vs the guest's (droce $role; $*)"
	dropin_pair "$role" "$gl" "$dl" "ib_$test -d rxe0 -F -x $G_GID4 $*" \
		"ib_$test" -d droce0 -F -x 0 "$@"
	why=$(perftest_missing_rows "$test" "$role" "$gl" "$dl" "$kind" "$size" "$iters")
	grep -Eq 'Device +: droce0\b' "$dl" || why="$why droce's side not on droce0;"
	case_report "$what" "$why" "$gl" "$dl"
}

for _role in server client; do
	dropin_pingpong "$_role" -m 1024 -s 4096 -n 20 -c
	dropin_pingpong "$_role" -m 1024 -s 4096 -n 20 -c -e
	dropin_perftest write_bw "$_role" -m 1024 -s 65536 -n 10
	dropin_perftest read_lat "$_role" -m 1024 -s 8192 -n 10
done
unset _role
