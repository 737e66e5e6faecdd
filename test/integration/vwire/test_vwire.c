/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * drivers/vwire integration tests (EAL, no hugepages): a clean wire, each
 * fault on its own with its statistics and its reproducibility from the
 * seed, a full ring, two polling threads, and closing with frames in
 * flight.  Every frame carries its sequence number and a pattern derived
 * from it, and every delivered frame is compared byte for byte, so a lost,
 * extra, moved or damaged frame fails a test.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "droce_link.h"
#include "roce_wire.h"
#include "vwire.h"

#define BURST		32u
#define MAX_FRAME	(VWIRE_MTU_DEFAULT + VWIRE_FRAME_OVERHEAD)
#define ETHERTYPE_TEST	0x88b5		/* IEEE local experimental */
#define IDLE_US		100000		/* no frame for this long: wire empty */

/* ---- test frames ---------------------------------------------------------- */

static uint32_t
frame_len(uint32_t seq)
{
	return 60 + (seq * 7) % 1400;
}

/* Ethernet header, the sequence number big-endian, then a seq pattern. */
static uint32_t
frame_fill(uint8_t *buf, uint32_t seq, const struct droce_link *from,
	   const struct droce_link *to)
{
	uint32_t len = frame_len(seq);
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)buf;

	rte_ether_addr_copy(&to->mac, &eth->dst_addr);
	rte_ether_addr_copy(&from->mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(ETHERTYPE_TEST);
	buf[14] = (uint8_t)(seq >> 24);
	buf[15] = (uint8_t)(seq >> 16);
	buf[16] = (uint8_t)(seq >> 8);
	buf[17] = (uint8_t)seq;
	for (uint32_t i = 18; i < len; i++)
		buf[i] = (uint8_t)(seq * 131 + i);
	return len;
}

static struct rte_mbuf *
mbuf_from_bytes(struct rte_mempool *pool, const void *bytes, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *p;

	assert_non_null(m);
	p = rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(p);
	memcpy(p, bytes, len);
	return m;
}

static struct rte_mbuf *
frame_make(const struct droce_link *from, const struct droce_link *to,
	   uint32_t seq)
{
	uint8_t buf[MAX_FRAME];
	uint32_t len = frame_fill(buf, seq, from, to);

	return mbuf_from_bytes(from->pool, buf, len);
}

/* The sequence number of a frame that must be exactly as sent; frees it. */
static uint32_t
frame_check(struct rte_mbuf *m, const struct droce_link *from,
	    const struct droce_link *to)
{
	uint8_t got[MAX_FRAME], want[MAX_FRAME];
	const uint8_t *p;
	uint32_t seq, len;

	assert_true(m->pkt_len >= 18 && m->pkt_len <= MAX_FRAME);
	p = rte_pktmbuf_read(m, 0, m->pkt_len, got);
	assert_non_null(p);
	seq = (uint32_t)p[14] << 24 | (uint32_t)p[15] << 16 |
	      (uint32_t)p[16] << 8 | p[17];
	len = frame_fill(want, seq, from, to);
	assert_int_equal(m->pkt_len, len);
	assert_memory_equal(p, want, len);
	rte_pktmbuf_free(m);
	return seq;
}

/* ---- driving a wire --------------------------------------------------------- */

static uint64_t
now_us(void)
{
	return rte_get_timer_cycles() * 1000000 / rte_get_timer_hz();
}

/* Sequence numbers in arrival order. */
struct rx_log {
	uint32_t *seq;
	size_t n;
	size_t cap;
};

static void
rx_log_init(struct rx_log *log, size_t cap)
{
	log->seq = calloc(cap, sizeof(*log->seq));
	assert_non_null(log->seq);
	log->n = 0;
	log->cap = cap;
}

static void
rx_log_free(struct rx_log *log)
{
	free(log->seq);
	log->seq = NULL;
}

/* Receive what is there now, checking every byte; returns the count. */
static unsigned int
drain_once(struct droce_link *from, struct droce_link *to, struct rx_log *log)
{
	struct rte_mbuf *pkts[BURST];
	uint16_t nb = droce_link_rx(to, pkts, BURST);

	for (uint16_t i = 0; i < nb; i++) {
		uint32_t seq = frame_check(pkts[i], from, to);

		assert_true(log->n < log->cap);
		log->seq[log->n++] = seq;
	}
	return nb;
}

/*
 * Receive until nothing arrived for idle_us: longer than any delay or
 * reorder hold, so the wire is empty afterwards.
 */
static void
drain_until_idle(struct droce_link *from, struct droce_link *to,
		 struct rx_log *log, uint64_t idle_us)
{
	uint64_t last = now_us();

	while (now_us() - last < idle_us)
		if (drain_once(from, to, log) > 0)
			last = now_us();
}

/*
 * Send frames first..first+count-1 from one end in bursts, receiving on the
 * other end as we go (the ring is smaller than the test), then drain.
 */
static void
pump_idle(struct droce_link *from, struct droce_link *to, uint32_t first,
	  uint32_t count, struct rx_log *log, uint64_t idle_us)
{
	uint32_t seq = first, end = first + count;

	while (seq < end) {
		struct rte_mbuf *pkts[BURST];
		uint16_t n = (uint16_t)RTE_MIN(BURST, end - seq);
		uint16_t sent;

		for (uint16_t i = 0; i < n; i++)
			pkts[i] = frame_make(from, to, seq + i);
		sent = droce_link_tx(from, pkts, n);
		/* the caller keeps and frees what the link refused */
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
		seq += sent;
		drain_once(from, to, log);
	}
	drain_until_idle(from, to, log, idle_us);
}

