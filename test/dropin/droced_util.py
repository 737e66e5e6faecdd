# SPDX-License-Identifier: BSD-3-Clause
"""A droced for the drop-in tests: started, listed, stopped by its PID."""
import os
import subprocess
import time


def droced_start(droced, tmp, port=("--vdev=net_ring0", "--", "--droce-ipv4=198.18.5.1/24"),
                 side=0, wrap=()):
    """droced with its main lcore side and its engine on the other of 0 and 1
    (by default on net_ring; port: its vdev, "--" and droce's address),
    under wrap (e.g. ip netns exec NS): (Popen, socket, output), once ready."""
    sock = os.path.join(tmp, f"droced{side}.sock")
    out = open(os.path.join(tmp, f"droced{side}.out"), "w+")
    p = subprocess.Popen(list(wrap) + [droced, "-l", "0,1", "--main-lcore", str(side), "--no-pci",
                          "--log-level=lib.eal:error", f"--file-prefix=droced{os.getpid()}_{side}"] +
                         list(port) + [f"--droce-transport-lcores={1 - side}", f"--socket={sock}"],
                         stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and p.poll() is None:
        out.seek(0)
        if "droced: ready on" in out.read():
            return p, sock, out
        time.sleep(0.05)
    out.seek(0)
    text = out.read()
    droced_stop((p, sock, out))
    raise SystemExit(f"FAIL: droced {side} did not start: {text[-500:]}")


def droced_apps(droced, sock):
    """droced --ctl list's application lines ("" when none); a failed list
    fails the test (an empty answer would read as "no application left")."""
    r = subprocess.run([droced, "--ctl", sock, "list"], capture_output=True, text=True,
                       timeout=10)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: droced --ctl {sock} list exited {r.returncode}: "
                         f"{(r.stdout + r.stderr)[-500:]}")
    return "\n".join(ln for ln in r.stdout.splitlines() if ln.startswith("pid "))


def droced_stop(daemon):
    """SIGTERM, then SIGKILL after 20 s, by its PID."""
    p, _, out = daemon
    p.terminate()
    try:
        p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    out.close()
