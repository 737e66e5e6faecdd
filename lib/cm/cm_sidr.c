/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_sidr.c - UD ids (RDMA_PS_UDP, RDMA_PS_IPOIB): Service ID Resolution
 * of IBTA 12.11, as the kernel's rdma_cm does it for those port spaces.
 *
 * The active side's connect sends a SIDR_REQ (its Request ID a comm ID of
 * the agent's, so that droced routes the answer by it; annex A11's header
 * before the consumer's private data) and resends it every CM response
 * timeout, max_retries times, then raises UNREACHABLE (-ETIMEDOUT).  The
 * passive side raises CONNECT_REQUEST on a new id; accept answers a
 * SIDR_REP with status 0, the QP's number and the Q_Key RDMA_UDP_QKEY,
 * reject one with status 2 "rejected" (12.11.2, table 122), and the id
 * keeps it for a duplicate SIDR_REQ (its first answer was lost).  A SIDR_REQ
 * for a port nobody listens on is held as a REQ is (cm_proto.c), then
 * answered status 1 "service ID not supported", as the kernel's ib_cm at
 * once.  The requester's id gets ESTABLISHED with the peer's QPN, Q_Key and
 * the address vector to it, or UNREACHABLE with the SIDR_REP's status.
 * A UD id's QP goes to RTS when the id gets it, as librdmacm's
 * ucma_init_ud_qp: a UD QP needs no peer to send.
 */
#include <errno.h>
#include <string.h>

#include "cm_private.h"

static void
sidr_hdr(uint8_t *mad, uint16_t attr, uint64_t tid)
{
	struct cm_mad_hdr h = { .method = CM_MAD_METHOD_SEND, .tid = tid, .attr_id = attr };

	cm_mad_put_hdr(mad, &h);
}

static bool
ud_space(uint64_t service_id)
{
	return service_id >> 16 == CM_PS_UDP || service_id >> 16 == CM_PS_IPOIB;
}

/* A SIDR_REP into mad: the SIDR_REQ's TID and Request ID (12.11.2). */
static void
rep_mad(uint8_t *mad, uint64_t tid, uint32_t request_id, uint64_t service_id,
	uint8_t status, uint32_t qpn, const void *pdata, uint8_t len)
{
	struct cm_sidr_rep rep = {
		.request_id = request_id, .status = status, .service_id = service_id,
		.qpn = status == CM_SIDR_OK ? qpn : 0,
		.qkey = status == CM_SIDR_OK ? DROCE_RDMA_UDP_QKEY : 0,
	};

	if (len != 0)
		memcpy(rep.pdata, pdata, len);
	sidr_hdr(mad, CM_ATTR_SIDR_REP, tid);
	cm_sidr_rep_put(mad, &rep);
}

static void
send_status(struct cm_agent *a, const uint8_t gid[16], uint64_t tid, uint32_t request_id,
	    uint64_t service_id, uint8_t status)
{
	uint8_t mad[CM_MAD_LEN];

	rep_mad(mad, tid, request_id, service_id, status, 0, NULL, 0);
	cm_gsi_send(a, gid, mad);
}

/* a UD QP needs no peer: INIT with the id's Q_Key, then RTR and RTS as they are */
static int
ud_qp_attr(enum droce_qp_state state, struct droce_qp_attr *attr, int *mask)
{
	*attr = (struct droce_qp_attr){ .qp_state = state };
	switch (state) {
	case DROCE_QPS_INIT:
		attr->pkey_index = 0;
		attr->port_num = 1;
		attr->qkey = DROCE_RDMA_UDP_QKEY;
		*mask = DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT | DROCE_QP_QKEY;
		return 0;
	case DROCE_QPS_RTR:
		*mask = DROCE_QP_STATE;
		return 0;
	case DROCE_QPS_RTS:
		attr->sq_psn = 0;
		*mask = DROCE_QP_STATE | DROCE_QP_SQ_PSN;
		return 0;
	default:
		return EINVAL;
	}
}

int
cm_sidr_init_qp_attr(struct cm_id *id, struct droce_qp_attr *attr, int *mask)
{
	if (id->pub.verbs == NULL)
		return EINVAL;
	return ud_qp_attr(attr->qp_state, attr, mask);
}

int
cm_sidr_qp_ready(struct droce_qp *qp)
{
	static const enum droce_qp_state steps[] = {
		DROCE_QPS_INIT, DROCE_QPS_RTR, DROCE_QPS_RTS,
	};
	struct droce_qp_attr at;
	int mask, rc = 0;

	for (unsigned int i = 0; i < sizeof(steps) / sizeof(steps[0]) && rc == 0; i++) {
		rc = ud_qp_attr(steps[i], &at, &mask);
		if (rc == 0)
			rc = droce_modify_qp(qp, &at, mask);
	}
	return rc;
}

/* ---- active side ----------------------------------------------------------- */

