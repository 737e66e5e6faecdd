/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dq_app - a program of droce.h on droced (dq_test.py).  With
 * DROCE_DAEMON and no EAL options it is a plain process on a queue region
 * (lib/verbs provider_dq, the default); with DROCE_QUEUES=shared and EAL
 * options it is droced's secondary, the same code otherwise.  Its buffer is its own
 * memory (posix_memalign).  Two of them meet on droced's loopback.
 *
 *   dq_app [EAL --] [droce options] server ROUNDS [events]
 *   dq_app [EAL --] [droce options] client ROUNDS
 *       prints "ready qpn=N addr=A rkey=K", reads the other's "QPN ADDR RKEY".
 *       Each round: the client WRITEs a pattern into the server's chunk,
 *       SENDs the round's number (imm); the server checks every byte of the
 *       chunk and of the SEND, WRITEs its answer into the client's chunk
 *       and SENDs it back; the client checks both, then READs the server's
 *       chunk back and checks it.  Every completion: its status, opcode,
 *       wr_id, byte_len, qp_num.  events: the server waits on a completion
 *       channel (req_notify_cq, get_cq_event, ack) instead of polling.
 *   dq_app ... server|client ROUNDS inline
 *       The QPs are asked for max_inline_data 256 (and get it; 257 is
 *       EINVAL); each round the client WRITEs and SENDs (imm = round) a
 *       size of 0, 1, 63, 64, 65, 192, 193 or 256 bytes inline, from its
 *       stack with lkey 0, its source overwritten at once after the post,
 *       the WRITE in two SGEs; the server checks every byte and answers
 *       with an empty SEND; an inline SEND of 257 bytes fails EINVAL at
 *       the post, nothing posted; so does a chain whose first WR is a bind
 *       naming no window, its bad_wr the first.
 *   dq_app ... server|client ROUNDS srq
 *       The server's QP receives from an SRQ of 16 (max_wr 32) whose limit
 *       is armed at 8: it reposts nothing until 9 SENDs came, then takes
 *       the one SRQ_LIMIT_REACHED naming its SRQ (the limit then 0) and
 *       reposts; every round as above, SENDs of 256 bytes checked, the
 *       answer a SEND back.  Then the client (rnr_retry 1) SENDs 17 at
 *       once: 16 land in the SRQ's receives, the 17th ends
 *       RNR_RETRY_EXC_ERR; no other event came.  Then the server posts a
 *       receive with the client's key (not its own) into an SRQ of its
 *       own and SENDs into it from a QP on that SRQ connected to itself:
 *       the receive LOC_PROT_ERR, the QP in ERR (the SEND flushed),
 *       QP_LAST_WQE_REACHED naming it, no SRQ_ERR.
 *   dq_app ... server|client 1 mw
 *       The server binds a type-1 window (droce_bind_mw) over its first
 *       chunk and a type-2 one (a BIND_MW work request) over its second,
 *       each completing BIND_MW, and SENDs their rkeys; the client WRITEs
 *       both through them, READs the second back, SENDs with
 *       invalidation of the type-2 rkey; the server checks the bytes and
 *       the invalidated rkey, unbinds the type-1 window; the client's
 *       WRITE through the invalidated rkey then ends REM_ACCESS_ERR.
 *   dq_app ... server|client 1 sge
 *       (A plain process only: the limits are the region's.)  The device
 *       answers max_sge 16; a QP of max_send_wr 4096 and 16 SGEs (3 ring
 *       entries each), one of max_recv_wr 2048 and 16 SGEs (4 each), an
 *       SRQ of max_wr 2048 and 16 SGEs: EINVAL; a SEND of 17 SGEs, and of
 *       6 on a QP granted 5: EINVAL.  The QPs get 16 SGEs, the server's
 *       receives come from an SRQ of 16.  The client SENDs 5 SGEs, then 16
 *       (lengths 7 + 13k, 256 bytes apart) into the SRQ's receives of 5
 *       and 16 (lengths reversed); the server SENDs 5 and 16 into the
 *       client's receives of 5 and 16; the client WRITEs gathered from 16
 *       SGEs into the server's buffer, READs it back scattered into 16,
 *       and SENDs; the server checks the WRITE's bytes.  Every piece
 *       checked byte for byte, every gap between pieces untouched, every
 *       completion's status, opcode, wr_id, byte_len.
 *   dq_app ... server|client ROUNDS regs
 *       Before the rounds above, one more CQ, then REGS more MRs of its own
 *       memory (a page each), each registered, distinct keys: droced's
 *       table of its objects grows while one of them is registered.  The
 *       MRs and the CQ are freed at the end.
 *   dq_app ... pong N SIZE | ping N SIZE
 *       N round trips of a SIZE-byte SEND each way (both poll their CQ);
 *       ping prints the median, mean and 99th percentile in microseconds.
 *
 * Each prints "maps...: hugepage mappings N" (hugepage_maps) at its start,
 * once its device, MR, CQ and QP are open, and at its end; then holds its
 * objects until a line on stdin, and frees them all.
 * Exit 0 when all it checked held, 1 when a check failed, 2 on an error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dq.h"
#include "droce.h"

#define BUF_LEN 65536
#define CHUNK 4096		/* a round's WRITE / READ */
#define CHUNKS 8
#define MSG_OFF 49152		/* the SENDs' part of the buffer */
#define MSG 256
#define RECVS 16
#define WAIT_NS 10000000000ll
#define SRQ_MAX 32		/* the SRQ's max_wr */
#define SRQ_RECVS 16		/* receives posted in it */
#define SRQ_LIMIT 8
#define INL_MAX 256		/* droce.h's DROCE_MAX_INLINE_DATA */
#define INL_OFF (CHUNKS * CHUNK + CHUNK)	/* the inline WRITEs' place */
#define REGS 24			/* regs: the MRs registered beyond the buffer's */

enum { WR_WRITE = 1, WR_SEND = 2, WR_READ = 3 };

struct app {
	struct droce_context *ctx;
	struct droce_comp_channel *ch;
	struct droce_pd *pd;
	struct droce_mr *mr;
	struct droce_cq *cq;
	struct droce_qp *qp;
	uint8_t *buf;
	union droce_gid gid;
	uint32_t rqpn, rkey;
	uint64_t raddr;
	bool events;
	bool server;
	bool inl;		/* inline rounds */
	bool srq_mode;		/* the server's receives from an SRQ */
	bool mw_mode;		/* memory windows */
	bool sge_mode;		/* work requests of many SGEs */
	uint32_t max_sge;	/* the device's (sge_mode) */
	bool regs_mode;		/* many MRs */
	struct droce_cq *cq2;	/* regs: the CQ more */
	struct droce_mr *mrs[REGS];
	uint8_t *pages;
	struct droce_srq *srq;
	uint32_t ncqe;		/* completions taken */
};

static void
die(const char *what, int err)
{
	fprintf(stderr, "dq_app: %s: %s\n", what, strerror(err));
	exit(2);
}

static void
check(bool ok, const char *what, uint32_t round)
{
	if (!ok) {
		printf("dq_app: FAIL: %s (round %u)\n", what, round);
		fflush(stdout);
		exit(1);
	}
}

static int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/*
 * Mappings of hugepage memory in /proc/self/smaps: any whose kernel page
 * is not the base page (hugetlbfs files such as droced's
 * /dev/hugepages/<prefix>map_*, or memfd hugepages), or whose path is on a
 * hugetlbfs mount.  0 in a plain process: it cannot reach droced's memory.
 */
static int
hugepage_maps(void)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[512], mounts[8][260];
	int n = 0, nm = 0;
	FILE *m = fopen("/proc/mounts", "re");

	if (f == NULL || m == NULL)
		die("/proc/self/smaps, /proc/mounts", errno);
	while (nm < 8 && fgets(line, sizeof(line), m) != NULL) {
		char dir[256], type[64];

		if (sscanf(line, "%*s %255s %63s", dir, type) == 2 && strcmp(type, "hugetlbfs") == 0)
			snprintf(mounts[nm++], sizeof(mounts[0]), "%s/", dir);
	}
	fclose(m);
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long kb;
		char *path = strchr(line, '/');

		if (sscanf(line, "KernelPageSize: %lu kB", &kb) == 1) {
			n += kb != 4;
			continue;
		}
		for (int i = 0; i < nm && path != NULL && strchr(line, '-') < path; i++)
			n += strncmp(path, mounts[i], strlen(mounts[i])) == 0;
	}
	fclose(f);
	return n;
}

