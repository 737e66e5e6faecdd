/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_dq.c - an application's queue region (lib/dq, README.md "Queue
 * regions"): a memfd droced makes, sizes, seals and maps, passed to the
 * application (DQ_OPEN); the application's CQs and QPs attached to its
 * slots (DQ_ATTACH); and the poller that takes the work requests out of
 * the send and receive rings, checks them and posts them on droced's QPs
 * with the ordinary verbs, and writes droced's CQs' completions into the
 * completion rings.  The poller runs on droced's engine lcore, after each
 * of its rounds (tp_dev_set_round_hook); droced's main thread, which
 * serves the requests that attach, detach and reap, holds it off while it
 * changes what the poller reads (the gate below).
 *
 * The region is the application's to write at any time: droced keeps its
 * own indices and the region's shape, reads the application's index once
 * per round and each descriptor once (a copy), and checks both before
 * acting.  A malformed one ends that QP (ERR, QP_REQ_ERR to the
 * application, its counter); droced and the other applications go on.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_pause.h>
#include <rte_telemetry.h>

#include "dq.h"
#include "droced.h"
#include "droced_table.h"
#include "transport.h"

/* A round takes at most this many descriptors of one ring (fairness). */
#define DQ_BUDGET 32
/* Refusals logged per application (the counter counts them all). */
#define DQ_LOG_MAX 8

/* lib/dq's values are droce.h's (ibverbs'): copied through. */
#define SAME(x, y) ((int)(x) == (int)(y))
_Static_assert(SAME(DQ_WR_RDMA_WRITE, DROCE_WR_RDMA_WRITE) &&
	       SAME(DQ_WR_RDMA_WRITE_WITH_IMM, DROCE_WR_RDMA_WRITE_WITH_IMM) &&
	       SAME(DQ_WR_SEND, DROCE_WR_SEND) && SAME(DQ_WR_SEND_WITH_IMM, DROCE_WR_SEND_WITH_IMM) &&
	       SAME(DQ_WR_RDMA_READ, DROCE_WR_RDMA_READ) &&
	       SAME(DQ_WR_ATOMIC_CMP_AND_SWP, DROCE_WR_ATOMIC_CMP_AND_SWP) &&
	       SAME(DQ_WR_ATOMIC_FETCH_AND_ADD, DROCE_WR_ATOMIC_FETCH_AND_ADD) &&
	       SAME(DQ_WR_LOCAL_INV, DROCE_WR_LOCAL_INV) &&
	       SAME(DQ_WR_SEND_WITH_INV, DROCE_WR_SEND_WITH_INV) &&
	       SAME(DQ_SEND_FENCE, DROCE_SEND_FENCE) && SAME(DQ_SEND_SIGNALED, DROCE_SEND_SIGNALED) &&
	       SAME(DQ_SEND_SOLICITED, DROCE_SEND_SOLICITED) &&
	       SAME(DQ_SEND_INLINE, DROCE_SEND_INLINE) && SAME(DQ_WR_BIND_MW, DROCE_WR_BIND_MW),
	       "lib/dq's opcodes and flags");
_Static_assert(DQ_MAX_SGE == DROCE_MAX_SGE, "a region carries the SGEs the engine takes");

/* A QP slot holds a QP, or an SRQ (its receive ring only); both NULL: free. */
struct dq_qp_slot {
	struct droce_qp *qp;
	struct droce_srq *srq;
	uint64_t name;		/* the QP's name in the application's events */
	uint32_t ctx;		/* the context its events go to (struct obj's) */
	uint32_t sq_cons, rq_cons;	/* droced's own indices */
	/* the SGEs its QP was granted (an SRQ's: its max_sge); a descriptor
	 * naming more is refused before its entries are read */
	uint32_t max_send_sge, max_recv_sge;
	bool ud;
	bool broken;		/* in ERR for a malformed descriptor: not read again */
};

static bool
slot_used(const struct dq_qp_slot *s)
{
	return s->qp != NULL || s->srq != NULL;
}

struct dq_cq_slot {
	struct droce_cq *cq;
	uint64_t name;
	uint32_t ctx;		/* the context its events go to */
	uint32_t prod;
	uint32_t fired_sn;	/* the application's last arm fired */
	uint32_t fired;		/* events fired (the region's copy is for reading) */
	int ch_fd;		/* its channel's eventfd, -1: none */
	bool broken;		/* its consumer index was garbage: not written again */
};

/* A context's event ring (lib/dq dq_evq) and the eventfd that counts it. */
struct dq_ev_ctx {
	bool open;
	bool broken;		/* its consumer index was garbage: not written again */
	uint32_t prod;
	int fd;			/* that context's async_fd, -1: none */
};

struct droced_dq {
	void *base;
	size_t size;
	struct dq_geom g;	/* droced's copy: the region's header is not read */
	/* by context index (struct dmn_msg's ctx): 0 DQ_OPEN's, the others
	 * DQ_CTX_OPEN's; the main thread opens and closes them while it
	 * holds the poller off */
	struct dq_ev_ctx ev[DQ_MAX_CTXS];
	int bell_rd;		/* droced's end of the doorbell, -1: none yet */
	/* the last round left work in a ring that only droced's own progress
	 * frees (its QP full, the application's CQ ring full): the lcore
	 * counts it as work (no pause) */
	bool stalled;
	uint64_t bad;
	/* one past the highest QP and CQ slot ever attached: the poller,
	 * every round, looks at no slot beyond */
	uint32_t qp_hi, cq_hi;
	struct dq_qp_slot qp[DQ_MAX_QPS];
	struct dq_cq_slot cq[DQ_MAX_CQS];
};

