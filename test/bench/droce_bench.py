#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce vs raw DPDK forwarding and the protocol ceiling over the same PMD,
in the same run (usertools/droce-bench runs this; see BENCHMARKS.md "droce
vs raw forwarding").

Per PMD (net_memif between two processes, net_af_packet on a veth pair
between two network namespaces; net_ring in one process: raw only):
  sweep   test/bench/raw_fwd at each frame size over burst x ring sizes
          (RAW_BURSTS x RAW_RINGS): the best is the raw baseline from then on;
          the ceiling (below) is swept the same way, on its own;
  raw     raw_fwd at that best setting: frame rate of the frame sizes droce's
          messages produce, and the round trip of the 8-byte WRITE's frame;
  ceiling raw_fwd -w: the same frames as RoCEv2 WRITEs, the sender copying
          the payload in and computing the ICRC, the receiver verifying it and
          copying the payload out: what any RoCEv2 implementation can reach;
  droce   app/droce-perf, unchanged: write_bw -s 64, write_bw -s 65536 (path
          MTU 1024 and, with --droce-mtu=4200, 4096), write_lat -s 8 and every
          other test (read_bw, read_lat, send_bw, send_lat, atomic_bw,
          atomic_lat), and test/bench/lc_bench --qps: 64 B WRITEs round-robin
          over 10,000 RC QPs through the public API (memif, one process).
Each droce row gets the raw and ceiling figures it is divided by:
  bandwidth: droce's average MB/s / (Mpps of its data frame x payload bytes
             per frame), or for 8-byte atomics message rate / Mpps of the
             64-byte WRITE's frame;
  latency:   droce's t_typical / raw one-way time (median round trip / 2) for
             write_lat and send_lat (perftest reports half round trips), / the
             full raw round trip for read_lat and atomic_lat (client round
             trips); the ceiling's round trip does the per-byte work too.
Every row is measured as raw, ceiling, droce in turn, run after run (--runs N:
the median of N).  --dropin DROCE_RUN instead compares Debian's unmodified
perftest on the drop-in libibverbs with droce-perf (DROPIN_TESTS, in turn,
over net_af_packet: perftest refuses a port that is not yet ACTIVE, as a
memif port is until its peer comes).  Each measurement records the CPU time other processes
used while it ran (the machine's busy time minus the bench's own, in
cores; the 1-minute load average would count the bench's own polling
processes): a figure taken while others used more than --load-max cores
(default 0.3) is marked "loaded: not a result" (raw forwarding loses far more than droce under load,
so such a ratio flatters droce).  Addresses: 198.18.12.1/2 (veth kernel
ends, TCP side channel), 198.18.13.1/2 (droce).  Only processes this script
started are stopped, by their own handle; the namespaces are deleted at exit.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# RoCEv2 over IPv4 frame overhead: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4
ROCE_OVH = 58
RETH = 16
FRAME_W64 = ROCE_OVH + RETH + 64        # write_bw -s 64: one WRITE_ONLY frame
FRAME_W8 = ROCE_OVH + RETH + 8          # write_lat -s 8
FRAME_MTU = {1024: ROCE_OVH + 1024, 4096: ROCE_OVH + 4096}   # a WRITE_MIDDLE frame
# the payload each rate frame carries (the ceiling's per-byte work)
CEILING_PAYLOAD = {FRAME_W64: 64, FRAME_MTU[1024]: 1024, FRAME_MTU[4096]: 4096}

DASHES = "-" * 87
NUM = r"(\d+(?:\.\d+)?)"
BW_ROW = re.compile(r"^ (\d+)\s+(\d+)\s+" + r"\s+".join([NUM] * 3) + r"\s*$")
LAT_ROW = re.compile(r"^ (\d+)\s+(\d+)\s+" + r"\s+".join([NUM] * 7) + r"\s*$")
RAW_RE = re.compile(r"^raw_fwd: (.*)$", re.M)
# droce-perf's MB/sec is perftest's, 2^20 bytes; raw and ceiling goodput is in
# 10^6 bytes per second (Mpps x payload bytes): droce's is converted
MIB = 1048576 / 1e6

verbose = False


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def raw_fields(out):
    """The key=value pairs of raw_fwd's result lines, merged."""
    d = {}
    for m in RAW_RE.finditer(out):
        for kv in m.group(1).split():
            if "=" in kv:
                k, v = kv.split("=", 1)
                d[k] = v
    return d


