/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dq_start - an application's start on droced as a plain process
 * (DROCE_QUEUES=region, DROCE_DAEMON; no EAL option), timed step by step
 * (dq_scale.py).  From main's first line: droce_init (droced's HELLO),
 * the device list and open (its queue region), a PD, a 64 KiB buffer of
 * its own registered as an MR, a CQ, an RC QP, and the QP through INIT,
 * RTR and RTS, connected to itself.  Prints
 *
 *   start us: droce_init I open O pd P mr M cq C qp Q to_init N to_rtr R to_rts S total T
 *   rts qpn=N addr=A rkey=K
 *
 * (CLOCK_MONOTONIC, microseconds), then holds everything and obeys lines on
 * stdin:
 *
 *   connect QPN ADDR RKEY   the QP back to RESET and through INIT, RTR, RTS
 *                           to that QP; "connected"
 *   write SEED              4 KiB of SEED's pattern WRITTEN into the other's
 *                           buffer, the completion awaited; "written SEED"
 *   check SEED              "check SEED ok" if the first 4 KiB of its own
 *                           buffer hold SEED's pattern, else "check SEED bad"
 *   exit (or end of input)  everything destroyed, device closed, exit 0
 *
 * Exit 1 when a completion failed, 2 on an error (its message on stderr).
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "droce.h"

#define BUF_LEN 65536
#define CHUNK 4096
#define WAIT_NS 10000000000ll

enum { T_MAIN, T_INIT, T_OPEN, T_PD, T_MR, T_CQ, T_QP, T_RESET, T_RTR, T_RTS, T_N };

struct app {
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *cq;
	struct droce_qp *qp;
	uint8_t *buf;
	union droce_gid gid;
	uint32_t rkey;
	uint64_t raddr;
};

