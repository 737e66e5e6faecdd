/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsocket_conn.c - stream rsockets' lives: rsocket, rbind, rlisten,
 * rconnect (address, route, then the REQ carrying this end's struct
 * rsw_conn), raccept (the REP carrying it), rshutdown, rclose and the
 * names.
 *
 * rconnect's steps advance in rs_connect_step, from the CM events the
 * pump recorded on the rsocket: at once for a blocking rsocket (which
 * waits, running droce, until established), or from later calls and
 * rpoll for a non-blocking one (EINPROGRESS, then SO_ERROR).
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rsocket.h>

#include "rsocket_private.h"

#define RS_QP_MIN_SIZE 16
#define RS_RESOLVE_MS 2000

/* ---- the endpoint: QP, CQ, buffers --------------------------------------- */

static uint32_t
clamp(uint32_t v, uint32_t lo, uint32_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static int
ep_qp(struct rsock *rs)
{
	struct ibv_qp_init_attr attr = {
		.qp_context = rs,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};
	struct ibv_device_attr dev;
	uint32_t max = RS_QP_MAX_SIZE;

	if (ibv_query_device(rs->id->verbs, &dev) == 0 && (uint32_t)dev.max_qp_wr < max)
		max = (uint32_t)dev.max_qp_wr;
	rs->sq_size = clamp(rs->sq_size, RS_QP_MIN_SIZE, max);
	rs->rq_size = clamp(rs->rq_size, RS_QP_MIN_SIZE, max);
	rs->pd = ibv_alloc_pd(rs->id->verbs);
	if (rs->pd == NULL)
		return -1;
	rs->cq_channel = ibv_create_comp_channel(rs->id->verbs);
	if (rs->cq_channel == NULL)
		return -1;
	fcntl(rs->cq_channel->fd, F_SETFL, O_NONBLOCK);
	rs->cq = ibv_create_cq(rs->id->verbs, (int)(rs->sq_size + rs->rq_size), rs,
			       rs->cq_channel, 0);
	if (rs->cq == NULL)
		return -1;
	attr.send_cq = rs->cq;
	attr.recv_cq = rs->cq;
	attr.cap.max_send_wr = rs->sq_size;
	attr.cap.max_recv_wr = rs->rq_size;
	attr.cap.max_send_sge = 2;
	attr.cap.max_recv_sge = 1;
	attr.cap.max_inline_data = rs->sq_inline;
	if (rdma_create_qp(rs->id, rs->pd, &attr) != 0)
		return -1;
	rs->sq_inline = attr.cap.max_inline_data;
	return 0;
}

static struct ibv_mr *
reg(struct rsock *rs, void *buf, size_t len, int access)
{
	return ibv_reg_mr(rs->pd, buf, len, IBV_ACCESS_LOCAL_WRITE | access);
}

static int
ep_bufs(struct rsock *rs)
{
	size_t tlen = sizeof(struct rsw_sge) * RSW_SGL_SIZE +
		      sizeof(struct rsw_iomap) * rs->iomap_size;
	size_t slen = rs->sbuf_size + sizeof(struct rsw_sge) * RSW_CTRL_MAX;

	rs->rmsg = calloc(rs->rq_size + 1, sizeof(*rs->rmsg));
	rs->sbuf = calloc(1, slen);
	rs->rbuf = calloc(1, rs->rbuf_size);
	rs->target = calloc(1, tlen);
	if (rs->rmsg == NULL || rs->sbuf == NULL || rs->rbuf == NULL || rs->target == NULL)
		return rs_fail(ENOMEM);
	rs->smr = reg(rs, rs->sbuf, slen, 0);
	rs->rmr = reg(rs, rs->rbuf, rs->rbuf_size, IBV_ACCESS_REMOTE_WRITE);
	rs->tmr = reg(rs, rs->target, tlen, IBV_ACCESS_REMOTE_WRITE);
	if (rs->smr == NULL || rs->rmr == NULL || rs->tmr == NULL)
		return -1;
	rs->sbuf_avail = rs->sbuf_size;
	/* the ring's first half goes to the peer in rsw_conn, the second
	 * with the first credits */
	rs->rbuf_free_off = rs->rbuf_size / 2;
	rs->rbuf_avail = rs->rbuf_size / 2;
	rs->sqe_avail = rs->sq_size - rs->ctrl_max_seqno;
	rs->rseq_comp = (uint16_t)(rs->rq_size / 2);
	return 0;
}

static int
ep_create(struct rsock *rs)
{
	struct ibv_recv_wr wr = { .wr_id = UINT64_C(1) << 63 }, *bad;
	uint32_t i;

	if (rs->sbuf_size < 4096)
		rs->sbuf_size = 4096;
	if (rs->rbuf_size < 4096)
		rs->rbuf_size = 4096;
	if (ep_qp(rs) != 0 || ep_bufs(rs) != 0)
		return -1;
	/* zero-length receives: the data is in the ring, its length in the
	 * immediate */
	for (i = 0; i < rs->rq_size; i++)
		if (ibv_post_recv(rs->id->qp, &wr, &bad) != 0)
			return -1;
	return 0;
}

/* ---- the connection's private data --------------------------------------- */

static void
conn_format(const struct rsock *rs, struct rsw_conn *c)
{
	memset(c, 0, sizeof(*c));
	c->version = RSW_VERSION;
	c->flags = RSW_CONN_FLAG_IOMAP | (BYTE_ORDER == BIG_ENDIAN ? RSW_CONN_FLAG_NET : 0);
	c->credits = htobe16((uint16_t)rs->rq_size);
	c->target_iomap_size = rsw_value_to_scale(rs->iomap_size);
	c->target_sgl.addr = htobe64((uintptr_t)rs->target);
	c->target_sgl.length = htobe32(RSW_SGL_SIZE);
	c->target_sgl.key = htobe32(rs->tmr->rkey);
	c->data_buf.addr = htobe64((uintptr_t)rs->rbuf);
	c->data_buf.length = htobe32(rs->rbuf_size / 2);
	c->data_buf.key = htobe32(rs->rmr->rkey);
}

static int
conn_save(struct rsock *rs, const struct rsw_conn *c)
{
	bool peer_net = (c->flags & RSW_CONN_FLAG_NET) != 0;

	if (c->version != RSW_VERSION)
		return rs_fail(ENOTSUP);
	rs->remote_sgl.addr = be64toh(c->target_sgl.addr);
	rs->remote_sgl.length = be32toh(c->target_sgl.length);
	rs->remote_sgl.key = be32toh(c->target_sgl.key);
	if (rs->remote_sgl.length == 0)
		return rs_fail(EPROTO);
	rs->remote_sge = 1;
	rs->swap = peer_net != (BYTE_ORDER == BIG_ENDIAN);
	if (c->flags & RSW_CONN_FLAG_IOMAP) {
		rs->remote_iomap.addr = rs->remote_sgl.addr +
					sizeof(struct rsw_sge) * rs->remote_sgl.length;
		rs->remote_iomap.length = rsw_scale_to_value(c->target_iomap_size);
		rs->remote_iomap.key = rs->remote_sgl.key;
	}
	rs->target[0].addr = be64toh(c->data_buf.addr);
	rs->target[0].length = be32toh(c->data_buf.length);
	rs->target[0].key = be32toh(c->data_buf.key);
	rs->sseq_comp = be16toh(c->credits);
	return 0;
}

static void
conn_param(struct rdma_conn_param *p, const struct rsw_conn *c)
{
	memset(p, 0, sizeof(*p));
	p->private_data = c;
	p->private_data_len = sizeof(*c);
	p->flow_control = 1;
	p->retry_count = 7;
	p->rnr_retry_count = 7;
}

/* ---- rconnect's steps ---------------------------------------------------- */

static void
connect_failed(struct rsock *rs, int err)
{
	rs->state = RSS_CONNECT_ERROR;
	rs->err = err;
}

/* Advance a connecting rsocket as far as its CM events allow; rs->lock
 * held.  Errors end in RSS_CONNECT_ERROR with rs->err. */
int
rs_connect_step(struct rsock *rs)
{
	struct rdma_conn_param param;
	struct rsw_conn conn;
	int status;
	unsigned int ev = rs_cm_events(rs, &status);

	if (!(rs->state & RSS_OPENING))
		return 0;
	if (ev & RSE_ERROR) {
		connect_failed(rs, status);
		return 0;
	}
	if (rs->state == RSS_RESOLVING_ADDR && (ev & RSE_ADDR)) {
		if (rdma_resolve_route(rs->id, RS_RESOLVE_MS) != 0) {
			connect_failed(rs, errno);
			return 0;
		}
		rs->state = RSS_RESOLVING_ROUTE;
	}
	if (rs->state == RSS_RESOLVING_ROUTE && (ev & RSE_ROUTE)) {
		if (ep_create(rs) != 0) {
			connect_failed(rs, errno);
			return 0;
		}
		conn_format(rs, &conn);
		conn_param(&param, &conn);
		if (rdma_connect(rs->id, &param) != 0) {
			connect_failed(rs, errno);
			return 0;
		}
		rs->state = RSS_CONNECTING;
	}
	if (rs->state == RSS_CONNECTING && (ev & RSE_ESTABLISHED)) {
		pthread_mutex_lock(&rs_cm.lock);
		conn = rs->peer_conn;
		status = rs->peer_conn_ok ? 0 : EPROTO;
		pthread_mutex_unlock(&rs_cm.lock);
		if (status == 0 && conn_save(rs, &conn) != 0)
			status = errno;
		if (status != 0) {
			connect_failed(rs, status);
			return 0;
		}
		rs->state = RSS_CONNECT_RDWR;
	}
	return 0;
}

/* Wait (running droce) until rs is connected or failed; rs->lock held.
 * nonblock: one step, then EINPROGRESS. */
int
rs_wait_connect(struct rsock *rs, bool nonblock)
{
	struct rs_pause pause = RS_PAUSE_INIT;

	for (;;) {
		rs_connect_step(rs);
		if (rs->state & RSS_CONNECTED)
			return 0;
		if (rs->state == RSS_CONNECT_ERROR) {
			int err = rs->err;

			rs->err = 0;
			return rs_fail(err);
		}
		if (nonblock)
			return rs_fail(EINPROGRESS);
		pthread_mutex_unlock(&rs->lock);
		rs_pause(&pause, rs_cm.ch->fd);
		pthread_mutex_lock(&rs->lock);
	}
}

/* ---- the calls ----------------------------------------------------------- */

int
rsocket(int domain, int type, int protocol)
{
	int flags = type & (SOCK_NONBLOCK | SOCK_CLOEXEC);
	struct rsock *rs;

	type &= ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
	if ((domain != AF_INET && domain != AF_INET6) ||
	    (type == SOCK_STREAM && protocol != 0 && protocol != IPPROTO_TCP) ||
	    (type == SOCK_DGRAM && protocol != 0 && protocol != IPPROTO_UDP) ||
	    (type != SOCK_STREAM && type != SOCK_DGRAM))
		return rs_fail(ENOTSUP);	/* rdma-core's answer */
	if (rs_cm_init() != 0)
		return -1;
	rs = rs_alloc(type, NULL);
	if (rs == NULL)
		return rs_fail(ENOMEM);
	if (flags & SOCK_NONBLOCK)
		rs->fd_flags = O_NONBLOCK;
	if (rdma_create_id(rs_cm.ch, &rs->id, rs,
			   type == SOCK_DGRAM ? RDMA_PS_UDP : RDMA_PS_TCP) != 0) {
		int err = errno;

		rs->id = NULL;
		rs_free(rs);
		return rs_fail(err);
	}
	rs->id->route.addr.src_addr.sa_family = (sa_family_t)domain;
	if (rs_insert(rs) < 0) {
		int err = errno;

		rs_free(rs);
		return rs_fail(err);
	}
	return rs->fd;
}

int
rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rsock *rs = rs_lookup(socket);
	int rc;

	if (rs == NULL)
		return rs_fail(EBADF);
	pthread_mutex_lock(&rs->lock);
	if (rs->type == SOCK_DGRAM)
		rc = rs_dgram_bind(rs, addr, addrlen);
	else if ((rc = rdma_bind_addr(rs->id, (struct sockaddr *)addr)) == 0)
		rs->state = RSS_BOUND;
	pthread_mutex_unlock(&rs->lock);
	return rc;
}

