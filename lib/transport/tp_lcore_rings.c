/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dedicated transport lcores, the data side (see tp_lcore.c for the
 * design): the QPs' work queues and the CQs' rings as seen from the
 * transport lcore, the doorbells, and one round of an engine on its lcore
 * (doorbelled QPs' posted WQEs taken, its round, work-queue tails and CQ
 * ring heads published), all for one engine: its QPs.
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
 * memory (not a named memzone: memzones are a small table and need
 * unique names).
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

int
tp_lc_qp_init(struct tp_qp *qp)
{
	struct tp_lc_qp *lc = rte_zmalloc("droce_lc_qp", sizeof(*lc),
					  RTE_CACHE_LINE_SIZE);

	if (lc == NULL)
		return -ENOMEM;
	lc->state = DROCE_QPS_RESET;
	lc->db_ring = tp_qp_sched(qp)->db;
	qp->lc = lc;
	return 0;
}

void
tp_lc_qp_fini(struct tp_qp *qp)
{
	rte_free(qp->lc);
	qp->lc = NULL;
}

/* ---- the transport lcore's round ---------------------------------------------- */

/*
 * What the application posted to one work queue since the last look (its
 * WQEs are in place): the published head into the queue's own; how many.
 */
static inline unsigned int
lc_take(const uint32_t *pub_head, uint32_t *head)
{
	uint32_t h = __atomic_load_n(pub_head, __ATOMIC_ACQUIRE);
	unsigned int n = h - *head;

	*head = h;
	return n;
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
 * The posting side, after it filled its WQEs in place and published the
 * work queue's head (release store, tp_post.c): ring the QP's doorbell
 * unless it is rung already.  The exchange (release) orders the head's
 * store before it; the engine's exchange (acquire) that clears the flag
 * reads either this store, and then its acquire load of the head after it
 * sees the new head (and the WQEs before it), or a value from before it,
 * and then this exchange reads 0 (the two RMWs are ordered on the flag)
 * and enqueues the QP again.  Either way no published head is left with
 * no doorbell for it.
 */
void
tp_lc_ring_doorbell(struct tp_qp *qp)
{
	struct tp_lc_qp *lc = qp->lc;

	if (__atomic_exchange_n(&lc->db, 1, __ATOMIC_ACQ_REL) == 0)
		rte_ring_mp_enqueue(lc->db_ring, qp);	/* room for every QP */
}

/*
 * The engine: clear the doorbell (see tp_lc_ring_doorbell), then take the
 * published heads (the poster keeps at most max_wr outstanding, so the
 * new WQEs fit the queues).
 */
static unsigned int
lc_answer_doorbell(struct tp_qp *qp)
{
	struct tp_lc_qp *lc = qp->lc;
	unsigned int n;

	(void)__atomic_exchange_n(&lc->db, 0, __ATOMIC_ACQ_REL);
	tp_count(qp->eng, TP_CNT_DOORBELLS);
	n = lc_take(&lc->s_head, &qp->sq.head);
	if (qp->srq == NULL)	/* else the engine fills the RQ (tp_srq_take) */
		n += lc_take(&lc->r_head, &qp->rq.head);
	if (n == 0)
		return 0;
	/* as tp_post_*: what reaches a QP in ERR completes at once */
	if (qp->pub.state == DROCE_QPS_ERR)
		tp_qp_flush(qp);
	tp_qp_ready(qp);
	return n;
}

/*
 * The QPs that rang the engine's doorbell so far: their published SQ/RQ
 * heads taken; how many WQEs.  At the start of each round, before each
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
 * after each), a timer, a post taken or a command (these mark the QP
 * ready).  A round publishes each QP it visits (tp_run_qps); this
 * publishes those still on the ready list (not visited under
 * backpressure, or marked by a command).
 */
void
tp_lc_publish_tails(struct tp_engine *eng)
{
	lc_publish_ready(&eng->sched);
}

/*
 * The engine's own rings of the CQs it wrote into since the last time
 * (its list, tp_cq.c cq_mark) -> the pollers (after the tails: a
 * completion polled means its work-queue slot is free again).  Stores only
 * on change: the application's lcore reads these lines.
 */
void
tp_lc_publish_cqs(struct tp_engine *eng)
{
	struct tp_cq *next;

	for (struct tp_cq *cq = eng->cqs; cq != NULL; cq = next) {
		struct tp_cq_ring *r = &cq->rings[eng->idx];

		next = cq->on[eng->idx].next;
		cq->on[eng->idx].linked = false;
		uint32_t old = __atomic_load_n(&r->pub_head, __ATOMIC_RELAXED);

		if (old != r->head) {
			__atomic_store_n(&r->pub_head, r->head, __ATOMIC_RELEASE);
			/* the CQEs before the arm's load (tp_cq.c, events) */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			if (unlikely(__atomic_load_n(&cq->arm, __ATOMIC_RELAXED) != TP_ARM_NONE))
				tp_cq_published(cq, r, old);
		}
		/* after the CQEs before the loss (tp_lc_cq_poll reads it first) */
		if (unlikely(r->overflow) &&
		    !__atomic_load_n(&r->pub_overflow, __ATOMIC_RELAXED))
			__atomic_store_n(&r->pub_overflow, true, __ATOMIC_RELEASE);
	}
	eng->cqs = NULL;
}

unsigned int
tp_lc_engine_round(struct tp_engine *eng)
{
	unsigned int work;

	work = tp_lc_drain(eng);
	work += (unsigned int)tp_engine_progress(eng);
	tp_lc_publish_tails(eng);
	tp_lc_publish_cqs(eng);
	/* after the publication: what the hook polls includes this round's */
	if (eng->round_hook != NULL)
		work += eng->round_hook(eng->round_arg);
	return work;
}
