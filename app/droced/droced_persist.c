/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_persist.c - persistent named regions (droce_persist_mr; README.md
 * "Persistent regions"): which objects a region keeps (its group), the
 * move of the group out of its dead maker's table, reattach, release
 * (the key first, the rest after a linger), leases and the names of the
 * regions their leases ended (tombstones).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "droced.h"
#include "droced_table.h"
#include "prot.h"

/*
 * A persistent region (droce_persist_mr): while the application that made
 * it lives, its group (the MR, its buffer, its PD, the QPs on that PD and
 * their CQs) stays in that application's table, whose handles they are;
 * from its death on (kept), in held, also while an application that
 * attached it owns it (it holds no handle but the MR's).
 */
struct persist {
	char name[DROCE_PERSIST_NAME_MAX];
	struct droce_mr *mr;
	struct droced_app *owner;	/* NULL: nobody's */
	uint64_t owner_ptr;		/* an attached owner's name of the MR in its events */
	uint32_t owner_ctx;		/* and its context that takes them (struct obj's ctx) */
	bool kept;			/* the group is in held */
	/* kept, its lease ran out while an attached owner holds it: the name
	 * is free (not found, not listed), the key revoked; released at the
	 * owner's dereg or death */
	bool expired;
	struct droced_app held;
	uint32_t lease_ms;
	/* released: its key revoked at seen_us (in revoke_us), the rest when
	 * linger is over */
	uint64_t seen_us, revoke_us;
	struct droced_linger linger;
	const char *why;
	/* kept: a type-2 window of its group was bound at the last look */
	bool windowed;
	/* the region's address in its maker (and in an attacher that maps it there) */
	uint64_t addr;
	/* the memfd of its maker's own pages and the offset of the page of
	 * addr in it, passed to an attaching application (-1: the region is
	 * in a droce_alloc_buf buffer of droced's hugepages) */
	int fd;
	uint64_t fd_off;
	struct persist *next;
};

/* How often a kept region's windows are looked at (windows_look). */
#define WINDOW_POLL_MS 1

/*
 * The names of the last DROCED_TOMBSTONES regions whose leases ran out:
 * droce_attach_mr of one is ETIME (droce.h), not ENOENT, until the name
 * is persistent again or that many later expiries pushed it out (or
 * droced restarts).
 */
#define DROCED_TOMBSTONES 64

static struct {
	struct persist *list;		/* by name */
	char tomb[DROCED_TOMBSTONES][DROCE_PERSIST_NAME_MAX];
	unsigned int ntomb;		/* tombstones ever laid */
} regions;