int
rlisten(int socket, int backlog)
{
	struct rsock *rs = rs_lookup(socket);
	int rc = 0;

	if (rs == NULL)
		return rs_fail(EBADF);
	if (rs->type == SOCK_DGRAM)
		return rs_fail(EOPNOTSUPP);	/* listen(2) on a UDP socket */
	pthread_mutex_lock(&rs->lock);
	if (rs->state != RSS_LISTENING) {
		rc = rdma_listen(rs->id, backlog);
		if (rc == 0)
			rs->state = RSS_LISTENING;
	}
	pthread_mutex_unlock(&rs->lock);
	return rc;
}

static struct rs_request *
request_take(struct rsock *listener)
{
	struct rs_request *req;

	rs_cm_pump();
	pthread_mutex_lock(&rs_cm.lock);
	req = listener->requests;
	if (req != NULL)
		listener->requests = req->next;
	pthread_mutex_unlock(&rs_cm.lock);
	return req;
}

/* The rsocket of an accepted request: endpoint made, REP sent. */
static struct rsock *
accept_request(struct rsock *listener, struct rs_request *req)
{
	struct rsock *rs = rs_alloc(SOCK_STREAM, listener);
	struct rdma_conn_param param;
	struct rsw_conn conn;
	int err;

	if (rs == NULL) {
		err = ENOMEM;
		goto refuse;
	}
	pthread_mutex_lock(&rs_cm.lock);
	rs->id = req->id;
	rs->id->context = rs;
	pthread_mutex_unlock(&rs_cm.lock);
	if (!req->conn_ok || req->conn.version != RSW_VERSION) {
		err = ENOTSUP;
		rdma_reject(rs->id, NULL, 0);
		goto fail;
	}
	if (ep_create(rs) != 0 || conn_save(rs, &req->conn) != 0) {
		err = errno;
		rdma_reject(rs->id, NULL, 0);
		goto fail;
	}
	conn_format(rs, &conn);
	conn_param(&param, &conn);
	if (rdma_accept(rs->id, &param) != 0 || rs_insert(rs) < 0) {
		err = errno;
		goto fail;
	}
	rs->state = RSS_CONNECT_RDWR;
	free(req);
	return rs;
refuse:
	rdma_reject(req->id, NULL, 0);
	rdma_destroy_id(req->id);
	free(req);
	errno = err;
	return NULL;
fail:
	free(req);
	rs_free(rs);
	errno = err;
	return NULL;
}

