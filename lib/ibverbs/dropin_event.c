/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_event.c - completion channels (asynchronous events: dropin_async.c).
 *
 * A completion channel is droce's (droce_create_comp_channel): channel->fd
 * is its eventfd, written by droce's engine when an armed CQ gets its
 * event (IBTA 11.4.2.2, solicited_only included), so a program may wait
 * for it with poll/epoll when droce runs a transport lcore
 * (--droce-transport-lcores).  In run-to-completion mode the engine runs
 * only inside verbs calls: ibv_get_cq_event runs it until an event is
 * there, and a program sleeping in poll() on the fd is not woken (no
 * other thread advances the transport).  ibv_destroy_cq waits for the
 * events taken to be acked, as rdma-core's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dropin_private.h"

struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct dropin_channel *ch = calloc(1, sizeof(*ch));

	if (ch == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	ch->d = droce_create_comp_channel(dropin_dctx(context));
	if (ch->d == NULL)
		return dropin_undo_alloc(ch);
	ch->ibv.context = context;
	ch->ibv.fd = ch->d->fd;
	return &ch->ibv;
}

int
ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct dropin_channel *ch = DROPIN_OBJ_OF(dropin_channel, channel);
	int rc = droce_destroy_comp_channel(ch->d);	/* EBUSY: CQs on it */

	if (rc != 0)
		return rc;
	free(ch);
	return 0;
}

struct droce_comp_channel *
dropin_channel_of(struct ibv_comp_channel *channel)
{
	return channel != NULL ? DROPIN_OBJ_OF(dropin_channel, channel)->d : NULL;
}

int
dropin_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	return droce_poll_cq(DROPIN_OBJ_OF(dropin_cq, cq)->d, num_entries,
			     (struct droce_wc *)wc);
}

int
dropin_req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	return droce_req_notify_cq(DROPIN_OBJ_OF(dropin_cq, cq)->d, solicited_only);
}

int
ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq,
		 void **cq_context)
{
	struct droce_cq *d;
	void *dctx;
	struct dropin_cq *c;

	if (droce_get_cq_event(DROPIN_OBJ_OF(dropin_channel, channel)->d, &d, &dctx) != 0)
		return -1;		/* errno: EAGAIN (O_NONBLOCK), ... */
	c = dctx;			/* droce's cq_context: the drop-in's CQ */
	*cq = &c->ibv;
	*cq_context = c->ibv.cq_context;
	return 0;
}

void
ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_mutex_unlock(&cq->mutex);
	droce_ack_cq_events(DROPIN_OBJ_OF(dropin_cq, cq)->d, nevents);
}

/* ---- asynchronous events ----------------------------------------------------------- */

/* Which member of the element union an event type uses (verbs.h). */
enum dropin_element
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
