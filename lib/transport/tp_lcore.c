/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dedicated transport lcores: the second run mode.
 *
 * A transport lcore (an EAL worker launched with rte_eal_remote_launch)
 * runs the progress loop of one or more devices; the application runs on
 * other lcores and talks to it only through rte_rings:
 *
 *   post rings     one SP/SC ring per send queue and per receive queue of
 *                  each QP: droce_post_send/recv build the WQE straight
 *                  into the ring (zero-copy enqueue), the transport lcore
 *                  moves it into the QP's SQ/RQ.
 *   completion     one SP/SC ring per CQ: the transport lcore moves the
 *   rings          CQEs its completer/responder wrote into the CQ's own
 *                  array onto it; droce_poll_cq dequeues.
 *   command ring   one MP/SC ring per transport lcore: control-path verbs
 *                  (create/modify/query/destroy QP and CQ, AH, detach)
 *                  run there as a function call; the caller spins on the
 *                  command's done flag.  The control path may wait, the
 *                  data path never does.
 *
 * Why per QP and not one ring per device: a post ring sized to the QP's
 * own max_send_wr / max_recv_wr makes "ring full" the same thing as "work
 * queue full" (ENOMEM, as ibverbs), per QP, so one QP's burst can never
 * make another QP's post fail; each QP may be owned by a different
 * application lcore (single producer per ring without any lock); and the
 * transport already walks its live QPs every round, so polling a per-QP
 * ring costs one load of the ring's producer index per QP.
 *
 * Ordering (what the control path guarantees):
 *   - a command drains every post ring of its lcore's devices before it
 *     runs: WRs posted before modify_qp/destroy_qp are in the SQ/RQ when
 *     the QP changes state or goes away (RESET discards them, as ibverbs);
 *   - modify_qp returns after the transport lcore executed it, so a post
 *     after modify_qp(RTS) is checked against RTS (struct tp_lc_qp.state)
 *     and drained into an RTS QP;
 *   - destroy_qp / destroy_cq free memory on the transport lcore, between
 *     two rounds: nothing of it is in use then, and the application does
 *     not use the object after the call (ibverbs rule);
 *   - dereg_mr / MW invalidation use lib/protection's QSBR: the transport
 *     lcore owns the device's reader slot and reports a quiescent state at
 *     the end of every tp_progress(), so a revoking call returns only
 *     after no lookup that saw the old key is still running there.  WQEs
 *     still in a post ring are checked when executed, and fail then.
 *
 * Completions and credits: the transport lcore publishes qp->sq.tail and
 * qp->rq.tail (release stores, only when they moved) before it moves the
 * CQEs of the same round: a thread that polled a completion also sees the
 * work-queue slot free again.
 */
#include <errno.h>
#include <string.h>

#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_spinlock.h>

#include "tp_private.h"

#define TP_LC_MAX_DEV 16
#define TP_LC_CMD_RING 64
#define TP_LC_CMD_BURST 8

struct tp_lc_cmd {
	int (*fn)(void *arg);
	void *arg;
	struct tp_dev *dev;	/* several shards: stopped while fn runs */
	int rc;
	uint32_t done;		/* atomic: set by the transport lcore */
};

struct tp_lcore {
	unsigned int lcore;
	struct rte_ring *cmd;	/* struct tp_lc_cmd *, MP/SC */
	/* the transport lcore's own (changed only by commands) */
	struct tp_dev *devs[TP_LC_MAX_DEV];
	unsigned int shard[TP_LC_MAX_DEV];	/* which shard of devs[i] */
	unsigned int ndev;
	bool stop;
	/*
	 * Stopping the world (several shards, lc_world_stop): another lcore
	 * sets park 1 and waits for parked 1; this lcore waits between two
	 * rounds until park is 0 again, then clears parked.
	 */
	uint32_t park;
	uint32_t parked;
	/* control path (device open/close) */
	unsigned int users;
};

/* Control path only: droce_open_device / close are not concurrent. */
static struct tp_lcore *tp_lcores[RTE_MAX_LCORE];

/* Held by the lcore that has stopped other lcores (one at a time). */
static rte_spinlock_t lc_world = RTE_SPINLOCK_INITIALIZER;

