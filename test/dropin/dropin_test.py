#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Debian's unmodified ibverbs-utils on droce, through the drop-in
libibverbs.so.1 and usertools/droce-run.

  dropin_test.py --run DROCE_RUN --lib DIR tools
      ibv_devices lists droce0; ibv_devinfo -v prints its attributes, port
      and RoCEv2 GID (each field asserted).  A thread that calls
      ibv_get_device_list keeps its CPU affinity (EAL pins the thread that
      starts it to the main lcore; libibverbs pins nobody).
  dropin_test.py --run DROCE_RUN --lib DIR pingpong
      two ibv_{rc,uc,ud,srq}_pingpong processes, both on droce, joined by DPDK
      net_memif (socket in a private temporary folder), TCP exchange over
      127.0.0.1, droce on 198.18.5.1/2; each in polling and -e (event) mode,
      every one with -c (received data validated).  Each side must exit 0,
      its "remote address" must be the other's "local address", the GIDs
      the IPv4-mapped 198.18.5.x, and the byte and iteration counts exact.
      ibv_rc_pingpong also with -N (the ibv_wr_* post API) and -j (device
      memory).  Then options droce does not offer (ODP, timestamps) must fail
      cleanly: exit status 1, no signal.
  dropin_test.py --run DROCE_RUN --lib DIR --prog DROPIN_POLL_FD pollfd
      test/dropin/dropin_poll_fd.c (built against the system's verbs.h),
      receiver and sender over net_memif as above, droce with a transport
      lcore on both sides: the receiver waits for its completions with
      poll() on channel->fd (solicited_only too).  Both print "ok", exit 0.
  dropin_test.py --run DROCE_RUN --lib DIR --prog DROPIN_POLL_FD progress
      droce's defaults, no transport lcore on either side (the drop-in's
      progress thread): dropin_poll_fd as above, rping -C 10 (its CM, CQ
      and main threads), an idle ibv_rc_pingpong server below 5 % of a core
      over 2 s (with a transport lcore above it: the check can fail), and
      over net_af_packet perftest's ib_write_bw and ib_read_lat (their
      passive servers wait in the TCP exchange) and ib_write_lat (both
      sides spin on memory): exit 0 and the exact result rows.  Each
      step's wall time is printed.
  dropin_test.py --run DROCE_RUN --lib DIR --prog DROPIN_MW mw
      test/dropin/dropin_mw.c the same way: type-1 and type-2 memory
      windows bound, used and revoked, and MRs under an iova
      (ibv_reg_mr_iova2, ibv_reg_mr_iova) written by the peer (the exact
      statuses and bytes in its header).
  dropin_test.py --run DROCE_RUN --lib DIR --prog DROPIN_CTXEV ctxev
      test/dropin/dropin_ctxev.c: two contexts of droce0 in one process (a
      memif server, droce's defaults), each reads exactly the events of its
      own objects from its async_fd; then a second process (the memif
      client) connects: PORT_ACTIVE on both, none on a context opened later.
  dropin_test.py --run DROCE_RUN --lib DIR --prog DROPIN_ASYNC async
      test/dropin/dropin_async.c the same way: the asynchronous events on
      context->async_fd (poll(2), ibv_get_async_event, ibv_ack_async_event):
      QP_ACCESS_ERR, COMM_EST, SQ_DRAINED and CQ_ERR, each of its type and
      element (the checks in its header).
  dropin_test.py --run DROCE_RUN --lib DIR --prog DROPIN_ABI abi
      test/dropin/dropin_abi.c the same way: the rest of rdma-core 44's
      libibverbs ABI (the rate conversions against the system's library,
      ibv_query_gid_table, ibv_rereg_mr with the peer's WRITEs, the
      EOPNOTSUPP answers, the IBVERBS_1.0 compat layer: the checks in its
      header).
  dropin_test.py --run DROCE_RUN --lib DIR --droced DROCED [--prog PROG]... daemon
      the drop-in on droced (droce-run --daemon): one droced at the memif's
      server end (198.18.5.1), another at its client end (.2), engines on
      lcores 1 and 0.  ibv_rc_pingpong -c (polling and -e), ib_write_bw and
      ib_read_lat servers on the first at once (its list shows exactly their
      four pids), their clients on the second: the pingpong checks above,
      perftest's result rows of the exact size and iteration count (the
      READ latency server prints none).  Then each --prog (dropin_mw,
      dropin_async): its owner on the first, its peer on the second, both
      print "ok" (memory windows, both types, and MRs under an iova; the
      asynchronous events, through the drop-in on droced).  Both droceds'
      lists empty after.  The buffers are the
      programs' own (posix_memalign'd, malloc'd, dropin_mw's static one):
      moved onto memfds for droced.  Then the device users start once:
      without a droced, droce-run with no option gives ibv_devices no
      device; a droced started by --config=FILE alone (in a mount namespace
      whose /run is private; secondaries = no, as config/droced.ini) listens
      on the default socket, and the same
      droce-run runs ibv_devinfo (droce0, Ethernet) and ibv_rc_pingpong
      -c between two such droceds.  Exit 77 with DROCE_NO_HUGE=1.
  dropin_test.py --run DROCE_RUN --lib DIR --droced DROCED daemon_srqud
      SRQs and UD on droced: two droceds as for daemon; Debian's
      ibv_srq_pingpong -c and ibv_ud_pingpong -c (each polling and -e)
      servers on the first at once (its list shows exactly their four pids,
      each with one SRQ or one address handle), their clients on the
      second: the pingpong checks above (exact bytes and iterations, each
      side's local address the other's remote, no "invalid data"; the UD
      receive's GRH slot is filled by droced's engine).  Both droceds' lists
      empty after.  Exit 77 with DROCE_NO_HUGE=1.
  dropin_test.py --run DROCE_RUN --lib DIR --droced DROCED daemon_regions
      Debian's ibv_rc_pingpong -c (polling, and -e), ibv_ud_pingpong -c,
      ibv_srq_pingpong -c (polling, and -e) and perftest's ib_send_lat / ib_write_lat -s 8 as plain processes on
      droced's queue regions (DROCE_QUEUES=region: no EAL), one pair as
      secondaries (DROCE_QUEUES=shared) beside them, two droceds as for daemon: the pingpong
      checks above; while the servers wait, /proc/PID/smaps of the plain
      processes shows no hugepage mapping, the secondary's some.  Exit 77
      with DROCE_NO_HUGE=1.
  dropin_test.py --run DROCE_RUN --lib DIR [--preload LIBASAN] rping
      Debian's rping -s (-C 10, then no count) and rping -c -V -C 10,
      both on droce over net_memif through the drop-in librdmacm.so.1
      (RDMA CM over QP1), a transport lcore on each side, -S 100 and
      10000, then over IPv6 (-C 20 -S 1000): both exit 0, and each prints
      the pings' exact text.  Then rping -c to a port nobody listens on:
      REJECTED, error 8, exit 255; and ib_write_bw -R there: perftest's
      "Unexpected CM event ... 8" (REJECTED), exit 1.
  dropin_test.py --run DROCE_RUN --lib DIR udaddy
      Debian's udaddy (UD ids over RDMA_PS_UDP: SIDR, then datagrams), server
      (-b 198.18.5.1) and client (-s) on droce over net_memif through the
      drop-in librdmacm: with droce's defaults, the default 10 messages of
      100 bytes, then -c 3 -C 50 -S 1000 (three ids each way), then -P ipoib
      -C 20 with a transport lcore: both exit 0 and print exactly their
      steps (each ends only once its -C messages per connection arrived).
      Then udaddy -s to a port space nobody listens in (the server's is
      RDMA_PS_IPOIB): UNREACHABLE, error 1 (SIDR_REP "service ID not
      supported"), exit 1.
  dropin_test.py --run DROCE_RUN --lib DIR --prog DROPIN_RDMACM_CALLS rdmacm_calls
      test/dropin/dropin_rdmacm_calls.c (built against the system's
      rdma_cma.h) alone on droce: it prints "ok" and exits 0.
  dropin_test.py --run DROCE_RUN --lib DIR perftest_cm
      as perftest below, with -R (perftest's rdma_cm mode, through the
      drop-in librdmacm.so.1 to droce's 198.18.5.1): ib_write_bw and
      ib_send_lat, a transport lcore on each side.
  dropin_test.py --run DROCE_RUN --lib DIR perftest
      perftest 4.5's ib_write_bw, ib_read_bw, ib_write_lat, ib_atomic_bw,
      ib_read_lat and ib_atomic_lat (droce with a transport lcore on both
      sides), ib_send_lat and ib_send_bw (run-to-completion), unmodified,
      server and client on droce over net_af_packet on a veth pair between
      two network namespaces this script creates and deletes (TCP over
      their 198.18.8.1/2; perf_pair.py's Veth): both exit 0 on device droce0 and print the result
      row of the exact size and iteration count.  Needs root.
  dropin_test.py --run DROCE_RUN --lib DIR perftest_options
      the same, with the options droce-perf refuses: ib_write_bw -a (the
      client's rows of every size from 2 B to 8 MiB, -n 5; the server's
      one, of the last), -q 4 (the rows count 4 x -n), -b; ib_send_bw and
      ib_send_lat -c UD; ib_write_bw and ib_send_bw -c UC.
  dropin_test.py --run DROCE_RUN --lib DIR qperf
      qperf 0.4.11's rc_bw, rc_lat, rc_rdma_write_bw and rc_rdma_read_lat
      between a qperf server and clients on droce (net_af_packet in
      namespaces as perftest, transport lcores): without -cm1 qperf addresses its peer by
      LID alone (ah_attr.is_global 0), which a RoCE port refuses (EINVAL, as
      the kernel's rdma_check_ah_attr): each client exits 1 with "failed to
      modify QP to RTR", the server (a child per test) keeps serving.  With
      -cm1 (RDMA CM through the drop-in librdmacm; droce on the kernel's
      addresses of the veth, since qperf connects its CM to the address of
      its TCP channel) all four run: exit 0, a bandwidth or latency above
      zero, a latency test's messages all received (less the one in flight
      at the end), a bandwidth test's receiver at most what was sent.
  dropin_test.py --run DROCE_RUN --lib DIR rstream
      rdmacm-utils' unmodified rstream (rsockets through the drop-in
      librdmacm.so.1) between two processes over net_memif, droce in
      run-to-completion (the rsocket calls run its engine), -T v (every
      byte verified): 64 B round trips, a 4 KiB stream, 1 MB with -T a
      (rpoll), -T n (non-blocking) and -T b (blocking, MSG_WAITALL), 100 B
      with rpoll and non-blocking, and 4 KiB over IPv6: both sides exit 0
      and print the row of the exact size, transfers, iterations and
      total.  With --preload (ASan): the round trips, -T a, -T n, IPv6.
  dropin_test.py --run DROCE_RUN --lib DIR riostream
      rdmacm-utils' riostream the same way (riomap / riowrite: the peer
      writes straight into the mapped buffer) with droce's defaults:
      riostream waits by reading its buffer, outside droce, and the
      drop-in's progress thread runs the engine meanwhile (with
      --droce-progress=inline both sides wait forever).  64 B round
      trips, 64 KiB with -T v (data verified), 4 KiB with -T a (rpoll);
      then the 64 KiB -T v run with a transport lcore on each side.
  dropin_test.py --run DROCE_RUN --lib DIR --prog TCP_ECHO rspreload
      test/dropin/tcp_echo.c, a plain TCP echo server and client, under
      rdma-core's librspreload.so (its socket calls become rsockets on
      droce), each in a network namespace of its own (unshare -n, so no
      kernel TCP can stand in): 4 MB of a known pattern echoed, every byte
      checked, blocking then non-blocking with poll(2); both print "ok".
