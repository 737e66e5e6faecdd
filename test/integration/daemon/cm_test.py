#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The RDMA CM on droced (app/droced/README.md "RDMA CM"): two applications
of droce.h (cm_app.c) on one droced connect with droce_rdma_*; droced owns
the GSI QP and relays their CM MADs (here on its loopback: same GID).

  cm_pair     server and client droced's secondaries (DROCE_QUEUES=shared,
              not the default): listen, connect,
              accept (the server's buffer address and rkey as the REP's
              private data), ESTABLISHED on both; two rounds of a 4 KiB
              WRITE and a 64-byte SEND with immediate, every byte checked
              by the server; the client's disconnect: DISCONNECTED on both
              sides; both exit 0, droced lists no application after
  cm_regions  the same with both plain processes on queue regions
              (DROCE_QUEUES=region, the default; no EAL)
  cm_forge    all plain processes: a listener SIGKILLed first: its port
              is free again (the pair's server listens on it); then,
              between the pair's two rounds, a third application listens
              on the server's port (EADDRINUSE) and sends through the
              relay DREQ, DREP, REJ, RTU and SIDR_REQ MADs under the 16
              comm IDs droced gave before its own, SIDR_REPs answering
              SIDR_REQs it never got (their Request IDs), a REJ of a REQ it
              never got (all EPERM), a MAD of another class and one of
              another method, a LAP, an unknown op (EINVAL), the free of
              another's comm ID (ENOENT):
              102 of 102 refused; a DREQ under its own comm ID accepted, also
              to 80 GIDs of nobody (more peers than the 64 address handles
              droced's GSI QP keeps: all 80 sent); the pair's second round
              and disconnect then complete as in cm_pair

Usage: cm_test.py CASE DROCED CM_APP.  Needs hugepages (exit 77 when
DROCE_NO_HUGE=1).
"""
import os
import signal
import subprocess
import sys

from daemon_test import GIDS, Setup, fail, use_lsan_supp

IP = GIDS[0].split("/")[0]
PORT = str(20000 + os.getpid() % 20000)


def app(s, name, args, plain=False, stdin=None):
    if plain:
        os.environ["DROCE_DAEMON"] = s.sock
        os.environ["DROCE_QUEUES"] = "region"
        argv = [s.app, *args]
    else:
        argv = [s.app, "-l", "0", "--no-pci", "--log-level=lib.eal:error", "--",
                f"--droce-daemon={s.sock}", *args]
        os.environ["DROCE_QUEUES"] = "shared"	# not the default
    try:
        return s.spawn(name, argv, stdin=stdin)
    finally:
        os.environ.pop("DROCE_DAEMON", None)
        os.environ.pop("DROCE_QUEUES", None)


def pair(s, plain=False, between=None):
    srv = app(s, "server", ["server", IP, PORT], plain)
    srv.wait_line(r"^listening$")
    cli = app(s, "client", ["client", IP, PORT], plain, stdin=subprocess.PIPE)
    try:
        rounds(s, srv, cli, between)
    except SystemExit:
        print(f"--- client:\n{cli.output()}\n--- droced:\n{s.droced.output()}")
        raise
    print(f"{'plain processes' if plain else 'secondaries'}: connected, 2 rounds of "
          "WRITE + SEND checked, DISCONNECTED on both sides")
    s.wait_apps({})


def rounds(s, srv, cli, between):
    # a secondary's EAL start takes seconds on a loaded machine
    for p in (srv, cli):
        p.wait_line(r"^established$|^cm_app: ", timeout=60)
        p.wait_line(r"^established$", timeout=1)
    cli.wait_line(r"^round 1 sent$")
    srv.wait_line(r"^round 1 ok$")
    if between is not None:
        between()
    cli.p.stdin.write("go\n")
    cli.p.stdin.flush()
    cli.wait_line(r"^round 2 sent$")
    srv.wait_line(r"^round 2 ok$")
    for p in (cli, srv):
        p.wait_line(r"^disconnected$")
        p.wait_line(r"^cm_app: ok$")
        if p.wait() != 0:
            fail(f"{p.name} exit {p.p.returncode}", p)


def case_cm_pair(s):
    pair(s)


def case_cm_regions(s):
    pair(s, plain=True)


def case_cm_forge(s):
    # plain processes here (no EAL start: seconds on a loaded machine)
    dead = app(s, "dead", ["server", IP, PORT], plain=True)
    dead.wait_line(r"^listening$")
    dead.p.send_signal(signal.SIGKILL)
    dead.wait()
    s.wait_apps({})
    print("a listener SIGKILLed: reaped")

    def attack():
        f = app(s, "forger", ["forge", IP, PORT], plain=True)
        f.wait_line(r"^listen: EADDRINUSE$")
        f.wait_line(r"^forged 102 of 102 refused$")
        f.wait_line(r"^own accepted$")
        f.wait_line(r"^own to 80 peers: 80 sent$")
        if f.wait() != 0:
            fail(f"forger's exit {f.p.returncode}", f)
        print("forger: listen EADDRINUSE, 102 of 102 forged MADs and requests refused, "
              "its own accepted, to 80 peers too")
    pair(s, plain=True, between=attack)


CASES = {"cm_pair": case_cm_pair, "cm_regions": case_cm_regions, "cm_forge": case_cm_forge}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        raise SystemExit(__doc__)
    if os.environ.get("DROCE_NO_HUGE") == "1":
        print("droced needs hugepages (an EAL primary of shared configuration)")
        return 77
    use_lsan_supp()
    s = Setup(sys.argv[2], sys.argv[3])
    try:
        s.start_droced()
        CASES[sys.argv[1]](s)
    finally:
        s.cleanup()
    print(f"cm {sys.argv[1]}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
