/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_async.c - asynchronous events, per ibv_context.
 *
 * droce has one context per device, which every ibv_context of the device
 * shares (dropin_device.c), and so one event source.  ibverbs gives each
 * context its own: its async_fd reports the events of the objects made on
 * it, and the port and device events (PORT_ACTIVE, PORT_ERR, GID_CHANGE,
 * DEVICE_FATAL...) reach every context open when they happen, as the
 * kernel's uverbs delivers them (ib_uverbs_event_handler: to each open
 * file of the device).  So each ibv_context has an eventfd of its own
 * (EFD_SEMAPHORE, one count per queued event) and a queue, and a router
 * per device moves droce's events into them: a thread asleep in poll() on
 * droce's async_fd while contexts are open (the engine may raise an event
 * while the program waits in its own poll() on a context's fd), and
 * ibv_get_async_event, which routes what is there before it looks.
 *
 * droce's event is acked as soon as it is routed: the waits of
 * ibv_destroy_qp/_cq/_srq for the program's acks are the drop-in's
 * (events_reported against the object's events_completed, as rdma-core's
 * against the kernel's count), after droce's destroy, when no more events
 * can come for the object; its events nobody took are then dropped.
 *
 * Under the router's lock: the contexts' queues and counts (always equal),
 * and the reported counts (so an event taken is counted before a
 * destroy can look).  Lock order: dropin.lock (open, close), the router's,
 * an object's mutex.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dropin_private.h"

/* Events queued on a context at most; later ones are dropped (a context
 * nobody reads events from, as the drop-in librdmacm's, stays bounded). */
#define DROPIN_EVENTS_HELD 4096

struct dropin_router {
	pthread_mutex_t lock;
	struct droce_context *d;		/* the device's droce context */
	struct dropin_context *ctxs;		/* its open contexts (next_dev) */
	pthread_t thread;
	bool forked;				/* a child of fork(): no thread */
	int stop_fd;				/* eventfd: the thread ends */
};

/* ---- queues --------------------------------------------------------------------- */

static bool
queue_push(struct dropin_context *ctx, const struct ibv_async_event *ev)
{
	struct dropin_events *q = &ctx->events;
	uint64_t one = 1;

	if (q->n == q->cap) {
		size_t cap = q->cap != 0 ? q->cap * 2 : 16;
		struct ibv_async_event *p;

		if (cap > DROPIN_EVENTS_HELD)
			return false;
		p = realloc(q->ev, cap * sizeof(*p));
		if (p == NULL)
			return false;
		q->ev = p;
		q->cap = cap;
	}
	/* (a semaphore eventfd's count: at most DROPIN_EVENTS_HELD) */
	if (write(q->fd, &one, sizeof(one)) != sizeof(one))
		return false;
	q->ev[q->n++] = *ev;
	return true;
}

/* Removes entry i and its count (never blocks: the count is there). */
static void
queue_remove(struct dropin_context *ctx, size_t i)
{
	struct dropin_events *q = &ctx->events;
	uint64_t v;

	memmove(&q->ev[i], &q->ev[i + 1], (q->n - i - 1) * sizeof(q->ev[0]));
	q->n--;
	if (read(q->fd, &v, sizeof(v)) != sizeof(v))
		abort();	/* the count and the queue went apart: a bug */
}

/* ---- routing -------------------------------------------------------------------- */

static struct dropin_context *
open_context(struct dropin_router *r, struct ibv_context *ibv)
{
	for (struct dropin_context *c = r->ctxs; c != NULL; c = c->next_dev)
		if (&c->vctx.context == ibv)
			return c;
	return NULL;	/* closed with its objects alive: nobody to tell */
}

/*
 * droce's event as ibverbs': the element the drop-in's object (droce's
 * cq_context, qp_context, srq_context), and the context it goes to (NULL:
 * every open context); false: none, dropped (also the events of lib/cm's
 * own QP and CQ, made on droce's context with no drop-in object).
 */
static bool
translate(struct dropin_router *r, const struct droce_async_event *d,
	  struct ibv_async_event *ev, struct dropin_context **to)
{
	struct dropin_cq *cq;
	struct dropin_qp *qp;
	struct dropin_srq *srq;
	struct ibv_context *owner = NULL;

	memset(ev, 0, sizeof(*ev));
	*to = NULL;
	if (d->event_type > DROCE_EVENT_WQ_FATAL)
		return false;	/* MR and MW leases: droce's own, none here */
	ev->event_type = (enum ibv_event_type)d->event_type;
	switch (dropin_event_element(ev->event_type)) {
	case EL_CQ:
		if ((cq = d->element.cq->cq_context) != NULL) {
			ev->element.cq = &cq->ibv;
			owner = cq->ibv.context;
		}
		break;
	case EL_QP:
		if ((qp = d->element.qp->qp_context) != NULL) {
			ev->element.qp = &qp->ibv;
			owner = qp->ibv.context;
		}
		break;
	case EL_SRQ:
		if ((srq = d->element.srq->srq_context) != NULL) {
			ev->element.srq = &srq->ibv;
			owner = srq->ibv.context;
		}
		break;
	case EL_WQ:
		return false;	/* droce has no WQs */
	case EL_PORT:
		ev->element.port_num = (int)d->element.port_num;
		return true;
	case EL_NONE:
		return true;	/* DEVICE_FATAL */
	}
	*to = owner != NULL ? open_context(r, owner) : NULL;
	return *to != NULL;
}

/* Under r->lock: every event droce has, into its contexts' queues (not
 * in a child of fork(): the eventfds are the parent's too). */
static void
route(struct dropin_router *r)
{
	struct droce_async_event d;

	while (!r->forked && droce_get_async_event(r->d, &d) == 0) {
		struct ibv_async_event ev;
		struct dropin_context *to;

		if (translate(r, &d, &ev, &to)) {
			if (to != NULL)
				(void)queue_push(to, &ev);
			for (struct dropin_context *c = r->ctxs; to == NULL && c != NULL;
			     c = c->next_dev)
				(void)queue_push(c, &ev);
		}
		droce_ack_async_event(&d);
	}
}

static void *
router_main(void *arg)
{
	struct dropin_router *r = arg;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = r->d->async_fd, .events = POLLIN },
			{ .fd = r->stop_fd, .events = POLLIN },
		};

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents != 0)
			break;
		pthread_mutex_lock(&r->lock);
		route(r);
		pthread_mutex_unlock(&r->lock);
		if (errno != EAGAIN)
			usleep(1000);	/* out of memory: not a busy loop */
	}
	return NULL;
}