/* ---- rings -------------------------------------------------------------------- */

/*
 * An exact-size ring of count elements of esize bytes in rte_malloc
 * memory (not a named memzone: QPs and CQs come and go by the thousand,
 * memzones are a small table and need unique names).
 */
static struct rte_ring *
lc_ring_alloc(unsigned int count, unsigned int esize, unsigned int flags)
{
	unsigned int size = rte_align32pow2(count + 1);
	ssize_t bytes = rte_ring_get_memsize_elem(esize, size);
	struct rte_ring *r;

	if (bytes < 0)
		return NULL;
	r = rte_zmalloc_socket("droce_lc_ring", (size_t)bytes, RTE_CACHE_LINE_SIZE,
			       rte_socket_id());
	if (r == NULL)
		return NULL;
	if (rte_ring_init(r, "droce_lc", count, flags | RING_F_EXACT_SZ) != 0) {
		rte_free(r);
		return NULL;
	}
	return r;
}

struct rte_ring *
tp_lc_ring_create(unsigned int count, unsigned int esize)
{
	return lc_ring_alloc(count < 1 ? 1 : count, esize,
			     RING_F_SP_ENQ | RING_F_SC_DEQ);
}

int
tp_lc_qp_init(struct tp_qp *qp)
{
	struct tp_lc_qp *lc = rte_zmalloc("droce_lc_qp", sizeof(*lc),
					  RTE_CACHE_LINE_SIZE);

	if (lc == NULL)
		return -ENOMEM;
	lc->sq_ring = tp_lc_ring_create(qp->sq.max_wr, sizeof(struct tp_send_wqe));
	lc->rq_ring = tp_lc_ring_create(qp->rq.max_wr, sizeof(struct tp_recv_wqe));
	if (lc->sq_ring == NULL || lc->rq_ring == NULL) {
		rte_free(lc->sq_ring);
		rte_free(lc->rq_ring);
		rte_free(lc);
		return -ENOMEM;
	}
	lc->state = DROCE_QPS_RESET;
	qp->lc = lc;
	return 0;
}

void
tp_lc_qp_fini(struct tp_qp *qp)
{
	if (qp->lc == NULL)
		return;
	rte_free(qp->lc->sq_ring);
	rte_free(qp->lc->rq_ring);
	rte_free(qp->lc);
	qp->lc = NULL;
}

/* Several shards: a CQ may get CQEs from each; every shard stages its own. */
static int
lc_cq_stages(struct tp_cq *cq)
{
	unsigned int n = cq->dev->nshards - 1;

	cq->xs = rte_zmalloc("droce_cq_stage", n * sizeof(*cq->xs), RTE_CACHE_LINE_SIZE);
	if (cq->xs == NULL)
		return -ENOMEM;
	cq->nxs = n;
	for (unsigned int k = 0; k < n; k++) {
		cq->xs[k].ring = rte_zmalloc("droce_cq_stage",
					     (cq->mask + 1) * sizeof(struct droce_wc),
					     RTE_CACHE_LINE_SIZE);
		if (cq->xs[k].ring == NULL)
			return -ENOMEM;
	}
	return 0;
}

static void
lc_cq_stages_free(struct tp_cq *cq)
{
	if (cq->xs == NULL)
		return;
	for (unsigned int k = 0; k < cq->nxs; k++)
		rte_free(cq->xs[k].ring);
	rte_free(cq->xs);
	cq->xs = NULL;
}

