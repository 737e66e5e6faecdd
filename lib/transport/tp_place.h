/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tp_place.h - a payload into application memory as an RNIC's DMA writes
 * it: each byte once, the last bytes last.  Pure C (no EAL).
 *
 * Programs poll the last byte of a buffer a peer WRITEs and then use the
 * buffer at once: riostream stores its next marker into that byte and
 * riowrites the buffer back; last-byte-polling RPCs reuse the slot.  That
 * is safe only if nothing is stored into the buffer after the last byte
 * appeared.  memcpy promises no such thing: glibc's AVX-512 copy of
 * exactly 64 bytes loads the source twice and stores all 64 bytes twice
 * (its "VEC_SIZE to 2 * VEC_SIZE" case with the two vectors the same), and
 * riostream's marker, stored between the two, was overwritten: both
 * sides then waited for each other forever (1 run of riostream -S 64
 * -I 100 in 10).
 *
 * So the bulk goes through memcpy and the last TP_PLACE_TAIL bytes are
 * stored once each, in ascending order (bytes up to a multiple of 8, a
 * word, then 16-byte vector stores), the final one after a release fence:
 * every other store of the payload is visible before the last byte is
 * (x86 keeps stores in order anyway; memcpy of a packet's few KiB uses no
 * non-temporal ones).
 */
#ifndef TP_PLACE_H
#define TP_PLACE_H

#include <stdint.h>
#include <string.h>

#define TP_PLACE_TAIL 64u

/* Each store of the tail, noted (n bytes at d) where a test traces them
 * (test_tp_place); nothing otherwise. */
#ifndef TP_PLACE_NOTE
#define TP_PLACE_NOTE(d, n) ((void)0)
#endif

/* unaligned stores the compiler may neither merge into a memcpy call nor
 * repeat (volatile), and that UBSan accepts at any address (aligned(1)) */
typedef uint64_t __attribute__((aligned(1), may_alias)) tp_place_u64;

static inline void
tp_place_word(uint8_t *d, const uint8_t *s)
{
	uint64_t v;

	memcpy(&v, s, sizeof(v));
	*(volatile tp_place_u64 *)d = v;
}

/* 16 bytes in one vector store (a fixed-size copy; the compiler barrier
 * keeps it apart from, and after, the stores before it) */
static inline void
tp_place_16(uint8_t *d, const uint8_t *s)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	memcpy(d, s, 16);
}

static inline void
tp_place(void *dst, const void *src, uint32_t len)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	uint32_t tail = len < TP_PLACE_TAIL ? len : TP_PLACE_TAIL;
	/* the final store's width, and where it starts */
	uint32_t width = tail >= 16 ? 16 : tail >= 8 ? 8 : 1;
	uint32_t i = len - tail, end = len - width;

	if (len == 0)
		return;
	if (i != 0)
		memcpy(d, s, i);
	for (; (end - i) % 8 != 0; i++) {
		TP_PLACE_NOTE(d + i, 1);
		*(volatile uint8_t *)(d + i) = s[i];
	}
	if ((end - i) % 16 != 0) {
		TP_PLACE_NOTE(d + i, 8);
		tp_place_word(d + i, s + i);
		i += 8;
	}
	for (; i < end; i += 16) {
		TP_PLACE_NOTE(d + i, 16);
		tp_place_16(d + i, s + i);
	}
	__atomic_thread_fence(__ATOMIC_RELEASE);
	TP_PLACE_NOTE(d + i, width);
	if (width == 16)
		tp_place_16(d + i, s + i);
	else if (width == 8)
		tp_place_word(d + i, s + i);
	else
		*(volatile uint8_t *)(d + i) = s[i];
}

#endif /* TP_PLACE_H */