static int
router_start(struct dropin_device *dd)
{
	struct dropin_router *r = calloc(1, sizeof(*r));
	sigset_t all, old;
	int fl, rc;

	if (r == NULL)
		return -ENOMEM;
	r->d = dd->ctx;
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	/* only the router reads droce's fd; it must never block there */
	fl = fcntl(r->d->async_fd, F_GETFL);
	if (r->stop_fd < 0 || fl < 0 || fcntl(r->d->async_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		rc = -errno;
		if (r->stop_fd >= 0)
			close(r->stop_fd);
		free(r);
		return rc;
	}
	pthread_mutex_init(&r->lock, NULL);
	/* the program's signals are for its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&r->thread, NULL, router_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		pthread_mutex_destroy(&r->lock);
		close(r->stop_fd);
		free(r);
		return -rc;
	}
	dd->router = r;
	return 0;
}

static void
router_stop(struct dropin_device *dd, struct dropin_router *r)
{
	uint64_t one = 1;

	if (!r->forked) {
		if (write(r->stop_fd, &one, sizeof(one)) != sizeof(one))
			abort();	/* an eventfd far from its limit */
		pthread_join(r->thread, NULL);
	}
	close(r->stop_fd);
	pthread_mutex_destroy(&r->lock);
	free(r);
	if (dd->router == r)
		dd->router = NULL;
}

/* ---- contexts -------------------------------------------------------------------- */

int
dropin_async_attach(struct dropin_device *dd, struct dropin_context *ctx)
{
	if (dd->router == NULL) {
		int rc = router_start(dd);

		if (rc != 0)
			return rc;
	}
	ctx->router = dd->router;
	pthread_mutex_lock(&dd->router->lock);
	ctx->next_dev = dd->router->ctxs;
	dd->router->ctxs = ctx;
	pthread_mutex_unlock(&dd->router->lock);
	return 0;
}

int
dropin_async_open(struct dropin_device *dd, struct dropin_context *ctx)
{
	int rc;

	ctx->events.fd = eventfd(0, EFD_SEMAPHORE | EFD_CLOEXEC);
	if (ctx->events.fd < 0)
		return -errno;
	rc = dropin_async_attach(dd, ctx);
	if (rc != 0)
		close(ctx->events.fd);
	return rc;
}

void
dropin_async_detach(struct dropin_device *dd, struct dropin_context *ctx)
{
	struct dropin_router *r = ctx->router;
	struct dropin_context **pp;

	pthread_mutex_lock(&r->lock);
	for (pp = &r->ctxs; *pp != NULL && *pp != ctx; pp = &(*pp)->next_dev)
		;
	if (*pp != NULL)
		*pp = ctx->next_dev;
	pthread_mutex_unlock(&r->lock);
	if (r->ctxs == NULL)
		router_stop(dd, r);
}