int
tp_lc_cq_init(struct tp_cq *cq)
{
	bool sharded = cq->dev->nshards > 1;

	/* several shards enqueue: multi-producer (the poller stays single) */
	cq->lc_ring = lc_ring_alloc(cq->mask + 1, sizeof(struct droce_wc),
				    sharded ? RING_F_SC_DEQ : RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (cq->lc_ring == NULL)
		return -ENOMEM;
	if (sharded && lc_cq_stages(cq) != 0) {
		lc_cq_stages_free(cq);
		rte_free(cq->lc_ring);
		cq->lc_ring = NULL;
		return -ENOMEM;
	}
	cq->lc_next = cq->dev->lc_cqs;
	cq->dev->lc_cqs = cq;
	return 0;
}

void
tp_lc_cq_fini(struct tp_cq *cq)
{
	struct tp_cq **p;

	if (cq->lc_ring == NULL)
		return;
	for (p = &cq->dev->lc_cqs; *p != NULL; p = &(*p)->lc_next) {
		if (*p == cq) {
			*p = cq->lc_next;
			break;
		}
	}
	lc_cq_stages_free(cq);
	rte_free(cq->lc_ring);
	cq->lc_ring = NULL;
}

/* ---- the transport lcore's round ---------------------------------------------- */

/* Move up to the free contiguous room of the queue, twice (ring wrap). */
static unsigned int
lc_drain_sq(struct tp_qp *qp)
{
	struct tp_sq *sq = &qp->sq;
	unsigned int total = 0;

	for (int pass = 0; pass < 2; pass++) {
		uint32_t idx = sq->head & sq->mask;
		uint32_t room = RTE_MIN(sq->mask + 1 - idx,
					sq->mask + 1 - tp_ring_count(sq->head, sq->tail));
		unsigned int n;

		if (room == 0)
			break;
		n = rte_ring_sc_dequeue_burst_elem(qp->lc->sq_ring, &sq->wqe[idx],
						   sizeof(sq->wqe[0]), room, NULL);
		sq->head += n;
		total += n;
		if (n < room)
			break;
	}
	return total;
}

static unsigned int
lc_drain_rq(struct tp_qp *qp)
{
	struct tp_rq *rq = &qp->rq;
	unsigned int total = 0;

	for (int pass = 0; pass < 2; pass++) {
		uint32_t idx = rq->head & rq->mask;
		uint32_t room = RTE_MIN(rq->mask + 1 - idx,
					rq->mask + 1 - tp_ring_count(rq->head, rq->tail));
		unsigned int n;

		if (room == 0)
			break;
		n = rte_ring_sc_dequeue_burst_elem(qp->lc->rq_ring, &rq->wqe[idx],
						   sizeof(rq->wqe[0]), room, NULL);
		rq->head += n;
		total += n;
		if (n < room)
			break;
	}
	return total;
}

/* Shard filter: this shard's QPs, or every QP (LC_ALL, world stopped). */
#define LC_ALL UINT32_MAX

static inline bool
lc_mine(const struct tp_dev *dev, const struct tp_qp *qp, unsigned int shard)
{
	return shard == LC_ALL || tp_qpn_shard(dev, qp->pub.qp_num) == shard;
}

static unsigned int
lc_drain_dev(struct tp_dev *dev, unsigned int shard)
{
	unsigned int total = 0;

	for (uint32_t i = 0; i < dev->nlive; i++) {
		struct tp_qp *qp = dev->live[i];
		unsigned int n;

		if (qp->lc == NULL || !lc_mine(dev, qp, shard))
			continue;
		n = lc_drain_sq(qp) + lc_drain_rq(qp);
		/* as tp_post_*: what reaches a QP in ERR completes at once */
		if (n != 0 && qp->pub.state == DROCE_QPS_ERR)
			tp_qp_flush(qp);
		total += n;
	}
	return total;
}

/*
 * After a burst was received, before it is processed: receive WQEs posted
 * since this round's drain.  A receive posted before the peer's SEND was
 * posted must be there when the SEND arrives; the round's own drain may
 * have run before the post (the lcore preempted between drain and
 * receive), and a UD SEND finding no WQE is dropped.
 */
void
tp_lc_drain_rqs(struct tp_dev *dev)
{
	unsigned int shard = dev->nshards > 1 ? tp_cur_shard() : LC_ALL;

	for (uint32_t i = 0; i < dev->nlive; i++) {
		struct tp_qp *qp = dev->live[i];

		if (qp->lc == NULL || !lc_mine(dev, qp, shard))
			continue;
		if (lc_drain_rq(qp) != 0 && qp->pub.state == DROCE_QPS_ERR)
			tp_qp_flush(qp);
	}
}

static void
lc_publish_tails(struct tp_dev *dev, unsigned int shard)
{
	for (uint32_t i = 0; i < dev->nlive; i++) {
		struct tp_qp *qp = dev->live[i];
		struct tp_lc_qp *lc = qp->lc;

		if (lc == NULL || !lc_mine(dev, qp, shard))
			continue;
		/* store only on change: the application's lcore reads this line */
		if (__atomic_load_n(&lc->s_tail, __ATOMIC_RELAXED) != qp->sq.tail)
			__atomic_store_n(&lc->s_tail, qp->sq.tail, __ATOMIC_RELEASE);
		if (__atomic_load_n(&lc->r_tail, __ATOMIC_RELAXED) != qp->rq.tail)
			__atomic_store_n(&lc->r_tail, qp->rq.tail, __ATOMIC_RELEASE);
	}
}

/* One staging array's CQEs -> the completion ring (SP or MP, as made). */
static void
lc_forward_stage(struct tp_cq *cq, struct droce_wc *ring, uint32_t head,
		 uint32_t *tail)
{
	for (int pass = 0; pass < 2 && head != *tail; pass++) {
		uint32_t idx = *tail & cq->mask;
		uint32_t n = RTE_MIN(head - *tail, cq->mask + 1 - idx);
		unsigned int k;

		k = rte_ring_enqueue_burst_elem(cq->lc_ring, &ring[idx],
						sizeof(ring[0]), n, NULL);
		*tail += k;
		if (k < n)
			break;
	}
}

/* CQEs -> the CQ's completion ring; what does not fit waits in the CQ. */
static void
lc_forward_cq(struct tp_cq *cq, unsigned int shard)
{
	if (shard != 0) {
		struct tp_cq_stage *st = &cq->xs[shard - 1];

		lc_forward_stage(cq, st->ring, st->head, &st->tail);
		if (unlikely(st->overflow) &&
		    !__atomic_load_n(&cq->lc_overflow, __ATOMIC_RELAXED))
			__atomic_store_n(&cq->lc_overflow, true, __ATOMIC_RELEASE);
		return;
	}
	lc_forward_stage(cq, cq->ring, cq->head, &cq->tail);
	if (unlikely(cq->overflow) &&
	    !__atomic_load_n(&cq->lc_overflow, __ATOMIC_RELAXED))
		__atomic_store_n(&cq->lc_overflow, true, __ATOMIC_RELEASE);
}

static unsigned int
lc_dev_round(struct tp_dev *dev, unsigned int shard)
{
	unsigned int work;

	RTE_PER_LCORE(tp_shard_id) = shard;
	work = lc_drain_dev(dev, dev->nshards > 1 ? shard : LC_ALL);
	work += (unsigned int)tp_progress(dev);
	lc_publish_tails(dev, dev->nshards > 1 ? shard : LC_ALL);
	for (struct tp_cq *cq = dev->lc_cqs; cq != NULL; cq = cq->lc_next)
		lc_forward_cq(cq, shard);
	RTE_PER_LCORE(tp_shard_id) = 0;
	return work;
}

/* No key-lookup pointer is held between rounds: report it for every slot. */
static void
lc_quiesce(struct tp_lcore *lc)
{
	for (unsigned int i = 0; i < lc->ndev; i++) {
		struct tp_dev *dev = lc->devs[i];
		int reader = tp_shard_reader(dev, lc->shard[i]);

		if (reader >= 0)
			prot_reader_quiescent(dev->prot, reader);
	}
}

/*
 * Between two rounds: another lcore stops this one while it runs a command
 * of a device both serve.  Parked, the lcore keeps reporting quiescent
 * states, so a revocation waiting on QSBR somewhere cannot hang on it.
 */
static void
lc_park_point(struct tp_lcore *lc)
{
	if (likely(__atomic_load_n(&lc->park, __ATOMIC_ACQUIRE) == 0))
		return;
	__atomic_store_n(&lc->parked, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&lc->park, __ATOMIC_ACQUIRE) != 0) {
		lc_quiesce(lc);
		rte_pause();
	}
	__atomic_store_n(&lc->parked, 0, __ATOMIC_RELEASE);
}

