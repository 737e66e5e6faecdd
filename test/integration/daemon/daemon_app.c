/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * daemon_app - the processes of the daemon tests (daemon_test.py):
 *
 *   daemon_app [EAL] -- [--droce-...] peer PEERSOCK
 *       in-process droce on the other end of the memif: per connection one
 *       RC QP and a buffer; "echo" sessions send back every SEND, "hammer"
 *       sessions WRITE then READ back the application's buffer in a loop
 *       (a shadow of what was written checks every READ) and print the
 *       first failed completion with its CLOCK_MONOTONIC time; "badwrite"
 *       sessions, at the application's byte on the socket, WRITE with a
 *       wrong rkey
 *   daemon_app [EAL] -- --droce-daemon=PATH MODE PEERSOCK ...
 *       applications on droced:
 *       traffic PEERSOCK ROUNDS [HANDLEFILE STOPFILE]
 *           WRITE, READ back, SEND/echo; bytes checked every round;
 *           with HANDLEFILE: its handles written there, rounds go on
 *           until STOPFILE exists, then ROUNDS more
 *       forge PEERSOCK HANDLEFILE   names another application's objects
 *       target PEERSOCK LEN [paced]  a buffer the peer hammers; waits.
 *                                   paced: once this process's socket
 *                                   closed, the peer's rounds are PACE_US
 *                                   apart (none in flight at the reap)
 *       churn                       create/destroy objects in a loop
 *       idle PEERSOCK               ready, then (a line on stdin) data and
 *                                   control verbs after the daemon died
 *       own PEERSOCK                the application's own (malloc'd) memory
 *                                   registered, used by both ends; waits
 *       persist PEERSOCK NAME LEASE_MS hammer|persist AFTER
 *           a buffer marked persistent as NAME (lease LEASE_MS, 0: none,
 *           renewed once 50 ms later), hammered by the peer; waits.  With
 *           "persist" the peer goes on for exactly AFTER rounds once this
 *           process's socket closed, then waits for PEERSOCK.resume and
 *           hammers again
 *       attach NAME PATTERN [keep|dereg]
 *           attaches NAME, checks that it holds the peer's WRITE of PATTERN
 *           ("-": not checked), releases it after a line on stdin; keep:
 *           waits to be killed instead; dereg: releases it by its dereg
 *       refuse NAME                 what may not be done to another's live
 *                                   region NAME, and to its own
 *       channel PEERSOCK ack|keep   completion events on a channel: woken
 *                                   by the peer's echo (armed for the next
 *                                   completion), an unsolicited echo skipped
 *                                   and a solicited one woken on (armed
 *                                   solicited-only); ack: all acked, then
 *                                   destroyed; keep: the last one unacked,
 *                                   waits to be killed
 *       async PEERSOCK ack|keep     connected, then (a line on stdin) the
 *                                   peer's bad WRITE: exactly one
 *                                   QP_ACCESS_ERR event for its QP; ack: acked,
 *                                   destroyed; keep: unacked, waits to be killed
 *       quiet PEERSOCK              traffic, ready, then (a line on stdin):
 *                                   no event
 *       mw PEERSOCK HANDLEFILE      a type-1 (droce_bind_mw) and a type-2
 *                                   (BIND_MW) window the peer WRITEs through,
 *                                   its SEND_WITH_INV of the type-2 one and
 *                                   a WRITE through it; the handles to
 *                                   HANDLEFILE; a line on stdin: all freed
 *       mwpersist PEERSOCK NAME     the same windows on a region persistent
 *                                   as NAME; the peer's script for after
 *                                   our death (S_OPS's OP_AFTER_DEATH); waits
 *       mwforge PEERSOCK HANDLEFILE names mw's windows and MR
 *       mwlease PEERSOCK            the same windows; a lease on the type-1
 *                                   one runs out (mw_lease); all freed
 *       hold                        a PD, buffer, MR, CQ and QP; ready; a
 *                                   line on stdin: all freed
 *       unsupported                 what droced once lacked: rereg_mr
 *                                   (rights and PD keep the keys, a new
 *                                   translation new ones), query_pkey,
 *                                   System V memory (and forged pieces)
 *       fork                        an MR on its heap, fork(): the child's
 *                                   copy of the moved page is its own
 *       evfree                      an MR and a window whose leases ran out,
 *                                   freed with their event queued (none may
 *                                   be left) and taken (the free waits for
 *                                   its ack)
 *       srq PEERSOCK HANDLEFILE     an RC QP on an SRQ (resized, limit armed),
 *                                   the peer's echoes received from it, its
 *                                   SRQ_LIMIT_REACHED; an AH and a UD QP
 *                                   sending with it; handles to HANDLEFILE;
 *                                   a line on stdin: its QP to ERR,
 *                                   QP_LAST_WQE_REACHED; waits to be killed
 *       srqforge HANDLEFILE         names srq's SRQ and AH (handles, index)
 *       attachlease NAME            attaches NAME, leases it 100 ms, lets the
 *                                   lease run out: the event, then the
 *                                   errnos of an expired region, dereg
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "droce.h"
#include "verbs_daemon.h"

#define BUF_LEN 65536
#define XFER 4096		/* WRITE / READ size */
#define MSG 256			/* SEND size */
#define RECV_OFF 32768		/* where SENDs land */
#define READ_OFF 16384		/* where READs land */
#define PEER_MAX 8

/* S_RW: an echo session that first WRITEs (rkey) and READs back (read_rkey) XFER bytes at addr, then sends one byte: 1 if the READ matched. */
enum session { S_ECHO = 1, S_HAMMER = 2, S_RW = 3,
	       S_PERSIST = 4, S_BADWRITE = 5, S_PACED = 6, S_OPS = 7 };
#define PACE_US 20000
#define RW_SEED 99
#define RW_WRITE 1000
#define RW_READ 1001

/* What the two ends exchange on the peer's socket. */
struct xchg {
	uint32_t mode;
	uint32_t qpn;
	uint32_t rkey;
	uint32_t after;		/* S_PERSIST: rounds after the application's death */
	uint32_t read_rkey;	/* S_RW: the READ's rkey */
	uint32_t pad;
	uint64_t addr;
	uint64_t len;
	uint8_t gid[16];
};

static _Noreturn void
die(const char *what)
{
	fprintf(stderr, "daemon_app: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* fd readable within ms. */
static bool
readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

static void
check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "daemon_app: %s\n", what);
		exit(1);
	}
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int
unix_socket(const char *path, bool listening)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(a.sun_path))
		die("socket");
	memcpy(a.sun_path, path, strlen(path) + 1);
	if (listening) {
		(void)unlink(path);
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(fd, 8) != 0)
			die("bind");
	} else if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		die("connect to the peer");
	}
	return fd;
}

/* ---- one end's objects ---------------------------------------------------------- */

struct end {
	struct droce_context *ctx;
	struct droce_pd *pd;
	struct droce_cq *cq;
	struct droce_qp *qp;
	uint8_t *buf;
	struct droce_mr *mr;
	size_t len;
	bool own;		/* buf is the application's, not droce_alloc_buf's */
};

/* The objects of an end on buf (NULL: a droce_alloc_buf buffer of len), the CQ
 * on channel ch (NULL: none) with e as its cq_context. */
static void
end_create_on(struct end *e, struct droce_context *ctx, uint8_t *buf, size_t len,
	      struct droce_comp_channel *ch)
{
	struct droce_qp_init_attr init = {
		.qp_type = DROCE_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};

	e->ctx = ctx;
	e->len = len;
	e->pd = droce_alloc_pd(ctx);
	if (e->pd == NULL)
		die("alloc_pd");
	e->own = buf != NULL;
	e->buf = e->own ? buf : droce_alloc_buf(ctx, len);
	if (e->buf == NULL)
		die("alloc_buf");
	e->mr = droce_reg_mr(e->pd, e->buf, len, DROCE_ACCESS_LOCAL_WRITE |
			     DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ);
	if (e->mr == NULL)
		die("reg_mr");
	e->cq = droce_create_cq(ctx, 256, ch != NULL ? e : NULL, ch, 0);
	if (e->cq == NULL)
		die("create_cq");
	init.send_cq = e->cq;
	init.recv_cq = e->cq;
	e->qp = droce_create_qp(e->pd, &init);
	if (e->qp == NULL)
		die("create_qp");
}

static void
end_create(struct end *e, struct droce_context *ctx, size_t len)
{
	end_create_on(e, ctx, NULL, len, NULL);
}

static void
end_destroy(struct end *e)
{
	if (droce_destroy_qp(e->qp) != 0 || droce_destroy_cq(e->cq) != 0 ||
	    droce_dereg_mr(e->mr) != 0 || (!e->own && droce_free_buf(e->ctx, e->buf) != 0) ||
	    droce_dealloc_pd(e->pd) != 0)
		die("destroy");
}

