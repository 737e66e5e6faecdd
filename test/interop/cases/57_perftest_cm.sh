# shellcheck shell=bash
# SPDX-License-Identifier: BSD-3-Clause
#
# perftest's rdma_cm mode (-R): the guest's unmodified ib_write_bw -R and
# ib_read_lat -R (issue 15's gate), ib_read_bw -R, ib_send_bw -R and
# ib_write_lat -R (perftest 4.5-0.17 on the kernel's rdma_cm) against
# droce-perf -R (app/droce-perf/perf_cm.c on lib/cm), droce as server and
# as client.  No TCP at all: the side channel is one RDMA CM connection to
# port 18515 (perftest's messages as 56-byte SENDs), the test QP a second
# one, its attributes from the CM.  Passing as in 40_perftest.sh: both exit
# 0, the result rows where perftest prints them, droce-perf's data check
# (perftest's rand() fill) except where nothing can be seen.  Sourced by
# interop.sh (helpers and variables: README.md).

# shellcheck source=SCRIPTDIR/perftest.bash
. "$(dirname "${BASH_SOURCE[0]}")/perftest.bash"

# 60 s each side (a run takes a few): perftest's client waits for its
# DISCONNECTED at the end, and a droce-perf that left without answering its
# DREQs kept it resending them for about 100 s
export PERFTEST_CM=1 PERFTEST_TMO=60
for _role in server client; do
	perftest_case write_bw "$_role" -s 65536 -n 10
	perftest_case read_lat "$_role" -s 8192 -n 10
	perftest_case read_bw "$_role" -s 65536 -n 10
	perftest_case send_bw "$_role" -s 8192 -n 10
	perftest_case write_lat "$_role" -s 8192 -n 10
done
unset PERFTEST_CM PERFTEST_TMO _role
