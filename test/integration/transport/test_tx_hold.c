/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Nothing droce sends is lost because a port refused it for the moment,
 * and no time spent waiting for a neighbour is charged as a timeout.  Two
 * droce contexts with host stacks (they resolve each other by ARP) over a
 * virtual wire whose ends refuse their first tx_burst calls, as
 * net_memif's server does until its client's first receive
 * (vwire_faults.refuse_tx_calls):
 *   - first frames: both ends refuse their first 3 calls; the ARP request
 *     and reply of each side are kept and sent when the port takes them
 *     (tx_held = the frames the wire refused, tx_fail 0, one request and
 *     one reply each), and the first WRITE completes with no timeout and
 *     no retransmission;
 *   - timer at release: a's WRITE waits for b's MAC past a's retransmit
 *     timeout (not counted: the peer is unresolved) and is released later;
 *     its timer restarts from the release, so no timeout is counted in
 *     the 0.8 timeout periods after it (the timer armed at the unresolved
 *     expiry was due within them);
 *   - release beyond the queue: 2,048 held frames released at once over a
 *     64-frame wire (twice the transmit queue): what the queue has no room
 *     for stays with lib/net (tx_held) and follows in order: send_err 0,
 *     no retransmission, every byte written.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net_host.h"
#include "tp_fixture.h"
#include "transport.h"
#include "verbs_private.h"
#include "verbs_engine.h"
#include "vwire.h"

#define BUF (2u << 20)
#define REFUSE 3
/* 4.096 us x 2^16 = 268 ms: the spins below stay clear of it by 54 ms */
#define TIMEOUT_LONG 16
#define PERIOD_S (4.096e-6 * (1u << TIMEOUT_LONG))

static struct net_host *
host(struct fx_end *e)
{
	return tp_dev_host(verbs_tp(e->ctx));
}

static uint64_t
net_cnt(struct fx_end *e, const char *name)
{
	return net_host_counter(host(e), name);
}

/* Only e's engine runs (its peer is not polled) for seconds. */
static void
spin_one(struct fx_end *e, double seconds)
{
	double end = fx_now() + seconds;

	while (fx_now() < end)
		droce_progress(e->ctx);
}

static void
neigh_of(struct fx_end *e, struct fx_end *peer, struct net_neigh_info *info)
{
	net_host_neigh_info(host(e), peer->gid, info);
}

static void
post_write(struct fx *f, struct droce_qp *qp, size_t off, uint32_t len)
{
	assert_int_equal(fx_post(qp, DROCE_WR_RDMA_WRITE, off, f->a.buf + off, len,
				 f->a.mr->lkey, (uintptr_t)(f->b.buf + off),
				 f->b.mr->rkey, DROCE_SEND_SIGNALED), 0);
}

static void
expect_done(struct fx *f, int n)
{
	struct droce_wc wc[4];

	assert_int_equal(fx_poll(f, f->a.cq, wc, n, 10), n);
	for (int i = 0; i < n; i++)
		assert_int_equal(wc[i].status, DROCE_WC_SUCCESS);
}

/* What one end's link refused: all of it kept (tx_held), none lost. */
static void
expect_refused_kept(struct fx_end *e)
{
	struct vwire_stats st;

	vwire_get_stats(e->link, &st);
	assert_int_equal(net_cnt(e, "tx_fail"), 0);
	assert_int_equal(st.refused_calls, REFUSE);
	assert_true(st.ring_full >= REFUSE);
	assert_int_equal(net_cnt(e, "tx_held"), st.ring_full);
}

static void
test_first_frames_refused(void **state)
{
	struct vwire_config w = {
		.a_to_b = { .refuse_tx_calls = REFUSE },
		.b_to_a = { .refuse_tx_calls = REFUSE },
	};
	struct fx_qp_opts o = { .timeout = 14 };	/* perftest's: 67 ms */
	struct net_neigh_info info;
	struct fx f;

	(void)state;
	fx_open_resolving(&f, &w, BUF);
	fx_connect(&f, &o);	/* RTR: each end sends its ARP request */
	fx_fill(f.a.buf, 4096, 4);
	post_write(&f, f.a.qp, 0, 4096);
	expect_done(&f, 1);
	assert_memory_equal(f.b.buf, f.a.buf, 4096);

	expect_refused_kept(&f.a);
	expect_refused_kept(&f.b);
	/* one request and one answer each way: none was lost and re-probed */
	assert_int_equal(net_cnt(&f.a, "tx_arp_request"), 1);
	assert_int_equal(net_cnt(&f.b, "tx_arp_request"), 1);
	assert_int_equal(net_cnt(&f.a, "tx_arp_reply"), 1);
	assert_int_equal(net_cnt(&f.b, "tx_arp_reply"), 1);
	neigh_of(&f.a, &f.b, &info);
	assert_int_equal(info.state, NET_NEIGH_REACHABLE);
	assert_int_equal(net_cnt(&f.a, "tx_pending"), 4);	/* the WRITE */
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts"), 0);
	assert_int_equal(fx_counter(&f.a, "retransmitted_pkts"), 0);
	assert_int_equal(fx_counter(&f.a, "send_err"), 0);
	assert_int_equal(fx_counter(&f.a, "sent_pkts"), 4);
	fx_destroy_qps(&f);
	fx_close(&f);
}

/*
 * b's ARP request (sent when its QP goes to RTR) is refused once and so
 * still in b's transmit buffer: a learns b only when the test runs b.
 */