/*
 * The poller and droced's main thread (README.md "Queue regions", "The
 * poller"): the poller runs on droced's engine lcore after each of its
 * rounds (dq_lcore_round) and reads the applications' regions, their
 * slots and their handle tables (the lkeys), all of which the main thread
 * changes when it serves a request or reaps an application.  So the main
 * thread holds the poller off whenever it is not asleep in poll(2): it
 * makes gate odd and waits until the lcore, at its next round, has
 * acknowledged that value (ack), then changes what it will; making gate
 * even again lets the poller run.  The lcore's side is one load a round
 * (and a store while held): no lock, no system call on the data path.
 */
static struct {
	struct droced_app **app;	/* the applications with a region */
	uint32_t n, cap;
	uint32_t gate;		/* odd: the main thread holds the poller off */
	uint32_t ack;		/* the last odd gate the lcore saw */
	bool hooked;		/* the lcore calls dq_lcore_round */
	int wake_fd;		/* droced's own eventfd: the lcore wakes the main thread */
	/* telemetry's /droced/dq: how often the main thread held the poller
	 * off (once per wake-up of its loop) and how many rounds the poller
	 * ran on the lcore */
	uint64_t holds, rounds;
} poller = { .wake_fd = -1 };

/* Application a's region into the poller's list (held). */
static int
poller_add(struct droced_app *a)
{
	if (poller.n == poller.cap) {
		uint32_t cap = poller.cap != 0 ? poller.cap * 2 : 16;
		struct droced_app **app = realloc(poller.app, cap * sizeof(*app));

		if (app == NULL)
			return ENOMEM;
		poller.app = app;
		poller.cap = cap;
	}
	poller.app[poller.n++] = a;
	return 0;
}

static void
poller_remove(const struct droced_app *a)
{
	for (uint32_t i = 0; i < poller.n; i++)
		if (poller.app[i] == a) {
			poller.app[i] = poller.app[--poller.n];
			return;
		}
}

/* ---- the region ------------------------------------------------------------------- */

/* A memfd of size bytes that neither side can shrink or grow (a shrink
 * would fault droced), mapped: its fd, or -errno. */
static int
region_make(size_t size, void **base)
{
	int fd = memfd_create("droce-dq", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	*base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*base == MAP_FAILED) {
		int rc = -errno;

		close(fd);
		return rc;
	}
	return fd;
}

int
on_dq_open(struct droced_app *a, struct dmn_msg *m)
{
	struct dq_geom g = { m->u.dq.nqp, m->u.dq.ncq, m->u.dq.sq_depth, m->u.dq.rq_depth,
			     m->u.dq.cq_depth };
	struct droced_dq *dq;
	struct dq_header *h;
	int rc = -dq_geom_check(&g), fd;

	if (rc != 0)
		return rc;
	if (a->dq != NULL)
		return EBUSY;
	/* an eventfd passed with the request counts the region's events */
	if (a->rx_fd >= 0 && (rc = passed_eventfd(a)) != 0)
		return rc;
	dq = calloc(1, sizeof(*dq));
	if (dq == NULL)
		return ENOMEM;
	dq->g = g;
	for (uint32_t i = 0; i < DQ_MAX_CTXS; i++)
		dq->ev[i].fd = -1;
	for (uint32_t i = 0; i < DQ_MAX_CQS; i++)
		dq->cq[i].ch_fd = -1;	/* (dq_close closes the attached ones') */
	dq->size = dq_region_size(&g);
	fd = region_make(dq->size, &dq->base);
	if (fd < 0) {
		free(dq);
		return -fd;
	}
	h = dq->base;
	*h = (struct dq_header){ DQ_MAGIC, DQ_VERSION, g, dq->size };
	if (poller_add(a) != 0) {
		munmap(dq->base, dq->size);
		close(fd);
		free(dq);
		return ENOMEM;
	}
	dq->ev[0] = (struct dq_ev_ctx){ .open = true, .fd = a->rx_fd };
	a->rx_fd = -1;
	dq->bell_rd = -1;
	a->dq = dq;
	a->tx_fd = fd;		/* the reply passes it, then droced closes its copy */
	m->len = dq->size;
	return 0;
}

/*
 * The doorbell: a socket pair, one end droced's, the other the
 * application's, which rings it only when the region's doorbell flag says
 * droced sleeps (lib/dq struct dq_bell).  The poller spins on droced's
 * engine lcore and never sets the flag, so nobody rings and droced does
 * not read its end: a hostile application's rings fill the socket's
 * buffer, then its sends fail (MSG_DONTWAIT | MSG_NOSIGNAL: neither a wait
 * nor a SIGPIPE), and droced spends nothing on them.  The request stays
 * for the applications that ask.
 */
int
on_dq_doorbell(struct droced_app *a, struct dmn_msg *m)
{
	int sv[2];

	(void)m;
	if (a->dq == NULL)
		return EINVAL;
	if (a->dq->bell_rd >= 0)
		return EBUSY;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		return errno;
	/* nobody reads the application's end: no buffer room wasted on it */
	(void)shutdown(sv[0], SHUT_WR);
	a->dq->bell_rd = sv[0];
	a->tx_fd = sv[1];	/* the reply passes it, then droced closes its copy */
	return 0;
}

static void
cq_slot_clear(struct dq_cq_slot *c)
{
	if (c->ch_fd >= 0)
		close(c->ch_fd);
	*c = (struct dq_cq_slot){ .ch_fd = -1 };
}

