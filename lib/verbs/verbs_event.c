/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_event.c - asynchronous events (ibv_get_async_event and friends).
 *
 * The engine raises events into its ring and adds one to the context's
 * eventfd (EFD_SEMAPHORE: one count per event) for each (lib/transport
 * tp_event.c).  Here, on the application's threads and under the
 * context's event lock, they move to a pending list; droce_get_async_event
 * takes the oldest together with one count, and remembers the events
 * naming an object (QP, CQ, SRQ, MR, MW) until they are acked, so that
 * destroying the object can wait for that (as ibverbs for QPs and CQs)
 * and discard the events for it nobody took yet.
 *
 * Counts and events are kept in step: every count read is paired with an
 * event removed.  When a discarded event's count is not there yet (its
 * raiser had enqueued an earlier event and not written its count yet, and
 * a reader took the count of the discarded one for it), the count owed is
 * remembered (debt) and read when it arrives.
 *
 * Daemon mode: droced is the raiser: it puts each event of this
 * application's objects (and every port event) into the application's own
 * ring, naming the application's object, and counts it on async_fd, which
 * droced holds a copy of (provider_droced droced_event_take; droced
 * droced_route_event); on a queue region each context has a ring of its
 * own, counted on its own async_fd (provider_dq dqv_event_take).
 * Everything here is the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "droce.h"
#include "verbs_private.h"

/* Events taken from the engine and held here at most (collect). */
#define VERBS_EVENTS_HELD 4096

/* A growable FIFO of events (events are rare: memmove is fine). */
struct ev_list {
	struct droce_async_event *ev;
	size_t n;
	size_t cap;
};

struct verbs_events {
	pthread_mutex_t lock;
	pthread_cond_t acked;
	struct ev_list pending;		/* raised, not taken */
	struct ev_list taken;		/* events naming an object, taken, not acked */
	uint64_t debt;			/* counts to read for discarded events */
};

/* Room for one more; false when memory is out. */
static bool
ev_reserve(struct ev_list *l)
{
	size_t cap;
	struct droce_async_event *p;

	if (l->n < l->cap)
		return true;
	cap = l->cap != 0 ? l->cap * 2 : 16;
	p = realloc(l->ev, cap * sizeof(*p));
	if (p == NULL)
		return false;
	l->ev = p;
	l->cap = cap;
	return true;
}

static bool
ev_push(struct ev_list *l, const struct droce_async_event *ev)
{
	if (!ev_reserve(l))
		return false;
	l->ev[l->n++] = *ev;
	return true;
}

static void
ev_remove(struct ev_list *l, size_t i)
{
	memmove(&l->ev[i], &l->ev[i + 1], (l->n - i - 1) * sizeof(l->ev[0]));
	l->n--;
}

/* The object an event is affiliated with, or NULL (port, device events). */
void *
verbs_event_object(const struct droce_async_event *ev)
{
	switch (ev->event_type) {
	case DROCE_EVENT_CQ_ERR:
		return ev->element.cq;
	case DROCE_EVENT_QP_FATAL:
	case DROCE_EVENT_QP_REQ_ERR:
	case DROCE_EVENT_QP_ACCESS_ERR:
	case DROCE_EVENT_COMM_EST:
	case DROCE_EVENT_SQ_DRAINED:
	case DROCE_EVENT_PATH_MIG:
	case DROCE_EVENT_PATH_MIG_ERR:
	case DROCE_EVENT_QP_LAST_WQE_REACHED:
		return ev->element.qp;
	case DROCE_EVENT_MR_LEASE_EXPIRED:
		return ev->element.mr;
	case DROCE_EVENT_MW_LEASE_EXPIRED:
		return ev->element.mw;
	case DROCE_EVENT_SRQ_ERR:
	case DROCE_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	default:
		return NULL;
	}
}

