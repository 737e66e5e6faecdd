#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run one libFuzzer harness for a bounded time on a seed corpus made at
test time: every frame of the golden captures (one file each) plus a few
seeded pseudo-random inputs.  Fails when the fuzzer finds a crash, a
sanitizer report, a leak or an invariant failure.

usage: run_fuzz.py HARNESS VECTORS_DIR [SECONDS]
"""
import glob
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'tools'))
import pcaputil  # noqa: E402


def make_corpus(vdir, out):
    n = 0
    for path in sorted(glob.glob(os.path.join(vdir, '*.pcap'))):
        _, frames = pcaputil.read_pcap(path)
        for i, (_, _, frame) in enumerate(frames):
            name = '%s-%03d' % (os.path.basename(path)[:-5], i)
            with open(os.path.join(out, name), 'wb') as f:
                f.write(frame)
            n += 1
    rng = random.Random(4791)
    for i in range(32):
        with open(os.path.join(out, 'random-%02d' % i), 'wb') as f:
            f.write(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))))
        n += 1
    return n


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    harness, vdir = sys.argv[1], sys.argv[2]
    secs = sys.argv[3] if len(sys.argv) == 4 else '25'
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, 'corpus')
        os.mkdir(corpus)
        print('seed corpus: %d inputs' % make_corpus(vdir, corpus), flush=True)
        cmd = [harness, '-max_total_time=' + secs, '-rss_limit_mb=2048',
               '-print_final_stats=1', '-artifact_prefix=' + tmp + '/',
               corpus]
        print(' '.join(cmd), flush=True)
        env = dict(os.environ)
        # UBSan recovers by default: make every report fatal
        env.setdefault('UBSAN_OPTIONS', 'halt_on_error=1:print_stacktrace=1')
        rc = subprocess.run(cmd, env=env).returncode
        for art in glob.glob(os.path.join(tmp, '*-*')):
            with open(art, 'rb') as f:
                print('artifact %s: %s' % (os.path.basename(art), f.read().hex()))
    return 1 if rc != 0 else 0


if __name__ == '__main__':
    sys.exit(main())
