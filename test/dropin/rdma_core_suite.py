#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""rdma-core 44's own test suite (python3-pyverbs ships it in
/usr/share/doc/rdma-core/tests) on droce0, in one process, through the
drop-in libibverbs.so.1 and usertools/droce-run.

  rdma_core_suite.py --run DROCE_RUN --lib DIR --ok OK_LIST [--ok OK_LIST..]
                     --skips SKIP_LIST [--pending PENDING_LIST]
                     [--droced DROCED [--netdev] [--queues region|shared]]
                     [--only SUBSTRING]

The suite is copied into a private temporary folder (its gzipped files
unpacked) and run as its run_tests.py runs it (args_parser, then
unittest's loader on its tests package, --dev droce0), inside one droce
process on a port with no peer (DPDK net_ring: two QPs of droce0 talk
through the port's loopback).  Checks, exactly:
  - no test fails or errors (nor succeeds unexpectedly);
  - the tests that pass are exactly those the OK_LISTs name (a
    regression, or a test newly passing, which then belongs in a list,
    fails this);
  - except the tests PENDING_LIST names (an OK_LIST may name them too):
    each must end in an error or a failure (what droce lacks for it is
    named there; one that passes leaves that list, and the check says so);
  - every skip's reason is one SKIP_LIST allows (a reason of rdma-core's
    for hardware or a capability droce lacks, lib/ibverbs/README.md).
With --droced the same process is an application of a droced of its own
(net_ring too), by default a plain process on a queue region (its memory
moved onto memfds; --queues shared: droced's DPDK secondary), with the
same lists but PENDING_LIST's: droced serves every verb the suite's
passing tests use; droced's list is empty after the process exits.
With --netdev the process runs in a network namespace this script
creates and deletes, where one end of a veth pair (both down, both in
that namespace; droced's port is net_ring, so no frame of droce's ever
reaches the kernel) holds
droce0's address 198.18.5.1/24: droce-run's sysfs tree then links it as
droce0's device/net, where the suite's rdmacm tests find the device's IP
(`ip -j addr show`), and they run: each forks a passive and an active
child, which connect to droced anew as plain processes (lib/device,
"fork") and talk through droced's loopback.  In process the rdmacm tests
stay skipped: a child of a process that runs the engine has no device.
--only runs the tests whose id holds SUBSTRING (by hand: the lists are
then not checked, the outcomes printed).
The suite's random values are seeded (RDMA_SUITE_SEED, default 1) so a
failure can be repeated; the seed is printed.  A missing suite or pyverbs
fails the test.
"""
import argparse
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from droced_util import droced_apps, droced_start, droced_stop

SUITE = "/usr/share/doc/rdma-core/tests"
PYTHON = "/usr/bin/python3"
EAL = ["--no-pci", "--no-huge", "-m", "512", "--log-level=lib.eal:error"]


def copy_suite(dst):
    """The suite into dst/tests, its .py.gz files unpacked."""
    tdir = os.path.join(dst, "tests")
    os.mkdir(tdir)
    for name in os.listdir(SUITE):
        src = os.path.join(SUITE, name)
        if name.endswith(".py.gz"):
            with gzip.open(src, "rb") as f_in, open(os.path.join(tdir, name[:-3]), "wb") as f_out:
                shutil.copyfileobj(f_in, f_out)
        elif name.endswith(".py"):
            shutil.copy(src, tdir)
    return tdir


def inner(tdir, out, seed, only):
    """In the droce process: run_tests.py's steps, outcomes to out (JSON)."""
    import random
    import unittest
    from importlib.machinery import SourceFileLoader

    random.seed(seed)
    sys.path.insert(0, tdir)
    sys.argv = [os.path.join(tdir, "run_tests.py"), "--dev", "droce0"]
    from args_parser import parser  # the suite's own, as run_tests.py

    tests = SourceFileLoader("tests", os.path.join(tdir, "__init__.py")).load_module()
    parser.parse_args()
    suite = unittest.defaultTestLoader.loadTestsFromModule(tests)
    if only:
        def flat(s):
            for t in s:
                yield from flat(t) if isinstance(t, unittest.TestSuite) else [t]
        suite = unittest.TestSuite(t for t in flat(suite) if only in t.id())
    outcomes = {}

    class Recording(unittest.TextTestResult):
        def addSuccess(self, test):
            super().addSuccess(test)
            outcomes[test.id()] = ["ok", ""]

        def addFailure(self, test, err):
            super().addFailure(test, err)
            outcomes[test.id()] = ["FAIL", self._exc_info_to_string(err, test)]

        def addError(self, test, err):
            super().addError(test, err)
            outcomes[test.id()] = ["ERROR", self._exc_info_to_string(err, test)]

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            outcomes[test.id()] = ["skipped", reason]

        def addExpectedFailure(self, test, err):
            super().addExpectedFailure(test, err)
            outcomes[test.id()] = ["expected failure", ""]

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            outcomes[test.id()] = ["unexpected success", ""]

    unittest.TextTestRunner(verbosity=2, resultclass=Recording).run(suite)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(outcomes, f, indent=1, sort_keys=True)
    return 0


def read_list(path):
    with open(path, encoding="utf-8") as f:
        return [ln.rstrip("\n") for ln in f if ln.strip() and not ln.startswith("#")]


def check(outcomes, ok_list, skips, pending=()):
    """The failures of the run against the lists, one string each."""
    bad = []
    for tid in sorted(pending):
        res = outcomes.get(tid, ["not run"])[0]
        if res not in ("ERROR", "FAIL"):
            bad.append(f"{tid}: listed as pending (failing), now {res}")
    for tid, (res, text) in sorted(outcomes.items()):
        if tid in pending:
            continue
        if res not in ("ok", "skipped"):
            bad.append(f"{tid}: {res}\n{text}")
        elif res == "skipped" and text not in skips:
            bad.append(f"{tid}: skipped for a reason not allowed: {text!r}")
    ok = {t for t, (res, _) in outcomes.items() if res == "ok"}
    want = set(ok_list) - set(pending)
    for tid in sorted(want - ok):
        bad.append(f"{tid}: listed as passing, now {outcomes.get(tid, ['not run'])[0]}")
    for tid in sorted(ok - want):
        bad.append(f"{tid}: passes but is not in the list (add it)")
    return bad, len(ok)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--run")
    ap.add_argument("--lib")
    ap.add_argument("--ok", action="append", default=[])
    ap.add_argument("--skips")
    ap.add_argument("--pending")
    ap.add_argument("--droced")
    ap.add_argument("--netdev", action="store_true")
    ap.add_argument("--queues", choices=["region", "shared"], default="region",
                    help="with --droced: the process on a queue region (droced's "
                         "default) or as its DPDK secondary")
    ap.add_argument("--only", default="")
    ap.add_argument("--log", help="the suite's output to this file as it runs (by hand)")
    ap.add_argument("--inner", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    a = ap.parse_args()
    seed = int(os.environ.get("RDMA_SUITE_SEED", "1"))
    if a.inner is not None:
        return inner(a.inner, a.out, seed, a.only)
    if not os.path.isfile(os.path.join(SUITE, "run_tests.py")):
        print(f"FAIL: no rdma-core test suite in {SUITE} (python3-pyverbs)")
        return 1
    a.run, a.lib = os.path.abspath(a.run), os.path.abspath(a.lib)
    ok_list = [t for f in a.ok for t in read_list(f)]
    skips = set(read_list(a.skips))
    pending = set(read_list(a.pending)) if a.pending else set()
    if a.netdev and not a.droced:
        print("FAIL: --netdev is for --droced (a fork child has no device in process)")
        return 1
    # meson's SIGTERM at a timeout: the namespace and droced still go
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("FAIL: terminated (timeout?)"))
    ns = f"rdmasuite{os.getpid()}" if a.netdev else None
    if ns is not None:
        netdev_add(ns)
    try:
        return run_suite(a, seed, ok_list, skips, pending, ns)
    finally:
        if ns is not None:
            subprocess.run(["ip", "netns", "del", ns], check=False)


NETDEV_ADDR = "198.18.5.1"


def netdev_add(ns):
    """Network namespace ns, with a veth pair whose one end holds droce0's
    address (both left down: nothing is sent or answered on them)."""
    run = lambda *args: subprocess.run(args, check=True)
    run("ip", "netns", "add", ns)
    try:
        run("ip", "-n", ns, "link", "add", "rsveth0", "type", "veth", "peer", "name", "rsveth1")
        run("ip", "-n", ns, "addr", "add", f"{NETDEV_ADDR}/24", "dev", "rsveth0")
    except BaseException:
        subprocess.run(["ip", "netns", "del", ns], check=False)
        raise


def run_suite(a, seed, ok_list, skips, pending, ns):
    with tempfile.TemporaryDirectory(prefix="rdmasuite-") as tmp:
        tdir = copy_suite(tmp)
        out = os.path.join(tmp, "outcomes.json")
        if a.droced:
            daemon = droced_start(a.droced, tmp)
            droce = "-l 0 --no-pci --log-level=lib.eal:error"
            via = ["--daemon", daemon[1]]
            queues = {"DROCE_QUEUES": a.queues}
        else:
            droce = " ".join(EAL + [f"--file-prefix=rdmasuite{os.getpid()}", "-l", "0",
                                    "--vdev=net_ring0", "--", "--droce-ipv4=198.18.5.1/24"])
            via = []
            queues = {}
        env = dict(os.environ, DROCE_ARGS=droce, **queues)
        t0 = time.monotonic()
        try:
            wrap = ["ip", "netns", "exec", ns] if ns is not None else []
            log = open(a.log, "w") if a.log else None
            p = subprocess.run(wrap + [a.run, "--lib", a.lib] + via +
                               ["--", PYTHON, os.path.abspath(__file__), "--inner", tdir,
                                "--out", out, "--only", a.only],
                               stdout=log or subprocess.PIPE, stderr=log or subprocess.PIPE,
                               text=True, env=env, cwd=tmp, timeout=600)
            p.stdout, p.stderr = p.stdout or "", p.stderr or ""
            left = droced_apps(a.droced, daemon[1]) if a.droced else ""
        finally:
            if a.droced:
                droced_stop(daemon)
        took = time.monotonic() - t0
        if left:
            print(f"FAIL: droced still lists an application after the suite's exit:\n{left}")
            return 1
        if p.returncode != 0 or not os.path.exists(out):
            print(f"FAIL: the suite's process exited {p.returncode}\n{p.stdout[-3000:]}"
                  f"\n{p.stderr[-6000:]}")
            return 1
        with open(out, encoding="utf-8") as f:
            outcomes = json.load(f)
    if a.only:
        for tid, (res, text) in sorted(outcomes.items()):
            print(f"{tid}: {res} {text}")
        print(p.stdout[-3000:], p.stderr[-6000:])
        return 0
    bad, nok = check(outcomes, ok_list, skips, pending)
    counts = {}
    for res, _ in outcomes.values():
        counts[res] = counts.get(res, 0) + 1
    print(f"seed {seed}: {len(outcomes)} tests in {took:.1f} s: "
          + ", ".join(f"{n} {r}" for r, n in sorted(counts.items())))
    for b in bad:
        print("FAIL:", b)
    if bad:
        print(f"the suite's output (its end):\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
        return 1
    where = " on droced" if a.droced else ""
    print(f"ok - rdma-core's suite on droce0{where}: {nok} passed (the lists' {len(ok_list)}), "
          f"none failed but the {len(pending)} pending, every skip allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
