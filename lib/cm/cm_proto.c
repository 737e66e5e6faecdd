/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * cm_proto.c - the CM state machine of IBTA 12.9 (active and passive),
 * one function per received message and one per local action.  MADs a
 * timer waits on (REQ, REP, DREQ) stay in id->mad and are resent every
 * CM response timeout, max_retries times (12.9.3, 12.9.5, 12.9.8).
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "cm_private.h"

static void
arm(struct cm_id *id, uint8_t timeout)
{
	id->retries_left = id->max_retries;
	id->deadline_ns = cm_now_ns() + cm_timeout_ns(timeout);
}

static void
send_kept(struct cm_id *id)
{
	cm_gsi_send(id->agent, id->remote_gid, id->mad);
}

static void
mad_hdr(uint8_t *mad, uint16_t attr, uint64_t tid)
{
	struct cm_mad_hdr h = { .method = CM_MAD_METHOD_SEND, .tid = tid, .attr_id = attr };

	cm_mad_put_hdr(mad, &h);
}

static uint64_t
new_tid(struct cm_id *id)
{
	return (uint64_t)id->local_comm_id << 32 | (uint32_t)++id->tid;
}

static uint32_t
random_psn(void)
{
	uint32_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		v = (uint32_t)cm_now_ns();
	return v & 0xffffff;
}

static void
send_rej(struct cm_agent *a, const uint8_t gid[16], uint64_t tid, uint32_t local,
	 uint32_t remote, enum cm_msg_ref msg, uint16_t reason, const void *pdata,
	 uint8_t len)
{
	struct cm_rej rej = {
		.local_comm_id = local, .remote_comm_id = remote,
		.msg_rejected = msg, .reason = reason,
	};
	uint8_t mad[CM_MAD_LEN];

	if (len != 0)
		memcpy(rej.pdata, pdata, len < CM_REJ_PDATA ? len : CM_REJ_PDATA);
	mad_hdr(mad, CM_ATTR_REJ, tid);
	cm_rej_put(mad, &rej);
	cm_gsi_send(a, gid, mad);
}

static void
send_drep(struct cm_agent *a, const uint8_t gid[16], uint64_t tid, uint32_t local,
	  uint32_t remote)
{
	struct cm_rtu drep = { .local_comm_id = local, .remote_comm_id = remote };
	uint8_t mad[CM_MAD_LEN];

	mad_hdr(mad, CM_ATTR_DREP, tid);
	cm_rtu_put(mad, &drep);
	cm_gsi_send(a, gid, mad);
}

/* ---- the QP through INIT -> RTR -> RTS (IBTA 12.9.2, table 91) ----------- */

/* RTR's attributes (table 91): the path, the peer's QPN and PSN. */
static int
rtr_attr(const struct cm_id *id, struct droce_qp_attr *at)
{
	const struct cm_qp_params *p = &id->qp;
	int sgid = cm_gid_index(id->agent, id->local_gid);

	if (sgid < 0)
		return EINVAL;
	*at = (struct droce_qp_attr){
		.qp_state = DROCE_QPS_RTR, .path_mtu = p->mtu,
		.dest_qp_num = p->remote_qpn, .rq_psn = p->rq_psn,
		.max_dest_rd_atomic = p->responder_resources,
		.min_rnr_timer = CM_MIN_RNR_TIMER,
		.qp_access_flags = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
				   (p->responder_resources != 0 ?
				    DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC : 0),
		.ah_attr = { .is_global = 1, .port_num = 1 },
	};
	memcpy(at->ah_attr.grh.dgid.raw, id->remote_gid, 16);
	at->ah_attr.grh.sgid_index = (uint8_t)sgid;
	at->ah_attr.grh.hop_limit = CM_HOP_LIMIT;
	at->ah_attr.grh.traffic_class = id->tos;
	return 0;
}

#define RTR_MASK (DROCE_QP_STATE | DROCE_QP_AV | DROCE_QP_PATH_MTU | DROCE_QP_DEST_QPN | \
		  DROCE_QP_RQ_PSN | DROCE_QP_MAX_DEST_RD_ATOMIC | DROCE_QP_MIN_RNR_TIMER | \
		  DROCE_QP_ACCESS_FLAGS)
