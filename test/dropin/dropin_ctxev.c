/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events per context through the drop-in: a program compiled
 * against the system's <infiniband/verbs.h>, run on droce through
 * droce-run, two contexts of droce0 open in one process.
 *
 *   dropin_ctxev owner   the memif server: contexts A and B, the events
 *   dropin_ctxev peer    the memif client: its link up, until stdin ends
 *   dropin_ctxev daemon  on droced: the object events only
 *
 * ibverbs: a context's async_fd reports the events of the objects made on
 * it, and port events reach every open context.  The owner's QPs talk
 * through the port's loopback (A's QPs to each other, one of A's to one
 * of B's) while no peer is there:
 *   - A: qa1 SENDs to qa0 (RTR, on SRQ sa, limit armed at 2 of 2 posted):
 *     IBV_EVENT_COMM_EST on qa0 and IBV_EVENT_SRQ_LIMIT_REACHED on sa
 *     (on droced too: droced's SRQ, its event routed to the owner); qa1 RTS -> SQD with
 *     en_sqd_async_notify: IBV_EVENT_SQ_DRAINED on qa1;
 *   - B: A's qa2 WRITEs to B's qb0 with a wrong rkey (its completion:
 *     IBV_WC_REM_ACCESS_ERR): IBV_EVENT_QP_ACCESS_ERR on qb0, B's although
 *     an A QP caused it.
 * Each context reads exactly its events (poll(2) on its async_fd, then
 * ibv_get_async_event; the element is its object), and nothing else is
 * readable on either fd 300 ms later; with O_NONBLOCK an empty context's
 * ibv_get_async_event is EAGAIN.  A COMM_EST left unread goes with its QP
 * (ibv_destroy_qp returns, nothing readable after).  Then the owner
 * prints "ready" (not in daemon mode); once the
 * peer's memif connects, each context reads IBV_EVENT_PORT_ACTIVE of port
 * 1 and nothing else, and a context C opened after it has nothing to
 * read (an event reaches the contexts open when it happens).  (Not
 * PORT_ERR: droce's memif ports do not notice a peer that leaves,
 * drivers/ethdev/ethdev_memif.c.)  The owner prints "ok" and exits 0,
 * else names the failed check; the peer leaves when its stdin ends.
 */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dropin_rc.h"

#define WAIT_MS (10 * 1000)
#define PEER_WAIT_MS (60 * 1000)
#define BUF 4096

struct side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	unsigned char buf[BUF];
};

static struct side A = { .name = "A" }, B = { .name = "B" }, C = { .name = "C" };
static union ibv_gid gid;
static struct ibv_srq *sa;
static struct ibv_qp *qa0, *qa1, *qa2, *qb0;

/* An event expected on a context: its type and element. */
struct want {
	enum ibv_event_type type;
	const void *element;
	bool seen;
};

static void
side_open(struct side *s, struct ibv_device *dev)
{
	s->ctx = ibv_open_device(dev);
	if (s->ctx == NULL || ibv_query_gid(s->ctx, 1, 0, &gid) != 0)
		die("%s: open/query_gid", s->name);
	s->pd = ibv_alloc_pd(s->ctx);
	s->mr = s->pd != NULL ? ibv_reg_mr(s->pd, s->buf, sizeof(s->buf),
					   IBV_ACCESS_LOCAL_WRITE |
					   IBV_ACCESS_REMOTE_WRITE) : NULL;
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	if (s->mr == NULL || s->cq == NULL)
		die("%s: pd/mr/cq", s->name);
}

static struct ibv_qp *
qp_new(struct side *s, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC, .send_cq = s->cq, .recv_cq = s->cq, .srq = srq,
		.cap = { .max_send_wr = 16, .max_recv_wr = srq != NULL ? 0 : 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &init);

	if (qp == NULL)
		die("%s: ibv_create_qp: %s", s->name, strerror(errno));
	return qp;
}

static void
post_send(struct ibv_qp *qp, struct side *s, enum ibv_wr_opcode op, uint64_t raddr,
	  uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = 32, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = op, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	if (ibv_post_send(qp, &wr, &bad) != 0)
		die("%s: ibv_post_send", s->name);
}

static void
expect_wc(struct side *s, enum ibv_wc_status status)
{
	struct ibv_wc wc = rc_next_wc(s->cq, WAIT_MS);

	if (wc.status != status)
		die("%s: completion %s, expected %s", s->name,
		    ibv_wc_status_str(wc.status), ibv_wc_status_str(status));
}

/* qa1's SEND and qa0's receive, in either order. */
static void
expect_send_recv(void)
{
	unsigned int seen = 0;

	for (int i = 0; i < 2; i++) {
		struct ibv_wc wc = rc_next_wc(A.cq, WAIT_MS);

		if (wc.status != IBV_WC_SUCCESS ||
		    (wc.opcode != IBV_WC_SEND && wc.opcode != IBV_WC_RECV))
			die("A: completion %s opcode %d", ibv_wc_status_str(wc.status),
			    (int)wc.opcode);
		seen |= 1u << (wc.opcode == IBV_WC_RECV);
	}
	if (seen != 3)
		die("A: the SEND's two completions, one of each kind (%#x)", seen);
}