/* RESET -> INIT -> RTR -> RTS towards the other end's QP number and GID. */
static void
end_connect(struct end *e, uint32_t qpn, const uint8_t gid[16])
{
	struct droce_qp_attr a = { .qp_state = DROCE_QPS_INIT, .port_num = 1,
		.qp_access_flags = DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_REMOTE_READ };

	if (droce_modify_qp(e->qp, &a, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX |
			    DROCE_QP_PORT | DROCE_QP_ACCESS_FLAGS) != 0)
		die("INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTR;
	a.path_mtu = DROCE_MTU_1024;
	a.dest_qp_num = qpn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	memcpy(a.ah_attr.grh.dgid.raw, gid, 16);
	if (droce_modify_qp(e->qp, &a, DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU |
			    DROCE_QP_DEST_QPN | DROCE_QP_RQ_PSN |
			    DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER) != 0)
		die("RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = DROCE_QPS_RTS;
	a.timeout = 17;		/* 537 ms: the crash test's bound is well under it */
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	if (droce_modify_qp(e->qp, &a, DROCE_QP_STATE | DROCE_QP_TIMEOUT |
			    DROCE_QP_RETRY_CNT | DROCE_QP_RNR_RETRY | DROCE_QP_SQ_PSN |
			    DROCE_QP_MAX_QP_RD_ATOMIC) != 0)
		die("RTS");
}

static int
post_rdma(struct end *e, enum droce_wr_opcode op, uint64_t wr_id, uint32_t off,
	  uint32_t len, uint64_t raddr, uint32_t rkey, uint32_t lkey)
{
	struct droce_sge sge = { (uint64_t)(uintptr_t)(e->buf + off), len, lkey };
	struct droce_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				    .opcode = op, .send_flags = DROCE_SEND_SIGNALED };
	struct droce_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return droce_post_send(e->qp, &wr, &bad);
}

static void
post_recv_at(struct end *e, uint64_t wr_id, uint32_t off)
{
	struct droce_sge sge = { (uint64_t)(uintptr_t)(e->buf + off), MSG, e->mr->lkey };
	struct droce_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct droce_recv_wr *bad;

	if (droce_post_recv(e->qp, &wr, &bad) != 0)
		die("post_recv");
}

/* The next completion (spins); exits if none comes within 5 s. */
static struct droce_wc
wait_wc(struct end *e)
{
	uint64_t t0 = now_us();
	struct droce_wc wc;
	int n;

	/* yielding: the peer and droced's engine share this machine's 2 cores */
	while ((n = droce_poll_cq(e->cq, 1, &wc)) == 0) {
		if (now_us() - t0 > 5000000) {
			fprintf(stderr, "daemon_app: no completion within 5 s\n");
			exit(2);
		}
		sched_yield();
	}
	if (n < 0)
		die("poll_cq");
	return wc;
}

static void
fill(uint8_t *p, size_t len, uint64_t seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* ---- the peer --------------------------------------------------------------------- */

struct peer_session {
	int fd;
	enum session mode;
	struct end e;
	struct xchg app;
	uint64_t iter, good, after_fail;
	bool failed, busy;
	unsigned int pending;
	/* S_PERSIST, S_PACED */
	bool gone, waiting;
	uint64_t after;
	uint64_t next_us;	/* S_PACED: the next round once gone */
	uint64_t posted_us;	/* the round in flight was posted then */
	uint64_t good_posted_us;	/* the last good round was posted then */
};

/* S_PERSIST: the file whose existence makes a waiting session hammer again */
static char resume_file[4096];

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

/* The READ of round iter brought back the WRITE's bytes (the shadow). */
static void
check_read(const struct peer_session *s)
{
	uint8_t shadow[XFER];

	fill(shadow, XFER, s->iter);
	if (memcmp(shadow, s->e.buf + READ_OFF, XFER) != 0) {
		printf("peer: READ %" PRIu64 " differs from the shadow\n", s->iter);
		exit(1);
	}
}

/* WRITE pattern(iter) into the application's buffer, then READ it back. */
static void
hammer_post(struct peer_session *s)
{
	fill(s->e.buf, XFER, s->iter);
	memset(s->e.buf + READ_OFF, 0, XFER);
	s->posted_us = now_us();	/* before the post: no packet of it precedes it */
	if (post_rdma(&s->e, DROCE_WR_RDMA_WRITE, 1, 0, XFER, s->app.addr, s->app.rkey,
		      s->e.mr->lkey) != 0 ||
	    post_rdma(&s->e, DROCE_WR_RDMA_READ, 2, READ_OFF, XFER, s->app.addr,
		      s->app.rkey, s->e.mr->lkey) != 0)
		die("hammer post");
	s->pending = 2;
}

static void
hammer_wc(struct peer_session *s, const struct droce_wc *wc)
{
	s->pending--;
	if (wc->status != DROCE_WC_SUCCESS && !s->failed) {
		s->failed = true;
		printf("peer: first failure %s (%d) at %" PRIu64 " us, after %" PRIu64
		       " good rounds\n", droce_wc_status_str(wc->status), (int)wc->status,
		       now_us(), s->good);
		printf("peer: the last good round was posted at %" PRIu64 " us\n",
		       s->good_posted_us);
	} else if (wc->status == DROCE_WC_SUCCESS && s->failed) {
		s->after_fail++;
	} else if (wc->status == DROCE_WC_SUCCESS && wc->wr_id == 2) {
		check_read(s);
		s->good++;
		s->good_posted_us = s->posted_us;
		if (s->good == 100) {
			printf("peer: hammer running\n");
			fflush(stdout);
		}
	}
	if (s->pending > 0)
		return;
	if (s->failed) {
		printf("peer: successes after the failure: %" PRIu64 "\n", s->after_fail);
		fflush(stdout);
		s->mode = 0;	/* done; its QP stays in the error state */
		return;
	}
	if (s->mode == S_PACED && s->gone) {
		s->next_us = now_us() + PACE_US;	/* paced_poll posts it */
		return;
	}
	s->iter++;
	hammer_post(s);
}

/* S_PACED between completions: the owner's death, then a round each PACE_US. */
static void
paced_poll(struct peer_session *s)
{
	char c;

	if (!s->gone && recv(s->fd, &c, 1, MSG_DONTWAIT) == 0) {
		s->gone = true;
		printf("peer: paced: the owner's socket closed after %" PRIu64 " good rounds\n",
		       s->good);
		fflush(stdout);
	}
	if (s->gone && s->pending == 0 && s->next_us != 0 && now_us() >= s->next_us) {
		s->next_us = 0;
		s->iter++;
		hammer_post(s);
	}
}

/* S_RW's READ back: the WRITE's pattern, told to the application. */
static void
rw_done(struct peer_session *s)
{
	uint8_t shadow[XFER], ok;

	fill(shadow, XFER, RW_SEED);
	ok = memcmp(shadow, s->e.buf + READ_OFF, XFER) == 0;
	printf("peer: WRITE and READ back of the application's memory: %s\n",
	       ok ? "same bytes" : "DIFFER");
	fflush(stdout);
	if (send(s->fd, &ok, 1, MSG_NOSIGNAL) != 1)
		die("peer: rw result");
}

/*
 * S_PERSIST: rounds as hammer's until AFTER rounds after the application's
 * socket closed (every one must succeed), then nothing (the region holds
 * the last round's pattern) until the resume file exists, then a hammer
 * session's rounds until the first failure (the release's revocation).
 */
static void
persist_wc(struct peer_session *s, const struct droce_wc *wc)
{
	s->pending--;
	if (wc->status != DROCE_WC_SUCCESS) {
		printf("peer: persist: failure %s after %" PRIu64 " good rounds, %" PRIu64
		       " after the owner's death\n", droce_wc_status_str(wc->status),
		       s->good, s->after);
		fflush(stdout);
		s->mode = 0;
		return;
	}
	if (wc->wr_id == 2) {
		check_read(s);
		s->good++;
		s->good_posted_us = s->posted_us;
		s->after += s->gone;
		if (s->good == 100) {
			printf("peer: hammer running\n");
			fflush(stdout);
		}
	}
	if (s->pending > 0)
		return;
	if (s->gone && s->after == s->app.after) {
		printf("peer: persist: %" PRIu64 " rounds after the owner's death, all ok, "
		       "last pattern %" PRIu64 "\n", s->after, s->iter);
		fflush(stdout);
		s->waiting = true;
		return;
	}
	s->iter++;
	hammer_post(s);
}

/* S_PERSIST between completions: the owner's death, the resume file. */
static void
persist_poll(struct peer_session *s)
{
	char c;

	if (!s->gone && recv(s->fd, &c, 1, MSG_DONTWAIT) == 0) {
		s->gone = true;
		printf("peer: persist: the owner's socket closed after %" PRIu64 " good rounds\n",
		       s->good);
		fflush(stdout);
	}
	if (s->waiting && access(resume_file, F_OK) == 0) {
		s->waiting = false;
		s->mode = S_HAMMER;
		s->iter++;
		hammer_post(s);
		printf("peer: persist: hammering again\n");
		fflush(stdout);
	}
}

static void
echo_wc(struct peer_session *s, const struct droce_wc *wc)
{
	struct droce_sge sge;
	struct droce_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = DROCE_WR_SEND,
				    .send_flags = DROCE_SEND_SIGNALED };
	struct droce_send_wr *bad;

	/* immediate 1: the echo is solicited (the channel case) */
	if ((wc->wc_flags & DROCE_WC_WITH_IMM) && wc->imm_data == htonl(1))
		wr.send_flags |= DROCE_SEND_SOLICITED;
	if (wc->status != DROCE_WC_SUCCESS) {
		printf("peer: echo session: %s\n", droce_wc_status_str(wc->status));
		fflush(stdout);
		s->mode = 0;
		return;
	}
	if (wc->wr_id == RW_READ && wc->opcode == DROCE_WC_RDMA_READ)
		rw_done(s);
	if (wc->opcode != DROCE_WC_RECV)
		return;
	/* the message back, from where it landed; then a new receive there */
	memcpy(s->e.buf + MSG * (wc->wr_id + 64), s->e.buf + MSG * wc->wr_id, wc->byte_len);
	sge = (struct droce_sge){ (uint64_t)(uintptr_t)(s->e.buf + MSG * (wc->wr_id + 64)),
				  wc->byte_len, s->e.mr->lkey };
	if (droce_post_send(s->e.qp, &wr, &bad) != 0)
		die("echo send");
	post_recv_at(&s->e, wc->wr_id, (uint32_t)(MSG * wc->wr_id));
}

/* At the application's byte: one WRITE with a key it does not have. */
static void
badwrite_post(struct peer_session *s)
{
	char c;

	if (s->pending != 0 || recv(s->fd, &c, 1, MSG_DONTWAIT) != 1)
		return;
	if (post_rdma(&s->e, DROCE_WR_RDMA_WRITE, 7, 0, 64, s->app.addr,
		      s->app.rkey ^ 0x80, s->e.mr->lkey) != 0)
		die("bad write post");
	s->pending = 1;
}

static void
badwrite_wc(struct peer_session *s, const struct droce_wc *wc)
{
	printf("peer: bad write: %s\n", droce_wc_status_str(wc->status));
	fflush(stdout);
	s->mode = 0;
}

/* ---- memory windows: the peer's side (S_OPS) ---------------------------------------- */

/*
 * An S_OPS session runs what the application asks, one op at a time: the
 * op, then the completion's status back.  OP_AFTER_DEATH is kept for the
 * application's death (its socket closed) and the resume file: n WRITEs
 * through the window (rkey, addr), its SEND_WITH_INV, then a WRITE through
 * the region's own key (rkey2), which a released region NAKs.
 */
enum op_code { OP_WRITE = 1, OP_SEND_INV = 2, OP_AFTER_DEATH = 3 };

struct op {
	uint32_t code;
	uint32_t rkey;
	uint32_t rkey2;
	uint32_t n;
	uint64_t addr;
	uint64_t seed;
};

/* the sessions' OP_AFTER_DEATH, by their socket */
static struct {
	int fd;
	struct op o;
} after_death[PEER_MAX];

/* The session's kept OP_AFTER_DEATH (NULL: none), or a free slot for it (want_free). */
static struct op *
after_of(int fd, bool want_free)
{
	for (int i = 0; i < PEER_MAX; i++)
		if ((after_death[i].o.code == 0) == want_free &&
		    (want_free || after_death[i].fd == fd)) {
			after_death[i].fd = fd;
			return &after_death[i].o;
		}
	return NULL;
}

/* One op on the peer's QP, waited for: the completion's status. */
static enum droce_wc_status
op_run(struct peer_session *s, const struct op *o)
{
	struct droce_sge sge = { (uint64_t)(uintptr_t)s->e.buf, XFER, s->e.mr->lkey };
	struct droce_send_wr wr = { .wr_id = 40, .sg_list = &sge, .num_sge = 1,
				    .send_flags = DROCE_SEND_SIGNALED };
	struct droce_send_wr *bad;

	if (o->code == OP_WRITE) {
		fill(s->e.buf, XFER, o->seed);
		wr.opcode = DROCE_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = o->addr;
		wr.wr.rdma.rkey = o->rkey;
	} else {
		sge.length = MSG;
		wr.opcode = DROCE_WR_SEND_WITH_INV;
		wr.invalidate_rkey = o->rkey;
	}
	if (droce_post_send(s->e.qp, &wr, &bad) != 0)
		die("peer: op post");
	return wait_wc(&s->e).status;
}

/* The application's death, then (the resume file) its script. */
static void
ops_after_death(struct peer_session *s, const struct op *o)
{
	struct op w = { .code = OP_WRITE, .rkey = o->rkey, .addr = o->addr };
	enum droce_wc_status inv, last = DROCE_WC_SUCCESS;
	uint32_t ok = 0;

	while (access(resume_file, F_OK) != 0 && !stop)
		usleep(1000);
	for (uint32_t i = 0; i < o->n && last == DROCE_WC_SUCCESS; i++) {
		w.seed = i;
		last = op_run(s, &w);
		ok += last == DROCE_WC_SUCCESS;
	}
	w.code = OP_SEND_INV;
	inv = op_run(s, &w);
	usleep(100000);	/* droced's look at the windows, its release */
	w.code = OP_WRITE;
	w.rkey = o->rkey2;
	last = op_run(s, &w);
	printf("peer: ops: after the owner's death %u of %u WRITEs through the window ok, "
	       "SEND_WITH_INV %s, then a WRITE with the region's key: %s\n", ok, o->n,
	       droce_wc_status_str(inv), droce_wc_status_str(last));
	fflush(stdout);
}

static void
ops_poll(struct peer_session *s)
{
	struct op *after = after_of(s->fd, false);
	struct op o;
	ssize_t n = recv(s->fd, &o, sizeof(o), MSG_DONTWAIT);
	int32_t st;

	if (n == 0) {
		if (after != NULL && after->code == OP_AFTER_DEATH)
			ops_after_death(s, after);
		if (after != NULL)
			after->code = 0;
		s->mode = 0;
		return;
	}
	if (n != (ssize_t)sizeof(o))
		return;
	if (o.code == OP_AFTER_DEATH) {
		after = after_of(s->fd, true);
		if (after == NULL)
			die("peer: too many sessions");
		*after = o;
		return;
	}
	st = (int32_t)op_run(s, &o);
	if (send(s->fd, &st, sizeof(st), MSG_NOSIGNAL) != (ssize_t)sizeof(st))
		die("peer: op reply");
}

static void
peer_accept(struct droce_context *ctx, int lfd, struct peer_session *ss)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	struct peer_session *s = NULL;
	struct xchg me = { 0 };

	if (fd < 0)
		return;
	for (int i = 0; i < PEER_MAX; i++)
		if (ss[i].fd < 0 && s == NULL)
			s = &ss[i];
	if (s == NULL || recv(fd, &s->app, sizeof(s->app), 0) != (ssize_t)sizeof(s->app))
		die("peer: session");
	if (s->e.qp != NULL)
		end_destroy(&s->e);
	end_create(&s->e, ctx, BUF_LEN);
	end_connect(&s->e, s->app.qpn, s->app.gid);
	s->fd = fd;
	s->mode = s->app.mode;
	s->iter = s->good = s->after_fail = s->after = s->next_us = 0;
	s->pending = 0;
	s->failed = s->gone = s->waiting = false;
	me.qpn = s->e.qp->qp_num;
	me.rkey = s->e.mr->rkey;
	me.addr = (uint64_t)(uintptr_t)s->e.buf;
	me.len = BUF_LEN;
	if (droce_query_gid(ctx, 1, 0, (union droce_gid *)me.gid) != 0)
		die("query_gid");
	if (s->mode == S_ECHO || s->mode == S_RW)
		for (uint64_t i = 0; i < 32; i++)
			post_recv_at(&s->e, i, (uint32_t)(MSG * i));
	if (send(fd, &me, sizeof(me), MSG_NOSIGNAL) != (ssize_t)sizeof(me))
		die("peer: reply");
	if (s->mode == S_HAMMER || s->mode == S_PERSIST || s->mode == S_PACED)
		hammer_post(s);
}

/* S_RW: once the application's QP is connected (its byte), WRITE and READ. */
static void
rw_post(struct peer_session *s)
{
	uint8_t go;

	if (recv(s->fd, &go, 1, MSG_DONTWAIT) != 1)
		return;
	fill(s->e.buf, XFER, RW_SEED);
	memset(s->e.buf + READ_OFF, 0, XFER);
	if (post_rdma(&s->e, DROCE_WR_RDMA_WRITE, RW_WRITE, 0, XFER, s->app.addr,
		      s->app.rkey, s->e.mr->lkey) != 0 ||
	    post_rdma(&s->e, DROCE_WR_RDMA_READ, RW_READ, READ_OFF, XFER, s->app.addr,
		      s->app.read_rkey, s->e.mr->lkey) != 0)
		die("peer: rw post");
	s->mode = S_ECHO;
}

/* The persistent-region verbs are daemon mode's: EOPNOTSUPP in process. */
static void
in_process_refusals(struct droce_context *ctx)
{
	struct end e;
	int persist, attach, release;

	end_create(&e, ctx, 4096);
	persist = droce_persist_mr(e.mr, "in-process", 0);
	attach = droce_attach_mr(ctx, "in-process") == NULL ? errno : 0;
	release = droce_release(ctx, "in-process");
	printf("peer: in process: persist_mr %s, attach_mr %s, release %s\n",
	       strerror(persist), strerror(attach), strerror(release));
	end_destroy(&e);
}

static int
run_peer(struct droce_context *ctx, const char *path)
{
	struct peer_session ss[PEER_MAX];
	int lfd = unix_socket(path, true);

	memset(ss, 0, sizeof(ss));
	for (int i = 0; i < PEER_MAX; i++)
		ss[i].fd = -1;
	snprintf(resume_file, sizeof(resume_file), "%s.resume", path);
	in_process_refusals(ctx);
	(void)fcntl(lfd, F_SETFL, O_NONBLOCK);
	signal(SIGTERM, on_term);
	printf("peer: ready\n");
	fflush(stdout);
	while (!stop) {
		peer_accept(ctx, lfd, ss);
		for (int i = 0; i < PEER_MAX; i++) {
			struct peer_session *s = &ss[i];
			struct droce_wc wc;

			if (s->fd < 0)
				continue;
			if (s->mode == S_RW)
				rw_post(s);
			if (s->mode == S_BADWRITE)
				badwrite_post(s);
			if (s->mode == S_OPS)
				ops_poll(s);
			if (s->mode == S_OPS)
				continue;	/* its completions are its own */
			while (s->mode != 0 && droce_poll_cq(s->e.cq, 1, &wc) == 1) {
				if (s->mode == S_HAMMER || s->mode == S_PACED)
					hammer_wc(s, &wc);
				else if (s->mode == S_PERSIST)
					persist_wc(s, &wc);
				else if (s->mode == S_BADWRITE)
					badwrite_wc(s, &wc);
				else
					echo_wc(s, &wc);
			}
			if (s->mode == S_PERSIST)
				persist_poll(s);
			if (s->mode == S_PACED)
				paced_poll(s);
			/* a hammer goes on after the application's death: that is the test */
			if (s->mode == 0 ||
			    (s->mode == S_ECHO && recv(s->fd, &wc, 1, MSG_DONTWAIT) == 0)) {
				close(s->fd);	/* done, or the application went */
				s->fd = -1;
			}
		}
		droce_progress(ctx);
		sched_yield();	/* as wait_wc */
	}
	for (int i = 0; i < PEER_MAX; i++)
		if (ss[i].e.qp != NULL)
			end_destroy(&ss[i].e);
	close(lfd);
	return 0;
}

/* ---- applications on droced -------------------------------------------------------- */

/* The session with the peer: me (mode, rkey, addr, len) and our QP and GID. */
static struct xchg
app_session_x(struct end *e, const char *peer, struct xchg me, int *pfd)
{
	struct xchg them;
	int fd = unix_socket(peer, false);

	me.qpn = e->qp->qp_num;
	if (droce_query_gid(e->ctx, 1, 0, (union droce_gid *)me.gid) != 0)
		die("query_gid");
	if (send(fd, &me, sizeof(me), MSG_NOSIGNAL) != (ssize_t)sizeof(me) ||
	    recv(fd, &them, sizeof(them), 0) != (ssize_t)sizeof(them))
		die("peer exchange");
	end_connect(e, them.qpn, them.gid);
	*pfd = fd;
	return them;
}