#define RTS_MASK (DROCE_QP_STATE | DROCE_QP_SQ_PSN | DROCE_QP_TIMEOUT | DROCE_QP_RETRY_CNT | \
		  DROCE_QP_RNR_RETRY | DROCE_QP_MAX_QP_RD_ATOMIC)

static void
rts_attr(const struct cm_id *id, struct droce_qp_attr *at)
{
	const struct cm_qp_params *p = &id->qp;

	at->qp_state = DROCE_QPS_RTS;
	at->sq_psn = p->sq_psn;
	at->timeout = id->ack_timeout != 0 ? id->ack_timeout : p->ack_timeout;
	at->retry_cnt = p->retry_count;
	at->rnr_retry = p->rnr_retry;
	at->max_rd_atomic = p->initiator_depth;
}

static int
qp_to_rts(struct cm_id *id)
{
	struct droce_qp_attr at;
	int rc;

	if (id->pub.qp == NULL)
		return EINVAL;
	rc = rtr_attr(id, &at);
	if (rc == 0)
		rc = droce_modify_qp(id->pub.qp, &at, RTR_MASK);
	if (rc != 0)
		return rc;
	rts_attr(id, &at);
	return droce_modify_qp(id->pub.qp, &at, RTS_MASK);
}

/* the QP number the REQ / REP carries: the id's QP's or the caller's */
static uint32_t
local_qpn(const struct cm_id *id)
{
	return id->pub.qp != NULL ? id->pub.qp->qp_num : id->ext_qpn;
}

/* connect / accept without an id's QP: the caller's, named by p->qp_num */
static bool
take_ext_qpn(struct cm_id *id, const struct droce_rdma_conn_param *p)
{
	if (id->pub.qp != NULL)
		return true;
	if (p == NULL || p->qp_num == 0 || p->qp_num > 0xffffff)
		return false;
	id->ext_qpn = p->qp_num;
	return true;
}

static void
qp_to_err(struct cm_id *id)
{
	struct droce_qp_attr at = { .qp_state = DROCE_QPS_ERR };

	if (id->pub.qp != NULL)
		droce_modify_qp(id->pub.qp, &at, DROCE_QP_STATE);
}

static uint8_t
clamp_rd(uint8_t v)
{
	return v > DROCE_MAX_RD_ATOMIC ? DROCE_MAX_RD_ATOMIC : v;
}

/* ---- active side ----------------------------------------------------------- */

static void
ip_hdr_of(const struct cm_id *id, struct cm_ip_hdr *h)
{
	bool v4 = cm_gid_is_v4(id->local_gid);

	memset(h, 0, sizeof(*h));
	h->ip_version = v4 ? 4 : 6;
	h->src_port = id->port;
	if (v4) {
		memcpy(h->src + 12, id->local_gid + 12, 4);
		memcpy(h->dst + 12, id->remote_gid + 12, 4);
	} else {
		memcpy(h->src, id->local_gid, 16);
		memcpy(h->dst, id->remote_gid, 16);
	}
}

static uint16_t
dst_port(const struct cm_id *id)
{
	const union droce_rdma_sockaddr *ss = &id->pub.route.addr.dst_addr;
	const uint8_t *p = (const uint8_t *)ss + 2;	/* sin_port / sin6_port */

	return (uint16_t)(p[0] << 8 | p[1]);
}

