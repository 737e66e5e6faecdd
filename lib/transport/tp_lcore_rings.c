/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dedicated transport lcores, the data side (see tp_lcore.c for the
 * design): the QPs' work queues and the CQs' rings as seen from the
 * transport lcore, and one round of a device on its lcore (posted WQEs
 * taken, tp_progress, work-queue tails published, CQ heads published).
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
	qp->lc = lc;
	return 0;
}

void
tp_lc_qp_fini(struct tp_qp *qp)
{
	rte_free(qp->lc);
	qp->lc = NULL;
}

void
tp_lc_cq_init(struct tp_cq *cq)
{
	cq->lc = true;
	cq->lc_next = cq->dev->lc_cqs;
	cq->dev->lc_cqs = cq;
}

void
tp_lc_cq_fini(struct tp_cq *cq)
{
	struct tp_cq **p;

	if (!cq->lc)
		return;
	for (p = &cq->dev->lc_cqs; *p != NULL; p = &(*p)->lc_next) {
		if (*p == cq) {
			*p = cq->lc_next;
			break;
		}
	}
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

/* Shard filter: this shard's QPs, or every QP (TP_LC_ALL, world stopped). */
#define TP_LC_ALL UINT32_MAX

static inline bool
lc_mine(const struct tp_dev *dev, const struct tp_qp *qp, unsigned int shard)
{
	return shard == TP_LC_ALL || tp_qpn_shard(dev, qp->pub.qp_num) == shard;
}

unsigned int
tp_lc_drain_dev(struct tp_dev *dev, unsigned int shard)
{
	unsigned int total = 0;

	for (uint32_t i = 0; i < dev->nlive; i++) {
		struct tp_qp *qp = dev->live[i];
		unsigned int n;

		if (qp->lc == NULL || !lc_mine(dev, qp, shard))
			continue;
		n = lc_take(&qp->lc->s_head, &qp->sq.head) +
		    lc_take(&qp->lc->r_head, &qp->rq.head);
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
	unsigned int shard = dev->nshards > 1 ? tp_cur_shard() : TP_LC_ALL;

	for (uint32_t i = 0; i < dev->nlive; i++) {
		struct tp_qp *qp = dev->live[i];

		if (qp->lc == NULL || !lc_mine(dev, qp, shard))
			continue;
		if (lc_take(&qp->lc->r_head, &qp->rq.head) != 0 &&
		    qp->pub.state == DROCE_QPS_ERR)
			tp_qp_flush(qp);
	}
}

void
tp_lc_publish_tails(struct tp_dev *dev, unsigned int shard)
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

/*
 * The calling engine's CQ rings -> the pollers (after the tails: a
 * completion polled means its work-queue slot is free again).  Stores only
 * on change: the application's lcore reads these lines.
 */
void
tp_lc_publish_cqs(struct tp_dev *dev)
{
	for (struct tp_cq *cq = dev->lc_cqs; cq != NULL; cq = cq->lc_next) {
		struct tp_cq_ring *r = tp_cq_ring_mine(cq);

		if (__atomic_load_n(&r->pub_head, __ATOMIC_RELAXED) != r->head)
			__atomic_store_n(&r->pub_head, r->head, __ATOMIC_RELEASE);
		/* after the CQEs before the loss (tp_lc_cq_poll reads it first) */
		if (unlikely(r->overflow) &&
		    !__atomic_load_n(&r->pub_overflow, __ATOMIC_RELAXED))
			__atomic_store_n(&r->pub_overflow, true, __ATOMIC_RELEASE);
	}
}

unsigned int
tp_lc_dev_round(struct tp_dev *dev, unsigned int shard)
{
	unsigned int work;

	RTE_PER_LCORE(tp_shard_id) = shard;
	work = tp_lc_drain_dev(dev, dev->nshards > 1 ? shard : TP_LC_ALL);
	work += (unsigned int)tp_progress(dev);
	tp_lc_publish_tails(dev, dev->nshards > 1 ? shard : TP_LC_ALL);
	tp_lc_publish_cqs(dev);
	RTE_PER_LCORE(tp_shard_id) = 0;
	return work;
}
