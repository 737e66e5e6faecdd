#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce-perf <-> droce-perf for every test name, between two processes over
--pmd af_packet (default: net_af_packet on a veth pair between two network
namespaces this script creates and deletes) or --pmd memif (net_memif
server/client over a unix socket in a private directory; TCP over loopback).

Each case starts the server, waits for its TCP listener, starts the client,
waits for both (with a timeout) and checks:
  - exit status 0 on both sides (droce-perf exits 1 when data is wrong);
  - perftest's header line, character for character, and the dashed lines;
  - bandwidth rows: #bytes and #iterations as asked, non-zero message rate
    agreeing with the average bandwidth,
    peak >= average; with --report_gbits the Gb/sec header;
  - latency rows: #bytes, #iterations, all nine fields present and ordered
    min <= typical <= max, min <= avg <= max, p99 <= p99.9 <= max;
  - the server's table too where perftest 4.5-0.17 prints one (every bw
    test: the client's rows, or its own for send_bw; write_lat, send_lat);
  - --json objects, --output's single number, -a's sizes 2..2^23.
Plus: --help without EAL, an unknown test, -q 2 refused.
--starts N: instead, N write_lat runs back to back, each a fresh pair of
processes whose ports and neighbours start cold (net_memif's server refuses
its first sends until the client's first receive): the transport's
recovery counters of both sides (DROCE_COUNTERS=1) say no retransmit
timeout, no retransmission: nothing droce sent at start-up was lost.
--cm: instead, the -R (perftest's rdma_cm mode) cases: no TCP, the client
connects to the server's droce address through RDMA CM (lib/cm), the side
channel and the test QP each a CM connection; the server is ready once it
prints perftest's "Waiting for client to connect" (its CM listener is up).
droce uses 198.18.6.1/2, the kernel veth ends 198.18.8.1/2 (TCP; memif: 127.0.0.1).
Only processes this script started are ever killed (by their Popen handle).
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

CASE_TIMEOUT = 40.0
START_TIMEOUT = 20.0

DASHES = "-" * 87
HDR_BW = " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]"
HDR_BW_G = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]"
HDR_LAT = (" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]"
           "    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ")
NUM = r"(\d+(?:\.\d+)?)"
BW_ROW = re.compile(r"^ (\d+)\s+(\d+)\s+" + r"\s+".join([NUM] * 3) + r"\s*$")
LAT_ROW = re.compile(r"^ (\d+)\s+(\d+)\s+" + r"\s+".join([NUM] * 7) + r"\s*$")

PASSED_RE = re.compile(r"^droce-perf: data check passed: ", re.M)
NOCHK_RE = re.compile(r"^droce-perf: no data check: (.*)$", re.M)
SEED_RE = re.compile(r"^droce-perf: data pattern seed (0x[0-9a-f]{8})$", re.M)
COUNTERS_RE = re.compile(r"^droce counters:(.*)$", re.M)
NO_RECOVERY = ("retransmit_timeouts", "retransmitted_pkts", "completer_retry_err")

failures = []


def fail(case, msg):
    failures.append(f"{case}: {msg}")
    print(f"not ok - {case}: {msg}", flush=True)


def free_port(port):
    """port, or the next one up that this namespace can bind: below the
    kernel's ephemeral range (32768-60999), where another test's
    connection took 36676 and the server "Couldn't listen"."""
    for k in range(12000):
        cand = 20000 + (port - 20000 + k) % 12000
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("0.0.0.0", cand))
                return cand
            except OSError:
                continue
    raise SystemExit("FAIL: no free TCP port in 20000-31999")


def listening(pid, port):
    for name in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{name}") as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == "0A" and int(fields[1].rsplit(":", 1)[1], 16) == port:
                        return True
        except (OSError, StopIteration):
            pass
    return False


# -R: the client connects to the server's droce address
CM_SERVER_ADDR = "198.18.6.1"
WAITING = "* Waiting for client to connect... *"


def waiting(out_path):
    try:
        return WAITING in read(out_path).splitlines()
    except OSError:
        return False


