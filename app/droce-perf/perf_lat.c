/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_lat.c - the latency tests, as perftest runs them:
 *   write_lat  ping-pong of RDMA WRITEs: each side writes the other's
 *              buffer and polls its own memory for the last byte to change
 *              (droce is polled: the wait runs the transport);
 *   send_lat   ping-pong of SENDs, a receive always posted ahead;
 *   read_lat, atomic_lat  client round trips, one operation at a time; the
 *              server only waits for the END message.
 * Ping-pong tests report half round trips (perftest divides by 2), client
 * round-trip tests whole ones.  Samples are time between iterations.
 * Checks: write_lat/send_lat carry the iteration number in the message
 * (a stale or wrong value stalls and fails); read_lat checks the bytes
 * read; atomic_lat checks each returned value (i before operation i) and
 * the server checks the final word equals the iteration count.
 */
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static int
stalled(uint64_t since, const char *what, uint64_t i)
{
	if (perf_now_ns() - since <= PERF_STALL_NS)
		return 0;
	fprintf(stderr, "%s: no progress for 10 s at iteration %lu\n", what,
		(unsigned long)i);
	return 1;
}

/* Reap the send completions of a depth-1 queue. */
static int
reap_send(struct perf_ctx *c, int *outstanding)
{
	struct droce_wc wc[4];
	int ne = perf_poll(c, c->scq, 4, wc);

	if (ne < 0)
		return -1;
	*outstanding -= ne;
	return 0;
}

static int
post_and_reap(struct perf_ctx *c, uint32_t size, uint64_t seq,
	      int *outstanding)
{
	uint64_t t0 = perf_now_ns();
	int rc;

	while (*outstanding > 0) {
		if (reap_send(c, outstanding) != 0 ||
		    stalled(t0, "send completion", seq))
			return 1;
	}
	rc = perf_post_op(c, 1, size, 1, seq);
	if (rc != 0) {
		fprintf(stderr, "Couldn't post send: %s\n", strerror(rc));
		return 1;
	}
	(*outstanding)++;
	return 0;
}

/* write_lat: wait until our rx half's last byte is seq. */
static int
wait_write(struct perf_ctx *c, uint32_t size, uint8_t seq, uint64_t i,
	   int *outstanding)
{
	volatile uint8_t *last = c->buf + c->buf_size / 2 + size - 1;
	uint64_t t0 = perf_now_ns();
	unsigned int spin = 0;

	while (*last != seq) {
		if (reap_send(c, outstanding) != 0)
			return 1;
		if ((++spin & 1023) == 0 && stalled(t0, "write_lat", i))
			return 1;
	}
	return 0;
}

/* send_lat: one receive completion, checked, and a receive posted again. */
static int
wait_recv(struct perf_ctx *c, uint8_t seq, uint64_t i, int *outstanding)
{
	uint64_t t0 = perf_now_ns();
	struct droce_wc wc;
	int ne;

	for (;;) {
		ne = perf_poll(c, c->rcq, 1, &wc);
		if (ne < 0)
			return 1;
		if (ne == 1)
			break;
		if (reap_send(c, outstanding) != 0 ||
		    stalled(t0, "send_lat", i))
			return 1;
	}
	c->rx_posted--;
	if (c->buf[c->buf_size / 2] != seq) {
		fprintf(stderr, "send_lat: message %lu carries 0x%02x, "
			"expected 0x%02x\n", (unsigned long)i,
			c->buf[c->buf_size / 2], seq);
		return 1;
	}
	return perf_fill_recv(c);
}

static int
pingpong(struct perf_ctx *c, uint32_t size, uint64_t *t)
{
	const struct perf_opts *o = c->o;
	int client = o->servername != NULL;
	int outstanding = 0;
	uint64_t i;

	for (i = 0; i < o->iters; i++) {
		uint8_t seq = (uint8_t)(i % 255 + 1);

		t[i] = perf_now_ns();
		if (!client) {
			if (o->verb == PERF_WRITE ?
			    wait_write(c, size, seq, i, &outstanding) :
			    wait_recv(c, seq, i, &outstanding))
				return 1;
		}
		c->buf[o->verb == PERF_WRITE ? size - 1 : 0] = seq;
		if (post_and_reap(c, size, i, &outstanding) != 0)
			return 1;
		if (client) {
			if (o->verb == PERF_WRITE ?
			    wait_write(c, size, seq, i, &outstanding) :
			    wait_recv(c, seq, i, &outstanding))
				return 1;
		}
	}
	t[i] = perf_now_ns();
	while (outstanding > 0)
		if (reap_send(c, &outstanding) != 0)
			return 1;
	return 0;
}

static int
round_trips(struct perf_ctx *c, uint32_t size, uint64_t *t)
{
	const struct perf_opts *o = c->o;
	uint64_t i, t0;
	struct droce_wc wc;
	int ne, rc;

	for (i = 0; i < o->iters; i++) {
		t[i] = t0 = perf_now_ns();
		rc = perf_post_op(c, 1, size, 1, i);
		if (rc != 0) {
			fprintf(stderr, "Couldn't post: %s\n", strerror(rc));
			return 1;
		}
		while ((ne = perf_poll(c, c->scq, 1, &wc)) == 0)
			if (stalled(t0, o->test, i))
				return 1;
		if (ne < 0)
			return 1;
		if (o->verb == PERF_ATOMIC) {
			uint64_t v;

			memcpy(&v, c->buf + c->buf_size / 2, 8);
			if (v != i) {
				fprintf(stderr, "atomic_lat: operation %lu "
					"returned %lu\n", (unsigned long)i,
					(unsigned long)v);
				return 1;
			}
		}
	}
	t[i] = perf_now_ns();
	if (o->verb == PERF_READ)
		return perf_check_read(c, size);
	return 0;
}

int
perf_run_lat(struct perf_ctx *c, uint32_t size)
{
	const struct perf_opts *o = c->o;
	int client = o->servername != NULL;
	int ping = o->verb == PERF_WRITE || o->verb == PERF_SEND;
	struct perf_lat_result res;
	uint64_t *t, i;
	int rc = 1;

	if (!client && !ping)
		return perf_passive_server(c, size);
	t = calloc((size_t)o->iters + 1, sizeof(*t));
	if (t == NULL) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	memset(c->buf, 0, size);
	memset(c->buf + c->buf_size / 2, 0, size);
	if (o->verb == PERF_SEND && perf_fill_recv(c) != 0)
		goto out;
	if (perf_barrier(c->sock) != 0) {
		fprintf(stderr, "lost the peer (side channel)\n");
		goto out;
	}
	if (ping ? pingpong(c, size, t) : round_trips(c, size, t))
		goto out;
	if (client && !ping && perf_client_end(c, o->iters) != 0)
		goto out;
	if (ping && perf_barrier(c->sock) != 0)
		goto out;
	for (i = 0; i < o->iters; i++)
		t[i] = t[i + 1] - t[i];
	perf_lat_stats(t, o->iters, ping ? 2 : 1, &res);
	res.size = size;
	res.iters = o->iters;
	perf_print_lat_line(o, &res, stdout);
	rc = 0;
out:
	free(t);
	return rc;
}
