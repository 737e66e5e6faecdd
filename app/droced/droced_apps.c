/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_apps.c - the applications of the daemon.  Each has a table of
 * the objects it created (the handle is the object's address); every
 * handle in a request is looked up in the caller's table, so another
 * application's PD, MR, CQ, QP or buffer is ENOENT, and a PD's MRs can
 * only cover the caller's own buffers (EFAULT).  The objects are the
 * daemon's, created with the droce_* verbs on its own context; a CQ's and
 * QP's cq_context / qp_context hold the owner id the application's data
 * path checks (verbs_daemon.h).  droced --ctl list and telemetry's
 * /droced/apps show the tables' counts.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include <rte_malloc.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include "droced.h"

/* A buffer larger than this is refused (EINVAL): hugepage memory is shared */
#define DROCED_MAX_BUF (UINT64_C(1) << 30)
#define BUF_ALIGN 64
/* Events an application's ring holds; beyond it they are dropped, counted */
#define DROCED_EVENT_RING 1024

enum obj_type { OBJ_BUF, OBJ_PD, OBJ_MR, OBJ_CQ, OBJ_QP, OBJ_CHANNEL, OBJ_NTYPES };

struct obj {
	enum obj_type type;
	void *p;
	uint64_t len;		/* a buffer's */
	uint64_t app_ptr;	/* a CQ's, QP's name in its events (0: none) */
};

struct droced_app {
	int fd;
	int rx_fd;		/* passed with the request being served, or -1 */
	pid_t pid;
	bool hello;
	void *owner;		/* owner id: never reused */
	/* its asynchronous events (OPEN_EVENTS): the ring they go into and a
	 * copy of the application's async_fd, which counts them */
	struct rte_ring *ev_ring;
	int ev_fd;
	uint64_t ev_dropped;
	struct obj *obj;
	uint32_t nobj, cap;
	uint32_t count[OBJ_NTYPES];
	uint64_t buf_bytes;
	struct droced_app *next;
};

static struct {
	struct droce_context *ctx;
	char prefix[DMN_PREFIX_LEN];
	uint64_t next_owner;
	struct droced_app *apps;
} dmn;

/*
 * What telemetry's thread reads (/droced/apps): a copy of on_list's
 * answer, taken after every request and reap on the main thread.
 */
static struct {
	pthread_mutex_t lock;
	struct dmn_app_info apps[DMN_LIST_MAX];
	int n;
} tel = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int tel_apps(const char *cmd, const char *params, struct rte_tel_data *d);

void
droced_apps_init(struct droce_context *ctx, const char *prefix)
{
	dmn.ctx = ctx;
	snprintf(dmn.prefix, sizeof(dmn.prefix), "%s", prefix);
	dmn.next_owner = 1;
	rte_telemetry_register_cmd("/droced/apps", tel_apps,
				   "droced's applications: objects and buffer bytes by pid");
}

struct droced_app *
droced_app_new(int fd, pid_t pid)
{
	struct droced_app *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->fd = fd;
	a->rx_fd = -1;
	a->ev_fd = -1;
	a->pid = pid;
	a->owner = (void *)(uintptr_t)dmn.next_owner++;
	a->next = dmn.apps;
	dmn.apps = a;
	return a;
}

int
droced_app_fd(const struct droced_app *app)
{
	return app->fd;
}

/* ---- the handle table ------------------------------------------------------- */

static int
obj_add(struct droced_app *a, enum obj_type type, void *p, uint64_t len)
{
	if (a->nobj == a->cap) {
		uint32_t cap = a->cap != 0 ? a->cap * 2 : 16;
		struct obj *o = realloc(a->obj, cap * sizeof(*o));

		if (o == NULL)
			return ENOMEM;
		a->obj = o;
		a->cap = cap;
	}
	a->obj[a->nobj++] = (struct obj){ type, p, len };
	a->count[type]++;
	if (type == OBJ_BUF)
		a->buf_bytes += len;
	return 0;
}

/* The caller's object of that type with handle h, or NULL. */
static struct obj *
obj_find(struct droced_app *a, enum obj_type type, uint64_t h)
{
	for (uint32_t i = 0; i < a->nobj; i++)
		if (a->obj[i].type == type && (uint64_t)(uintptr_t)a->obj[i].p == h)
			return &a->obj[i];
	return NULL;
}

static void
obj_remove(struct droced_app *a, struct obj *o)
{
	a->count[o->type]--;
	if (o->type == OBJ_BUF)
		a->buf_bytes -= o->len;
	*o = a->obj[--a->nobj];
}

/* [addr, addr + len) inside one of the caller's buffers. */
static bool
in_own_buf(struct droced_app *a, uint64_t addr, uint64_t len)
{
	for (uint32_t i = 0; i < a->nobj; i++) {
		uint64_t b = (uint64_t)(uintptr_t)a->obj[i].p;

		if (a->obj[i].type == OBJ_BUF && addr >= b && len <= a->obj[i].len &&
		    addr - b <= a->obj[i].len - len)
			return true;
	}
	return false;
}

/* Some MR of the caller lies in the buffer at b. */
static bool
buf_in_use(struct droced_app *a, const struct obj *buf)
{
	uint64_t b = (uint64_t)(uintptr_t)buf->p;

	for (uint32_t i = 0; i < a->nobj; i++) {
		const struct droce_mr *mr = a->obj[i].p;

		if (a->obj[i].type == OBJ_MR && (uint64_t)(uintptr_t)mr->addr >= b &&
		    (uint64_t)(uintptr_t)mr->addr - b < buf->len)
			return true;
	}
	return false;
}

/* The one place that knows how each type is destroyed: 0 or an errno. */
static int
obj_free(enum obj_type type, void *p)
{
	switch (type) {
	case OBJ_MR:
		return droce_dereg_mr(p);
	case OBJ_QP:
		return droce_destroy_qp(p);
	case OBJ_CQ:
		return droce_destroy_cq(p);
	case OBJ_PD:
		return droce_dealloc_pd(p);
	case OBJ_CHANNEL:
		return droce_destroy_comp_channel(p);	/* closes our copy of its fd */
	case OBJ_BUF:
		rte_free(p);
		return 0;
	case OBJ_NTYPES:
		break;
	}
	return EINVAL;
}

/* A new object into the caller's table; destroyed again if it cannot be. */
static int
adopt(struct droced_app *a, enum obj_type type, void *p, uint64_t len)
{
	int rc = obj_add(a, type, p, len);

	if (rc != 0)
		(void)obj_free(type, p);
	return rc;
}

/* Destroy one of the caller's objects and forget it (kept if that fails). */
static int
release(struct droced_app *a, struct obj *o)
{
	int rc = obj_free(o->type, o->p);

	if (rc == 0)
		obj_remove(a, o);
	return rc;
}

/* A dealloc/dereg/destroy request: ENOENT for a handle not the caller's. */
static int
release_handle(struct droced_app *a, enum obj_type type, uint64_t h)
{
	struct obj *o = obj_find(a, type, h);

	return o != NULL ? release(a, o) : ENOENT;
}

/* ---- the requests ------------------------------------------------------------ */

static int
on_hello(struct droced_app *a, struct dmn_msg *m)
{
	snprintf(m->u.hello.prefix, sizeof(m->u.hello.prefix), "%s", dmn.prefix);
	m->u.hello.owner = (uint64_t)(uintptr_t)a->owner;
	a->hello = true;
	return 0;
}

static int
on_alloc_buf(struct droced_app *a, struct dmn_msg *m)
{
	void *p;
	int rc;

	if (m->len == 0 || m->len > DROCED_MAX_BUF)
		return EINVAL;
	p = rte_zmalloc("droced_buf", m->len, BUF_ALIGN);
	if (p == NULL)
		return ENOMEM;
	rc = adopt(a, OBJ_BUF, p, m->len);
	if (rc != 0)
		return rc;
	m->h[0] = (uint64_t)(uintptr_t)p;
	return 0;
}

static int
on_free_buf(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *o = obj_find(a, OBJ_BUF, m->h[0]);

	if (o == NULL)
		return EINVAL;
	if (buf_in_use(a, o))
		return EBUSY;
	return release(a, o);
}

static int
on_alloc_pd(struct droced_app *a, struct dmn_msg *m)
{
	struct droce_pd *pd = droce_alloc_pd(dmn.ctx);
	int rc;

	if (pd == NULL)
		return errno;
	rc = adopt(a, OBJ_PD, pd, 0);
	if (rc != 0)
		return rc;
	m->h[0] = (uint64_t)(uintptr_t)pd;
	m->key = pd->handle;
	return 0;
}

static int
on_dealloc_pd(struct droced_app *a, struct dmn_msg *m)
{
	return release_handle(a, OBJ_PD, m->h[0]);
}

static int
on_reg_mr(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *pd = obj_find(a, OBJ_PD, m->h[0]);
	struct droce_mr *mr;
	int rc;

	if (pd == NULL)
		return ENOENT;
	if (!in_own_buf(a, m->addr, m->len))
		return EFAULT;	/* only the caller's droce_alloc_buf memory */
	mr = droce_reg_mr(pd->p, (void *)(uintptr_t)m->addr, m->len, m->arg);
	if (mr == NULL)
		return errno;
	rc = adopt(a, OBJ_MR, mr, 0);
	if (rc != 0)
		return rc;
	m->h[0] = (uint64_t)(uintptr_t)mr;
	m->key = mr->lkey;
	return 0;
}

static int
on_dereg_mr(struct droced_app *a, struct dmn_msg *m)
{
	return release_handle(a, OBJ_MR, m->h[0]);
}

static int
on_create_cq(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *ch = m->h[1] != 0 ? obj_find(a, OBJ_CHANNEL, m->h[1]) : NULL;
	struct droce_cq *cq;
	int rc;

	if (m->h[1] != 0 && ch == NULL)
		return ENOENT;
	cq = droce_create_cq(dmn.ctx, m->arg, a->owner, ch != NULL ? ch->p : NULL, 0);
	if (cq == NULL)
		return errno;
	rc = adopt(a, OBJ_CQ, cq, 0);
	if (rc != 0)
		return rc;
	obj_find(a, OBJ_CQ, (uint64_t)(uintptr_t)cq)->app_ptr = m->addr;
	m->h[0] = (uint64_t)(uintptr_t)cq;
	m->arg = cq->cqe;
	return 0;
}

static int
on_destroy_cq(struct droced_app *a, struct dmn_msg *m)
{
	return release_handle(a, OBJ_CQ, m->h[0]);
}

/* What goes back on the socket: no pointer of the daemon's but handles. */
static void
init_wire(struct droce_qp_init_attr *init)
{
	init->qp_context = NULL;
	init->send_cq = NULL;
	init->recv_cq = NULL;
	init->srq = NULL;
}

static int
on_create_qp(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *pd = obj_find(a, OBJ_PD, m->h[0]);
	struct obj *scq = obj_find(a, OBJ_CQ, m->h[1]);
	struct obj *rcq = obj_find(a, OBJ_CQ, m->h[2]);
	struct droce_qp_init_attr init = m->u.qp_init;
	struct droce_qp *qp;
	int rc;

	if (pd == NULL || scq == NULL || rcq == NULL)
		return ENOENT;
	/* a UD WQE holds an address handle's pointer, an SRQ is not yet here */
	if (init.qp_type == DROCE_QPT_UD)
		return EOPNOTSUPP;
	init.qp_context = a->owner;
	init.send_cq = scq->p;
	init.recv_cq = rcq->p;
	init.srq = NULL;
	qp = droce_create_qp(pd->p, &init);
	if (qp == NULL)
		return errno;
	rc = adopt(a, OBJ_QP, qp, 0);
	if (rc != 0)
		return rc;
	obj_find(a, OBJ_QP, (uint64_t)(uintptr_t)qp)->app_ptr = m->addr;
	init_wire(&init);
	m->u.qp_init = init;
	m->h[0] = (uint64_t)(uintptr_t)qp;
	m->key = qp->qp_num;
	return 0;
}

static int
on_modify_qp(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *o = obj_find(a, OBJ_QP, m->h[0]);

	if (o == NULL)
		return ENOENT;
	return droce_modify_qp(o->p, &m->u.qp.attr, m->arg);
}

static int
on_query_qp(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *o = obj_find(a, OBJ_QP, m->h[0]);
	int rc;

	if (o == NULL)
		return ENOENT;
	rc = droce_query_qp(o->p, &m->u.qp.attr, m->arg, &m->u.qp.init);
	init_wire(&m->u.qp.init);
	return rc;
}

static int
on_destroy_qp(struct droced_app *a, struct dmn_msg *m)
{
	return release_handle(a, OBJ_QP, m->h[0]);
}

static int
on_query_device(struct droced_app *a, struct dmn_msg *m)
{
	(void)a;
	return droce_query_device(dmn.ctx, &m->u.dev);
}

static int
on_query_port(struct droced_app *a, struct dmn_msg *m)
{
	(void)a;
	return droce_query_port(dmn.ctx, 1, &m->u.port);
}

static int
on_query_gid(struct droced_app *a, struct dmn_msg *m)
{
	(void)a;
	return droce_query_gid(dmn.ctx, 1, m->arg, &m->u.gid);
}

/* The applications that said HELLO (at most DMN_LIST_MAX): how many. */
static int
list_apps(struct dmn_app_info *out)
{
	int n = 0;

	for (struct droced_app *p = dmn.apps; p != NULL && n < DMN_LIST_MAX; p = p->next) {
		if (!p->hello)
			continue;
		out[n++] = (struct dmn_app_info){
			.pid = p->pid, .pd = p->count[OBJ_PD], .mr = p->count[OBJ_MR],
			.cq = p->count[OBJ_CQ], .qp = p->count[OBJ_QP],
			.buf = p->count[OBJ_BUF], .buf_bytes = p->buf_bytes,
		};
	}
	return n;
}

/* droced --ctl PATH list */
static int
on_list(struct droced_app *a, struct dmn_msg *m)
{
	(void)a;
	m->arg = list_apps(m->u.apps);
	return 0;
}

static void
tel_snapshot(void)
{
	pthread_mutex_lock(&tel.lock);
	tel.n = list_apps(tel.apps);
	pthread_mutex_unlock(&tel.lock);
}

/* /droced/apps: {"<pid>": {"pd": n, "mr": n, "cq": n, "qp": n, "buf": n,
 * "buf_bytes": n}, ...} */
static int
tel_apps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel.lock);
	for (int i = 0; i < tel.n; i++) {
		const struct dmn_app_info *p = &tel.apps[i];
		struct rte_tel_data *c = rte_tel_data_alloc();
		char pid[16];

		if (c == NULL)
			break;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_u64(c, "pd", p->pd);
		rte_tel_data_add_dict_u64(c, "mr", p->mr);
		rte_tel_data_add_dict_u64(c, "cq", p->cq);
		rte_tel_data_add_dict_u64(c, "qp", p->qp);
		rte_tel_data_add_dict_u64(c, "buf", p->buf);
		rte_tel_data_add_dict_u64(c, "buf_bytes", p->buf_bytes);
		snprintf(pid, sizeof(pid), "%d", (int)p->pid);
		rte_tel_data_add_dict_container(d, pid, c, 0);
	}
	pthread_mutex_unlock(&tel.lock);
	return 0;
}

