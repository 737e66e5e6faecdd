/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "roce_wire.h"
#include "roce_icrc_private.h"

#ifdef ROCE_HAVE_ISAL
#include <isa-l/crc.h>

uint32_t
roce_crc32(uint32_t crc, const void *buf, size_t len)
{
	return crc32_gzip_refl(crc, buf, len);
}

const char *
roce_crc32_impl(void)
{
	return "isa-l";
}
#else
uint32_t
roce_crc32(uint32_t crc, const void *buf, size_t len)
{
	return roce_crc32_portable(crc, buf, len);
}

const char *
roce_crc32_impl(void)
{
	return "portable";
}
#endif

/* crc32 of the 8 x 0xff bytes that stand in for the LRH (IBTA A17.3.3). */
#define ROCE_ICRC_LRH_CRC 0x2144df1cu

/* Largest pseudo-header copied for masking: IPv4 with 40 bytes of options. */
#define ROCE_ICRC_PSEUDO_MAX (60 + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN)

uint32_t
roce_icrc_begin(const uint8_t *l3, unsigned int ip_version)
{
	uint8_t hdr[ROCE_ICRC_PSEUDO_MAX];
	size_t ip_len;

	if (ip_version == 4) {
		ip_len = (size_t)(l3[0] & 0x0f) * 4;
		memcpy(hdr, l3, ip_len + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN);
		hdr[1] = 0xff;			/* TOS (DSCP + ECN) */
		hdr[8] = 0xff;			/* TTL */
		hdr[10] = hdr[11] = 0xff;	/* header checksum */
	} else {
		ip_len = ROCE_IPV6_HDR_LEN;
		memcpy(hdr, l3, ip_len + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN);
		/* version stays; traffic class and flow label become ones */
		hdr[0] |= 0x0f;
		hdr[1] = hdr[2] = hdr[3] = 0xff;
		hdr[7] = 0xff;			/* hop limit */
	}
	hdr[ip_len + 6] = hdr[ip_len + 7] = 0xff;	/* UDP checksum */
	hdr[ip_len + ROCE_UDP_HDR_LEN + 4] = 0xff;	/* BTH FECN/BECN/resv6a */

	return roce_crc32(ROCE_ICRC_LRH_CRC, hdr,
			  ip_len + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN);
}

uint32_t
roce_icrc_premasked(const uint8_t *l3, size_t ip_len)
{
	return roce_crc32(ROCE_ICRC_LRH_CRC, l3, ip_len - ROCE_ICRC_LEN);
}

uint32_t
roce_icrc_premasked_split(const uint8_t *l3, size_t hdr_len, const void *payload,
			  size_t payload_len, size_t pad)
{
	static const uint8_t zero[3];
	uint32_t crc = roce_crc32(ROCE_ICRC_LRH_CRC, l3, hdr_len);

	crc = roce_crc32(crc, payload, payload_len);
	return roce_crc32(crc, zero, pad);
}

uint32_t
roce_icrc_compute(const uint8_t *l3, size_t ip_len, unsigned int ip_version)
{
	size_t hdrs = (ip_version == 4 ? (size_t)(l3[0] & 0x0f) * 4 :
		       ROCE_IPV6_HDR_LEN) + ROCE_UDP_HDR_LEN + ROCE_BTH_LEN;
	uint32_t crc = roce_icrc_begin(l3, ip_version);

	return roce_crc32(crc, l3 + hdrs, ip_len - hdrs - ROCE_ICRC_LEN);
}

bool
roce_icrc_verify(const void *buf, const struct roce_pkt *pkt)
{
	const uint8_t *l3 = (const uint8_t *)buf + pkt->l3_off;
	size_t ip_len = pkt->pkt_len - pkt->l3_off;

	return roce_icrc_compute(l3, ip_len, pkt->ip_version) == pkt->icrc;
}

/* The bytes in front of the UDP header that the ICRC masks live in the
 * first 12 of an IPv4 header (TOS, TTL, checksum) and the first 8 of an
 * IPv6 header (traffic class, flow label, hop limit). */
#define ICRC_IP_SAVE 12

/* Byte by byte: any IPv4 header length, datagrams of any length.  Out of
 * line, so that its registers do not weigh on the common path's prologue. */
