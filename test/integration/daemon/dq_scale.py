#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Many plain-process applications at once on one droced's queue regions
(app/droced/README.md "Queue regions"): dq_start (DROCE_QUEUES=region,
DROCE_DAEMON, no EAL option) opens the device, a PD, an MR of its own
64 KiB, a CQ and an RC QP, takes the QP to RTS and holds them.

  scale N BATCH STARTS WAVES NOFILE
      droced started with a soft limit of NOFILE open files (0: as this
      script's).  STARTS applications one after the other first (each
      reaches RTS, exits 0; the median and p99 of each step printed), then
      WAVES times N at once,
      started BATCH at a time (the next batch once every one of the last
      reached RTS): every one reaches RTS; droced --ctl list shows each of
      the N with exactly one PD, MR, CQ, QP and its 64 KiB of own pages
      (telemetry's /droced/apps the same for those it shows); droced's
      RSS, PSS, fds and mappings before and after (per application
      printed); then the first and the last application connect their QPs
      to each other and each WRITEs 4 KiB of its own pattern into the
      other's buffer: both completions SUCCESS, both buffers hold exactly
      the other's bytes; then all exit 0 and droced is back where it
      started: no application listed, and exactly as after the first
      application (which grows droced's heap once): the engine's QP list,
      its open fds (hugepage segment files aside: the heap keeps what it
      grew into) and its mappings of memfds; droced's heap's allocations
      (count and bytes, telemetry /eal/heap_info) after every wave exactly
      those after the first (the engine keeps the QP slabs it grew into),
      and after STARTS exactly those before them.

Usage: dq_scale.py scale N BATCH STARTS WAVES NOFILE DROCED DQ_START.  Needs hugepages
(droced is an EAL primary; exit 77 when DROCE_NO_HUGE=1).
"""
import json
import os
import re
import resource
import socket
import subprocess
import sys
import time

from daemon_test import Setup, fail, runtime_dir, use_lsan_supp

APP_OBJS = (1, 1, 1, 1, 0, 0, 1, 65536, 0)	# pd mr cq qp buf buf_bytes mem mem_bytes dq_bad
ROW = (r"pid (\d+): pd (\d+) mr (\d+) cq (\d+) qp (\d+) buf (\d+) buf_bytes (\d+) "
       r"mem (\d+) mem_bytes (\d+) mw \d+ dq_bad (\d+)")
STEPS = ("droce_init", "open", "pd", "mr", "cq", "qp", "to_init", "to_rtr", "to_rts", "total")


def listed(s):
    out = subprocess.run([s.droced_bin, "--ctl", s.sock, "list"], text=True,
                         capture_output=True, timeout=60)
    if out.returncode != 0:
        fail(f"droced --ctl list: {out.stderr}")
    rows = {int(m.group(1)): tuple(int(x) for x in m.groups()[1:])
            for m in re.finditer(ROW, out.stdout)}
    if len(rows) != int(re.search(r"applications: (\d+)", out.stdout).group(1)):
        fail(f"droced --ctl list: {out.stdout[:2000]}")
    return rows


def telemetry(s, cmd):
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as t:
        t.connect(f"{runtime_dir(s.prefix)}/dpdk_telemetry.v2")
        t.recv(4096)
        t.send(cmd.encode())
        return json.loads(t.recv(1 << 20))[cmd.split(",")[0]]


def droced_mem(pid):
    """droced's RSS, PSS and its shared-memory part (kB), open fds, mappings."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        kb = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+):\s+(\d+) kB", f.read(),
                                                             re.M)}
    with open(f"/proc/{pid}/maps") as f:
        maps = sum(1 for _ in f)
    return {"rss_kb": kb["Rss"], "pss_kb": kb["Pss"], "pss_shmem_kb": kb.get("Pss_Shmem", 0),
            "fds": len(os.listdir(f"/proc/{pid}/fd")), "maps": maps}


def fds(pid):
    """What droced's fds are (socket inode numbers left out), but for its
    hugepage files: its heap keeps the segments it grew into."""
    out = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            pass
    return sorted(re.sub(r"\[\d+\]", "", x) for x in out if not x.startswith("/dev/hugepages/"))


def memfd_maps(pid):
    """droced's mappings of applications' memfds (regions, registered pages)."""
    with open(f"/proc/{pid}/maps") as f:
        return sum("/memfd:" in line for line in f)


def baseline(s):
    """What droced must come back to: its fds, its mappings of memfds, its
    heap's allocations (count and bytes), the engine's QPs."""
    heap = telemetry(s, "/eal/heap_info,0")
    return (fds(s.droced.p.pid), memfd_maps(s.droced.p.pid),
            (heap["Alloc_count"], heap["Alloc_size"]), sorted(telemetry(s, "/droce/qp/list")))


