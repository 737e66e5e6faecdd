# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# Issue 13's lifetime models seen from a real peer: the guest's
# guest-access -L (libibverbs on Soft-RoCE) WRITEs a sequence number into
# droce-access -L's memory, one WRITE at a time, and reports its first
# failed completion (access_cases.h, lifetime mode).
#   plain  droce's server is killed with SIGKILL once the WRITEs arrive:
#          nobody answers, so the guest's first failure is RETRY_EXC_ERR
#          after its retry timeout (timeout 14, retry_cnt 6: 7 x 67 ms; rxe
#          takes 7 for "retry forever").
#   lease  droce's server leases the region for ACC_LEASE_MS and its
#          application thread hangs (the engine runs on a transport lcore):
#          the guest's first failure is REM_ACCESS_ERR, droce's memory
#          holds exactly the guest's last successful WRITE, the key is
#          expired and droce sent exactly one Remote Access Error NAK.
#   daemon droce's server is an application on droced (the memory-owner
#          daemon, app/droced) that makes the region persistent
#          (droce_persist_mr) and is killed with SIGKILL: the guest's WRITEs
#          go on landing; a second application attaches the region by name,
#          sees them (the sequence number grows past the one at the kill)
#          and releases it: the guest's first failure is REM_ACCESS_ERR,
#          after at least as many WRITEs as the attached one saw; droced
#          then holds no application and no region.
# The times the guest prints are reported, never asserted (TCG guest).
# Sourced by interop.sh (its helpers, $LOGDIR...).

LIFETIME_ACCESS=${DROCE_ACCESS:-$BUILD/test/interop/droce-access}
LIFETIME_GUEST=${DROCE_GUEST_ACCESS:-$BUILD/test/interop/guest/guest-access}
LIFETIME_DROCED=${DROCED:-$BUILD/app/droced/droced}

# guest_writes MODEL GLOG DLOG: the guest's guest-access -L MODEL against
# the droce-access that is starting (DLOG), until droce sees its WRITEs
# arrive (at most 120 s); gpid is the guest's.
guest_writes() {
	local end=$((SECONDS + 120))

	droce_listening 60 || true
	gexec 280 "/tmp/guest-access -L $1 -g $G_GID4 $H_IP" >"$2" 2>&1 &
	gpid=$!
	until grep -q "^lifetime $1: the guest's WRITEs arrive" "$3" || ((SECONDS > end)); do
		sleep 0.1
	done
}

# lifetime_case MODEL EXPECTED_STATUS
lifetime_case() {
	local model=$1 want=$2 gl=$LOGDIR/lifetime.$1.guest dl=$LOGDIR/lifetime.$1.droce
	local dpid gpid line lcore='' nocap=''

	if [ "$model" = lease ]; then
		lcore=1		# a transport lcore runs the engine while the application hangs
	else
		nocap=1		# SIGKILLed: its capture file would be cut off
	fi
	# shellcheck disable=SC2046
	timeout 300 ip netns exec "$NETNS" "$LIFETIME_ACCESS" $(LCORE=$lcore eal_args) -- \
		$(LCORE=$lcore NO_CAPTURE=$nocap droce_args) -g 0 -L "$model" >"$dl" 2>&1 &
	dpid=$!
	guest_writes "$model" "$gl" "$dl"
	if [ "$model" = plain ]; then
		# $dpid is timeout's: droce-access is its child (ip netns exec execs it)
		local victim
		victim=$(pgrep -P "$dpid")
		kill -KILL "$victim" 2>/dev/null
		log "lifetime plain: droce-access (PID $victim) killed with SIGKILL"
	fi
	wait "$gpid"
	wait "$dpid"
	line=$(grep -m1 "^lifetime $model: guest's first failure" "$gl")
	if [[ $line == *"first failure $want (expected $want)"* ]] && grep -q '^OK' "$gl"; then
		ok "lifetime $model: ${line#lifetime "$model": }"
	else
		cat "$gl" "$dl" >"$LOGDIR/lifetime.$model"
		not_ok "lifetime $model: the guest's first failure is $want" "$LOGDIR/lifetime.$model"
	fi
	if [ "$model" = lease ]; then
		line=$(grep -m1 "^case lifetime_lease: " "$dl")
		if [[ $line == "case lifetime_lease: droce ok "* ]] && grep -q '^OK' "$dl"; then
			ok "lifetime lease, droce's side: ${line#case lifetime_lease: droce ok }"
		else
			cat "$dl" >"$LOGDIR/lifetime.lease.droce.fail"
			not_ok "lifetime lease: droce's memory, key and NAK" \
				"$LOGDIR/lifetime.lease.droce.fail"
		fi
	fi
}