def listening(pid, port):
    for name in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{name}") as f:
                next(f)
                for line in f:
                    x = line.split()
                    if x[3] == "0A" and int(x[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except (OSError, StopIteration):
            pass
    return False


def stop(p):
    if p is not None and p.poll() is None:
        p.kill()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


class Pmd:
    """How each side's processes are started for one PMD."""

    def __init__(self, kind, tmp, tag):
        self.kind, self.tmp, self.tag = kind, tmp, tag
        self.ns = []
        self.n = 0
        self.link_mbps = 0
        # what the sweep's ring size sets: a vdev argument or descriptors (raw_fwd -r)
        self.ring_knob = {"memif": "rsize", "af_packet": "framecnt"}.get(kind, "desc")
        if kind == "af_packet":
            self.ns = [f"dba{tag}", f"dbb{tag}"]
            self.ifs = [f"vba{tag}", f"vbb{tag}"]
            run = lambda *a: subprocess.run(a, check=True)
            for n in self.ns:
                run("ip", "netns", "add", n)
            run("ip", "link", "add", self.ifs[0], "type", "veth", "peer", "name", self.ifs[1])
            for i in range(2):
                run("ip", "link", "set", self.ifs[i], "netns", self.ns[i])
                run("ip", "-n", self.ns[i], "link", "set", "lo", "up")
                run("ip", "-n", self.ns[i], "link", "set", self.ifs[i], "mtu", "4200", "up")
                run("ip", "-n", self.ns[i], "addr", "add", f"198.18.12.{i + 1}/24",
                    "dev", self.ifs[i])

    def close(self):
        for n in self.ns:
            subprocess.run(["ip", "netns", "del", n], check=False)

    @property
    def server_addr(self):
        return "198.18.12.1" if self.kind == "af_packet" else "127.0.0.1"

    def argv(self, binary, side, n, ring=0):
        """side 0 = server (memif server), 1 = client; n: the pair's number;
        ring: the ring size (0: the PMD's default)."""
        prefix = f"db{self.tag}x{n}{'sc'[side]}"
        eal = ["--no-pci", "-l", str(side % max(1, os.cpu_count() or 1)),
               f"--file-prefix={prefix}", "--log-level=lib.eal:error"] + no_huge()
        if self.kind == "memif":
            sock = os.path.join(self.tmp, f"m{n}.sock")
            role = "server" if side == 0 else "client"
            rsize = f",rsize={ring.bit_length() - 1}" if ring else ""
            eal.append(f"--vdev=net_memif0,role={role},socket={sock},socket-abstract=no,"
                       f"bsize=8192{rsize}")
            return [binary] + eal
        framecnt = f",framecnt={ring}" if ring else ""
        eal.append(f"--vdev=net_af_packet0,iface={self.ifs[side]},framesz=8192,blocksz=8192"
                   f"{framecnt}")
        return ["ip", "netns", "exec", self.ns[side], binary] + eal

    def pair_argv(self, binary, ring=0):
        """Both sides' argv, a new pair (memif socket, file prefixes)."""
        self.n += 1
        return self.argv(binary, 0, self.n, ring), self.argv(binary, 1, self.n, ring)


def run_two(srv, cli, ready, timeout):
    """Start srv, wait until ready(proc, out_path), run cli; (rc_s, rc_c, out_s, out_c, err)."""
    return run_two_env(srv, None, cli, None, ready, timeout)


def run_two_env(srv, srv_env, cli, cli_env, ready, timeout):
    """run_two with each side's environment (None: this one's)."""
    tmp = tempfile.mkdtemp(prefix="droce-bench-")
    paths = [os.path.join(tmp, n) for n in ("s.out", "c.out", "s.err", "c.err")]
    files = [open(p, "w") for p in paths]
    ps = pc = None
    try:
        ps = subprocess.Popen(srv, stdout=files[0], stderr=files[2], stdin=subprocess.DEVNULL,
                              env=srv_env)
        end = time.monotonic() + 30
        while not ready(ps, paths[0]):
            if ps.poll() is not None or time.monotonic() > end:
                return None
            time.sleep(0.02)
        pc = subprocess.Popen(cli, stdout=files[1], stderr=files[3], stdin=subprocess.DEVNULL,
                              env=cli_env)
        try:
            rc_c = pc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            rc_c = -1
        try:
            rc_s = ps.wait(timeout=10)
        except subprocess.TimeoutExpired:
            rc_s = -1
        outs = []
        for p in paths:
            with open(p, errors="replace") as f:
                outs.append(f.read())
        if verbose and (rc_s or rc_c):
            log(f"  server {srv}\n  client {cli}\n  rc {rc_s} {rc_c}\n{outs[2][-800:]}\n{outs[3][-800:]}")
        return rc_s, rc_c, outs[0], outs[1], outs[2] + outs[3]
    finally:
        stop(pc)
        stop(ps)
        for f in files:
            f.close()
        shutil.rmtree(tmp, ignore_errors=True)


def file_has(path, text):
    try:
        with open(path, errors="replace") as f:
            return text in f.read()
    except OSError:
        return False


# ---- raw and ceiling -----------------------------------------------------------

# The sweep: frames per rx/tx_burst x ring size (0: the PMD's default; memif
# rsize, af_packet framecnt, descriptors otherwise).  The best is kept.
RAW_BURSTS = (32, 128)
RAW_RINGS = (0, 4096)


def raw_mode_args(size, cfg, payload, extra):
    """raw_fwd's mode options: size, burst, ceiling work (-w payload)."""
    a = ["-s", str(size), "-b", str(cfg[0])] + list(extra)
    if cfg[1] and cfg[2] == "desc":
        a += ["-r", str(cfg[1])]
    if payload is not None:
        a += ["-w", str(payload)]
    return a


def raw_rate(pmd, raw, size, seconds, cfg=(32, 0), payload=None):
    """Delivered Mpps of size-byte frames, or None.  payload: the ceiling
    (raw_fwd -w: copy + ICRC at both ends)."""
    cfg = tuple(cfg) + (pmd.ring_knob,)
    mode = raw_mode_args(size, cfg, payload, ["-t", str(seconds)])
    if pmd.kind == "ring":
        p = subprocess.run([raw, "--no-pci", "-l", "0-1", f"--file-prefix=dbr{pmd.tag}",
                            "--log-level=lib.eal:error"] + no_huge() +
                           ["--", "ring-rate"] + mode,
                           capture_output=True, text=True, timeout=seconds + 60)
        d = raw_fields(p.stdout)
    else:
        s, c = pmd.pair_argv(raw, cfg[1])
        sink = raw_mode_args(size, cfg, payload, [])
        res = run_two(s + ["--", "sink"] + sink, c + ["--", "gen"] + mode,
                      lambda proc, out: file_has(out, "raw_fwd: ready"), seconds + 60)
        if res is None or res[0] != 0 or res[1] != 0:
            return None
        d = raw_fields(res[2])
    try:
        if int(d.get("icrc_bad", "0")) != 0:
            log(f"  raw_fwd -w {payload}: {d['icrc_bad']} frame(s) failed the ICRC")
            return None
        pmd.link_mbps = int(d.get("link_mbps", "0"))
        return float(d["mpps"]) if float(d["mpps"]) > 0 else None
    except (KeyError, ValueError):
        return None


def raw_rtt(pmd, raw, size, iters, cfg=(32, 0), payload=None):
    """Median round trip in usec, or None (payload: the ceiling's, as raw_rate)."""
    cfg = tuple(cfg) + (pmd.ring_knob,)
    mode = raw_mode_args(size, cfg, payload, ["-n", str(iters)])
    if pmd.kind == "ring":
        p = subprocess.run([raw, "--no-pci", "-l", "0-1", f"--file-prefix=dbr{pmd.tag}",
                            "--log-level=lib.eal:error"] + no_huge() +
                           ["--", "ring-ping"] + mode,
                           capture_output=True, text=True, timeout=120)
        d = raw_fields(p.stdout)
    else:
        s, c = pmd.pair_argv(raw, cfg[1])
        echo = raw_mode_args(size, cfg, payload, [])
        res = run_two(s + ["--", "echo"] + echo, c + ["--", "ping"] + mode,
                      lambda proc, out: file_has(out, "raw_fwd: ready"), 120)
        if res is None or res[1] != 0:
            return None
        d = raw_fields(res[3])
    try:
        return float(d["rtt_median_us"])
    except (KeyError, ValueError):
        return None


def sweep_best(pmd, raw, size, seconds, meter, payload):
    """(burst, ring) of the best rate of size-byte frames (payload: the ceiling's work)."""
    what = "raw" if payload is None else f"ceiling -w {payload}"
    top = None
    for burst in RAW_BURSTS:
        for ring in RAW_RINGS:
            v = meter.take(raw_rate, pmd, raw, size, seconds, (burst, ring), payload)
            log(f"  {pmd.kind}: sweep {what}, {size}-byte frames, burst {burst}, "
                f"ring {ring or 'default'}: {fmt(v.value, '.3f')} Mpps")
            if v.value is not None and (top is None or v.value > top[0]):
                top = (v.value, (burst, ring))
    return top[1] if top else (RAW_BURSTS[0], 0)


def raw_sweep(pmd, raw, sizes, seconds, meter):
    """
    {size: (burst, ring)}: the best raw rate of each frame size over the
    sweep, and {("ceiling", size): (burst, ring)} the best of the ceiling
    (its own sweep: with the per-byte work another setting may win, and a
    ceiling taken at raw's setting could fall below droce).  net_ring has
    no ceiling (raw only).
    """
    best = {}
    for size in sizes:
        best[size] = sweep_best(pmd, raw, size, seconds, meter, None)
        if pmd.kind != "ring":
            best[("ceiling", size)] = sweep_best(pmd, raw, size, seconds, meter,
                                                 CEILING_PAYLOAD[size])
    return best


def no_huge():
    return ["--no-huge", "-m", "512"] if os.environ.get("DROCE_NO_HUGE") == "1" else []


# ---- load ----------------------------------------------------------------------

def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def busy_ticks():
    """CPU time the whole machine spent busy (all CPUs, clock ticks)."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...: all but idle, iowait
    return sum(v[:8]) - v[3] - v[4]


def own_ticks(pid="self"):
    """CPU time of process pid and of the children it has waited for."""
    with open(f"/proc/{pid}/stat") as f:
        v = f.read().rsplit(")", 1)[1].split()
    # fields 14-17 of proc(5): utime stime cutime cstime (here from index 11)
    return sum(int(x) for x in v[11:15])


def others_cores(t0, b0, o0, t1, b1, o1, hz):
    """Cores used by other processes between two (time, machine busy, own) readings."""
    return max(0, (b1 - b0) - (o1 - o0)) / hz / max(t1 - t0, 1e-3)


class Sample:
    """One measured value and whether the machine was loaded around it."""

    def __init__(self, value, loaded):
        self.value, self.loaded = value, loaded


class Meter:
    """
    What other processes used of the CPUs while a measurement ran: the
    machine's busy time minus this process's and its (waited-for)
    children's, in cores.  The 1-minute load average cannot tell: on two
    cores the bench's own two polling processes keep it at 1 to 2.  A
    measurement during which others used more than load_max cores is
    marked loaded.
    """

    def __init__(self, load_max):
        self.load_max = load_max
        self.loads = []		# others' cores, one per measurement
        self.avgs = []		# the 1-minute load average, for the record
        self.taken = self.loaded = 0
        self.hz = os.sysconf("SC_CLK_TCK")

    def take(self, fn, *args):
        self.avgs.append(loadavg())
        t0, b0, o0 = time.monotonic(), busy_ticks(), own_ticks()
        v = fn(*args)
        t1, b1, o1 = time.monotonic(), busy_ticks(), own_ticks()
        others = others_cores(t0, b0, o0, t1, b1, o1, self.hz)
        self.loads.append(others)
        self.avgs.append(loadavg())
        hot = others > self.load_max
        self.taken += 1
        self.loaded += hot
        return Sample(v, hot)

    def line(self):
        if not self.loads:
            return "load: no measurement"
        verdict = (f"{self.loaded} of {self.taken} measurements above it: "
                   "those rows are marked \"loaded: not a result\"" if self.loaded else
                   f"all {self.taken} measurements below it")
        return (f"load: CPU used by other processes during each measurement "
                f"{min(self.loads):.2f} .. {max(self.loads):.2f} cores "
                f"(1-min load average, the bench's own processes included, "
                f"{min(self.avgs):.2f} .. {max(self.avgs):.2f}); "
                f"limit {self.load_max:g} cores: {verdict}")


# ---- droce-perf ----------------------------------------------------------------

def table_rows(out, row_re):
    lines = out.splitlines()
    rows = []
    on = False
    for line in lines:
        if line.startswith(" #bytes"):
            on = True
            continue
        if on and line == DASHES:
            break
        m = row_re.match(line) if on else None
        if m:
            rows.append([float(x) for x in m.groups()])
    return rows


def droce_perf(pmd, perf, test, args, extra=(), port=None, server_args=(), env=None):
    """droce-perf test between two processes: bw -> (MB/s avg, Mpps), lat -> t_typical.
    env: both sides' environment (None: this one's)."""
    s, c = pmd.pair_argv(perf)
    port = port or 20000 + (os.getpid() * 7 + pmd.n * 131) % 40000
    s += (["--", "--droce-ipv4=198.18.13.1/24"] + list(extra) + [test] + list(server_args) +
          ["-p", str(port)])
    c += (["--", "--droce-ipv4=198.18.13.2/24"] + list(extra) +
          [test] + list(args) + ["-p", str(port), pmd.server_addr])
    res = run_two_env(s, env, c, env, lambda proc, out: listening(proc.pid, port), 120)
    if res is None or res[0] != 0 or res[1] != 0:
        if res is not None:
            log(f"  droce-perf {test} {' '.join(args)}: exit {res[0]}/{res[1]}: "
                f"{res[4].strip().splitlines()[-1:] if res[4].strip() else ''}")
        return None
    return perf_result(test, res[3], res[2])


def perf_result(test, client_out, server_out=""):
    """From droce-perf's output: bw -> (MB/s avg, Mpps), lat -> t_typical."""
    if test.endswith("_bw"):
        rows = table_rows(client_out, BW_ROW)
        return (rows[0][3], rows[0][4]) if rows else None
    rows = table_rows(client_out, LAT_ROW) or table_rows(server_out, LAT_ROW)
    return rows[0][4] if rows else None


LC_RE = re.compile(r"^lc_bench: mode=qps qps=(\d+) .*mmsgps=(\S+) send_err=(\d+)", re.M)


def lc_qps(lc, tmp, qps=None, count=100000):
    """test/bench/lc_bench --memif --qps: (None, M msg/s over qps QPs, over 1 QP) or None."""
    qps = qps or QPS
    d = tempfile.mkdtemp(prefix="lc-", dir=tmp)
    try:
        p = subprocess.run([lc, "--memif", d, "--qps", str(qps), "--count", str(count)],
                           capture_output=True, text=True, timeout=600,
                           env=dict(os.environ))
    except subprocess.TimeoutExpired:
        log(f"  lc_bench --qps {qps}: timed out")
        return None
    finally:
        shutil.rmtree(d, ignore_errors=True)
    got = {int(m.group(1)): (float(m.group(2)), int(m.group(3))) for m in LC_RE.finditer(p.stdout)}
    if p.returncode != 0 or qps not in got or 1 not in got:
        log(f"  lc_bench --qps {qps}: exit {p.returncode}: {p.stderr.strip().splitlines()[-1:]}")
        return None
    if got[qps][1]:
        log(f"  lc_bench --qps {qps}: send_err {got[qps][1]} (frames dropped at droce's transmit side)")
    return None, got[qps][0], got[1][0]


# ---- callgrind ---------------------------------------------------------------

CG_COUNT = 20000
CG_LINE = "instructions per 64-byte WRITE (end to end, excluding payload copy and CRC): "
CG_ROW = re.compile(r"^\s*([\d,]+) \([^)]*\)\s+(?:\S*:)?([^\s:]+) \[")
CG_MEMCPY = re.compile(r"^_*(memcpy|memmove|mempcpy)(_\w+)?$")


def callgrind_inclusive(annotated):
    """(program total or None, {function: inclusive Ir}) from callgrind_annotate
    --inclusive=yes output."""
    total = None
    incl = {}
    for line in annotated.splitlines():
        if "PROGRAM TOTALS" in line:
            total = int(line.split()[0].replace(",", ""))
            continue
        m = CG_ROW.match(line)
        if m:
            incl.setdefault(m.group(2), int(m.group(1).replace(",", "")))
    return total, incl


def callgrind_crc_copy(incl):
    """The CRC (roce_crc32, or ISA-L's crc32_* where it is not seen) and libc's
    memcpy/memmove (the payload copies), each inclusive, together."""
    crc = incl.get("roce_crc32")
    if crc is None:
        crc = sum(v for k, v in incl.items() if k.startswith("crc32_"))
    return crc + sum(v for k, v in incl.items() if CG_MEMCPY.match(k))


def callgrind_count(annotated, count):
    """Instructions per message from callgrind_annotate --inclusive=yes output:
    the program total minus the CRC and the payload copies."""
    total, incl = callgrind_inclusive(annotated)
    if total is None:
        return None
    return round((total - callgrind_crc_copy(incl)) / count)


CG_LAT_COUNT = 20000
CG_LAT_LINE = "instructions per 8-byte write_lat round trip (both sides, excluding payload copy and CRC): "
CG_LAT_RAW = "raw forwarding of its two WRITE frames, the same way: "


def callgrind_lat_counts(annotated, count):
    """(droce, raw) instructions per round trip from callgrind_annotate
    --inclusive=yes output of a write_lat run collected in tpb_measure and
    tpb_measure_raw: each function's inclusive cost, droce's without the CRC
    and the copies (as callgrind_count), over count round trips."""
    _, incl = callgrind_inclusive(annotated)
    if "tpb_measure" not in incl or "tpb_measure_raw" not in incl:
        return None
    droce = incl["tpb_measure"] - callgrind_crc_copy(incl)
    return round(droce / count), round(incl["tpb_measure_raw"] / count)


def callgrind_annotated(args, what):
    """valgrind --tool=callgrind, collection toggled by args' --toggle-collect
    options (then the program and its arguments), without hugepages (valgrind
    and hugepage mappings); callgrind_annotate's inclusive text, or None
    after saying why."""
    tmp = tempfile.mkdtemp(prefix="droce-bench-cg-")
    out = os.path.join(tmp, "cg.out")
    try:
        env = dict(os.environ, DROCE_NO_HUGE="1")
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                            "--collect-atstart=no"] + args,
                           capture_output=True, text=True, timeout=900, env=env)
        if p.returncode != 0 or not os.path.exists(out):
            log(f"droce-bench: {what} under callgrind failed ({p.returncode}): "
                f"{[l for l in p.stderr.splitlines() if not l.startswith('==')][-8:]} "
                f"{p.stdout[-500:]!r}")
            return None
        a = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", out],
                           capture_output=True, text=True, timeout=300)
        return a.stdout if a.returncode == 0 else None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def callgrind_lat(tp_bench):
    """tp_bench --op write_lat under callgrind (collection in tpb_measure and
    tpb_measure_raw only): droce's instructions per round trip beside raw
    forwarding's of the same frames, and their ratio."""
    text = callgrind_annotated(
        ["--toggle-collect=tpb_measure", "--toggle-collect=tpb_measure_raw", tp_bench,
         "--op", "write_lat", "--size", "8", "--mtu", "1024", "--count", str(CG_LAT_COUNT),
         "--runs", "1", "--seed", "42"], "tp_bench write_lat")
    r = callgrind_lat_counts(text, CG_LAT_COUNT) if text is not None else None
    if r is None:
        log("droce-bench: callgrind_annotate gave no tpb_measure / tpb_measure_raw")
        return 1
    print(f"{CG_LAT_LINE}{r[0]}")
    print(f"{CG_LAT_RAW}{r[1]} (droce / raw: {r[0] / r[1]:.1f})")
    return 0


