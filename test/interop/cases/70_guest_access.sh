# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# droce's remote access checks against a real requester: guest-access
# (test/interop/guest/guest_access.c, libibverbs on the guest's Soft-RoCE)
# posts the accesses of test/interop/access_cases.h against droce-access's
# memory, one fresh QP pair per case: wrong R_Key (variant, index), range
# past the end / before the start of a region, a region without the right
# (no remote rights, read-only, write-only, no atomic), a type-2 window
# invalidated after its key was sent, past the window's end, a region
# deregistered after its key was sent, a QP without REMOTE_WRITE; then the
# valid WRITE / READ / FETCH_ADD / window WRITE and a zero-length WRITE with
# a bad key (C9-88) that must succeed.  Each case is one TAP line: the
# guest's completion status (and READ data / ATOMIC original value) is as
# expected, droce's whole buffer equals its shadow copy and droce sent
# exactly the expected NAK.  Sourced by interop.sh (its helpers, $LOGDIR...).

ACCESS=${DROCE_ACCESS:-$BUILD/test/interop/droce-access}
GUEST_ACCESS=${DROCE_GUEST_ACCESS:-$BUILD/test/interop/guest/guest-access}

guest_access_cases() {
	local gl=$LOGDIR/access.guest dl=$LOGDIR/access.droce rc_g rc_d dpid name g d

	if [ ! -x "$GUEST_ACCESS" ] || [ ! -x "$ACCESS" ]; then
		# droce-setup installs libibverbs-dev: missing programs are a failure
		not_ok "guest access checks: guest-access or droce-access not built (libibverbs-dev missing? run usertools/droce-setup)"
		return
	fi
	# the guest has rdma-core 44 and the host's Debian 12 libc: the host's
	# build runs there as it is
	if ! guest_push "$GUEST_ACCESS" guest-access "$gl"; then
		not_ok "guest-access copied into the guest" "$gl"
		return
	fi
	# shellcheck disable=SC2046
	timeout 400 ip netns exec "$NETNS" "$ACCESS" $(eal_args) -- $(droce_args) -g 0 \
		>"$dl" 2>&1 &
	dpid=$!
	droce_listening 60 || true
	gexec 380 "/tmp/guest-access -g $G_GID4 $H_IP" >"$gl" 2>&1
	rc_g=$?
	wait "$dpid"
	rc_d=$?
	log "guest-access rc=$rc_g, droce-access rc=$rc_d"
	for name in $("$ACCESS" --list); do
		g=$(grep -m1 "^case $name: " "$gl")
		d=$(grep -m1 "^case $name: " "$dl")
		if [[ $g == "case $name: guest ok "*"; droce memory ok" ]] &&
		   [[ $d == "case $name: droce ok "* ]]; then
			ok "guest -> droce access $name: ${g#*: guest ok }"
		else
			printf '%s\n%s\n' "${g:-no guest result}" "${d:-no droce result}" \
				>"$LOGDIR/access.$name"
			not_ok "guest -> droce access $name" "$LOGDIR/access.$name"
		fi
	done
	if [ "$rc_g" = 0 ] && [ "$rc_d" = 0 ] && grep -q '^OK' "$gl" && grep -q '^OK' "$dl"; then
		ok "guest-access and droce-access both finished every case"
	else
		cat "$gl" "$dl" >"$LOGDIR/access.both"
		not_ok "guest-access and droce-access both finished every case" "$LOGDIR/access.both"
	fi
}

guest_access_cases
