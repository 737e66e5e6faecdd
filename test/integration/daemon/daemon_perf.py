#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce-perf as a droced application (app/droced): droced owns one end of
net_memif, the droce-perf server runs on it (--droce-daemon), an in-process
droce-perf client is on the other end; a droced of its own for each case.  For write_bw -s 65536 -n ITERS and
write_lat -s 8 -n ITERS, checks:
  - exit status 0 on both sides;
  - one table row on each side with exactly those #bytes and #iterations
    (write_bw: the client's row on both; write_lat: each side's own);
  - write_bw: the server's data check passed over all 65536 bytes (the
    client's pattern is in the server's droce_alloc_buf buffer);
  - with DROCE_COUNTERS=1 (set for both): the server, an application of
    droced, prints that its counters are droced's ("not counted here"),
    never a value (UINT64_MAX, "no such counter", was printed for each);
    the client prints its engine's, sent_pkts >= ITERS (a packet at least
    per operation);
  - droced's reap line for the server: 0 MRs revoked, 0 QPs, 0 buffer bytes
    freed, 0 objects left (droce-perf released all of it itself, the buffer
    with droce_free_buf), and droced --ctl list empty again.
No speed is asserted (test/bench/droce_bench.py --daemon measures it).
When a case fails, droced's engine counters (/droce/stats) are printed
beside the client's output: sent/received frames, retransmissions and the
transport lcore's scheduling gaps, to tell frames lost from a side that did
not run (a client giving up after 10 s without frames while droced's
counters match its own, and droced's retransmissions sent after the
client's exit, is the latter).

Usage: daemon_perf.py DROCED DROCE_PERF.  Only processes this script
started are stopped (by their Popen handle).  Needs hugepages (exit 77 when
DROCE_NO_HUGE=1).
"""
import json
import os
import re
import socket
import sys

from daemon_test import GIDS, Setup, fail, runtime_dir, use_lsan_supp

ITERS = 1000
CASES = (("write_bw", 65536), ("write_lat", 8))
QP_TIMEOUT = 18
NUM = r"\d+(?:\.\d+)?"
ROW = re.compile(r"^ (\d+)\s+(\d+)\s+" + NUM + r"(?:\s+" + NUM + r"){2,6}\s*$", re.M)
SRV_COUNTERS = "droce counters: not counted here (the engine is droced's)"
CLI_COUNTERS = re.compile(r"^droce counters: sent_pkts=(\d+) ", re.M)
PASSED = "droce-perf: data check passed: all 65536 bytes written are the client's pattern"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# droced's engine counters printed when a case fails: whether droced's
# transport lcore was descheduled (sched_gap_max_us; counted only while a
# timer is armed) and what it sent after the client's last frame
DROCED_COUNTERS = ("sent_pkts", "rcvd_pkts", "retransmitted_pkts", "retransmit_timeouts",
                   "retransmit_timeouts_in_gap", "sched_gaps", "sched_gap_max_us",
                   "link_tx_pkts", "link_tx_full", "link_rx_pkts")


def droced_counters(s):
    """droced's /droce/stats (its engine's counters), a subset, or why not."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as t:
            t.settimeout(10)
            t.connect(f"{runtime_dir(s.prefix)}/dpdk_telemetry.v2")
            t.recv(4096)			# the greeting
            t.send(b"/droce/stats,droce0")
            st = json.loads(t.recv(1 << 16))["/droce/stats"]
        return " ".join(f"{k}={st.get(k)}" for k in DROCED_COUNTERS)
    except (OSError, ValueError, KeyError, TypeError) as e:
        return f"not read ({e})"


def run_case(s, perf, test, size):
    port = free_port()
    # perftest's -u 18, as perf_pair.py: 8 x 1.07 s of retry budget instead
    # of 8 x 67 ms; nothing here is about the budget, and under ASan on a
    # loaded 2-core machine a peer descheduled for 0.5 s made the other's
    # QP give up (write_lat: "transport retry counter exceeded")
    args = [test, "-s", str(size), "-n", str(ITERS), "-p", str(port), "-u", str(QP_TIMEOUT)]
    srv = s.spawn(f"{test} server", [perf, "-l", "0", "--no-pci", "--",
                                     f"--droce-daemon={s.sock}", *args])
    srv.wait_line(r"Waiting for client to connect")
    memif = f"net_memif0,role=client,socket={s.tmp}/memif.sock,socket-abstract=no"
    cli = s.spawn(f"{test} client", [perf, "-l", "1", "--no-pci", f"--vdev={memif}",
                                     "--", f"--droce-ipv4={GIDS[1]}", *args, "127.0.0.1"])
    rc_c, rc_s = cli.wait(120), srv.wait(30)
    if rc_c != 0 or rc_s != 0:
        print(f"--- {cli.name}:\n{cli.output()}")
        print(f"--- droced's engine: {droced_counters(s)}")
        fail(f"{test}: exit server {rc_s} client {rc_c}", srv)
    for p in (srv, cli):
        rows = [(int(m.group(1)), int(m.group(2))) for m in ROW.finditer(p.output())]
        if rows != [(size, ITERS)]:
            fail(f"{p.name}: rows (#bytes, #iterations) {rows}, expected "
                 f"[({size}, {ITERS})]", p)
    if SRV_COUNTERS not in srv.output() or str(2**64 - 1) in srv.output():
        fail(f"{test}: the server's counters line is not {SRV_COUNTERS!r}", srv)
    m = CLI_COUNTERS.search(cli.output())
    if m is None or int(m.group(1)) < ITERS:
        fail(f"{test}: the client's counters: no sent_pkts >= {ITERS}", cli)
    if test == "write_bw" and PASSED not in srv.output():
        fail(f"{test}: no data check on the server", srv)
    reap = s.droced.wait_line(rf"droced: pid {srv.p.pid} gone: (.*)")
    if not re.match(r"0 MRs revoked in \d+ us, 0 QPs, 0 buffer bytes freed \d+ us later, "
                    r"0 objects left",
                    reap.group(1)):
        fail(f"{test}: droced reaped {reap.group(1)}", s.droced)
    s.expect_apps({}, f"after {test}")
    print(f"{test} -s {size} -n {ITERS}: server on droced, client in process: "
          f"rows exact, {reap.group(1)}")


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    if os.environ.get("DROCE_NO_HUGE") == "1":
        print("daemon mode needs hugepages (DPDK multi-process), DROCE_NO_HUGE=1")
        return 77
    use_lsan_supp()
    os.environ["DROCE_COUNTERS"] = "1"	# droce-perf's counters line, both sides
    for test, size in CASES:
        # a droced per case: its memif server side does not take a second
        # client after the first one left
        s = Setup(sys.argv[1], None)
        try:
            s.start_droced()
            run_case(s, sys.argv[2], test, size)
        finally:
            s.cleanup()
    print("daemon perf: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
