/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared receive queues (IBTA 10.2.9; ibv_create_srq & co.): the SRQ's
 * ring and its life on the control path, and what the responder's engine
 * does with it: take the oldest WQE for a QP that needs one, and raise
 * SRQ_LIMIT_REACHED once the WQEs left fall below the armed limit.  The
 * concurrency rules are struct tp_srq's (tp_private.h); posting is
 * tp_post.c's.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_malloc.h>

#include "tp_private.h"

static struct tp_recv_wqe *
ring_alloc(uint32_t max_wr, uint32_t *mask)
{
	uint32_t n = rte_align32pow2(max_wr);

	*mask = n - 1;
	return rte_zmalloc("droce_srq_ring", (size_t)n * sizeof(struct tp_recv_wqe),
			   RTE_CACHE_LINE_SIZE);
}

int
tp_srq_create(struct tp_engine *eng, uint32_t pd, struct droce_srq_attr *attr,
	      struct tp_srq **out)
{
	static uint32_t handles;
	struct tp_srq *srq;

	/* srq_limit is not looked at: ibv_create_srq ignores it */
	if (attr->max_wr == 0 || attr->max_wr > DROCE_MAX_QP_WR ||
	    attr->max_sge > DROCE_MAX_SGE)
		return -EINVAL;
	srq = rte_zmalloc("droce_srq", sizeof(*srq), RTE_CACHE_LINE_SIZE);
	if (srq == NULL)
		return -ENOMEM;
	srq->wqe = ring_alloc(attr->max_wr, &srq->mask);
	if (srq->wqe == NULL) {
		rte_free(srq);
		return -ENOMEM;
	}
	srq->dev = eng->dev;
	srq->eng = eng;
	srq->pd = pd;
	srq->max_wr = attr->max_wr;
	srq->max_sge = attr->max_sge;
	srq->pub.handle = __atomic_fetch_add(&handles, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&eng->dev->nsrq, 1, __ATOMIC_RELAXED);
	attr->srq_limit = 0;
	*out = srq;
	return 0;
}

/* The WQEs posted and not taken, in a ring of max_wr slots or more. */
static int
resize(struct tp_srq *srq, uint32_t max_wr)
{
	uint32_t head = __atomic_load_n(&srq->head, __ATOMIC_ACQUIRE);
	struct tp_recv_wqe *wqe;
	uint32_t mask;

	wqe = ring_alloc(max_wr, &mask);
	if (wqe == NULL)
		return -ENOMEM;
	for (uint32_t i = srq->tail; i != head; i++)
		wqe[i & mask] = srq->wqe[i & srq->mask];
	rte_free(srq->wqe);
	srq->wqe = wqe;
	srq->mask = mask;
	srq->max_wr = max_wr;
	return 0;
}

/*
 * As ibv_modify_srq: every attribute is checked before any is changed.
 * A limit must be below the SRQ's size (rxe, mlx5: srq_limit >= max_wr is
 * EINVAL), and a resize may not drop WQEs posted and not yet taken.
 */
int
tp_srq_modify(struct tp_srq *srq, const struct droce_srq_attr *attr, int mask)
{
	uint32_t max_wr = (mask & DROCE_SRQ_MAX_WR) ? attr->max_wr : srq->max_wr;
	uint32_t held = __atomic_load_n(&srq->head, __ATOMIC_ACQUIRE) - srq->tail;
	int rc;

	if (mask & ~(DROCE_SRQ_MAX_WR | DROCE_SRQ_LIMIT))
		return -EINVAL;
	if (max_wr == 0 || max_wr > DROCE_MAX_QP_WR || max_wr < held)
		return -EINVAL;
	if ((mask & DROCE_SRQ_LIMIT) && attr->srq_limit >= max_wr)
		return -EINVAL;
	if ((mask & DROCE_SRQ_MAX_WR) && max_wr != srq->max_wr) {
		rc = resize(srq, max_wr);
		if (rc != 0)
			return rc;
	}
	if (mask & DROCE_SRQ_LIMIT)
		srq->limit = attr->srq_limit;
	return 0;
}

int
tp_srq_query(struct tp_srq *srq, struct droce_srq_attr *attr)
{
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

int
tp_srq_destroy(struct tp_srq *srq)
{
	if (__atomic_load_n(&srq->users, __ATOMIC_RELAXED) != 0)
		return -EBUSY;
	__atomic_fetch_sub(&srq->dev->nsrq, 1, __ATOMIC_RELAXED);
	rte_free(srq->wqe);
	rte_free(srq);
	return 0;
}

static int
srq_mute_fn(void *arg)
{
	struct tp_srq *srq = arg;

	if (__atomic_load_n(&srq->users, __ATOMIC_RELAXED) != 0)
		return -EBUSY;
	__atomic_store_n(&srq->ev_muted, true, __ATOMIC_RELEASE);
	return 0;
}

int
tp_srq_mute_events(struct tp_srq *srq)
{
	return tp_engine_call(srq->eng, srq_mute_fn, srq);
}

struct tp_engine *
tp_srq_engine(struct tp_srq *srq)
{
	return srq->eng;
}

struct droce_srq *
tp_srq_pub(struct tp_srq *srq)
{
	return &srq->pub;
}

struct tp_srq *
tp_srq_from_pub(struct droce_srq *srq)
{
	return tp_srq_of(srq);
}

/*
 * The engine, for a message that needs a receive WQE while qp's own RQ is
 * empty: the SRQ's oldest WQE (its SGEs only) copied into qp's RQ, the
 * slot released.  The limit event (IBTA 10.2.9, 11.6.3.1) fires when
 * fewer WQEs than the armed limit are left, once: the limit disarms.
 */
bool
tp_srq_take(struct tp_qp *qp)
{
	struct tp_srq *srq = qp->srq;
	uint32_t tail = srq->tail;
	uint32_t left = __atomic_load_n(&srq->head, __ATOMIC_ACQUIRE) - tail;
	const struct tp_recv_wqe *w;

	if (left == 0)
		return false;
	w = &srq->wqe[tail & srq->mask];
	memcpy(&qp->rq.wqe[qp->rq.head & qp->rq.mask], w,
	       offsetof(struct tp_recv_wqe, sge) + w->num_sge * sizeof(w->sge[0]));
	qp->rq.head++;
	__atomic_store_n(&srq->tail, tail + 1, __ATOMIC_RELEASE);
	if (unlikely(srq->limit != 0) && left - 1 < srq->limit) {
		srq->limit = 0;
		tp_event_srq_limit(srq);
	}
	return true;
}
