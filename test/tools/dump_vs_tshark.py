#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run droce-dump --json over every capture of the vectors folder and check
that it exits 0 with no ICRC failure and no malformed packet, and that for
every packet the opcode (number and name), destination QP and PSN agree with
tshark's InfiniBand dissector.

usage: dump_vs_tshark.py DROCE_DUMP VECTORS_DIR
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

SKIP = 77
TRANSPORTS = {'Reliable Connection': 'RC', 'Unreliable Connection': 'UC',
              'Reliable Datagram': 'RD', 'Unreliable Datagram': 'UD'}
# tshark's short spellings -> IBTA names
ALIASES = {'CMPSWAP': 'COMPARE_SWAP', 'FETCHADD': 'FETCH_ADD'}


def tshark_fields(path):
    """{frame: (opcode, destqp, psn)} from the -T fields output."""
    out = subprocess.run(
        ['tshark', '-r', path, '-T', 'fields', '-e', 'frame.number',
         '-e', 'infiniband.bth.opcode', '-e', 'infiniband.bth.destqp',
         '-e', 'infiniband.bth.psn'],
        check=True, capture_output=True, text=True).stdout
    res = {}
    for line in out.splitlines():
        cols = line.split('\t')
        if len(cols) == 4 and cols[1] != '':
            res[int(cols[0])] = (int(cols[1], 0), int(cols[2], 0),
                                 int(cols[3], 0))
    return res


def ibta_name(showname):
    """'Opcode: Reliable Connection (RC) - RDMA WRITE First (6)' ->
    'RC RDMA_WRITE_FIRST'."""
    m = re.match(r'Opcode: (.*) \((\w+)\) - (.*) \(\d+\)$', showname)
    if m is None:
        return None
    op = m.group(3).upper().replace(' ', '_')
    return '%s %s' % (m.group(2), ALIASES.get(op, op))


def tshark_names(path):
    """{frame: IBTA opcode name} from the PDML show names."""
    xml = subprocess.run(['tshark', '-r', path, '-T', 'pdml'], check=True,
                         capture_output=True).stdout
    res = {}
    for pkt in ET.fromstring(xml).iter('packet'):
        num, name = None, None
        for field in pkt.iter('field'):
            if field.get('name') == 'num':
                num = int(field.get('show'))
            elif field.get('name') == 'infiniband.bth.opcode':
                name = ibta_name(field.get('showname', ''))
        if num is not None and name is not None:
            res[num] = name
    return res


def run_dump(dump, path):
    proc = subprocess.run([dump, path, '--json'], capture_output=True,
                          text=True)
    objs = [json.loads(line) for line in proc.stdout.splitlines()]
    return proc.returncode, objs


def check_file(dump, path):
    errs = []
    rc, objs = run_dump(dump, path)
    summary = objs[-1].get('summary', {}) if objs else {}
    pkts = {o['index']: o for o in objs if 'index' in o}
    if rc != 0:
        errs.append('exit status %d' % rc)
    if summary.get('icrc_bad') != 0 or summary.get('malformed') != 0:
        errs.append('summary %r' % summary)
    fields, names = tshark_fields(path), tshark_names(path)
    if not fields or set(fields) != set(pkts):
        errs.append('frames: tshark %d, droce-dump %d'
                    % (len(fields), len(pkts)))
    for num in sorted(set(fields) & set(pkts)):
        p = pkts[num]
        mine = (p.get('opcode'), p.get('dest_qpn'), p.get('psn'), p.get('name'))
        theirs = fields[num] + (names.get(num),)
        if mine != theirs:
            errs.append('frame %d: droce-dump %r, tshark %r'
                        % (num, mine, theirs))
    return len(pkts), errs


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    dump, vdir = sys.argv[1], sys.argv[2]
    if shutil.which('tshark') is None:
        print('tshark not installed: skipped')
        return SKIP
    files = sorted(glob.glob(os.path.join(vdir, '*.pcap')) +
                   glob.glob(os.path.join(vdir, '*.pcapng')))
    if not files:
        print('no captures in %s' % vdir)
        return 1
    failed, total = 0, 0
    for path in files:
        n, errs = check_file(dump, path)
        total += n
        print('%-32s %4d packets: %s' % (os.path.basename(path), n,
                                         'ok' if not errs else 'FAIL'))
        for e in errs[:10]:
            print('    ' + e)
        failed += bool(errs)
    print('%d files, %d packets, %d files failed' % (len(files), total, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