int
raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsock *ls = rs_lookup(socket), *rs;
	struct rs_pause pause = RS_PAUSE_INIT;
	struct rs_request *req;

	if (ls == NULL)
		return rs_fail(EBADF);
	if (ls->state != RSS_LISTENING)
		return rs_fail(EINVAL);
	while ((req = request_take(ls)) == NULL) {
		if (ls->fd_flags & O_NONBLOCK)
			return rs_fail(EAGAIN);
		rs_pause(&pause, rs_cm.ch->fd);
	}
	rs = accept_request(ls, req);
	if (rs == NULL)
		return -1;
	if (addr != NULL && addrlen != NULL)
		rgetpeername(rs->fd, addr, addrlen);
	return rs->fd;
}

static socklen_t
sockaddr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

int
rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	struct rsock *rs = rs_lookup(socket);
	int rc;

	if (rs == NULL)
		return rs_fail(EBADF);
	if (addr == NULL || addrlen < sizeof(struct sockaddr_in) ||
	    (addr->sa_family != AF_INET && addr->sa_family != AF_INET6) ||
	    addrlen < sockaddr_len(addr))
		return rs_fail(EINVAL);
	pthread_mutex_lock(&rs->lock);
	if (rs->type == SOCK_DGRAM) {
		rc = rs_dgram_connect(rs, addr, addrlen);
		pthread_mutex_unlock(&rs->lock);
		return rc;
	}
	if (rs->state & RSS_CONNECTED) {
		pthread_mutex_unlock(&rs->lock);
		return rs_fail(EISCONN);
	}
	if (!(rs->state & RSS_OPENING)) {
		struct sockaddr_storage dst = { 0 };

		memcpy(&dst, addr, sockaddr_len(addr));
		if (rdma_resolve_addr(rs->id, NULL, (struct sockaddr *)&dst,
				      RS_RESOLVE_MS) != 0) {
			rc = errno;
			pthread_mutex_unlock(&rs->lock);
			return rs_fail(rc);
		}
		rs->state = RSS_RESOLVING_ADDR;
	} else if (rs->fd_flags & O_NONBLOCK) {
		pthread_mutex_unlock(&rs->lock);
		return rs_fail(EALREADY);
	}
	rc = rs_wait_connect(rs, (rs->fd_flags & O_NONBLOCK) != 0);
	pthread_mutex_unlock(&rs->lock);
	return rc;
}