def callgrind(tp_bench):
    """Run tp_bench (64 B WRITEs, MTU 1024, one run, no baselines) under callgrind
    with collection on in tpb_measure only; print the one line."""
    text = callgrind_annotated(
        ["--toggle-collect=tpb_measure", tp_bench, "--size", "64", "--mtu", "1024",
         "--count", str(CG_COUNT), "--runs", "1", "--no-baseline", "--seed", "42"],
        "tp_bench")
    n = callgrind_count(text, CG_COUNT) if text is not None else None
    if n is None:
        log("droce-bench: callgrind_annotate gave no program total")
        return 1
    print(f"{CG_LINE}{n}")
    return 0


# ---- plots -------------------------------------------------------------------

PLOT_SIZES = [2 ** k for k in range(1, 24)]      # perftest -a: 2 B .. 8 MiB
PLOT_MTU = 1024
HIST_ROW = re.compile(r"^\d+, (\d+(?:\.\d+)?)$", re.M)


def write_frame(size):
    """(frame bytes, payload bytes) of the WRITE frame that carries most of a
    size-byte message at path MTU PLOT_MTU: ONLY up to the MTU, else MIDDLE."""
    if size <= PLOT_MTU:
        return ROCE_OVH + RETH + size + (-size & 3), size
    return FRAME_MTU[PLOT_MTU], PLOT_MTU


def perf_samples(pmd, perf, test, iters=10000):
    """Every latency sample of droce-perf TEST -s 8 -H (usec), or None."""
    s, c = pmd.pair_argv(perf)
    port = 20000 + (os.getpid() * 7 + pmd.n * 131) % 40000
    s += ["--", "--droce-ipv4=198.18.13.1/24", test, "-p", str(port)]
    c += ["--", "--droce-ipv4=198.18.13.2/24", test, "-s", "8", "-n", str(iters), "-H",
          "-p", str(port), pmd.server_addr]
    res = run_two(s, c, lambda proc, out: listening(proc.pid, port), 300)
    if res is None or res[0] != 0 or res[1] != 0:
        return None
    return [float(x) for x in HIST_ROW.findall(res[3])] or None


def perf_sweep(pmd, perf, seconds):
    """{size: MB/s (10^6 B)} of droce-perf write_bw at each of PLOT_SIZES
    (path MTU PLOT_MTU), one run of `seconds` per size (-D: perftest's -a
    runs every size for the same number of iterations, too few to time at 2 B
    or too many for 8 MiB).  -Q 16: with one CQE per 100 WRs, 100 x 8 MiB go
    by before the first completion, longer than droce-perf's 10 s stall check
    on a loaded machine."""
    got = {}
    for size in PLOT_SIZES:
        v = droce_perf(pmd, perf, "write_bw", ["-s", str(size), "-D", str(seconds),
                                               "-Q", "16", "-m", str(PLOT_MTU)])
        if v is not None:
            got[size] = v[0] * MIB
    return got


