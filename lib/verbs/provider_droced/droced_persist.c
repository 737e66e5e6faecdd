/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droced_persist.c - droced's client provider: persistent named regions
 * (droce.h, app/droced/README.md "Persistent regions") and the leases of
 * the daemon's MRs and MWs.  The requests, and the
 * process's list of the MR proxies that carry a name, so that
 * droce_release can mark them released (handle 0: droce_dereg_mr then
 * only frees the proxy, the daemon's MR being gone), and so that the
 * dereg of one whose region went meanwhile (ENOENT) frees it too.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_memory.h>

#include "prot.h"
#include "verbs_daemon.h"

struct named {
	char name[DROCE_PERSIST_NAME_MAX];
	struct verbs_dmn_mr *mr;
	struct named *next;
};

static struct {
	pthread_mutex_t lock;
	struct named *list;
} named = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* 0, EINVAL (NULL or empty) or ENAMETOOLONG. */
static int
check_name(const char *name)
{
	if (name == NULL || name[0] == '\0')
		return EINVAL;
	return strnlen(name, DROCE_PERSIST_NAME_MAX) < DROCE_PERSIST_NAME_MAX ? 0 : ENAMETOOLONG;
}

/* The request about name; 0 or a positive errno. */
static int
call_named(struct dmn_msg *m, const char *name)
{
	int rc = check_name(name);

	if (rc != 0)
		return rc;
	strcpy(m->u.name, name);
	return verbs_daemon_call(m);
}

/* The node for name's proxy mr, linked once the daemon said yes (link). */
static struct named *
node_new(const char *name)
{
	struct named *n = calloc(1, sizeof(*n));

	if (n != NULL)
		strcpy(n->name, name);
	return n;
}

static void
link_node(struct named *n, struct verbs_dmn_mr *mr)
{
	n->mr = mr;
	pthread_mutex_lock(&named.lock);
	n->next = named.list;
	named.list = n;
	pthread_mutex_unlock(&named.lock);
}

/* Every node of name unlinked, its proxy marked released (handle 0). */
static void
forget(const char *name)
{
	pthread_mutex_lock(&named.lock);
	for (struct named **pp = &named.list; *pp != NULL;) {
		struct named *n = *pp;

		if (strcmp(n->name, name) != 0) {
			pp = &n->next;
			continue;
		}
		n->mr->h = 0;
		*pp = n->next;
		free(n);
	}
	pthread_mutex_unlock(&named.lock);
}

int
verbs_dmn_named_dereg(struct droce_mr *mr, int rc)
{
	pthread_mutex_lock(&named.lock);
	for (struct named **pp = &named.list; *pp != NULL; pp = &(*pp)->next) {
		struct named *n = *pp;

		if (&n->mr->pub != mr)
			continue;
		if (rc == ENOENT)
			rc = 0;
		if (rc == 0) {
			*pp = n->next;
			free(n);
		}
		break;
	}
	pthread_mutex_unlock(&named.lock);
	return rc;
}

int
verbs_dmn_persist_mr(struct droce_mr *mr, const char *name, uint32_t lease_ms, bool own_pages)
{
	struct dmn_msg m = { .type = DMN_PERSIST_MR, .arg = (int32_t)lease_ms };
	struct named *n;
	int rc;

	rc = check_name(name);
	if (rc != 0)
		return -rc;
	n = node_new(name);
	if (n == NULL)
		return -ENOMEM;
	m.h[0] = ((struct verbs_dmn_mr *)mr)->h;
	strcpy(m.u.name, name);
	/* droced keeps the memfd: a later attach maps the same pages */
	rc = own_pages ? verbs_dmn_mem_call_fd(&m, mr->addr, mr->length) : verbs_daemon_call(&m);
	if (rc != 0) {
		free(n);
		return -rc;
	}
	link_node(n, (struct verbs_dmn_mr *)mr);
	return 0;
}

int
droced_persist_mr(struct droce_mr *mr, const char *name, uint32_t lease_ms)
{
	return verbs_dmn_persist_mr(mr, name, lease_ms,
				    rte_mem_virt2memseg_list(mr->addr) == NULL);
}

/*
 * The attached region's pages from droced's memfd (the reply's h[1]: the
 * offset of the page of addr in it): at the region's own address when
 * that range is free in this process, else wherever the kernel puts them
 * (pub.addr says where).  Never a file opened by name.  0 or -errno.
 */
static int
attach_map(struct verbs_dmn_mr *mr, int fd, const struct dmn_msg *m)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)m->addr & ~(pg - 1);
	size_t len = (((uintptr_t)m->addr + m->len + pg - 1) & ~(pg - 1)) - lo;
	void *p = mmap((void *)lo, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED_NOREPLACE, fd, (off_t)m->h[1]);

	if (p == MAP_FAILED && errno == EEXIST)
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)m->h[1]);
	if (p == MAP_FAILED)
		return -errno;
	mr->map = p;
	mr->map_len = len;
	mr->pub.addr = (uint8_t *)p + (m->addr - lo);
	return 0;
}

