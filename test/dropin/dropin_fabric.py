#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Middleware from Debian on the drop-ins (issue 22): libfabric 1.17's verbs
provider and fio 3.33's rdma engine, unmodified, through usertools/droce-run,
between two processes over net_af_packet on a veth pair in two network
namespaces this script creates and deletes (perf_pair.py's Veth: the kernel
ends 198.18.8.1/2).  droce takes the kernel's address of its veth end (as
dropin_test.py's qperf -cm1): libfabric maps an interface to a verbs device
by binding the interface's address with rdma_bind_addr, and both tools
exchange their peer's address over TCP.  droce's defaults on both sides
(the drop-in's progress thread, no transport lcore).

  dropin_fabric.py --run DROCE_RUN --lib DIR libfabric
      fi_info -p verbs lists droce0 (an FI_EP_MSG domain); fi_pingpong -p
      verbs -e msg and -p "verbs;ofi_rxm" -e rdm, -c (data checked), 100
      iterations of 1 KiB: both sides exit 0 and print the row "1k 100 =100
      200k".
  dropin_fabric.py --run DROCE_RUN --lib DIR fio
      fio --ioengine=rdma --verb=write and --verb=read, 1 MiB in 4 KiB
      blocks (--thread: no job processes of its own): the server (--rw=read)
      and the client (--rw=write) exit 0 with err= 0, the client's io= is
      1024KiB, 256 blocks issued.  (fio checks no data here: the rdma engine
      moves it with RDMA WRITE / READ on the client's side only, the
      server's job issues nothing, and --verify needs a job that reads
      back what it wrote.)  Then --verb=send as fio's examples run it
      (the server --iodepth=16, the client 1: fio connects with no RNR
      retry, so the receiving side must keep receives posted ahead), with
      --verify=crc32c on both sides: the server's job receives the 256
      blocks and checks each one's verify header and CRC (a client
      writing md5 headers fails it with err=84); both err= 0, 1024KiB
      each way.
  dropin_fabric.py --run DROCE_RUN --lib DIR --droced DROCED droced
      fi_info, fi_pingpong -e msg and -e rdm (verbs;ofi_rxm: both
      sides listen on an ephemeral port of the one port space), fio
      --verb=write and --verb=read as above, and rdmacm-utils' rstream
      (rsockets, -T v: data verified), both sides applications of one droced (DrocedNet); droced
      lists no application after.
Needs root (network namespaces).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import dropin_test as dt
from droced_util import droced_apps, droced_start, droced_stop

PP_ROW_RE = re.compile(r"^(\S+)\s+(\d+)\s+(=?\d+)\s+(\S+)\s+[\d.]+s\s", re.M)


class DrocedNet:
    """Both sides applications of one droced, in one network namespace this
    script creates and deletes: droced on net_af_packet at a veth end that
    holds the kernel's address (198.18.10.1; libfabric finds the verbs
    device by that address), its engine on lcore 1; the programs' TCP
    exchange and their connection to that address (droced's loopback, its
    CM relayed)."""
    server_addr = "198.18.10.1"

    def __init__(self, droced, tmp):
        tag = os.getpid() % 100000
        self.ns = [f"dfd{tag}"] * 2
        ifs = [f"dfa{tag}", f"dfb{tag}"]
        run = lambda *args: subprocess.run(args, check=True)
        run("ip", "netns", "add", self.ns[0])
        try:
            run("ip", "-n", self.ns[0], "link", "add", ifs[0], "type", "veth", "peer",
                "name", ifs[1])
            for i in ["lo"] + ifs:
                run("ip", "-n", self.ns[0], "link", "set", i, "up")
            run("ip", "-n", self.ns[0], "addr", "add", f"{self.server_addr}/24", "dev", ifs[0])
            self.daemon = droced_start(droced, tmp, [
                f"--vdev=net_af_packet0,iface={ifs[0]}", "--",
                f"--droce-ipv4={self.server_addr}/24"], wrap=["ip", "netns", "exec", self.ns[0]])
        except BaseException:
            subprocess.run(["ip", "netns", "del", self.ns[0]], check=False)
            raise
        self.droced = droced
        self.run_args = ["--daemon", self.daemon[1]]

    def close(self):
        droced_stop(self.daemon)
        subprocess.run(["ip", "netns", "del", self.ns[0]], check=False)