def plot(a, outdir, meter):
    """goodput.png (droce, raw, ceiling against message size) and
    latency_cdf.png (write_lat / read_lat -s 8), over net_memif."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    os.makedirs(outdir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="droce-bench-plot-")
    pmd = Pmd("memif", tmp, os.getpid() % 100000)
    try:
        frames = sorted({write_frame(s) for s in PLOT_SIZES})
        raw, ceil = {}, {}
        for f, pl in frames:
            log(f"  plot: raw and ceiling, {f}-byte frames")
            raw[f] = meter.take(raw_rate, pmd, a.raw, f, min(a.seconds, 1.0), (RAW_BURSTS[-1], 0))
            ceil[f] = meter.take(raw_rate, pmd, a.raw, f, min(a.seconds, 1.0),
                                 (RAW_BURSTS[-1], 0), pl)
        log("  plot: droce-perf write_bw, 2 B .. 8 MiB")
        droce = meter.take(perf_sweep, pmd, a.perf, a.plot_seconds)
        log("  plot: write_lat, read_lat -s 8 -H")
        lat = {t: meter.take(perf_samples, pmd, a.perf, t) for t in ("write_lat", "read_lat")}
        rtt = meter.take(raw_rtt, pmd, a.raw, FRAME_W8, 20000)
    finally:
        pmd.close()
        shutil.rmtree(tmp, ignore_errors=True)
    hot = " (LOADED: not a result)" if meter.loaded else ""
    title_load = f"others' CPU {min(meter.loads):.2f}..{max(meter.loads):.2f} cores{hot}"

    def goodput(rates, size):
        f, pl = write_frame(size)
        r = rates[f].value
        return r * pl * 8 / 1e3 if r else None          # Mpps x bytes -> Gb/s

    fig, ax = plt.subplots(figsize=(8, 5))
    for name, ys, style in (("raw forwarding", [goodput(raw, s) for s in PLOT_SIZES], "s--"),
                            ("ceiling (raw + copy + ICRC)", [goodput(ceil, s) for s in PLOT_SIZES], "^-."),
                            ("droce", [droce.value.get(s, 0) * 8 / 1e3 if droce.value else None
                                       for s in PLOT_SIZES], "o-")):
        pts = [(s, y) for s, y in zip(PLOT_SIZES, ys) if y]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=name, markersize=4)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes), RDMA WRITE, path MTU 1024")
    ax.set_ylabel("goodput (Gb/s, payload)")
    ax.set_title(f"droce write_bw -s 2 .. 8 MiB vs raw forwarding and the ceiling, net_memif\n{title_load}",
                 fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "goodput.png"), dpi=110)
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 5))
    for t, s in lat.items():
        if s.value:
            xs = sorted(s.value)
            ax.plot(xs, [(i + 1) / len(xs) for i in range(len(xs))],
                    label=f"{t} -s 8 (median {xs[len(xs) // 2]:.2f} us, "
                          f"p99.9 {xs[min(len(xs) - 1, int(len(xs) * 0.999))]:.2f} us)")
    if rtt.value:
        ax.axvline(rtt.value / 2, color="gray", linestyle="--", label=f"raw RTT/2 {rtt.value / 2:.2f} us")
        ax.axvline(rtt.value, color="gray", linestyle=":", label=f"raw RTT {rtt.value:.2f} us")
    ax.set_xscale("log")
    ax.set_xlabel("latency (usec; write_lat: half round trip, read_lat: round trip)")
    ax.set_ylabel("fraction of samples")
    ax.set_title(f"droce latency distribution (CDF), net_memif\n{title_load}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, "latency_cdf.png"), dpi=110)
    plt.close(fig)
    print(f"plots: {outdir}/goodput.png {outdir}/latency_cdf.png")
    print(meter.line())
    missing = [n for n, v in [("droce", droce), ("raw rtt", rtt)] + list(lat.items())
               if not v.value]
    if droce.value and len(droce.value) < len(PLOT_SIZES):
        missing.append("droce sizes")
    return 1 if missing else 0


# ---- the benchmark -----------------------------------------------------------

# (label, test, args, extra droce options, raw reference)
#   raw reference: ("rate", frame size, payload bytes per frame) or
#                  ("msg", frame size, payload) or ("rtt", frame size, payload, divisor)
#   test "qps": test/bench/lc_bench --qps (memif only)
QPS = 10000


def cases(quick):
    c = [
        ("write_bw -s 64", "write_bw", ["-s", "64", "-D", "2"], [], ("rate", FRAME_W64, 64)),
        ("write_bw -s 65536 (MTU 1024)", "write_bw", ["-s", "65536", "-D", "2"], [],
         ("rate", FRAME_MTU[1024], 1024)),
        ("write_bw -s 65536 (MTU 4096)", "write_bw", ["-s", "65536", "-D", "2"],
         ["--droce-mtu=4200"], ("rate", FRAME_MTU[4096], 4096)),
        ("write_lat -s 8", "write_lat", ["-s", "8", "-n", "5000"], [], ("rtt", FRAME_W8, 8, 2)),
        (f"write_bw -s 64, {QPS} QPs", "qps", [], [], ("msg", FRAME_W64, 64)),
        ("read_bw -s 65536", "read_bw", ["-s", "65536", "-D", "2"], [],
         ("rate", FRAME_MTU[1024], 1024)),
        ("read_lat -s 8", "read_lat", ["-s", "8", "-n", "5000"], [], ("rtt", FRAME_W8, 8, 1)),
        ("send_bw -s 65536", "send_bw", ["-s", "65536", "-D", "2"], [],
         ("rate", FRAME_MTU[1024], 1024)),
        ("send_lat -s 8", "send_lat", ["-s", "8", "-n", "5000"], [], ("rtt", FRAME_W8, 8, 2)),
        ("atomic_bw", "atomic_bw", ["-D", "2"], [], ("msg", FRAME_W64, 64)),
        ("atomic_lat", "atomic_lat", ["-n", "5000"], [], ("rtt", FRAME_W8, 8, 1)),
    ]
    return c[:4] if quick else c


def rate_frames():
    return sorted({FRAME_W64, FRAME_MTU[1024], FRAME_MTU[4096]})


def ref_measure(pmd, raw, ref, seconds, best, payload):
    """The raw (payload None) or ceiling figure of a reference: Mpps or usec."""
    if ref[0] == "rtt":
        return raw_rtt(pmd, raw, ref[1], 20000, (RAW_BURSTS[0], 0), payload)
    key = ref[1] if payload is None else ("ceiling", ref[1])
    return raw_rate(pmd, raw, ref[1], seconds, best.get(key, (RAW_BURSTS[0], 0)), payload)


def droce_measure(pmd, a, case):
    label, test, args, extra, ref = case
    if test == "qps":
        return lc_qps(a.lc, pmd.tmp)
    return droce_perf(pmd, a.perf, test, args, extra)


def one_run(pmd, a, best, meter, quick):
    """{(label, 'raw'|'ceiling'|'droce'): Sample}: each row raw, ceiling, droce in turn."""
    out = {}
    for case in cases(quick):
        label, test, args, extra, ref = case
        if test == "qps" and (pmd.kind != "memif" or a.lc is None):
            continue
        log(f"  {pmd.kind}: {label}: raw, ceiling, droce")
        out[(label, "raw")] = meter.take(ref_measure, pmd, a.raw, ref, a.seconds, best, None)
        out[(label, "ceiling")] = meter.take(ref_measure, pmd, a.raw, ref, a.seconds, best,
                                             ref[2])
        out[(label, "droce")] = meter.take(droce_measure, pmd, a, case)
    return out


def ring_run(pmd, a, best, meter):
    """net_ring (one process, raw only): the frame rates and the round trip."""
    out = {}
    for size in rate_frames():
        out[(size, "raw")] = meter.take(raw_rate, pmd, a.raw, size, a.seconds, best[size])
    out[("rtt", "raw")] = meter.take(raw_rtt, pmd, a.raw, FRAME_W8, 20000)
    return out


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, spec):
    """x formatted, or '-' padded to the spec's width."""
    if x is not None:
        return format(x, spec)
    width = re.match(r"\d*", spec).group(0)
    return "-".rjust(int(width)) if width else "-"


def div(a, b):
    return a / b if a is not None and b else None


def row_values(case, samples):
    """(droce, raw, ceiling, unit, loaded, note) of one row over its runs."""
    label, test, args, extra, ref = case
    got = {w: [s for s in samples.get(w, []) if s is not None] for w in ("raw", "ceiling", "droce")}
    loaded = any(s.loaded for v in got.values() for s in v)
    vals = {w: [s.value for s in v if s.value is not None] for w, v in got.items()}
    r_m, c_m = med(vals["raw"]), med(vals["ceiling"])
    note = ""
    if ref[0] == "rate":
        d_v = med([v[0] * MIB for v in vals["droce"]])
        raw_v = r_m * ref[2] if r_m is not None else None
        ceil_v = c_m * ref[2] if c_m is not None else None
        unit = f"MB/s (10^6 B); raw, ceiling = Mpps({ref[1]} B) x {ref[2]} B"
    elif ref[0] == "msg":
        d_v = med([v[1] for v in vals["droce"]])
        raw_v, ceil_v = r_m, c_m
        unit = f"M msg/s; raw, ceiling = Mpps({ref[1]} B)"
        if test == "qps":
            one = med([v[2] for v in vals["droce"]])
            note = f"; lc_bench, memif, 1 QP: {fmt(one, '.3f')} M/s, {QPS} of 1: {fmt(div(d_v, one), '.3f')}"
    else:
        d_v = med(vals["droce"])
        raw_v = r_m / ref[3] if r_m is not None else None
        ceil_v = c_m / ref[3] if c_m is not None else None
        unit = "usec t_typical; raw, ceiling = " + ("RTT/2" if ref[3] == 2 else "RTT") + \
            f" of {ref[1]} B"
    return d_v, raw_v, ceil_v, unit + note, loaded


TEXT_HDR = (f"{'PMD':10} {'test':30} {'droce':>12} {'raw':>12} {'ceiling':>12} "
            f"{'ratio':>7} {'/ceil':>7}  unit / raw reference")
MD_HDR = ["| PMD | test | droce | raw | ceiling | droce/raw | droce/ceiling | unit, raw reference |",
          "|---|---|---:|---:|---:|---:|---:|---|"]
LOADED = "loaded: not a result; "


def sweep_line(kind, best, link_mbps):
    def part(k):
        return f"burst {best[k][0]}, ring {best[k][1] or 'default'}"
    sizes = sorted(k for k in best if not isinstance(k, tuple))
    parts = [f"{s} B: {part(s)}" + (f" (ceiling: {part(('ceiling', s))})"
                                   if ("ceiling", s) in best else "") for s in sizes]
    phys = ("none known (a virtual PMD: shared memory or kernel copies, no line rate"
            + (f"; it reports a nominal {link_mbps} Mb/s)" if link_mbps else ")"))
    return (f"{kind}: raw baseline = the best of burst {'/'.join(map(str, RAW_BURSTS))} x ring "
            f"{'/'.join(str(r or 'default') for r in RAW_RINGS)}: {'; '.join(parts)}; "
            f"physical ceiling: {phys}")


