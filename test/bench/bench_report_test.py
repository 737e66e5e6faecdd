#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The bench's report code (test/bench/droce_bench.py), not its figures:
  - the markdown table: its columns, its row labels (the 10,000-QP row
    among them), the ratios it computes from given samples, and the
    "loaded: not a result" mark and the load line;
  - the ceiling's own sweep and its use;
  - the demo's load window (--demo-snapshot, --demo-ratio's WINDOW);
  - the --callgrind arithmetic on a callgrind_annotate listing;
  - with TP_BENCH given: usertools/droce-bench --callgrind's one line from a
    real tp_bench run under valgrind (its format and a sanity bound).
Usage: bench_report_test.py [TP_BENCH]
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import droce_bench as db  # noqa: E402

failures = 0


def check(what, got, want):
    global failures
    if got != want:
        failures += 1
        print(f"FAIL {what}: got {got!r}, want {want!r}")
    else:
        print(f"ok   {what}")


MD_HEADER = ("| PMD | test | droce | raw | ceiling | droce/raw | droce/ceiling | "
             "unit, raw reference |")
LABELS = ["write_bw -s 64", "write_bw -s 65536 (MTU 1024)", "write_bw -s 65536 (MTU 4096)",
          "write_lat -s 8", "write_bw -s 64, 10000 QPs", "read_bw -s 65536", "read_lat -s 8",
          "send_bw -s 65536", "send_lat -s 8", "atomic_bw", "atomic_lat"]


def samples_for(case, loaded):
    """raw, ceiling, droce samples with known ratios: droce/raw 0.5, droce/ceiling 0.8."""
    label, test, args, extra, ref = case
    S = db.Sample
    if ref[0] == "rate":
        size = int(args[args.index("-s") + 1])
        # droce: 2 M messages/s of size bytes; raw and ceiling in frames of
        # ref[2] payload bytes, carrying 2 x and 1.25 x that
        droce = (2.0 * size / db.MIB, 2.0)              # (MB/sec of 2^20 B, Mpps)
        raw = 4.0 * size / ref[2]
        ceil = 2.5 * size / ref[2]
        return {"raw": S(raw, False), "ceiling": S(ceil, False), "droce": S(droce, loaded)}
    if ref[0] == "msg":
        droce = (None, 2.0, 4.0) if test == "qps" else (0.0, 2.0)
        return {"raw": S(4.0, False), "ceiling": S(2.5, False), "droce": S(droce, loaded)}
    # latency: droce t_typical 2 us; raw RTT / ceiling RTT chosen for 2.0 / 1.6
    return {"raw": S(1.0 * ref[3], False), "ceiling": S(1.25 * ref[3], False),
            "droce": S(2.0, loaded)}