class Veth:
    def __init__(self, tag):
        self.ns = [f"pfa{tag}", f"pfb{tag}"]
        self.ifs = [f"vfa{tag}", f"vfb{tag}"]
        run = lambda *a: subprocess.run(a, check=True)
        for n in self.ns:
            run("ip", "netns", "add", n)
        run("ip", "link", "add", self.ifs[0], "type", "veth", "peer", "name", self.ifs[1])
        for i in range(2):
            run("ip", "link", "set", self.ifs[i], "netns", self.ns[i])
            run("ip", "-n", self.ns[i], "link", "set", "lo", "up")
            run("ip", "-n", self.ns[i], "link", "set", self.ifs[i], "up")
            run("ip", "-n", self.ns[i], "addr", "add", f"198.18.8.{i + 1}/24", "dev", self.ifs[i])

    def close(self):
        for n in self.ns:
            subprocess.run(["ip", "netns", "del", n], check=False)

    server_addr = "198.18.8.1"

    def cmd(self, binary, side, prefix, args):
        eal = eal_args(side, prefix) + [f"--vdev=net_af_packet0,iface={self.ifs[side]}"]
        return (["ip", "netns", "exec", self.ns[side], binary] + eal +
                ["--", f"--droce-ipv4=198.18.6.{side + 1}/24"] + args)


class Memif:
    """net_memif between two processes: the server side (0) listens on a
    socket path in the test's private directory (socket-abstract=no, see
    drivers/ethdev/README.md), one socket per case."""
    server_addr = "127.0.0.1"

    def __init__(self, tmp):
        self.tmp = tmp

    def close(self):
        pass

    def cmd(self, binary, side, prefix, args):
        sock = os.path.join(self.tmp, f"{prefix}.sock")
        role = "server" if side == 0 else "client"
        eal = eal_args(side, prefix) + [
            f"--vdev=net_memif0,role={role},socket={sock},socket-abstract=no,bsize=8192"]
        return [binary] + eal + ["--", f"--droce-ipv4=198.18.6.{side + 1}/24"] + args


# The QPs' local ACK timeout (-u): 4.096 us x 2^18 = 1.07 s, x 8 = 8.6 s of
# retry budget, where perftest's 14 gives 0.54 s: a shared CI machine
# deschedules a side for up to 1.8 s, and no test here is about the budget.
QP_TIMEOUT = 18


def eal_args(side, prefix):
    ncpu = max(1, os.cpu_count() or 1)
    eal = ["--no-pci", "-l", str(side % ncpu), f"--file-prefix={prefix}{'sc'[side]}",
           "--log-level=lib.eal:error"]
    if os.environ.get("DROCE_NO_HUGE") == "1":
        eal += ["--no-huge", "-m", "512"]
    return eal


def stop(p):
    if p is not None and p.poll() is None:
        p.kill()
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def run_pair(veth, tmp, case, case_id, binary, sargs, cargs, port):
    outs = [os.path.join(tmp, f"{case_id}.{s}.out") for s in "sc"]
    errs = [os.path.join(tmp, f"{case_id}.{s}.err") for s in "sc"]
    procs, files = [None, None], []
    prefix = f"pf{os.getpid() % 100000}x{case_id}"
    try:
        for side in (0, 1):
            args = (sargs if side == 0 else cargs) + ["-p", str(port)]
            cm = "-R" in args
            if not cm:
                args += ["-u", str(QP_TIMEOUT)]
            if side == 1:
                args.append(CM_SERVER_ADDR if cm else veth.server_addr)
            fo, fe = open(outs[side], "w"), open(errs[side], "w")
            files += [fo, fe]
            procs[side] = subprocess.Popen(veth.cmd(binary, side, prefix, args), stdout=fo,
                                           stderr=fe, stdin=subprocess.DEVNULL)
            if side == 1:
                break
            deadline = time.monotonic() + START_TIMEOUT
            while not (waiting(outs[0]) if cm else listening(procs[0].pid, port)):
                if procs[0].poll() is not None:
                    fail(case, f"server exited early ({procs[0].returncode}): "
                         f"{read(errs[0]).strip()[-400:]}")
                    return None
                if time.monotonic() > deadline:
                    fail(case, "server did not listen in time")
                    return None
                time.sleep(0.05)
        deadline = time.monotonic() + CASE_TIMEOUT
        while time.monotonic() < deadline and any(p.poll() is None for p in procs):
            if any(p.returncode not in (None, 0) for p in procs):
                deadline = min(deadline, time.monotonic() + 3.0)
            time.sleep(0.05)
        if any(p.poll() is None for p in procs) and all(p.returncode in (None, 0) for p in procs):
            tails = "; ".join(f"{n}: {' | '.join((read(o) + read(e)).strip().splitlines()[-3:])}"
                              for n, o, e in zip(("server", "client"), outs, errs))
            fail(case, f"timed out ({tails})")
            return None
        for p in procs:
            stop(p)
        return [p.returncode for p in procs], [read(o) for o in outs], [read(e) for e in errs]
    finally:
        for p in procs:
            stop(p)
        for f in files:
            f.close()


