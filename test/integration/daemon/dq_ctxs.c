/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dq_ctxs - a program of droce.h with two contexts of droced's device in
 * one plain process (dq_test.py dq_ctxs): each context's asynchronous
 * events on its own async_fd.
 *
 *   dq_ctxs [droce options]
 *       Opens the device twice (contexts A and B; B's async_fd made
 *       O_NONBLOCK), and on each a PD, a CQ, an MR and an RC QP connected
 *       to itself (RTS).  A BIND_MW of a window of nobody's on A's QP
 *       (a handle droced never gave): droced refuses it, A's async_fd
 *       becomes readable (poll(2)) and gives exactly one QP_REQ_ERR
 *       naming A's QP; B's is not readable
 *       and droce_get_async_event on it is EAGAIN.  The same with the
 *       roles swapped.  Prints "ctxs: qp events ok", then waits for a port
 *       event (dq_test.py starts droced's memif peer: the link comes up):
 *       exactly one PORT_ACTIVE of port 1 on each context, each fd
 *       unreadable after it.  Then A's objects freed while B's
 *       QP_REQ_ERR is still unacked (destroy waits for its own context's
 *       acks only), B's after its ack, and "ctxs: ok".
 *
 * Exit 0 when all it checked held, 1 when a check failed, 2 on an error.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "droce.h"

#define BUF_LEN 4096
#define NOBODY_MW 0x7ffffe01u	/* a window handle droced never gave */

struct side {
	const char *name;
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct droce_mr *mr;
	struct droce_qp *qp;
	uint8_t *buf;
};

static int failed;

static void
die(const char *what, int err)
{
	fprintf(stderr, "dq_ctxs: %s: %s\n", what, strerror(err));
	exit(2);
}

static void
check(int ok, const char *side, const char *what)
{
	if (!ok) {
		printf("FAIL %s: %s\n", side, what);
		fflush(stdout);
		failed = 1;
	}
}

static void
open_side(struct side *s, struct droce_device *dev)
{
	struct droce_qp_init_attr init = { .qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	union droce_gid gid;
	struct droce_qp_attr q = { .qp_state = DROCE_QPS_INIT, .port_num = 1 };

	s->ctx = droce_open_device(dev);
	if (s->ctx == NULL)
		die("open device", errno);
	s->pd = droce_alloc_pd(s->ctx);
	s->cq = droce_create_cq(s->ctx, 16, NULL, NULL, 0);
	if (s->pd == NULL || s->cq == NULL || posix_memalign((void **)&s->buf, 4096, BUF_LEN) != 0)
		die("pd, cq, buffer", errno);
	s->mr = droce_reg_mr(s->pd, s->buf, BUF_LEN, DROCE_ACCESS_LOCAL_WRITE);
	init.send_cq = s->cq;
	init.recv_cq = s->cq;
	s->qp = s->mr != NULL ? droce_create_qp(s->pd, &init) : NULL;
	if (s->qp == NULL || droce_query_gid(s->ctx, 1, 0, &gid) != 0)
		die("mr, qp, gid", errno);
	if (droce_modify_qp(s->qp, &q, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
			    DROCE_QP_ACCESS_FLAGS) != 0)
		die("INIT", errno);
	q = (struct droce_qp_attr){ .qp_state = DROCE_QPS_RTR, .path_mtu = DROCE_MTU_1024,
				    .dest_qp_num = s->qp->qp_num, .max_dest_rd_atomic = 1,
				    .min_rnr_timer = 1 };
	q.ah_attr.is_global = 1;
	q.ah_attr.port_num = 1;
	q.ah_attr.grh.hop_limit = 64;
	q.ah_attr.grh.dgid = gid;	/* itself */
	if (droce_modify_qp(s->qp, &q, DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU |
			    DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN | DROCE_QP_MAX_DEST_RD_ATOMIC |
			    DROCE_QP_MIN_RNR_TIMER) != 0)
		die("RTR", errno);
	q = (struct droce_qp_attr){ .qp_state = DROCE_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				    .rnr_retry = 7, .max_rd_atomic = 1 };
	if (droce_modify_qp(s->qp, &q, DROCE_QP_STATE | DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
			    DROCE_QP_RNR_RETRY | DROCE_QP_SQ_PSN | DROCE_QP_MAX_QP_RD_ATOMIC) != 0)
		die("RTS", errno);
}

/* readable within ms: 1, 0 (not), -1 (poll failed) */
static int
readable(const struct side *s, int ms)
{
	struct pollfd p = { .fd = s->ctx->async_fd, .events = POLLIN };
	int n = poll(&p, 1, ms);

	return n < 0 ? -1 : n == 1 && (p.revents & POLLIN);
}

/* One event of type on s, naming obj (a port's: port 1), then nothing
 * more; acked, or kept unacked in *held. */
static void
expect_event(struct side *s, enum droce_event_type type, const void *obj, int ms,
	     struct droce_async_event *held)
{
	struct droce_async_event ev;

	check(readable(s, ms) == 1, s->name, "async_fd readable for its event");
	if (droce_get_async_event(s->ctx, &ev) != 0) {
		check(0, s->name, "an event to take");
		return;
	}
	printf("%s: %s\n", s->name, droce_event_type_str(ev.event_type));
	check(ev.event_type == type, s->name, "the event's type");
	check(obj != NULL ? ev.element.qp == obj : ev.element.port_num == 1, s->name,
	      "the event names its object (its own context's)");
	if (held != NULL)
		*held = ev;
	else
		droce_ack_async_event(&ev);
	check(readable(s, 0) == 0, s->name, "async_fd not readable after its one event");
}

/* Nothing on s: not readable for ms, and (non-blocking) EAGAIN. */
static void
expect_none(struct side *s, int ms, int nonblock)
{
	struct droce_async_event ev;

	check(readable(s, ms) == 0, s->name, "async_fd not readable: none of its events");
	if (nonblock)
		check(droce_get_async_event(s->ctx, &ev) != 0 && errno == EAGAIN, s->name,
		      "droce_get_async_event EAGAIN on its O_NONBLOCK fd");
}

/* A SEND whose SGE names no MR of the process: droced refuses it. */
static void
post_bad(struct side *s)
{
	struct droce_mw nobody = { .context = s->ctx, .pd = s->pd, .handle = NOBODY_MW,
				   .type = DROCE_MW_TYPE_2 };
	struct droce_send_wr wr = { .wr_id = 1, .opcode = DROCE_WR_BIND_MW,
				    .send_flags = DROCE_SEND_SIGNALED };
	struct droce_send_wr *bad;

	wr.bind_mw.mw = &nobody;
	wr.bind_mw.rkey = 0x100;
	wr.bind_mw.bind_info = (struct droce_mw_bind_info){ s->mr, (uintptr_t)s->buf, 64,
							    DROCE_ACCESS_REMOTE_WRITE };
	if (droce_post_send(s->qp, &wr, &bad) != 0)
		die("post send", errno);
}

static void
close_side(struct side *s)
{
	if (droce_destroy_qp(s->qp) != 0 || droce_destroy_cq(s->cq) != 0 ||
	    droce_dereg_mr(s->mr) != 0 || droce_dealloc_pd(s->pd) != 0 ||
	    droce_close_device(s->ctx) != 0)
		die("teardown", errno);
	free(s->buf);
}

int
main(int argc, char **argv)
{
	struct side a = { .name = "A" }, b = { .name = "B" };
	struct droce_async_event b_err;
	struct droce_device **list;
	int n = 0, ret = droce_init(argc, argv), fl;

	if (ret < 0)
		die("droce_init", errno);
	list = droce_get_device_list(&n);
	if (list == NULL || n != 1)
		die("device list", list == NULL ? errno : ENODEV);
	open_side(&a, list[0]);
	open_side(&b, list[0]);
	droce_free_device_list(list);
	check(a.ctx->async_fd != b.ctx->async_fd, "A, B", "an async_fd each");
	fl = fcntl(b.ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(b.ctx->async_fd, F_SETFL, fl | O_NONBLOCK) != 0)
		die("O_NONBLOCK", errno);

	post_bad(&a);
	expect_event(&a, DROCE_EVENT_QP_REQ_ERR, a.qp, 5000, NULL);
	expect_none(&b, 300, 1);
	post_bad(&b);
	expect_event(&b, DROCE_EVENT_QP_REQ_ERR, b.qp, 5000, &b_err);	/* acked last */
	expect_none(&a, 300, 0);
	expect_none(&b, 0, 1);
	printf("ctxs: qp events %s\n", failed ? "FAILED" : "ok");
	fflush(stdout);

	/* the port's event: each context gets its own copy */
	expect_event(&a, DROCE_EVENT_PORT_ACTIVE, NULL, 20000, NULL);
	expect_event(&b, DROCE_EVENT_PORT_ACTIVE, NULL, 5000, NULL);
	expect_none(&a, 300, 0);
	expect_none(&b, 0, 1);

	/* A's destroys wait for A's acks only: B's QP_REQ_ERR is still
	 * unacked (a wait for it would hang: SIGALRM ends the program) */
	alarm(20);
	close_side(&a);
	printf("ctxs: A freed while B's event is unacked\n");
	droce_ack_async_event(&b_err);
	close_side(&b);
	droce_cleanup();
	printf("ctxs: %s\n", failed ? "FAILED" : "ok");
	return failed;
}
