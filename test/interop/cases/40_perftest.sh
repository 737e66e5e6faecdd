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

# shellcheck source=SCRIPTDIR/perftest.bash
. "$(dirname "${BASH_SOURCE[0]}")/perftest.bash"

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
