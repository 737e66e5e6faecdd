/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RoCEv2 transport headers (IBTA 1.5 vol 1, ch. 9; RoCEv2 annex A17).
 *
 * Every header is a byte array in network byte order.  Its fields are
 * described once, in a table of (header, field, byte offset, byte count,
 * shift, bit width); the accessors roce_<hdr>_get_<field>() and
 * roce_<hdr>_set_<field>() are generated from that table, so there is no
 * hand-written getter/setter pair that could drift apart.  A field may span
 * at most 8 bytes; sub-byte fields are given by shift/width within the
 * big-endian value of their bytes.
 */
#ifndef ROCE_HDR_H
#define ROCE_HDR_H

#include <stdint.h>
#include <string.h>

/* Extended-header sizes in bytes. */
#define ROCE_BTH_LEN     12
#define ROCE_RETH_LEN    16
#define ROCE_AETH_LEN     4
#define ROCE_ATMETH_LEN  28
#define ROCE_ATMACK_LEN   8
#define ROCE_IMM_LEN      4
#define ROCE_IETH_LEN     4
#define ROCE_DETH_LEN     8
#define ROCE_FETH_LEN     4
#define ROCE_CNP_RSVD_LEN 16	/* CNP: 16 reserved bytes after the BTH */
#define ROCE_ICRC_LEN     4

#define ROCE_UDP_PORT 4791

/* X(hdr, field, byte offset, byte count, shift, width in bits) */
#define ROCE_BTH_FIELDS(X) \
	X(bth, opcode,   0, 1, 0,  8) \
	X(bth, se,       1, 1, 7,  1) \
	X(bth, migreq,   1, 1, 6,  1) \
	X(bth, padcnt,   1, 1, 4,  2) \
	X(bth, tver,     1, 1, 0,  4) \
	X(bth, pkey,     2, 2, 0, 16) \
	X(bth, fecn,     4, 1, 7,  1) \
	X(bth, becn,     4, 1, 6,  1) \
	X(bth, resv6a,   4, 1, 0,  6) \
	X(bth, destqp,   5, 3, 0, 24) \
	X(bth, ackreq,   8, 1, 7,  1) \
	X(bth, resv7,    8, 1, 0,  7) \
	X(bth, psn,      9, 3, 0, 24)

#define ROCE_RETH_FIELDS(X) \
	X(reth, va,      0, 8, 0, 64) \
	X(reth, rkey,    8, 4, 0, 32) \
	X(reth, len,    12, 4, 0, 32)

/* AETH: syndrome bits 7..5 = type (0 ACK, 1 RNR NAK, 3 NAK), 4..0 = value. */
#define ROCE_AETH_FIELDS(X) \
	X(aeth, syndrome, 0, 1, 0,  8) \
	X(aeth, msn,      1, 3, 0, 24)

#define ROCE_ATMETH_FIELDS(X) \
	X(atmeth, va,     0, 8, 0, 64) \
	X(atmeth, rkey,   8, 4, 0, 32) \
	X(atmeth, swap,  12, 8, 0, 64) \
	X(atmeth, comp,  20, 8, 0, 64)

#define ROCE_ATMACK_FIELDS(X) \
	X(atmack, orig,   0, 8, 0, 64)

#define ROCE_IMM_FIELDS(X) \
	X(imm, data,      0, 4, 0, 32)

#define ROCE_IETH_FIELDS(X) \
	X(ieth, rkey,     0, 4, 0, 32)

#define ROCE_DETH_FIELDS(X) \
	X(deth, qkey,     0, 4, 0, 32) \
	X(deth, resv,     4, 1, 0,  8) \
	X(deth, sqp,      5, 3, 0, 24)

/* FETH (IBTA 1.5 FLUSH): selectivity level bits 5..4, placement type 3..0. */
#define ROCE_FETH_FIELDS(X) \
	X(feth, sel,      3, 1, 4,  2) \
	X(feth, plt,      3, 1, 0,  4)

#define ROCE_ALL_HDR_FIELDS(X) \
	ROCE_BTH_FIELDS(X) ROCE_RETH_FIELDS(X) ROCE_AETH_FIELDS(X) \
	ROCE_ATMETH_FIELDS(X) ROCE_ATMACK_FIELDS(X) ROCE_IMM_FIELDS(X) \
	ROCE_IETH_FIELDS(X) ROCE_DETH_FIELDS(X) ROCE_FETH_FIELDS(X)

/*
 * Big-endian load/store of n (1..8, a constant after inlining) bytes.
 * The common sizes are one unaligned load/store (memcpy) plus a byte swap:
 * GCC does not turn the byte loop into that by itself, and the accessors
 * below run for every header field of every packet.  Other sizes (3, the
 * 24-bit QPN/PSN/MSN; 5..7) and big-endian hosts use the byte loop, which
 * is the definition: the fast paths must give the same value.
 */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
	__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ROCE_BE_SWAP16(v) __builtin_bswap16(v)