/*
 * Stop the other lcores of dev (several shards) before a command touches
 * what they read (QP table, live list, CQ list, QPs).  One stopper at a
 * time (lc_world); while waiting for it, or for the others to park, this
 * lcore parks itself when asked and reports quiescent states, so two
 * lcores stopping each other, or a revocation waiting on QSBR, cannot
 * deadlock.
 */
static void
lc_world_stop(struct tp_lcore *self, struct tp_dev *dev)
{
	while (!rte_spinlock_trylock(&lc_world)) {
		lc_park_point(self);
		lc_quiesce(self);
		rte_pause();
	}
	for (unsigned int k = 1; k < dev->nshards; k++) {
		struct tp_lcore *o = dev->sh[k]->lc;

		if (o == NULL || o == self)
			continue;
		__atomic_store_n(&o->park, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&o->parked, __ATOMIC_ACQUIRE) == 0) {
			lc_quiesce(self);
			rte_pause();
		}
	}
}

static void
lc_world_start(struct tp_lcore *self, struct tp_dev *dev)
{
	for (unsigned int k = 1; k < dev->nshards; k++) {
		struct tp_lcore *o = dev->sh[k]->lc;

		if (o == NULL || o == self)
			continue;
		__atomic_store_n(&o->park, 0, __ATOMIC_RELEASE);
		/* gone before the next stopper may ask again */
		while (__atomic_load_n(&o->parked, __ATOMIC_ACQUIRE) != 0)
			rte_pause();
	}
	rte_spinlock_unlock(&lc_world);
}

