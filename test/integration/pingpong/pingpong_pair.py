#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce-pingpong <-> droce-pingpong (and droce-ud-pingpong, droce-srq-pingpong)
in two processes.

Each case starts a server, waits for its "local address" line and its TCP
listening socket, starts the client, waits for both (with a timeout) and
checks what ibv_rc_pingpong / ibv_ud_pingpong users look at:
  - exit status 0 on both sides;
  - the address lines: each side's "remote address" is the other side's
    "local address" (LID, QPN, PSN, GID), the GIDs are the IPv4-mapped
    198.18.5.1 / 198.18.5.2, the UD local line keeps ud_pingpong's ':';
    SRQ: exactly -q local and -q remote lines a side, in QP order, the QPNs
    distinct;
  - "<size*iters*2> bytes in ..." and "<iters> iters in ..." on both sides;
  - with -c, on both sides "data check passed" for all size bytes and no
    "invalid data in page".
Plus failure paths: unsupported options, an unknown device, a UD message
larger than the port MTU, --help without EAL, srq_pingpong's -q/-r checks.

Links (--link):
  memif      net_memif server/client over a unix socket (a path in the test's
             private directory, socket-abstract=no); TCP over loopback
  af_packet  a veth pair between two network namespaces the test creates;
             the kernel ends carry 198.18.7.1/2 for the TCP exchange, droce
             uses 198.18.5.1/2 through net_af_packet (needs root)
Only 198.18.0.0/15 addresses are used.  Only processes this script started
are ever killed (by their own Popen handle).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

CASE_TIMEOUT = 90.0
START_TIMEOUT = 30.0

LOCAL_RE = re.compile(r"^  local address:  LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), "
                      r"PSN 0x([0-9a-f]{6})([,:]) GID (\S+)$", re.M)
REMOTE_RE = re.compile(r"^  remote address: LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), "
                       r"PSN 0x([0-9a-f]{6}), GID (\S+)$", re.M)
BYTES_RE = re.compile(r"^(\d+) bytes in (\d+\.\d\d) seconds = (-?[\d.]+|inf|nan) Mbit/sec$", re.M)
ITERS_RE = re.compile(r"^(\d+) iters in (\d+\.\d\d) seconds = (-?[\d.]+|inf|nan) usec/iter$", re.M)

CHK_PASSED_RE_FMT = r"^data check passed: all {} bytes received as the -c pattern "

failures = []


def fail(case, msg):
    failures.append(f"{case}: {msg}")
    print(f"not ok - {case}: {msg}", flush=True)


def listening(pid, port):
    """True when the process's network namespace has a TCP listener on port."""
    for name in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{name}") as f:
                next(f)
                for line in f:
                    fields = line.split()
                    local, state = fields[1], fields[3]
                    if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                        return True
        except (OSError, StopIteration):
            pass
    return False


def free_port(seed):
    """A TCP port nobody listens on in our namespace (checked, not reserved)."""
    for k in range(200):
        port = 20000 + (seed * 7 + k * 13) % 40000
        if not listening(os.getpid(), port):
            return port
    return 20000 + seed % 40000


