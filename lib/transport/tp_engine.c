/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transport engines: one per lcore that runs a device's data path
 * (struct tp_engine, tp_private.h).  A device always has engine 0
 * (run-to-completion: the application's lcore; or its one dedicated
 * transport lcore); with several transport lcores it has one engine per
 * lcore (tp_engines_alloc, before any QP or CQ exists), and the hand-off
 * rings between them (tp_shard.c).  Here: their creation and destruction
 * (control path), the QPs and CQs each one runs, and the engine a new QP
 * goes to.
 */
#include <errno.h>

#include <rte_malloc.h>

#include "tp_private.h"

struct tp_engine *
tp_engine_create(struct tp_dev *dev, unsigned int idx, uint32_t live_max)
{
	struct tp_engine *eng = rte_zmalloc("droce_engine", sizeof(*eng),
					    RTE_CACHE_LINE_SIZE);

	if (eng == NULL)
		return NULL;
	eng->live = rte_zmalloc("droce_live", live_max * sizeof(*eng->live), 0);
	eng->rxb = rte_zmalloc("droce_rxb", sizeof(*eng->rxb), RTE_CACHE_LINE_SIZE);
	if (eng->live == NULL || eng->rxb == NULL || tp_sched_init(dev, &eng->sched) != 0) {
		tp_sched_fini(&eng->sched);
		rte_free(eng->rxb);
		rte_free(eng->live);
		rte_free(eng);
		return NULL;
	}
	eng->dev = dev;
	eng->idx = idx;
	tp_engine_set_lcore(eng, NULL);	/* run-to-completion until handed over */
	eng->live_max = live_max;
	eng->prot_reader = -1;
	return eng;
}

/* After it left its lcore (or the device is destroyed), with no QP. */
void
tp_engine_destroy(struct tp_engine *eng)
{
	if (eng == NULL)
		return;
	tp_shard_rings_free(eng);
	tp_sched_fini(&eng->sched);
	rte_pktmbuf_free_bulk(eng->txq, eng->txq_len);
	rte_free(eng->rxb);
	rte_free(eng->live);
	rte_free(eng);
}

/*
 * Control path, no QP or CQ yet: engines 1..n-1 beside engine 0, and the
 * hand-off rings of all n.  Engine k owns the QPNs equal to k modulo n:
 * at most ceil(max_qp / n) of them.
 */
int
tp_engines_alloc(struct tp_dev *dev, unsigned int n)
{
	uint32_t per_engine = (dev->max_qp + n - 1) / n;

	if (n < 2 || n > TP_MAX_ENGINES)
		return -EINVAL;
	dev->neng = n;	/* tp_shard_rings: which rings an engine needs */
	for (unsigned int k = 0; k < n; k++) {
		if (k != 0) {
			struct tp_engine *eng = tp_engine_create(dev, k, per_engine);

			if (eng == NULL)
				goto nomem;
			__atomic_store_n(&dev->eng[k], eng, __ATOMIC_RELEASE);
		}
		if (tp_shard_rings(dev->eng[k]) != 0)
			goto nomem;
	}
	return 0;
nomem:
	tp_engines_free(dev);
	return -ENOMEM;
}

/* Control path, after every engine left its lcore: back to engine 0 alone. */
void
tp_engines_free(struct tp_dev *dev)
{
	struct tp_engine *e0 = dev->eng[0];

	for (unsigned int k = 1; k < TP_MAX_ENGINES; k++) {
		struct tp_engine *eng = dev->eng[k];

		if (eng == NULL)
			continue;
		/* what the engines counted stays in engine 0's counters */
		for (unsigned int c = 0; c < TP_CNT_MAX; c++)
			e0->counters[c] += eng->counters[c];
		for (unsigned int st = 0; st < PROT_STATUS_MAX; st++) {
			e0->prot_remote[st] += eng->prot_remote[st];
			e0->prot_local[st] += eng->prot_local[st];
		}
		__atomic_store_n(&dev->eng[k], NULL, __ATOMIC_RELEASE);
		tp_engine_destroy(eng);
	}
	tp_shard_rings_free(e0);
	dev->neng = 1;
}

/* On the engine's lcore (tp_cq_mute_events): cq leaves its list of CQs
 * to publish (tp_cq.c cq_mark), if on it. */
void
tp_engine_drop_cq(struct tp_engine *eng, struct tp_cq *cq)
{
	if (!cq->on[eng->idx].linked)
		return;
	for (struct tp_cq **p = &eng->cqs; *p != NULL; p = &(*p)->on[eng->idx].next) {
		if (*p == cq) {
			*p = cq->on[eng->idx].next;
			break;
		}
	}
	cq->on[eng->idx].linked = false;
}

/*
 * On the engine's lcore (a command of its own, tp_qp_call), or where
 * it runs to completion: qp joins its round.  nlive is read by other
 * threads choosing an engine for a new QP (tp_dev_qp_engine).
 */
void
tp_engine_add_qp(struct tp_engine *eng, struct tp_qp *qp)
{
	qp->live_index = eng->nlive;
	eng->live[eng->nlive] = qp;
	__atomic_store_n(&eng->nlive, eng->nlive + 1, __ATOMIC_RELAXED);
}

/* Likewise: qp leaves it (the last QP takes its slot). */
void
tp_engine_remove_qp(struct tp_engine *eng, struct tp_qp *qp)
{
	struct tp_qp *last = eng->live[eng->nlive - 1];

	eng->live[qp->live_index] = last;
	last->live_index = qp->live_index;
	__atomic_store_n(&eng->nlive, eng->nlive - 1, __ATOMIC_RELAXED);
}

/*
 * The engine with the fewest QPs (a tie goes to the engine of the next
 * QPN in sequence, so QPNs stay consecutive while the engines are even).
 * Any thread: the counts may be changing (creates on several engines at
 * once), which only makes the choice less even.
 */
struct tp_engine *
tp_dev_qp_engine(struct tp_dev *dev)
{
	uint32_t next = __atomic_load_n(&dev->next_qp, __ATOMIC_RELAXED);
	unsigned int best = tp_qpn_engine(dev, TP_QPN_BASE + next % dev->max_qp);
	uint32_t least = __atomic_load_n(&dev->eng[best]->nlive, __ATOMIC_RELAXED);

	for (unsigned int k = 0; k < dev->neng; k++) {
		uint32_t n = __atomic_load_n(&dev->eng[k]->nlive, __ATOMIC_RELAXED);

		if (n < least) {
			best = k;
			least = n;
		}
	}
	return dev->eng[best];
}

struct tp_engine *
tp_dev_engine(const struct tp_dev *dev, unsigned int k)
{
	return k < dev->neng ? dev->eng[k] : NULL;
}
