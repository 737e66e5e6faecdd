/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events through the drop-in: a program compiled against the
 * system's <infiniband/verbs.h>, run on droce through droce-run (in
 * process, or on droced).
 *
 *   dropin_async -p PORT          the owner (TCP server): its QPs and CQ
 *                                 get the events
 *   dropin_async -p PORT HOST     the peer that causes them
 *
 * NQP RC QP pairs.  The owner waits for each event with poll(2) on
 * context->async_fd (within WAIT_MS), reads it with ibv_get_async_event
 * (type and element exact) and acks it; before the first, async_fd is
 * open and holds nothing but IBV_EVENT_PORT_ACTIVE of port 1 (its link
 * came up), and after each of the first three nothing else is queued.  In
 * order:
 *   1. IBV_EVENT_QP_ACCESS_ERR on QP 0: the peer's WRITE with a wrong rkey
 *      (its completion: IBV_WC_REM_ACCESS_ERR), a responder error no
 *      receive completion reports (IBTA 11.6.3.2);
 *   2. IBV_EVENT_COMM_EST on QP 1, which the owner left in RTR: the peer's
 *      SEND arrives (IBTA 11.6.3.1; the owner's IBV_WC_RECV has its bytes);
 *   3. IBV_EVENT_SQ_DRAINED on QP 2: RTS -> SQD with en_sqd_async_notify,
 *      nothing outstanding (ibv_query_qp then says SQD);
 *   4. IBV_EVENT_CQ_ERR on QP 3's receive CQ (ibv_create_cq of 1 entry):
 *      the peer's SENDs, its cqe + 2 of them, overrun it (IBTA 11.4.2.1).
 *      Events after it (the QP's) are printed, not checked.
 * Prints "ok" and exits 0, else names the failed check, exit 1.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dropin_rc.h"

#define BUF 4096
#define NQP 4
#define WAIT_MS (10 * 1000)
#define MSG 32

enum step { STEP_BAD_WRITE = 1, STEP_SEND, STEP_OVERRUN, STEP_END };

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;		/* every QP's but QP 3's receive CQ */
	struct ibv_cq *small;		/* QP 3's receive CQ */
	struct ibv_qp *qp[NQP];
	union ibv_gid gid;
	bool owner;
	uint64_t peer_addr;
	uint32_t peer_rkey;
	unsigned char buf[BUF];
} t;

static struct ibv_wc
next_wc(struct ibv_cq *cq)
{
	return rc_next_wc(cq, WAIT_MS);
}

static bool
async_readable(int timeout_ms)
{
	return rc_async_readable(t.ctx, timeout_ms);
}

static const char *
element_name(const struct ibv_async_event *ev)
{
	static char s[32];

	for (int i = 0; i < NQP; i++)
		if (ev->element.qp == t.qp[i]) {
			snprintf(s, sizeof(s), "QP %d", i);
			return s;
		}
	return "another element";
}

/* The next event, within WAIT_MS: its type and element as expected. */
static void
expect_event(enum ibv_event_type type, const void *element, const char *what)
{
	struct ibv_async_event ev;
	const void *got;

	if (!async_readable(WAIT_MS))
		die("%s: async_fd not readable within %d ms", what, WAIT_MS);
	if (ibv_get_async_event(t.ctx, &ev) != 0)
		die("%s: ibv_get_async_event: %s", what, strerror(errno));
	got = type == IBV_EVENT_CQ_ERR ? (const void *)ev.element.cq :
					 (const void *)ev.element.qp;
	if (ev.event_type != type || got != element)
		die("%s: event %s (%d) on %s, expected %s", what,
		    ibv_event_type_str(ev.event_type), (int)ev.event_type,
		    element_name(&ev), ibv_event_type_str(type));
	ibv_ack_async_event(&ev);
	printf("%s: %s\n", what, ibv_event_type_str(type));
}

static void
expect_no_event(const char *when)
{
	if (async_readable(0))
		die("%s: async_fd readable (an event not expected)", when);
}

static void
setup(bool owner)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	t.owner = owner;
	t.ctx = rc_open_device(&t.gid);
	t.pd = ibv_alloc_pd(t.ctx);
	t.mr = t.pd != NULL ? ibv_reg_mr(t.pd, t.buf, sizeof(t.buf),
					 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
	t.cq = ibv_create_cq(t.ctx, 64, NULL, NULL, 0);
	t.small = ibv_create_cq(t.ctx, 1, NULL, NULL, 0);
	if (t.mr == NULL || t.cq == NULL || t.small == NULL)
		die("pd/mr/cq");
	if (t.small->cqe + 2 > (int)init.cap.max_recv_wr)
		die("the 1-entry CQ has %d entries", t.small->cqe);
	for (int i = 0; i < NQP; i++) {
		init.send_cq = t.cq;
		init.recv_cq = i == 3 && t.owner ? t.small : t.cq;
		t.qp[i] = ibv_create_qp(t.pd, &init);
		if (t.qp[i] == NULL)
			die("ibv_create_qp %d: %s", i, strerror(errno));
	}
}

static void
post_recv(struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)t.buf, MSG, t.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad) != 0)
		die("ibv_post_recv");
}

static void
post_send(int qi, enum ibv_wr_opcode op, uint64_t addr, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)t.buf, MSG, t.mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(t.qp[qi], &wr, &bad) != 0)
		die("ibv_post_send on QP %d", qi);
}

/* QPNs, GIDs, the owner's buffer; the owner's QP 1 stays in RTR (for
 * COMM_EST) and gets its receive before. */
