#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Debian's UCX 1.13 (ucx-utils) on droce, through the drop-in
libibverbs.so.1 and usertools/droce-run (its device tree: /sys/class/infiniband,
/dev/infiniband).

  dropin_ucx.py --run DROCE_RUN --lib DIR info
      droce on net_af_packet at a veth end in a network namespace, on the
      address of the kernel's end (198.18.8.1): the device tree droce-run
      and the drop-in give (node_type, node_guid as ibv_devinfo prints it,
      port state, link_layer Ethernet, gids/0 the IPv4-mapped address,
      gid_attrs/types/0 "RoCE v2", gid_attrs/ndevs/0 and device/net the
      veth, /dev/infiniband/droce_verbs0 a character device); `ucx_info -d`
      lists memory domain droce0 with transports rc_verbs and ud_verbs on
      device droce0:1; with --no-sysfs (no tree) it lists no droce0.
  dropin_ucx.py --run DROCE_RUN --lib DIR uct_rc|uct_ud
      ucx_perftest at the transport level between two processes on droce
      over net_af_packet on a veth pair (namespaces this script creates and
      deletes; TCP exchange over 198.18.8.1/2, droce on 198.18.5.1/2):
      rc_verbs put_bw (zcopy, 4 KiB) and am_lat; ud_verbs am_lat and am_bw
      (UD has no RDMA).
  dropin_ucx.py --run DROCE_RUN --lib DIR ucp_rc|ucp_ud
      the same at the protocol level with UCX_TLS=rc_verbs,ud_verbs (UCX's
      RC needs UD for its wireup; no TCP or shared memory to fall back to):
      tag_lat, tag_bw (64 KiB: rendezvous, RDMA READ), stream_bw, each
      endpoint's configuration (UCX_LOG_LEVEL=info, "ep_cfg") on
      rc_verbs/droce0:1 only; ucp_ud: tag_lat and tag_bw (4 KiB) with
      UCX_TLS=ud_verbs, on ud_verbs/droce0:1 only.
  dropin_ucx.py --run DROCE_RUN --lib DIR --droced DROCED ucp_droced
      ucp_rc's three with both sides applications of one droced (net_ring,
      droced's loopback; TCP exchange on 127.0.0.1), UCX's defaults (its
      memory pools System V hugepage segments); droced empty after.
  dropin_ucx.py --run DROCE_RUN --lib DIR --droced DROCED ucp_regions
      ucp_droced's tag_lat and tag_bw with both sides plain processes on
      droced's queue regions (DROCE_QUEUES=region; each maps its region, the
      memfd "droce-dq", while it runs): UCX's RC QPs ask for 5 SGEs a send
      (UCX_IB_TX_MIN_SGE), its UD wireup reads a receive's sl; droced
      empty after.
  dropin_ucx.py --run DROCE_RUN --lib DIR --droced DROCED --prog MPI_PINGPONG mpi_droced
      mpi's two ranks as applications of one droced (mpirun in a network
      namespace of its own, loopback only); droced empty after.
  dropin_ucx.py --run DROCE_RUN --lib DIR --prog MPI_PINGPONG mpi
      test/dropin/mpi_pingpong.c (built with Open MPI's mpicc; "missing"
      when there is none: a failure) as two ranks of `mpirun -np 1
      droce-run ... : -np 1 droce-run ...` (one droce-run per rank, each its
      own droce) on net_af_packet at the two ends of a veth pair, both in
      one network namespace this script creates with mpirun (whose PMIx
      server the ranks reach on its loopback), Open MPI's UCX pml (--mca pml ucx, btl self,
      UCX_TLS=rc_verbs,ud_verbs): exit 0, rank 0's "ok 200 x 4096 bytes"
      (every byte checked both ways), and every UCX endpoint on
      rc_verbs/droce0:1.