# first_number TEXT PATTERN: the first number after PATTERN in TEXT
first_number() {
	local rest=${1#*"$2"}
	[ "$rest" != "$1" ] || return 1
	rest=${rest%%[!0-9]*}
	[ -n "$rest" ] && echo "$rest"
}

# The daemon model: droced in the namespace (its engine on a transport
# lcore), droce-access -L daemon as its application, then -L reattach.
lifetime_daemon_case() {
	local gl=$LOGDIR/lifetime.daemon.guest dl=$LOGDIR/lifetime.daemon.droce
	local rl=$LOGDIR/lifetime.daemon.reattach cl=$LOGDIR/lifetime.daemon.droced
	local sock=$LOGDIR/droced.sock dpid apid gpid victim at_kill first later guest_n
	local line list why=''

	rm -f "$sock"
	# shellcheck disable=SC2046
	timeout 300 ip netns exec "$NETNS" "$LIFETIME_DROCED" --no-pci -l 0,1 \
		--file-prefix=interopd$$ --log-level=lib.eal:error \
		"--vdev=net_af_packet0,iface=$VETH,framesz=8192,blocksz=8192" -- \
		$(LCORE=1 NO_CAPTURE=1 droce_args) --socket="$sock" >"$cl" 2>&1 &
	dpid=$!
	if ! log_ready "$cl" '^droced: ready on' 60; then
		kill "$(pgrep -P "$dpid")" 2>/dev/null
		wait "$dpid"
		not_ok "lifetime daemon: droced started" "$cl"
		return
	fi
	timeout 300 ip netns exec "$NETNS" "$LIFETIME_ACCESS" -l 0 --no-pci -- \
		--droce-daemon="$sock" -g 0 -L daemon >"$dl" 2>&1 &
	apid=$!
	guest_writes daemon "$gl" "$dl"
	victim=$(pgrep -P "$apid")
	kill -KILL "$victim" 2>/dev/null
	log "lifetime daemon: droce-access (PID $victim) killed with SIGKILL"
	wait "$apid"
	at_kill=$(first_number "$(cat "$dl")" "(memory holds WRITE ") || at_kill=''
	sleep 1		# the guest's WRITEs go on into the persistent region
	timeout 120 ip netns exec "$NETNS" "$LIFETIME_ACCESS" -l 0 --no-pci -- \
		--droce-daemon="$sock" -L reattach >"$rl" 2>&1
	wait "$gpid"
	first=$(first_number "$(cat "$rl")" "memory holds WRITE ") || first=''
	later=$(first_number "$(cat "$rl")" "then WRITE ") || later=''
	line=$(grep -m1 "^lifetime daemon: guest's first failure" "$gl")
	guest_n=$(first_number "$line" ") after ") || guest_n=''
	list=$(timeout 30 "$LIFETIME_DROCED" --ctl "$sock" list 2>&1)
	kill -TERM "$(pgrep -P "$dpid")" 2>/dev/null
	wait "$dpid"
	if [ -z "$at_kill" ] || [ -z "$first" ] || [ -z "$later" ] || [ -z "$guest_n" ]; then
		why="a sequence number missing (at the kill '$at_kill', attached '$first', then '$later', the guest's '$guest_n')"
	elif ! grep -q '^lifetime reattach: released' "$rl"; then
		why="the second application did not release the region"
	elif ((first <= at_kill)); then
		why="no WRITE landed between the kill ($at_kill) and the attach ($first)"
	elif ((guest_n < later)); then
		why="the guest's last success $guest_n is before what the attached application saw ($later)"
	elif [[ $line != *"first failure REM_ACCESS_ERR (expected REM_ACCESS_ERR)"* ]]; then
		why="the guest's first failure: $line"
	elif ! grep -q '^applications: 0' <<<"$list" || ! grep -q '^persistent regions: 0' <<<"$list"; then
		why="droced still holds something: $list"
	fi
	if [ -z "$why" ]; then
		ok "lifetime daemon: WRITEs went on after the kill (WRITE $at_kill at the kill, $first at the reattach, then $later); ${line#lifetime daemon: }; droced: 0 applications, 0 regions"
	else
		cat "$gl" "$dl" "$rl" "$cl" >"$LOGDIR/lifetime.daemon"
		not_ok "lifetime daemon: $why" "$LOGDIR/lifetime.daemon"
	fi
}

lifetime_cases() {
	if [ ! -x "$LIFETIME_GUEST" ] || [ ! -x "$LIFETIME_ACCESS" ]; then
		not_ok "lifetime: guest-access or droce-access not built (libibverbs-dev missing? run usertools/droce-setup)"
		return
	fi
	if ! guest_push "$LIFETIME_GUEST" guest-access "$LOGDIR/lifetime.push"; then
		not_ok "guest-access copied into the guest" "$LOGDIR/lifetime.push"
		return
	fi
	lifetime_case plain RETRY_EXC_ERR
	lifetime_case lease REM_ACCESS_ERR
	lifetime_daemon_case
}

lifetime_cases