def wait_baseline(s, base, what, heap=None, timeout=60):
    """droced lists no application and is back to base, its heap's
    allocations to heap if given, else to base's (its reaps and the last
    --ctl connection's close may still be under way)."""
    end = time.monotonic() + timeout
    base = base[:2] + (heap or base[2],) + base[3:]
    while True:
        apps, now = listed(s), baseline(s)
        if not apps and now == base:
            print(f"{what}: no application; droced's fds {len(now[0])} (hugepage files "
                  f"aside), memfd mappings {now[1]}, heap allocations {now[2][0]} of "
                  f"{now[2][1]} B, engine QPs {now[3]}: exactly as at the start")
            return
        if time.monotonic() > end:
            extra = sorted(set(now[0]) - set(base[0]))[:20]
            gone = sorted(set(base[0]) - set(now[0]))[:20]
            fail(f"{what}: {len(apps)} applications listed; fds {len(now[0])} (new {extra}, "
                 f"gone {gone}), memfd mappings {now[1]}, heap {now[2]}, QPs {now[3][:20]}; "
                 f"at the start fds {len(base[0])}, memfd mappings {base[1]}, heap {base[2]}, "
                 f"QPs {base[3][:20]}", s.droced)
        time.sleep(0.1)


def gdb_bt(pid):
    try:
        out = subprocess.run(["gdb", "-p", str(pid), "-batch", "-ex", "thread apply all bt"],
                             capture_output=True, text=True, timeout=60)
        return out.stdout[-8000:] + out.stderr[-1000:]
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"gdb: {e}"


def wait_exit(s, p, timeout=60):
    """p's exit status; if it has not exited in time, its threads' stacks
    and droced's before the failure."""
    try:
        return p.p.wait(timeout)
    except subprocess.TimeoutExpired:
        print(f"--- {p.name} (pid {p.p.pid}) still running after {timeout} s:\n"
              f"{gdb_bt(p.p.pid)}\n--- droced:\n{gdb_bt(s.droced.p.pid)}")
        fail(f"{p.name}: still running after {timeout} s", p)


def started(p):
    """The step times (us) of a dq_start, and its "rts" line's fields."""
    m = p.wait_line(r"^start us: droce_init (\d+) open (\d+) pd (\d+) mr (\d+) cq (\d+) "
                    r"qp (\d+) to_init (\d+) to_rtr (\d+) to_rts (\d+) total (\d+)$", timeout=120)
    r = p.wait_line(r"^rts qpn=(\d+) addr=(0x[0-9a-f]+) rkey=(0x[0-9a-f]+)$", timeout=10)
    return [int(x) for x in m.groups()], (int(r.group(1)), r.group(2), r.group(3))


def spawn(s, name):
    return s.spawn(name, [s.app], stdin=subprocess.PIPE)


def say(p, line):
    p.p.stdin.write(line + "\n")
    p.p.stdin.flush()


