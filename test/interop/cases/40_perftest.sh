# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Interop cases: the real perftest 4.5-0.17 in the Soft-RoCE guest against
# droce-perf on the host, which speaks perftest's out-of-band exchange
# (TCP 18515; app/droce-perf/perf_exch.c).  Every tool, both roles, small
# -n, multi-packet sizes, MTU 1024 and 4096, the guest's IPv4 GID (droce
# -x 0).  A case passes when both sides exit 0, every side that prints a
# result table (perftest's rules, which droce-perf follows) has the row for
# the size and iterations with non-zero numbers, and droce-perf's data check
# passed: every byte it received, was written or read equals perftest's
# buffer (perftest_uncheckable: the only cases that may say "no data
# check").  Then ib_write_bw and ib_read_bw against droce-perf with 1% loss
# each way at droce's port: correct data, and droce's counters show the
# recovery.  Sourced by interop.sh (helpers and variables: cases/README.md).

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
	what="ib_$test vs droce-perf $test (droce $role; $opts)"
	if [ "$role" = server ]; then
		# shellcheck disable=SC2046,SC2086
		timeout 150 ip netns exec "$NETNS" "$PERF" $(eal_args) -- $(droce_args) \
			$test -x 0 $opts >"$dl" 2>&1 &
		local dpid=$!
		droce_listening 60 || true
		gexec 140 "ib_$test -d rxe0 -F -x $G_GID4 $opts $H_IP" >"$gl" 2>&1
		rc_g=$?
		wait "$dpid"
		rc_d=$?
	else
		gexec 140 "ib_$test -d rxe0 -F -x $G_GID4 $opts" >"$gl" 2>&1 &
		local gpid=$!
		sleep 4
		# shellcheck disable=SC2046,SC2086
		droce_run 140 "$PERF" $(eal_args) -- $(droce_args) $test -x 0 $opts "$G_IP" >"$dl" 2>&1
		rc_d=$?
		wait "$gpid"
		rc_g=$?
	fi
	local why=
	[ "$rc_g" = 0 ] || why="$why guest exit $rc_g;"
	[ "$rc_d" = 0 ] || why="$why droce exit $rc_d;"
	why="$why$(perftest_missing_rows "$test" "$role" "$gl" "$dl" "$kind" "$size" "$iters")"
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
	if [ -z "$why" ]; then
		ok "$what: $checked${LOSS:+; $(grep '^droce counters' "$dl")}"
	else
		log "$why"
		cat "$gl" "$dl" >"$LOGDIR/$T.both"
		not_ok "$what" "$LOGDIR/$T.both"
	fi
}

# droce as the client: MTU 1024; droce as the server: MTU 4096
for _role in client server; do
	if [ "$_role" = client ]; then _m=1024; else _m=4096; fi
	perftest_case write_bw "$_role" -m $_m -s 65536 -n 10
	perftest_case read_bw "$_role" -m $_m -s 65536 -n 10
	perftest_case send_bw "$_role" -m $_m -s 8192 -n 10
	perftest_case write_lat "$_role" -m $_m -s 8192 -n 10
	perftest_case read_lat "$_role" -m $_m -s 8192 -n 10
	perftest_case send_lat "$_role" -m $_m -s 8192 -n 10
	perftest_case atomic_bw "$_role" -m $_m -A CMP_AND_SWAP -n 20
	perftest_case atomic_bw "$_role" -m $_m -A FETCH_AND_ADD -n 20
done
unset _role _m

# 1% loss each way at droce's port: droce-perf checks the data (the bytes
# written to the server, the bytes the client read: perftest's buffer), both
# stacks recover (droce's counters), perftest's tables are complete
export DROCE_COUNTERS=1
LOSS=0.01 perftest_case write_bw server -m 1024 -s 65536 -n 100
LOSS=0.01 perftest_case read_bw client -m 1024 -s 65536 -n 100
unset DROCE_COUNTERS
