#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Plain-process applications on droced's queue regions (lib/dq,
app/droced/README.md "Queue regions"): dq_client, which links only lib/dq
and libc (no EAL), on one droced; its two QPs meet on droced's loopback.

  dq_traffic  a reader and a writer: rounds of a 1 KiB WRITE into the
              reader's buffer (a memfd of its own) and a SEND with the
              round as immediate; the reader checks every byte of the
              round's WRITE when the SEND arrives and echoes it; every
              completion SUCCESS; droced --ctl list and telemetry show
              each with exactly its objects (one PD, MR, CQ, QP, its 64 KiB
              of own pages) and dq_bad 0 while they run, none after
  dq_hostile  the same traffic, and meanwhile a hostile client writes
              garbage into its own region: producer indices beyond its
              send ring and its receive ring, an unknown opcode, 9 SGEs,
              the reader's lkey, a wrapping SGE, an lkey of nobody, a
              completion ring's consumer index ahead of droced's; and
              attaches the reader's QP handle (ENOENT).  It gets exactly
              7 QP_REQ_ERR (its slots 0-6, in order) and 1 CQ_ERR in its
              event ring, all 8 of its QPs in ERR, dq_bad exactly 8 in
              the list and telemetry (the reader's and writer's 0); the
              writer goes on past the attack, both finish with every
              byte and completion right; droced is alive and lists no
              application after

Usage: dq_test.py CASE DROCED DQ_CLIENT.  Needs hugepages (droced is an
EAL primary with shared configuration; exit 77 when DROCE_NO_HUGE=1).
"""
import json
import os
import re
import socket
import subprocess
import sys

from daemon_test import Setup, fail, runtime_dir, use_lsan_supp

DQ_OBJS = (1, 1, 1, 1, 0, 0, 1, 65536, 0)	# pd mr cq qp buf buf_bytes mem mem_bytes dq_bad
HOSTILE_OBJS = (1, 1, 2, 8, 0, 0, 1, 65536, 8)
ROW = (r"pid (\d+): pd (\d+) mr (\d+) cq (\d+) qp (\d+) buf (\d+) buf_bytes (\d+) "
       r"mem (\d+) mem_bytes (\d+) mw \d+ dq_bad (\d+)")
KEYS = ("pd", "mr", "cq", "qp", "buf", "buf_bytes", "mem", "mem_bytes", "dq_bad")


def apps(s):
    """droced --ctl list and telemetry's /droced/apps: {pid: counts}, both."""
    out = subprocess.run([s.droced_bin, "--ctl", s.sock, "list"], text=True,
                         capture_output=True, timeout=10)
    if out.returncode != 0:
        fail(f"droced --ctl list: {out.stderr}")
    listed = {int(m.group(1)): tuple(int(x) for x in m.groups()[1:])
              for m in re.finditer(ROW, out.stdout)}
    if len(listed) != int(re.search(r"applications: (\d+)", out.stdout).group(1)):
        fail(f"droced --ctl list: {out.stdout}")
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as t:
        t.connect(f"{runtime_dir(s.prefix)}/dpdk_telemetry.v2")
        t.recv(4096)
        t.send(b"/droced/apps")
        tel = json.loads(t.recv(1 << 16))["/droced/apps"]
    return listed, {int(p): tuple(v[k] for k in KEYS) for p, v in tel.items()}


def expect_apps(s, want, what):
    listed, tel = apps(s)
    print(f"{what}: droced --ctl list {listed}, telemetry the same: {tel == listed}")
    if listed != want or tel != want:
        fail(f"{what}: {listed} (telemetry {tel}), expected {want}", s.droced)


def ready(p):
    m = p.wait_line(r"^ready qpn=(\d+) addr=(0x[0-9a-f]+) rkey=(0x[0-9a-f]+) "
                    r"lkey=(0x[0-9a-f]+) qp=(0x[0-9a-f]+)")
    return {"qpn": int(m.group(1)), "addr": m.group(2), "rkey": m.group(3),
            "lkey": m.group(4), "qp": m.group(5)}


def pair(s):
    """A reader and a writer, connected, the writer's rounds running."""
    rd = s.spawn("reader", [s.app, s.sock, "reader"], stdin=subprocess.PIPE)
    wr = s.spawn("writer", [s.app, s.sock, "writer"], stdin=subprocess.PIPE)
    r, w = ready(rd), ready(wr)
    rd.p.stdin.write(f"{w['qpn']} {w['addr']} {w['rkey']}\n")
    rd.p.stdin.flush()
    wr.p.stdin.write(f"{r['qpn']} {r['addr']} {r['rkey']}\n")
    wr.p.stdin.flush()
    wr.wait_line(r"^writer: 100 rounds")
    return rd, wr, r


def finish(s, rd, wr):
    """The writer stopped; both say every round was right."""
    wr.p.stdin.write("stop\n")
    wr.p.stdin.flush()
    n = int(wr.wait_line(r"^writer: (\d+) rounds of WRITE \+ SEND \+ echo, every "
                         r"completion SUCCESS").group(1))
    m = int(rd.wait_line(r"^reader: (\d+) rounds, every WRITE's bytes in place").group(1))
    if wr.wait() != 0 or rd.wait() != 0 or m != n:
        fail(f"writer {n} rounds, reader {m} (exits {wr.p.returncode} {rd.p.returncode})",
             rd)
    print(f"writer and reader: {n} rounds, bytes and completions right")
    return n


def case_dq_traffic(s):
    rd, wr, _ = pair(s)
    expect_apps(s, {rd.p.pid: DQ_OBJS, wr.p.pid: DQ_OBJS}, "running")
    finish(s, rd, wr)
    s.wait_apps({})
    expect_apps(s, {}, "after")


def case_dq_hostile(s):
    rd, wr, r = pair(s)
    h = s.spawn("hostile", [s.app, s.sock, "hostile", r["lkey"], r["qp"]],
                stdin=subprocess.PIPE)
    h.wait_line(r"^hostile: attach of another's QP: No such file or directory$")
    h.wait_line(r"^hostile: 7 QP_REQ_ERR in slot order, 1 CQ_ERR$")
    states = h.wait_line(r"^hostile: QP states:(.*)$").group(1).split()
    print(f"hostile: its QPs' states {states} (6: ERR)")
    if states != ["6"] * 8:
        fail(f"hostile's QP states {states}", h)
    expect_apps(s, {rd.p.pid: DQ_OBJS, wr.p.pid: DQ_OBJS, h.p.pid: HOSTILE_OBJS},
                "after the garbage")
    # the writer's traffic goes on: a progress line after the attack
    wr.wait_line(r"^writer: \d+ rounds$", since=wr.mark())
    n = finish(s, rd, wr)
    h.p.stdin.write("\n")
    h.p.stdin.flush()
    if h.wait() != 0:
        fail("hostile's exit", h)
    if s.droced.p.poll() is not None:
        fail("droced died", s.droced)
    s.wait_apps({})
    expect_apps(s, {}, "after")
    print(f"droced alive; {n} rounds of the others unchanged by the garbage")


CASES = {"dq_traffic": case_dq_traffic, "dq_hostile": case_dq_hostile}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        raise SystemExit(__doc__)
    if os.environ.get("DROCE_NO_HUGE") == "1":
        print("droced needs hugepages (an EAL primary of shared configuration)")
        return 77
    use_lsan_supp()
    s = Setup(sys.argv[2], sys.argv[3])
    try:
        s.start_droced()
        CASES[sys.argv[1]](s)
    finally:
        s.cleanup()
    print(f"dq {sys.argv[1]}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