/*
 * The fd passed with the request is an eventfd: the engine's write to a
 * channel's fd must not block (a full pipe) or fail (RTE_VERIFY in
 * lib/transport cq_fire), nor may droced's to an async_fd block.
 * 0, EBADF (none passed) or EINVAL.
 */
static int
passed_eventfd(const struct droced_app *a)
{
	char path[32], target[32];
	ssize_t n;

	if (a->rx_fd < 0)
		return EBADF;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", a->rx_fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return EINVAL;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[eventfd]") == 0 ? 0 : EINVAL;
}

/* The application's eventfd (passed with the request) in a channel of ours. */
static int
on_create_channel(struct droced_app *a, struct dmn_msg *m)
{
	struct droce_comp_channel *ch;
	int rc = passed_eventfd(a);

	if (rc != 0)
		return rc;
	ch = verbs_channel_adopt(dmn.ctx, a->rx_fd);
	if (ch == NULL)
		return errno;
	a->rx_fd = -1;		/* the channel's now */
	rc = adopt(a, OBJ_CHANNEL, ch, 0);
	if (rc != 0)
		return rc;
	m->h[0] = (uint64_t)(uintptr_t)ch;
	return 0;
}

static int
on_destroy_channel(struct droced_app *a, struct dmn_msg *m)
{
	return release_handle(a, OBJ_CHANNEL, m->h[0]);
}