/* ---- the end ------------------------------------------------------------- */

static bool
ctrl_avail(struct rsock *rs)
{
	return rs->ctrl_seqno != rs->ctrl_max_seqno || !(rs->state & RSS_CONNECTED);
}

static bool
sends_done(struct rsock *rs)
{
	return rs_all_sends_done(rs);
}

/* rdma-core's graceful end: the peer told (CTRL), this end's sends
 * completed, then the CM's DREQ once neither direction is open. */
static int
shutdown_locked(struct rsock *rs, int how)
{
	uint32_t ctrl;
	int rc = 0;

	if (rs->state & RSS_CONNECTED) {
		if (how == SHUT_RDWR) {
			ctrl = RSW_CTRL_DISCONNECT;
			rs->state &= ~(unsigned int)(RSS_READABLE | RSS_WRITABLE);
		} else if (how == SHUT_WR) {
			rs->state &= ~(unsigned int)RSS_WRITABLE;
			ctrl = (rs->state & RSS_READABLE) ? RSW_CTRL_SHUTDOWN : RSW_CTRL_DISCONNECT;
		} else {
			rs->state &= ~(unsigned int)RSS_READABLE;
			if (rs->state & RSS_WRITABLE)
				return 0;
			ctrl = RSW_CTRL_DISCONNECT;
		}
		rc = rs_get_comp(rs, false, ctrl_avail);
		if (rc == 0 && (rs->state & RSS_CONNECTED)) {
			rs->ctrl_seqno++;
			rc = rs_post_ctrl(rs, rsw_imm(RSW_OP_CTRL, ctrl));
		}
		if (rs->state & RSS_CONNECTED)
			rs_get_comp(rs, false, sends_done);
	}
	if (rs->id != NULL && rs->id->qp != NULL &&
	    !(rs->state & (RSS_READABLE | RSS_WRITABLE)) && !(rs->state & RSS_ERROR))
		rdma_disconnect(rs->id);
	return rc;
}