int
cm_proto_connect(struct cm_id *id, const struct droce_rdma_conn_param *p)
{
	struct cm_req req = { 0 };
	struct cm_ip_hdr ih;

	if (id->state != CM_ROUTE_RESOLVED || p == NULL || !take_ext_qpn(id, p) ||
	    p->srq != 0 || p->private_data_len > CM_REQ_PDATA - CM_IP_HDR_LEN)
		return EINVAL;
	id->local_comm_id = cm_next_comm_id(id->agent);
	if (id->local_comm_id == 0)
		return ENOMEM;
	id->qp = (struct cm_qp_params){
		.rq_psn = random_psn(), .mtu = id->agent->mtu,
		.responder_resources = clamp_rd(p->responder_resources),
		.initiator_depth = clamp_rd(p->initiator_depth),
		.retry_count = p->retry_count > 7 ? 7 : p->retry_count,
		.ack_timeout = id->ack_timeout != 0 ? id->ack_timeout : CM_ACK_TIMEOUT,
	};
	req.local_comm_id = id->local_comm_id;
	req.service_id = (uint64_t)CM_PS_TCP << 16 | dst_port(id);
	req.local_ca_guid = id->agent->guid;
	req.local_qpn = local_qpn(id);
	req.responder_resources = id->qp.responder_resources;
	req.initiator_depth = id->qp.initiator_depth;
	req.remote_cm_timeout = id->cm_timeout;
	req.local_cm_timeout = id->cm_timeout;
	req.starting_psn = id->qp.rq_psn;
	req.retry_count = id->qp.retry_count;
	req.pkey = 0xffff;
	req.path_mtu = (uint8_t)id->qp.mtu;
	req.rnr_retry = p->rnr_retry_count > 7 ? 7 : p->rnr_retry_count;
	req.max_cm_retries = id->max_retries;
	req.primary.local_lid = 0xffff;		/* permissive: RoCE has no LIDs */
	req.primary.remote_lid = 0xffff;
	memcpy(req.primary.local_gid, id->local_gid, 16);
	memcpy(req.primary.remote_gid, id->remote_gid, 16);
	req.primary.hop_limit = CM_HOP_LIMIT;
	req.primary.traffic_class = id->tos;
	req.primary.local_ack_timeout = id->qp.ack_timeout;
	ip_hdr_of(id, &ih);
	cm_ip_hdr_put(req.pdata, &ih);
	if (p->private_data_len != 0)
		memcpy(req.pdata + CM_IP_HDR_LEN, p->private_data, p->private_data_len);
	mad_hdr(id->mad, CM_ATTR_REQ, new_tid(id));
	cm_req_put(id->mad, &req);
	id->state = CM_REQ_SENT;
	arm(id, id->cm_timeout);
	send_kept(id);
	return 0;
}

static void
conn_event(struct cm_id *id, enum droce_rdma_cm_event_type type, int status,
	   const uint8_t *pdata, uint8_t len, uint8_t resp_res, uint8_t init_depth)
{
	struct cm_event *ev;

	if (cm_event_post(id, type, status, pdata, len) != 0)
		return;
	ev = cm_event_last(id);
	ev->pub.param.conn.responder_resources = resp_res;
	ev->pub.param.conn.initiator_depth = init_depth;
}

/* the RTU, kept to answer a duplicate REP (12.9.5.1); established */
static void
send_rtu(struct cm_id *id)
{
	struct cm_rtu rtu = { 0 };

	rtu.local_comm_id = id->local_comm_id;
	rtu.remote_comm_id = id->remote_comm_id;
	mad_hdr(id->mad, CM_ATTR_RTU, new_tid(id));
	cm_rtu_put(id->mad, &rtu);
	send_kept(id);
	id->state = CM_ESTABLISHED;
}

