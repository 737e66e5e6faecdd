# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The perftest cases' helpers, for 40_perftest.sh (TCP side channel) and
# 57_perftest_cm.sh (-R: RDMA CM): the guest's perftest 4.5-0.17 against
# droce-perf, one case at a time.  Sourced by those case files (helpers and
# variables of interop.sh: README.md).  PERFTEST_TMO: each side's timeout
# in seconds (140).  PERFTEST_CM=1 before perftest_case:
# both sides run with -R, the guest's client connects to droce's address
# (no TCP: the side channel is an RDMA CM connection) and without -x (the
# CM picks the GID).

PERF=$BUILD/app/droce-perf/droce-perf

# Where droce-perf cannot check the data: perftest's side checks nothing,
# and droce-perf neither sees the bytes it sent (write_bw, send_bw
# clients: perftest's MR allows no READ back) nor what perftest read
# (read servers).  Everywhere else droce-perf compares every byte with
# perftest's buffer (its rand() fill; app/droce-perf/perf_peerdata.c) or
# the values atomics must return, and "no data check" fails the case.
perftest_uncheckable() {
	case $2:$1 in
	client:write_bw|client:send_bw|server:read_bw|server:read_lat) return 0 ;;
	esac
	return 1
}

# perftest_ready LOG: the droce-perf server waits for its client (with -R
# its CM listener is up only then: perftest's client gives up at a REJ).
perftest_ready() {
	if [ -n "${PERFTEST_CM:-}" ]; then
		log_ready "$1" '^\* Waiting for client to connect' 60
	else
		droce_listening 60
	fi
}

# perftest_case TEST ROLE OPTS...: ib_TEST in the guest, droce-perf TEST
# on the host; ROLE is droce's (server|client).
perftest_case() {
	local test=$1 role=$2
	shift 2
	local opts="$*" gl=$LOGDIR/$T.gperf dl=$LOGDIR/$T.dperf rc_g rc_d
	local kind=bw size iters what
	[ "${test%_lat}" != "$test" ] && kind=lat
	size=$(echo " $opts" | sed -n 's/.* -s \([0-9]*\).*/\1/p')
	[ -n "$size" ] || size=8		# the atomics
	iters=$(echo " $opts" | sed -n 's/.* -n \([0-9]*\).*/\1/p')
	# the guest's GID and the droce server's address: the TCP side
	# channel reaches the kernel on the bridge, -R's CM goes to droce
	local gopts="-x $G_GID4" dopts="-x 0" d_addr=$H_IP tmo=${PERFTEST_TMO:-140}
	if [ -n "${PERFTEST_CM:-}" ]; then
		gopts=-R
		dopts="-R -x 0"
		d_addr=$D_IP
	fi
	what="ib_$test${PERFTEST_CM:+ -R} vs droce-perf $test${PERFTEST_CM:+ -R} (droce $role; $opts)"
	# shellcheck disable=SC2046,SC2086
	if [ "$role" = server ]; then
		on_both_sides server "$tmo" perftest_ready "$gl" "$dl" \
			"ib_$test -d rxe0 -F $gopts $opts $d_addr" \
			droce_run "$PERF" $(eal_args) -- $(droce_args) $test $dopts $opts
	else
		on_both_sides client "$tmo" perftest_ready "$gl" "$dl" \
			"ib_$test -d rxe0 -F $gopts $opts" \
			droce_run "$PERF" $(eal_args) -- $(droce_args) $test $dopts $opts "$G_IP"
	fi
	local why
	why="$(perftest_missing_rows "$test" "$role" "$gl" "$dl" "$kind" "$size" "$iters")"
	grep -q '^ Peer            : perftest' "$dl" || why="$why droce did not see perftest;"
	if grep -q '^droce-perf: no data check' "$dl"; then
		perftest_uncheckable "$test" "$role" ||
			why="$why droce-perf did not check the data;"
	elif ! grep -q '^droce-perf: data check passed' "$dl"; then
		why="$why no data check line;"
	fi
	if [ -n "${LOSS:-}" ] && [ "$(recovered "$dl")" -le 0 ]; then
		why="$why no recovery in droce's counters;"
	fi
	local checked
	checked=$(sed -n 's/^droce-perf: \(data check passed\|no data check\): //p' "$dl" | head -n 1)
	case_report "$what" "$why" "$gl" "$dl" "$checked${LOSS:+; $(grep '^droce counters' "$dl")}"
}