static void
late_peer_wire(struct vwire_config *w)
{
	memset(w, 0, sizeof(*w));
	w->b_to_a.refuse_tx_calls = 1;
}

static void
test_timer_restarts_at_release(void **state)
{
	struct fx_qp_opts o = { .timeout = TIMEOUT_LONG };
	struct net_neigh_info info;
	struct vwire_config w;
	struct fx f;

	(void)state;
	late_peer_wire(&w);
	fx_open_resolving(&f, &w, BUF);
	fx_connect(&f, &o);
	fx_fill(f.a.buf, 1024, 5);
	post_write(&f, f.a.qp, 0, 1024);
	/* a alone past its timeout: the expiry finds b unresolved, is not
	 * counted, and re-arms the timer (due about 2 periods after t0) */
	spin_one(&f.a, 1.5 * PERIOD_S);
	neigh_of(&f.a, &f.b, &info);
	assert_int_equal(info.state, NET_NEIGH_INCOMPLETE);
	assert_int_equal(info.pending, 1);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts"), 0);
	/* b answers a's requests; nothing reaches b's QP yet */
	spin_one(&f.b, 0.002);
	/* a learns b and releases the WRITE; b is not run, so no ACK comes */
	spin_one(&f.a, 0.8 * PERIOD_S);
	neigh_of(&f.a, &f.b, &info);
	assert_int_equal(info.state, NET_NEIGH_REACHABLE);
	assert_int_equal(net_cnt(&f.a, "tx_pending"), 1);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts"), 0);
	assert_int_equal(fx_counter(&f.a, "retransmitted_pkts"), 0);
	expect_done(&f, 1);
	assert_memory_equal(f.b.buf, f.a.buf, 1024);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts"), 0);
	assert_int_equal(fx_counter(&f.a, "retransmitted_pkts"), 0);
	fx_destroy_qps(&f);
	fx_close(&f);
}

#define BIG_QPS 2
#define BIG_LEN (512u * 1024)	/* 1,024 packets at path MTU 512 */
#define BIG_PKTS (BIG_LEN / 512)

static void
test_release_beyond_queue(void **state)
{
	struct fx_qp_opts o = { .timeout = TIMEOUT_LONG, .mtu = DROCE_MTU_512 };
	struct droce_qp *qa[BIG_QPS], *qb[BIG_QPS];
	struct net_neigh_info info;
	struct vwire_config w;
	double end;
	struct fx f;

	(void)state;
	late_peer_wire(&w);
	w.ring_size = 64;
	fx_open_resolving(&f, &w, BUF);
	for (int i = 0; i < BIG_QPS; i++) {
		fx_connect(&f, &o);
		qa[i] = f.a.qp;
		qb[i] = f.b.qp;
		f.a.qp = f.b.qp = NULL;
	}
	fx_fill(f.a.buf, BIG_QPS * BIG_LEN, 6);
	for (int i = 0; i < BIG_QPS; i++)
		post_write(&f, qa[i], (size_t)i * BIG_LEN, BIG_LEN);
	/* a builds every packet; all wait for b's MAC */
	end = fx_now() + 10;
	do {
		droce_progress(f.a.ctx);
		neigh_of(&f.a, &f.b, &info);
	} while (info.pending < BIG_QPS * BIG_PKTS && fx_now() < end);
	assert_int_equal(info.pending, BIG_QPS * BIG_PKTS);
	spin_one(&f.b, 0.002);
	/* one round of a: b's answer releases 2,048 frames at once */
	droce_progress(f.a.ctx);
	assert_int_equal(fx_counter(&f.a, "send_err"), 0);
	neigh_of(&f.a, &f.b, &info);
	assert_true(info.pending > 0);
	/* each offer stops at its first refusal (how many offers a round
	 * makes depends on the ARP frames in it) */
	assert_true(net_cnt(&f.a, "tx_held") > 0);
	expect_done(&f, BIG_QPS);
	assert_memory_equal(f.b.buf, f.a.buf, BIG_QPS * BIG_LEN);
	neigh_of(&f.a, &f.b, &info);
	assert_int_equal(info.pending, 0);
	assert_int_equal(net_cnt(&f.a, "tx_pending"), BIG_QPS * BIG_PKTS);
	assert_int_equal(net_cnt(&f.a, "drop_pending"), 0);
	assert_int_equal(net_cnt(&f.a, "drop_pending_budget"), 0);
	assert_int_equal(fx_counter(&f.a, "send_err"), 0);
	assert_int_equal(fx_counter(&f.a, "retransmit_timeouts"), 0);
	assert_int_equal(fx_counter(&f.a, "retransmitted_pkts"), 0);
	assert_int_equal(fx_counter(&f.a, "sent_pkts"), BIG_QPS * BIG_PKTS);
	assert_int_equal(fx_counter(&f.b, "out_of_seq_request"), 0);
	for (int i = 0; i < BIG_QPS; i++) {
		assert_int_equal(droce_destroy_qp(qa[i]), 0);
		assert_int_equal(droce_destroy_qp(qb[i]), 0);
	}
	fx_close(&f);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_frames_refused),
		cmocka_unit_test(test_timer_restarts_at_release),
		cmocka_unit_test(test_release_beyond_queue),
	};

	(void)argc;
	fx_eal_init(argv[0]);
	return fx_result(cmocka_run_group_tests(tests, NULL, NULL));
}