/* The live region of that name (not an expired one whose name is free). */
static struct persist *
persist_find(const char *name)
{
	for (struct persist *p = regions.list; p != NULL; p = p->next)
		if (!p->expired && strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

static char *
tomb_find(const char *name)
{
	unsigned int n = regions.ntomb < DROCED_TOMBSTONES ? regions.ntomb : DROCED_TOMBSTONES;

	for (unsigned int i = 0; i < n; i++)
		if (strcmp(regions.tomb[i], name) == 0)
			return regions.tomb[i];
	return NULL;
}

/* name's lease ran out: its tombstone (the oldest overwritten). */
static void
tomb_lay(const char *name)
{
	if (tomb_find(name) == NULL)
		memcpy(regions.tomb[regions.ntomb++ % DROCED_TOMBSTONES], name,
		       DROCE_PERSIST_NAME_MAX);
}

static struct persist *
persist_of_mr(const void *mr)
{
	for (struct persist *p = regions.list; p != NULL; p = p->next)
		if (p->mr == mr)
			return p;
	return NULL;
}

/* The request's name: NUL-terminated, not empty (0 or EINVAL). */
static int
msg_name(const struct dmn_msg *m)
{
	return m->u.name[0] != '\0' &&
	       memchr(m->u.name, '\0', sizeof(m->u.name)) != NULL ? 0 : EINVAL;
}

static bool
in_buf(const struct obj *buf, const void *addr)
{
	uintptr_t b = (uintptr_t)buf->p, x = (uintptr_t)addr;

	return x >= b && x - b < buf->len;
}

/* A QP of table a on the region's PD (a QP of its group). */
static bool
group_qp(const struct persist *p, const struct obj *o)
{
	return o->type == OBJ_QP && ((const struct droce_qp *)o->p)->pd == p->mr->pd;
}

/* o is of p's group, whose QPs are in table a. */
static bool
region_member(const struct persist *p, const struct droced_app *a, const struct obj *o)
{
	switch (o->type) {
	case OBJ_MR:
		return o->p == p->mr;
	case OBJ_BUF:
		return in_buf(o, p->mr->addr);
	case OBJ_PD:
		return o->p == p->mr->pd;
	case OBJ_QP:
		return group_qp(p, o);
	case OBJ_MW:		/* its PD's windows: those bound to the region */
		return ((const struct droce_mw *)o->p)->pd == p->mr->pd;
	case OBJ_SRQ:		/* its PD's: the group's QPs may receive from one */
		return ((const struct droce_srq *)o->p)->pd == p->mr->pd;
	case OBJ_AH:		/* its PD's: they keep the PD */
		return ((const struct droce_ah *)o->p)->pd == p->mr->pd;
	case OBJ_CQ:
		for (uint32_t i = 0; i < a->nobj; i++) {
			const struct droce_qp *qp = a->obj[i].p;

			if (group_qp(p, &a->obj[i]) &&
			    (qp->send_cq == o->p || qp->recv_cq == o->p))
				return true;
		}
		return false;
	case OBJ_MAP:		/* the application's own pages the MR lies on */
		return in_buf(o, p->mr->addr);
	case OBJ_CHANNEL:	/* the application's: its fd goes with it */
	case OBJ_NTYPES:
		break;
	}
	return false;
}

/* p's group from one table to the other. */
static void
move_group(struct persist *p, struct droced_app *from, struct droced_app *to)
{
	/* the CQs while their QPs are still in from */
	static const enum obj_type order[] = { OBJ_CQ, OBJ_QP, OBJ_SRQ, OBJ_AH, OBJ_MW, OBJ_MR,
					       OBJ_PD, OBJ_BUF, OBJ_MAP };

	for (size_t t = 0; t < sizeof(order) / sizeof(order[0]); t++)
		for (uint32_t i = from->nobj; i-- > 0;) {
			struct obj *o = &from->obj[i];

			if (o->type != order[t] || !region_member(p, from, o))
				continue;
			if (obj_add(to, o->type, o->p, o->len) != 0) {
				fprintf(stderr, "droced: region %s: no memory to move an object: "
					"left with pid %d\n", p->name, (int)from->pid);
				continue;
			}
			obj_remove(from, o);
		}
}

/* Type-2 windows of a kept group bound now. */
static uint32_t
bound_windows(const struct persist *p)
{
	struct prot_tables *t = verbs_prot(p->mr->context);
	uint32_t n = 0;

	for (uint32_t i = 0; i < p->held.nobj; i++) {
		const struct droce_mw *mw = p->held.obj[i].p;
		bool bound;

		if (p->held.obj[i].type == OBJ_MW && mw->type == DROCE_MW_TYPE_2 &&
		    prot_mw_bound(t, mw->handle, &bound) == 0)
			n += bound;
	}
	return n;
}

static void persist_release(struct persist *p, const char *why);

/* The bytes of a group's memory: droced's buffer or the application's
 * own pages it maps. */
static uint64_t
group_bytes(const struct droced_app *held)
{
	return held->buf_bytes + held->map_bytes;
}

static void
persist_free(struct persist *p)
{
	if (p->fd >= 0)
		close(p->fd);
	free(p->held.obj);
	free(p);
}

/* The application is gone: its regions' groups to their held tables (an
 * expired region it attached released). */
void
persist_orphan(struct droced_app *a)
{
	for (struct persist *p = regions.list, *n; p != NULL; p = n) {
		n = p->next;
		if (p->owner != a)
			continue;
		if (p->expired) {	/* kept only for its owner's handle */
			persist_release(p, "lease expired, its owner gone");
			continue;
		}
		if (!p->kept)
			move_group(p, a, &p->held);
		p->kept = true;
		p->owner = NULL;
		p->windowed = bound_windows(p) > 0;
		printf("droced: pid %d gone: region %s kept: %u QPs, %" PRIu64
		       " buffer bytes, key 0x%x\n", (int)a->pid, p->name,
		       p->held.count[OBJ_QP], group_bytes(&p->held), p->mr->lkey);
	}
}

/* p out of the named list (its name free again). */
static void
persist_unlink(struct persist *p)
{
	for (struct persist **pp = &regions.list; *pp != NULL; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
}

static void
persist_drop(struct persist *p)
{
	persist_unlink(p);
	persist_free(p);
}

/*
 * The region's application made it and lives: its MR is deregistered
 * (the key revoked), the rest of the group stays its own (its handles).
 */
static void
persist_release_made(struct persist *p, const char *why)
{
	struct droced_app *a = p->owner;
	uint64_t t0 = now_us();
	int rc = dereg_handle(a, (uint64_t)(uintptr_t)p->mr);

	printf("droced: region %s released (%s): %s in %" PRIu64 " us; its QPs, CQs, PD and "
	       "buffer stay pid %d's\n", p->name, why, rc == 0 ? "1 MRs revoked" :
	       strerror(rc), now_us() - t0, (int)a->pid);
	fflush(stdout);
	persist_drop(p);
	tel_snapshot();
}

/* The rest of a released region's group freed: its log line. */
static void
persist_teardown(struct droced_linger *l)
{
	struct persist *p = (struct persist *)((char *)l - offsetof(struct persist, linger));
	uint32_t qp = p->held.count[OBJ_QP];
	uint64_t bytes = group_bytes(&p->held), lingered = now_us() - p->seen_us - p->revoke_us;

	reap_objects(&p->held);
	printf("droced: region %s released (%s): 1 MRs revoked in %" PRIu64 " us, %u QPs, %"
	       PRIu64 " buffer bytes freed %" PRIu64 " us later, %u objects left (seen at %"
	       PRIu64 " us)\n", p->name, p->why, p->revoke_us, qp, bytes, lingered,
	       p->held.nobj, p->seen_us);
	fflush(stdout);
	persist_free(p);
}

/*
 * A kept group: the key first (dereg: no access succeeds after it
 * returns); the QPs to ERR and away, then CQs, PD and buffer,
 * DROCED_LINGER_US later (droced_linger_tick).  The name is free at once.
 */
static void
persist_release(struct persist *p, const char *why)
{
	if (!p->kept) {
		persist_release_made(p, why);
		return;
	}
	p->owner = NULL;
	p->why = why;
	p->seen_us = now_us();
	reap_type(&p->held, OBJ_MW);	/* the region cannot go while they are bound */
	reap_type(&p->held, OBJ_MR);
	p->revoke_us = now_us() - p->seen_us;
	persist_unlink(p);
	droced_linger(&p->linger, p->seen_us + p->revoke_us, persist_teardown);
	tel_snapshot();
}

/*
 * The client-side release: a kept region whose group had a type-2 window
 * bound and has none now (the peer's SEND_WITH_INV or LOCAL_INV of the
 * last one) is released.  A look every WINDOW_POLL_MS, not an event: the
 * invalidation runs in the engine's responder under lib/protection's
 * lock, which must not call into droced, and droced's loop wakes anyway.
 * The look takes that control-path lock once per window; lookups on the
 * data path do not take it.  Whether windows are bound (true: look again
 * soon).
 */
static bool
windows_look(void)
{
	bool any = false;

	for (struct persist *p = regions.list, *n; p != NULL; p = n) {
		uint32_t bound;

		n = p->next;
		if (!p->kept || p->owner != NULL)
			continue;
		bound = bound_windows(p);
		if (bound == 0 && p->windowed) {
			persist_release(p, "its last window invalidated by a peer");
			continue;
		}
		p->windowed = bound > 0;
		any |= p->windowed;
	}
	return any;
}

int
droced_persist_tick(int wait_ms)
{
	return windows_look() && wait_ms > WINDOW_POLL_MS ? WINDOW_POLL_MS : wait_ms;
}

void
droced_persist_shutdown(void)
{
	while (regions.list != NULL)
		persist_release(regions.list, "droced exits");
}

bool
persist_dereg(struct droced_app *a, uint64_t h)
{
	struct persist *p = persist_of_mr((void *)(uintptr_t)h);

	if (p == NULL || p->owner != a)
		return false;
	persist_release(p, "dereg by its owner");
	return true;
}

/*
 * A region's lease ran out (its key is revoked): as in process, a living
 * owner keeps its handle of the expired MR (renew and set ETIME, query
 * expired, dereg 0).  Its maker keeps the MR itself, no longer
 * persistent; an attached owner the group until its dereg or death.  A
 * region nobody owns is released.  The name is free, its tombstone laid.
 */
void
droced_lease_expired(struct droce_mr *mr)
{
	struct persist *p = persist_of_mr(mr);

	if (p == NULL || p->expired)
		return;
	tomb_lay(p->name);
	if (p->owner == NULL) {
		persist_release(p, "lease expired");
		return;
	}
	if (p->kept) {
		p->expired = true;
		printf("droced: region %s expired: its key revoked by its lease; released at "
		       "pid %d's dereg or death\n", p->name, (int)p->owner->pid);
	} else {
		printf("droced: region %s released (lease expired): its key revoked by its lease; "
		       "the MR, its QPs, CQs, PD and buffer stay pid %d's\n", p->name,
		       (int)p->owner->pid);
		persist_drop(p);
	}
	fflush(stdout);
	tel_snapshot();
}

uint64_t
persist_event_owner(const void *mr, struct droced_app **owner, uint32_t *ctx)
{
	struct persist *p = persist_of_mr(mr);

	if (p == NULL || !p->kept || p->owner == NULL)
		return 0;
	*owner = p->owner;
	*ctx = p->owner_ctx;
	return p->owner_ptr;
}

void
persist_ctx_closed(const struct droced_app *a, uint32_t ctx)
{
	for (struct persist *p = regions.list; p != NULL; p = p->next)
		if (p->owner == a && p->owner_ctx == ctx)
			p->owner_ctx = DQ_NO_CTX;
}

/* The caller's droce_alloc_buf buffer, or mapping of its own pages, that
 * holds all of mr, or NULL. */
static const struct obj *
mr_buffer(const struct droced_app *a, const struct droce_mr *mr)
{
	for (uint32_t i = 0; i < a->nobj; i++) {
		const struct obj *b = &a->obj[i];

		if ((b->type == OBJ_BUF || b->type == OBJ_MAP) && in_buf(b, mr->addr) &&
		    mr->length <= b->len - ((uintptr_t)mr->addr - (uintptr_t)b->p))
			return b;
	}
	return NULL;
}

/*
 * The fd passed with PERSIST_MR is the memfd droced maps the MR's pages
 * from (its own mapping's line in /proc/self/maps: a memfd of fd's inode,
 * all of the MR in that line), open for reading and writing (an attaching
 * application maps it so): the offset in it of the MR's first page, or
 * -1.  The maps are read on this control path only.
 */
static int64_t
memfd_offset(int fd, const struct droce_mr *mr)
{
	uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE), h = (uint64_t)(uintptr_t)mr->addr;
	int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
	int64_t found = -1;
	char line[512];
	struct stat st;
	FILE *f;

	if (fl < 0 || (fl & O_ACCMODE) != O_RDWR || fstat(fd, &st) != 0)
		return -1;
	f = fopen("/proc/self/maps", "re");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		uint64_t start, end, off;
		unsigned long ino;
		int n = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*x:%*x %lu %n",
			   &start, &end, &off, &ino, &n) != 4 || n == 0 || h < start || h >= end)
			continue;
		if (ino == (unsigned long)st.st_ino && strncmp(line + n, "/memfd:", 7) == 0 &&
		    mr->length <= end - h)
			found = (int64_t)(off + ((h & ~(pg - 1)) - start));
		break;
	}
	fclose(f);
	return found;
}