def test_meter_counts_others_only():
    """Others' cores = (machine busy - the bench's own) / elapsed."""
    m = db.Meter(0.3)
    hz = m.hz
    saved = db.busy_ticks, db.own_ticks, db.time.monotonic, db.loadavg
    try:
        for busy, own, want_hot in ((3 * hz, 2 * hz, True), (2 * hz + hz // 5, 2 * hz, False)):
            b = iter([1000, 1000 + busy])
            o = iter([70, 70 + own])
            t = iter([10.0, 12.0])
            db.busy_ticks = lambda: next(b)
            db.own_ticks = lambda: next(o)
            db.time.monotonic = lambda: next(t)
            db.loadavg = lambda: 1.9	# the bench's own polling: not counted
            s = m.take(lambda: 42.0)
            check(f"sample value ({busy}, {own})", s.value, 42.0)
            check(f"loaded ({busy}, {own})", s.loaded, want_hot)
        check("others' cores, first", round(m.loads[0], 3), 0.5)
        check("others' cores, second", round(m.loads[1], 2), 0.1)
        check("measurements", (m.taken, m.loaded), (2, 1))
    finally:
        db.busy_ticks, db.own_ticks, db.time.monotonic, db.loadavg = saved


def test_report():
    runs = [{}]
    for case in db.cases(False):
        for w, s in samples_for(case, case[0] == "read_bw -s 65536").items():
            runs[0][(case[0], w)] = s
    meter = db.Meter(0.3)
    meter.loads, meter.taken, meter.loaded = [0.1, 0.5], 2, 1
    meter.avgs = [1.25, 1.75]
    results = {"memif": (runs, {138: (32, 0), 1082: (128, 4096), 4154: (32, 0)}, 0)}
    text, md = db.report(["memif"], results, False, 1, meter)
    check("markdown header", md[0], MD_HEADER)
    check("markdown alignment row", md[1], "|---|---|---:|---:|---:|---:|---:|---|")
    rows = [r for r in md[2:] if r.startswith("| memif |")]
    check("row labels, in order", [r.split(" | ")[1] for r in rows], LABELS)
    cells = {r.split(" | ")[1]: r.split(" | ") for r in rows}
    for label in LABELS:
        c = cells[label]
        lat = "lat" in label
        check(f"{label}: droce/raw", c[5], "2.000" if lat else "0.500")
        check(f"{label}: droce/ceiling", c[6], "1.600" if lat else "0.800")
        check(f"{label}: loaded mark", c[7].startswith("loaded: not a result"),
              label == "read_bw -s 65536")
    check("10,000-QP row: 1-QP figure and share",
          cells["write_bw -s 64, 10000 QPs"][7].endswith("1 QP: 4.000 M/s, 10000 of 1: 0.500 |"),
          True)
    load = [r for r in md if r.startswith("- load: ")]
    check("one load line", len(load), 1)
    check("load line", bool(re.match(r"- load: CPU used by other processes during each "
                                      r"measurement 0\.10 \.\. 0\.50 cores .*1\.25 \.\. 1\.75\); "
                                      r"limit 0\.3 cores: 1 of 2 measurements above it",
                                      load[0] if load else "")),
          True)
    check("text table has the same rows", sum(1 for t in text if t.startswith("memif ")),
          len(LABELS))


CG_LISTING = """\
--------------------------------------------------------------------------------
Ir
--------------------------------------------------------------------------------
1,000,000 (100.0%)  PROGRAM TOTALS

--------------------------------------------------------------------------------
Ir                   file:function
--------------------------------------------------------------------------------
1,000,000 (100.0%)  /w/test/bench/tp_bench.c:tpb_measure [/w/build/test/bench/tp_bench]
  120,000 (12.00%)  /w/lib/wire/roce_icrc.c:roce_icrc_premasked [/w/build/test/bench/tp_bench]
  100,000 (10.00%)  /w/lib/wire/roce_icrc.c:roce_crc32 [/w/build/test/bench/tp_bench]
   90,000 ( 9.00%)  ???:crc32_gzip_refl_by8_02 [/w/build/test/bench/tp_bench]
   50,000 ( 5.00%)  ./string/../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S:__memcpy_avx_unaligned_erms [/usr/lib/x86_64-linux-gnu/libc.so.6]
    1,000 ( 0.10%)  ./string/../sysdeps/x86_64/multiarch/memmove-vec-unaligned-erms.S:__memmove_avx_unaligned_erms [/usr/lib/x86_64-linux-gnu/libc.so.6]
"""


def test_callgrind_count():
    # 1,000,000 - roce_crc32 100,000 (its ISA-L callee is inside it) - memcpy
    # 50,000 - memmove 1,000, over 1,000 WRITEs
    check("callgrind: total - CRC - copies", db.callgrind_count(CG_LISTING, 1000), 849)
    no_wrapper = CG_LISTING.replace("roce_crc32", "roce_crc32_other")
    check("callgrind: ISA-L's crc32_* without roce_crc32",
          db.callgrind_count(no_wrapper, 1000), 859)
    check("callgrind: no total", db.callgrind_count("nothing\n", 1000), None)


def test_callgrind_lat_counts():
    # write_lat: tpb_measure 1,000,000 - CRC 100,000 - copies 51,000 over
    # 1,000 round trips; tpb_measure_raw 80,000 over the same 1,000
    lat = CG_LISTING + ("   80,000 ( 8.00%)  /w/test/bench/tp_bench.c:tpb_measure_raw "
                        "[/w/build/test/bench/tp_bench]\n")
    check("callgrind write_lat: droce and raw per round trip",
          db.callgrind_lat_counts(lat, 1000), (849, 80))
    check("callgrind write_lat: no raw function", db.callgrind_lat_counts(CG_LISTING, 1000),
          None)


def test_callgrind_run(tp_bench):
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = db.callgrind(tp_bench)
    lines = out.getvalue().splitlines()
    check("--callgrind exit status", rc, 0)
    check("--callgrind prints one line", len(lines), 1)
    m = re.fullmatch(re.escape(db.CG_LINE) + r"(\d+)", lines[0] if lines else "")
    check("--callgrind line format", m is not None, True)
    # a 64 B WRITE end to end is more than a hundred instructions and, with
    # anything like today's engine, far under 20,000
    check("--callgrind count within 100 .. 20000",
          m is not None and 100 <= int(m.group(1)) <= 20000, True)


def test_demo_window():
    """The demo's window: others' cores from two snapshots, the caller's ticks as its own."""
    import subprocess
    import tempfile
    hz = os.sysconf("SC_CLK_TCK")
    with tempfile.NamedTemporaryFile("w", delete=False) as f:
        f.write(f"10.0 1000 70\n12.0 {1000 + 3 * hz} {70 + 2 * hz}\n")
    check("window: others used 0.5 cores, limit 0.3", db.window_loaded(f.name, 0.3), True)
    with open(f.name, "w") as g:
        g.write(f"10.0 1000 70\n12.0 {1000 + 2 * hz + hz // 5} {70 + 2 * hz}\n")
    check("window: others used 0.1 cores, limit 0.3", db.window_loaded(f.name, 0.3), False)
    os.unlink(f.name)
    # the snapshot's third field is its caller's CPU time (this process,
    # made to spin first so that the child's own few ticks cannot pass)
    t = db.time.monotonic()
    while db.time.monotonic() - t < 0.5:
        pass
    before = db.own_ticks()
    out = subprocess.run([sys.executable, db.__file__, "--demo-snapshot"], check=True,
                         capture_output=True, text=True).stdout.split()
    after = db.own_ticks()
    check("snapshot fields", len(out), 3)
    check("snapshot: the caller's ticks", before <= int(out[2]) <= after, True)


def test_ceiling_sweep():
    """The ceiling is swept on its own and measured at its own best setting."""
    class FakePmd:
        kind = "memif"
    calls = []

    def fake_rate(pmd, raw, size, seconds, cfg=(32, 0), payload=None):
        calls.append((size, tuple(cfg), payload))
        # raw is best at burst 32, default ring; the ceiling at burst 128, ring 4096
        if payload is None:
            return 9.0 if tuple(cfg) == (32, 0) else 5.0
        return 4.0 if tuple(cfg) == (128, 4096) else 3.0
    saved = db.raw_rate
    try:
        db.raw_rate = fake_rate
        best = db.raw_sweep(FakePmd(), "raw_fwd", [138], 1.0, db.Meter(99))
        check("sweep: raw best", best[138], (32, 0))
        check("sweep: ceiling best", best[("ceiling", 138)], (128, 4096))
        check("sweep: runs (2 x 4 settings)", len(calls), 8)
        calls.clear()
        db.ref_measure(FakePmd(), "raw_fwd", ("msg", 138, 64), 1.0, best, 64)
        db.ref_measure(FakePmd(), "raw_fwd", ("msg", 138, 64), 1.0, best, None)
        check("ceiling, then raw, each at its best", calls,
              [(138, (128, 4096), 64), (138, (32, 0), None)])
        check("sweep line names both",
              "138 B: burst 32, ring default (ceiling: burst 128, ring 4096)"
              in db.sweep_line("memif", best, 0), True)
    finally:
        db.raw_rate = saved


test_meter_counts_others_only()
test_ceiling_sweep()
test_demo_window()
test_report()
test_callgrind_count()
test_callgrind_lat_counts()
if len(sys.argv) > 1:
    test_callgrind_run(sys.argv[1])
print("FAILED" if failures else "all passed")
sys.exit(1 if failures else 0)