static void
recv_rep(struct cm_agent *a, const uint8_t *mad)
{
	struct cm_rep rep;
	struct cm_id *id;

	cm_rep_get(mad, &rep);
	id = cm_find_local(a, rep.remote_comm_id);
	if (id == NULL)
		return;
	/* a duplicate REP: the RTU was lost (12.9.5.1) */
	if (id->state == CM_ESTABLISHED && rep.local_comm_id == id->remote_comm_id) {
		send_kept(id);
		return;
	}
	if (id->state != CM_REQ_SENT)
		return;
	id->remote_comm_id = rep.local_comm_id;
	id->qp.remote_qpn = rep.local_qpn;
	id->qp.sq_psn = rep.starting_psn;
	id->qp.initiator_depth = rep.responder_resources < id->qp.initiator_depth ?
				 rep.responder_resources : id->qp.initiator_depth;
	id->qp.rnr_retry = rep.rnr_retry;
	id->deadline_ns = 0;
	if (id->pub.qp == NULL) {
		/* the caller moves its QP, then establishes (librdmacm's
		 * CONNECT_RESPONSE of an id without a QP) */
		id->state = CM_REP_RCVD;
		conn_event(id, DROCE_RDMA_CM_EVENT_CONNECT_RESPONSE, 0, rep.pdata, CM_REP_PDATA,
			   rep.responder_resources, rep.initiator_depth);
		return;
	}
	if (qp_to_rts(id) != 0) {
		send_rej(a, id->remote_gid, new_tid(id), id->local_comm_id,
			 id->remote_comm_id, CM_MSG_REP, CM_REJ_NO_QP, NULL, 0);
		id->state = CM_CLOSED;
		conn_event(id, DROCE_RDMA_CM_EVENT_CONNECT_ERROR, -EINVAL, NULL, 0, 0, 0);
		return;
	}
	send_rtu(id);
	conn_event(id, DROCE_RDMA_CM_EVENT_ESTABLISHED, 0, rep.pdata, CM_REP_PDATA,
		   rep.responder_resources, rep.initiator_depth);
}

int
cm_proto_establish(struct cm_id *id)
{
	if (id->state != CM_REP_RCVD || id->pub.qp != NULL)
		return EINVAL;
	send_rtu(id);
	return 0;
}

/* ---- passive side ---------------------------------------------------------- */

static bool
req_acceptable(const struct cm_req *req, uint16_t *reason)
{
	struct cm_ip_hdr ih;

	if (req->transport != 0) {
		*reason = CM_REJ_INVALID_TRANSPORT;
		return false;
	}
	if (req->service_id >> 16 != CM_PS_TCP || cm_ip_hdr_get(req->pdata, &ih) != 0) {
		*reason = CM_REJ_INVALID_SERVICE_ID;
		return false;
	}
	return true;
}

static void
take_req(struct cm_id *id, const struct cm_req *req, const uint8_t src_gid[16],
	 const uint8_t dst_gid[16], uint64_t tid, enum droce_mtu port_mtu)
{
	id->remote_comm_id = req->local_comm_id;
	id->tid = tid;
	memcpy(id->remote_gid, src_gid, 16);
	memcpy(id->local_gid, dst_gid, 16);
	id->peer_cm_timeout = req->local_cm_timeout;
	id->max_retries = req->max_cm_retries;
	id->qp = (struct cm_qp_params){
		.remote_qpn = req->local_qpn, .sq_psn = req->starting_psn,
		.rq_psn = random_psn(),
		.mtu = req->path_mtu < port_mtu ? (enum droce_mtu)req->path_mtu : port_mtu,
		.retry_count = req->retry_count, .rnr_retry = req->rnr_retry,
		.ack_timeout = req->primary.local_ack_timeout,
		/* the requester's view swapped (cma.c cma_set_req_event_data) */
		.responder_resources = req->initiator_depth,
		.initiator_depth = req->responder_resources,
	};
	memcpy(id->req_pdata, req->pdata, CM_REQ_PDATA);
	id->state = CM_REQ_RCVD;
}

/*
 * A REQ for a port nobody listens on is held, not rejected at once: a
 * server often calls rdma_listen just before its client connects (perftest
 * -R listens for its test QPs after the exchange that sets its client
 * connecting them), and on a device this quick the REQ can win that race.
 * The passive side has the REQ's Remote CM Response Timeout to answer
 * (12.6.5); the hold ends at half of it, at most CM_REQ_HOLD_NS, with the
 * REJ (reason 8, invalid service ID) a kernel's CM sends at once.  A
 * listen in time takes the REQ as if it had just arrived.
 */
static struct cm_held_req *
held_find(struct cm_agent *a, const uint8_t src_gid[16], uint32_t comm_id)
{
	for (unsigned int i = 0; i < CM_HELD_REQS; i++) {
		struct cm_held_req *r = &a->held[i];

		if (r->deadline_ns != 0 && r->comm_id == comm_id &&
		    memcmp(r->src_gid, src_gid, 16) == 0)
			return r;
	}
	return NULL;
}

