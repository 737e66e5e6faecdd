#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# droce's host stack against the Linux kernel over a veth pair.
#   netns droce-t<PID>   : veth end "dk<PID>" with 198.18.7.1/24, 2001:2:0:7::1/64
#   netns droce-t<PID>d  : veth end "dd<PID>", no addresses, IPv6 off; host_ping
#                          (net_af_packet on it, net_host with .2 / ::2) runs here
# The kernel pings droce (IPv4, IPv6, and 4000-byte IPv4 in 4200-MTU frames),
# which works only if droce answers ARP, ND and echo correctly; droce resolves
# the kernel's MAC with ARP and ND and must print the veth's real MAC.  A
# capture on the kernel side is checked with tshark for bad checksums.
# Everything stays inside the two namespaces; both are deleted at exit and
# only processes started here are signalled (by PID).
#
# usage: kernel_peer.sh /path/to/host_ping
set -u

HOST_PING=${1:?usage: $0 /path/to/host_ping}
NSK=droce-t$$
NSD=droce-t$$d
VK=dk$$
VD=dd$$
IP4K=198.18.7.1
IP4D=198.18.7.2
IP6K=2001:2:0:7::1
IP6D=2001:2:0:7::2
TMP=$(mktemp -d /tmp/droce-kpeer.XXXXXX)
HP_PID=
CAP_PID=
FAIL=0

fail() { echo "FAIL: $*"; FAIL=1; }

# the number of frames of the capture that tshark selects with filter $1
# (more tshark options after it); a tshark failure prints -1, which every
# check below refuses, instead of reading as "no frame matched"
tcount() {
	local filter=$1 out rc
	shift
	out=$(tshark -r "$TMP/cap.pcapng" "$@" -Y "$filter" 2>"$TMP/tshark.err")
	rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: tshark -Y '$filter' exited $rc: $(cat "$TMP/tshark.err")" >&2
		echo -1
		return
	fi
	printf '%s' "$out" | grep -c .
}