EAL runs with --no-huge (-m 256) and --no-pci; only processes this script
started are stopped (by their own Popen handle).
"""
import argparse
import json
import os
import queue
import shutil
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

import droced_util

TIMEOUT = float(os.environ.get("DROPIN_TIMEOUT", "60"))
EAL = ["--no-pci", "--no-huge", "-m", "256", "--log-level=lib.eal:error"]
# the server's droce address (side 0: droce_args, case_perftest), the
# target of rping and perftest -R (RDMA CM)
DROCE_SERVER = "198.18.5.1"
LOCAL_RE = re.compile(r"^  local address:  LID 0x0000, QPN 0x([0-9a-f]{6}), "
                      r"PSN 0x([0-9a-f]{6})[,:] GID (\S+)$", re.M)
REMOTE_RE = re.compile(r"^  remote address: LID 0x0000, QPN 0x([0-9a-f]{6}), "
                       r"PSN 0x([0-9a-f]{6}), GID (\S+)$", re.M)
BYTES_RE = re.compile(r"^(\d+) bytes in \d+\.\d\d seconds = [\d.]+ Mbit/sec$", re.M)
ITERS_RE = re.compile(r"^(\d+) iters in \d+\.\d\d seconds = [\d.]+ usec/iter$", re.M)

failures = []


def brief(text, n):
    """text's last n characters, without the sanitizer's reports: a
    program that failed and exited without freeing prints a leak report
    that would otherwise hide why it failed."""
    text = re.sub(r"^=+\n==\d+==ERROR: LeakSanitizer.*?^SUMMARY: AddressSanitizer:[^\n]*\n",
                  "[leak report]\n", text, flags=re.M | re.S)
    return text[-n:]


def check(case, cond, msg):
    if not cond:
        failures.append(f"{case}: {msg}")
        print(f"not ok - {case}: {msg}", flush=True)
    return cond


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def listening(port):
    """A TCP listener on port (read from /proc: connecting would be taken
    by the server as its peer)."""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                for line in list(f)[1:]:
                    fields = line.split()
                    if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except OSError:
            pass
    return False


def listening_in(ns, port):
    """A TCP listener on port in network namespace ns."""
    p = subprocess.run(["ip", "netns", "exec", ns, "ss", "-Hltn", f"sport = :{port}"],
                       capture_output=True, text=True)
    return p.returncode == 0 and p.stdout.strip() != ""


def droce_args(side, tag, tmp, lcore=False, ipv6=False):
    """lcore: droce with a transport lcore (EAL lcores 0 and 1); ipv6: an
    IPv6 address too (2001:2:0:5::1/2, GID index 1)."""
    role = "server" if side == 0 else "client"
    sock = os.path.join(tmp, f"{tag}.sock")
    cores = "0,1" if lcore else str(side % (os.cpu_count() or 1))
    eal = EAL + ["-l", cores, f"--file-prefix=dropin{tag}{side}",
                 f"--vdev=net_memif0,role={role},socket={sock},socket-abstract=no,bsize=8192"]
    opts = ["--", f"--droce-ipv4=198.18.5.{side + 1}/24"] + \
        ([f"--droce-ipv6=2001:2:0:5::{side + 1}/64"] if ipv6 else [])
    return " ".join(eal + opts + (["--droce-transport-lcores=1"] if lcore else []))


def run_one(args, case, run, lib, droce, tmp):
    """args through droce-run (run None: args is the whole command)."""
    env = dict(os.environ, DROCE_ARGS=droce)
    cmd = args if run is None else [run, "--lib", lib, "--"] + args
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env,
                           cwd=tmp)
    except subprocess.TimeoutExpired:
        check(case, False, "timed out")
        return None
    return p


def case_tools(a, tmp):
    droce = droce_args(0, "t", tmp)
    p = run_one(["ibv_devices"], "ibv_devices", a.run, a.lib, droce, tmp)
    if p is not None and check("ibv_devices", p.returncode == 0, f"exit {p.returncode}: {p.stderr}"):
        devs = re.findall(r"^\s+(\S+)\s+([0-9a-f]{16})$", p.stdout, re.M)
        # the node GUID: the EUI-64 of the port's MAC (ff:fe in its middle)
        check("ibv_devices", len(devs) == 1 and devs[0][0] == "droce0" and
              re.fullmatch(r"[0-9a-f]{6}fffe[0-9a-f]{6}", devs[0][1]) is not None,
              f"devices {devs}")
    p = run_one(["ibv_devinfo", "-v"], "ibv_devinfo", a.run, a.lib, droce, tmp)
    if p is None or not check("ibv_devinfo", p.returncode == 0, f"exit {p.returncode}: {p.stderr}"):
        return
    want = {
        "hca_id": "droce0", "transport": "InfiniBand (0)", "fw_ver": "0.1.0",
        "phys_port_cnt": "1", "max_qp_wr": "16384", "max_sge": "16",
        "max_cqe": "1048576", "max_qp_rd_atom": "16", "max_qp_init_rd_atom": "128", "atomic_cap": "ATOMIC_GLOB (2)",
        "max_srq": "2147483647", "max_srq_wr": "16384", "max_srq_sge": "16", "max_mw": "65536", "max_pkeys": "16", "num_comp_vectors": "1",
        "port": "1", "max_mtu": "4096 (5)", "active_mtu": "1024 (3)",
        "link_layer": "Ethernet", "max_msg_sz": "0x80000000", "port_lid": "0",
        "gid_tbl_len": "1", "pkey_tbl_len": "16",
    }
    got = dict(re.findall(r"^\s*(\w+):\s+(.*?)\s*$", p.stdout, re.M))
    # memory windows: type 1 and 2B (a type-2 window tied to its QP), not 2A
    flags = set(re.findall(r"^\s+(MEM_WINDOW\w*)\s*$", p.stdout, re.M))
    check("ibv_devinfo", flags == {"MEM_WINDOW", "MEM_WINDOW_TYPE_2B"}, f"window flags {flags}")
    # (the EUI-64 of this process's port MAC: memif's is random per process)
    check("ibv_devinfo", re.fullmatch(r"[0-9a-f]{4}:[0-9a-f]{2}ff:fe[0-9a-f]{2}:[0-9a-f]{4}",
                                      got.get("node_guid", "")) is not None,
          f"node_guid {got.get('node_guid')!r}")
    for k, v in want.items():
        check("ibv_devinfo", got.get(k) == v, f"{k}: {got.get(k)!r}, expected {v!r}")
    # a memif server without its peer: the link is down, and says so
    check("ibv_devinfo", got.get("state") == "PORT_DOWN (1)", f"state {got.get('state')!r}")
    check("ibv_devinfo", re.search(r"^\s+GID\[  0\]:\s+::ffff:198\.18\.5\.1, RoCE v2$",
                                   p.stdout, re.M) is not None, "GID[0] line: " + p.stdout[-300:])
    if not [f for f in failures if f.startswith("ibv_")]:
        print("ok - ibv_devices, ibv_devinfo -v", flush=True)
    if a.preload is None:  # python3 is no program to run under ASan's runtime
        case_affinity(a, tmp)


# the CPUs of the calling thread before and after its first
# ibv_get_device_list (droce's start), and the number of devices
AFFINITY_PROG = """
import ctypes, os
before = sorted(os.sched_getaffinity(0))
lib = ctypes.CDLL("libibverbs.so.1")
lib.ibv_get_device_list.restype = ctypes.c_void_p
n = ctypes.c_int(0)
lst = lib.ibv_get_device_list(ctypes.byref(n))
after = sorted(os.sched_getaffinity(0))
print("before", before, "after", after, "devices", n.value)
"""


def case_affinity(a, tmp):
    case = "ibv_get_device_list keeps the caller's CPU affinity"
    cpus = sorted(os.sched_getaffinity(0))
    if not check(case, len(cpus) >= 2, f"needs 2 CPUs to tell a pinned thread, has {cpus}"):
        return
    p = run_one(["python3", "-c", AFFINITY_PROG], case, a.run, a.lib,
                droce_args(0, "af", tmp), tmp)
    want = f"before {cpus} after {cpus} devices 1"
    if p is not None and check(case, p.returncode == 0 and want in p.stdout,
                               f"exit {p.returncode}, expected {want!r}: {p.stdout[-300:]} "
                               f"{p.stderr[-300:]}"):
        print(f"ok - {case}: {want}", flush=True)


def case_lifecycle(a, tmp):
    """dropin_lifecycle.c in one process on a port with no peer (a memif
    server alone: the frames never leave it), run-to-completion and with a
    transport lcore; then its fork mode (children of a process using droce)
    and its clean mode (a QP's completions leave its CQ at RESET) in both."""
    for mode, lcore in ((None, False), (None, True), ("fork", False), ("fork", True),
                        ("clean", False), ("clean", True)):
        case = (f"dropin_lifecycle{' ' + mode if mode else ''}"
                f"{' (transport lcore)' if lcore else ''}")
        tag = f"l{mode[0] if mode else ''}{int(lcore)}"
        p = run_one([a.prog] + ([mode] if mode else []), case, a.run, a.lib,
                    droce_args(0, tag, tmp, lcore=lcore), tmp)
        if p is not None and check(case, p.returncode == 0 and p.stdout.startswith("ok"),
                                   f"exit {p.returncode}: {p.stdout[-600:]} {p.stderr[-600:]}"):
            print(f"ok - {case}: {p.stdout.strip()}", flush=True)


def telemetry_lines(prefix):
    """droce's counters and QPs of the EAL process of file prefix prefix
    (/droce/stats, /droce/qp/info of each QP), as text lines."""
    def ask(cmd):
        with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as t:
            t.settimeout(5)
            t.connect(f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2")
            t.recv(4096)
            t.send(cmd.encode())
            return json.loads(t.recv(1 << 16))[cmd.split(",")[0]]
    try:
        lines = [f"/droce/stats: {json.dumps(ask('/droce/stats'))}"]
        for qpn in ask("/droce/qp/list") or []:
            lines.append(f"/droce/qp/info,{qpn}: {json.dumps(ask(f'/droce/qp/info,{qpn}'))}")
        return lines
    except (OSError, ValueError, KeyError, TypeError) as e:
        return [f"telemetry of {prefix}: {e}"]


def hang_report(p, name, prefix=None):
    """What a process that outlived its test's deadline is doing, printed as
    TAP comments before it is stopped: droce's counters and QPs (telemetry
    of EAL file prefix prefix), each thread's state, CPU time and wait
    channel (/proc), and its threads' stacks when gdb is there."""
    if p is None or p.poll() is not None:
        return
    lines = [f"{name} (pid {p.pid}) still running at the deadline"]
    if prefix is not None:
        lines += telemetry_lines(prefix)
    lines.append("its threads:")
    task = f"/proc/{p.pid}/task"
    try:
        tids = sorted(os.listdir(task), key=int)
    except OSError:
        tids = []
    for tid in tids:
        try:
            with open(f"{task}/{tid}/stat") as f:
                stat = f.read()
            with open(f"{task}/{tid}/wchan") as f:
                wchan = f.read().strip() or "-"
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        lines.append(f"  {tid} {comm}: state {fields[0]}, utime {fields[11]} stime {fields[12]} "
                     f"ticks, wchan {wchan}")
    if shutil.which("gdb"):
        r = subprocess.run(["gdb", "-batch", "-p", str(p.pid), "-ex", "thread apply all bt 12"],
                           capture_output=True, text=True, timeout=60)
        lines += [ln for ln in r.stdout.splitlines() if ln.startswith(("#", "Thread"))]
    for ln in lines:
        print(f"# {ln}", flush=True)


def stop(p):
    if p is not None and p.poll() is None:
        p.kill()
        p.wait(timeout=10)


def tcp_pair(args):
    """The two sides of a tool with a TCP exchange on a free port, and the
    test that the server is ready (its listener exists)."""
    port = free_port()
    argv = [args + ["-p", str(port)], args + ["-p", str(port), "127.0.0.1"]]
    return argv, lambda tmp, tag: listening(port)


def memif_ready(tmp, tag):
    """The server's memif socket exists: a memif client that finds none
    never connects."""
    return os.path.exists(os.path.join(tmp, f"{tag}.sock"))


def run_pair(a, tmp, tag, argv, ready, lcore=False, server_stays=False, ipv6=False):
    """argv[0] (the server) until ready(tmp, tag) or 20 s, then argv[1].
    Each side's text is its stderr, then its stdout: kept apart, so that
    a thread's message on stderr does not land inside a line that stdio
    writes in pieces (rping's 10 kB ping lines).  server_stays: a server
    that does not end with its client, stopped once the client exits.
    lcore, ipv6: droce_args'."""
    procs, files = [], []
    try:
        for side in (0, 1):
            out, err = (open(os.path.join(tmp, f"{tag}.{side}.{x}"), "w+")
                        for x in ("out", "err"))
            files += [err, out]
            cmd = [a.run, "--lib", a.lib, "--"] + argv[side]
            env = dict(os.environ, DROCE_ARGS=droce_args(side, tag, tmp, lcore, ipv6))
            procs.append(subprocess.Popen(cmd, stdout=out, stderr=err,
                                          stdin=subprocess.DEVNULL, env=env, cwd=tmp))
            if side == 0:
                deadline = time.monotonic() + 20
                while (time.monotonic() < deadline and procs[0].poll() is None and
                       not ready(tmp, tag)):
                    time.sleep(0.05)
        deadline = time.monotonic() + TIMEOUT
        for p in reversed(procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            if server_stays:
                stop(procs[0])
        for side, p in enumerate(procs):
            hang_report(p, f"{tag} side {side}: {argv[side][0]}", f"dropin{tag}{side}")
        rcs = [p.returncode for p in procs]
        texts = []
        for f in files:
            f.seek(0)
            texts.append(f.read())
        return rcs, [texts[0] + texts[1], texts[2] + texts[3]]
    finally:
        for p in procs:
            stop(p)
        for f in files:
            f.close()


def case_pair(a, tmp, tag, tool, opts, size, iters):
    case = " ".join([tool] + opts)
    args = [tool, "-g", "0", "-s", str(size), "-n", str(iters)] + opts
    rcs, outs = run_pair(a, tmp, tag, *tcp_pair(args))
    if pingpong_ok(case, rcs, outs, size, iters):
        print(f"ok - {case}: both sides, {iters} iterations of {size} bytes", flush=True)


def pingpong_ok(case, rcs, outs, size, iters):
    """An ibv_*_pingpong's two sides (server 198.18.5.1, client .2): exit 0,
    each one's local address the other's remote, the exact counts."""
    ok = True
    for side, name in ((0, "server"), (1, "client")):
        ok &= check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {brief(outs[side], 400)}")
    loc = [LOCAL_RE.search(o) for o in outs]
    rem = [REMOTE_RE.search(o) for o in outs]
    if not check(case, all(loc) and all(rem), "address lines missing: " + brief(outs[0], 300)):
        return False
    for side in (0, 1):
        ok &= check(case, loc[side].groups() == rem[1 - side].groups(),
                    f"side {side} local {loc[side].groups()} != peer's remote "
                    f"{rem[1 - side].groups()}")
        ok &= check(case, loc[side].group(3) == f"::ffff:198.18.5.{side + 1}",
                    f"side {side} GID {loc[side].group(3)}")
        b, it = BYTES_RE.search(outs[side]), ITERS_RE.search(outs[side])
        if not check(case, b is not None and it is not None, f"side {side}: no result lines"):
            ok = False
            continue
        ok &= check(case, int(b.group(1)) == size * iters * 2,
                    f"side {side}: {b.group(1)} bytes, expected {size * iters * 2}")
        ok &= check(case, int(it.group(1)) == iters, f"side {side}: {it.group(1)} iters")
        ok &= check(case, "invalid data" not in outs[side], f"side {side}: invalid data")
    return ok


def prog_ok(case, rcs, outs, names):
    """A test program's two sides (names): both print "ok" and exit 0."""
    ok = True
    for side, name in enumerate(names):
        ok &= check(case, rcs[side] == 0 and outs[side].splitlines()[-1:] == ["ok"],
                    f"{name} exit {rcs[side]}: {outs[side][-400:]}")
    return ok


def case_prog(a, tmp, tag, case, names, summary, lcore=True):
    """A test program of test/dropin (a.prog, its two sides named names),
    droce with a transport lcore (lcore False: droce's defaults, the
    progress thread): both print "ok" and exit 0."""
    rcs, outs = run_pair(a, tmp, tag, *tcp_pair([a.prog]), lcore=lcore)
    if prog_ok(case, rcs, outs, names):
        print(f"ok - {case}: {summary}", flush=True)


def case_ctxev(a, tmp, tag):
    """dropin_ctxev.c: the owner (memif server) until it prints "ready",
    then the peer (memif client) until the owner prints "active", then the
    peer's stdin closed (it leaves); both print "ok" and exit 0."""
    case = "dropin_ctxev"
    env = [dict(os.environ, DROCE_ARGS=droce_args(side, tag, tmp)) for side in (0, 1)]
    lines = queue.Queue()
    owner = peer = None
    out = []

    def wait_line(want):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                break
            if line is None:
                return False
            out.append(line)
            if line.strip() == want:
                return True
        return False

    try:
        owner = subprocess.Popen([a.run, "--lib", a.lib, "--", a.prog, "owner"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                 stdin=subprocess.DEVNULL, env=env[0], cwd=tmp)
        threading.Thread(target=lambda: ([lines.put(x) for x in owner.stdout], lines.put(None)),
                         daemon=True).start()
        if not check(case, wait_line("ready"), "owner: no 'ready': " + "".join(out)[-600:]):
            return
        peer = subprocess.Popen([a.run, "--lib", a.lib, "--", a.prog, "peer"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                stdin=subprocess.PIPE, env=env[1], cwd=tmp)
        active = wait_line("active")
        pout = peer.communicate(input="", timeout=TIMEOUT)[0]  # stdin closed: it leaves
        if not check(case, active, "owner: no 'active': " + "".join(out)[-600:]):
            return
        wait_line("ok")
        owner.wait(timeout=TIMEOUT)
        text = "".join(out)
        if check(case, owner.returncode == 0 and text.splitlines()[-1:] == ["ok"],
                 f"owner exit {owner.returncode}: {text[-800:]}") and \
           check(case, peer.returncode == 0 and pout.splitlines()[-1:] == ["ok"],
                 f"peer exit {peer.returncode}: {pout[-400:]}"):
            print(f"ok - {case}: each context its own objects' events, port events to both",
                  flush=True)
    finally:
        stop(owner)
        stop(peer)


def rping_text(ping, size):
    """The text of rping's ping number `ping` of `size` bytes (rping.c's
    fill): "rdma-ping-N: ", then characters 65..122 cyclically from
    65 + N % 58, size - 1 bytes in all (the last is a NUL)."""
    head = f"rdma-ping-{ping}: "
    c, body = 65 + ping % 58, []
    for _ in range(size - 1 - len(head)):
        body.append(chr(c))
        c = 65 if c == 122 else c + 1
    return head + "".join(body)


def case_rping(a, tmp, tag, server_opts, count, size, server=DROCE_SERVER, lcore=True):
    """Debian's rping -s and rping -c -V, unmodified, both on droce over
    memif through the drop-in librdmacm (and libibverbs); a transport lcore
    on each side (rping's CM, CQ and main threads all call into droce), or
    with lcore False droce's defaults (the progress thread).
    Each side must exit 0 and print each ping's exact text: the server the
    client's buffer it READ, the client the buffer the server WROTE back."""
    common = ["-a", server, "-S", str(size), "-v"]
    argv = [["rping", "-s"] + common + server_opts,
            ["rping", "-c", "-V", "-C", str(count)] + common]
    case = " / ".join(" ".join(v) for v in argv)
    rcs, outs = run_pair(a, tmp, tag, argv, memif_ready, lcore=lcore, ipv6=":" in server)
    ok = True
    for side, name, prefix in ((0, "server", "server ping data: "),
                               (1, "client", "ping data: ")):
        ok &= check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {brief(outs[side], 400)}")
        got = [ln for ln in outs[side].splitlines() if ln.startswith(prefix)]
        want = [prefix + rping_text(i, size) for i in range(count)]
        ok &= check(case, got == want, f"{name}: {len(got)} ping lines, "
                    f"{sum(g == w for g, w in zip(got, want))} as expected of {count}")
    ok &= check(case, "data mismatch" not in outs[1], "client: data mismatch")
    if ok:
        print(f"ok - {case}: {count} pings of {size} bytes, exact on both sides", flush=True)


CMTIME_ROW_RE = re.compile(r"^(create id|resolve addr|resolve route|create qp|connect|"
                           r"disconnect|destroy)\s*:\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", re.M)


def case_rdmacm_utils(a, tmp):
    """rdmacm-utils' other programs, unmodified, two processes over memif
    with droce's defaults:
    - ucmatose (RC: connect, SENDs both ways, disconnect): both exit 0,
      "return status 0";
    - rdma_server / rdma_client (rdma_getaddrinfo, rdma_create_ep passive
      and active, rdma_get_request, CQs the library makes, rdma_connect
      without parameters): both exit 0, "end 0";
    - rdma_xserver / rdma_xclient (RC; an inline SEND on a QP asking for no
      inline room, as on rxe): both exit 0;
    - cmtime -c 10 (the program's own QPs moved through rdma_init_qp_attr,
      rdma_accept / rdma_connect with their QP numbers, rdma_establish):
      the client exits 0 and every step's row has a real minimum (a
      failed step keeps the 1e9 us it starts at); the server serves on;
    - rcopy of 100000 random bytes (rsockets): the copy is byte-exact."""
    pairs = (("ucmatose", ["ucmatose"], ["ucmatose", "-s", DROCE_SERVER], "return status 0"),
             ("rdma_server", ["rdma_server"], ["rdma_client", "-s", DROCE_SERVER], "end 0"),
             ("rdma_xserver", ["rdma_xserver"], ["rdma_xclient", "-s", DROCE_SERVER], "end 0"))
    for i, (name, srv, cli, last) in enumerate(pairs):
        case = f"{name} / {' '.join(cli)}"
        rcs, outs = run_pair(a, tmp, f"u{i}", [srv, cli], memif_ready)
        ok = True
        for side in (0, 1):
            ok &= check(case, rcs[side] == 0 and last in outs[side],
                        f"side {side} exit {rcs[side]}: {brief(outs[side], 300)}")
        if ok:
            print(f"ok - {case}: both sides exit 0, '{last}'", flush=True)
    case = "cmtime -c 10"
    rcs, outs = run_pair(a, tmp, "u3", [["cmtime"], ["cmtime", "-s", DROCE_SERVER, "-c", "10"]],
                         memif_ready, server_stays=True)
    rows = {m.group(1): float(m.group(4)) for m in CMTIME_ROW_RE.finditer(outs[1])}
    if check(case, rcs[1] == 0, f"client exit {rcs[1]}: {brief(outs[1], 400)}") and \
       check(case, len(rows) == 7 and all(v < 1e8 for v in rows.values()),
             f"steps {rows}: {brief(outs[1], 400)}"):
        print(f"ok - {case}: 10 connections, every step done (connect min "
              f"{rows['connect']:g} us)", flush=True)
    case = "rcopy of 100000 bytes"
    src, dst = os.path.join(tmp, "rcopy.src"), os.path.join(tmp, "rcopy.dst")
    data = os.urandom(100000)
    with open(src, "wb") as f:
        f.write(data)
    rcs, outs = run_pair(a, tmp, "u4", [["rcopy"], ["rcopy", src, f"{DROCE_SERVER}:{dst}"]],
                         memif_ready, server_stays=True)
    got = open(dst, "rb").read() if os.path.exists(dst) else b""
    if check(case, rcs[1] == 0, f"client exit {rcs[1]}: {brief(outs[1], 300)}") and \
       check(case, got == data, f"{len(got)} bytes copied, equal {got == data}"):
        print(f"ok - {case}: byte-exact", flush=True)


def case_rping_rejected(a, tmp, tag):
    """rping -c to a port nobody listens on (the server listens on the
    next): droce's CM answers REJ 8 "invalid service ID", as the kernel's
    ib_cm does; rping reports it and fails (exit 255, its -1)."""
    common = ["-a", DROCE_SERVER, "-v"]
    argv = [["rping", "-s", "-p", "7000"] + common, ["rping", "-c", "-p", "7001"] + common]
    case = "rping -c to a port nobody listens on"
    rcs, outs = run_pair(a, tmp, tag, argv, memif_ready, lcore=True, server_stays=True)
    if check(case, rcs[1] == 255, f"client exit {rcs[1]}: {outs[1][-400:]}") and \
       check(case, "cma event RDMA_CM_EVENT_REJECTED, error 8\n" in outs[1], outs[1][-400:]):
        print(f"ok - {case}: RDMA_CM_EVENT_REJECTED, error 8", flush=True)


def case_perftest_rejected(a, tmp, tag):
    """ib_write_bw -R to a port nobody listens on (an rping server listens
    on another): droce's CM answers REJ 8, perftest's exchange on RDMA CM
    gets RDMA_CM_EVENT_REJECTED (event 8, which it prints) and perftest
    fails, exit 1, not a crash in the drop-ins' clean-up."""
    argv = [["rping", "-s", "-a", DROCE_SERVER, "-p", "7000", "-v"],
            ["ib_write_bw", "-R", "-x", "0", "-p", "7001", DROCE_SERVER]]
    case = "ib_write_bw -R to a port nobody listens on"
    rcs, outs = run_pair(a, tmp, tag, argv, memif_ready, lcore=True, server_stays=True)
    if check(case, rcs[1] == 1, f"client exit {rcs[1]}: {outs[1][-400:]}") and \
       check(case, "Unexpected CM event bl blka 8\n" in outs[1], outs[1][-400:]):
        print(f"ok - {case}: RDMA_CM_EVENT_REJECTED, exit 1", flush=True)


UDADDY_SERVER = ["udaddy: starting server", "receiving data transfers", "sending replies",
                 "data transfers complete", "test complete", "return status 0"]
UDADDY_CLIENT = ["udaddy: starting client", "udaddy: connecting", "initiating data transfers",
                 "receiving data transfers", "data transfers complete", "test complete",
                 "return status 0"]


def udaddy_lines(out):
    """udaddy's own lines (its "udaddy:" messages and steps), in order."""
    steps = set(UDADDY_SERVER + UDADDY_CLIENT)
    return [ln for ln in out.splitlines() if ln in steps or ln.startswith("udaddy:")]


def case_udaddy(a, tmp, tag, opts, lcore=False):
    """Debian's udaddy (rdmacm-utils: RDMA_PS_UDP ids, SIDR, UD QPs made by
    rdma_create_qp) unmodified, server (-b) and client (-s) on droce over
    memif through the drop-in librdmacm, with opts on both sides (-c
    connections, -C messages, -S size, -P port space): each exits 0 and
    prints exactly its steps.  The server's steps end once it received
    -C messages on each connection and its -C replies completed; the
    client's once it received the server's -C replies on each: so the
    counts are the programs' own."""
    argv = [["udaddy", "-b", DROCE_SERVER] + opts, ["udaddy", "-s", DROCE_SERVER] + opts]
    case = " / ".join(" ".join(v) for v in argv) + ("" if lcore else " (droce's defaults)")
    rcs, outs = run_pair(a, tmp, tag, argv, memif_ready, lcore=lcore)
    ok = True
    for side, name, want in ((0, "server", UDADDY_SERVER), (1, "client", UDADDY_CLIENT)):
        ok &= check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {brief(outs[side], 400)}")
        ok &= check(case, udaddy_lines(outs[side]) == want,
                    f"{name}: {udaddy_lines(outs[side])}")
    if ok:
        print(f"ok - {case}: both sides exit 0, every step", flush=True)


def case_udaddy_unsupported(a, tmp, tag):
    """udaddy -s to a service ID nobody serves (the server listens on the
    same port in RDMA_PS_IPOIB's space): the SIDR_REP's status 1 "service
    ID not supported", as the kernel's ib_cm answers; the client reports
    RDMA_CM_EVENT_UNREACHABLE, error 1, and exits 1 (its status)."""
    argv = [["udaddy", "-b", DROCE_SERVER, "-P", "ipoib"], ["udaddy", "-s", DROCE_SERVER]]
    case = "udaddy -s to a port space nobody listens in"
    rcs, outs = run_pair(a, tmp, tag, argv, memif_ready, server_stays=True)
    if check(case, rcs[1] == 1, f"client exit {rcs[1]}: {outs[1][-400:]}") and \
       check(case, "udaddy: event: RDMA_CM_EVENT_UNREACHABLE, error: 1\n" in outs[1] and
             "return status 1\n" in outs[1], outs[1][-400:]):
        print(f"ok - {case}: RDMA_CM_EVENT_UNREACHABLE, error 1, exit 1", flush=True)


def case_rdmacm_calls(a, tmp, tag):
    """dropin_rdmacm_calls.c, one process: librdmacm's calls one by one."""
    case = "dropin_rdmacm_calls"
    p = run_one([a.prog], case, a.run, a.lib, droce_args(0, tag, tmp), tmp)
    if p is not None and check(case, p.returncode == 0 and p.stdout.splitlines()[-1:] == ["ok"],
                               f"exit {p.returncode}: {(p.stdout + p.stderr)[-400:]}"):
        print(f"ok - {case}: devices, ids, addresses, getaddrinfo, rpoll, ENOSYS", flush=True)


RSPRELOAD = "/usr/lib/x86_64-linux-gnu/rsocket/librspreload.so"


def rstream_rows(out):
    """The result rows of rstream/riostream: (name, bytes, xfers, iters,
    total), each row with its time, Gb/sec and usec/xfer figures."""
    return re.findall(r"^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+[\d.]+s\s+[\d.]+\s+[\d.]+$",
                      out, re.M)


def case_rstream(a, tmp, tag, tool, server_opts, client_opts, rows, lcore=False, ipv6=False):
    """tool (rstream, riostream) -b SERVER and -s SERVER, unmodified, over
    memif: both exit 0 and print exactly rows."""
    server = "2001:2:0:5::1" if ipv6 else DROCE_SERVER
    argv = [[tool, "-b", server] + server_opts, [tool, "-s", server] + client_opts]
    case = " / ".join(" ".join(v) for v in argv) + (" (transport lcore)" if lcore else "")
    t0 = time.monotonic()
    rcs, outs = run_pair(a, tmp, tag, argv, memif_ready, lcore=lcore, ipv6=ipv6)
    ok = True
    for side, name in ((0, "server"), (1, "client")):
        ok &= check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {brief(outs[side], 400)}")
        got = rstream_rows(outs[side])
        ok &= check(case, got == rows, f"{name} rows {got}, expected {rows}")
    if ok:
        print(f"ok - {case}: {len(rows)} rows exact on both sides "
              f"({time.monotonic() - t0:.1f} s)", flush=True)


def rstream_tests(a, tmp):
    """rstream's sizes and modes, each a short custom run (the default
    series is 200k transfers: minutes on a loaded machine)."""
    v = ["-T", "v"]
    runs = [  # options, the row
        (["-S", "64", "-C", "1", "-I", "2000"] + v, ("custom", "64", "1", "2k", "250k")),
        (["-S", "4096", "-C", "2000"] + v, ("custom", "4k", "2k", "1", "15m")),
        (["-S", "1000000", "-C", "50", "-T", "a"] + v, ("custom", "976k", "50", "1", "95m")),
        (["-S", "1000000", "-C", "50", "-T", "n"] + v, ("custom", "976k", "50", "1", "95m")),
        (["-S", "1000000", "-C", "50", "-T", "b"] + v, ("custom", "976k", "50", "1", "95m")),
        (["-S", "100", "-C", "300", "-T", "a", "-T", "n"] + v,
         ("custom", "100", "300", "1", "58k"))]
    if a.preload is not None:  # ASan: the round trips, rpoll, non-blocking
        runs = [runs[0], runs[2], runs[3]]
    for i, (opts, row) in enumerate(runs):
        case_rstream(a, tmp, f"s{i}", "rstream", opts, opts, [row])
    opts = ["-S", "4096", "-C", "500"] + v
    case_rstream(a, tmp, "s9", "rstream", opts, opts, [("custom", "4k", "500", "1", "3.9m")],
                 ipv6=True)


def case_udpong(a, tmp, tag, opts, check_row):
    """udpong -b SERVER (it never exits: stopped after its client) and
    udpong -s SERVER with opts, unmodified, over memif: the server logs the
    client's login from its address, the client exits 0 with one row that
    check_row accepts (or, check_row a string, prints that text)."""
    # the server's stdout line-buffered (coreutils' stdbuf): it is killed
    argv = [["stdbuf", "-oL", "udpong", "-b", DROCE_SERVER],
            ["udpong", "-s", DROCE_SERVER] + opts]
    case = "udpong " + " ".join(opts)
    t0 = time.monotonic()
    rcs, outs = run_pair(a, tmp, tag, argv, memif_ready, server_stays=True)
    ok = check(case, rcs[1] == 0, f"client exit {rcs[1]}: {brief(outs[1], 400)}")
    ok &= check(case, "client login from 198.18.5.2" in outs[0],
                f"server: no login from 198.18.5.2: {brief(outs[0], 400)}")
    if isinstance(check_row, str):
        ok &= check(case, check_row in outs[1], f"client: no {check_row!r}: {brief(outs[1], 400)}")
        what = check_row
    else:
        # name, bytes, xfers, total; then time, Gb/sec, usec/xfer
        rows = re.findall(r"^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+[\d.]+s\s+[\d.]+\s+[\d.]+$",
                          outs[1], re.M)
        ok &= check(case, len(rows) == 1 and check_row(rows[0]), f"client rows {rows}")
        what = f"row {rows[0] if rows else None}"
    if ok:
        print(f"ok - {case}: {what} ({time.monotonic() - t0:.1f} s)", flush=True)


def udpong_tests(a, tmp):
    """Datagram rsockets: udpong's echo (each datagram answered; udpong
    resends on a 1 ms timeout, so the count is exact) non-blocking, with
    rpoll (-T a) and blocking (-T b); its one-way bandwidth (UD: the
    server counts what arrived, some may not); a datagram above the path
    MTU (1024 on memif's 1500-byte frames) refused with EMSGSIZE."""
    runs = [  # options, the check
        (["-S", "64", "-C", "1000", "-T", "e"],
         lambda r: r == ("custom", "64", "2k", "125k")),
        (["-S", "1000", "-C", "300", "-T", "e", "-T", "a"],
         lambda r: r == ("custom", "1000", "600", "585k")),
        (["-S", "100", "-C", "300", "-T", "e", "-T", "b"],
         lambda r: r == ("custom", "100", "600", "58k")),
        (["-S", "512", "-C", "2000"],
         lambda r: r[:2] == ("custom", "512") and
         (r[2] in ("1k", "2k") or (r[2].isdigit() and 0 < int(r[2]) < 1000))),
        (["-S", "1024", "-C", "10"], "rsend: Message too long")]
    for i, (opts, want) in enumerate(runs):
        case_udpong(a, tmp, f"d{i}", opts, want)


def riostream_tests(a, tmp):
    """droce's defaults: riostream spins on the last byte of its mapped
    buffer, outside droce, after each riowrite (the progress thread sends
    the WRITE and places the peer's); then -T v over a transport lcore."""
    runs = [  # options, the row, transport lcore
        (["-S", "64", "-C", "1", "-I", "100"], ("custom", "64", "1", "100", "12k"), False),
        (["-S", "65536", "-C", "100", "-I", "5", "-T", "v"],
         ("custom", "64k", "100", "5", "62m"), False),
        (["-S", "4096", "-C", "20", "-I", "20", "-T", "a"],
         ("custom", "4k", "20", "20", "3.1m"), False),
        (["-S", "65536", "-C", "100", "-I", "5", "-T", "v"],
         ("custom", "64k", "100", "5", "62m"), True)]
    for i, (opts, row, lcore) in enumerate(runs):
        case_rstream(a, tmp, f"i{i}", "riostream", opts, opts, [row], lcore=lcore)


def case_rspreload(a, tmp, tag):
    """tcp_echo (a plain TCP program) under librspreload, each side in a
    network namespace of its own: the echo of 4 MB checked byte by byte."""
    case = "tcp_echo under librspreload"
    if not check(case, os.path.exists(RSPRELOAD), f"{RSPRELOAD} missing (librdmacm1)"):
        return
    port, total = "7471", 4000000
    # after a sanitizer runtime the harness preloads (--preload), if any
    preload = " ".join(filter(None, [os.environ.get("LD_PRELOAD"), RSPRELOAD]))
    pre = ["unshare", "-n", "--", "env", f"LD_PRELOAD={preload}", a.prog]
    argv = [pre + ["server", DROCE_SERVER, port],
            pre + ["client", DROCE_SERVER, port, str(total)]]
    t0 = time.monotonic()
    rcs, outs = run_pair(a, tmp, tag, argv, memif_ready)
    ok = True
    for side, name in ((0, "server"), (1, "client")):
        ok &= check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {brief(outs[side], 400)}")
        ok &= check(case, f"ok {name} {total}\n" in outs[side], f"{name}: {outs[side][-400:]}")
    if ok:
        print(f"ok - {case}: {total} bytes echoed and checked "
              f"({time.monotonic() - t0:.1f} s)", flush=True)


def case_refused(a, tmp, tag, tool, opt, text):
    """An option droce does not offer: the tool fails cleanly (exit 1)."""
    case = f"{tool} {opt} refused"
    p = run_one([tool, "-g", "0", opt], case, a.run, a.lib, droce_args(0, tag, tmp), tmp)
    if p is not None and check(case, p.returncode == 1,
                               f"exit {p.returncode}: {(p.stdout + p.stderr)[-300:]}"):
        if check(case, text in p.stderr, f"no {text!r} in: {p.stderr[-300:]}"):
            print(f"ok - {case}: {text}", flush=True)


def case_bad_peer(a, tmp, tag):
    """A peer that connects and hangs up: the server fails its exchange and
    exits 1 with its context still open (no signal at exit)."""
    case = "ibv_rc_pingpong server, peer hangs up"
    port = free_port()
    env = dict(os.environ, DROCE_ARGS=droce_args(0, tag, tmp))
    p = subprocess.Popen([a.run, "--lib", a.lib, "--", "ibv_rc_pingpong", "-g", "0",
                          "-p", str(port)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, env=env, cwd=tmp, text=True)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and p.poll() is None and not listening(port):
            time.sleep(0.05)
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
        out, _ = p.communicate(timeout=TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as e:
        check(case, False, f"{e}")
        return
    finally:
        stop(p)
    if check(case, p.returncode == 1, f"exit {p.returncode}: {out[-300:]}") and \
       check(case, "Couldn't read remote address" in out, out[-300:]):
        print(f"ok - {case}: exit 1", flush=True)


# Two network namespaces joined by a veth pair (the kernel ends carry
# 198.18.8.1/2 for the tools' TCP exchange), shared with droce-perf's test.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "integration", "perf"))
from perf_pair import Veth  # noqa: E402


# The IBTA local ACK timeout exponent (4.096 us << 18, about 1 s; perftest's
# default is 14, 67 ms): on a shared 2-core machine at load 13 a process can
# go half a second without the CPU, and 7 retries of 67 ms then run out
# (seen: ib_send_lat "Failed status 12" on its first send).
PERF_QP_TIMEOUT = 18
PERF_ROW_RE = re.compile(r"^ (\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", re.M)


def case_perftest(a, tmp, nets, tag, tool, size, iters, lcores, extra=(), rows=None,
                  rdma_cm=False):
    """tool on both sides (server first), droce on net_af_packet; lcores:
    a dedicated transport lcore (the passive side of WRITE/READ calls no
    verb while the peer works, so only a transport lcore answers); extra:
    more perftest options; rows: for the server and for the client, the
    (size, iterations) of every result row it must print, in order
    (default: one, size and iters, on both); rdma_cm: -R, the exchange over
    RDMA CM (the drop-in librdmacm) to droce's address instead of TCP to the
    kernel's."""
    case = " ".join([tool] + (["-R"] if rdma_cm else []) + ["-s", str(size), "-n", str(iters)] +
                    list(extra)) + \
        (" (transport lcore)" if lcores else "")
    outs, rcs = perftest_pair(a, tmp, nets, tag, tool, size, iters, lcores, extra, rdma_cm)
    ok = True
    for side, name in ((0, "server"), (1, "client")):
        ok &= check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {outs[side][-300:]}")
        got = [(int(r[0]), int(r[1])) for r in PERF_ROW_RE.findall(outs[side])]
        want = rows[side] if rows is not None else [(size, iters)]
        ok &= check(case, got == want, f"{name}: rows {got}, expected {want}")
        ok &= check(case, re.search(r"Device\s+: droce0\b", outs[side]) is not None,
                    f"{name}: not on droce0")
    if ok:
        what = f"both sides, {iters} iterations of {size} bytes" if rows is None else \
            "rows (bytes, iterations): server " + ", ".join(map(str, rows[0])) + \
            "; client " + (", ".join(map(str, rows[1])) if len(rows[1]) < 4 else
                           f"{rows[1][0]} to {rows[1][-1]} ({len(rows[1])})")
        print(f"ok - {case}: {what}", flush=True)


def perftest_pair(a, tmp, nets, tag, tool, size, iters, lcores, extra, rdma_cm):
    """One run of case_perftest's pair: (outputs, exit codes)."""
    port = free_port()
    procs, files = [], []
    try:
        for side in (0, 1):
            eal = EAL + ["-l", "0,1" if lcores else str(side), f"--file-prefix=dropin{tag}{side}",
                         f"--vdev=net_af_packet0,iface={nets.ifs[side]}"]
            opts = ["--", f"--droce-ipv4=198.18.5.{side + 1}/24"]
            if lcores:
                opts.append("--droce-transport-lcores=1")
            env = dict(os.environ, DROCE_ARGS=" ".join(eal + opts))
            cmd = ["ip", "netns", "exec", nets.ns[side], a.run, "--lib", a.lib, "--",
                   "stdbuf", "-oL", tool, "-x", "0", "-s", str(size), "-n", str(iters),
                   "-u", str(PERF_QP_TIMEOUT), "-p", str(port)] + list(extra) + \
                (["-R"] if rdma_cm else []) + \
                ([DROCE_SERVER if rdma_cm else nets.server_addr] if side == 1 else [])
            out = open(os.path.join(tmp, f"{tag}.{side}.out"), "w+")
            files.append(out)
            procs.append(subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, env=env, cwd=tmp))
            if side == 0:
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and procs[0].poll() is None:
                    f = files[0]
                    f.seek(0)
                    if "Waiting for client" in f.read():
                        break
                    time.sleep(0.05)
                time.sleep(0.5)
        # the client first: once it has failed, the server waits for nobody
        for p in (procs[1], procs[0]):
            try:
                p.wait(timeout=TIMEOUT if procs[1].returncode in (0, None) else 5)
            except subprocess.TimeoutExpired:
                pass
        outs = []
        for f in files:
            f.seek(0)
            outs.append(f.read())
    finally:
        for p in procs:
            stop(p)
        for f in files:
            f.close()
    return outs, [p.returncode for p in procs]


MCKEY_GROUP = "230.18.5.1"


def mckey_side(a, tmp, nets, tag, side, argv):
    """mckey in side's namespace, droce (defaults: adaptive progress) on
    net_af_packet at its veth end, 198.18.5.side+1; its output file."""
    eal = EAL + ["-l", str(side % (os.cpu_count() or 1)), f"--file-prefix=dropin{tag}{side}",
                 f"--vdev=net_af_packet0,iface={nets.ifs[side]}"]
    env = dict(os.environ, DROCE_ARGS=" ".join(eal + ["--", f"--droce-ipv4=198.18.5.{side + 1}/24"]))
    out = open(os.path.join(tmp, f"{tag}.{side}.out"), "w+")
    cmd = ["ip", "netns", "exec", nets.ns[side], a.run, "--lib", a.lib, "--",
           "stdbuf", "-oL", "mckey", "-b", f"198.18.5.{side + 1}"] + argv
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env=env, cwd=tmp), out


def case_mckey(a, tmp, nets, tag, sender_opts):
    """Debian's unmodified mckey (rdmacm-utils) over the drop-in librdmacm:
    a receiver joins MCKEY_GROUP (rdma_join_multicast), then a sender joins
    it (sender_opts: -o, send-only through rdma_join_multicast_ex) and sends
    10 UD messages of 100 bytes to the group; the receiver exits only after
    10 receive completions.  Both exit 0, both report the group's MGID
    (::ffff:230.18.5.1), and both leave (rdma_leave_multicast) cleanly."""
    case = "mckey " + " ".join(["-s"] + sender_opts)
    procs, files = [], []
    try:
        p, f = mckey_side(a, tmp, nets, tag, 0, ["-m", MCKEY_GROUP, "-C", "10", "-S", "100"])
        procs.append(p)
        files.append(f)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and p.poll() is None:
            f.seek(0)
            if "joined dgid" in f.read():
                break
            time.sleep(0.05)
        p, f = mckey_side(a, tmp, nets, tag, 1, ["-m", MCKEY_GROUP, "-s", "-C", "10", "-S", "100"] +
                          sender_opts)
        procs.append(p)
        files.append(f)
        for p in (procs[1], procs[0]):
            try:
                p.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        outs = []
        for f in files:
            f.seek(0)
            outs.append(f.read())
    finally:
        for p in procs:
            stop(p)
        for f in files:
            f.close()
    ok = True
    for side, name in ((0, "receiver"), (1, "sender")):
        ok &= check(case, procs[side].returncode == 0,
                    f"{name} exit {procs[side].returncode}: {brief(outs[side], 400)}")
        ok &= check(case, f"joined dgid: ::ffff:{MCKEY_GROUP} " in outs[side],
                    f"{name}: no join to ::ffff:{MCKEY_GROUP}: {brief(outs[side], 400)}")
        ok &= check(case, "data transfers complete" in outs[side] and
                    "return status 0" in outs[side] and "failure" not in outs[side],
                    f"{name}: {brief(outs[side], 400)}")
    ok &= check(case, "receiving data transfers" in outs[0] and
                "initiating data transfers" in outs[1], "roles")
    if ok:
        print(f"ok - {case}: 10 messages of 100 bytes to {MCKEY_GROUP}, all received", flush=True)


def perftest_tools(a, tmp, nets):
    case_perftest(a, tmp, nets, "w", "ib_write_bw", 65536, 500, True)
    case_perftest(a, tmp, nets, "r", "ib_read_bw", 65536, 1000, True)
    case_perftest(a, tmp, nets, "l", "ib_write_lat", 64, 500, True)
    case_perftest(a, tmp, nets, "s", "ib_send_lat", 64, 500, False)
    case_perftest(a, tmp, nets, "b", "ib_send_bw", 65536, 500, False)
    case_perftest(a, tmp, nets, "a", "ib_atomic_bw", 8, 500, True)
    # (the passive servers of the READ and atomic latency tests print no row)
    case_perftest(a, tmp, nets, "rl", "ib_read_lat", 8192, 200, True, rows=([], [(8192, 200)]))
    case_perftest(a, tmp, nets, "al", "ib_atomic_lat", 8, 200, True, rows=([], [(8, 200)]))


def cpu_ns(pid):
    """CPU time of process pid, all its threads, in ns (schedstat: exact,
    where stat's ticks are sampled)."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:
            pass		# a thread that ended meanwhile
    return total


def idle_cpu(a, tmp, nets, tag, lcore):
    """The share of a core an idle droce process uses over 2 s: an
    ibv_rc_pingpong server on net_af_packet, its device open, QP created
    and receives posted, waiting for a client in accept() (nothing calls
    a verb).  lcore: with a transport lcore (polling)."""
    port = free_port()
    out = open(os.path.join(tmp, f"{tag}.out"), "w+")
    eal = EAL + ["-l", "0,1" if lcore else "0", f"--file-prefix=dropin{tag}",
                 f"--vdev=net_af_packet0,iface={nets.ifs[0]}"]
    opts = ["--", "--droce-ipv4=198.18.5.1/24"] + \
        (["--droce-transport-lcores=1"] if lcore else [])
    env = dict(os.environ, DROCE_ARGS=" ".join(eal + opts))
    p = subprocess.Popen(["ip", "netns", "exec", nets.ns[0], a.run, "--lib", a.lib, "--",
                          "ibv_rc_pingpong", "-g", "0", "-p", str(port)],
                         stdout=out, stderr=subprocess.STDOUT,
                         stdin=subprocess.DEVNULL, env=env, cwd=tmp)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and p.poll() is None and \
                not listening_in(nets.ns[0], port):
            time.sleep(0.05)
        time.sleep(0.5)		# EAL's start-up threads done
        if p.poll() is not None:
            out.seek(0)
            return None, out.read()[-300:]
        t0, c0 = time.monotonic(), cpu_ns(p.pid)
        time.sleep(2)
        t1, c1 = time.monotonic(), cpu_ns(p.pid)
        return (c1 - c0) / 1e9 / (t1 - t0), ""
    finally:
        stop(p)
        out.close()


def case_idle(a, tmp, nets):
    """droce's defaults (the progress thread): an idle process below 5 %
    of a core; with a transport lcore (polling) the same process is above
    it (the check can fail; how far above depends on the machine's load)."""
    case = "idle process, droce's defaults"
    share, err = idle_cpu(a, tmp, nets, "i0", False)
    if check(case, share is not None, f"server did not start: {err}") and \
            check(case, share < 0.05, f"{share:.1%} of a core over 2 s"):
        print(f"ok - {case}: {share:.1%} of a core over 2 s", flush=True)
    case = "idle process, transport lcore (polling)"
    share, err = idle_cpu(a, tmp, nets, "i1", True)
    if check(case, share is not None, f"server did not start: {err}") and \
            check(case, share >= 0.05, f"{share:.1%} of a core: the polling lcore not seen"):
        print(f"ok - {case}: {share:.1%} of a core over 2 s (the check above can fail)",
              flush=True)


def progress_defaults(a, tmp, nets):
    """Programs that wait outside the verbs, with droce's defaults (no
    --droce-transport-lcores on either side): the progress thread serves
    the peer."""
    # the passive side of WRITE and READ waits in its TCP exchange
    case_perftest(a, tmp, nets, "aw", "ib_write_bw", 65536, 500, False)
    case_perftest(a, tmp, nets, "ar", "ib_read_lat", 8, 1000, False, rows=([], [(8, 1000)]))
    # both sides spin on the last byte of their buffer, not on a CQ
    case_perftest(a, tmp, nets, "al", "ib_write_lat", 64, 200, False)


def perftest_options(a, tmp, nets):
    """Options droce-perf refuses, between two unmodified perftests."""
    # -a: every size from 2 bytes to 8 MiB, -n each; the passive server
    # prints only the last
    sweep = [(1 << k, 5) for k in range(1, 24)]
    case_perftest(a, tmp, nets, "oa", "ib_write_bw", 65536, 5, True, ["-a"],
                  (sweep[-1:], sweep))
    # -q 4: perftest counts the iterations of all QPs
    case_perftest(a, tmp, nets, "oq", "ib_write_bw", 65536, 100, True, ["-q", "4"],
                  ([(65536, 400)], [(65536, 400)]))
    case_perftest(a, tmp, nets, "ob", "ib_write_bw", 65536, 100, True, ["-b"])
    case_perftest(a, tmp, nets, "od", "ib_send_bw", 1024, 100, False, ["-c", "UD"])
    case_perftest(a, tmp, nets, "ol", "ib_send_lat", 64, 100, False, ["-c", "UD"])
    case_perftest(a, tmp, nets, "ou", "ib_write_bw", 65536, 100, True, ["-c", "UC"])
    # (UC does not retransmit: a 64 KiB SEND loses its message to any frame
    # net_af_packet drops; 4 KiB does not fill its ring)
    case_perftest(a, tmp, nets, "os", "ib_send_bw", 4096, 100, False, ["-c", "UC"])


QPERF_TESTS = ("rc_bw", "rc_lat", "rc_rdma_write_bw", "rc_rdma_read_lat")
QPERF_STAT_RE = re.compile(r"^ +(\w+) += +([\d.,]+) ?(\S*)", re.M)


def af_packet_args(nets, side, kernel_ip=False):
    """droce on net_af_packet at side's veth end, with a transport lcore
    (the server's on lcore 1, the client's on lcore 0: two polling engines
    pinned to one core take turns of the scheduler's slice, milliseconds).
    kernel_ip: droce takes the address of the kernel's end of the veth,
    which answers ARP and carries qperf's TCP channel with the same MAC,
    while droce answers RoCEv2: qperf -cm1 connects its RDMA CM to the
    address its TCP channel uses."""
    ip = nets.server_addr[:-1] + str(side + 1) if kernel_ip else f"198.18.5.{side + 1}"
    lcores = ["-l", "0,1"] if side == 0 else ["-l", "0,1", "--main-lcore", "1"]
    return " ".join(EAL + lcores + [f"--file-prefix=dropinq{side}",
                                    f"--vdev=net_af_packet0,iface={nets.ifs[side]}", "--",
                                    f"--droce-ipv4={ip}/24",
                                    f"--droce-transport-lcores={1 - side}"])


def qperf_stats(out):
    """qperf -vvs's statistics of one test: name -> (number, unit)."""
    return {m.group(1): (float(m.group(2).replace(",", "")), m.group(3))
            for m in QPERF_STAT_RE.finditer(out)}


def qperf_cm_ok(case, out, rc, test):
    """qperf -cm1 -vvs TEST: exit 0, its figure above zero, and the messages
    counted: a latency test's peer received what it sent (rc_lat's remote
    receives, rc_rdma_read_lat's completions), less at most the one message
    in flight when its time ran out; a bandwidth test's receiver at most
    what was sent (each side counts its own interval)."""
    st = qperf_stats(out)
    key = "latency" if test.endswith("_lat") else "bw"
    sent = st.get("send_msgs", st.get("loc_send_msgs", (0,)))[0]
    recvd = st.get("recv_msgs", st.get("rem_recv_msgs", (0,)))[0]
    ok = check(case, rc == 0, f"exit {rc}: {out[-300:]}")
    ok = ok and check(case, st.get(key, (0,))[0] > 0, f"no {key}: {out[-300:]}")
    if ok and key == "latency":
        ok = check(case, sent > 0 and sent - recvd in (0, 1), f"sent {sent}, received {recvd}")
    elif ok:
        ok = check(case, 0 < recvd <= sent, f"received {recvd}, sent {sent}")
    if ok:
        print(f"ok - {case}: {key} {st[key][0]:g} {st[key][1]}, "
              f"{int(sent)} messages sent, {int(recvd)} received", flush=True)


def case_qperf(a, tmp, nets):
    """qperf's RC tests.  Without -cm1 qperf gives a LID-only address
    vector, which droce refuses cleanly (as the kernel does for RoCE); with
    -cm1 (RDMA CM through the drop-in librdmacm) all four run.  The qperf
    server forks a child for each test, each a droce of its own (so
    net_af_packet: a memif socket file the first child leaves behind would
    refuse the next)."""
    for use_cm in (False, True):
        port = free_port()
        env = dict(os.environ, DROCE_ARGS=af_packet_args(nets, 0, use_cm))
        with open(os.path.join(tmp, f"q{int(use_cm)}.server.out"), "w+") as sout:
            server = subprocess.Popen(["ip", "netns", "exec", nets.ns[0], a.run, "--lib",
                                       a.lib, "--", "qperf", "-lp", str(port)],
                                      stdout=sout, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, env=env, cwd=tmp)
            try:
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and server.poll() is None and \
                        not listening_in(nets.ns[0], port):
                    time.sleep(0.05)
                qperf_tests(a, tmp, nets, port, use_cm)
                # (which side reports a refusal first varies: the clients'
                # outcome is what counts, and the server must still serve)
                with open(sout.name) as f:
                    text = f.read()
                if check("qperf server", server.poll() is None, f"exited: {text[-300:]}"):
                    print(f"ok - qperf server{' (-cm1)' if use_cm else ''}: still serving "
                          "after the four", flush=True)
            finally:
                stop(server)


def qperf_tests(a, tmp, nets, port, use_cm):
    for test in QPERF_TESTS:
        case = f"qperf {'-cm1 ' if use_cm else ''}{test}" + ("" if use_cm else " (no -cm1)")
        opts = ["-cm1", "-vvs"] if use_cm else []
        p = run_one(["ip", "netns", "exec", nets.ns[1], a.run, "--lib", a.lib, "--",
                     "qperf", "-lp", str(port)] + opts + [nets.server_addr, "-t", "1", test],
                    case, None, None, af_packet_args(nets, 1, use_cm), tmp)
        if p is None:
            continue
        out = p.stdout + p.stderr
        if use_cm:
            qperf_cm_ok(case, out, p.returncode, test)
        elif check(case, p.returncode == 1, f"exit {p.returncode}: {out[-300:]}") and \
                check(case, "failed to modify QP to RTR" in out, out[-300:]):
            print(f"ok - {case}: exit 1, 'failed to modify QP to RTR'", flush=True)


# ---- the drop-in on droced ------------------------------------------------------------

# The environment of a program that is droced's DPDK secondary: not the
# default (queue regions are), and being retired; the cases that compare
# the two modes name it.
SHARED = {"DROCE_QUEUES": "shared"}

def droced_start(a, tmp, side):
    """droced on side 0 (memif server, 198.18.5.1, its engine on lcore 1) or 1
    (client, .2, its engine on lcore 0): its Popen and socket, once ready."""
    memif = (f"net_memif0,role={'server' if side == 0 else 'client'},"
             f"socket={tmp}/dm.sock,socket-abstract=no")
    return droced_util.droced_start(a.droced, tmp, [f"--vdev={memif}", "--",
                                                    f"--droce-ipv4=198.18.5.{side + 1}/24"],
                                    side=side)


def droced_pids(a, sock):
    """The pids droced --ctl list shows; a failed list fails the test (an
    empty answer would otherwise read as "no application left")."""
    r = subprocess.run([a.droced, "--ctl", sock, "list"], capture_output=True, text=True,
                       timeout=10)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: droced --ctl {sock} list exited {r.returncode}: "
                         f"{(r.stdout + r.stderr)[-500:]}")
    return sorted(int(x) for x in re.findall(r"^pid (\d+):", r.stdout, re.M))


def on_droced(a, tmp, side, sock, name, argv, extra_env=None):
    """argv through droce-run on droced side at sock (on the lcore its
    engine does not use), output to tmp/name.out."""
    env = dict(os.environ, DROCE_ARGS=f"-l {side} --no-pci --log-level=lib.eal:error",
               **(extra_env or {}))
    out = open(os.path.join(tmp, f"{name}.out"), "w+")
    return subprocess.Popen([a.run, "--lib", a.lib, "--daemon", sock, "--"] + argv,
                            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env, cwd=tmp), out


def wait_text(files):
    """Each program's exit status and output (TIMEOUT in all)."""
    deadline = time.monotonic() + TIMEOUT
    rcs, outs = [], []
    for p, f in files:
        try:
            p.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            stop(p)
        rcs.append(p.returncode)
        f.seek(0)
        outs.append(f.read())
    return rcs, outs


def perf_rows_ok(case, rcs, outs, rows):
    """perftest's two sides: exit 0 on droce0, rows[side] their result rows."""
    ok = True
    for side, name in ((0, "server"), (1, "client")):
        ok &= check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {outs[side][-300:]}")
        got = [(int(r[0]), int(r[1])) for r in PERF_ROW_RE.findall(outs[side])]
        ok &= check(case, got == rows[side], f"{name}: rows {got}, expected {rows[side]}")
        ok &= check(case, re.search(r"Device\s+: droce0\b", outs[side]) is not None,
                    f"{name}: not on droce0")
    return ok


def hugepage_maps(pid):
    """Mappings of hugepage memory in /proc/PID/smaps: a kernel page not the
    base page, or a file on a hugetlbfs mount (droced's map_* files)."""
    with open("/proc/mounts") as f:
        mounts = [l.split()[1] + "/" for l in f if l.split()[2] == "hugetlbfs"]
    n = 0
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = re.match(r"KernelPageSize:\s+(\d+) kB", line)
            if m:
                n += int(m.group(1)) != 4
            elif re.match(r"[0-9a-f]+-[0-9a-f]+ ", line):
                path = line.split(maxsplit=5)[5].strip() if len(line.split()) > 5 else ""
                n += any(path.startswith(d) for d in mounts)
    return n


def daemon_pair(a, tmp, socks, cases, maps=None):
    """Every case's server on droced 0 at once (all in its list), then each
    one's client on droced 1; cases: (name, argv, port, checker[, env]).
    maps: each server's hugepage mappings while it waits (hugepage_maps)."""
    servers = [on_droced(a, tmp, 0, socks[0], f"{c[0]}.s", c[1] + ["-p", str(c[2])],
                         c[4] if len(c) > 4 else None)
               for c in cases]
    deadline = time.monotonic() + 40	# four applications' start at once
    while time.monotonic() < deadline and not all(listening(c[2]) for c in cases):
        time.sleep(0.05)
    pids = droced_pids(a, socks[0])
    check("droced", pids == sorted(p.pid for p, _ in servers),
          f"droced 0's applications {pids}, expected the servers' "
          f"{sorted(p.pid for p, _ in servers)}")
    if maps is not None:
        maps.extend(hugepage_maps(p.pid) for p, _ in servers)
    t0 = time.monotonic()
    clients = [on_droced(a, tmp, 1, socks[1], f"{c[0]}.c",
                         c[1] + ["-p", str(c[2]), "127.0.0.1"], c[4] if len(c) > 4 else None)
               for c in cases]
    for i, c in enumerate(cases):
        rcs, outs = wait_text([servers[i], clients[i]])
        if c[3](c[0], rcs, outs):
            print(f"ok - {c[0]} on droced (server and client on two droceds, "
                  f"{len(cases)} at once; {time.monotonic() - t0:.1f} s)", flush=True)


def case_daemon(a, tmp):
    """ibv_rc_pingpong (polling and -e), ib_write_bw and ib_read_lat servers
    on one droced at once, their clients on a second droced at the other memif end;
    then each of a.progs (dropin_mw, dropin_async): its owner on the first, its
    peer on the second (dropin_ctxev: its daemon mode alone on the first;
    dropin_lifecycle: its clean mode alone on the first, on queue regions
    and as a secondary).  Both
    droceds' lists are empty after."""
    procs = []
    try:
        procs = [droced_start(a, tmp, side) for side in (0, 1)]
        socks = [p[1] for p in procs]
        pp = ["ibv_rc_pingpong", "-g", "0", "-s", "4096", "-n", "20", "-c"]
        wbw = ["ib_write_bw", "-d", "droce0", "-x", "0", "-s", "65536", "-n", "50"]
        rlat = ["ib_read_lat", "-d", "droce0", "-x", "0", "-s", "8", "-n", "50"]
        daemon_pair(a, tmp, socks, [
            ("ibv_rc_pingpong -c", pp, free_port(),
             lambda c, r, o: pingpong_ok(c, r, o, 4096, 20)),
            # -e: completion channels (droced's, the drop-in's channel fd)
            ("ibv_rc_pingpong -c -e", pp + ["-e"], free_port(),
             lambda c, r, o: pingpong_ok(c, r, o, 4096, 20)),
            ("ib_write_bw -s 65536", wbw, free_port(),
             lambda c, r, o: perf_rows_ok(c, r, o, ([(65536, 50)], [(65536, 50)]))),
            # (perftest's READ latency server prints no row)
            ("ib_read_lat -s 8", rlat, free_port(),
             lambda c, r, o: perf_rows_ok(c, r, o, ([], [(8, 50)])))])
        for prog in a.progs:
            if os.path.basename(prog) == "dropin_lifecycle":
                # a QP's completions leave its CQ at RESET, on queue regions
                # (those droced published) and as a secondary
                for where, env in (("queue regions", {"DROCE_QUEUES": "region"}),
                                   ("a secondary", SHARED)):
                    case = f"dropin_lifecycle clean on droced, {where}"
                    rcs, outs = wait_text([on_droced(a, tmp, 0, socks[0], "clean",
                                                     [prog, "clean"], env)])
                    # ("ok: ..." after, under ASan, LeakSanitizer's suppressions)
                    said = [ln for ln in outs[0].splitlines() if ln.startswith("ok:")]
                    if check(case, rcs[0] == 0 and len(said) == 1,
                             f"exit {rcs[0]}: {outs[0][-600:]}"):
                        print(f"ok - {case}: {said[0]}", flush=True)
                continue
            if os.path.basename(prog) == "dropin_ctxev":
                # two contexts of droce0 in one process on droced 0, each
                # its own objects' events
                rcs, outs = wait_text([on_droced(a, tmp, 0, socks[0], "ctxev",
                                                 [prog, "daemon"])])
                # ("ok", then under ASan LeakSanitizer's suppression summary)
                if check("dropin_ctxev on droced", rcs[0] == 0 and
                         "ok" in outs[0].splitlines(),
                         f"exit {rcs[0]}: {outs[0][-600:]}"):
                    print("ok - dropin_ctxev on droced: each context its own "
                          "objects' events", flush=True)
                continue
            # dropin_mw: memory windows on a static buffer; dropin_async:
            # the asynchronous events, droced's event ring to the owner's fd
            daemon_pair(a, tmp, socks, [
                (os.path.basename(prog), [prog], free_port(),
                 lambda c, r, o: prog_ok(c, r, o, ("owner", "peer")))])
        left = [droced_pids(a, s) for s in socks]
        if check("droced", left == [[], []], f"applications left {left}"):
            print("ok - droced: no application left on either", flush=True)
    finally:
        for d in reversed(procs):
            droced_util.droced_stop(d)


def droced_objects(a, sock):
    """{pid: (srq, ah)} of droced --ctl list."""
    r = subprocess.run([a.droced, "--ctl", sock, "list"], capture_output=True, text=True,
                       timeout=10)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: droced --ctl {sock} list exited {r.returncode}")
    return {int(m.group(1)): (int(m.group(2)), int(m.group(3)))
            for m in re.finditer(r"^pid (\d+):.* srq (\d+) ah (\d+)$", r.stdout, re.M)}


def case_daemon_srqud(a, tmp):
    """ibv_srq_pingpong and ibv_ud_pingpong (polling and -e) servers on one
    droced at once, their clients on a second droced at the other memif
    end; the servers' SRQ and AH counts in droced's list while they run;
    both droceds' lists empty after.  Whatever still runs at the end (a
    failure) is killed."""
    procs, progs = [], []
    try:
        procs = [droced_start(a, tmp, side) for side in (0, 1)]
        socks = [p[1] for p in procs]
        srq = ["ibv_srq_pingpong", "-g", "0", "-s", "4096", "-n", "20", "-c"]
        ud = ["ibv_ud_pingpong", "-g", "0", "-s", "1024", "-n", "20", "-c"]
        cases = [("ibv_srq_pingpong -c", srq, free_port(), 4096),
                 ("ibv_srq_pingpong -c -e", srq + ["-e"], free_port(), 4096),
                 ("ibv_ud_pingpong -c", ud, free_port(), 1024),
                 ("ibv_ud_pingpong -c -e", ud + ["-e"], free_port(), 1024)]
        servers = [on_droced(a, tmp, 0, socks[0], f"{c[0]}.s", c[1] + ["-p", str(c[2])])
                   for c in cases]
        progs += servers
        deadline = time.monotonic() + 40	# four applications' start at once
        while time.monotonic() < deadline and not all(listening(c[2]) for c in cases):
            time.sleep(0.05)
        # a server listens once its objects exist: the SRQ pingpong's one
        # SRQ; the UD pingpong makes its AH once the client's address came
        objs = droced_objects(a, socks[0])
        want = {p.pid: (1, 0) if "srq" in c[0] else (0, 0) for (p, _), c in zip(servers, cases)}
        if check("droced", objs == want, f"droced 0's SRQs and AHs {objs}, expected {want}"):
            print("ok - droced 0 lists the four servers, the SRQ pingpongs' one SRQ each",
                  flush=True)
        t0 = time.monotonic()
        clients = [on_droced(a, tmp, 1, socks[1], f"{c[0]}.c",
                             c[1] + ["-p", str(c[2]), "127.0.0.1"]) for c in cases]
        progs += clients
        for i, c in enumerate(cases):
            rcs, outs = wait_text([servers[i], clients[i]])
            if pingpong_ok(c[0], rcs, outs, c[3], 20):
                print(f"ok - {c[0]} on droced (server and client on two droceds, "
                      f"{len(cases)} at once; {time.monotonic() - t0:.1f} s)", flush=True)
        left = [droced_pids(a, s) for s in socks]
        if check("droced", left == [[], []], f"applications left {left}"):
            print("ok - droced: no application left on either", flush=True)
    finally:
        for p, out in progs:
            if p.poll() is None:
                p.kill()
                p.wait()
            out.close()
        for d in reversed(procs):
            droced_util.droced_stop(d)


def case_daemon_mckey(a, tmp):
    """Debian's mckey on droced: two droceds at the memif's ends; a receiver
    on each joins MCKEY_GROUP, then a sender on the first sends 10 UD
    messages of 100 bytes to the group: the first droced's engine hands
    them to its other application (the port's loopback), the second's
    receives them over the memif.  Each mckey exits 0 after its 10
    completions (the receivers) or its sends, and both droceds' lists are
    empty after."""
    procs, progs = [], []
    argv = ["stdbuf", "-oL", "mckey", "-m", MCKEY_GROUP, "-C", "10", "-S", "100"]
    try:
        procs = [droced_start(a, tmp, side) for side in (0, 1)]
        socks = [p[1] for p in procs]
        recv = [on_droced(a, tmp, side, socks[side], f"mckey.r{side}",
                          argv + ["-b", f"198.18.5.{side + 1}"]) for side in (0, 1)]
        progs += recv
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            texts = []
            for _, f in recv:
                f.seek(0)
                texts.append(f.read())
            if all("joined dgid" in t for t in texts):
                break
            time.sleep(0.05)
        send = on_droced(a, tmp, 0, socks[0], "mckey.s", argv + ["-b", "198.18.5.1", "-s"])
        progs.append(send)
        rcs, outs = wait_text([send] + recv)
        ok = True
        for rc, out, name in zip(rcs, outs, ("sender", "receiver on droced 0",
                                             "receiver on droced 1")):
            ok &= check("mckey on droced", rc == 0 and "data transfers complete" in out and
                        f"joined dgid: ::ffff:{MCKEY_GROUP} " in out,
                        f"{name}: exit {rc}: {brief(out, 400)}")
        if ok:
            print("ok - mckey on droced: 10 messages to the group reach a receiver on the "
                  "sender's droced and one on the other", flush=True)
        left = [droced_pids(a, s) for s in socks]
        if check("droced", left == [[], []], f"applications left {left}"):
            print("ok - droced: no application left on either", flush=True)
    finally:
        for p, out in progs:
            if p.poll() is None:
                p.kill()
                p.wait()
            out.close()
        for d in reversed(procs):
            droced_util.droced_stop(d)


def rping_on_droced(a, tmp, side, sock, name, argv, extra_env):
    """argv through droce-run on droced side at sock (as on_droced), its
    stderr apart: rping's stdout to a file is written in 4 KiB blocks,
    which its unbuffered stderr lines would otherwise cut."""
    env = dict(os.environ, DROCE_ARGS=f"-l {side} --no-pci --log-level=lib.eal:error",
               **(extra_env or {}))
    out = open(os.path.join(tmp, f"{name}.out"), "w+")
    err = open(os.path.join(tmp, f"{name}.err"), "w")
    p = subprocess.Popen([a.run, "--lib", a.lib, "--daemon", sock, "--"] + argv,
                         stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env, cwd=tmp)
    err.close()
    return p, out


def wait_app(a, sock, proc, text=None):
    """proc is droced's application (and, given text, has printed it)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc[0].poll() is None:
        if text is None and proc[0].pid in droced_pids(a, sock):
            return
        if text is not None:
            proc[1].seek(0)
            if text in proc[1].read():
                return
        time.sleep(0.05)


def daemon_rping_one(a, tmp, socks, what, env, client_side):
    """rping -s on droced 0, rping -c -V on droced client_side."""
    port, count, size = str(free_port()), 10, 1000
    common = ["-a", "198.18.5.1", "-p", port, "-S", str(size), "-v"]
    case = f"rping on droced ({what})"
    srv = rping_on_droced(a, tmp, 0, socks[0], f"rping-s-{port}",
                          ["rping", "-s", "-C", str(count)] + common, env)
    # the server is droced's application, then listens within
    # milliseconds (droced holds a REQ 250 ms for its listener)
    wait_app(a, socks[0], srv)
    time.sleep(0.2)
    cli = rping_on_droced(a, tmp, client_side, socks[client_side], f"rping-c-{port}",
                          ["rping", "-c", "-V", "-C", str(count)] + common, env)
    rcs, outs = wait_text([srv, cli])
    ok = True
    for side, name, prefix in ((0, "server", "server ping data: "),
                               (1, "client", "ping data: ")):
        ok &= check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {brief(outs[side], 400)}")
        got = [ln for ln in outs[side].splitlines() if ln.startswith(prefix)]
        want = [prefix + rping_text(i, size) for i in range(count)]
        ok &= check(case, got == want, f"{name}: {len(got)} ping lines, "
                    f"{sum(g == w for g, w in zip(got, want))} as expected of {count}")
    ok &= check(case, "data mismatch" not in outs[1], "client: data mismatch")
    if ok:
        print(f"ok - {case}: {count} pings of {size} bytes, exact on both sides", flush=True)


def daemon_write_bw_cm(a, tmp, socks, client_side, iters=200):
    """ib_write_bw -R: its server on droced 0, its client on droced
    client_side; both print the one row (65536 B, iters) on droce0."""
    port = str(free_port())
    perf = ["stdbuf", "-oL", "ib_write_bw", "-x", "0", "-s", "65536", "-n", str(iters),
            "-u", str(PERF_QP_TIMEOUT), "-p", port, "-R"]
    where = "the same droced" if client_side == 0 else "two droceds over memif"
    case = f"ib_write_bw -R on droced ({where})"
    srv = rping_on_droced(a, tmp, 0, socks[0], f"bw-s-{port}", perf, None)
    wait_app(a, socks[0], srv, "Waiting for client")
    time.sleep(0.3)
    cli = rping_on_droced(a, tmp, client_side, socks[client_side], f"bw-c-{port}",
                          perf + ["198.18.5.1"], None)
    rcs, outs = wait_text([cli, srv])
    rcs.reverse()
    outs.reverse()
    if perf_rows_ok(case, rcs, outs, [[(65536, iters)], [(65536, iters)]]):
        print(f"ok - {case}: 65536 B x {iters} on droce0, both sides", flush=True)


def daemon_qperf(a, tmp, socks):
    """qperf -cm1's four RC tests on droced: the server a secondary of
    droced 0, clients as secondaries of droced 1 (across memif) and as
    plain processes on droced 0's queue regions (loopback).  qperf's TCP
    channel needs droce's address in the kernel too: both ends run in a
    network namespace whose lo holds 198.18.5.1 and .2 (qperf -cm1
    connects its RDMA CM to its TCP peer's address).  The qperf server
    forks a child per test, each a new application of droced."""
    ns = f"dqp{os.getpid()}"
    subprocess.run(["ip", "netns", "add", ns], check=True)
    server = None
    try:
        for cmd in (["link", "set", "lo", "up"], ["addr", "add", "198.18.5.1/32", "dev", "lo"],
                    ["addr", "add", "198.18.5.2/32", "dev", "lo"]):
            subprocess.run(["ip", "-n", ns] + cmd, check=True)
        port = free_port()
        sout = open(os.path.join(tmp, f"qperf-s-{port}.out"), "w+")
        server = subprocess.Popen(["ip", "netns", "exec", ns, a.run, "--lib", a.lib, "--daemon",
                                   socks[0], "--", "qperf", "-lp", str(port)],
                                  stdout=sout, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, cwd=tmp,
                                  env=dict(os.environ, DROCE_ARGS="-l 0 --no-pci "
                                           "--log-level=lib.eal:error", **SHARED))
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and server.poll() is None and \
                not listening_in(ns, port):
            time.sleep(0.05)
        for where, side, env in (("secondary of droced 1", 1, SHARED),
                                 ("queue regions of droced 0", 0, {"DROCE_QUEUES": "region"})):
            for test in QPERF_TESTS:
                case = f"qperf -cm1 {test} on droced ({where})"
                cmd = ["ip", "netns", "exec", ns, a.run, "--lib", a.lib, "--daemon", socks[side],
                       "--", "qperf", "-lp", str(port), "-cm1", "-vvs", "198.18.5.1", "-t", "1",
                       test]
                env_all = dict(os.environ, DROCE_ARGS=f"-l {side} --no-pci "
                               "--log-level=lib.eal:error", **(env or {}))
                try:
                    p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT,
                                       env=env_all, cwd=tmp)
                except subprocess.TimeoutExpired:
                    check(case, False, "timed out")
                    continue
                qperf_cm_ok(case, p.stdout + p.stderr, p.returncode, test)
        sout.seek(0)
        if check("qperf server on droced", server.poll() is None,
                 f"exited: {sout.read()[-300:]}"):
            print("ok - qperf server on droced: still serving after the eight", flush=True)
    finally:
        if server is not None:
            stop(server)
            sout.close()
        subprocess.run(["ip", "netns", "del", ns], check=False)


def daemon_rdmacm_utils(a, tmp, socks):
    """rdmacm-utils' ucmatose, rdma_server / rdma_client, rdma_xserver /
    rdma_xclient and cmtime -c 5 on droced: each server a secondary of
    droced 0, its client a secondary of droced 1 (across memif); ucmatose
    and cmtime also as plain processes on droced 0's queue regions.  Each
    client exits 0 with its last line (cmtime: every step's row)."""
    runs = [("ucmatose", ["ucmatose"], ["ucmatose", "-s", "198.18.5.1"], "return status 0"),
            ("rdma_server", ["rdma_server"], ["rdma_client", "-s", "198.18.5.1"],
             "rdma_client: end 0"),
            ("rdma_xserver", ["rdma_xserver"], ["rdma_xclient", "-s", "198.18.5.1"],
             "rdma_xclient: end 0"),
            ("cmtime", ["cmtime"], ["cmtime", "-s", "198.18.5.1", "-c", "5"], None)]
    regions = {"DROCE_QUEUES": "region"}
    plans = [(r, 1, SHARED, "secondaries, two droceds") for r in runs] + \
            [(r, 0, regions, "queue regions, one droced") for r in (runs[0], runs[3])]
    for (name, srv, cli, last), client_side, env, where in plans:
        case = f"{name} on droced ({where})"
        tag = f"{name}-{client_side}-{free_port()}"
        sp = rping_on_droced(a, tmp, 0, socks[0], f"s-{tag}", ["stdbuf", "-oL"] + srv, env)
        try:
            wait_app(a, socks[0], sp)
            time.sleep(0.3)
            cp = rping_on_droced(a, tmp, client_side, socks[client_side], f"c-{tag}",
                                 ["stdbuf", "-oL"] + cli, env)
            try:
                rc = cp[0].wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                rc = None
            stop(cp[0])
            cp[1].seek(0)
            out = cp[1].read()
            cp[1].close()
        finally:
            stop(sp[0])
            sp[1].close()
        rows = {m.group(1): float(m.group(4)) for m in CMTIME_ROW_RE.finditer(out)}
        done = (last in out) if last is not None else \
            (len(rows) == 7 and all(v < 1e8 for v in rows.values()))
        if check(case, rc == 0 and done, f"client exit {rc}: {brief(out, 300)}"):
            print(f"ok - {case}: client exit 0, " +
                  (f"'{last}'" if last is not None else "every step done"), flush=True)


def daemon_udaddy(a, tmp, socks):
    """udaddy (UD ids: SIDR relayed by droced, then datagrams) on droced:
    the server (-b 198.18.5.1, -C 20) on droced 0, its client on droced 1
    (across memif: droced's GSI QPs on the wire) as secondaries, then both
    as plain processes on queue regions on droced 0 (the SIDR_REQ looped
    back to droced's own port) and across the two.  Each side exits 0 and
    prints exactly its steps (case_udaddy)."""
    regions = {"DROCE_QUEUES": "region"}
    for client_side, env, where in ((1, SHARED, "secondaries, two droceds"),
                                    (0, regions, "queue regions, one droced"),
                                    (1, regions, "queue regions, two droceds")):
        case = f"udaddy on droced ({where})"
        tag = f"ud-{client_side}-{free_port()}"
        sp = rping_on_droced(a, tmp, 0, socks[0], f"s-{tag}",
                             ["stdbuf", "-oL", "udaddy", "-b", "198.18.5.1", "-C", "20"], env)
        outs, rcs = ["", ""], [None, None]
        try:
            wait_app(a, socks[0], sp, "udaddy: starting server")
            time.sleep(0.3)
            cp = rping_on_droced(a, tmp, client_side, socks[client_side], f"c-{tag}",
                                 ["stdbuf", "-oL", "udaddy", "-s", "198.18.5.1", "-C", "20"],
                                 env)
            for side, p in ((1, cp), (0, sp)):
                try:
                    rcs[side] = p[0].wait(timeout=TIMEOUT)
                except subprocess.TimeoutExpired:
                    hang_report(p[0], f"{case} side {side}")
                stop(p[0])
                p[1].seek(0)
                outs[side] = p[1].read()
            cp[1].close()
        finally:
            stop(sp[0])
            sp[1].close()
        ok = True
        for side, name, want in ((0, "server", UDADDY_SERVER), (1, "client", UDADDY_CLIENT)):
            ok &= check(case, rcs[side] == 0 and udaddy_lines(outs[side]) == want,
                        f"{name} exit {rcs[side]}: {brief(outs[side], 300)}")
        if ok:
            print(f"ok - {case}: both sides exit 0, every step", flush=True)


def server_client_on_droced(a, tmp, socks, name, srv, cli, env, client_side=0,
                            server_stays=False):
    """srv on droced 0, then (once it is droced's application) cli on
    droced client_side: (exit statuses, outputs: stdout then stderr).
    server_stays: a server that never exits, stopped once its client did."""
    tag = f"{name}-{free_port()}"
    sp = rping_on_droced(a, tmp, 0, socks[0], f"s-{tag}", srv, env)
    procs = [sp]
    try:
        wait_app(a, socks[0], sp)
        time.sleep(0.3)
        procs.append(rping_on_droced(a, tmp, client_side, socks[client_side], f"c-{tag}",
                                     cli, env))
        rcs = []
        for (p, _), prog in zip(reversed(procs), (cli[0], srv[0])):
            try:
                rcs.append(p.wait(timeout=TIMEOUT))
            except subprocess.TimeoutExpired:
                hang_report(p, f"{tag}: {prog}")
                rcs.append(None)
            if server_stays:
                stop(sp[0])
        rcs.reverse()
    finally:
        outs = []
        for p, out in procs:
            stop(p)
            out.seek(0)
            text = out.read()
            out.close()
            err = out.name[:-len(".out")] + ".err"
            with open(err) as f:
                text += f.read()
            outs.append(text)
    return rcs, outs


def daemon_rsockets(a, tmp, socks):
    """rsockets as plain processes on droced's queue regions (one droced):
    riostream (riomap / riowrite; each side spins on its mapped buffer
    while droced places the peer's WRITE) with the in-process test's three
    option sets, both sides exit 0 with exactly its row; udpong's echo
    (datagram rsockets), its row exact; a plain TCP echo
    program under librspreload, each side in a network namespace of its
    own, 4 MB echoed and checked byte by byte."""
    regions = {"DROCE_QUEUES": "region"}
    runs = [(["-S", "64", "-C", "1", "-I", "100"], ("custom", "64", "1", "100", "12k")),
            (["-S", "65536", "-C", "100", "-I", "5", "-T", "v"],
             ("custom", "64k", "100", "5", "62m")),
            (["-S", "4096", "-C", "20", "-I", "20", "-T", "a"],
             ("custom", "4k", "20", "20", "3.1m"))]
    for opts, row in runs:
        case = f"riostream {' '.join(opts)} on droced (queue regions)"
        rcs, outs = server_client_on_droced(a, tmp, socks, "rio", ["riostream", "-b", "198.18.5.1"] + opts,
                                ["riostream", "-s", "198.18.5.1"] + opts, regions)
        ok = True
        for side, name in ((0, "server"), (1, "client")):
            ok &= check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {brief(outs[side], 300)}")
            ok &= check(case, rstream_rows(outs[side]) == [row],
                        f"{name} rows {rstream_rows(outs[side])}, expected {[row]}")
        if ok:
            print(f"ok - {case}: its row exact on both sides", flush=True)
    # datagram rsockets: udpong's echo, both on droced's one address.  Its
    # client resends a datagram unanswered in 1 ms and the server echoes
    # every copy; a stale echo read later overwrites the client's message,
    # which it then resends as is (client_send_recv sets the sequence
    # number once): stale copies stay in flight for good, one more per
    # timeout.  Once they fill a receive queue (384) datagrams are dropped,
    # and if the current one is, the client resends only stale ones and
    # waits forever (seen live: the client sending sequence number 3 for
    # minutes, reading only 3s, while it wanted 4).  On a busy 2-core
    # machine (droced's lcore and udpong's non-blocking server both spin)
    # 1 ms goes by often: 500 echoes hung in 1 run of 20 to 60 under two
    # spinners (and once in CI); 100 give far fewer timeouts.
    case = "udpong -S 256 -C 100 -T e on droced (queue regions)"
    rcs, outs = server_client_on_droced(
        a, tmp, socks, "udp", ["stdbuf", "-oL", "udpong", "-b", "198.18.5.1"],
        ["udpong", "-s", "198.18.5.1", "-S", "256", "-C", "100", "-T", "e"], regions,
        server_stays=True)
    rows = re.findall(r"^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+[\d.]+s\s+[\d.]+\s+[\d.]+$",
                      outs[1], re.M)
    if (check(case, rcs[1] == 0, f"client exit {rcs[1]}: {brief(outs[1], 300)}") &
            check(case, rows == [("custom", "256", "200", "50k")], f"client rows {rows}") &
            check(case, "client login from 198.18.5.1" in outs[0],
                  f"server: {brief(outs[0], 300)}")):
        print(f"ok - {case}: its row exact", flush=True)
    case = "tcp_echo under librspreload on droced (queue regions)"
    if a.prog is None or not check(case, os.path.exists(RSPRELOAD), f"{RSPRELOAD} missing"):
        return
    total = 4000000
    pre = ["unshare", "-n", "--", "env", f"LD_PRELOAD={RSPRELOAD}", a.prog]
    rcs, outs = server_client_on_droced(a, tmp, socks, "rsp", pre + ["server", "198.18.5.1", "7471"],
                            pre + ["client", "198.18.5.1", "7471", str(total)], regions)
    ok = True
    for side, name in ((0, "server"), (1, "client")):
        ok &= check(case, rcs[side] == 0 and f"ok {name} {total}\n" in outs[side],
                    f"{name} exit {rcs[side]}: {brief(outs[side], 300)}")
    if ok:
        print(f"ok - {case}: {total} bytes echoed and checked", flush=True)


def case_daemon_rping(a, tmp):
    """The drop-in librdmacm on droced, whose GSI QP relays the programs'
    CM MADs (app/droced/README.md "RDMA CM"), unmodified Debian programs:
    rping -s and rping -c -V -C 10 -S 1000 both on one droced (loopback:
    the client connects to droced's own address), as droced's
    secondaries, then as plain processes on queue regions; the same with
    the client on a second droced at the other memif end (droced's GSI QPs
    on the wire); ib_write_bw -R (65536 B x 200) on one droced and across
    the two; qperf -cm1's four RC tests (daemon_qperf); rdmacm-utils'
    other programs (daemon_rdmacm_utils); udaddy (daemon_udaddy); riostream and librspreload on
    queue regions (daemon_rsockets).  rping: each
    side exits 0 and prints each ping's exact text
    (rping -V verifies the data the server wrote back); ib_write_bw: each
    side exits 0 with exactly its one row, on droce0.  Both droceds' lists
    are empty after.  With --preload (the sanitizer build) rping only."""
    procs = []
    regions = {"DROCE_QUEUES": "region"}
    try:
        procs = [droced_start(a, tmp, side) for side in (0, 1)]
        socks = [p[1] for p in procs]
        daemon_rping_one(a, tmp, socks, "secondaries, one droced", SHARED, 0)
        daemon_rping_one(a, tmp, socks, "queue regions, one droced", regions, 0)
        daemon_rping_one(a, tmp, socks, "secondaries, two droceds", SHARED, 1)
        daemon_rping_one(a, tmp, socks, "queue regions, two droceds", regions, 1)
        # (not with the sanitizer's runtime preloaded: perftest exits 1
        # on its own leaks there)
        if a.preload is None:
            daemon_write_bw_cm(a, tmp, socks, 0)
            daemon_write_bw_cm(a, tmp, socks, 1)
            daemon_qperf(a, tmp, socks)
            daemon_rdmacm_utils(a, tmp, socks)
            daemon_udaddy(a, tmp, socks)
            daemon_rsockets(a, tmp, socks)
        deadline = time.monotonic() + 5
        while any(droced_pids(a, s) for s in socks) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [droced_pids(a, s) for s in socks]
        if check("droced", left == [[], []], f"applications left {left}"):
            print("ok - droced: no application left on either", flush=True)
    finally:
        for d in reversed(procs):
            droced_util.droced_stop(d)


def case_daemon_regions(a, tmp):
    """ibv_rc_pingpong as plain processes on droced's queue regions
    (DROCE_QUEUES=region: no EAL, droce-run's EAL options ignored; lib/verbs
    provider_dq), polling and with -e (completion channels), and
    ibv_ud_pingpong (droced's address handles), ibv_srq_pingpong (polling
    and -e: 16 QPs on an SRQ), perftest's ib_send_lat and
    ib_write_lat -s 8 (50 iterations, each side's one row on droce0),
    servers on one
    droced, clients on a second at the other memif end; and one pair as
    droced's secondaries (DROCE_QUEUES=shared) beside them.  While the servers
    wait, the plain processes map no hugepage (/proc/PID/smaps), the
    secondary does (the check sees droced's memory where it is mapped).
    Both droceds' lists are empty after."""
    procs = []
    regions = {"DROCE_QUEUES": "region"}
    try:
        procs = [droced_start(a, tmp, side) for side in (0, 1)]
        socks = [p[1] for p in procs]
        pp = ["ibv_rc_pingpong", "-g", "0", "-s", "4096", "-n", "20", "-c"]
        ud = ["ibv_ud_pingpong", "-g", "0", "-s", "1024", "-n", "20", "-c"]
        srq = ["ibv_srq_pingpong", "-g", "0", "-s", "4096", "-n", "20", "-c"]
        slat = ["ib_send_lat", "-d", "droce0", "-x", "0", "-s", "8", "-n", "50"]
        wlat = ["ib_write_lat", "-d", "droce0", "-x", "0", "-s", "8", "-n", "50"]
        maps = []
        daemon_pair(a, tmp, socks, [
            ("ibv_rc_pingpong -c on queue regions", pp, free_port(),
             lambda c, r, o: pingpong_ok(c, r, o, 4096, 20), regions),
            ("ibv_rc_pingpong -c -e on queue regions", pp + ["-e"], free_port(),
             lambda c, r, o: pingpong_ok(c, r, o, 4096, 20), regions),
            # UD: droced's address handles, named by index in the ring
            ("ibv_ud_pingpong -c on queue regions", ud, free_port(),
             lambda c, r, o: pingpong_ok(c, r, o, 1024, 20), regions),
            # 16 QPs on one SRQ: its ring is a QP slot's receive ring
            ("ibv_srq_pingpong -c on queue regions", srq, free_port(),
             lambda c, r, o: pingpong_ok(c, r, o, 4096, 20), regions),
            ("ibv_srq_pingpong -c -e on queue regions", srq + ["-e"], free_port(),
             lambda c, r, o: pingpong_ok(c, r, o, 4096, 20), regions),
            # perftest's latency tools (no inline data: perftest uses it
            # only on devices it knows, "Max inline data : 0[B]")
            ("ib_send_lat -s 8 on queue regions", slat, free_port(),
             lambda c, r, o: perf_rows_ok(c, r, o, ([(8, 50)], [(8, 50)])), regions),
            ("ib_write_lat -s 8 on queue regions", wlat, free_port(),
             lambda c, r, o: perf_rows_ok(c, r, o, ([(8, 50)], [(8, 50)])), regions),
            ("ibv_rc_pingpong -c as secondaries", pp, free_port(),
             lambda c, r, o: pingpong_ok(c, r, o, 4096, 20), SHARED)], maps)
        if check("hugepages", len(maps) == 8 and maps[:7] == [0] * 7 and maps[7] > 0,
                 f"the servers' hugepage mappings {maps}, expected seven 0 and >0"):
            print(f"ok - hugepage mappings of the servers: plain processes {maps[:7]}, "
                  f"the secondary {maps[7]}", flush=True)
        left = [droced_pids(a, s) for s in socks]
        if check("droced", left == [[], []], f"applications left {left}"):
            print("ok - droced: no application left on either", flush=True)
    finally:
        for d in reversed(procs):
            droced_util.droced_stop(d)


# One side of case_droced_default, in a mount namespace of its own whose
# /run is empty: a droced started from its configuration file alone
# (socket: the default /run/droce/droced.sock), then the program through
# droce-run with no device option at all.
DEFAULT_SIDE = r"""
mount -t tmpfs -o mode=0755 tmpfs /run || exit 90
"$DROCED" --config="$CONF" >"$OUT" 2>&1 </dev/null &
dpid=$!
for _ in $(seq 300); do
    grep -q "droced: ready on /run/droce/droced.sock" "$OUT" && break
    kill -0 "$dpid" 2>/dev/null || break
    sleep 0.1
done
if ! grep -q "droced: ready on /run/droce/droced.sock" "$OUT"; then
    echo "droced did not start on the default socket"; kill -TERM "$dpid"; wait "$dpid"; exit 91
fi
if ! grep -q "droced: no secondaries" "$OUT"; then
    echo "droced serves secondaries"; kill -TERM "$dpid"; wait "$dpid"; exit 93
fi
"$RUN" --lib "$LIB" -- "$@"
rc=$?
kill -TERM "$dpid"
wait "$dpid" || rc=92
exit $rc
"""


def droced_default_side(a, tmp, side, name, argv):
    """argv on side's droced (started by --config=FILE alone) in a private
    /run, through droce-run with none of DROCE_ARGS, DROCE_CONFIG and
    DROCE_DAEMON."""
    conf = os.path.join(tmp, f"droced_default{side}.ini")
    memif = (f"net_memif0,role={'server' if side == 0 else 'client'},"
             f"socket={tmp}/dd.sock,socket-abstract=no")
    with open(conf, "w") as f:
        f.write(f"[droced]\neal = -l 0,1 --main-lcore {side} --no-pci "
                f"--log-level=lib.eal:error --vdev={memif}\nsecondaries = no\n"
                f"[device0]\nport = 0\nipv4 = 198.18.5.{side + 1}/24\n"
                f"transport_lcores = {1 - side}\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("DROCE_ARGS", "DROCE_CONFIG", "DROCE_DAEMON")}
    env.update(DROCED=a.droced, CONF=conf, OUT=os.path.join(tmp, f"{name}.droced.out"),
               RUN=a.run, LIB=a.lib)
    out = open(os.path.join(tmp, f"{name}.out"), "w+")
    return subprocess.Popen(["unshare", "-m", "--propagation", "private", "bash", "-c",
                             DEFAULT_SIDE, "side"] + argv,
                            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env, cwd=tmp), out


def case_droced_default(a, tmp):
    """The device users start once: without droced, droce-run with no
    option gives a program no device; with a droced started from a
    configuration file (config/droced.ini's shape, serving no secondaries:
    its EAL --in-memory) on the default socket, the same command runs ibv_devinfo on droce0 and ibv_rc_pingpong -c
    between two such droceds."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DROCE_ARGS", "DROCE_CONFIG", "DROCE_DAEMON")}
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c",
                        "mount -t tmpfs tmpfs /run && exec \"$0\" --lib \"$1\" -- ibv_devices",
                        a.run, a.lib], capture_output=True, text=True, env=env, timeout=60)
    if check("droced default: none listening", r.returncode == 0 and "droce0" not in r.stdout,
             f"exit {r.returncode}: {(r.stdout + r.stderr)[-300:]}"):
        print("ok - droced default: no droced on /run/droce/droced.sock, no device", flush=True)
    rcs, outs = wait_text([droced_default_side(a, tmp, 0, "dd_info", ["ibv_devinfo"])])
    if check("droced default: ibv_devinfo", rcs[0] == 0 and re.search(
            r"hca_id:\s+droce0", outs[0]) is not None and "link_layer:\t\tEthernet" in outs[0],
            f"exit {rcs[0]}: {outs[0][-400:]}"):
        print("ok - droced default: ibv_devinfo sees droced's droce0 (Ethernet)", flush=True)
    port = free_port()
    pp = ["ibv_rc_pingpong", "-g", "0", "-s", "4096", "-n", "20", "-c", "-p", str(port)]
    server = droced_default_side(a, tmp, 0, "dd_pp.s", pp)
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline and not listening(port) and server[0].poll() is None:
        time.sleep(0.05)
    client = droced_default_side(a, tmp, 1, "dd_pp.c", pp + ["127.0.0.1"])
    rcs, outs = wait_text([server, client])
    if pingpong_ok("droced default: ibv_rc_pingpong -c", rcs, outs, 4096, 20):
        print("ok - droced default: ibv_rc_pingpong -c between two droceds started from "
              "their configuration, droce-run without options", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog", action="append",
                    help="pollfd, mw, async, ctxev, abi, rdmacm_calls, rspreload: the test program; daemon: "
                    "each one (repeated) on the two droceds")
    ap.add_argument("--droced", help="daemon: app/droced's binary")
    ap.add_argument("--preload", help="a sanitizer runtime preloaded into the programs "
                    "(the drop-ins of a sanitizer build); leaks reported, but for "
                    "test/lsan.supp's")
    ap.add_argument("what", choices=["tools", "pingpong", "perftest", "pollfd", "rping",
                                     "perftest_cm", "rdmacm_calls", "perftest_options",
                                     "qperf", "mw", "async", "ctxev", "abi", "daemon", "daemon_srqud",
                                     "daemon_regions", "daemon_rping",
                                     "lifecycle",
                                     "rstream", "riostream", "udpong", "rspreload", "progress",
                                     "rdmacm_utils", "udaddy", "mckey", "daemon_mckey"])
    a = ap.parse_args()
    a.run, a.lib = os.path.abspath(a.run), os.path.abspath(a.lib)
    if a.preload is not None:
        # leaks reported (a non-zero exit fails the program's check), but
        # for what test/lsan.supp names (not droce's): two frames kept per
        # allocation, so that a name matches the allocating code only
        supp = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lsan.supp")
        os.environ.update(LD_PRELOAD=a.preload,
                          ASAN_OPTIONS="detect_leaks=1:malloc_context_size=2",
                          LSAN_OPTIONS=f"suppressions={supp}",
                          UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    a.progs = [os.path.abspath(p) for p in a.prog or []]
    a.prog = a.progs[0] if a.progs else None
    if a.what.startswith("daemon") and os.environ.get("DROCE_NO_HUGE") == "1":
        print("daemon mode needs hugepages (DPDK multi-process), DROCE_NO_HUGE=1")
        return 77
    with tempfile.TemporaryDirectory(prefix="dropin-") as tmp:
        if a.what == "tools":
            case_tools(a, tmp)
        elif a.what == "lifecycle":
            case_lifecycle(a, tmp)
        elif a.what == "rdmacm_utils":
            case_rdmacm_utils(a, tmp)
        elif a.what == "pollfd":
            # dropin_poll_fd.c: the receiver waits with poll() on channel->fd
            case_prog(a, tmp, "e0", "dropin_poll_fd (transport lcore)", ("receiver", "sender"),
                      "woken by poll(), solicited_only honoured")
        elif a.what == "progress":
            # each step timed: the whole suite has a time budget
            t = time.monotonic()
            case_prog(a, tmp, "e1", "dropin_poll_fd (droce's defaults)", ("receiver", "sender"),
                      "woken by poll(), solicited_only honoured", lcore=False)
            print(f"# dropin_poll_fd: {time.monotonic() - t:.1f} s", flush=True)
            t = time.monotonic()
            # rping's CM thread, CQ thread (in ibv_get_cq_event) and main
            # thread, through the drop-in librdmacm
            case_rping(a, tmp, "c5", ["-C", "10"], 10, 100, lcore=False)
            print(f"# rping: {time.monotonic() - t:.1f} s", flush=True)
            nets = Veth(f"g{os.getpid() % 100000}")
            try:
                t = time.monotonic()
                case_idle(a, tmp, nets)
                print(f"# idle: {time.monotonic() - t:.1f} s", flush=True)
                t = time.monotonic()
                progress_defaults(a, tmp, nets)
                print(f"# perftest: {time.monotonic() - t:.1f} s", flush=True)
            finally:
                nets.close()
        elif a.what == "mw":
            case_prog(a, tmp, "m0", "dropin_mw (transport lcore)", ("owner", "peer"),
                      "type 1 and 2 windows bound, used, revoked")
        elif a.what == "abi":
            case_prog(a, tmp, "z0", "dropin_abi (transport lcore)", ("owner", "peer"),
                      "rates, GID table, rereg_mr, EOPNOTSUPP answers, the 1.0 ABI")
        elif a.what == "ctxev":
            case_ctxev(a, tmp, "x0")
        elif a.what == "async":
            case_prog(a, tmp, "y0", "dropin_async (transport lcore)", ("owner", "peer"),
                      "QP_ACCESS_ERR, COMM_EST, SQ_DRAINED, CQ_ERR through async_fd")
        elif a.what == "daemon_srqud":
            case_daemon_srqud(a, tmp)
        elif a.what == "daemon":
            case_daemon(a, tmp)
            case_droced_default(a, tmp)
        elif a.what == "daemon_regions":
            case_daemon_regions(a, tmp)
        elif a.what == "daemon_rping":
            case_daemon_rping(a, tmp)
        elif a.what == "rdmacm_calls":
            case_rdmacm_calls(a, tmp, "k0")
        elif a.what == "rstream":
            rstream_tests(a, tmp)
        elif a.what == "riostream":
            riostream_tests(a, tmp)
        elif a.what == "udpong":
            udpong_tests(a, tmp)
        elif a.what == "rspreload":
            case_rspreload(a, tmp, "u0")
        elif a.what == "rping":
            case_rping(a, tmp, "c0", ["-C", "10"], 10, 100)
            case_rping(a, tmp, "c1", [], 10, 10000)
            case_rping(a, tmp, "c2", ["-C", "20"], 20, 1000, "2001:2:0:5::1")
            case_rping_rejected(a, tmp, "c3")
            case_perftest_rejected(a, tmp, "c4")
        elif a.what == "udaddy":
            case_udaddy(a, tmp, "v0", [])
            case_udaddy(a, tmp, "v1", ["-c", "3", "-C", "50", "-S", "1000"])
            case_udaddy(a, tmp, "v2", ["-P", "ipoib", "-C", "20"], lcore=True)
            case_udaddy_unsupported(a, tmp, "v3")
        elif a.what == "perftest_cm":
            nets = Veth(f"r{os.getpid() % 100000}")
            try:
                case_perftest(a, tmp, nets, "w", "ib_write_bw", 65536, 500, True, rdma_cm=True)
                case_perftest(a, tmp, nets, "s", "ib_send_lat", 64, 500, True, rdma_cm=True)
            finally:
                nets.close()
        elif a.what == "daemon_mckey":
            case_daemon_mckey(a, tmp)
        elif a.what == "mckey":
            nets = Veth(f"m{os.getpid() % 100000}")
            try:
                case_mckey(a, tmp, nets, "mk0", [])
                case_mckey(a, tmp, nets, "mk1", ["-o"])
            finally:
                nets.close()
        elif a.what == "qperf":
            nets = Veth(f"q{os.getpid() % 100000}")
            try:
                case_qperf(a, tmp, nets)
            finally:
                nets.close()
        elif a.what in ("perftest", "perftest_options"):
            nets = Veth(f"d{os.getpid() % 100000}")
            try:
                if a.what == "perftest_options":
                    perftest_options(a, tmp, nets)
                else:
                    perftest_tools(a, tmp, nets)
            finally:
                nets.close()
        else:
            n = 0
            for tool, size, chk in (("ibv_rc_pingpong", 4096, ["-c"]),
                                    ("ibv_uc_pingpong", 4096, ["-c"]),
                                    ("ibv_ud_pingpong", 1024, ["-c"]),
                                    ("ibv_srq_pingpong", 4096, ["-c"])):
                # -N: the ibv_wr_* post API, -j: device memory (rc_pingpong
                # only has them)
                modes = [[], ["-e"]] + ([["-N"], ["-j"]] if tool == "ibv_rc_pingpong" else [])
                for mode in modes:
                    case_pair(a, tmp, f"p{n}", tool, chk + mode, size, 500)
                    n += 1
            case_bad_peer(a, tmp, "b0")
            case_refused(a, tmp, "r0", "ibv_rc_pingpong", "-o", "The device isn't ODP capable")
            case_refused(a, tmp, "r1", "ibv_rc_pingpong", "-t",
                         "The device isn't completion timestamp capable")
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