/* The session with the peer on our buffer and MR (S_PERSIST: after rounds). */
static struct xchg
app_session_after(struct end *e, const char *peer, enum session mode, uint32_t after,
		  int *pfd)
{
	struct xchg me = { .mode = mode, .rkey = e->mr->rkey, .after = after,
			   .addr = (uint64_t)(uintptr_t)e->buf, .len = e->len };

	return app_session_x(e, peer, me, pfd);
}

static struct xchg
app_session(struct end *e, const char *peer, enum session mode, int *pfd)
{
	return app_session_after(e, peer, mode, 0, pfd);
}

static void
expect_wc(struct end *e, uint64_t wr_id, enum droce_wc_status status, const char *what)
{
	struct droce_wc wc = wait_wc(e);

	if (wc.wr_id != wr_id || wc.status != status) {
		fprintf(stderr, "daemon_app: %s: wr %" PRIu64 " %s, expected wr %" PRIu64 " %s\n",
			what, wc.wr_id, droce_wc_status_str(wc.status), wr_id,
			droce_wc_status_str(status));
		exit(1);
	}
}

/* One round: WRITE, READ back, SEND and its echo; every byte compared. */
static void
traffic_round(struct end *e, const struct xchg *p, uint64_t r)
{
	struct droce_sge sge = { (uint64_t)(uintptr_t)(e->buf + MSG), MSG, e->mr->lkey };
	struct droce_send_wr wr = { .wr_id = 3, .sg_list = &sge, .num_sge = 1,
				    .opcode = DROCE_WR_SEND, .send_flags = DROCE_SEND_SIGNALED };
	struct droce_send_wr *bad;
	struct droce_wc a, b;

	fill(e->buf, XFER, r);
	memset(e->buf + READ_OFF, 0, XFER);
	if (post_rdma(e, DROCE_WR_RDMA_WRITE, 1, 0, XFER, p->addr + 8192, p->rkey,
		      e->mr->lkey) != 0 ||
	    post_rdma(e, DROCE_WR_RDMA_READ, 2, READ_OFF, XFER, p->addr + 8192, p->rkey,
		      e->mr->lkey) != 0)
		die("post WRITE/READ");
	expect_wc(e, 1, DROCE_WC_SUCCESS, "WRITE");
	expect_wc(e, 2, DROCE_WC_SUCCESS, "READ");
	if (memcmp(e->buf, e->buf + READ_OFF, XFER) != 0) {
		fprintf(stderr, "daemon_app: round %" PRIu64 ": READ differs\n", r);
		exit(1);
	}
	fill(e->buf + MSG, MSG, r + 1000000);
	memset(e->buf + RECV_OFF, 0, MSG);
	post_recv_at(e, 4, RECV_OFF);
	if (droce_post_send(e->qp, &wr, &bad) != 0)
		die("post SEND");
	a = wait_wc(e);
	b = wait_wc(e);
	if (a.status != DROCE_WC_SUCCESS || b.status != DROCE_WC_SUCCESS ||
	    a.wr_id + b.wr_id != 7 || memcmp(e->buf + MSG, e->buf + RECV_OFF, MSG) != 0) {
		fprintf(stderr, "daemon_app: round %" PRIu64 ": SEND echo wrong (%s, %s)\n", r,
			droce_wc_status_str(a.status), droce_wc_status_str(b.status));
		exit(1);
	}
}

static void
write_handles(const char *file, const struct end *e)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (f == NULL)
		die(tmp);
	fprintf(f, "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %" PRIu64 "\n",
		((const struct verbs_dmn_pd *)e->pd)->h,
		((const struct verbs_dmn_cq *)e->cq)->h,
		((const struct verbs_dmn_qp *)e->qp)->h,
		((const struct verbs_dmn_mr *)e->mr)->h, e->mr->lkey,
		(uint64_t)(uintptr_t)e->buf);
	fclose(f);
	if (rename(tmp, file) != 0)
		die("rename");
}

static int
run_traffic(struct droce_context *ctx, int argc, char **argv)
{
	const char *handles = argc >= 4 ? argv[2] : NULL, *stopf = argc >= 4 ? argv[3] : NULL;
	uint64_t rounds = strtoull(argv[1], NULL, 0), r = 0, more = 0;
	struct end e;
	struct xchg p;
	int fd;

	end_create(&e, ctx, BUF_LEN);
	p = app_session(&e, argv[0], S_ECHO, &fd);
	if (handles != NULL)
		write_handles(handles, &e);
	for (;; r++) {
		if (stopf == NULL ? r == rounds : access(stopf, F_OK) == 0 && more++ == rounds)
			break;
		traffic_round(&e, &p, r);
	}
	printf("traffic: %" PRIu64 " rounds ok\n", r);
	end_destroy(&e);
	close(fd);
	return 0;
}

/* The mode this process runs (its output lines' prefix). */
static const char *mode_name = "";

/* One refusal: rc (positive errno, or -1 / NULL with errno) must be want. */
static int
refused(const char *what, int got, int want)
{
	printf("%s: %s: %s%s\n", mode_name, what, strerror(got), got == want ? "" : " (WRONG)");
	return got == want ? 0 : 1;
}

/* A channel's or async_fd's fd that is no eventfd; a CQ on a channel not its own. */
static int
forge_channels(uint64_t a_cq)
{
	struct dmn_msg ch = { .type = DMN_CREATE_CHANNEL };
	struct dmn_msg ev = { .type = DMN_OPEN_EVENTS };
	struct dmn_msg cq = { .type = DMN_CREATE_CQ, .arg = 16, .h = { 0, a_cq } };
	int p[2], bad = 0;

	if (pipe(p) != 0)
		die("pipe");
	bad += refused("a channel on a pipe", verbs_daemon_call_fd(&ch, p[1]), EINVAL);
	bad += refused("events on a pipe", verbs_daemon_call_fd(&ev, p[1]), EINVAL);
	bad += refused("create_cq on a channel not its own", verbs_daemon_call(&cq), ENOENT);
	close(p[0]);
	close(p[1]);
	return bad;
}

static int
run_forge(struct droce_context *ctx, int argc, char **argv)
{
	uint64_t pd, cq, qp, mr, addr;
	uint32_t lkey;
	struct end e;
	struct xchg p;
	int fd, bad = 0;
	FILE *f = argc >= 2 ? fopen(argv[1], "r") : NULL;

	if (f == NULL || fscanf(f, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu32
				" %" SCNu64, &pd, &cq, &qp, &mr, &lkey, &addr) != 6)
		die("handle file");
	fclose(f);
	end_create(&e, ctx, BUF_LEN);
	{
		/* A's objects named with B's own context */
		struct verbs_dmn_pd fpd = { .pub = { .context = ctx }, .h = pd };
		struct verbs_dmn_cq fcq = { .pub = { .context = ctx }, .h = cq,
					    .remote = (struct droce_cq *)(uintptr_t)cq };
		struct verbs_dmn_qp fqp = { .pub = { .context = ctx, .pd = e.pd }, .h = qp,
					    .remote = (struct droce_qp *)(uintptr_t)qp };
		struct verbs_dmn_mr fmr = { .pub = { .context = ctx, .pd = e.pd }, .h = mr };
		struct droce_qp_init_attr init = { .qp_type = DROCE_QPT_RC, .send_cq = e.cq,
			.recv_cq = e.cq, .cap = { 4, 4, 1, 1, 0 } };
		struct droce_qp_attr attr = { .qp_state = DROCE_QPS_ERR };
		struct droce_send_wr wr = { .opcode = DROCE_WR_SEND }, *badwr;
		struct droce_wc wc;

		errno = 0;
		bad += refused("reg_mr on A's PD",
			       droce_reg_mr(&fpd.pub, e.buf, 64, 0) == NULL ? errno : 0, ENOENT);
		errno = 0;
		bad += refused("create_qp on A's PD",
			       droce_create_qp(&fpd.pub, &init) == NULL ? errno : 0, ENOENT);
		bad += refused("dealloc_pd of A's PD", droce_dealloc_pd(&fpd.pub), ENOENT);
		init.send_cq = &fcq.pub;
		errno = 0;
		bad += refused("create_qp with A's CQ",
			       droce_create_qp(e.pd, &init) == NULL ? errno : 0, ENOENT);
		bad += refused("destroy_cq of A's CQ", droce_destroy_cq(&fcq.pub), ENOENT);
		errno = 0;
		bad += refused("poll_cq of A's CQ",
			       droce_poll_cq(&fcq.pub, 1, &wc) == -1 ? errno : 0, EINVAL);
		bad += refused("modify_qp of A's QP",
			       droce_modify_qp(&fqp.pub, &attr, DROCE_QP_STATE), ENOENT);
		bad += refused("query_qp of A's QP",
			       droce_query_qp(&fqp.pub, &attr, 0, NULL), ENOENT);
		bad += refused("post_send on A's QP",
			       droce_post_send(&fqp.pub, &wr, &badwr), EINVAL);
		bad += refused("destroy_qp of A's QP", droce_destroy_qp(&fqp.pub), ENOENT);
		bad += refused("dereg_mr of A's MR", droce_dereg_mr(&fmr.pub), ENOENT);
		errno = 0;
		bad += refused("reg_mr of A's buffer",
			       droce_reg_mr(e.pd, (void *)(uintptr_t)addr, 64, 0) == NULL ?
			       errno : 0, EFAULT);
		bad += refused("free_buf of A's buffer",
			       droce_free_buf(ctx, (void *)(uintptr_t)addr), EINVAL);
		bad += forge_channels(cq);
	}
	/* A's lkey in B's own WR: the engine's local protection error */
	p = app_session(&e, argv[0], S_ECHO, &fd);
	if (post_rdma(&e, DROCE_WR_RDMA_WRITE, 9, 0, 64, p.addr, p.rkey, lkey) != 0)
		die("post with A's lkey");
	{
		struct droce_wc wc = wait_wc(&e);

		printf("forge: WRITE with A's lkey: %s\n", droce_wc_status_str(wc.status));
		bad += wc.wr_id != 9 || wc.status != DROCE_WC_LOC_PROT_ERR;
	}
	end_destroy(&e);
	close(fd);
	printf("forge: %s\n", bad == 0 ? "every attempt refused" : "WRONG");
	return bad == 0 ? 0 : 1;
}