static void
lc_run_one(struct tp_lcore *lc, struct tp_lc_cmd *c)
{
	struct tp_dev *dev = c->dev;
	bool world = dev != NULL && dev->nshards > 1;

	if (world)
		lc_world_stop(lc, dev);
	/* WRs posted before the command reach their queues first */
	for (unsigned int d = 0; d < lc->ndev; d++)
		lc_drain_dev(lc->devs[d],
			     lc->devs[d]->nshards > 1 ? lc->shard[d] : LC_ALL);
	if (world)
		lc_drain_dev(dev, LC_ALL);
	RTE_PER_LCORE(tp_shard_id) = 0;	/* commands run as shard 0 */
	c->rc = c->fn(c->arg);
	/* what the command retired (a flush) is free before its CQEs show */
	if (world)
		lc_publish_tails(dev, LC_ALL);
	if (world)
		lc_world_start(lc, dev);
}

static unsigned int
lc_run_commands(struct tp_lcore *lc)
{
	void *cmds[TP_LC_CMD_BURST];
	unsigned int n = rte_ring_sc_dequeue_burst(lc->cmd, cmds, TP_LC_CMD_BURST,
						   NULL);

	for (unsigned int i = 0; i < n; i++) {
		struct tp_lc_cmd *c = cmds[i];

		lc_run_one(lc, c);
		/* the caller may free c as soon as it sees done */
		__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	}
	return n;
}

static int
lc_main(void *arg)
{
	struct tp_lcore *lc = arg;

	while (!lc->stop) {
		unsigned int work;

		lc_park_point(lc);
		work = lc_run_commands(lc);
		for (unsigned int i = 0; i < lc->ndev; i++)
			work += lc_dev_round(lc->devs[i], lc->shard[i]);
		if (work == 0)
			rte_pause();
	}
	return 0;
}

/* ---- commands -------------------------------------------------------------------- */

static int
lc_exec(struct tp_lcore *lc, struct tp_dev *dev, int (*fn)(void *arg), void *arg)
{
	struct tp_lc_cmd c = { .fn = fn, .arg = arg, .dev = dev };

	while (rte_ring_mp_enqueue(lc->cmd, &c) != 0)
		rte_pause();		/* other threads' commands first */
	while (__atomic_load_n(&c.done, __ATOMIC_ACQUIRE) == 0)
		rte_pause();
	return c.rc;
}

int
tp_dev_call(struct tp_dev *dev, int (*fn)(void *arg), void *arg)
{
	struct tp_lcore *lc = dev->lc;

	if (lc == NULL || rte_lcore_id() == lc->lcore)
		return fn(arg);
	return lc_exec(lc, dev, fn, arg);
}

bool
tp_dev_dedicated(const struct tp_dev *dev)
{
	return dev != NULL && dev->lc != NULL;
}

