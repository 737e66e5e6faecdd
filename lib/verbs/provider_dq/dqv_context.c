/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dqv_context.c - the queue-region provider's context (dqv.h): the
 * process's region, opened with its first context (DQ_OPEN: droced makes
 * the memfd and passes it back; the context's events are counted on its
 * async_fd), the doorbell (DQ_DOORBELL), each further context's events
 * (DQ_CTX_OPEN), and the ops table.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dqv.h"
#include "verbs_dq.h"

struct dqv_region dqv_region = { .bell_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

static struct verbs_provider dqv_provider;

/* The region's memfd mapped and checked against the shape we asked for. */
static int
region_map(struct dqv_region *r, int fd, uint64_t len)
{
	const struct dq_header *h;

	if (fd < 0 || len != dq_region_size(&r->g))
		return -EPROTO;
	r->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -errno;
	}
	h = r->base;
	if (h->magic != DQ_MAGIC || h->version != DQ_VERSION || h->size != len) {
		munmap(r->base, len);
		r->base = NULL;
		return -EPROTO;
	}
	r->size = len;
	r->bell = dq_bell(r->base);
	return 0;
}

/* DQ_OPEN (ctx's async_fd counts the events of context index 0), then
 * DQ_DOORBELL. */
static int
region_open(struct dqv_region *r, struct droce_context *ctx)
{
	struct dmn_msg m = { .type = DMN_DQ_OPEN,
			     .u.dq = { DQV_QPS, DQV_CQS, DQV_DEPTH, DQV_DEPTH, DQV_DEPTH } };
	int fd = -1, rc;

	r->g = (struct dq_geom){ DQV_QPS, DQV_CQS, DQV_DEPTH, DQV_DEPTH, DQV_DEPTH };
	rc = verbs_daemon_call_fds(&m, ctx->async_fd, &fd);
	if (rc == 0)
		rc = -region_map(r, fd, m.len);
	if (fd >= 0)
		close(fd);
	if (rc != 0)
		return -rc;
	m = (struct dmn_msg){ .type = DMN_DQ_DOORBELL };
	rc = verbs_daemon_call_fds(&m, -1, &r->bell_fd);
	if (rc == 0 && r->bell_fd < 0)
		rc = EPROTO;
	if (rc != 0)
		return -rc;	/* the region stays: droced holds it until we go */
	dqv_ctx(ctx)->ev_ctx = 0;
	return 0;
}

/*
 * A context after the first (or after the first closed: the drop-in opens
 * and closes one to describe the device before the program's): droced
 * gives it an event ring of the region, emptied, and counts that ring on
 * the copy of its async_fd passed, so that each context's fd counts its
 * own events only and wakes its own waiter.
 */
static int
ctx_events_open(struct droce_context *ctx)
{
	struct dmn_msg m = { .type = DMN_DQ_CTX_OPEN };
	int rc = verbs_daemon_call_fds(&m, ctx->async_fd, NULL);

	if (rc == 0 && m.ctx >= DQ_MAX_CTXS)
		rc = EPROTO;
	if (rc != 0)
		return -rc;
	dqv_ctx(ctx)->ev_ctx = m.ctx;
	return 0;
}