class Link:
    """Where the two processes run and how they reach each other."""

    def __init__(self, kind, tmp, tag):
        self.kind = kind
        self.tmp = tmp
        self.tag = tag
        self.ns = []
        if kind == "af_packet":
            self.ns = [f"ppa{tag}", f"ppb{tag}"]
            self.ifs = [f"vpa{tag}", f"vpb{tag}"]
            run = lambda *a: subprocess.run(a, check=True)
            for n in self.ns:
                run("ip", "netns", "add", n)
            run("ip", "link", "add", self.ifs[0], "type", "veth", "peer", "name", self.ifs[1])
            for i in range(2):
                run("ip", "link", "set", self.ifs[i], "netns", self.ns[i])
                run("ip", "-n", self.ns[i], "link", "set", "lo", "up")
                run("ip", "-n", self.ns[i], "link", "set", self.ifs[i], "up")
                run("ip", "-n", self.ns[i], "addr", "add", f"198.18.7.{i + 1}/24",
                    "dev", self.ifs[i])

    def close(self):
        for n in self.ns:
            subprocess.run(["ip", "netns", "del", n], check=False)

    def server_addr(self):
        return "198.18.7.1" if self.kind == "af_packet" else "127.0.0.1"

    def cmd(self, binary, side, case_id, prog_args):
        """side 0 = server, 1 = client."""
        prefix = f"pp{'sc'[side]}{self.tag}x{case_id}"
        eal = ["--no-pci", "-l", str(side % max(1, os.cpu_count() or 1)),
               f"--file-prefix={prefix}", "--log-level=lib.eal:error"]
        if self.kind == "memif":
            sock = os.path.join(self.tmp, f"memif{case_id}.sock")
            role = "server" if side == 0 else "client"
            eal.append(f"--vdev=net_memif0,role={role},socket={sock},socket-abstract=no,"
                       "bsize=8192")
            pre = []
        else:
            eal.append(f"--vdev=net_af_packet0,iface={self.ifs[side]}")
            pre = ["ip", "netns", "exec", self.ns[side]]
        return pre + [binary] + eal + ["--", f"--droce-ipv4=198.18.5.{side + 1}/24"] + prog_args


def stop(proc):
    if proc is not None and proc.poll() is None:
        proc.kill()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def run_pair(link, binary, kind, case, case_id, opts, size, iters):
    """Start server then client; returns (rc_s, rc_c, out_s, out_c, err_s, err_c) or None."""
    port = free_port(os.getpid() + case_id * 101)
    outs = [os.path.join(link.tmp, f"{case_id}.{s}.out") for s in ("s", "c")]
    errs = [os.path.join(link.tmp, f"{case_id}.{s}.err") for s in ("s", "c")]
    procs = [None, None]
    files = []
    try:
        for side in (0, 1):
            args = opts + ["-p", str(port)]
            if side == 1:
                args.append(link.server_addr())
            fo, fe = open(outs[side], "w"), open(errs[side], "w")
            files += [fo, fe]
            procs[side] = subprocess.Popen(link.cmd(binary, side, case_id, args),
                                           stdout=fo, stderr=fe, stdin=subprocess.DEVNULL)
            if side == 1:
                break
            # server: "local address" printed, then it listens
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline:
                if procs[0].poll() is not None:
                    fail(case, f"server exited early ({procs[0].returncode}): "
                         f"{read(errs[0]).strip()[-400:]}")
                    return None
                if "local address" in read(outs[0]) and listening(procs[0].pid, port):
                    break
                time.sleep(0.05)
            else:
                fail(case, "server did not start listening in time")
                return None
        # both must finish; once one side fails the other cannot (an
        # ibv_rc_pingpong server waits forever), so it gets 5 s, not 90
        deadline = time.monotonic() + CASE_TIMEOUT
        while time.monotonic() < deadline and any(p.poll() is None for p in procs):
            if any(p.returncode not in (None, 0) for p in procs):
                deadline = min(deadline, time.monotonic() + 5.0)
            time.sleep(0.05)
        for p in procs:
            try:
                p.wait(timeout=0.1)
            except subprocess.TimeoutExpired:
                if any(q.returncode not in (None, 0) for q in procs):
                    continue        # reported by check_pair (peer failed)
                tails = "; ".join(f"{n}: {' | '.join((read(o) + read(e)).strip().splitlines()[-3:])}"
                                  for n, o, e in zip(("server", "client"), outs, errs))
                fail(case, f"timed out after {CASE_TIMEOUT:.0f} s ({tails})")
                return None
        for p in procs:
            stop(p)                 # only a side left waiting on a failed peer
        return ([p.returncode for p in procs], [read(o) for o in outs], [read(e) for e in errs])
    finally:
        for p in procs:
            stop(p)
        for f in files:
            f.close()


