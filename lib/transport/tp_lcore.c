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

#include "tp_private.h"

#define TP_LC_MAX_DEV 16
#define TP_LC_CMD_RING 64
#define TP_LC_CMD_BURST 8

struct tp_lc_cmd {
	int (*fn)(void *arg);
	void *arg;
	int rc;
	uint32_t done;		/* atomic: set by the transport lcore */
};

struct tp_lcore {
	unsigned int lcore;
	struct rte_ring *cmd;	/* struct tp_lc_cmd *, MP/SC */
	/* the transport lcore's own (changed only by commands) */
	struct tp_dev *devs[TP_LC_MAX_DEV];
	unsigned int ndev;
	bool stop;
	/* control path (device open/close) */
	unsigned int users;
};

/* Control path only: droce_open_device / close are not concurrent. */
static struct tp_lcore *tp_lcores[RTE_MAX_LCORE];

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

int
tp_lc_cq_init(struct tp_cq *cq)
{
	cq->lc_ring = tp_lc_ring_create(cq->mask + 1, sizeof(struct droce_wc));
	if (cq->lc_ring == NULL)
		return -ENOMEM;
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

static unsigned int
lc_drain_dev(struct tp_dev *dev)
{
	unsigned int total = 0;

	for (uint32_t i = 0; i < dev->nlive; i++) {
		struct tp_qp *qp = dev->live[i];
		unsigned int n;

		if (qp->lc == NULL)
			continue;
		n = lc_drain_sq(qp) + lc_drain_rq(qp);
		/* as tp_post_*: what reaches a QP in ERR completes at once */
		if (n != 0 && qp->pub.state == DROCE_QPS_ERR)
			tp_qp_flush(qp);
		total += n;
	}
	return total;
}

static void
lc_publish_tails(struct tp_dev *dev)
{
	for (uint32_t i = 0; i < dev->nlive; i++) {
		struct tp_qp *qp = dev->live[i];
		struct tp_lc_qp *lc = qp->lc;

		if (lc == NULL)
			continue;
		/* store only on change: the application's lcore reads this line */
		if (__atomic_load_n(&lc->s_tail, __ATOMIC_RELAXED) != qp->sq.tail)
			__atomic_store_n(&lc->s_tail, qp->sq.tail, __ATOMIC_RELEASE);
		if (__atomic_load_n(&lc->r_tail, __ATOMIC_RELAXED) != qp->rq.tail)
			__atomic_store_n(&lc->r_tail, qp->rq.tail, __ATOMIC_RELEASE);
	}
}

/* CQEs -> the CQ's completion ring; what does not fit waits in the CQ. */
static void
lc_forward_cq(struct tp_cq *cq)
{
	for (int pass = 0; pass < 2 && cq->head != cq->tail; pass++) {
		uint32_t idx = cq->tail & cq->mask;
		uint32_t n = RTE_MIN(cq->head - cq->tail, cq->mask + 1 - idx);
		unsigned int k;

		k = rte_ring_sp_enqueue_burst_elem(cq->lc_ring, &cq->ring[idx],
						   sizeof(cq->ring[0]), n, NULL);
		cq->tail += k;
		if (k < n)
			break;
	}
	if (unlikely(cq->overflow) &&
	    !__atomic_load_n(&cq->lc_overflow, __ATOMIC_RELAXED))
		__atomic_store_n(&cq->lc_overflow, true, __ATOMIC_RELEASE);
}

static unsigned int
lc_dev_round(struct tp_dev *dev)
{
	unsigned int work = lc_drain_dev(dev);

	work += (unsigned int)tp_progress(dev);
	lc_publish_tails(dev);
	for (struct tp_cq *cq = dev->lc_cqs; cq != NULL; cq = cq->lc_next)
		lc_forward_cq(cq);
	return work;
}

static unsigned int
lc_run_commands(struct tp_lcore *lc)
{
	void *cmds[TP_LC_CMD_BURST];
	unsigned int n = rte_ring_sc_dequeue_burst(lc->cmd, cmds, TP_LC_CMD_BURST,
						   NULL);

	for (unsigned int i = 0; i < n; i++) {
		struct tp_lc_cmd *c = cmds[i];

		/* WRs posted before the command reach their queues first */
		for (unsigned int d = 0; d < lc->ndev; d++)
			lc_drain_dev(lc->devs[d]);
		c->rc = c->fn(c->arg);
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
		unsigned int work = lc_run_commands(lc);

		for (unsigned int i = 0; i < lc->ndev; i++)
			work += lc_dev_round(lc->devs[i]);
		if (work == 0)
			rte_pause();
	}
	return 0;
}

/* ---- commands -------------------------------------------------------------------- */

static int
lc_exec(struct tp_lcore *lc, int (*fn)(void *arg), void *arg)
{
	struct tp_lc_cmd c = { .fn = fn, .arg = arg };

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
	return lc_exec(lc, fn, arg);
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
	lc->devs[lc->ndev++] = dev;
	return 0;
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
	for (unsigned int i = 0; i < lc->ndev; i++) {
		if (lc->devs[i] == dev) {
			lc->devs[i] = lc->devs[--lc->ndev];
			break;
		}
	}
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
	lc_exec(lc, cmd_stop, lc);
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
	rc = lc_exec(lc, cmd_add_dev, dev);
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

int
tp_dev_stop_lcore(struct tp_dev *dev)
{
	struct tp_lcore *lc = dev->lc;
	int rc;

	if (lc == NULL)
		return 0;
	rc = lc_exec(lc, cmd_remove_dev, dev);
	if (rc != 0)
		return rc;
	dev->lc = NULL;
	/* the calling thread runs the (now idle) engine again */
	dev->prot_reader = prot_reader_register(dev->prot);
	lc_put(lc);
	return 0;
}