/* The objects and the traffic that raises the events (qa0 on an SRQ
 * whose limit is reached). */
static void
cause_events(void)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq_attr limit = { .srq_limit = 2 };
	struct ibv_sge sge = { .addr = (uintptr_t)A.buf + 64, .length = 64, .lkey = A.mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_qp_attr sqd = { .qp_state = IBV_QPS_SQD, .en_sqd_async_notify = 1 };

	sa = ibv_create_srq(A.pd, &si);
	if (sa == NULL)
		die("ibv_create_srq: %s", strerror(errno));
	for (int i = 0; i < 2; i++)
		if (ibv_post_srq_recv(sa, &rwr, &rbad) != 0)
			die("ibv_post_srq_recv");
	if (ibv_modify_srq(sa, &limit, IBV_SRQ_LIMIT) != 0)
		die("ibv_modify_srq (limit)");
	qa0 = qp_new(&A, sa);
	qa1 = qp_new(&A, NULL);
	qa2 = qp_new(&A, NULL);
	qb0 = qp_new(&B, NULL);
	qp_to_rtr(qa0, qa1->qp_num, &gid, 0);	/* left in RTR: COMM_EST */
	connect_qp(qa1, qa0->qp_num, &gid, 0);
	connect_qp(qa2, qb0->qp_num, &gid, 0);
	connect_qp(qb0, qa2->qp_num, &gid, IBV_ACCESS_REMOTE_WRITE);
	post_send(qa1, &A, IBV_WR_SEND, 0, 0);
	expect_send_recv();
	if (ibv_modify_qp(qa1, &sqd, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY) != 0)
		die("RTS -> SQD: %s", strerror(errno));
	post_send(qa2, &A, IBV_WR_RDMA_WRITE, (uintptr_t)B.buf, B.mr->rkey ^ 0x5a5a00);
	expect_wc(&A, IBV_WC_REM_ACCESS_ERR);
}

static bool
readable(struct side *s, int timeout_ms)
{
	return rc_async_readable(s->ctx, timeout_ms);
}

static const char *
element_name(const struct ibv_async_event *ev)
{
	static char s[64];
	const void *e = ev->element.qp;

	if (e == qa0 || e == qa1 || e == qa2)
		return e == qa0 ? "A's qa0" : e == qa1 ? "A's qa1" : "A's qa2";
	if (e == qb0)
		return "B's qb0";
	if (e == sa)
		return "A's SRQ";
	if (e == A.cq || e == B.cq)
		return e == A.cq ? "A's CQ" : "B's CQ";
	snprintf(s, sizeof(s), "port %d", ev->element.port_num);
	return s;
}

/* s's events until each of want[] was read once, within WAIT_MS; any
 * other event fails. */
static void
expect_events(struct side *s, struct want *want, int n, const char *when)
{
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int left = n; left > 0;) {
		struct ibv_async_event ev;
		bool port;
		int i;

		if (!readable(s, (int)(WAIT_MS - ms_since(&t0) > 0 ? WAIT_MS - ms_since(&t0) : 0)))
			die("%s: %s's async_fd not readable within %d ms (%d events missing)",
			    when, s->name, WAIT_MS, left);
		if (ibv_get_async_event(s->ctx, &ev) != 0)
			die("%s: %s: ibv_get_async_event: %s", when, s->name, strerror(errno));
		port = ev.event_type == IBV_EVENT_PORT_ACTIVE || ev.event_type == IBV_EVENT_PORT_ERR;
		for (i = 0; i < n; i++)
			if (!want[i].seen && want[i].type == ev.event_type &&
			    (port ? ev.element.port_num == 1 : ev.element.qp == want[i].element))
				break;
		if (i == n)
			die("%s: context %s read %s on %s, not one of its events", when,
			    s->name, ibv_event_type_str(ev.event_type), element_name(&ev));
		want[i].seen = true;
		left--;
		printf("%s: context %s: %s on %s\n", when, s->name,
		       ibv_event_type_str(ev.event_type), element_name(&ev));
		ibv_ack_async_event(&ev);
	}
}

static void
expect_quiet(const char *when, struct side *more)
{
	struct ibv_async_event ev;
	int fl;

	usleep(300 * 1000);
	if (readable(&A, 0) || readable(&B, 0) || (more != NULL && readable(more, 0)))
		die("%s: context %s's async_fd readable (an event not expected)", when,
		    readable(&A, 0) ? "A" : readable(&B, 0) ? "B" : more->name);
	fl = fcntl(A.ctx->async_fd, F_GETFL);
	if (fl < 0 || fcntl(A.ctx->async_fd, F_SETFL, fl | O_NONBLOCK) != 0)
		die("fcntl O_NONBLOCK");
	errno = 0;
	if (ibv_get_async_event(A.ctx, &ev) == 0 || errno != EAGAIN)
		die("%s: ibv_get_async_event on an empty non-blocking context: %s", when,
		    strerror(errno));
	if (fcntl(A.ctx->async_fd, F_SETFL, fl) != 0)
		die("fcntl");
}