static void
die(const char *what, int err)
{
	fprintf(stderr, "dq_start: %s: %s\n", what, strerror(err));
	exit(2);
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void
open_objects(struct app *a, int64_t *t)
{
	struct droce_device **list;
	struct droce_qp_init_attr init = { 0 };
	int n = 0;

	list = droce_get_device_list(&n);
	if (list == NULL || n != 1)
		die("device list", list == NULL ? errno : ENODEV);
	a->ctx = droce_open_device(list[0]);
	droce_free_device_list(list);
	if (a->ctx == NULL || droce_query_gid(a->ctx, 1, 0, &a->gid) != 0)
		die("open device", errno);
	t[T_OPEN] = now_ns();
	a->pd = droce_alloc_pd(a->ctx);
	if (a->pd == NULL)
		die("alloc pd", errno);
	t[T_PD] = now_ns();
	if (posix_memalign((void **)&a->buf, 4096, BUF_LEN) != 0)
		die("buffer", ENOMEM);
	memset(a->buf, 0, BUF_LEN);
	a->mr = droce_reg_mr(a->pd, a->buf, BUF_LEN, DROCE_ACCESS_LOCAL_WRITE |
			     DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ);
	if (a->mr == NULL)
		die("reg mr", errno);
	t[T_MR] = now_ns();
	a->cq = droce_create_cq(a->ctx, 16, a, NULL, 0);
	if (a->cq == NULL)
		die("create cq", errno);
	t[T_CQ] = now_ns();
	init.send_cq = a->cq;
	init.recv_cq = a->cq;
	init.qp_type = DROCE_QPT_RC;
	init.cap = (struct droce_qp_cap){ 8, 8, 1, 1, 0 };
	a->qp = droce_create_qp(a->pd, &init);
	if (a->qp == NULL)
		die("create qp", errno);
	t[T_QP] = now_ns();
}

static void
modify(struct app *a, struct droce_qp_attr *attr, int mask, const char *what)
{
	int rc = droce_modify_qp(a->qp, attr, mask);

	if (rc != 0)
		die(what, rc);
}

/* RESET (if asked), INIT, RTR to the QP numbered dqpn on this droced, RTS;
 * t (if not NULL) takes the times after INIT, RTR and RTS. */
static void
connect_qp(struct app *a, uint32_t dqpn, bool reset, int64_t *t)
{
	struct droce_qp_attr q = { .qp_state = DROCE_QPS_RESET };

	if (reset)
		modify(a, &q, DROCE_QP_STATE, "RESET");
	q = (struct droce_qp_attr){ .qp_state = DROCE_QPS_INIT, .port_num = 1,
		.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ };
	modify(a, &q, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
	       DROCE_QP_ACCESS_FLAGS, "INIT");
	if (t != NULL)
		t[T_RESET] = now_ns();
	q = (struct droce_qp_attr){ .qp_state = DROCE_QPS_RTR, .path_mtu = DROCE_MTU_1024,
				    .dest_qp_num = dqpn, .max_dest_rd_atomic = 1,
				    .min_rnr_timer = 1 };
	q.ah_attr.is_global = 1;
	q.ah_attr.port_num = 1;
	q.ah_attr.grh.hop_limit = 64;
	q.ah_attr.grh.dgid = a->gid;	/* one droced: its own GID */
	modify(a, &q, DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN |
	       DROCE_QP_RQ_PSN | DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER, "RTR");
	if (t != NULL)
		t[T_RTR] = now_ns();
	q = (struct droce_qp_attr){ .qp_state = DROCE_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				    .rnr_retry = 7, .max_rd_atomic = 1 };
	modify(a, &q, DROCE_QP_STATE | DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
	       DROCE_QP_RNR_RETRY | DROCE_QP_SQ_PSN | DROCE_QP_MAX_QP_RD_ATOMIC, "RTS");
	if (t != NULL)
		t[T_RTS] = now_ns();
}

static uint8_t
pattern(uint32_t seed, uint32_t k)
{
	return (uint8_t)(seed * 131 + k * 7 + (k >> 8));
}

/* 4 KiB of seed's pattern WRITTEN to the other's buffer, its completion
 * polled (the only work request this QP ever has in flight). */
static void
write_to(struct app *a, uint32_t seed)
{
	struct droce_sge sge = { (uint64_t)(uintptr_t)a->buf + CHUNK, CHUNK, a->mr->lkey };
	struct droce_send_wr wr = { .wr_id = seed, .sg_list = &sge, .num_sge = 1,
				    .opcode = DROCE_WR_RDMA_WRITE,
				    .send_flags = DROCE_SEND_SIGNALED }, *bad;
	struct droce_wc wc;
	int64_t end = now_ns() + WAIT_NS;
	int n, rc;

	for (uint32_t k = 0; k < CHUNK; k++)
		a->buf[CHUNK + k] = pattern(seed, k);
	wr.wr.rdma.remote_addr = a->raddr;
	wr.wr.rdma.rkey = a->rkey;
	rc = droce_post_send(a->qp, &wr, &bad);
	if (rc != 0)
		die("post send", rc);
	while ((n = droce_poll_cq(a->cq, 1, &wc)) == 0) {
		if (now_ns() > end)
			die("the WRITE's completion", ETIMEDOUT);
		sched_yield();
	}
	if (n < 0 || wc.status != DROCE_WC_SUCCESS || wc.opcode != DROCE_WC_RDMA_WRITE ||
	    wc.wr_id != seed || wc.qp_num != a->qp->qp_num) {
		printf("dq_start: FAIL: the WRITE's completion: %d, status %s, opcode %d\n", n,
		       n > 0 ? droce_wc_status_str(wc.status) : "-", n > 0 ? (int)wc.opcode : -1);
		exit(1);
	}
}

static bool
holds(const struct app *a, uint32_t seed)
{
	for (uint32_t k = 0; k < CHUNK; k++)
		if (a->buf[k] != pattern(seed, k))
			return false;
	return true;
}

static void
commands(struct app *a)
{
	char line[128];
	uint32_t qpn, seed;

	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (sscanf(line, "connect %u %" SCNx64 " %x", &qpn, &a->raddr, &a->rkey) == 3) {
			connect_qp(a, qpn, true, NULL);
			printf("connected\n");
		} else if (sscanf(line, "write %u", &seed) == 1) {
			write_to(a, seed);
			printf("written %u\n", seed);
		} else if (sscanf(line, "check %u", &seed) == 1) {
			printf("check %u %s\n", seed, holds(a, seed) ? "ok" : "bad");
		} else if (strncmp(line, "exit", 4) == 0) {
			break;
		} else {
			die(line, EINVAL);
		}
		fflush(stdout);
	}
}

int
main(int argc, char **argv)
{
	static const char *const step[T_N] = { "", "droce_init", "open", "pd", "mr", "cq",
					       "qp", "to_init", "to_rtr", "to_rts" };
	int64_t t[T_N];
	struct app a = { 0 };
	int ret;

	t[T_MAIN] = now_ns();
	ret = droce_init(argc, argv);
	if (ret < 0)
		die("droce_init", errno);
	t[T_INIT] = now_ns();
	open_objects(&a, t);
	connect_qp(&a, a.qp->qp_num, false, t);
	printf("start us:");
	for (int i = T_INIT; i < T_N; i++)
		printf(" %s %" PRId64, step[i], (t[i] - t[i - 1]) / 1000);
	printf(" total %" PRId64 "\n", (t[T_RTS] - t[T_MAIN]) / 1000);
	printf("rts qpn=%u addr=0x%" PRIx64 " rkey=0x%x\n", a.qp->qp_num,
	       (uint64_t)(uintptr_t)a.buf, a.mr->rkey);
	fflush(stdout);
	commands(&a);
	if (droce_destroy_qp(a.qp) != 0 || droce_destroy_cq(a.cq) != 0 ||
	    droce_dereg_mr(a.mr) != 0 || droce_dealloc_pd(a.pd) != 0 ||
	    droce_close_device(a.ctx) != 0)
		die("teardown", errno);
	free(a.buf);
	droce_cleanup();
	return 0;
}
