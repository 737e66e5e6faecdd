/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_apps.c - the applications of the daemon.  Each has a table of
 * the objects it created (the handle is the object's address); every
 * handle in a request is looked up in the caller's table, so another
 * application's PD, MR, CQ, QP, SRQ, AH or buffer is ENOENT, and a PD's MRs can
 * only cover the caller's own buffers (EFAULT) or the caller's own pages,
 * passed as memfds (REG_MEM, README "Memory").  The objects are the
 * daemon's, created with the droce_* verbs on its own context; a CQ's and
 * QP's cq_context / qp_context hold the owner id the application's data
 * path checks (verbs_daemon.h).  droced --ctl list and telemetry's
 * /droced/apps show the tables' counts.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include <rte_malloc.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include "dq.h"
#include "droced.h"
#include "droced_table.h"

/* A buffer larger than this is refused (EINVAL): hugepage memory is shared */
#define DROCED_MAX_BUF (UINT64_C(1) << 30)
#define BUF_ALIGN 64
/* Events an application's ring holds; beyond it they are dropped, counted */
#define DROCED_EVENT_RING 1024

static struct {
	struct droce_context *ctx;
	char prefix[DMN_PREFIX_LEN];
	uint64_t next_owner;
	struct droced_app *apps;
	unsigned int served, max_apps;	/* applications that said HELLO; --max-apps */
} dmn;

/*
 * What telemetry's thread reads (/droced/apps, /droced/persistent): a
 * copy of on_list's answer, taken after every request, reap and release
 * on the main thread.
 */
static struct {
	pthread_mutex_t lock;
	struct dmn_app_info apps[DMN_LIST_MAX];
	int n;
	struct dmn_persist_info persist[DMN_LIST_MAX];
	int npersist;
} tel = { .lock = PTHREAD_MUTEX_INITIALIZER };

static int tel_apps(const char *cmd, const char *params, struct rte_tel_data *d);
static int tel_persist(const char *cmd, const char *params, struct rte_tel_data *d);

void
droced_apps_init(struct droce_context *ctx, const char *prefix, unsigned int max_apps)
{
	dmn.ctx = ctx;
	dmn.max_apps = max_apps;
	snprintf(dmn.prefix, sizeof(dmn.prefix), "%s", prefix);
	dmn.next_owner = 1;
	rte_telemetry_register_cmd("/droced/apps", tel_apps,
				   "droced's applications: objects and buffer bytes by pid");
	rte_telemetry_register_cmd("/droced/persistent", tel_persist,
				   "droced's persistent regions: owner, bytes, key, lease by name");
}

struct droced_app *
droced_app_new(int fd, pid_t pid)
{
	struct droced_app *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->fd = fd;
	a->rx_fd = -1;
	a->tx_fd = -1;
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

int
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
	if (type == OBJ_MAP)
		a->map_bytes += len;
	return 0;
}

/* The caller's object of that type with handle h, or NULL. */
struct obj *
obj_find(struct droced_app *a, enum obj_type type, uint64_t h)
{
	for (uint32_t i = 0; i < a->nobj; i++)
		if (a->obj[i].type == type && (uint64_t)(uintptr_t)a->obj[i].p == h)
			return &a->obj[i];
	return NULL;
}

void
obj_remove(struct droced_app *a, struct obj *o)
{
	a->count[o->type]--;
	if (o->type == OBJ_BUF)
		a->buf_bytes -= o->len;
	if (o->type == OBJ_MAP)
		a->map_bytes -= o->len;
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
obj_free(enum obj_type type, void *p, uint64_t len)
{
	switch (type) {
	case OBJ_MW:
		return droce_dealloc_mw(p);	/* unbound (revoked) first */
	case OBJ_MR:
		return droce_dereg_mr(p);
	case OBJ_QP:
		return droce_destroy_qp(p);
	case OBJ_SRQ:
		return droce_destroy_srq(p);
	case OBJ_AH:
		return droce_destroy_ah(p);
	case OBJ_CQ:
		return droce_destroy_cq(p);
	case OBJ_PD:
		return droce_dealloc_pd(p);
	case OBJ_CHANNEL:
		return droce_destroy_comp_channel(p);	/* closes our copy of its fd */
	case OBJ_BUF:
		rte_free(p);
		return 0;
	case OBJ_MAP:
		return munmap(p, len) == 0 ? 0 : errno;
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
		(void)obj_free(type, p, len);
	return rc;
}

/* adopt of a CQ, QP, MR or MW, with the name the application gives it in
 * its events (obj_add appends: the new entry is the last). */
static int
adopt_named(struct droced_app *a, enum obj_type type, void *p, uint64_t app_ptr, uint32_t ctx)
{
	int rc = adopt(a, type, p, 0);

	if (rc == 0) {
		a->obj[a->nobj - 1].app_ptr = app_ptr;
		a->obj[a->nobj - 1].ctx = ctx;
	}
	return rc;
}

/* Destroy one of the caller's objects and forget it (kept if that fails). */
static int
release(struct droced_app *a, struct obj *o)
{
	int rc = obj_free(o->type, o->p, o->len);

	if (rc == 0) {
		dq_forget(a, o->p);	/* a CQ's or QP's slot in its region */
		obj_remove(a, o);
	}
	return rc;
}

/* A dealloc/dereg/destroy request: ENOENT for a handle not the caller's. */
int
release_handle(struct droced_app *a, enum obj_type type, uint64_t h)
{
	struct obj *o = obj_find(a, type, h);

	return o != NULL ? release(a, o) : ENOENT;
}

/* ---- the requests ------------------------------------------------------------ */

static int
on_hello(struct droced_app *a, struct dmn_msg *m)
{
	if (dmn.served >= dmn.max_apps)
		return EUSERS;	/* droced serves --max-apps at once */
	dmn.served++;
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

/* The context index the request names: an open one of a's, never more
 * than an index (dq_ctx_valid). */
static int
on_alloc_pd(struct droced_app *a, struct dmn_msg *m)
{
	struct droce_pd *pd;
	int rc;

	if (!dq_ctx_valid(a, m->ctx))
		return EINVAL;
	pd = droce_alloc_pd(dmn.ctx);
	if (pd == NULL)
		return errno;
	rc = adopt_named(a, OBJ_PD, pd, 0, m->ctx);
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

/* REG_MR's and REG_MEM's registration of host (m: len, iova in h[1],
 * access in arg, the MR's name in its events in h[2]) into the caller's
 * table, and the reply. */
static int
reg_reply(struct droced_app *a, struct dmn_msg *m, struct droce_pd *pd, uint32_t ctx, void *host)
{
	struct droce_mr *mr = droce_reg_mr_iova(pd, host, m->len, m->h[1], m->arg);
	int rc = mr != NULL ? adopt_named(a, OBJ_MR, mr, m->h[2], ctx) : errno;

	if (rc != 0)
		return rc;
	m->h[0] = (uint64_t)(uintptr_t)mr;
	m->key = mr->lkey;
	return 0;
}

static int
on_reg_mr(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *pd = obj_find(a, OBJ_PD, m->h[0]);

	if (pd == NULL)
		return ENOENT;
	if (!in_own_buf(a, m->addr, m->len))
		return EFAULT;	/* only the caller's droce_alloc_buf memory */
	return reg_reply(a, m, pd->p, pd->ctx, (void *)(uintptr_t)m->addr);
}

/* The mapping an MR of the application's own pages lies in, or NULL. */
struct obj *
map_of(struct droced_app *a, const struct droce_mr *mr)
{
	uint64_t p = (uint64_t)(uintptr_t)mr->addr;

	for (uint32_t i = 0; i < a->nobj; i++) {
		uint64_t b = (uint64_t)(uintptr_t)a->obj[i].p;

		if (a->obj[i].type == OBJ_MAP && p >= b && p - b < a->obj[i].len)
			return &a->obj[i];
	}
	return NULL;
}

/*
 * An MR of the application's pages is unmapped once dereg returned:
 * lib/protection's grace period means no engine access with its key is
 * running or can start then, and its mapping is its own.
 */
/* REREG_MR of the caller's MR h[0]: its PD (h[1], the caller's) or its
 * rights (arg), flags in len; a new translation is the client's own new
 * registration (verbs_dmn_rereg_mr), never a request. */
static int
on_rereg_mr(struct droced_app *a, struct dmn_msg *m)
{
	const int flags = DROCE_REREG_MR_CHANGE_PD | DROCE_REREG_MR_CHANGE_ACCESS;
	struct obj *mr = obj_find(a, OBJ_MR, m->h[0]);
	struct obj *pd = obj_find(a, OBJ_PD, m->h[1]);

	if (mr == NULL || pd == NULL)
		return ENOENT;
	if (m->len == 0 || (m->len & ~(uint64_t)flags) != 0)
		return EINVAL;
	if (droce_rereg_mr(mr->p, (int)m->len, pd->p, NULL, 0, m->arg) != 0)
		return errno;
	return 0;
}

int
dereg_handle(struct droced_app *a, uint64_t h)
{
	struct obj *o = obj_find(a, OBJ_MR, h), *map;
	void *base;
	int rc;

	if (o == NULL)
		return ENOENT;
	map = map_of(a, o->p);
	base = map != NULL ? map->p : NULL;
	rc = release(a, o);
	if (rc == 0 && base != NULL)
		(void)release_handle(a, OBJ_MAP, (uint64_t)(uintptr_t)base);
	return rc;
}

static int
on_dereg_mr(struct droced_app *a, struct dmn_msg *m)
{
	if (persist_dereg(a, m->h[0]))
		return 0;	/* its persistent region's: released */
	return dereg_handle(a, m->h[0]);
}

/* ---- memory windows ------------------------------------------------------------ */

static int
on_alloc_mw(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *pd = obj_find(a, OBJ_PD, m->h[0]);
	struct droce_mw *mw;
	int rc;

	if (pd == NULL)
		return ENOENT;
	mw = droce_alloc_mw(pd->p, (enum droce_mw_type)m->arg);
	if (mw == NULL)
		return errno;
	rc = adopt_named(a, OBJ_MW, mw, m->addr, pd->ctx);	/* (read before adopt grows the table) */
	if (rc != 0)
		return rc;
	m->h[0] = (uint64_t)(uintptr_t)mw;
	m->key = mw->rkey;
	return 0;
}

static int
on_dealloc_mw(struct droced_app *a, struct dmn_msg *m)
{
	return release_handle(a, OBJ_MW, m->h[0]);
}

/* ---- the application's own pages (REG_MEM) ----------------------------------- */

static void
pieces_drop(struct droced_app *a)
{
	for (uint32_t i = 0; i < a->npiece; i++)
		if (a->piece[i].fd >= 0)
			close(a->piece[i].fd);
	a->npiece = 0;
}

/* A memfd that cannot shrink (a shrink would fault the engine), holding
 * [off, off + len). */
static int
check_piece_fd(int fd, uint64_t off, uint64_t len)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return EPERM;
	if (fstat(fd, &st) != 0 || off > UINT64_MAX - len ||
	    (uint64_t)st.st_size < off + len)
		return EINVAL;
	return 0;
}

/*
 * A System V segment the application made (its pid from the socket's
 * credentials, not from the request), holding [off, off + len): memory it
 * could reach anyway, and one that cannot shrink under the engine.
 */
static int
check_piece_shm(const struct droced_app *a, uint64_t shmid, uint64_t off, uint64_t len)
{
	struct shmid_ds ds;

	if (shmid > INT_MAX || shmctl((int)shmid, IPC_STAT, &ds) != 0)
		return EINVAL;
	if (ds.shm_cpid != a->pid)
		return EPERM;
	if (off > UINT64_MAX - len || ds.shm_segsz < off + len)
		return EINVAL;
	return 0;
}

/* One piece of the next REG_MEM, with its fd or its System V segment (the
 * registration's only piece); any error drops them all. */
static int
on_mem_piece(struct droced_app *a, struct dmn_msg *m)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	bool shm = m->arg == DMN_PIECE_SYSV;
	int rc = 0;

	if ((a->rx_fd < 0) != shm || (m->arg != 0 && !shm) || m->len == 0 ||
	    ((m->addr | m->len | m->h[0]) & (pg - 1)) || m->addr > UINT64_MAX - m->len)
		rc = EINVAL;
	else if (a->npiece == DMN_MEM_PIECES)
		rc = E2BIG;
	else if (a->npiece > 0 && (shm || a->piece[0].fd < 0))
		rc = EINVAL;	/* a segment's piece is the only one */
	else if (a->npiece > 0 && m->addr != a->piece[a->npiece - 1].addr +
					     a->piece[a->npiece - 1].len)
		rc = EINVAL;	/* pieces come in order, without gaps */
	else
		rc = shm ? check_piece_shm(a, m->h[1], m->h[0], m->len) :
			   check_piece_fd(a->rx_fd, m->h[0], m->len);
	if (rc != 0) {
		pieces_drop(a);
		return rc;
	}
	a->piece[a->npiece++] = (struct mem_piece){ m->addr, m->len, m->h[0], a->rx_fd,
						    shm ? (int)m->h[1] : -1 };
	a->rx_fd = -1;
	return 0;
}

/* The segment of the only piece attached: *base and *len the mapping,
 * *first the piece's start in it; 0 or an errno. */
static int
piece_shm_map(const struct droced_app *a, uint8_t **base, uint64_t *len, uint8_t **first)
{
	const struct mem_piece *p = &a->piece[0];
	struct shmid_ds ds;
	void *seg;

	/* checked again: the id may name another segment by now */
	if (check_piece_shm(a, (uint64_t)p->shmid, p->off, p->len) != 0 ||
	    shmctl(p->shmid, IPC_STAT, &ds) != 0)
		return EINVAL;
	seg = shmat(p->shmid, NULL, 0);
	if (seg == (void *)-1)
		return errno;
	*base = seg;
	*len = ds.shm_segsz;	/* munmap of all of it detaches it */
	*first = (uint8_t *)seg + p->off;
	return 0;
}

/* The pieces mapped side by side in one reserved range: its base, or NULL. */
static void *
pieces_map(const struct droced_app *a, uint64_t span)
{
	uint8_t *base = mmap(NULL, span, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (base == MAP_FAILED)
		return NULL;
	for (uint32_t i = 0; i < a->npiece; i++) {
		const struct mem_piece *p = &a->piece[i];

		if (mmap(base + (p->addr - a->piece[0].addr), p->len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, p->fd, (off_t)p->off) == MAP_FAILED) {
			munmap(base, span);
			return NULL;
		}
	}
	return base;
}

/*
 * REG_MR of the application's own pages, the pieces before it: droced's
 * mapping of them registered with the application's address as iova.
 */
static int
reg_mem(struct droced_app *a, struct dmn_msg *m)
{
	const struct obj *o = obj_find(a, OBJ_PD, m->h[0]);
	const struct mem_piece *first = &a->piece[0], *last = &a->piece[a->npiece - 1];
	uint64_t span = last->addr + last->len - first->addr, maplen = 0;
	uint8_t *base = NULL, *host = NULL;
	struct droce_pd *pd;
	uint32_t ctx;
	int rc;

	if (o == NULL)
		return ENOENT;
	pd = o->p;	/* o is gone once adopt grows the table */
	ctx = o->ctx;
	if (m->addr < first->addr || m->len == 0 || m->len > span ||
	    m->addr - first->addr > span - m->len)
		return EFAULT;	/* not what the pieces cover */
	if (first->fd < 0) {
		rc = piece_shm_map(a, &base, &maplen, &host);
		if (rc != 0)
			return rc;
	} else {
		base = host = pieces_map(a, span);
		maplen = span;
		if (base == NULL)
			return ENOMEM;
	}
	rc = adopt(a, OBJ_MAP, base, maplen);
	if (rc == 0) {
		/* where the application has base: a persistent region's address */
		a->obj[a->nobj - 1].app_ptr = first->addr - (uint64_t)(host - base);
		rc = reg_reply(a, m, pd, ctx, host + (m->addr - first->addr));
	}
	if (rc != 0)
		(void)release_handle(a, OBJ_MAP, (uint64_t)(uintptr_t)base);
	return rc;
}

static int
on_reg_mem(struct droced_app *a, struct dmn_msg *m)
{
	int rc = a->npiece > 0 ? reg_mem(a, m) : EINVAL;

	pieces_drop(a);	/* mapped (the mappings hold the files) or refused */
	return rc;
}

static int
on_create_cq(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *ch = m->h[1] != 0 ? obj_find(a, OBJ_CHANNEL, m->h[1]) : NULL;
	struct droce_cq *cq;
	int rc;

	if (m->h[1] != 0 && ch == NULL)
		return ENOENT;
	if (!dq_ctx_valid(a, m->ctx))
		return EINVAL;
	cq = droce_create_cq(dmn.ctx, m->arg, a->owner, ch != NULL ? ch->p : NULL, 0);
	if (cq == NULL)
		return errno;
	rc = adopt_named(a, OBJ_CQ, cq, m->addr, m->ctx);
	if (rc != 0)
		return rc;
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
	struct obj *srq = m->len != 0 ? obj_find(a, OBJ_SRQ, m->len) : NULL;
	struct droce_qp_init_attr init = m->u.qp_init;
	struct droce_qp *qp;
	int rc;

	if (pd == NULL || scq == NULL || rcq == NULL || (m->len != 0 && srq == NULL))
		return ENOENT;
	init.qp_context = a->owner;
	init.send_cq = scq->p;
	init.recv_cq = rcq->p;
	init.srq = srq != NULL ? srq->p : NULL;
	qp = droce_create_qp(pd->p, &init);
	if (qp == NULL)
		return errno;
	rc = adopt_named(a, OBJ_QP, qp, m->addr, pd->ctx);	/* (read before adopt grows the table) */
	if (rc != 0)
		return rc;
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

/* multicast: only the application's own QP joins (droce_attach_mcast
 * checks the rest: UD, a group); its groups die with it (destroy) */
static int
on_attach_mcast(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *o = obj_find(a, OBJ_QP, m->h[0]);

	return o == NULL ? ENOENT : droce_attach_mcast(o->p, &m->u.gid, 0);
}

static int
on_detach_mcast(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *o = obj_find(a, OBJ_QP, m->h[0]);

	return o == NULL ? ENOENT : droce_detach_mcast(o->p, &m->u.gid, 0);
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

/* ---- SRQs and address handles ---------------------------------------------------- */

/* The SRQ's srq_context is the caller's owner id: the application's
 * post_srq_recv checks it, as its post and poll check a QP's and CQ's. */
static int
on_create_srq(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *pd = obj_find(a, OBJ_PD, m->h[0]);
	struct droce_srq_init_attr init = { .srq_context = a->owner, .attr = m->u.srq };
	struct droce_srq *srq;
	int rc;

	if (pd == NULL)
		return ENOENT;
	srq = droce_create_srq(pd->p, &init);
	if (srq == NULL)
		return errno;
	rc = adopt_named(a, OBJ_SRQ, srq, m->addr, pd->ctx);
	if (rc != 0)
		return rc;
	m->u.srq = init.attr;
	m->h[0] = (uint64_t)(uintptr_t)srq;
	m->key = srq->handle;
	return 0;
}

static int
on_modify_srq(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *o = obj_find(a, OBJ_SRQ, m->h[0]);

	return o != NULL ? droce_modify_srq(o->p, &m->u.srq, m->arg) : ENOENT;
}

static int
on_query_srq(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *o = obj_find(a, OBJ_SRQ, m->h[0]);

	return o != NULL ? droce_query_srq(o->p, &m->u.srq) : ENOENT;
}

static int
on_destroy_srq(struct droced_app *a, struct dmn_msg *m)
{
	return release_handle(a, OBJ_SRQ, m->h[0]);
}

/*
 * The reply's key is the AH's index in droced's engine: a UD work request
 * of the application carries it, and the engine sends with it only on a
 * QP of the AH's PD (lib/transport tp_ah_get), so another application's
 * index ends in LOC_QP_OP_ERR, as does one destroyed meanwhile.
 */
static int
on_create_ah(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *pd = obj_find(a, OBJ_PD, m->h[0]);
	struct droce_ah *ah;
	int rc;

	if (pd == NULL)
		return ENOENT;
	ah = droce_create_ah(pd->p, &m->u.ah);
	if (ah == NULL)
		return errno;
	rc = adopt(a, OBJ_AH, ah, 0);
	if (rc != 0)
		return rc;
	m->h[0] = (uint64_t)(uintptr_t)ah;
	m->key = ah->handle;
	return 0;
}

static int
on_destroy_ah(struct droced_app *a, struct dmn_msg *m)
{
	return release_handle(a, OBJ_AH, m->h[0]);
}

static int
on_query_device(struct droced_app *a, struct dmn_msg *m)
{
	(void)a;
	return droce_query_device_ex(dmn.ctx, NULL, &m->u.dev);
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

/* The port's P_Key table entry, in network byte order (droce_query_pkey). */
static int
on_query_pkey(struct droced_app *a, struct dmn_msg *m)
{
	uint16_t pkey;
	int rc;

	(void)a;
	rc = droce_query_pkey(dmn.ctx, 1, m->arg, &pkey);
	if (rc == 0)
		m->key = pkey;
	return rc;
}

/* The applications that said HELLO, at most DMN_LIST_MAX from the from-th
 * on: how many; *total: all of them. */
static int
list_apps(struct dmn_app_info *out, uint32_t from, uint32_t *total)
{
	int n = 0;

	*total = 0;
	for (struct droced_app *p = dmn.apps; p != NULL; p = p->next) {
		if (!p->hello || (*total)++ < from || n == DMN_LIST_MAX)
			continue;
		out[n++] = (struct dmn_app_info){
			.pid = p->pid, .pd = p->count[OBJ_PD], .mr = p->count[OBJ_MR],
			.cq = p->count[OBJ_CQ], .qp = p->count[OBJ_QP],
			.buf = p->count[OBJ_BUF], .buf_bytes = p->buf_bytes,
			.mem = p->count[OBJ_MAP], .mem_bytes = p->map_bytes,
			.mw = p->count[OBJ_MW], .dq_bad = dq_bad_count(p),
			.srq = p->count[OBJ_SRQ], .ah = p->count[OBJ_AH],
		};
	}
	return n;
}

/* droced --ctl PATH list, a page: the applications from h[0] on and the
 * regions from h[1] on, at most DMN_LIST_MAX of each (arg, len); h[0] and
 * h[1] then say how many there are in all. */
static int
on_list(struct droced_app *a, struct dmn_msg *m)
{
	uint32_t apps, regions;

	(void)a;
	m->arg = list_apps(m->u.list.apps, (uint32_t)m->h[0], &apps);
	m->len = (uint64_t)list_persist(m->u.list.persist, (uint32_t)m->h[1], &regions);
	m->h[0] = apps;
	m->h[1] = regions;
	return 0;
}

void
tel_snapshot(void)
{
	uint32_t all;

	pthread_mutex_lock(&tel.lock);
	tel.n = list_apps(tel.apps, 0, &all);		/* the first DMN_LIST_MAX */
	tel.npersist = list_persist(tel.persist, 0, &all);
	pthread_mutex_unlock(&tel.lock);
}

/* d[name] = {keys[i]: v[i]}: 0 or -ENOMEM. */
static int
tel_row(struct rte_tel_data *d, const char *name, const char *const *keys,
	const uint64_t *v, size_t n)
{
	struct rte_tel_data *c = rte_tel_data_alloc();

	if (c == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(c);
	for (size_t i = 0; i < n; i++)
		rte_tel_data_add_dict_u64(c, keys[i], v[i]);
	rte_tel_data_add_dict_container(d, name, c, 0);
	return 0;
}

/* /droced/apps: {"<pid>": {"pd": n, "mr": n, "cq": n, "qp": n, "buf": n,
 * "buf_bytes": n, "mem": n, "mem_bytes": n, "dq_bad": n, "srq": n, "ah": n}, ...} */
static int
tel_apps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const keys[] = { "pd", "mr", "cq", "qp", "buf", "buf_bytes",
					    "mem", "mem_bytes", "dq_bad", "srq", "ah" };

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel.lock);
	for (int i = 0; i < tel.n; i++) {
		const struct dmn_app_info *p = &tel.apps[i];
		const uint64_t v[] = { p->pd, p->mr, p->cq, p->qp, p->buf, p->buf_bytes,
				       p->mem, p->mem_bytes, p->dq_bad, p->srq, p->ah };
		char pid[16];

		snprintf(pid, sizeof(pid), "%d", (int)p->pid);
		if (tel_row(d, pid, keys, v, sizeof(v) / sizeof(v[0])) != 0)
			break;
	}
	pthread_mutex_unlock(&tel.lock);
	return 0;
}

/* /droced/persistent: {"<name>": {"owner": pid, "bytes": n, "key": n,
 * "lease_ms": n, "remaining_us": n, "qp": n}, ...}; remaining_us as of
 * the last request or expiry */
static int
tel_persist(const char *cmd, const char *params, struct rte_tel_data *d)
{
	static const char *const keys[] = { "owner", "bytes", "key", "lease_ms",
					    "remaining_us", "qp" };

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	pthread_mutex_lock(&tel.lock);
	for (int i = 0; i < tel.npersist; i++) {
		const struct dmn_persist_info *p = &tel.persist[i];
		const uint64_t v[] = { (uint64_t)p->owner, p->bytes, p->key, p->lease_ms,
				       p->remaining_us, p->qp };

		if (tel_row(d, p->name, keys, v, sizeof(v) / sizeof(v[0])) != 0)
			break;
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
int
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

/* One event into the application's ring, then its count (as the engine);
 * on a queue region, into context ctx's (DQ_EVERY_CTX: each one's). */
static void
deliver(struct droced_app *a, struct droce_async_event *ev, uint32_t ctx)
{
	const uint64_t one = 1;

	dq_event(a, ctx, ev->event_type, (uint64_t)(uintptr_t)ev->element.qp);
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
			deliver(a, &mine, DQ_EVERY_CTX);
			continue;
		}
		o = obj_at(a, obj);
		if (o == NULL)
			continue;
		if (o->app_ptr != 0) {
			/* the members are pointers to structures: one
			 * representation (C11 6.2.5p28), any names it */
			mine.element.qp = (struct droce_qp *)(uintptr_t)o->app_ptr;
			deliver(a, &mine, o->ctx);
		}
		return;
	}
	/* no table holds it: a kept region's MR, its attached owner's */
	if (obj != NULL) {
		struct droce_async_event mine = *ev;
		struct droced_app *a;
		uint32_t ctx;
		uint64_t name = persist_event_owner(obj, &a, &ctx);

		if (name != 0) {
			mine.element.qp = (struct droce_qp *)(uintptr_t)name;
			deliver(a, &mine, ctx);
		}
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
	[DMN_QUERY_PKEY] = on_query_pkey,
	[DMN_REREG_MR] = on_rereg_mr,
	[DMN_LIST] = on_list,
	[DMN_MEM_PIECE] = on_mem_piece,
	[DMN_REG_MEM] = on_reg_mem,
	[DMN_PERSIST_MR] = on_persist_mr,
	[DMN_ATTACH_MR] = on_attach_mr,
	[DMN_RELEASE] = on_release,
	[DMN_SET_LEASE] = on_set_lease,
	[DMN_RENEW_LEASE] = on_renew_lease,
	[DMN_QUERY_LEASE] = on_query_lease,
	[DMN_CREATE_CHANNEL] = on_create_channel,
	[DMN_DESTROY_CHANNEL] = on_destroy_channel,
	[DMN_OPEN_EVENTS] = on_open_events,
	[DMN_CLOSE_EVENTS] = on_close_events,
	[DMN_ALLOC_MW] = on_alloc_mw,
	[DMN_DEALLOC_MW] = on_dealloc_mw,
	[DMN_DQ_OPEN] = on_dq_open,
	[DMN_DQ_ATTACH] = on_dq_attach,
	[DMN_CREATE_SRQ] = on_create_srq,
	[DMN_MODIFY_SRQ] = on_modify_srq,
	[DMN_QUERY_SRQ] = on_query_srq,
	[DMN_DESTROY_SRQ] = on_destroy_srq,
	[DMN_CREATE_AH] = on_create_ah,
	[DMN_DESTROY_AH] = on_destroy_ah,
	[DMN_DQ_DOORBELL] = on_dq_doorbell,
	[DMN_CM] = droced_cm_request,
	[DMN_ATTACH_MCAST] = on_attach_mcast,
	[DMN_DETACH_MCAST] = on_detach_mcast,
	[DMN_DQ_CTX_OPEN] = on_dq_ctx_open,
	[DMN_DQ_CTX_CLOSE] = on_dq_ctx_close,
};

/* What droced --ctl asks without a HELLO (an administrator, no objects). */
static bool
hello_less(uint32_t type)
{
	return type == DMN_HELLO || type == DMN_LIST || type == DMN_RELEASE;
}

bool
droced_app_serve(struct droced_app *a)
{
	struct dmn_msg m;
	ssize_t n = dq_sock_recv(a->fd, &m, sizeof(m), &a->rx_fd);
	bool sent;

	if (n != (ssize_t)sizeof(m)) {
		if (a->rx_fd >= 0)
			close(a->rx_fd);
		a->rx_fd = -1;
		return false;	/* EOF (death) or not our protocol */
	}
	if (m.type >= DMN_NREQ || handlers[m.type] == NULL)
		m.err = EINVAL;
	else if (!a->hello && !hello_less(m.type))
		m.err = EPROTO;
	else
		m.err = handlers[m.type](a, &m);
	if (a->rx_fd >= 0)	/* not taken by the request */
		close(a->rx_fd);
	a->rx_fd = -1;
	tel_snapshot();
	/* the object is in the table already: a caller dead by now is reaped */
	sent = dq_sock_send(a->fd, &m, sizeof(m), m.err == 0 ? a->tx_fd : -1) == 0;
	if (a->tx_fd >= 0)	/* the application's copy is what it holds */
		close(a->tx_fd);
	a->tx_fd = -1;
	return sent;
}

/* ---- death -------------------------------------------------------------------- */

/* Every object of that type, the newest first. */
void
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

uint64_t
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/*
 * Keys first (windows, then regions: dereg: no access after it returns,
 * peers get a NAK), then
 * the QPs to the error state and away, then their SRQs and the address
 * handles their WQEs named, CQs, completion channels
 * (our copies of their fds closed), PDs, the mappings of the application's
 * own pages (nothing reaches them once their keys are gone), buffers.  The WQE
 * rings go with their QPs; the mbufs in flight are the engine's (freed
 * as it sends or drops them), none were the application's.
 */
void
reap_objects(struct droced_app *a)
{
	static const enum obj_type order[] = { OBJ_MW, OBJ_MR, OBJ_QP, OBJ_SRQ, OBJ_AH, OBJ_CQ,
					       OBJ_CHANNEL, OBJ_PD, OBJ_MAP, OBJ_BUF };

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		reap_type(a, order[i]);
}

/* ---- an application's death --------------------------------------------------- */

/* What lingers, torn down by droced_linger_tick. */
static struct droced_linger *lingering;

void
droced_linger(struct droced_linger *l, uint64_t revoked_us,
	      void (*teardown)(struct droced_linger *l))
{
	l->teardown_us = revoked_us + DROCED_LINGER_US;
	l->teardown = teardown;
	l->next = lingering;
	lingering = l;
}

int
droced_linger_tick(int wait_ms)
{
	uint64_t now = now_us(), next = UINT64_MAX;

	for (struct droced_linger **pp = &lingering; *pp != NULL;) {
		struct droced_linger *l = *pp;

		if (l->teardown_us > now) {
			next = l->teardown_us < next ? l->teardown_us : next;
			pp = &l->next;
			continue;
		}
		*pp = l->next;
		l->teardown(l);
	}
	/* rounded up: poll's timeout is in ms */
	if (next != UINT64_MAX && (next - now) / 1000 + 1 < (uint64_t)wait_ms)
		return (int)((next - now) / 1000 + 1);
	return wait_ms;
}

void
droced_linger_shutdown(void)
{
	while (lingering != NULL) {
		struct droced_linger *l = lingering;

		lingering = l->next;
		l->teardown(l);
	}
}

/*
 * Its QPs in RTS to SQD: no request of its own starts any more, while
 * their responders go on answering (IBTA 10.3.1), with NAKs now that the
 * keys are revoked.  A QP in another state refuses the change: as it is.
 */
static void
drain_qps(struct droced_app *a)
{
	for (uint32_t i = 0; i < a->nobj; i++) {
		struct droce_qp_attr attr = { .qp_state = DROCE_QPS_SQD };

		if (a->obj[i].type == OBJ_QP)
			(void)droce_modify_qp(a->obj[i].p, &attr, DROCE_QP_STATE);
	}
}

/* The rest of a dead application's table freed: its log line. */
static void
app_teardown(struct droced_app *a)
{
	uint32_t qp = a->count[OBJ_QP];
	uint64_t bytes = a->buf_bytes, lingered = now_us() - a->seen_us - a->revoke_us;

	reap_objects(a);
	if (a->hello)
		printf("droced: pid %d gone: %u MRs revoked in %" PRIu64 " us, %u QPs, %"
		       PRIu64 " buffer bytes freed %" PRIu64 " us later, %u objects left "
		       "(seen at %" PRIu64 " us)\n", (int)a->pid, a->revoked, a->revoke_us, qp,
		       bytes, lingered, a->nobj, a->seen_us);
	fflush(stdout);
	free(a->obj);
	free(a);
	tel_snapshot();
}

static void
app_linger_over(struct droced_linger *l)
{
	app_teardown((struct droced_app *)((char *)l - offsetof(struct droced_app, linger)));
}

/*
 * Its keys at once; with QPs, the rest DROCED_LINGER_US later, so that a
 * peer's next access is NAKed rather than lost (droced_table.h).
 */
void
droced_app_reap(struct droced_app *a)
{
	dmn.served -= a->hello;
	persist_orphan(a);	/* its persistent regions' groups out of its table */
	a->seen_us = now_us();
	a->revoked = a->count[OBJ_MR];
	reap_type(a, OBJ_MW);	/* a region with windows bound cannot be deregistered */
	reap_type(a, OBJ_MR);
	a->revoke_us = now_us() - a->seen_us;
	dq_close(a);		/* its rings no longer read, before its QPs go */
	drain_qps(a);
	events_close(a);
	droced_cm_reap(a);	/* its listens and comm IDs free for others */
	pieces_drop(a);
	close(a->fd);
	a->fd = -1;
	for (struct droced_app **pp = &dmn.apps; *pp != NULL; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	if (a->count[OBJ_QP] == 0)
		app_teardown(a);
	else
		droced_linger(&a->linger, a->seen_us + a->revoke_us, app_linger_over);
	tel_snapshot();
}
