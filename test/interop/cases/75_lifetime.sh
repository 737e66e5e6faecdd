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
# The times the guest prints are reported, never asserted (TCG guest).
# Sourced by interop.sh (its helpers, $LOGDIR...).

LIFETIME_ACCESS=${DROCE_ACCESS:-$BUILD/test/interop/droce-access}
LIFETIME_GUEST=${DROCE_GUEST_ACCESS:-$BUILD/test/interop/guest/guest-access}

# lifetime_case MODEL EXPECTED_STATUS
lifetime_case() {
	local model=$1 want=$2 gl=$LOGDIR/lifetime.$1.guest dl=$LOGDIR/lifetime.$1.droce
	local dpid gpid end line lcore='' nocap=''

	if [ "$model" = lease ]; then
		lcore=1		# a transport lcore runs the engine while the application hangs
	else
		nocap=1		# SIGKILLed: its capture file would be cut off
	fi
	# shellcheck disable=SC2046
	timeout 300 ip netns exec "$NETNS" "$LIFETIME_ACCESS" $(LCORE=$lcore eal_args) -- \
		$(LCORE=$lcore NO_CAPTURE=$nocap droce_args) -g 0 -L "$model" >"$dl" 2>&1 &
	dpid=$!
	droce_listening 60 || true
	gexec 280 "/tmp/guest-access -L $model -g $G_GID4 $H_IP" >"$gl" 2>&1 &
	gpid=$!
	end=$((SECONDS + 120))
	until grep -q "^lifetime $model: the guest's WRITEs arrive" "$dl" || ((SECONDS > end)); do
		sleep 0.1
	done
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
}

lifetime_cases
