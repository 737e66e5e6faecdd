#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce vs raw DPDK forwarding over the same PMD, in the same run
(usertools/droce-bench runs this; see BENCHMARKS.md "droce vs raw forwarding").

Per PMD (net_memif between two processes, net_af_packet on a veth pair
between two network namespaces; net_ring in one process: raw only):
  raw   test/bench/raw_fwd: frame rate of the frame sizes droce's messages
        produce, and the round trip of the 8-byte WRITE's frame;
  droce app/droce-perf, unchanged: write_bw -s 64, write_bw -s 65536 (path
        MTU 1024 and, with --droce-mtu=4200, 4096), write_lat -s 8 and every
        other test (read_bw, read_lat, send_bw, send_lat, atomic_bw, atomic_lat).
Each droce row gets the raw figure it is divided by:
  bandwidth: droce's average MB/s / (raw Mpps of its data frame x payload bytes
             per frame), or for 8-byte atomics message rate / raw Mpps of the
             smallest frame;
  latency:   droce's t_typical / raw one-way time (median round trip / 2) for
             write_lat and send_lat (perftest reports half round trips), / the
             full raw round trip for read_lat and atomic_lat (client round trips).
With --runs N every figure is the median of N runs (each run measures raw and
droce back to back).  Addresses: 198.18.12.1/2 (veth kernel ends, TCP side
channel), 198.18.13.1/2 (droce).  Only processes this script started are
stopped, by their own handle; the namespaces are deleted at exit.
"""
import argparse
import os
import re
import shutil
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

DASHES = "-" * 87
NUM = r"(\d+(?:\.\d+)?)"
BW_ROW = re.compile(r"^ (\d+)\s+(\d+)\s+" + r"\s+".join([NUM] * 3) + r"\s*$")
LAT_ROW = re.compile(r"^ (\d+)\s+(\d+)\s+" + r"\s+".join([NUM] * 7) + r"\s*$")
RAW_RE = re.compile(r"^raw_fwd: (.*)$", re.M)

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

    def argv(self, binary, side, n):
        """side 0 = server (memif server), 1 = client; n: the pair's number."""
        prefix = f"db{self.tag}x{n}{'sc'[side]}"
        eal = ["--no-pci", "-l", str(side % max(1, os.cpu_count() or 1)),
               f"--file-prefix={prefix}", "--log-level=lib.eal:error"] + no_huge()
        if self.kind == "memif":
            sock = os.path.join(self.tmp, f"m{n}.sock")
            role = "server" if side == 0 else "client"
            eal.append(f"--vdev=net_memif0,role={role},socket={sock},socket-abstract=no,bsize=8192")
            return [binary] + eal
        eal.append(f"--vdev=net_af_packet0,iface={self.ifs[side]},framesz=8192,blocksz=8192")
        return ["ip", "netns", "exec", self.ns[side], binary] + eal

    def pair_argv(self, binary):
        """Both sides' argv, a new pair (memif socket, file prefixes)."""
        self.n += 1
        return self.argv(binary, 0, self.n), self.argv(binary, 1, self.n)


def run_two(srv, cli, ready, timeout):
    """Start srv, wait until ready(proc, out_path), run cli; (rc_s, rc_c, out_s, out_c, err)."""
    tmp = tempfile.mkdtemp(prefix="droce-bench-")
    paths = [os.path.join(tmp, n) for n in ("s.out", "c.out", "s.err", "c.err")]
    files = [open(p, "w") for p in paths]
    ps = pc = None
    try:
        ps = subprocess.Popen(srv, stdout=files[0], stderr=files[2], stdin=subprocess.DEVNULL)
        end = time.monotonic() + 30
        while not ready(ps, paths[0]):
            if ps.poll() is not None or time.monotonic() > end:
                return None
            time.sleep(0.02)
        pc = subprocess.Popen(cli, stdout=files[1], stderr=files[3], stdin=subprocess.DEVNULL)
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


# ---- raw ---------------------------------------------------------------------

def raw_rate(pmd, raw, size, seconds):
    """Delivered Mpps of size-byte frames, or None."""
    if pmd.kind == "ring":
        p = subprocess.run([raw, "--no-pci", "-l", "0-1", f"--file-prefix=dbr{pmd.tag}",
                            "--log-level=lib.eal:error"] + no_huge() +
                           ["--", "ring-rate", "-s", str(size), "-t", str(seconds)],
                           capture_output=True, text=True, timeout=seconds + 60)
        d = raw_fields(p.stdout)
    else:
        s, c = pmd.pair_argv(raw)
        res = run_two(s + ["--", "sink"], c + ["--", "gen", "-s", str(size), "-t", str(seconds)],
                      lambda proc, out: file_has(out, "raw_fwd: ready"), seconds + 60)
        if res is None or res[0] != 0 or res[1] != 0:
            return None
        d = raw_fields(res[2])
    try:
        return float(d["mpps"]) if float(d["mpps"]) > 0 else None
    except (KeyError, ValueError):
        return None


