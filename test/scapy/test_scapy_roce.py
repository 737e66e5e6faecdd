#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce's lib/wire against scapy (scapy.contrib.roce, 2.5) for every
opcode of droce's opcode table, IPv4 and IPv6:

 a) scapy builds the frame (BTH from scapy, extended headers as raw bytes
    since scapy lacks most of them, ICRC from scapy for IPv4 and from this
    script for IPv6); droce must parse every field back and accept the ICRC;
 b) droce builds the frame (roce_build via the roce_json helper); scapy must
    dissect the same BTH fields and extended-header bytes and, for IPv4,
    recompute the same ICRC; check_icrc.py must accept all the frames
    (IPv4 and IPv6) written to a pcap.

usage: test_scapy_roce.py ROCE_JSON CHECK_ICRC_PY
"""
import json
import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib

import logging
import warnings

warnings.filterwarnings('ignore')
logging.getLogger('scapy.runtime').setLevel(logging.ERROR)
try:
    import scapy  # noqa: F401
except ImportError:
    sys.path.append('/usr/lib/python3/dist-packages')   # Debian python3-scapy
try:
    from scapy.all import Ether, IP, IPv6, UDP, Raw, raw
    from scapy.contrib.roce import BTH
except ImportError:
    print('scapy not available: skipped')
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                '..', 'tools'))
import pcaputil  # noqa: E402

# Extended headers: (field keys, struct format, packer from values)
EXT = {
    'deth': (('deth_qkey', 'deth_src_qpn'), '>II'),
    'feth': (('feth_word',), '>I'),
    'reth': (('reth_va', 'reth_rkey', 'reth_len'), '>QII'),
    'atmeth': (('atm_va', 'atm_rkey', 'atm_swap', 'atm_comp'), '>QIQQ'),
    'aeth': (('aeth_word',), '>I'),
    'atmack': (('atmack_orig',), '>Q'),
    'imm': (('imm',), '>I'),
    'ieth': (('ieth_rkey',), '>I'),
    'cnp': ((), '>16x'),
}
BTH_KEYS = ('opcode', 'se', 'migreq', 'pkey', 'fecn', 'becn', 'qpn',
            'ackreq', 'psn')
FAILS = []


def field_values(op, ipver):
    """Deterministic pseudo-random values for every field of a packet."""
    r = random.Random(op['opcode'] * 10 + ipver)
    v = dict(opcode=op['opcode'], se=r.getrandbits(1), migreq=r.getrandbits(1),
             pkey=r.getrandbits(16), fecn=r.getrandbits(1),
             becn=r.getrandbits(1), qpn=r.getrandbits(24),
             ackreq=r.getrandbits(1), psn=r.getrandbits(24),
             sport=r.randrange(0xc000, 0x10000), tos=r.getrandbits(8),
             ttl=r.randrange(1, 256), deth_qkey=r.getrandbits(32),
             deth_src_qpn=r.getrandbits(24), feth_sel=r.getrandbits(2),
             feth_plt=r.getrandbits(4), reth_va=r.getrandbits(64),
             reth_rkey=r.getrandbits(32), reth_len=r.getrandbits(32),
             atm_va=r.getrandbits(64), atm_rkey=r.getrandbits(32),
             atm_swap=r.getrandbits(64), atm_comp=r.getrandbits(64),
             aeth_syndrome=r.getrandbits(8), aeth_msn=r.getrandbits(24),
             atmack_orig=r.getrandbits(64), imm=r.getrandbits(32),
             ieth_rkey=r.getrandbits(32))
    if ipver == 4:
        v.update(src='198.18.0.%d' % r.randrange(1, 255), dst='198.18.0.11',
                 ip_id=r.getrandbits(16))
    else:
        v.update(src='fe80::5054:ff:febd:a1%02x' % r.getrandbits(8),
                 dst='2001:db8::11', flow=r.getrandbits(20))
    v['payload_len'] = (8 if op['fixed8'] else r.randrange(0, 300)
                        if op['payload'] else 0)
    v['feth_word'] = v['feth_sel'] << 4 | v['feth_plt']
    v['aeth_word'] = v['aeth_syndrome'] << 24 | v['aeth_msn']
    return v


def payload(n):
    return bytes((i * 7 + 3) & 0xff for i in range(n))   # as roce_json


def ext_bytes(op, v):
    return b''.join(struct.pack(EXT[h][1], *(v[k] for k in EXT[h][0]))
                    for h in op['hdrs'])


def icrc_ipv6(frame):
    """ICRC of an untagged Ethernet/IPv6 frame (IBTA A17.3.3 masking)."""
    ip = bytearray(frame[14:-4])
    ip[0] |= 0x0f
    ip[1:4] = b'\xff\xff\xff'
    ip[7] = 0xff
    ip[46:48] = b'\xff\xff'
    ip[52] = 0xff
    return zlib.crc32(b'\xff' * 8 + bytes(ip)) & 0xffffffff


def scapy_frame(op, v, ipver):
    n = v['payload_len']
    pad = (4 - n % 4) % 4
    if ipver == 4:
        l3 = IP(src=v['src'], dst=v['dst'], tos=v['tos'], ttl=v['ttl'],
                id=v['ip_id'], flags='DF')
    else:
        l3 = IPv6(src=v['src'], dst=v['dst'], tc=v['tos'], fl=v['flow'],
                  hlim=v['ttl'])
    bth = BTH(opcode=v['opcode'], solicited=v['se'], migreq=v['migreq'],
              padcount=pad, pkey=v['pkey'], fecn=v['fecn'], becn=v['becn'],
              dqpn=v['qpn'], ackreq=v['ackreq'], psn=v['psn'],
              icrc=None if ipver == 4 else 0)
    pkt = (Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / l3 /
           UDP(sport=v['sport'], dport=4791, chksum=0) / bth /
           Raw(ext_bytes(op, v) + payload(n) + b'\0' * pad))
    frame = raw(pkt)
    if ipver == 6:
        frame = frame[:-4] + struct.pack('<I', icrc_ipv6(frame))
    return frame


def expected_parse(op, v, ipver, frame):
    exp = {k: v[k] for k in BTH_KEYS + ('src', 'dst', 'sport', 'tos', 'ttl',
                                        'payload_len')}
    exp.update(err=None, name=op['name'], ip_version=ipver, dport=4791,
               tver=0, padcnt=(4 - v['payload_len'] % 4) % 4, icrc_ok=True,
               icrc=struct.unpack('<I', frame[-4:])[0])
    exp.update({'ip_id': v['ip_id']} if ipver == 4 else {'flow': v['flow']})
    for h in op['hdrs']:
        for k in EXT[h][0]:
            if k == 'feth_word':
                exp.update(feth_sel=v['feth_sel'], feth_plt=v['feth_plt'])
            elif k == 'aeth_word':
                exp.update(aeth_syndrome=v['aeth_syndrome'],
                           aeth_msn=v['aeth_msn'])
            else:
                exp[k] = v[k]
    return exp


EXT_KEYS = {'deth_qkey', 'deth_src_qpn', 'feth_sel', 'feth_plt', 'reth_va',
            'reth_rkey', 'reth_len', 'atm_va', 'atm_rkey', 'atm_swap',
            'atm_comp', 'aeth_syndrome', 'aeth_msn', 'atmack_orig', 'imm',
            'ieth_rkey'}


def mismatches(exp, got):
    """Fields that differ, plus extended-header fields droce reports that
    the opcode should not have."""
    bad = ['%s: want %r, got %r' % (k, exp[k], got.get(k))
           for k in sorted(exp) if got.get(k) != exp[k]]
    bad += ['unexpected %s' % k for k in sorted(EXT_KEYS & set(got) - set(exp))]
    return bad


def report(what, bad):
    if bad:
        FAILS.append(what)
        print('FAIL %s: %s' % (what, '; '.join(bad[:6])))


def roce_json(helper, mode, lines):
    out = subprocess.run([helper, mode], input='\n'.join(lines) + '\n',
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def test_scapy_to_droce(helper, ops):
    cases = [(op, ipver) for op in ops for ipver in (4, 6)]
    frames = [scapy_frame(op, field_values(op, ipver), ipver)
              for op, ipver in cases]
    parsed = roce_json(helper, 'parse', [f.hex() for f in frames])
    for (op, ipver), frame, line in zip(cases, frames, parsed):
        exp = expected_parse(op, field_values(op, ipver), ipver, frame)
        report('scapy->droce %s IPv%d' % (op['name'], ipver),
               mismatches(exp, json.loads(line)))
    # the comparison must notice a wrong field
    exp = expected_parse(ops[0], field_values(ops[0], 4), 4, frames[0])
    exp['psn'] ^= 1
    report('self-check: a wrong PSN is noticed',
           [] if mismatches(exp, json.loads(parsed[0])) else ['not noticed'])
    return len(cases)


def build_line(v, ipver):
    keys = BTH_KEYS + ('sport', 'tos', 'ttl', 'payload_len') + tuple(
        k for k in EXT_KEYS) + (('ip_id',) if ipver == 4 else ('flow',))
    return ' '.join(['ipver=%d' % ipver, 'src=' + v['src'], 'dst=' + v['dst'],
                     'df=1'] + ['%s=%d' % (k, v[k]) for k in keys])


def check_scapy_dissect(op, v, ipver, frame):
    p = Ether(frame)
    b = p[BTH]
    n = v['payload_len']
    bad = ['%s: want %r, scapy %r' % (k, v[k], getattr(b, f))
           for k, f in (('opcode', 'opcode'), ('se', 'solicited'),
                        ('migreq', 'migreq'), ('pkey', 'pkey'),
                        ('fecn', 'fecn'), ('becn', 'becn'), ('qpn', 'dqpn'),
                        ('ackreq', 'ackreq'), ('psn', 'psn'))
           if getattr(b, f) != v[k]]
    if b.padcount != (4 - n % 4) % 4 or b.version != 0:
        bad.append('padcount/version %d/%d' % (b.padcount, b.version))
    rest = raw(b.payload)
    want = ext_bytes(op, v) + payload(n) + b'\0' * ((4 - n % 4) % 4)
    if rest != want:
        bad.append('bytes after BTH differ: %s vs %s' % (rest.hex(), want.hex()))
    if ipver == 4:
        p[BTH].icrc = None
        if raw(p) != frame:
            bad.append('scapy recomputes a different ICRC')
    return bad


def test_droce_to_scapy(helper, ops, check_icrc, tmp):
    cases = [(op, ipver) for op in ops for ipver in (4, 6)]
    vals = [field_values(op, ipver) for op, ipver in cases]
    frames = [bytes.fromhex(h) for h in roce_json(
        helper, 'build', [build_line(v, ipver)
                          for v, (_, ipver) in zip(vals, cases)])]
    for (op, ipver), v, frame in zip(cases, vals, frames):
        report('droce->scapy %s IPv%d' % (op['name'], ipver),
               check_scapy_dissect(op, v, ipver, frame))
    path = os.path.join(tmp, 'droce_built.pcap')
    pcaputil.write_pcap(path, pcaputil.DLT_EN10MB, frames)
    proc = subprocess.run([sys.executable, check_icrc, '--summary', path],
                          capture_output=True, text=True)
    print('check_icrc.py: ' + ' '.join(
        ln for ln in proc.stdout.splitlines() if ln.startswith('TOTAL')))
    report('check_icrc.py on %d droce-built frames' % len(frames),
           [] if proc.returncode == 0 else ['exit %d' % proc.returncode])
    return len(cases)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    helper, check_icrc = sys.argv[1], sys.argv[2]
    ops = [json.loads(ln) for ln in roce_json(helper, 'opcodes', [])]
    with tempfile.TemporaryDirectory() as tmp:
        n = test_scapy_to_droce(helper, ops)
        n += test_droce_to_scapy(helper, ops, check_icrc, tmp)
    print('%d opcodes, %d cases, %d failure(s)' % (len(ops), n, len(FAILS)))
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