/* ---- asynchronous events --------------------------------------------------------- */

/*
 * The application's async_fd (passed with the request) and a ring of its
 * own for its events, in shared memory: the application takes them there
 * with verbs_event.c's code, as from the engine's ring in process.
 */
static int
on_open_events(struct droced_app *a, struct dmn_msg *m)
{
	char name[RTE_RING_NAMESIZE];
	int rc = passed_eventfd(a);

	if (rc != 0)
		return rc;
	if (a->ev_ring != NULL)
		return EBUSY;
	snprintf(name, sizeof(name), "droced_ev_%" PRIu64, (uint64_t)(uintptr_t)a->owner);
	a->ev_ring = rte_ring_create_elem(name, sizeof(struct droce_async_event),
					  DROCED_EVENT_RING, SOCKET_ID_ANY,
					  RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (a->ev_ring == NULL)
		return ENOMEM;
	a->ev_fd = a->rx_fd;
	a->rx_fd = -1;
	m->h[0] = (uint64_t)(uintptr_t)a->ev_ring;
	return 0;
}

/* No more events for the application; what its ring held goes with it. */
static void
events_close(struct droced_app *a)
{
	rte_ring_free(a->ev_ring);
	a->ev_ring = NULL;
	if (a->ev_fd >= 0)
		close(a->ev_fd);
	a->ev_fd = -1;
}

static int
on_close_events(struct droced_app *a, struct dmn_msg *m)
{
	(void)m;
	events_close(a);
	return 0;
}

/* One event into the application's ring, then its count (as the engine). */
static void
deliver(struct droced_app *a, struct droce_async_event *ev)
{
	const uint64_t one = 1;

	if (a->ev_ring == NULL)
		return;
	if (rte_ring_sp_enqueue_elem(a->ev_ring, ev, sizeof(*ev)) != 0) {
		if (a->ev_dropped++ == 0)
			fprintf(stderr, "droced: pid %d takes no events: dropped\n", (int)a->pid);
		return;
	}
	if (write(a->ev_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		fprintf(stderr, "droced: pid %d: event count: %s\n", (int)a->pid,
			strerror(errno));
}

/* The caller's object at address p (of any type), or NULL. */
static struct obj *
obj_at(struct droced_app *a, const void *p)
{
	for (uint32_t i = 0; i < a->nobj; i++)
		if (a->obj[i].p == p)
			return &a->obj[i];
	return NULL;
}

void
droced_route_event(const struct droce_async_event *ev)
{
	void *obj = verbs_event_object(ev);

	for (struct droced_app *a = dmn.apps; a != NULL; a = a->next) {
		struct droce_async_event mine = *ev;
		struct obj *o;

		if (obj == NULL) {		/* port, device: everyone's */
			deliver(a, &mine);
			continue;
		}
		o = obj_at(a, obj);
		if (o == NULL)
			continue;
		if (o->app_ptr != 0) {
			/* the members are pointers to structures: one
			 * representation (C11 6.2.5p28), any names it */
			mine.element.qp = (struct droce_qp *)(uintptr_t)o->app_ptr;
			deliver(a, &mine);
		}
		return;
	}
}

/* Indexed by enum dmn_req (verbs_daemon.h's one list of requests). */
static int (*const handlers[DMN_NREQ])(struct droced_app *, struct dmn_msg *) = {
	[DMN_HELLO] = on_hello,
	[DMN_ALLOC_BUF] = on_alloc_buf,
	[DMN_FREE_BUF] = on_free_buf,
	[DMN_ALLOC_PD] = on_alloc_pd,
	[DMN_DEALLOC_PD] = on_dealloc_pd,
	[DMN_REG_MR] = on_reg_mr,
	[DMN_DEREG_MR] = on_dereg_mr,
	[DMN_CREATE_CQ] = on_create_cq,
	[DMN_DESTROY_CQ] = on_destroy_cq,
	[DMN_CREATE_QP] = on_create_qp,
	[DMN_MODIFY_QP] = on_modify_qp,
	[DMN_QUERY_QP] = on_query_qp,
	[DMN_DESTROY_QP] = on_destroy_qp,
	[DMN_QUERY_DEVICE] = on_query_device,
	[DMN_QUERY_PORT] = on_query_port,
	[DMN_QUERY_GID] = on_query_gid,
	[DMN_LIST] = on_list,
	[DMN_CREATE_CHANNEL] = on_create_channel,
	[DMN_DESTROY_CHANNEL] = on_destroy_channel,
	[DMN_OPEN_EVENTS] = on_open_events,
	[DMN_CLOSE_EVENTS] = on_close_events,
};

/*
 * One message, and the fd passed with it (SCM_RIGHTS, close-on-exec) in
 * *fd, or -1; any more fds, or a truncated control message, are closed.
 */
static ssize_t
recv_with_fd(int sock, struct dmn_msg *m, int *fd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr h = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			    .msg_controllen = sizeof(ctl.buf) };
	ssize_t n = recvmsg(sock, &h, MSG_CMSG_CLOEXEC);

	*fd = -1;
	for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&h) : NULL; c != NULL;
	     c = CMSG_NXTHDR(&h, c)) {
		size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < nfd; i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(f));
			if (*fd < 0 && !(h.msg_flags & MSG_CTRUNC))
				*fd = f;
			else
				close(f);
		}
	}
	return n;
}