def rows(case, who, out, header, row_re):
    lines = out.splitlines()
    if header not in lines:
        fail(case, f"{who}: header line missing or different: {out.strip()[-600:]}")
        return None
    i = lines.index(header)
    if i == 0 or lines[i - 1] != DASHES:
        fail(case, f"{who}: no dashed line before the header")
        return None
    got = []
    for line in lines[i + 1:]:
        if line == DASHES:
            return got
        if line.startswith("{"):
            continue
        m = row_re.match(line)
        if m is None:
            fail(case, f"{who}: malformed result row {line!r}")
            return None
        got.append([int(m.group(1)), int(m.group(2))] + [float(x) for x in m.groups()[2:]])
    fail(case, f"{who}: no dashed line after the results")
    return None


def check_bw(case, who, out, sizes, iters, gbits):
    r = rows(case, who, out, HDR_BW_G if gbits else HDR_BW, BW_ROW)
    if r is None:
        return False
    if [x[0] for x in r] != sizes:
        fail(case, f"{who}: sizes {[x[0] for x in r]}, expected {sizes}")
        return False
    for size, it, peak, avg, mpps in r:
        if (iters is not None and it != iters) or it < 1:
            fail(case, f"{who}: {it} iterations, expected {iters}")
            return False
        # avg BW and MsgRate must agree (MB = 2^20 bytes, Gb = 10^9 bits);
        # on a loaded machine a small-message avg can print as 0.00, and
        # MsgRate is printed to 6 decimals: +-0.5e-6 Mpps is worth
        # `rounding` of BW (0.034 Gb/s at 8 MB, where 10 msg/s is 1e-05)
        unit = 8 / 1e9 if gbits else 1 / 2**20
        implied = size * mpps * 1e6 * unit
        rounding = size * 0.5e-6 * 1e6 * unit
        if mpps <= 0 or peak < avg or abs(avg - implied) > 0.011 + 0.02 * implied + rounding:
            fail(case, f"{who}: rates peak {peak} avg {avg} msgrate {mpps} "
                       f"(avg implied by msgrate: {implied:.4f})")
            return False
    return True


def check_lat(case, who, out, sizes, iters):
    r = rows(case, who, out, HDR_LAT, LAT_ROW)
    if r is None:
        return False
    if [x[0] for x in r] != sizes:
        fail(case, f"{who}: sizes {[x[0] for x in r]}, expected {sizes}")
        return False
    for size, it, tmin, tmax, typ, avg, stdev, p99, p999 in r:
        if it != iters:
            fail(case, f"{who}: {it} iterations, expected {iters}")
            return False
        if not (0 < tmin <= typ <= tmax and tmin <= avg <= tmax and
                p99 <= p999 <= tmax and stdev >= 0):
            fail(case, f"{who}: fields out of order: min {tmin} typical {typ} max {tmax} "
                 f"avg {avg} p99 {p99} p99.9 {p999}")
            return False
    return True


def check_data(case, errs, check):
    """Each size's data was checked: a "data check passed" line per size
    (either side), the same pattern seed on both sides, and "no data check"
    only from a read server, whose client checks."""
    sizes = len(check[1]) if check[0] in ("bw", "lat") else 1
    passed = sum(len(PASSED_RE.findall(e)) for e in errs)
    seeds = [SEED_RE.findall(e) for e in errs]
    nochk = [(who, m) for who, e in zip(("server", "client"), errs) for m in NOCHK_RE.findall(e)]
    if passed < sizes:
        fail(case, f"{passed} 'data check passed' lines for {sizes} size(s)")
        return False
    if len(seeds[0]) != 1 or seeds[0] != seeds[1]:
        fail(case, f"pattern seeds: server {seeds[0]}, client {seeds[1]}")
        return False
    bad = [n for n in nochk if n != ("server", "the client checks what it read")]
    if bad:
        fail(case, f"no data check: {bad}")
        return False
    return True


