#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Driver of the telemetry/capture integration test.

usage: telemetry.py TEST_TELEMETRY DROCE_DUMP VECTORS_DIR

Runs TEST_TELEMETRY (two droce devices over net_memif, RC traffic, its own
telemetry read back and checked, device 0 capturing with --droce-capture),
then checks the pcapng it wrote: as many frames as the port received and
sent (the test prints "# capture frames=N roce=M"), M of them RoCEv2 (as
many as the transport sent and received), all decoded by tshark without
"Malformed", droce-dump with 0 ICRC errors and the independent
check_icrc.py.  TAP output.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

results = []


def ok(cond, what, detail=""):
    results.append(cond)
    print(("ok" if cond else "not ok") + " %d - %s" % (len(results), what))
    if not cond and detail:
        for line in detail.splitlines()[-40:]:
            print("#   " + line)
    return cond


def run_tshark(args):
    """tshark's result; a missing tshark reads as a failed run (status 127)."""
    try:
        return subprocess.run(["tshark"] + args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    except FileNotFoundError as e:
        return subprocess.CompletedProcess(["tshark"] + args, 127, "", str(e))


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    test, dump, vectors = sys.argv[1:]
    tmp = tempfile.mkdtemp(prefix="droce-tel-")
    cap = os.path.join(tmp, "droce0.pcapng")
    try:
        run = subprocess.run([test, cap], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, timeout=120)
        sys.stdout.write("".join("# " + l + "\n" for l in run.stdout.splitlines()))
        if not ok(run.returncode == 0, "test_telemetry: traffic and telemetry checks",
                  run.stdout):
            return 1
        m = re.search(r"# capture frames=(\d+) roce=(\d+)", run.stdout)
        if not ok(m is not None and int(m.group(2)) > 0,
                  "the test reports the frames sent and received"):
            return 1
        total, expect = int(m.group(1)), int(m.group(2))
        ok(os.path.getsize(cap) > 0, "capture written: %s" % cap)

        # tshark is a test dependency (usertools/droce-setup installs it):
        # its absence or its failure fails these checks, never skips them
        ok(shutil.which("tshark") is not None, "tshark installed (usertools/droce-setup)")
        t = run_tshark(["-r", cap])
        lines = [l for l in t.stdout.splitlines() if l.strip()]
        ok(t.returncode == 0 and len(lines) == total,
           "tshark reads %d frames (expected %d)" % (len(lines), total), t.stdout + t.stderr)
        t = run_tshark(["-r", cap, "-Y", "infiniband"])
        roce = [l for l in t.stdout.splitlines() if l.strip()]
        ok(t.returncode == 0 and len(roce) == expect,
           "tshark: %d are RoCEv2 (infiniband)" % len(roce), t.stdout + t.stderr)
        t = run_tshark(["-r", cap, "-V"])
        frames = len(re.findall(r"^Frame \d+:", t.stdout, re.M))
        ok(t.returncode == 0 and frames == total and "malformed" not in t.stdout.lower(),
           "tshark -V decodes %d frames, no malformed packet" % frames,
           t.stdout + t.stderr if t.returncode != 0 or frames != total else
           "\n".join(l for l in t.stdout.splitlines() if "alformed" in l))

        d = subprocess.run([dump, cap], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        summary = d.stdout.strip().splitlines()[-1] if d.stdout.strip() else ""
        print("# droce-dump: " + summary)
        ok(d.returncode == 0 and "icrc_bad=0" in summary and "malformed=0" in summary
           and ("roce=%d " % expect) in summary,
           "droce-dump: %d RoCEv2 frames, 0 ICRC errors, 0 malformed" % expect, d.stdout)

        c = subprocess.run([sys.executable, os.path.join(vectors, "check_icrc.py"),
                            "--summary", cap], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        last = c.stdout.strip().splitlines()[-1] if c.stdout.strip() else ""
        ok(c.returncode == 0, "check_icrc.py: every ICRC valid (%s)" % last, c.stdout)

        # the statistics block droce writes at close: every frame offered
        # was written (it once went missing: written after the port closed)
        stats = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                             "interop", "pcapng_stats.py")
        s = subprocess.run([sys.executable, stats, cap], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        ok(s.returncode == 0 and ("ifrecv %d, ifdrop 0" % total) in s.stdout,
           "statistics block: %d frames offered, none dropped" % total, s.stdout)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("1..%d" % len(results))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