def check_addresses(case, kind, outs, gids, num_qp):
    """Exactly num_qp local and remote lines a side, each side's remote
    lines the peer's local lines in order."""
    ok = True
    loc = [LOCAL_RE.findall(o) for o in outs]
    rem = [REMOTE_RE.findall(o) for o in outs]
    for side in (0, 1):
        if len(loc[side]) != num_qp or len(rem[side]) != num_qp:
            fail(case, f"side {side}: {len(loc[side])} local and {len(rem[side])} "
                 f"remote address lines, expected {num_qp} each")
            return False
    for side in (0, 1):
        mine = [(l[0], l[1], l[2], l[4]) for l in loc[side]]
        if mine != rem[1 - side]:
            fail(case, f"side {side} local {mine} != peer's remote {rem[1 - side]}")
            ok = False
        if len({l[1] for l in loc[side]}) != num_qp:
            fail(case, f"side {side}: QPNs not distinct: {mine}")
            ok = False
        for l in loc[side]:
            if l[4] != gids[side]:
                fail(case, f"side {side} GID {l[4]}, expected {gids[side]}")
                ok = False
            sep = ":" if kind == "ud" else ","
            if l[3] != sep:
                fail(case, f"local address line uses '{l[3]}' before GID, "
                     f"{kind}_pingpong uses '{sep}'")
                ok = False
    return ok


def check_pair(case, kind, res, size, iters, chk, gids, num_qp=1):
    (rcs, outs, errs) = res
    ok = True
    for side, name in ((0, "server"), (1, "client")):
        if rcs[side] != 0:
            how = f"signal {-rcs[side]}" if rcs[side] < 0 else f"status {rcs[side]}"
            fail(case, f"{name} exited with {how}; stderr: {errs[side].strip()[-400:]}")
            ok = False
    if not check_addresses(case, kind, outs, gids, num_qp):
        return False
    for side in (0, 1):
        b, it = BYTES_RE.search(outs[side]), ITERS_RE.search(outs[side])
        if b is None or it is None:
            fail(case, f"side {side}: result lines missing")
            ok = False
            continue
        if int(b.group(1)) != size * iters * 2:
            fail(case, f"side {side}: {b.group(1)} bytes, expected {size * iters * 2}")
            ok = False
        if int(it.group(1)) != iters:
            fail(case, f"side {side}: {it.group(1)} iters, expected {iters}")
            ok = False
    passed_re = re.compile(CHK_PASSED_RE_FMT.format(size), re.M)
    if chk:
        for side, name in ((0, "server"), (1, "client")):
            if "invalid data in page" in outs[side] or not passed_re.search(outs[side]):
                fail(case, f"{name}: no \"data check passed\" for {size} bytes: " + outs[side])
                ok = False
    return ok


def run_single(binary, args, tmp, case):
    """One process, no peer: returns (rc, stdout, stderr)."""
    try:
        p = subprocess.run([binary] + args, capture_output=True, text=True,
                           timeout=CASE_TIMEOUT, cwd=tmp)
    except subprocess.TimeoutExpired:
        fail(case, "timed out")
        return None
    return p.returncode, p.stdout, p.stderr


