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

static int
fail(int err)
{
	errno = err;
	return -1;
}

static struct rdmacm_id *
id_of(struct rdma_cm_id *id)
{
	return (struct rdmacm_id *)id;
}

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
	id->ibv.qp_type = IBV_QPT_RC;
	pthread_mutex_init(&id->lock, NULL);
	pthread_cond_init(&id->acked, NULL);
	return id;
}

static void
id_free(struct rdmacm_id *id)
{
	free(id->ep_attr);
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
	return fail(ev->event == RDMA_CM_EVENT_REJECTED ? ECONNREFUSED : abs(ev->status));
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
		id->ibv.pd = rdmacm_pd_of(id->ibv.verbs);
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
		return fail(err);
	if (id == NULL)
		return fail(EINVAL);
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
	return fail(err);
}

static void own_cqs_free(struct rdmacm_id *id);

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
	struct rdmacm_id *id = id_of(pub);

	if (pub == NULL)
		return fail(EINVAL);
	sync_release(id);
	pthread_mutex_lock(&id->lock);
	while (id->events != 0)
		pthread_cond_wait(&id->acked, &id->lock);
	pthread_mutex_unlock(&id->lock);
	qp_release(id);
	if (droce_rdma_destroy_id(id->d) != 0)
		return -1;
	if (pub->qp == NULL)
		own_cqs_free(id);	/* else the QP's, which stays the program's */
	if (id->own_channel != NULL)
		rdma_destroy_event_channel(&id->own_channel->ibv);
	id_free(id);
	return 0;
}

/* An id (of rdma_create_id; droce makes no others) with its QP. */
void
rdma_destroy_ep(struct rdma_cm_id *pub)
{
	if (pub == NULL)
		return;
	rdma_destroy_qp(pub);
	rdma_destroy_id(pub);
}

/* channel NULL: a channel of the id's own (a synchronous id), as librdmacm */
int
rdma_migrate_id(struct rdma_cm_id *pub, struct rdma_event_channel *channel)
{
	struct rdmacm_id *id = id_of(pub);
	struct rdmacm_channel *own = NULL;

	if (pub == NULL)
		return fail(EINVAL);
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
		return fail(err);
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
		return fail(EINVAL);
	if (droce_rdma_bind_addr(id_of(pub)->d, addr) != 0)
		return -1;
	rdmacm_id_sync(id_of(pub));
	return 0;
}

int
rdma_resolve_addr(struct rdma_cm_id *pub, struct sockaddr *src_addr,
		  struct sockaddr *dst_addr, int timeout_ms)
{
	if (pub == NULL)
		return fail(EINVAL);
	if (droce_rdma_resolve_addr(id_of(pub)->d, src_addr, dst_addr, timeout_ms) != 0)
		return -1;
	rdmacm_id_sync(id_of(pub));
	return sync_complete(id_of(pub));
}

int
rdma_resolve_route(struct rdma_cm_id *pub, int timeout_ms)
{
	if (pub == NULL)
		return fail(EINVAL);
	if (droce_rdma_resolve_route(id_of(pub)->d, timeout_ms) != 0)
		return -1;
	return sync_complete(id_of(pub));
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
		return fail(err);
	}
	q->cm_id = id->d;
	id->ibv.qp = qp;
	id->ibv.pd = qp->pd;
	id->ibv.send_cq = qp->send_cq;
	id->ibv.recv_cq = qp->recv_cq;
	id->ibv.srq = qp->srq;
	id->ibv.qp_type = qp->qp_type;
	return 0;
}

/* The CQs and completion channels rdma_create_qp made for the id, gone. */
static void
own_cqs_free(struct rdmacm_id *id)
{
	for (int i = 0; i < 2; i++) {
		if (id->own_cq[i] != NULL && ibv_destroy_cq(id->own_cq[i]) == 0) {
			if (id->ibv.send_cq == id->own_cq[i])
				id->ibv.send_cq = NULL;
			if (id->ibv.recv_cq == id->own_cq[i])
				id->ibv.recv_cq = NULL;
			id->own_cq[i] = NULL;
		}
		if (id->own_cq[i] == NULL && id->own_cq_channel[i] != NULL &&
		    ibv_destroy_comp_channel(id->own_cq_channel[i]) == 0)
			id->own_cq_channel[i] = NULL;
	}
	id->ibv.send_cq_channel = id->own_cq_channel[0];
	id->ibv.recv_cq_channel = id->own_cq_channel[1];
}