static bool
hold_req(struct cm_agent *a, const uint8_t src_gid[16], const uint8_t dst_gid[16],
	 uint64_t tid, const struct cm_req *req, const uint8_t *mad)
{
	uint64_t hold = cm_timeout_ns(req->remote_cm_timeout) / 2;
	struct cm_held_req *free_slot = NULL;

	for (unsigned int i = 0; i < CM_HELD_REQS && free_slot == NULL; i++)
		if (a->held[i].deadline_ns == 0)
			free_slot = &a->held[i];
	if (free_slot == NULL)
		return false;
	*free_slot = (struct cm_held_req){
		.deadline_ns = cm_now_ns() + (hold < CM_REQ_HOLD_NS ? hold : CM_REQ_HOLD_NS),
		.tid = tid, .comm_id = req->local_comm_id, .port = (uint16_t)req->service_id,
	};
	memcpy(free_slot->src_gid, src_gid, 16);
	memcpy(free_slot->dst_gid, dst_gid, 16);
	memcpy(free_slot->mad, mad, CM_MAD_LEN);
	return true;
}

void
cm_proto_held(struct cm_agent *a, uint64_t now)
{
	for (unsigned int i = 0; i < CM_HELD_REQS; i++) {
		struct cm_held_req r = a->held[i];

		if (r.deadline_ns == 0)
			continue;
		if (cm_find_listener(a, r.port) != NULL) {
			a->held[i].deadline_ns = 0;
			cm_proto_recv(a, r.src_gid, r.dst_gid, r.mad);
		} else if (now >= r.deadline_ns) {
			a->held[i].deadline_ns = 0;
			send_rej(a, r.src_gid, r.tid, 0, r.comm_id, CM_MSG_REQ,
				 CM_REJ_INVALID_SERVICE_ID, NULL, 0);
		}
	}
}

static void
recv_req(struct cm_agent *a, const uint8_t src_gid[16], const uint8_t dst_gid[16],
	 const struct cm_mad_hdr *h, const uint8_t *mad)
{
	struct cm_req req;
	struct cm_id *id, *lis;
	uint32_t comm_id;
	uint16_t reason;

	cm_req_get(mad, &req);
	id = cm_find_remote(a, src_gid, req.local_comm_id);
	if (id != NULL) {
		/* a duplicate REQ: the REP was lost (12.9.5.2); waiting for the
		 * consumer, the requester's timer covers it */
		if (id->state == CM_REP_SENT)
			send_kept(id);
		return;
	}
	if (!req_acceptable(&req, &reason)) {
		send_rej(a, src_gid, h->tid, 0, req.local_comm_id, CM_MSG_REQ, reason,
			 NULL, 0);
		return;
	}
	lis = cm_find_listener(a, (uint16_t)req.service_id);
	if (lis == NULL && (held_find(a, src_gid, req.local_comm_id) != NULL ||
			    hold_req(a, src_gid, dst_gid, h->tid, &req, mad)))
		return;		/* held, or a retransmission of one held */
	comm_id = lis == NULL ? 0 : cm_next_comm_id(a);
	id = comm_id == 0 ? NULL : cm_new_passive(lis, a);
	if (id == NULL) {
		cm_free_comm_id(a, comm_id);
		send_rej(a, src_gid, h->tid, 0, req.local_comm_id, CM_MSG_REQ,
			 lis == NULL ? CM_REJ_INVALID_SERVICE_ID : CM_REJ_NO_RESOURCES,
			 NULL, 0);
		return;
	}
	id->local_comm_id = comm_id;
	take_req(id, &req, src_gid, dst_gid, h->tid, a->mtu);
	if (cm_event_post(id, DROCE_RDMA_CM_EVENT_CONNECT_REQUEST, 0,
			  req.pdata + CM_IP_HDR_LEN, CM_REQ_PDATA - CM_IP_HDR_LEN) == 0) {
		struct cm_event *ev = cm_event_last(id);

		ev->pub.listen_id = &lis->pub;
		ev->pub.param.conn.responder_resources = id->qp.responder_resources;
		ev->pub.param.conn.initiator_depth = id->qp.initiator_depth;
		ev->pub.param.conn.retry_count = req.retry_count;
		ev->pub.param.conn.rnr_retry_count = req.rnr_retry;
		ev->pub.param.conn.qp_num = req.local_qpn;
	}
}

