#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Nothing left behind by a droce application killed with SIGKILL.

Starts droce-pingpong as a server on net_memif (EAL options of its own,
no --in-memory: droce_init adds it, lib/device/device_eal.c), waits until
its device is up, kills it with SIGKILL and checks:
  1. it held hugepages while it ran (/proc/PID/status HugetlbPages; with
     DROCE_NO_HUGE=1: none, and --no-huge);
  2. no file of its prefix is left in any hugetlbfs mount;
  3. HugePages_Free is back to the value before it started (within 10 s;
     other processes taking hugepages meanwhile would disturb this);
  4. its runtime directory (/var/run/dpdk/PREFIX: droce.lock and the dead
     telemetry socket; with DROCE_NO_HUGE=1, where droce adds no
     --in-memory, also EAL's config and fbarray files) is gone after the
     next droce application started (lib/device/device_rundir.c: sockets
     DEVICE_SWEEP_AGE_S = 2 s old), while that of a live droce process
     (the server, before the kill) and directories droce did not create
     (no droce.lock: an empty one, one with a dead socket) stay;
  5. a clean exit leaves no runtime directory (the next one's exits at
     its unknown option, after droce_init, without droce_cleanup).
Usage: crash_leftovers.py DROCE_PINGPONG
"""
import fcntl
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

SWEEP_AGE_S = 2


def huge_free():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("HugePages_Free:"):
                return int(line.split()[1])
    return 0


def hugetlb_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("HugetlbPages:"):
                return int(line.split()[1])
    return 0


def hugetlbfs_mounts():
    with open("/proc/mounts") as f:
        return [l.split()[1] for l in f if l.split()[2] == "hugetlbfs"]


def files_of(prefix):
    return [os.path.join(m, n) for m in hugetlbfs_mounts()
            for n in os.listdir(m) if n.startswith(prefix)]


def runtime_dir(prefix):
    base = "/var/run/dpdk" if os.getuid() == 0 else \
        os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")
    return os.path.join(base, prefix)


def eal_args(prefix, tmp, no_huge):
    sock = os.path.join(tmp, "memif.sock")
    args = ["--no-pci", "-l", "0", f"--file-prefix={prefix}",
            "--log-level=lib.eal:error",
            f"--vdev=net_memif0,role=server,socket={sock},socket-abstract=no,bsize=8192"]
    if no_huge:
        args += ["--no-huge", "-m", "512"]
    return args


def next_start(pp, prefix, tmp, no_huge):
    """A droce application that exits at its unknown option, after droce_init."""
    subprocess.run([pp] + eal_args(prefix, tmp, no_huge) + ["--", "--no-such-option"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def foreign_dirs(tag):
    """Runtime directories droce did not create, old enough to sweep."""
    empty, with_sock = runtime_dir(tag + "e"), runtime_dir(tag + "s")
    os.makedirs(empty)
    os.makedirs(with_sock)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.bind(os.path.join(with_sock, "sock"))
    s.close()				# bound, nobody listens: a dead socket
    old = time.time() - 10 * SWEEP_AGE_S
    for d in (empty, with_sock):
        os.utime(d, (old, old))
    time.sleep(SWEEP_AGE_S + 0.5)	# the socket's ctime too
    return [empty, with_sock]


def pin_runtime_dir(prefix):
    """A shared flock on PREFIX's droce.lock (lib/device/device_rundir.c):
    no sweep removes the directory while it is held."""
    fd = os.open(os.path.join(runtime_dir(prefix), "droce.lock"), os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def main():
    pp = sys.argv[1]
    no_huge = os.environ.get("DROCE_NO_HUGE") == "1"
    tag = f"crash{os.getpid()}"
    with tempfile.TemporaryDirectory() as tmp:
        free_before = huge_free()
        log = open(os.path.join(tmp, "server.log"), "w+")
        proc = subprocess.Popen([pp] + eal_args(tag + "a", tmp, no_huge) +
                                ["--", "--droce-ipv4=198.18.5.1/24"],
                                stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while "local address" not in open(log.name).read():
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                fail("server did not come up:\n" + open(log.name).read())
            time.sleep(0.1)
        held = hugetlb_kb(proc.pid)
        print(f"server pid {proc.pid} up: HugetlbPages {held} kB, "
              f"HugePages_Free {free_before} -> {huge_free()}")
        if no_huge and held != 0:
            fail(f"--no-huge, yet {held} kB of hugepages held")
        if not no_huge and held == 0:
            fail("the server held no hugepages: nothing would be checked")
        # Another droce process started on this machine meanwhile (a test
        # run in parallel) sweeps the server's directory as soon as nobody
        # holds its droce.lock; a shared lock of ours, kept until our own
        # next start, makes the directory outlive the kill for that start.
        pin = pin_runtime_dir(tag + "a")
        foreign = foreign_dirs(tag)
        next_start(pp, tag + "l", tmp, no_huge)
        if not os.path.isdir(runtime_dir(tag + "a")):
            proc.kill()
            fail(f"another start's sweep removed the live server's {runtime_dir(tag + 'a')}")
        for d in foreign:
            if not os.path.isdir(d):
                proc.kill()
                fail(f"the sweep removed {d}, which droce did not create")
            for n in os.listdir(d):
                os.unlink(os.path.join(d, n))
            os.rmdir(d)
        if os.path.exists(runtime_dir(tag + "l")):
            proc.kill()
            fail(f"clean exit left {runtime_dir(tag + 'l')}")
        print(f"a live server's directory and {len(foreign)} not droce's stay; "
              f"a clean exit's is gone")
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

        left = files_of(tag)
        if left:
            fail(f"hugepage files left after SIGKILL: {left[:4]} ({len(left)})")
        deadline = time.monotonic() + 10
        while huge_free() < free_before and time.monotonic() < deadline:
            time.sleep(0.1)
        print(f"after SIGKILL: HugePages_Free {huge_free()} (before: {free_before}), "
              f"no hugetlbfs file of prefix {tag}a")
        if huge_free() < free_before:
            fail(f"HugePages_Free {huge_free()} < {free_before} before the start")

        # the next droce application's droce_init removes the dead one's
        # runtime directory (it exits at its unknown option, after droce_init)
        dead = runtime_dir(tag + "a")
        if not os.path.isdir(dead):
            fail(f"no {dead} after SIGKILL: the sweep would not be tested")
        if no_huge and not os.path.isfile(os.path.join(dead, "config")):
            fail(f"--no-huge: expected the shared configuration in {dead}")
        print(f"after SIGKILL: {dead} holds {sorted(os.listdir(dead))}")
        time.sleep(SWEEP_AGE_S + 0.5)
        os.close(pin)			# now the dead server's is the only claim
        next_start(pp, tag + "b", tmp, no_huge)
        if os.path.exists(dead):
            fail(f"{dead} still there after the next start: {os.listdir(dead)}")
        print(f"{dead} removed by the next droce_init")
        if os.path.exists(runtime_dir(tag + "b")):
            fail(f"clean exit left {runtime_dir(tag + 'b')}: "
                 f"{os.listdir(runtime_dir(tag + 'b'))}")
        print(f"clean exit: no {runtime_dir(tag + 'b')}")
    print("PASS")


if __name__ == "__main__":
    main()
