/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_event.c - event channels and events on lib/cm's.
 *
 * lib/cm has no thread: its passes run inside the event calls.  A blocking
 * rdma_get_cm_event (rping's and perftest's CM thread) runs one pass, and
 * while nothing is queued waits RDMACM_WAIT_MS in poll() on the channel's
 * fd before the next: poll() is then the call's only cancellation point
 * (rping cancels its CM thread there), never a pass holding lib/cm's lock.
 * With O_NONBLOCK on the fd one pass, then EAGAIN.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdmacm_private.h"

#define RDMACM_WAIT_MS 1

_Static_assert(RDMA_CM_EVENT_TIMEWAIT_EXIT == (int)DROCE_RDMA_CM_EVENT_TIMEWAIT_EXIT &&
	       RDMA_CM_EVENT_CONNECT_REQUEST == (int)DROCE_RDMA_CM_EVENT_CONNECT_REQUEST,
	       "rdma_cm_event_type");

struct rdma_event_channel *
rdma_create_event_channel(void)
{
	struct rdmacm_channel *ch;
	int err = rdmacm_devices_init();

	if (err != 0) {
		errno = err;	/* ENODEV: rping's "No RDMA devices were detected" */
		return NULL;
	}
	ch = calloc(1, sizeof(*ch));
	if (ch == NULL)
		return NULL;
	ch->d = droce_rdma_create_event_channel();
	if (ch->d == NULL) {
		err = errno;
		free(ch);
		errno = err;
		return NULL;
	}
	pthread_mutex_init(&ch->lock, NULL);
	ch->ibv.fd = ch->d->fd;
	rdmacm_progress_hold();
	return &ch->ibv;
}

static void
channel_free(struct rdmacm_channel *ch)
{
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}

void
rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct rdmacm_channel *ch = (struct rdmacm_channel *)channel;
	bool waited;

	if (ch == NULL)
		return;
	pthread_mutex_lock(&ch->lock);
	ch->closed = true;
	droce_rdma_destroy_event_channel(ch->d);
	waited = ch->waiters != 0;
	pthread_mutex_unlock(&ch->lock);
	rdmacm_progress_release();
	if (!waited)
		channel_free(ch);	/* else its last waiter's (waiter_leave) */
}

/* The drop-in's id of a CONNECT_REQUEST: lib/cm's new id got the
 * listener's context (the listener's rdmacm_id); it gets its own. */
static struct rdmacm_id *
event_id(struct droce_rdma_cm_event *dev)
{
	struct rdmacm_id *id = dev->id->context;
	struct rdmacm_id *child;

	if (dev->event != DROCE_RDMA_CM_EVENT_CONNECT_REQUEST)
		return id;
	child = rdmacm_id_new(id->ibv.channel, id->ibv.context, id->ibv.ps);
	if (child == NULL)
		return NULL;
	child->d = dev->id;
	dev->id->context = child;
	return child;
}

static void
conn_param_copy(struct rdma_conn_param *to, const struct droce_rdma_conn_param *from)
{
	to->private_data = from->private_data;
	to->private_data_len = from->private_data_len;
	to->responder_resources = from->responder_resources;
	to->initiator_depth = from->initiator_depth;
	to->flow_control = from->flow_control;
	to->retry_count = from->retry_count;
	to->rnr_retry_count = from->rnr_retry_count;
	to->srq = from->srq;
	to->qp_num = from->qp_num;
}

/* droce's AH attributes have ibv_ah_attr's layout (lib/ibverbs asserts it) */
static void
ud_param_copy(struct rdma_ud_param *to, const struct droce_rdma_ud_param *from)
{
	_Static_assert(sizeof(to->ah_attr) == sizeof(from->ah_attr), "ah_attr layout");
	to->private_data = from->private_data;
	to->private_data_len = from->private_data_len;
	memcpy(&to->ah_attr, &from->ah_attr, sizeof(to->ah_attr));
	to->qp_num = from->qp_num;
	to->qkey = from->qkey;
}