/*
 * A CQ of cqe entries on a completion channel of its own, both the id's
 * (rdma_cm(7): the send and receive CQs librdmacm makes for a QP created
 * without, which rdma_get_send_comp / rdma_get_recv_comp wait on); the
 * CQ's context is the id, as librdmacm's.  0 or an errno.
 */
static int
own_cq_make(struct rdmacm_id *id, int i, uint32_t cqe)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(id->ibv.verbs);

	if (ch == NULL)
		return errno;
	id->own_cq_channel[i] = ch;
	id->own_cq[i] = ibv_create_cq(id->ibv.verbs, (int)cqe, &id->ibv, ch, 0);
	return id->own_cq[i] == NULL ? errno : 0;
}

/* As rdma_create_qp(3): with no PD the id's (its device's), with no CQ
 * one made for each queue of the QP (rdma_destroy_qp destroys them). */
int
rdma_create_qp(struct rdma_cm_id *pub, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	int rc;

	if (pub == NULL || attr == NULL)
		return fail(EINVAL);
	/* ibv_qp_init_attr is the beginning of ibv_qp_init_attr_ex (verbs.h) */
	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd != NULL ? pd : pub->pd;
	rc = rdma_create_qp_ex(pub, &ex);
	if (rc == 0)
		memcpy(attr, &ex, sizeof(*attr));	/* the caps granted */
	return rc;
}

