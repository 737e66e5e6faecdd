/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * rsocket_dgram.c - datagram rsockets (SOCK_DGRAM) on a UD QP.
 *
 * A bound datagram rsocket is a UD QP with Q_Key RDMA_UDP_QKEY and an
 * RDMA_PS_UDP id listening on its address and port, so that a peer finds
 * the QP by SIDR (lib/cm's UD ids, IBTA 12.11): whichever call takes the
 * CM's events answers a SIDR_REQ with the QP's number (rsocket_table.c).  A datagram is one UD SEND: a struct
 * rsw_dgram header (the sender's port; its address is the GRH's source)
 * and the data, at most the path MTU.  A destination is resolved once
 * (SIDR, then an address handle) and kept; a datagram's source is kept the
 * same way from its receive completion (the GRH and the sender's QPN), so
 * a reply costs no resolution.  Datagrams are lost as UDP's are: a
 * receive queue that is full drops.
 *
 * This is droce's own scheme, not rdma-core's (which resolves addresses
 * over a kernel UDP socket of the same address, one droce's addresses do
 * not have): both ends of a datagram rsocket must be droce's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rsocket.h>

#include "rsocket_private.h"

#define DG_VERSION 1
#define DG_GRH_LEN 40			/* in front of every UD receive */
#define DG_RESOLVE_MS 2000
#define DG_WR_RECV (UINT64_C(1) << 63)
#define DG_POLL_BATCH 16
#define DG_DESTS_MAX 4096		/* destinations kept per rsocket */
#define DG_RETRY_NS 100000000ull	/* a failed resolution: its datagrams dropped this long */

/* In front of each datagram's data (big-endian) */
struct rsw_dgram {
	uint8_t version;
	uint8_t reserved;
	uint16_t port;			/* the sender's */
	uint32_t reserved2;
};

/* A peer: resolved (ah), or not, and not tried again before retry_ns */
struct rs_dest {
	struct rs_dest *next;
	struct sockaddr_storage addr;
	struct ibv_ah *ah;
	uint32_t qpn;
	uint64_t retry_ns;
};

/* A datagram received, not yet read */
struct rs_dmsg {
	uint32_t slot;
	uint32_t len;
	struct sockaddr_storage src;
};

struct rs_dgram {
	struct ibv_context *verbs;
	uint8_t port_num;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *smr, *rmr;
	uint8_t *sbuf, *rbuf;
	uint32_t msg_max;		/* data bytes a datagram carries */
	uint32_t sslot, rslot;		/* bytes of a send / receive slot */
	uint32_t sq_size, rq_size;
	uint32_t s_next, s_busy;	/* the next send slot, slots posted */
	struct rs_dmsg *rmsg;		/* rq_size entries */
	uint32_t r_head, r_count;
	struct rs_dest *dests, *conn;
	uint32_t ndests;
	bool armed;
};

static size_t
addr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					   sizeof(struct sockaddr_in);
}

static uint16_t
addr_port(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)sa)->sin6_port :
					   ((const struct sockaddr_in *)sa)->sin_port;
}

static bool
addr_same(const struct sockaddr *a, const struct sockaddr *b)
{
	if (a->sa_family != b->sa_family || addr_port(a) != addr_port(b))
		return false;
	if (a->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
	       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}

static bool
addr_ok(const struct sockaddr *sa, socklen_t len)
{
	return sa != NULL && (sa->sa_family == AF_INET || sa->sa_family == AF_INET6) &&
	       len >= addr_len(sa);
}

static bool
addr_any(const struct sockaddr *sa)
{
	static const struct in6_addr any6;

	if (sa->sa_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr, &any6, 16) == 0;
	return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
}

/* ---- the UD QP ----------------------------------------------------------- */

static int
post_recv_slot(struct rs_dgram *d, uint32_t slot)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)(d->rbuf + (size_t)slot * d->rslot),
		.length = d->rslot,
		.lkey = d->rmr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = DG_WR_RECV | slot, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(d->qp, &wr, &bad);
}

