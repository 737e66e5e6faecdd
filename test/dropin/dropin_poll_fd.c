/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An event-driven ibverbs program, compiled against the system's
 * <infiniband/verbs.h> and linked with the system's libibverbs.so.1, run
 * on droce through the drop-in (droce-run) with a transport lcore.
 *
 *   dropin_poll_fd -p PORT          the receiver (TCP server on PORT)
 *   dropin_poll_fd -p PORT HOST     the sender
 *
 * The two exchange QPN and GID over TCP (as ibv_rc_pingpong), connect an
 * RC QP each, then step together (one TCP byte per step).  The receiver's
 * CQ is on a completion channel and it waits with poll() on channel->fd,
 * calling ibv_get_cq_event only once the fd is readable.  Checks, exactly:
 * an armed CQ's receive completion makes the fd readable (poll returns 1),
 * the event names the CQ and its context, one completion with the sent
 * bytes; with solicited_only an unsolicited SEND leaves the fd unreadable
 * for 300 ms (its completion is polled) and a solicited one makes it
 * readable.  Also: ibv_create_cq_ex (standard flags; EOPNOTSUPP with a
 * timestamp; start_poll ENOENT when empty) on a parent domain, whose PD
 * cannot be freed before it (EBUSY).  Prints "ok"
 * and exits 0, else names the failed check, exit 1.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dropin_rc.h"

#define MSG 64

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	union ibv_gid gid;
	bool sender;
	unsigned char buf[MSG];
} t;
static int cq_cookie;

static int
fd_readable(int timeout_ms)
{
	struct pollfd p = { .fd = t.ch->fd, .events = POLLIN };
	int n = poll(&p, 1, timeout_ms);

	return n == 1 && (p.revents & POLLIN) ? 1 : n < 0 ? -1 : 0;
}

/* The extended CQ: standard flags only (a timestamp is EOPNOTSUPP),
 * ENOENT when empty; on a parent domain too, which is its PD's. */
static void
check_cq_ex(struct ibv_cq_init_attr_ex *ax)
{
	struct ibv_parent_domain_init_attr pa = { .pd = t.pd };
	struct ibv_poll_cq_attr pca = { .comp_mask = 0 };
	struct ibv_cq_ex *cx;
	struct ibv_pd *parent;

	ax->wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	if (ibv_create_cq_ex(t.ctx, ax) != NULL || errno != EOPNOTSUPP)
		die("ibv_create_cq_ex with a timestamp: errno %d", errno);
	ax->wc_flags = IBV_WC_STANDARD_FLAGS;
	parent = ibv_alloc_parent_domain(t.ctx, &pa);
	if (parent == NULL || parent->handle != t.pd->handle)
		die("ibv_alloc_parent_domain: %s", strerror(errno));
	ax->comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	ax->parent_domain = parent;
	cx = ibv_create_cq_ex(t.ctx, ax);
	if (cx == NULL || ibv_cq_ex_to_cq(cx)->cqe < 16)
		die("ibv_create_cq_ex: %s", strerror(errno));
	if (ibv_start_poll(cx, &pca) != ENOENT)
		die("ibv_start_poll of an empty CQ: not ENOENT");
	if (ibv_dealloc_pd(t.pd) != EBUSY)
		die("ibv_dealloc_pd under a parent domain: not EBUSY");
	if (ibv_destroy_cq(ibv_cq_ex_to_cq(cx)) != 0 || ibv_dealloc_pd(parent) != 0)
		die("destroy the extended CQ, the parent domain");
}