def report(kinds, results, quick, nruns, meter):
    """Lines of the table (text) and of the markdown section."""
    text, md = [TEXT_HDR, "-" * len(TEXT_HDR)], list(MD_HDR)
    notes = []
    for kind in kinds:
        runs, best, link_mbps = results[kind]
        notes.append(sweep_line(kind, best, link_mbps))
        if kind == "ring":
            for key, what, unit in [(s, f"raw rate {s} B frames", "Mpps") for s in rate_frames()] + \
                    [("rtt", f"raw round trip {FRAME_W8} B", "usec (median)")]:
                ss = [r.get((key, "raw")) for r in runs]
                v = med([s.value for s in ss if s is not None])
                hot = LOADED if any(s is not None and s.loaded for s in ss) else ""
                text.append(f"{kind:10} {what:30} {'':>12} {fmt(v, '12.3f')} {'':>12} "
                            f"{'':>7} {'':>7}  {hot}{unit}")
                md.append(f"| {kind} | {what} | | {fmt(v, '.3f')} | | | | {hot}{unit} |")
            continue
        for case in cases(quick):
            label = case[0]
            samples = {w: [r.get((label, w)) for r in runs] for w in ("raw", "ceiling", "droce")}
            if all(s is None for v in samples.values() for s in v):
                continue
            d_v, raw_v, ceil_v, unit, loaded = row_values(case, samples)
            hot = LOADED if loaded else ""
            p = "4f" if case[4][0] == "msg" else "2f"      # message rates are small numbers
            text.append(f"{kind:10} {label:30} {fmt(d_v, '12.' + p)} {fmt(raw_v, '12.' + p)} "
                        f"{fmt(ceil_v, '12.' + p)} {fmt(div(d_v, raw_v), '7.3f')} "
                        f"{fmt(div(d_v, ceil_v), '7.3f')}  {hot}{unit}")
            md.append(f"| {kind} | {label} | {fmt(d_v, '.' + p)} | {fmt(raw_v, '.' + p)} | "
                      f"{fmt(ceil_v, '.' + p)} | {fmt(div(d_v, raw_v), '.3f')} | "
                      f"{fmt(div(d_v, ceil_v), '.3f')} | {hot}{unit} |")
    tail = [f"(median of {nruns} run(s), each row measured raw, ceiling, droce in turn; "
            "ceiling = raw forwarding + payload copy in and out + ICRC compute and verify)",
            meter.line()] + notes
    text += tail
    md += [""] + [f"- {t}" for t in tail]
    return text, md


# ---- usertools/droce-demo: the same rows, baselines and ratios ----------------

def demo_baseline(kind, raw, labels, seconds, path, load_max):
    """The raw and ceiling figures of the bench rows `labels` over one PMD,
    measured as the bench measures them (sweep, best setting), into JSON."""
    chosen = [c for c in cases(False) if c[0] in labels]
    unknown = set(labels) - {c[0] for c in chosen}
    if unknown:
        log(f"droce-bench: no such row: {', '.join(sorted(unknown))}")
        return 2
    meter = Meter(load_max)
    tmp = tempfile.mkdtemp(prefix="droce-bench-")
    pmd = Pmd(kind, tmp, os.getpid() % 100000)
    try:
        best = raw_sweep(pmd, raw, sorted({c[4][1] for c in chosen if c[4][0] != "rtt"}),
                         min(seconds, 1.0), meter)
        rows = {}
        for c in chosen:
            rows[c[0]] = {w: vars(meter.take(ref_measure, pmd, raw, c[4], seconds, best, pl))
                          for w, pl in (("raw", None), ("ceiling", c[4][2]))}
        sweep = sweep_line(kind, best, pmd.link_mbps)
    finally:
        pmd.close()
        shutil.rmtree(tmp, ignore_errors=True)
    with open(path, "w") as f:
        json.dump({"rows": rows, "load_max": load_max}, f)
    print(sweep)
    print(meter.line())
    return 0 if all(v["value"] is not None for r in rows.values() for v in r.values()) else 1


def demo_snapshot():
    """
    One line for --demo-ratio's WINDOW file: the time, the machine's busy
    ticks and the ticks of the calling shell (the demo) with the children it
    has waited for, so the droce-perf pair it runs counts as its own.
    """
    print(time.monotonic(), busy_ticks(), own_ticks(os.getppid()))
    return 0


def window_loaded(window, load_max):
    """Whether others used more than load_max cores over a two-snapshot window file."""
    with open(window) as f:
        (t0, b0, o0), (t1, b1, o1) = [[float(x) for x in l.split()] for l in f.readlines()[:2]]
    return others_cores(t0, b0, o0, t1, b1, o1, os.sysconf("SC_CLK_TCK")) > load_max


def demo_ratio(path, label, perf_out, window):
    """
    The bench's ratio line of one row: droce from a droce-perf client's
    output, loaded when others used more than the baseline's load_max cores
    over the window (two --demo-snapshot lines around the droce-perf pair).
    """
    with open(path) as f:
        base = json.load(f)
    case = next((c for c in cases(False) if c[0] == label), None)
    if case is None or label not in base["rows"]:
        log(f"droce-bench: no baseline for row '{label}'")
        return 2
    with open(perf_out, errors="replace") as f:
        droce = perf_result(case[1], f.read())
    hot = window_loaded(window, base["load_max"])
    samples = {w: [Sample(**base["rows"][label][w])] for w in ("raw", "ceiling")}
    samples["droce"] = [Sample(droce, hot)]
    d_v, raw_v, ceil_v, unit, loaded = row_values(case, samples)
    p = "4f" if case[4][0] == "msg" else "2f"
    print(f"  {label}: droce {fmt(d_v, '.' + p)}, raw {fmt(raw_v, '.' + p)}, ceiling "
          f"{fmt(ceil_v, '.' + p)} ({unit}): droce/raw {fmt(div(d_v, raw_v), '.3f')}, "
          f"droce/ceiling {fmt(div(d_v, ceil_v), '.3f')}" + ("; " + LOADED.rstrip("; ") if loaded else ""))
    return 0


# ---- the drop-in libibverbs against droce-perf (--dropin) ----------------------

# test, perftest's options (both sides), whether the server side is passive
# (calls no verb while the client works: the drop-in's progress thread runs
# the engine there, or with --dropin-lcores a transport lcore; droce-perf's
# server runs the engine itself, on the same core)
DROPIN_TESTS = (
    ("write_bw", ["-s", "65536", "-n", "20000"], True),
    ("read_bw", ["-s", "65536", "-n", "20000"], True),
    ("send_bw", ["-s", "65536", "-n", "20000"], False),
    ("send_lat", ["-s", "8", "-n", "20000"], False),
    ("read_lat", ["-s", "8", "-n", "20000"], True),
)


def dropin_argv(pmd, run, lib, test, args, passive, port, lcores):
    """Server and client (argv, env) of Debian's ib_<test> on the drop-in;
    lcores: a passive server polls with a transport lcore (else droce's
    defaults: the progress thread)."""
    argvs = []
    for side, argv in enumerate(pmd.pair_argv("x")):
        at = argv.index("x")
        prefix, eal = argv[:at], argv[at + 1:]
        opts = ["--", f"--droce-ipv4=198.18.13.{side + 1}/24"]
        if side == 0 and passive and lcores:
            # the engine on lcore 0 (the core droce-perf's server polls on),
            # the main thread, asleep in read(), on the client's
            i = eal.index("-l")
            eal[i + 1:i + 2] = ["0,1", "--main-lcore", "1"]
            opts.append("--droce-transport-lcores=0")
        env = dict(os.environ, DROCE_ARGS=" ".join(eal + opts))
        cmd = prefix + [run, "--lib", lib, "--", f"ib_{test}", "-d", "droce0", "-x", "0", "-p",
               str(port)] + args + ([pmd.server_addr] if side == 1 else [])
        argvs.append((cmd, env))
    return argvs


def dropin_perf(pmd, run, lib, test, args, passive, lcores):
    """ib_<test> through the drop-in, both sides: bw -> (MB/s, Mpps), lat -> t_typical."""
    port = 20000 + (os.getpid() * 7 + (pmd.n + 1) * 131) % 40000   # the pair's number
    (sc, se), (cc, ce) = dropin_argv(pmd, run, lib, test, args, passive, port, lcores)
    res = run_two_env(sc, se, cc, ce, lambda proc, out: listening(proc.pid, port), 120)
    if res is None or res[0] != 0 or res[1] != 0:
        if res is not None:
            log(f"  drop-in ib_{test}: exit {res[0]}/{res[1]}: {res[4].strip()[-300:]}")
        return None
    return perf_result(test, res[3], res[2])


def medians(got, nruns):
    """{key: [perf_result or None] * nruns} -> ({key: median or None}, failed runs)."""
    vals, failed = {}, 0
    for k, xs in got.items():
        xs = [x[0] if isinstance(x, tuple) else x for x in xs if x is not None]
        failed += nruns - len(xs)
        vals[k] = statistics.median(xs) if xs else None
    return vals, failed


def perf_unit(test):
    return "MB/s" if test.endswith("_bw") else "us (t_typical)"


def dropin_compare(a, nruns):
    """--dropin: each test through droce-perf and through the drop-in, in turn,
    nruns times over net_af_packet (perftest gives up on a port that is not
    ACTIVE at its start: a memif port is down until its peer comes); the
    medians and their ratio."""
    tmp = tempfile.mkdtemp(prefix="droce-bench-")
    pmd = Pmd("af_packet", tmp, os.getpid() % 100000)
    lines = ["| test | droce-perf | drop-in (Debian's perftest) | drop-in / droce-perf |",
             "|---|---|---|---|"]
    failed = 0
    try:
        for test, args, passive in DROPIN_TESTS:
            if a.dropin_tests and test not in a.dropin_tests.split(","):
                continue
            got = {"perf": [], "dropin": []}
            for r in range(nruns):
                log(f"dropin: {test} run {r + 1}/{nruns}")
                got["perf"].append(droce_perf(pmd, a.perf, test, args, server_args=args))
                got["dropin"].append(dropin_perf(pmd, a.dropin, a.dropin_lib, test, args,
                                                 passive, a.dropin_lcores))
            vals, missing = medians(got, nruns)
            failed += missing
            unit = perf_unit(test)
            ratio = div(vals["dropin"], vals["perf"])
            lines.append(f"| {test} {' '.join(args)} | {fmt(vals['perf'], '.2f')} {unit} | "
                         f"{fmt(vals['dropin'], '.2f')} {unit} | {fmt(ratio, '.3f')} |")
            log(lines[-1])
    finally:
        pmd.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print("\n".join(lines))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if failed else 0