static int
qp_ready(struct rs_dgram *d)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = d->port_num,
		.qkey = RDMA_UDP_QKEY,
	};

	if (ibv_modify_qp(d->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_QKEY) != 0)
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	if (ibv_modify_qp(d->qp, &a, IBV_QP_STATE) != 0)
		return -1;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0 };
	return ibv_modify_qp(d->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static uint32_t
mtu_bytes(enum ibv_mtu mtu)
{
	return mtu >= IBV_MTU_256 && mtu <= IBV_MTU_4096 ? 128u << mtu : 1024u;
}

/* The device of the bound address (the first device for a wildcard). */
static struct ibv_context *
dgram_device(struct rsock *rs)
{
	struct ibv_context **list;
	struct ibv_context *v;
	int n = 0;

	if (rs->id->verbs != NULL)
		return rs->id->verbs;
	list = rdma_get_devices(&n);
	if (list == NULL)
		return NULL;
	v = n > 0 ? list[0] : NULL;
	rdma_free_devices(list);
	return v;
}

static int
dgram_verbs(struct rsock *rs, struct rs_dgram *d)
{
	struct ibv_port_attr pa;
	struct ibv_qp_init_attr qa;
	uint32_t i;

	d->verbs = dgram_device(rs);
	if (d->verbs == NULL)
		return rs_fail(ENODEV);
	d->port_num = rs->id->port_num != 0 ? rs->id->port_num : 1;
	if (ibv_query_port(d->verbs, d->port_num, &pa) != 0)
		return -1;
	d->msg_max = mtu_bytes(pa.active_mtu) - (uint32_t)sizeof(struct rsw_dgram);
	d->sslot = d->msg_max + (uint32_t)sizeof(struct rsw_dgram);
	d->rslot = DG_GRH_LEN + d->sslot;
	d->sq_size = rs->sq_size;
	d->rq_size = rs->rq_size;
	d->sbuf = calloc(d->sq_size, d->sslot);
	d->rbuf = calloc(d->rq_size, d->rslot);
	d->rmsg = calloc(d->rq_size, sizeof(*d->rmsg));
	if (d->sbuf == NULL || d->rbuf == NULL || d->rmsg == NULL)
		return rs_fail(ENOMEM);
	d->pd = ibv_alloc_pd(d->verbs);
	if (d->pd == NULL)
		return -1;
	d->smr = ibv_reg_mr(d->pd, d->sbuf, (size_t)d->sq_size * d->sslot, 0);
	d->rmr = ibv_reg_mr(d->pd, d->rbuf, (size_t)d->rq_size * d->rslot,
			    IBV_ACCESS_LOCAL_WRITE);
	d->ch = ibv_create_comp_channel(d->verbs);
	if (d->smr == NULL || d->rmr == NULL || d->ch == NULL)
		return -1;
	fcntl(d->ch->fd, F_SETFL, O_NONBLOCK);
	d->cq = ibv_create_cq(d->verbs, (int)(d->sq_size + d->rq_size), NULL, d->ch, 0);
	if (d->cq == NULL)
		return -1;
	qa = (struct ibv_qp_init_attr){
		.send_cq = d->cq, .recv_cq = d->cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = d->sq_size, .max_recv_wr = d->rq_size,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	d->qp = ibv_create_qp(d->pd, &qa);
	if (d->qp == NULL || qp_ready(d) != 0)
		return -1;
	for (i = 0; i < d->rq_size; i++)
		if (post_recv_slot(d, i) != 0)
			return -1;
	return 0;
}

static void
dests_free(struct rs_dgram *d)
{
	struct rs_dest *e;

	while ((e = d->dests) != NULL) {
		d->dests = e->next;
		if (e->ah != NULL)
			ibv_destroy_ah(e->ah);
		free(e);
	}
	d->conn = NULL;
	d->ndests = 0;
}

void
rs_dgram_free(struct rsock *rs)
{
	struct rs_dgram *d = rs->dg;

	if (d == NULL)
		return;
	dests_free(d);
	if (d->qp != NULL)
		ibv_destroy_qp(d->qp);
	if (d->cq != NULL) {
		if (d->armed) {
			struct ibv_cq *cq;
			void *ctx;

			if (ibv_get_cq_event(d->ch, &cq, &ctx) == 0)
				ibv_ack_cq_events(cq, 1);
		}
		ibv_destroy_cq(d->cq);
	}
	if (d->ch != NULL)
		ibv_destroy_comp_channel(d->ch);
	if (d->smr != NULL)
		ibv_dereg_mr(d->smr);
	if (d->rmr != NULL)
		ibv_dereg_mr(d->rmr);
	if (d->pd != NULL)
		ibv_dealloc_pd(d->pd);
	free(d->sbuf);
	free(d->rbuf);
	free(d->rmsg);
	free(d);
	rs->dg = NULL;
}

/* A bound datagram rsocket: its QP, and its id listening for SIDR. */
static int
dgram_open(struct rsock *rs)
{
	struct rs_dgram *d = calloc(1, sizeof(*d));
	int err;

	if (d == NULL)
		return rs_fail(ENOMEM);
	rs->dg = d;
	if (dgram_verbs(rs, d) == 0)
		rs->dg_qpn = d->qp->qp_num;
	if (rs->dg_qpn == 0 || rdma_listen(rs->id, 0) != 0) {
		err = errno != 0 ? errno : EIO;
		rs_dgram_free(rs);
		return rs_fail(err);
	}
	rs->state = RSS_BOUND;
	return 0;
}

int
rs_dgram_bind(struct rsock *rs, const struct sockaddr *addr, socklen_t len)
{
	struct sockaddr_storage a = { 0 };

	if (rs->dg != NULL)
		return rs_fail(EINVAL);
	if (!addr_ok(addr, len))
		return rs_fail(EINVAL);
	memcpy(&a, addr, addr_len(addr));
	if (rdma_bind_addr(rs->id, (struct sockaddr *)&a) != 0)
		return -1;
	return dgram_open(rs);
}

/* An unbound rsocket's first send or connect binds it to a free port of
 * the wildcard address, as a UDP socket's. */
static int
bind_implicit(struct rsock *rs, int family)
{
	struct sockaddr_storage a = { .ss_family = (sa_family_t)family };

	if (rs->dg != NULL)
		return 0;
	if (rdma_bind_addr(rs->id, (struct sockaddr *)&a) != 0)
		return -1;
	return dgram_open(rs);
}

/* ---- progress ------------------------------------------------------------ */

/* The datagram's source from its GRH (IPv4: the header in the last 20
 * bytes) and header; false if it carries none droce's sender would write. */
static bool
source_of(const uint8_t *buf, uint32_t len, struct sockaddr_storage *src)
{
	const struct rsw_dgram *h = (const void *)(buf + DG_GRH_LEN);

	if (len < DG_GRH_LEN + sizeof(*h) || h->version != DG_VERSION)
		return false;
	memset(src, 0, sizeof(*src));
	if ((buf[20] >> 4) == 4) {
		struct sockaddr_in *s = (struct sockaddr_in *)src;

		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, buf + 20 + 12, 4);
		s->sin_port = h->port;
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)src;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, buf + 8, 16);
		s->sin6_port = h->port;
	}
	return true;
}