/*
 * A plain process's queue region (the "/memfd:droce-dq" mapping), its
 * doorbell flag and slot 0's indices, for a timeout's diagnosis.
 */
static void
region_dump(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uintptr_t lo = 0;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, "/memfd:droce-dq") != NULL && sscanf(line, "%" SCNxPTR, &lo) == 1)
			break;
	if (f != NULL)
		fclose(f);
	if (lo != 0) {
		void *b = (void *)lo;
		const struct dq_header *h = b;
		struct dq_geom g = h->geom;

		fprintf(stderr, "dq_app: region: sleeping %u; slot 0: sq %u/%u rq %u/%u cq %u/%u "
			"arm %u fired %u; events %u/%u\n", dq_bell(b)->sleeping,
			dq_sq(b, &g, 0)->prod, dq_sq(b, &g, 0)->cons, dq_rq(b, &g, 0)->prod,
			dq_rq(b, &g, 0)->cons, dq_cq(b, &g, 0)->prod, dq_cq(b, &g, 0)->cons,
			dq_cq_notify(b, &g, 0)->arm, dq_cq_notify(b, &g, 0)->fired,
			dq_evq(b, &g, 0)->prod, dq_evq(b, &g, 0)->cons);
	}
}

/* The device as the region carries it (lib/verbs provider_dq): the
 * engine's 16 SGEs a work request (a descriptor's 4, the rest in the ring
 * entries after it), 64 QP and CQ slots, rings of at most 4096 entries.
 * (A secondary, with DROCE_QUEUES=shared, has droced's device.) */
static void
check_limits(struct droce_context *ctx)
{
	const char *queues = getenv("DROCE_QUEUES");
	struct droce_device_attr d;

	if (queues != NULL && strcmp(queues, "shared") == 0)
		return;
	check(droce_query_device(ctx, &d) == 0, "query_device", 0);
	check(d.max_sge == DROCE_MAX_SGE && d.max_sge_rd == DROCE_MAX_SGE &&
	      d.max_srq_sge == DROCE_MAX_SGE, "query_device: 16 SGEs a work request",
	      (uint32_t)d.max_sge);
	check(d.max_qp == 64 && d.max_srq == 64 && d.max_cq == 64,
	      "query_device: the region's 64 QP and CQ slots", (uint32_t)d.max_qp);
	check(d.max_qp_wr <= 4096 && d.max_srq_wr <= 4096 && d.max_qp_wr > 0,
	      "query_device: work queues within the rings", (uint32_t)d.max_qp_wr);
	/* a CQ may be deeper than its ring: droced's CQ holds the rest */
	check(d.max_cqe == DROCE_MAX_CQE, "query_device: droced's max_cqe", (uint32_t)d.max_cqe);
}

/* A QP of this cap on a CQ of its own: created (then destroyed) or not. */
static bool
qp_fits(struct app *a, struct droce_cq *cq, struct droce_qp_cap cap)
{
	struct droce_qp_init_attr init = { .send_cq = cq, .recv_cq = cq, .cap = cap,
					   .qp_type = DROCE_QPT_RC };
	struct droce_qp *qp = droce_create_qp(a->pd, &init);

	if (qp == NULL)
		return false;
	if (droce_destroy_qp(qp) != 0)
		die("destroy qp", errno);
	return true;
}

/*
 * The region's SGE limits: the device's max_sge; QPs and SRQs whose
 * max_wr times the entries of their SGEs do not fit a ring (4096), and
 * work requests above a QP's granted SGEs, refused (EINVAL).
 */
static void
sge_limits(struct app *a)
{
	struct droce_device_attr d;
	struct droce_srq_init_attr si = { .attr = { .max_wr = 2048, .max_sge = DROCE_MAX_SGE } };
	struct droce_qp_init_attr init = { .qp_type = DROCE_QPT_RC };
	struct droce_sge sge[DROCE_MAX_SGE + 1] = { { 0 } };
	struct droce_send_wr wr = { .sg_list = sge, .opcode = DROCE_WR_SEND }, *bad;
	struct droce_cq *cq;
	struct droce_qp *qp;

	check(droce_query_device(a->ctx, &d) == 0, "query_device", 0);
	check(d.max_sge == DROCE_MAX_SGE, "query_device: max_sge 16", (uint32_t)d.max_sge);
	a->max_sge = (uint32_t)d.max_sge;
	a->pd = droce_alloc_pd(a->ctx);
	cq = droce_create_cq(a->ctx, 16, NULL, NULL, 0);
	if (a->pd == NULL || cq == NULL)
		die("pd, cq", errno);
	check(!qp_fits(a, cq, (struct droce_qp_cap){ 4096, 16, DROCE_MAX_SGE, 1, 0 }) &&
	      errno == EINVAL, "4096 send WRs of 16 SGEs: EINVAL", 0);
	check(!qp_fits(a, cq, (struct droce_qp_cap){ 16, 2048, 1, DROCE_MAX_SGE, 0 }) &&
	      errno == EINVAL, "2048 receive WRs of 16 SGEs: EINVAL", 0);
	check(qp_fits(a, cq, (struct droce_qp_cap){ 1024, 1024, DROCE_MAX_SGE, DROCE_MAX_SGE, 0 }),
	      "1024 WRs of 16 SGEs each way fit", 0);
	check(droce_create_srq(a->pd, &si) == NULL && errno == EINVAL,
	      "an SRQ of 2048 WRs of 16 SGEs: EINVAL", 0);
	init.send_cq = init.recv_cq = cq;
	init.cap = (struct droce_qp_cap){ 8, 8, 5, 5, 0 };
	qp = droce_create_qp(a->pd, &init);
	if (qp == NULL)
		die("create qp", errno);
	check(init.cap.max_send_sge == 5, "5 SGEs granted", 0);
	wr.num_sge = 6;
	check(droce_post_send(qp, &wr, &bad) == EINVAL && bad == &wr,
	      "a SEND of 6 SGEs on a QP of 5: EINVAL", 0);
	if (droce_destroy_qp(qp) != 0 || droce_destroy_cq(cq) != 0)
		die("destroy", errno);
	(void)droce_dealloc_pd(a->pd);
	a->pd = NULL;
}

