/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion queues: one power-of-two ring of struct droce_wc per engine
 * (struct tp_cq_ring), written once by the transport and copied by
 * droce_poll_cq straight into the caller's array.  Run-to-completion: one
 * ring, both sides on the application's lcore.  Dedicated transport
 * lcores: one ring per engine (cq->rings[eng->idx]), published at the end
 * of each of its rounds (tp_lcore_rings.c), polled in turn from the
 * application's lcore.
 *
 * Capacity: an engine's ring holds cqe (rounded up to a power of two)
 * completions not yet polled; the next one it completes overruns the CQ.
 * With several transport lcores each has its own ring of cqe.
 *
 * Completion events: droce_req_notify_cq arms the CQ (cq->arm); the engine
 * that makes an armed CQ's matching completion visible to the poller
 * disarms it and writes the channel's eventfd, one system call per arm,
 * never one per completion.  Run-to-completion: at placement (poller and
 * engine are one lcore).  Dedicated lcores: at publication, after a full
 * fence between the store of pub_head and the load of the arm, matched by
 * one in tp_cq_arm between the arm and the poller's next read, so that
 * "arm, poll again, wait" either polls the CQE or gets the event.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <rte_malloc.h>

#include "tp_private.h"

static void
cq_free(struct tp_cq *cq)
{
	for (uint32_t k = 0; k < cq->nrings; k++)
		rte_free(cq->rings[k].wc);
	rte_free(cq);
}

int
tp_cq_create(struct tp_dev *dev, int cqe, struct tp_cq **out)
{
	uint32_t nrings = dev->neng;	/* 1 unless several transport lcores */
	struct tp_cq *cq;
	uint32_t n;

	if (cqe < 1 || cqe > DROCE_MAX_CQE)
		return -EINVAL;
	if (dev->ncq >= dev->cfg.max_cq)
		return -ENOMEM;		/* as ibv_create_cq out of CQs */
	n = rte_align32pow2((uint32_t)cqe);
	cq = rte_zmalloc("droce_cq", sizeof(*cq) + nrings * sizeof(cq->rings[0]),
			 RTE_CACHE_LINE_SIZE);
	if (cq == NULL)
		return -ENOMEM;
	cq->nrings = nrings;
	for (uint32_t k = 0; k < nrings; k++) {
		cq->rings[k].wc = rte_zmalloc("droce_cq_ring", n * sizeof(struct droce_wc),
					      RTE_CACHE_LINE_SIZE);
		if (cq->rings[k].wc == NULL) {
			cq_free(cq);
			return -ENOMEM;
		}
	}
	cq->dev = dev;
	cq->mask = n - 1;
	cq->pub.cqe = (int)n;
	cq->lc = tp_dev_dedicated(dev);
	cq->ev_fd = -1;
	dev->ncq++;
	*out = cq;
	return 0;
}

int
tp_cq_destroy(struct tp_cq *cq)
{
	if (cq->users != 0)
		return -EBUSY;
	cq->dev->ncq--;
	cq_free(cq);
	return 0;
}

/*
 * The ring looked full with the poller's tail as last seen: read it again.
 * Still full is a CQ overrun (IBTA 11.4.2.1): the completion is lost,
 * counted, and the ring is marked so that a poll finding nothing reports
 * the error instead of silently continuing.
 */
static __rte_noinline __rte_cold bool
cq_full(struct tp_engine *eng, struct tp_cq *cq, struct tp_cq_ring *r)
{
	r->tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	if (r->head - r->tail_seen <= cq->mask)
		return false;
	if (!r->overflow)
		tp_event_cq_err(eng, cq);
	r->overflow = true;
	tp_count(eng, TP_CNT_CQ_OVERFLOW);
	return true;
}

