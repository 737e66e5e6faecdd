/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_lifecycle.c - a device's life in one process, as rdma-core's own
 * tests use it (built against the system's verbs.h, run on the drop-in):
 * ROUNDS times, the device list fetched, the device opened twice (two
 * contexts at once, each with its own PD, MR, CQ and QP), the two QPs
 * connected to each other through the one port (loopback: same GID), a
 * WRITE, a SEND and a READ checked byte by byte, then every object
 * destroyed and both contexts closed.  Prints "ok" and exits 0; "FAIL: "
 * and exit 1 otherwise.
 *
 * "fork": one such pair, a round, then two children forked: the first does
 * no RDMA and leaves with exit(0) (its atexit handlers run); the second
 * uses the verbs it inherited and must get clear errors (the device list
 * empty with errno ENODEV, opening the device NULL, posting on the
 * parent's QP, polling its CQ and taking its context's async events
 * refused with EPERM), never the parent's
 * objects; then the parent's second round must pass byte by byte; then,
 * with everything closed, a third child exits and the parent opens the
 * device again for a third round.
 *
 * "clean": a QP moved to RESET leaves none of its completions not yet
 * polled in its CQ, and only its own go (as libmlx5's cq clean; rdma-core's
 * tests restate a QP from ERR and expect its next completion, not the
 * flushes of before): two QPs in INIT on one CQ, two receives posted on
 * each, both moved to ERR, their four flushed completions left unpolled
 * for 200 ms (time for droced to publish them into a queue region), the
 * first QP moved to RESET; the CQ then yields exactly the second QP's
 * two, in order, WR_FLUSH_ERR, and nothing more once the first QP, back
 * in INIT, is destroyed.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dropin_rc.h"

#define ROUNDS 4
#define LEN 4096
#define WAIT_MS 5000
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t buf[2 * LEN];	/* [0, LEN): the target; [LEN, 2 LEN): local */
};

static void
side_open(struct side *s, union ibv_gid *gid)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	s->ctx = rc_open_device(gid);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = s->pd != NULL ? ibv_create_cq(s->ctx, 16, NULL, NULL, 0) : NULL;
	if (s->cq == NULL)
		die("pd/cq: %s", strerror(errno));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &qa);
	s->mr = ibv_reg_mr(s->pd, s->buf, sizeof(s->buf), ACCESS);
	if (s->qp == NULL || s->mr == NULL)
		die("qp/mr: %s", strerror(errno));
}

static void
side_close(struct side *s)
{
	if (ibv_destroy_qp(s->qp) != 0 || ibv_dereg_mr(s->mr) != 0 ||
	    ibv_destroy_cq(s->cq) != 0 || ibv_dealloc_pd(s->pd) != 0)
		die("destroy");
	if (ibv_close_device(s->ctx) != 0)
		die("close_device");
}

/* One completion of wr_id on s's CQ, successful and of opcode op. */
static void
wait_wc(struct side *s, uint64_t wr_id, enum ibv_wc_opcode op)
{
	struct timespec t0;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((n = ibv_poll_cq(s->cq, 1, &wc)) == 0)
		if (ms_since(&t0) > WAIT_MS)
			die("no completion of wr %llu in %d ms", (unsigned long long)wr_id,
			    WAIT_MS);
	if (n < 0 || wc.status != IBV_WC_SUCCESS || wc.wr_id != wr_id || wc.opcode != op)
		die("completion: n %d status %s wr %llu opcode %d (wanted wr %llu opcode %d)",
		    n, ibv_wc_status_str(wc.status), (unsigned long long)wc.wr_id,
		    wc.opcode, (unsigned long long)wr_id, op);
}