/* On the transport lcore: the device joins its round. */
static int
cmd_add_dev(void *arg)
{
	struct tp_dev *dev = arg;
	struct tp_lcore *lc = dev->lc;
	int reader;

	if (lc->ndev == TP_LC_MAX_DEV)
		return -ENOSPC;
	/*
	 * The key tables' reader slot belongs to the thread that runs the
	 * checks (prot_ctl_lock finds it by thread to take it offline during
	 * a control call made by that thread).  Now that is this lcore.
	 */
	prot_reader_unregister(dev->prot, dev->prot_reader);
	reader = prot_reader_register(dev->prot);
	dev->prot_reader = reader;
	if (reader < 0)
		return reader;
	lc->shard[lc->ndev] = 0;
	lc->devs[lc->ndev++] = dev;
	return 0;
}

static void
lc_remove(struct tp_lcore *lc, struct tp_dev *dev)
{
	for (unsigned int i = 0; i < lc->ndev; i++) {
		if (lc->devs[i] == dev) {
			lc->ndev--;
			lc->devs[i] = lc->devs[lc->ndev];
			lc->shard[i] = lc->shard[lc->ndev];
			break;
		}
	}
}

/* On the transport lcore: the device leaves its round (no QP left). */
static int
cmd_remove_dev(void *arg)
{
	struct tp_dev *dev = arg;
	struct tp_lcore *lc = dev->lc;

	if (dev->nlive != 0)
		return -EBUSY;
	tp_net_flush(dev);
	prot_reader_unregister(dev->prot, dev->prot_reader);
	dev->prot_reader = -1;
	lc_remove(lc, dev);
	return 0;
}

static int
cmd_stop(void *arg)
{
	struct tp_lcore *lc = arg;

	lc->stop = true;
	return 0;
}

static void
lc_free(struct tp_lcore *lc)
{
	tp_lcores[lc->lcore] = NULL;
	rte_free(lc->cmd);
	rte_free(lc);
}

static int
lc_start(unsigned int lcore, struct tp_lcore **out)
{
	struct tp_lcore *lc;
	int rc;

	lc = rte_zmalloc("droce_tp_lcore", sizeof(*lc), RTE_CACHE_LINE_SIZE);
	if (lc == NULL)
		return -ENOMEM;
	lc->lcore = lcore;
	lc->cmd = lc_ring_alloc(TP_LC_CMD_RING, sizeof(void *), RING_F_SC_DEQ);
	if (lc->cmd == NULL) {
		rte_free(lc);
		return -ENOMEM;
	}
	tp_lcores[lcore] = lc;
	rc = rte_eal_remote_launch(lc_main, lc, lcore);
	if (rc != 0) {
		lc_free(lc);
		return rc < 0 ? rc : -EBUSY;
	}
	*out = lc;
	return 0;
}

static void
lc_put(struct tp_lcore *lc)
{
	if (--lc->users != 0)
		return;
	lc_exec(lc, NULL, cmd_stop, lc);
	rte_eal_wait_lcore(lc->lcore);
	lc_free(lc);
}

int
tp_dev_run_on_lcore(struct tp_dev *dev, unsigned int lcore)
{
	struct tp_lcore *lc;
	int rc;

	if (dev->lc != NULL || dev->nlive != 0 || dev->ncq != 0)
		return -EBUSY;
	/* rte_eal_remote_launch / rte_eal_wait_lcore: main lcore only */
	if (lcore >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lcore) ||
	    lcore == rte_get_main_lcore() || rte_lcore_id() != rte_get_main_lcore())
		return -EINVAL;
	lc = tp_lcores[lcore];
	if (lc == NULL) {
		rc = lc_start(lcore, &lc);
		if (rc != 0)
			return rc;
	}
	lc->users++;
	dev->lc = lc;
	rc = lc_exec(lc, NULL, cmd_add_dev, dev);
	if (rc != 0) {
		dev->lc = NULL;
		/* the slot was given up on the lcore: take one here again */
		if (dev->prot_reader < 0)
			dev->prot_reader = prot_reader_register(dev->prot);
		lc_put(lc);
		return rc;
	}
	return 0;
}

/* ---- several transport lcores: shards 1..n-1 (tp_shard.c) ------------------ */

struct shard_arg {
	struct tp_dev *dev;
	unsigned int shard;
};

