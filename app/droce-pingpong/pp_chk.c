/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pp_chk.c - the -c (--chk) check of rc_pingpong.c / ud_pingpong.c.
 *
 * The client sets the first byte of every page of its send buffer to
 * `i / page_size % sizeof(char)` before the first send; at the end the
 * server checks the same bytes and prints "invalid data in page %d" for
 * each mismatch (the exit status is not affected).  Since sizeof(char) is
 * 1 the expected value is always 0 and the buffer is otherwise 0x7b: the
 * check proves that client data reached every page of the server's buffer.
 * It is kept as is so that droce and rdma-core peers check each other.
 * (UD applies it to the payload, after the 40-byte GRH.)
 */
#include "pingpong.h"

void
pp_chk_fill(char *buf, size_t size, size_t page_size)
{
	size_t i;

	for (i = 0; i < size; i += page_size)
		buf[i] = (char)(i / page_size % sizeof(char));
}

int
pp_chk_verify(const char *buf, size_t size, size_t page_size, FILE *out)
{
	size_t i;
	int bad = 0;

	for (i = 0; i < size; i += page_size)
		if (buf[i] != (char)(i / page_size % sizeof(char))) {
			fprintf(out, "invalid data in page %d\n",
				(int)(i / page_size));
			bad++;
		}
	return bad;
}
