/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_event.c - completion channels and asynchronous events.
 *
 * droce's transport advances only when its owner polls (run-to-completion)
 * or on its own transport lcore; there is no interrupt to wake a reader of
 * a file descriptor.  So ibv_get_cq_event itself drives the engines of its
 * channel's armed CQs (droce_progress) and polls each for one completion,
 * kept in the CQ's stash and handed out first by the next ibv_poll_cq.
 * The channel's fd is a real eventfd (close, dup and O_NONBLOCK work) but
 * never becomes readable: a program that waits for it with poll/epoll
 * instead of calling ibv_get_cq_event does not wake up.  solicited_only is
 * accepted and treated as "any completion": droce's completions do not
 * carry the solicited bit (an event per completion is more than IBTA
 * 11.4.2.2 requires, never fewer).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dropin_private.h"

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct dropin_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	ch->ibv.fd = eventfd(0, EFD_CLOEXEC);
	if (ch->ibv.fd < 0)
		return dropin_undo_alloc(ch);
	ch->ibv.context = context;
	return &ch->ibv;
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct dropin_channel *ch = DROPIN_OBJ_OF(dropin_channel, channel);

	if (ch->cqs != NULL)
		return EBUSY;
	close(channel->fd);
	free(ch);
	return 0;
}

void
dropin_channel_add(struct dropin_cq *cq)
{
	struct dropin_channel *ch = DROPIN_OBJ_OF(dropin_channel, cq->ibv.channel);

	cq->next_on_channel = ch->cqs;
	ch->cqs = cq;
	ch->ibv.refcnt++;
}

void
dropin_channel_remove(struct dropin_cq *cq)
{
	struct dropin_channel *ch = DROPIN_OBJ_OF(dropin_channel, cq->ibv.channel);

	for (struct dropin_cq **p = &ch->cqs; *p != NULL; p = &(*p)->next_on_channel) {
		if (*p == cq) {
			*p = cq->next_on_channel;
			break;
		}
	}
	if (ch->last_event == cq)
		ch->last_event = NULL;
	ch->ibv.refcnt--;
}

int
dropin_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct dropin_cq *c = DROPIN_OBJ_OF(dropin_cq, cq);
	int n = 0, rc;

	if (__builtin_expect(c->stashed, 0) && num_entries > 0) {
		memcpy(wc, &c->stash, sizeof(*wc));
		c->stashed = false;
		n = 1;
	}
	rc = droce_poll_cq(c->d, num_entries - n, (struct droce_wc *)(wc + n));
	if (rc < 0)
		return n > 0 ? n : rc;
	return n + rc;
}

int
dropin_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	(void)solicited_only;
	DROPIN_OBJ_OF(dropin_cq, cq)->armed = true;
	return 0;
}

/* An armed CQ with a completion: advance its engine, take one into its stash. */
static bool
dropin_cq_has_event(struct dropin_cq *cq)
{
	if (!cq->armed)
		return false;
	if (!cq->stashed) {
		droce_progress(cq->d->context);
		cq->stashed = droce_poll_cq(cq->d, 1, &cq->stash) == 1;
	}
	return cq->stashed;
}

/* The channel's next CQ with an event, round robin from the last one. */
static struct dropin_cq *
dropin_channel_event(struct dropin_channel *ch)
{
	struct dropin_cq *start = ch->last_event != NULL &&
		ch->last_event->next_on_channel != NULL ?
		ch->last_event->next_on_channel : ch->cqs;
	struct dropin_cq *cq = start;

	while (cq != NULL) {
		if (dropin_cq_has_event(cq))
			return cq;
		cq = cq->next_on_channel != NULL ? cq->next_on_channel : ch->cqs;
		if (cq == start)
			break;
	}
	return NULL;
}

int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		 void **cq_context)
{
	struct dropin_channel *ch = DROPIN_OBJ_OF(dropin_channel, channel);
	bool nonblock = (fcntl(channel->fd, F_GETFL) & O_NONBLOCK) != 0;
	struct dropin_cq *c;

	while ((c = dropin_channel_event(ch)) == NULL) {
		if (nonblock) {
			errno = EAGAIN;
			return -1;
		}
	}
	c->armed = false;
	ch->last_event = c;
	*cq = &c->ibv;
	*cq_context = c->ibv.cq_context;
	return 0;
}

void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* ---- asynchronous events ----------------------------------------------------------- */

/* Which member of the element union an event type uses (verbs.h). */
enum dropin_element { EL_NONE, EL_CQ, EL_QP, EL_SRQ, EL_WQ, EL_PORT };

static enum dropin_element
dropin_event_element(enum ibv_event_type t)
{
	switch (t) {
	case IBV_EVENT_CQ_ERR:
		return EL_CQ;
	case IBV_EVENT_QP_FATAL: case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR: case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED: case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR: case IBV_EVENT_QP_LAST_WQE_REACHED:
		return EL_QP;
	case IBV_EVENT_SRQ_ERR: case IBV_EVENT_SRQ_LIMIT_REACHED:
		return EL_SRQ;
	case IBV_EVENT_WQ_FATAL:
		return EL_WQ;
	case IBV_EVENT_PORT_ACTIVE: case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE: case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_SM_CHANGE: case IBV_EVENT_CLIENT_REREGISTER:
	case IBV_EVENT_GID_CHANGE:
		return EL_PORT;
	case IBV_EVENT_DEVICE_FATAL:
		break;
	}
	return EL_NONE;
}

/* droce's QP and CQ contexts point at the drop-in's objects (dropin_verbs.c). */
int
ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct droce_async_event ev;

	if (droce_get_async_event(dropin_dctx(context), &ev) != 0)
		return -1;
	memset(event, 0, sizeof(*event));
	event->event_type = (enum ibv_event_type)ev.event_type;
	switch (dropin_event_element(event->event_type)) {
	case EL_CQ:
		event->element.cq = &((struct dropin_cq *)ev.element.cq->cq_context)->ibv;
		break;
	case EL_QP:
		event->element.qp = &((struct dropin_qp *)ev.element.qp->qp_context)->ibv;
		break;
	case EL_PORT:
		event->element.port_num = ev.element.port_num;
		break;
	case EL_SRQ: case EL_WQ: case EL_NONE:
		break;
	}
	return 0;
}

void
ibv_ack_async_event(struct ibv_async_event *event)
{
	struct droce_async_event ev = {
		.event_type = (enum droce_event_type)event->event_type,
	};

	switch (dropin_event_element(event->event_type)) {
	case EL_CQ:
		ev.element.cq = DROPIN_OBJ_OF(dropin_cq, event->element.cq)->d;
		break;
	case EL_QP:
		ev.element.qp = DROPIN_OBJ_OF(dropin_qp, event->element.qp)->d;
		break;
	case EL_PORT:
		ev.element.port_num = event->element.port_num;
		break;
	case EL_SRQ: case EL_WQ: case EL_NONE:
		break;
	}
	droce_ack_async_event(&ev);
}