int
verbs_dmn_attach_mr(struct droce_context *context, uint32_t ctx_index, const char *name,
		    uint64_t (*name_fn)(const struct droce_context *, const void *),
		    struct droce_mr **out)
{
	struct dmn_msg m = { .type = DMN_ATTACH_MR, .ctx = ctx_index };
	struct verbs_dmn_mr *mr;
	struct named *n;
	int fd = -1, rc;

	rc = check_name(name);
	if (rc != 0)
		return -rc;
	mr = calloc(1, sizeof(*mr));
	n = node_new(name);
	m.h[2] = name_fn(context, mr);	/* its lease's event */
	strcpy(m.u.name, name);
	rc = mr == NULL || n == NULL ? ENOMEM : verbs_daemon_call_fds(&m, -1, &fd);
	/* a region of its maker's own pages comes with their memfd; one in
	 * droced's hugepages is mapped here already (a secondary) */
	if (rc == 0 && fd >= 0)
		rc = -attach_map(mr, fd, &m);
	else if (rc == 0)
		mr->pub.addr = (void *)(uintptr_t)m.addr;
	if (fd >= 0)
		close(fd);
	if (rc != 0) {
		/* droced made us the owner: our death leaves the region kept */
		free(mr);
		free(n);
		return -rc;
	}
	mr->pub.context = context;
	mr->pub.length = m.len;
	mr->pub.lkey = m.key;
	mr->pub.rkey = m.key;
	mr->pub.handle = prot_key_index(m.key);
	mr->h = m.h[0];
	link_node(n, mr);
	*out = &mr->pub;
	return 0;
}

int
droced_attach_mr(struct droce_context *context, const char *name, struct droce_mr **out)
{
	return verbs_dmn_attach_mr(context, 0, name, verbs_dmn_event_name, out);
}

int
droced_release(struct droce_context *context, const char *name)
{
	struct dmn_msg m = { .type = DMN_RELEASE };
	int rc;

	(void)context;
	rc = call_named(&m, name);
	if (rc == 0)
		forget(name);
	return -rc;
}

/* ---- leases of the daemon's MRs and MWs: requests, droced's engine expires them ---- */

static int
set_lease(enum dmn_lease_obj kind, uint64_t h, uint32_t lease_ms)
{
	struct dmn_msg m = { .type = DMN_SET_LEASE, .h = { h, kind }, .arg = (int32_t)lease_ms };

	return lease_ms > INT32_MAX ? -EINVAL : -verbs_daemon_call(&m);
}

static int
renew(enum dmn_lease_obj kind, uint64_t h)
{
	struct dmn_msg m = { .type = DMN_RENEW_LEASE, .h = { h, kind } };

	return -verbs_daemon_call(&m);
}

static int
query_lease(enum dmn_lease_obj kind, uint64_t h, struct droce_lease_attr *attr)
{
	struct dmn_msg m = { .type = DMN_QUERY_LEASE, .h = { h, kind } };
	int rc = verbs_daemon_call(&m);

	if (rc == 0)
		*attr = m.u.lease;
	return -rc;
}

int
droced_set_mr_lease(struct droce_mr *mr, uint32_t lease_ms)
{
	return set_lease(DMN_LEASE_MR, verbs_dmn_mr_handle(mr), lease_ms);
}

int
droced_set_mw_lease(struct droce_mw *mw, uint32_t lease_ms)
{
	return set_lease(DMN_LEASE_MW, verbs_dmn_mw_handle(mw), lease_ms);
}

int
droced_renew_mr(struct droce_mr *mr)
{
	return renew(DMN_LEASE_MR, verbs_dmn_mr_handle(mr));
}

int
droced_renew_mw(struct droce_mw *mw)
{
	return renew(DMN_LEASE_MW, verbs_dmn_mw_handle(mw));
}

int
droced_query_mr_lease(struct droce_mr *mr, struct droce_lease_attr *attr)
{
	return query_lease(DMN_LEASE_MR, verbs_dmn_mr_handle(mr), attr);
}

int
droced_query_mw_lease(struct droce_mw *mw, struct droce_lease_attr *attr)
{
	return query_lease(DMN_LEASE_MW, verbs_dmn_mw_handle(mw), attr);
}