/* On shard k's lcore: it joins its rounds, with a QSBR slot of its own. */
static int
cmd_add_shard(void *arg)
{
	struct shard_arg *a = arg;
	struct tp_shard *sh = a->dev->sh[a->shard];
	struct tp_lcore *lc = sh->lc;
	int reader;

	if (lc->ndev == TP_LC_MAX_DEV)
		return -ENOSPC;
	reader = prot_reader_register(a->dev->prot);
	if (reader < 0)
		return reader;
	sh->prot_reader = reader;
	lc->shard[lc->ndev] = a->shard;
	lc->devs[lc->ndev++] = a->dev;
	return 0;
}

/* On shard k's lcore, after shard 0 left (no QP exists). */
static int
cmd_remove_shard(void *arg)
{
	struct shard_arg *a = arg;
	struct tp_shard *sh = a->dev->sh[a->shard];

	RTE_PER_LCORE(tp_shard_id) = a->shard;
	tp_shard_flush(a->dev);
	RTE_PER_LCORE(tp_shard_id) = 0;
	prot_reader_unregister(a->dev->prot, sh->prot_reader);
	sh->prot_reader = -1;
	lc_remove(sh->lc, a->dev);
	return 0;
}

/* Shards 1..n-1 leave their lcores (those that joined one). */
static void
shards_leave(struct tp_dev *dev)
{
	for (unsigned int k = 1; k < dev->nshards; k++) {
		struct tp_shard *sh = dev->sh[k];
		struct shard_arg a = { dev, k };

		if (sh == NULL || sh->lc == NULL)
			continue;
		if (sh->prot_reader >= 0)
			lc_exec(sh->lc, NULL, cmd_remove_shard, &a);
		lc_put(sh->lc);
		sh->lc = NULL;
	}
}

static int
check_lcore_list(const unsigned int *lcores, unsigned int n)
{
	if (lcores == NULL || n < 1 || n > TP_MAX_SHARDS)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++) {
		if (lcores[i] >= RTE_MAX_LCORE || !rte_lcore_is_enabled(lcores[i]) ||
		    lcores[i] == rte_get_main_lcore())
			return -EINVAL;
		for (unsigned int j = 0; j < i; j++)
			if (lcores[j] == lcores[i])
				return -EINVAL;
	}
	return 0;
}

int
tp_dev_run_on_lcores(struct tp_dev *dev, const unsigned int *lcores,
		     unsigned int nlcores)
{
	int rc = check_lcore_list(lcores, nlcores);

	if (rc != 0)
		return rc;
	if (nlcores == 1)
		return tp_dev_run_on_lcore(dev, lcores[0]);
	if (dev->lc != NULL || dev->nlive != 0 || dev->ncq != 0)
		return -EBUSY;
	if (rte_lcore_id() != rte_get_main_lcore())
		return -EINVAL;
	rc = tp_shards_alloc(dev, nlcores);
	if (rc != 0)
		return rc;
	rc = tp_dev_run_on_lcore(dev, lcores[0]);
	if (rc != 0) {
		tp_shards_free(dev);
		return rc;
	}
	dev->sh[0]->lc = dev->lc;
	for (unsigned int k = 1; k < nlcores && rc == 0; k++) {
		struct tp_lcore *lc = tp_lcores[lcores[k]];
		struct shard_arg a = { dev, k };

		if (lc == NULL)
			rc = lc_start(lcores[k], &lc);
		if (rc != 0)
			break;
		lc->users++;
		dev->sh[k]->lc = lc;
		rc = lc_exec(lc, NULL, cmd_add_shard, &a);
	}
	if (rc != 0)
		tp_dev_stop_lcore(dev);	/* no QP yet: cannot fail */
	return rc;
}

int
tp_dev_stop_lcore(struct tp_dev *dev)
{
	struct tp_lcore *lc = dev->lc;
	int rc;

	if (lc == NULL)
		return 0;
	rc = lc_exec(lc, NULL, cmd_remove_dev, dev);
	if (rc != 0)
		return rc;
	dev->lc = NULL;
	if (dev->nshards > 1) {
		dev->sh[0]->lc = NULL;
		shards_leave(dev);
		tp_shards_free(dev);
	}
	/* the calling thread runs the (now idle) engine again */
	dev->prot_reader = prot_reader_register(dev->prot);
	lc_put(lc);
	return 0;
}