void
dq_close(struct droced_app *a)
{
	if (a->dq == NULL)
		return;
	poller_remove(a);
	munmap(a->dq->base, a->dq->size);
	for (uint32_t i = 0; i < DQ_MAX_CTXS; i++)
		if (a->dq->ev[i].fd >= 0)
			close(a->dq->ev[i].fd);
	if (a->dq->bell_rd >= 0)
		close(a->dq->bell_rd);
	for (uint32_t i = 0; i < a->dq->g.ncq; i++)
		cq_slot_clear(&a->dq->cq[i]);
	free(a->dq);
	a->dq = NULL;
}

static struct dq_cq_slot *
cq_slot_of(struct droced_dq *dq, const struct droce_cq *cq)
{
	for (uint32_t i = 0; i < dq->g.ncq; i++)
		if (dq->cq[i].cq == cq)
			return &dq->cq[i];
	return NULL;
}

static struct dq_qp_slot *
qp_slot_of(struct droced_dq *dq, const struct droce_qp *qp)
{
	for (uint32_t i = 0; i < dq->g.nqp; i++)
		if (dq->qp[i].qp == qp)
			return &dq->qp[i];
	return NULL;
}

static struct dq_qp_slot *
srq_slot_of(struct droced_dq *dq, const struct droce_srq *srq)
{
	for (uint32_t i = 0; i < dq->g.nqp; i++)
		if (dq->qp[i].srq == srq)
			return &dq->qp[i];
	return NULL;
}

/* A ring's indices zeroed: the slot's previous user may have left any. */
static void
ring_reset(struct dq_ring *r)
{
	__atomic_store_n(&r->prod, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->cons, 0, __ATOMIC_RELAXED);
}

/*
 * A CQ into slot i: once, into a free slot; with its channel's eventfd if
 * one came with the request.  A CQ on a channel of droced's (made by a
 * secondary's CREATE_CHANNEL) is not taken (EINVAL): a region's CQ fires
 * through its slot's arm (lib/dq struct dq_notify), which the poller
 * answers, not through the engine's channel.
 */
static int
attach_cq(struct droced_app *a, struct obj *o, uint32_t i)
{
	struct droced_dq *dq = a->dq;
	struct droce_cq *cq = o->p;
	struct dq_notify *nf;
	int rc;

	if (i >= dq->g.ncq || cq->channel != NULL)
		return EINVAL;
	if (dq->cq[i].cq != NULL || cq_slot_of(dq, cq) != NULL)
		return EBUSY;
	if (a->rx_fd >= 0 && (rc = passed_eventfd(a)) != 0)
		return rc;
	tp_cq_flag_solicited(tp_cq_from_pub(cq));	/* cq_notify's */
	dq->cq[i] = (struct dq_cq_slot){ .cq = cq, .name = o->app_ptr, .ctx = o->ctx,
					 .ch_fd = a->rx_fd };
	a->rx_fd = -1;
	if (i >= dq->cq_hi)
		dq->cq_hi = i + 1;
	ring_reset(dq_cq(dq->base, &dq->g, i));
	nf = dq_cq_notify(dq->base, &dq->g, i);
	__atomic_store_n(&nf->arm, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&nf->fired, 0, __ATOMIC_RELAXED);
	return 0;
}

/* A QP into slot i, once its CQs have slots (their completions a ring). */
static int
attach_qp(struct droced_dq *dq, struct obj *o, uint32_t i)
{
	struct droce_qp *qp = o->p;
	struct droce_qp_init_attr init;
	struct droce_qp_attr attr;
	int rc;

	if (i >= dq->g.nqp || cq_slot_of(dq, qp->send_cq) == NULL ||
	    cq_slot_of(dq, qp->recv_cq) == NULL)
		return EINVAL;
	if (slot_used(&dq->qp[i]) || qp_slot_of(dq, qp) != NULL)
		return EBUSY;
	rc = droce_query_qp(qp, &attr, DROCE_QP_CAP, &init);
	if (rc != 0)
		return rc;
	dq->qp[i] = (struct dq_qp_slot){ .qp = qp, .name = o->app_ptr, .ctx = o->ctx,
					 .max_send_sge = attr.cap.max_send_sge,
					 .max_recv_sge = attr.cap.max_recv_sge,
					 .ud = qp->qp_type == DROCE_QPT_UD };
	if (i >= dq->qp_hi)
		dq->qp_hi = i + 1;
	ring_reset(dq_sq(dq->base, &dq->g, i));
	ring_reset(dq_rq(dq->base, &dq->g, i));
	return 0;
}

/* An SRQ into QP slot i: its receive ring is the SRQ's. */
static int
attach_srq(struct droced_dq *dq, struct obj *o, uint32_t i)
{
	struct droce_srq *srq = o->p;
	struct droce_srq_attr attr;
	int rc;

	if (i >= dq->g.nqp)
		return EINVAL;
	if (slot_used(&dq->qp[i]) || srq_slot_of(dq, srq) != NULL)
		return EBUSY;
	rc = droce_query_srq(srq, &attr);	/* 0 or a positive errno */
	if (rc != 0)
		return rc;
	dq->qp[i] = (struct dq_qp_slot){ .srq = srq, .name = o->app_ptr, .ctx = o->ctx,
					 .max_recv_sge = attr.max_sge };
	if (i >= dq->qp_hi)
		dq->qp_hi = i + 1;
	ring_reset(dq_sq(dq->base, &dq->g, i));
	ring_reset(dq_rq(dq->base, &dq->g, i));
	return 0;
}

