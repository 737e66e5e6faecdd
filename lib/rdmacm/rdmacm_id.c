/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rdmacm_id.c - rdma_cm_ids on lib/cm's (droce_rdma_*): addresses,
 * routes, connections and the QP of an id.
 *
 * An id's verbs is the drop-in libibverbs' context of the device lib/cm
 * bound it to (rdmacm_device.c), and its QP a drop-in ibv_qp made on the
 * caller's drop-in PD and CQs, handed to lib/cm (droce_rdma_use_qp), which
 * moves it through INIT, RTR and RTS.  The drop-in's ibv_destroy_qp takes
 * it back from lib/cm first, so a program that destroys the QP with
 * ibv_destroy_qp (rping does) leaves lib/cm no dangling QP.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dropin_private.h"
#include "rdmacm_private.h"

struct rdmacm_id *
rdmacm_id_new(struct rdma_event_channel *channel, void *context, enum rdma_port_space ps)
{
	struct rdmacm_id *id = calloc(1, sizeof(*id));

	if (id == NULL)
		return NULL;
	id->ibv.channel = channel;
	id->ibv.context = context;
	id->ibv.ps = ps;
	id->ibv.port_num = 1;
	/* as librdmacm's rdma_create_id: the datagram port spaces are UD */
	id->ibv.qp_type = ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC;
	pthread_mutex_init(&id->lock, NULL);
	pthread_cond_init(&id->acked, NULL);
	return id;
}

static void
id_free(struct rdmacm_id *id)
{
	pthread_cond_destroy(&id->acked);
	pthread_mutex_destroy(&id->lock);
	free(id);
}

/* A synchronous id's last event (sync_complete) acked. */
static void
sync_release(struct rdmacm_id *id)
{
	if (id->ibv.event != NULL) {
		rdma_ack_cm_event(id->ibv.event);
		id->ibv.event = NULL;
	}
}

/*
 * A synchronous id (rdma_create_id without a channel) waits in the call
 * for the call's event, as librdmacm's ucma_complete: the event stays in
 * id->event until the next such call or rdma_destroy_id acks it, and its
 * status is the call's error (REJECTED: ECONNREFUSED).  libfabric's verbs
 * provider resolves so, then destroys or migrates the id.
 */
static int
sync_complete(struct rdmacm_id *id)
{
	struct rdma_cm_event *ev;

	if (id->own_channel == NULL)
		return 0;
	sync_release(id);
	if (rdma_get_cm_event(&id->own_channel->ibv, &ev) != 0)
		return -1;
	id->ibv.event = ev;
	if (ev->status == 0)
		return 0;
	return rdmacm_fail(ev->event == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED : abs(ev->status));
}

static void
copy_sockaddr(struct sockaddr_storage *to, const union droce_rdma_sockaddr *from)
{
	_Static_assert(sizeof(*to) == sizeof(*from), "sockaddr_storage");
	memcpy(to, from, sizeof(*to));
}