# ---- middleware on the drop-ins against droce-perf (--middleware) --------------

# Debian's ucx_perftest's last line: iterations, latency 50%ile, average,
# overall (usec, one way: half the round trip of its ping-pong), bandwidth
# average, overall (MB/s of 2^20 bytes), message rate average, overall
UCX_FINAL_RE = re.compile(r"^Final:\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+"
                          r"([\d.]+)", re.M)
MW_BW_ITERS, MW_LAT_ITERS = 2000, 2000
FIO_SIZE = "128m"


class ToolFailed(Exception):
    """A tool of a middleware row exited non-zero or printed no figure."""


def mw_argv(pmd, run, lib, tool, droce_ip, passive_lcore, side):
    """(argv, env) of tool (argv list) on the drop-in on pmd's side: the EAL
    of droce-perf's pair, droce's defaults (adaptive progress) unless
    passive_lcore (then the engine polls on a transport lcore, core 0, and the
    main thread, asleep outside the verbs, has core 1)."""
    argv = pmd.argv("x", side, pmd.n)
    at = argv.index("x")
    prefix, eal = argv[:at], argv[at + 1:]
    opts = ["--", f"--droce-ipv4={droce_ip}/24"]
    if passive_lcore:
        i = eal.index("-l")
        eal[i + 1:i + 2] = ["0,1", "--main-lcore", "1"]
        opts.append("--droce-transport-lcores=0")
    env = dict(os.environ, DROCE_ARGS=" ".join(eal + opts))
    return prefix + [run, "--lib", lib, "--"] + tool, env


def mw_pair(pmd, a, name, tools, ready, droce_ips=None, poll=False, extra_env=None):
    """tools[0] (server) until ready(proc, out_path), then tools[1]; both must
    exit 0 (poll: the server's engine on a transport lcore).  (server output,
    client output) or ToolFailed."""
    pmd.n += 1
    ips = droce_ips or ["198.18.13.1", "198.18.13.2"]
    (sc, se), (cc, ce) = [mw_argv(pmd, a.dropin, a.dropin_lib, tools[s], ips[s],
                                  s == 0 and poll, s) for s in (0, 1)]
    for e in (se, ce):
        e.update(extra_env or {})
    res = run_two_env(sc, se, cc, ce, ready, 120)
    if res is None:
        raise ToolFailed(f"{name}: the server did not start: {' '.join(sc)}")
    if res[0] != 0 or res[1] != 0:
        # the tools' last words, on one line (-1: killed after 120 s, a hang)
        said = [l.strip() for l in (res[2] + res[3] + res[4]).splitlines() if l.strip()
                and not l.startswith(("TELEMETRY:", "ethdev_link:", "EAL:"))]
        raise ToolFailed(f"{name}: exit {res[0]} (server) / {res[1]} (client): "
                         f"{' / '.join(said[-3:])[-300:]}")
    return res[2], res[3]


def mw_ucx(pmd, a, args, env=None, kind="bw"):
    """ucx_perftest args both sides: bw -> overall MB/s, lat -> 50th percentile (us)."""
    port = 20000 + (os.getpid() * 7 + (pmd.n + 1) * 131) % 40000
    name = "ucx_perftest " + " ".join(args) + (" " + " ".join(f"{k}={v}" for k, v in
                                                               (env or {}).items()))
    tool = ["ucx_perftest", "-p", str(port)] + args
    _, out = mw_pair(pmd, a, name, [tool, tool + [pmd.server_addr]],
                     lambda proc, path: listening(proc.pid, port), extra_env=env)
    final = UCX_FINAL_RE.findall(out)
    n = int(args[args.index("-n") + 1])
    if len(final) != 1 or int(final[0][0]) != n:
        raise ToolFailed(f"{name}: no Final row of {n} iterations: {out.strip()[-400:]}")
    return float(final[0][5]) if kind == "bw" else float(final[0][1])


def fio_json(out, name):
    start = out.find('{\n  "fio version"')
    if start < 0:
        raise ToolFailed(f"{name}: no JSON report: {out.strip()[-400:]}")
    try:
        return json.JSONDecoder().raw_decode(out[start:])[0]
    except ValueError as e:
        raise ToolFailed(f"{name}: bad JSON report ({e})") from e


def mw_fio(pmd, a, verb, bs, iodepth, kind, poll=False):
    """fio --ioengine=rdma --verb=verb on both sides (the server's job waits,
    the client's issues): bw -> the client's MB/s (2^20), lat -> the client's
    median completion latency (us: one WRITE/READ until its completion, a
    round trip)."""
    port = 20000 + (os.getpid() * 7 + (pmd.n + 1) * 131) % 40000
    name = f"fio --ioengine=rdma --verb={verb} --bs={bs} --iodepth={iodepth}"
    size = FIO_SIZE if kind == "bw" else str(int(bs) * MW_LAT_ITERS)
    common = ["--ioengine=rdma", f"--port={port}", f"--verb={verb}", f"--bs={bs}",
              f"--size={size}", f"--iodepth={iodepth}", "--thread", "--output-format=json"]
    srv = ["fio", "--name=server", "--rw=read"] + common
    cli = ["fio", "--name=client", "--rw=write"] + common + [f"--hostname={pmd.server_addr}"]
    # its listening rdma_cm id is droce's, not a kernel socket: its line
    _, out = mw_pair(pmd, a, name, [srv, cli],
                     lambda proc, path: file_has(path, "waiting for connection"),
                     droce_ips=["198.18.12.1", "198.18.12.2"], poll=poll)
    job = fio_json(out, name)["jobs"][0]
    if job.get("error") != 0:
        raise ToolFailed(f"{name}: client error {job.get('error')}")
    w = job["write"]
    want = int(size[:-1]) << 20 if size.endswith("m") else int(size)
    if w["io_bytes"] != want:
        raise ToolFailed(f"{name}: client moved {w['io_bytes']} bytes, not {want}")
    if kind == "bw":
        return w["bw_bytes"] / 1048576
    return w["clat_ns"]["percentile"]["50.000000"] / 1000


def mw_ib(pmd, a, test, args, passive, poll=False):
    v = dropin_perf(pmd, a.dropin, a.dropin_lib, test, args, passive, poll)
    if v is None:
        raise ToolFailed(f"ib_{test} {' '.join(args)} on the drop-in (see above)")
    return v[0] if isinstance(v, tuple) else v


def mw_perf(pmd, a, test, args):
    v = droce_perf(pmd, a.perf, test, args, server_args=args)
    if v is None:
        raise ToolFailed(f"droce-perf {test} {' '.join(args)} (see above)")
    return v[0] if isinstance(v, tuple) else v


def mw_raw(pmd, a, what):
    """raw_fwd at its default burst and ring (no sweep): 1082 B frames
    (a 1024-byte WRITE_MIDDLE) in MB/s of payload (2^20), or the one-way time
    (half the median round trip) of the 8-byte WRITE's 82 B frame."""
    if what == "bw":
        v = raw_rate(pmd, a.raw, FRAME_MTU[1024], 2.0)
        return v * 1024 * 1e6 / 1048576 if v is not None else None
    v = raw_rtt(pmd, a.raw, FRAME_W8, 20000)
    return v / 2 if v is not None else None


BW8, LAT8 = ["-s", "65536", "-n", str(MW_BW_ITERS)], ["-s", "8", "-n", str(MW_LAT_ITERS)]
UCP_ENV = {"UCX_TLS": "rc_verbs,ud_verbs", "UCX_NET_DEVICES": "droce0:1"}


def mw_rows(a):
    """(label, kind, reference factor, measure(pmd, a)): kind bw (MiB/s,
    against droce-perf's write_bw 64 KiB) or lat (us, against droce-perf's
    write_lat 8 B t_typical x factor: 1 for perftest's and UCX's half round
    trips, 2 for fio's completion latency, a whole round trip)."""
    rows = [
        ("droce-perf write_bw -s 65536", "bw", 1, lambda p, a: mw_perf(p, a, "write_bw", BW8)),
        ("droce-perf write_lat -s 8", "lat", 1, lambda p, a: mw_perf(p, a, "write_lat", LAT8)),
        ("ib_write_bw -s 65536 (perftest)", "bw", 1,
         lambda p, a: mw_ib(p, a, "write_bw", BW8, True)),
        ("ib_write_lat -s 8 (perftest)", "lat", 1,
         lambda p, a: mw_ib(p, a, "write_lat", LAT8, False)),
        ("ucx_perftest -x rc_verbs put_bw 65536 zcopy", "bw", 1,
         lambda p, a: mw_ucx(p, a, ["-x", "rc_verbs", "-d", "droce0:1", "-t", "put_bw",
                                    "-D", "zcopy"] + BW8)),
        ("ucx_perftest -x rc_verbs am_lat 8", "lat", 1,
         lambda p, a: mw_ucx(p, a, ["-x", "rc_verbs", "-d", "droce0:1", "-t", "am_lat"] + LAT8,
                             kind="lat")),
        ("ucx_perftest -x ud_verbs am_lat 8", "lat", 1,
         lambda p, a: mw_ucx(p, a, ["-x", "ud_verbs", "-d", "droce0:1", "-t", "am_lat"] + LAT8,
                             kind="lat")),
        ("ucx_perftest tag_bw 65536 (UCP, rc+ud)", "bw", 1,
         lambda p, a: mw_ucx(p, a, ["-t", "tag_bw"] + BW8, UCP_ENV)),
        ("ucx_perftest tag_lat 8 (UCP, rc+ud)", "lat", 1,
         lambda p, a: mw_ucx(p, a, ["-t", "tag_lat"] + LAT8, UCP_ENV, kind="lat")),
        ("fio rdma write 64k iodepth 16", "bw", 1,
         lambda p, a: mw_fio(p, a, "write", "65536", 16, "bw")),
        ("fio rdma read 64k iodepth 16", "bw", 1,
         lambda p, a: mw_fio(p, a, "read", "65536", 16, "bw")),
        ("fio rdma write 64k iodepth 1 (clat p50)", "lat", None,
         lambda p, a: mw_fio(p, a, "write", "65536", 1, "lat")),
        ("fio rdma write 8 B iodepth 1 (clat p50)", "lat", 2,
         lambda p, a: mw_fio(p, a, "write", "8", 1, "lat")),
    ]
    if a.dropin_lcores:
        # the passive servers again, their engine polling on a transport
        # lcore, in the same rounds as their adaptive rows
        pl = " (server polling)"
        rows += [
            ("ib_write_bw -s 65536 (perftest)" + pl, "bw", 1,
             lambda p, a: mw_ib(p, a, "write_bw", BW8, True, poll=True)),
            ("fio rdma write 64k iodepth 16" + pl, "bw", 1,
             lambda p, a: mw_fio(p, a, "write", "65536", 16, "bw", poll=True)),
            ("fio rdma read 64k iodepth 16" + pl, "bw", 1,
             lambda p, a: mw_fio(p, a, "read", "65536", 16, "bw", poll=True)),
            ("fio rdma write 8 B iodepth 1 (clat p50)" + pl, "lat", 2,
             lambda p, a: mw_fio(p, a, "write", "8", 1, "lat", poll=True)),
        ]
    if a.raw:
        rows += [("raw_fwd 1082 B frames x 1024 B (af_packet)", "bw", 1,
                  lambda p, a: mw_raw(p, a, "bw")),
                 ("raw_fwd 82 B round trip / 2 (af_packet)", "lat", 1,
                  lambda p, a: mw_raw(p, a, "lat"))]
    if a.mw_rows:
        keep = [s.strip() for s in a.mw_rows.split(",")]
        rows = [r for r in rows if r[0].startswith(("droce-perf",)) or
                any(k in r[0] for k in keep)]
    return rows


