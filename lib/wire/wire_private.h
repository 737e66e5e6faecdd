/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by lib/wire's .c files. */
#ifndef WIRE_PRIVATE_H
#define WIRE_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "roce_hdr.h"

static inline uint16_t
wire_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t
wire_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline void
wire_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
wire_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/*
 * RFC 1071 ones'-complement sum over an IPv4 header of len bytes (even).
 * Returns the checksum to store; over a header with a correct checksum it
 * returns 0.
 */
static inline uint16_t
wire_ipv4_cksum_loop(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += wire_be16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/*
 * The same for the 20-byte header without options that RoCEv2 sends: five
 * 32-bit words added in 64 bits and folded.  The ones'-complement sum does
 * not depend on the byte order it is taken in (RFC 1071 2.B), so the words
 * are added as loaded and the result is swapped once.
 */
static inline uint16_t
wire_ipv4_cksum(const uint8_t *h, size_t len)
{
#ifdef ROCE_BE_SWAP16
	if (len == 20) {
		uint32_t w[5];
		uint64_t sum;

		memcpy(w, h, sizeof(w));
		sum = (uint64_t)w[0] + w[1] + w[2] + w[3] + w[4];
		sum = (sum & 0xffffffffu) + (sum >> 32);
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		return (uint16_t)ROCE_BE_SWAP16((uint16_t)~sum);
	}
#endif
	return wire_ipv4_cksum_loop(h, len);
}

#endif /* WIRE_PRIVATE_H */
