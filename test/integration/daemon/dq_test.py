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
              send ring and its receive ring, an unknown opcode, 17 SGEs,
              the reader's lkey, a wrapping SGE, an lkey of nobody, an
              inline length of 4096 (after a well-formed inline WRITE of
              200 bytes on that QP: its completion and bytes right), an
              inline descriptor of 3 entries with 1 published, 200 inline
              bytes on a QP that asked for none (its room: its SGEs' 64
              bytes), a BIND_MW of a window
              not its own, SGEs beyond a descriptor's 4 (6 on a QP granted
              5, 16 whose 3 entries are published but 1, the reader's
              lkey in the 7th SGE of 8, a receive of 12 SGEs with 2 of its
              3 entries published, a receive of 3 SGEs in an SRQ granted
              2, a wrapping 7th SGE of 8), a completion ring's consumer
              index ahead of droced's; and attaches the reader's QP handle
              (ENOENT), and names context indices droced never gave
              (PD, CQ, an attach, a context's close: 5 of 5 EINVAL,
              nothing made).  It gets exactly 13 QP_REQ_ERR (one for each of
              its slots 0-14 and 16 but the three SENDs whose lkeys are
              not its own), 1 SRQ_ERR (slot 15) and 1 CQ_ERR in its
              event ring, a LOC_PROT_ERR completion for each of those
              three SENDs (slots 4, 6, 13: the engine's, as in process),
              all 17 of its QPs in ERR, dq_bad exactly 15 in
              the list and telemetry (the reader's and writer's 0); the
              writer goes on past the attack, both finish with every
              byte and completion right; droced is alive and lists no
              application after

and dq_app, a program of droce.h, on lib/verbs' queue-region provider
(DROCE_QUEUES=region, DROCE_DAEMON; no EAL option at all):

  dq_verbs     a server and a client: rounds of the client's 4 KiB WRITE
               and 256 B SEND (imm = round), the server's check of every
               byte, its WRITE into the client's buffer and SEND back, the
               client's check of both and its READ of what it wrote; every
               completion's status, opcode, wr_id, byte_len, qp_num; each
               process maps no hugepage (smaps, at start, after opening
               its objects, at the end); droced --ctl list shows each with
               exactly its objects (its 64 KiB buffer its own pages, mem),
               dq_bad 0; none after
  dq_events    the same, the server waiting on a completion channel
               (req_notify_cq, get_cq_event, ack_cq_events) each time
  dq_inline    a server and a client whose QPs get max_inline_data 256
               (257: EINVAL), rounds of the client's inline WRITE (two
               SGEs) and SEND with immediate of 0 to 256 bytes from its
               stack, lkey 0, overwritten right after the post; the
               server's check of every byte, its empty answer; an inline
               SEND of 257 bytes EINVAL at the post; droced --ctl list:
               dq_bad 0
  dq_srq       a server whose QP receives from an SRQ (max_wr 32, 16 posted,
               limit armed at 8) and a client: rounds of 256 B SENDs with
               immediate, checked byte for byte, answered; the server
               reposts nothing until 9 came, then exactly one
               SRQ_LIMIT_REACHED naming its SRQ, the limit 0 after; a burst
               of 17 SENDs: 16 received, the 17th RNR_RETRY_EXC_ERR (no
               other event); a receive with the client's key in an SRQ of
               the server's own and a SEND into it from a QP on that SRQ
               connected to itself: the receive LOC_PROT_ERR, the QP in
               ERR (the SEND flushed), QP_LAST_WQE_REACHED naming it and
               no other event (no SRQ_ERR), dq_bad 0;
               a second pair's 50 rounds right after, droced alive
  dq_mw        a server binds a type-1 window (droce_bind_mw) and a type-2
               one (a BIND_MW work request) over two chunks of its buffer,
               both completing BIND_MW, and SENDs their rkeys; the client
               WRITEs through both, READs through the type-2 one, SENDs
               with invalidation of its rkey; the server checks every byte
               and the invalidated rkey, unbinds the type-1 window; the
               client's WRITE through the invalidated rkey REM_ACCESS_ERR;
               droced --ctl list: dq_bad 0, windows freed
  dq_sge       (plain processes only) the device's max_sge 16; QPs and an
               SRQ whose max_wr times their SGEs' ring entries exceed the
               ring (4096) EINVAL, 1024 WRs of 16 SGEs each way fit; a SEND
               of 6 SGEs on a QP granted 5 and of 17 EINVAL at the post;
               SENDs of 5 and 16 SGEs (pieces of 7 + 13k bytes, 256 apart)
               into an SRQ's receives of as many (lengths reversed) and
               back into a QP's receives, a WRITE gathered from 16, a READ
               scattered into 16: every piece byte for byte, every gap
               untouched, every completion's status, opcode, wr_id,
               byte_len and immediate; droced --ctl list: dq_bad 0
  dq_regs      a server and a client, each with one CQ more and 24 MRs
               more of its own pages (a page each; droced's table of its
               objects grows while one MR is registered): each registered,
               distinct keys; then 20 rounds as dq_verbs, every byte and
               completion right; droced --ctl list: exactly those objects
               (25 MRs, 2 CQs, mem 25 pieces); droced alive
  dq_pingpong  1,000 round trips of 8-byte SENDs between two plain processes,
               then between two secondaries of the same droced (EAL
               options, DROCE_QUEUES=shared), the same program: both finish;
               the secondaries map hugepages (the check sees them), the
               plain processes none; droced's main thread woke fewer
               than 100 times (telemetry's /droced/dq: its holds of the
               poller) and the poller ran at least 1,000 rounds on the
               engine's lcore during the plain processes' 1,000 round
               trips (their work requests and completions cross the
               lcore only: the main thread slept and woke 5,606 times,
               its voluntary context switches, when it polled the
               regions); the figures printed

