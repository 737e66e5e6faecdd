#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Installs the build into a temporary DESTDIR and checks the man pages there.

    man_install.py MESON BUILDDIR PREFIX BINDIR MANDIR LIBDIR

Fails (exit 1, saying what is wrong) unless `meson install --destdir`
succeeds and then:
  - every program in BINDIR has a page in MANDIR/man1 (a file, or a link
    to one), and every page there is a program's;
  - MANDIR/man7/droce.7 is there;
  - the installed droce-run puts the installed LIBDIR/droce, which holds
    libibverbs.so.1, first on LD_LIBRARY_PATH.
"""
import os
import shutil
import subprocess
import sys
import tempfile


def installed(destdir, prefix, rel):
    return os.path.join(destdir, prefix.lstrip('/'), rel)


def check_pages(bindir, man1, man7):
    problems = []
    programs = set(os.listdir(bindir))
    pages = set(os.listdir(man1))
    for p in sorted(programs):
        page = os.path.join(man1, p + '.1')
        if not os.path.isfile(page):	# follows a link
            problems.append('%s is installed without a man page %s' %
                            (p, page))
    for page in sorted(pages):
        if not page.endswith('.1') or page[:-2] not in programs:
            problems.append('man1/%s documents no installed program' % page)
    if not os.path.isfile(os.path.join(man7, 'droce.7')):
        problems.append('man7/droce.7 is not installed')
    return problems, len(programs)


def check_droce_run(bindir, libdir):
    run = os.path.join(bindir, 'droce-run')
    if not os.path.exists(run):
        return ['droce-run is not installed in %s' % bindir]
    env = {k: v for k, v in os.environ.items() if k != 'LD_LIBRARY_PATH'}
    r = subprocess.run([run, '--', 'printenv', 'LD_LIBRARY_PATH'],
                       capture_output=True, text=True, env=env, timeout=30)
    want = os.path.realpath(os.path.join(libdir, 'droce'))
    got = r.stdout.strip().split(':')[0]
    if r.returncode != 0 or os.path.realpath(got) != want:
        return ['installed droce-run uses %r (exit %d, %s), not %s' %
                (got, r.returncode, r.stderr.strip(), want)]
    if not os.path.exists(os.path.join(want, 'libibverbs.so.1')):
        return ['%s holds no libibverbs.so.1' % want]
    return []


def main(argv):
    if len(argv) != 7:
        print(__doc__, file=sys.stderr)
        return 2
    meson, builddir, prefix, bindir, mandir, libdir = argv[1:]
    destdir = tempfile.mkdtemp(prefix='droce-man-install.')
    try:
        r = subprocess.run([meson, 'install', '-C', builddir, '--no-rebuild',
                            '--quiet', '--destdir', destdir],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            print('FAIL: meson install: exit %d\n%s%s' %
                  (r.returncode, r.stdout, r.stderr))
            return 1
        man = installed(destdir, prefix, mandir)
        problems, nprog = check_pages(installed(destdir, prefix, bindir),
                                      os.path.join(man, 'man1'),
                                      os.path.join(man, 'man7'))
        problems += check_droce_run(installed(destdir, prefix, bindir),
                                    installed(destdir, prefix, libdir))
    finally:
        shutil.rmtree(destdir)
    for p in problems:
        print('FAIL: ' + p)
    if problems:
        return 1
    print('%d installed programs, each with its page; droce-run finds the '
          'installed drop-in' % nprog)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
