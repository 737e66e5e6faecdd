/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The RoCEv2 invariant CRC (IBTA annex A17.3.3): CRC-32 (the Ethernet/zlib
 * polynomial, reflected) over
 *   8 bytes of 0xff (standing in for the IB LRH),
 *   the IP header with the variant fields masked to ones
 *     (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label,
 *      hop limit),
 *   the UDP header with the checksum masked to ones,
 *   the BTH with its reserved byte 4 (FECN, BECN, resv6a) masked to ones,
 *   everything after the BTH up to the ICRC (pad bytes included);
 * stored least-significant byte first in the last 4 bytes of the UDP payload.
 *
 * The CRC runs on ISA-L's crc32_gzip_refl() when available (chained through
 * a running value, so scattered buffers such as mbuf chains are summed
 * piecewise) and on a portable slice-by-8 table otherwise.
 */
#ifndef ROCE_ICRC_H
#define ROCE_ICRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* zlib-convention CRC-32: crc = roce_crc32(crc, buf, len), start with 0. */
uint32_t roce_crc32(uint32_t crc, const void *buf, size_t len);

/* Which implementation roce_crc32() uses: "isa-l" or "portable". */
const char *roce_crc32_impl(void);

/*
 * ICRC accumulator after the masked pseudo-header: the 8 x 0xff prefix, the
 * IP header starting at l3 (ip_version 4 or 6; IPv4 options included), the
 * UDP header and the BTH.  Returns the running CRC to continue with
 * roce_crc32() over the bytes after the BTH.
 */
uint32_t roce_icrc_begin(const uint8_t *l3, unsigned int ip_version);

/*
 * The ICRC of a contiguous IP datagram whose variant fields already hold
 * ones (the builder writes them so until roce_build_finish): one CRC pass,
 * no masked copy of the headers.
 */
uint32_t roce_icrc_premasked(const uint8_t *l3, size_t ip_len);

/*
 * The same for a datagram in three pieces (a zero-copy frame): hdr_len
 * bytes from l3 (premasked as above, up to the payload), the payload
 * elsewhere, then pad (0..3) zero bytes; the ICRC follows them.
 */
uint32_t roce_icrc_premasked_split(const uint8_t *l3, size_t hdr_len,
				   const void *payload, size_t payload_len,
				   size_t pad);

/* The ICRC of a contiguous IP datagram of ip_len bytes (ICRC included). */
uint32_t roce_icrc_compute(const uint8_t *l3, size_t ip_len,
			   unsigned int ip_version);

/* Read / write the ICRC as stored on the wire (little-endian). */
static inline uint32_t
roce_icrc_load(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void
roce_icrc_store(uint8_t *p, uint32_t icrc)
{
	p[0] = (uint8_t)icrc;
	p[1] = (uint8_t)(icrc >> 8);
	p[2] = (uint8_t)(icrc >> 16);
	p[3] = (uint8_t)(icrc >> 24);
}

struct roce_pkt;

/* True when the ICRC of a packet parsed from buf matches its contents. */
bool roce_icrc_verify(const void *buf, const struct roce_pkt *pkt);

/*
 * The same verdict in one CRC pass, for a frame the caller may write to
 * (a receive mbuf nobody else is reading): the variant fields are set to
 * ones in place, the datagram is summed once, and the bytes are restored
 * before it returns, so buf is unchanged afterwards.  roce_icrc_verify()
 * copies and masks the headers and so needs a second CRC call, which costs
 * as much as a short packet's whole CRC (see BENCHMARKS.md, ICRC).
 */
bool roce_icrc_verify_writable(void *buf, const struct roce_pkt *pkt);

#endif /* ROCE_ICRC_H */
