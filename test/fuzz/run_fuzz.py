#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run one libFuzzer harness for a bounded time on a seed corpus made at
test time: every frame of the golden captures (one file each) plus a few
seeded pseudo-random inputs, or with --seeds DIR the files of DIR instead
(structure-aware harnesses: their input is not a frame).  The corpus is a
temporary copy: the run never writes to DIR.  Fails when the fuzzer finds a
crash, a sanitizer report, a leak or an invariant failure.

usage: run_fuzz.py HARNESS VECTORS_DIR [SECONDS] [--seeds DIR]
"""
import glob
import os
import random
import shutil
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


def copy_seeds(sdir, out):
    n = 0
    for name in sorted(os.listdir(sdir)):
        shutil.copy(os.path.join(sdir, name), os.path.join(out, name))
        n += 1
    return n


def main():
    args = sys.argv[1:]
    seeds = None
    if '--seeds' in args:
        i = args.index('--seeds')
        if i + 1 >= len(args):
            sys.exit(__doc__)
        seeds = args[i + 1]
        del args[i:i + 2]
    if len(args) not in (2, 3):
        sys.exit(__doc__)
    harness, vdir = args[0], args[1]
    secs = args[2] if len(args) == 3 else '25'
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, 'corpus')
        os.mkdir(corpus)
        n = copy_seeds(seeds, corpus) if seeds else make_corpus(vdir, corpus)
        if n == 0:
            sys.exit('no seed inputs')
        print('seed corpus: %d inputs' % n, flush=True)
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