/* lib/cm's event as librdmacm's: 0, or -1 with errno (ENOMEM) */
static int
event_deliver(struct droce_rdma_cm_event *dev, struct rdma_cm_event **event)
{
	struct rdmacm_event *ev = calloc(1, sizeof(*ev));
	struct rdmacm_id *id = ev != NULL ? event_id(dev) : NULL;

	if (id == NULL) {
		/* a request with no id of ours is refused (REJ 28) */
		struct droce_rdma_cm_id *orphan =
			dev->event == DROCE_RDMA_CM_EVENT_CONNECT_REQUEST ? dev->id : NULL;

		free(ev);
		droce_rdma_ack_cm_event(dev);
		if (orphan != NULL)
			droce_rdma_destroy_id(orphan);
		errno = ENOMEM;
		return -1;
	}
	ev->d = dev;
	ev->ibv.id = &id->ibv;
	if (dev->listen_id != NULL)
		ev->ibv.listen_id = &((struct rdmacm_id *)dev->listen_id->context)->ibv;
	ev->ibv.event = (enum rdma_cm_event_type)dev->event;
	ev->ibv.status = dev->status;
	if (id->ibv.qp_type == IBV_QPT_UD)
		ud_param_copy(&ev->ibv.param.ud, &dev->param.ud);
	else
		conn_param_copy(&ev->ibv.param.conn, &dev->param.conn);
	rdmacm_id_sync(id);
	pthread_mutex_lock(&id->lock);
	id->events++;
	pthread_mutex_unlock(&id->lock);
	*event = &ev->ibv;
	return 0;
}

/* One pass of the CM for ch, not cancellable: 0 (an event), or -1 with
 * errno (EAGAIN: none; EBADF: the channel was destroyed). */
static int
channel_pass(struct rdmacm_channel *ch, struct droce_rdma_cm_event **dev)
{
	int cancel, rc, err;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
	pthread_mutex_lock(&ch->lock);
	rc = ch->closed ? -1 : droce_rdma_poll_cm_event(ch->d, dev);
	err = ch->closed ? EBADF : errno;
	pthread_mutex_unlock(&ch->lock);
	pthread_setcancelstate(cancel, NULL);
	errno = err;
	return rc;
}

static bool
channel_nonblock(const struct rdmacm_channel *ch)
{
	return (fcntl(ch->ibv.fd, F_GETFL) & O_NONBLOCK) != 0;
}

/* A waiter leaves (returning, or cancelled): the last one of a destroyed
 * channel frees it. */
static void
waiter_leave(void *arg)
{
	struct rdmacm_channel *ch = arg;
	int err = errno;
	bool last;

	pthread_mutex_lock(&ch->lock);
	last = --ch->waiters == 0 && ch->closed;
	pthread_mutex_unlock(&ch->lock);
	if (last)
		channel_free(ch);
	errno = err;
}

static void
wait_forever(void)
{
	for (;;)
		pause();
}

int
rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct rdmacm_channel *ch = (struct rdmacm_channel *)channel;
	struct droce_rdma_cm_event *dev;
	int rc;

	if (ch == NULL || event == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&ch->lock);
	ch->waiters++;
	pthread_mutex_unlock(&ch->lock);
	pthread_cleanup_push(waiter_leave, ch);
	while ((rc = channel_pass(ch, &dev)) != 0 && errno == EAGAIN && !channel_nonblock(ch)) {
		struct pollfd pfd = { .fd = ch->ibv.fd, .events = POLLIN };

		poll(&pfd, 1, RDMACM_WAIT_MS);
	}
	if (rc != 0 && errno == EBADF)
		wait_forever();
	pthread_cleanup_pop(1);
	return rc == 0 ? event_deliver(dev, event) : -1;
}

int
rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct rdmacm_event *ev = (struct rdmacm_event *)event;
	struct rdmacm_id *id;

	if (ev == NULL) {
		errno = EINVAL;
		return -1;
	}
	id = (struct rdmacm_id *)ev->ibv.id;
	droce_rdma_ack_cm_event(ev->d);
	pthread_mutex_lock(&id->lock);
	id->events--;
	pthread_cond_broadcast(&id->acked);
	pthread_mutex_unlock(&id->lock);
	free(ev);
	return 0;
}

const char *
rdma_event_str(enum rdma_cm_event_type event)
{
	return droce_rdma_event_str((enum droce_rdma_cm_event_type)event);
}