static struct rs_dest *
dest_find(struct rs_dgram *d, const struct sockaddr *addr)
{
	for (struct rs_dest *e = d->dests; e != NULL; e = e->next)
		if (addr_same((const struct sockaddr *)&e->addr, addr))
			return e;
	return NULL;
}

/* A new destination, not yet resolved. */
static struct rs_dest *
dest_add(struct rs_dgram *d, const struct sockaddr *addr)
{
	struct rs_dest *e;

	if (d->ndests == DG_DESTS_MAX) {
		errno = ENOBUFS;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(&e->addr, addr, addr_len(addr));
	e->next = d->dests;
	d->dests = e;
	d->ndests++;
	return e;
}

/* A datagram's sender kept as a destination: a reply needs no SIDR. */
static void
learn_source(struct rs_dgram *d, const struct ibv_wc *wc, const uint8_t *buf,
	     const struct sockaddr *src)
{
	struct rs_dest *e = dest_find(d, src);

	if (e == NULL)
		e = dest_add(d, src);
	if (e == NULL || e->ah != NULL)
		return;
	e->ah = ibv_create_ah_from_wc(d->pd, (struct ibv_wc *)wc, (struct ibv_grh *)buf,
				      d->port_num);
	e->qpn = wc->src_qp;
}

static void
take_recv(struct rs_dgram *d, const struct ibv_wc *wc)
{
	uint32_t slot = (uint32_t)(wc->wr_id & ~DG_WR_RECV);
	const uint8_t *buf = d->rbuf + (size_t)slot * d->rslot;
	struct rs_dmsg *m;

	if (slot >= d->rq_size)
		return;
	m = &d->rmsg[(d->r_head + d->r_count) % d->rq_size];
	if (wc->status != IBV_WC_SUCCESS || !source_of(buf, wc->byte_len, &m->src)) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			post_recv_slot(d, slot);
		return;
	}
	m->slot = slot;
	m->len = wc->byte_len - DG_GRH_LEN - (uint32_t)sizeof(struct rsw_dgram);
	learn_source(d, wc, buf, (const struct sockaddr *)&m->src);
	d->r_count++;
}