static void
pump(struct droce_link *from, struct droce_link *to, uint32_t first,
     uint32_t count, struct rx_log *log)
{
	pump_idle(from, to, first, count, log, IDLE_US);
}

static void
assert_pool_full(const struct droce_link *end)
{
	assert_int_equal(rte_mempool_avail_count(end->pool), end->pool->size);
}

static void
pair_create(const struct vwire_config *cfg, struct droce_link **a,
	    struct droce_link **b)
{
	assert_int_equal(vwire_pair_create(cfg, a, b), 0);
	assert_non_null(*a);
	assert_non_null(*b);
}

static void
pair_close(struct droce_link *a, struct droce_link *b)
{
	assert_pool_full(a);
	droce_link_close(a);
	droce_link_close(b);
}

/* Delivered sequence numbers of count frames sent a->b under faults f. */
static void
run_faulty(const struct vwire_faults *f, uint32_t count, struct rx_log *log,
	   struct vwire_stats *st)
{
	struct vwire_config cfg = { .a_to_b = *f };
	struct droce_link *a, *b;

	pair_create(&cfg, &a, &b);
	rx_log_init(log, 3 * (size_t)count);
	/* the last held frames only come out when their hold expires */
	pump_idle(a, b, 0, count, log, IDLE_US + (f->reorder > 0.0 ?
		  f->reorder_hold_us : 0));
	vwire_get_stats(a, st);
	assert_int_equal(st->tx, count);
	assert_int_equal(st->delivered, log->n);
	pair_close(a, b);
}

static bool
logs_equal(const struct rx_log *x, const struct rx_log *y)
{
	return x->n == y->n &&
	       memcmp(x->seq, y->seq, x->n * sizeof(x->seq[0])) == 0;
}

/* ---- clean wire ------------------------------------------------------------- */

static void
test_clean_link_delivers_everything_in_order_both_ways(void **state)
{
	struct droce_link *a, *b;
	struct vwire_stats st;
	struct rx_log ab, ba;

	(void)state;
	pair_create(NULL, &a, &b);
	rx_log_init(&ab, 3000);
	rx_log_init(&ba, 3000);
	pump(a, b, 0, 3000, &ab);
	pump(b, a, 100000, 2000, &ba);
	assert_int_equal(ab.n, 3000);
	assert_int_equal(ba.n, 2000);
	for (uint32_t i = 0; i < 3000; i++)
		assert_int_equal(ab.seq[i], i);
	for (uint32_t i = 0; i < 2000; i++)
		assert_int_equal(ba.seq[i], 100000 + i);

	vwire_get_stats(a, &st);
	assert_int_equal(st.tx, 3000);
	assert_int_equal(st.delivered, 3000);
	assert_int_equal(st.dropped + st.duplicated + st.reordered +
			 st.corrupted + st.delayed + st.ring_full + st.oversize, 0);
	vwire_get_stats(b, &st);
	assert_int_equal(st.tx, 2000);
	assert_int_equal(st.delivered, 2000);
	rx_log_free(&ab);
	rx_log_free(&ba);
	pair_close(a, b);
}

static void
test_macs_mtu_names_and_defaults(void **state)
{
	static const struct rte_ether_addr mac1 = {
		.addr_bytes = { 0x02, 0, 0, 0, 0, 0x01 } };
	static const struct rte_ether_addr mac2 = {
		.addr_bytes = { 0x02, 0, 0, 0, 0, 0x02 } };
	struct vwire_config cfg = {
		.name = "left",
		.mtu = 1500,
		.pool_size = 255,
		.mac_a = { .addr_bytes = { 0x02, 0xaa, 0, 0, 0, 0x10 } },
	};
	struct droce_link *a, *b;

	(void)state;
	pair_create(NULL, &a, &b);
	assert_true(rte_is_same_ether_addr(&a->mac, &mac1));
	assert_true(rte_is_same_ether_addr(&b->mac, &mac2));
	assert_int_equal(a->mtu, VWIRE_MTU_DEFAULT);
	assert_int_equal(b->mtu, VWIRE_MTU_DEFAULT);
	assert_non_null(a->pool);
	assert_ptr_equal(a->pool, b->pool);
	assert_int_equal(a->pool->size, VWIRE_POOL_SIZE_DEFAULT);
	assert_true(rte_pktmbuf_data_room_size(a->pool) - RTE_PKTMBUF_HEADROOM >=
		    VWIRE_MTU_DEFAULT + VWIRE_FRAME_OVERHEAD);
	assert_string_not_equal(a->name, b->name);
	pair_close(a, b);

	pair_create(&cfg, &a, &b);
	assert_true(rte_is_same_ether_addr(&a->mac, &cfg.mac_a));
	assert_true(rte_is_same_ether_addr(&b->mac, &mac2));
	assert_int_equal(a->mtu, 1500);
	assert_int_equal(a->pool->size, 255);
	assert_string_equal(a->name, "left.a");
	assert_string_equal(b->name, "left.b");
	pair_close(a, b);
}

