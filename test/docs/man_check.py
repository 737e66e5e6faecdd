#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks one man page (man/*.[17]) against groff and its program's --help.

    man_check.py PAGE [PROGRAM]

Fails (exit 1, saying what differs) unless:
  - `groff -man -ww -z` (PostScript and -Tutf8, a terminal's width) prints
    no warning and exits 0;
  - the page has the sections man-pages(7) asks of its section (1: NAME,
    SYNOPSIS, DESCRIPTION, OPTIONS, EXIT STATUS, EXAMPLES, SEE ALSO; 7:
    NAME, DESCRIPTION, SEE ALSO) and NAME starts with the page's name;
  - every IPv4 address in it is in 198.18.0.0/15 or loopback;
  - with PROGRAM: the options of `PROGRAM --help` (exit 0) are those of
    the page's OPTIONS section: every --long option --help prints anywhere
    is named in that section and every one the section names is in
    --help; every -X that starts an entry of --help is the tag of a .TP
    entry there and vice versa.
"""
import ipaddress
import re
import subprocess
import sys

REQUIRED = {
    '1': ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'EXIT STATUS',
          'EXAMPLES', 'SEE ALSO'],
    '7': ['NAME', 'DESCRIPTION', 'SEE ALSO'],
}
ALLOWED_NETS = [ipaddress.ip_network('198.18.0.0/15'),
                ipaddress.ip_network('127.0.0.0/8')]
# a name does not end with "-": "--droce-*" names no option
LONG_RE = re.compile(r'(?<![\w-])--([A-Za-z](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)(?![\w-])')
SHORT_RE = re.compile(r'(?<![\w-])-([A-Za-z0-9])(?![\w-])')
HELP_SHORT_RE = re.compile(r'^[ \t]+-([A-Za-z0-9])(?![\w-])')
IPV4_RE = re.compile(r'(?<![\d.])(\d{1,3}(?:\.\d{1,3}){3})(?![\d.])')


def plain(roff_line):
    """A roff source line as text: escapes that matter for option names."""
    s = re.sub(r'\\f(\[[^\]]*\]|\(..|.)', '', roff_line)
    s = s.replace('\\-', '-').replace('\\&', '').replace('\\e', '\\')
    s = s.replace('\\(aq', "'").replace('\\(dq', '"')
    return s


def groff_warnings(page):
    problems = []
    for dev in ([], ['-Tutf8']):
        r = subprocess.run(['groff', '-man', '-ww', '-z'] + dev + [page],
                           capture_output=True, text=True)
        if r.returncode != 0 or r.stderr:
            problems.append('groff -man -ww -z %s: exit %d\n%s' %
                            (' '.join(dev), r.returncode, r.stderr))
    return problems


def sections(lines):
    """{section name: [its source lines]} in page order."""
    out, cur = {}, None
    for line in lines:
        m = re.match(r'^\.SH\s+(.*)$', line)
        if m:
            cur = m.group(1).strip().strip('"')
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    return out


def check_structure(page, lines, secs):
    problems = []
    th = [l for l in lines if l.startswith('.TH ')]
    if len(th) != 1:
        return ['%s: needs exactly one .TH line' % page]
    fields = th[0].split()
    name, section = fields[1].lower(), fields[2]
    base = page.rsplit('/', 1)[-1]
    if base != '%s.%s' % (name, section):
        problems.append('%s: .TH says %s(%s)' % (page, name, section))
    for s in REQUIRED.get(section, []):
        if s not in secs:
            problems.append('%s: no section %s' % (page, s))
    name_text = ' '.join(plain(l) for l in secs.get('NAME', []))
    if not name_text.startswith(name + ' - ') and \
       not name_text.startswith(name + ', '):
        problems.append('%s: NAME must start with "%s \\- "' % (page, name))
    for line in lines:
        for a in IPV4_RE.findall(plain(line)):
            try:
                ip = ipaddress.ip_address(a)
            except ValueError:
                continue
            if not any(ip in n for n in ALLOWED_NETS):
                problems.append('%s: address %s outside 198.18.0.0/15' %
                                (page, a))
    return problems


def page_options(opt_lines):
    """Long options named anywhere in OPTIONS, short ones tagging a .TP."""
    longs, shorts = set(), set()
    for i, line in enumerate(opt_lines):
        text = plain(line)
        longs.update(LONG_RE.findall(text))
        if i > 0 and opt_lines[i - 1].startswith('.TP'):
            shorts.update(SHORT_RE.findall(text))
    return longs, shorts


def help_options(text):
    longs, shorts = set(), set()
    for line in text.splitlines():
        longs.update(LONG_RE.findall(line))
        m = HELP_SHORT_RE.match(line)
        if m:
            shorts.add(m.group(1))
    return longs, shorts


def check_options(page, program, secs):
    r = subprocess.run([program, '--help'], capture_output=True, text=True,
                       stdin=subprocess.DEVNULL, timeout=30)
    if r.returncode != 0:
        return ['%s --help: exit %d\n%s' % (program, r.returncode, r.stderr)]
    h_long, h_short = help_options(r.stdout)
    p_long, p_short = page_options(secs.get('OPTIONS', []))
    problems = []
    for what, h, p, dash in (('long', h_long, p_long, '--'),
                             ('short', h_short, p_short, '-')):
        for o in sorted(h - p):
            problems.append('%s: %s option %s%s is in --help, not in OPTIONS' %
                            (page, what, dash, o))
        for o in sorted(p - h):
            problems.append('%s: %s option %s%s is in OPTIONS, not in --help' %
                            (page, what, dash, o))
    if not problems:
        print('%s: %d long and %d short options, as in %s --help' %
              (page, len(h_long), len(h_short), program))
    return problems


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    page = argv[1]
    with open(page, encoding='utf-8') as f:
        lines = f.read().splitlines()
    secs = sections(lines)
    problems = groff_warnings(page) + check_structure(page, lines, secs)
    if len(argv) == 3:
        problems += check_options(page, argv[2], secs)
    for p in problems:
        print('FAIL: ' + p)
    if not problems:
        print('%s: ok' % page)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
