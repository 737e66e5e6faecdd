/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous events (IBTA 11.6.3; ibv_get_async_event): the engine
 * raises them on whichever lcore runs it (the application's, a dedicated
 * transport lcore or one of several engines) into the device's
 * multi-producer ring, and counts one on the context's eventfd per event,
 * so that the fd is readable while events wait.  lib/verbs takes them from
 * there (tp_dev_event_take) on the application's threads.
 *
 * Events are rare: the eventfd write (a system call) is on the event
 * path only, never on the data path, whose cost is a flag test at the
 * places that can raise one.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ring_elem.h>

#include "tp_private.h"

/* Events a context holds before the application takes them. */
#define TP_EVENT_RING 4096
/* How often the engine asks the link for its carrier (ms). */
#define TP_LINK_POLL_MS 10

int
tp_event_init(struct tp_dev *dev)
{
	static uint32_t seq;
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), "droce_ev_%u",
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	/* multi-producer: engines raise concurrently; lib/verbs consumes
	 * under its own lock */
	dev->ev_ring = rte_ring_create_elem(name, sizeof(struct droce_async_event),
					    TP_EVENT_RING, SOCKET_ID_ANY,
					    RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (dev->ev_ring == NULL)
		return -ENOMEM;
	dev->ev_fd = -1;
	dev->link_up = -1;
	return 0;
}

void
tp_event_fini(struct tp_dev *dev)
{
	rte_ring_free(dev->ev_ring);
	dev->ev_ring = NULL;
}

void
tp_dev_set_event_fd(struct tp_dev *dev, int fd)
{
	dev->ev_fd = fd;
}

int
tp_dev_event_take(struct tp_dev *dev, struct droce_async_event *ev)
{
	return rte_ring_sc_dequeue_elem(dev->ev_ring, ev, sizeof(*ev)) == 0 ? 0 : -EAGAIN;
}

static void
raise_event(struct tp_engine *eng, struct droce_async_event *ev)
{
	struct tp_dev *dev = eng->dev;
	uint64_t one = 1;

	if (rte_ring_mp_enqueue_elem(dev->ev_ring, ev, sizeof(*ev)) != 0) {
		tp_count(eng, TP_CNT_ASYNC_EVENT_DROP);
		return;
	}
	tp_count(eng, TP_CNT_ASYNC_EVENTS);
	/* after the enqueue: whoever reads the count finds the event */
	if (dev->ev_fd >= 0 && write(dev->ev_fd, &one, sizeof(one)) != sizeof(one))
		TP_LOG(ERR, "async event: eventfd write failed\n");
}

void
tp_event_qp(struct tp_qp *qp, enum droce_event_type type)
{
	struct droce_async_event ev = { .element.qp = &qp->pub, .event_type = type };

	/* being destroyed: lib/verbs discards what names it (tp_qp_mute_events) */
	if (__atomic_load_n(&qp->ev.muted, __ATOMIC_ACQUIRE))
		return;
	raise_event(qp->eng, &ev);
}

/*
 * An RC responder error that no receive completion reports (IBTA 11.6.3.2
 * affiliated asynchronous errors, for the class C errors of 9.9.3.1.2):
 * the NAK it answered with says which.
 */
void
tp_event_resp_error(struct tp_qp *qp, uint8_t nak_code)
{
	switch (nak_code) {
	case ROCE_NAK_INVALID_REQ:
		tp_event_qp(qp, DROCE_EVENT_QP_REQ_ERR);
		break;
	case ROCE_NAK_REM_ACCESS_ERR:
		tp_event_qp(qp, DROCE_EVENT_QP_ACCESS_ERR);
		break;
	default:
		tp_event_qp(qp, DROCE_EVENT_QP_FATAL);
		break;
	}
}

/* IBTA 11.6.3.1: the first packet received in RTR (once per connection). */
void
tp_event_comm_est(struct tp_qp *qp)
{
	if (qp->ev.comm_est)
		return;
	qp->ev.comm_est = true;
	tp_event_qp(qp, DROCE_EVENT_COMM_EST);
}

/*
 * SQD is drained once no message the QP started is outstanding (IBTA
 * 10.3.1: SQD finishes what was in progress and starts nothing new), so
 * the oldest WQE left, if any, was never started.
 */
void
tp_event_sqd_check(struct tp_qp *qp)
{
	if (qp->pub.state != DROCE_QPS_SQD) {
		qp->ev.sqd_notify = false;
		return;
	}
	if (qp->sq.tail != qp->sq.head && qp->sq.wqe[qp->sq.tail & qp->sq.mask].started)
		return;
	qp->ev.sqd_notify = false;
	tp_event_qp(qp, DROCE_EVENT_SQ_DRAINED);
}

void
tp_event_modified(struct tp_qp *qp, enum droce_qp_state cur,
		  const struct droce_qp_attr *attr, int mask)
{
	enum droce_qp_state next = qp->pub.state;

	if (next == DROCE_QPS_RTR && cur != DROCE_QPS_RTR)
		qp->ev.comm_est = false;
	qp->ev.sqd_notify = next == DROCE_QPS_SQD && cur == DROCE_QPS_RTS &&
			    (mask & DROCE_QP_EN_SQD_ASYNC_NOTIFY) &&
			    attr->en_sqd_async_notify;
	if (qp->ev.sqd_notify)
		tp_event_sqd_check(qp);
}