int
cm_proto_accept(struct cm_id *id, const struct droce_rdma_conn_param *p)
{
	struct cm_rep rep = { 0 };
	int rc;

	if (id->state != CM_REQ_RCVD || !take_ext_qpn(id, p) ||
	    (p != NULL && (p->srq != 0 || p->private_data_len > CM_REP_PDATA)))
		return EINVAL;
	if (p != NULL) {
		id->qp.responder_resources = clamp_rd(p->responder_resources);
		if (p->initiator_depth < id->qp.initiator_depth)
			id->qp.initiator_depth = p->initiator_depth;
	}
	/* rdma_cm moves the QP to RTS before the REP (cma_accept_ib); the
	 * caller's own QP is the caller's to move */
	rc = id->pub.qp != NULL ? qp_to_rts(id) : 0;
	if (rc != 0)
		return rc;
	rep.local_comm_id = id->local_comm_id;
	rep.remote_comm_id = id->remote_comm_id;
	rep.local_qpn = local_qpn(id);
	rep.starting_psn = id->qp.rq_psn;
	rep.responder_resources = id->qp.responder_resources;
	rep.initiator_depth = id->qp.initiator_depth;
	rep.rnr_retry = p != NULL && p->rnr_retry_count < 7 ? p->rnr_retry_count : 7;
	rep.local_ca_guid = id->agent->guid;
	if (p != NULL && p->private_data_len != 0)
		memcpy(rep.pdata, p->private_data, p->private_data_len);
	mad_hdr(id->mad, CM_ATTR_REP, id->tid);
	cm_rep_put(id->mad, &rep);
	id->state = CM_REP_SENT;
	arm(id, id->peer_cm_timeout);
	send_kept(id);
	return 0;
}

int
cm_proto_reject(struct cm_id *id, const struct droce_rdma_conn_param *p)
{
	uint8_t len = p != NULL ? p->private_data_len : 0;

	if (id->state != CM_REQ_RCVD || len > CM_REJ_PDATA)
		return EINVAL;
	send_rej(id->agent, id->remote_gid, id->tid, id->local_comm_id,
		 id->remote_comm_id, CM_MSG_REQ, CM_REJ_CONSUMER,
		 len != 0 ? p->private_data : NULL, len);
	id->state = CM_CLOSED;
	return 0;
}

static void
passive_established(struct cm_id *id, const uint8_t *pdata, uint8_t len)
{
	id->deadline_ns = 0;
	id->state = CM_ESTABLISHED;
	conn_event(id, DROCE_RDMA_CM_EVENT_ESTABLISHED, 0, pdata, len,
		   id->qp.responder_resources, id->qp.initiator_depth);
}

static void
recv_rtu(struct cm_agent *a, const uint8_t *mad)
{
	struct cm_rtu rtu;
	struct cm_id *id;

	cm_rtu_get(mad, &rtu);
	id = cm_find_local(a, rtu.remote_comm_id);
	if (id == NULL || id->state != CM_REP_SENT || id->remote_comm_id != rtu.local_comm_id)
		return;
	passive_established(id, rtu.pdata, CM_RTU_PDATA);
}

/* A receive on the passive side's QP before the RTU: the connection is
 * established (IBTA 12.9.6, the kernel's ib_cm_notify(COMM_EST)). */
int
cm_proto_comm_est(struct cm_id *id)
{
	if (id->state == CM_ESTABLISHED)
		return EISCONN;
	if (id->state != CM_REP_SENT)
		return EINVAL;
	passive_established(id, NULL, 0);
	return 0;
}

/*
 * rdma_init_qp_attr: what moves the caller's QP to attr->qp_state on this
 * connection, as the kernel's rdma_init_qp_attr for RoCE: INIT once the id
 * has its device, RTR and RTS once the peer's REQ or REP is known.
 */