int
rshutdown(int socket, int how)
{
	struct rsock *rs = rs_lookup(socket);
	int rc;

	if (rs == NULL)
		return rs_fail(EBADF);
	if (how != SHUT_RD && how != SHUT_WR && how != SHUT_RDWR)
		return rs_fail(EINVAL);
	if (rs->type == SOCK_DGRAM)	/* nothing to tell a datagram peer */
		return (rs->state & RSS_CONNECTED) ? 0 : rs_fail(ENOTCONN);
	pthread_mutex_lock(&rs->lock);
	if (!(rs->state & (RSS_CONNECTED | RSS_DISCONNECTED))) {
		pthread_mutex_unlock(&rs->lock);
		return rs_fail(ENOTCONN);
	}
	rc = shutdown_locked(rs, how);
	pthread_mutex_unlock(&rs->lock);
	return rc;
}

int
rclose(int socket)
{
	struct rsock *rs = rs_lookup(socket);

	if (rs == NULL)
		return rs_fail(EBADF);
	pthread_mutex_lock(&rs->lock);
	if ((rs->state & RSS_CONNECTED) && rs->type == SOCK_STREAM)
		shutdown_locked(rs, SHUT_RDWR);
	pthread_mutex_unlock(&rs->lock);
	rs_free(rs);
	return 0;
}

static int
name_copy(const struct sockaddr *sa, struct sockaddr *addr, socklen_t *addrlen)
{
	socklen_t len = sockaddr_len(sa);

	if (addr == NULL || addrlen == NULL)
		return rs_fail(EFAULT);
	memcpy(addr, sa, *addrlen < len ? *addrlen : len);
	*addrlen = len;
	return 0;
}

int
rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsock *rs = rs_lookup(socket);

	if (rs == NULL)
		return rs_fail(EBADF);
	if (rs->type == SOCK_DGRAM)
		return rs_dgram_peer(rs, addr, addrlen);
	if (!(rs->state & (RSS_CONNECTED | RSS_DISCONNECTED)))
		return rs_fail(ENOTCONN);
	return name_copy(rdma_get_peer_addr(rs->id), addr, addrlen);
}

int
rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	struct rsock *rs = rs_lookup(socket);

	if (rs == NULL)
		return rs_fail(EBADF);
	return name_copy(rdma_get_local_addr(rs->id), addr, addrlen);
}
