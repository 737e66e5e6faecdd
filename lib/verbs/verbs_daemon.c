/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * verbs_daemon.c - daemon mode, the application's side: the connection to
 * droced and the control verbs as requests on it (verbs_daemon.h).  Data
 * verbs never come here: verbs_qp.c posts to and polls the daemon's rings
 * directly.  The application's objects are proxies (struct verbs_dmn_*)
 * holding the daemon's handle.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_memory.h>
#include <rte_ring_elem.h>

#include "verbs_daemon.h"
#include "verbs_private.h"

static struct verbs_daemon daemon_conn = {
	.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER,
};

/* The request, with fd (not -1) as SCM_RIGHTS. */
static ssize_t
send_request(const struct dmn_msg *m, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (fd >= 0) {
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(daemon_conn.fd, &mh, MSG_NOSIGNAL);
}

/* Under the lock.  ENOTCONN once the daemon is gone (then forever). */
static int
call_locked(struct dmn_msg *m, int fd)
{
	uint32_t type = m->type;
	ssize_t n;

	if (daemon_conn.fd < 0)
		return ENOTCONN;
	n = send_request(m, fd);
	if (n == (ssize_t)sizeof(*m))
		n = recv(daemon_conn.fd, m, sizeof(*m), 0);
	if (n != (ssize_t)sizeof(*m) || m->type != type) {
		close(daemon_conn.fd);
		daemon_conn.fd = -1;
		return ENOTCONN;
	}
	return m->err;
}

int
verbs_daemon_call_fd(struct dmn_msg *m, int fd)
{
	int rc = ENOTCONN;

	pthread_mutex_lock(&daemon_conn.lock);
	rc = call_locked(m, fd);
	pthread_mutex_unlock(&daemon_conn.lock);
	return rc;
}

int
verbs_daemon_call(struct dmn_msg *m)
{
	return verbs_daemon_call_fd(m, -1);
}

int
verbs_daemon_connect(const char *path, char *prefix, size_t len)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct dmn_msg m = { .type = DMN_HELLO };
	int fd, rc;

	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	daemon_conn.fd = fd;
	rc = verbs_daemon_call(&m);
	if (rc != 0)
		return -rc;
	if (memchr(m.u.hello.prefix, '\0', sizeof(m.u.hello.prefix)) == NULL ||
	    strlen(m.u.hello.prefix) >= len)
		return -EPROTO;
	strcpy(prefix, m.u.hello.prefix);
	daemon_conn.owner = (void *)(uintptr_t)m.u.hello.owner;
	return 0;
}

/*
 * The first context takes the application's events: its async_fd goes to
 * droced (OPEN_EVENTS), which answers with the ring it routes them into.
 * Later contexts of the process get none.
 */
static int
events_open(struct droce_context *ctx)
{
	struct dmn_msg m = { .type = DMN_OPEN_EVENTS };
	int rc;

	if (daemon_conn.events_ctx != NULL)
		return 0;
	rc = verbs_daemon_call_fd(&m, ctx->async_fd);
	if (rc != 0)
		return rc;
	daemon_conn.events = (struct rte_ring *)(uintptr_t)m.h[0];
	daemon_conn.events_ctx = ctx;
	return 0;
}

static void
events_close(struct droce_context *ctx)
{
	struct dmn_msg m = { .type = DMN_CLOSE_EVENTS };

	if (daemon_conn.events_ctx != ctx)
		return;
	(void)verbs_daemon_call(&m);	/* droced gone: nothing to close */
	daemon_conn.events_ctx = NULL;
	daemon_conn.events = NULL;
}

int
verbs_dmn_event_take(struct droce_context *ctx, struct droce_async_event *ev)
{
	if (ctx != daemon_conn.events_ctx)
		return -EAGAIN;
	return rte_ring_sc_dequeue_elem(daemon_conn.events, ev, sizeof(*ev)) == 0 ? 0 : -EAGAIN;
}