static void
open_all(struct app *a)
{
	struct droce_device **list;
	struct droce_qp_init_attr init = { 0 };
	int n = 0;

	list = droce_get_device_list(&n);
	if (list == NULL || n != 1)
		die("device list", list == NULL ? errno : ENODEV);
	a->ctx = droce_open_device(list[0]);
	droce_free_device_list(list);
	if (a->ctx == NULL)
		die("open device", errno);
	if (droce_query_gid(a->ctx, 1, 0, &a->gid) != 0)
		die("query gid", errno);
	check_limits(a->ctx);
	if (a->sge_mode)
		sge_limits(a);
	a->pd = droce_alloc_pd(a->ctx);
	if (a->pd == NULL)
		die("alloc pd", errno);
	if (posix_memalign((void **)&a->buf, 4096, BUF_LEN) != 0)
		die("buffer", ENOMEM);
	memset(a->buf, 0, BUF_LEN);
	a->mr = droce_reg_mr(a->pd, a->buf, BUF_LEN, DROCE_ACCESS_LOCAL_WRITE |
			     DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ |
			     (a->mw_mode ? DROCE_ACCESS_MW_BIND : 0));
	if (a->mr == NULL)
		die("reg mr", errno);
	if (a->events) {
		a->ch = droce_create_comp_channel(a->ctx);
		if (a->ch == NULL)
			die("comp channel", errno);
	}
	a->cq = droce_create_cq(a->ctx, 256, a, a->ch, 0);
	if (a->cq == NULL)
		die("create cq", errno);
	if ((a->srq_mode || a->sge_mode) && a->server) {
		struct droce_srq_init_attr si = { .srq_context = a, .attr = { .max_wr = SRQ_MAX } };
		struct droce_srq_attr sa;

		si.attr.max_sge = a->sge_mode ? a->max_sge : 1;
		a->srq = droce_create_srq(a->pd, &si);
		if (a->srq == NULL)
			die("create srq", errno);
		if (droce_query_srq(a->srq, &sa) != 0)
			die("query srq", errno);
		check(sa.max_wr >= SRQ_MAX && sa.max_sge >= 1 && sa.srq_limit == 0,
		      "the SRQ's attributes", 0);
		init.srq = a->srq;
	}
	init.send_cq = a->cq;
	init.recv_cq = a->cq;
	init.qp_type = DROCE_QPT_RC;
	init.cap = (struct droce_qp_cap){ 64, RECVS, 2, 1, a->inl ? INL_MAX + 1 : 0 };
	if (a->sge_mode)
		init.cap = (struct droce_qp_cap){ 64, RECVS, a->max_sge, a->max_sge, 0 };
	if (a->inl) {
		/* above droce.h's limit: refused, nothing made */
		a->qp = droce_create_qp(a->pd, &init);
		check(a->qp == NULL && errno == EINVAL, "a QP of max_inline_data 257: EINVAL", 0);
		init.cap.max_inline_data = INL_MAX;
	}
	a->qp = droce_create_qp(a->pd, &init);
	if (a->qp == NULL)
		die("create qp", errno);
	if (a->inl) {
		struct droce_qp_attr qa;
		struct droce_qp_init_attr qi;

		check(init.cap.max_inline_data == INL_MAX, "max_inline_data 256 given", 0);
		if (droce_query_qp(a->qp, &qa, DROCE_QP_CAP, &qi) != 0)
			die("query qp", errno);
		check(qa.cap.max_inline_data == INL_MAX && qi.cap.max_inline_data == INL_MAX,
		      "max_inline_data 256 queried", 0);
		printf("max_inline_data %u\n", qa.cap.max_inline_data);
	}
}

/*
 * One CQ more, then REGS MRs of a page of our own memory each: with the
 * PD, the buffer's MR (its mapping and the MR), the CQs and the QP, the
 * tables droced keeps of our objects (16, 32, ... entries) fill while an
 * MR's mapping is added, before its MR is.
 */
static void
many_mrs(struct app *a)
{
	a->cq2 = droce_create_cq(a->ctx, 16, NULL, NULL, 0);
	if (a->cq2 == NULL || posix_memalign((void **)&a->pages, 4096, REGS * 4096) != 0)
		die("cq, pages", ENOMEM);
	memset(a->pages, 0, REGS * 4096);
	for (uint32_t k = 0; k < REGS; k++) {
		a->mrs[k] = droce_reg_mr(a->pd, a->pages + k * 4096, 4096,
					 DROCE_ACCESS_LOCAL_WRITE);
		check(a->mrs[k] != NULL, "an MR of a page of our own", k);
		for (uint32_t j = 0; j < k; j++)
			check(a->mrs[j]->lkey != a->mrs[k]->lkey, "distinct keys", k);
	}
	printf("%u MRs more registered\n", REGS);
}

static void
modify(struct app *a, struct droce_qp_attr *attr, int mask, const char *what)
{
	int rc = droce_modify_qp(a->qp, attr, mask);

	if (rc != 0)
		die(what, rc);
}

static void
connect_qp(struct app *a)
{
	struct droce_qp_attr q = { .qp_state = DROCE_QPS_INIT, .port_num = 1,
		.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ };

	modify(a, &q, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
	       DROCE_QP_ACCESS_FLAGS, "INIT");
	q = (struct droce_qp_attr){ .qp_state = DROCE_QPS_RTR, .path_mtu = DROCE_MTU_1024,
				    .dest_qp_num = a->rqpn, .max_dest_rd_atomic = 4,
				    .min_rnr_timer = 1 };
	/* an SRQ's receive reposted in the ring a moment after the answer's
	 * SEND was taken: the RNR retry (10.24 ms later, IBTA 9.7.5.2.8) finds it */
	if (a->srq_mode)
		q.min_rnr_timer = 20;
	q.ah_attr.is_global = 1;
	q.ah_attr.port_num = 1;
	q.ah_attr.grh.hop_limit = 64;
	q.ah_attr.grh.dgid = a->gid;	/* one droced: its own GID */
	modify(a, &q, DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN |
	       DROCE_QP_RQ_PSN | DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER, "RTR");
	q = (struct droce_qp_attr){ .qp_state = DROCE_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				    .rnr_retry = a->srq_mode ? 1 : 7, .max_rd_atomic = 4 };
	modify(a, &q, DROCE_QP_STATE | DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
	       DROCE_QP_RNR_RETRY | DROCE_QP_SQ_PSN | DROCE_QP_MAX_QP_RD_ATOMIC, "RTS");
}

static void
post_recv(struct app *a, uint32_t k, uint32_t len)
{
	struct droce_sge sge = { (uint64_t)(uintptr_t)(a->buf + MSG_OFF + MSG * k), len,
				 a->mr->lkey };
	struct droce_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = droce_post_recv(a->qp, &wr, &bad);

	if (rc != 0)
		die("post recv", rc);
}

static void
post_send(struct app *a, enum droce_wr_opcode op, uint64_t wr_id, uint32_t off, uint32_t len,
	  uint64_t raddr, uint32_t imm)
{
	struct droce_sge sge = { (uint64_t)(uintptr_t)(a->buf + off), len, a->mr->lkey };
	struct droce_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
				    .send_flags = DROCE_SEND_SIGNALED }, *bad;
	int rc;

	wr.imm_data = htonl(imm);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = a->rkey;
	rc = droce_post_send(a->qp, &wr, &bad);
	if (rc != 0)
		die("post send", rc);
}

/* The next completion: polled, or (events) waited for on the channel. */
static void
next_wc(struct app *a, struct droce_wc *wc)
{
	int64_t end = now_ns() + WAIT_NS, stall = now_ns() + WAIT_NS / 2;
	int n;

	while ((n = droce_poll_cq(a->cq, 1, wc)) == 0) {
		if (a->events) {
			struct droce_cq *cq;
			void *cq_ctx;

			if (droce_req_notify_cq(a->cq, 0) != 0)
				die("req notify", errno);
			n = droce_poll_cq(a->cq, 1, wc);	/* arm, poll, wait */
			if (n != 0)
				break;
			if (droce_get_cq_event(a->ch, &cq, &cq_ctx) != 0)
				die("get cq event", errno);
			check(cq == a->cq && cq_ctx == a, "the event's CQ", 0);
			droce_ack_cq_events(cq, 1);
			continue;
		}
		if (stall != 0 && now_ns() > stall) {
			fprintf(stderr, "dq_app: stalled: %u completions\n", a->ncqe);
			region_dump();
			fflush(stderr);
			stall = 0;
		}
		if (now_ns() > end) {
			fprintf(stderr, "dq_app: %u completions before\n", a->ncqe);
			region_dump();
			die("no completion", ETIMEDOUT);
		}
		sched_yield();	/* droced and its engine share the machine's cores */
	}
	if (n < 0)
		die("poll cq", EIO);
	a->ncqe++;
}

static void
expect_wc(struct app *a, enum droce_wc_opcode op, uint64_t wr_id, uint32_t len, uint32_t round,
	  struct droce_wc *out)
{
	struct droce_wc wc;

	next_wc(a, &wc);
	if (wc.status != DROCE_WC_SUCCESS)
		printf("dq_app: round %u: status %s (%d), opcode %d\n", round,
		       droce_wc_status_str(wc.status), wc.status, wc.opcode);
	check(wc.status == DROCE_WC_SUCCESS, "a completion's status", round);
	check(wc.opcode == op, "a completion's opcode", round);
	check(wc.qp_num == a->qp->qp_num, "a completion's qp_num", round);
	check(op == DROCE_WC_RECV || wc.wr_id == wr_id, "a completion's wr_id", round);
	check(op == DROCE_WC_RDMA_WRITE || op == DROCE_WC_SEND || wc.byte_len == len,
	      "a completion's byte_len", round);
	if (out != NULL)
		*out = wc;
}

static uint8_t
pattern(uint32_t round, uint32_t k, uint8_t who)
{
	return (uint8_t)(round * 131 + k * 7 + who);
}