int
on_dq_attach(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *o;

	if (a->dq == NULL)
		return EINVAL;
	if (m->arg == DMN_DQ_CQ) {
		o = obj_find(a, OBJ_CQ, m->h[0]);
		return o == NULL ? ENOENT : attach_cq(a, o, m->key);
	}
	if (m->arg == DMN_DQ_QP) {
		o = obj_find(a, OBJ_QP, m->h[0]);
		return o == NULL ? ENOENT : attach_qp(a->dq, o, m->key);
	}
	if (m->arg == DMN_DQ_SRQ) {
		o = obj_find(a, OBJ_SRQ, m->h[0]);
		return o == NULL ? ENOENT : attach_srq(a->dq, o, m->key);
	}
	return EINVAL;
}

void
dq_forget(struct droced_app *a, const void *p)
{
	struct dq_qp_slot *q;
	struct dq_cq_slot *c;

	if (a->dq == NULL)
		return;
	q = qp_slot_of(a->dq, p);
	if (q == NULL)
		q = srq_slot_of(a->dq, p);
	if (q != NULL)
		*q = (struct dq_qp_slot){ 0 };
	c = cq_slot_of(a->dq, p);
	if (c != NULL)
		cq_slot_clear(c);
}

uint64_t
dq_bad_count(const struct droced_app *a)
{
	return a->dq != NULL ? a->dq->bad : 0;
}

/* ---- refusals ---------------------------------------------------------------------- */

/*
 * One refusal counted (the first DQ_LOG_MAX of an application logged);
 * the main thread, woken, publishes the counter to telemetry
 * (droced_dq_woken: telemetry's tables are the main thread's).
 */
static void
refused(struct droced_app *a, const char *what, uint32_t slot, int err)
{
	const uint64_t one = 1;

	if (a->dq->bad++ < DQ_LOG_MAX)
		fprintf(stderr, "droced: pid %d: queue region: %s of slot %u refused (%s)\n",
			(int)a->pid, what, slot, strerror(err));
	if (poller.wake_fd >= 0)
		(void)!write(poller.wake_fd, &one, sizeof(one));	/* droced's own, non-blocking */
}

/* ---- events ------------------------------------------------------------------------ */

static uint32_t
slot_named(const struct droced_dq *dq, uint64_t name)
{
	for (uint32_t i = 0; name != 0 && i < dq->g.nqp; i++)
		if (slot_used(&dq->qp[i]) && dq->qp[i].name == name)
			return i;
	for (uint32_t i = 0; name != 0 && i < dq->g.ncq; i++)
		if (dq->cq[i].cq != NULL && dq->cq[i].name == name)
			return i;
	return UINT32_MAX;
}

/*
 * One event into context ctx's event ring, then one count on that
 * context's eventfd: each context's async_fd counts its own events only,
 * and a thread waiting on it wakes without another context's help.  A
 * context closed (or an index never opened) takes none.
 */
static void
event_put(struct droced_app *a, uint32_t ctx, uint32_t type, uint32_t slot, uint64_t name)
{
	struct droced_dq *dq = a->dq;
	const struct dq_event e = { type, slot, name };
	const uint64_t one = 1;
	struct dq_ev_ctx *c;
	int rc;

	if (ctx >= DQ_MAX_CTXS || !dq->ev[ctx].open || dq->ev[ctx].broken)
		return;
	c = &dq->ev[ctx];
	rc = dq_event_put(dq_evq(dq->base, &dq->g, ctx), &c->prod, &e);
	if (rc == -EINVAL) {	/* its consumer index is garbage */
		c->broken = true;
		refused(a, "event index", ctx, EINVAL);
		return;
	}
	if (rc == 0 && c->fd >= 0 && write(c->fd, &one, sizeof(one)) < 0)
		fprintf(stderr, "droced: pid %d: event count: %s\n", (int)a->pid,
			strerror(errno));
}

void
dq_event(struct droced_app *a, uint32_t ctx, uint32_t type, uint64_t name)
{
	if (a->dq == NULL)
		return;
	if (ctx != DQ_EVERY_CTX) {
		event_put(a, ctx, type, slot_named(a->dq, name), name);
		return;
	}
	for (uint32_t i = 0; i < DQ_MAX_CTXS; i++)	/* a port's, the device's */
		event_put(a, i, type, UINT32_MAX, name);
}

bool
dq_ctx_valid(const struct droced_app *a, uint32_t ctx)
{
	if (a->dq == NULL)
		return ctx == 0;
	return ctx < DQ_MAX_CTXS && a->dq->ev[ctx].open;
}

/*
 * Another context of the application (its async_fd passed): the first
 * free index, its ring emptied (whatever a closed context left in it is
 * not the new one's).
 */
int
on_dq_ctx_open(struct droced_app *a, struct dmn_msg *m)
{
	struct droced_dq *dq = a->dq;
	int rc;

	if (dq == NULL)
		return EINVAL;
	rc = passed_eventfd(a);
	if (rc != 0)
		return rc;
	for (uint32_t i = 0; i < DQ_MAX_CTXS; i++) {
		if (dq->ev[i].open)
			continue;
		ring_reset(dq_evq(dq->base, &dq->g, i));
		dq->ev[i] = (struct dq_ev_ctx){ .open = true, .fd = a->rx_fd };
		a->rx_fd = -1;
		m->ctx = i;
		return 0;
	}
	return EMFILE;
}

/*
 * Context ctx closed: no more events for it, and none for the objects it
 * left (their ctx DQ_NO_CTX, so that the index's next context gets none
 * of them).
 */