struct droce_context *
verbs_daemon_open(struct droce_device *device)
{
	struct droce_context *ctx = calloc(1, sizeof(*ctx));
	int rc;

	if (ctx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->socket_id = DROCE_SOCKET_ID_ANY;
	rc = verbs_events_open(ctx);
	if (rc != 0) {
		free(ctx);
		errno = rc;
		return NULL;
	}
	ctx->device = device;
	ctx->daemon = &daemon_conn;
	rc = events_open(ctx);
	if (rc != 0) {
		verbs_events_close(ctx);
		free(ctx);
		errno = rc;
		return NULL;
	}
	return ctx;
}

int
verbs_daemon_close(struct droce_context *ctx)
{
	events_close(ctx);
	verbs_events_close(ctx);
	free(ctx);
	return 0;
}

/* A request with up to two handles: 0 or a positive errno. */
static int
call2(enum dmn_req type, uint64_t h0, uint64_t h1)
{
	struct dmn_msg m = { .type = type, .h = { h0, h1 } };

	return verbs_daemon_call(&m);
}

/* ---- memory ------------------------------------------------------------------ */

void *
verbs_dmn_alloc_buf(struct droce_context *ctx, size_t len)
{
	struct dmn_msg m = { .type = DMN_ALLOC_BUF, .len = len };
	int rc;

	(void)ctx;
	rc = verbs_daemon_call(&m);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	return (void *)(uintptr_t)m.h[0];
}

int
verbs_dmn_free_buf(struct droce_context *ctx, void *p)
{
	(void)ctx;
	return call2(DMN_FREE_BUF, (uint64_t)(uintptr_t)p, 0);
}

/* ---- PDs and MRs --------------------------------------------------------------- */

static uint64_t
pd_handle(const struct droce_pd *pd)
{
	return ((const struct verbs_dmn_pd *)pd)->h;
}

struct droce_pd *
verbs_dmn_alloc_pd(struct droce_context *ctx)
{
	struct dmn_msg m = { .type = DMN_ALLOC_PD };
	struct verbs_dmn_pd *pd = calloc(1, sizeof(*pd));
	int rc;

	if (pd == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = verbs_daemon_call(&m);
	if (rc != 0) {
		free(pd);
		errno = rc;
		return NULL;
	}
	pd->pub.context = ctx;
	pd->pub.handle = m.key;
	pd->h = m.h[0];
	return &pd->pub;
}

int
verbs_dmn_dealloc_pd(struct droce_pd *pd)
{
	int rc = call2(DMN_DEALLOC_PD, pd_handle(pd), 0);

	if (rc == 0)
		free(pd);
	return rc;
}

uint64_t
verbs_dmn_event_name(const struct droce_context *ctx, const void *obj)
{
	return ctx == daemon_conn.events_ctx ? (uint64_t)(uintptr_t)obj : 0;
}

struct droce_mr *
verbs_dmn_reg_mr(struct droce_pd *pd, void *addr, size_t len, uint64_t iova,
		 int access)
{
	struct dmn_msg m = { .type = DMN_REG_MR, .h = { pd_handle(pd), iova },
			     .addr = (uint64_t)(uintptr_t)addr, .len = len,
			     .arg = access };
	struct verbs_dmn_mr *mr = calloc(1, sizeof(*mr));
	int rc;

	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	m.h[2] = verbs_dmn_event_name(pd->context, &mr->pub);	/* its lease's event */
	/* droce's hugepages are droced's too; other memory is moved to it */
	if (rte_mem_virt2memseg_list(addr) != NULL)
		rc = verbs_daemon_call(&m);
	else
		rc = verbs_dmn_mem_reg(&m);
	if (rc != 0) {
		free(mr);
		errno = rc;
		return NULL;
	}
	mr->pub.context = pd->context;
	mr->pub.pd = pd;
	mr->pub.addr = addr;
	mr->pub.length = len;
	mr->pub.lkey = m.key;
	mr->pub.rkey = m.key;
	mr->pub.handle = prot_key_index(m.key);
	mr->h = m.h[0];
	return &mr->pub;
}

/*
 * As in process: once droced deregistered it (it routes no more events
 * for it, and those it routed are in the ring before its reply), its
 * events not taken are dropped and those taken waited for (acked).  The
 * same for a released persistent region's proxy: its lease may have named it.
 */
int
verbs_dmn_dereg_mr(struct droce_mr *mr)
{
	uint64_t h = ((struct verbs_dmn_mr *)mr)->h;
	/* handle 0: a persistent region released (droce_release), only the proxy left */
	int rc = verbs_dmn_named_dereg(mr, h != 0 ? call2(DMN_DEREG_MR, h, 0) : 0);

	if (rc != 0)
		return rc;
	verbs_events_forget(mr->context, mr);
	free(mr);
	return 0;
}

/* ---- memory windows ------------------------------------------------------------- */

struct droce_mw *
verbs_dmn_alloc_mw(struct droce_pd *pd, enum droce_mw_type type)
{
	struct dmn_msg m = { .type = DMN_ALLOC_MW, .h = { pd_handle(pd) }, .arg = (int32_t)type };
	struct verbs_dmn_mw *mw = calloc(1, sizeof(*mw));
	int rc;

	if (mw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	m.addr = verbs_dmn_event_name(pd->context, &mw->pub);	/* its lease's event */
	rc = verbs_daemon_call(&m);
	if (rc != 0) {
		free(mw);
		errno = rc;
		return NULL;
	}
	mw->pub.context = pd->context;
	mw->pub.pd = pd;
	mw->pub.rkey = m.key;
	mw->pub.handle = prot_key_index(m.key);
	mw->pub.type = type;
	mw->h = m.h[0];
	return &mw->pub;
}

/* As verbs_dmn_dereg_mr: no event left naming it. */
int
verbs_dmn_dealloc_mw(struct droce_mw *mw)
{
	int rc = call2(DMN_DEALLOC_MW, ((struct verbs_dmn_mw *)mw)->h, 0);

	if (rc != 0)
		return rc;
	verbs_events_forget(mw->context, mw);
	free(mw);
	return 0;
}

/* ---- completion channels --------------------------------------------------------- */

int
verbs_dmn_create_channel(int fd, uint64_t *h)
{
	struct dmn_msg m = { .type = DMN_CREATE_CHANNEL };
	int rc = verbs_daemon_call_fd(&m, fd);

	if (rc == 0)
		*h = m.h[0];
	return rc;
}

int
verbs_dmn_destroy_channel(uint64_t h)
{
	return call2(DMN_DESTROY_CHANNEL, h, 0);
}

/* ---- CQs and QPs ---------------------------------------------------------------- */

struct droce_cq *
verbs_dmn_create_cq(struct droce_context *ctx, int cqe, void *cq_context,
		    struct droce_comp_channel *channel)
{
	struct dmn_msg m = { .type = DMN_CREATE_CQ, .arg = cqe,
			     .h = { 0, verbs_channel_handle(channel) } };
	struct verbs_dmn_cq *cq;
	int rc;

	cq = calloc(1, sizeof(*cq));
	if (cq == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	m.addr = verbs_dmn_event_name(ctx, &cq->pub);
	rc = verbs_daemon_call(&m);
	if (rc != 0) {
		free(cq);
		errno = rc;
		return NULL;
	}
	cq->h = m.h[0];
	cq->remote = (struct droce_cq *)(uintptr_t)m.h[0];
	cq->pub.context = ctx;
	cq->pub.cq_context = cq_context;
	cq->pub.cqe = m.arg;
	cq->pub.channel = channel;
	if (channel != NULL && (rc = verbs_channel_add(channel, &cq->pub)) != 0) {
		(void)call2(DMN_DESTROY_CQ, cq->h, 0);
		free(cq);
		errno = rc;
		return NULL;
	}
	return &cq->pub;
}

/*
 * As in process: off its channel once its events were acked, before the
 * daemon frees the CQ whose ready events the channel reads.  Back on it
 * if the daemon refuses (room: the slot it left).
 */
int
verbs_dmn_destroy_cq(struct droce_cq *cq)
{
	int rc;

	if (cq->channel != NULL)
		verbs_channel_leave(cq);
	rc = call2(DMN_DESTROY_CQ, ((struct verbs_dmn_cq *)cq)->h, 0);
	if (rc != 0 && cq->channel != NULL)
		(void)verbs_channel_add(cq->channel, cq);
	if (rc != 0)
		return rc;
	verbs_events_forget(cq->context, cq);	/* droced routes no more for it */
	free(cq);
	return 0;
}

static uint64_t
cq_handle(const struct droce_cq *cq)
{
	return ((const struct verbs_dmn_cq *)cq)->h;
}

static uint64_t
qp_handle(const struct droce_qp *qp)
{
	return ((const struct verbs_dmn_qp *)qp)->h;
}

/* The attributes without their pointers (the handles go in h[]). */
static void
init_wire(struct droce_qp_init_attr *w, const struct droce_qp_init_attr *init)
{
	*w = *init;
	w->qp_context = NULL;
	w->send_cq = NULL;
	w->recv_cq = NULL;
	w->srq = NULL;
}

struct droce_qp *
verbs_dmn_create_qp(struct droce_pd *pd, struct droce_qp_init_attr *init)
{
	struct dmn_msg m = { .type = DMN_CREATE_QP };
	struct verbs_dmn_qp *qp;
	int rc;

	/* SRQs and UD (address handles): not in daemon mode yet */
	if (init->srq != NULL || init->qp_type == DROCE_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	m.h[0] = pd_handle(pd);
	m.h[1] = cq_handle(init->send_cq);
	m.h[2] = cq_handle(init->recv_cq);
	m.addr = verbs_dmn_event_name(pd->context, &qp->pub);
	init_wire(&m.u.qp_init, init);
	rc = verbs_daemon_call(&m);
	if (rc != 0) {
		free(qp);
		errno = rc;
		return NULL;
	}
	init->cap = m.u.qp_init.cap;
	qp->h = m.h[0];
	qp->remote = (struct droce_qp *)(uintptr_t)m.h[0];
	qp->pub.context = pd->context;
	qp->pub.qp_context = init->qp_context;
	qp->pub.pd = pd;
	qp->pub.send_cq = init->send_cq;
	qp->pub.recv_cq = init->recv_cq;
	qp->pub.qp_num = m.key;
	qp->pub.qp_type = init->qp_type;
	qp->pub.state = DROCE_QPS_RESET;
	return &qp->pub;
}

int
verbs_dmn_modify_qp(struct droce_qp *qp, struct droce_qp_attr *attr, int mask)
{
	struct dmn_msg m = { .type = DMN_MODIFY_QP, .h = { qp_handle(qp) },
			     .arg = mask };
	int rc;

	m.u.qp.attr = *attr;
	rc = verbs_daemon_call(&m);
	if (rc == 0 && (mask & DROCE_QP_STATE))
		qp->state = attr->qp_state;
	return rc;
}

int
verbs_dmn_query_qp(struct droce_qp *qp, struct droce_qp_attr *attr,
		   struct droce_qp_init_attr *init)
{
	struct dmn_msg m = { .type = DMN_QUERY_QP, .h = { qp_handle(qp) } };
	int rc = verbs_daemon_call(&m);

	if (rc != 0)
		return rc;
	*attr = m.u.qp.attr;
	if (init != NULL) {
		*init = m.u.qp.init;
		init->qp_context = qp->qp_context;
		init->send_cq = qp->send_cq;
		init->recv_cq = qp->recv_cq;
	}
	qp->state = attr->qp_state;
	return 0;
}

/* As in process: its events not taken dropped, those taken acked first. */
int
verbs_dmn_destroy_qp(struct droce_qp *qp)
{
	int rc = call2(DMN_DESTROY_QP, qp_handle(qp), 0);

	if (rc != 0)
		return rc;
	verbs_events_forget(qp->context, qp);	/* droced routes no more for it */
	free(qp);
	return 0;
}

/* ---- queries ------------------------------------------------------------------- */

int
verbs_dmn_query_device(struct droce_context *ctx, struct droce_device_attr *a)
{
	struct dmn_msg m = { .type = DMN_QUERY_DEVICE };
	int rc = verbs_daemon_call(&m);

	(void)ctx;
	if (rc == 0)
		*a = m.u.dev;
	return rc;
}

int
verbs_dmn_query_port(struct droce_context *ctx, struct droce_port_attr *a)
{
	struct dmn_msg m = { .type = DMN_QUERY_PORT };
	int rc = verbs_daemon_call(&m);

	(void)ctx;
	if (rc == 0)
		*a = m.u.port;
	return rc;
}

int
verbs_dmn_query_gid(struct droce_context *ctx, int index, union droce_gid *gid)
{
	struct dmn_msg m = { .type = DMN_QUERY_GID, .arg = index };
	int rc = verbs_daemon_call(&m);

	(void)ctx;
	if (rc == 0)
		*gid = m.u.gid;
	return rc;
}