and dq_ctxs, a program of droce.h with two contexts in one plain process:

  dq_ctxs      while droced's link is down, a BIND_MW of a window of nobody's
               on context A's QP: exactly one QP_REQ_ERR naming it on A's
               async_fd (poll(2) readable, then not), none on B's (not
               readable, droce_get_async_event EAGAIN on its O_NONBLOCK
               fd); the same with B and A swapped; then droced's memif
               peer starts and each context gets exactly one PORT_ACTIVE
               of port 1 on its own fd; A's objects freed while B's
               QP_REQ_ERR is unacked (no wait), B's after its ack

Usage: dq_test.py CASE DROCED DQ_CLIENT [DQ_APP [PEER_APP]].  Needs hugepages (droced is an
EAL primary with shared configuration; exit 77 when DROCE_NO_HUGE=1).
"""
import json
import os
import re
import socket
import subprocess
import sys
import time

from daemon_test import GIDS, Setup, fail, runtime_dir, use_lsan_supp

DQ_OBJS = (1, 1, 1, 1, 0, 0, 1, 65536, 0)	# pd mr cq qp buf buf_bytes mem mem_bytes dq_bad
HOSTILE_OBJS = (1, 1, 2, 17, 0, 0, 1, 65536, 15)
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
    h.wait_line(r"^hostile: forged context indices: 5 of 5 EINVAL$")
    h.wait_line(r"^hostile: an inline WRITE of 200 bytes in 3 entries: completion and bytes "
                r"right$")
    h.wait_line(r"^hostile: 13 QP_REQ_ERR, one per slot, 1 SRQ_ERR, 1 CQ_ERR$")
    h.wait_line(r"^hostile: LOC_PROT_ERR completions of slots 4 6 13, 0 other$")
    states = h.wait_line(r"^hostile: QP states:(.*)$").group(1).split()
    print(f"hostile: its QPs' states {states} (6: ERR)")
    if states != ["6"] * 17:
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
    # a persistent region of its own pages only with the memfd droced maps
    # them from (kept for a reattach): any other fd EFAULT
    for what in ("no fd", "another memfd", "its memfd opened read-only", "a pipe"):
        h.wait_line(rf"^hostile: PERSIST_MR with {what}: Bad address$")
    h.wait_line(r"^hostile: PERSIST_MR with its memfd: Success$")
    h.wait_line(r"^hostile: its release: Success$")
    print("hostile: PERSIST_MR with 4 forged fds EFAULT, with its memfd made and released")
    if s.droced.p.poll() is not None:
        fail("droced died", s.droced)
    s.wait_apps({})
    expect_apps(s, {}, "after")
    print(f"droced alive; {n} rounds of the others unchanged by the garbage")


APP_OBJS = (1, 1, 1, 1, 0, 0, 1, 65536, 0)	# dq_app: its buffer its own pages


def dq_apps(s, modes, plain=True):
    """Two dq_apps (plain processes on regions, or droced's secondaries),
    their "ready" lines exchanged."""
    procs = []
    for name, args in modes:
        if plain:
            os.environ["DROCE_DAEMON"] = s.sock
            os.environ["DROCE_QUEUES"] = "region"
            # on CPU 0, as EAL pins the secondaries (-l 0): the same
            # placement for both, off droced's engine lcore (CPU 1)
            argv = ["taskset", "-c", "0", s.dq_app, *args]
        else:
            argv = [s.dq_app, "-l", "0", "--no-pci", "--log-level=lib.eal:error", "--",
                    f"--droce-daemon={s.sock}", *args]
            os.environ["DROCE_QUEUES"] = "shared"	# not the default
        try:
            procs.append(s.spawn(name, argv, stdin=subprocess.PIPE))
        finally:
            os.environ.pop("DROCE_DAEMON", None)
            os.environ.pop("DROCE_QUEUES", None)
    rdy = [p.wait_line(r"^ready qpn=(\d+) addr=(0x[0-9a-f]+) rkey=(0x[0-9a-f]+)")
           for p in procs]
    for p, other in zip(procs, reversed(rdy)):
        p.p.stdin.write(f"{other.group(1)} {other.group(2)} {other.group(3)}\n")
        p.p.stdin.flush()
    return procs


def wait_or_dump(s, p, pattern, other, timeout=120):
    """p's line matching pattern; if p says it stalled instead (no
    completion for 5 s), droced's telemetry (counters, QPs) and the other
    process's output are printed before the failure."""
    m = p.wait_line(rf"(?:{pattern})|^dq_app: stalled", timeout=timeout)
    if not m.group(0).startswith("dq_app: stalled"):
        return p.wait_line(pattern, timeout=1)
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as t:
        t.connect(f"{runtime_dir(s.prefix)}/dpdk_telemetry.v2")
        t.recv(4096)
        t.send(b"/droce/stats")
        print("/droce/stats", t.recv(1 << 16).decode())
        t.send(b"/droce/qp/list")
        qpns = json.loads(t.recv(1 << 16))["/droce/qp/list"]
        for q in qpns:
            t.send(f"/droce/qp/info,{q}".encode())
            print(f"/droce/qp/info,{q}", t.recv(1 << 16).decode())
    print(f"--- {other.name}:\n{other.output()}")
    # droced's threads from /proc, 3 times a second apart, before gdb
    # stops them: does its main thread wake (its poll's timeout), does
    # the stall end on its own?
    for _ in range(3):
        for tid in sorted(os.listdir(f"/proc/{s.droced.p.pid}/task")):
            with open(f"/proc/{s.droced.p.pid}/task/{tid}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()
            try:
                with open(f"/proc/{s.droced.p.pid}/task/{tid}/syscall") as f:
                    sc = f.read().split()[:1]
            except OSError:
                sc = ["?"]
            print(f"droced task {tid}: state {st[0]} utime {st[11]} stime {st[12]} "
                  f"syscall {sc}")
        print(f"{p.name}: {p.output().splitlines()[-1]}; {other.name}: "
              f"{other.output().splitlines()[-1]}")
        time.sleep(1)
    ex = ["thread apply all bt"]
    for a in ("'droced_apps.c'::dmn.apps", "'droced_apps.c'::dmn.apps->next"):
        ex += [f"p {a}->pid", f"p {a}->dq->qp[0]", f"p {a}->dq->cq[0]",
               f"p {a}->dq->bell_rd", f"p {a}->dq->stalled",
               f"p *dq_sq({a}->dq->base, &{a}->dq->g, 0)",
               f"p *dq_rq({a}->dq->base, &{a}->dq->g, 0)",
               f"p *dq_bell({a}->dq->base)",
               f"p *(struct tp_lc_qp *)((struct tp_qp *){a}->dq->qp[0].qp)->lc"]
    for _ in range(2):
        try:
            bt = subprocess.run(["gdb", "-p", str(s.droced.p.pid), "-batch"] +
                                [x for e in ex for x in ("-ex", e)],
                                capture_output=True, text=True, timeout=60)
            print(f"--- droced:\n{bt.stdout[-16000:]}\n{bt.stderr[-2000:]}")
        except (OSError, subprocess.TimeoutExpired) as e:
            print(f"--- droced: gdb: {e}")
        time.sleep(1)
    return p.wait_line(pattern, timeout=10)


def hugepage_maps(p):
    """The three counts a dq_app printed."""
    return [int(p.wait_line(rf"^maps{w}: hugepage mappings (\d+)$").group(1))
            for w in ("", " after open", " at the end")]


def release(s, procs):
    for p in procs:
        p.p.stdin.write("\n")
        p.p.stdin.flush()
    for p in procs:
        if p.wait() != 0:
            fail(f"{p.name}'s exit {p.p.returncode}", p)
    s.wait_apps({})
    expect_apps(s, {}, "after")


def verbs_pair(s, events):
    rounds = 300
    srv, cli = dq_apps(s, (("server", ["server", str(rounds)] + (["events"] if events else [])),
                           ("client", ["client", str(rounds)])))
    wait_or_dump(s, cli, rf"^client: {rounds} rounds of WRITE \+ SEND \+ answer \+ READ, "
                 r"every byte and completion right$", srv)
    srv.wait_line(rf"^server: {rounds} rounds, every byte and completion right"
                  + (", waited for on a completion channel$" if events else "$"), timeout=60)
    for p in (srv, cli):
        maps = hugepage_maps(p)
        print(f"{p.name}: hugepage mappings at start, after open, at the end: {maps}")
        if maps != [0, 0, 0]:
            fail(f"{p.name} maps hugepages: {maps}", p)
    expect_apps(s, {srv.p.pid: APP_OBJS, cli.p.pid: APP_OBJS}, "both done, holding")
    release(s, (srv, cli))
    print(f"server and client: {rounds} rounds, every byte and completion right")


def case_dq_verbs(s):
    verbs_pair(s, False)


def case_dq_events(s):
    verbs_pair(s, True)


def case_dq_inline(s):
    rounds = 160
    srv, cli = dq_apps(s, (("server", ["server", str(rounds), "inline"]),
                           ("client", ["client", str(rounds), "inline"])))
    for p in (srv, cli):
        p.wait_line(r"^max_inline_data 256$")
    wait_or_dump(s, cli, rf"^client: {rounds} rounds of inline WRITE \+ SEND \+ answer, every "
                 r"completion right$", srv)
    srv.wait_line(rf"^server: {rounds} rounds of inline data, every byte and completion right$",
                  timeout=60)
    expect_apps(s, {srv.p.pid: APP_OBJS, cli.p.pid: APP_OBJS}, "both done, holding")
    release(s, (srv, cli))
    print(f"server and client: {rounds} rounds of inline WRITE and SEND (0-256 B), every byte "
          "and completion right")


def case_dq_srq(s):
    rounds = 100
    srv, cli = dq_apps(s, (("server", ["server", str(rounds), "srq"]),
                           ("client", ["client", str(rounds), "srq"])))
    wait_or_dump(s, cli, rf"^client: {rounds} rounds through the server's SRQ, every byte and "
                 r"completion right; the 17th SEND of a burst RNR_RETRY_EXC_ERR$", srv)
    srv.wait_line(rf"^server: {rounds} rounds through an SRQ, every byte and completion right, "
                  r"1 SRQ_LIMIT_REACHED; 16 receives of the burst$", timeout=60)
    srv.wait_line(r"^server: a foreign key in an SRQ's receive: LOC_PROT_ERR, the SEND into it "
                  r"ended, its QP in ERR, QP_LAST_WQE_REACHED, no SRQ_ERR$", timeout=30)
    expect_apps(s, {srv.p.pid: APP_OBJS, cli.p.pid: APP_OBJS}, "a foreign key's receive ended")
    # droced and other applications carry on: a new pair's rounds
    s2, c2 = dq_apps(s, (("server2", ["server", "50"]), ("client2", ["client", "50"])))
    wait_or_dump(s, c2, r"^client: 50 rounds of WRITE \+ SEND \+ answer \+ READ, "
                 r"every byte and completion right$", s2)
    expect_apps(s, {srv.p.pid: APP_OBJS, cli.p.pid: APP_OBJS, s2.p.pid: APP_OBJS,
                    c2.p.pid: APP_OBJS}, "a second pair done")
    release(s, (srv, cli, s2, c2))
    print(f"an SRQ on a queue region: {rounds} rounds, its limit event, RNR when empty, "
          "a foreign key's receive LOC_PROT_ERR (dq_bad 0); another pair's 50 rounds after")


def case_dq_mw(s):
    srv, cli = dq_apps(s, (("server", ["server", "1", "mw"]), ("client", ["client", "1", "mw"])))
    wait_or_dump(s, cli, r"^client: WRITEs and a READ through both windows right; through the "
                 r"invalidated rkey REM_ACCESS_ERR$", srv)
    srv.wait_line(r"^server: windows of both types bound \(BIND_MW completions\), written "
                  r"through, the type-2 one invalidated by the peer, the type-1 one unbound$",
                  timeout=60)
    expect_apps(s, {srv.p.pid: APP_OBJS, cli.p.pid: APP_OBJS}, "both done, windows freed")
    release(s, (srv, cli))
    print("memory windows on queue regions: both types bound, used, invalidated, unbound")


def case_dq_sge(s):
    srv, cli = dq_apps(s, (("server", ["server", "1", "sge"]), ("client", ["client", "1", "sge"])))
    wait_or_dump(s, cli, r"^client: SENDs of 5 and 16 SGEs both ways, a WRITE gathered from 16 "
                 r"and a READ scattered into 16, every byte right$", srv)
    srv.wait_line(r"^server: SENDs of 5 and 16 SGEs into its SRQ's receives of as many and "
                  r"back, the client's WRITE gathered from 16, every byte right$", timeout=60)
    expect_apps(s, {srv.p.pid: APP_OBJS, cli.p.pid: APP_OBJS}, "both done")
    release(s, (srv, cli))
    print("work requests of 5 and 16 SGEs on queue regions: SEND, receive, SRQ receive, "
          "WRITE, READ, every byte right; dq_bad 0")


def case_dq_regs(s):
    rounds = 20
    srv, cli = dq_apps(s, (("server", ["server", str(rounds), "regs"]),
                           ("client", ["client", str(rounds), "regs"])))
    for p in (srv, cli):
        p.wait_line(r"^24 MRs more registered$")
    wait_or_dump(s, cli, rf"^client: {rounds} rounds of WRITE \+ SEND \+ answer \+ READ, "
                 r"every byte and completion right$", srv)
    srv.wait_line(rf"^server: {rounds} rounds, every byte and completion right$", timeout=60)
    many = (1, 25, 2, 1, 0, 0, 25, 65536 + 24 * 4096, 0)
    expect_apps(s, {srv.p.pid: many, cli.p.pid: many}, "both done, holding")
    release(s, (srv, cli))
    print(f"24 MRs more each (droced's tables grown while one was registered), then "
          f"{rounds} rounds right; droced alive")


def main_thread_wakes(s):
    """How many times droced's main thread has woken from poll(2): its
    holds of the poller (telemetry's /droced/dq), and its voluntary
    context switches (for the log: a hold's wait for a lcore off its CPU
    sleeps too)."""
    pid = s.droced.p.pid
    with open(f"/proc/{pid}/task/{pid}/status") as f:
        vol = int(re.search(r"^voluntary_ctxt_switches:\s+(\d+)$", f.read(), re.M).group(1))
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as t:
        t.connect(f"{runtime_dir(s.prefix)}/dpdk_telemetry.v2")
        t.recv(4096)
        t.send(b"/droced/dq")
        dq = json.loads(t.recv(1 << 16))["/droced/dq"]
    if not isinstance(dq, dict):
        fail(f"telemetry /droced/dq: {dq}", s.droced)
    return dq["main_holds"], dq["lcore_rounds"], vol


def case_dq_pingpong(s):
    n, size, got = 1000, 8, {}
    for plain in (True, False):
        what = "plain processes on queue regions" if plain else "secondaries"
        pong, ping = dq_apps(s, (("pong", ["pong", str(n), str(size)]),
                                 ("ping", ["ping", str(n), str(size)])), plain)
        before = main_thread_wakes(s)
        m = wait_or_dump(s, ping, rf"^ping: {n} round trips of {size} B: median ([0-9.]+) us, "
                         r"mean ([0-9.]+) us, p99 ([0-9.]+) us$", pong)
        wakes, rounds, vol = (b - a for a, b in zip(before, main_thread_wakes(s)))
        print(f"{what}: droced's main thread woke {wakes} times (voluntary context switches "
              f"{vol}) during the {n} round trips, its poller ran {rounds} rounds")
        if plain and (wakes >= n // 10 or rounds < n):
            fail(f"droced's main thread woke {wakes} times in {n} round trips of plain "
                 f"processes, the poller ran {rounds} rounds", s.droced)
        pong.wait_line(rf"^pong: {n} round trips$")
        maps = hugepage_maps(ping)
        if (maps[1] == 0) != plain:
            fail(f"{what}: hugepage mappings {maps}", ping)
        got[what] = (float(m.group(1)), float(m.group(2)), float(m.group(3)))
        print(f"{what}: {n} round trips of {size} B SENDs: median {m.group(1)} us, "
              f"mean {m.group(2)} us, p99 {m.group(3)} us; hugepage mappings {maps}")
        release(s, (pong, ping))
    print("round trips (median, mean, p99 us):", got)


def case_dq_ctxs(s):
    """dq_ctxs (a plain process, two contexts) while droced's link is down
    (no memif peer yet): each context's QP_REQ_ERR on its own async_fd
    only; then the peer starts (daemon_app's peer mode), the link comes up
    and each context gets its PORT_ACTIVE."""
    os.environ["DROCE_DAEMON"] = s.sock
    try:
        p = s.spawn("ctxs", ["taskset", "-c", "0", s.dq_app])
    finally:
        os.environ.pop("DROCE_DAEMON", None)
    m = p.wait_line(r"^ctxs: qp events (\S+)$")
    if m.group(1) != "ok":
        fail("a context's QP event on the other's async_fd, or none", p)
    memif = f"net_memif0,role=client,socket={s.tmp}/memif.sock,socket-abstract=no"
    s.peer = s.spawn("peer", [s.peer_app, "-l", "0", "--no-pci", f"--vdev={memif}",
                              "--", f"--droce-ipv4={GIDS[1]}", "peer", s.peer_sock])
    s.peer.wait_line(r"^peer: ready")
    rc = p.wait(timeout=60)
    print("\n".join(ln for ln in p.lines if not ln.startswith("droce")))
    if rc != 0 or not all(any(ln == want for ln in p.lines) for want in (
            "ctxs: A freed while B's event is unacked", "ctxs: ok")):
        fail("each context's events on its own async_fd", p)
    print("two contexts of one plain process: each its own QP_REQ_ERR, each a PORT_ACTIVE")


CASES = {"dq_traffic": case_dq_traffic, "dq_hostile": case_dq_hostile,
         "dq_verbs": case_dq_verbs, "dq_events": case_dq_events,
         "dq_pingpong": case_dq_pingpong, "dq_inline": case_dq_inline, "dq_srq": case_dq_srq,
         "dq_mw": case_dq_mw, "dq_sge": case_dq_sge, "dq_regs": case_dq_regs,
         "dq_ctxs": case_dq_ctxs}


def main():
    if len(sys.argv) not in (4, 5, 6) or sys.argv[1] not in CASES:
        raise SystemExit(__doc__)
    if os.environ.get("DROCE_NO_HUGE") == "1":
        print("droced needs hugepages (an EAL primary of shared configuration)")
        return 77
    use_lsan_supp()
    s = Setup(sys.argv[2], sys.argv[3])
    s.dq_app = sys.argv[4] if len(sys.argv) >= 5 else None
    s.peer_app = sys.argv[5] if len(sys.argv) == 6 else None
    try:
        s.start_droced()
        CASES[sys.argv[1]](s)
    finally:
        s.cleanup()
    print(f"dq {sys.argv[1]}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