/* The MR's PD or buffer is another region's already. */
static bool
group_taken(const struct obj *buf, const struct droce_mr *mr)
{
	for (struct persist *p = regions.list; p != NULL; p = p->next)
		if (p->mr->pd == mr->pd || in_buf(buf, p->mr->addr))
			return true;
	return false;
}

int
on_persist_mr(struct droced_app *a, struct dmn_msg *m)
{
	struct obj *o = obj_find(a, OBJ_MR, m->h[0]);
	struct droce_lease_attr lease;
	const struct obj *buf;
	struct persist *p;
	int64_t off;
	char *tomb;
	int rc = msg_name(m);

	if (rc != 0)
		return rc;
	if (o == NULL)
		return ENOENT;
	if (persist_find(m->u.name) != NULL)
		return EEXIST;
	/* memory that outlives the application: droced's buffers, or the
	 * application's own pages on one memfd, which it passed (droced keeps
	 * it for an attach) */
	buf = mr_buffer(a, o->p);
	off = buf != NULL && buf->type == OBJ_MAP ? memfd_offset(a->rx_fd, o->p) : 0;
	if (buf == NULL || off < 0)
		return EFAULT;
	if (persist_of_mr(o->p) != NULL || group_taken(buf, o->p))
		return EBUSY;
	if (droce_query_mr_lease(o->p, &lease) == 0 && lease.expired)
		return ETIME;	/* its key is revoked */
	if (m->arg < 0)
		return EINVAL;
	rc = m->arg > 0 ? droce_set_mr_lease(o->p, (uint32_t)m->arg) : 0;
	if (rc != 0)
		return rc;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return ENOMEM;
	memcpy(p->name, m->u.name, sizeof(p->name));
	tomb = tomb_find(p->name);
	if (tomb != NULL)
		tomb[0] = '\0';	/* the name is a region again */
	p->mr = o->p;
	p->owner = a;
	p->held.fd = -1;
	p->fd = -1;
	p->addr = (uint64_t)(uintptr_t)p->mr->addr;
	if (buf->type == OBJ_MAP) {
		p->addr = buf->app_ptr + (p->addr - (uint64_t)(uintptr_t)buf->p);
		p->fd = a->rx_fd;
		p->fd_off = (uint64_t)off;
		a->rx_fd = -1;	/* the region's now */
	}
	p->lease_ms = (uint32_t)m->arg;
	p->next = regions.list;
	regions.list = p;
	return 0;
}