def droce_env(nets, side, tag):
    """droce on side's veth end with the kernel's address of that end; on
    droced only the core (EAL's secondary)."""
    if isinstance(nets, DrocedNet):
        return dict(os.environ, DROCE_ARGS=f"-l {side} --no-pci --log-level=lib.eal:error")
    ip = nets.server_addr[:-1] + str(side + 1)
    args = dt.EAL + ["-l", str(side), f"--file-prefix=dropinf{tag}{side}",
                     f"--vdev=net_af_packet0,iface={nets.ifs[side]}", "--",
                     f"--droce-ipv4={ip}/24"]
    return dict(os.environ, DROCE_ARGS=" ".join(args))


def run_pair(a, tmp, nets, tag, argv, ready):
    """argv[0] in the server's namespace until ready(text) or 20 s, then
    argv[1] in the client's; both until they exit (or TIMEOUT)."""
    procs, files = [], []
    try:
        for side in (0, 1):
            out = open(os.path.join(tmp, f"{tag}.{side}.out"), "w+")
            files.append(out)
            cmd = ["ip", "netns", "exec", nets.ns[side], a.run, "--lib", a.lib] + \
                getattr(nets, "run_args", []) + ["--"] + argv[side]
            procs.append(subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, cwd=tmp,
                                          env=droce_env(nets, side, tag)))
            deadline = time.monotonic() + 20
            while side == 0 and time.monotonic() < deadline and procs[0].poll() is None:
                out.seek(0)
                if ready(out.read()):
                    break
                time.sleep(0.05)
        deadline = time.monotonic() + dt.TIMEOUT
        for p in reversed(procs):
            try:
                p.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for side, p in enumerate(procs):
            dt.hang_report(p, f"{tag} side {side}: {argv[side][0]}")
        texts = []
        for f in files:
            f.seek(0)
            texts.append(f.read())
        return [p.returncode for p in procs], texts
    finally:
        for p in procs:
            dt.stop(p)
        for f in files:
            f.close()


def case_fi_info(a, tmp, nets):
    p = subprocess.run(["ip", "netns", "exec", nets.ns[0], a.run, "--lib", a.lib] +
                       getattr(nets, "run_args", []) + ["--", "fi_info", "-p", "verbs"], capture_output=True, text=True,
                       timeout=dt.TIMEOUT, env=droce_env(nets, 0, "i"), cwd=tmp)
    entries = re.findall(r"provider: (\S+)\n\s+fabric: .*\n\s+domain: (\S+)\n"
                         r"\s+version: .*\n\s+type: (\S+)", p.stdout)
    if dt.check("fi_info -p verbs", p.returncode == 0, f"exit {p.returncode}: {p.stderr[-300:]}") \
            and dt.check("fi_info -p verbs", ("verbs", "droce0", "FI_EP_MSG") in entries,
                         f"no droce0 FI_EP_MSG domain: {entries}"):
        print(f"ok - fi_info -p verbs: droce0 FI_EP_MSG ({len(entries)} entries)", flush=True)