static void
test_bad_config_is_rejected_bad_flow(void **state)
{
	struct vwire_config cfg = { .mtu = 10 };
	struct vwire_faults f = { .drop = 1.5 };
	struct droce_link *a = NULL, *b = NULL;

	(void)state;
	assert_int_equal(vwire_pair_create(&cfg, &a, &b), -EINVAL);
	cfg.mtu = 0;
	cfg.b_to_a.corrupt = -0.1;
	assert_int_equal(vwire_pair_create(&cfg, &a, &b), -EINVAL);
	cfg.b_to_a.corrupt = 0;
	cfg.a_to_b.reorder = 0.5;		/* needs a window */
	assert_int_equal(vwire_pair_create(&cfg, &a, &b), -EINVAL);
	cfg.a_to_b.reorder_window = VWIRE_REORDER_WINDOW_MAX + 1;
	assert_int_equal(vwire_pair_create(&cfg, &a, &b), -EINVAL);
	assert_int_equal(vwire_pair_create(NULL, &a, NULL), -EINVAL);
	assert_null(a);

	pair_create(NULL, &a, &b);
	assert_int_equal(vwire_set_faults(a, &f), -EINVAL);
	f.drop = NAN;
	assert_int_equal(vwire_set_faults(a, &f), -EINVAL);
	f.drop = 0;
	assert_int_equal(vwire_set_faults(NULL, &f), -EINVAL);
	assert_int_equal(vwire_set_faults(a, NULL), -EINVAL);
	assert_int_equal(vwire_set_faults(a, &f), 0);
	pair_close(a, b);
}

static void
test_oversize_frame_is_dropped_bad_flow(void **state)
{
	static uint8_t big[1500 + VWIRE_FRAME_OVERHEAD + 1];
	struct vwire_config cfg = { .mtu = 1500 };
	struct droce_link *a, *b;
	struct rte_mbuf *pkts[2];
	struct vwire_stats st;

	(void)state;
	pair_create(&cfg, &a, &b);
	pkts[0] = mbuf_from_bytes(a->pool, big, sizeof(big));
	pkts[1] = mbuf_from_bytes(a->pool, big, sizeof(big) - 1);
	assert_int_equal(droce_link_tx(a, pkts, 2), 2);
	assert_int_equal(droce_link_rx(b, pkts, 2), 1);
	assert_int_equal(pkts[0]->pkt_len, sizeof(big) - 1);
	rte_pktmbuf_free(pkts[0]);
	vwire_get_stats(a, &st);
	assert_int_equal(st.oversize, 1);
	assert_int_equal(st.delivered, 1);
	pair_close(a, b);
}

/* ---- drop ------------------------------------------------------------------- */

static void
test_drop_rate_and_reproducibility(void **state)
{
	const uint32_t n = 10000;
	struct vwire_faults f = { .drop = 0.1, .seed = 0x5eed };
	struct vwire_stats st1, st2, st3;
	struct rx_log r1, r2, r3;

	(void)state;
	run_faulty(&f, n, &r1, &st1);
	/* binomial(10000, 0.1): sd = 30; +-5 sd never fails by chance */
	assert_in_range(st1.dropped, 1000 - 150, 1000 + 150);
	assert_int_equal(st1.delivered + st1.dropped, n);
	for (size_t i = 1; i < r1.n; i++)
		assert_true(r1.seq[i] > r1.seq[i - 1]);	/* in order, once */

	run_faulty(&f, n, &r2, &st2);
	assert_true(logs_equal(&r1, &r2));
	assert_int_equal(st1.dropped, st2.dropped);

	f.seed = 0x5eee;
	run_faulty(&f, n, &r3, &st3);
	assert_false(logs_equal(&r1, &r3));
	assert_in_range(st3.dropped, 1000 - 150, 1000 + 150);
	rx_log_free(&r1);
	rx_log_free(&r2);
	rx_log_free(&r3);
}

/* Frames the wire reported lost to the drop fault, by sequence number. */
static void
log_drop(void *arg, enum vwire_fault_kind kind, const struct rte_mbuf *m,
	 uint64_t bit)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	struct rx_log *log = arg;

	assert_int_equal(kind, VWIRE_FAULT_DROP);
	assert_int_equal(bit, 0);
	assert_true(log->n < log->cap);
	log->seq[log->n++] = (uint32_t)p[14] << 24 | (uint32_t)p[15] << 16 |
			     (uint32_t)p[16] << 8 | p[17];
}

/* Every frame sent was either delivered or reported dropped, never both. */
static void
test_drop_reports_each_lost_frame(void **state)
{
	const uint32_t n = 5000;
	struct rx_log dropped, got;
	struct vwire_faults f = { .drop = 0.1, .seed = 0x5eed,
				  .on_fault = log_drop, .on_fault_arg = &dropped };
	struct vwire_stats st;
	uint8_t *fate = calloc(n, 1);

	(void)state;
	assert_non_null(fate);
	rx_log_init(&dropped, n);
	run_faulty(&f, n, &got, &st);
	assert_int_equal(dropped.n, st.dropped);
	for (size_t i = 0; i < dropped.n; i++)
		fate[dropped.seq[i]]++;
	for (size_t i = 0; i < got.n; i++)
		fate[got.seq[i]]++;
	for (uint32_t i = 0; i < n; i++)
		assert_int_equal(fate[i], 1);
	free(fate);
	rx_log_free(&dropped);
	rx_log_free(&got);
}

static void
test_drop_all_and_restore_at_runtime(void **state)
{
	struct vwire_faults cut = { .drop = 1.0 }, clean = { .seed = 1 };
	struct droce_link *a, *b;
	struct vwire_stats st;
	struct rx_log log;

	(void)state;
	pair_create(NULL, &a, &b);
	rx_log_init(&log, 3000);
	pump(a, b, 0, 500, &log);
	assert_int_equal(log.n, 500);

	assert_int_equal(vwire_set_faults(a, &cut), 0);
	pump(a, b, 500, 1000, &log);
	assert_int_equal(log.n, 500);		/* peer "vanished" */
	pump(b, a, 0, 10, &log);		/* the other way is untouched */
	assert_int_equal(log.n, 510);

	assert_int_equal(vwire_set_faults(a, &clean), 0);
	pump(a, b, 1500, 500, &log);
	assert_int_equal(log.n, 1010);
	assert_int_equal(log.seq[510], 1500);
	assert_int_equal(log.seq[1009], 1999);

	vwire_get_stats(a, &st);
	assert_int_equal(st.tx, 2000);
	assert_int_equal(st.dropped, 1000);
	assert_int_equal(st.delivered, 1000);
	rx_log_free(&log);
	pair_close(a, b);
}

