#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""droce-dump's failure paths and link types, on captures written at test
time from a golden vector:
  - one flipped payload byte -> icrc=BAD on that packet only, exit 1;
  - a UDP/4791 packet with a reserved opcode -> malformed, exit 1;
  - a UDP packet to another port -> counted as non-RoCE, exit 0;
  - the same packets as raw IP and as Linux SLL -> same decode, exit 0;
  - usage and file errors -> exit 2.

usage: dump_negative.py DROCE_DUMP VECTORS_DIR
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pcaputil  # noqa: E402

FAILS = []


def check(cond, what):
    print('%s: %s' % ('ok  ' if cond else 'FAIL', what))
    if not cond:
        FAILS.append(what)


def run(dump, *args):
    p = subprocess.run([dump] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def summary(out):
    return json.loads(out.splitlines()[-1])['summary']


def ipv4_fix_csum(frame):
    """Recompute the IPv4 header checksum of an untagged Ethernet frame."""
    f = bytearray(frame)
    ihl = (f[14] & 0x0f) * 4
    f[24:26] = b'\0\0'
    s = sum(struct.unpack('>%dH' % (ihl // 2), bytes(f[14:14 + ihl])))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    f[24:26] = struct.pack('>H', ~s & 0xffff)
    return bytes(f)


def test_flipped_byte(dump, frames, tmp):
    f = bytearray(frames[0])
    off = pcaputil.udp_payload_off(f) + 12      # first payload byte of SEND
    f[off] ^= 0x01
    path = os.path.join(tmp, 'flipped.pcap')
    pcaputil.write_pcap(path, pcaputil.DLT_EN10MB, [bytes(f)] + frames[1:])
    rc, out, _ = run(dump, path)
    lines = out.splitlines()
    check(rc == 1, 'flipped payload byte: exit 1 (got %d)' % rc)
    check('icrc=BAD' in lines[0], 'flipped packet printed icrc=BAD')
    check(sum('icrc=BAD' in ln for ln in lines) == 1,
          'only the flipped packet is BAD')
    rc, out, _ = run(dump, path, '--json')
    check(rc == 1 and summary(out)['icrc_bad'] == 1, 'json summary icrc_bad=1')


def test_malformed_and_other(dump, frames, tmp):
    bad = bytearray(frames[0])
    bad[pcaputil.udp_payload_off(bad)] = 0x15    # reserved RC opcode
    other = bytearray(frames[0])
    other[14 + 20 + 2:14 + 20 + 4] = struct.pack('>H', 53)
    path = os.path.join(tmp, 'malformed.pcap')
    pcaputil.write_pcap(path, pcaputil.DLT_EN10MB, [bytes(bad)])
    rc, out, _ = run(dump, path)
    check(rc == 1 and 'malformed' in out and 'opcode' in out,
          'reserved opcode: malformed, exit 1 (got %d: %r)' % (rc, out[:80]))
    path = os.path.join(tmp, 'other.pcap')
    pcaputil.write_pcap(path, pcaputil.DLT_EN10MB,
                        [ipv4_fix_csum(other)] + frames)
    rc, out, _ = run(dump, path, '--json')
    s = summary(out)
    check(rc == 0 and s['non_roce'] == 1 and s['roce'] == len(frames),
          'UDP port 53: counted as non-RoCE, exit 0 (got %d, %r)' % (rc, s))


def sll(frame):
    # packet type 0 (to us), ARPHRD_ETHER, 6-byte address, protocol
    return struct.pack('>HHH8sH', 0, 1, 6, frame[6:12] + b'\0\0',
                       struct.unpack('>H', frame[12:14])[0]) + frame[14:]


def test_linktypes(dump, frames, tmp):
    ref = [json.loads(ln) for ln in run(dump, '--json', tmp + '/eth.pcap')[1]
           .splitlines()]
    for name, dlt, conv in (('raw', pcaputil.DLT_RAW, lambda f: f[14:]),
                            ('sll', pcaputil.DLT_LINUX_SLL, sll)):
        path = os.path.join(tmp, name + '.pcap')
        pcaputil.write_pcap(path, dlt, [conv(f) for f in frames])
        rc, out, _ = run(dump, path, '--json')
        got = [json.loads(ln) for ln in out.splitlines()]
        check(rc == 0 and got == ref, 'link type %s decodes like Ethernet' % name)


def test_usage(dump, tmp):
    check(run(dump)[0] == 2, 'no argument: exit 2')
    check(run(dump, '--bogus', 'x')[0] == 2, 'unknown option: exit 2')
    check(run(dump, os.path.join(tmp, 'missing.pcap'))[0] == 2,
          'missing file: exit 2')
    rc, out, _ = run(dump, '--help')
    check(rc == 0 and 'usage' in out, '--help: exit 0')


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    dump, vdir = sys.argv[1], sys.argv[2]
    _, v4 = pcaputil.read_pcap(os.path.join(vdir, 'rc_send_ipv4.pcap'))
    _, v6 = pcaputil.read_pcap(os.path.join(vdir, 'rc_send_ipv6.pcap'))
    frames = [f for _, _, f in v4] + [f for _, _, f in v6]
    with tempfile.TemporaryDirectory() as tmp:
        pcaputil.write_pcap(tmp + '/eth.pcap', pcaputil.DLT_EN10MB, frames)
        test_flipped_byte(dump, frames, tmp)
        test_malformed_and_other(dump, frames, tmp)
        test_linktypes(dump, frames, tmp)
        test_usage(dump, tmp)
    print('%d failure(s)' % len(FAILS))
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
