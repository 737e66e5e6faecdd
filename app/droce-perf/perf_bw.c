/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_bw.c - the bandwidth tests, as perftest runs them: the client keeps
 * tx_depth operations outstanding, signalling every cq_mod-th (wr_id of a
 * signalled operation = how many operations it completes), until -n
 * operations or -D seconds; the server of write/read/atomic only waits for
 * the client's END message; the send_bw server keeps rx_depth receives
 * posted and counts them.
 *
 * Each size is verified, so a run cannot report success for nothing:
 * write_bw and send_bw: the server checks the bytes that arrived against
 * the size's pattern; read_bw: the client checks the bytes it read;
 * atomic_bw: the server checks its word equals the number of operations
 * (FETCH_AND_ADD adds 1; CMP_AND_SWAP i -> i + 1, in order, as RC
 * executes them); send_bw also compares the receive count with the sends.
 */
#include <string.h>

#include "perf.h"

static uint8_t *
tx_half(struct perf_ctx *c)
{
	return c->buf;
}

static uint8_t *
rx_half(struct perf_ctx *c)
{
	return c->buf + c->buf_size / 2;
}

static void
fill_pattern(uint8_t *p, uint32_t size)
{
	uint32_t i;

	for (i = 0; i < size; i++)
		p[i] = perf_pattern(i, size);
}

static int
check_pattern(const uint8_t *p, uint32_t size, const char *what)
{
	uint32_t i;

	for (i = 0; i < size; i++) {
		if (p[i] != perf_pattern(i, size)) {
			fprintf(stderr, "%s: data mismatch at byte %u of %u: "
				"0x%02x, expected 0x%02x\n", what, i, size,
				p[i], perf_pattern(i, size));
			return 1;
		}
	}
	return 0;
}

int
perf_check_read(struct perf_ctx *c, uint32_t size)
{
	return check_pattern(rx_half(c), size, "read_bw client");
}

int
perf_fill_recv(struct perf_ctx *c)
{
	while (c->rx_posted < c->o->rx_depth) {
		int rc = perf_post_recv(c, 1, (uint32_t)(c->buf_size / 2));

		if (rc != 0) {
			fprintf(stderr, "Couldn't post receive: %s\n",
				strerror(rc));
			return 1;
		}
		c->rx_posted++;
	}
	return 0;
}

int
perf_client_end(struct perf_ctx *c, uint64_t count)
{
	uint64_t verdict = 1;

	if (perf_send_msg(c->sock, "END ", count) != 0 ||
	    perf_recv_msg(c->sock, "VERI", &verdict) != 0) {
		fprintf(stderr, "lost the server (side channel)\n");
		return 1;
	}
	if (verdict != 0) {
		fprintf(stderr, "the server found wrong data after %s\n",
			c->o->test);
		return 1;
	}
	return 0;
}

/* Before the barrier: what the passive server's buffer must hold. */
static void
passive_prepare(struct perf_ctx *c, uint32_t size)
{
	switch (c->o->verb) {
	case PERF_WRITE:
		memset(rx_half(c), 0, size);
		break;
	case PERF_READ:
		fill_pattern(tx_half(c), size);
		break;
	case PERF_ATOMIC:
		memset(rx_half(c), 0, 8);
		break;
	case PERF_SEND:
		break;
	}
}

static int
passive_verify(struct perf_ctx *c, uint32_t size, uint64_t count)
{
	uint64_t v;

	switch (c->o->verb) {
	case PERF_WRITE:
		return check_pattern(rx_half(c), size, "write server");
	case PERF_ATOMIC:
		memcpy(&v, rx_half(c), 8);
		if (v != count) {
			fprintf(stderr, "atomic server: word is %lu after %lu "
				"operations\n", (unsigned long)v,
				(unsigned long)count);
			return 1;
		}
		return 0;
	default:
		return 0;
	}
}

int
perf_passive_server(struct perf_ctx *c, uint32_t size)
{
	uint64_t count = 0;
	int bad;

	passive_prepare(c, size);
	if (perf_barrier(c->sock) != 0 ||
	    perf_recv_msg(c->sock, "END ", &count) != 0) {
		fprintf(stderr, "lost the client (side channel)\n");
		return 1;
	}
	bad = passive_verify(c, size, count);
	if (perf_send_msg(c->sock, "VERI", (uint64_t)bad) != 0)
		return 1;
	return bad;
}

struct bw_meter {
	uint64_t t_start, t_last, ops;
	double peak;			/* operations per second */
};

static void
meter_add(struct bw_meter *m, uint64_t ops)
{
	uint64_t t = perf_now_ns();

	if (t > m->t_last && m->ops > 0) {
		double r = (double)ops * 1e9 / (double)(t - m->t_last);

		if (r > m->peak)
			m->peak = r;
	}
	m->t_last = t;
	m->ops += ops;
}

static void
meter_result(const struct bw_meter *m, uint32_t size,
	     struct perf_bw_result *r)
{
	double secs = (double)(m->t_last - m->t_start) / 1e9;

	memset(r, 0, sizeof(*r));
	r->size = size;
	r->iters = m->ops;
	if (secs > 0) {
		r->msg_rate = (double)m->ops / secs;
		r->bw_avg = r->msg_rate * size;
	}
	r->bw_peak = (m->peak > r->msg_rate ? m->peak : r->msg_rate) * size;
}