/* IBTA 11.4.2.1: a CQ overrun is a CQ error (raised once: it stays overrun). */
void
tp_event_cq_err(struct tp_engine *eng, struct tp_cq *cq)
{
	struct droce_async_event ev = {
		.element.cq = &cq->pub, .event_type = DROCE_EVENT_CQ_ERR,
	};

	if (__atomic_load_n(&cq->ev_muted, __ATOMIC_ACQUIRE))
		return;
	raise_event(eng, &ev);
}

/* Raised by the SRQ's engine (tp_srq_take), the only one that takes from it. */
void
tp_event_srq_limit(struct tp_srq *srq)
{
	struct droce_async_event ev = {
		.element.srq = &srq->pub, .event_type = DROCE_EVENT_SRQ_LIMIT_REACHED,
	};

	if (__atomic_load_n(&srq->ev_muted, __ATOMIC_ACQUIRE))
		return;
	raise_event(srq->eng, &ev);
}

/*
 * The link's carrier, asked every TP_LINK_POLL_MS by engine 0: a change
 * raises PORT_ACTIVE or PORT_ERR for port 1.  The first answer only sets
 * where it starts.
 */
void
tp_event_link_poll(struct tp_engine *eng, uint64_t now)
{
	struct tp_dev *dev = eng->dev;
	struct droce_async_event ev = { .element.port_num = 1 };
	int up;

	dev->link_next = now + dev->tsc_hz / 1000 * TP_LINK_POLL_MS;
	up = droce_link_status(dev->link);
	if (up < 0 || up == dev->link_up)
		return;
	if (dev->link_up >= 0) {
		ev.event_type = up ? DROCE_EVENT_PORT_ACTIVE : DROCE_EVENT_PORT_ERR;
		raise_event(eng, &ev);
	}
	dev->link_up = (int8_t)up;
}

/* Under lib/protection's lock, after the revocation (prot_lease_expire). */
static void
lease_expired(void *arg, bool mw, uint64_t cookie)
{
	struct tp_engine *eng = arg;
	struct droce_async_event ev;

	if (mw) {
		ev.element.mw = (struct droce_mw *)(uintptr_t)cookie;
		ev.event_type = DROCE_EVENT_MW_LEASE_EXPIRED;
	} else {
		ev.element.mr = (struct droce_mr *)(uintptr_t)cookie;
		ev.event_type = DROCE_EVENT_MR_LEASE_EXPIRED;
	}
	tp_count(eng, TP_CNT_LEASE_EXPIRED);
	raise_event(eng, &ev);
}

/*
 * Every DROCE_LEASE_TICK_US, each engine before its burst: one relaxed
 * load while no lease is due; the revocations (grace periods, a control
 * path) only at a lease's deadline, so a lease expires within one tick of
 * it, and an engine that was descheduled past a deadline expires the
 * lease before it handles anything that came meanwhile.  Whichever engine
 * finds a lease due revokes it (under lib/protection's lock, once) and
 * raises its event.
 */
void
tp_event_lease_poll(struct tp_engine *eng, uint64_t now)
{
	struct tp_dev *dev = eng->dev;
	uint64_t next = prot_lease_next(dev->prot);
	uint64_t clock;

	eng->lease_next = now + dev->tsc_hz / 1000000 * DROCE_LEASE_TICK_US;
	if (next == UINT64_MAX)
		return;
	clock = prot_lease_clock();
	if (clock >= next)
		(void)prot_lease_expire(dev->prot, clock, lease_expired, eng);
}

/* ---- destroy: no event for a QP or CQ once it is being destroyed ---------- */

static int
qp_mute_fn(void *arg)
{
	struct tp_qp *qp = arg;

	__atomic_store_n(&qp->ev.muted, true, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Where the QP's engine runs (a command: between two of its rounds), so
 * that no event for it is being raised when this returns.
 */
int
tp_qp_mute_events(struct tp_qp *qp)
{
	return tp_qp_call(qp, qp_mute_fn, qp);
}

struct cq_mute {
	struct tp_cq *cq;
	struct tp_engine *eng;
};

/* On one engine: the CQ raises nothing there and leaves its list. */
static int
cq_mute_fn(void *arg)
{
	struct cq_mute *m = arg;

	if (__atomic_load_n(&m->cq->users, __ATOMIC_RELAXED) != 0)
		return -EBUSY;
	__atomic_store_n(&m->cq->ev_muted, true, __ATOMIC_RELEASE);
	tp_engine_drop_cq(m->eng, m->cq);
	return 0;
}

/* Any engine may complete on its ring (and raise CQ_ERR): each in turn. */
int
tp_cq_mute_events(struct tp_cq *cq)
{
	for (unsigned int k = 0; k < cq->dev->neng; k++) {
		struct cq_mute m = { cq, cq->dev->eng[k] };
		int rc = tp_engine_call(m.eng, cq_mute_fn, &m);

		if (rc != 0)
			return rc;
	}
	return 0;
}