static void
fill(uint8_t *p, uint32_t len, uint32_t round, uint8_t who)
{
	for (uint32_t k = 0; k < len; k++)
		p[k] = pattern(round, k, who);
}

static bool
holds(const uint8_t *p, uint32_t len, uint32_t round, uint8_t who)
{
	for (uint32_t k = 0; k < len; k++)
		if (p[k] != pattern(round, k, who))
			return false;
	return true;
}

/* "ready ..." out, the other end's "QPN ADDR RKEY" in. */
static void
exchange(struct app *a)
{
	printf("ready qpn=%u addr=0x%" PRIx64 " rkey=0x%x\n", a->qp->qp_num,
	       (uint64_t)(uintptr_t)a->buf, a->mr->rkey);
	fflush(stdout);
	if (scanf("%u %" SCNx64 " %x", &a->rqpn, &a->raddr, &a->rkey) != 3)
		die("the other end's line", EINVAL);
	while (getchar() != '\n')	/* the rest of that line */
		;
	connect_qp(a);
}

static void
client(struct app *a, uint32_t rounds)
{
	for (uint32_t k = 0; k < RECVS; k++)
		post_recv(a, k, MSG);
	printf("connected\n");
	fflush(stdout);
	for (uint32_t r = 0; r < rounds; r++) {
		uint32_t chunk = (r % CHUNKS) * CHUNK;
		struct droce_wc wc;

		fill(a->buf + chunk, CHUNK, r, 1);
		fill(a->buf + MSG_OFF - MSG, MSG, r, 3);
		post_send(a, DROCE_WR_RDMA_WRITE, WR_WRITE, chunk, CHUNK, a->raddr + chunk, 0);
		post_send(a, DROCE_WR_SEND_WITH_IMM, WR_SEND, MSG_OFF - MSG, MSG, 0, r);
		expect_wc(a, DROCE_WC_RDMA_WRITE, WR_WRITE, CHUNK, r, NULL);
		expect_wc(a, DROCE_WC_SEND, WR_SEND, MSG, r, NULL);
		/* the server's answer: its WRITE into our chunk, then its SEND */
		expect_wc(a, DROCE_WC_RECV, 0, MSG, r, &wc);
		check((wc.wc_flags & DROCE_WC_WITH_IMM) && ntohl(wc.imm_data) == r,
		      "the answer's immediate", r);
		check(holds(a->buf + MSG_OFF + MSG * wc.wr_id, MSG, r, 4), "the answer's bytes", r);
		check(holds(a->buf + chunk + CHUNK / 2, CHUNK / 2, r, 2), "the server's WRITE", r);
		post_recv(a, (uint32_t)wc.wr_id, MSG);
		/* READ back what we wrote into the server's chunk */
		memset(a->buf + CHUNKS * CHUNK, 0, CHUNK / 2);
		post_send(a, DROCE_WR_RDMA_READ, WR_READ, CHUNKS * CHUNK, CHUNK / 2,
			  a->raddr + chunk, 0);
		expect_wc(a, DROCE_WC_RDMA_READ, WR_READ, CHUNK / 2, r, NULL);
		check(holds(a->buf + CHUNKS * CHUNK, CHUNK / 2, r, 1), "the READ's bytes", r);
	}
	printf("client: %u rounds of WRITE + SEND + answer + READ, every byte and completion "
	       "right\n", rounds);
}

static void
server(struct app *a, uint32_t rounds)
{
	for (uint32_t k = 0; k < RECVS; k++)
		post_recv(a, k, MSG);
	printf("connected\n");
	fflush(stdout);
	for (uint32_t r = 0; r < rounds; r++) {
		uint32_t chunk = (r % CHUNKS) * CHUNK;
		struct droce_wc wc;

		expect_wc(a, DROCE_WC_RECV, 0, MSG, r, &wc);
		check((wc.wc_flags & DROCE_WC_WITH_IMM) && ntohl(wc.imm_data) == r,
		      "the SEND's immediate", r);
		check(holds(a->buf + MSG_OFF + MSG * wc.wr_id, MSG, r, 3), "the SEND's bytes", r);
		check(holds(a->buf + chunk, CHUNK, r, 1), "the client's WRITE", r);
		post_recv(a, (uint32_t)wc.wr_id, MSG);
		/* the answer: the second half of the client's chunk, then a SEND;
		 * the client's first half stays ours to READ */
		fill(a->buf + CHUNKS * CHUNK, CHUNK / 2, r, 2);
		fill(a->buf + MSG_OFF - MSG, MSG, r, 4);
		post_send(a, DROCE_WR_RDMA_WRITE, WR_WRITE, CHUNKS * CHUNK, CHUNK / 2,
			  a->raddr + chunk + CHUNK / 2, 0);
		post_send(a, DROCE_WR_SEND_WITH_IMM, WR_SEND, MSG_OFF - MSG, MSG, 0, r);
		expect_wc(a, DROCE_WC_RDMA_WRITE, WR_WRITE, CHUNK / 2, r, NULL);
		expect_wc(a, DROCE_WC_SEND, WR_SEND, MSG, r, NULL);
	}
	printf("server: %u rounds, every byte and completion right%s\n", rounds,
	       a->events ? ", waited for on a completion channel" : "");
}

static const uint32_t inl_sizes[] = { 0, 1, 63, 64, 65, 192, 193, 256 };

/* An inline WRITE (two SGEs) or SEND of len bytes of src, lkey 0. */
static int
post_inline(struct app *a, enum droce_wr_opcode op, uint64_t wr_id, uint8_t *src, uint32_t len,
	    uint32_t imm)
{
	struct droce_sge sge[2] = { { (uint64_t)(uintptr_t)src, len / 2, 0 },
				    { (uint64_t)(uintptr_t)(src + len / 2), len - len / 2, 0 } };
	struct droce_send_wr wr = { .wr_id = wr_id, .sg_list = sge,
				    .num_sge = op == DROCE_WR_SEND_WITH_IMM ? 1 : 2,
				    .opcode = op,
				    .send_flags = DROCE_SEND_SIGNALED | DROCE_SEND_INLINE }, *bad;

	if (wr.num_sge == 1)
		sge[0].length = len;
	wr.imm_data = htonl(imm);
	wr.wr.rdma.remote_addr = a->raddr + INL_OFF;
	wr.wr.rdma.rkey = a->rkey;
	return droce_post_send(a->qp, &wr, &bad);
}

/* A chain whose first WR the post refuses (a bind naming no window):
 * EINVAL, *bad the first, the SEND after it not posted. */
static void
bad_first(struct app *a)
{
	struct droce_send_wr wr[2], *bad = NULL;
	int rc;

	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 98;
	wr[0].opcode = DROCE_WR_BIND_MW;
	wr[0].next = &wr[1];
	wr[1].wr_id = 97;
	wr[1].opcode = DROCE_WR_SEND;
	rc = droce_post_send(a->qp, wr, &bad);
	check(rc == EINVAL && bad == &wr[0],
	      "a chain whose first WR is a bind of no window: EINVAL, bad_wr the first",
	      (uint32_t)(bad == NULL ? 2 : bad - wr));
}

static void
inline_client(struct app *a, uint32_t rounds)
{
	uint8_t src[INL_MAX + 1];
	int rc;

	for (uint32_t k = 0; k < RECVS; k++)
		post_recv(a, k, MSG);
	printf("connected\n");
	fflush(stdout);
	rc = post_inline(a, DROCE_WR_SEND_WITH_IMM, 99, src, INL_MAX + 1, 0);
	check(rc == EINVAL, "an inline SEND of 257 bytes: EINVAL", 0);
	bad_first(a);
	for (uint32_t r = 0; r < rounds; r++) {
		uint32_t len = inl_sizes[r % (sizeof(inl_sizes) / sizeof(inl_sizes[0]))];
		struct droce_wc wc;

		fill(src, len, r, 5);
		rc = post_inline(a, DROCE_WR_RDMA_WRITE, WR_WRITE, src, len, 0);
		if (rc != 0)
			die("post inline WRITE", rc);
		memset(src, 0xee, sizeof(src));		/* free on return */
		fill(src, len, r, 6);
		rc = post_inline(a, DROCE_WR_SEND_WITH_IMM, WR_SEND, src, len, r);
		if (rc != 0)
			die("post inline SEND", rc);
		memset(src, 0xee, sizeof(src));
		expect_wc(a, DROCE_WC_RDMA_WRITE, WR_WRITE, len, r, NULL);
		expect_wc(a, DROCE_WC_SEND, WR_SEND, len, r, NULL);
		expect_wc(a, DROCE_WC_RECV, 0, 0, r, &wc);
		check((wc.wc_flags & DROCE_WC_WITH_IMM) && ntohl(wc.imm_data) == r,
		      "the answer's immediate", r);
		post_recv(a, (uint32_t)wc.wr_id, MSG);
	}
	printf("client: %u rounds of inline WRITE + SEND + answer, every completion right\n",
	       rounds);
}

