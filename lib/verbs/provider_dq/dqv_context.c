/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dqv_context.c - the queue-region provider's context (dqv.h): the
 * process's region, opened with its first context (DQ_OPEN: droced makes
 * the memfd and passes it back; its events are counted on that context's
 * async_fd), the doorbell (DQ_DOORBELL), and the ops table.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dqv.h"
#include "verbs_dq.h"

struct dqv_region dqv_region = { .bell_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

/* A context of this provider: nothing beyond the generic part (the
 * connection and the region are the process's). */
struct dqv_context {
	struct verbs_context vctx;
};

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

/* DQ_OPEN (our async_fd counts the region's events), then DQ_DOORBELL. */
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
	r->events_ctx = ctx;
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
	rc = dqv_region.base == NULL ? region_open(&dqv_region, &c->vctx.pub) : 0;
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

	if (r->base != NULL &&
	    mmap(r->base, r->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		(void)munmap(r->base, r->size);	/* a fault rather than the parent's */
	if (r->bell_fd >= 0)
		close(r->bell_fd);
	*r = (struct dqv_region){ .bell_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };
}

/* The region and the doorbell stay the process's (droced frees them when
 * the connection closes); the events' context is gone. */
static int
dqv_close_context(struct droce_context *ctx)
{
	struct dqv_context *c = (struct dqv_context *)verbs_ctx(ctx);

	pthread_mutex_lock(&dqv_region.lock);
	if (dqv_region.events_ctx == ctx)
		dqv_region.events_ctx = NULL;
	pthread_mutex_unlock(&dqv_region.lock);
	verbs_context_fini(&c->vctx);
	free(c);
	return 0;
}

/*
 * What the region does not carry (SRQs, memory windows, inline data),
 * droced's persistent regions (their memory is
 * droced's hugepages, not mappable here) and counters are left out: EOPNOTSUPP, as for any provider.
 */
static struct verbs_provider dqv_provider = {
	.name = "dq",
	.ops = {
		.post_send = dqv_post_send,
		.post_recv = dqv_post_recv,
		.poll_cq = dqv_poll_cq,
		.req_notify_cq = dqv_req_notify_cq,
		.close_context = dqv_close_context,
		.query_device_ex = droced_query_device_ex,
		.query_port = droced_query_port,
		.query_gid = droced_query_gid,
		.query_pkey = droced_query_pkey,
		.create_ah = droced_create_ah,
		.destroy_ah = droced_destroy_ah,
		.cm_relay = droced_cm_relay,
		.progress = droced_progress,
		.self_driven = droced_self_driven,
		.event_take = dqv_event_take,
		.alloc_buf = dqv_alloc_buf,
		.free_buf = dqv_free_buf,
		.create_channel = dqv_create_channel,
		.cq_take_event = dqv_cq_take_event,
		.alloc_pd = droced_alloc_pd,
		.dealloc_pd = droced_dealloc_pd,
		.reg_mr = dqv_reg_mr,
		.dereg_mr = droced_dereg_mr,
		.rereg_mr = dqv_rereg_mr,
		.set_mr_lease = droced_set_mr_lease,
		.renew_mr = droced_renew_mr,
		.query_mr_lease = droced_query_mr_lease,
		.create_cq = dqv_create_cq,
		.destroy_cq = dqv_destroy_cq,
		.create_qp = dqv_create_qp,
		.modify_qp = droced_modify_qp,
		.query_qp = dqv_query_qp,
		.destroy_qp = dqv_destroy_qp,
	},
};

VERBS_PROVIDER_REGISTER(dqv_provider)