#define ROCE_BE_SWAP32(v) __builtin_bswap32(v)
#define ROCE_BE_SWAP64(v) __builtin_bswap64(v)
#elif defined(__GNUC__) && defined(__BYTE_ORDER__) && \
	__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ROCE_BE_SWAP16(v) (v)
#define ROCE_BE_SWAP32(v) (v)
#define ROCE_BE_SWAP64(v) (v)
#endif

static inline uint64_t
roce_be_load_loop(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static inline void
roce_be_store_loop(uint8_t *p, unsigned int n, uint64_t v)
{
	for (unsigned int i = n; i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

static inline uint64_t
roce_be_load(const uint8_t *p, unsigned int n)
{
#ifdef ROCE_BE_SWAP16
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (n) {
	case 1:
		return p[0];
	case 2:
		memcpy(&v16, p, 2);
		return ROCE_BE_SWAP16(v16);
	case 3:
		memcpy(&v16, p, 2);
		return (uint64_t)ROCE_BE_SWAP16(v16) << 8 | p[2];
	case 4:
		memcpy(&v32, p, 4);
		return ROCE_BE_SWAP32(v32);
	case 8:
		memcpy(&v64, p, 8);
		return ROCE_BE_SWAP64(v64);
	default:
		break;
	}
#endif
	return roce_be_load_loop(p, n);
}

static inline void
roce_be_store(uint8_t *p, unsigned int n, uint64_t v)
{
#ifdef ROCE_BE_SWAP16
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (n) {
	case 1:
		p[0] = (uint8_t)v;
		return;
	case 2:
		v16 = ROCE_BE_SWAP16((uint16_t)v);
		memcpy(p, &v16, 2);
		return;
	case 3:
		v16 = ROCE_BE_SWAP16((uint16_t)(v >> 8));
		memcpy(p, &v16, 2);
		p[2] = (uint8_t)v;
		return;
	case 4:
		v32 = ROCE_BE_SWAP32((uint32_t)v);
		memcpy(p, &v32, 4);
		return;
	case 8:
		v64 = ROCE_BE_SWAP64(v);
		memcpy(p, &v64, 8);
		return;
	default:
		break;
	}
#endif
	roce_be_store_loop(p, n, v);
}

#define ROCE_FIELD_MASK(width) \
	((width) >= 64 ? UINT64_MAX : ((UINT64_C(1) << (width)) - 1))

#define ROCE_GEN_ACCESSORS(hdr, field, off, nbytes, shift, width)	\
static inline uint64_t							\
roce_##hdr##_get_##field(const uint8_t *h)				\
{									\
	return roce_be_load(h + (off), (nbytes)) >> (shift) &		\
		ROCE_FIELD_MASK(width);					\
}									\
static inline void							\
roce_##hdr##_set_##field(uint8_t *h, uint64_t v)			\
{									\
	uint64_t m = ROCE_FIELD_MASK(width) << (shift);			\
	uint64_t cur = roce_be_load(h + (off), (nbytes));		\
	roce_be_store(h + (off), (nbytes),				\
		(cur & ~m) | (v << (shift) & m));			\
}

ROCE_ALL_HDR_FIELDS(ROCE_GEN_ACCESSORS)

/* AETH syndrome decoding (IBTA 9.7.5.2.1, table 44). */
enum roce_aeth_type {
	ROCE_AETH_ACK = 0,
	ROCE_AETH_RNR_NAK = 1,
	ROCE_AETH_RESERVED = 2,
	ROCE_AETH_NAK = 3,
};

/* NAK codes: the low 5 bits of a NAK syndrome (table 45). */
enum roce_nak_code {
	ROCE_NAK_PSN_SEQ_ERR = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REM_ACCESS_ERR = 2,
	ROCE_NAK_REM_OP_ERR = 3,
	ROCE_NAK_INVALID_RD_REQ = 4,
};

#define ROCE_AETH_SYNDROME(type, value) \
	((uint8_t)((unsigned int)(type) << 5 | ((value) & 0x1f)))
/* The syndrome of a plain ACK without end-to-end credits: 0x1f. */
#define ROCE_AETH_ACK_NO_CREDIT ROCE_AETH_SYNDROME(ROCE_AETH_ACK, 0x1f)

static inline enum roce_aeth_type
roce_aeth_type(uint8_t syndrome)
{
	return (enum roce_aeth_type)(syndrome >> 5 & 3);
}

static inline unsigned int
roce_aeth_value(uint8_t syndrome)
{
	return syndrome & 0x1f;
}

#endif /* ROCE_HDR_H */