/* ---- duplicate ---------------------------------------------------------------- */

static void
test_duplicates_arrive_and_match_stats(void **state)
{
	const uint32_t n = 5000;
	struct vwire_faults f = { .duplicate = 0.2, .seed = 42 };
	struct vwire_stats st, st2;
	struct rx_log log, log2;
	uint32_t twice = 0, expect = 0;

	(void)state;
	run_faulty(&f, n, &log, &st);
	assert_int_equal(log.n, n + st.duplicated);
	assert_in_range(st.duplicated, 1000 - 150, 1000 + 150);
	/* without reordering a copy follows its original at once */
	for (size_t i = 0; i < log.n; i++) {
		assert_int_equal(log.seq[i], expect);
		if (i + 1 < log.n && log.seq[i + 1] == expect) {
			twice++;
			i++;
		}
		expect++;
	}
	assert_int_equal(expect, n);
	assert_int_equal(twice, st.duplicated);

	run_faulty(&f, n, &log2, &st2);
	assert_true(logs_equal(&log, &log2));
	rx_log_free(&log);
	rx_log_free(&log2);
}

/* ---- reorder ------------------------------------------------------------------ */

static void
assert_reordered_within(const struct rx_log *log, uint32_t n, uint32_t window,
			uint64_t *moved)
{
	uint8_t *seen = calloc(n, 1);

	assert_non_null(seen);
	assert_int_equal(log->n, n);
	*moved = 0;
	for (size_t i = 0; i < log->n; i++) {
		uint32_t s = log->seq[i];
		int64_t shift = (int64_t)i - (int64_t)s;

		assert_true(s < n);
		assert_false(seen[s]);		/* exactly once */
		seen[s] = 1;
		assert_in_range(shift < 0 ? -shift : shift, 0, window);
		if (shift != 0)
			(*moved)++;
	}
	free(seen);
}

static void
test_reorder_within_window(void **state)
{
	const uint32_t n = 5000, window = 8;
	/*
	 * A hold far longer than the gaps between frames: only frame counts
	 * release frames mid-run, so the order is the seed's.  The last held
	 * frames come out when the hold expires.
	 */
	struct vwire_faults f = { .reorder = 0.1, .reorder_window = window,
				  .reorder_hold_us = 200000 };
	struct vwire_stats st, st2;
	struct rx_log log, log2;
	uint64_t moved;

	(void)state;
	for (f.seed = 7; f.seed < 11; f.seed++) {
		run_faulty(&f, n, &log, &st);
		assert_reordered_within(&log, n, window, &moved);
		assert_true(moved > 0);
		/* binomial(5000, 0.1) minus the few a full window refused */
		assert_in_range(st.reordered, 300, 700);
		assert_int_equal(st.delivered, n);
		rx_log_free(&log);
	}
	f.seed = 7;
	run_faulty(&f, n, &log, &st);
	run_faulty(&f, n, &log2, &st2);
	assert_true(logs_equal(&log, &log2));
	assert_int_equal(st.reordered, st2.reordered);
	rx_log_free(&log);
	rx_log_free(&log2);
}

/*
 * Whether a frame became visible too early is checked against a time taken
 * before tx_burst and read after rx_burst returned it, so a test thread that
 * gets descheduled can make the test weaker but never make it fail wrongly.
 */
static uint64_t
elapsed_us_since(uint64_t t0)
{
	return now_us() - t0 + 1;	/* +1: both ends rounded down */
}

static void
test_held_frame_released_when_traffic_stops(void **state)
{
	const uint32_t hold_us = 20000;
	struct vwire_config cfg = {
		.a_to_b = { .reorder = 1.0, .reorder_window = 4,
			    .reorder_hold_us = hold_us },
	};
	struct droce_link *a, *b;
	struct rte_mbuf *m;
	struct vwire_stats st;
	uint64_t t0;

	(void)state;
	pair_create(&cfg, &a, &b);
	m = frame_make(a, b, 77);
	t0 = now_us();
	assert_int_equal(droce_link_tx(a, &m, 1), 1);
	/* no later frame comes to release it: only the hold time can */
	while (droce_link_rx(b, &m, 1) == 0)
		assert_true(now_us() - t0 < 5000000);
	assert_true(elapsed_us_since(t0) >= hold_us);
	assert_int_equal(frame_check(m, a, b), 77);
	vwire_get_stats(a, &st);
	assert_int_equal(st.reordered, 1);
	assert_int_equal(st.delivered, 1);
	pair_close(a, b);
}

/* ---- delay -------------------------------------------------------------------- */