static void
dgram_process(struct rsock *rs)
{
	struct rs_dgram *d = rs->dg;
	struct ibv_wc wc[DG_POLL_BATCH];
	int n, i, got = 0;

	while ((n = ibv_poll_cq(d->cq, DG_POLL_BATCH, wc)) > 0) {
		got += n;
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id & DG_WR_RECV)
				take_recv(d, &wc[i]);
			else if (d->s_busy > 0)
				d->s_busy--;
		}
	}
	/* SIDR_REQs for this or any datagram rsocket answered: when idle
	 * only, the CM's channel costs a system call */
	if (got == 0)
		rs_cm_pump();
}

static bool
dgram_readable(const struct rsock *rs)
{
	return rs->dg->r_count > 0;
}

static bool
dgram_writable(const struct rsock *rs)
{
	return rs->dg->s_busy < rs->dg->sq_size;
}

/* Until test holds (0), or EWOULDBLOCK when nonblock. */
static int
dgram_wait(struct rsock *rs, bool nonblock, bool (*test)(const struct rsock *rs))
{
	struct rs_pause pause = RS_PAUSE_INIT;
	struct rs_dgram *d = rs->dg;

	for (;;) {
		dgram_process(rs);
		if (test(rs))
			return 0;
		if (nonblock)
			return rs_fail(EWOULDBLOCK);
		rs_dgram_arm(rs);
		pthread_mutex_unlock(&rs->lock);
		rs_pause(&pause, d->ch->fd);
		pthread_mutex_lock(&rs->lock);
	}
}

/* Before sleeping on the completion channel: its event taken, the CQ
 * armed once per event. */
int
rs_dgram_arm(struct rsock *rs)
{
	struct rs_dgram *d = rs->dg;
	struct ibv_cq *cq;
	void *ctx;

	if (d == NULL)
		return -1;
	if (d->armed && ibv_get_cq_event(d->ch, &cq, &ctx) == 0) {
		ibv_ack_cq_events(cq, 1);
		d->armed = false;
	}
	if (!d->armed && ibv_req_notify_cq(d->cq, 0) == 0)
		d->armed = true;
	return d->ch->fd;
}

/* ---- resolving a destination (SIDR) -------------------------------------- */

static int
wait_cm(struct rsock *rs, unsigned int want)
{
	uint64_t end = rs_now_ns() + DG_RESOLVE_MS * 1000000ull;
	struct rs_pause pause = RS_PAUSE_INIT;
	int status = 0;

	for (;;) {
		unsigned int ev = rs_cm_events(rs, &status);

		if (ev & want)
			return 0;
		if (ev & RSE_ERROR)
			return rs_fail(status != 0 ? status : EHOSTUNREACH);
		if (rs_now_ns() > end)
			return rs_fail(ETIMEDOUT);
		pthread_mutex_unlock(&rs->lock);
		rs_pause(&pause, rs_cm.ch->fd);
		pthread_mutex_lock(&rs->lock);
	}
}

static void
cm_reset(struct rsock *rs)
{
	pthread_mutex_lock(&rs_cm.lock);
	rs->cm_events = 0;
	rs->cm_status = 0;
	rs->ud_ok = false;
	pthread_mutex_unlock(&rs_cm.lock);
}