static void
inline_server(struct app *a, uint32_t rounds)
{
	for (uint32_t k = 0; k < RECVS; k++)
		post_recv(a, k, MSG);
	printf("connected\n");
	fflush(stdout);
	for (uint32_t r = 0; r < rounds; r++) {
		uint32_t len = inl_sizes[r % (sizeof(inl_sizes) / sizeof(inl_sizes[0]))];
		struct droce_wc wc;
		int rc;

		expect_wc(a, DROCE_WC_RECV, 0, len, r, &wc);
		check((wc.wc_flags & DROCE_WC_WITH_IMM) && ntohl(wc.imm_data) == r,
		      "the SEND's immediate", r);
		check(holds(a->buf + MSG_OFF + MSG * wc.wr_id, len, r, 6), "the inline SEND's bytes",
		      r);
		check(holds(a->buf + INL_OFF, len, r, 5), "the inline WRITE's bytes", r);
		post_recv(a, (uint32_t)wc.wr_id, MSG);
		rc = post_inline(a, DROCE_WR_SEND_WITH_IMM, WR_SEND, a->buf, 0, r);
		if (rc != 0)
			die("post SEND", rc);
		expect_wc(a, DROCE_WC_SEND, WR_SEND, 0, r, NULL);
	}
	printf("server: %u rounds of inline data, every byte and completion right\n", rounds);
}

static void
srq_recv(struct app *a, uint32_t k, uint32_t lkey)
{
	struct droce_sge sge = { (uint64_t)(uintptr_t)(a->buf + MSG_OFF + MSG * k), MSG, lkey };
	struct droce_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 }, *bad;
	int rc = droce_post_srq_recv(a->srq, &wr, &bad);

	if (rc != 0)
		die("post srq recv", rc);
}

/*
 * The next asynchronous event within ms (its fd non-blocking), acked;
 * false if none came.  COMM_EST is passed over: the peer's first message
 * may reach our QP while it is still in RTR (IBTA 11.6.3: the QP then
 * raises it), as droced's engine lcore posts the peer's SEND at once,
 * whatever requests of ours its main thread still serves.
 */
static bool
async_event(struct app *a, struct droce_async_event *ev, int ms)
{
	struct pollfd p = { .fd = a->ctx->async_fd, .events = POLLIN };

	for (int64_t end = now_ns() + (int64_t)ms * 1000000; now_ns() < end;) {
		if (droce_get_async_event(a->ctx, ev) == 0) {
			bool est = ev->event_type == DROCE_EVENT_COMM_EST;

			droce_ack_async_event(ev);
			if (est)
				continue;
			return true;
		}
		if (errno != EAGAIN)
			die("get async event", errno);
		(void)poll(&p, 1, 10);
	}
	return false;
}

/*
 * A receive with a key not ours (the client's) in an SRQ of its own, and
 * a SEND into it from a QP on that SRQ connected to itself (the client's
 * QP, in ERR after its burst, sends nothing more): droced takes the
 * receive (an lkey not ours becomes one no MR has), and the engine ends it
 * as in process: the receive LOC_PROT_ERR, the QP in ERR (the SEND flushed),
 * QP_LAST_WQE_REACHED (IBTA 11.6.3.1); no SRQ_ERR.  The
 * QP and the SRQ are destroyed after.
 */
static void
srq_foreign_key(struct app *a)
{
	struct droce_srq_init_attr si = { .srq_context = a, .attr = { .max_wr = 4, .max_sge = 1 } };
	struct droce_qp_init_attr init = { .send_cq = a->cq, .recv_cq = a->cq,
					   .qp_type = DROCE_QPT_RC, .cap = { 4, 0, 1, 1, 0 } };
	struct app self = *a;
	struct droce_async_event ev;
	struct droce_qp_attr qa;
	struct droce_qp_init_attr qi;
	struct droce_wc wc[2];

	self.srq = droce_create_srq(a->pd, &si);
	if (self.srq == NULL)
		die("create srq", errno);
	init.srq = self.srq;
	self.qp = droce_create_qp(a->pd, &init);
	if (self.qp == NULL)
		die("create qp", errno);
	self.rqpn = self.qp->qp_num;
	connect_qp(&self);
	srq_recv(&self, 0, a->rkey);
	post_send(&self, DROCE_WR_SEND, WR_SEND, MSG_OFF - MSG, MSG, 0, 0);
	next_wc(a, &wc[0]);
	next_wc(a, &wc[1]);
	if (wc[0].wr_id != 0) {		/* the receive's (an error's opcode is not its own) */
		struct droce_wc t = wc[0];

		wc[0] = wc[1];
		wc[1] = t;
	}
	if (wc[0].status != DROCE_WC_LOC_PROT_ERR)
		printf("dq_app: the receive %s\n", droce_wc_status_str(wc[0].status));
	check(wc[0].wr_id == 0 && wc[0].status == DROCE_WC_LOC_PROT_ERR &&
	      wc[0].qp_num == self.qp->qp_num,
	      "the receive with a foreign key: LOC_PROT_ERR", 0);
	/* the responder's error put the QP (its own requester) in ERR at
	 * once: its SEND flushed, or NAKed REM_OP_ERR had the NAK come first */
	check((wc[1].status == DROCE_WC_WR_FLUSH_ERR || wc[1].status == DROCE_WC_REM_OP_ERR) &&
	      wc[1].wr_id == WR_SEND && wc[1].qp_num == self.qp->qp_num,
	      "the SEND into it: flushed (or REM_OP_ERR)", 0);
	check(droce_query_qp(self.qp, &qa, DROCE_QP_STATE, &qi) == 0 &&
	      qa.qp_state == DROCE_QPS_ERR, "its QP in ERR", 0);
	/* a QP on an SRQ in ERR: its last WQE reached (IBTA 11.6.3.1) */
	check(async_event(a, &ev, 10000) && ev.event_type == DROCE_EVENT_QP_LAST_WQE_REACHED &&
	      ev.element.qp == self.qp, "QP_LAST_WQE_REACHED naming the QP", 0);
	check(!async_event(a, &ev, 200), "no other event (no SRQ_ERR)", 1);
	if (droce_destroy_qp(self.qp) != 0 || droce_destroy_srq(self.srq) != 0)
		die("destroy", errno);
	printf("server: a foreign key in an SRQ's receive: LOC_PROT_ERR, the SEND into it "
	       "ended, its QP in ERR, QP_LAST_WQE_REACHED, no SRQ_ERR\n");
}