static void
test_delay_hides_frames_until_due(void **state)
{
	const uint32_t delay_us = 20000;
	struct vwire_config cfg = { .a_to_b = { .delay_us = delay_us } };
	struct droce_link *a, *b;
	struct rte_mbuf *pkts[4];
	struct vwire_stats st;
	uint16_t got = 0;
	uint64_t t0;

	(void)state;
	pair_create(&cfg, &a, &b);
	for (uint32_t i = 0; i < 4; i++)
		pkts[i] = frame_make(a, b, i);
	t0 = now_us();
	assert_int_equal(droce_link_tx(a, pkts, 4), 4);
	while (got < 4) {
		uint16_t nb = droce_link_rx(b, pkts + got, (uint16_t)(4 - got));

		if (nb > 0)
			assert_true(elapsed_us_since(t0) >= delay_us);
		got = (uint16_t)(got + nb);
		assert_true(now_us() - t0 < 5000000);
	}
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(frame_check(pkts[i], a, b), i);

	/* the other direction has no delay */
	pkts[0] = frame_make(b, a, 9);
	assert_int_equal(droce_link_tx(b, pkts, 1), 1);
	assert_int_equal(droce_link_rx(a, pkts, 1), 1);
	assert_int_equal(frame_check(pkts[0], b, a), 9);

	vwire_get_stats(a, &st);
	assert_int_equal(st.delayed, 4);
	vwire_get_stats(b, &st);
	assert_int_equal(st.delayed, 0);
	pair_close(a, b);
}

/* ---- corrupt ------------------------------------------------------------------ */

