#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""What a client sees when the server that owns its target memory dies or
hangs: two droce-testpmd processes over net_memif (TCP qp exchange on
127.0.0.1), the client running the write_bw engine (4 KiB RDMA WRITEs, 16
in flight) into the server's MR.

  plain        the server is killed with SIGKILL mid-transfer: nobody answers,
               the first failed completion is RETRY_EXC_ERR after the QP's
               retry timeout (timeout=14: 4.096 us x 2^14 = 67.1 ms, retry=7:
               8 transmissions, 537 ms); asserted between 1 and 8 of them.
  lease-kill   the same with the MR leased (60 s, not reached): the lease's
               engine dies with the process, so the same RETRY_EXC_ERR.
  lease-hang   the server stays alive (its engine runs) but leases the MR for
               1000 ms after the transfer started and never renews: the first
               failure is REM_ACCESS_ERR, asserted no earlier than the lease's
               deadline and within LEASE_LATE_S of it, both on the two
               processes' own CLOCK_MONOTONIC stamps (droce's lease clock),
               not on when their lines came through the pipes
               (transport_lease bounds the expiry exactly).

Prints one line per model ("lifetime: MODEL ...", read by droce-demo
--lifetime); --table prints the README's table of them, with droced's row
from DROCE_LIFETIME_DAEMON="STATUS MS" and the persistent region's from
DROCE_LIFETIME_PERSIST="OK_ROUNDS ROUNDS READABLE STATUS MS"
(test/integration/daemon).  Usage:
lifetime_kill.py DROCE_TESTPMD [--table] [MODEL...]
Only processes this script started are killed (by their Popen handle).
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

RETRY_S = 4.096e-6 * 2 ** 14		# the QP's local ACK timeout (timeout=14)
RETRIES = 7
LEASE_HANG_MS = 1000

SERVER = """pd create
mr reg 0 1048576 access=local_write,remote_write,remote_read
cq create 256
qp create 0 rc cq=0 sq=128 rq=128
{lease_at_start}qp exchange 0 listen port={port} mr=0
sync tag=go timeout=60
sleep 300
{lease_later}sleep 60000
"""

CLIENT = """pd create
mr reg 0 1048576 access=local_write,remote_write,remote_read
cq create 256
qp create 0 rc cq=0 sq=128 rq=128
qp exchange 0 connect 127.0.0.1 port={port} mr=0
sync tag=go timeout=60
expect error
engine start write_bw qp=0 mr=0 size=4096 depth=16 secs=60
expect error
engine wait 0 timeout=90
"""


def eal(prefix, role, sock):
    args = ["--no-pci", "-l", "0", f"--file-prefix={prefix}", "--log-level=lib.eal:error",
            f"--vdev=net_memif0,role={role},socket={sock},socket-abstract=no,bsize=8192"]
    if os.environ.get("DROCE_NO_HUGE") == "1":
        args += ["--no-huge", "-m", "512"]
    return args


class Proc:
    """A droce-testpmd whose output lines are stamped as they arrive
    (its stdout is line-buffered) by a reader thread."""

    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, text=True, errors="replace")
        self.lines = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def wait_line(self, rx, timeout):
        """(arrival time, match) of the first line matching rx, or (None, None)."""
        end = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < end:
            for t, line in self.lines[seen:]:
                m = re.search(rx, line)
                if m:
                    return t, m
                seen += 1
            if self.p.poll() is not None and seen == len(self.lines):
                self.reader.join(timeout=1)
                if seen == len(self.lines):
                    break
            time.sleep(0.001)
        return None, None

    def tail(self):
        return " | ".join(l for _, l in self.lines[-6:])

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait(timeout=10)
        self.reader.join(timeout=5)


