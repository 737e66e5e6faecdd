# SPDX-License-Identifier: BSD-3-Clause
"""Minimal classic-pcap reader/writer for droce's test scripts (stdlib only)."""
import struct

DLT_EN10MB = 1
DLT_RAW = 101
DLT_LINUX_SLL = 113


def read_pcap(path):
    """Return (linktype, [(ts_sec, ts_usec, frame bytes), ...])."""
    with open(path, 'rb') as f:
        data = f.read()
    magic = data[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        end = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        end = '>'
    else:
        raise ValueError('%s: not a classic pcap file' % path)
    linktype = struct.unpack(end + 'I', data[20:24])[0] & 0x0fffffff
    frames, off = [], 24
    while off + 16 <= len(data):
        sec, usec, caplen, _ = struct.unpack(end + 'IIII', data[off:off + 16])
        frames.append((sec, usec, data[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return linktype, frames


def write_pcap(path, linktype, frames):
    """frames: [(ts_sec, ts_usec, bytes)] or [bytes]."""
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144,
                            linktype))
        for i, fr in enumerate(frames):
            sec, usec, b = fr if isinstance(fr, tuple) else (0, i, fr)
            f.write(struct.pack('<IIII', sec, usec, len(b), len(b)))
            f.write(b)


def udp_payload_off(frame):
    """Offset of the UDP payload (the BTH) in an untagged Ethernet frame."""
    l3 = 14
    if frame[l3] >> 4 == 4:
        return l3 + (frame[l3] & 0x0f) * 4 + 8
    return l3 + 40 + 8