int
cm_proto_init_qp_attr(struct cm_id *id, struct droce_qp_attr *attr, int *mask)
{
	bool peer_known = id->state == CM_REQ_RCVD || id->state == CM_REP_SENT ||
			  id->state == CM_REP_RCVD || id->state == CM_ESTABLISHED;
	int rc;

	switch (attr->qp_state) {
	case DROCE_QPS_INIT:
		if (id->pub.verbs == NULL)
			return EINVAL;
		*attr = (struct droce_qp_attr){
			.qp_state = DROCE_QPS_INIT, .pkey_index = 0, .port_num = 1,
			.qp_access_flags = DROCE_ACCESS_LOCAL_WRITE | DROCE_ACCESS_REMOTE_WRITE |
					   (id->qp.responder_resources != 0 ?
					    DROCE_ACCESS_REMOTE_READ | DROCE_ACCESS_REMOTE_ATOMIC : 0),
		};
		*mask = DROCE_QP_STATE | DROCE_QP_PKEY_INDEX | DROCE_QP_PORT |
			DROCE_QP_ACCESS_FLAGS;
		return 0;
	case DROCE_QPS_RTR:
		if (!peer_known)
			return EINVAL;
		rc = rtr_attr(id, attr);
		*mask = RTR_MASK;
		return rc;
	case DROCE_QPS_RTS:
		if (!peer_known)
			return EINVAL;
		*attr = (struct droce_qp_attr){ 0 };
		rts_attr(id, attr);
		*mask = RTS_MASK;
		return 0;
	default:
		return EINVAL;
	}
}

static void
recv_rej(struct cm_agent *a, const uint8_t *mad)
{
	struct cm_rej rej;
	struct cm_id *id;

	cm_rej_get(mad, &rej);
	id = cm_find_local(a, rej.remote_comm_id);
	if (id == NULL || (id->state != CM_REQ_SENT && id->state != CM_REP_SENT &&
			   id->state != CM_ESTABLISHED))
		return;
	id->deadline_ns = 0;
	qp_to_err(id);
	id->state = CM_CLOSED;
	conn_event(id, DROCE_RDMA_CM_EVENT_REJECTED, rej.reason, rej.pdata,
		   CM_REJ_PDATA, 0, 0);
}

static void
recv_mra(struct cm_agent *a, const uint8_t *mad)
{
	struct cm_mra mra;
	struct cm_id *id;

	cm_mra_get(mad, &mra);
	id = cm_find_local(a, mra.remote_comm_id);
	/* the peer needs longer: wait its service timeout more (12.6.6) */
	if (id != NULL && (id->state == CM_REQ_SENT || id->state == CM_REP_SENT))
		id->deadline_ns = cm_now_ns() + cm_timeout_ns(mra.service_timeout) +
				  cm_timeout_ns(id->cm_timeout);
}

/* ---- disconnection (12.9.8) and timewait ------------------------------------- */

static void
enter_timewait(struct cm_id *id)
{
	id->state = CM_TIMEWAIT;
	id->retries_left = 0;
	/* twice the packet lifetime and the peer's ACK delay: one ACK timeout */
	id->deadline_ns = cm_now_ns() + cm_timeout_ns(id->qp.ack_timeout);
}

int
cm_proto_disconnect(struct cm_id *id)
{
	struct cm_dreq dreq = { 0 };

	if (id->state == CM_TIMEWAIT || id->state == CM_CLOSED ||
	    id->state == CM_DREQ_SENT)
		return 0;
	if (id->state != CM_ESTABLISHED && id->state != CM_REP_SENT &&
	    id->state != CM_REP_RCVD)
		return EINVAL;
	qp_to_err(id);
	dreq.local_comm_id = id->local_comm_id;
	dreq.remote_comm_id = id->remote_comm_id;
	dreq.remote_qpn = id->qp.remote_qpn;
	mad_hdr(id->mad, CM_ATTR_DREQ, new_tid(id));
	cm_dreq_put(id->mad, &dreq);
	id->state = CM_DREQ_SENT;
	arm(id, id->cm_timeout);
	send_kept(id);
	return 0;
}