struct droce_context *
verbs_dq_open(struct droce_device *device)
{
	struct dqv_context *c = calloc(1, sizeof(*c));
	int rc;

	if (c == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	rc = verbs_context_init(&c->vctx, &dqv_provider, device);
	if (rc != 0) {
		free(c);
		errno = rc;
		return NULL;
	}
	pthread_mutex_lock(&dqv_region.lock);
	c->gen = dqv_region.gen;
	if (dqv_region.base == NULL)
		rc = region_open(&dqv_region, &c->vctx.pub);
	else
		rc = ctx_events_open(&c->vctx.pub);
	pthread_mutex_unlock(&dqv_region.lock);
	if (rc != 0) {
		verbs_context_fini(&c->vctx);
		free(c);
		errno = -rc;
		return NULL;
	}
	return &c->vctx.pub;
}

void
verbs_dq_fork_child(void)
{
	struct dqv_region *r = &dqv_region;
	uint32_t gen = r->gen + 1;

	if (r->base != NULL &&
	    mmap(r->base, r->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		(void)munmap(r->base, r->size);	/* a fault rather than the parent's */
	if (r->bell_fd >= 0)
		close(r->bell_fd);
	*r = (struct dqv_region){ .bell_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .gen = gen };
}

/* The region and the doorbell stay the process's (droced frees them when
 * the connection closes); the context's event ring goes back to droced
 * (DQ_CTX_CLOSE), its events not taken with it. */
static int
dqv_close_context(struct droce_context *ctx)
{
	struct dqv_context *c = dqv_ctx(ctx);
	struct dmn_msg m = { .type = DMN_DQ_CTX_CLOSE, .ctx = c->ev_ctx };

	if (dqv_region.base != NULL && c->gen == dqv_region.gen)	/* (a fork's parent's: not ours) */
		(void)verbs_daemon_call(&m);
	verbs_context_fini(&c->vctx);
	free(c);
	return 0;
}

static int
min_int(int a, uint32_t b)
{
	return (uint32_t)a < b ? a : (int)b;
}

/*
 * droced's device as this region carries it: no more QPs and SRQs (an SRQ
 * takes a QP slot) or CQs than its slots, no deeper work queues than its
 * rings (a CQ may be deeper than its ring: droced's CQ holds what the ring
 * has no room for yet), no more SGEs than a descriptor and the entries after it hold
 * (DQ_MAX_SGE, the in-process engine's DROCE_MAX_SGE), so that programs sizing
 * their queues from the device's limits (UCX) ask for what posts.
 */
static int
dqv_query_device_ex(struct droce_context *ctx, struct droce_device_attr_ex *a)
{
	const struct dq_geom *g = &dqv_region.g;
	struct droce_device_attr *d = &a->orig_attr;
	int rc = droced_query_device_ex(ctx, a);

	if (rc != 0)
		return rc;
	d->max_qp = min_int(d->max_qp, g->nqp);
	d->max_srq = min_int(d->max_srq, g->nqp);
	d->max_cq = min_int(d->max_cq, g->ncq);
	d->max_qp_wr = min_int(min_int(d->max_qp_wr, g->sq_depth), g->rq_depth);
	d->max_srq_wr = min_int(d->max_srq_wr, g->rq_depth);
	d->max_sge = min_int(d->max_sge, DQ_MAX_SGE);
	d->max_sge_rd = min_int(d->max_sge_rd, DQ_MAX_SGE);
	d->max_srq_sge = min_int(d->max_srq_sge, DQ_MAX_SGE);
	return 0;
}

/* A persistent region of this process's own pages (droced keeps their
 * memfd), and the attach of one, mapped from droced's fd. */
static int
dqv_persist_mr(struct droce_mr *mr, const char *name, uint32_t lease_ms)
{
	return verbs_dmn_persist_mr(mr, name, lease_ms, true);
}

static int
dqv_attach_mr(struct droce_context *ctx, const char *name, struct droce_mr **out)
{
	return verbs_dmn_attach_mr(ctx, dqv_ctx(ctx)->ev_ctx, name, dqv_event_name, out);
}

/* Counters are left out: EOPNOTSUPP, as for any provider. */
static struct verbs_provider dqv_provider = {
	.name = "dq",
	.ops = {
		.post_send = dqv_post_send,
		.post_recv = dqv_post_recv,
		.post_srq_recv = dqv_post_srq_recv,
		.poll_cq = dqv_poll_cq,
		.req_notify_cq = dqv_req_notify_cq,
		.close_context = dqv_close_context,
		.query_device_ex = dqv_query_device_ex,
		.query_port = droced_query_port,
		.query_gid = droced_query_gid,
		.query_pkey = droced_query_pkey,
		.create_ah = droced_create_ah,
		.destroy_ah = droced_destroy_ah,
		.attach_mcast = droced_attach_mcast,
		.detach_mcast = droced_detach_mcast,
		.cm_relay = droced_cm_relay,
		.progress = droced_progress,
		.self_driven = droced_self_driven,
		.event_take = dqv_event_take,
		.alloc_buf = dqv_alloc_buf,
		.free_buf = dqv_free_buf,
		.create_channel = dqv_create_channel,
		.cq_take_event = dqv_cq_take_event,
		.alloc_pd = dqv_alloc_pd,
		.dealloc_pd = droced_dealloc_pd,
		.reg_mr = dqv_reg_mr,
		.dereg_mr = droced_dereg_mr,
		.rereg_mr = dqv_rereg_mr,
		.alloc_mw = dqv_alloc_mw,
		.dealloc_mw = droced_dealloc_mw,
		.set_mw_lease = droced_set_mw_lease,
		.renew_mw = droced_renew_mw,
		.query_mw_lease = droced_query_mw_lease,
		.set_mr_lease = droced_set_mr_lease,
		.renew_mr = droced_renew_mr,
		.query_mr_lease = droced_query_mr_lease,
		.persist_mr = dqv_persist_mr,
		.attach_mr = dqv_attach_mr,
		.release = droced_release,
		.create_cq = dqv_create_cq,
		.destroy_cq = dqv_destroy_cq,
		.create_qp = dqv_create_qp,
		.modify_qp = dqv_modify_qp,
		.query_qp = dqv_query_qp,
		.destroy_qp = dqv_destroy_qp,
		.create_srq = dqv_create_srq,
		.modify_srq = dqv_modify_srq,
		.query_srq = droced_query_srq,
		.destroy_srq = dqv_destroy_srq,
	},
};

VERBS_PROVIDER_REGISTER(dqv_provider)
