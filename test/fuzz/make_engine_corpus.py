#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Write the seed corpus of fuzz_engine (test/fuzz/corpus/engine/): a few
dozen short conversations with the live device, in the input format that
test/fuzz/fuzz_engine.c's header comment describes (one header byte, then
16-byte records, one frame each).  Opcodes are given raw (target bit 7),
so the seeds do not depend on the order of lib/wire's opcode table.

usage: make_engine_corpus.py [OUT_DIR]   (default: corpus/engine beside it)
"""
import os
import struct
import sys

# target (byte 0)
RC, UC, UD, OTHER = 0, 1, 2, 3
IPV6, FOREIGN_SRC, NO_ROUND, RAW = 0x04, 0x08, 0x40, 0x80
# keys (byte 3): the harness's key_model order
K_RW, K_RO, K_WO, K_MW, K_RECV, K_LOCAL, K_MW1, K_MW2, K_ZERO = range(9)
STALE, FLIP = 0x10, 0x20
# flags (byte 10)
SE, ACKREQ, EXTREME_VA, CMP_FROM_MEM = 0x01, 0x02, 0x40, 0x80
# header byte
POST_READ, POST_WRITE, POST_SEND, POST_FETCH_ADD = 1, 2, 4, 8


def rec(op, target=RC, psn=0, key=K_RW, va=0, rlen=0, plen=None, flags=0,
        pkey=0, corrupt=0, aux=(0, 0, 0), copies=0, no_round=False):
    """One frame; plen None: the length the opcode implies."""
    b0 = target | RAW | (copies << 4) | (NO_ROUND if no_round else 0)
    paylen = 0 if plen is None else 0x8000 | plen
    return struct.pack('>BBbBhHHBBB3B', b0, op, psn, key, va, rlen, paylen,
                       flags, pkey, corrupt, *aux)


SEEDS = {
    'rc_write_only': (0, [rec(0x0a, rlen=64)]),
    'rc_write_first_middle_last': (0, [rec(0x06, rlen=2560), rec(0x07),
                                       rec(0x08, plen=512)]),
    'rc_write_imm': (0, [rec(0x0b, rlen=32)]),
    'rc_write_out_of_bounds': (0, [rec(0x0a, va=4090, rlen=64),
                                   rec(0x0a, va=-8, rlen=16)]),
    'rc_write_ro_key': (0, [rec(0x0a, key=K_RO, rlen=64)]),
    'rc_write_stale_key': (0, [rec(0x0a, key=K_RW | STALE, rlen=64)]),
    'rc_write_bad_pkey': (0, [rec(0x0a, rlen=64, pkey=201)]),
    'rc_write_dup': (0, [rec(0x0a, rlen=64, copies=2),
                         rec(0x0a, psn=-1, rlen=64)]),
    'rc_write_ahead': (0, [rec(0x0a, psn=3, rlen=64), rec(0x0a, rlen=64)]),
    'rc_send_only': (0, [rec(0x04, plen=100), rec(0x05, plen=8)]),
    'rc_send_first_last': (0, [rec(0x00), rec(0x02, plen=64)]),
    'rc_send_too_long': (0, [rec(0x04, plen=1024)]),
    'rc_read': (0, [rec(0x0c, key=K_RO, rlen=1500)]),
    'rc_read_dup': (0, [rec(0x0c, key=K_RW, rlen=2048),
                        rec(0x0c, psn=-2, key=K_RW, va=1024, rlen=1024)]),
    'rc_atomics': (0, [rec(0x13, va=8, flags=CMP_FROM_MEM, aux=(0, 7, 0)),
                       rec(0x14, va=16, aux=(0, 3, 0)),
                       rec(0x14, psn=-1, va=16, aux=(0, 3, 0)),
                       rec(0x13, va=4)]),
    'rc_atomic_write_flush': (0, [rec(0x1d, va=24, rlen=8), rec(0x1c, rlen=64)]),
    'rc_mw1': (0, [rec(0x0a, key=K_MW1, rlen=128), rec(0x0c, key=K_MW1, rlen=64),
                   rec(0x14, key=K_MW1)]),
    'rc_mw2': (0, [rec(0x0a, key=K_MW2, va=100, rlen=128),
                   rec(0x14, key=K_MW2, va=64, aux=(0, 1, 0))]),
    'rc_send_inv_mw2': (0, [rec(0x17, key=K_MW2, plen=16),
                            rec(0x0a, key=K_MW2, rlen=64)]),
    'rc_send_inv_mr': (0, [rec(0x17, key=K_RW, plen=16)]),
    'rc_mr_no_rights': (0, [rec(0x0a, key=K_MW, rlen=64),
                            rec(0x0a, key=K_RECV, rlen=64)]),
    'rc_corrupt': (0, [rec(0x0a, rlen=64, corrupt=240, aux=(60, 0x10, 0)),
                       rec(0x0a, rlen=64, corrupt=250)]),
    'rc_read_response': (POST_READ, [rec(0x0d, plen=1024), rec(0x0f, psn=1, plen=1024)]),
    'rc_read_response_short': (POST_READ, [rec(0x10, plen=100)]),
    'rc_ack_write': (POST_WRITE, [rec(0x11, aux=(0x00, 0, 1))]),
    'rc_nak_seq': (POST_WRITE | POST_SEND, [rec(0x11, aux=(0x60, 0, 0)),
                                            rec(0x11, psn=1, aux=(0x00, 0, 2))]),
    'rc_nak_rnr': (POST_SEND, [rec(0x11, aux=(0x21, 0, 0))]),
    'rc_nak_access': (POST_READ | POST_WRITE, [rec(0x11, aux=(0x62, 0, 0))]),
    'rc_atomic_ack_unexpected': (POST_SEND, [rec(0x12, aux=(0, 5, 1))]),
    'rc_atomic_ack': (POST_FETCH_ADD, [rec(0x12, aux=(0, 5, 1)),
                                       rec(0x12, aux=(0, 6, 1))]),
    'rc_read_atomic_responses': (POST_READ | POST_FETCH_ADD,
                                 [rec(0x12, aux=(0, 5, 1)), rec(0x10, plen=100),
                                  rec(0x0d, plen=1024), rec(0x0f, psn=1, plen=1024),
                                  rec(0x12, psn=2, aux=(0, 5, 2))]),
    'uc_write': (0, [rec(0x2a, target=UC, rlen=64),
                     rec(0x26, target=UC, rlen=2048), rec(0x28, target=UC, psn=0,
                                                          plen=1024)]),
    'uc_send_hole': (0, [rec(0x20, target=UC), rec(0x22, target=UC, psn=1, plen=64),
                         rec(0x24, target=UC, plen=32)]),
    'uc_write_imm': (0, [rec(0x2b, target=UC, rlen=16)]),
    'ud_send': (0, [rec(0x64, target=UD, plen=256, aux=(1, 0, 0)),
                    rec(0x65, target=UD, plen=8, aux=(1, 0, 0))]),
    'ud_bad_qkey': (0, [rec(0x64, target=UD, plen=64, aux=(0x80, 0, 0))]),
    'ud_too_long': (0, [rec(0x64, target=UD, plen=1024 + 8, aux=(1, 0, 0))]),
    'ud_ipv6': (0, [rec(0x64, target=UD | IPV6, plen=64, aux=(1, 0, 0))]),
    'rc_ipv6_foreign': (0, [rec(0x0a, target=RC | IPV6, rlen=64),
                            rec(0x0a, target=RC | FOREIGN_SRC, rlen=64)]),
    'wrong_transport': (0, [rec(0x2a, target=RC, rlen=64), rec(0x0a, target=UD, rlen=64),
                            rec(0x64, target=UC, plen=8, aux=(1, 0, 0))]),
    'reserved_opcodes': (0, [rec(0x15), rec(0x18), rec(0x2c, target=UC),
                             rec(0x81), rec(0xc0)]),
    'other_qpn': (0, [rec(0x0a, target=OTHER, rlen=64, aux=(0, 0, 1))]),
    'burst_no_rounds': (0, [rec(0x0a, rlen=64, no_round=True),
                            rec(0x0a, psn=1, rlen=64, no_round=True),
                            rec(0x0c, psn=2, rlen=64)]),
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), 'corpus', 'engine')
    os.makedirs(out, exist_ok=True)
    for name, (hdr, recs) in sorted(SEEDS.items()):
        with open(os.path.join(out, name), 'wb') as f:
            f.write(bytes([hdr]) + b''.join(recs))
    print('%d seeds in %s' % (len(SEEDS), out))


if __name__ == '__main__':
    main()