int
on_dq_ctx_close(struct droced_app *a, struct dmn_msg *m)
{
	struct droced_dq *dq = a->dq;
	uint32_t ctx = m->ctx;

	if (dq == NULL || ctx >= DQ_MAX_CTXS || !dq->ev[ctx].open)
		return EINVAL;
	if (dq->ev[ctx].fd >= 0)
		close(dq->ev[ctx].fd);
	dq->ev[ctx] = (struct dq_ev_ctx){ .fd = -1 };
	for (uint32_t i = 0; i < a->nobj; i++)
		if (a->obj[i].ctx == ctx)
			a->obj[i].ctx = DQ_NO_CTX;
	for (uint32_t i = 0; i < dq->g.nqp; i++)
		if (dq->qp[i].ctx == ctx)
			dq->qp[i].ctx = DQ_NO_CTX;
	for (uint32_t i = 0; i < dq->g.ncq; i++)
		if (dq->cq[i].ctx == ctx)
			dq->cq[i].ctx = DQ_NO_CTX;
	persist_ctx_closed(a, ctx);
	return 0;
}

/* A malformed descriptor or index of QP slot s: the QP to ERR (its posted
 * work flushes into its CQs' rings), QP_REQ_ERR to the application. */
static void
qp_refused(struct droced_app *a, struct dq_qp_slot *s, const char *what, int err)
{
	struct droce_qp_attr attr = { .qp_state = DROCE_QPS_ERR };
	uint32_t slot = (uint32_t)(s - a->dq->qp);

	refused(a, what, slot, err);
	s->broken = true;
	(void)droce_modify_qp(s->qp, &attr, DROCE_QP_STATE);
	event_put(a, s->ctx, DROCE_EVENT_QP_REQ_ERR, slot, s->name);
}

/* The completion ring's consumer index is garbage: the CQ is not written
 * again (CQ_ERR), its QPs go to ERR. */
static void
cq_refused(struct droced_app *a, struct dq_cq_slot *c)
{
	struct droced_dq *dq = a->dq;
	uint32_t slot = (uint32_t)(c - dq->cq);

	refused(a, "CQ index", slot, EINVAL);
	c->broken = true;
	event_put(a, c->ctx, DROCE_EVENT_CQ_ERR, slot, c->name);
	for (uint32_t i = 0; i < dq->g.nqp; i++) {
		struct dq_qp_slot *s = &dq->qp[i];
		struct droce_qp_attr attr = { .qp_state = DROCE_QPS_ERR };

		if (s->qp != NULL && !s->broken &&
		    (s->qp->send_cq == c->cq || s->qp->recv_cq == c->cq)) {
			s->broken = true;
			(void)droce_modify_qp(s->qp, &attr, DROCE_QP_STATE);
		}
	}
}

/* slot s's SRQ had a malformed descriptor or index: SRQ_ERR to the
 * application, its ring not read again, and the QPs that receive from it
 * to ERR (their work flushes), as a CQ's. */
static void
srq_refused(struct droced_app *a, struct dq_qp_slot *s, const char *what, int err)
{
	struct droced_dq *dq = a->dq;
	uint32_t slot = (uint32_t)(s - dq->qp);

	refused(a, what, slot, err);
	s->broken = true;
	event_put(a, s->ctx, DROCE_EVENT_SRQ_ERR, slot, s->name);
	for (uint32_t i = 0; i < dq->g.nqp; i++) {
		struct dq_qp_slot *q = &dq->qp[i];
		struct droce_qp_attr attr = { .qp_state = DROCE_QPS_ERR };

		if (q->qp != NULL && !q->broken && q->qp->srq == s->srq) {
			q->broken = true;
			(void)droce_modify_qp(q->qp, &attr, DROCE_QP_STATE);
		}
	}
}

/* ---- the poller -------------------------------------------------------------------- */

/*
 * An SGE's lkey not of the application's own MRs (any of its PDs) is
 * replaced by one no MR has (lib/protection never allocates index 0), so
 * that the engine ends the work request as in process and as an RNIC: a
 * LOC_PROT_ERR completion when it uses the SGE (the requester's gather,
 * the responder's place; IBTA 10.6.3), its QP in ERR.  No access with
 * another application's key is possible, and the engine checks the rest
 * of an own key (the QP's PD, the range, the rights).
 */
#define NO_LKEY 0u

static void
keys_own(struct droced_app *a, struct dq_sge *sge, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		bool own = false;

		for (uint32_t j = 0; j < a->nobj && !own; j++)
			own = a->obj[j].type == OBJ_MR &&
			      ((const struct droce_mr *)a->obj[j].p)->lkey == sge[i].lkey;
		if (!own)
			sge[i].lkey = NO_LKEY;
	}
}

/*
 * A bind's window (its index, imm) and MR (its lkey; none to unbind):
 * droced's own objects of the caller's table, or -EACCES.  The engine
 * then checks the rest as in process (the QP's PD, the MR's range and
 * rights, the window's type: MW_BIND_ERR).
 */
static int
bind_objects(struct droced_app *a, const struct dq_send_wqe *w, struct droce_mw **mw,
	     struct droce_mr **mr)
{
	*mw = NULL;
	*mr = NULL;
	for (uint32_t j = 0; j < a->nobj; j++) {
		if (a->obj[j].type == OBJ_MW &&
		    ((struct droce_mw *)a->obj[j].p)->handle == w->imm)
			*mw = a->obj[j].p;
		if (w->bind.length != 0 && a->obj[j].type == OBJ_MR &&
		    ((struct droce_mr *)a->obj[j].p)->lkey == w->bind.mr_lkey)
			*mr = a->obj[j].p;
	}
	return *mw != NULL && (w->bind.length == 0 || *mr != NULL) ? 0 : -EACCES;
}