int
cm_sidr_connect(struct cm_id *id, const struct droce_rdma_conn_param *p)
{
	uint8_t len = p != NULL ? p->private_data_len : 0;
	struct cm_sidr_req req = { .pkey = 0xffff };
	struct cm_ip_hdr ih;

	if (id->state != CM_ROUTE_RESOLVED || len > CM_SIDR_REQ_PDATA - CM_IP_HDR_LEN ||
	    (len != 0 && p->private_data == NULL))
		return EINVAL;
	id->local_comm_id = cm_next_comm_id(id->agent);
	if (id->local_comm_id == 0)
		return ENOMEM;
	req.request_id = id->local_comm_id;
	req.service_id = (uint64_t)id->pub.ps << 16 | cm_dst_port(id);
	cm_ip_hdr_of(id, &ih);
	cm_ip_hdr_put(req.pdata, &ih);
	if (len != 0)
		memcpy(req.pdata + CM_IP_HDR_LEN, p->private_data, len);
	sidr_hdr(id->mad, CM_ATTR_SIDR_REQ, (uint64_t)id->local_comm_id << 32 | ++id->tid);
	cm_sidr_req_put(id->mad, &req);
	id->state = CM_REQ_SENT;
	id->retries_left = id->max_retries;
	id->deadline_ns = cm_now_ns() + cm_timeout_ns(id->cm_timeout);
	cm_gsi_send(id->agent, id->remote_gid, id->mad);
	return 0;
}

/* UNREACHABLE or ESTABLISHED, the SIDR_REP's private data (if any) in param.ud */
static struct cm_event *
ud_event(struct cm_id *id, enum droce_rdma_cm_event_type type, int status,
	 const uint8_t *pdata, uint8_t len)
{
	struct cm_event *ev;

	if (cm_event_post(id, type, status, pdata, len) != 0)
		return NULL;
	ev = cm_event_last(id);
	memset(&ev->pub.param, 0, sizeof(ev->pub.param));
	if (len != 0) {
		ev->pub.param.ud.private_data = ev->pdata;
		ev->pub.param.ud.private_data_len = len;
	}
	return ev;
}

void
cm_sidr_recv_rep(struct cm_agent *a, const uint8_t *mad)
{
	struct cm_sidr_rep rep;
	struct droce_ah_attr *ah;
	struct cm_event *ev;
	struct cm_id *id;
	int sgid;

	cm_sidr_rep_get(mad, &rep);
	id = cm_find_local(a, rep.request_id);
	if (id == NULL || !cm_id_is_ud(id) || id->state != CM_REQ_SENT)
		return;		/* a duplicate, or nobody's */
	id->deadline_ns = 0;
	sgid = cm_gid_index(a, id->local_gid);
	if (rep.status != CM_SIDR_OK || sgid < 0) {
		id->state = CM_CLOSED;
		ud_event(id, DROCE_RDMA_CM_EVENT_UNREACHABLE,
			 rep.status != CM_SIDR_OK ? rep.status : -EADDRNOTAVAIL,
			 rep.pdata, CM_SIDR_REP_PDATA);
		return;
	}
	id->state = CM_SIDR_DONE;
	ev = ud_event(id, DROCE_RDMA_CM_EVENT_ESTABLISHED, 0, rep.pdata, CM_SIDR_REP_PDATA);
	if (ev == NULL)
		return;
	ev->pub.param.ud.qp_num = rep.qpn;
	ev->pub.param.ud.qkey = rep.qkey;
	/* the path the SIDR_REQ took (RoCEv2: the GIDs are the addresses) */
	ah = &ev->pub.param.ud.ah_attr;
	ah->is_global = 1;
	ah->port_num = 1;
	memcpy(ah->grh.dgid.raw, id->remote_gid, 16);
	ah->grh.sgid_index = (uint8_t)sgid;
	ah->grh.hop_limit = CM_HOP_LIMIT;
}

void
cm_sidr_timer(struct cm_id *id, uint64_t now)
{
	if (id->state != CM_REQ_SENT) {
		id->deadline_ns = 0;
		return;
	}
	if (id->retries_left == 0) {
		/* no answer: the kernel's IB_CM_SIDR_REQ_ERROR */
		id->deadline_ns = 0;
		id->state = CM_CLOSED;
		ud_event(id, DROCE_RDMA_CM_EVENT_UNREACHABLE, -ETIMEDOUT, NULL, 0);
		return;
	}
	id->retries_left--;
	id->deadline_ns = now + cm_timeout_ns(id->cm_timeout);
	cm_gsi_send(id->agent, id->remote_gid, id->mad);
}

/* ---- passive side ------------------------------------------------------------ */

