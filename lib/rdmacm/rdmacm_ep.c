/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_ep.c - librdmacm's endpoint calls (rdma_create_ep, the
 * synchronous listener's rdma_get_request), the program moving its own QP
 * (rdma_init_qp_attr, rdma_establish, rdma_notify), an id's SRQ, options
 * and ECE, on this library's ids (rdmacm_id.c) and lib/cm.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/rdma_verbs.h>

#include "dropin_private.h"
#include "rdmacm_private.h"

/* the timeout librdmacm's rdma_create_ep gives address and route */
#define EP_RESOLVE_MS 2000

/* A passive endpoint: bound to res' source; each request's QP as asked. */
static int
ep_passive(struct rdma_cm_id *id, const struct rdma_addrinfo *res, struct ibv_pd *pd,
	   const struct ibv_qp_init_attr *qp_init_attr)
{
	if (rdma_bind_addr(id, res->ai_src_addr) != 0)
		return -1;
	if (pd != NULL)
		id->pd = pd;
	if (qp_init_attr == NULL)
		return 0;
	rdmacm_id_of(id)->request_qp = malloc(sizeof(*qp_init_attr));
	if (rdmacm_id_of(id)->request_qp == NULL)
		return rdmacm_fail(ENOMEM);
	*rdmacm_id_of(id)->request_qp = *qp_init_attr;
	rdmacm_id_of(id)->request_qp->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	return 0;
}

/* An active endpoint: address and route resolved, its QP made. */
static int
ep_active(struct rdma_cm_id *id, const struct rdma_addrinfo *res, struct ibv_pd *pd,
	  struct ibv_qp_init_attr *qp_init_attr)
{
	if (rdma_resolve_addr(id, res->ai_src_addr, res->ai_dst_addr, EP_RESOLVE_MS) != 0 ||
	    rdma_resolve_route(id, EP_RESOLVE_MS) != 0)
		return -1;
	if (qp_init_attr == NULL)
		return 0;
	qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	return rdma_create_qp(id, pd, qp_init_attr);
}

/* A synchronous id (its own channel) made ready as rdma_getaddrinfo's res
 * says: listening side (RAI_PASSIVE) or connecting side. */
int
rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
	       struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *c;
	int rc;

	if (id == NULL || res == NULL)
		return rdmacm_fail(EINVAL);
	if (rdma_create_id(NULL, &c, NULL, (enum rdma_port_space)res->ai_port_space) != 0)
		return -1;
	rc = (res->ai_flags & RAI_PASSIVE) ? ep_passive(c, res, pd, qp_init_attr) :
					     ep_active(c, res, pd, qp_init_attr);
	if (rc != 0) {
		int err = errno;

		rdma_destroy_ep(c);
		return rdmacm_fail(err);
	}
	*id = c;
	return 0;
}

void
rdma_destroy_ep(struct rdma_cm_id *pub)
{
	if (pub == NULL)
		return;
	rdma_destroy_qp(pub);
	if (pub->srq != NULL)
		rdma_destroy_srq(pub);
	free(rdmacm_id_of(pub)->request_qp);
	rdmacm_id_of(pub)->request_qp = NULL;
	rdma_destroy_id(pub);
}

/*
 * A synchronous listener's next connection request: the new id (its
 * CONNECT_REQUEST event in id->event until its next call) is synchronous
 * too, and has its QP when rdma_create_ep was given QP attributes.
 */
int
rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct rdma_cm_event *ev;
	int err;

	if (listen == NULL || id == NULL || rdmacm_id_of(listen)->own_channel == NULL)
		return rdmacm_fail(EINVAL);
	if (listen->event != NULL) {
		rdma_ack_cm_event(listen->event);
		listen->event = NULL;
	}
	if (rdma_get_cm_event(listen->channel, &ev) != 0)
		return -1;
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST || ev->status != 0) {
		err = ev->event == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED :
		      ev->status != 0 ? abs(ev->status) : EINVAL;
		listen->event = ev;
		return rdmacm_fail(err);
	}
	if (rdma_migrate_id(ev->id, NULL) != 0)
		goto refuse;
	if (rdmacm_id_of(listen)->request_qp != NULL) {
		struct ibv_qp_init_attr attr = *rdmacm_id_of(listen)->request_qp;

		if (rdma_create_qp(ev->id, listen->pd, &attr) != 0)
			goto refuse;
	}
	*id = ev->id;
	(*id)->event = ev;
	return 0;
refuse:
	err = errno;
	rdma_reject(ev->id, NULL, 0);
	rdma_ack_cm_event(ev);
	return rdmacm_fail(err);
}

/* ---- the program's own QP ---------------------------------------------------- */

int
rdma_init_qp_attr(struct rdma_cm_id *pub, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	if (pub == NULL || qp_attr == NULL || qp_attr_mask == NULL)
		return rdmacm_fail(EINVAL);
	/* the same layout and values (lib/ibverbs' dropin_verbs.c asserts) */
	return droce_rdma_init_qp_attr(rdmacm_id_of(pub)->d, (struct droce_qp_attr *)qp_attr,
				       qp_attr_mask);
}

int
rdma_establish(struct rdma_cm_id *pub)
{
	if (pub == NULL || pub->qp != NULL)
		return rdmacm_fail(EINVAL);
	return droce_rdma_establish(rdmacm_id_of(pub)->d);
}

