/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_peerdata.c - what a perftest peer's bytes must be.
 *
 * perftest 4.5-0.17 fills each buffer when it creates its MR
 * (create_single_mr): srand(time(NULL)), then (char)rand() for every byte
 * of the whole buffer (write_lat's buffer is zeroed instead).  Its buffer
 * has droce-perf's layout (two halves of max(size, cycle buffer)), so the
 * bytes a perftest peer writes, sends or lets us read are a window of
 * glibc's rand() stream for a seed close to the time the peer started, at
 * a cache-line-aligned offset inside that buffer.  The check finds the
 * seed (the last PERF_SEED_PAST_S seconds; PERF_SEED_AHEAD_S ahead for a
 * guest clock running ahead) and the offset at which the first bytes
 * appear, then compares every byte; rand() is random() in glibc, whose
 * state random_r() keeps here apart from the process's.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf_peerdata.h"

#define PERF_SEED_PAST_S 600
#define PERF_SEED_AHEAD_S 60
/* perftest's addresses advance in cache lines (INC(size, cache_line)). */
#define PERF_PEER_ALIGN 64
/* bytes compared to find the offset: 2^-64 of a false match per try */
#define PERF_PEER_PROBE 8
/* glibc's srand() state: TYPE_3, 128 bytes */
#define PERF_RAND_STATE 128

/* The first n bytes of seed's (char)rand() stream into out. */
static void
rand_stream(unsigned int seed, uint8_t *out, size_t n)
{
	char state[PERF_RAND_STATE];
	struct random_data rd;
	int32_t r;
	size_t i;

	memset(&rd, 0, sizeof(rd));
	initstate_r(seed, state, sizeof(state), &rd);
	for (i = 0; i < n; i++) {
		random_r(&rd, &r);
		out[i] = (uint8_t)r;
	}
}

/* The aligned offset of stream at which p's probe bytes appear, or -1. */
static long
find_offset(const uint8_t *stream, size_t span, const uint8_t *p,
	    uint32_t len)
{
	size_t off;

	for (off = 0; off + len <= span; off += PERF_PEER_ALIGN)
		if (memcmp(stream + off, p, PERF_PEER_PROBE) == 0)
			return (long)off;
	return -1;
}

int
perf_perftest_bytes(const uint8_t *p, uint32_t len, size_t span,
		    const char *what, char *found, size_t found_len)
{
	long now = (long)time(NULL), d, off = -1;
	uint8_t *stream;
	unsigned int seed = 0;
	uint32_t i;

	if (len < PERF_PEER_PROBE) {
		snprintf(found, found_len, "%u bytes are too few to tell "
			 "perftest's buffer from chance", len);
		return 2;
	}
	if (span < len) {
		fprintf(stderr, "%s: %u bytes cannot be in a buffer of %zu\n",
			what, len, span);
		return 1;
	}
	stream = malloc(span);
	if (stream == NULL) {
		fprintf(stderr, "%s: out of memory\n", what);
		return 1;
	}
	/* now, then back in time (the peer started a few seconds ago), then
	 * ahead */
	for (d = 0; d <= PERF_SEED_PAST_S + PERF_SEED_AHEAD_S && off < 0; d++) {
		seed = (unsigned int)(d <= PERF_SEED_PAST_S ? now - d :
				      now + d - PERF_SEED_PAST_S);
		rand_stream(seed, stream, span);
		off = find_offset(stream, span, p, len);
	}
	if (off < 0) {
		fprintf(stderr, "%s: the first %d bytes are in no perftest "
			"buffer (rand() after srand(t), t from %d s ago to "
			"%d s ahead, any %d-byte offset in %zu bytes)\n", what,
			PERF_PEER_PROBE, PERF_SEED_PAST_S, PERF_SEED_AHEAD_S,
			PERF_PEER_ALIGN, span);
		free(stream);
		return 1;
	}
	for (i = 0; i < len; i++) {
		if (p[i] != stream[off + i]) {
			fprintf(stderr, "%s: byte %u of %u is 0x%02x, perftest's "
				"buffer (seed %u, offset %ld) has 0x%02x\n",
				what, i, len, p[i], seed, off, stream[off + i]);
			free(stream);
			return 1;
		}
	}
	free(stream);
	snprintf(found, found_len, "all %u bytes equal perftest's buffer "
		 "(rand() after srand(%u), %ld s before this check; offset %ld "
		 "of its %zu bytes)", len, seed, now - (long)seed, off, span);
	return 0;
}