/* A matching completion became visible: disarm (once) and fire. */
static __rte_noinline __rte_cold void
cq_fire(struct tp_cq *cq, bool solicited)
{
	uint8_t arm = __atomic_load_n(&cq->arm, __ATOMIC_ACQUIRE);
	const uint64_t one = 1;
	ssize_t n;

	if (arm == TP_ARM_NONE || (arm == TP_ARM_SOLICITED && !solicited))
		return;
	/* several engines may see the arm: one event per arm */
	if (!__atomic_compare_exchange_n(&cq->arm, &arm, TP_ARM_NONE, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (cq->ev_fd < 0)
		return;
	__atomic_fetch_add(&cq->ev_ready, 1, __ATOMIC_RELEASE);
	/* an eventfd write fails only on a counter near 2^64 */
	n = write(cq->ev_fd, &one, sizeof(one));
	RTE_VERIFY(n == (ssize_t)sizeof(one));
}

/*
 * Dedicated lcores: the CQ goes on the engine's list of rings to publish
 * after its round (tp_lc_publish_cqs), once until published, so that a
 * round costs the CQs it wrote into, not every CQ the engine serves (a
 * thousand idle applications on droced are a thousand CQs).
 */
static inline void
cq_mark(struct tp_engine *eng, struct tp_cq *cq)
{
	if (cq->lc && !cq->on[eng->idx].linked) {
		cq->on[eng->idx].next = eng->cqs;
		cq->on[eng->idx].linked = true;
		eng->cqs = cq;
	}
}

static inline bool
cq_place(struct tp_engine *eng, struct tp_cq *cq, const struct droce_wc *wc,
	 bool solicited)
{
	struct tp_cq_ring *r = &cq->rings[eng->idx];

	cq_mark(eng, cq);	/* a CQE or an overrun to publish */
	if (unlikely(r->head - r->tail_seen > cq->mask) && cq_full(eng, cq, r))
		return false;
	r->wc[r->head & cq->mask] = *wc;
	r->head++;
	/* IBTA 11.4.2.2: an error completion wakes a solicited-only arm too */
	if (unlikely(solicited || wc->status != DROCE_WC_SUCCESS)) {
		r->sol_head = r->head;
		if (solicited && __atomic_load_n(&cq->sol_flag, __ATOMIC_RELAXED))
			r->wc[(r->head - 1) & cq->mask].wc_flags |= TP_WC_SOLICITED;
	}
	if (unlikely(__atomic_load_n(&cq->arm, __ATOMIC_RELAXED) != TP_ARM_NONE) &&
	    !cq->lc)
		cq_fire(cq, r->sol_head == r->head);
	return true;
}

bool
tp_cq_push(struct tp_engine *eng, struct tp_cq *cq, const struct droce_wc *wc)
{
	return cq_place(eng, cq, wc, false);
}

bool
tp_cq_push_recv(struct tp_engine *eng, struct tp_cq *cq,
		const struct droce_wc *wc, bool se)
{
	return cq_place(eng, cq, wc, se);
}

void
tp_cq_published(struct tp_cq *cq, const struct tp_cq_ring *r, uint32_t old_head)
{
	/* a solicited or error CQE among those after old_head */
	cq_fire(cq, r->sol_head - old_head - 1 < r->head - old_head);
}

/*
 * A QP reset to RESET leaves no completion behind: its CQEs not yet polled
 * are removed, the others keep their order (as libmlx5's mlx5_cq_clean and
 * libmlx4's; rdma-core's tests restate a QP from ERR through RESET and then
 * expect its next completion, not the flushed receives of before).  Runs on
 * the QP's engine (modify_qp); with a dedicated transport lcore the
 * application waits in modify_qp meanwhile, so only another of its threads
 * polling the same CQ at that moment could race with the compaction.
 */
void
tp_cq_clean(struct tp_cq *cq, const struct tp_engine *eng, uint32_t qpn)
{
	struct tp_cq_ring *r = &cq->rings[eng->idx];
	uint32_t tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	uint32_t pub = cq->lc ? r->pub_head : r->head;
	uint32_t new_pub = tail;
	uint32_t w = tail;

	for (uint32_t i = tail; i != r->head; i++) {
		const struct droce_wc *wc = &r->wc[i & cq->mask];

		if (i == pub)
			new_pub = w;
		if (wc->qp_num == qpn)
			continue;
		if (w != i)
			r->wc[w & cq->mask] = *wc;
		w++;
	}
	if (pub == r->head)
		new_pub = w;
	if (r->sol_head - tail > w - tail)
		r->sol_head = w;
	r->head = w;
	if (cq->lc)
		__atomic_store_n(&r->pub_head, new_pub, __ATOMIC_RELEASE);
}

void
tp_cq_set_event_fd(struct tp_cq *cq, int fd)
{
	cq->ev_fd = fd;
}

void
tp_cq_flag_solicited(struct tp_cq *cq)
{
	__atomic_store_n(&cq->sol_flag, true, __ATOMIC_RELAXED);
}

void
tp_cq_arm(struct tp_cq *cq, bool solicited_only)
{
	uint8_t none = TP_ARM_NONE;

	/* an arm for the next completion is not narrowed to solicited ones */
	if (solicited_only)
		__atomic_compare_exchange_n(&cq->arm, &none, TP_ARM_SOLICITED, false,
					    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&cq->arm, TP_ARM_NEXT, __ATOMIC_RELAXED);
	/* the arm before the poller's next read of pub_head (file comment) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

bool
tp_cq_take_event(struct tp_cq *cq)
{
	uint32_t n = __atomic_load_n(&cq->ev_ready, __ATOMIC_ACQUIRE);

	while (n != 0 && !__atomic_compare_exchange_n(&cq->ev_ready, &n, n - 1, false,
						      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
	return n != 0;
}

int
tp_cq_poll(struct tp_cq *cq, int n, struct droce_wc *wc)
{
	struct tp_cq_ring *r = &cq->rings[0];
	int got = 0;

	if (n < 0)
		return -EINVAL;
	if (cq->lc)
		return tp_lc_cq_poll(cq, n, wc);
	tp_run_take(&cq->dev->run);
	tp_engine_progress(cq->dev->eng[0]);
	while (got < n && r->tail != r->head) {
		wc[got++] = r->wc[r->tail & cq->mask];
		r->tail++;
	}
	tp_run_give(&cq->dev->run);
	if (got == 0 && r->overflow)
		return -EOVERFLOW;
	return got;
}

/* Up to n published CQEs of one ring into wc (two copies at the wrap). */
static unsigned int
lc_ring_take(const struct tp_cq *cq, struct tp_cq_ring *r, struct droce_wc *wc,
	     unsigned int n)
{
	uint32_t tail = r->tail;
	uint32_t k = RTE_MIN(__atomic_load_n(&r->pub_head, __ATOMIC_ACQUIRE) - tail, n);
	uint32_t idx = tail & cq->mask;
	uint32_t first = RTE_MIN(k, cq->mask + 1 - idx);

	if (k == 0)
		return 0;
	memcpy(wc, &r->wc[idx], first * sizeof(*wc));
	memcpy(wc + first, r->wc, (k - first) * sizeof(*wc));
	/* the slots are the engine's again */
	__atomic_store_n(&r->tail, tail + k, __ATOMIC_RELEASE);
	return k;
}

/*
 * Dedicated transport lcore(s): copy the published CQEs of every engine's
 * ring, in turn, on the application's lcore (never progresses the engine:
 * its lcore does).  The overrun flags are read first: an engine publishes
 * a flag after the CQEs before the loss, so EOVERFLOW is reported only
 * once those were polled.
 */
int
tp_lc_cq_poll(struct tp_cq *cq, int n, struct droce_wc *wc)
{
	unsigned int got = 0;
	bool overflow = false;
	uint32_t k = cq->poll_next;

	for (uint32_t i = 0; i < cq->nrings; i++)
		overflow |= __atomic_load_n(&cq->rings[i].pub_overflow, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < cq->nrings && got < (unsigned int)n; i++) {
		got += lc_ring_take(cq, &cq->rings[k], wc + got, (unsigned int)n - got);
		k = k + 1 == cq->nrings ? 0 : k + 1;
	}
	/* the next poll starts at the next ring: no engine waits behind another */
	cq->poll_next = cq->poll_next + 1 == cq->nrings ? 0 : cq->poll_next + 1;
	if (got == 0 && overflow)
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