static void
srq_server(struct app *a, uint32_t rounds)
{
	uint32_t held[SRQ_RECVS], nheld = 0, events = 0;
	struct droce_srq_attr sa = { .srq_limit = SRQ_LIMIT };
	struct droce_async_event ev;

	if (fcntl(a->ctx->async_fd, F_SETFL, O_NONBLOCK) != 0)
		die("async fd", errno);
	for (uint32_t k = 0; k < SRQ_RECVS; k++)
		srq_recv(a, k, a->mr->lkey);
	if (droce_modify_srq(a->srq, &sa, DROCE_SRQ_LIMIT) != 0)
		die("modify srq", errno);
	printf("connected\n");
	fflush(stdout);
	check(rounds > SRQ_RECVS - SRQ_LIMIT, "enough rounds for the limit", 0);
	for (uint32_t r = 0; r < rounds; r++) {
		struct droce_wc wc;

		expect_wc(a, DROCE_WC_RECV, 0, MSG, r, &wc);
		check((wc.wc_flags & DROCE_WC_WITH_IMM) && ntohl(wc.imm_data) == r,
		      "the SEND's immediate", r);
		check(wc.wr_id < SRQ_RECVS && holds(a->buf + MSG_OFF + MSG * wc.wr_id, MSG, r, 3),
		      "the SEND's bytes, in one of the SRQ's receives", r);
		held[nheld++] = (uint32_t)wc.wr_id;
		if (nheld == SRQ_RECVS - SRQ_LIMIT + 1) {
			/* 7 left, fewer than the limit: its event, once */
			bool got = async_event(a, &ev, 10000);

			if (got && ev.event_type != DROCE_EVENT_SRQ_LIMIT_REACHED)
				printf("dq_app: event %d instead\n", (int)ev.event_type);
			check(got && ev.event_type == DROCE_EVENT_SRQ_LIMIT_REACHED &&
			      ev.element.srq == a->srq, "SRQ_LIMIT_REACHED naming the SRQ", r);
			events++;
			if (droce_query_srq(a->srq, &sa) != 0)
				die("query srq", errno);
			check(sa.srq_limit == 0, "the limit disarmed once it fired", r);
		}
		if (events > 0) {
			for (uint32_t k = 0; k < nheld; k++)
				srq_recv(a, held[k], a->mr->lkey);
			nheld = 0;
		}
		fill(a->buf + MSG_OFF - MSG, MSG, r, 4);
		post_send(a, DROCE_WR_SEND_WITH_IMM, WR_SEND, MSG_OFF - MSG, MSG, 0, r);
		expect_wc(a, DROCE_WC_SEND, WR_SEND, MSG, r, NULL);
	}
	/* the client's 17 SENDs: the SRQ's 16 receives, then RNR */
	for (uint32_t k = 0; k < SRQ_RECVS; k++) {
		struct droce_wc wc;

		expect_wc(a, DROCE_WC_RECV, 0, MSG, rounds + k, &wc);
		check(ntohl(wc.imm_data) == 1000 + k, "a SEND of the burst, in order", k);
	}
	check(!async_event(a, &ev, 200), "no other event", 0);
	printf("server: %u rounds through an SRQ, every byte and completion right, "
	       "1 SRQ_LIMIT_REACHED; %u receives of the burst\n", rounds, SRQ_RECVS);
	fflush(stdout);
	srq_foreign_key(a);
}

static void
srq_client(struct app *a, uint32_t rounds)
{
	struct droce_wc wc;

	for (uint32_t k = 0; k < RECVS; k++)
		post_recv(a, k, MSG);
	printf("connected\n");
	fflush(stdout);
	for (uint32_t r = 0; r < rounds; r++) {
		fill(a->buf + MSG_OFF - MSG, MSG, r, 3);
		post_send(a, DROCE_WR_SEND_WITH_IMM, WR_SEND, MSG_OFF - MSG, MSG, 0, r);
		expect_wc(a, DROCE_WC_SEND, WR_SEND, MSG, r, NULL);
		expect_wc(a, DROCE_WC_RECV, 0, MSG, r, &wc);
		check((wc.wc_flags & DROCE_WC_WITH_IMM) && ntohl(wc.imm_data) == r,
		      "the answer's immediate", r);
		check(holds(a->buf + MSG_OFF + MSG * wc.wr_id, MSG, r, 4), "the answer's bytes", r);
		post_recv(a, (uint32_t)wc.wr_id, MSG);
	}
	/* the SRQ's 16 receives, and one SEND more: RNR, retried once */
	for (uint32_t k = 0; k <= SRQ_RECVS; k++)
		post_send(a, DROCE_WR_SEND_WITH_IMM, 100 + k, MSG_OFF - MSG, MSG, 0, 1000 + k);
	for (uint32_t k = 0; k < SRQ_RECVS; k++)
		expect_wc(a, DROCE_WC_SEND, 100 + k, MSG, k, NULL);
	next_wc(a, &wc);
	check(wc.status == DROCE_WC_RNR_RETRY_EXC_ERR && wc.wr_id == 100 + SRQ_RECVS,
	      "the 17th SEND: RNR_RETRY_EXC_ERR", SRQ_RECVS);
	printf("client: %u rounds through the server's SRQ, every byte and completion right; "
	       "the 17th SEND of a burst RNR_RETRY_EXC_ERR\n", rounds);
}

static void
send_wr(struct app *a, struct droce_send_wr *wr)
{
	struct droce_send_wr *bad;
	int rc = droce_post_send(a->qp, wr, &bad);

	if (rc != 0)
		die("post send", rc);
}

static void
mw_server(struct app *a)
{
	struct droce_mw *mw1 = droce_alloc_mw(a->pd, DROCE_MW_TYPE_1);
	struct droce_mw *mw2 = droce_alloc_mw(a->pd, DROCE_MW_TYPE_2);
	struct droce_mw_bind b1 = { .wr_id = 11, .send_flags = DROCE_SEND_SIGNALED,
				    .bind_info = { a->mr, (uint64_t)(uintptr_t)a->buf, CHUNK,
						   DROCE_ACCESS_REMOTE_WRITE } };
	struct droce_send_wr wr = { .wr_id = 12, .opcode = DROCE_WR_BIND_MW,
				    .send_flags = DROCE_SEND_SIGNALED };
	uint32_t keys[2];
	struct droce_wc wc;
	int rc;

	if (mw1 == NULL || mw2 == NULL)
		die("alloc mw", errno);
	for (uint32_t k = 0; k < RECVS; k++)
		post_recv(a, k, MSG);
	printf("connected\n");
	fflush(stdout);
	rc = droce_bind_mw(a->qp, mw1, &b1);
	if (rc != 0)
		die("bind mw (type 1)", rc);
	expect_wc(a, DROCE_WC_BIND_MW, 11, 0, 0, NULL);
	wr.bind_mw.mw = mw2;
	wr.bind_mw.rkey = droce_inc_rkey(mw2->rkey);
	wr.bind_mw.bind_info = (struct droce_mw_bind_info){
		a->mr, (uint64_t)(uintptr_t)(a->buf + CHUNK), CHUNK,
		DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ };
	send_wr(a, &wr);
	expect_wc(a, DROCE_WC_BIND_MW, 12, 0, 0, NULL);
	keys[0] = mw1->rkey;
	keys[1] = wr.bind_mw.rkey;
	memcpy(a->buf + MSG_OFF - MSG, keys, sizeof(keys));
	post_send(a, DROCE_WR_SEND_WITH_IMM, WR_SEND, MSG_OFF - MSG, sizeof(keys), 0, 0);
	expect_wc(a, DROCE_WC_SEND, WR_SEND, sizeof(keys), 0, NULL);
	/* the client's WRITEs, its READ, then its SEND invalidating keys[1] */
	expect_wc(a, DROCE_WC_RECV, 0, 0, 1, &wc);
	check((wc.wc_flags & DROCE_WC_WITH_INV) && wc.invalidated_rkey == keys[1],
	      "the SEND_WITH_INV's invalidated rkey", 1);
	check(holds(a->buf, CHUNK, 1, 5) && holds(a->buf + CHUNK, CHUNK, 1, 6),
	      "the WRITEs through both windows", 1);
	b1.wr_id = 13;
	b1.bind_info.length = 0;		/* unbind */
	rc = droce_bind_mw(a->qp, mw1, &b1);
	if (rc != 0)
		die("unbind mw", rc);
	expect_wc(a, DROCE_WC_BIND_MW, 13, 0, 1, NULL);
	post_send(a, DROCE_WR_SEND_WITH_IMM, WR_SEND, MSG_OFF - MSG, 0, 0, 2);
	expect_wc(a, DROCE_WC_SEND, WR_SEND, 0, 2, NULL);
	if (droce_dealloc_mw(mw1) != 0 || droce_dealloc_mw(mw2) != 0)
		die("dealloc mw", errno);
	printf("server: windows of both types bound (BIND_MW completions), written through, "
	       "the type-2 one invalidated by the peer, the type-1 one unbound\n");
}