bool
droced_app_serve(struct droced_app *a)
{
	struct dmn_msg m;
	ssize_t n = recv_with_fd(a->fd, &m, &a->rx_fd);

	if (n != (ssize_t)sizeof(m)) {
		if (a->rx_fd >= 0)
			close(a->rx_fd);
		a->rx_fd = -1;
		return false;	/* EOF (death) or not our protocol */
	}
	if (m.type >= DMN_NREQ || handlers[m.type] == NULL)
		m.err = EINVAL;
	else if (m.type != DMN_HELLO && m.type != DMN_LIST && !a->hello)
		m.err = EPROTO;
	else
		m.err = handlers[m.type](a, &m);
	if (a->rx_fd >= 0)	/* not taken by the request */
		close(a->rx_fd);
	a->rx_fd = -1;
	tel_snapshot();
	/* the object is in the table already: a caller dead by now is reaped */
	return send(a->fd, &m, sizeof(m), MSG_NOSIGNAL) == (ssize_t)sizeof(m);
}

/* ---- death -------------------------------------------------------------------- */

/* Every object of that type, the newest first. */
static void
reap_type(struct droced_app *a, enum obj_type type)
{
	for (uint32_t i = a->nobj; i-- > 0;) {
		struct obj *o = &a->obj[i];
		int rc;

		if (o->type != type)
			continue;
		if (type == OBJ_QP) {
			struct droce_qp_attr attr = { .qp_state = DROCE_QPS_ERR };

			(void)droce_modify_qp(o->p, &attr, DROCE_QP_STATE);
		}
		rc = release(a, o);
		if (rc != 0)
			fprintf(stderr, "droced: pid %d: reclaim failed (%s): kept\n",
				(int)a->pid, strerror(rc));
	}
}

static uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Keys first (dereg: no access after it returns, peers get a NAK), then
 * the QPs to the error state and away, then CQs, completion channels
 * (our copies of their fds closed), PDs, buffers.  The WQE
 * rings go with their QPs; the mbufs in flight are the engine's (freed
 * as it sends or drops them), none were the application's.
 */
void
droced_app_reap(struct droced_app *a)
{
	static const enum obj_type order[] = { OBJ_MR, OBJ_QP, OBJ_CQ, OBJ_CHANNEL, OBJ_PD,
					       OBJ_BUF };
	uint32_t mr = a->count[OBJ_MR], qp = a->count[OBJ_QP];
	uint64_t bytes = a->buf_bytes, t0 = now_us(), t1 = t0;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		reap_type(a, order[i]);
		if (order[i] == OBJ_MR)
			t1 = now_us();
	}
	events_close(a);
	if (a->hello)
		printf("droced: pid %d gone: %u MRs revoked in %" PRIu64 " us, %u QPs, %" PRIu64
		       " buffer bytes freed, %u objects left (seen at %" PRIu64 " us)\n",
		       (int)a->pid, mr, t1 - t0, qp, bytes, a->nobj, t0);
	fflush(stdout);
	close(a->fd);
	for (struct droced_app **pp = &dmn.apps; *pp != NULL; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	free(a->obj);
	free(a);
	tel_snapshot();
}