def run(binary, model, tmp, k):
    port = 20000 + (os.getpid() * 11 + k * 173) % 40000
    sock = os.path.join(tmp, f"memif{os.getpid()}x{k}.sock")
    lease_at_start = "mr lease 0 ms=60000\n" if model == "lease-kill" else ""
    lease_later = f"mr lease 0 ms={LEASE_HANG_MS}\n" if model == "lease-hang" else ""
    procs = []
    try:
        for side, text in enumerate((SERVER.format(port=port, lease_at_start=lease_at_start,
                                                   lease_later=lease_later),
                                     CLIENT.format(port=port))):
            cmd = os.path.join(tmp, f"{model}{side}.cmd")
            with open(cmd, "w") as f:
                f.write(text)
            procs.append(Proc([binary] + eal(f"life{os.getpid()}{k}{side}",
                                             "server" if side == 0 else "client", sock) +
                              ["--", f"--droce-ipv4=198.18.13.{side + 1}/24", "--cmdfile", cmd]))
            # the memif client needs the server's socket
            if side == 0 and procs[0].wait_line(r"^pd 0 created", 60)[0] is None:
                return None, f"server did not start: {procs[0].tail()}"
        server, client = procs
        if model == "lease-hang":
            t0, m = server.wait_line(r"^mr 0: lease \d+ ms, live, (\d+) us left at (\d+) us$",
                                     90)
            if t0 is None:
                return None, f"server never leased: {server.tail()}"
            # the deadline is no earlier than the query's clock + the time left
            t_ref = (int(m.group(2)) + int(m.group(1))) / 1e6
        else:
            t0, _ = client.wait_line(r"^engine 0: write_bw started", 90)
            if t0 is None:
                return None, f"client never started: {client.tail()}"
            time.sleep(1.0)		# mid-transfer
            t_ref = time.monotonic()
            os.kill(server.p.pid, signal.SIGKILL)
        t_fail, m = client.wait_line(r"completion (\w+) \(.*\) at (\d+) us$", 60)
        if t_fail is None:
            return None, f"no failed completion: {client.tail()}"
        if model == "lease-hang":
            t_fail = int(m.group(2)) / 1e6	# the client's poll, its own stamp
        return (m.group(1), t_fail - t_ref), None
    finally:
        for p in procs:
            p.stop()


# The design (droce.h): the server's engine revokes within a lease tick of
# the deadline, never before it; the client's next WRITE is then NAKed and
# polled.  Those last steps are two processes' scheduling on a shared
# machine, allowed this long (transport_lease asserts the tick itself).
LEASE_LATE_S = 0.2


def check(model, status, dt):
    if model == "lease-hang":
        return status == "REM_ACCESS_ERR" and 0 <= dt <= LEASE_LATE_S
    return status == "RETRY_EXC_ERR" and RETRY_S <= dt <= (RETRIES + 1) * RETRY_S + 0.5


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    table = "--table" in sys.argv
    binary, models = args[0], args[1:] or ["plain", "lease-kill", "lease-hang"]
    failed = 0
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        if os.environ.get("LIFETIME_KEEP"):
            tmp = os.environ["LIFETIME_KEEP"]
        for k, model in enumerate(models):
            res, err = run(binary, model, tmp, k)
            if err is not None:
                print(f"not ok - {model}: {err}", flush=True)
                failed += 1
                continue
            status, dt = res
            results[model] = res
            good = check(model, status, dt)
            ref = "the lease's deadline" if model == "lease-hang" else "the SIGKILL"
            print(f"lifetime: {model} first failure {status} {dt * 1e3:.1f} ms after {ref}",
                  flush=True)
            print(f"{'ok' if good else 'not ok'} - {model}", flush=True)
            failed += not good
    if table:
        print_table(results)
    sys.exit(1 if failed else 0)


def print_table(r):
    def cell(model):
        if model not in r:
            return "failed", "-"
        return r[model][0], f"{r[model][1] * 1e3:.0f} ms"
    print("| model | client's next WRITE after the kill | after | "
          "persistent data readable after restart | memory freed |")
    print("|---|---|---|---|---|")
    s, t = cell("plain")
    print(f"| plain | {s} (nobody answers) | {t} | no | at the kill (kernel) |")
    s, t = cell("lease-kill")
    print(f"| lease | {s} (nobody answers) | {t} | no | at the kill (kernel) |")
    s, t = cell("lease-hang")
    print(f"| lease, owner hung (no renewal) | {s} | {t} after the deadline | no | "
          "keys at the deadline, the rest at dereg |")
    # droce-demo measures droced's row first (daemon_test.py crash)
    d = os.environ.get("DROCE_LIFETIME_DAEMON", "").split()
    if len(d) == 2:
        print(f"| in droced, owner = process | {d[0]} (keys revoked at the death) | "
              f"{float(d[1]):.0f} ms | no | at the death: keys first, then all (droced) |")
    else:
        print("| in droced, owner = process | not measured | - | no | - |")
    # and the persistent region's (daemon_test.py persist, persist_lease):
    # "OK_ROUNDS ROUNDS READABLE STATUS MS"
    p = os.environ.get("DROCE_LIFETIME_PERSIST", "").split()
    if len(p) == 5:
        print(f"| memory-owner daemon, owner = daemon (persistent) | success: {p[0]} of {p[1]} "
              f"WRITE+READ rounds after the kill (droced keeps the region) | at release or "
              f"lease expiry: {p[3]}, {float(p[4]):.2f} ms after the lease's deadline | "
              f"{p[2]} (reattach by name: the last WRITE's bytes) | at release / expiry, by "
              f"droced: the key, then QPs, CQs, PD, buffer |")
    else:
        print("| memory-owner daemon, owner = daemon (persistent) | not measured | - | - | - |")


if __name__ == "__main__":
    main()