def stats(times):
    """Median and p99 of each step."""
    out = {}
    for k, step in enumerate(STEPS):
        v = sorted(t[k] for t in times)
        out[step] = (v[len(v) // 2], v[min(len(v) - 1, len(v) * 99 // 100)])
    return out


def print_stats(what, times):
    st = stats(times)
    print(f"{what}, {len(times)} starts, us median/p99: " +
          ", ".join(f"{k} {m}/{p}" for k, (m, p) in st.items()))


def sequential(s, n):
    times = []
    for i in range(n):
        p = spawn(s, f"seq{i}")
        times.append(started(p)[0])
        say(p, "exit")
        if wait_exit(s, p) != 0:
            fail(f"seq{i}'s exit {p.p.returncode}", p)
        s.procs.remove(p)
        if (i + 1) % 50 == 0:
            print(f"one at a time: {i + 1} started and exited", flush=True)
    print_stats("one at a time", times)
    return times


def write_pair(a, b, ra, rb):
    """a and b connected, each WRITEs into the other; both check."""
    say(a, f"connect {rb[0]} {rb[1]} {rb[2]}")
    say(b, f"connect {ra[0]} {ra[1]} {ra[2]}")
    for p in (a, b):
        p.wait_line(r"^connected$", timeout=30)
    for p, seed in ((a, 11), (b, 22)):
        say(p, f"write {seed}")
        p.wait_line(rf"^written {seed}$", timeout=30)
    for p, seed in ((a, 22), (b, 11)):
        say(p, f"check {seed}")
        if p.wait_line(rf"^check {seed} (ok|bad)$", timeout=30).group(1) != "ok":
            fail(f"{p.name}'s buffer does not hold the other's WRITE", p)
    print(f"{a.name} and {b.name}: a 4 KiB WRITE each way, completions SUCCESS, "
          "every byte in place")


def wave(s, k, n, batch, base, mem0):
    """n applications at once, batch at a time; checked, two of them WRITE
    to each other, all exit; droced back to base but for its heap, whose
    allocations are returned."""
    apps, times, rts = [], [], []
    t0 = time.monotonic()
    for first in range(0, n, batch):
        group = [spawn(s, f"w{k}app{i}") for i in range(first, min(n, first + batch))]
        for p in group:
            t, r = started(p)
            times.append(t)
            rts.append(r)
        apps += group
        if len(apps) % 200 < batch:
            print(f"wave {k}: {len(apps)} at RTS after {time.monotonic() - t0:.1f} s",
                  flush=True)
    took = time.monotonic() - t0
    print(f"wave {k}: {n} applications at RTS, {batch} at a time, in {took:.2f} s")
    print_stats(f"wave {k}: {n} at once, {batch} at a time", times)
    mem1 = droced_mem(s.droced.p.pid)
    per = {key: (mem1[key] - mem0[key]) / n for key in mem0}
    print(f"wave {k}: droced with {n} applications: {mem1}; per application: " +
          ", ".join(f"{key} {v:.1f}" for key, v in per.items()))
    rows = listed(s)
    want = {p.p.pid: APP_OBJS for p in apps}
    if rows != want:
        bad = {key: v for key, v in rows.items() if want.get(key) != v}
        fail(f"droced --ctl list: {len(rows)} applications, expected {n}; differing {bad}; "
             f"missing {[p for p in want if p not in rows][:10]}", s.droced)
    tel = telemetry(s, "/droced/apps")
    keys = ("pd", "mr", "cq", "qp", "buf", "buf_bytes", "mem", "mem_bytes", "dq_bad")
    tel = {int(p): tuple(v[key] for key in keys) for p, v in tel.items()}
    if not tel or any(want.get(p) != v for p, v in tel.items()):
        fail(f"telemetry /droced/apps {tel}")
    print(f"droced --ctl list: all {n} with exactly one PD, MR, CQ, QP and 64 KiB of own "
          f"pages; telemetry the same for the {len(tel)} it shows")
    # (telemetry's lists stop at RTE_TEL_MAX_ARRAY_ENTRIES, 512)
    qps = telemetry(s, "/droce/qp/list")
    if len(qps) != min(512, len(base[3]) + n):
        fail(f"the engine's QPs: {len(qps)}, expected {len(base[3])} + {n} (at most 512 listed)")
    write_pair(apps[0], apps[-1], rts[0], rts[-1])
    t0 = time.monotonic()
    for p in apps:
        say(p, "exit")
    for p in apps:
        if wait_exit(s, p) != 0:
            fail(f"{p.name}'s exit {p.p.returncode}", p)
        s.procs.remove(p)
    print(f"wave {k}: {n} applications exited 0 in {time.monotonic() - t0:.2f} s")
    end = time.monotonic() + 60
    while listed(s) and time.monotonic() < end:
        time.sleep(0.1)
    heap = baseline(s)[2]
    wait_baseline(s, base, f"wave {k}: after {n} applications", heap)
    print(f"wave {k}: droced after: {droced_mem(s.droced.p.pid)}")
    return heap


def case_scale(s, n, batch, starts, waves):
    os.environ["DROCE_DAEMON"] = s.sock
    os.environ["DROCE_QUEUES"] = "region"
    # one application first: droced's heap grows for the first objects
    # (a hugepage segment, its fd and mappings) and keeps that; and a
    # first telemetry connection (a thread whose stack glibc keeps)
    sequential(s, 1)
    listed(s)
    telemetry(s, "/droced/apps")
    base = baseline(s)
    mem0 = droced_mem(s.droced.p.pid)
    print(f"droced at the start: {mem0}, heap allocations {base[2]}, engine QPs {base[3]}")
    if starts:
        sequential(s, starts)
        wait_baseline(s, base, f"after {starts} starts one at a time")
    # droced's engine keeps the QP slabs it grew into (lib/transport
    # tp_slab.c) until the device closes: the first wave's heap is the
    # mark; a second wave of as many must come back to exactly it
    heap = None
    for k in range(waves):
        after = wave(s, k, n, batch, base, mem0)
        if heap is not None and after != heap:
            fail(f"wave {k}: droced's heap allocations {after}, after wave 0 {heap}")
        heap = heap or after
    if waves > 1:
        print(f"droced's heap allocations after each of {waves} waves: {heap}, the same")


def main():
    if len(sys.argv) != 9 or sys.argv[1] != "scale":
        raise SystemExit(__doc__)
    if os.environ.get("DROCE_NO_HUGE") == "1":
        print("droced needs hugepages (an EAL primary of shared configuration)")
        return 77
    use_lsan_supp()
    # two pipes per application in this process
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    n, batch, starts, waves, nofile = (int(x) for x in sys.argv[2:7])
    s = Setup(sys.argv[7], sys.argv[8])
    try:
        # droced started with a soft fd limit of nofile (as systemd's
        # default of 1024): it must raise its own
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, hard))
        try:
            s.start_droced()
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        case_scale(s, n, batch, starts, waves)
    finally:
        os.environ.pop("DROCE_DAEMON", None)
        os.environ.pop("DROCE_QUEUES", None)
        s.cleanup()
    print("dq_scale: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