static int
sidr(struct rsock *rs, struct rdma_cm_id *id, const struct sockaddr *dst)
{
	struct sockaddr_storage src = { 0 }, to = { 0 };
	const struct sockaddr *local = rdma_get_local_addr(rs->id);
	struct rdma_conn_param p = { .qp_num = rs->dg->qp->qp_num };

	memcpy(&to, dst, addr_len(dst));
	if (local->sa_family == dst->sa_family && !addr_any(local))
		memcpy(&src, local, addr_len(local));
	if (src.ss_family == AF_INET)
		((struct sockaddr_in *)&src)->sin_port = 0;
	else if (src.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&src)->sin6_port = 0;
	cm_reset(rs);
	if (rdma_resolve_addr(id, src.ss_family != 0 ? (struct sockaddr *)&src : NULL,
			      (struct sockaddr *)&to, DG_RESOLVE_MS) != 0 ||
	    wait_cm(rs, RSE_ADDR) != 0)
		return -1;
	if (rdma_resolve_route(id, DG_RESOLVE_MS) != 0 || wait_cm(rs, RSE_ROUTE) != 0)
		return -1;
	if (rdma_connect(id, &p) != 0 || wait_cm(rs, RSE_ESTABLISHED) != 0)
		return -1;
	return 0;
}

/* e's address handle and QPN by SIDR; -1 with errno if none. */
static int
resolve(struct rsock *rs, struct rs_dest *e)
{
	const struct sockaddr *dst = (const struct sockaddr *)&e->addr;
	struct rdma_cm_id *id;
	struct rdma_ud_param ud;
	int rc, err;

	if (rdma_create_id(rs_cm.ch, &id, rs, RDMA_PS_UDP) != 0)
		return -1;
	rc = sidr(rs, id, dst);
	err = errno;
	pthread_mutex_lock(&rs_cm.lock);
	id->context = NULL;
	ud = rs->ud;
	if (rc == 0 && !rs->ud_ok) {
		rc = -1;
		err = EHOSTUNREACH;
	}
	pthread_mutex_unlock(&rs_cm.lock);
	rs_cm_pump();
	rdma_destroy_id(id);
	if (rc != 0) {
		errno = err;
		return -1;
	}
	e->ah = ibv_create_ah(rs->dg->pd, &ud.ah_attr);
	e->qpn = ud.qp_num;
	return e->ah != NULL ? 0 : -1;
}

/*
 * addr's destination, resolved if it can be.  As UDP's, a datagram to a
 * port nobody has is lost, not refused: a failed resolution leaves the
 * entry unresolved (its datagrams dropped) for DG_RETRY_NS, and its errno
 * (ECONNREFUSED: the peer's SIDR_REP refused; ETIMEDOUT) is the socket's
 * SO_ERROR, as an ICMP error is a UDP socket's.  NULL: no memory.
 */
static struct rs_dest *
dest_get(struct rsock *rs, const struct sockaddr *addr)
{
	struct rs_dest *e = dest_find(rs->dg, addr);
	uint64_t now = rs_now_ns();

	if (e == NULL)
		e = dest_add(rs->dg, addr);
	if (e == NULL || e->ah != NULL || now < e->retry_ns)
		return e;
	if (resolve(rs, e) != 0) {
		rs->err = errno;
		e->retry_ns = rs_now_ns() + DG_RETRY_NS;
	}
	return e;
}

/* ---- the calls ----------------------------------------------------------- */

int
rs_dgram_connect(struct rsock *rs, const struct sockaddr *addr, socklen_t len)
{
	struct rs_dest *e;

	if (!addr_ok(addr, len))
		return rs_fail(EINVAL);
	if (bind_implicit(rs, addr->sa_family) != 0)
		return -1;
	e = dest_get(rs, addr);
	if (e == NULL)
		return -1;
	rs->dg->conn = e;
	rs->state = RSS_BOUND | RSS_CONNECTED;
	return 0;
}

