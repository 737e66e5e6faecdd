/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_ep.c - rdma_create_ep(3) and rdma_get_request(3): librdmacm's
 * synchronous endpoints, made of the calls of rdmacm_id.c as librdmacm
 * makes them of its own (an id without a channel waits in each call for
 * the call's event).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdmacm_private.h"

/* rdma_create_ep's address and route resolution wait at most this long */
#define RDMACM_EP_TIMEOUT_MS 2000

static int
fail(int err)
{
	errno = err;
	return -1;
}

static struct rdmacm_id *
ep_of(struct rdma_cm_id *id)
{
	return (struct rdmacm_id *)id;
}

/* The passive endpoint's QP attributes, kept for its requests. */
static int
ep_keep(struct rdma_cm_id *id, struct ibv_pd *pd, const struct ibv_qp_init_attr *attr)
{
	struct rdmacm_id *ep = ep_of(id);

	ep->ep_attr = malloc(sizeof(*attr));
	if (ep->ep_attr == NULL)
		return fail(ENOMEM);
	*ep->ep_attr = *attr;
	ep->ep_pd = pd;
	return 0;
}

/*
 * A synchronous id: bound to res's source (passive, RAI_PASSIVE), else
 * resolved to its destination with a route; with qp_init_attr the active
 * side's QP on pd (NULL: the id's), and a passive side keeps it for each
 * request's id (rdma_get_request).
 */
int
rdma_create_ep(struct rdma_cm_id **out, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *id;
	int rc, err;

	if (out == NULL || res == NULL)
		return fail(EINVAL);
	if (rdma_create_id(NULL, &id, NULL, (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	if (res->ai_flags & RAI_PASSIVE) {
		rc = rdma_bind_addr(id, res->ai_src_addr);
		if (rc == 0 && qp_init_attr != NULL)
			rc = ep_keep(id, pd, qp_init_attr);
	} else {
		rc = rdma_resolve_addr(id, res->ai_src_len != 0 ? res->ai_src_addr : NULL,
				       res->ai_dst_addr, RDMACM_EP_TIMEOUT_MS);
		if (rc == 0)
			rc = rdma_resolve_route(id, RDMACM_EP_TIMEOUT_MS);
		if (rc == 0 && qp_init_attr != NULL)
			rc = rdma_create_qp(id, pd, qp_init_attr);
	}
	if (rc != 0) {
		err = errno;
		rdma_destroy_id(id);
		return fail(err);
	}
	*out = id;
	return 0;
}

/*
 * The next connection request of a synchronous listener: its id, on a
 * channel of its own (so that its rdma_accept waits for ESTABLISHED), with
 * the endpoint's QP when rdma_create_ep was given attributes; the request
 * event stays the new id's (acked by its next synchronous call or its
 * destroy).
 */
int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **out)
{
	struct rdmacm_id *l = ep_of(listen);
	struct ibv_qp_init_attr attr;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	int err = 0;

	if (listen == NULL || out == NULL || l->own_channel == NULL)
		return fail(EINVAL);
	if (listen->event != NULL) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &ev) != 0)
		return -1;
	if (ev->event == RDMA_CM_EVENT_REJECTED)
		err = ECONNREFUSED;
	else if (ev->status != 0)
		err = abs(ev->status);
	else if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		err = EINVAL;
	if (err != 0) {
		listen->event = ev;
		return fail(err);
	}
	id = ev->id;
	if (l->ep_attr != NULL)
		attr = *l->ep_attr;	/* (rdma_create_qp writes the caps granted) */
	if (rdma_migrate_id(id, NULL) != 0 ||
	    (l->ep_attr != NULL && rdma_create_qp(id, l->ep_pd, &attr) != 0)) {
		err = errno;
		rdma_ack_cm_event(ev);
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return fail(err);
	}
	id->event = ev;
	*out = id;
	return 0;
}