# libfabric 1.17's rxm reposts a receive buffer onto a closed endpoint when
# a completion of that endpoint is still in its CQ as it closes it
# (rxm_close_conn: fi_close, then rxm_flush_msg_cq; upstream issue #11828,
# fixed on main by PR #12674, in no release).  fi_pingpong -e rdm meets it
# when a side is preempted between its CQ read and its CM read for as long
# as the peer takes to finish and close: the peer's FIN and its own FIN's
# acknowledgement (a NIC's or droced's, not waiting for this process) land
# in the CQ, the peer's DISCONNECTED comes first, and the repost faults in
# rxm_post_recv (Debian's libfabric.so.1 at +0xb7882; fi_pingpong catches
# the signal and exits 1).  Removing a destroyed QP's completions (mlx5's
# way) loses that FIN instead and fi_pingpong waits forever.  About 1 run in
# 13 under two busy-loop spinners on 2 cores, none on a quiet machine.
RXM_TEARDOWN_FAULT = re.compile(r"terminated with signal 11 at PC=\S+ SP=\S+\.\s+Backtrace:\n"
                                r"\S*/libfabric\.so\.1\(\+0xb7882\)")
PP_ROW = [("1k", "100", "=100", "200k")]


def rxm_teardown_fault(rcs, outs):
    """A run whose only failure is that fault, after both sides' exact rows."""
    return any(rc == 1 and RXM_TEARDOWN_FAULT.search(out) for rc, out in zip(rcs, outs)) and \
        all(rc == 0 or RXM_TEARDOWN_FAULT.search(out) for rc, out in zip(rcs, outs)) and \
        all(PP_ROW_RE.findall(out) == PP_ROW for out in outs)


def case_pingpong(a, tmp, nets, tag, prov, ep):
    case = f'fi_pingpong -p "{prov}" -e {ep}'
    args = ["fi_pingpong", "-p", prov, "-e", ep, "-I", "100", "-S", "1024", "-c"]
    # the server listens on its control port (47592) before anything else
    for attempt in (1, 2):
        rcs, outs = run_pair(a, tmp, nets, f"{tag}{attempt}",
                             [args, args + [nets.server_addr]],
                             lambda text: dt.listening_in(nets.ns[0], 47592))
        if attempt == 1 and ep == "rdm" and rxm_teardown_fault(rcs, outs):
            print(f"# {case}: rows exact, then libfabric 1.17 rxm's teardown fault "
                  "(upstream #11828); run again once", flush=True)
            continue
        break
    ok = True
    for side, name in ((0, "server"), (1, "client")):
        rows = PP_ROW_RE.findall(outs[side])
        ok &= dt.check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {outs[side][-2000:]}")
        ok &= dt.check(case, rows == PP_ROW,
                       f"{name}: rows {rows}: {outs[side][-400:]}")
    if ok:
        print(f"ok - {case}: both sides 100 x 1 KiB, =100 acked, 200k, data checked",
              flush=True)


def case_fio(a, tmp, nets, tag, verb, extra=((), ())):
    """extra: the server's and the client's own options."""
    case = " / ".join([f"fio --ioengine=rdma --verb={verb}"] +
                      [" ".join(e) for e in extra if e])
    port = dt.free_port()
    common = ["--ioengine=rdma", f"--port={port}", f"--verb={verb}", "--bs=4k", "--size=1m",
              "--thread"]
    argv = [["fio", "--name=server", "--rw=read"] + common + list(extra[0]),
            ["fio", "--name=client", "--rw=write"] + common + list(extra[1]) +
            [f"--hostname={nets.server_addr}"]]
    rcs, outs = run_pair(a, tmp, nets, tag, argv,
                         lambda text: "waiting for connection" in text)
    ok = True
    for side, name in ((0, "server"), (1, "client")):
        ok &= dt.check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {outs[side][-400:]}")
        ok &= dt.check(case, re.search(rf"^{name}: \(groupid=0, jobs=1\): err= 0:", outs[side],
                                       re.M) is not None, f"{name}: no err= 0: {outs[side][-400:]}")
    ok &= dt.check(case, re.search(r"^\s+WRITE: .*, io=1024KiB \(1049kB\),", outs[1], re.M)
                   is not None and "issued rwts: total=0,256,0,0 " in outs[1],
                   f"client: not 1024KiB in 256 blocks: {outs[1][-400:]}")
    if verb == "send":  # the server's job receives every block
        ok &= dt.check(case, re.search(r"^\s+READ: .*, io=1024KiB \(1049kB\),", outs[0], re.M)
                       is not None and "issued rwts: total=256,0,0,0 " in outs[0],
                       f"server: not 1024KiB in 256 blocks: {outs[0][-400:]}")
    if ok:
        print(f"ok - {case}: server and client err= 0, io=1024KiB (256 x 4 KiB)", flush=True)


