/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dedicated transport lcores, the data side (see tp_lcore.c for the
 * design): the post rings and completion rings of QPs and CQs, and one
 * round of an engine on its lcore (post rings -> SQ/RQ, its round, tails
 * published, CQEs -> completion rings), all for one engine: its QPs.
 */
#include <errno.h>

#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>

#include "tp_private.h"
#include "tp_lcore.h"

/* ---- rings -------------------------------------------------------------------- */

/*
 * An exact-size ring of count elements of esize bytes in rte_malloc
 * memory (not a named memzone: QPs and CQs come and go by the thousand,
 * memzones are a small table and need unique names).
 */
struct rte_ring *
tp_lc_ring_alloc(unsigned int count, unsigned int esize, unsigned int flags)
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
	return tp_lc_ring_alloc(count < 1 ? 1 : count, esize,
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
	lc->db_ring = tp_qp_sched(qp)->db;
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

/* Several engines: a CQ may get CQEs from each; every engine stages its own. */
static int
lc_cq_stages(struct tp_cq *cq)
{
	unsigned int n = cq->dev->neng - 1;

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
	bool sharded = cq->dev->neng > 1;

	/* several engines enqueue: multi-producer (the poller stays single) */
	cq->lc_ring = tp_lc_ring_alloc(cq->mask + 1, sizeof(struct droce_wc),
				    sharded ? RING_F_SC_DEQ : RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (cq->lc_ring == NULL)
		return -ENOMEM;
	if (sharded && lc_cq_stages(cq) != 0) {
		lc_cq_stages_free(cq);
		rte_free(cq->lc_ring);
		cq->lc_ring = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* In no engine's list any more (tp_cq_mute_events dropped it). */
void
tp_lc_cq_fini(struct tp_cq *cq)
{
	if (cq->lc_ring == NULL)
		return;
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

/* ---- doorbells ------------------------------------------------------------------ */

#define TP_LC_DB_BURST 64u

/*
 * One doorbell ring per engine (MP/SC, QP pointers), as many slots as the
 * device may have QPs: a QP is on it at most once (lc->db), so an enqueue
 * never finds it full.  Control path, no QP exists yet.
 */
int
tp_lc_doorbells_alloc(struct tp_dev *dev)
{
	for (unsigned int e = 0; e < dev->neng; e++) {
		struct tp_sched *sc = &dev->eng[e]->sched;

		sc->db = tp_lc_ring_alloc(dev->max_qp, sizeof(void *), RING_F_SC_DEQ);
		if (sc->db == NULL) {
			tp_lc_doorbells_free(dev);
			return -ENOMEM;
		}
	}
	return 0;
}

void
tp_lc_doorbells_free(struct tp_dev *dev)
{
	for (unsigned int e = 0; e < dev->neng; e++) {
		struct tp_sched *sc = &dev->eng[e]->sched;

		rte_free(sc->db);
		sc->db = NULL;
	}
}

/*
 * The posting side, after its WQEs are in the post ring: ring the QP's
 * doorbell unless it is rung already.  The exchange (release) orders the
 * WQEs' enqueue before it; the engine's exchange (acquire) that clears
 * the flag reads either this store, and then sees the WQEs when it drains
 * after it, or a value from before it, and then this exchange reads 0
 * (the two RMWs are ordered on the flag) and enqueues the QP again.
 * Either way no WQE is left in a ring with no doorbell for it.
 */
void
tp_lc_ring_doorbell(struct tp_qp *qp)
{
	struct tp_lc_qp *lc = qp->lc;

	if (__atomic_exchange_n(&lc->db, 1, __ATOMIC_ACQ_REL) == 0)
		rte_ring_mp_enqueue(lc->db_ring, qp);	/* room for every QP */
}

/* The engine: clear the doorbell (see tp_lc_ring_doorbell), then drain. */
static unsigned int
lc_answer_doorbell(struct tp_qp *qp)
{
	unsigned int n;

	(void)__atomic_exchange_n(&qp->lc->db, 0, __ATOMIC_ACQ_REL);
	tp_count(qp->eng, TP_CNT_DOORBELLS);
	/* the rings hold at most what fits the queues (max_wr outstanding) */
	n = lc_drain_sq(qp);
	n += lc_drain_rq(qp);
	if (n == 0)
		return 0;
	/* as tp_post_*: what reaches a QP in ERR completes at once */
	if (qp->pub.state == DROCE_QPS_ERR)
		tp_qp_flush(qp);
	tp_qp_ready(qp);
	return n;
}

/*
 * The QPs that rang the engine's doorbell so far: their post rings ->
 * SQ/RQ; how many WQEs moved.  At the start of each round, before each
 * command, and after a burst was received, before it is processed
 * (tp_engine_progress): a receive posted before the peer's SEND was
 * posted must be there when the SEND arrives; the round's own drain may
 * have run before the post (the lcore preempted between drain and
 * receive), and a UD SEND finding no WQE is dropped.
 */
unsigned int
tp_lc_drain(struct tp_engine *eng)
{
	struct tp_sched *sc = &eng->sched;
	unsigned int left = rte_ring_count(sc->db), total = 0;

	while (left > 0) {
		struct tp_qp *qps[TP_LC_DB_BURST];
		unsigned int n = rte_ring_sc_dequeue_burst(sc->db, (void **)qps,
							   RTE_MIN(left, TP_LC_DB_BURST),
							   NULL);

		if (n == 0)
			break;
		for (unsigned int i = 0; i < n; i++)
			total += lc_answer_doorbell(qps[i]);
		left -= n;
	}
	return total;
}

/* ---- tails ---------------------------------------------------------------------- */

void
tp_lc_publish_qp(struct tp_qp *qp)
{
	struct tp_lc_qp *lc = qp->lc;

	/* store only on change: the application's lcore reads this line */
	if (__atomic_load_n(&lc->s_tail, __ATOMIC_RELAXED) != qp->sq.tail)
		__atomic_store_n(&lc->s_tail, qp->sq.tail, __ATOMIC_RELEASE);
	if (__atomic_load_n(&lc->r_tail, __ATOMIC_RELAXED) != qp->rq.tail)
		__atomic_store_n(&lc->r_tail, qp->rq.tail, __ATOMIC_RELEASE);
}

static void
lc_publish_ready(struct tp_sched *sc)
{
	struct tp_qp *qp;

	TAILQ_FOREACH(qp, &sc->ready, ready_link)
		tp_lc_publish_qp(qp);
}

/*
 * Tails move only for QPs that had work: a packet (tp_recv.c publishes
 * after each), a timer, a drained post or a command (these mark the QP
 * ready).  A round publishes each QP it visits (tp_run_qps); this
 * publishes those still on the ready list (not visited under
 * backpressure, or marked by a command).
 */
void
tp_lc_publish_tails(struct tp_engine *eng)
{
	lc_publish_ready(&eng->sched);
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
lc_forward_cq(struct tp_cq *cq, unsigned int stage)
{
	if (stage != 0) {
		struct tp_cq_stage *st = &cq->xs[stage - 1];

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

unsigned int
tp_lc_engine_round(struct tp_engine *eng)
{
	unsigned int work;

	work = tp_lc_drain(eng);
	work += (unsigned int)tp_engine_progress(eng);
	tp_lc_publish_tails(eng);
	for (struct tp_cq *cq = eng->cqs; cq != NULL; cq = cq->on[eng->idx].next)
		lc_forward_cq(cq, eng->idx);
	return work;
}