__attribute__((noinline)) static uint32_t
icrc_masked_bytes(uint8_t *buf, const struct roce_pkt *pkt)
{
	uint8_t *l3 = buf + pkt->l3_off;
	uint8_t *udp = buf + pkt->l4_off;
	uint8_t *bth = buf + pkt->bth_off;
	uint8_t ip_saved[ICRC_IP_SAVE], udp_saved[2], bth_saved;
	uint32_t crc;

	memcpy(ip_saved, l3, ICRC_IP_SAVE);
	memcpy(udp_saved, udp + 6, 2);
	bth_saved = bth[4];
	if (pkt->ip_version == 4) {
		l3[1] = 0xff;			/* TOS (DSCP + ECN) */
		l3[8] = 0xff;			/* TTL */
		l3[10] = l3[11] = 0xff;		/* header checksum */
	} else {
		l3[0] |= 0x0f;			/* traffic class and flow label */
		l3[1] = l3[2] = l3[3] = 0xff;
		l3[7] = 0xff;			/* hop limit */
	}
	udp[6] = udp[7] = 0xff;			/* UDP checksum */
	bth[4] = 0xff;				/* FECN, BECN, resv6a */

	crc = roce_icrc_premasked(l3, pkt->pkt_len - pkt->l3_off);

	memcpy(l3, ip_saved, ICRC_IP_SAVE);
	memcpy(udp + 6, udp_saved, 2);
	bth[4] = bth_saved;
	return crc;
}

/*
 * With no IPv4 options every masked byte lies in the datagram's first 48
 * (IPv4) or 64 (IPv6) bytes, at fixed offsets: masking is an OR of a
 * constant into those bytes and restoring a store of the saved copy.  In
 * whole 16-byte stores, not seven byte stores, because the CRC reads the
 * bytes back at once in 16-byte loads from l3, and a load that needs
 * several narrower stores cannot be forwarded from them: it waits for
 * them to reach the cache.
 */
#define ICRC_VEC 16
#define ICRC_VECS_IPV4 3
#define ICRC_VECS_IPV6 4

typedef uint8_t icrc_vec __attribute__((vector_size(ICRC_VEC)));

static const uint8_t icrc_or_ipv4[ICRC_VECS_IPV4 * ICRC_VEC] = {
	[1] = 0xff,				/* TOS */
	[8] = 0xff,				/* TTL */
	[10] = 0xff, [11] = 0xff,		/* header checksum */
	[ROCE_IPV4_HDR_LEN + 6] = 0xff,		/* UDP checksum */
	[ROCE_IPV4_HDR_LEN + 7] = 0xff,
	[ROCE_IPV4_HDR_LEN + ROCE_UDP_HDR_LEN + 4] = 0xff, /* FECN, BECN, resv6a */
};

static const uint8_t icrc_or_ipv6[ICRC_VECS_IPV6 * ICRC_VEC] = {
	[0] = 0x0f, [1] = 0xff, [2] = 0xff, [3] = 0xff,	/* class, flow label */
	[7] = 0xff,				/* hop limit */
	[ROCE_IPV6_HDR_LEN + 6] = 0xff,		/* UDP checksum */
	[ROCE_IPV6_HDR_LEN + 7] = 0xff,
	[ROCE_IPV6_HDR_LEN + ROCE_UDP_HDR_LEN + 4] = 0xff, /* FECN, BECN, resv6a */
};

/* nvec is a constant at each call: the loops unroll into straight code. */
static inline uint32_t
icrc_masked_vecs(uint8_t *l3, size_t ip_len, const uint8_t *or_bytes,
		 unsigned int nvec)
{
	icrc_vec saved[ICRC_VECS_IPV6];
	uint32_t crc;

#pragma GCC unroll 4
	for (unsigned int i = 0; i < nvec; i++) {
		icrc_vec or_mask, masked;

		memcpy(&saved[i], l3 + i * ICRC_VEC, ICRC_VEC);
		memcpy(&or_mask, or_bytes + i * ICRC_VEC, ICRC_VEC);
		masked = saved[i] | or_mask;
		memcpy(l3 + i * ICRC_VEC, &masked, ICRC_VEC);
	}
	crc = roce_icrc_premasked(l3, ip_len);
#pragma GCC unroll 4
	for (unsigned int i = 0; i < nvec; i++)
		memcpy(l3 + i * ICRC_VEC, &saved[i], ICRC_VEC);
	return crc;
}

bool
roce_icrc_verify_writable(void *buf, const struct roce_pkt *pkt)
{
	uint8_t *l3 = (uint8_t *)buf + pkt->l3_off;
	size_t ip_len = pkt->pkt_len - pkt->l3_off;
	size_t l4 = pkt->l4_off - pkt->l3_off;
	uint32_t crc;

	if (pkt->ip_version == 4 && l4 == ROCE_IPV4_HDR_LEN &&
	    ip_len >= sizeof(icrc_or_ipv4))
		crc = icrc_masked_vecs(l3, ip_len, icrc_or_ipv4, ICRC_VECS_IPV4);
	else if (pkt->ip_version == 6 && ip_len >= sizeof(icrc_or_ipv6))
		crc = icrc_masked_vecs(l3, ip_len, icrc_or_ipv6, ICRC_VECS_IPV6);
	else
		crc = icrc_masked_bytes(buf, pkt);
	return crc == pkt->icrc;
}