static int
client_bw(struct perf_ctx *c, uint32_t size)
{
	const struct perf_opts *o = c->o;
	uint64_t posted = 0, completed = 0, since_signal = 0, deadline = 0;
	uint64_t last_progress;
	struct perf_bw_result res;
	struct bw_meter m;
	struct droce_wc wc[16];
	int stop = 0, i, ne, rc;

	if (o->verb == PERF_WRITE || o->verb == PERF_SEND)
		fill_pattern(tx_half(c), size);
	memset(rx_half(c), 0, size);
	if (perf_barrier(c->sock) != 0) {
		fprintf(stderr, "lost the server (side channel)\n");
		return 1;
	}
	memset(&m, 0, sizeof(m));
	m.t_start = m.t_last = last_progress = perf_now_ns();
	if (o->duration != 0)
		deadline = m.t_start + (uint64_t)o->duration * 1000000000u;
	while (!stop || completed < posted) {
		while (!stop && posted - completed < o->tx_depth) {
			int sig;

			since_signal++;
			sig = since_signal == o->cq_mod ||
				(o->duration == 0 && posted + 1 == o->iters);
			rc = perf_post_op(c, sig ? since_signal : 0, size, sig,
					  posted);
			if (rc != 0) {
				fprintf(stderr, "Couldn't post send: %s\n",
					strerror(rc));
				return 1;
			}
			posted++;
			if (sig)
				since_signal = 0;
			if (o->duration == 0 ? posted == o->iters :
			    (sig && perf_now_ns() >= deadline))
				stop = 1;
		}
		ne = perf_poll(c, c->scq, 16, wc);
		if (ne < 0)
			return 1;
		if (ne == 0) {
			if (perf_now_ns() - last_progress > PERF_STALL_NS) {
				fprintf(stderr, "no completion for 10 s "
					"(%lu of %lu done)\n",
					(unsigned long)completed,
					(unsigned long)posted);
				return 1;
			}
			continue;
		}
		last_progress = perf_now_ns();
		for (i = 0; i < ne; i++) {
			completed += wc[i].wr_id;
			meter_add(&m, wc[i].wr_id);
		}
	}
	if (perf_client_end(c, posted) != 0)
		return 1;
	if (o->verb == PERF_READ && perf_check_read(c, size) != 0)
		return 1;
	meter_result(&m, size, &res);
	perf_print_bw_line(o, &res, stdout);
	return 0;
}

static int
server_send_bw(struct perf_ctx *c, uint32_t size)
{
	const struct perf_opts *o = c->o;
	uint64_t count = 0, rcnt = 0, last_progress;
	struct perf_bw_result res;
	struct bw_meter m;
	struct droce_wc wc[16];
	int got_end = 0, bad, ne;

	memset(rx_half(c), 0, size);
	if (perf_fill_recv(c) != 0)
		return 1;
	if (perf_barrier(c->sock) != 0) {
		fprintf(stderr, "lost the client (side channel)\n");
		return 1;
	}
	memset(&m, 0, sizeof(m));
	m.t_start = m.t_last = last_progress = perf_now_ns();
	while (!got_end || rcnt < count) {
		ne = perf_poll(c, c->rcq, 16, wc);
		if (ne < 0)
			return 1;
		if (ne > 0) {
			if (rcnt == 0)
				m.t_start = m.t_last = perf_now_ns();
			else
				meter_add(&m, (uint64_t)ne);
			rcnt += (uint64_t)ne;
			c->rx_posted -= (uint32_t)ne;
			last_progress = perf_now_ns();
			if (perf_fill_recv(c) != 0)
				return 1;
			continue;
		}
		if (!got_end && perf_msg_ready(c->sock)) {
			if (perf_recv_msg(c->sock, "END ", &count) != 0)
				return 1;
			got_end = 1;
		}
		if (perf_now_ns() - last_progress > PERF_STALL_NS) {
			fprintf(stderr, "send_bw server: %lu receives, "
				"nothing for 10 s\n", (unsigned long)rcnt);
			return 1;
		}
	}
	bad = rcnt != count;
	if (bad)
		fprintf(stderr, "send_bw server: %lu receives for %lu sends\n",
			(unsigned long)rcnt, (unsigned long)count);
	bad |= check_pattern(rx_half(c), size, "send_bw server");
	if (perf_send_msg(c->sock, "VERI", (uint64_t)bad) != 0 || bad)
		return 1;
	m.ops = rcnt;		/* the first receive started the clock */
	meter_result(&m, size, &res);
	res.iters = rcnt;
	if (rcnt > 1) {
		/* rates over rcnt - 1 intervals */
		double secs = (double)(m.t_last - m.t_start) / 1e9;

		res.msg_rate = secs > 0 ? (double)(rcnt - 1) / secs : 0;
		res.bw_avg = res.msg_rate * size;
		if (res.bw_peak < res.bw_avg)
			res.bw_peak = res.bw_avg;
	}
	perf_print_bw_line(o, &res, stdout);
	return 0;
}

int
perf_run_bw(struct perf_ctx *c, uint32_t size)
{
	if (c->o->servername != NULL)
		return client_bw(c, size);
	if (c->o->verb == PERF_SEND)
		return server_send_bw(c, size);
	return perf_passive_server(c, size);
}