/* The GID of an IPv4 (IPv4-mapped) or IPv6 address (RoCEv2). */
static void
sockaddr_gid(const struct sockaddr *sa, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (sa->sa_family == AF_INET) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(gid->raw, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

void
rdmacm_id_sync(struct rdmacm_id *id)
{
	const struct droce_rdma_cm_id *d = id->d;
	struct rdma_addr *addr = &id->ibv.route.addr;

	id->ibv.verbs = d->verbs != NULL ? rdmacm_context_of(d->verbs) : NULL;
	if (id->ibv.pd == NULL && id->ibv.verbs != NULL)
		id->ibv.pd = rdmacm_default_pd(id->ibv.verbs);
	id->ibv.port_num = d->port_num;
	copy_sockaddr(&addr->src_storage, &d->route.addr.src_addr);
	copy_sockaddr(&addr->dst_storage, &d->route.addr.dst_addr);
	sockaddr_gid(&addr->src_addr, &addr->addr.ibaddr.sgid);
	sockaddr_gid(&addr->dst_addr, &addr->addr.ibaddr.dgid);
	addr->addr.ibaddr.pkey = htons(0xffff);
	id->ibv.route.num_paths = d->route.num_paths;
}

int
rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id,
	       void *context, enum rdma_port_space ps)
{
	struct rdmacm_channel *own = NULL;
	struct rdmacm_id *c;
	int err = rdmacm_devices_init();

	if (err != 0)
		return rdmacm_fail(err);
	if (id == NULL)
		return rdmacm_fail(EINVAL);
	if (channel == NULL) {	/* a synchronous id: a channel of its own */
		channel = rdma_create_event_channel();
		if (channel == NULL)
			return -1;
		own = (struct rdmacm_channel *)channel;
	}
	c = rdmacm_id_new(channel, context, ps);
	if (c != NULL &&
	    droce_rdma_create_id(((struct rdmacm_channel *)channel)->d, &c->d, c,
				 (enum droce_rdma_port_space)ps) == 0) {
		c->own_channel = own;
		*id = &c->ibv;
		return 0;
	}
	err = c != NULL ? errno : ENOMEM;
	if (c != NULL)
		id_free(c);
	if (own != NULL)
		rdma_destroy_event_channel(&own->ibv);
	return rdmacm_fail(err);
}

/* lib/cm forgets the id's QP (which stays the program's), if it has one. */
static void
qp_release(struct rdmacm_id *id)
{
	struct droce_qp *qp = id->d->qp;

	if (qp == NULL)
		return;
	((struct dropin_qp *)qp->qp_context)->cm_id = NULL;
	droce_rdma_use_qp(id->d, NULL);
}

int
rdma_destroy_id(struct rdma_cm_id *pub)
{
	struct rdmacm_id *id = rdmacm_id_of(pub);

	if (pub == NULL)
		return rdmacm_fail(EINVAL);
	sync_release(id);
	pthread_mutex_lock(&id->lock);
	while (id->events != 0)
		pthread_cond_wait(&id->acked, &id->lock);
	pthread_mutex_unlock(&id->lock);
	qp_release(id);
	if (droce_rdma_destroy_id(id->d) != 0)
		return -1;
	if (id->own_channel != NULL)
		rdma_destroy_event_channel(&id->own_channel->ibv);
	id_free(id);
	return 0;
}

/* channel NULL: a channel of the id's own (a synchronous id), as librdmacm */
int
rdma_migrate_id(struct rdma_cm_id *pub, struct rdma_event_channel *channel)
{
	struct rdmacm_id *id = rdmacm_id_of(pub);
	struct rdmacm_channel *own = NULL;

	if (pub == NULL)
		return rdmacm_fail(EINVAL);
	sync_release(id);
	if (channel == NULL) {
		channel = rdma_create_event_channel();
		if (channel == NULL)
			return -1;
		own = (struct rdmacm_channel *)channel;
	}
	if (droce_rdma_migrate_id(id->d, ((struct rdmacm_channel *)channel)->d) != 0) {
		int err = errno;

		if (own != NULL)
			rdma_destroy_event_channel(channel);
		return rdmacm_fail(err);
	}
	if (id->own_channel != NULL)
		rdma_destroy_event_channel(&id->own_channel->ibv);
	id->own_channel = own;
	pub->channel = channel;
	return 0;
}

/* ---- addresses and routes ------------------------------------------------ */

int
rdma_bind_addr(struct rdma_cm_id *pub, struct sockaddr *addr)
{
	if (pub == NULL)
		return rdmacm_fail(EINVAL);
	if (droce_rdma_bind_addr(rdmacm_id_of(pub)->d, addr) != 0)
		return -1;
	rdmacm_id_sync(rdmacm_id_of(pub));
	return 0;
}

int
rdma_resolve_addr(struct rdma_cm_id *pub, struct sockaddr *src_addr,
		  struct sockaddr *dst_addr, int timeout_ms)
{
	if (pub == NULL)
		return rdmacm_fail(EINVAL);
	if (droce_rdma_resolve_addr(rdmacm_id_of(pub)->d, src_addr, dst_addr, timeout_ms) != 0)
		return -1;
	rdmacm_id_sync(rdmacm_id_of(pub));
	return sync_complete(rdmacm_id_of(pub));
}

int
rdma_resolve_route(struct rdma_cm_id *pub, int timeout_ms)
{
	if (pub == NULL)
		return rdmacm_fail(EINVAL);
	if (droce_rdma_resolve_route(rdmacm_id_of(pub)->d, timeout_ms) != 0)
		return -1;
	return sync_complete(rdmacm_id_of(pub));
}

static __be16
sockaddr_port(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_port;
	if (sa->sa_family == AF_INET6)
		return ((const struct sockaddr_in6 *)sa)->sin6_port;
	return 0;
}

__be16
rdma_get_src_port(struct rdma_cm_id *id)
{
	return sockaddr_port(&id->route.addr.src_addr);
}

__be16
rdma_get_dst_port(struct rdma_cm_id *id)
{
	return sockaddr_port(&id->route.addr.dst_addr);
}

/* ---- the id's QP --------------------------------------------------------- */

/* qp (the drop-in's) becomes the id's, driven by lib/cm; destroyed if not. */
static int
qp_attach(struct rdmacm_id *id, struct ibv_qp *qp)
{
	struct dropin_qp *q = DROPIN_OBJ_OF(dropin_qp, qp);

	if (droce_rdma_use_qp(id->d, q->d) != 0) {
		int err = errno;

		ibv_destroy_qp(qp);
		return rdmacm_fail(err);
	}
	q->cm_id = id->d;
	id->ibv.qp = qp;
	id->ibv.pd = qp->pd;
	id->ibv.send_cq = qp->send_cq;
	id->ibv.recv_cq = qp->recv_cq;
	id->ibv.srq = qp->srq;
	id->ibv.qp_type = qp->qp_type;
	if (qp->qp_type == IBV_QPT_UD)
		qp->state = IBV_QPS_RTS;	/* lib/cm moved it there */
	return 0;
}

/* The CQs (and their completion channels) this library made for the id. */
static void
own_cqs_destroy(struct rdmacm_id *id)
{
	struct rdma_cm_id *c = &id->ibv;

	if (!id->own_cqs)
		return;
	if (c->send_cq != NULL)
		ibv_destroy_cq(c->send_cq);
	if (c->recv_cq != NULL)
		ibv_destroy_cq(c->recv_cq);
	if (c->send_cq_channel != NULL)
		ibv_destroy_comp_channel(c->send_cq_channel);
	if (c->recv_cq_channel != NULL)
		ibv_destroy_comp_channel(c->recv_cq_channel);
	c->send_cq = c->recv_cq = NULL;
	c->send_cq_channel = c->recv_cq_channel = NULL;
	id->own_cqs = false;
}

static struct ibv_cq *
own_cq(struct rdma_cm_id *c, uint32_t size, struct ibv_comp_channel **channel)
{
	*channel = ibv_create_comp_channel(c->verbs);
	if (*channel == NULL)
		return NULL;
	return ibv_create_cq(c->verbs, size != 0 ? (int)size : 1, c, *channel, 0);
}

/* A QP or its CQs failed: drop the CQs own_cqs_create made. */
static int
cqs_failed(struct rdmacm_id *id)
{
	int err = errno;

	own_cqs_destroy(id);
	return rdmacm_fail(err);
}

/*
 * A QP's CQs the caller did not give: as librdmacm's, the id gets a send
 * and a receive CQ of the queues' depths, each with its completion
 * channel (rdma_get_send_comp / rdma_get_recv_comp wait on them), and
 * rdma_destroy_qp destroys them.
 */
static int
own_cqs_create(struct rdmacm_id *id, struct ibv_cq **send_cq, struct ibv_cq **recv_cq,
	       const struct ibv_qp_cap *cap)
{
	struct rdma_cm_id *c = &id->ibv;

	if (*send_cq != NULL && *recv_cq != NULL)
		return 0;
	if (id->own_cqs)
		return rdmacm_fail(EINVAL);
	id->own_cqs = true;
	if ((*send_cq == NULL &&
	     (c->send_cq = own_cq(c, cap->max_send_wr, &c->send_cq_channel)) == NULL) ||
	    (*recv_cq == NULL &&
	     (c->recv_cq = own_cq(c, cap->max_recv_wr, &c->recv_cq_channel)) == NULL))
		return cqs_failed(id);
	if (*send_cq == NULL)
		*send_cq = c->send_cq;
	if (*recv_cq == NULL)
		*recv_cq = c->recv_cq;
	return 0;
}

/* The program's PD and CQs, or (none given) the id's PD and CQs of its
 * own, as librdmacm's. */
int
rdma_create_qp(struct rdma_cm_id *pub, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct rdmacm_id *id = rdmacm_id_of(pub);
	struct ibv_qp *qp;

	if (pub == NULL || attr == NULL || pub->qp != NULL || pub->verbs == NULL)
		return rdmacm_fail(EINVAL);
	if (pd == NULL)
		pd = pub->pd;
	/* any context of the device: the program's and this library's share
	 * droce's one (lib/ibverbs' dropin_device) */
	if (pd == NULL || dropin_dctx(pd->context) != dropin_dctx(pub->verbs))
		return rdmacm_fail(EINVAL);
	if (own_cqs_create(id, &attr->send_cq, &attr->recv_cq, &attr->cap) != 0)
		return -1;
	if (attr->srq == NULL)
		attr->srq = pub->srq;
	qp = ibv_create_qp(pd, attr);
	if (qp == NULL)
		return cqs_failed(id);
	return qp_attach(id, qp) == 0 ? 0 : cqs_failed(id);
}

int
rdma_create_qp_ex(struct rdma_cm_id *pub, struct ibv_qp_init_attr_ex *attr)
{
	struct rdmacm_id *id = rdmacm_id_of(pub);
	struct ibv_qp *qp;

	if (pub == NULL || attr == NULL || pub->qp != NULL || pub->verbs == NULL)
		return rdmacm_fail(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->pd = pub->pd;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (attr->pd == NULL || dropin_dctx(attr->pd->context) != dropin_dctx(pub->verbs))
		return rdmacm_fail(EINVAL);
	if (own_cqs_create(id, &attr->send_cq, &attr->recv_cq, &attr->cap) != 0)
		return -1;
	if (attr->srq == NULL)
		attr->srq = pub->srq;
	qp = ibv_create_qp_ex(attr->pd->context, attr);
	if (qp == NULL)
		return cqs_failed(id);
	return qp_attach(id, qp) == 0 ? 0 : cqs_failed(id);
}

void
rdma_destroy_qp(struct rdma_cm_id *pub)
{
	if (pub == NULL)
		return;
	if (pub->qp != NULL)
		ibv_destroy_qp(pub->qp);	/* lib/cm forgets it first */
	pub->qp = NULL;
	if (rdmacm_id_of(pub)->own_cqs) {
		own_cqs_destroy(rdmacm_id_of(pub));
	} else {	/* the program's, named by qp_attach */
		pub->send_cq = NULL;
		pub->recv_cq = NULL;
	}
}

/* ---- connections --------------------------------------------------------- */

static struct droce_rdma_conn_param *
conn_param_of(const struct rdma_conn_param *p, struct droce_rdma_conn_param *d)
{
	if (p == NULL)
		return NULL;
	*d = (struct droce_rdma_conn_param){
		.private_data = p->private_data,
		.private_data_len = p->private_data_len,
		.responder_resources = p->responder_resources,
		.initiator_depth = p->initiator_depth,
		.flow_control = p->flow_control,
		.retry_count = p->retry_count,
		.rnr_retry_count = p->rnr_retry_count,
		.srq = p->srq,
		.qp_num = p->qp_num,
	};
	return d;
}

/*
 * conn_param NULL (the id's QP): librdmacm's defaults, the device's most
 * reads and atomics each way (RDMA_MAX_RESP_RES, which lib/cm clamps),
 * retry_count and rnr_retry_count 7.
 */
int
rdma_connect(struct rdma_cm_id *pub, struct rdma_conn_param *conn_param)
{
	struct droce_rdma_conn_param d = {
		.responder_resources = RDMA_MAX_RESP_RES, .initiator_depth = RDMA_MAX_INIT_DEPTH,
		.retry_count = 7, .rnr_retry_count = 7,
	};

	if (pub == NULL || (conn_param == NULL && pub->qp == NULL))
		return rdmacm_fail(EINVAL);
	if (droce_rdma_connect(rdmacm_id_of(pub)->d,
			       conn_param != NULL ? conn_param_of(conn_param, &d) : &d) != 0)
		return -1;
	return sync_complete(rdmacm_id_of(pub));
}

int
rdma_accept(struct rdma_cm_id *pub, struct rdma_conn_param *conn_param)
{
	struct droce_rdma_conn_param d;

	if (pub == NULL)
		return rdmacm_fail(EINVAL);
	if (droce_rdma_accept(rdmacm_id_of(pub)->d, conn_param_of(conn_param, &d)) != 0)
		return -1;
	/* a UD id's accept (a SIDR_REP) has no event to wait for (librdmacm) */
	if (pub->qp_type == IBV_QPT_UD) {
		sync_release(rdmacm_id_of(pub));
		return 0;
	}
	return sync_complete(rdmacm_id_of(pub));
}

int
rdma_reject(struct rdma_cm_id *pub, const void *private_data, uint8_t private_data_len)
{
	if (pub == NULL)
		return rdmacm_fail(EINVAL);
	return droce_rdma_reject(rdmacm_id_of(pub)->d, private_data, private_data_len);
}

int
rdma_disconnect(struct rdma_cm_id *pub)
{
	if (pub == NULL)
		return rdmacm_fail(EINVAL);
	return droce_rdma_disconnect(rdmacm_id_of(pub)->d);
}

int
rdma_listen(struct rdma_cm_id *pub, int backlog)
{
	if (pub == NULL)
		return rdmacm_fail(EINVAL);
	return droce_rdma_listen(rdmacm_id_of(pub)->d, backlog);
}

/* ---- multicast (RDMA_PS_UDP ids: lib/cm's droce_rdma_join_multicast) ------ */

int
rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	if (id == NULL)
		return rdmacm_fail(EINVAL);
	return droce_rdma_join_multicast(rdmacm_id_of(id)->d, addr, context,
					 DROCE_RDMA_MC_JOIN_FLAG_FULLMEMBER);
}

/* librdmacm's checks: the address and the flags both given, flags known. */
int
rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *attr,
		       void *context)
{
	const uint32_t both = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS;

	if (id == NULL || attr == NULL)
		return rdmacm_fail(EINVAL);
	if (attr->comp_mask & ~both)
		return rdmacm_fail(ENOTSUP);
	if ((attr->comp_mask & both) != both ||
	    attr->join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return rdmacm_fail(EINVAL);
	return droce_rdma_join_multicast(rdmacm_id_of(id)->d, attr->addr, context,
					 attr->join_flags == RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER ?
					 DROCE_RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER :
					 DROCE_RDMA_MC_JOIN_FLAG_FULLMEMBER);
}

int
rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	if (id == NULL)
		return rdmacm_fail(EINVAL);
	return droce_rdma_leave_multicast(rdmacm_id_of(id)->d, addr);
}
