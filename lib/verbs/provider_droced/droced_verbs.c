/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_verbs.c - droced's client provider: the connection to droced, the
 * control verbs as requests on it (verbs_daemon.h), and the data path on
 * the daemon's own CQs and QPs in shared memory (posting and polling their
 * rings here, no request).  The application's objects are proxies (struct
 * verbs_dmn_*) holding the daemon's handle.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_memory.h>
#include <rte_ring_elem.h>

#include "dq.h"
#include "prot.h"
#include "transport.h"
#include "verbs_daemon.h"

static struct verbs_daemon daemon_conn = {
	.fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER,
};

/* A context on droced's device: the process's connection behind it. */
struct droced_context {
	struct verbs_context vctx;
	struct verbs_daemon *conn;
};

static struct droced_context *
droced_ctx(const struct droce_context *ctx)
{
	return (struct droced_context *)((char *)verbs_ctx((struct droce_context *)ctx) -
					 offsetof(struct droced_context, vctx));
}

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

static int call_locked(struct dmn_msg *m, int fd, int *fd_out);

/* Under the lock: a connection to daemon_conn.path and its HELLO; 0 or
 * -errno (the HELLO's reply in *hello). */
static int
conn_open_locked(struct dmn_msg *hello)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t len = strlen(daemon_conn.path);
	int fd, rc;

	if (len == 0 || len >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	memcpy(a.sun_path, daemon_conn.path, len + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	daemon_conn.fd = fd;
	*hello = (struct dmn_msg){ .type = DMN_HELLO };
	rc = call_locked(hello, -1, NULL);
	if (rc == 0)
		daemon_conn.owner = (void *)(uintptr_t)hello->u.hello.owner;
	return -rc;
}

/*
 * Under the lock.  ENOTCONN once the daemon is gone (then forever); in a
 * child of fork() the first request connects the child anew
 * (verbs_daemon_fork_child).  The fd that came with the reply goes to
 * *fd_out (-1: none), or is closed when fd_out is NULL.
 */
static int
call_locked(struct dmn_msg *m, int fd, int *fd_out)
{
	uint32_t type = m->type;
	struct dmn_msg hello;
	ssize_t n;
	int got = -1;

	if (daemon_conn.fd < 0 && daemon_conn.renew) {
		daemon_conn.renew = false;	/* once: a failure is ENOTCONN */
		if (conn_open_locked(&hello) != 0)
			return ENOTCONN;
	}
	if (daemon_conn.fd < 0)
		return ENOTCONN;
	n = send_request(m, fd);
	if (n == (ssize_t)sizeof(*m))
		n = dq_sock_recv(daemon_conn.fd, m, sizeof(*m), &got);
	if (n != (ssize_t)sizeof(*m) || m->type != type) {
		if (got >= 0)
			close(got);
		close(daemon_conn.fd);
		daemon_conn.fd = -1;
		return ENOTCONN;
	}
	if (fd_out != NULL)
		*fd_out = got;
	else if (got >= 0)
		close(got);
	return m->err;
}

int
verbs_daemon_call_fds(struct dmn_msg *m, int fd, int *fd_out)
{
	int rc;

	if (fd_out != NULL)
		*fd_out = -1;
	pthread_mutex_lock(&daemon_conn.lock);
	rc = call_locked(m, fd, fd_out);
	pthread_mutex_unlock(&daemon_conn.lock);
	return rc;
}

int
verbs_daemon_call_fd(struct dmn_msg *m, int fd)
{
	return verbs_daemon_call_fds(m, fd, NULL);
}

int
verbs_daemon_call(struct dmn_msg *m)
{
	return verbs_daemon_call_fd(m, -1);
}

int
verbs_daemon_connect(const char *path, char *prefix, size_t len)
{
	struct dmn_msg m;
	int rc;

	if (strlen(path) >= sizeof(daemon_conn.path))
		return -ENAMETOOLONG;
	verbs_dmn_mem_init();
	pthread_mutex_lock(&daemon_conn.lock);
	strcpy(daemon_conn.path, path);
	rc = conn_open_locked(&m);
	pthread_mutex_unlock(&daemon_conn.lock);
	if (rc != 0)
		return rc;
	if (memchr(m.u.hello.prefix, '\0', sizeof(m.u.hello.prefix)) == NULL ||
	    strlen(m.u.hello.prefix) >= len)
		return -EPROTO;
	strcpy(prefix, m.u.hello.prefix);
	return 0;
}

int
verbs_daemon_renew(void)
{
	struct dmn_msg m;
	int rc = 0;

	pthread_mutex_lock(&daemon_conn.lock);
	if (daemon_conn.fd < 0) {
		daemon_conn.renew = false;
		rc = conn_open_locked(&m);
	}
	pthread_mutex_unlock(&daemon_conn.lock);
	return rc;
}

/*
 * In a child of fork() (its only thread the forking one): the connection
 * is the parent's, and a request the child sent on it would interleave
 * with the parent's and take its replies.  The child's copy of the socket
 * is closed (the parent's stays open) and the connection forgotten, lock
 * and events included (another thread of the parent may have held the
 * lock at the fork); the child's first request connects it anew, as an
 * application of its own (a query on a context it inherited is answered
 * as the kernel answers one on an inherited uverbs file; a handle of the
 * parent's is not the child's: droced's ENOENT).
 */
void
verbs_daemon_fork_child(void)
{
	if (daemon_conn.fd >= 0)
		close(daemon_conn.fd);
	daemon_conn.fd = -1;
	daemon_conn.renew = daemon_conn.path[0] != '\0';
	daemon_conn.owner = NULL;
	daemon_conn.events = NULL;
	daemon_conn.events_ctx = NULL;
	daemon_conn.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
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

static int
droced_event_take(struct droce_context *ctx, struct droce_async_event *ev)
{
	if (ctx != daemon_conn.events_ctx)
		return -EAGAIN;
	return rte_ring_sc_dequeue_elem(daemon_conn.events, ev, sizeof(*ev)) == 0 ? 0 : -EAGAIN;
}

static struct verbs_provider droced_provider;

struct droce_context *
verbs_daemon_open(struct droce_device *device)
{
	struct droced_context *d = calloc(1, sizeof(*d));
	int rc;

	if (d == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	d->conn = &daemon_conn;
	rc = verbs_context_init(&d->vctx, &droced_provider, device);
	if (rc != 0) {
		free(d);
		errno = rc;
		return NULL;
	}
	rc = events_open(&d->vctx.pub);
	if (rc != 0) {
		verbs_context_fini(&d->vctx);
		free(d);
		errno = rc;
		return NULL;
	}
	return &d->vctx.pub;
}

static int
droced_close_context(struct droce_context *ctx)
{
	struct droced_context *d = droced_ctx(ctx);

	events_close(ctx);
	verbs_context_fini(&d->vctx);
	free(d);
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

static int
droced_alloc_buf(struct droce_context *ctx, size_t len, void **buf)
{
	struct dmn_msg m = { .type = DMN_ALLOC_BUF, .len = len };
	int rc;

	(void)ctx;
	rc = verbs_daemon_call(&m);
	if (rc != 0)
		return -rc;
	*buf = (void *)(uintptr_t)m.h[0];
	return 0;
}

static int
droced_free_buf(struct droce_context *ctx, void *p)
{
	(void)ctx;
	return -call2(DMN_FREE_BUF, (uint64_t)(uintptr_t)p, 0);
}

/* ---- PDs and MRs --------------------------------------------------------------- */

static uint64_t
pd_handle(const struct droce_pd *pd)
{
	return ((const struct verbs_dmn_pd *)pd)->h;
}

int
verbs_dmn_alloc_pd(struct droce_context *ctx, uint32_t ctx_index, struct droce_pd **out)
{
	struct dmn_msg m = { .type = DMN_ALLOC_PD, .ctx = ctx_index };
	struct verbs_dmn_pd *pd = calloc(1, sizeof(*pd));
	int rc;

	if (pd == NULL)
		return -ENOMEM;
	rc = verbs_daemon_call(&m);
	if (rc != 0) {
		free(pd);
		return -rc;
	}
	pd->pub.context = ctx;
	pd->pub.handle = m.key;
	pd->h = m.h[0];
	*out = &pd->pub;
	return 0;
}

int
droced_alloc_pd(struct droce_context *ctx, struct droce_pd **out)
{
	return verbs_dmn_alloc_pd(ctx, 0, out);
}

int
droced_dealloc_pd(struct droce_pd *pd)
{
	int rc = call2(DMN_DEALLOC_PD, pd_handle(pd), 0);

	if (rc == 0)
		free(pd);
	return -rc;
}

uint64_t
verbs_dmn_event_name(const struct droce_context *ctx, const void *obj)
{
	return ctx == daemon_conn.events_ctx ? (uint64_t)(uintptr_t)obj : 0;
}

/* REG_MR into the proxy mr (named name in events): 0 or a positive errno;
 * on success mr's handle, keys, PD, range and rights are the new MR's. */
static int
dmn_register(struct verbs_dmn_mr *mr, struct droce_pd *pd, void *addr, size_t len,
	     uint64_t iova, int access, bool own_pages, uint64_t name)
{
	struct dmn_msg m = { .type = DMN_REG_MR, .h = { pd_handle(pd), iova, name },
			     .addr = (uint64_t)(uintptr_t)addr, .len = len,
			     .arg = access };
	int rc = own_pages ? verbs_dmn_mem_reg(&m) : verbs_daemon_call(&m);

	if (rc != 0)
		return rc;
	mr->pub.context = pd->context;
	mr->pub.pd = pd;
	mr->pub.addr = addr;
	mr->pub.length = len;
	mr->pub.lkey = m.key;
	mr->pub.rkey = m.key;
	mr->pub.handle = prot_key_index(m.key);
	mr->h = m.h[0];
	mr->name = name;
	mr->access = access;
	return 0;
}

int
verbs_dmn_reg_mr(struct droce_pd *pd, void *addr, size_t len, uint64_t iova, int access,
		 bool own_pages, uint64_t (*name)(const struct droce_context *, const void *),
		 struct droce_mr **out)
{
	struct verbs_dmn_mr *mr = calloc(1, sizeof(*mr));
	int rc;

	if (mr == NULL)
		return -ENOMEM;
	/* its lease's event names it */
	rc = dmn_register(mr, pd, addr, len, iova, access, own_pages, name(pd->context, &mr->pub));
	if (rc != 0) {
		free(mr);
		return -rc;
	}
	*out = &mr->pub;
	return 0;
}

/* A new translation: the new MR first, then the old one's dereg. */
static int
rereg_translation(struct verbs_dmn_mr *mr, struct droce_pd *pd, void *addr, size_t length,
		  int access, bool own_pages)
{
	struct verbs_dmn_mr old = *mr;
	int rc;

	if (addr == NULL || length == 0)
		return EINVAL;
	rc = dmn_register(mr, pd, addr, length, (uint64_t)(uintptr_t)addr, access, own_pages,
			  mr->name);
	if (rc != 0)
		return rc;
	rc = call2(DMN_DEREG_MR, old.h, 0);	/* EBUSY: windows bound to it */
	if (rc != 0) {
		(void)call2(DMN_DEREG_MR, mr->h, 0);
		*mr = old;
	}
	return rc;
}

int
verbs_dmn_rereg_mr(struct droce_mr *pub, int flags, struct droce_pd *pd, void *addr,
		   size_t length, int access, bool own_pages)
{
	struct verbs_dmn_mr *mr = (struct verbs_dmn_mr *)pub;
	struct droce_pd *npd = (flags & DROCE_REREG_MR_CHANGE_PD) ? pd : pub->pd;
	int nacc = (flags & DROCE_REREG_MR_CHANGE_ACCESS) ? access : mr->access;
	struct dmn_msg m = { .type = DMN_REREG_MR, .h = { mr->h, pd_handle(npd) }, .arg = nacc };
	int rc;

	if (mr->h == 0)
		return -EINVAL;	/* a released persistent region's proxy */
	if (flags & DROCE_REREG_MR_CHANGE_TRANSLATION)
		return -rereg_translation(mr, npd, addr, length, nacc, own_pages);
	m.len = (uint64_t)flags;
	rc = verbs_daemon_call(&m);
	if (rc != 0)
		return -rc;
	pub->pd = npd;
	mr->access = nacc;
	return 0;
}

static int
droced_rereg_mr(struct droce_mr *mr, int flags, struct droce_pd *pd, void *addr, size_t length,
		int access)
{
	return verbs_dmn_rereg_mr(mr, flags, pd, addr, length, access,
				  rte_mem_virt2memseg_list(addr) == NULL);
}

/* droce's hugepages are droced's too; other memory is moved to it */
static int
droced_reg_mr(struct droce_pd *pd, void *addr, size_t len, uint64_t iova,
	      int access, struct droce_mr **out)
{
	return verbs_dmn_reg_mr(pd, addr, len, iova, access,
				rte_mem_virt2memseg_list(addr) == NULL, verbs_dmn_event_name, out);
}

/*
 * As in process: once droced deregistered it (it routes no more events
 * for it, and those it routed are in the ring before its reply), its
 * events not taken are dropped and those taken waited for (acked).  The
 * same for a released persistent region's proxy: its lease may have named it.
 */
int
droced_dereg_mr(struct droce_mr *mr)
{
	uint64_t h = ((struct verbs_dmn_mr *)mr)->h;
	/* handle 0: a persistent region released (droce_release), only the proxy left */
	int rc = verbs_dmn_named_dereg(mr, h != 0 ? call2(DMN_DEREG_MR, h, 0) : 0);

	if (rc != 0)
		return -rc;
	verbs_events_forget(mr->context, mr);
	if (((struct verbs_dmn_mr *)mr)->map != NULL)	/* an attached region's pages */
		(void)munmap(((struct verbs_dmn_mr *)mr)->map, ((struct verbs_dmn_mr *)mr)->map_len);
	free(mr);
	return 0;
}

/* ---- memory windows ------------------------------------------------------------- */

int
verbs_dmn_alloc_mw(struct droce_pd *pd, int type,
		   uint64_t (*name)(const struct droce_context *, const void *),
		   struct droce_mw **out)
{
	struct dmn_msg m = { .type = DMN_ALLOC_MW, .h = { pd_handle(pd) }, .arg = (int32_t)type };
	struct verbs_dmn_mw *mw = calloc(1, sizeof(*mw));
	int rc;

	if (mw == NULL)
		return -ENOMEM;
	m.addr = name(pd->context, &mw->pub);	/* its lease's event */
	rc = verbs_daemon_call(&m);
	if (rc != 0) {
		free(mw);
		return -rc;
	}
	mw->pub.context = pd->context;
	mw->pub.pd = pd;
	mw->pub.rkey = m.key;
	mw->pub.handle = prot_key_index(m.key);
	mw->pub.type = (enum droce_mw_type)type;
	mw->h = m.h[0];
	*out = &mw->pub;
	return 0;
}

static int
droced_alloc_mw(struct droce_pd *pd, int type, struct droce_mw **out)
{
	return verbs_dmn_alloc_mw(pd, type, verbs_dmn_event_name, out);
}

/* As droced_dereg_mr: no event left naming it. */
int
droced_dealloc_mw(struct droce_mw *mw)
{
	int rc = call2(DMN_DEALLOC_MW, ((struct verbs_dmn_mw *)mw)->h, 0);

	if (rc != 0)
		return -rc;
	verbs_events_forget(mw->context, mw);
	free(mw);
	return 0;
}

/* ---- completion channels --------------------------------------------------------- */

static int
droced_create_channel(struct droce_context *ctx, int fd, uint64_t *h)
{
	struct dmn_msg m = { .type = DMN_CREATE_CHANNEL };
	int rc = verbs_daemon_call_fd(&m, fd);

	(void)ctx;
	if (rc == 0)
		*h = m.h[0];
	return -rc;
}

static int
droced_destroy_channel(uint64_t h)
{
	return -call2(DMN_DESTROY_CHANNEL, h, 0);
}

/* ---- CQs and QPs ---------------------------------------------------------------- */

static int
droced_create_cq(struct droce_context *ctx, int cqe, void *cq_context,
		 struct droce_comp_channel *channel, struct droce_cq **out)
{
	struct dmn_msg m = { .type = DMN_CREATE_CQ, .arg = cqe,
			     .h = { 0, verbs_channel_handle(channel) } };
	struct verbs_dmn_cq *cq;
	int rc;

	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return -ENOMEM;
	m.addr = verbs_dmn_event_name(ctx, &cq->pub);
	rc = verbs_daemon_call(&m);
	if (rc != 0) {
		free(cq);
		return -rc;
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
		return -rc;
	}
	*out = &cq->pub;
	return 0;
}

/*
 * As in process: off its channel once its events were acked, before the
 * daemon frees the CQ whose ready events the channel reads.  Back on it
 * if the daemon refuses (room: the slot it left).
 */
static int
droced_destroy_cq(struct droce_cq *cq)
{
	int rc;

	if (cq->channel != NULL)
		verbs_channel_leave(cq);
	rc = call2(DMN_DESTROY_CQ, ((struct verbs_dmn_cq *)cq)->h, 0);
	if (rc != 0 && cq->channel != NULL)
		(void)verbs_channel_add(cq->channel, cq);
	if (rc != 0)
		return -rc;
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

static uint64_t
srq_handle(const struct droce_srq *srq)
{
	return ((const struct verbs_dmn_srq *)srq)->h;
}

/* The attributes without their pointers (the handles go in h[] and len). */
static int
droced_create_qp(struct droce_pd *pd, struct droce_qp_init_attr *init,
		 struct droce_qp **out)
{
	struct dmn_msg m = { .type = DMN_CREATE_QP };
	struct verbs_dmn_qp *qp;
	int rc;

	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return -ENOMEM;
	m.h[0] = pd_handle(pd);
	m.h[1] = cq_handle(init->send_cq);
	m.h[2] = cq_handle(init->recv_cq);
	m.len = init->srq != NULL ? srq_handle(init->srq) : 0;
	m.addr = verbs_dmn_event_name(pd->context, &qp->pub);
	verbs_dmn_qp_init_wire(&m.u.qp_init, init);
	rc = verbs_daemon_call(&m);
	if (rc != 0) {
		free(qp);
		return -rc;
	}
	init->cap = m.u.qp_init.cap;
	qp->h = m.h[0];
	qp->remote = (struct droce_qp *)(uintptr_t)m.h[0];
	qp->pub.context = pd->context;
	qp->pub.qp_context = init->qp_context;
	qp->pub.pd = pd;
	qp->pub.send_cq = init->send_cq;
	qp->pub.recv_cq = init->recv_cq;
	qp->pub.srq = init->srq;
	qp->pub.qp_num = m.key;
	qp->pub.qp_type = init->qp_type;
	qp->pub.state = DROCE_QPS_RESET;
	*out = &qp->pub;
	return 0;
}

int
droced_modify_qp(struct droce_qp *qp, struct droce_qp_attr *attr, int mask)
{
	struct dmn_msg m = { .type = DMN_MODIFY_QP, .h = { qp_handle(qp) },
			     .arg = mask };
	int rc;

	m.u.qp.attr = *attr;
	rc = verbs_daemon_call(&m);
	if (rc == 0 && (mask & DROCE_QP_STATE))
		qp->state = attr->qp_state;
	return -rc;
}

int
droced_query_qp(struct droce_qp *qp, struct droce_qp_attr *attr,
		struct droce_qp_init_attr *init)
{
	struct dmn_msg m = { .type = DMN_QUERY_QP, .h = { qp_handle(qp) } };
	int rc = verbs_daemon_call(&m);

	if (rc != 0)
		return -rc;
	*attr = m.u.qp.attr;
	if (init != NULL) {
		*init = m.u.qp.init;
		init->qp_context = qp->qp_context;
		init->send_cq = qp->send_cq;
		init->recv_cq = qp->recv_cq;
		init->srq = qp->srq;
	}
	qp->state = attr->qp_state;
	return 0;
}

/* As in process: its events not taken dropped, those taken acked first. */
static int
droced_destroy_qp(struct droce_qp *qp)
{
	int rc = call2(DMN_DESTROY_QP, qp_handle(qp), 0);

	if (rc != 0)
		return -rc;
	verbs_events_forget(qp->context, qp);	/* droced routes no more for it */
	free(qp);
	return 0;
}

/* ---- shared receive queues ------------------------------------------------------ */

/* droced's SRQ, created with the caller's owner id as its srq_context. */
static int
droced_create_srq(struct droce_pd *pd, struct droce_srq_init_attr *init,
		  struct droce_srq **out)
{
	struct dmn_msg m = { .type = DMN_CREATE_SRQ, .h = { pd_handle(pd) },
			     .u.srq = init->attr };
	struct verbs_dmn_srq *srq = calloc(1, sizeof(*srq));
	int rc;

	if (srq == NULL)
		return -ENOMEM;
	m.addr = verbs_dmn_event_name(pd->context, &srq->pub);	/* its limit's event */
	rc = verbs_daemon_call(&m);
	if (rc != 0) {
		free(srq);
		return -rc;
	}
	init->attr = m.u.srq;
	srq->h = m.h[0];
	srq->remote = (struct droce_srq *)(uintptr_t)m.h[0];
	srq->pub.context = pd->context;
	srq->pub.srq_context = init->srq_context;
	srq->pub.pd = pd;
	srq->pub.handle = m.key;
	*out = &srq->pub;
	return 0;
}

int
droced_modify_srq(struct droce_srq *srq, struct droce_srq_attr *attr, int mask)
{
	struct dmn_msg m = { .type = DMN_MODIFY_SRQ, .h = { srq_handle(srq) }, .arg = mask,
			     .u.srq = *attr };

	return -verbs_daemon_call(&m);
}

int
droced_query_srq(struct droce_srq *srq, struct droce_srq_attr *attr)
{
	struct dmn_msg m = { .type = DMN_QUERY_SRQ, .h = { srq_handle(srq) } };
	int rc = verbs_daemon_call(&m);

	if (rc == 0)
		*attr = m.u.srq;
	return -rc;
}

/* As droced_destroy_qp: no event left naming it. */
static int
droced_destroy_srq(struct droce_srq *srq)
{
	int rc = call2(DMN_DESTROY_SRQ, srq_handle(srq), 0);

	if (rc != 0)
		return -rc;
	verbs_events_forget(srq->context, srq);	/* droced routes no more for it */
	free(srq);
	return 0;
}

/* ---- address handles -------------------------------------------------------------- */

int
droced_create_ah(struct droce_pd *pd, struct droce_ah_attr *attr, struct droce_ah **out)
{
	struct dmn_msg m = { .type = DMN_CREATE_AH, .h = { pd_handle(pd) }, .u.ah = *attr };
	struct verbs_dmn_ah *ah = calloc(1, sizeof(*ah));
	int rc;

	if (ah == NULL)
		return -ENOMEM;
	rc = verbs_daemon_call(&m);
	if (rc != 0) {
		free(ah);
		return -rc;
	}
	ah->pub.context = pd->context;
	ah->pub.pd = pd;
	ah->pub.handle = m.key;	/* what a UD work request carries */
	ah->h = m.h[0];
	*out = &ah->pub;
	return 0;
}

int
droced_destroy_ah(struct droce_ah *ah)
{
	int rc = call2(DMN_DESTROY_AH, ((struct verbs_dmn_ah *)ah)->h, 0);

	if (rc == 0)
		free(ah);
	return -rc;
}

/* ---- multicast ------------------------------------------------------------------ */

static int
mcast_call(enum dmn_req type, struct droce_qp *qp, const union droce_gid *gid)
{
	struct dmn_msg m = { .type = type, .h = { qp_handle(qp) } };

	m.u.gid = *gid;
	return -verbs_daemon_call(&m);
}

int
droced_attach_mcast(struct droce_qp *qp, const union droce_gid *gid)
{
	return mcast_call(DMN_ATTACH_MCAST, qp, gid);
}

int
droced_detach_mcast(struct droce_qp *qp, const union droce_gid *gid)
{
	return mcast_call(DMN_DETACH_MCAST, qp, gid);
}

/* ---- queries ------------------------------------------------------------------- */

int
droced_query_device_ex(struct droce_context *ctx, struct droce_device_attr_ex *a)
{
	struct dmn_msg m = { .type = DMN_QUERY_DEVICE };
	int rc = verbs_daemon_call(&m);

	(void)ctx;
	if (rc == 0) {
		*a = m.u.dev;
	}
	return -rc;
}

int
droced_query_port(struct droce_context *ctx, uint8_t port_num, struct droce_port_attr *a)
{
	struct dmn_msg m = { .type = DMN_QUERY_PORT };
	int rc = verbs_daemon_call(&m);

	(void)ctx;
	(void)port_num;
	if (rc == 0)
		*a = m.u.port;
	return -rc;
}

int
droced_query_gid(struct droce_context *ctx, uint8_t port_num, int index, union droce_gid *gid)
{
	struct dmn_msg m = { .type = DMN_QUERY_GID, .arg = index };
	int rc = verbs_daemon_call(&m);

	(void)ctx;
	(void)port_num;
	if (rc == 0)
		*gid = m.u.gid;
	return -rc;
}

/* *pkey in network byte order, as ibv_query_pkey's; the reply's key field. */
int
droced_query_pkey(struct droce_context *ctx, uint8_t port_num, int index, uint16_t *pkey)
{
	struct dmn_msg m = { .type = DMN_QUERY_PKEY, .arg = index };
	int rc = verbs_daemon_call(&m);

	(void)ctx;
	(void)port_num;
	if (rc == 0)
		*pkey = (uint16_t)m.key;
	return -rc;
}

/* droced's engine runs on its transport lcore: nothing to run here, and
 * a channel's waiter sleeps on its fd. */
int
droced_progress(struct droce_context *ctx)
{
	(void)ctx;
	return 0;
}

int
droced_self_driven(struct droce_context *ctx)
{
	(void)ctx;
	return 1;
}

/* ---- the data path: the daemon's CQs and QPs, in shared memory ------------------ */

/*
 * The daemon's object behind an application's CQ/QP, or NULL if not its
 * own: droced set its cq_context / qp_context to the owner id of the
 * application it created it for.
 */
static inline struct tp_cq *
cq_remote(struct droce_cq *cq)
{
	const struct verbs_dmn_cq *d = (const struct verbs_dmn_cq *)cq;

	if (unlikely(d->remote->cq_context != droced_ctx(cq->context)->conn->owner))
		return NULL;
	return tp_cq_from_pub(d->remote);
}

static inline struct tp_qp *
qp_remote(struct droce_qp *qp)
{
	const struct verbs_dmn_qp *d = (const struct verbs_dmn_qp *)qp;

	if (unlikely(d->remote->qp_context != droced_ctx(qp->context)->conn->owner))
		return NULL;
	return tp_qp_from_pub(d->remote);
}

static int
droced_post_send(struct droce_qp *qp, struct droce_send_wr *wr,
		 struct droce_send_wr **bad_wr)
{
	struct tp_qp *t = qp_remote(qp);

	return t != NULL ? tp_post_send(t, wr, bad_wr) : -EINVAL;
}

static int
droced_post_recv(struct droce_qp *qp, struct droce_recv_wr *wr,
		 struct droce_recv_wr **bad_wr)
{
	struct tp_qp *t = qp_remote(qp);

	return t != NULL ? tp_post_recv(t, wr, bad_wr) : -EINVAL;
}

static inline struct tp_srq *
srq_remote(struct droce_srq *srq)
{
	const struct verbs_dmn_srq *d = (const struct verbs_dmn_srq *)srq;

	if (unlikely(d->remote->srq_context != droced_ctx(srq->context)->conn->owner))
		return NULL;
	return tp_srq_from_pub(d->remote);
}

static int
droced_post_srq_recv(struct droce_srq *srq, struct droce_recv_wr *wr,
		     struct droce_recv_wr **bad_wr)
{
	struct tp_srq *t = srq_remote(srq);

	return t != NULL ? tp_post_srq_recv(t, wr, bad_wr) : -EINVAL;
}

static int
droced_poll_cq(struct droce_cq *cq, int num_entries, struct droce_wc *wc)
{
	struct tp_cq *t = cq_remote(cq);

	return t != NULL ? tp_cq_poll(t, num_entries, wc) : -EINVAL;
}

static int
droced_req_notify_cq(struct droce_cq *cq, int solicited_only)
{
	struct tp_cq *t = cq_remote(cq);

	if (t == NULL)
		return -EINVAL;
	tp_cq_arm(t, solicited_only != 0);
	return 0;
}

static int
droced_cq_take_event(struct droce_cq *cq)
{
	struct tp_cq *t = cq_remote(cq);

	return t != NULL && tp_cq_take_event(t) ? 1 : 0;
}

uint64_t
verbs_dmn_mr_handle(const struct droce_mr *mr)
{
	return ((const struct verbs_dmn_mr *)mr)->h;
}

uint64_t
verbs_dmn_mw_handle(const struct droce_mw *mw)
{
	return ((const struct verbs_dmn_mw *)mw)->h;
}

/*
 * What droced does not serve yet (counters) is left
 * out: EOPNOTSUPP, as for any provider.
 */
static struct verbs_provider droced_provider = {
	.name = "droced",
	.ops = {
		.post_send = droced_post_send,
		.post_recv = droced_post_recv,
		.poll_cq = droced_poll_cq,
		.post_srq_recv = droced_post_srq_recv,
		.req_notify_cq = droced_req_notify_cq,
		.close_context = droced_close_context,
		.query_device_ex = droced_query_device_ex,
		.query_port = droced_query_port,
		.query_gid = droced_query_gid,
		.query_pkey = droced_query_pkey,
		.cm_relay = droced_cm_relay,
		.progress = droced_progress,
		.self_driven = droced_self_driven,
		.event_take = droced_event_take,
		.alloc_buf = droced_alloc_buf,
		.free_buf = droced_free_buf,
		.create_channel = droced_create_channel,
		.destroy_channel = droced_destroy_channel,
		.cq_take_event = droced_cq_take_event,
		.alloc_pd = droced_alloc_pd,
		.dealloc_pd = droced_dealloc_pd,
		.reg_mr = droced_reg_mr,
		.dereg_mr = droced_dereg_mr,
		.rereg_mr = droced_rereg_mr,
		.alloc_mw = droced_alloc_mw,
		.dealloc_mw = droced_dealloc_mw,
		.set_mr_lease = droced_set_mr_lease,
		.set_mw_lease = droced_set_mw_lease,
		.renew_mr = droced_renew_mr,
		.renew_mw = droced_renew_mw,
		.query_mr_lease = droced_query_mr_lease,
		.query_mw_lease = droced_query_mw_lease,
		.persist_mr = droced_persist_mr,
		.attach_mr = droced_attach_mr,
		.release = droced_release,
		.create_cq = droced_create_cq,
		.destroy_cq = droced_destroy_cq,
		.create_qp = droced_create_qp,
		.modify_qp = droced_modify_qp,
		.query_qp = droced_query_qp,
		.destroy_qp = droced_destroy_qp,
		.create_srq = droced_create_srq,
		.modify_srq = droced_modify_srq,
		.query_srq = droced_query_srq,
		.destroy_srq = droced_destroy_srq,
		.create_ah = droced_create_ah,
		.destroy_ah = droced_destroy_ah,
		.attach_mcast = droced_attach_mcast,
		.detach_mcast = droced_detach_mcast,
	},
};

VERBS_PROVIDER_REGISTER(droced_provider)