static void
mw_client(struct app *a)
{
	uint32_t keys[2];
	struct droce_wc wc;
	struct droce_send_wr inv = { .wr_id = 21, .opcode = DROCE_WR_SEND_WITH_INV,
				     .send_flags = DROCE_SEND_SIGNALED };

	for (uint32_t k = 0; k < RECVS; k++)
		post_recv(a, k, MSG);
	printf("connected\n");
	fflush(stdout);
	expect_wc(a, DROCE_WC_RECV, 0, sizeof(keys), 0, &wc);
	memcpy(keys, a->buf + MSG_OFF + MSG * wc.wr_id, sizeof(keys));
	fill(a->buf, CHUNK, 1, 5);
	fill(a->buf + CHUNK, CHUNK, 1, 6);
	a->rkey = keys[0];
	post_send(a, DROCE_WR_RDMA_WRITE, WR_WRITE, 0, CHUNK, a->raddr, 0);
	expect_wc(a, DROCE_WC_RDMA_WRITE, WR_WRITE, CHUNK, 1, NULL);
	a->rkey = keys[1];
	post_send(a, DROCE_WR_RDMA_WRITE, WR_WRITE, CHUNK, CHUNK, a->raddr + CHUNK, 0);
	expect_wc(a, DROCE_WC_RDMA_WRITE, WR_WRITE, CHUNK, 1, NULL);
	memset(a->buf + 2 * CHUNK, 0, CHUNK);
	post_send(a, DROCE_WR_RDMA_READ, WR_READ, 2 * CHUNK, CHUNK, a->raddr + CHUNK, 0);
	expect_wc(a, DROCE_WC_RDMA_READ, WR_READ, CHUNK, 1, NULL);
	check(holds(a->buf + 2 * CHUNK, CHUNK, 1, 6), "the READ through the type-2 window", 1);
	inv.invalidate_rkey = keys[1];
	send_wr(a, &inv);
	expect_wc(a, DROCE_WC_SEND, 21, 0, 1, NULL);
	expect_wc(a, DROCE_WC_RECV, 0, 0, 2, &wc);	/* the server unbound the type-1 one */
	post_send(a, DROCE_WR_RDMA_WRITE, WR_WRITE, CHUNK, CHUNK, a->raddr + CHUNK, 0);
	next_wc(a, &wc);
	check(wc.status == DROCE_WC_REM_ACCESS_ERR && wc.wr_id == WR_WRITE,
	      "a WRITE through the invalidated rkey: REM_ACCESS_ERR", 2);
	printf("client: WRITEs and a READ through both windows right; through the "
	       "invalidated rkey REM_ACCESS_ERR\n");
}

/* ---- many SGEs ---------------------------------------------------------------------- */

#define SGE_STRIDE 256		/* a list's pieces lie this far apart */
#define SGE_GAP 0xee		/* the bytes between pieces, never written */

/* Piece k of a list of n: 7 + 13k bytes (rev: the other way round). */
static uint32_t
piece_len(uint32_t n, uint32_t k, bool rev)
{
	return 7 + 13 * (rev ? n - 1 - k : k);
}

static uint32_t
pieces_total(uint32_t n)
{
	uint32_t t = 0;

	for (uint32_t k = 0; k < n; k++)
		t += piece_len(n, k, false);
	return t;
}

/* The list of n pieces at buffer offset off; its chunk filled with SGE_GAP. */
static void
pieces(struct app *a, struct droce_sge *sg, uint32_t n, uint32_t off, bool rev)
{
	memset(a->buf + off, SGE_GAP, (size_t)n * SGE_STRIDE);
	for (uint32_t k = 0; k < n; k++)
		sg[k] = (struct droce_sge){ (uint64_t)(uintptr_t)(a->buf + off + k * SGE_STRIDE),
					    piece_len(n, k, rev), a->mr->lkey };
}

/* The pattern's stream (round, who) written across the list's pieces. */
static void
pieces_fill(const struct droce_sge *sg, uint32_t n, uint32_t round, uint8_t who)
{
	uint32_t at = 0;

	for (uint32_t k = 0; k < n; k++)
		for (uint32_t j = 0; j < sg[k].length; j++)
			((uint8_t *)(uintptr_t)sg[k].addr)[j] = pattern(round, at++, who);
}

/* The pieces hold the stream in order, and every byte after each piece
 * up to the next is still SGE_GAP. */
static bool
pieces_hold(const struct droce_sge *sg, uint32_t n, uint32_t round, uint8_t who)
{
	uint32_t at = 0;

	for (uint32_t k = 0; k < n; k++) {
		const uint8_t *p = (const uint8_t *)(uintptr_t)sg[k].addr;

		for (uint32_t j = 0; j < SGE_STRIDE; j++)
			if (p[j] != (j < sg[k].length ? pattern(round, at + j, who) : SGE_GAP))
				return false;
		at += sg[k].length;
	}
	return true;
}

/* A receive of the list (wr_id) into the QP's ring, or the SRQ's. */
static void
recv_list(struct app *a, uint64_t wr_id, struct droce_sge *sg, uint32_t n)
{
	struct droce_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = (int)n }, *bad;
	int rc = a->srq != NULL ? droce_post_srq_recv(a->srq, &wr, &bad) :
				  droce_post_recv(a->qp, &wr, &bad);

	if (rc != 0)
		die("post recv of many SGEs", rc);
}

static int
send_list(struct app *a, enum droce_wr_opcode op, uint64_t wr_id, struct droce_sge *sg,
	  uint32_t n, uint64_t raddr, uint32_t imm)
{
	struct droce_send_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = (int)n,
				    .opcode = op, .send_flags = DROCE_SEND_SIGNALED }, *bad;

	wr.imm_data = htonl(imm);
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = a->rkey;
	return droce_post_send(a->qp, &wr, &bad);
}

/* A receive of wr_id with n pieces of the stream (round, who) in sg. */
static void
expect_list(struct app *a, uint64_t wr_id, const struct droce_sge *sg, uint32_t n,
	    uint32_t round, uint8_t who)
{
	struct droce_wc wc;

	expect_wc(a, DROCE_WC_RECV, 0, pieces_total(n), round, &wc);
	check(wc.wr_id == wr_id && (wc.wc_flags & DROCE_WC_WITH_IMM) &&
	      ntohl(wc.imm_data) == n, "the receive's wr_id and immediate", round);
	check(pieces_hold(sg, n, round, who), "a SEND's bytes scattered into its pieces", round);
}

/* The client's and server's SENDs of 5 and max_sge SGEs: each list from
 * chunk 0 (its pieces filled with who + 0, who + 1), each completed
 * before the next. */
static void
send_lists(struct app *a, uint8_t who)
{
	const uint32_t ns[2] = { 5, a->max_sge };
	struct droce_sge sg[DROCE_MAX_SGE];

	for (uint32_t i = 0; i < 2; i++) {
		pieces(a, sg, ns[i], 0, false);
		pieces_fill(sg, ns[i], ns[i], (uint8_t)(who + i));
		if (send_list(a, DROCE_WR_SEND_WITH_IMM, WR_SEND, sg, ns[i], 0, ns[i]) != 0)
			die("post SEND of many SGEs", EINVAL);
		expect_wc(a, DROCE_WC_SEND, WR_SEND, pieces_total(ns[i]), ns[i], NULL);
	}
}