static _Noreturn void
run_target(struct droce_context *ctx, int argc, char **argv)
{
	struct end e;
	int fd;

	end_create(&e, ctx, argc >= 2 ? strtoull(argv[1], NULL, 0) : BUF_LEN);
	(void)app_session(&e, argv[0],
			  argc >= 3 && strcmp(argv[2], "paced") == 0 ? S_PACED : S_HAMMER, &fd);
	printf("target: ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* persist PEERSOCK NAME LEASE_MS hammer|persist AFTER: killed while it waits. */
static _Noreturn void
run_persist(struct droce_context *ctx, char **argv)
{
	uint32_t lease = (uint32_t)strtoul(argv[2], NULL, 0);
	enum session mode = strcmp(argv[3], "persist") == 0 ? S_PERSIST : S_HAMMER;
	struct end e;
	int fd, rc;

	end_create(&e, ctx, BUF_LEN);
	rc = droce_persist_mr(e.mr, argv[1], lease);
	if (rc != 0) {
		printf("persist: droce_persist_mr: %s\n", strerror(rc));
		exit(1);
	}
	(void)app_session_after(&e, argv[0], mode, (uint32_t)strtoul(argv[4], NULL, 0), &fd);
	if (lease != 0) {
		uint64_t t0, t1;

		usleep(50000);	/* the deadline is then the renewal's, not the first */
		t0 = now_us();
		rc = droce_renew_mr(e.mr);
		t1 = now_us();
		if (rc != 0) {
			printf("persist: droce_renew_mr: %s\n", strerror(rc));
			exit(1);
		}
		printf("persist: renewed between %" PRIu64 " and %" PRIu64 " us\n", t0, t1);
	}
	printf("persist: ready addr 0x%" PRIx64 " len %zu lkey 0x%x rkey 0x%x\n",
	       (uint64_t)(uintptr_t)e.mr->addr, e.mr->length, e.mr->lkey, e.mr->rkey);
	fflush(stdout);
	for (;;)
		pause();
}

/* attach NAME PATTERN [keep]: the region holds exactly the peer's last WRITE. */
static int
run_attach(struct droce_context *ctx, int argc, char **argv)
{
	struct droce_mr *mr = droce_attach_mr(ctx, argv[0]);
	uint8_t shadow[XFER];
	const uint8_t *p;
	char line[16];
	size_t bad = 0;
	int again, rc;

	if (mr == NULL) {
		printf("attach: droce_attach_mr: %s\n", strerror(errno));
		return 1;
	}
	printf("attach: addr 0x%" PRIx64 " len %zu lkey 0x%x rkey 0x%x pd %s\n",
	       (uint64_t)(uintptr_t)mr->addr, mr->length, mr->lkey, mr->rkey,
	       mr->pd == NULL ? "null" : "set");
	p = mr->addr;
	if (strcmp(argv[1], "-") != 0) {
		fill(shadow, XFER, strtoull(argv[1], NULL, 0));
		bad += memcmp(p, shadow, XFER) != 0;
		for (size_t i = XFER; i < mr->length; i++)
			bad += p[i] != 0;
		printf("attach: the region holds the last WRITE and zeros after it: %s\n",
		       bad == 0 ? "yes" : "NO");
	}
	again = droce_attach_mr(ctx, argv[0]) == NULL ? errno : 0;
	printf("attach: attach again %s\n", strerror(again));
	fflush(stdout);
	while (argc == 3 && strcmp(argv[2], "keep") == 0)
		pause();
	if (argc == 3 && strcmp(argv[2], "dereg") == 0) {
		rc = droce_dereg_mr(mr);
		printf("attach: dereg %s\n", strerror(rc));
		return rc == 0 && again == EBUSY ? 0 : 1;
	}
	if (fgets(line, sizeof(line), stdin) == NULL)	/* the peer hammers again */
		return 2;
	rc = droce_release(ctx, argv[0]);
	printf("attach: release %s, release again %s, dereg %s\n", strerror(rc),
	       strerror(droce_release(ctx, argv[0])), strerror(droce_dereg_mr(mr)));
	return bad == 0 && again == EBUSY && rc == 0 ? 0 : 1;
}

/*
 * A region's lease runs out while its maker lives: as in process, the
 * maker keeps its expired MR (the event names it, renew and set ETIME,
 * query expired, dereg 0, no event left after); the name is free, attach
 * ETIME (its tombstone) until it is persistent again.
 */
static int
refuse_expired(struct droce_context *ctx)
{
	struct droce_lease_attr la = { 0 };
	struct droce_async_event ev;
	struct end e;
	int bad = 0;

	end_create(&e, ctx, 4096);
	bad += refused("persist with a lease of 50 ms",
		       droce_persist_mr(e.mr, "refuse-lease", 50), 0);
	check(readable(ctx->async_fd, 5000), "no lease event within 5 s");
	check(droce_get_async_event(ctx, &ev) == 0, "get_async_event");
	bad += refused("the event MR_LEASE_EXPIRED naming the MR",
		       ev.event_type == DROCE_EVENT_MR_LEASE_EXPIRED && ev.element.mr == e.mr ?
		       0 : EINVAL, 0);
	droce_ack_async_event(&ev);
	bad += refused("renew after the expiry", droce_renew_mr(e.mr), ETIME);
	bad += refused("set a lease after the expiry", droce_set_mr_lease(e.mr, 50), ETIME);
	bad += refused("query after the expiry", droce_query_mr_lease(e.mr, &la), 0);
	printf("refuse: query after the expiry: lease_ms %u, expired %d, remaining_us %" PRIu64
	       "\n", la.lease_ms, la.expired, la.remaining_us);
	bad += la.lease_ms != 50 || !la.expired || la.remaining_us != 0;
	errno = 0;
	bad += refused("attach after the expiry",
		       droce_attach_mr(ctx, "refuse-lease") == NULL ? errno : 0, ETIME);
	bad += refused("release after the expiry", droce_release(ctx, "refuse-lease"), ENOENT);
	bad += refused("persist of the expired MR again",
		       droce_persist_mr(e.mr, "refuse-lease", 0), ETIME);
	end_destroy(&e);
	errno = 0;
	bad += refused("attach after the dereg",
		       droce_attach_mr(ctx, "refuse-lease") == NULL ? errno : 0, ETIME);
	/* persistent again: a region, no tombstone (released: ENOENT) */
	end_create(&e, ctx, 4096);
	bad += refused("persist under the expired name",
		       droce_persist_mr(e.mr, "refuse-lease", 0), 0);
	bad += refused("release of it", droce_release(ctx, "refuse-lease"), 0);
	errno = 0;
	bad += refused("attach after that release",
		       droce_attach_mr(ctx, "refuse-lease") == NULL ? errno : 0, ENOENT);
	end_destroy(&e);
	return bad;
}

/* refuse NAME: another's live region is not ours; our own MR's rules. */
static int
run_refuse(struct droce_context *ctx, char **argv)
{
	char longname[DROCE_PERSIST_NAME_MAX + 1];
	struct end e;
	int bad = 0;

	memset(longname, 'n', DROCE_PERSIST_NAME_MAX);
	longname[DROCE_PERSIST_NAME_MAX] = '\0';
	errno = 0;
	bad += refused("attach of the live region",
		       droce_attach_mr(ctx, argv[0]) == NULL ? errno : 0, EBUSY);
	errno = 0;
	bad += refused("attach of an unknown name",
		       droce_attach_mr(ctx, "no-such-region") == NULL ? errno : 0, ENOENT);
	bad += refused("release of the live region", droce_release(ctx, argv[0]), EBUSY);
	bad += refused("release of an unknown name", droce_release(ctx, "no-such-region"),
		       ENOENT);
	end_create(&e, ctx, 4096);
	bad += refused("persist under the name in use", droce_persist_mr(e.mr, argv[0], 0),
		       EEXIST);
	bad += refused("persist under a 32-byte name", droce_persist_mr(e.mr, longname, 0),
		       ENAMETOOLONG);
	bad += refused("persist under an empty name", droce_persist_mr(e.mr, "", 0), EINVAL);
	bad += refused("persist of its own MR", droce_persist_mr(e.mr, "refuse-own", 0), 0);
	bad += refused("persist of it again", droce_persist_mr(e.mr, "refuse-own2", 0), EBUSY);
	/* its dereg ends the persistence: the name is free again */
	end_destroy(&e);
	bad += refused("release after its dereg", droce_release(ctx, "refuse-own"), ENOENT);
	/* released by its maker, alive: the key goes, the proxy's dereg only frees it */
	end_create(&e, ctx, 4096);
	bad += refused("persist of a second MR", droce_persist_mr(e.mr, "refuse-rel", 0), 0);
	bad += refused("its release by its maker", droce_release(ctx, "refuse-rel"), 0);
	end_destroy(&e);
	bad += refuse_expired(ctx);
	printf("refuse: %s\n", bad == 0 ? "every answer as expected" : "WRONG");
	return bad == 0 ? 0 : 1;
}

/* Control verbs in a loop, to be killed inside one of them. */
static _Noreturn void
run_churn(struct droce_context *ctx)
{
	for (uint64_t i = 0;; i++) {
		struct end e;

		end_create(&e, ctx, 4096 + (i % 8) * 4096);
		end_destroy(&e);
		if (i == 0) {
			printf("churn: running\n");
			fflush(stdout);
		}
	}
}

static int
run_idle(struct droce_context *ctx, int argc, char **argv)
{
	struct end e;
	struct xchg p;
	struct droce_wc wc;
	char line[16];
	int fd, post, poll_n, pd_err, cq_err;

	(void)argc;
	end_create(&e, ctx, BUF_LEN);
	p = app_session(&e, argv[0], S_ECHO, &fd);
	for (int r = 0; r < 10; r++)
		traffic_round(&e, &p, (uint64_t)r);
	printf("idle: ready\n");
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 2;
	post = post_rdma(&e, DROCE_WR_RDMA_WRITE, 1, 0, 64, p.addr, p.rkey, e.mr->lkey);
	poll_n = droce_poll_cq(e.cq, 1, &wc);
	pd_err = droce_alloc_pd(ctx) == NULL ? errno : 0;
	cq_err = droce_create_cq(ctx, 16, NULL, NULL, 0) == NULL ? errno : 0;
	printf("idle: post_send %d, poll_cq %d, alloc_pd %s, create_cq %s, destroy_qp %s\n",
	       post, poll_n, strerror(pd_err), strerror(cq_err),
	       strerror(droce_destroy_qp(e.qp)));
	fflush(stdout);
	_exit(0);	/* EAL's clean-up would wait for the dead primary */
}

/* ---- the application's own memory ------------------------------------------------ */

/* One malloc'd block: MR 1 on [OWN1, OWN1 + OWN1_LEN), not page aligned;
 * MR 2 on [OWN2, OWN2 + OWN2_LEN) over MR 1's last pages and new ones; the
 * peer WRITEs (MR 2's rkey) and READs back (MR 1's) at RW_AT. */
#define OWN_LEN 98304
#define OWN1 5000
#define OWN1_LEN 36864		/* traffic_round's buffer */
#define OWN2 30000
#define OWN2_LEN 30000
#define RW_AT 31000
#define OWN_ACC (DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE | \
		 DROCE_ACCESS_REMOTE_READ)

static uintptr_t
page_lo(uintptr_t a)
{
	return a & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
}

static uintptr_t
page_hi(uintptr_t a)
{
	return page_lo(a + (uintptr_t)sysconf(_SC_PAGESIZE) - 1);
}

/* The pages under [p, p + len): what droced maps for an MR on them. */
static uint64_t
span_of(const uint8_t *p, size_t len)
{
	return page_hi((uintptr_t)(p + len)) - page_lo((uintptr_t)p);
}

static int
expect_same(const char *what, const uint8_t *p, const uint8_t *want, size_t len)
{
	bool same = memcmp(p, want, len) == 0;

	printf("own: %s: %s\n", what, same ? "same bytes" : "DIFFER");
	return same ? 0 : 1;
}

static int
expect_refused(const char *what, struct droce_pd *pd, void *p, size_t len, int want)
{
	struct droce_mr *mr;

	errno = 0;
	mr = droce_reg_mr(pd, p, len, DROCE_ACCESS_LOCAL_WRITE);
	printf("own: %s: %s\n", what, mr == NULL ? strerror(errno) : "registered (WRONG)");
	return mr == NULL && errno == want ? 0 : 1;
}

/* A shared file mapping, shared anonymous memory and the stack: refused. */
static int
own_refusals(struct droce_pd *pd)
{
	FILE *f = tmpfile();
	uint8_t *sh, *an, on_stack[1000];
	int bad = 0;

	if (f == NULL || ftruncate(fileno(f), 8192) != 0)
		die("tmpfile");
	sh = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
	an = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || an == MAP_FAILED)
		die("mmap");
	bad += expect_refused("a shared file mapping", pd, sh + 100, 1000, EOPNOTSUPP);
	bad += expect_refused("shared anonymous memory", pd, an + 100, 1000, EOPNOTSUPP);
	bad += expect_refused("the stack", pd, on_stack, sizeof(on_stack), EOPNOTSUPP);
	munmap(sh, 8192);
	munmap(an, 8192);
	fclose(f);
	return bad;
}

/* A static buffer: in the program's .data and .bss, private file mappings
 * (the first pages) and anonymous ones (the rest). */
static uint8_t own_static[3 * 4096 + 200] = { 1 };

/* Registered, then deregistered at once: 0 if the bytes were kept. */
static int
own_reg_private(const char *what, struct droce_pd *pd, uint8_t *p, size_t len)
{
	uint8_t *snap = malloc(len);
	struct droce_mr *mr;
	int bad;

	if (snap == NULL)
		die("malloc");
	memcpy(snap, p, len);
	mr = droce_reg_mr(pd, p, len, OWN_ACC);
	printf("own: %s: %s\n", what, mr != NULL ? "registered" : strerror(errno));
	bad = mr == NULL ? 1 : expect_same(what, p, snap, len);
	if (mr != NULL && droce_dereg_mr(mr) != 0)
		die("dereg_mr");
	free(snap);
	return bad;
}

/* Private file mappings are moved like the heap: a MAP_PRIVATE mmap of a
 * file (its bytes kept; the file does not see the program's later write,
 * as before the move) and a static buffer. */
static int
own_private(struct droce_pd *pd)
{
	FILE *f = tmpfile();
	uint8_t *pr, want[1000], got[1000];
	int bad = 0;

	fill(want, sizeof(want), 9);
	if (f == NULL || ftruncate(fileno(f), 8192) != 0 ||
	    pwrite(fileno(f), want, sizeof(want), 100) != (ssize_t)sizeof(want))
		die("tmpfile");
	pr = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE, fileno(f), 0);
	if (pr == MAP_FAILED)
		die("mmap");
	pr[4096] = 3;		/* one page written before, one not */
	bad += own_reg_private("a private file mapping", pd, pr + 100, 6000);
	bad += expect_same("its bytes from the file", pr + 100, want, sizeof(want));
	memset(pr + 100, 0x77, sizeof(want));
	if (pread(fileno(f), got, sizeof(got), 100) != (ssize_t)sizeof(got))
		die("pread");
	bad += expect_same("the file after the program's write", got, want, sizeof(want));
	munmap(pr, 8192);
	fclose(f);
	fill(own_static, sizeof(own_static), 4);
	bad += own_reg_private("a static buffer", pd, own_static + 100, 3 * 4096);
	return bad;
}

/* The eight-page MR's iova: SGEs name its bytes from here. */
#define OWN_IOVA UINT64_C(0x500000000)
#define IOVA_AT 5000

/* Nine pages moved one by one: the nine pieces of one MR are refused (E2BIG),
 * eight are one MR under OWN_IOVA, kept in *mr. */
static int
own_pieces(struct droce_pd *pd, struct droce_mr **mr)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, 9 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	int bad = 0;

	if (p == MAP_FAILED)
		die("mmap");
	fill(p, 9 * pg, 7);
	for (size_t i = 0; i < 9; i++) {
		struct droce_mr *one = droce_reg_mr(pd, p + i * pg, pg, OWN_ACC);

		if (one == NULL || droce_dereg_mr(one) != 0)
			die("reg_mr of one page");
	}
	bad += expect_refused("nine pieces", pd, p, 9 * pg, E2BIG);
	*mr = droce_reg_mr_iova(pd, p, 8 * pg, OWN_IOVA, OWN_ACC);
	printf("own: eight pieces: %s\n", *mr != NULL ? "registered" : strerror(errno));
	return bad + (*mr == NULL);
}

/* A WRITE from the eight-page MR's OWN_IOVA + IOVA_AT (its lkey) to the peer,
 * READ back into MR 1: the bytes at addr + IOVA_AT. */
static int
own_iova_write(struct end *e, const struct xchg *p, const struct droce_mr *mr)
{
	struct droce_sge sge = { OWN_IOVA + IOVA_AT, XFER, mr->lkey };
	struct droce_send_wr wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1,
				    .opcode = DROCE_WR_RDMA_WRITE,
				    .send_flags = DROCE_SEND_SIGNALED };
	struct droce_send_wr *bad;

	wr.wr.rdma.remote_addr = p->addr + 8192;
	wr.wr.rdma.rkey = p->rkey;
	memset(e->buf + READ_OFF, 0, XFER);
	if (droce_post_send(e->qp, &wr, &bad) != 0)
		die("post WRITE from the iova");
	expect_wc(e, 5, DROCE_WC_SUCCESS, "WRITE from the iova");
	if (post_rdma(e, DROCE_WR_RDMA_READ, 6, READ_OFF, XFER, p->addr + 8192, p->rkey,
		      e->mr->lkey) != 0)
		die("post READ");
	expect_wc(e, 6, DROCE_WC_SUCCESS, "READ");
	return expect_same("a WRITE from iova + k: the bytes at addr + k",
			   e->buf + READ_OFF, (const uint8_t *)mr->addr + IOVA_AT, XFER);
}

static _Noreturn void
run_own(struct droce_context *ctx, int argc, char **argv)
{
	uint8_t *r = malloc(OWN_LEN), *snap = malloc(OWN_LEN), pattern[XFER], go = 1, ok = 0;
	struct droce_mr *mr2, *mr3;
	struct end e;
	struct xchg me, p;
	int fd, bad = 0;

	(void)argc;
	if (r == NULL || snap == NULL)
		die("malloc");
	fill(r, OWN_LEN, 5);
	memcpy(snap, r, OWN_LEN);
	end_create_on(&e, ctx, r + OWN1, OWN1_LEN, NULL);
	bad += expect_same("the pages of MR 1 after the move", r, snap, OWN_LEN);
	mr2 = droce_reg_mr(e.pd, r + OWN2, OWN2_LEN, OWN_ACC);
	if (mr2 == NULL)
		die("reg_mr 2");
	bad += expect_same("the pages of both after MR 2", r, snap, OWN_LEN);
	me = (struct xchg){ .mode = S_RW, .rkey = mr2->rkey, .read_rkey = e.mr->rkey,
			    .addr = (uint64_t)(uintptr_t)(r + RW_AT), .len = XFER };
	p = app_session_x(&e, argv[0], me, &fd);
	if (send(fd, &go, 1, MSG_NOSIGNAL) != 1 || recv(fd, &ok, 1, 0) != 1 || ok != 1)
		die("the peer's WRITE and READ");
	fill(pattern, XFER, RW_SEED);
	bad += expect_same("the peer's WRITE through MR 2", r + RW_AT, pattern, XFER);
	memcpy(snap + RW_AT, pattern, XFER);
	bad += expect_same("the rest of the block", r, snap, OWN_LEN);
	for (uint64_t i = 0; i < 20; i++)
		traffic_round(&e, &p, i);
	printf("own: 20 traffic rounds on MR 1 ok\n");
	/* a persistent region outlives its maker: not on the maker's own pages */
	bad += refused("persist of an MR on its own memory",
		       droce_persist_mr(mr2, "own-persist", 0), EFAULT);
	bad += own_refusals(e.pd);
	bad += own_private(e.pd);
	bad += own_pieces(e.pd, &mr3);
	if (mr3 != NULL)
		bad += own_iova_write(&e, &p, mr3);
	printf("own: %s, mem_bytes %" PRIu64 "\n", bad == 0 ? "ready" : "WRONG",
	       span_of(r + OWN1, OWN1_LEN) + span_of(r + OWN2, OWN2_LEN) +
	       (mr3 != NULL ? span_of(mr3->addr, mr3->length) : 0));
	fflush(stdout);
	for (;;)
		pause();
}

