/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_chk.c - the -c (--chk) check of rc_pingpong.c / ud_pingpong.c.
 *
 * The examples memset the whole buffer to 0x7b (srq_pingpong: to 0); the
 * client then sets the first byte of every page to `i / page_size % sizeof(char)` (always 0,
 * since sizeof(char) is 1) before the first send, and the server echoes
 * what it received.  rdma-core's server checks only those page-start
 * bytes and prints "invalid data in page %d" without changing its exit
 * status.  droce checks every byte of the message against that pattern,
 * in both roles (the client its receive buffer: the server's echo), keeps
 * rdma-core's line so scripts can look for it, and exits 1 on a mismatch.
 * (UD applies it to the payload, after the 40-byte GRH.)
 */
#include <stdint.h>

#include "pingpong.h"

static char
chk_expected(size_t i, size_t page_size, unsigned char fill)
{
	if (i % page_size == 0)
		return (char)(i / page_size % sizeof(char));
	return (char)fill;
}

unsigned char
pp_chk_fill_byte(enum pp_kind kind)
{
	return kind == PP_SRQ ? PP_CHK_FILL_SRQ : PP_CHK_FILL;
}

void
pp_chk_fill(char *buf, size_t size, size_t page_size)
{
	size_t i;

	for (i = 0; i < size; i += page_size)
		buf[i] = chk_expected(i, page_size, 0);
}

size_t
pp_chk_verify(const char *buf, size_t size, size_t page_size,
	      unsigned char fill, FILE *out)
{
	size_t i, bad = 0, first = 0, pages = (size + page_size - 1) / page_size;
	size_t last_bad_page = SIZE_MAX;

	for (i = 0; i < size; i++) {
		if (buf[i] == chk_expected(i, page_size, fill))
			continue;
		if (bad++ == 0)
			first = i;
		if (i / page_size != last_bad_page) {
			last_bad_page = i / page_size;
			fprintf(out, "invalid data in page %d\n",
				(int)last_bad_page);
		}
	}
	if (bad == 0)
		fprintf(out, "data check passed: all %zu bytes received as "
			"the -c pattern (%zu page start(s) 0x00, the rest "
			"0x%02x)\n", size, pages, fill);
	else
		fprintf(out, "data check FAILED: %zu of %zu bytes wrong, the "
			"first at offset %zu (0x%02x, expected 0x%02x)\n",
			bad, size, first, (unsigned char)buf[first],
			(unsigned char)chk_expected(first, page_size, fill));
	return bad;
}