static void
sge_client(struct app *a)
{
	struct droce_sge r5[5], rmax[DROCE_MAX_SGE], sg[DROCE_MAX_SGE + 1], rd[DROCE_MAX_SGE];
	const uint32_t m = a->max_sge, total = pieces_total(m);

	pieces(a, r5, 5, 3 * CHUNK, true);
	pieces(a, rmax, m, 4 * CHUNK, true);
	recv_list(a, 1, r5, 5);
	recv_list(a, 2, rmax, m);
	printf("connected\n");
	fflush(stdout);
	pieces(a, sg, m, 0, false);
	sg[m] = sg[0];
	check(send_list(a, DROCE_WR_SEND, 9, sg, m + 1, 0, 0) == EINVAL,
	      "a SEND of 17 SGEs: EINVAL", 0);
	send_lists(a, 7);
	expect_list(a, 1, r5, 5, 5, 9);
	expect_list(a, 2, rmax, m, m, 10);
	/* a WRITE gathered from 16 pieces, READ back scattered into 16 */
	pieces(a, sg, m, 0, false);
	pieces_fill(sg, m, 1, 11);
	if (send_list(a, DROCE_WR_RDMA_WRITE, WR_WRITE, sg, m, a->raddr + 5 * CHUNK, 0) != 0)
		die("post WRITE of many SGEs", EINVAL);
	expect_wc(a, DROCE_WC_RDMA_WRITE, WR_WRITE, total, 1, NULL);
	pieces(a, rd, m, 6 * CHUNK, true);
	if (send_list(a, DROCE_WR_RDMA_READ, WR_READ, rd, m, a->raddr + 5 * CHUNK, 0) != 0)
		die("post READ of many SGEs", EINVAL);
	expect_wc(a, DROCE_WC_RDMA_READ, WR_READ, total, 1, NULL);
	check(pieces_hold(rd, m, 1, 11), "the READ's bytes scattered into 16 pieces", 1);
	post_send(a, DROCE_WR_SEND_WITH_IMM, WR_SEND, MSG_OFF - MSG, 0, 0, 0);
	expect_wc(a, DROCE_WC_SEND, WR_SEND, 0, 2, NULL);
	printf("client: SENDs of 5 and %u SGEs both ways, a WRITE gathered from %u and a READ "
	       "scattered into %u, every byte right\n", m, m, m);
}

static void
sge_server(struct app *a)
{
	struct droce_sge r5[5], rmax[DROCE_MAX_SGE];
	const uint32_t m = a->max_sge, total = pieces_total(m);

	pieces(a, r5, 5, 1 * CHUNK, true);
	pieces(a, rmax, m, 2 * CHUNK, true);
	recv_list(a, 1, r5, 5);
	recv_list(a, 2, rmax, m);
	srq_recv(a, 3, a->mr->lkey);
	memset(a->buf + 5 * CHUNK, SGE_GAP, CHUNK);
	printf("connected\n");
	fflush(stdout);
	expect_list(a, 1, r5, 5, 5, 7);
	expect_list(a, 2, rmax, m, m, 8);
	send_lists(a, 9);
	expect_wc(a, DROCE_WC_RECV, 0, 0, 2, NULL);
	/* the client's WRITE: its 16 pieces' stream, contiguous, then the gap */
	for (uint32_t k = 0; k < CHUNK; k++)
		check(a->buf[5 * CHUNK + k] == (k < total ? pattern(1, k, 11) : SGE_GAP),
		      "the WRITE gathered from 16 pieces, byte for byte", k);
	printf("server: SENDs of 5 and %u SGEs into its SRQ's receives of as many and back, "
	       "the client's WRITE gathered from %u, every byte right\n", m, m);
}

static int
cmp64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

	return a < b ? -1 : a > b;
}

/* The next completion, a SEND's or a RECV's (reposted): counted. */
static void
pp_step(struct app *a, uint32_t size, uint32_t i, uint32_t *sends, uint32_t *recvs)
{
	struct droce_wc wc;

	next_wc(a, &wc);
	check(wc.status == DROCE_WC_SUCCESS, "a completion's status", i);
	check(wc.qp_num == a->qp->qp_num, "a completion's qp_num", i);
	if (wc.opcode == DROCE_WC_SEND) {
		(*sends)++;
		return;
	}
	check(wc.opcode == DROCE_WC_RECV && wc.byte_len == size, "a RECV's opcode and length", i);
	(*recvs)++;
	post_recv(a, (uint32_t)wc.wr_id, MSG);
}

/* n round trips of size-byte SENDs; ping measures them (its SEND posted
 * to the pong's SEND completed in its CQ). */
static void
pingpong(struct app *a, uint32_t n, uint32_t size, bool ping)
{
	int64_t *rtt = calloc(n, sizeof(*rtt)), sum = 0;
	uint32_t sends = 0, recvs = 0;

	if (rtt == NULL || size > MSG)
		die("ping-pong", EINVAL);
	for (uint32_t k = 0; k < RECVS; k++)
		post_recv(a, k, MSG);
	printf("connected\n");
	fflush(stdout);
	for (uint32_t i = 0; i < n; i++) {
		int64_t t0 = now_ns();

		if (ping)
			post_send(a, DROCE_WR_SEND, WR_SEND, MSG_OFF - MSG, size, 0, 0);
		while (recvs <= i)
			pp_step(a, size, i, &sends, &recvs);
		if (!ping)
			post_send(a, DROCE_WR_SEND, WR_SEND, MSG_OFF - MSG, size, 0, 0);
		rtt[i] = now_ns() - t0;
		sum += rtt[i];
	}
	while (sends < n)
		pp_step(a, size, n, &sends, &recvs);
	check(sends == n && recvs == n, "SEND and RECV completions: one each per round trip", n);
	if (ping) {
		qsort(rtt, n, sizeof(*rtt), cmp64);
		printf("ping: %u round trips of %u B: median %.1f us, mean %.1f us, p99 %.1f us\n",
		       n, size, rtt[n / 2] / 1e3, (double)sum / n / 1e3, rtt[n * 99 / 100] / 1e3);
	} else {
		printf("pong: %u round trips\n", n);
	}
	free(rtt);
}

int
main(int argc, char **argv)
{
	struct app a = { 0 };
	int ret = droce_init(argc, argv);
	uint32_t n;

	if (ret < 0)
		die("droce_init", errno);
	argc -= ret;
	argv += ret;
	/* argv[0] is the program's name's slot */
	if (argc < 3)
		die("usage: dq_app [EAL --] [droce options] server|client ROUNDS [events] | "
		    "ping|pong N SIZE", EINVAL);
	printf("maps: hugepage mappings %d\n", hugepage_maps());
	n = (uint32_t)strtoul(argv[2], NULL, 0);
	a.events = argc == 4 && strcmp(argv[3], "events") == 0;
	a.inl = argc == 4 && strcmp(argv[3], "inline") == 0;
	a.srq_mode = argc == 4 && strcmp(argv[3], "srq") == 0;
	a.mw_mode = argc == 4 && strcmp(argv[3], "mw") == 0;
	a.sge_mode = argc == 4 && strcmp(argv[3], "sge") == 0;
	a.regs_mode = argc == 4 && strcmp(argv[3], "regs") == 0;
	a.server = strcmp(argv[1], "server") == 0;
	open_all(&a);
	if (a.regs_mode)
		many_mrs(&a);
	printf("maps after open: hugepage mappings %d\n", hugepage_maps());
	exchange(&a);
	if (a.mw_mode)
		(a.server ? mw_server : mw_client)(&a);
	else if (a.sge_mode)
		(a.server ? sge_server : sge_client)(&a);
	else if (strcmp(argv[1], "client") == 0)
		(a.inl ? inline_client : a.srq_mode ? srq_client : client)(&a, n);
	else if (strcmp(argv[1], "server") == 0)
		(a.inl ? inline_server : a.srq_mode ? srq_server : server)(&a, n);
	else if (argc == 4 && (strcmp(argv[1], "ping") == 0 || strcmp(argv[1], "pong") == 0))
		pingpong(&a, n, (uint32_t)strtoul(argv[3], NULL, 0), argv[1][1] == 'i');
	else
		die("mode", EINVAL);
	printf("maps at the end: hugepage mappings %d\n", hugepage_maps());
	fflush(stdout);
	(void)getchar();	/* held (its objects listed) until a line on stdin */
	for (uint32_t k = 0; a.regs_mode && k < REGS; k++)
		if (droce_dereg_mr(a.mrs[k]) != 0)
			die("dereg mr", errno);
	if ((a.cq2 != NULL && droce_destroy_cq(a.cq2) != 0) ||
	    droce_destroy_qp(a.qp) != 0 || (a.srq != NULL && droce_destroy_srq(a.srq) != 0) ||
	    droce_destroy_cq(a.cq) != 0 ||
	    (a.ch != NULL && droce_destroy_comp_channel(a.ch) != 0) ||
	    droce_dereg_mr(a.mr) != 0 || droce_dealloc_pd(a.pd) != 0 ||
	    droce_close_device(a.ctx) != 0)
		die("teardown", errno);
	free(a.buf);
	free(a.pages);
	fflush(stdout);
	droce_cleanup();
	return 0;
}