static void
port_events(enum ibv_event_type type, const char *when)
{
	struct want wa = { type, NULL, false }, wb = { type, NULL, false };

	expect_events(&A, &wa, 1, when);
	expect_events(&B, &wb, 1, when);
}

static void
side_close(struct side *s)
{
	if (ibv_destroy_cq(s->cq) != 0 || ibv_dereg_mr(s->mr) != 0 ||
	    ibv_dealloc_pd(s->pd) != 0 || ibv_close_device(s->ctx) != 0)
		die("%s: teardown", s->name);
}

/* A COMM_EST on a new QP of A left unread: destroying the QP drops it
 * (ibv_destroy_qp returns; async_fd no longer readable). */
static void
unread_then_destroy(void)
{
	struct ibv_sge sge = { .addr = (uintptr_t)A.buf + 64, .length = 64, .lkey = A.mr->lkey };
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_qp *rtr = qp_new(&A, NULL), *rts = qp_new(&A, NULL);

	qp_to_rtr(rtr, rts->qp_num, &gid, 0);
	if (ibv_post_recv(rtr, &rwr, &rbad) != 0)
		die("ibv_post_recv: %s", strerror(errno));
	connect_qp(rts, rtr->qp_num, &gid, 0);
	post_send(rts, &A, IBV_WR_SEND, 0, 0);
	expect_send_recv();
	if (!readable(&A, WAIT_MS))
		die("unread: no COMM_EST queued on A");
	if (ibv_destroy_qp(rtr) != 0 || ibv_destroy_qp(rts) != 0)
		die("unread: destroy");
	if (readable(&A, 0) || readable(&B, 0))
		die("unread: an event left after its QP was destroyed");
	printf("unread: COMM_EST dropped with its QP\n");
}

static int
teardown(void)
{
	if (ibv_destroy_qp(qa0) != 0 || ibv_destroy_qp(qa1) != 0 || ibv_destroy_qp(qa2) != 0 ||
	    ibv_destroy_qp(qb0) != 0 || ibv_destroy_srq(sa) != 0)
		die("destroy QPs/SRQ");
	side_close(&A);
	side_close(&B);
	puts("ok");
	return 0;
}

static int
owner(struct ibv_device *dev, bool daemon)
{
	struct want wa[] = {
		{ IBV_EVENT_COMM_EST, NULL, false }, { IBV_EVENT_SQ_DRAINED, NULL, false },
		{ IBV_EVENT_SRQ_LIMIT_REACHED, NULL, false },
	};
	struct want wb[] = { { IBV_EVENT_QP_ACCESS_ERR, NULL, false } };

	side_open(&A, dev);
	side_open(&B, dev);
	if (A.ctx->async_fd == B.ctx->async_fd)
		die("contexts A and B share async_fd %d", A.ctx->async_fd);
	cause_events();
	wa[0].element = qa0;
	wa[1].element = qa1;
	wa[2].element = sa;
	wb[0].element = qb0;
	/* B first: before, its event was A's to read and A's B's */
	expect_events(&B, wb, 1, "objects");
	expect_events(&A, wa, 3, "objects");
	expect_quiet("objects", NULL);
	unread_then_destroy();
	if (daemon)
		return teardown();
	printf("ready\n");
	fflush(stdout);
	port_events(IBV_EVENT_PORT_ACTIVE, "peer connected");
	side_open(&C, dev);
	expect_quiet("port", &C);
	printf("active\n");
	fflush(stdout);
	side_close(&C);
	return teardown();
}

/* The memif client: the link up while stdin is open. */
static int
peer(struct ibv_device *dev)
{
	struct ibv_context *ctx = ibv_open_device(dev);
	char c;

	if (ctx == NULL)
		die("peer: open");
	printf("up\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	if (ibv_close_device(ctx) != 0)
		die("peer: close");
	puts("ok");
	return 0;
}

int
main(int argc, char **argv)
{
	int n;
	struct ibv_device **list = ibv_get_device_list(&n);
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (list == NULL || n < 1)
		die("no device");
	if (argc == 2 && (strcmp(argv[1], "owner") == 0 || strcmp(argv[1], "daemon") == 0))
		rc = owner(list[0], strcmp(argv[1], "daemon") == 0);
	else if (argc == 2 && strcmp(argv[1], "peer") == 0)
		rc = peer(list[0]);
	else
		die("usage: %s owner|peer", argv[0]);
	ibv_free_device_list(list);
	return rc;
}
