/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The ICRC written down from IBTA annex A17.3.3 for the tests, independent
 * of lib/wire's implementation: which bits of the IP datagram it masks,
 * and the ICRC itself from an explicitly masked copy summed bytewise.
 */
#ifndef TEST_ICRC_REF_H
#define TEST_ICRC_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "roce_wire.h"
#include "roce_icrc_private.h"

/* Is bit `bit` of frame byte `off` one the ICRC masks (counts as one)? */
static inline bool
icrc_masked(const struct roce_pkt *p, size_t off, unsigned int bit)
{
	size_t ip = off - p->l3_off;

	if (p->ip_version == 4) {
		if (ip == 1 || ip == 8 || ip == 10 || ip == 11)	/* TOS, TTL, csum */
			return true;
	} else {
		/* low nibble of byte 0 .. byte 3: traffic class, flow label */
		if ((ip == 0 && bit < 4) || ip == 1 || ip == 2 || ip == 3 ||
		    ip == 7)					/* hop limit */
			return true;
	}
	if (off == p->l4_off + 6u || off == p->l4_off + 7u)	/* UDP csum */
		return true;
	return off == p->bth_off + 4u;			/* FECN, BECN, resv6a */
}

#define ICRC_REF_MAX 9100

/* The ICRC of the datagram of parsed frame f: CRC-32 over 8 bytes of ones,
 * then the datagram up to the ICRC with the masked bits set. */
static inline uint32_t
icrc_reference(const uint8_t *f, const struct roce_pkt *p)
{
	static uint8_t buf[8 + ICRC_REF_MAX];
	size_t end = p->pkt_len - ROCE_ICRC_LEN;

	memset(buf, 0xff, 8);
	for (size_t off = p->l3_off; off < end; off++) {
		uint8_t b = f[off];

		for (unsigned int bit = 0; bit < 8; bit++)
			if (icrc_masked(p, off, bit))
				b |= (uint8_t)(1u << bit);
		buf[8 + off - p->l3_off] = b;
	}
	return roce_crc32_portable(0, buf, 8 + end - p->l3_off);
}

#endif /* TEST_ICRC_REF_H */