def check_no_recovery(case, errs):
    """--starts: each side printed its counters once, the recovery ones 0."""
    for who, e in zip(("server", "client"), errs):
        lines = COUNTERS_RE.findall(e)
        if len(lines) != 1:
            fail(case, f"{who}: {len(lines)} 'droce counters' lines")
            return False
        got = dict(kv.split("=") for kv in lines[0].split())
        bad = {k: got.get(k) for k in NO_RECOVERY if got.get(k) != "0"}
        if bad:
            fail(case, f"{who}: {bad}")
            return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--perf", required=True, help="droce-perf")
    ap.add_argument("--link", help="a droce_<test> symlink to droce-perf (argv[0] dispatch)")
    ap.add_argument("--pmd", choices=("af_packet", "memif"), default="af_packet")
    ap.add_argument("--repeat", type=int, default=1, help="run the pair cases N times")
    ap.add_argument("--cm", action="store_true", help="the -R (RDMA CM) cases instead")
    ap.add_argument("--starts", type=int, default=0,
                    help="N cold write_lat starts instead, no recovery counted")
    a = ap.parse_args()
    perf = os.path.abspath(a.perf)
    if a.pmd == "af_packet" and (os.geteuid() != 0 or shutil.which("ip") is None):
        print("1..0 # SKIP needs root and iproute2")
        return 77
    tmp = tempfile.mkdtemp(prefix="droce-perf-")
    link = os.path.abspath(a.link) if a.link else os.path.join(tmp, "droce_write_bw")
    if not a.link:
        os.symlink(perf, link)
    linkdir = os.path.dirname(link)
    tag = os.getpid() % 100000
    veth = None
    total = 0
    all_sizes = [2 ** k for k in range(1, 24)]
    # (name, binary, server args, client args, check)
    bw = lambda sizes, iters, gbits=False: ("bw", sizes, iters, gbits)
    lat = lambda sizes, iters: ("lat", sizes, iters)
    cases = [
        ("write_bw", perf, ["write_bw"], ["write_bw", "-s", "4096", "-n", "2000"], bw([4096], 2000), True),
        ("write_lat", perf, ["write_lat"], ["write_lat", "-s", "64", "-n", "500"], lat([64], 500), True),
        ("read_bw", perf, ["read_bw"], ["read_bw", "-s", "8192", "-n", "500", "-t", "32", "-Q", "8"],
         bw([8192], 500), True),
        ("read_lat", perf, ["read_lat"], ["read_lat", "-s", "3000", "-n", "300"], lat([3000], 300), False),
        ("send_bw", perf, ["send_bw"], ["send_bw", "-s", "1024", "-n", "2000", "-r", "64"],
         bw([1024], 2000), True),
        ("send_lat", perf, ["send_lat"], ["send_lat", "-s", "32", "-n", "500", "-I", "64"], lat([32], 500), True),
        ("atomic_bw", perf, ["atomic_bw"], ["atomic_bw", "-n", "2000"], bw([8], 2000), True),
        ("atomic_lat", perf, ["atomic_lat"], ["atomic_lat", "-n", "300"], lat([8], 300), False),
        ("atomic_bw CMP_AND_SWAP --json", perf, ["atomic_bw"],
         ["atomic_bw", "-A", "CMP_AND_SWAP", "-n", "1000", "--json"], bw([8], 1000), True),
        ("atomic_lat CMP_AND_SWAP", perf, ["atomic_lat"], ["atomic_lat", "-A", "CMP_AND_SWAP", "-n", "200"],
         lat([8], 200), False),
        ("write_bw -a --report_gbits", perf, ["write_bw", "--report_gbits"], ["write_bw", "-a", "-n", "5", "--report_gbits"],
         bw(all_sizes, 5, True), True),
        ("droce_read_bw symlink", os.path.join(linkdir, "droce_read_bw"), [], ["-s", "65536", "-n", "100"],
         bw([65536], 100), True),
        ("send_bw -D 1", perf, ["send_bw"], ["send_bw", "-D", "1", "-s", "512"], bw([512], None), True),
        ("write_lat -m 512 -s 2000", perf, ["write_lat"], ["write_lat", "-m", "512", "-s", "2000", "-n", "200"],
         lat([2000], 200), True),
        ("read_bw --output=bandwidth", perf, ["read_bw"], ["read_bw", "-n", "200", "--output=bandwidth"],
         ("number",), False),
    ]
    cm_cases = [
        ("write_bw -R", perf, ["write_bw", "-R"], ["write_bw", "-R", "-s", "4096", "-n", "2000"],
         bw([4096], 2000), True),
        ("read_lat -R", perf, ["read_lat", "-R"], ["read_lat", "-R", "-s", "3000", "-n", "300"],
         lat([3000], 300), False),
        ("send_bw -R", perf, ["send_bw", "-R"], ["send_bw", "-R", "-s", "1024", "-n", "2000", "-r", "64"],
         bw([1024], 2000), True),
        ("read_bw -R", perf, ["read_bw", "-R"], ["read_bw", "-R", "-s", "8192", "-n", "500", "-t", "32"],
         bw([8192], 500), True),
        ("write_lat -R", perf, ["write_lat", "-R"], ["write_lat", "-R", "-s", "64", "-n", "500"],
         lat([64], 500), True),
        ("atomic_bw -R", perf, ["atomic_bw", "-R"], ["atomic_bw", "-R", "-n", "1000"], bw([8], 1000), True),
    ]
    if a.cm:
        cases = cm_cases
    if a.starts > 0:
        os.environ["DROCE_COUNTERS"] = "1"
        cases = [(f"write_lat start {k + 1}", perf, ["write_lat"], ["write_lat", "-s", "64", "-n", "100"],
                  lat([64], 100), True) for k in range(a.starts)]
    try:
        if not a.link:
            for t in ("read_bw",):
                os.symlink(perf, os.path.join(tmp, "droce_" + t))
        veth = Veth(tag) if a.pmd == "af_packet" else Memif(tmp)
        runs = [(r, c) for r in range(max(1, a.repeat)) for c in cases]
        for i, (rep, (name, binary, sargs, cargs, check, server_table)) in enumerate(runs):
            if a.repeat > 1:
                name = f"{name} #{rep + 1}"
            total += 1
            port = free_port(20000 + (os.getpid() * 7 + i * 131) % 12000)
            t0 = time.monotonic()
            res = run_pair(veth, tmp, name, i, binary, sargs, cargs, port)
            if res is None:
                continue
            rcs, outs, errs = res
            ok = True
            for side, who in ((0, "server"), (1, "client")):
                if rcs[side] != 0:
                    fail(name, f"{who} exited {rcs[side]}; stderr: {errs[side].strip()[-400:]}")
                    ok = False
            if not ok:
                continue
            checks = [("client", outs[1])] + ([("server", outs[0])] if server_table else [])
            for who, out in checks:
                if check[0] == "bw":
                    ok &= check_bw(name, who, out, check[1], check[2], check[3])
                elif check[0] == "lat":
                    ok &= check_lat(name, who, out, check[1], check[2])
                else:
                    lines = out.strip().splitlines()
                    try:
                        ok &= float(lines[-1]) > 0 and len(lines) == 1
                    except (ValueError, IndexError):
                        ok = False
                    if not ok:
                        fail(name, f"expected one number, got {out.strip()[-300:]!r}")
            ok &= check_data(name, errs, check)
            if a.starts > 0:
                ok &= check_no_recovery(name, errs)
            for who, e in zip(("server", "client"), errs):
                if "did not complete the disconnect" in e:
                    fail(name, f"{who}: the CM disconnect did not complete")
                    ok = False
            if "--json" in cargs:
                objs = [json.loads(x) for x in outs[1].splitlines() if x.startswith("{")]
                if len(objs) != 1 or objs[0].get("iterations") != 1000 or objs[0].get("msg_rate", 0) <= 0:
                    fail(name, f"--json objects: {objs}")
                    ok = False
            if ok:
                print(f"ok - {name} ({time.monotonic() - t0:.1f} s)", flush=True)

        def expect(name, args, rc, text):
            nonlocal total
            total += 1
            p = subprocess.run([perf] + args, capture_output=True, text=True, timeout=30, cwd=tmp)
            if p.returncode != rc or text not in p.stdout + p.stderr:
                fail(name, f"exit {p.returncode} (want {rc}), want {text!r}: {(p.stdout + p.stderr)[-300:]}")
            else:
                print(f"ok - {name}", flush=True)
        eal = lambda k: ["--no-pci", "--no-huge", "-m", "256", "-l", "0",
                         f"--file-prefix=pfn{tag}x{k}", "--log-level=lib.eal:error", "--"]
        if not a.cm and a.starts == 0:
            expect("--help without EAL", ["--help"], 0, "write_bw write_lat")
            expect("unknown test", eal(1) + ["bogus_bw"], 1, "unknown test 'bogus_bw'")
            expect("-q 2 refused", eal(2) + ["write_bw", "-q", "2"], 1, "Number of QPs")
    finally:
        if veth is not None:
            veth.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"# {total - len(failures)}/{total} passed")
    for f in failures:
        print(f"# FAILED {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