/* The context of an event ev_object names. */
static struct droce_context *
ev_context(const struct droce_async_event *ev)
{
	switch (ev->event_type) {
	case DROCE_EVENT_CQ_ERR:
		return ev->element.cq->context;
	case DROCE_EVENT_MR_LEASE_EXPIRED:
		return ev->element.mr->context;
	case DROCE_EVENT_MW_LEASE_EXPIRED:
		return ev->element.mw->context;
	case DROCE_EVENT_SRQ_ERR:
	case DROCE_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq->context;
	default:
		return ev->element.qp->context;
	}
}

int
verbs_events_open(struct droce_context *ctx)
{
	struct verbs_events *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return ENOMEM;
	ctx->async_fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (ctx->async_fd < 0) {
		int rc = errno;

		free(e);
		return rc;
	}
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->acked, NULL);
	verbs_ctx(ctx)->events = e;
	return 0;
}

void
verbs_events_close(struct droce_context *ctx)
{
	struct verbs_events *e = verbs_ctx(ctx)->events;

	close(ctx->async_fd);
	ctx->async_fd = -1;
	pthread_cond_destroy(&e->acked);
	pthread_mutex_destroy(&e->lock);
	free(e->pending.ev);
	free(e->taken.ev);
	free(e);
	verbs_ctx(ctx)->events = NULL;
}

/* Read one count if there is one (under the lock: no reader blocks). */
static bool
take_count(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t v;

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN) &&
	       read(fd, &v, sizeof(v)) == sizeof(v);
}

/*
 * Under the lock: the engine's ring -> pending, and counts owed read.
 * Pending holds up to VERBS_EVENTS_HELD events, so that a program that
 * never takes events leaves the rest in the engine's ring, which then
 * drops and counts them; all: everything (before an object is freed,
 * none of its events may stay in the ring).
 */
static void
collect(struct droce_context *ctx, bool all)
{
	struct verbs_events *e = verbs_ctx(ctx)->events;
	struct droce_async_event ev;

	/* (out of memory: the rest waits in the engine's ring) */
	while ((all || e->pending.n < VERBS_EVENTS_HELD) && ev_reserve(&e->pending) &&
	       verbs_engine_event(ctx, &ev) == 0)
		e->pending.ev[e->pending.n++] = ev;
	while (e->debt > 0 && take_count(ctx->async_fd))
		e->debt--;
}

/* Under the lock: the oldest pending event with its count: 1, 0 (none
 * yet), -ENOMEM (its ack could not be tracked; it stays pending). */
static int
take_event(struct droce_context *ctx, struct droce_async_event *out)
{
	struct verbs_events *e = verbs_ctx(ctx)->events;

	collect(ctx, false);
	if (e->pending.n == 0)
		return 0;
	if (verbs_event_object(&e->pending.ev[0]) != NULL && !ev_reserve(&e->taken))
		return -ENOMEM;
	if (!take_count(ctx->async_fd))
		return 0;	/* its raiser has not counted it yet */
	*out = e->pending.ev[0];
	ev_remove(&e->pending, 0);
	if (verbs_event_object(out) != NULL)
		(void)ev_push(&e->taken, out);	/* room reserved above */
	return 1;
}