void
dropin_async_free(struct dropin_context *ctx)
{
	close(ctx->events.fd);
	free(ctx->events.ev);
	memset(&ctx->events, 0, sizeof(ctx->events));
}

/* fork(): the routers' locks are held across it (after dropin.lock), so
 * that the child's queues are whole; the child has no router thread, and
 * its next contexts get a router of their own (the parent's stays with
 * the parent's contexts, dropin_device.c "fork"). */
void
dropin_async_fork(struct dropin_device *dd, enum dropin_fork_stage stage)
{
	struct dropin_router *r = dd->router;

	if (r == NULL)
		return;
	if (stage == DROPIN_FORK_PREPARE) {
		pthread_mutex_lock(&r->lock);
		return;
	}
	if (stage == DROPIN_FORK_CHILD)
		r->forked = true;
	pthread_mutex_unlock(&r->lock);
	if (stage == DROPIN_FORK_CHILD)
		dd->router = NULL;
}

static struct dropin_router *
router_of(struct ibv_context *context)
{
	return dropin_context_of(context)->router;
}

/* Under the router's lock: the count of events of the object taken. */
static void
count_reported(const struct ibv_async_event *ev)
{
	switch (dropin_event_element(ev->event_type)) {
	case EL_CQ:
		DROPIN_OBJ_OF(dropin_cq, ev->element.cq)->events_reported++;
		break;
	case EL_QP:
		DROPIN_OBJ_OF(dropin_qp, ev->element.qp)->events_reported++;
		break;
	case EL_SRQ:
		DROPIN_OBJ_OF(dropin_srq, ev->element.srq)->events_reported++;
		break;
	case EL_WQ: case EL_PORT: case EL_NONE:
		break;
	}
}

int
ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct dropin_context *ctx = dropin_context_of(context);
	struct dropin_router *r = router_of(context);

	if (r->forked) {
		errno = EPERM;	/* the parent's events (ibv_fork_init(3)) */
		return -1;
	}
	for (;;) {
		struct pollfd p = { .fd = ctx->events.fd, .events = POLLIN };
		int fl;

		pthread_mutex_lock(&r->lock);
		route(r);
		if (ctx->events.n > 0) {
			*event = ctx->events.ev[0];
			queue_remove(ctx, 0);
			count_reported(event);
			pthread_mutex_unlock(&r->lock);
			return 0;
		}
		pthread_mutex_unlock(&r->lock);
		fl = fcntl(ctx->events.fd, F_GETFL);
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

/* rdma-core's: the object's count of acked events, which its destroy
 * waits on (dropin_async_forget). */
void
ibv_ack_async_event(struct ibv_async_event *event)
{
	pthread_mutex_t *m;
	pthread_cond_t *c;
	uint32_t *done;

	switch (dropin_event_element(event->event_type)) {
	case EL_CQ:
		m = &event->element.cq->mutex;
		c = &event->element.cq->cond;
		done = &event->element.cq->async_events_completed;
		break;
	case EL_QP:
		m = &event->element.qp->mutex;
		c = &event->element.qp->cond;
		done = &event->element.qp->events_completed;
		break;
	case EL_SRQ:
		m = &event->element.srq->mutex;
		c = &event->element.srq->cond;
		done = &event->element.srq->events_completed;
		break;
	default:
		return;		/* port and device events need no ack */
	}
	pthread_mutex_lock(m);
	(*done)++;
	pthread_cond_broadcast(c);
	pthread_mutex_unlock(m);
}

/*
 * After droce destroyed the object (none of its events can come any
 * more): drop its events nobody took, then wait until those taken are
 * acked, as rdma-core's destroy waits for the kernel's reported count.
 */
void
dropin_async_forget(struct ibv_context *context, const void *obj, pthread_mutex_t *m,
		    pthread_cond_t *c, const uint32_t *done, const uint32_t *reported)
{
	struct dropin_router *r = router_of(context);
	uint32_t want;

	/* (the lock: an event the router took before droce's destroy is
	 * queued by now) */
	pthread_mutex_lock(&r->lock);
	for (struct dropin_context *ctx = r->ctxs; ctx != NULL; ctx = ctx->next_dev)
		for (size_t i = ctx->events.n; i-- > 0;)
			if (dropin_event_element(ctx->events.ev[i].event_type) != EL_PORT &&
			    ctx->events.ev[i].element.qp == obj)	/* (a union of pointers) */
				queue_remove(ctx, i);
	want = *reported;
	pthread_mutex_unlock(&r->lock);
	pthread_mutex_lock(m);
	while (*done != want)
		pthread_cond_wait(c, m);
	pthread_mutex_unlock(m);
}