/* ---- completion channels and asynchronous events ------------------------------------------------------- */

/* An unsignaled SEND (its echo is the only CQE); imm 1: echoed solicited. */
static void
send_for_echo(struct end *e, bool solicited)
{
	struct droce_sge sge = { (uint64_t)(uintptr_t)(e->buf + MSG), MSG, e->mr->lkey };
	struct droce_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				    .opcode = solicited ? DROCE_WR_SEND_WITH_IMM : DROCE_WR_SEND };
	struct droce_send_wr *bad;

	wr.imm_data = htonl(1);
	if (droce_post_send(e->qp, &wr, &bad) != 0)
		die("post SEND");
}

/* One event of ch for e's CQ, then exactly the echo wr_id's CQE, no more. */
static void
channel_event(struct droce_comp_channel *ch, struct end *e, uint64_t wr_id)
{
	struct droce_cq *cq = NULL;
	void *cq_ctx = NULL;
	struct droce_wc wc;

	check(droce_get_cq_event(ch, &cq, &cq_ctx) == 0, "get_cq_event failed");
	check(cq == e->cq && cq_ctx == e, "the event names another CQ");
	check(droce_poll_cq(e->cq, 1, &wc) == 1 && wc.wr_id == wr_id &&
	      wc.status == DROCE_WC_SUCCESS && wc.opcode == DROCE_WC_RECV &&
	      memcmp(e->buf + MSG, e->buf + RECV_OFF, MSG) == 0, "the echo's CQE");
	check(droce_poll_cq(e->cq, 1, &wc) == 0, "a second CQE");
	check(!readable(ch->fd, 0), "a second event");
}

/* The kernel's id of the eventfd fd (its fdinfo), to find droced's copy. */
static unsigned long
eventfd_id(int fd)
{
	char path[64], line[128];
	unsigned long id = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (f == NULL)
		die(path);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "eventfd-id: %lu", &id) == 1)
			break;
	fclose(f);
	return id;
}