def spread(xs):
    return f"{min(xs):.2f} .. {max(xs):.2f}" if xs else "-"


def middleware_compare(a, nruns):
    """--middleware: every row of mw_rows, in turn, nruns rounds over one
    net_af_packet link; the medians, their spread and each row's ratio to
    droce-perf's figure of its kind from the same rounds.  A failed tool
    is named and makes the exit status 1."""
    # a SIGTERM (timeout(1)) still deletes the namespaces (finally below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = tempfile.mkdtemp(prefix="droce-bench-")
    pmd = Pmd("af_packet", tmp, os.getpid() % 100000)
    meter = Meter(a.load_max)
    rows = mw_rows(a)
    got = {r[0]: [] for r in rows}
    failed = []
    try:
        for r in range(nruns):
            for label, kind, factor, fn in rows:
                log(f"middleware: round {r + 1}/{nruns}: {label}")
                try:
                    s = meter.take(fn, pmd, a)
                except ToolFailed as e:
                    failed.append(f"round {r + 1}: {e}")
                    log(f"  FAILED: {e}")
                    continue
                if s.value is None or s.value <= 0:
                    failed.append(f"round {r + 1}: {label}: no figure")
                    log(f"  FAILED: {label}: no figure")
                    continue
                got[label].append(s)
                log(f"  {s.value:.2f} {'MiB/s' if kind == 'bw' else 'us'}"
                    f"{' (loaded)' if s.loaded else ''}")
    finally:
        pmd.close()
        shutil.rmtree(tmp, ignore_errors=True)
    ref = {"bw": med([s.value for s in got[rows[0][0]]]),
           "lat": med([s.value for s in got[rows[1][0]]])}
    mode = "droce's defaults (adaptive progress)" + (
        "; rows \"(server polling)\": the passive server (ib_write_bw's, fio's) with its "
        "engine on a transport lcore (core 0; its main thread on core 1)"
        if a.dropin_lcores else "")
    lines = [f"drop-ins: {mode}; median of {nruns} rounds, every row once per round, in turn",
             "", "| tool and test | rounds | median | min .. max | unit | / droce-perf | reference |",
             "|---|---:|---:|---:|---|---:|---|"]
    for label, kind, factor, fn in rows:
        vals = [s.value for s in got[label]]
        hot = LOADED if any(s.loaded for s in got[label]) else ""
        m = med(vals)
        unit = "MiB/s" if kind == "bw" else "us"
        if factor is None:
            ratio, what = None, "none (no droce-perf figure of this kind)"
        elif kind == "bw":
            ratio, what = div(m, ref["bw"]), "write_bw -s 65536"
        else:
            ratio = div(m, ref["lat"] * factor if ref["lat"] else None)
            what = "write_lat -s 8 t_typical" + (" x 2 (a round trip)" if factor == 2 else "")
        lines.append(f"| {label} | {len(vals)}/{nruns} | {fmt(m, '.2f')} | {spread(vals)} | {unit} | "
                     f"{fmt(ratio, '.3f')} | {hot}{what} |")
    lines += ["", meter.line()]
    if failed:
        lines += ["", "FAILED (a row without all its rounds):"] + [f"- {f}" for f in failed]
    print("\n".join(lines))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    if failed:
        log(f"droce-bench --middleware: {len(failed)} measurement(s) failed:\n  " +
            "\n  ".join(failed))
    return 1 if failed else 0


# ---- droce-perf's server on droced against in process (--daemon) --------------

DAEMON_TESTS = (
    ("write_bw", ["-s", "65536", "-n", "5000"]),
    ("write_lat", ["-s", "8", "-n", "2000"]),
)
# the server side's application on lcore 0 in every mode (droced's main
# lcore, asleep in poll(), too), the client on 1; the engine, where it has
# a lcore of its own, on 2, or on a 2-core machine on 1 (the client's core)
DAEMON_ENGINE = "2" if (os.cpu_count() or 1) >= 3 else "1"
DAEMON_MODES = ("in-process", f"in-process, engine on lcore {DAEMON_ENGINE}", "droced",
                "droced, regions")