def raw_rtt(pmd, raw, size, iters):
    """Median round trip in usec, or None."""
    if pmd.kind == "ring":
        p = subprocess.run([raw, "--no-pci", "-l", "0-1", f"--file-prefix=dbr{pmd.tag}",
                            "--log-level=lib.eal:error"] + no_huge() +
                           ["--", "ring-ping", "-s", str(size), "-n", str(iters)],
                           capture_output=True, text=True, timeout=120)
        d = raw_fields(p.stdout)
    else:
        s, c = pmd.pair_argv(raw)
        res = run_two(s + ["--", "echo"], c + ["--", "ping", "-s", str(size), "-n", str(iters)],
                      lambda proc, out: file_has(out, "raw_fwd: ready"), 120)
        if res is None or res[1] != 0:
            return None
        d = raw_fields(res[3])
    try:
        return float(d["rtt_median_us"])
    except (KeyError, ValueError):
        return None


def no_huge():
    return ["--no-huge", "-m", "512"] if os.environ.get("DROCE_NO_HUGE") == "1" else []


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


def droce_perf(pmd, perf, test, args, extra=(), port=None):
    """droce-perf test between two processes: bw -> (MB/s avg, Mpps), lat -> t_typical."""
    s, c = pmd.pair_argv(perf)
    port = port or 20000 + (os.getpid() * 7 + pmd.n * 131) % 40000
    s += ["--", "--droce-ipv4=198.18.13.1/24"] + list(extra) + [test, "-p", str(port)]
    c += (["--", "--droce-ipv4=198.18.13.2/24"] + list(extra) +
          [test] + list(args) + ["-p", str(port), pmd.server_addr])
    res = run_two(s, c, lambda proc, out: listening(proc.pid, port), 120)
    if res is None or res[0] != 0 or res[1] != 0:
        if res is not None:
            log(f"  droce-perf {test} {' '.join(args)}: exit {res[0]}/{res[1]}: "
                f"{res[4].strip().splitlines()[-1:] if res[4].strip() else ''}")
        return None
    if test.endswith("_bw"):
        rows = table_rows(res[3], BW_ROW)
        return (rows[0][3], rows[0][4]) if rows else None
    rows = table_rows(res[3], LAT_ROW) or table_rows(res[2], LAT_ROW)
    return rows[0][4] if rows else None


# ---- the benchmark -----------------------------------------------------------

# (label, test, args, extra droce options, kind, raw reference)
#   raw reference: ("rate", frame size, payload bytes per frame) or
#                  ("msg", frame size) or ("rtt", frame size, divisor)
def cases(quick):
    c = [
        ("write_bw -s 64", "write_bw", ["-s", "64", "-D", "2"], [], ("rate", FRAME_W64, 64)),
        ("write_bw -s 65536 (MTU 1024)", "write_bw", ["-s", "65536", "-D", "2"], [],
         ("rate", FRAME_MTU[1024], 1024)),
        ("write_bw -s 65536 (MTU 4096)", "write_bw", ["-s", "65536", "-D", "2"],
         ["--droce-mtu=4200"], ("rate", FRAME_MTU[4096], 4096)),
        ("write_lat -s 8", "write_lat", ["-s", "8", "-n", "5000"], [], ("rtt", FRAME_W8, 2)),
        ("read_bw -s 65536", "read_bw", ["-s", "65536", "-D", "2"], [], ("rate", FRAME_MTU[1024], 1024)),
        ("read_lat -s 8", "read_lat", ["-s", "8", "-n", "5000"], [], ("rtt", FRAME_W8, 1)),
        ("send_bw -s 65536", "send_bw", ["-s", "65536", "-D", "2"], [], ("rate", FRAME_MTU[1024], 1024)),
        ("send_lat -s 8", "send_lat", ["-s", "8", "-n", "5000"], [], ("rtt", FRAME_W8, 2)),
        ("atomic_bw", "atomic_bw", ["-D", "2"], [], ("msg", FRAME_W64)),
        ("atomic_lat", "atomic_lat", ["-n", "5000"], [], ("rtt", FRAME_W8, 1)),
    ]
    return c[:4] if quick else c


def one_run(kind, tmp, tag, raw, perf, seconds, quick):
    """{('raw', what): value, (label): (droce value, raw value, ratio)}"""
    pmd = Pmd(kind, tmp, tag)
    out = {}
    try:
        sizes = sorted({FRAME_W64, FRAME_MTU[1024], FRAME_MTU[4096]})
        for size in sizes:
            log(f"  {kind}: raw rate, {size}-byte frames")
            out[("rate", size)] = raw_rate(pmd, raw, size, seconds)
        log(f"  {kind}: raw round trip, {FRAME_W8}-byte frames")
        out[("rtt", FRAME_W8)] = raw_rtt(pmd, raw, FRAME_W8, 20000)
        if kind == "ring":
            return out
        for label, test, args, extra, ref in cases(quick):
            log(f"  {kind}: droce-perf {label}")
            out[label] = droce_perf(pmd, perf, test, args, extra)
    finally:
        pmd.close()
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


