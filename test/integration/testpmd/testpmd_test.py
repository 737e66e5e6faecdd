#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce-testpmd scripts, run and checked.

Every *.cmd file beside this script is a droce-testpmd --cmdfile script.
Lines starting with "#!" tell this runner what to assert (droce-testpmd
itself sees them as comments):
    #! want REGEX        some stdout line matches REGEX (re.search)
    #! want-not REGEX    no stdout line matches REGEX
    #! exit N            the exit status (default 0)
    #! count N REGEX     exactly N stdout lines match REGEX
    #! args ARGS         more droce-testpmd options (single_* scripts)
Placeholders: @PORT@ (a TCP port for qp exchange), @PEER@ (side a's kernel
address, for side b's "qp exchange ... connect").

  single_*.cmd         one process, two droce devices: net_af_packet on both
                       ends of a veth pair in a namespace of their own
  pair_*_a.cmd + pair_*_b.cmd
                       two processes in two namespaces joined by a veth pair,
                       a listens and b connects (qp exchange, sync)
Plus: the interactive prompt (a pty) idle while a scripted peer writes into
and reads from its memory (cmdline must not block the data path), --help,
and a bad --cmdfile.  droce uses 198.18.13.1/2; the kernel ends 198.18.12.1/2.
Needs root and iproute2 (skipped otherwise).  Only processes this script
started are ever killed (by their Popen handle).
"""
import argparse
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TIMEOUT = 90.0
failures = []
passed = 0


def ok(name):
    global passed
    passed += 1
    print(f"ok - {name}", flush=True)


def fail(name, msg):
    failures.append(f"{name}: {msg}")
    print(f"not ok - {name}: {msg}", flush=True)


def sh(*a):
    subprocess.run(a, check=True)


def eal_args(prefix, vdevs):
    args = ["--no-pci", "-l", "0", f"--file-prefix={prefix}", "--log-level=lib.eal:error"]
    args += [f"--vdev={v}" for v in vdevs]
    if os.environ.get("DROCE_NO_HUGE") == "1":
        args += ["--no-huge", "-m", "512"]
    return args


class Single:
    """One namespace, a veth pair inside, both ends owned by droce."""

    def __init__(self, tag):
        self.ns = f"tpds{tag}"
        self.ifs = [f"tsa{tag}", f"tsb{tag}"]
        sh("ip", "netns", "add", self.ns)
        sh("ip", "-n", self.ns, "link", "add", self.ifs[0], "mtu", "4200", "type", "veth",
           "peer", "name", self.ifs[1], "mtu", "4200")
        for i in self.ifs:
            sh("ip", "-n", self.ns, "link", "set", i, "up")
        sh("ip", "netns", "exec", self.ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")

    def cmd(self, binary, prefix, args):
        vdevs = [f"net_af_packet{i},iface={self.ifs[i]}" for i in range(2)]
        return (["ip", "netns", "exec", self.ns, binary] + eal_args(prefix, vdevs) +
                ["--", "--droce-port=net_af_packet0", "--droce-ipv4=198.18.13.1/24",
                 "--droce-port=net_af_packet1", "--droce-ipv4=198.18.13.2/24"] + args)

    def close(self):
        subprocess.run(["ip", "netns", "del", self.ns], check=False)


class Pair:
    """Two namespaces joined by a veth pair: kernel TCP and droce share it."""

    def __init__(self, tag):
        self.ns = [f"tpda{tag}", f"tpdb{tag}"]
        self.ifs = [f"tpa{tag}", f"tpb{tag}"]
        for n in self.ns:
            sh("ip", "netns", "add", n)
        sh("ip", "link", "add", self.ifs[0], "type", "veth", "peer", "name", self.ifs[1])
        for i in range(2):
            sh("ip", "link", "set", self.ifs[i], "netns", self.ns[i])
            sh("ip", "-n", self.ns[i], "link", "set", "lo", "up")
            sh("ip", "-n", self.ns[i], "link", "set", self.ifs[i], "up")
            sh("ip", "-n", self.ns[i], "addr", "add", f"198.18.12.{i + 1}/24", "dev", self.ifs[i])

    def cmd(self, binary, side, prefix, args):
        return (["ip", "netns", "exec", self.ns[side], binary] +
                eal_args(prefix, [f"net_af_packet0,iface={self.ifs[side]}"]) +
                ["--", f"--droce-ipv4=198.18.13.{side + 1}/24"] + args)

    def close(self):
        for n in self.ns:
            subprocess.run(["ip", "netns", "del", n], check=False)


def directives(path):
    d = {"want": [], "want-not": [], "exit": 0, "count": [], "args": []}
    with open(path) as f:
        for line in f:
            if not line.startswith("#!"):
                continue
            kind, _, arg = line[2:].strip().partition(" ")
            if kind in ("want", "want-not"):
                d[kind].append(arg)
            elif kind == "args":
                d["args"] += arg.split()
            elif kind == "exit":
                d["exit"] = int(arg)
            elif kind == "count":
                n, _, rx = arg.partition(" ")
                d["count"].append((int(n), rx))
    return d


def check_output(name, path, rc, out):
    d = directives(path)
    lines = out.splitlines()
    good = True
    if rc != d["exit"]:
        fail(name, f"exit {rc}, want {d['exit']}; last lines: {' | '.join(lines[-6:])}")
        good = False
    for rx in d["want"]:
        if not any(re.search(rx, x) for x in lines):
            fail(name, f"no output line matches {rx!r}")
            good = False
    for rx in d["want-not"]:
        bad = [x for x in lines if re.search(rx, x)]
        if bad:
            fail(name, f"unwanted line {bad[0]!r} (matches {rx!r})")
            good = False
    for n, rx in d["count"]:
        k = sum(1 for x in lines if re.search(rx, x))
        if k != n:
            fail(name, f"{k} lines match {rx!r}, want {n}")
            good = False
    return good


def prepare(path, tmp, port):
    with open(path) as f:
        text = f.read().replace("@PORT@", str(port)).replace("@PEER@", "198.18.12.1")
    dst = os.path.join(tmp, os.path.basename(path))
    with open(dst, "w") as f:
        f.write(text)
    return dst


def wait_all(procs, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end and any(p.poll() is None for p in procs):
        time.sleep(0.05)
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=10)
            return False
    return True


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def run_single(binary, env, tmp, path, k):
    name = os.path.basename(path)
    out = os.path.join(tmp, name + ".out")
    with open(out, "w") as fo:
        p = subprocess.Popen(env.cmd(binary, f"tpd{os.getpid()}s{k}",
                                     ["--cmdfile", prepare(path, tmp, 0)] +
                                     directives(path)["args"]),
                             stdout=fo, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if not wait_all([p], TIMEOUT):
            fail(name, f"timed out: {' | '.join(read(out).splitlines()[-5:])}")
            return
    if check_output(name, path, p.returncode, read(out)):
        ok(name)


def run_pair(binary, env, tmp, a_path, k):
    b_path = a_path[:-len("_a.cmd")] + "_b.cmd"
    name = os.path.basename(a_path)[:-len("_a.cmd")]
    port = 20000 + (os.getpid() * 7 + k * 131) % 40000
    procs, outs = [], []
    for side, path in enumerate((a_path, b_path)):
        out = os.path.join(tmp, os.path.basename(path) + ".out")
        outs.append(out)
        with open(out, "w") as fo:
            procs.append(subprocess.Popen(
                env.cmd(binary, side, f"tpd{os.getpid()}p{k}{side}",
                        ["--cmdfile", prepare(path, tmp, port)]),
                stdout=fo, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
    if not wait_all(procs, TIMEOUT):
        fail(name, "timed out: " + " // ".join(" | ".join(read(o).splitlines()[-4:]) for o in outs))
        return
    good = True
    for side, path in enumerate((a_path, b_path)):
        good &= check_output(f"{name} ({'ab'[side]})", path, procs[side].returncode, read(outs[side]))
    if good:
        ok(name)


class Prompt:
    """droce-testpmd at its interactive prompt on a pty."""

    def __init__(self, argv):
        self.master, slave = pty.openpty()
        self.p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, close_fds=True)
        os.close(slave)
        self.buf = ""

    def expect(self, rx, timeout=20.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            m = re.search(rx, self.buf)
            if m:
                self.buf = self.buf[m.end():]
                return True
            r, _, _ = select.select([self.master], [], [], 0.1)
            if r:
                try:
                    self.buf += os.read(self.master, 4096).decode(errors="replace")
                except OSError:
                    break
        return False

    def send(self, line):
        os.write(self.master, (line + "\n").encode())

    def close(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(timeout=10)
        os.close(self.master)


def run_interactive(binary, env, tmp, k):
    """Side a at the prompt; side b's script writes, reads and sends to it
    while a sits idle, which only works if the prompt keeps droce polled."""
    name = "interactive prompt stays on the data path"
    port = 20000 + (os.getpid() * 11 + k * 137) % 40000
    b_path = os.path.join(HERE, "interactive_peer.cmd")
    out = os.path.join(tmp, "interactive_peer.out")
    a = Prompt(env.cmd(binary, 0, f"tpd{os.getpid()}i0", []))
    b = None
    try:
        steps = [("help", r"engine\s+traffic engines"),
                 ("help qp", r"qp exchange QP listen"),
                 ("pd create", r"pd 0 created"),
                 ("mr reg 0 65536 access=local_write,remote_write,remote_read", r"mr 0: pd 0"),
                 ("mr fill 0 pattern=0x5a len=1000 off=2000", r"filled 1000 bytes"),
                 ("cq create 64", r"cq 0 created"),
                 ("qp create 0 rc cq=0", r"qp 0: RC"),
                 ("post 0 recv mr=0 off=4096 len=512 wrid=9",
                  r"error: droce_post_recv \(0 of 1 posted\): Invalid argument"),
                 ("pd frob", r"error: pd frob: unknown command"),
                 ("mr reg 0 12abc", r"error: bad number '12abc' for SIZE")]
        if not a.expect(r"droce-testpmd> "):
            fail(name, f"no prompt: {a.buf[-300:]!r}")
            return
        for line, want in steps:
            a.send(line)
            if not a.expect(want):
                fail(name, f"'{line}': no {want!r} in {a.buf[-300:]!r}")
                return
        a.send(f"qp exchange 0 listen port={port} mr=0")
        if not a.expect(r"listening on port"):
            fail(name, f"exchange did not listen: {a.buf[-300:]!r}")
            return
        with open(out, "w") as fo:
            b = subprocess.Popen(env.cmd(binary, 1, f"tpd{os.getpid()}i1",
                                         ["--cmdfile", prepare(b_path, tmp, port)]),
                                 stdout=fo, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if not a.expect(r"qp 0: state RTS"):
            fail(name, f"exchange did not finish: {a.buf[-300:]!r}")
            return
        # a receive for b's send (until it is posted b's send is
        # RNR-retried), then a idles at the prompt while b's script runs
        a.send("post 0 recv mr=0 off=4096 len=512 wrid=9")
        if not a.expect(r"posted 1 recv"):
            fail(name, f"post recv: {a.buf[-300:]!r}")
            return
        if not wait_all([b], TIMEOUT):
            fail(name, "peer script timed out: " + " | ".join(read(out).splitlines()[-5:]))
            return
        if not check_output(name + " (peer)", b_path, b.returncode, read(out)):
            return
        for line, want in [("mr check 0 off=8192 len=3000 pattern=inc seed=1",
                            r"3000 bytes at offset 8192 match"),
                           ("poll 0 status=SUCCESS opcode=RECV",
                            r"wc cq=0 wr_id=9 status=SUCCESS .*opcode=RECV byte_len=100 "),
                           ("mr check 0 off=4096 len=100 pattern=0x77", r"100 bytes at offset 4096 match"),
                           # b's RDMA requests executed, one per packet:
                           # the 3000-byte WRITE's 3 (path MTU 1024) and
                           # the READ (a SEND is not one)
                           ("show counters filter=rdma_recvs", r"rdma_recvs: 4\r?\n"),
                           ("quit", r"\n")]:
            a.send(line)
            if not a.expect(want):
                fail(name, f"'{line}': no {want!r} in {a.buf[-300:]!r}")
                return
        if a.p.wait(timeout=20) != 0:
            fail(name, f"quit: exit {a.p.returncode}")
            return
        ok(name)
    finally:
        if b is not None and b.poll() is None:
            b.kill()
            b.wait(timeout=10)
        a.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--testpmd", required=True)
    ap.add_argument("scripts", nargs="*", help="only these .cmd files (names)")
    a = ap.parse_args()
    binary = os.path.abspath(a.testpmd)
    # no EAL needed for these
    p = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30)
    if p.returncode == 0 and "--cmdfile FILE" in p.stdout and "expect error" in p.stdout:
        ok("--help")
    else:
        fail("--help", f"exit {p.returncode}: {p.stdout[-300:]}")
    if os.geteuid() != 0 or shutil.which("ip") is None:
        print("1..0 # SKIP needs root and iproute2")
        return 77
    tmp = tempfile.mkdtemp(prefix="droce-testpmd-")
    tag = os.getpid() % 100000
    files = sorted(f for f in os.listdir(HERE) if f.endswith(".cmd"))
    if a.scripts:
        files = [f for f in files if f in a.scripts or f.replace("_a.cmd", "") in a.scripts]
    single = pair = None
    try:
        # a missing script file: exit 1, no EAL needed past droce_init
        p = subprocess.run([binary] + eal_args(f"tpd{tag}m", []) +
                           ["--", "--cmdfile", os.path.join(tmp, "nonexistent.cmd")],
                           capture_output=True, text=True, timeout=60)
        if p.returncode == 1 and "cannot open" in p.stderr:
            ok("missing --cmdfile")
        else:
            fail("missing --cmdfile", f"exit {p.returncode}: {(p.stdout + p.stderr)[-300:]}")
        single = Single(tag)
        for k, f in enumerate(x for x in files if x.startswith("single_")):
            run_single(binary, single, tmp, os.path.join(HERE, f), k)
        single.close()
        single = None
        pair = Pair(tag)
        for k, f in enumerate(x for x in files if x.startswith("pair_") and x.endswith("_a.cmd")):
            run_pair(binary, pair, tmp, os.path.join(HERE, f), k)
        if not a.scripts:
            run_interactive(binary, pair, tmp, 99)
    finally:
        for env in (single, pair):
            if env is not None:
                env.close()
        shutil.rmtree(tmp, ignore_errors=True)
    total = passed + len(failures)
    print(f"# {passed}/{total} passed")
    for f in failures:
        print(f"# FAILED {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
