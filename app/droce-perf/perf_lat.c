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
 * round-trip tests whole ones.  Samples are the times between consecutive
 * posts, iters - 1 of them, as perftest takes them.
 * As perftest: in write_lat the server writes first and the client waits
 * first, in send_lat the client sends first.  The last byte of each
 * write_lat message is the iteration number (i + 1, as a byte), which the
 * other side polls for, as perftest does.
 * Checks: write_lat's iteration numbers (a stale or wrong value stalls and
 * fails, with perftest too); send_lat: every message has -s bytes and,
 * between droce-perfs, carries the iteration number (in its last byte
 * too).  The other size - 1 bytes of a ping-pong message are zero (both
 * sides' write_lat buffer, perftest memsets it; droce-perf's send_lat)
 * and our copy starts as PERF_UNWRITTEN, so the last message must have
 * overwritten them; a perftest send_lat message is perftest's buffer
 * (perf_peerdata.c).  read_lat checks the bytes read (the pattern, or
 * perftest's buffer); atomic_lat checks the returned values (see
 * perf_check_atomic) and a droce-perf server its final word.
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

/* The last message's bytes before its last one (the iteration number). */
static int
check_pingpong_data(struct perf_ctx *c, uint32_t size)
{
	const uint8_t *p = perf_rx_half(c);
	char msg[160];
	uint32_t i;

	if (c->o->verb == PERF_SEND && !c->peer_droce)
		return perf_check_perftest_bytes(c, p, size, "send_lat");
	for (i = 0; i + 1 < size; i++) {
		if (p[i] != 0) {
			fprintf(stderr, "%s: byte %u of the last message is "
				"0x%02x, expected 0\n", c->o->test, i, p[i]);
			return 1;
		}
	}
	snprintf(msg, sizeof(msg), "every %s carried its iteration number in "
		 "its last byte; the last one's other %u bytes are zero",
		 c->o->verb == PERF_WRITE ? "write" : "message",
		 size > 0 ? size - 1 : 0);
	perf_check_passed(msg);
	return 0;
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
	volatile uint8_t *last = perf_rx_half(c) + size - 1;
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
wait_recv(struct perf_ctx *c, uint32_t size, uint8_t seq, uint64_t i,
	  int *outstanding)
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
	if (wc.byte_len != size) {
		fprintf(stderr, "send_lat: message %lu has %u bytes, expected "
			"%u\n", (unsigned long)i, wc.byte_len, size);
		return 1;
	}
	if (c->peer_droce && perf_rx_half(c)[size - 1] != seq) {
		fprintf(stderr, "send_lat: message %lu carries 0x%02x, "
			"expected 0x%02x\n", (unsigned long)i,
			perf_rx_half(c)[size - 1], seq);
		return 1;
	}
	return perf_fill_recv(c);
}

static int
wait_peer(struct perf_ctx *c, uint32_t size, uint8_t seq, uint64_t i,
	  int *outstanding)
{
	return c->o->verb == PERF_WRITE ?
		wait_write(c, size, seq, i, outstanding) :
		wait_recv(c, size, seq, i, outstanding);
}

static int
pingpong(struct perf_ctx *c, uint32_t size, uint64_t *t)
{
	const struct perf_opts *o = c->o;
	/* who waits before its first message: write_lat's client, send_lat's
	 * server (perftest's order) */
	int waits_first = (o->verb == PERF_WRITE) == c->client;
	int outstanding = 0;
	uint64_t i;

	for (i = 0; i < o->iters; i++) {
		uint8_t seq = (uint8_t)(i + 1);

		if (waits_first && wait_peer(c, size, seq, i, &outstanding))
			return 1;
		t[i] = perf_now_ns();	/* perftest: each post's time */
		/* the last byte: a first byte 6 (or 8) and zeros make tshark
		 * take the SEND's payload for EtherType-encapsulated XNS (IP) */
		perf_tx_half(c)[size - 1] = seq;
		if (post_and_reap(c, size, i, &outstanding) != 0)
			return 1;
		if (!waits_first && wait_peer(c, size, seq, i, &outstanding))
			return 1;
	}
	t[i] = perf_now_ns();
	while (outstanding > 0)
		if (reap_send(c, &outstanding) != 0)
			return 1;
	return check_pingpong_data(c, size);
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
	}
	t[i] = perf_now_ns();
	if (o->verb == PERF_READ)
		return perf_check_read(c, size);
	return perf_check_atomic(c, o->iters);
}

int
perf_run_lat(struct perf_ctx *c, uint32_t size)
{
	const struct perf_opts *o = c->o;
	int ping = o->verb == PERF_WRITE || o->verb == PERF_SEND;
	struct perf_lat_result res;
	struct perf_report none;
	uint64_t *t, i;
	int rc = 1;

	if (!c->client && !ping)
		return perf_passive_server(c, size);
	t = calloc((size_t)o->iters + 1, sizeof(*t));
	if (t == NULL) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	/* the buffers were prepared before the barrier (perf_prepare) */
	if (ping ? pingpong(c, size, t) : round_trips(c, size, t))
		goto out;
	memset(&none, 0, sizeof(none));
	none.size = size;
	none.iters = o->iters;
	if (c->peer_droce && (c->client ?
			      perf_client_end(c, o->iters, &none) :
			      perf_server_end(c, size, 0, 0)))
		goto out;
	/* as perftest: the iters - 1 intervals between consecutive posts (the
	 * wait before the first one and after the last one are not samples) */
	for (i = 0; i + 1 < o->iters; i++)
		t[i] = t[i + 1] - t[i];
	perf_lat_stats(t, o->iters - 1, ping ? 2 : 1, &res);
	res.size = size;
	res.iters = o->iters;
	perf_print_lat_line(o, &res, stdout);
	if (o->histogram)
		perf_print_lat_samples(t, o->iters - 1, ping ? 2 : 1, stdout);
	rc = 0;
out:
	free(t);
	return rc;
}