cleanup() {
	[ -n "$HP_PID" ] && kill -TERM "$HP_PID" 2>/dev/null && wait "$HP_PID" 2>/dev/null
	[ -n "$CAP_PID" ] && kill -TERM "$CAP_PID" 2>/dev/null && wait "$CAP_PID" 2>/dev/null
	ip netns del "$NSK" 2>/dev/null
	ip netns del "$NSD" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if [ "$(id -u)" -ne 0 ]; then
	echo "FAIL: kernel_peer.sh needs root (ip netns, veth, AF_PACKET)"
	exit 1
fi
for tool in ip ping tshark; do
	command -v "$tool" >/dev/null ||
		{ echo "FAIL: '$tool' not found (packages iproute2, iputils-ping, tshark: usertools/droce-setup)"; exit 1; }
done
if ! ip netns add "$NSK"; then
	echo "FAIL: 'ip netns add $NSK' failed: this test needs network namespaces (root, iproute2, a kernel with netns)"
	exit 1
fi
if ! ip netns add "$NSD"; then
	echo "FAIL: 'ip netns add $NSD' failed"
	exit 1
fi
set -e
ip link add "$VK" netns "$NSK" mtu 4200 type veth peer name "$VD" netns "$NSD" mtu 4200
ip -n "$NSK" link set lo up
ip -n "$NSD" link set lo up
# droce's end: no kernel addresses, no kernel IPv6 (no competing ND, MLD, RS)
ip netns exec "$NSD" sysctl -qw "net.ipv6.conf.$VD.disable_ipv6=1"
ip -n "$NSD" link set "$VD" up
ip -n "$NSK" addr add "$IP4K/24" dev "$VK"
ip -n "$NSK" -6 addr add "$IP6K/64" dev "$VK" nodad
ip -n "$NSK" link set "$VK" up
set +e
KMAC=$(ip -n "$NSK" -br link show "$VK" | awk '{print tolower($3)}')
echo "# kernel side $VK in $NSK, MAC $KMAC"

ip netns exec "$NSK" tshark -q -i "$VK" -w "$TMP/cap.pcapng" >"$TMP/tshark.log" 2>&1 &
CAP_PID=$!
for _ in $(seq 50); do
	grep -q "Capturing on" "$TMP/tshark.log" 2>/dev/null && break
	sleep 0.2
done
grep -q "Capturing on" "$TMP/tshark.log" ||
	{ cat "$TMP/tshark.log"; echo "FAIL: the capture on $VK did not start"; exit 1; }

# the kernel's link-local address (droce has none): the kernel solicits
# from it when it re-probes a neighbour (below), and droce must learn it
for _ in $(seq 50); do
	KLL=$(ip -n "$NSK" -6 addr show dev "$VK" scope link | awk '/inet6/ && !/tentative/ { sub("/.*", "", $2); print $2 }')
	[ -n "$KLL" ] && break
	sleep 0.1
done
echo "# kernel link-local $KLL"
ip netns exec "$NSD" "$HOST_PING" --iface "$VD" --ip4 "$IP4D/24" --ip6 "$IP6D/64" \
	--peer4 "$IP4K" --peer6 "$IP6K" --learned "$KLL" --mtu 4200 --seconds 60 \
	>"$TMP/host_ping.log" 2>&1 &
HP_PID=$!
for _ in $(seq 150); do
	grep -q '^ready' "$TMP/host_ping.log" && break
	kill -0 "$HP_PID" 2>/dev/null || break
	sleep 0.2
done
if ! grep -q '^ready' "$TMP/host_ping.log"; then
	cat "$TMP/host_ping.log"
	echo "FAIL: host_ping did not start"
	exit 1
fi
grep '^ready' "$TMP/host_ping.log"

# droce resolves the kernel's MAC on its own from the start (ARP, NS)
for _ in $(seq 50); do
	[ "$(grep -c '^resolved' "$TMP/host_ping.log")" -ge 2 ] && break
	sleep 0.2
done
# the kernel learned droce's MAC from those requests: forget it, so that
# the kernel has to ask (ARP request, multicast NS) and droce must answer
ip -n "$NSK" neigh flush dev "$VK"
ping4() { ip netns exec "$NSK" ping -c 3 -W 2 "$@"; }
ping4 "$IP4D" || fail "IPv4 ping to droce"
ip -n "$NSK" neigh flush dev "$VK"
ip netns exec "$NSK" ping -6 -c 3 -W 2 "$IP6D" || fail "IPv6 ping to droce"
ping4 -s 4000 -M do "$IP4D" || fail "4000-byte IPv4 ping (4200 MTU through af_packet framesz=8192)"
# a ping from the kernel's link-local address: the kernel solicits droce
# with the queued packet's source, so the NS comes from the link-local
ip -n "$NSK" neigh flush dev "$VK"
ip netns exec "$NSK" ping -6 -c 3 -W 2 -I "$KLL%$VK" "$IP6D" ||
	fail "IPv6 ping to droce from the kernel's link-local address"
ip -n "$NSK" neigh show dev "$VK"
kill -INT "$HP_PID"
wait "$HP_PID"
HP_RC=$?
HP_PID=
cat "$TMP/host_ping.log"
[ "$HP_RC" -eq 0 ] || fail "host_ping exited $HP_RC"
grep -qi "^resolved $IP4K $KMAC\$" "$TMP/host_ping.log" || fail "droce did not resolve $IP4K to $KMAC with ARP"
grep -qi "^resolved $IP6K $KMAC\$" "$TMP/host_ping.log" || fail "droce did not resolve $IP6K to $KMAC with ND"
grep -q "^counter rx_arp_reply " "$TMP/host_ping.log" || fail "no ARP reply from the kernel was counted"
grep -q "^counter rx_na " "$TMP/host_ping.log" || fail "no Neighbor Advertisement from the kernel was counted"
grep -q "^counter tx_arp_reply " "$TMP/host_ping.log" || fail "droce answered no ARP request"
grep -q "^counter tx_na " "$TMP/host_ping.log" || fail "droce answered no Neighbor Solicitation"
grep -qi "^neigh $KLL REACHABLE $KMAC\$" "$TMP/host_ping.log" ||
	fail "droce did not learn the kernel's link-local $KLL from its NS"

sleep 0.5
kill -TERM "$CAP_PID"; wait "$CAP_PID"; CAP_PID=
# droce's frames: every checksum good (ip.check_checksum is off by default)
BAD=$(tcount "eth.src != $KMAC && (ip.checksum.status == 0 || icmp.checksum.status == 0 || icmpv6.checksum.status == 0 || _ws.malformed)" \
	-o ip.check_checksum:TRUE)
NA=$(tcount "eth.src != $KMAC && icmpv6.type == 136 && icmpv6.checksum.status == 1")
E6=$(tcount "eth.src != $KMAC && icmpv6.type == 129 && icmpv6.checksum.status == 1")
NS_LL=$(tcount "icmpv6.type == 135 && ipv6.src == $KLL && icmpv6.nd.ns.target_address == $IP6D")
echo "# capture: droce NAs with good checksum $NA, echo6 replies $E6, bad frames $BAD, kernel NS from $KLL $NS_LL"
[ "$BAD" -eq 0 ] || fail "tshark found $BAD bad frames from droce"
[ "$NA" -ge 1 ] || fail "no valid Neighbor Advertisement from droce in the capture"
[ "$E6" -ge 3 ] || fail "fewer than 3 valid ICMPv6 echo replies from droce in the capture"
[ "$NS_LL" -ge 1 ] || fail "the kernel sent no NS from its link-local address (the case above tests nothing)"

if [ "$FAIL" -ne 0 ]; then
	echo "kernel_peer: FAILED"
	exit 1
fi
echo "kernel_peer: OK"