/* The region the request names: 0, EINVAL (no name) or ENOENT. */
static int
named_region(const struct dmn_msg *m, struct persist **p)
{
	int rc = msg_name(m);

	if (rc != 0)
		return rc;
	*p = persist_find(m->u.name);
	return *p != NULL ? 0 : ENOENT;
}

/* ETIME: its lease ran out, the release on the way (the event) or done
 * (the tombstone). */
int
on_attach_mr(struct droced_app *a, struct dmn_msg *m)
{
	struct persist *p;
	int rc = named_region(m, &p);

	if (!dq_ctx_valid(a, m->ctx))
		return EINVAL;	/* an index droced never gave */
	if (rc == ENOENT && tomb_find(m->u.name) != NULL)
		return ETIME;
	if (rc != 0)
		return rc;
	if (p->owner != NULL)
		return EBUSY;	/* its owner lives */
	/* a plain process cannot map droced's hugepages */
	if (p->fd < 0 && a->dq != NULL)
		return EFAULT;
	rc = p->lease_ms != 0 ? droce_renew_mr(p->mr) : 0;
	if (rc != 0)
		return rc;
	/* its maker's own pages: their memfd with the reply (never a name) */
	if (p->fd >= 0) {
		a->tx_fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 0);
		if (a->tx_fd < 0)
			return errno;
		m->h[1] = p->fd_off;
	}
	p->owner = a;	/* the group stays in held: a has no handle of it */
	p->owner_ptr = m->h[2];	/* its proxy, named in its events */
	p->owner_ctx = m->ctx;
	m->h[0] = (uint64_t)(uintptr_t)p->mr;
	m->addr = p->addr;
	m->len = p->mr->length;
	m->key = p->mr->lkey;
	return 0;
}