static void
post(struct side *s, enum ibv_wr_opcode op, uint64_t wr_id, void *local,
     const struct side *remote)
{
	struct ibv_sge sge = { .addr = (uintptr_t)local, .length = LEN, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.rdma.remote_addr = (uintptr_t)remote->buf;
	wr.wr.rdma.rkey = remote->mr->rkey;
	if (ibv_post_send(s->qp, &wr, &bad) != 0)
		die("post_send %d", op);
}

static void
fill(uint8_t *p, unsigned int seed)
{
	for (size_t i = 0; i < LEN; i++)
		p[i] = (uint8_t)(seed * 31 + i * 7);
}

/* a WRITE, a SEND and a READ between a and b, checked byte by byte */
static void
traffic(struct side *a, struct side *b, unsigned int r)
{
	struct ibv_sge rsge;
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &rsge, .num_sge = 1 }, *rbad;

	/* WRITE: a's local half into b's target half */
	fill(a->buf + LEN, r);
	post(a, IBV_WR_RDMA_WRITE, 1, a->buf + LEN, b);
	wait_wc(a, 1, IBV_WC_RDMA_WRITE);
	if (memcmp(b->buf, a->buf + LEN, LEN) != 0)
		die("round %u: WRITE: b's buffer differs", r);
	/* SEND: b's local half into a's target half */
	rsge = (struct ibv_sge){ .addr = (uintptr_t)a->buf, .length = LEN, .lkey = a->mr->lkey };
	if (ibv_post_recv(a->qp, &rwr, &rbad) != 0)
		die("post_recv");
	fill(b->buf + LEN, r + 100);
	post(b, IBV_WR_SEND, 2, b->buf + LEN, a);
	wait_wc(b, 2, IBV_WC_SEND);
	wait_wc(a, 9, IBV_WC_RECV);
	if (memcmp(a->buf, b->buf + LEN, LEN) != 0)
		die("round %u: SEND: a's buffer differs", r);
	/* READ: b's target half (a's WRITE) back into b's local half */
	post(b, IBV_WR_RDMA_READ, 3, b->buf + LEN, a);
	wait_wc(b, 3, IBV_WC_RDMA_READ);
	if (memcmp(b->buf + LEN, a->buf, LEN) != 0)
		die("round %u: READ: b's local half differs", r);
}

static void
pair_open(struct side *a, struct side *b)
{
	union ibv_gid ga, gb;

	side_open(a, &ga);
	side_open(b, &gb);
	if (a->ctx == b->ctx || memcmp(&ga, &gb, sizeof(ga)) != 0)
		die("two contexts of one device: distinct contexts, one GID");
	connect_qp(a->qp, b->qp->qp_num, &gb, ACCESS);
	connect_qp(b->qp, a->qp->qp_num, &ga, ACCESS);
}

static void
round_once(unsigned int r)
{
	struct side a = { 0 }, b = { 0 };

	pair_open(&a, &b);
	traffic(&a, &b, r);
	side_close(&b);
	side_close(&a);
}

/* The second child: every use of droce it inherited is refused. */
static int
child_uses_rdma(struct side *a)
{
	struct ibv_sge sge = { .addr = (uintptr_t)a->buf, .length = LEN, .lkey = a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_async_event ev;
	struct ibv_device **list;
	struct ibv_wc wc;
	int n, rc;

	errno = 0;
	list = ibv_get_device_list(&n);
	if (list != NULL || errno != ENODEV) {
		printf("FAIL: child: ibv_get_device_list: %p, errno %d (want NULL, ENODEV)\n",
		       (void *)list, errno);
		return 1;
	}
	rc = ibv_post_send(a->qp, &wr, &bad);
	if (rc != EPERM) {
		printf("FAIL: child: ibv_post_send on the parent's QP: %d (want EPERM)\n", rc);
		return 1;
	}
	n = ibv_poll_cq(a->cq, 1, &wc);
	if (n >= 0) {
		printf("FAIL: child: ibv_poll_cq on the parent's CQ: %d (want < 0)\n", n);
		return 1;
	}
	/* (the eventfds are the parent's too: a read would take its events) */
	errno = 0;
	if (ibv_get_async_event(a->qp->context, &ev) != -1 || errno != EPERM) {
		printf("FAIL: child: ibv_get_async_event on the parent's context: errno %d "
		       "(want -1, EPERM)\n", errno);
		return 1;
	}
	return 0;
}

static void
reap(pid_t pid, const char *what)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("child %s: status 0x%x", what, st);
}