Each pair: both exit 0, the client's "Final:" row counts exactly the
iterations asked and a latency or bandwidth above zero.  ucx_perftest
checks no data (it has no option to): the bytes are checked by droce's own
tests.  droce runs in run-to-completion mode (UCX polls its CQs, which runs
droce's engine); EAL with --no-huge and --no-pci.  Needs root (namespaces).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dropin_test import EAL, Veth, check, failures, stop  # noqa: E402
from droced_util import droced_apps, droced_start, droced_stop  # noqa: E402

TIMEOUT = float(os.environ.get("DROPIN_TIMEOUT", "40"))
PORT = 13337
# Final: iterations, latency 50%ile/average/overall (us), bandwidth
# average/overall (MB/s), message rate average/overall.  ucx_perftest
# prints "Final:" and its figures in two printf calls, and UCX's logger
# (UCX_LOG_LEVEL=info, to stdout) may write a whole line of another
# thread's between them.
FINAL_RE = re.compile(r"^Final:\s+(?:\[[^\n]*\bUCX\s+[A-Z]+\b[^\n]*\n\s*)*"
                      r"(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", re.M)
EP_CFG_RE = re.compile(r"ep_cfg\[\d+\]: (.*)$", re.M)


class Droced:
    """Both sides applications of one droced (net_ring; its engine on
    lcore 1): their connection droced's loopback, the TCP exchange on
    127.0.0.1.  The Veth's stand-in for droce_env and in_ns."""

    def __init__(self, droced, tmp):
        self.droced = droced
        self.daemon = droced_start(droced, tmp)
        self.sock = self.daemon[1]
        self.server_addr = "127.0.0.1"

    def close(self):
        droced_stop(self.daemon)


def droce_env(nets, side, ip=None):
    """droce on side's veth end, on its own core, run-to-completion; on
    droced, only the core (EAL's secondary)."""
    if isinstance(nets, Droced):
        return dict(os.environ, DROCE_ARGS=f"-l {side} --no-pci --log-level=lib.eal:error")
    eal = EAL + ["-l", str(side), f"--file-prefix=ucx{os.getpid()}{side}",
                 f"--vdev=net_af_packet0,iface={nets.ifs[side]}"]
    return dict(os.environ, DROCE_ARGS=" ".join(
        eal + ["--", f"--droce-ipv4={ip or f'198.18.5.{side + 1}'}/24"]))


def in_ns(a, nets, side, argv, extra=()):
    if isinstance(nets, Droced):
        return [a.run, "--lib", a.lib, "--daemon", nets.sock] + list(extra) + ["--"] + argv
    return ["ip", "netns", "exec", nets.ns[side], a.run, "--lib", a.lib] + list(extra) + \
        ["--"] + argv


def case_info(a, nets):
    case = "device tree, ucx_info -d"
    tree = "/sys/class/infiniband/droce0"
    show = ("ibv_devinfo | grep node_guid; cd " + tree + " && for f in node_type node_guid "
            "ports/1/state ports/1/link_layer ports/1/gids/0 ports/1/gid_attrs/types/0 "
            "ports/1/gid_attrs/ndevs/0 device/numa_node; do echo \"$f=$(cat $f)\"; done; "
            "echo net=$(ls device/net); stat -c dev=%F /dev/infiniband/droce_verbs0")
    env = droce_env(nets, 0, nets.server_addr)
    p = subprocess.run(in_ns(a, nets, 0, ["sh", "-c", show]), env=env, capture_output=True,
                       text=True, timeout=TIMEOUT)
    got = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
    guid = re.search(r"node_guid:\s+(\S+)", p.stdout)
    want = {"node_type": "1: CA", "ports/1/state": "4: ACTIVE",
            "ports/1/link_layer": "Ethernet",
            "ports/1/gids/0": "0000:0000:0000:0000:0000:ffff:c612:0801",
            "ports/1/gid_attrs/types/0": "RoCE v2",
            "ports/1/gid_attrs/ndevs/0": nets.ifs[0], "device/numa_node": "-1",
            "net": nets.ifs[0], "dev": "character special file",
            "node_guid": guid.group(1) if guid else "(ibv_devinfo printed none)"}
    bad = {k: got.get(k) for k in want if got.get(k) != want[k]}
    ok = check(case, p.returncode == 0 and not bad,
               f"exit {p.returncode}, differing: {bad}, expected {want}: {p.stderr[-300:]}")
    for extra, listed in (((), True), (("--no-sysfs",), False)):
        p = subprocess.run(in_ns(a, nets, 0, ["ucx_info", "-d"], extra), env=env,
                           capture_output=True, text=True, timeout=TIMEOUT)
        md = p.stdout.split("# Memory domain: droce0\n")
        tls = re.findall(r"^#\s+Transport: (\S+)\n#\s+Device: (\S+)$",
                         re.split(r"^# (?:Memory domain|Connection manager): ", md[1],
                                  flags=re.M)[0] if len(md) > 1 else "", re.M)
        if listed:
            ok &= check(case, p.returncode == 0 and
                        tls == [("rc_verbs", "droce0:1"), ("ud_verbs", "droce0:1")],
                        f"ucx_info -d: exit {p.returncode}, droce0's transports {tls}")
        else:
            ok &= check(case, p.returncode == 0 and len(md) == 1,
                        f"ucx_info -d with --no-sysfs: exit {p.returncode}, "
                        f"droce0 listed {len(md) > 1}")
    if ok:
        print(f"ok - {case}: RoCE v2 GID on {nets.ifs[0]}, droce0 with rc_verbs and ud_verbs "
              "(none without the tree)", flush=True)


def region_mapped(pid):
    """Whether process pid maps a queue region (lib/dq's memfd "droce-dq")."""
    try:
        with open(f"/proc/{pid}/maps") as f:
            return "/memfd:droce-dq" in f.read()
    except OSError:
        return False


def perftest_pair(a, tmp, nets, tag, args, env=None, regions=None):
    """ucx_perftest args on both sides (the server first, until it waits);
    (exit statuses, outputs).  regions: a set the sides seen mapping a
    queue region while they ran are added to."""
    procs, files = [], []
    try:
        for side in (0, 1):
            out = open(os.path.join(tmp, f"{tag}.{side}.out"), "w+")
            files.append(out)
            argv = ["stdbuf", "-oL", "ucx_perftest", "-p", str(PORT)] + args + \
                ([nets.server_addr] if side == 1 else [])
            procs.append(subprocess.Popen(in_ns(a, nets, side, argv),
                                          env=dict(droce_env(nets, side), **(env or {})),
                                          stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, cwd=tmp))
            deadline = time.monotonic() + 15
            while side == 0 and time.monotonic() < deadline and procs[0].poll() is None:
                out.seek(0)
                if "Waiting for connection" in out.read():
                    break
                time.sleep(0.05)
        for p in procs:
            deadline = time.monotonic() + TIMEOUT
            while p.poll() is None and time.monotonic() < deadline:
                if regions is not None:
                    regions.update(i for i, q in enumerate(procs) if region_mapped(q.pid))
                time.sleep(0.02)
    finally:
        for p in procs:
            stop(p)
    outs = []
    for f in files:
        f.seek(0)
        outs.append(f.read())
        f.close()
    return [p.returncode for p in procs], outs


def case_perftest(a, tmp, nets, tag, test, size, iters, kind, uct=None, tls=None,
                  extra=(), regions=None):
    """uct: (transport, device) for the transport level; tls: UCX_TLS for
    the protocol level, whose endpoints must all be on tls' transports on
    droce0:1; kind: "lat" or "bw", the figure that must be above zero."""
    args = ["-t", test, "-s", str(size), "-n", str(iters)] + list(extra)
    env = None
    if uct is not None:
        args += ["-x", uct, "-d", "droce0:1"]
        case = f"ucx_perftest -x {uct} -t {test} -s {size}"
    else:
        env = {"UCX_TLS": tls, "UCX_NET_DEVICES": "droce0:1", "UCX_LOG_LEVEL": "info"}
        case = f"ucx_perftest -t {test} -s {size} (UCX_TLS={tls})"
    rcs, outs = perftest_pair(a, tmp, nets, tag, args, env, regions)
    if regions is not None:
        case += " on queue regions"
        if not check(case, regions == {0, 1}, f"sides seen mapping a region: {regions}"):
            return
    ok = True
    for side, name in ((0, "server"), (1, "client")):
        ok &= check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {outs[side][-400:]}")
    final = FINAL_RE.findall(outs[1])
    ok = ok and check(case, len(final) == 1,
                     f"client: Final rows {final}: {outs[1][-600:]!r}")
    if not ok:
        return
    n, lat, bw = int(final[0][0]), float(final[0][2]), float(final[0][5])
    ok &= check(case, n == iters, f"{n} iterations, expected {iters}")
    figure = lat if kind == "lat" else bw
    ok &= check(case, figure > 0, f"{kind} {figure}")
    if tls is not None:
        lanes = EP_CFG_RE.findall(outs[1]) + EP_CFG_RE.findall(outs[0])
        allowed = {f"{t}/droce0:1" for t in tls.split(",")}
        used = {m for cfg in lanes for m in re.findall(r"\(([^)]*)\)", cfg)}
        ok &= check(case, lanes != [] and used <= allowed,
                    f"endpoint configurations {lanes}, expected only {sorted(allowed)}")
    if ok:
        what = f"{lat:.1f} us average" if kind == "lat" else f"{bw:.2f} MB/s"
        lanes = f", endpoints on {', '.join(sorted(used))}" if tls is not None else ""
        print(f"ok - {case}: {n} iterations, {what}{lanes}", flush=True)


def mpirun(ns, ranks, tmp):
    """mpirun of ranks in network namespace ns, Open MPI's UCX pml on
    droce0 (rc_verbs, ud_verbs): its CompletedProcess ("timeout" as the
    exit status after TIMEOUT)."""
    argv = ["ip", "netns", "exec", ns, "mpirun", "--allow-run-as-root", "--oversubscribe",
            "--mca", "pml", "ucx", "--mca", "btl", "self", "--mca", "osc", "^ucx",
            "-x", "UCX_TLS=rc_verbs,ud_verbs", "-x", "UCX_NET_DEVICES=droce0:1",
            "-x", "UCX_LOG_LEVEL=info"] + ranks
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(argv, "timeout", str(e.stdout or ""), "")


def mpi_result(case, p):
    """mpirun's exit 0, rank 0's "ok 200 x 4096 bytes" and every UCX
    endpoint on rc_verbs/droce0:1."""
    out = p.stdout + p.stderr
    lanes = EP_CFG_RE.findall(out)
    used = {m for cfg in lanes for m in re.findall(r"\(([^)]*)\)", cfg)}
    ok = check(case, p.returncode == 0 and re.search(r"^ok 200 x 4096 bytes", out, re.M),
               f"exit {p.returncode}: {out[-600:]}")
    ok = ok and check(case, lanes != [] and used == {"rc_verbs/droce0:1"},
                      f"endpoint configurations {lanes}")
    if ok:
        line = re.search(r"^ok 200 x 4096 bytes.*$", out, re.M).group(0)
        print(f"ok - {case}: {line}, endpoints on rc_verbs/droce0:1", flush=True)


def case_mpi(a, tmp):
    case = "mpirun -np 2, Open MPI's UCX pml on droce"
    if not check(case, a.prog not in (None, "missing") and os.path.exists(a.prog),
                 f"no mpi_pingpong ({a.prog}): Open MPI's mpicc (libopenmpi-dev) missing"):
        return
    # one network namespace holding both ends of a veth pair (no address
    # on either: the kernel passes nothing between them) and mpirun, whose
    # PMIx server the ranks reach on its loopback
    ns, ifs = f"ucxm{os.getpid() % 100000}", [f"vum{os.getpid() % 100000}{s}" for s in "ab"]
    subprocess.run(["ip", "netns", "add", ns], check=True)
    # DPDK's net_af_packet joins PACKET_FANOUT group (pid ^ ifindex) & 0xffff,
    # one namespace-wide: two ranks (pids a few apart) on consecutive
    # ifindexes can meet in one group (EINVAL).  Indexes 0x4000 apart cannot.
    idx = 0x1000 | (os.getpid() & 0xfff)
    subprocess.run(["ip", "-n", ns, "link", "add", ifs[0], "index", str(idx), "type", "veth",
                    "peer", "name", ifs[1], "index", str(idx ^ 0x4000)], check=True)
    for i in ["lo"] + ifs:
        subprocess.run(["ip", "-n", ns, "link", "set", i, "up"], check=True)
    ranks = []
    for side in (0, 1):
        args = EAL + ["-l", str(side), f"--file-prefix=ucxmpi{os.getpid()}{side}",
                      f"--vdev=net_af_packet0,iface={ifs[side]}",
                      "--", f"--droce-ipv4=198.18.5.{side + 1}/24"]
        ranks += ([":"] if side else []) + ["-np", "1", a.run, "--lib", a.lib, "--args",
                                            " ".join(args), "--", a.prog, "200", "4096"]
    try:
        p = mpirun(ns, ranks, tmp)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
    mpi_result(case, p)


def case_mpi_droced(a, tmp):
    """mpi_pingpong's two ranks as applications of one droced (net_ring,
    droced's loopback), mpirun and the ranks in a network namespace of
    their own (loopback only) for mpirun's PMIx server; as case_mpi."""
    case = "mpirun -np 2, Open MPI's UCX pml on droced"
    if not check(case, a.prog not in (None, "missing") and os.path.exists(a.prog),
                 f"no mpi_pingpong ({a.prog}): Open MPI's mpicc (libopenmpi-dev) missing"):
        return
    ns = f"ucxd{os.getpid() % 100000}"
    nets = Droced(a.droced, tmp)
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        ranks = []
        for side in (0, 1):
            ranks += ([":"] if side else []) + [
                "-np", "1", a.run, "--lib", a.lib, "--daemon", nets.sock, "--args",
                f"-l {side} --no-pci --log-level=lib.eal:error", "--", a.prog, "200", "4096"]
        p = mpirun(ns, ranks, tmp)
        left = droced_apps(a.droced, nets.sock)
    finally:
        subprocess.run(["ip", "netns", "del", ns], check=False)
        nets.close()
    if check(case, left == "", f"droced lists applications after: {left}"):
        mpi_result(case, p)


def ucp_droced(a):
    """The protocol level with both ucx_perftests applications of one
    droced: UCX's memory pools are System V hugepage segments (its "huge"
    allocation) that droced attaches; droced lists no application after."""
    with tempfile.TemporaryDirectory(prefix="dropin_ucx.") as tmp:
        nets = Droced(a.droced, tmp)
        try:
            rc = "rc_verbs,ud_verbs"
            case_perftest(a, tmp, nets, "d0", "tag_lat", 8, 500, "lat", tls=rc)
            case_perftest(a, tmp, nets, "d1", "tag_bw", 65536, 100, "bw", tls=rc)
            case_perftest(a, tmp, nets, "d2", "stream_bw", 4096, 200, "bw", tls=rc)
            left = droced_apps(a.droced, nets.sock)
            if check("droced", left == "", f"applications left: {left}"):
                print("ok - droced: no application left", flush=True)
        finally:
            nets.close()
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def ucp_regions(a):
    """ucp_droced's tag_lat and tag_bw with both ucx_perftests plain
    processes on droced's queue regions, each seen mapping its region."""
    os.environ["DROCE_QUEUES"] = "region"
    with tempfile.TemporaryDirectory(prefix="dropin_ucx.") as tmp:
        nets = Droced(a.droced, tmp)
        try:
            rc = "rc_verbs,ud_verbs"
            case_perftest(a, tmp, nets, "r0", "tag_lat", 8, 200, "lat", tls=rc, regions=set())
            case_perftest(a, tmp, nets, "r1", "tag_bw", 65536, 50, "bw", tls=rc, regions=set())
            left = droced_apps(a.droced, nets.sock)
            if check("droced", left == "", f"applications left: {left}"):
                print("ok - droced: no application left", flush=True)
        finally:
            nets.close()
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--prog")
    ap.add_argument("--droced")
    ap.add_argument("what", choices=("info", "uct_rc", "uct_ud", "ucp_rc", "ucp_ud", "mpi",
                                     "ucp_droced", "ucp_regions", "mpi_droced"))
    a = ap.parse_args()
    a.run, a.lib = os.path.abspath(a.run), os.path.abspath(a.lib)
    if a.prog not in (None, "missing"):
        a.prog = os.path.abspath(a.prog)
    if a.what in ("mpi", "mpi_droced"):
        with tempfile.TemporaryDirectory(prefix="dropin_ucx.") as tmp:
            (case_mpi if a.what == "mpi" else case_mpi_droced)(a, tmp)
        for f in failures:
            print("FAIL:", f)
        return 1 if failures else 0
    if a.what == "ucp_droced":
        return ucp_droced(a)
    if a.what == "ucp_regions":
        return ucp_regions(a)
    nets = Veth(f"u{os.getpid() % 100000}")
    try:
        with tempfile.TemporaryDirectory(prefix="dropin_ucx.") as tmp:
            if a.what == "info":
                case_info(a, nets)
            elif a.what == "uct_rc":
                case_perftest(a, tmp, nets, "t0", "put_bw", 4096, 2000, "bw", uct="rc_verbs",
                              extra=["-D", "zcopy"])
                case_perftest(a, tmp, nets, "t1", "am_lat", 8, 1000, "lat", uct="rc_verbs")
            elif a.what == "uct_ud":
                # (UD has no RDMA: active messages only, of one path MTU)
                case_perftest(a, tmp, nets, "t2", "am_lat", 8, 1000, "lat", uct="ud_verbs")
                case_perftest(a, tmp, nets, "t3", "am_bw", 512, 2000, "bw", uct="ud_verbs",
                              extra=["-D", "bcopy"])
            elif a.what == "ucp_rc":
                rc = "rc_verbs,ud_verbs"
                case_perftest(a, tmp, nets, "p0", "tag_lat", 8, 1000, "lat", tls=rc)
                case_perftest(a, tmp, nets, "p1", "tag_bw", 65536, 200, "bw", tls=rc)
                case_perftest(a, tmp, nets, "p2", "stream_bw", 4096, 500, "bw", tls=rc)
            else:
                case_perftest(a, tmp, nets, "p3", "tag_lat", 8, 1000, "lat", tls="ud_verbs")
                case_perftest(a, tmp, nets, "p4", "tag_bw", 4096, 500, "bw", tls="ud_verbs")
    finally:
        nets.close()
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