static void
sges_to(struct droce_sge *out, const struct dq_sge *sge, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		out[i] = (struct droce_sge){ sge[i].addr, sge[i].length, sge[i].lkey };
}

/* A checked send WQE on droced's QP: 0, or the verb's errno.  A UD
 * WQE's AH index goes to the engine as is: it resolves it for the QP's PD
 * only (another application's AH, or a freed one: LOC_QP_OP_ERR).  Inline
 * data is droced's copy (data), one SGE the engine copies in turn (its
 * length checked against the QP's max_inline_data there: EINVAL). */
static int
send_one(struct droce_qp *qp, const struct dq_send_wqe *w, const struct dq_sge *sges,
	 const uint8_t *data, struct droce_mw *mw, struct droce_mr *mr)
{
	struct droce_sge sge[DQ_MAX_SGE];
	struct droce_send_wr wr = { .wr_id = w->wr_id, .sg_list = sge, .num_sge = w->num_sge,
				    .opcode = (enum droce_wr_opcode)w->opcode,
				    .send_flags = w->flags };
	struct droce_ah ah = { .context = qp->context, .pd = qp->pd, .handle = w->ah };
	struct droce_send_wr *bad;

	if (qp->qp_type == DROCE_QPT_UD) {
		wr.wr.ud.ah = &ah;
		wr.wr.ud.remote_qpn = w->remote_qpn;
		wr.wr.ud.remote_qkey = w->remote_qkey;
	}

	if (w->flags & DQ_SEND_INLINE) {
		sge[0] = (struct droce_sge){ (uint64_t)(uintptr_t)data, w->inline_len, 0 };
		wr.num_sge = w->inline_len > 0;
	} else {
		sges_to(sge, sges, w->num_sge);
	}
	wr.imm_data = w->imm;	/* or invalidate_rkey: one union */
	if (dq_wr_ops[w->opcode] & DQ_OP_BIND) {
		wr.bind_mw.mw = mw;
		wr.bind_mw.rkey = w->rkey;
		wr.bind_mw.bind_info = (struct droce_mw_bind_info){
			.mr = mr, .addr = w->remote_addr, .length = w->bind.length,
			.mw_access_flags = w->bind.access };
	} else if (dq_wr_ops[w->opcode] & DQ_OP_ATOMIC) {
		wr.wr.atomic.remote_addr = w->remote_addr;
		wr.wr.atomic.compare_add = w->compare_add;
		wr.wr.atomic.swap = w->swap;
		wr.wr.atomic.rkey = w->rkey;
	} else if (dq_wr_ops[w->opcode] & DQ_OP_REMOTE) {
		wr.wr.rdma.remote_addr = w->remote_addr;
		wr.wr.rdma.rkey = w->rkey;
	}
	return droce_post_send(qp, &wr, &bad);
}

/* A checked receive WQE (its SGE list sges) on the slot's QP, or its SRQ. */
static int
recv_one(const struct dq_qp_slot *s, const struct dq_recv_wqe *w, const struct dq_sge *sges)
{
	struct droce_sge sge[DQ_MAX_SGE];
	struct droce_recv_wr wr = { .wr_id = w->wr_id, .sg_list = sge, .num_sge = w->num_sge };
	struct droce_recv_wr *bad;

	sges_to(sge, sges, w->num_sge);
	return s->srq != NULL ? droce_post_srq_recv(s->srq, &wr, &bad) :
				droce_post_recv(s->qp, &wr, &bad);
}

/* A refusal in slot s's receive ring: its QP's, or its SRQ's. */
static void
rq_refused(struct droced_app *a, struct dq_qp_slot *s, const char *what, int err)
{
	if (s->srq != NULL)
		srq_refused(a, s, what, err);
	else
		qp_refused(a, s, what, err);
}

/*
 * The checked descriptor w's inline data (into data) or SGE list (into
 * sges), copied once out of the ring: 0, -E2BIG (more SGEs than its QP
 * was granted, max_sge), -EINVAL when its entries (dq_send_entries, from
 * the checked copy) are not all among the avail published, or the whole
 * list's -EMSGSIZE (dq_sges_check).
 */
static int
send_take(struct dq_ring *r, uint32_t depth, uint32_t i, const struct dq_send_wqe *w,
	  uint32_t avail, uint32_t max_sge, uint8_t *data, struct dq_sge *sges, uint32_t *slots)
{
	if (w->num_sge > max_sge)
		return -E2BIG;
	*slots = dq_send_entries(w);
	if (*slots > avail)
		return -EINVAL;
	if (w->flags & DQ_SEND_INLINE) {
		dq_inline_read(r, depth, i, data, w->inline_len);
		return 0;
	}
	dq_send_sges_read(r, depth, i, w, sges);
	/* the descriptor's own SGEs were dq_send_check's */
	return w->num_sge > DQ_WQE_SGE ? dq_sges_check(sges, w->num_sge) : 0;
}

/* The same for a checked receive descriptor (dq_recv_slots entries). */
static int
recv_take(struct dq_ring *r, uint32_t depth, uint32_t i, const struct dq_recv_wqe *w,
	  uint32_t avail, uint32_t max_sge, struct dq_sge *sges, uint32_t *slots)
{
	if (w->num_sge > max_sge)
		return -E2BIG;
	*slots = dq_recv_slots(w->num_sge);
	if (*slots > avail)
		return -EINVAL;
	dq_recv_sges_read(r, depth, i, w, sges);
	return w->num_sge > DQ_WQE_SGE ? dq_sges_check(sges, w->num_sge) : 0;
}