int
on_release(struct droced_app *a, struct dmn_msg *m)
{
	struct persist *p;
	int rc = named_region(m, &p);

	if (rc != 0)
		return rc;
	if (p->owner != NULL && p->owner != a)
		return EBUSY;	/* another application's, alive */
	persist_release(p, a->hello ? "droce_release" : "droced --ctl release");
	return 0;
}

/*
 * The lease requests' object (h[0], of the kind h[1]): the application's
 * own, or the MR of a region it attached (in the region's table), also
 * once that expired.
 */
static void *
leased_obj(struct droced_app *a, const struct dmn_msg *m)
{
	struct persist *p;
	struct obj *o;

	switch (m->h[1]) {
	case DMN_LEASE_MR:
		o = obj_find(a, OBJ_MR, m->h[0]);
		if (o != NULL)
			return o->p;
		p = persist_of_mr((void *)(uintptr_t)m->h[0]);
		return p != NULL && p->kept && p->owner == a ? p->mr : NULL;
	case DMN_LEASE_MW:
		o = obj_find(a, OBJ_MW, m->h[0]);
		return o != NULL ? o->p : NULL;
	}
	return NULL;
}

int
on_set_lease(struct droced_app *a, struct dmn_msg *m)
{
	void *o = leased_obj(a, m);
	struct persist *p;
	int rc;

	if (o == NULL)
		return ENOENT;
	if (m->arg < 0)
		return EINVAL;
	if (m->h[1] == DMN_LEASE_MW)
		return droce_set_mw_lease(o, (uint32_t)m->arg);
	rc = droce_set_mr_lease(o, (uint32_t)m->arg);
	if (rc != 0)
		return rc;
	p = persist_of_mr(o);
	if (p != NULL)
		p->lease_ms = (uint32_t)m->arg;
	return 0;
}