int
droce_get_async_event(struct droce_context *context, struct droce_async_event *event)
{
	if (context == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	for (;;) {
		struct pollfd p = { .fd = context->async_fd, .events = POLLIN };
		int rc, fl;

		pthread_mutex_lock(&verbs_ctx(context)->events->lock);
		rc = take_event(context, event);
		pthread_mutex_unlock(&verbs_ctx(context)->events->lock);
		if (rc != 0) {
			if (rc > 0)
				return 0;
			errno = -rc;
			return -1;
		}
		fl = fcntl(context->async_fd, F_GETFL);
		if (fl < 0)
			return -1;
		if (fl & O_NONBLOCK) {
			errno = EAGAIN;
			return -1;
		}
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return -1;
	}
}

void
droce_ack_async_event(struct droce_async_event *event)
{
	struct verbs_events *e;
	void *obj;

	if (event == NULL || (obj = verbs_event_object(event)) == NULL)
		return;		/* port and device events need no ack */
	e = verbs_ctx(ev_context(event))->events;
	pthread_mutex_lock(&e->lock);
	for (size_t i = 0; i < e->taken.n; i++) {
		if (verbs_event_object(&e->taken.ev[i]) == obj &&
		    e->taken.ev[i].event_type == event->event_type) {
			ev_remove(&e->taken, i);
			break;
		}
	}
	pthread_cond_broadcast(&e->acked);
	pthread_mutex_unlock(&e->lock);
}

static bool
names(const struct ev_list *l, const void *obj)
{
	for (size_t i = 0; i < l->n; i++)
		if (verbs_event_object(&l->ev[i]) == obj)
			return true;
	return false;
}

/*
 * Before obj (a QP, CQ, SRQ, MR or MW the engine, or droced, raises no
 * more events for) is freed: drop its events nobody took, wait until
 * those taken are acked.
 */
void
verbs_events_forget(struct droce_context *ctx, const void *obj)
{
	struct verbs_events *e = verbs_ctx(ctx)->events;

	pthread_mutex_lock(&e->lock);
	collect(ctx, true);
	for (size_t i = e->pending.n; i-- > 0;) {
		if (verbs_event_object(&e->pending.ev[i]) != obj)
			continue;
		ev_remove(&e->pending, i);
		if (!take_count(ctx->async_fd))
			e->debt++;
	}
	while (names(&e->taken, obj))
		pthread_cond_wait(&e->acked, &e->lock);
	pthread_mutex_unlock(&e->lock);
}

void
verbs_events_drop(struct droce_context *ctx)
{
	struct verbs_events *e = verbs_ctx(ctx)->events;

	pthread_mutex_lock(&e->lock);
	collect(ctx, true);
	for (size_t i = 0; i < e->pending.n; i++)
		if (!take_count(ctx->async_fd))
			e->debt++;	/* counted later: read by collect below */
	e->pending.n = 0;
	collect(ctx, false);
	pthread_mutex_unlock(&e->lock);
}

void
verbs_events_reset(struct droce_context *ctx)
{
	struct verbs_events *e = verbs_ctx(ctx)->events;

	pthread_mutex_lock(&e->lock);
	e->pending.n = 0;
	e->debt = 0;
	while (take_count(ctx->async_fd))
		;
	pthread_mutex_unlock(&e->lock);
}

/* ---- names (ibv_event_type_str) ------------------------------------------------ */

static const char *const event_type_names[] = {
	[DROCE_EVENT_CQ_ERR] = "CQ error",
	[DROCE_EVENT_QP_FATAL] = "local work queue catastrophic error",
	[DROCE_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
	[DROCE_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
	[DROCE_EVENT_COMM_EST] = "communication established",
	[DROCE_EVENT_SQ_DRAINED] = "send queue drained",
	[DROCE_EVENT_PATH_MIG] = "path migrated",
	[DROCE_EVENT_PATH_MIG_ERR] = "path migration request error",
	[DROCE_EVENT_DEVICE_FATAL] = "local catastrophic error",
	[DROCE_EVENT_PORT_ACTIVE] = "port active",
	[DROCE_EVENT_PORT_ERR] = "port error",
	[DROCE_EVENT_LID_CHANGE] = "LID change",
	[DROCE_EVENT_PKEY_CHANGE] = "P_Key change",
	[DROCE_EVENT_SM_CHANGE] = "SM change",
	[DROCE_EVENT_SRQ_ERR] = "SRQ catastrophic error",
	[DROCE_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
	[DROCE_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
	[DROCE_EVENT_CLIENT_REREGISTER] = "client reregistration",
	[DROCE_EVENT_GID_CHANGE] = "GID table change",
	[DROCE_EVENT_WQ_FATAL] = "WQ fatal",
	[DROCE_EVENT_MR_LEASE_EXPIRED] = "MR lease expired",
	[DROCE_EVENT_MW_LEASE_EXPIRED] = "MW lease expired",
};

const char *
droce_event_type_str(enum droce_event_type event)
{
	if ((unsigned int)event >= sizeof(event_type_names) / sizeof(event_type_names[0]) ||
	    event_type_names[event] == NULL)
		return "unknown";
	return event_type_names[event];
}