def daemon_perf(pmd, perf, droced, mode, test, args):
    """One droce-perf pair, the server in mode: bw -> (MB/s, Mpps), lat -> t_typical.
    "droced": the server is droced's secondary; "droced, regions": a plain
    process on droced's queue regions (DROCE_QUEUES=region, no EAL)."""
    srv, cli = pmd.pair_argv(perf)
    port = 20000 + (os.getpid() * 7 + pmd.n * 131) % 40000
    opts = ["--droce-ipv4=198.18.13.1/24"]
    dmn, env = None, None
    if mode != "in-process":
        i = srv.index("-l")
        srv[i + 1] = f"0,{DAEMON_ENGINE}"
        opts.append(f"--droce-transport-lcores={DAEMON_ENGINE}")
    if mode.startswith("droced"):
        sock = os.path.join(pmd.tmp, f"d{pmd.n}.sock")
        dmn = subprocess.Popen([droced] + srv[1:] + ["--"] + opts + [f"--socket={sock}"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = dmn.stdout.readline()
        while line and "droced: ready on" not in line:
            line = dmn.stdout.readline()
        srv, opts = [perf, "--no-pci", "-l", "0"], [f"--droce-daemon={sock}"]
        if mode == "droced, regions":
            # on CPU 0 as EAL pins the secondary (-l 0, skipped here)
            srv = ["taskset", "-c", "0"] + srv
            env = dict(os.environ, DROCE_QUEUES="region")
    try:
        res = run_two_env(srv + ["--"] + opts + [test] + args + ["-p", str(port)], env,
                          cli + ["--", "--droce-ipv4=198.18.13.2/24", test] + args +
                          ["-p", str(port), pmd.server_addr], None,
                          lambda proc, out: listening(proc.pid, port), 120)
    finally:
        if dmn is not None:
            dmn.terminate()
            try:
                dmn.wait(timeout=10)
            except subprocess.TimeoutExpired:
                stop(dmn)
    if res is None or res[0] != 0 or res[1] != 0:
        log(f"  {mode} {test}: exit {res[:2] if res else 'no start'}")
        return None
    return perf_result(test, res[3], res[2])


def daemon_compare(a, nruns):
    """--daemon: write_bw -s 65536 and write_lat -s 8 over net_memif with the
    server in each of DAEMON_MODES, in turn, nruns times; the medians, the
    ratio droced / each in-process mode, and the load while they ran."""
    tmp = tempfile.mkdtemp(prefix="droce-bench-")
    pmd = Pmd("memif", tmp, os.getpid() % 100000)
    meter = Meter(a.load_max)
    lines = ["| test | " + " | ".join(DAEMON_MODES) + " | droced / in-process | "
             f"droced / {DAEMON_MODES[1]} | regions / {DAEMON_MODES[1]} |",
             "|---" * (len(DAEMON_MODES) + 4) + "|"]
    failed = 0
    try:
        for test, args in DAEMON_TESTS:
            got = {m: [] for m in DAEMON_MODES}
            for r in range(nruns):
                log(f"daemon: {test} run {r + 1}/{nruns}")
                for m in DAEMON_MODES:
                    got[m].append(meter.take(daemon_perf, pmd, a.perf, a.daemon, m, test,
                                             args).value)
            vals, missing = medians(got, nruns)
            failed += missing
            unit = perf_unit(test)
            lines.append(f"| {test} {' '.join(args)} | " +
                         " | ".join(f"{fmt(vals[m], '.2f')} {unit}" for m in DAEMON_MODES) +
                         f" | {fmt(div(vals['droced'], vals[DAEMON_MODES[0]]), '.3f')} | "
                         f"{fmt(div(vals['droced'], vals[DAEMON_MODES[1]]), '.3f')} | "
                         f"{fmt(div(vals['droced, regions'], vals[DAEMON_MODES[1]]), '.3f')} |")
            log(lines[-1])
    finally:
        pmd.close()
        shutil.rmtree(tmp, ignore_errors=True)
    lines.append(f"\n{meter.line()}; medians of {nruns} runs")
    print("\n".join(lines))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 1 if failed else 0


class Args:
    """What one_run needs: binaries and durations."""

    def __init__(self, a):
        self.perf = os.path.abspath(a.perf)
        self.raw = os.path.abspath(a.raw)
        self.lc = os.path.abspath(a.lc) if a.lc else None
        self.seconds = a.seconds


def bench_pmd(kind, tmp, tag, a, nruns, quick, meter):
    """(runs, best sweep setting per frame size, reported link speed) of one PMD."""
    pmd = Pmd(kind, tmp, tag)
    try:
        log(f"{kind}: raw sweep")
        best = raw_sweep(pmd, a.raw, rate_frames(), min(a.seconds, 1.0), meter)
        runs = []
        for r in range(nruns):
            log(f"{kind}: run {r + 1}/{nruns}")
            runs.append(ring_run(pmd, a, best, meter) if kind == "ring" else
                        one_run(pmd, a, best, meter, quick))
        return runs, best, pmd.link_mbps
    finally:
        pmd.close()


# ---- zero copy against the copy (lib/transport README "Zero copy") -------------

ZC_ROWS = [
    ("write_bw -s 4096 (MTU 1024)", "write_bw", ["-s", "4096"], []),
    ("write_bw -s 4096 (MTU 4096)", "write_bw", ["-s", "4096"], ["--droce-mtu=4200"]),
    ("write_bw -s 65536 (MTU 1024)", "write_bw", ["-s", "65536"], []),
    ("write_bw -s 65536 (MTU 4096)", "write_bw", ["-s", "65536"], ["--droce-mtu=4200"]),
    ("read_bw -s 65536 (MTU 4096)", "read_bw", ["-s", "65536"], ["--droce-mtu=4200"]),
    ("send_bw -s 65536 (MTU 4096)", "send_bw", ["-s", "65536"], ["--droce-mtu=4200"]),
]


def zero_copy(kinds, perf, runs, seconds, meter):
    """droce-perf with the payload copied (DROCE_TX_ZC=off) and sent from
    registered memory (DROCE_TX_ZC=1), alternating, `runs` times each; the
    medians and their ratio per PMD and row."""
    tmp = tempfile.mkdtemp(prefix="droce-bench-")
    tag = os.getpid() % 100000
    out = ["| PMD | test | copy MB/s | zero copy MB/s | zc / copy | loaded |",
           "|---|---|---|---|---|---|"]
    failed = 0
    try:
        for k in kinds:
            pmd = Pmd(k, tmp, tag)
            try:
                for label, test, args, extra in ZC_ROWS:
                    got = {"off": [], "1": []}
                    hot = False
                    for _ in range(runs):
                        for mode in ("off", "1"):
                            env = dict(os.environ, DROCE_TX_ZC=mode)
                            smp = meter.take(droce_perf, pmd, perf, test,
                                             args + ["-D", str(max(1, round(seconds)))], extra, None, (), env)
                            hot |= smp.loaded
                            if smp.value is not None:
                                got[mode].append(smp.value[0])
                    med = {m: statistics.median(v) if v else None for m, v in got.items()}
                    if None in med.values():
                        failed += 1
                    ratio = (f"{med['1'] / med['off']:.2f}" if None not in med.values() and
                             med["off"] else "-")
                    fmt = lambda v: f"{v:.0f}" if v is not None else "-"
                    line = (f"| {k} | {label} | {fmt(med['off'])} | {fmt(med['1'])} | {ratio} | "
                            f"{'loaded: not a result' if hot else 'no'} |")
                    log(line)
                    out.append(line)
            finally:
                pmd.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    out.append("")
    out.append(meter.line())
    print("\n".join(out))
    return 1 if failed else 0


def main():
    global verbose
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perf")
    ap.add_argument("--raw")
    ap.add_argument("--lc", help="test/bench/lc_bench (the 10,000-QP row; memif)")
    ap.add_argument("--pmd", default="ring,memif,af_packet")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0, help="raw rate duration")
    ap.add_argument("--load-max", type=float, default=0.3,
                    help="cores used by other processes above which a figure is not a result")
    ap.add_argument("--quick", action="store_true", help="write tests only")
    ap.add_argument("--markdown", help="also write the table as a markdown section here")
    ap.add_argument("--callgrind", metavar="TP_BENCH",
                    help="only the instructions per 64-byte WRITE (tp_bench under callgrind)")
    ap.add_argument("--callgrind-lat", metavar="TP_BENCH",
                    help="only the instructions per 8-byte write_lat round trip and raw "
                         "forwarding's (tp_bench --op write_lat under callgrind)")
    ap.add_argument("--plot", metavar="DIR", help="only the plots (memif), PNGs into DIR")
    ap.add_argument("--plot-seconds", type=int, default=1, help="--plot: seconds per size")
    ap.add_argument("--demo-baseline", metavar="JSON",
                    help="only the raw and ceiling figures of --rows (one --pmd) into JSON")
    ap.add_argument("--rows", default="", help="--demo-baseline: row labels, ';'-separated")
    ap.add_argument("--demo-ratio", nargs=4, metavar=("JSON", "ROW", "PERF_OUT", "WINDOW"),
                    help="only the ratio line of ROW: droce-perf's client output PERF_OUT, "
                    "measured between WINDOW's two --demo-snapshot lines")
    ap.add_argument("--demo-snapshot", action="store_true",
                    help="only a WINDOW line for --demo-ratio (time, busy, the caller's ticks)")
    ap.add_argument("--dropin", metavar="DROCE_RUN",
                    help="only: Debian's perftest through the drop-in libibverbs "
                    "(usertools/droce-run) against droce-perf, in turn, over af_packet")
    ap.add_argument("--dropin-lib", help="--dropin: the folder of the drop-in libibverbs.so.1")
    ap.add_argument("--dropin-tests", help="--dropin: only these tests (comma-separated)")
    ap.add_argument("--dropin-lcores", action="store_true",
                    help="--dropin: a passive perftest server polls with a transport lcore "
                    "(default: droce's defaults, the progress thread)")
    ap.add_argument("--middleware", metavar="DROCE_RUN",
                    help="only: ucx_perftest, fio's rdma engine and perftest through the "
                    "drop-ins (usertools/droce-run) beside droce-perf, rounds in turn, "
                    "over af_packet (needs --perf and --dropin-lib; --raw adds raw_fwd)")
    ap.add_argument("--middleware-rows", dest="mw_rows",
                    help="--middleware: only the rows whose label contains one of these "
                    "(comma-separated; droce-perf's two always)")
    ap.add_argument("--daemon", metavar="DROCED",
                    help="only: droce-perf's server on droced (app/droced) against in "
                    "process, in turn, over memif (write_bw -s 65536, write_lat -s 8)")
    ap.add_argument("--zero-copy", action="store_true",
                    help="only: droce-perf with the payload copied vs zero copy, per PMD")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    verbose = a.verbose
    if a.callgrind:
        return callgrind(a.callgrind)
    if a.callgrind_lat:
        return callgrind_lat(a.callgrind_lat)
    if a.demo_snapshot:
        return demo_snapshot()
    if a.demo_ratio:
        return demo_ratio(*a.demo_ratio)
    if a.demo_baseline:
        if not a.raw or a.pmd not in ("memif", "af_packet"):
            ap.error("--demo-baseline needs --raw and --pmd memif or af_packet")
        return demo_baseline(a.pmd, os.path.abspath(a.raw), [r for r in a.rows.split(";") if r],
                             a.seconds, a.demo_baseline, a.load_max)
    if a.dropin:
        if not a.perf or not a.dropin_lib:
            ap.error("--dropin needs --perf and --dropin-lib")
        a.perf = os.path.abspath(a.perf)
        return dropin_compare(a, a.runs)
    if a.middleware:
        if not a.perf or not a.dropin_lib:
            ap.error("--middleware needs --perf and --dropin-lib")
        a.perf, a.dropin = os.path.abspath(a.perf), os.path.abspath(a.middleware)
        a.dropin_lib = os.path.abspath(a.dropin_lib)
        a.raw = os.path.abspath(a.raw) if a.raw else None
        return middleware_compare(a, a.runs)
    if a.daemon:
        if not a.perf:
            ap.error("--daemon needs --perf")
        a.perf, a.daemon = os.path.abspath(a.perf), os.path.abspath(a.daemon)
        return daemon_compare(a, a.runs)
    if not a.perf or not a.raw:
        ap.error("--perf and --raw are required")
    if a.plot:
        args = Args(a)
        args.plot_seconds = a.plot_seconds
        return plot(args, a.plot, Meter(a.load_max))
    kinds = [k for k in a.pmd.split(",") if k]
    for k in kinds:
        if k not in ("ring", "memif", "af_packet"):
            ap.error(f"unknown PMD {k}")
    if "af_packet" in kinds and (os.geteuid() != 0 or shutil.which("ip") is None):
        ap.error("af_packet needs root and iproute2")
    if a.zero_copy:
        if "ring" in kinds:
            ap.error("--zero-copy: droce-perf runs two processes (memif, af_packet)")
        return zero_copy(kinds, a.perf, a.runs, a.seconds, Meter(a.load_max))
    tmp = tempfile.mkdtemp(prefix="droce-bench-")
    tag = os.getpid() % 100000
    meter = Meter(a.load_max)
    args = Args(a)
    results = {}
    try:
        for k in kinds:
            results[k] = bench_pmd(k, tmp, tag, args, a.runs, a.quick, meter)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text, md = report(kinds, results, a.quick, a.runs, meter)
    print("\n".join(text))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(md) + "\n")
    missing = sum(1 for k in kinds for r in results[k][0] for v in r.values()
                  if v is None or v.value is None)
    if missing:
        log(f"droce-bench: {missing} measurement(s) failed (shown as '-' if no run had them)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