int
on_renew_lease(struct droced_app *a, struct dmn_msg *m)
{
	void *o = leased_obj(a, m);

	if (o == NULL)
		return ENOENT;
	if (m->h[1] == DMN_LEASE_MW)
		return droce_renew_mw(o);
	return droce_renew_mr(o);
}

int
on_query_lease(struct droced_app *a, struct dmn_msg *m)
{
	void *o = leased_obj(a, m);

	if (o == NULL)
		return ENOENT;
	return m->h[1] == DMN_LEASE_MW ? droce_query_mw_lease(o, &m->u.lease) :
					 droce_query_mr_lease(o, &m->u.lease);
}

int
list_persist(struct dmn_persist_info *out, uint32_t from, uint32_t *total)
{
	int n = 0;

	*total = 0;
	for (struct persist *p = regions.list; p != NULL; p = p->next) {
		const struct droced_app *t = p->kept ? &p->held : p->owner;
		struct droce_lease_attr lease = { 0 };
		struct dmn_persist_info *i;

		if (p->expired || (*total)++ < from || n == DMN_LIST_MAX)
			continue;
		i = &out[n++];

		if (p->lease_ms != 0)
			(void)droce_query_mr_lease(p->mr, &lease);
		*i = (struct dmn_persist_info){
			.owner = p->owner != NULL ? p->owner->pid : 0, .key = p->mr->lkey,
			.addr = p->addr, .bytes = p->mr->length,
			.lease_ms = p->lease_ms, .remaining_us = lease.remaining_us,
		};
		memcpy(i->name, p->name, sizeof(i->name));
		/* the QPs on its PD: those that persist with it */
		for (uint32_t k = 0; k < t->nobj; k++)
			i->qp += group_qp(p, &t->obj[k]);
	}
	return n;
}

