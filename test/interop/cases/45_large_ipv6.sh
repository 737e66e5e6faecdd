# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# 1 MB RC ping-pong over IPv6 at path MTU 2048 (-s 1000000: 489 packets a
# message), droce as server and as client (issue 11 item 9: once such a
# run went silent on both sides 0.27 s in).  A watchdog looks at the wire
# during the case: when no RoCEv2 frame moved for $STALL_S seconds (the
# bridge capture and droce's own capture both unchanged), it records what
# each side shows and which stopped (stall_report, printed as TAP comments
# after the case) and ends the case at once instead of waiting for the
# timeouts.  Sourced by interop.sh (helpers and variables: cases/README.md).

STALL_S=${DROCE_INTEROP_STALL_S:-15}

# The last RoCEv2 frames of this case in a capture, one per line:
# epoch source opcode PSN AckReq (frames since $1, the case's start).
stall_frames() {
	tshark -n -r "$2" -Y "frame.time_epoch >= $1 && udp.dstport == 4791" \
		-T fields -e frame.time_epoch -e ipv6.src -e ip.src \
		-e infiniband.bth.opcode -e infiniband.bth.psn -e infiniband.bth.a 2>/dev/null |
		awk -F'\t' '{ src = $2 != "" ? $2 : $3; print $1, src, $4, $5, $6 }'
}

# What both sides show once the wire went quiet, and who stopped.
stall_report() {
	local t0=$1 dcap=$2 wire=$LOGDIR/$T.stall.wire droce=$LOGDIR/$T.stall.droce
	stall_frames "$t0" "$LOGDIR/wire.pcap" >"$wire"
	stall_frames "$t0" "$dcap" >"$droce"
	echo "STALL: no RoCEv2 frame on the wire for ${STALL_S} s"
	echo "last frames on the bridge (epoch src opcode psn ackreq):"
	tail -n 4 "$wire"
	echo "guest rxe: $(gexec 5 'rdma statistic show link rxe0/1' 2>&1 | tr -s ' ' | cut -c1-200)"
	echo "guest eth0: $(gexec 5 'grep eth0 /proc/net/dev' 2>&1 | tr -s ' ')"
	echo "guest dmesg: $(gexec 5 'dmesg | tail -n 3' 2>&1 | tr '\n' '|')"
	local from_g_wire from_g_droce last
	from_g_wire=$(awk -v d="$D_IP6" -v d4="$D_IP" '$2 != d && $2 != d4' "$wire" | wc -l)
	from_g_droce=$(awk -v d="$D_IP6" -v d4="$D_IP" '$2 != d && $2 != d4' "$droce" | wc -l)
	last=$(tail -n 1 "$wire")
	echo "frames from the guest: $from_g_wire on the bridge, $from_g_droce received by droce"
	local src ackreq
	src=$(echo "$last" | cut -d' ' -f2)
	ackreq=$(echo "$last" | cut -d' ' -f5)
	if [ -z "$last" ]; then
		echo "DIAGNOSIS: no RoCEv2 frame in this case: the QPs never started (the out-of-band exchange?)"
	elif [ "$from_g_wire" -gt "$from_g_droce" ]; then
		echo "DIAGNOSIS: droce stopped receiving: frames on the wire it never took"
	elif [ "$src" != "$D_IP6" ] && [ "$src" != "$D_IP" ] && [ "$ackreq" = 1 ]; then
		echo "DIAGNOSIS: droce owes an answer: the guest's last request asked for an ACK"
	elif [ "$src" != "$D_IP6" ] && [ "$src" != "$D_IP" ]; then
		echo "DIAGNOSIS: the guest stopped sending: droce took every frame, owes no ACK (none asked since its last), and the guest never retransmitted"
	else
		echo "DIAGNOSIS: droce's frame was the last: the guest stopped answering it"
	fi
}

# pingpong_case with the watchdog beside it.
watched_pingpong_case() {
	local t0 dog
	t0=$(date +%s.%N)
	(
		local prev='' cur quiet=0 dcap
		while sleep 1; do
			cur=$(stat -c %s "$LOGDIR/wire.pcap" "$LOGDIR"/droce."$T".*.pcapng 2>/dev/null | tr '\n' ' ')
			if [ "$cur" != "$prev" ]; then
				prev=$cur
				quiet=0
				continue
			fi
			quiet=$((quiet + 1))
			[ "$quiet" -ge "$STALL_S" ] || continue
			for dcap in "$LOGDIR"/droce."$T".*.pcapng; do break; done
			[ -e "$dcap" ] || continue
			stall_report "$t0" "$dcap" >"$LOGDIR/$T.stall" 2>&1
			# end both programs: droce by the PID that holds its capture
			# open (the one this case started), and the pingpong in the
			# suite's own guest
			fuser "$dcap" 2>/dev/null | xargs -r kill -TERM 2>/dev/null
			# shellcheck disable=SC2016
			gexec 5 'kill $(pidof ibv_rc_pingpong) 2>/dev/null' >/dev/null 2>&1
			exit 0
		done
	) &
	dog=$!
	local t=$T
	pingpong_case "$@"
	kill "$dog" 2>/dev/null
	wait "$dog" 2>/dev/null
	[ -s "$LOGDIR/$t.stall" ] && sed 's/^/# /' "$LOGDIR/$t.stall"
}

for role in server client; do
	watched_pingpong_case rc "IPv6 1 MB MTU 2048" "$role" 1 "$G_GID6" \
		-m 2048 -s 1000000 -n 5 -c
done