def report(kinds, runs, quick, nruns):
    """Lines of the table (text) and of the markdown section."""
    text, md = [], []
    hdr = f"{'PMD':10} {'test':30} {'droce':>12} {'raw':>12} {'ratio':>7}  unit / raw reference"
    text += [hdr, "-" * len(hdr)]
    md += ["| PMD | test | droce | raw | droce/raw | unit, raw reference |",
           "|---|---|---:|---:|---:|---|"]
    for kind in kinds:
        rs = runs[kind]
        rate = {s: med([r.get(("rate", s)) for r in rs]) for s in (FRAME_W64, FRAME_MTU[1024], FRAME_MTU[4096])}
        rtt = med([r.get(("rtt", FRAME_W8)) for r in rs])
        for s in sorted(rate):
            row = (kind, f"raw rate {s} B frames", None, rate[s], None, "Mpps")
            text.append(f"{kind:10} {row[1]:30} {'':>12} {fmt(rate[s], '12.3f')} {'':>7}  Mpps")
            md.append(f"| {kind} | raw rate, {s}-byte frames | | {fmt(rate[s], '.3f')} | | Mpps |")
        text.append(f"{kind:10} {'raw round trip ' + str(FRAME_W8) + ' B':30} {'':>12} {fmt(rtt, '12.2f')} {'':>7}  usec (median)")
        md.append(f"| {kind} | raw round trip, {FRAME_W8}-byte frames | | {fmt(rtt, '.2f')} | | usec, median |")
        if kind == "ring":
            continue
        for label, test, args, extra, ref in cases(quick):
            vals = [r.get(label) for r in rs]
            if ref[0] in ("rate", "msg"):
                mbs = med([v[0] for v in vals if v is not None])
                mpps = med([v[1] for v in vals if v is not None])
                r_mpps = rate.get(ref[1])
                if ref[0] == "rate":
                    raw_v = r_mpps * ref[2] if r_mpps is not None else None   # MB/s (1e6)
                    d_v, unit = mbs, f"MB/s; raw = Mpps({ref[1]} B) x {ref[2]} B"
                else:
                    raw_v, d_v, unit = r_mpps, mpps, f"Mpps (msg rate); raw = Mpps({ref[1]} B)"
            else:
                d_v = med(vals)
                raw_v = rtt / ref[2] if rtt is not None else None
                unit = "usec t_typical; raw = " + ("RTT/2" if ref[2] == 2 else "RTT") + f" of {ref[1]} B"
            ratio = d_v / raw_v if d_v is not None and raw_v else None
            p = "4f" if ref[0] == "msg" else "2f"      # message rates are small numbers
            text.append(f"{kind:10} {label:30} {fmt(d_v, '12.' + p)} {fmt(raw_v, '12.' + p)} "
                        f"{fmt(ratio, '7.3f')}  {unit}")
            md.append(f"| {kind} | {label} | {fmt(d_v, '.' + p)} | {fmt(raw_v, '.' + p)} | "
                      f"{fmt(ratio, '.3f')} | {unit} |")
    text.append(f"(median of {nruns} run(s); bandwidth ratio goal >= 0.70, latency ratio goal <= 1.5)")
    return text, md


def main():
    global verbose
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--perf", required=True)
    ap.add_argument("--raw", required=True)
    ap.add_argument("--pmd", default="ring,memif,af_packet")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0, help="raw rate duration")
    ap.add_argument("--quick", action="store_true", help="write tests only")
    ap.add_argument("--markdown", help="also write the table as a markdown section here")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    verbose = a.verbose
    kinds = [k for k in a.pmd.split(",") if k]
    for k in kinds:
        if k not in ("ring", "memif", "af_packet"):
            ap.error(f"unknown PMD {k}")
    if "af_packet" in kinds and (os.geteuid() != 0 or shutil.which("ip") is None):
        ap.error("af_packet needs root and iproute2")
    tmp = tempfile.mkdtemp(prefix="droce-bench-")
    tag = os.getpid() % 100000
    runs = {k: [] for k in kinds}
    try:
        for r in range(a.runs):
            for k in kinds:
                log(f"run {r + 1}/{a.runs}: {k}")
                runs[k].append(one_run(k, tmp, tag, os.path.abspath(a.raw), os.path.abspath(a.perf),
                                       a.seconds, a.quick))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text, md = report(kinds, runs, a.quick, a.runs)
    print("\n".join(text))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join(md) + "\n")
    missing = sum(1 for k in kinds for r in runs[k] for v in r.values() if v is None)
    if missing:
        log(f"droce-bench: {missing} measurement(s) failed (shown as '-' if no run had them)")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
