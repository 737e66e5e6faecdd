#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check that a pcapng capture lost nothing: usage pcapng_stats.py FILE...

droce's --droce-capture writes an Interface Statistics Block when the
device closes (rte_pcapng_write_stats): isb_ifrecv = frames offered to the
capture, isb_ifdrop = frames it could not copy or write.  For each file this
prints the Enhanced Packet Blocks found and the ISB's counters, and fails
(exit 1) when ifdrop is not 0 or ifrecv differs from the packets in the
file, and when the file has no ISB or its ISB lacks either counter:
without them nothing says the capture is complete (a program that is
killed writes none: its capture is not for this check).  Exit 2 on a file
that is not pcapng.  Standard library only.
"""
import struct
import sys

SHB, IDB, EPB, ISB = 0x0A0D0D0A, 0x00000001, 0x00000006, 0x00000005
ISB_IFRECV, ISB_IFDROP = 4, 5


def isb_counters(body, endian):
    """(ifrecv, ifdrop) from an ISB body (None where absent)."""
    recv = drop = None
    off = 12  # interface id, timestamp high, timestamp low
    while off + 4 <= len(body):
        code, length = struct.unpack(endian + "HH", body[off:off + 4])
        if code == 0:
            break
        value = body[off + 4:off + 4 + length]
        if code in (ISB_IFRECV, ISB_IFDROP) and length == 8:
            v = struct.unpack(endian + "Q", value)[0]
            if code == ISB_IFRECV:
                recv = v
            else:
                drop = v
        off += 4 + ((length + 3) & ~3)
    return recv, drop


def check(path):
    """0 when the file says it is complete, 1 when it lost frames or does not
    say, 2 if unreadable."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 12 or struct.unpack("<I", data[:4])[0] != SHB:
        print(f"{path}: not a pcapng file")
        return 2
    endian = "<" if data[8:12] == b"\x4d\x3c\x2b\x1a" else ">"
    off, epbs, isbs = 0, 0, []
    while off + 12 <= len(data):
        btype, blen = struct.unpack(endian + "II", data[off:off + 8])
        if blen < 12 or off + blen > len(data):
            break  # a truncated last block (the writer was killed)
        if btype == EPB:
            epbs += 1
        elif btype == ISB:
            isbs.append(isb_counters(data[off + 8:off + blen - 4], endian))
        off += blen
    if not isbs:
        print(f"{path}: {epbs} packets, no statistics block")
        return 1
    recv, drop = isbs[-1]
    print(f"{path}: {epbs} packets, ifrecv {recv}, ifdrop {drop}")
    if drop != 0 or recv != epbs:
        return 1
    return 0


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[0])
        return 2
    return max(check(p) for p in argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
