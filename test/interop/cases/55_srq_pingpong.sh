# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
#
# Shared receive queues: the guest's unmodified ibv_srq_pingpong (rdma-core
# 44) against droce-srq-pingpong (app/droce-pingpong), droce as server and
# as client, IPv4, 4 QPs on each side's SRQ, 40 exchanges of 4096 bytes
# (-m 1024: 4 packets a message) with -c.  Passes when both exit 0, both
# print 4 local and 4 remote address lines and the result lines of
# 40 iterations, no "invalid data", and droce's "data check passed"
# (pingpong_failure in interop.sh).
# Sourced by interop.sh (helpers and variables: cases/README.md).

for role in server client; do
	pingpong_case srq "IPv4 4 QPs" "$role" 0 "$G_GID4" \
		-q 4 -m 1024 -s 4096 -n 40 -c
done