static void
setup(bool receiver)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_cq_init_attr_ex ax = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };

	t.sender = !receiver;
	t.ctx = rc_open_device(&t.gid);
	t.pd = ibv_alloc_pd(t.ctx);
	t.mr = t.pd != NULL ? ibv_reg_mr(t.pd, t.buf, sizeof(t.buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	t.ch = t.sender ? NULL : ibv_create_comp_channel(t.ctx);
	if (t.mr == NULL || (!t.sender && t.ch == NULL))
		die("pd/mr/channel");
	t.cq = ibv_create_cq(t.ctx, 16, &cq_cookie, t.ch, 0);
	if (t.cq == NULL || t.cq->channel != t.ch)
		die("ibv_create_cq");
	check_cq_ex(&ax);
	init.send_cq = init.recv_cq = t.cq;
	t.qp = ibv_create_qp(t.pd, &init);
	if (t.qp == NULL)
		die("ibv_create_qp");
}

/* QPN and GID to the peer and back; connect the QP to the peer's. */
static void
exchange(void)
{
	struct { uint32_t qpn; union ibv_gid gid; } me, peer;

	memset(&me, 0, sizeof(me));
	me.qpn = t.qp->qp_num;
	me.gid = t.gid;
	tcp_send(&me, sizeof(me));
	tcp_recv(&peer, sizeof(peer));
	connect_qp(t.qp, peer.qpn, &peer.gid, IBV_ACCESS_LOCAL_WRITE);
}

/* The CQ's one completion within timeout_ms: its opcode, wr_id, status. */
static void
expect_wc(enum ibv_wc_opcode opcode, uint64_t wr_id, int timeout_ms)
{
	struct ibv_wc wc[2];
	struct timespec t0;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((n = ibv_poll_cq(t.cq, 2, wc)) == 0 && ms_since(&t0) < timeout_ms)
		;
	if (n != 1 || wc[0].status != IBV_WC_SUCCESS || wc[0].opcode != opcode ||
	    wc[0].wr_id != wr_id || (opcode == IBV_WC_RECV && wc[0].byte_len != MSG))
		die("expected one completion (opcode %d, wr_id %d): n %d status %d opcode %d",
		    (int)opcode, (int)wr_id, n, n > 0 ? (int)wc[0].status : -1,
		    n > 0 ? (int)wc[0].opcode : -1);
	if (ibv_poll_cq(t.cq, 2, wc) != 0)
		die("a second completion");
}

/* The receiver: one receive WQE for the step's message. */
static void
post_recv(void)
{
	struct ibv_sge sge = { (uintptr_t)t.buf, MSG, t.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(t.buf, 0, MSG);
	if (ibv_post_recv(t.qp, &wr, &bad) != 0)
		die("ibv_post_recv");
}

/* The receiver: the step's message arrived, fill bytes. */
static void
expect_recv(unsigned char fill, int timeout_ms)
{
	expect_wc(IBV_WC_RECV, 7, timeout_ms);
	for (int i = 0; i < MSG; i++)
		if (t.buf[i] != fill)
			die("byte %d received 0x%02x, sent 0x%02x", i, t.buf[i], fill);
}

static void
take_event(void)
{
	struct ibv_cq *cq;
	void *ctx;

	if (ibv_get_cq_event(t.ch, &cq, &ctx) != 0 || cq != t.cq || ctx != &cq_cookie)
		die("ibv_get_cq_event: not our CQ and context");
	ibv_ack_cq_events(cq, 1);
}

/* The steps' messages, each sent when the receiver says so. */
static const struct step {
	unsigned char fill;
	bool solicited;
} steps[] = { { 0xa5, false }, { 0x3c, false }, { 0x5a, true } };
#define NSTEPS (sizeof(steps) / sizeof(steps[0]))

static void
sender(void)
{
	for (unsigned int i = 0; i < NSTEPS; i++) {
		struct ibv_sge sge = { (uintptr_t)t.buf, MSG, t.mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED |
				      (steps[i].solicited ? IBV_SEND_SOLICITED : 0),
		}, *bad;
		char go;

		tcp_recv(&go, 1);
		memset(t.buf, steps[i].fill, MSG);
		if (ibv_post_send(t.qp, &wr, &bad) != 0)
			die("ibv_post_send");
		expect_wc(IBV_WC_SEND, i, 10 * 1000);
	}
	tcp_send("d", 1);
}

/* The receiver: the sender may send the next step's message. */
static void
go(void)
{
	tcp_send("g", 1);
}

static void
receiver(void)
{
	struct ibv_wc wc;
	char done;
	int r;

	/* arm, poll again, then wait */
	post_recv();
	if (ibv_req_notify_cq(t.cq, 0) != 0 || ibv_poll_cq(t.cq, 1, &wc) != 0)
		die("arm");
	if (fd_readable(0) != 0)
		die("fd readable before any completion");
	go();
	if ((r = fd_readable(10 * 1000)) != 1)
		die("poll() on channel->fd returned %d, not 1, within 10 s", r);
	take_event();
	expect_recv(steps[0].fill, 0);
	if (fd_readable(0) != 0)
		die("fd readable after the event was taken");

	/* solicited_only: an unsolicited SEND does not wake, a solicited one does */
	if (ibv_req_notify_cq(t.cq, 1) != 0)
		die("arm solicited_only");
	post_recv();
	go();
	if ((r = fd_readable(300)) != 0)
		die("unsolicited SEND: poll() returned %d, not 0", r);
	expect_recv(steps[1].fill, 10 * 1000);
	post_recv();
	go();
	if ((r = fd_readable(10 * 1000)) != 1)
		die("solicited SEND: poll() returned %d, not 1", r);
	take_event();
	expect_recv(steps[2].fill, 0);
	tcp_recv(&done, 1);		/* the sender has its last completion */
}

static void
teardown(void)
{
	if (ibv_destroy_qp(t.qp) || ibv_destroy_cq(t.cq) ||
	    (t.ch != NULL && ibv_destroy_comp_channel(t.ch)) || ibv_dereg_mr(t.mr) ||
	    ibv_dealloc_pd(t.pd) || ibv_close_device(t.ctx))
		die("teardown");
}

int
main(int argc, char **argv)
{
	/* the receiver is the server (the owner's role), the sender its peer */
	static const struct rc_roles roles = { setup, exchange, receiver, sender, teardown };

	return rc_main(argc, argv, &roles);
}