int
rdma_create_qp_ex(struct rdma_cm_id *pub, struct ibv_qp_init_attr_ex *attr)
{
	struct rdmacm_id *id = id_of(pub);
	struct ibv_qp *qp;
	int err = 0;

	if (pub == NULL || attr == NULL || pub->qp != NULL || pub->verbs == NULL)
		return fail(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->pd = pub->pd;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	/* any context of the device: the program's and this library's share
	 * droce's one (lib/ibverbs' dropin_device) */
	if (attr->pd == NULL || dropin_dctx(attr->pd->context) != dropin_dctx(pub->verbs))
		return fail(EINVAL);
	if (attr->send_cq == NULL && id->own_cq[0] == NULL && attr->cap.max_send_wr > 0)
		err = own_cq_make(id, 0, attr->cap.max_send_wr);
	if (err == 0 && attr->recv_cq == NULL && id->own_cq[1] == NULL &&
	    attr->cap.max_recv_wr > 0)
		err = own_cq_make(id, 1, attr->cap.max_recv_wr);
	if (err != 0) {
		own_cqs_free(id);
		return fail(err);
	}
	if (attr->send_cq == NULL)
		attr->send_cq = id->own_cq[0];
	if (attr->recv_cq == NULL)
		attr->recv_cq = id->own_cq[1];
	pub->send_cq_channel = id->own_cq_channel[0];
	pub->recv_cq_channel = id->own_cq_channel[1];
	qp = attr->send_cq != NULL && attr->recv_cq != NULL ?
	     ibv_create_qp_ex(attr->pd->context, attr) : NULL;
	if (qp == NULL) {
		err = attr->send_cq == NULL || attr->recv_cq == NULL ? EINVAL : errno;
		own_cqs_free(id);
		return fail(err);
	}
	if (qp_attach(id, qp) != 0) {
		err = errno;
		own_cqs_free(id);
		return fail(err);
	}
	return 0;
}

void
rdma_destroy_qp(struct rdma_cm_id *pub)
{
	if (pub == NULL || pub->qp == NULL)
		return;
	ibv_destroy_qp(pub->qp);	/* lib/cm forgets it first */
	pub->qp = NULL;
	own_cqs_free(id_of(pub));
}

/*
 * rdma_set_option(3): RDMA_OPTION_ID_ACK_TIMEOUT (the QP's local ACK
 * timeout at RTS, a uint8_t) is lib/cm's; the other options are not
 * served (ENOSYS, as before any of them was).
 */
int
rdma_set_option(struct rdma_cm_id *pub, int level, int optname, void *optval, size_t optlen)
{
	if (pub == NULL || optval == NULL)
		return fail(EINVAL);
	if (level != RDMA_OPTION_ID || optname != RDMA_OPTION_ID_ACK_TIMEOUT)
		return fail(ENOSYS);
	if (optlen != sizeof(uint8_t))
		return fail(EINVAL);
	return droce_rdma_set_ack_timeout(id_of(pub)->d, *(const uint8_t *)optval);
}

/*
 * rdma_init_qp_attr(3) / rdma_establish(3): a QP of the program's own,
 * moved by the program with the attributes lib/cm gives (the same
 * layout: lib/ibverbs' SAME_SIZE checks), named to the peer by
 * conn_param's qp_num.
 */
int
rdma_init_qp_attr(struct rdma_cm_id *pub, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	if (pub == NULL)
		return fail(EINVAL);
	return droce_rdma_init_qp_attr(id_of(pub)->d, (struct droce_qp_attr *)qp_attr,
				       qp_attr_mask);
}

int
rdma_establish(struct rdma_cm_id *pub)
{
	if (pub == NULL || pub->qp != NULL)
		return fail(EINVAL);	/* the id's own QP is lib/cm's to move */
	return droce_rdma_establish(id_of(pub)->d);
}

/*
 * ECE (enhanced connection establishment): droce's CM carries none, as a
 * kernel whose device has none: the peer's is all zero (no vendor), a
 * local one cannot be offered (EOPNOTSUPP, as ibv_query_ece / ibv_set_ece).
 */
int
rdma_get_remote_ece(struct rdma_cm_id *pub, struct ibv_ece *ece)
{
	if (pub == NULL || ece == NULL)
		return fail(EINVAL);
	memset(ece, 0, sizeof(*ece));
	return 0;
}

int
rdma_set_local_ece(struct rdma_cm_id *pub, struct ibv_ece *ece)
{
	if (pub == NULL || ece == NULL)
		return fail(EINVAL);
	return fail(EOPNOTSUPP);
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

int
rdma_connect(struct rdma_cm_id *pub, struct rdma_conn_param *conn_param)
{
	struct droce_rdma_conn_param d;

	/* none: librdmacm's defaults (the most the device allows, lib/cm
	 * clamps; the retries at their most) */
	struct rdma_conn_param def = {
		.responder_resources = RDMA_MAX_RESP_RES, .initiator_depth = RDMA_MAX_INIT_DEPTH,
		.retry_count = 7, .rnr_retry_count = 7,
	};

	if (pub == NULL)
		return fail(EINVAL);
	if (conn_param == NULL)
		conn_param = &def;
	if (droce_rdma_connect(id_of(pub)->d, conn_param_of(conn_param, &d)) != 0)
		return -1;
	return sync_complete(id_of(pub));
}

int
rdma_accept(struct rdma_cm_id *pub, struct rdma_conn_param *conn_param)
{
	struct droce_rdma_conn_param d;

	if (pub == NULL)
		return fail(EINVAL);
	if (droce_rdma_accept(id_of(pub)->d, conn_param_of(conn_param, &d)) != 0)
		return -1;
	return sync_complete(id_of(pub));
}

int
rdma_reject(struct rdma_cm_id *pub, const void *private_data, uint8_t private_data_len)
{
	if (pub == NULL)
		return fail(EINVAL);
	return droce_rdma_reject(id_of(pub)->d, private_data, private_data_len);
}

int
rdma_disconnect(struct rdma_cm_id *pub)
{
	if (pub == NULL)
		return fail(EINVAL);
	return droce_rdma_disconnect(id_of(pub)->d);
}

int
rdma_listen(struct rdma_cm_id *pub, int backlog)
{
	if (pub == NULL)
		return fail(EINVAL);
	return droce_rdma_listen(id_of(pub)->d, backlog);
}