/* Held for a listener to come (cm_proto.c's hold): false if no room. */
static bool
hold(struct cm_agent *a, const uint8_t src_gid[16], const uint8_t dst_gid[16], uint64_t tid,
     const struct cm_sidr_req *req, const uint8_t *mad)
{
	struct cm_held_req *r;

	for (unsigned int i = 0; i < CM_HELD_REQS; i++)
		if (a->held[i].deadline_ns != 0 && a->held[i].comm_id == req->request_id &&
		    memcmp(a->held[i].src_gid, src_gid, 16) == 0)
			return true;	/* a retransmission of one held */
	r = cm_proto_hold_slot(a);
	if (r == NULL)
		return false;
	*r = (struct cm_held_req){
		.deadline_ns = cm_now_ns() + CM_REQ_HOLD_NS, .tid = tid,
		.comm_id = req->request_id, .ps = (uint16_t)(req->service_id >> 16),
		.port = (uint16_t)req->service_id,
	};
	memcpy(r->src_gid, src_gid, 16);
	memcpy(r->dst_gid, dst_gid, 16);
	memcpy(r->mad, mad, CM_MAD_LEN);
	return true;
}

void
cm_sidr_refuse(struct cm_agent *a, const struct cm_held_req *r)
{
	struct cm_sidr_req req;

	cm_sidr_req_get(r->mad, &req);
	send_status(a, r->src_gid, r->tid, req.request_id, req.service_id, CM_SIDR_UNSUPPORTED);
}

void
cm_sidr_recv_req(struct cm_agent *a, const uint8_t src_gid[16], const uint8_t dst_gid[16],
		 const struct cm_mad_hdr *h, const uint8_t *mad)
{
	struct cm_sidr_req req;
	struct cm_ip_hdr ih;
	struct cm_id *id, *lis;
	struct cm_event *ev;

	cm_sidr_req_get(mad, &req);
	id = cm_find_remote(a, src_gid, req.request_id);
	if (id != NULL) {
		/* a duplicate: our SIDR_REP was lost; waiting for the consumer,
		 * the requester's timer covers it */
		if (cm_id_is_ud(id) && id->state == CM_SIDR_DONE)
			cm_gsi_send(a, src_gid, id->mad);
		return;
	}
	if (!ud_space(req.service_id) || cm_ip_hdr_get(req.pdata, &ih) != 0) {
		send_status(a, src_gid, h->tid, req.request_id, req.service_id,
			    CM_SIDR_UNSUPPORTED);
		return;
	}
	lis = cm_find_listener(a, (uint16_t)req.service_id, (uint16_t)(req.service_id >> 16));
	if (lis == NULL) {
		if (!hold(a, src_gid, dst_gid, h->tid, &req, mad))
			send_status(a, src_gid, h->tid, req.request_id, req.service_id,
				    CM_SIDR_UNSUPPORTED);
		return;
	}
	id = cm_new_passive(lis, a);
	if (id == NULL) {
		send_status(a, src_gid, h->tid, req.request_id, req.service_id, CM_SIDR_NO_QP);
		return;
	}
	id->remote_comm_id = req.request_id;
	id->tid = h->tid;
	memcpy(id->remote_gid, src_gid, 16);
	memcpy(id->local_gid, dst_gid, 16);
	id->state = CM_REQ_RCVD;
	/* the consumer's private data: after annex A11's header (cma.c) */
	ev = ud_event(id, DROCE_RDMA_CM_EVENT_CONNECT_REQUEST, 0, req.pdata + CM_IP_HDR_LEN,
		      CM_SIDR_REQ_PDATA - CM_IP_HDR_LEN);
	if (ev != NULL)
		ev->pub.listen_id = &lis->pub;
}

/* The SIDR_REP, kept in id->mad for a duplicate SIDR_REQ. */
static int
answer(struct cm_id *id, uint8_t status, uint32_t qpn, const struct droce_rdma_conn_param *p)
{
	uint8_t len = p != NULL ? p->private_data_len : 0;

	if (id->state != CM_REQ_RCVD || len > CM_SIDR_REP_PDATA ||
	    (len != 0 && p->private_data == NULL))
		return EINVAL;
	rep_mad(id->mad, id->tid, id->remote_comm_id, (uint64_t)id->pub.ps << 16 | id->port,
		status, qpn, len != 0 ? p->private_data : NULL, len);
	id->state = CM_SIDR_DONE;
	cm_gsi_send(id->agent, id->remote_gid, id->mad);
	return 0;
}

int
cm_sidr_accept(struct cm_id *id, const struct droce_rdma_conn_param *p)
{
	uint32_t qpn = id->pub.qp != NULL ? id->pub.qp->qp_num : p != NULL ? p->qp_num : 0;

	if (qpn == 0 || qpn > 0xffffff)
		return EINVAL;
	return answer(id, CM_SIDR_OK, qpn, p);
}

int
cm_sidr_reject(struct cm_id *id, const struct droce_rdma_conn_param *p)
{
	return answer(id, CM_SIDR_REJECT, 0, p);
}
