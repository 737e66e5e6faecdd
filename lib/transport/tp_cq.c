/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues: a power-of-two ring of struct droce_wc written by the
 * transport and read by droce_poll_cq on the same lcore.  With a dedicated
 * transport lcore, that lcore moves them on to the CQ's completion ring
 * (lc_ring, tp_lcore.c), which droce_poll_cq drains on the application's.
 */
#include <errno.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_ring_elem.h>

#include "tp_private.h"

int
tp_cq_create(struct tp_dev *dev, int cqe, struct tp_cq **out)
{
	struct tp_cq *cq;
	uint32_t n;

	if (cqe < 1 || cqe > DROCE_MAX_CQE)
		return -EINVAL;
	n = rte_align32pow2((uint32_t)cqe);
	cq = rte_zmalloc("droce_cq", sizeof(*cq), RTE_CACHE_LINE_SIZE);
	if (cq == NULL)
		return -ENOMEM;
	cq->ring = rte_zmalloc("droce_cq_ring", n * sizeof(*cq->ring),
			       RTE_CACHE_LINE_SIZE);
	if (cq->ring == NULL) {
		rte_free(cq);
		return -ENOMEM;
	}
	cq->dev = dev;
	cq->mask = n - 1;
	cq->pub.cqe = (int)n;
	if (tp_dev_dedicated(dev) && tp_lc_cq_init(cq) != 0) {
		rte_free(cq->ring);
		rte_free(cq);
		return -ENOMEM;
	}
	dev->ncq++;
	*out = cq;
	return 0;
}

int
tp_cq_destroy(struct tp_cq *cq)
{
	if (cq->users != 0)
		return -EBUSY;
	tp_lc_cq_fini(cq);
	cq->dev->ncq--;
	rte_free(cq->ring);
	rte_free(cq);
	return 0;
}

/*
 * Add a completion.  A full CQ is a CQ overrun (IBTA 11.4.2.1): the
 * completion is lost, counted, and the CQ is marked so the next poll
 * reports the error instead of silently continuing.
 */
static bool
cq_stage_push(struct tp_engine *eng, struct tp_cq *cq, struct tp_cq_stage *st,
	      const struct droce_wc *wc)
{
	if (st->head - st->tail > cq->mask) {
		if (!st->overflow)
			tp_event_cq_err(eng, cq);
		st->overflow = true;
		tp_count(eng, TP_CNT_CQ_OVERFLOW);
		return false;
	}
	st->ring[st->head & cq->mask] = *wc;
	st->head++;
	return true;
}

bool
tp_cq_push(struct tp_engine *eng, struct tp_cq *cq, const struct droce_wc *wc)
{
	/* several transport lcores: each engine into its own staging array */
	if (unlikely(eng->idx != 0) && cq->xs != NULL)
		return cq_stage_push(eng, cq, &cq->xs[eng->idx - 1], wc);
	if (cq->head - cq->tail > cq->mask) {
		if (!cq->overflow)
			tp_event_cq_err(eng, cq);
		cq->overflow = true;
		tp_count(eng, TP_CNT_CQ_OVERFLOW);
		return false;
	}
	cq->ring[cq->head & cq->mask] = *wc;
	cq->head++;
	return true;
}

int
tp_cq_poll(struct tp_cq *cq, int n, struct droce_wc *wc)
{
	int got = 0;

	if (n < 0)
		return -EINVAL;
	if (cq->lc_ring != NULL)
		return tp_lc_cq_poll(cq, n, wc);
	tp_progress(cq->dev);
	while (got < n && cq->tail != cq->head) {
		wc[got++] = cq->ring[cq->tail & cq->mask];
		cq->tail++;
	}
	if (got == 0 && cq->overflow)
		return -EOVERFLOW;
	return got;
}

/*
 * Dedicated transport lcore: drain the completion ring on the
 * application's lcore (never progresses the engine: its lcore does).
 */
int
tp_lc_cq_poll(struct tp_cq *cq, int n, struct droce_wc *wc)
{
	unsigned int got = rte_ring_sc_dequeue_burst_elem(cq->lc_ring, wc,
							  sizeof(*wc),
							  (unsigned int)n, NULL);

	if (got == 0 && __atomic_load_n(&cq->lc_overflow, __ATOMIC_ACQUIRE))
		return -EOVERFLOW;
	return (int)got;
}

struct droce_cq *
tp_cq_pub(struct tp_cq *cq)
{
	return &cq->pub;
}

struct tp_cq *
tp_cq_from_pub(struct droce_cq *cq)
{
	return tp_cq_of(cq);
}