def case_rstream(a, tmp, nets):
    """rdmacm-utils' rstream (rsockets over the drop-in librdmacm), 4 KiB x
    500 with its data checked (-T v), both sides on droced: the server is
    ready once droced lists it (its rlisten follows at once; a REQ that
    comes first is held for a listener)."""
    opts = ["-S", "4096", "-C", "500", "-T", "v"]
    case = "rstream -S 4096 -C 500 -T v"
    rcs, outs = run_pair(a, tmp, nets, "rs",
                         [["rstream", "-b", nets.server_addr] + opts,
                          ["rstream", "-s", nets.server_addr] + opts],
                         lambda text: droced_apps(a.droced, nets.daemon[1]) != "")
    row = [("custom", "4k", "500", "1", "3.9m")]
    ok = True
    for side, name in ((0, "server"), (1, "client")):
        ok &= dt.check(case, rcs[side] == 0, f"{name} exit {rcs[side]}: {outs[side][-400:]}")
        got = dt.rstream_rows(outs[side])
        ok &= dt.check(case, got == row, f"{name} rows {got}, expected {row}")
    if ok:
        print(f"ok - {case}: the row exact on both sides, data verified", flush=True)


def on_droced(a):
    """libfabric's msg endpoints and fio's write and read, both sides
    applications of one droced; droced lists no application after."""
    with tempfile.TemporaryDirectory(prefix="dropinf-") as tmp:
        nets = DrocedNet(a.droced, tmp)
        try:
            case_fi_info(a, tmp, nets)
            case_pingpong(a, tmp, nets, "m", "verbs", "msg")
            case_pingpong(a, tmp, nets, "r", "verbs;ofi_rxm", "rdm")
            case_fio(a, tmp, nets, "w", "write")
            case_fio(a, tmp, nets, "r", "read")
            case_rstream(a, tmp, nets)
            left = droced_apps(a.droced, nets.daemon[1])
            if dt.check("droced", left == "", f"applications left: {left}"):
                print("ok - droced: no application left", flush=True)
        finally:
            nets.close()
    for f in dt.failures:
        print("FAIL:", f)
    return 1 if dt.failures else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--droced")
    ap.add_argument("what", choices=["libfabric", "fio", "droced"])
    a = ap.parse_args()
    a.run, a.lib = os.path.abspath(a.run), os.path.abspath(a.lib)
    if a.what == "droced":
        return on_droced(a)
    nets = dt.Veth(f"f{os.getpid() % 100000}")
    try:
        with tempfile.TemporaryDirectory(prefix="dropinf-") as tmp:
            if a.what == "libfabric":
                case_fi_info(a, tmp, nets)
                case_pingpong(a, tmp, nets, "m", "verbs", "msg")
                case_pingpong(a, tmp, nets, "r", "verbs;ofi_rxm", "rdm")
            else:
                case_fio(a, tmp, nets, "w", "write")
                case_fio(a, tmp, nets, "r", "read")
                # fio's own examples (rdmaio-server.fio, rdmaio-client.fio):
                # the receiving side deeper than the sending one
                case_fio(a, tmp, nets, "s", "send",
                         (["--iodepth=16", "--verify=crc32c"], ["--verify=crc32c"]))
    finally:
        nets.close()
    for f in dt.failures:
        print("FAIL:", f)
    return 1 if dt.failures else 0


if __name__ == "__main__":
    sys.exit(main())