static size_t
roce_frame_make(uint8_t *buf, size_t cap, uint32_t seq)
{
	static const uint8_t ip_a[4] = { 198, 18, 0, 1 }, ip_b[4] = { 198, 18, 0, 2 };
	uint8_t payload[512];
	struct roce_pkt p;

	memset(&p, 0, sizeof(p));
	memcpy(p.dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	memcpy(p.src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	p.ip_version = 4;
	roce_gid_from_ipv4(p.src_gid, ip_a);
	roce_gid_from_ipv4(p.dst_gid, ip_b);
	p.ip_ttl = 64;
	p.ip_df = 1;
	p.udp_sport = roce_udp_sport(0x11, 0x21);
	p.opcode = ROCE_OP_SEND_ONLY;
	p.pkey = 0xffff;
	p.dest_qpn = 0x21;
	p.psn = seq & 0xffffff;
	p.payload_len = 4 + seq % 400;
	for (uint32_t i = 0; i < p.payload_len; i++)
		payload[i] = (uint8_t)(seq * 17 + i);
	return roce_build(buf, cap, &p, payload);
}

/*
 * Bits the driver may flip that no RoCEv2 check covers: the UDP checksum
 * (sent as 0 and masked in the ICRC) and the BTH byte with FECN/BECN (masked
 * because switches set those bits).  Everything else in an IPv4 RoCE frame is
 * under the IPv4 header checksum or the ICRC.
 */
static bool
in_unchecked_field(size_t byte, const struct roce_pkt *p)
{
	return byte == (size_t)p->l4_off + 6 || byte == (size_t)p->l4_off + 7 ||
	       byte == (size_t)p->bth_off + 4;
}

/* The bits the wire said it flipped, in the order it flipped them. */
struct flip_log {
	uint64_t bit[3000];
	uint32_t n;
};

static void
log_flip(void *arg, enum vwire_fault_kind kind, const struct rte_mbuf *m,
	 uint64_t bit)
{
	struct flip_log *log = arg;

	assert_int_equal(kind, VWIRE_FAULT_CORRUPT);

	assert_true(bit < (uint64_t)m->pkt_len * 8);
	assert_true(log->n < RTE_DIM(log->bit));
	log->bit[log->n++] = bit;
}

static void
test_corruption_is_caught_by_icrc(void **state)
{
	const uint32_t n = 3000;
	static struct flip_log flips;
	struct vwire_config cfg = { .a_to_b = { .corrupt = 0.2, .seed = 99,
						 .on_fault = log_flip,
						 .on_fault_arg = &flips } };
	struct droce_link *a, *b;
	struct vwire_stats st;
	uint32_t sent = 0, recvd = 0, damaged = 0, caught = 0, unchecked = 0;
	uint64_t last;

	(void)state;
	flips.n = 0;
	pair_create(&cfg, &a, &b);
	last = now_us();
	while (recvd < n && now_us() - last < IDLE_US) {
		struct rte_mbuf *pkts[BURST];
		uint16_t nb;

		if (sent < n) {
			uint8_t buf[1024];
			size_t len = roce_frame_make(buf, sizeof(buf), sent);

			assert_int_not_equal(len, 0);
			pkts[0] = mbuf_from_bytes(a->pool, buf, (uint32_t)len);
			assert_int_equal(droce_link_tx(a, pkts, 1), 1);
			sent++;
		}
		nb = droce_link_rx(b, pkts, BURST);
		if (nb > 0)
			last = now_us();
		for (uint16_t i = 0; i < nb; i++, recvd++) {
			uint8_t want[1024], got[1024];
			size_t len = roce_frame_make(want, sizeof(want), recvd);
			struct roce_pkt p, ref;
			size_t diff_bits = 0, diff_byte = 0;
			bool ok;

			/* in order, nothing lost: frame i is what was sent i-th */
			assert_int_equal(pkts[i]->pkt_len, len);
			memcpy(got, rte_pktmbuf_mtod(pkts[i], void *), len);
			rte_pktmbuf_free(pkts[i]);
			uint8_t diff_mask = 0;

			for (size_t k = 0; k < len; k++) {
				if (got[k] != want[k]) {
					diff_byte = k;
					diff_mask = got[k] ^ want[k];
				}
				diff_bits += (size_t)__builtin_popcount(got[k] ^ want[k]);
			}
			ok = roce_parse_eth(got, len, &p) == ROCE_PARSE_OK &&
			     roce_icrc_verify(got, &p);
			if (diff_bits == 0) {
				assert_true(ok);
				continue;
			}
			/* the wire reported this very bit, in frame order */
			assert_true(damaged < flips.n);
			assert_int_equal(flips.bit[damaged] / 8, diff_byte);
			assert_int_equal(1u << flips.bit[damaged] % 8, diff_mask);
			damaged++;
			assert_int_equal(diff_bits, 1);
			assert_true(diff_byte >= RTE_ETHER_HDR_LEN);
			assert_int_equal(roce_parse_eth(want, len, &ref), ROCE_PARSE_OK);
			if (in_unchecked_field(diff_byte, &ref)) {
				unchecked++;
				assert_true(ok);
			} else {
				caught++;
				assert_false(ok);
			}
		}
	}
	assert_int_equal(recvd, n);
	vwire_get_stats(a, &st);
	assert_int_equal(st.corrupted, damaged);
	assert_int_equal(flips.n, damaged);
	assert_int_equal(caught + unchecked, damaged);
	assert_in_range(damaged, 600 - 120, 600 + 120);
	assert_true(caught > damaged * 9 / 10);
	print_message("corrupt: %u of %u frames damaged, %u caught by IP checksum/ICRC, "
		      "%u in unchecked fields (UDP checksum, FECN/BECN byte)\n",
		      damaged, n, caught, unchecked);
	pair_close(a, b);
}

/* A frame the sender still holds (refcnt 2) is copied, not flipped in place. */
static void
test_corruption_spares_shared_mbufs(void **state)
{
	struct vwire_config cfg = { .a_to_b = { .corrupt = 1.0 } };
	struct droce_link *a, *b;
	struct rte_mbuf *m, *got;
	uint8_t want[MAX_FRAME];
	uint32_t len;

	(void)state;
	pair_create(&cfg, &a, &b);
	m = frame_make(a, b, 5);
	len = frame_fill(want, 5, a, b);
	rte_mbuf_refcnt_update(m, 1);		/* kept for "retransmission" */
	assert_int_equal(droce_link_tx(a, &m, 1), 1);
	assert_int_equal(droce_link_rx(b, &got, 1), 1);
	assert_ptr_not_equal(got, m);
	assert_int_equal(rte_mbuf_refcnt_read(m), 1);
	assert_memory_equal(rte_pktmbuf_mtod(m, void *), want, len);
	assert_memory_not_equal(rte_pktmbuf_mtod(got, void *), want, len);
	rte_pktmbuf_free(got);
	rte_pktmbuf_free(m);
	pair_close(a, b);
}

/* ---- all faults at once ------------------------------------------------------- */

static void
test_combined_faults_reproducible(void **state)
{
	struct vwire_faults f = { .drop = 0.05, .duplicate = 0.05,
				  .reorder = 0.05, .reorder_window = 4,
				  .reorder_hold_us = 200000, .seed = 1234 };
	struct vwire_stats st1, st2;
	struct rx_log r1, r2;

	(void)state;
	run_faulty(&f, 4000, &r1, &st1);
	run_faulty(&f, 4000, &r2, &st2);
	assert_true(logs_equal(&r1, &r2));
	assert_int_equal(st1.delivered, 4000 - st1.dropped + st1.duplicated);
	assert_true(st1.dropped > 0 && st1.duplicated > 0 && st1.reordered > 0);
	rx_log_free(&r1);
	rx_log_free(&r2);
}

/* ---- ring full ---------------------------------------------------------------- */

static void
test_ring_full_returns_fewer(void **state)
{
	struct vwire_config cfg = { .ring_size = 64, .pool_size = 511 };
	struct droce_link *a, *b;
	struct rte_mbuf *pkts[100];
	struct vwire_stats st;
	struct rx_log log;
	uint16_t sent;

	(void)state;
	pair_create(&cfg, &a, &b);
	for (uint32_t i = 0; i < 100; i++)
		pkts[i] = frame_make(a, b, i);
	sent = droce_link_tx(a, pkts, 100);
	assert_int_equal(sent, 64);
	assert_int_equal(droce_link_tx(a, pkts + sent, 36), 0);
	rte_pktmbuf_free_bulk(pkts + sent, 100 - sent);
	vwire_get_stats(a, &st);
	assert_int_equal(st.tx, 64);
	assert_int_equal(st.ring_full, 36 + 36);

	rx_log_init(&log, 200);
	drain_until_idle(a, b, &log, IDLE_US);
	assert_int_equal(log.n, 64);
	for (uint32_t i = 0; i < 64; i++)
		assert_int_equal(log.seq[i], i);
	/* room again */
	pump(a, b, 64, 36, &log);
	assert_int_equal(log.n, 100);
	rx_log_free(&log);
	pair_close(a, b);		/* checks that no mbuf leaked */
}

/*
 * A scripted run on a 64-frame ring: 70 frames, #10 and #63 oversize, sent
 * as bursts of 50 and 20 before anything is received, then drained.
 */
static void
run_scripted(const struct vwire_faults *f, uint16_t sent[2], struct rx_log *log,
	     struct vwire_stats *st)
{
	static uint8_t big[1500 + VWIRE_FRAME_OVERHEAD + 1];
	struct vwire_config cfg = { .mtu = 1500, .ring_size = 64, .a_to_b = *f };
	struct droce_link *a, *b;
	struct rte_mbuf *pkts[70];

	pair_create(&cfg, &a, &b);
	for (uint32_t i = 0; i < 70; i++)
		pkts[i] = i == 10 || i == 63 ? mbuf_from_bytes(a->pool, big, sizeof(big)) :
					       frame_make(a, b, i);
	sent[0] = droce_link_tx(a, pkts, 50);
	sent[1] = droce_link_tx(a, pkts + sent[0], (uint16_t)(70 - sent[0]));
	rte_pktmbuf_free_bulk(pkts + sent[0] + sent[1], 70u - sent[0] - sent[1]);
	rx_log_init(log, 100);
	drain_until_idle(a, b, log, IDLE_US);
	vwire_get_stats(a, st);
	pair_close(a, b);
}

/*
 * With no fault in effect frames take the burst path (one ring enqueue per
 * chunk); a drop probability that never fires forces the per-frame path.
 * Both must accept, drop and refuse exactly the same frames.
 */
static void
test_plain_path_matches_per_frame_path(void **state)
{
	struct vwire_faults none = { 0 }, never = { .drop = 1e-300, .seed = 7 };
	struct vwire_stats st_plain, st_slow;
	struct rx_log log_plain, log_slow;
	uint16_t sent_plain[2], sent_slow[2];

	(void)state;
	run_scripted(&none, sent_plain, &log_plain, &st_plain);
	run_scripted(&never, sent_slow, &log_slow, &st_slow);
	/* 50 taken (#10 dropped); then 13 fit, #63 dropped, 2 fit, 4 refused */
	assert_int_equal(sent_plain[0], 50);
	assert_int_equal(sent_plain[1], 16);
	assert_int_equal(st_plain.tx, 66);
	assert_int_equal(st_plain.oversize, 2);
	assert_int_equal(st_plain.ring_full, 4);
	assert_int_equal(st_plain.dropped, 0);
	assert_int_equal(log_plain.n, 64);
	for (uint32_t i = 0, want = 0; i < log_plain.n; i++, want++) {
		if (want == 10 || want == 63)
			want++;
		assert_int_equal(log_plain.seq[i], want);
	}
	assert_memory_equal(sent_plain, sent_slow, sizeof(sent_plain));
	assert_int_equal(st_slow.tx, st_plain.tx);
	assert_int_equal(st_slow.oversize, st_plain.oversize);
	assert_int_equal(st_slow.ring_full, st_plain.ring_full);
	assert_int_equal(st_slow.dropped, 0);
	assert_true(logs_equal(&log_plain, &log_slow));
	rx_log_free(&log_plain);
	rx_log_free(&log_slow);
}

/* ---- two threads -------------------------------------------------------------- */

#define THREAD_FRAMES 20000

struct peer_thread {
	struct droce_link *self, *peer;
	uint32_t to_send;
	uint32_t received;
	uint32_t errors;		/* cmocka asserts only on the main thread */
};

static bool
frame_matches(struct rte_mbuf *m, const struct droce_link *from,
	      const struct droce_link *to, uint32_t seq)
{
	uint8_t want[MAX_FRAME];
	uint32_t len = frame_fill(want, seq, from, to);
	bool ok = m->pkt_len == len &&
		  memcmp(rte_pktmbuf_mtod(m, void *), want, len) == 0;

	rte_pktmbuf_free(m);
	return ok;
}

/* frame_make() without cmocka asserts, for the peer thread. */
static struct rte_mbuf *
frame_make_quiet(const struct droce_link *from, const struct droce_link *to,
		 uint32_t seq)
{
	uint8_t buf[MAX_FRAME];
	uint32_t len = frame_fill(buf, seq, from, to);
	struct rte_mbuf *m = rte_pktmbuf_alloc(from->pool);
	char *p;

	if (m == NULL)
		return NULL;
	p = rte_pktmbuf_append(m, (uint16_t)len);
	if (p == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(p, buf, len);
	return m;
}

/* End b on its own thread: receive a's frames and send its own. */
static void *
peer_main(void *arg)
{
	struct peer_thread *t = arg;
	uint32_t sent = 0;
	uint64_t t0 = now_us();

	while ((t->received < THREAD_FRAMES || sent < t->to_send) &&
	       now_us() - t0 < 60000000) {
		struct rte_mbuf *pkts[BURST];
		uint16_t nb = droce_link_rx(t->self, pkts, BURST);

		for (uint16_t i = 0; i < nb; i++)
			if (!frame_matches(pkts[i], t->peer, t->self, t->received++))
				t->errors++;
		if (sent < t->to_send) {
			struct rte_mbuf *m = frame_make_quiet(t->self, t->peer, sent);

			if (m != NULL && droce_link_tx(t->self, &m, 1) == 1)
				sent++;
			else
				rte_pktmbuf_free(m);
		}
	}
	if (t->received != THREAD_FRAMES || sent != t->to_send)
		t->errors++;
	return NULL;
}

static void
test_two_threads_one_per_end(void **state)
{
	struct vwire_config cfg = { .ring_size = 256 };
	struct peer_thread t = { .to_send = 5000 };
	struct droce_link *a, *b;
	struct vwire_stats st;
	uint32_t sent = 0, received = 0, bad = 0;
	uint64_t t0 = now_us();
	pthread_t tid;

	(void)state;
	pair_create(&cfg, &a, &b);
	t.self = b;
	t.peer = a;
	assert_int_equal(pthread_create(&tid, NULL, peer_main, &t), 0);
	while ((sent < THREAD_FRAMES || received < t.to_send) &&
	       now_us() - t0 < 60000000) {
		struct rte_mbuf *pkts[BURST];
		uint16_t n = (uint16_t)RTE_MIN(BURST, THREAD_FRAMES - sent);
		uint16_t nb, done;

		for (uint16_t i = 0; i < n; i++)
			pkts[i] = frame_make(a, b, sent + i);
		/* frame_make() allocates from the shared pool; plenty here */
		done = droce_link_tx(a, pkts, n);
		rte_pktmbuf_free_bulk(pkts + done, n - done);
		sent += done;
		nb = droce_link_rx(a, pkts, BURST);
		/* no cmocka assert (longjmp) while the peer thread runs */
		for (uint16_t i = 0; i < nb; i++)
			if (!frame_matches(pkts[i], b, a, received++))
				bad++;
	}
	assert_int_equal(pthread_join(tid, NULL), 0);
	assert_int_equal(bad, 0);
	assert_int_equal(t.errors, 0);
	assert_int_equal(t.received, THREAD_FRAMES);
	assert_int_equal(received, t.to_send);
	vwire_get_stats(a, &st);
	assert_int_equal(st.delivered, THREAD_FRAMES);
	vwire_get_stats(b, &st);
	assert_int_equal(st.delivered, t.to_send);
	pair_close(a, b);
}

/* ---- close -------------------------------------------------------------------- */

static void
test_close_with_frames_in_flight_frees_them(void **state)
{
	const uint32_t pool_size = 1023;
	struct vwire_config cfg = {
		.ring_size = 128,
		.a_to_b = { .reorder = 1.0, .reorder_window = VWIRE_REORDER_WINDOW_MAX,
			    .reorder_hold_us = 10000000, .seed = 3 },
		.b_to_a = { .delay_us = 10000000, .duplicate = 0.5, .seed = 4 },
	};
	struct rte_mempool *pool;
	struct droce_link *a, *b;
	struct rte_mbuf *pkts[BURST];
	struct vwire_stats st;

	(void)state;
	pool = rte_pktmbuf_pool_create("test_close", pool_size, 0, 0,
			RTE_PKTMBUF_HEADROOM + MAX_FRAME, SOCKET_ID_ANY);
	assert_non_null(pool);
	cfg.pool = pool;
	pair_create(&cfg, &a, &b);
	assert_ptr_equal(a->pool, pool);
	for (uint32_t round = 0; round < 4; round++) {
		for (uint32_t i = 0; i < BURST; i++)
			pkts[i] = frame_make(a, b, round * BURST + i);
		assert_int_equal(droce_link_tx(a, pkts, BURST), BURST);
	}
	for (uint32_t round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < BURST; i++)
			pkts[i] = frame_make(b, a, round * BURST + i);
		assert_int_equal(droce_link_tx(b, pkts, BURST), BURST);
	}
	/*
	 * b holds the first 64 frames (the most a window allows), delivers
	 * the 65th, and keeps 31 taken off the ring and 32 still on it.
	 */
	assert_int_equal(droce_link_rx(b, pkts, 1), 1);
	assert_int_equal(frame_check(pkts[0], a, b), VWIRE_REORDER_WINDOW_MAX);
	assert_int_equal(droce_link_rx(a, pkts, BURST), 0);	/* delayed */
	vwire_get_stats(a, &st);
	assert_int_equal(st.reordered, VWIRE_REORDER_WINDOW_MAX);
	vwire_get_stats(b, &st);
	assert_true(st.duplicated > 0);
	assert_int_equal(rte_mempool_avail_count(pool),
			 pool_size - (4 * BURST - 1) - (2 * BURST + st.duplicated));

	droce_link_close(b);
	/* b is gone: a's frames vanish */
	pkts[0] = frame_make(a, b, 1000);
	assert_int_equal(droce_link_tx(a, pkts, 1), 1);
	vwire_get_stats(a, &st);
	assert_int_equal(st.dropped, 1);
	droce_link_close(a);

	assert_int_equal(rte_mempool_avail_count(pool), pool_size);
	rte_mempool_free(pool);
}

/* ---- main --------------------------------------------------------------------- */

int
main(int argc, char **argv)
{
	/*
	 * No hugepages: the driver needs none.  DPDK 22.11 treats --no-huge
	 * as legacy memory, which it refuses together with --in-memory, so
	 * --no-shconf keeps the process from leaving files under /var/run.
	 */
	char *eal_args[] = {
		argv[0], "--no-pci", "--no-huge", "-m", "512", "--no-shconf",
		"-l", "0", "--log-level=lib.eal:error",
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean_link_delivers_everything_in_order_both_ways),
		cmocka_unit_test(test_macs_mtu_names_and_defaults),
		cmocka_unit_test(test_bad_config_is_rejected_bad_flow),
		cmocka_unit_test(test_oversize_frame_is_dropped_bad_flow),
		cmocka_unit_test(test_drop_rate_and_reproducibility),
		cmocka_unit_test(test_drop_reports_each_lost_frame),
		cmocka_unit_test(test_drop_all_and_restore_at_runtime),
		cmocka_unit_test(test_duplicates_arrive_and_match_stats),
		cmocka_unit_test(test_reorder_within_window),
		cmocka_unit_test(test_held_frame_released_when_traffic_stops),
		cmocka_unit_test(test_delay_hides_frames_until_due),
		cmocka_unit_test(test_corruption_is_caught_by_icrc),
		cmocka_unit_test(test_corruption_spares_shared_mbufs),
		cmocka_unit_test(test_combined_faults_reproducible),
		cmocka_unit_test(test_ring_full_returns_fewer),
		cmocka_unit_test(test_plain_path_matches_per_frame_path),
		cmocka_unit_test(test_two_threads_one_per_end),
		cmocka_unit_test(test_close_with_frames_in_flight_frees_them),
	};
	int ret;

	(void)argc;
	printf("vwire tests: EAL without hugepages (--no-huge -m 512 --no-shconf -l 0)\n");
	fflush(stdout);
	if (rte_eal_init((int)RTE_DIM(eal_args), eal_args) < 0) {
		fprintf(stderr, "rte_eal_init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	ret = cmocka_run_group_tests_name("vwire", tests, NULL, NULL);
	rte_eal_cleanup();
	return ret;
}