int
rdma_notify(struct rdma_cm_id *pub, enum ibv_event_type event)
{
	if (pub == NULL)
		return rdmacm_fail(EINVAL);
	return droce_rdma_notify(rdmacm_id_of(pub)->d, (enum droce_event_type)event);
}

/* ---- an id's SRQ ------------------------------------------------------------- */

int
rdma_create_srq_ex(struct rdma_cm_id *pub, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq *srq;

	if (pub == NULL || attr == NULL || pub->verbs == NULL || pub->srq != NULL ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE))
		return rdmacm_fail(EINVAL);
	if (attr->srq_type != IBV_SRQT_BASIC)
		return rdmacm_fail(EOPNOTSUPP);	/* no XRC on droce */
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->pd = pub->pd;
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	if (attr->pd == NULL)
		return rdmacm_fail(EINVAL);
	srq = ibv_create_srq_ex(pub->verbs, attr);
	if (srq == NULL)
		return -1;
	if (pub->pd == NULL)
		pub->pd = attr->pd;
	pub->srq = srq;
	return 0;
}

int
rdma_create_srq(struct rdma_cm_id *pub, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex ex = { 0 };
	int rc;

	if (attr == NULL)
		return rdmacm_fail(EINVAL);
	ex.srq_context = attr->srq_context;
	ex.attr = attr->attr;
	ex.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	ex.srq_type = IBV_SRQT_BASIC;
	ex.pd = pd;
	rc = rdma_create_srq_ex(pub, &ex);
	attr->attr = ex.attr;	/* the sizes granted */
	return rc;
}

void
rdma_destroy_srq(struct rdma_cm_id *pub)
{
	if (pub == NULL || pub->srq == NULL)
		return;
	ibv_destroy_srq(pub->srq);
	pub->srq = NULL;
}

/* ---- options and ECE ------------------------------------------------------- */

static int
option_u8(const void *optval, size_t optlen, uint8_t *v)
{
	if (optval == NULL || optlen != sizeof(uint8_t))
		return rdmacm_fail(EINVAL);
	*v = *(const uint8_t *)optval;
	return 0;
}

static int
option_int(const void *optval, size_t optlen, int *v)
{
	if (optval == NULL || optlen != sizeof(int))
		return rdmacm_fail(EINVAL);
	memcpy(v, optval, sizeof(*v));
	return 0;
}

/*
 * The kernel's RDMA_OPTION_ID options: TOS (the connection's traffic
 * class) and ACK_TIMEOUT (its QP's local ACK timeout) are lib/cm's.
 * REUSEADDR either way: lib/cm refuses only a second listener on a port
 * (EADDRINUSE), never a bind, and keeps no port in a time-wait.  AFONLY 0
 * is what lib/cm does (a wildcard listener takes both families); 1 it
 * cannot (EOPNOTSUPP).  RDMA_OPTION_IB_PATH has no meaning on RoCE.
 */
int
rdma_set_option(struct rdma_cm_id *pub, int level, int optname, void *optval, size_t optlen)
{
	uint8_t u8;
	int v;

	if (pub == NULL)
		return rdmacm_fail(EINVAL);
	if (level == RDMA_OPTION_IB)
		return rdmacm_fail(optname == RDMA_OPTION_IB_PATH ? EOPNOTSUPP : ENOSYS);
	if (level != RDMA_OPTION_ID)
		return rdmacm_fail(ENOSYS);
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		return option_u8(optval, optlen, &u8) != 0 ? -1 :
		       droce_rdma_set_tos(rdmacm_id_of(pub)->d, u8);
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		return option_u8(optval, optlen, &u8) != 0 ? -1 :
		       droce_rdma_set_ack_timeout(rdmacm_id_of(pub)->d, u8);
	case RDMA_OPTION_ID_REUSEADDR:
		return option_int(optval, optlen, &v);
	case RDMA_OPTION_ID_AFONLY:
		if (option_int(optval, optlen, &v) != 0)
			return -1;
		return v == 0 ? 0 : rdmacm_fail(EOPNOTSUPP);
	default:
		return rdmacm_fail(ENOSYS);
	}
}

/*
 * Enhanced connection establishment (ECE): droce's QPs have no vendor
 * options (ibv_query_ece / ibv_set_ece: EOPNOTSUPP), so its REQ and REP
 * offer none and a peer's are never taken, as librdmacm on a provider
 * without ECE: the local ECE of an id without a QP is accepted (there is
 * nothing to offer), the remote one reads as none (vendor 0), and there
 * is never a mismatch to reject (rdma_reject_ece: EOPNOTSUPP).
 */
int
rdma_set_local_ece(struct rdma_cm_id *pub, struct ibv_ece *ece)
{
	if (pub == NULL || pub->qp != NULL || ece == NULL)
		return rdmacm_fail(EINVAL);
	return 0;
}

int
rdma_get_remote_ece(struct rdma_cm_id *pub, struct ibv_ece *ece)
{
	if (pub == NULL || pub->qp != NULL || ece == NULL)
		return rdmacm_fail(EINVAL);
	memset(ece, 0, sizeof(*ece));
	return 0;
}

int
rdma_reject_ece(struct rdma_cm_id *pub, const void *private_data, uint8_t private_data_len)
{
	(void)private_data, (void)private_data_len;
	return rdmacm_fail(pub == NULL ? EINVAL : EOPNOTSUPP);
}
