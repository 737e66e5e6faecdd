/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * perf_bw.c - the bandwidth tests, as perftest runs them: the client keeps
 * tx_depth operations outstanding, signalling every cq_mod-th (wr_id of a
 * signalled operation = how many operations it completes), until -n
 * operations or -D seconds; the server of write/read/atomic does nothing
 * during the run (it waits in the side channel); the send_bw server keeps
 * rx_depth receives posted and counts them.
 *
 * Each size is verified as far as the peer allows, so a run cannot report
 * success for nothing.  With a droce-perf peer: write_bw and send_bw: the
 * server checks the bytes against the size's pattern; read_bw: the client
 * checks the bytes it read; atomic_bw: the server's word equals the number
 * of operations (FETCH_AND_ADD adds 1; CMP_AND_SWAP i -> i + 1, in order,
 * as RC executes them); send_bw also compares the receive count with the
 * sends.  With perftest as the peer its buffer holds its rand() fill and
 * it checks nothing, so droce-perf checks what it can see: the bytes a
 * read_bw client read, a write_bw server was written and a send_bw server
 * received must equal perftest's buffer (perf_peerdata.c), and a send_bw
 * server counts -n receives of -s bytes each; an atomic_bw server's region
 * sums to the reported operation count (FETCH_AND_ADD) or stays zero
 * (perftest's CMP_AND_SWAP compares and swaps 0); atomic clients check the
 * returned values run consecutively (FETCH_AND_ADD) or never change
 * (CMP_AND_SWAP on perftest's random words).  What perftest is sent
 * (write_bw, send_bw clients) or reads (read servers) nobody can check:
 * droce-perf says "no data check" there and only there.
 */
#include <string.h>

#include "perf.h"
#include "perf_peerdata.h"

static void
fill_pattern(const struct perf_ctx *c, uint8_t *p, uint32_t size)
{
	uint32_t i;

	for (i = 0; i < size; i++)
		p[i] = perf_pattern(c->seed, i, size);
}

static int
check_pattern(const struct perf_ctx *c, const uint8_t *p, uint32_t size,
	      const char *what)
{
	uint32_t i;

	for (i = 0; i < size; i++) {
		if (p[i] != perf_pattern(c->seed, i, size)) {
			fprintf(stderr, "%s: data mismatch at byte %u of %u: "
				"0x%02x, expected 0x%02x (pattern seed "
				"0x%08x)\n", what, i, size, p[i],
				perf_pattern(c->seed, i, size), c->seed);
			return 1;
		}
	}
	return 0;
}

/* "data check passed: all N bytes <what> (pattern seed S)" */
static void
pattern_passed(const struct perf_ctx *c, uint32_t size, const char *what)
{
	char msg[160];

	snprintf(msg, sizeof(msg), "all %u bytes %s (pattern seed 0x%08x)",
		 size, what, c->seed);
	perf_check_passed(msg);
}

/* On stderr: stdout keeps perftest's format for the tools that parse it. */
void
perf_check_passed(const char *what)
{
	fprintf(stderr, "droce-perf: data check passed: %s\n", what);
}

void
perf_no_check(const char *why)
{
	fprintf(stderr, "droce-perf: no data check: %s\n", why);
}

#define check_passed(c, what) ((void)(c), perf_check_passed(what))

int
perf_check_perftest_bytes(struct perf_ctx *c, const uint8_t *p, uint32_t len,
			  const char *what)
{
	char found[256];
	int rc = perf_perftest_bytes(p, len, c->buf_size, what, found,
				     sizeof(found));

	if (rc == 1)
		return 1;
	if (rc == 2)
		perf_no_check(found);
	else
		perf_check_passed(found);
	return 0;
}

int
perf_check_read(struct perf_ctx *c, uint32_t size)
{
	if (c->peer_droce) {
		if (check_pattern(c, perf_rx_half(c), size, "read client"))
			return 1;
		pattern_passed(c, size, "read are the server's pattern");
		return 0;
	}
	return perf_check_perftest_bytes(c, perf_rx_half(c), size,
					 "read client");
}

static uint64_t
slot(struct perf_ctx *c, uint64_t i)
{
	uint64_t v;

	memcpy(&v, perf_rx_half(c) + 8 * (i % (perf_half_size(c) / 8)), 8);
	return v;
}

int
perf_check_atomic(struct perf_ctx *c, uint64_t n)
{
	uint64_t slots = perf_half_size(c) / 8, i;
	uint64_t first = n > slots ? n - slots : 0;
	int faa = c->o->atomic == PERF_FETCH_AND_ADD;

	for (i = first; i < n; i++) {
		uint64_t v = slot(c, i), want;

		if (faa)
			want = i == first ? v : slot(c, i - 1) + 1;
		else
			want = c->peer_droce ? i : slot(c, first);
		if (v != want) {
			fprintf(stderr, "atomic client: operation %lu returned "
				"%#lx, expected %#lx\n", (unsigned long)i,
				(unsigned long)v, (unsigned long)want);
			return 1;
		}
	}
	check_passed(c, faa ? "FETCH_AND_ADD returned consecutive values" :
		     c->peer_droce ? "each CMP_AND_SWAP found its predecessor" :
		     "CMP_AND_SWAP returned the unchanged word");
	return 0;
}

int
perf_fill_recv(struct perf_ctx *c)
{
	while (c->rx_posted < c->o->rx_depth) {
		int rc = perf_post_recv(c, 1, (uint32_t)perf_half_size(c));

		if (rc != 0) {
			fprintf(stderr, "Couldn't post receive: %s\n",
				strerror(rc));
			return 1;
		}
		c->rx_posted++;
	}
	return 0;
}

void
perf_report_from_result(const struct perf_opts *o,
			const struct perf_bw_result *r, struct perf_report *rep)
{
	double unit = o->report_gbits ? 125000000.0 : 1048576.0;

	rep->size = r->size;
	rep->iters = r->iters;
	rep->bw_peak = r->bw_peak / unit;
	rep->bw_avg = r->bw_avg / unit;
	rep->msg_rate = r->msg_rate / 1e6;
}

void
perf_result_from_report(const struct perf_opts *o,
			const struct perf_report *rep, struct perf_bw_result *r)
{
	double unit = o->report_gbits ? 125000000.0 : 1048576.0;

	r->size = rep->size;
	r->iters = rep->iters;
	r->bw_peak = rep->bw_peak * unit;
	r->bw_avg = rep->bw_avg * unit;
	r->msg_rate = rep->msg_rate * 1e6;
}

int
perf_client_end(struct perf_ctx *c, uint64_t count,
		const struct perf_report *rep)
{
	uint8_t raw[PERF_REPORT_FIELDS][8];
	uint64_t verdict = 1;

	perf_report_encode(rep, raw);
	if (perf_send_msg(&c->chan, "END ", count) != 0 ||
	    perf_chan_write(&c->chan, raw, sizeof(raw)) != 0 ||
	    perf_recv_msg(&c->chan, "VERI", &verdict) != 0) {
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

/* The server's buffer before each size: what its checks compare with. */
void
perf_server_prepare(struct perf_ctx *c, uint32_t size)
{
	switch (c->o->verb) {
	case PERF_READ:
		fill_pattern(c, perf_rx_half(c), size);
		break;
	default:
		/* perftest's clients cycle through the whole region */
		memset(perf_rx_half(c), 0, perf_half_size(c));
		break;
	}
}

void
perf_prepare(struct perf_ctx *c, uint32_t size)
{
	const struct perf_opts *o = c->o;

	if (!c->client)
		perf_server_prepare(c, size);
	else
		memset(perf_rx_half(c), 0, perf_half_size(c));
	if (o->tst == PERF_LAT)
		memset(perf_tx_half(c), 0, size);
	/* ping-pong: the peer's zeros must overwrite these (perf_lat.c) */
	if (o->tst == PERF_LAT &&
	    (o->verb == PERF_WRITE || o->verb == PERF_SEND) && size > 1)
		memset(perf_rx_half(c), PERF_UNWRITTEN, size - 1);
}

static int
check_atomic_region(struct perf_ctx *c, uint64_t count)
{
	uint64_t sum = 0, v, want;
	size_t i;

	for (i = 0; i < perf_half_size(c) / 8; i++) {
		memcpy(&v, perf_rx_half(c) + 8 * i, 8);
		sum += v;
	}
	/* perftest's CMP_AND_SWAP compares with 0 and swaps in 0 */
	want = c->o->atomic == PERF_CMP_AND_SWAP && !c->peer_droce ? 0 : count;
	if (sum != want) {
		fprintf(stderr, "atomic server: the words sum to %lu after %lu "
			"operations, expected %lu\n", (unsigned long)sum,
			(unsigned long)count, (unsigned long)want);
		return 1;
	}
	check_passed(c, "the atomic words hold the operation count");
	return 0;
}

int
perf_server_verify(struct perf_ctx *c, uint32_t size, uint64_t count)
{
	switch (c->o->verb) {
	case PERF_WRITE:
		if (!c->peer_droce)
			return perf_check_perftest_bytes(c, perf_rx_half(c),
							 size, "write server");
		if (check_pattern(c, perf_rx_half(c), size, "write server"))
			return 1;
		pattern_passed(c, size, "written are the client's pattern");
		return 0;
	case PERF_ATOMIC:
		return check_atomic_region(c, count);
	default:
		if (c->peer_droce)
			perf_no_check("the client checks what it read");
		else
			perf_no_check("perftest's client reads our bytes and "
				      "checks nothing");
		return 0;
	}
}

int
perf_server_end(struct perf_ctx *c, uint32_t size, int print_row, int verify)
{
	uint8_t raw[PERF_REPORT_FIELDS][8];
	struct perf_bw_result res;
	int bad;

	if (perf_recv_msg(&c->chan, "END ", &c->count) != 0 ||
	    perf_chan_read(&c->chan, raw, sizeof(raw)) != 0) {
		fprintf(stderr, "lost the client (side channel)\n");
		return 1;
	}
	perf_report_decode(raw, &c->report);
	bad = verify ? perf_server_verify(c, size, c->count) : 0;
	if (perf_send_msg(&c->chan, "VERI", (uint64_t)bad) != 0)
		return 1;
	if (!bad && print_row) {
		memset(&res, 0, sizeof(res));
		perf_result_from_report(c->o, &c->report, &res);
		perf_print_bw_line(c->o, &res, stdout);
	}
	return bad;
}

int
perf_passive_server(struct perf_ctx *c, uint32_t size)
{
	/* perftest's client: the post-run handshake waits for it */
	if (!c->peer_droce)
		return 0;
	return perf_server_end(c, size, c->o->tst == PERF_BW, 1);
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
		fill_pattern(c, perf_tx_half(c), size);
	memset(perf_rx_half(c), 0, perf_half_size(c));
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
	if (o->verb == PERF_READ && perf_check_read(c, size) != 0)
		return 1;
	if (o->verb == PERF_ATOMIC && perf_check_atomic(c, posted) != 0)
		return 1;
	if (!c->peer_droce && (o->verb == PERF_WRITE || o->verb == PERF_SEND))
		perf_no_check("perftest's server does not look at what we "
			      "send");
	meter_result(&m, size, &res);
	perf_report_from_result(o, &res, &c->report);
	c->count = posted;
	if (c->peer_droce && perf_client_end(c, posted, &c->report) != 0)
		return 1;
	perf_print_bw_line(o, &res, stdout);
	return 0;
}

/*
 * The send_bw server: receives until -n arrived; in -D mode until the
 * client is done (its next side-channel message is readable) and the
 * receive queue has been quiet for a moment.
 */
static int
recv_loop(struct perf_ctx *c, uint32_t size, struct bw_meter *m,
	  uint64_t *rcnt)
{
	const struct perf_opts *o = c->o;
	uint64_t last_progress = perf_now_ns();
	struct droce_wc wc[16];
	int i, ne;

	for (;;) {
		if (o->duration == 0 && *rcnt >= o->iters)
			return 0;
		ne = perf_poll(c, c->rcq, 16, wc);
		if (ne < 0)
			return 1;
		if (ne > 0) {
			for (i = 0; i < ne; i++) {
				if (wc[i].byte_len != size) {
					fprintf(stderr, "send_bw server: a "
						"message of %u bytes, expected "
						"%u\n", wc[i].byte_len, size);
					return 1;
				}
			}
			if (*rcnt == 0)
				m->t_start = m->t_last = perf_now_ns();
			else
				meter_add(m, (uint64_t)ne);
			*rcnt += (uint64_t)ne;
			c->rx_posted -= (uint32_t)ne;
			last_progress = perf_now_ns();
			if (perf_fill_recv(c) != 0)
				return 1;
			continue;
		}
		if (o->duration != 0 && perf_msg_ready(&c->chan) &&
		    perf_now_ns() - last_progress > 100000000u)
			return 0;
		if (perf_now_ns() - last_progress > PERF_STALL_NS) {
			fprintf(stderr, "send_bw server: %lu receives, "
				"nothing for 10 s\n", (unsigned long)*rcnt);
			return 1;
		}
	}
}

static int
server_send_bw(struct perf_ctx *c, uint32_t size)
{
	const struct perf_opts *o = c->o;
	uint64_t rcnt = 0, t_run;
	struct perf_bw_result res;
	struct bw_meter m;
	int bad = 0;

	if (perf_fill_recv(c) != 0)
		return 1;
	memset(&m, 0, sizeof(m));
	m.t_start = m.t_last = t_run = perf_now_ns();
	if (recv_loop(c, size, &m, &rcnt) != 0)
		return 1;
	if (c->peer_droce) {
		uint8_t raw[PERF_REPORT_FIELDS][8];

		if (perf_recv_msg(&c->chan, "END ", &c->count) != 0 ||
		    perf_chan_read(&c->chan, raw, sizeof(raw)) != 0)
			return 1;
		bad = rcnt != c->count;
		if (bad)
			fprintf(stderr, "send_bw server: %lu receives for %lu "
				"sends\n", (unsigned long)rcnt,
				(unsigned long)c->count);
		bad |= check_pattern(c, perf_rx_half(c), size,
				     "send_bw server");
		if (perf_send_msg(&c->chan, "VERI", (uint64_t)bad) != 0 || bad)
			return 1;
		pattern_passed(c, size, "of the last send are the client's "
			       "pattern; every send arrived");
	} else if (perf_check_perftest_bytes(c, perf_rx_half(c), size,
					     "send_bw server")) {
		return 1;
	}
	m.ops = rcnt;		/* the first receive started the clock */
	meter_result(&m, size, &res);
	res.iters = rcnt;
	if (rcnt > 1 && m.t_last > m.t_start) {
		/* rates over rcnt - 1 intervals */
		double secs = (double)(m.t_last - m.t_start) / 1e9;

		res.msg_rate = (double)(rcnt - 1) / secs;
	} else if (m.t_last > t_run) {
		/* everything came in one poll: from the start of the run */
		res.msg_rate = (double)rcnt * 1e9 / (double)(m.t_last - t_run);
	}
	res.bw_avg = res.msg_rate * size;
	if (res.bw_peak < res.bw_avg)
		res.bw_peak = res.bw_avg;
	perf_print_bw_line(o, &res, stdout);
	return 0;
}

int
perf_run_bw(struct perf_ctx *c, uint32_t size)
{
	if (c->client)
		return client_bw(c, size);
	if (c->o->verb == PERF_SEND)
		return server_send_bw(c, size);
	return perf_passive_server(c, size);
}
