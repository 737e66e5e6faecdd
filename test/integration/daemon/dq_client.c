/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dq_client - an application of droced that is a plain process: no EAL,
 * no hugepages, only lib/dq and droced's socket protocol
 * (lib/verbs/verbs_daemon.h, its structures only).  Its buffer is a memfd
 * of its own registered with MEM_PIECE + REG_MEM; its queues are the
 * region droced passes back for DQ_OPEN (app/droced/README.md, "Queue
 * regions").  The two QPs of two such clients meet on droced's loopback.
 *
 *   dq_client SOCK reader     prints "ready qpn=N addr=A rkey=K lkey=L qp=H",
 *                             reads the writer's "QPN ADDR RKEY" line; on each
 *                             SEND (imm = round) checks that its buffer's chunk
 *                             holds the round's WRITE, then SENDs it back
 *   dq_client SOCK writer     the same line; reads the reader's; rounds of
 *                             WRITE + SEND, each waited for (its CQEs, the echo),
 *                             until a line on stdin, then the stop message
 *   dq_client SOCK hostile LKEY QP
 *                             garbage in its own rings, one kind per QP slot
 *                             (slot 15: an SRQ), another application's lkey LKEY
 *                             and QP handle QP;
 *                             first one well-formed inline WRITE to itself
 *                             (its bytes and completion checked); prints the
 *                             events, the LOC_PROT_ERR completions of the
 *                             three SENDs with lkeys not its own, and the QP
 *                             states it then sees
 *
 * Exit 0 when all it checked held, 1 when a check failed, 2 on an error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dq.h"
#include "verbs_daemon.h"

#define BUF_LEN 65536
#define CHUNK 1024		/* a round's WRITE */
#define CHUNKS 16		/* where rounds' WRITEs land, in turn */
#define ECHO_OFF 32768		/* the receives' and echoes' part of the buffer */
#define MSG 64
#define DEPTH 64
#define CQ_DEPTH 256
#define STOP UINT32_MAX		/* the writer's last SEND's immediate */
#define HOSTILE_QPS 18		/* the last slot is on CQ 1, whose index goes bad */
#define SRQ_SLOT 15		/* the hostile's SRQ, in a QP slot of its own */
/* the slots whose SEND names an lkey not ours: completions, not events */
#define KEY_SLOTS (1u << 4 | 1u << 6 | 1u << 13)
#define REFUSED (HOSTILE_QPS - 3)	/* events: 13 QPs', the SRQ's, CQ 1's */
#define SGE_CAP 5		/* slot 11's QP's max_send_sge */
#define INL_OFF 4096		/* the hostile's own inline WRITE's place */
#define INL_LEN 200		/* its bytes: 3 ring entries */
#define WAIT_MS 10000

struct client {
	int sock;
	uint64_t pd, mr, cq[2], qp[HOSTILE_QPS], srq;
	uint32_t lkey, rkey, qpn[HOSTILE_QPS];
	uint8_t *buf;
	int buf_fd;		/* the buffer's memfd */
	void *region;
	struct dq_geom g;
	uint32_t sq_prod[HOSTILE_QPS], rq_prod[HOSTILE_QPS], cq_cons[2], ev_cons;
	union droce_gid gid;
};

static void
die(const char *what, int err)
{
	fprintf(stderr, "dq_client: %s: %s\n", what, strerror(err));
	exit(2);
}

static void
check(bool ok, const char *what)
{
	if (!ok) {
		printf("dq_client: FAIL: %s\n", what);
		exit(1);
	}
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One request (fd_in passed with it, -1: none): droced's errno; the fd
 * that came with the reply in *fd_out if asked for. */
static int
call_fd(struct client *c, struct dmn_msg *m, int fd_in, int *fd_out)
{
	int fd;

	ssize_t n;

	if (dq_sock_send(c->sock, m, sizeof(*m), fd_in) != 0)
		die("droced's socket", errno);
	n = dq_sock_recv(c->sock, m, sizeof(*m), &fd);
	if (n != (ssize_t)sizeof(*m))
		die("droced's reply", n < 0 ? (int)-n : EPROTO);
	if (fd_out != NULL)
		*fd_out = fd;
	else if (fd >= 0)
		close(fd);
	return m->err;
}

static void
call(struct client *c, struct dmn_msg *m, const char *what)
{
	int rc = call_fd(c, m, -1, NULL);

	if (rc != 0)
		die(what, rc);
}

static void
connect_droced(struct client *c, const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct dmn_msg m = { .type = DMN_HELLO };

	c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (c->sock < 0 || strlen(path) >= sizeof(a.sun_path))
		die("socket", EINVAL);
	memcpy(a.sun_path, path, strlen(path) + 1);
	if (connect(c->sock, (struct sockaddr *)&a, sizeof(a)) != 0)
		die("connect", errno);
	call(c, &m, "HELLO");
	m = (struct dmn_msg){ .type = DMN_QUERY_GID, .arg = 0 };
	call(c, &m, "QUERY_GID");
	c->gid = m.u.gid;
}

/* The buffer: a memfd of ours (sealed against shrinking, as droced asks),
 * registered as our own pages. */
static void
buffer_reg(struct client *c)
{
	int fd = memfd_create("dq-client-buf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct dmn_msg m;

	if (fd < 0 || ftruncate(fd, BUF_LEN) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0)
		die("memfd", errno);
	c->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c->buf == MAP_FAILED)
		die("mmap", errno);
	m = (struct dmn_msg){ .type = DMN_ALLOC_PD };
	call(c, &m, "ALLOC_PD");
	c->pd = m.h[0];
	m = (struct dmn_msg){ .type = DMN_MEM_PIECE, .addr = (uint64_t)(uintptr_t)c->buf,
			      .len = BUF_LEN, .h = { 0 } };
	if (call_fd(c, &m, fd, NULL) != 0)
		die("MEM_PIECE", m.err);
	c->buf_fd = fd;
	m = (struct dmn_msg){ .type = DMN_REG_MEM, .addr = (uint64_t)(uintptr_t)c->buf,
			      .len = BUF_LEN,
			      .h = { c->pd, (uint64_t)(uintptr_t)c->buf, 0 },
			      .arg = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
				     DROCE_ACCESS_REMOTE_READ };
	call(c, &m, "REG_MEM");
	c->mr = m.h[0];
	c->lkey = c->rkey = m.key;
}

/* ncq CQs, the region (nqp QP slots), the CQs attached to their slots. */
static void
region_open(struct client *c, uint32_t nqp, uint32_t ncq)
{
	struct dmn_msg m;
	const struct dq_header *h;
	int fd;

	for (uint32_t i = 0; i < ncq; i++) {
		m = (struct dmn_msg){ .type = DMN_CREATE_CQ, .arg = CQ_DEPTH,
				      .addr = 0x100 + i };
		call(c, &m, "CREATE_CQ");
		c->cq[i] = m.h[0];
	}
	m = (struct dmn_msg){ .type = DMN_DQ_OPEN, .u.dq = { nqp, ncq, DEPTH, DEPTH, CQ_DEPTH } };
	if (call_fd(c, &m, -1, &fd) != 0 || fd < 0)
		die("DQ_OPEN", m.err != 0 ? m.err : EBADF);
	c->g = (struct dq_geom){ nqp, ncq, DEPTH, DEPTH, CQ_DEPTH };
	c->region = mmap(NULL, m.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c->region == MAP_FAILED)
		die("mmap of the region", errno);
	close(fd);
	h = c->region;
	check(h->magic == DQ_MAGIC && h->size == m.len && m.len == dq_region_size(&c->g),
	      "the region's header");
	for (uint32_t i = 0; i < ncq; i++) {
		m = (struct dmn_msg){ .type = DMN_DQ_ATTACH, .h = { c->cq[i] }, .arg = DMN_DQ_CQ,
				      .key = i };
		call(c, &m, "DQ_ATTACH of a CQ");
	}
}

/* An RC QP on CQ cq in slot i (its name in events: 0x200 + i), of
 * max_inline_data inl and max_send_sge sge. */
static void
qp_make(struct client *c, uint32_t i, uint32_t cq, uint32_t inl, uint32_t sge)
{
	struct dmn_msg m = { .type = DMN_CREATE_QP, .h = { c->pd, c->cq[cq], c->cq[cq] },
			     .addr = 0x200 + i };

	m.u.qp_init.qp_type = DROCE_QPT_RC;
	m.u.qp_init.cap = (struct droce_qp_cap){ DEPTH, DEPTH, sge, DQ_MAX_SGE, inl };
	call(c, &m, "CREATE_QP");
	c->qp[i] = m.h[0];
	c->qpn[i] = m.key;
	m = (struct dmn_msg){ .type = DMN_DQ_ATTACH, .h = { c->qp[i] }, .arg = DMN_DQ_QP,
			      .key = i };
	call(c, &m, "DQ_ATTACH of a QP");
}

/* An SRQ of 2 SGEs a receive in slot i (its name: 0x200 + i). */
static void
srq_make(struct client *c, uint32_t i)
{
	struct dmn_msg m = { .type = DMN_CREATE_SRQ, .h = { c->pd }, .addr = 0x200 + i,
			     .u.srq = { .max_wr = DEPTH / 4, .max_sge = 2 } };

	call(c, &m, "CREATE_SRQ");
	c->srq = m.h[0];
	m = (struct dmn_msg){ .type = DMN_DQ_ATTACH, .h = { c->srq }, .arg = DMN_DQ_SRQ,
			      .key = i };
	call(c, &m, "DQ_ATTACH of an SRQ");
}

static void
modify(struct client *c, uint32_t i, const struct droce_qp_attr *a, int mask, const char *what)
{
	struct dmn_msg m = { .type = DMN_MODIFY_QP, .h = { c->qp[i] }, .arg = mask };

	m.u.qp.attr = *a;
	call(c, &m, what);
}

/* Slot i's QP RESET -> INIT -> RTR -> RTS towards qpn on droced's own GID. */
static void
qp_connect(struct client *c, uint32_t i, uint32_t qpn)
{
	struct droce_qp_attr a = { .qp_state = DROCE_QPS_INIT, .port_num = 1,
		.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ };

	modify(c, i, &a, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
	       DROCE_QP_ACCESS_FLAGS, "INIT");
	a = (struct droce_qp_attr){ .qp_state = DROCE_QPS_RTR, .path_mtu = DROCE_MTU_1024,
				    .dest_qp_num = qpn, .max_dest_rd_atomic = 4,
				    .min_rnr_timer = 1 };
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.dgid = c->gid;
	modify(c, i, &a, DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN |
	       DROCE_QP_RQ_PSN | DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER, "RTR");
	a = (struct droce_qp_attr){ .qp_state = DROCE_QPS_RTS, .timeout = 14, .retry_cnt = 7,
				    .rnr_retry = 7, .max_rd_atomic = 4 };
	modify(c, i, &a, DROCE_QP_STATE | DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT |
	       DROCE_QP_RNR_RETRY | DROCE_QP_SQ_PSN | DROCE_QP_MAX_QP_RD_ATOMIC, "RTS");
}

static int
qp_state(struct client *c, uint32_t i)
{
	struct dmn_msg m = { .type = DMN_QUERY_QP, .h = { c->qp[i] }, .arg = DROCE_QP_STATE };

	call(c, &m, "QUERY_QP");
	return (int)m.u.qp.attr.qp_state;
}

/* ---- the rings ------------------------------------------------------------------------ */

static void
post_send(struct client *c, uint32_t i, const struct dq_send_wqe *w)
{
	int rc = dq_send_post(dq_sq(c->region, &c->g, i), DEPTH, &c->sq_prod[i], w);

	if (rc != 0)
		die("send ring", -rc);
}

/* An inline descriptor w into slot i's send ring, bytes of data after
 * it, then the producer index moved by publish entries. */
static void
post_inline(struct client *c, uint32_t i, struct dq_send_wqe w, const void *data, uint32_t bytes,
	    uint32_t publish)
{
	struct dq_ring *r = dq_sq(c->region, &c->g, i);

	((struct dq_send_wqe *)dq_ring_entries(r))[c->sq_prod[i] & (DEPTH - 1)] = w;
	dq_inline_write(r, DEPTH, c->sq_prod[i], 0, data, bytes);
	c->sq_prod[i] += publish;
	dq_ring_produced(r, c->sq_prod[i]);
}

static void
post_recv_at(struct client *c, uint32_t i, uint64_t wr_id, uint32_t off)
{
	struct dq_recv_wqe w = { .wr_id = wr_id, .num_sge = 1,
				 .sge = { { (uint64_t)(uintptr_t)(c->buf + off), MSG, c->lkey } } };
	int rc = dq_recv_post(dq_rq(c->region, &c->g, i), DEPTH, &c->rq_prod[i], &w);

	if (rc != 0)
		die("receive ring", -rc);
}

/* The next completion of CQ slot cq, waited for (sched_yield: droced's
 * poller and engine share the machine's cores). */
static void
cqe_wait(struct client *c, uint32_t cq, struct dq_cqe *e)
{
	uint64_t end = now_ms() + WAIT_MS;
	int rc;

	while ((rc = dq_cqe_take(dq_cq(c->region, &c->g, cq), CQ_DEPTH, &c->cq_cons[cq], e)) == 0) {
		if (now_ms() > end)
			die("no completion", ETIMEDOUT);
		sched_yield();
	}
	if (rc < 0)
		die("completion ring", -rc);
}

/* ---- reader and writer --------------------------------------------------------------------- */

static uint8_t
pattern(uint32_t round, uint32_t k)
{
	return (uint8_t)(round * 131 + k * 7 + 1);
}

/* "ready ..." out, the other end's "QPN ADDR RKEY" in. */
static void
exchange(struct client *c, uint32_t *qpn, uint64_t *addr, uint32_t *rkey)
{
	printf("ready qpn=%u addr=0x%" PRIx64 " rkey=0x%x lkey=0x%x qp=0x%" PRIx64 "\n",
	       c->qpn[0], (uint64_t)(uintptr_t)c->buf, c->rkey, c->lkey, c->qp[0]);
	fflush(stdout);
	if (scanf("%u %" SCNx64 " %x", qpn, addr, rkey) != 3)
		die("the other end's line", EINVAL);
}

static void
send_imm(struct client *c, uint64_t wr_id, uint32_t off, uint32_t imm)
{
	struct dq_send_wqe w = { .wr_id = wr_id, .opcode = DQ_WR_SEND_WITH_IMM, .num_sge = 1,
				 .flags = DQ_SEND_SIGNALED, .imm = imm,
				 .sge = { { (uint64_t)(uintptr_t)(c->buf + off), MSG, c->lkey } } };

	post_send(c, 0, &w);
}

static int
run_reader(struct client *c)
{
	uint32_t qpn, rkey, rounds = 0;
	uint64_t addr;

	exchange(c, &qpn, &addr, &rkey);
	qp_connect(c, 0, qpn);	/* then receives: droced refuses them in RESET */
	for (uint32_t k = 0; k < DEPTH; k++)
		post_recv_at(c, 0, k, ECHO_OFF + MSG * k);
	printf("reader: connected\n");
	fflush(stdout);
	for (;;) {
		struct dq_cqe e;
		uint32_t round;

		cqe_wait(c, 0, &e);
		check(e.status == DROCE_WC_SUCCESS, "reader: a completion's status");
		if (e.opcode != DROCE_WC_RECV)
			continue;	/* its echo's */
		check(e.wc_flags & DROCE_WC_WITH_IMM, "reader: a SEND without immediate");
		round = ntohl(e.imm);
		if (round == STOP)
			break;
		for (uint32_t k = 0; k < CHUNK; k++)
			if (c->buf[(round % CHUNKS) * CHUNK + k] != pattern(round, k)) {
				printf("reader: round %u: byte %u differs\n", round, k);
				return 1;
			}
		rounds++;
		post_recv_at(c, 0, e.wr_id, ECHO_OFF + MSG * (uint32_t)e.wr_id);
		send_imm(c, 1000 + round, ECHO_OFF + MSG * (uint32_t)e.wr_id, e.imm);
	}
	printf("reader: %u rounds, every WRITE's bytes in place\n", rounds);
	return 0;
}

static bool
stdin_line(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* Round r: a WRITE into the reader's chunk, a SEND naming it, its echo. */
static void
write_round(struct client *c, uint32_t r, uint64_t addr, uint32_t rkey)
{
	struct dq_send_wqe w = { .wr_id = r, .opcode = DQ_WR_RDMA_WRITE, .num_sge = 1,
				 .flags = DQ_SEND_SIGNALED,
				 .remote_addr = addr + (r % CHUNKS) * CHUNK, .rkey = rkey,
				 .sge = { { (uint64_t)(uintptr_t)c->buf, CHUNK, c->lkey } } };
	bool wrote = false, sent = false, echoed = false;

	for (uint32_t k = 0; k < CHUNK; k++)
		c->buf[k] = pattern(r, k);
	post_send(c, 0, &w);
	send_imm(c, (uint64_t)r << 32 | 1, CHUNK, htonl(r));
	while (!(wrote && sent && echoed)) {
		struct dq_cqe e;

		cqe_wait(c, 0, &e);
		if (e.status != DROCE_WC_SUCCESS) {
			printf("writer: round %u: %s completion status %u\n", r,
			       e.opcode == DROCE_WC_RDMA_WRITE ? "WRITE" : "a", e.status);
			exit(1);
		}
		if (e.opcode == DROCE_WC_RDMA_WRITE && e.wr_id == r)
			wrote = true;
		else if (e.opcode == DROCE_WC_SEND && e.wr_id == ((uint64_t)r << 32 | 1))
			sent = true;
		else if (e.opcode == DROCE_WC_RECV && ntohl(e.imm) == r) {
			echoed = true;
			post_recv_at(c, 0, e.wr_id, ECHO_OFF + MSG * (uint32_t)e.wr_id);
		} else {
			printf("writer: round %u: unexpected completion\n", r);
			exit(1);
		}
	}
}

static int
run_writer(struct client *c)
{
	uint32_t qpn, rkey, r = 0;
	uint64_t addr;
	struct dq_cqe e;

	exchange(c, &qpn, &addr, &rkey);
	qp_connect(c, 0, qpn);	/* then receives: droced refuses them in RESET */
	for (uint32_t k = 0; k < DEPTH; k++)
		post_recv_at(c, 0, k, ECHO_OFF + MSG * k);
	(void)getchar();	/* the newline after the other end's line */
	for (; r < 100 || !stdin_line(); r++) {
		write_round(c, r, addr, rkey);
		if (r % 256 == 100) {
			printf("writer: %u rounds\n", r);
			fflush(stdout);
		}
	}
	send_imm(c, 2, CHUNK, htonl(STOP));
	cqe_wait(c, 0, &e);
	check(e.status == DROCE_WC_SUCCESS && e.wr_id == 2, "writer: the stop's completion");
	printf("writer: %u rounds of WRITE + SEND + echo, every completion SUCCESS\n", r);
	return 0;
}

/* ---- hostile ---------------------------------------------------------------------------------- */

/*
 * Slot 7's QP (max_inline_data 256, connected to itself) WRITEs 200
 * bytes inline into our own buffer: 3 ring entries, its completion and
 * its bytes checked (droced carries inline data before it refuses the
 * forged one below).
 */
static void
inline_write(struct client *c)
{
	struct dq_send_wqe w = { .wr_id = 0x77, .opcode = DQ_WR_RDMA_WRITE,
				 .flags = DQ_SEND_SIGNALED | DQ_SEND_INLINE, .inline_len = INL_LEN,
				 .remote_addr = (uint64_t)(uintptr_t)(c->buf + INL_OFF),
				 .rkey = c->rkey };
	uint8_t data[INL_LEN];
	struct dq_cqe e;

	for (uint32_t k = 0; k < INL_LEN; k++)
		data[k] = pattern(77, k);
	post_inline(c, 7, w, data, INL_LEN, dq_send_slots(INL_LEN));
	cqe_wait(c, 0, &e);
	check(e.status == DROCE_WC_SUCCESS && e.wr_id == 0x77 && e.opcode == DROCE_WC_RDMA_WRITE,
	      "hostile: the inline WRITE's completion");
	check(memcmp(c->buf + INL_OFF, data, INL_LEN) == 0, "hostile: the inline WRITE's bytes");
	printf("hostile: an inline WRITE of %u bytes in %u entries: completion and bytes right\n",
	       INL_LEN, dq_send_slots(INL_LEN));
}

/*
 * Descriptor w into slot i's send ring with SGEs beyond its own 4 (n in
 * all, sge[k] for every k) in the entries after it, then the producer
 * index moved by publish entries.
 */
static void
post_sges(struct client *c, uint32_t i, struct dq_send_wqe w, const struct dq_sge *sge, uint32_t n,
	  uint32_t publish)
{
	struct dq_ring *r = dq_sq(c->region, &c->g, i);

	w.num_sge = (uint8_t)n;
	((struct dq_send_wqe *)dq_ring_entries(r))[c->sq_prod[i] & (DEPTH - 1)] = w;
	for (uint32_t k = 0; k < n; k++)
		dq_send_sge_write(r, DEPTH, c->sq_prod[i], k, &sge[k]);
	c->sq_prod[i] += publish;
	dq_ring_produced(r, c->sq_prod[i]);
}

/* The same for a receive descriptor into slot i's receive ring. */
static void
post_recv_sges(struct client *c, uint32_t i, const struct dq_sge *sge, uint32_t n,
	       uint32_t publish)
{
	struct dq_ring *r = dq_rq(c->region, &c->g, i);

	((struct dq_recv_wqe *)dq_ring_entries(r))[c->rq_prod[i] & (DEPTH - 1)] =
		(struct dq_recv_wqe){ .wr_id = 0x99, .num_sge = (uint8_t)n };
	for (uint32_t k = 0; k < n; k++)
		dq_recv_sge_write(r, DEPTH, c->rq_prod[i], k, &sge[k]);
	c->rq_prod[i] += publish;
	dq_ring_produced(r, c->rq_prod[i]);
}

/*
 * Garbage in the SGEs after a descriptor's own 4 (slots 11-16): more than
 * its QP's cap (5 granted, 6 named), 16 SGEs of 3 entries with 1
 * published, another application's lkey in the 7th SGE of 8, a receive
 * of 12 SGEs (3 entries) with 2 published, in the SRQ a receive of 3
 * SGEs (it was granted 2), and a 7th SGE of 8 whose range wraps around.
 * Each list otherwise well formed: our own buffer, our own lkey.
 */
static void
sge_garbage(struct client *c, uint32_t other_lkey)
{
	struct dq_send_wqe s = { .opcode = DQ_WR_SEND };
	struct dq_sge sge[DQ_MAX_SGE];

	for (uint32_t k = 0; k < DQ_MAX_SGE; k++)
		sge[k] = (struct dq_sge){ (uint64_t)(uintptr_t)c->buf + k * MSG, 8, c->lkey };
	post_sges(c, 11, s, sge, SGE_CAP + 1, dq_send_sge_slots(SGE_CAP + 1));
	post_sges(c, 12, s, sge, DQ_MAX_SGE, 1);
	sge[6].lkey = other_lkey;
	post_sges(c, 13, s, sge, 8, dq_send_sge_slots(8));
	sge[6].lkey = c->lkey;
	post_recv_sges(c, 14, sge, 12, dq_recv_slots(12) - 1);
	post_recv_sges(c, SRQ_SLOT, sge, 3, dq_recv_slots(3));
	sge[6].addr = UINT64_MAX - 4;
	post_sges(c, 16, s, sge, 8, dq_send_sge_slots(8));
}

/*
 * One kind of garbage per QP slot; the last slot's QP is on CQ 1, whose
 * consumer index goes bad.  Each must end its QP (its SRQ, and CQ 1) only:
 * by droced's refusal (an event), or for an lkey not ours (slots 4, 6, 13)
 * by the engine's LOC_PROT_ERR completion, as in process.
 */
static void
garbage(struct client *c, uint32_t other_lkey)
{
	struct dq_send_wqe s = { .opcode = DQ_WR_SEND, .num_sge = 1,
				 .sge = { { (uint64_t)(uintptr_t)c->buf, MSG, c->lkey } } };
	struct dq_send_wqe inl = { .opcode = DQ_WR_SEND, .flags = DQ_SEND_INLINE };
	uint8_t data[DQ_MAX_INLINE] = { 0 };
	struct dq_recv_wqe r = { .num_sge = 1,
				 .sge = { { (uint64_t)(uintptr_t)c->buf, MSG, c->lkey } } };

	dq_sq(c->region, &c->g, 0)->prod = DEPTH + 5;		/* beyond the ring */
	dq_rq(c->region, &c->g, 1)->prod = 0xdeadbeef;
	s.opcode = 200;						/* unknown */
	post_send(c, 2, &s);
	s.opcode = DQ_WR_SEND;
	s.num_sge = DQ_MAX_SGE + 1;				/* above DQ_MAX_SGE */
	post_send(c, 3, &s);
	s.num_sge = 1;
	s.sge[0].lkey = other_lkey;				/* another application's */
	post_send(c, 4, &s);
	r.sge[0].addr = UINT64_MAX - 8;				/* wraps around */
	dq_recv_post(dq_rq(c->region, &c->g, 5), DEPTH, &c->rq_prod[5], &r);
	s.sge[0].lkey = c->lkey ^ 0x5a5a00;			/* nobody's */
	post_send(c, 6, &s);
	inl.inline_len = 4096;			/* above DQ_MAX_INLINE */
	post_inline(c, 7, inl, data, 0, 1);
	inl.inline_len = DQ_MAX_INLINE;		/* 3 entries, 1 published */
	post_inline(c, 8, inl, data, DQ_MAX_INLINE, 1);
	/* asked for none, its room the SGEs' 64 bytes (lib/transport) */
	inl.inline_len = 200;
	post_inline(c, 9, inl, data, 200, dq_send_slots(200));
	s = (struct dq_send_wqe){ .opcode = DQ_WR_BIND_MW, .imm = 0x1234, .rkey = 0x123456,
				  .remote_addr = (uint64_t)(uintptr_t)c->buf };
	s.bind.length = MSG;				/* a window of nobody's */
	s.bind.mr_lkey = c->lkey;
	post_send(c, 10, &s);
	sge_garbage(c, other_lkey);
	dq_cq(c->region, &c->g, 1)->cons = 12345;		/* ahead of droced's */
}

/* PERSIST_MR of its MR (its own pages) with fds other than the memfd
 * droced maps them from: each EFAULT; with that memfd the region is made,
 * then released by name. */
static void
persist_forged(struct client *c)
{
	static const char *const what[] = { "no fd", "another memfd",
					    "its memfd opened read-only", "a pipe" };
	int other = memfd_create("dq-client-other", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	int pfd[2], ro, fds[4];
	struct dmn_msg m;
	char path[64];
	int rc;

	if (other < 0 || ftruncate(other, BUF_LEN) != 0 ||
	    fcntl(other, F_ADD_SEALS, F_SEAL_SHRINK) != 0 || pipe2(pfd, O_CLOEXEC) != 0)
		die("the forged fds", errno);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", c->buf_fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro < 0)
		die("a read-only open of the memfd", errno);
	fds[0] = -1;
	fds[1] = other;
	fds[2] = ro;
	fds[3] = pfd[0];
	for (int i = 0; i < 4; i++) {
		m = (struct dmn_msg){ .type = DMN_PERSIST_MR, .h = { c->mr }, .u.name = "forged" };
		rc = call_fd(c, &m, fds[i], NULL);
		printf("hostile: PERSIST_MR with %s: %s\n", what[i], strerror(rc));
	}
	m = (struct dmn_msg){ .type = DMN_PERSIST_MR, .h = { c->mr }, .u.name = "forged" };
	rc = call_fd(c, &m, c->buf_fd, NULL);
	printf("hostile: PERSIST_MR with its memfd: %s\n", strerror(rc));
	m = (struct dmn_msg){ .type = DMN_RELEASE, .u.name = "forged" };
	rc = call_fd(c, &m, -1, NULL);
	printf("hostile: its release: %s\n", strerror(rc));
	fflush(stdout);
}

/* Context indices droced never gave (struct dmn_msg's ctx): each
 * request refused EINVAL, nothing made. */
static void
forged_ctx(struct client *c)
{
	const struct dmn_msg forged[] = {
		{ .type = DMN_ALLOC_PD, .ctx = 1 },		/* in range, not open */
		{ .type = DMN_ALLOC_PD, .ctx = DQ_MAX_CTXS },
		{ .type = DMN_CREATE_CQ, .arg = 4, .ctx = UINT32_MAX },
		{ .type = DMN_ATTACH_MR, .ctx = 0x80000000u, .u.name = "nobody" },
		{ .type = DMN_DQ_CTX_CLOSE, .ctx = 7 },
	};
	uint32_t refused = 0;

	for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		struct dmn_msg m = forged[i];

		refused += call_fd(c, &m, -1, NULL) == EINVAL;
	}
	printf("hostile: forged context indices: %u of %zu EINVAL\n", refused,
	       sizeof(forged) / sizeof(forged[0]));
}

/*
 * CQ 0's completions after the garbage: a LOC_PROT_ERR for each SEND whose
 * lkey is not ours (slots 4, 6, 13: another application's, nobody's,
 * another's in the 7th SGE of 8), one each; flushes of the QPs droced
 * ended (none expected, tolerated); nothing else.
 */
static void
key_completions(struct client *c)
{
	uint32_t seen = 0, other = 0;

	while (seen != KEY_SLOTS) {
		struct dq_cqe e;
		uint32_t i;

		cqe_wait(c, 0, &e);
		for (i = 0; i < HOSTILE_QPS && c->qpn[i] != e.qp_num; i++)
			;
		if (e.status == DROCE_WC_LOC_PROT_ERR && i < HOSTILE_QPS &&
		    (KEY_SLOTS & 1u << i) && !(seen & 1u << i))
			seen |= 1u << i;
		else if (e.status != DROCE_WC_WR_FLUSH_ERR)
			other++;
	}
	check(seen == KEY_SLOTS && other == 0, "hostile: a LOC_PROT_ERR for each lkey not ours");
	printf("hostile: LOC_PROT_ERR completions of slots%s%s%s, %u other\n",
	       seen & 1u << 4 ? " 4" : "", seen & 1u << 6 ? " 6" : "", seen & 1u << 13 ? " 13" : "",
	       other);
}

static int
run_hostile(struct client *c, uint32_t other_lkey, uint64_t other_qp)
{
	struct dmn_msg m = { .type = DMN_DQ_ATTACH, .h = { other_qp }, .arg = DMN_DQ_QP,
			     .key = HOSTILE_QPS - 1 };
	uint32_t qp_err = 0, cq_err = 0, srq_err = 0, seen = 0;
	uint64_t end = now_ms() + WAIT_MS;
	int rc = call_fd(c, &m, -1, NULL);

	printf("hostile: attach of another's QP: %s\n", strerror(rc));
	forged_ctx(c);
	/* live QPs, each connected to itself: droced's engine would take a
	 * well-formed request on any of them, so only droced's checks stop
	 * the garbage */
	for (uint32_t i = 0; i < HOSTILE_QPS; i++)
		if (i != SRQ_SLOT)
			qp_connect(c, i, c->qpn[i]);
	inline_write(c);
	garbage(c, other_lkey);
	printf("hostile: garbage written\n");
	fflush(stdout);
	while (qp_err + srq_err + cq_err < REFUSED && now_ms() < end) {
		struct dq_event e;

		rc = dq_event_take(dq_evq(c->region, &c->g, 0), &c->ev_cons, &e);
		if (rc < 0)
			die("event ring", -rc);
		if (rc == 0) {
			sched_yield();
			continue;
		}
		printf("hostile: event %u slot %u name 0x%" PRIx64 "\n", e.type, e.slot, e.name);
		/* one per garbage slot, in any order: droced's pass over the
		 * slots may be under way while the garbage is written (it then
		 * meets a later slot's before an earlier one's) */
		if (e.type == DROCE_EVENT_QP_REQ_ERR && e.slot < HOSTILE_QPS - 1 &&
		    e.slot != SRQ_SLOT && !(KEY_SLOTS & 1u << e.slot) && !(seen & 1u << e.slot) &&
		    e.name == 0x200 + e.slot) {
			seen |= 1u << e.slot;
			qp_err++;
		}
		else if (e.type == DROCE_EVENT_SRQ_ERR && e.slot == SRQ_SLOT && srq_err == 0 &&
			 e.name == 0x200 + SRQ_SLOT)
			srq_err++;
		else if (e.type == DROCE_EVENT_CQ_ERR && e.slot == 1 && e.name == 0x101)
			cq_err++;
		else
			check(false, "an event not of the garbage");
	}
	printf("hostile: %u QP_REQ_ERR, one per slot, %u SRQ_ERR, %u CQ_ERR\n", qp_err, srq_err,
	       cq_err);
	key_completions(c);
	printf("hostile: QP states:");
	for (uint32_t i = 0; i < HOSTILE_QPS; i++)
		if (i != SRQ_SLOT)
			printf(" %d", qp_state(c, i));
	printf("\n");
	fflush(stdout);
	(void)getchar();	/* held until the test has looked */
	persist_forged(c);
	return 0;
}

/* A QP's max_send_sge: a descriptor's own 4 (slot 9's inline room then
 * their 64 bytes), more only where the garbage needs it. */
static uint32_t
hostile_sges(bool hostile, uint32_t i)
{
	if (hostile && i == 11)
		return SGE_CAP;
	return hostile && (i == 12 || i == 13 || i == 16) ? DQ_MAX_SGE : DQ_WQE_SGE;
}

int
main(int argc, char **argv)
{
	struct client c = { 0 };
	bool hostile = argc == 5 && strcmp(argv[2], "hostile") == 0;

	if (argc < 3 || (!hostile && argc != 3)) {
		fprintf(stderr, "usage: dq_client SOCK reader|writer|hostile LKEY QP\n");
		return 2;
	}
	connect_droced(&c, argv[1]);
	buffer_reg(&c);
	region_open(&c, hostile ? HOSTILE_QPS : 1, hostile ? 2 : 1);
	for (uint32_t i = 0; i < (hostile ? HOSTILE_QPS : 1); i++)
		if (hostile && i == SRQ_SLOT)
			srq_make(&c, i);
		else
			qp_make(&c, i, hostile && i == HOSTILE_QPS - 1 ? 1 : 0,
				hostile && (i == 7 || i == 8) ? DQ_MAX_INLINE : 0,
				hostile_sges(hostile, i));
	if (hostile)
		return run_hostile(&c, (uint32_t)strtoul(argv[3], NULL, 0),
				   strtoull(argv[4], NULL, 0));
	if (strcmp(argv[2], "reader") == 0)
		return run_reader(&c);
	return run_writer(&c);
}