/* Slot s's send ring: how many entries were taken (refusals end the QP). */
static unsigned int
sq_step(struct droced_app *a, struct dq_qp_slot *s)
{
	struct droced_dq *dq = a->dq;
	struct dq_ring *r = dq_sq(dq->base, &dq->g, (uint32_t)(s - dq->qp));
	int avail = dq_ring_avail(r, s->sq_cons, dq->g.sq_depth), rc = 0;
	unsigned int n = 0;

	if (avail < 0) {
		qp_refused(a, s, "SQ index", -avail);
		return 0;
	}
	while (n < (unsigned int)avail && n < DQ_BUDGET) {
		uint8_t data[DQ_MAX_INLINE];
		struct dq_sge sges[DQ_MAX_SGE];
		struct droce_mw *mw = NULL;
		struct droce_mr *mr = NULL;
		struct dq_send_wqe w;
		uint32_t slots = 1;

		dq_send_read(r, dq->g.sq_depth, s->sq_cons, &w);
		rc = dq_send_check(&w, s->ud, TP_MAX_AH - 1);
		if (rc == 0)
			rc = send_take(r, dq->g.sq_depth, s->sq_cons, &w, (uint32_t)avail - n,
				       s->max_send_sge, data, sges, &slots);
		if (rc == 0 && !(w.flags & DQ_SEND_INLINE))
			keys_own(a, sges, w.num_sge);
		if (rc == 0 && (dq_wr_ops[w.opcode] & DQ_OP_BIND))
			rc = bind_objects(a, &w, &mw, &mr);
		if (rc == 0)
			rc = -send_one(s->qp, &w, sges, data, mw, mr);
		if (rc == -ENOMEM) {
			/* droced's QP is full: the rest next round (its slots
			 * free with no completion when unsignaled) */
			a->dq->stalled = true;
			break;
		}
		if (rc != 0) {
			qp_refused(a, s, "send WQE", -rc);
			break;
		}
		s->sq_cons += slots;
		n += slots;
	}
	if (n > 0)	/* (a store every round would take the line from the application) */
		dq_ring_consumed(r, s->sq_cons);
	return n;
}

static unsigned int
rq_step(struct droced_app *a, struct dq_qp_slot *s)
{
	struct droced_dq *dq = a->dq;
	struct dq_ring *r = dq_rq(dq->base, &dq->g, (uint32_t)(s - dq->qp));
	int avail = dq_ring_avail(r, s->rq_cons, dq->g.rq_depth), rc = 0;
	unsigned int n = 0;

	if (avail < 0) {
		rq_refused(a, s, "RQ index", -avail);
		return 0;
	}
	while (n < (unsigned int)avail && n < DQ_BUDGET) {
		struct dq_sge sges[DQ_MAX_SGE];
		struct dq_recv_wqe w;
		uint32_t slots = 1;

		dq_recv_read(r, dq->g.rq_depth, s->rq_cons, &w);
		rc = dq_recv_check(&w);
		if (rc == 0)
			rc = recv_take(r, dq->g.rq_depth, s->rq_cons, &w, (uint32_t)avail - n,
				       s->max_recv_sge, sges, &slots);
		if (rc == 0) {
			keys_own(a, sges, w.num_sge);
			rc = -recv_one(s, &w, sges);
		}
		if (rc == -ENOMEM) {
			a->dq->stalled = true;
			break;
		}
		if (rc != 0) {
			rq_refused(a, s, "receive WQE", -rc);
			break;
		}
		s->rq_cons += slots;
		n += slots;
	}
	if (n > 0)
		dq_ring_consumed(r, s->rq_cons);
	return n;
}

/*
 * Completions were published in slot c's ring (wc, n of them): the
 * application's arm fires if it is new (lib/dq's struct dq_notify).  The
 * full fence orders the ring's index before the arm's load, as the
 * application's orders its arm before its next poll.  A solicited-only
 * arm fires, as in process (IBTA 11.4.2.2), on the receive of a message
 * with the solicited event bit (the engine's TP_WC_SOLICITED, which
 * attach_cq asked for) or on an error completion.  One eventfd count per
 * arm, none per completion.
 */
static void
cq_notify(struct droced_dq *dq, struct dq_cq_slot *c, const struct droce_wc *wc, int n)
{
	struct dq_notify *nf = dq_cq_notify(dq->base, &dq->g, (uint32_t)(c - dq->cq));
	const uint64_t one = 1;
	uint32_t arm;
	bool match = false;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	arm = __atomic_load_n(&nf->arm, __ATOMIC_RELAXED);
	if (DQ_ARM_SN(arm) == c->fired_sn)
		return;
	for (int i = 0; i < n && !match; i++)
		match = !(arm & DQ_ARM_SOLICITED) || wc[i].status != DROCE_WC_SUCCESS ||
			(wc[i].wc_flags & TP_WC_SOLICITED) != 0;
	if (!match)
		return;
	c->fired_sn = DQ_ARM_SN(arm);
	__atomic_store_n(&nf->fired, ++c->fired, __ATOMIC_RELEASE);
	if (c->ch_fd >= 0 && write(c->ch_fd, &one, sizeof(one)) < 0)
		fprintf(stderr, "droced: a completion channel's count: %s\n", strerror(errno));
}