static int
post_send(struct rs_dgram *d, const struct rs_dest *e, uint16_t port, const struct iovec *iov,
	  int iovcnt, size_t len)
{
	uint8_t *slot = d->sbuf + (size_t)d->s_next * d->sslot;
	struct rsw_dgram *h = (struct rsw_dgram *)slot;
	struct ibv_sge sge = { .addr = (uintptr_t)slot, .lkey = d->smr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = e->ah, .remote_qpn = e->qpn, .remote_qkey = RDMA_UDP_QKEY },
	};
	struct ibv_send_wr *bad;
	size_t off = sizeof(*h);
	int i;

	*h = (struct rsw_dgram){ .version = DG_VERSION, .port = port };
	for (i = 0; i < iovcnt; i++) {
		memcpy(slot + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	sge.length = (uint32_t)(sizeof(*h) + len);
	return ibv_post_send(d->qp, &wr, &bad) != 0 ? -1 : 0;
}

ssize_t
rs_dgram_sendv(struct rsock *rs, const struct iovec *iov, int iovcnt, int flags,
	       const struct sockaddr *dst, socklen_t dstlen)
{
	struct rs_dgram *d;
	struct rs_dest *e;
	size_t len = 0;
	int i;

	for (i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (dst != NULL && !addr_ok(dst, dstlen))
		return rs_fail(EINVAL);
	if (dst == NULL && (rs->dg == NULL || rs->dg->conn == NULL))
		return rs_fail(EDESTADDRREQ);
	if (dst != NULL && bind_implicit(rs, dst->sa_family) != 0)
		return -1;
	d = rs->dg;
	if (len > d->msg_max)
		return rs_fail(EMSGSIZE);
	if (!dgram_writable(rs) && dgram_wait(rs, rs_nonblocking(rs, flags), dgram_writable) != 0)
		return -1;
	e = dest_get(rs, dst != NULL ? dst : (const struct sockaddr *)&d->conn->addr);
	if (e == NULL)
		return -1;
	if (e->ah == NULL)
		return (ssize_t)len;	/* lost, as UDP's to a port nobody has */
	/* the header names the port the peer replies to */
	if (post_send(d, e, addr_port(rdma_get_local_addr(rs->id)), iov, iovcnt, len) != 0)
		return -1;
	d->s_next = (d->s_next + 1) % d->sq_size;
	d->s_busy++;
	return (ssize_t)len;
}

ssize_t
rs_dgram_recv(struct rsock *rs, void *buf, size_t len, int flags, struct sockaddr *src,
	      socklen_t *srclen)
{
	struct rs_dgram *d = rs->dg;
	struct rs_dmsg *m;
	size_t n;

	if (d == NULL)
		return rs_fail(EINVAL);	/* not bound: nothing can arrive (Linux waits) */
	if (!dgram_readable(rs) && dgram_wait(rs, rs_nonblocking(rs, flags), dgram_readable) != 0)
		return -1;
	m = &d->rmsg[d->r_head];
	n = m->len < len ? m->len : len;
	memcpy(buf, d->rbuf + (size_t)m->slot * d->rslot + DG_GRH_LEN + sizeof(struct rsw_dgram),
	       n);
	if (src != NULL && srclen != NULL) {
		socklen_t al = (socklen_t)addr_len((const struct sockaddr *)&m->src);

		memcpy(src, &m->src, *srclen < al ? *srclen : al);
		*srclen = al;
	}
	if (!(flags & MSG_PEEK)) {
		post_recv_slot(d, m->slot);
		d->r_head = (d->r_head + 1) % d->rq_size;
		d->r_count--;
	}
	/* a datagram's excess is discarded, as UDP's (MSG_TRUNC: its length) */
	return (flags & MSG_TRUNC) ? (ssize_t)m->len : (ssize_t)n;
}

short
rs_dgram_revents(struct rsock *rs, short events)
{
	short revents = 0;

	if (rs->dg == NULL)
		return events & POLLOUT;	/* an unbound socket may send */
	dgram_process(rs);
	if ((events & POLLIN) && dgram_readable(rs))
		revents |= POLLIN;
	if ((events & POLLOUT) && dgram_writable(rs))
		revents |= POLLOUT;
	return revents;
}

int
rs_dgram_peer(struct rsock *rs, struct sockaddr *addr, socklen_t *addrlen)
{
	const struct sockaddr *sa;
	socklen_t al;

	if (rs->dg == NULL || rs->dg->conn == NULL)
		return rs_fail(ENOTCONN);
	if (addr == NULL || addrlen == NULL)
		return rs_fail(EFAULT);
	sa = (const struct sockaddr *)&rs->dg->conn->addr;
	al = (socklen_t)addr_len(sa);
	memcpy(addr, sa, *addrlen < al ? *addrlen : al);
	*addrlen = al;
	return 0;
}