static void
fork_rounds(void)
{
	struct side a = { 0 }, b = { 0 };
	pid_t quiet, user;

	pair_open(&a, &b);
	traffic(&a, &b, 1);
	fflush(stdout);
	quiet = fork();
	if (quiet < 0)
		die("fork: %s", strerror(errno));
	if (quiet == 0)
		exit(0);	/* no RDMA; atexit handlers run */
	reap(quiet, "without RDMA");
	user = fork();
	if (user < 0)
		die("fork: %s", strerror(errno));
	if (user == 0)
		exit(child_uses_rdma(&a));
	reap(user, "using the parent's verbs");
	traffic(&a, &b, 2);
	side_close(&b);
	side_close(&a);
	/* with nothing open, a child's exit must not close the parent's port */
	quiet = fork();
	if (quiet < 0)
		die("fork: %s", strerror(errno));
	if (quiet == 0)
		exit(0);
	reap(quiet, "without RDMA, nothing open");
	round_once(3);
}

static void
post_recv_id(struct side *s, struct ibv_qp *qp, uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf, .length = 64, .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 }, *bad;

	if (ibv_post_recv(qp, &wr, &bad) != 0)
		die("post_recv %llu", (unsigned long long)wr_id);
}

static void
to_state(struct ibv_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = st };
	int mask = IBV_QP_STATE;

	if (st == IBV_QPS_INIT)
		mask |= init_attr(&a, ACCESS);
	if (ibv_modify_qp(qp, &a, mask) != 0)
		die("modify_qp to %d", st);
}

static void
reset_cleans(void)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	static struct side a;	/* not on the stack: droced moves a buffer onto a memfd */
	struct ibv_wc wc[8];
	struct timespec t0;
	union ibv_gid gid;
	struct ibv_qp *qc;
	uint32_t qc_num;
	int got = 0, n;

	side_open(&a, &gid);
	qa.send_cq = a.cq;
	qa.recv_cq = a.cq;
	qc = ibv_create_qp(a.pd, &qa);
	if (qc == NULL)
		die("second qp: %s", strerror(errno));
	qc_num = qc->qp_num;
	to_state(a.qp, IBV_QPS_INIT);
	to_state(qc, IBV_QPS_INIT);
	post_recv_id(&a, a.qp, 1);
	post_recv_id(&a, qc, 3);
	post_recv_id(&a, a.qp, 2);
	post_recv_id(&a, qc, 4);
	to_state(a.qp, IBV_QPS_ERR);
	to_state(qc, IBV_QPS_ERR);
	usleep(200 * 1000);
	to_state(a.qp, IBV_QPS_RESET);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < 1000) {
		n = ibv_poll_cq(a.cq, 8 - got, wc + got);
		if (n < 0)
			die("poll_cq %d", n);
		got += n;
		if (got == 8)
			break;
	}
	if (got != 2)
		die("%d completions after the reset (want the second QP's 2): first wr %llu "
		    "qp %u", got, got > 0 ? (unsigned long long)wc[0].wr_id : 0ull,
		    got > 0 ? wc[0].qp_num : 0u);
	for (int i = 0; i < 2; i++)
		if (wc[i].wr_id != (uint64_t)(3 + i) || wc[i].qp_num != qc_num ||
		    wc[i].status != IBV_WC_WR_FLUSH_ERR)
			die("completion %d: wr %llu qp %u status %s (want wr %d qp %u "
			    "WR_FLUSH_ERR)", i, (unsigned long long)wc[i].wr_id, wc[i].qp_num,
			    ibv_wc_status_str(wc[i].status), 3 + i, qc_num);
	to_state(a.qp, IBV_QPS_INIT);
	if (ibv_destroy_qp(a.qp) != 0)
		die("destroy_qp");
	usleep(50 * 1000);
	n = ibv_poll_cq(a.cq, 8, wc);
	if (n != 0)
		die("%d completions after the reset QP's destroy (want none)", n);
	a.qp = qc;
	side_close(&a);
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "clean") == 0) {
		reset_cleans();
		printf("ok: a QP's unpolled completions left its CQ at RESET, the other "
		       "QP's 2 stayed\n");
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "fork") == 0) {
		fork_rounds();
		printf("ok: a round, a child without RDMA exited, a child's verbs refused, "
		       "a round\n");
		return 0;
	}
	for (unsigned int r = 0; r < ROUNDS; r++)
		round_once(r);
	printf("ok: %d rounds of open x2, loopback WRITE/SEND/READ, close x2\n", ROUNDS);
	return 0;
}
