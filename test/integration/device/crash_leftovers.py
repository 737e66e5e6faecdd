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
  4. its runtime directory (/var/run/dpdk/PREFIX: only the dead telemetry
     socket) is gone after the next droce application started (droce_init
     removes such directories once DEVICE_SWEEP_AGE_S = 2 s old), while
     an empty one (a clean exit's) stays.  With
     DROCE_NO_HUGE=1 droce adds no --in-memory (README "Nothing left
     behind"): the directory keeps its config file, which is asserted
     instead, and it is removed here.
Usage: crash_leftovers.py DROCE_PINGPONG
"""
import os
import shutil
import signal
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

        if no_huge:
            dead = runtime_dir(tag + "a")
            if not os.path.isfile(os.path.join(dead, "config")):
                fail(f"--no-huge: expected the shared configuration in {dead}")
            print(f"--no-huge: {dead} keeps its config (no hugepages); removed by the test")
            shutil.rmtree(dead)
            print("PASS")
            return
        # the next droce application's droce_init removes the dead one's
        # runtime directory (it exits at its unknown option, after droce_init)
        if not os.path.isdir(runtime_dir(tag + "a")):
            fail("no runtime directory after SIGKILL: the sweep would not be tested")
        time.sleep(SWEEP_AGE_S + 0.5)
        subprocess.run([pp] + eal_args(tag + "b", tmp, no_huge) + ["--", "--no-such-option"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        if os.path.exists(runtime_dir(tag + "a")):
            fail(f"{runtime_dir(tag + 'a')} still there after the next start: "
                 f"{os.listdir(runtime_dir(tag + 'a'))}")
        print(f"{runtime_dir(tag + 'a')} removed by the next droce_init")
        # the second one exited cleanly: its directory is empty (not a
        # crash's), and an empty one, however old, is left alone: the next
        # process of its prefix may be entering it
        leftover = runtime_dir(tag + "b")
        if os.path.isdir(leftover):
            if os.listdir(leftover):
                fail(f"clean exit left {os.listdir(leftover)} in {leftover}")
            old = time.time() - 10 * SWEEP_AGE_S
            os.utime(leftover, (old, old))
            subprocess.run([pp] + eal_args(tag + "c", tmp, no_huge) + ["--", "--no-such-option"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            if not os.path.isdir(leftover):
                fail(f"the next droce_init removed the empty {leftover}")
            print(f"empty {leftover} left alone by the next droce_init")
            os.rmdir(leftover)
            if os.path.isdir(runtime_dir(tag + "c")):
                os.rmdir(runtime_dir(tag + "c"))
    print("PASS")


if __name__ == "__main__":
    main()