static void
recv_dreq(struct cm_agent *a, const uint8_t src_gid[16], const struct cm_mad_hdr *h,
	  const uint8_t *mad)
{
	struct cm_dreq dreq;
	struct cm_id *id;

	cm_dreq_get(mad, &dreq);
	id = cm_find_local(a, dreq.remote_comm_id);
	/* a DREQ for no connection still gets its DREP (12.9.8.2) */
	send_drep(a, src_gid, h->tid, dreq.remote_comm_id, dreq.local_comm_id);
	if (id == NULL || id->remote_comm_id != dreq.local_comm_id ||
	    id->state == CM_TIMEWAIT || id->state == CM_CLOSED)
		return;
	if (id->state != CM_ESTABLISHED && id->state != CM_REP_SENT &&
	    id->state != CM_REP_RCVD && id->state != CM_DREQ_SENT)
		return;
	qp_to_err(id);
	enter_timewait(id);
	cm_event_post(id, DROCE_RDMA_CM_EVENT_DISCONNECTED, 0, dreq.pdata, 0);
}

static void
recv_drep(struct cm_agent *a, const uint8_t *mad)
{
	struct cm_rtu drep;
	struct cm_id *id;

	cm_rtu_get(mad, &drep);
	id = cm_find_local(a, drep.remote_comm_id);
	if (id == NULL || id->state != CM_DREQ_SENT || id->remote_comm_id != drep.local_comm_id)
		return;
	enter_timewait(id);
	cm_event_post(id, DROCE_RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0);
}

void
cm_proto_recv(struct cm_agent *a, const uint8_t src_gid[16], const uint8_t dst_gid[16],
	      const uint8_t *mad)
{
	struct cm_mad_hdr h;

	if (cm_mad_check(mad, CM_MAD_LEN, &h) != 0 || h.method != CM_MAD_METHOD_SEND)
		return;
	switch (h.attr_id) {
	case CM_ATTR_REQ:
		recv_req(a, src_gid, dst_gid, &h, mad);
		break;
	case CM_ATTR_MRA:
		recv_mra(a, mad);
		break;
	case CM_ATTR_REJ:
		recv_rej(a, mad);
		break;
	case CM_ATTR_REP:
		recv_rep(a, mad);
		break;
	case CM_ATTR_RTU:
		recv_rtu(a, mad);
		break;
	case CM_ATTR_DREQ:
		recv_dreq(a, src_gid, &h, mad);
		break;
	case CM_ATTR_DREP:
		recv_drep(a, mad);
		break;
	default:
		break;
	}
}

/* ---- timeouts ------------------------------------------------------------------ */

static void
give_up(struct cm_id *id)
{
	enum cm_state was = id->state;

	id->deadline_ns = 0;
	id->state = CM_CLOSED;
	qp_to_err(id);
	if (was == CM_DREQ_SENT) {
		enter_timewait(id);
		cm_event_post(id, DROCE_RDMA_CM_EVENT_DISCONNECTED, 0, NULL, 0);
		return;
	}
	/* tell the peer (REJ reason 4 "timeout", 12.9.5) */
	send_rej(id->agent, id->remote_gid, new_tid(id), id->local_comm_id,
		 id->remote_comm_id, was == CM_REQ_SENT ? CM_MSG_REQ : CM_MSG_REP,
		 CM_REJ_TIMEOUT, NULL, 0);
	cm_event_post(id, was == CM_REQ_SENT ? DROCE_RDMA_CM_EVENT_UNREACHABLE :
					       DROCE_RDMA_CM_EVENT_CONNECT_ERROR,
		      -ETIMEDOUT, NULL, 0);
}

void
cm_proto_timer(struct cm_id *id, uint64_t now)
{
	if (id->deadline_ns == 0 || now < id->deadline_ns)
		return;
	if (id->state == CM_TIMEWAIT) {
		id->deadline_ns = 0;
		id->state = CM_CLOSED;
		return;
	}
	if (id->retries_left == 0) {
		give_up(id);
		return;
	}
	id->retries_left--;
	id->deadline_ns = now + cm_timeout_ns(id->state == CM_REP_SENT ?
					      id->peer_cm_timeout : id->cm_timeout);
	send_kept(id);
}