static int
run_channel(struct droce_context *ctx, int argc, char **argv)
{
	struct droce_comp_channel *ch = droce_create_comp_channel(ctx);
	bool keep = argc >= 2 && strcmp(argv[1], "keep") == 0;
	struct droce_wc wc;
	struct end e;
	int fd;

	if (ch == NULL)
		die("create_comp_channel");
	end_create_on(&e, ctx, NULL, BUF_LEN, ch);
	printf("channel: eventfd-id %lu\n", eventfd_id(ch->fd));
	fflush(stdout);
	(void)app_session(&e, argv[0], S_ECHO, &fd);
	fill(e.buf + MSG, MSG, 1);
	/* armed for the next completion: blocks in read(2) until the echo */
	post_recv_at(&e, 4, RECV_OFF);
	check(droce_req_notify_cq(e.cq, 0) == 0, "req_notify_cq");
	send_for_echo(&e, false);
	alarm(5);
	channel_event(ch, &e, 4);
	alarm(0);
	droce_ack_cq_events(e.cq, 1);
	/* solicited only: the unsolicited echo completes without an event */
	check(droce_req_notify_cq(e.cq, 1) == 0, "req_notify_cq solicited");
	post_recv_at(&e, 5, RECV_OFF);
	send_for_echo(&e, false);
	wc = wait_wc(&e);
	check(wc.wr_id == 5 && wc.status == DROCE_WC_SUCCESS, "the unsolicited echo");
	check(!readable(ch->fd, 200), "an event for an unsolicited SEND");
	post_recv_at(&e, 6, RECV_OFF);
	send_for_echo(&e, true);
	check(readable(ch->fd, 5000), "no event for the solicited SEND");
	channel_event(ch, &e, 6);
	if (keep) {
		printf("channel: 2 events, the last unacked\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	droce_ack_cq_events(e.cq, 1);
	end_destroy(&e);
	check(droce_destroy_comp_channel(ch) == 0, "destroy_comp_channel");
	printf("channel: 2 events (next completion, solicited), none for the unsolicited "
	       "SEND, acked, destroyed\n");
	close(fd);
	return 0;
}

/* None within ms, and droce_get_async_event finds none (EAGAIN). */
static void
no_async_event(struct droce_context *ctx, int ms, const char *what)
{
	struct droce_async_event ev;

	check(!readable(ctx->async_fd, ms), what);
	check(fcntl(ctx->async_fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	check(droce_get_async_event(ctx, &ev) == -1 && errno == EAGAIN, what);
	check(fcntl(ctx->async_fd, F_SETFL, 0) == 0, "blocking again");
}

static int
run_async(struct droce_context *ctx, int argc, char **argv)
{
	bool keep = argc >= 2 && strcmp(argv[1], "keep") == 0;
	struct droce_async_event ev;
	struct droce_qp_attr attr;
	char line[16];
	struct end e;
	int fd;

	end_create(&e, ctx, BUF_LEN);
	printf("async: eventfd-id %lu\n", eventfd_id(ctx->async_fd));
	fflush(stdout);
	(void)app_session(&e, argv[0], S_BADWRITE, &fd);
	printf("async: connected\n");
	fflush(stdout);
	check(fgets(line, sizeof(line), stdin) != NULL, "no line on stdin");
	check(send(fd, "w", 1, MSG_NOSIGNAL) == 1, "the peer's go");
	/* blocks in poll(2) on async_fd, then in droce_get_async_event */
	check(readable(ctx->async_fd, 5000), "no event for the peer's bad WRITE");
	check(droce_get_async_event(ctx, &ev) == 0, "get_async_event");
	check(ev.event_type == DROCE_EVENT_QP_ACCESS_ERR && ev.element.qp == e.qp,
	      "not QP_ACCESS_ERR of its QP");
	no_async_event(ctx, 200, "a second event");
	check(droce_query_qp(e.qp, &attr, DROCE_QP_STATE, NULL) == 0 &&
	      attr.qp_state == DROCE_QPS_ERR, "its QP not in ERR");
	if (keep) {
		printf("async: %s, unacked\n", droce_event_type_str(ev.event_type));
		fflush(stdout);
		for (;;)
			pause();
	}
	droce_ack_async_event(&ev);
	end_destroy(&e);
	printf("async: exactly one event, %s of its QP, acked; the QP in ERR, destroyed\n",
	       droce_event_type_str(ev.event_type));
	close(fd);
	return 0;
}

/* ---- SRQs and UD ------------------------------------------------------------------- */

#define SRQ_POSTED 8		/* receives posted on the SRQ */
#define SRQ_LIMIT 6		/* its limit: the third echo leaves 5 */
#define SRQ_ECHOES 3
#define SRQ_WR_ID 100
#define UD_QKEY 0x11111111u
#define UD_MSG 64
#define UD_RECV_OFF 8192

/* The next async event within 5 s: exits unless it is of that type and names obj. */
static void
expect_event(struct droce_context *ctx, enum droce_event_type type, const void *obj,
	     const char *what)
{
	struct droce_async_event ev;

	check(readable(ctx->async_fd, 5000), what);
	check(droce_get_async_event(ctx, &ev) == 0, "get_async_event");
	check(ev.event_type == type && ev.element.qp == obj, what);
	printf("%s: %s of its %s\n", mode_name, droce_event_type_str(type), what);
	droce_ack_async_event(&ev);
}

static void
print_srq(struct droce_srq *srq, const char *when)
{
	struct droce_srq_attr a;

	check(droce_query_srq(srq, &a) == 0, "query_srq");
	printf("%s: %s: max_wr %u max_sge %u limit %u\n", mode_name, when, a.max_wr, a.max_sge,
	       a.srq_limit);
}

/* RESET -> INIT -> RTR -> RTS of a UD QP (Q_Key UD_QKEY). */
static void
ud_connect(struct droce_qp *qp)
{
	struct droce_qp_attr a = { .qp_state = DROCE_QPS_INIT, .port_num = 1, .qkey = UD_QKEY };

	check(droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
			      DROCE_QP_QKEY) == 0, "UD INIT");
	a.qp_state = DROCE_QPS_RTR;
	check(droce_modify_qp(qp, &a, DROCE_QP_STATE) == 0, "UD RTR");
	a.qp_state = DROCE_QPS_RTS;
	a.sq_psn = 0;
	check(droce_modify_qp(qp, &a, DROCE_QP_STATE | DROCE_QP_SQ_PSN) == 0, "UD RTS");
}

/* A new UD QP of e's PD and CQ, in RTS. */
static struct droce_qp *
ud_qp(struct end *e)
{
	struct droce_qp_init_attr init = { .qp_type = DROCE_QPT_UD, .send_cq = e->cq,
		.recv_cq = e->cq, .cap = { 4, 4, 1, 1, 0 } };
	struct droce_qp *qp = droce_create_qp(e->pd, &init);

	check(qp != NULL, "create UD QP");
	ud_connect(qp);
	return qp;
}

/* One UD SEND of UD_MSG bytes (pattern wr_id) with ah on qp (of e) to QPN
 * qpn: its completion's status. */
static enum droce_wc_status
ud_send(struct end *e, struct droce_qp *qp, struct droce_ah *ah, uint32_t qpn, uint64_t wr_id)
{
	struct droce_sge sge = { (uint64_t)(uintptr_t)e->buf, UD_MSG, e->mr->lkey };
	struct droce_send_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
				    .opcode = DROCE_WR_SEND, .send_flags = DROCE_SEND_SIGNALED };
	struct droce_send_wr *bad;
	struct droce_wc wc;

	fill(e->buf, UD_MSG, wr_id);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = UD_QKEY;
	check(droce_post_send(qp, &wr, &bad) == 0, "post UD SEND");
	wc = wait_wc(e);
	check(wc.wr_id == wr_id, "UD SEND's completion");
	return wc.status;
}

static struct droce_ah *
ah_to(struct droce_pd *pd, const uint8_t gid[16])
{
	struct droce_ah_attr a = { .is_global = 1, .port_num = 1 };
	struct droce_ah *ah;

	a.grh.hop_limit = 64;
	memcpy(a.grh.dgid.raw, gid, 16);
	ah = droce_create_ah(pd, &a);
	check(ah != NULL, "create_ah");
	return ah;
}

/* The SRQ's echoes: SEND i (MSG bytes of pattern i), its completion and the
 * echo's, received from the SRQ at RECV_OFF + i * MSG. */
static void
srq_echoes(struct end *e)
{
	for (uint32_t i = 0; i < SRQ_ECHOES; i++) {
		struct droce_sge sge = { (uint64_t)(uintptr_t)e->buf, MSG, e->mr->lkey };
		struct droce_send_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1,
					    .opcode = DROCE_WR_SEND,
					    .send_flags = DROCE_SEND_SIGNALED };
		struct droce_send_wr *bad;
		bool sent = false, echoed = false;

		fill(e->buf, MSG, i);
		check(droce_post_send(e->qp, &wr, &bad) == 0, "post SEND");
		while (!sent || !echoed) {
			struct droce_wc wc = wait_wc(e);

			check(wc.status == DROCE_WC_SUCCESS, droce_wc_status_str(wc.status));
			if (wc.opcode == DROCE_WC_SEND) {
				check(wc.wr_id == i, "the SEND's completion");
				sent = true;
				continue;
			}
			check(wc.opcode == DROCE_WC_RECV && wc.wr_id == SRQ_WR_ID + i &&
			      wc.byte_len == MSG && wc.qp_num == e->qp->qp_num,
			      "the echo's completion: not the SRQ's next receive");
			check(memcmp(e->buf, e->buf + RECV_OFF + i * MSG, MSG) == 0,
			      "the echo's bytes differ");
			echoed = true;
		}
	}
	printf("srq: %d echoes received from the SRQ, bytes the same\n", SRQ_ECHOES);
}

/*
 * The UD datagram srqforge sent from the same droced: its completion, the
 * GRH slot (the IPv4 header in its last 20 bytes, IBTA A16 / ibverbs for
 * RoCE) holding droced's own address as the source, the bytes.
 */
static void
ud_received(struct end *e)
{
	struct droce_wc wc = wait_wc(e);
	const uint8_t *ip = e->buf + UD_RECV_OFF + 20;
	uint8_t want[UD_MSG];

	check(wc.wr_id == 9 && wc.status == DROCE_WC_SUCCESS && wc.opcode == DROCE_WC_RECV,
	      "the UD receive's completion");
	check((wc.wc_flags & DROCE_WC_GRH) && ip[0] >> 4 == 4, "no IPv4 header in the GRH slot");
	fill(want, UD_MSG, 3);
	check(memcmp(e->buf + UD_RECV_OFF + 40, want, UD_MSG) == 0, "the datagram's bytes differ");
	printf("srq: UD receive from QP %u: %u bytes, GRH IPv4 source %u.%u.%u.%u, "
	       "bytes the same\n", wc.src_qp, wc.byte_len, ip[12], ip[13], ip[14], ip[15]);
}

/* srq PEERSOCK HANDLEFILE (the file: SRQ handle, AH handle, AH index, the
 * peer's GID, its UD QP's number). */
static _Noreturn void
run_srq(struct droce_context *ctx, char **argv)
{
	struct droce_srq_init_attr si = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct droce_qp_init_attr init = { .qp_type = DROCE_QPT_RC, .cap = { 16, 0, 1, 0, 0 } };
	struct droce_srq_attr lim = { .srq_limit = SRQ_LIMIT }, big = { .max_wr = 32 };
	struct droce_qp_attr err = { .qp_state = DROCE_QPS_ERR };
	struct droce_srq *srq;
	struct droce_ah *ah;
	struct droce_qp *ud;
	struct xchg peer;
	char line[16], tmp[4096];
	struct end e;
	FILE *f;
	int fd;

	end_create(&e, ctx, BUF_LEN);
	srq = droce_create_srq(e.pd, &si);
	check(srq != NULL, "create_srq");
	for (uint32_t i = 0; i < SRQ_POSTED; i++) {
		struct droce_sge sge = { (uint64_t)(uintptr_t)(e.buf + RECV_OFF + i * MSG), MSG,
					 e.mr->lkey };
		struct droce_recv_wr wr = { .wr_id = SRQ_WR_ID + i, .sg_list = &sge, .num_sge = 1 };
		struct droce_recv_wr *bad;

		check(droce_post_srq_recv(srq, &wr, &bad) == 0, "post_srq_recv");
	}
	check(droce_modify_srq(srq, &lim, DROCE_SRQ_LIMIT) == 0, "arm the limit");
	print_srq(srq, "limit armed");
	lim.srq_limit = 16;
	(void)refused("a limit not below max_wr", droce_modify_srq(srq, &lim, DROCE_SRQ_LIMIT),
		      EINVAL);
	check(droce_modify_srq(srq, &big, DROCE_SRQ_MAX_WR) == 0, "resize");
	print_srq(srq, "resized");
	/* the end's QP replaced by one receiving from the SRQ */
	check(droce_destroy_qp(e.qp) == 0, "destroy_qp");
	init.send_cq = e.cq;
	init.recv_cq = e.cq;
	init.srq = srq;
	e.qp = droce_create_qp(e.pd, &init);
	check(e.qp != NULL && e.qp->srq == srq, "create_qp on the SRQ");
	peer = app_session(&e, argv[0], S_ECHO, &fd);
	srq_echoes(&e);
	expect_event(ctx, DROCE_EVENT_SRQ_LIMIT_REACHED, srq, "SRQ");
	no_async_event(ctx, 200, "a second event");
	print_srq(srq, "after the event");
	ah = ah_to(e.pd, peer.gid);
	ud = ud_qp(&e);
	printf("srq: UD SEND with its AH: %s\n",
	       droce_wc_status_str(ud_send(&e, ud, ah, 0x123, 7)));
	{
		/* room for the GRH (40 bytes) before the datagram */
		struct droce_sge sge = { (uint64_t)(uintptr_t)(e.buf + UD_RECV_OFF), 40 + UD_MSG,
					 e.mr->lkey };
		struct droce_recv_wr wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1 }, *rbad;

		check(droce_post_recv(ud, &wr, &rbad) == 0, "post_recv on the UD QP");
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	f = fopen(tmp, "w");
	check(f != NULL, "handle file");
	fprintf(f, "%" PRIu64 " %" PRIu64 " %u", ((struct verbs_dmn_srq *)srq)->h,
		((struct verbs_dmn_ah *)ah)->h, ah->handle);
	for (int i = 0; i < 16; i++)
		fprintf(f, " %u", peer.gid[i]);
	fprintf(f, " %u\n", ud->qp_num);
	fclose(f);
	check(rename(tmp, argv[1]) == 0, "rename");
	printf("srq: ready\n");
	fflush(stdout);
	check(fgets(line, sizeof(line), stdin) != NULL, "no line on stdin");
	print_srq(srq, "after the forgery");
	ud_received(&e);
	/* IBTA 11.6.3.1: a QP on an SRQ in ERR reports its last WQE */
	check(droce_modify_qp(e.qp, &err, DROCE_QP_STATE) == 0, "QP to ERR");
	expect_event(ctx, DROCE_EVENT_QP_LAST_WQE_REACHED, e.qp, "QP");
	printf("srq: holding\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* srqforge HANDLEFILE: srq's SRQ and AH named by another application. */
static int
run_srqforge(struct droce_context *ctx, char **argv)
{
	struct verbs_dmn_srq fsrq = { 0 };
	struct verbs_dmn_ah fah = { 0 };
	struct droce_srq_attr attr = { .srq_limit = 1 };
	struct droce_recv_wr rwr = { 0 }, *rbad;
	struct droce_qp_init_attr init = { .qp_type = DROCE_QPT_RC, .cap = { 4, 0, 1, 0, 0 } };
	union droce_gid own_gid;
	unsigned int g[16], a_qpn;
	struct end e;
	int bad = 0;
	FILE *f = fopen(argv[0], "r");

	if (f == NULL || fscanf(f, "%" SCNu64 " %" SCNu64 " %u", &fsrq.h, &fah.h,
				&fah.pub.handle) != 3)
		die("handle file");
	for (int i = 0; i < 16; i++)
		if (fscanf(f, "%u", &g[i]) != 1)
			die("handle file: GID");
	if (fscanf(f, "%u", &a_qpn) != 1)
		die("handle file: QPN");
	fclose(f);
	end_create(&e, ctx, 4096);
	check(droce_query_gid(ctx, 1, 0, &own_gid) == 0, "query_gid");
	fsrq.pub = (struct droce_srq){ .context = ctx, .pd = e.pd };
	fsrq.remote = (struct droce_srq *)(uintptr_t)fsrq.h;
	fah.pub.context = ctx;
	fah.pub.pd = e.pd;
	bad += refused("modify_srq of another's SRQ",
		       droce_modify_srq(&fsrq.pub, &attr, DROCE_SRQ_LIMIT), ENOENT);
	bad += refused("query_srq of another's SRQ", droce_query_srq(&fsrq.pub, &attr), ENOENT);
	init.send_cq = e.cq;
	init.recv_cq = e.cq;
	init.srq = &fsrq.pub;
	errno = 0;
	bad += refused("create_qp on another's SRQ",
		       droce_create_qp(e.pd, &init) == NULL ? errno : 0, ENOENT);
	bad += refused("post_srq_recv on another's SRQ",
		       droce_post_srq_recv(&fsrq.pub, &rwr, &rbad), EINVAL);
	bad += refused("destroy_srq of another's SRQ", droce_destroy_srq(&fsrq.pub), ENOENT);
	bad += refused("destroy_ah of another's AH", droce_destroy_ah(&fah.pub), ENOENT);
	{
		/* each on a QP of its own: a failed WQE moves its QP to ERR; the
		 * last to the other application's UD QP on this same droced */
		struct droce_ah *own = ah_to(e.pd, own_gid.raw);
		struct droce_ah nobody = { ctx, e.pd, 0xffffffffu };
		struct droce_qp *q[3] = { ud_qp(&e), ud_qp(&e), ud_qp(&e) };
		enum droce_wc_status st[3];

		st[0] = ud_send(&e, q[0], &fah.pub, a_qpn, 1);
		st[1] = ud_send(&e, q[1], &nobody, a_qpn, 2);
		st[2] = ud_send(&e, q[2], own, a_qpn, 3);
		printf("srqforge: UD SEND with another's AH index: %s\n", droce_wc_status_str(st[0]));
		printf("srqforge: UD SEND with an index of none: %s\n", droce_wc_status_str(st[1]));
		printf("srqforge: UD SEND with its own AH to the other's UD QP: %s (from QP %u)\n",
		       droce_wc_status_str(st[2]), q[2]->qp_num);
		bad += st[0] != DROCE_WC_LOC_QP_OP_ERR || st[1] != DROCE_WC_LOC_QP_OP_ERR ||
		       st[2] != DROCE_WC_SUCCESS;
		for (int i = 0; i < 3; i++)
			check(droce_destroy_qp(q[i]) == 0, "destroy UD QP");
		check(droce_destroy_ah(own) == 0, "destroy_ah");
	}
	end_destroy(&e);
	printf("srqforge: %s\n", bad == 0 ? "every attempt refused" : "WRONG");
	return bad == 0 ? 0 : 1;
}

/*
 * unsupported: the verbs droced's provider lacks each fail with EOPNOTSUPP,
 * the one answer of a missing op, and leave nothing behind.
 */
/* A System V segment's id, made by a child of fork() that stays alive
 * until *child is killed: a segment this process did not make. */
static int
foreign_shm(pid_t *child)
{
	int p[2], id = -1;

	check(pipe(p) == 0, "sysv: pipe");
	*child = fork();
	check(*child >= 0, "sysv: fork");
	if (*child == 0) {
		id = shmget(IPC_PRIVATE, 1 << 20, IPC_CREAT | 0600);
		(void)!write(p[1], &id, sizeof(id));
		pause();
		_exit(0);
	}
	check(read(p[0], &id, sizeof(id)) == sizeof(id) && id >= 0, "sysv: the child's segment");
	close(p[0]);
	close(p[1]);
	return id;
}

/*
 * System V memory (UCX's "huge" memory pools: shmget IPC_PRIVATE, shmat,
 * IPC_RMID), which cannot move: droced attaches the segment the process
 * made.  A segment of another process, or a range past a segment's end,
 * named in a forged MEM_PIECE: refused.
 */
static int
sysv_checks(struct droce_pd *pd)
{
	const size_t len = 1 << 20;
	int id = shmget(IPC_PRIVATE, len, IPC_CREAT | 0600), other, bad = 0;
	struct dmn_msg m = { .type = DMN_MEM_PIECE, .addr = 1 << 20, .len = 4096,
			     .arg = DMN_PIECE_SYSV };
	struct droce_mr *mr;
	uint8_t *seg;
	pid_t child;

	check(id >= 0, "sysv: shmget");
	seg = shmat(id, NULL, 0);
	check(seg != (void *)-1 && shmctl(id, IPC_RMID, NULL) == 0, "sysv: shmat, IPC_RMID");
	mr = droce_reg_mr(pd, seg + 4096, 8192, DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_READ);
	if (mr == NULL) {
		printf("unsupported: reg_mr on System V memory: %s\n", strerror(errno));
		bad++;
	} else if (droce_dereg_mr(mr) != 0) {
		bad++;
	}
	m.h[0] = len;	/* past its end */
	m.h[1] = (uint64_t)id;
	bad += refused("a piece past the segment's end", verbs_daemon_call(&m), EINVAL);
	other = foreign_shm(&child);
	m.h[0] = 0;
	m.h[1] = (uint64_t)other;
	bad += refused("another process's segment", verbs_daemon_call(&m), EPERM);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	(void)shmctl(other, IPC_RMID, NULL);
	check(shmdt(seg) == 0, "sysv: shmdt");
	return bad;
}

static int
run_unsupported(struct droce_context *ctx)
{
	struct droce_pd *pd = droce_alloc_pd(ctx), *pd2 = droce_alloc_pd(ctx);
	uint8_t *own = malloc(8192), *own2 = malloc(4096);
	struct droce_mr *mr;
	uint32_t key;
	uint16_t pkey;
	int bad = 0;

	check(pd != NULL && pd2 != NULL && own != NULL && own2 != NULL, "alloc_pd, malloc");
	mr = droce_reg_mr(pd, own, 8192, DROCE_ACCESS_LOCAL_WRITE);
	check(mr != NULL, "reg_mr");
	key = mr->lkey;
	/* new rights, new PD: droced's MR, its keys kept (as in process) */
	if (droce_rereg_mr(mr, DROCE_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE) != 0 ||
	    mr->lkey != key || mr->rkey != key) {
		printf("unsupported: rereg CHANGE_ACCESS: %s, key 0x%x -> 0x%x\n", strerror(errno),
		       key, mr->lkey);
		bad++;
	}
	if (droce_rereg_mr(mr, DROCE_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0) != 0 || mr->pd != pd2 ||
	    mr->lkey != key) {
		printf("unsupported: rereg CHANGE_PD: %s\n", strerror(errno));
		bad++;
	}
	bad += refused("dealloc_pd of the MR's new PD", droce_dealloc_pd(pd2), EBUSY);
	/* a new translation: new keys, the old MR gone from droced's table */
	if (droce_rereg_mr(mr, DROCE_REREG_MR_CHANGE_TRANSLATION, NULL, own2, 4096, 0) != 0 ||
	    mr->addr != own2 || mr->length != 4096 || mr->lkey == key) {
		printf("unsupported: rereg CHANGE_TRANSLATION: %s, key 0x%x -> 0x%x\n",
		       strerror(errno), key, mr->lkey);
		bad++;
	}
	errno = 0;
	bad += refused("rereg without flags", droce_rereg_mr(mr, 0, NULL, NULL, 0, 0) ==
					       DROCE_REREG_MR_ERR_INPUT ? errno : 0, EINVAL);
	errno = 0;
	bad += refused("rereg to no memory",
		       droce_rereg_mr(mr, DROCE_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 0, 0) ==
		       DROCE_REREG_MR_ERR_INPUT ? errno : 0, EINVAL);
	/* the port's P_Key table through droced: the default partition first */
	if (droce_query_pkey(ctx, 1, 0, &pkey) != 0 || pkey != htons(0xffff)) {
		printf("unsupported: query_pkey index 0: 0x%04x, not the default 0xffff\n",
		       ntohs(pkey));
		bad++;
	}
	bad += refused("query_pkey past the table", droce_query_pkey(ctx, 1, 4096, &pkey), EINVAL);
	bad += sysv_checks(pd);
	check(droce_dereg_mr(mr) == 0 && droce_dealloc_pd(pd2) == 0 && droce_dealloc_pd(pd) == 0,
	      "dereg_mr, dealloc_pd");
	free(own);
	free(own2);
	printf("unsupported: %s\n", bad == 0 ? "rereg_mr, query_pkey, System V memory through droced" :
					       "WRONG");
	return bad == 0 ? 0 : 1;
}

/* One byte over a pipe (fork's go and done). */
static void
pipe_byte(int fd, bool send_it)
{
	char c = 0;

	check((send_it ? write(fd, &c, 1) : read(fd, &c, 1)) == 1, "fork: pipe");
}

/*
 * fork's heap check: two chunks of the sizes stdio takes first (a FILE, a
 * 1 KiB buffer) freed inside a moved range, so a child that allocates
 * before its copy exists takes them from the shared pages; the parent
 * compares the range with what it held at the fork.
 */
#ifdef __SANITIZE_ADDRESS__
#define FORK_HEAP_CHECK false
#else
#define FORK_HEAP_CHECK true
#endif

struct fork_heap {
	uint8_t *lo, *snap;
	size_t len;
	struct droce_mr *mr;
};

static void
fork_heap_prepare(struct droce_pd *pd, struct fork_heap *h)
{
	uint8_t *file = malloc(472), *buf = malloc(1024), *guard = malloc(16);
	uint8_t *lo = file < buf ? file : buf, *hi = (file < buf ? buf + 1024 : file + 472);

	check(file != NULL && buf != NULL && guard != NULL, "fork: chunks");
	/* glibc's malloc puts them side by side; ASan's allocator keeps each
	 * size in its own region, with no free chunk in a neighbour's page */
	check(hi - lo < 65536, "fork: the chunks are not neighbours (not glibc's malloc?)");
	h->len = (size_t)(hi - lo);
	h->lo = lo;
	h->mr = droce_reg_mr(pd, lo, h->len, DROCE_ACCESS_LOCAL_WRITE);
	h->snap = malloc(h->len);
	check(h->mr != NULL && h->snap != NULL, "fork: reg_mr over the chunks");
	free(buf);
	free(file);
	memcpy(h->snap, h->lo, h->len);
}

/*
 * fork: an MR on the program's own heap moves its page onto a memfd
 * (droced_mem.c); a child of fork() gets its own copy of that page, as of
 * the fork: it does not see the parent's later writes, the parent does
 * not see the child's, and the child's malloc does not touch the parent's
 * heap.  The parent's registration works on after the child's exit.
 */
static int
run_fork(struct droce_context *ctx)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	struct droce_pd *pd = droce_alloc_pd(ctx);
	struct droce_mr *mr, *mr2;
	struct fork_heap heap;
	int go[2], status, bad = 0;
	uint8_t *blk = NULL;
	pid_t pid;

	check(pd != NULL && posix_memalign((void **)&blk, pg, 2 * pg) == 0, "fork: pd, block");
	memset(blk, 1, 2 * pg);
	/* 256 bytes inside the first page: the whole page moves, neighbours too */
	mr = droce_reg_mr(pd, blk + 64, 256, DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE);
	check(mr != NULL && pipe(go) == 0, "fork: reg_mr on the heap, pipe");
	heap = (struct fork_heap){ 0 };
	if (FORK_HEAP_CHECK)
		fork_heap_prepare(pd, &heap);
	pid = fork();
	check(pid >= 0, "fork");
	if (pid == 0) {
		int wrong = 0;

		pipe_byte(go[0], false);	/* the parent has written 2s */
		wrong |= blk[100] != 1 || blk[pg / 2] != 1;
		memset(blk, 3, pg);
		for (int i = 0; i < 1000; i++)
			free(malloc((size_t)(16 + i % 200)));
		_exit(wrong);
	}
	blk[100] = 2;			/* in the MR */
	blk[pg / 2] = 2;		/* its page, outside it */
	pipe_byte(go[1], true);
	check(waitpid(pid, &status, 0) == pid, "fork: waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("fork: the child saw the parent's writes after the fork (status 0x%x)\n",
		       status);
		bad++;
	}
	if (heap.len != 0 && memcmp(heap.lo, heap.snap, heap.len) != 0) {
		printf("fork: the child's allocations changed the parent's heap\n");
		bad++;
	}
	if (blk[100] != 2 || blk[pg / 2] != 2 || blk[0] != 1 || blk[pg - 1] != 1) {
		printf("fork: the child's writes reached the parent (%u %u %u %u)\n", blk[0],
		       blk[100], blk[pg / 2], blk[pg - 1]);
		bad++;
	}
	mr2 = droce_reg_mr(pd, blk + 512, 64, DROCE_ACCESS_LOCAL_WRITE);
	if (mr2 == NULL || droce_dereg_mr(mr2) != 0 || droce_dereg_mr(mr) != 0 ||
	    (heap.mr != NULL && droce_dereg_mr(heap.mr) != 0)) {
		printf("fork: the parent's registrations after the child's exit: %s\n",
		       strerror(errno));
		bad++;
	}
	check(droce_dealloc_pd(pd) == 0, "fork: dealloc_pd");
	free(heap.snap);
	free(blk);
	printf("fork: %s\n", bad == 0 ? "the child's copy of the moved page is its own" : "WRONG");
	return bad == 0 ? 0 : 1;
}

/* hold: a PD, buffer, MR, CQ and QP, "hold: ready", then (a line on
 * stdin) all freed: one of many applications at once. */
static int
run_hold(struct droce_context *ctx)
{
	struct end e;
	char line[16];

	end_create(&e, ctx, 4096);
	printf("hold: ready\n");
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 2;
	end_destroy(&e);
	printf("hold: freed\n");
	return 0;
}

static int
run_quiet(struct droce_context *ctx, int argc, char **argv)
{
	struct end e;
	struct xchg p;
	char line[16];
	int fd;

	(void)argc;
	end_create(&e, ctx, BUF_LEN);
	p = app_session(&e, argv[0], S_ECHO, &fd);
	traffic_round(&e, &p, 0);
	printf("quiet: ready\n");
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 2;
	no_async_event(ctx, 0, "an event of another application's QP");
	end_destroy(&e);
	printf("quiet: no event\n");
	close(fd);
	return 0;
}

/* ---- events of freed objects ------------------------------------------------------ */

#define EV_LEASE_MS 50
/* How long a free that must wait for an ack is watched before the ack. */
#define EV_WAIT_MS 300

/* A leased MR or window and what it lies on. */
struct leased {
	struct droce_context *ctx;
	struct droce_pd *pd;
	void *buf;
	struct droce_mr *mr;	/* the leased one, or NULL: */
	struct droce_mw *mw;	/* the leased window */
	const char *what;
};

static void
leased_make(struct leased *l, struct droce_context *ctx, bool window)
{
	*l = (struct leased){ .ctx = ctx, .what = window ? "MW" : "MR" };
	l->pd = droce_alloc_pd(ctx);
	l->buf = droce_alloc_buf(ctx, 4096);
	check(l->pd != NULL && l->buf != NULL, "alloc_pd / alloc_buf");
	if (window) {
		l->mw = droce_alloc_mw(l->pd, DROCE_MW_TYPE_1);
		check(l->mw != NULL && droce_set_mw_lease(l->mw, EV_LEASE_MS) == 0,
		      "alloc_mw / set_mw_lease");
	} else {
		l->mr = droce_reg_mr_lease(l->pd, l->buf, 4096, DROCE_ACCESS_LOCAL_WRITE,
					   EV_LEASE_MS);
		check(l->mr != NULL, "reg_mr_lease");
	}
	/* droced counted its expiry event on async_fd */
	check(readable(ctx->async_fd, 5000), "no lease expiry event within 5 s");
}

static int
leased_free(struct leased *l)
{
	return l->mw != NULL ? droce_dealloc_mw(l->mw) : droce_dereg_mr(l->mr);
}

static void
leased_done(struct leased *l)
{
	check(droce_free_buf(l->ctx, l->buf) == 0 && droce_dealloc_pd(l->pd) == 0,
	      "free_buf / dealloc_pd");
}

/* The event of l taken now: it names l's object. */
static void
leased_event(struct leased *l, struct droce_async_event *ev)
{
	check(droce_get_async_event(l->ctx, ev) == 0, "get_async_event");
	check(l->mw != NULL ? ev->event_type == DROCE_EVENT_MW_LEASE_EXPIRED &&
			      ev->element.mw == l->mw :
			      ev->event_type == DROCE_EVENT_MR_LEASE_EXPIRED &&
			      ev->element.mr == l->mr, "not the lease's event of the object");
}

/* What droce_get_async_event finds after a free: none, or the stale event,
 * taken and acked as an application would (it names freed memory). */
static const char *
left_after_free(struct droce_context *ctx)
{
	struct droce_async_event ev;
	int rc;

	check(fcntl(ctx->async_fd, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	rc = droce_get_async_event(ctx, &ev);
	check(rc == 0 || errno == EAGAIN, "get_async_event failed");
	check(fcntl(ctx->async_fd, F_SETFL, 0) == 0, "blocking again");
	if (rc != 0)
		return "no event left";
	printf("evfree: a stale event: %s\n", droce_event_type_str(ev.event_type));
	fflush(stdout);
	droce_ack_async_event(&ev);
	return "AN EVENT LEFT";
}

/* Its event queued, not taken: freed, no event may name it. */
static void
free_queued(struct droce_context *ctx, bool window)
{
	struct leased l;
	int rc;

	leased_make(&l, ctx, window);
	rc = leased_free(&l);
	printf("evfree: %s freed with its expiry event queued: %s, %s\n", l.what,
	       strerror(rc), left_after_free(ctx));
	leased_done(&l);
}

struct freer {
	struct leased *l;
	int rc;
	int done;		/* __atomic */
};

static void *
freer_run(void *arg)
{
	struct freer *f = arg;

	f->rc = leased_free(f->l);
	__atomic_store_n(&f->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Its event taken, not acked: the free (another thread) returns only after the ack. */
static void
free_taken(struct droce_context *ctx, bool window)
{
	struct droce_async_event ev;
	struct freer f = { 0 };
	struct leased l;
	pthread_t t;
	int before;

	leased_make(&l, ctx, window);
	leased_event(&l, &ev);
	f.l = &l;
	check(pthread_create(&t, NULL, freer_run, &f) == 0, "pthread_create");
	usleep(EV_WAIT_MS * 1000);
	before = __atomic_load_n(&f.done, __ATOMIC_ACQUIRE);
	droce_ack_async_event(&ev);
	check(pthread_join(t, NULL) == 0, "pthread_join");
	printf("evfree: %s freed with its expiry event taken: %s, returned %s the ack, %s\n",
	       l.what, strerror(f.rc), before ? "BEFORE" : "after", left_after_free(ctx));
	leased_done(&l);
}

static int
run_evfree(struct droce_context *ctx)
{
	free_queued(ctx, false);
	free_queued(ctx, true);
	free_taken(ctx, false);
	free_taken(ctx, true);
	return 0;
}

/* The attached region's lease: long enough that the set, renew and query
 * before it runs out do not race it on a loaded machine. */
#define ATTACH_LEASE_MS 500

/* The attached owner's event of its region's expiry: it names its MR. */
static int
attached_expiry(struct droce_context *ctx, struct droce_mr *mr)
{
	struct droce_async_event ev;
	bool named;

	if (!readable(ctx->async_fd, ATTACH_LEASE_MS + 5000)) {
		printf("attachlease: no event within 5 s of the deadline (WRONG)\n");
		return 1;
	}
	check(droce_get_async_event(ctx, &ev) == 0, "get_async_event");
	named = ev.event_type == DROCE_EVENT_MR_LEASE_EXPIRED && ev.element.mr == mr;
	droce_ack_async_event(&ev);
	printf("attachlease: event %s naming its MR: %s\n", droce_event_type_str(ev.event_type),
	       named ? "yes" : "NO");
	return named ? 0 : 1;
}

/* attachlease NAME: the attached owner's lease requests, before and after it runs out. */
static int
run_attachlease(struct droce_context *ctx, char **argv)
{
	struct droce_mr *mr = droce_attach_mr(ctx, argv[0]);
	struct droce_lease_attr la = { 0 };
	int bad = 0;

	if (mr == NULL) {
		printf("attachlease: droce_attach_mr: %s\n", strerror(errno));
		return 1;
	}
	bad += refused("set a lease", droce_set_mr_lease(mr, ATTACH_LEASE_MS), 0);
	bad += refused("renew", droce_renew_mr(mr), 0);
	bad += refused("query", droce_query_mr_lease(mr, &la), 0);
	printf("attachlease: query: lease_ms %u, expired %d, remaining at most the period: %s\n",
	       la.lease_ms, la.expired, la.remaining_us <= ATTACH_LEASE_MS * 1000 ? "yes" : "NO");
	bad += la.lease_ms != ATTACH_LEASE_MS || la.expired ||
	       la.remaining_us > ATTACH_LEASE_MS * 1000;
	bad += attached_expiry(ctx, mr);
	bad += refused("renew after the expiry", droce_renew_mr(mr), ETIME);
	bad += refused("set a lease after the expiry", droce_set_mr_lease(mr, 100), ETIME);
	la = (struct droce_lease_attr){ 0 };
	bad += refused("query after the expiry", droce_query_mr_lease(mr, &la), 0);
	printf("attachlease: query after the expiry: lease_ms %u, expired %d, remaining_us %"
	       PRIu64 "\n", la.lease_ms, la.expired, la.remaining_us);
	bad += la.lease_ms != ATTACH_LEASE_MS || !la.expired || la.remaining_us != 0;
	errno = 0;
	bad += refused("attach after the expiry",
		       droce_attach_mr(ctx, argv[0]) == NULL ? errno : 0, ETIME);
	bad += refused("release after the expiry", droce_release(ctx, argv[0]), ENOENT);
	bad += refused("dereg after the expiry", droce_dereg_mr(mr), 0);
	errno = 0;
	bad += refused("attach after the dereg",
		       droce_attach_mr(ctx, argv[0]) == NULL ? errno : 0, ETIME);
	printf("attachlease: %s\n", bad == 0 ? "every answer as expected" : "WRONG");
	return bad == 0 ? 0 : 1;
}

/* ---- memory windows on droced ------------------------------------------------------ */

#define MW1_OFF 0		/* the type-1 window's bytes */
#define MW2_OFF 8192		/* the type-2 window's */
#define MW_AFTER 100		/* the peer's WRITEs through the window after the death */

/* The windows of an application and the peer's session that uses them. */
struct mw_end {
	struct end e;
	struct droce_mw *mw1, *mw2;
	uint32_t rkey2;		/* the type-2 window's, bound */
	int fd;
};

/* The peer runs op, the completion's status back. */
static enum droce_wc_status
peer_op(const struct mw_end *m, enum op_code code, uint32_t rkey, uint64_t off, uint64_t seed)
{
	struct op o = { .code = code, .rkey = rkey,
			.addr = (uint64_t)(uintptr_t)m->e.buf + off, .seed = seed };
	int32_t st;

	if (send(m->fd, &o, sizeof(o), MSG_NOSIGNAL) != (ssize_t)sizeof(o) ||
	    recv(m->fd, &st, sizeof(st), 0) != (ssize_t)sizeof(st))
		die("peer op");
	return (enum droce_wc_status)st;
}

/* A BIND_MW work request of a type-2 window over XFER bytes at off: its rkey. */
static uint32_t
bind_type2(struct end *e, struct droce_mw *mw, struct droce_mr *mr, uint64_t off,
	   uint64_t wr_id)
{
	struct droce_send_wr wr = { .wr_id = wr_id, .opcode = DROCE_WR_BIND_MW,
				    .send_flags = DROCE_SEND_SIGNALED };
	struct droce_send_wr *bad;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = droce_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = (struct droce_mw_bind_info){
		mr, (uint64_t)(uintptr_t)e->buf + off, XFER, DROCE_ACCESS_REMOTE_WRITE };
	if (droce_post_send(e->qp, &wr, &bad) != 0)
		die("post BIND_MW");
	return wr.bind_mw.rkey;
}

/* The peer's WRITE of seed through rkey at off, and its bytes there. */
static void
mw_write(const struct mw_end *m, uint32_t rkey, uint64_t off, uint64_t seed, const char *what)
{
	uint8_t want[XFER];
	enum droce_wc_status st = peer_op(m, OP_WRITE, rkey, off, seed);

	fill(want, XFER, seed);
	printf("mw: the peer's WRITE through the %s: %s, bytes %s\n", what,
	       droce_wc_status_str(st), memcmp(m->e.buf + off, want, XFER) == 0 ?
	       "the same" : "DIFFER");
}

/*
 * An end whose MR allows windows (MW_BIND) and a session with the peer;
 * persistent as name (NULL: not); both windows bound (type 1 by
 * droce_bind_mw, type 2 by a BIND_MW work request).
 */
static void
mw_setup(struct mw_end *m, struct droce_context *ctx, const char *peer, const char *name)
{
	struct xchg me = { .mode = S_OPS };
	struct droce_mw_bind b = { .wr_id = 10, .send_flags = DROCE_SEND_SIGNALED };

	end_create(&m->e, ctx, BUF_LEN);
	if (droce_dereg_mr(m->e.mr) != 0)
		die("dereg_mr");
	m->e.mr = droce_reg_mr(m->e.pd, m->e.buf, BUF_LEN, DROCE_ACCESS_LOCAL_WRITE |
			       DROCE_ACCESS_REMOTE_WRITE | DROCE_ACCESS_MW_BIND);
	m->mw1 = droce_alloc_mw(m->e.pd, DROCE_MW_TYPE_1);
	m->mw2 = droce_alloc_mw(m->e.pd, DROCE_MW_TYPE_2);
	if (m->e.mr == NULL || m->mw1 == NULL || m->mw2 == NULL)
		die("reg_mr / alloc_mw");
	if (name != NULL && droce_persist_mr(m->e.mr, name, 0) != 0)
		die("persist_mr");
	(void)app_session_x(&m->e, peer, me, &m->fd);
	b.bind_info = (struct droce_mw_bind_info){
		m->e.mr, (uint64_t)(uintptr_t)m->e.buf + MW1_OFF, XFER, DROCE_ACCESS_REMOTE_WRITE };
	if (droce_bind_mw(m->e.qp, m->mw1, &b) != 0)
		die("bind_mw");
	expect_wc(&m->e, 10, DROCE_WC_SUCCESS, "type-1 bind");
	m->rkey2 = bind_type2(&m->e, m->mw2, m->e.mr, MW2_OFF, 11);
	expect_wc(&m->e, 11, DROCE_WC_SUCCESS, "type-2 bind");
	post_recv_at(&m->e, 20, RECV_OFF);	/* for the peer's SEND_WITH_INV */
	mw_write(m, m->mw1->rkey, MW1_OFF, 1, "type-1 window");
	mw_write(m, m->rkey2, MW2_OFF, 2, "type-2 window");
}

/* For mwforge: the type-2 window's handle and index, the type-1's index, the MR's lkey. */
static void
mw_write_handles(const char *file, const struct mw_end *m)
{
	FILE *f = fopen(file, "w");

	if (f == NULL || fprintf(f, "%" PRIu64 " %u %u %u\n",
				 ((const struct verbs_dmn_mw *)m->mw2)->h, m->mw2->handle,
				 m->mw1->handle, m->e.mr->lkey) < 0 || fclose(f) != 0)
		die("handle file");
}

#define MW_LEASE_MS 500
#define MW_QUERY_LEASE_MS 60000

/*
 * A lease on the bound type-1 window, set, queried and renewed as
 * requests, then let run out: droced's engine revokes it, its event
 * (MW_LEASE_EXPIRED naming the window) comes to the owner's async_fd, the
 * peer's WRITE through it is REM_ACCESS_ERR, the query says expired and a
 * renewal ETIME.  Also the query of the MR's lease (none: 0 ms).
 */
static void
mw_lease(struct droce_context *ctx, struct mw_end *m)
{
	struct droce_lease_attr la, mr_la;
	struct droce_async_event ev;
	enum droce_wc_status st;
	uint64_t t0;
	int renew;

	/* A running lease is queried under a long one: on a loaded machine
	 * the query may come later than MW_LEASE_MS after the set. */
	check(droce_set_mw_lease(m->mw1, MW_QUERY_LEASE_MS) == 0, "set_mw_lease");
	check(droce_query_mw_lease(m->mw1, &la) == 0 && la.lease_ms == MW_QUERY_LEASE_MS &&
	      !la.expired && la.remaining_us > 0 && la.remaining_us <= MW_QUERY_LEASE_MS * 1000,
	      "query_mw_lease of a running lease");
	check(droce_query_mr_lease(m->e.mr, &mr_la) == 0 && mr_la.lease_ms == 0,
	      "query_mr_lease of an MR without one");
	check(droce_set_mw_lease(m->mw1, MW_LEASE_MS) == 0, "set_mw_lease to the short lease");
	/* before the request: droced reads its clock for the new deadline
	 * after this, so the deadline is no earlier than t0 + MW_LEASE_MS */
	t0 = now_us();
	check(droce_renew_mw(m->mw1) == 0, "renew_mw");
	check(readable(ctx->async_fd, 5000), "no event within 5 s of the lease's deadline");
	check(droce_get_async_event(ctx, &ev) == 0, "get_async_event");
	check(ev.event_type == DROCE_EVENT_MW_LEASE_EXPIRED && ev.element.mw == m->mw1,
	      "not MW_LEASE_EXPIRED of the window");
	droce_ack_async_event(&ev);
	printf("mw: lease of %d ms on the type-1 window: MW_LEASE_EXPIRED %" PRIu64
	       " us after its renewal was asked\n", MW_LEASE_MS, now_us() - t0);
	st = peer_op(m, OP_WRITE, m->mw1->rkey, MW1_OFF, 4);
	check(droce_query_mw_lease(m->mw1, &la) == 0 && la.expired, "query after the expiry");
	renew = droce_renew_mw(m->mw1);
	printf("mw: after the expiry the peer's WRITE: %s; query: expired; renew: %s\n",
	       droce_wc_status_str(st), strerror(renew));
}

/* The windows, the end and the session freed. */
static void
mw_teardown(struct mw_end *m)
{
	if (droce_dealloc_mw(m->mw1) != 0 || droce_dealloc_mw(m->mw2) != 0)
		die("dealloc_mw");
	end_destroy(&m->e);
	close(m->fd);
	printf("mw: all freed\n");
}

/* mwlease PEERSOCK: a lease on a window (mw_lease), then all freed. */
static int
run_mwlease(struct droce_context *ctx, char **argv)
{
	struct mw_end m;

	mw_setup(&m, ctx, argv[0], NULL);
	mw_lease(ctx, &m);
	mw_teardown(&m);
	return 0;
}

/* mw PEERSOCK HANDLEFILE: the windows used, the peer's invalidation, then waits. */
static int
run_mw(struct droce_context *ctx, char **argv)
{
	struct mw_end m;
	struct droce_wc wc;
	enum droce_wc_status st;
	char line[16];

	mw_setup(&m, ctx, argv[0], NULL);
	st = peer_op(&m, OP_SEND_INV, m.rkey2, 0, 0);
	wc = wait_wc(&m.e);
	printf("mw: the peer's SEND_WITH_INV: %s; received: %s, %s, rkey %s\n",
	       droce_wc_status_str(st), droce_wc_status_str(wc.status),
	       (wc.wc_flags & DROCE_WC_WITH_INV) ? "with invalidate" : "NO INVALIDATE",
	       wc.invalidated_rkey == m.rkey2 ? "the window's" : "ANOTHER");
	st = peer_op(&m, OP_WRITE, m.rkey2, MW2_OFF, 3);
	printf("mw: the peer's WRITE through the invalidated window: %s\n",
	       droce_wc_status_str(st));
	mw_write_handles(argv[1], &m);
	printf("mw: ready\n");
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 1;
	mw_teardown(&m);
	return 0;
}

/* mwpersist PEERSOCK NAME: the region persistent, the peer's script for after our death. */
static _Noreturn void
run_mwpersist(struct droce_context *ctx, char **argv)
{
	struct mw_end m;
	struct op o = { .code = OP_AFTER_DEATH, .n = MW_AFTER };

	mw_setup(&m, ctx, argv[0], argv[1]);
	o.rkey = m.rkey2;
	o.rkey2 = m.e.mr->rkey;
	o.addr = (uint64_t)(uintptr_t)m.e.buf + MW2_OFF;
	if (send(m.fd, &o, sizeof(o), MSG_NOSIGNAL) != (ssize_t)sizeof(o))
		die("peer op");
	printf("mwpersist: ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

/* A forged type-1 unbind (a BIND_MW of length 0) of the window at index. */
/* A secondary of droced (DROCE_QUEUES=shared), not a plain process on a
 * queue region (the default). */
static bool
queues_shared(void)
{
	const char *q = getenv("DROCE_QUEUES");

	return q != NULL && strcmp(q, "shared") == 0;
}

/*
 * What a forged bind posted on e's QP ended in: a secondary's reaches the
 * engine, whose completion says (MW_BIND_ERR); a plain process's is
 * refused by droced before it (the window or the MR is none of its own):
 * the QP_REQ_ERR event naming the QP, no completion.
 */
static const char *
forged_bind_outcome(struct end *e)
{
	struct droce_async_event ev;
	bool named;

	if (queues_shared())
		return droce_wc_status_str(wait_wc(e).status);
	check(readable(e->ctx->async_fd, 5000), "no event within 5 s");
	check(droce_get_async_event(e->ctx, &ev) == 0, "get_async_event");
	named = ev.event_type == DROCE_EVENT_QP_REQ_ERR && ev.element.qp == e->qp;
	droce_ack_async_event(&ev);
	return named ? "QP_REQ_ERR naming its QP" : "another event";
}

static const char *
unbind_type1(struct end *e, uint32_t index)
{
	struct droce_mw mw = { e->ctx, e->pd, 0, index, DROCE_MW_TYPE_1 };
	struct droce_send_wr wr = { .wr_id = 32, .opcode = DROCE_WR_BIND_MW,
				    .send_flags = DROCE_SEND_SIGNALED };
	struct droce_send_wr *bad;

	wr.bind_mw.mw = &mw;
	wr.bind_mw.rkey = (index << 8) | 0x77;
	if (droce_post_send(e->qp, &wr, &bad) != 0)
		die("post BIND_MW");
	return forged_bind_outcome(e);
}

/*
 * mwforge PEERSOCK HANDLEFILE: another application's windows (handle, indexes) and
 * MR (lkey): dealloc ENOENT; a BIND_MW naming its type-2 window, one of our
 * window onto its MR and an unbind of its type-1 window each end in a
 * completion error (a secondary) or droced's refusal (a plain process:
 * forged_bind_outcome).
 */
static int
run_mwforge(struct droce_context *ctx, char **argv)
{
	struct verbs_dmn_mw forged = { 0 };
	struct droce_mr theirs = { 0 };
	struct end e1, e2, e3;
	struct droce_mw *own;
	struct xchg me = { .mode = S_OPS };
	uint32_t index1;
	FILE *f = fopen(argv[1], "r");
	int fd[3], rc;

	if (f == NULL || fscanf(f, "%" SCNu64 " %u %u %u", &forged.h, &forged.pub.handle,
				&index1, &theirs.lkey) != 4)
		die("handle file");
	fclose(f);
	end_create(&e1, ctx, 4096);
	end_create(&e2, ctx, 4096);
	end_create(&e3, ctx, 4096);
	(void)app_session_x(&e1, argv[0], me, &fd[0]);
	(void)app_session_x(&e2, argv[0], me, &fd[1]);
	(void)app_session_x(&e3, argv[0], me, &fd[2]);
	forged.pub = (struct droce_mw){ ctx, e1.pd, 0, forged.pub.handle, DROCE_MW_TYPE_2 };
	rc = droce_dealloc_mw(&forged.pub);
	printf("mwforge: dealloc of another's window: %s\n", strerror(rc));
	(void)bind_type2(&e1, &forged.pub, e1.mr, 0, 30);
	printf("mwforge: bind of another's window: %s\n", forged_bind_outcome(&e1));
	own = droce_alloc_mw(e2.pd, DROCE_MW_TYPE_2);
	if (own == NULL)
		die("alloc_mw");
	(void)bind_type2(&e2, own, &theirs, 0, 31);
	printf("mwforge: bind onto another's MR: %s\n", forged_bind_outcome(&e2));
	printf("mwforge: unbind of another's type-1 window: %s\n", unbind_type1(&e3, index1));
	if (droce_dealloc_mw(own) != 0)
		die("dealloc_mw");
	end_destroy(&e1);
	end_destroy(&e2);
	end_destroy(&e3);
	for (int i = 0; i < 3; i++)
		close(fd[i]);
	return 0;
}

int
main(int argc, char **argv)
{
	struct droce_device **list;
	struct droce_context *ctx;
	char *prog = argv[0];
	int n = droce_init(argc, argv), rc;

	if (n < 0)
		die("droce_init");
	argc -= n;
	argv += n;
	/* what is left may start with EAL's "--" or the program name */
	if (argc >= 1 && (strcmp(argv[0], "--") == 0 || strcmp(argv[0], prog) == 0)) {
		argc--;
		argv++;
	}
	if (argc < 1)
		return 2;

	mode_name = argv[0];
	list = droce_get_device_list(NULL);
	if (list == NULL || list[0] == NULL)
		die("no device");
	ctx = droce_open_device(list[0]);
	if (ctx == NULL)
		die("open_device");
	droce_free_device_list(list);
	if (strcmp(argv[0], "peer") == 0 && argc == 2)
		rc = run_peer(ctx, argv[1]);
	else if (strcmp(argv[0], "traffic") == 0 && argc >= 3)
		rc = run_traffic(ctx, argc - 1, argv + 1);
	else if (strcmp(argv[0], "forge") == 0 && argc == 3)
		rc = run_forge(ctx, argc - 1, argv + 1);
	else if (strcmp(argv[0], "target") == 0 && argc >= 2)
		run_target(ctx, argc - 1, argv + 1);
	else if (strcmp(argv[0], "hold") == 0 && argc == 1)
		rc = run_hold(ctx);
	else if (strcmp(argv[0], "churn") == 0)
		run_churn(ctx);
	else if (strcmp(argv[0], "own") == 0 && argc == 2)
		run_own(ctx, argc - 1, argv + 1);
	else if (strcmp(argv[0], "idle") == 0 && argc == 2)
		rc = run_idle(ctx, argc - 1, argv + 1);
	else if (strcmp(argv[0], "persist") == 0 && argc == 6)
		run_persist(ctx, argv + 1);
	else if (strcmp(argv[0], "attach") == 0 && (argc == 3 || argc == 4))
		rc = run_attach(ctx, argc - 1, argv + 1);
	else if (strcmp(argv[0], "refuse") == 0 && argc == 2)
		rc = run_refuse(ctx, argv + 1);
	else if (strcmp(argv[0], "channel") == 0 && argc == 3)
		rc = run_channel(ctx, argc - 1, argv + 1);
	else if (strcmp(argv[0], "async") == 0 && argc == 3)
		rc = run_async(ctx, argc - 1, argv + 1);
	else if (strcmp(argv[0], "quiet") == 0 && argc == 2)
		rc = run_quiet(ctx, argc - 1, argv + 1);
	else if (strcmp(argv[0], "mw") == 0 && argc == 3)
		rc = run_mw(ctx, argv + 1);
	else if (strcmp(argv[0], "mwpersist") == 0 && argc == 3)
		run_mwpersist(ctx, argv + 1);
	else if (strcmp(argv[0], "mwforge") == 0 && argc == 3)
		rc = run_mwforge(ctx, argv + 1);
	else if (strcmp(argv[0], "mwlease") == 0 && argc == 2)
		rc = run_mwlease(ctx, argv + 1);
	else if (strcmp(argv[0], "evfree") == 0 && argc == 1)
		rc = run_evfree(ctx);
	else if (strcmp(argv[0], "fork") == 0 && argc == 1)
		rc = run_fork(ctx);
	else if (strcmp(argv[0], "unsupported") == 0 && argc == 1)
		rc = run_unsupported(ctx);
	else if (strcmp(argv[0], "srq") == 0 && argc == 3)
		run_srq(ctx, argv + 1);
	else if (strcmp(argv[0], "srqforge") == 0 && argc == 2)
		rc = run_srqforge(ctx, argv + 1);
	else if (strcmp(argv[0], "attachlease") == 0 && argc == 2)
		rc = run_attachlease(ctx, argv + 1);
	else
		rc = 2;
	fflush(stdout);
	if (droce_close_device(ctx) != 0)
		die("close_device");
	droce_cleanup();
	return rc;
}
