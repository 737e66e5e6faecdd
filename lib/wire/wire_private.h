/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by lib/wire's .c files. */
#ifndef WIRE_PRIVATE_H
#define WIRE_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

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
wire_ipv4_cksum(const uint8_t *h, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += wire_be16(h + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

#endif /* WIRE_PRIVATE_H */