def negative_cases(rc_bin, ud_bin, srq_bin, tmp, tag):
    n = 0

    def expect(case, binary, args, rc, text):
        nonlocal n
        n += 1
        res = run_single(binary, args, tmp, case)
        if res is None:
            return
        got_rc, out, err = res
        if got_rc != rc or text not in out + err:
            fail(case, f"exit {got_rc} (want {rc}), want '{text}' in output; "
                 f"stderr: {err.strip()[-300:]}")
        else:
            print(f"ok - {case}", flush=True)

    expect("help without EAL", rc_bin, ["--help"], 0, "-c, --chk")
    expect("help after --", ud_bin, ["--no-pci", "--", "-h"], 0, "Usage:")
    eal = lambda k: ["--no-pci", "--no-huge", "-m", "256", "-l", "0",
                     f"--file-prefix=ppn{tag}x{k}", "--log-level=lib.eal:error", "--"]
    expect("-o refused", rc_bin, eal(1) + ["-o"], 1, "-o/--odp is not supported")
    expect("-t refused", rc_bin, eal(2) + ["-t"], 1, "-t/--ts is not supported")
    expect("bad MTU", rc_bin, eal(3) + ["-m", "1500"], 1, "invalid MTU")
    expect("no device", rc_bin, eal(4), 1, "No IB devices found")
    sock = os.path.join(tmp, "neg.sock")
    vdev = [f"--vdev=net_memif0,role=server,socket={sock},bsize=8192"]
    expect("unknown device", rc_bin, vdev + eal(5) + ["--droce-ipv4=198.18.5.1/24", "-d", "nosuch"],
           1, "IB device nosuch not found")
    expect("UD size above MTU", ud_bin, vdev + eal(6) + ["--droce-ipv4=198.18.5.1/24", "-s", "4096"],
           1, "Requested size larger than port MTU")
    if srq_bin is not None:
        expect("srq -r below -q", srq_bin, eal(7) + ["-q", "20", "-r", "10"], 1,
               "rx_depth 10 is too small for 20 QPs -- must have at least one receive per QP.")
        expect("srq -q 256", srq_bin, eal(8) + ["-q", "256"], 1,
               "num_qp 256 must be less than 255")
        expect("srq -o refused", srq_bin, eal(9) + ["-o"], 1, "-o/--odp is not supported")
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rc", required=True, help="droce-pingpong")
    ap.add_argument("--ud", required=True, help="droce-ud-pingpong")
    ap.add_argument("--srq", help="droce-srq-pingpong")
    ap.add_argument("--link", choices=("memif", "af_packet"), default="memif")
    ap.add_argument("--quick", action="store_true", help="fewer cases")
    a = ap.parse_args()
    a.rc, a.ud = os.path.abspath(a.rc), os.path.abspath(a.ud)
    a.srq = os.path.abspath(a.srq) if a.srq else None

    if a.link == "af_packet" and (os.geteuid() != 0 or shutil.which("ip") is None):
        print("1..0 # SKIP af_packet needs root and iproute2")
        return 77
    tag = os.getpid() % 100000
    tmp = tempfile.mkdtemp(prefix="droce-pp-")
    link = None
    total = 0
    try:
        link = Link(a.link, tmp, tag)
        gids = ["::ffff:198.18.5.1", "::ffff:198.18.5.2"]
        # (kind, options, size, iters)
        cases = [("rc", ["-s", "1", "-c"], 1, 1000),
                 ("rc", ["-s", "64", "-c"], 64, 1000),
                 ("rc", ["-c"], 4096, 1000),            # rc_pingpong's default size
                 ("rc", ["-s", "65536", "-m", "1024", "-c"], 65536, 1000),
                 ("rc", ["-s", "4096", "-n", "100", "-e", "-r", "16", "-g", "0"], 4096, 100),
                 ("ud", ["-c"], 1024, 1000),            # ud_pingpong's default size
                 ("ud", ["-s", "1", "-c", "-n", "200"], 1, 200)]
        if a.quick:
            cases = cases[:1] + cases[5:6]
        if a.srq is not None:
            # srq_pingpong's defaults (16 QPs, 4096 bytes), a multi-packet
            # message over 4 QPs, one QP, and 64 QPs on rx depth 64
            cases += [("srq", ["-c", "-n", "400"], 4096, 400),
                      ("srq", ["-q", "4", "-s", "10000", "-m", "1024", "-c", "-n", "200"],
                       10000, 200),
                      ("srq", ["-q", "1", "-s", "1", "-c", "-n", "100"], 1, 100),
                      ("srq", ["-q", "64", "-r", "64", "-s", "64", "-c", "-n", "640"], 64, 640)]
        for i, (kind, opts, size, iters) in enumerate(cases):
            case = f"{a.link} {kind} {' '.join(opts)}"
            total += 1
            binary = {"rc": a.rc, "ud": a.ud, "srq": a.srq}[kind]
            num_qp = 1
            if kind == "srq":
                num_qp = int(opts[opts.index("-q") + 1]) if "-q" in opts else 16
            t0 = time.monotonic()
            res = run_pair(link, binary, kind, case, i, opts, size, iters)
            if res is not None and check_pair(case, kind, res, size, iters, "-c" in opts, gids,
                                              num_qp):
                print(f"ok - {case} ({time.monotonic() - t0:.1f} s)", flush=True)
        if not a.quick:
            total += negative_cases(a.rc, a.ud, a.srq, tmp, tag)
    finally:
        if link is not None:
            link.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"# {total - len(failures)}/{total} passed")
    for f in failures:
        print(f"# FAILED {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