static void
exchange(void)
{
	struct { uint32_t qpn[NQP]; union ibv_gid gid; uint64_t addr; uint32_t rkey; } me, peer;

	memset(&me, 0, sizeof(me));
	for (int i = 0; i < NQP; i++)
		me.qpn[i] = t.qp[i]->qp_num;
	me.gid = t.gid;
	me.addr = (uintptr_t)t.buf;
	me.rkey = t.mr->rkey;
	tcp_send(&me, sizeof(me));
	tcp_recv(&peer, sizeof(peer));
	t.peer_addr = peer.addr;
	t.peer_rkey = peer.rkey;
	for (int i = 0; i < NQP; i++) {
		unsigned int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;

		if (t.owner && i == 1) {
			qp_to_rtr(t.qp[i], peer.qpn[i], &peer.gid, acc);
			post_recv(t.qp[i], 1);
		} else {
			connect_qp(t.qp[i], peer.qpn[i], &peer.gid, acc);
		}
	}
}

/* The peer's part of step s: 1 byte back, the status of its completion. */
static uint8_t
ask(enum step s)
{
	uint8_t b = (uint8_t)s, status;

	tcp_send(&b, 1);
	tcp_recv(&status, 1);
	return status;
}

static void
peer(void)
{
	uint8_t s, status;

	for (;;) {
		tcp_recv(&s, 1);
		status = IBV_WC_SUCCESS;
		switch (s) {
		case STEP_BAD_WRITE:
			post_send(0, IBV_WR_RDMA_WRITE, t.peer_addr, t.peer_rkey ^ 0x100, 10);
			status = (uint8_t)next_wc(t.cq).status;
			break;
		case STEP_SEND:
			memset(t.buf, 0x42, MSG);
			post_send(1, IBV_WR_SEND, 0, 0, 11);
			status = (uint8_t)next_wc(t.cq).status;
			break;
		case STEP_OVERRUN:
			/* the owner's CQ overruns: these end as they may */
			for (uint64_t i = 0; i < (uint64_t)t.small->cqe + 2; i++)
				post_send(3, IBV_WR_SEND, 0, 0, 20 + i);
			break;
		case STEP_END:
			return;
		default:
			die("step %d", s);
		}
		tcp_send(&status, 1);
	}
}

static void
owner(void)
{
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };
	struct ibv_qp_init_attr qi;
	struct ibv_async_event ev;
	struct ibv_wc wc;
	uint8_t end = STEP_END, status;

	if (t.ctx->async_fd < 0)
		die("async_fd %d", t.ctx->async_fd);
	/* the port's own events first (its link came up while the QPs were made) */
	while (async_readable(0)) {
		if (ibv_get_async_event(t.ctx, &ev) != 0)
			die("ibv_get_async_event: %s", strerror(errno));
		if (ev.event_type != IBV_EVENT_PORT_ACTIVE || ev.element.port_num != 1)
			die("before the first: %s", ibv_event_type_str(ev.event_type));
		printf("before the first: %s on port 1\n", ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}

	status = ask(STEP_BAD_WRITE);
	if (status != IBV_WC_REM_ACCESS_ERR)
		die("the peer's WRITE with a wrong rkey: %s", ibv_wc_status_str(status));
	expect_event(IBV_EVENT_QP_ACCESS_ERR, t.qp[0], "a WRITE with a wrong rkey");
	expect_no_event("after QP_ACCESS_ERR");

	status = ask(STEP_SEND);
	if (status != IBV_WC_SUCCESS)
		die("the peer's SEND to the QP in RTR: %s", ibv_wc_status_str(status));
	wc = next_wc(t.cq);
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV || wc.byte_len != MSG ||
	    t.buf[0] != 0x42 || t.buf[MSG - 1] != 0x42)
		die("the receive in RTR: %s, opcode %d, %u bytes", ibv_wc_status_str(wc.status),
		    (int)wc.opcode, wc.byte_len);
	expect_event(IBV_EVENT_COMM_EST, t.qp[1], "the first packet in RTR");
	expect_no_event("after COMM_EST");

	if (ibv_modify_qp(t.qp[2], &qa, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY) != 0)
		die("RTS -> SQD: %s", strerror(errno));
	expect_event(IBV_EVENT_SQ_DRAINED, t.qp[2], "RTS -> SQD");
	if (ibv_query_qp(t.qp[2], &qa, IBV_QP_STATE, &qi) != 0 || qa.qp_state != IBV_QPS_SQD)
		die("QP 2 after SQ_DRAINED: state %d", (int)qa.qp_state);
	expect_no_event("after SQ_DRAINED");

	for (int i = 0; i < t.small->cqe + 2; i++)
		post_recv(t.qp[3], 30 + (uint64_t)i);
	(void)ask(STEP_OVERRUN);
	expect_event(IBV_EVENT_CQ_ERR, t.small, "a receive CQ overrun");
	while (async_readable(200) && ibv_get_async_event(t.ctx, &ev) == 0) {
		printf("then: %s on %s\n", ibv_event_type_str(ev.event_type), element_name(&ev));
		ibv_ack_async_event(&ev);
	}
	tcp_send(&end, 1);
}

static void
teardown(void)
{
	for (int i = 0; i < NQP; i++)
		if (ibv_destroy_qp(t.qp[i]) != 0)
			die("ibv_destroy_qp");
	if (ibv_destroy_cq(t.small) || ibv_destroy_cq(t.cq) || ibv_dereg_mr(t.mr) ||
	    ibv_dealloc_pd(t.pd) || ibv_close_device(t.ctx))
		die("teardown");
}

int
main(int argc, char **argv)
{
	static const struct rc_roles roles = { setup, exchange, owner, peer, teardown };

	return rc_main(argc, argv, &roles);
}