/* Completions of droced's CQ into slot c's ring, as many as it has room for. */
static unsigned int
cq_step(struct droced_app *a, struct dq_cq_slot *c)
{
	struct droced_dq *dq = a->dq;
	struct dq_ring *r = dq_cq(dq->base, &dq->g, (uint32_t)(c - dq->cq));
	int room = dq_ring_room(r, c->prod, dq->g.cq_depth), n;
	struct droce_wc wc[DQ_BUDGET];
	struct dq_cqe *e = dq_ring_entries(r);

	if (room < 0) {
		cq_refused(a, c);
		return 0;
	}
	/* the application's ring full: droced's CQ may hold more, which no
	 * new completion (the arm) would announce once the ring has room */
	if (room == 0)
		dq->stalled = true;
	n = droce_poll_cq(c->cq, room < DQ_BUDGET ? room : DQ_BUDGET, wc);
	for (int i = 0; i < n; i++)
		e[c->prod++ & (dq->g.cq_depth - 1)] = (struct dq_cqe){
			.wr_id = wc[i].wr_id, .status = (uint8_t)wc[i].status,
			.opcode = (uint8_t)wc[i].opcode,
			.wc_flags = (uint16_t)(wc[i].wc_flags & ~TP_WC_SOLICITED),
			.byte_len = wc[i].byte_len, .imm = wc[i].imm_data,
			.qp_num = wc[i].qp_num, .src_qp = wc[i].src_qp,
			.vendor_err = (uint16_t)wc[i].vendor_err, .sl = wc[i].sl };
	if (n <= 0)
		return 0;
	dq_ring_produced(r, c->prod);
	cq_notify(dq, c, wc, n);
	return (unsigned int)n;
}

unsigned int
dq_poll(struct droced_app *a)
{
	struct droced_dq *dq = a->dq;
	unsigned int n = 0;

	dq->stalled = false;
	for (uint32_t i = 0; i < dq->qp_hi; i++) {
		struct dq_qp_slot *s = &dq->qp[i];

		if (slot_used(s) && !s->broken)
			n += rq_step(a, s);	/* receives first: a SEND may need them */
		if (s->qp != NULL && !s->broken)
			n += sq_step(a, s);
	}
	for (uint32_t i = 0; i < dq->cq_hi; i++)
		if (dq->cq[i].cq != NULL && !dq->cq[i].broken)
			n += cq_step(a, &dq->cq[i]);
	return n;
}

/* ---- on the engine's lcore, and the main thread's gate ------------------------------- */

/* The engine lcore's hook, after each of its rounds: every region's rings
 * once, unless the main thread holds the poller off (then acknowledged). */
static unsigned int
dq_lcore_round(void *arg)
{
	uint32_t gate = __atomic_load_n(&poller.gate, __ATOMIC_ACQUIRE);
	unsigned int n = 0;

	(void)arg;
	if (gate & 1) {
		__atomic_store_n(&poller.ack, gate, __ATOMIC_RELEASE);
		return 0;
	}
	for (uint32_t i = 0; i < poller.n; i++) {
		n += dq_poll(poller.app[i]);
		n += poller.app[i]->dq->stalled;	/* (no pause: retry at once) */
	}
	__atomic_store_n(&poller.rounds, poller.rounds + 1, __ATOMIC_RELAXED);
	return n;
}

void
droced_dq_hold(void)
{
	uint32_t gate = poller.gate + 1;	/* odd: only the main thread writes it */

	__atomic_store_n(&poller.gate, gate, __ATOMIC_SEQ_CST);
	__atomic_store_n(&poller.holds, poller.holds + 1, __ATOMIC_RELAXED);
	/*
	 * The round under way (it saw the even gate) finishes first: a few
	 * microseconds, unless the lcore is off its CPU (a shared core); then
	 * the main thread sleeps rather than take the CPU from the
	 * applications (the spinning main thread of a starved lcore's droced
	 * slowed them on the 2-core VM).
	 */
	for (unsigned int k = 0;
	     poller.hooked && __atomic_load_n(&poller.ack, __ATOMIC_ACQUIRE) != gate; k++) {
		if (k < 1000)
			rte_pause();
		else
			(void)nanosleep(&(struct timespec){ .tv_nsec = 20000 }, NULL);
	}
}

void
droced_dq_release(void)
{
	__atomic_store_n(&poller.gate, poller.gate + 1, __ATOMIC_RELEASE);
}

/* /droced/dq: {"main_holds": n, "lcore_rounds": n} */
static int
tel_dq(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "main_holds", __atomic_load_n(&poller.holds, __ATOMIC_RELAXED));
	rte_tel_data_add_dict_u64(d, "lcore_rounds",
				  __atomic_load_n(&poller.rounds, __ATOMIC_RELAXED));
	return 0;
}

int
droced_dq_start(struct droce_context *ctx)
{
	int rc;

	poller.wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (poller.wake_fd < 0)
		return errno;
	rc = -tp_dev_set_round_hook(verbs_tp(ctx), dq_lcore_round, NULL);
	if (rc != 0) {
		close(poller.wake_fd);
		poller.wake_fd = -1;
		return rc;
	}
	poller.hooked = true;
	rte_telemetry_register_cmd("/droced/dq", tel_dq,
				   "droced's queue regions' poller: the main thread's holds, the lcore's rounds");
	return 0;
}

void
droced_dq_stop(struct droce_context *ctx)
{
	if (poller.hooked)
		(void)tp_dev_set_round_hook(verbs_tp(ctx), NULL, NULL);
	poller.hooked = false;
	if (poller.wake_fd >= 0)
		close(poller.wake_fd);
	poller.wake_fd = -1;
	free(poller.app);
	poller.app = NULL;
	poller.n = poller.cap = 0;
}

int
droced_dq_wake_fd(void)
{
	return poller.wake_fd;
}

void
droced_dq_woken(void)
{
	uint64_t n;

	if (poller.wake_fd >= 0 && read(poller.wake_fd, &n, sizeof(n)) == (ssize_t)sizeof(n))
		tel_snapshot();		/* refusals counted on the lcore */
}
