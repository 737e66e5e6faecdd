/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine_context.c - the in-process engine provider: its ops table and
 * registration, droce_open_context (a context without a link; lib/device's
 * droce_open_device builds on it) and its close.  Without DPDK only the
 * protection verbs exist; the transport's ops answer EOPNOTSUPP.
 */
#include <errno.h>
#include <stdlib.h>

#include "droce.h"
#include "engine.h"

static int engine_close_context(struct droce_context *ctx);

static struct verbs_provider engine_provider = {
	.name = "engine",
	.ops = {
		.close_context = engine_close_context,
		.alloc_pd = verbs_engine_alloc_pd,
		.dealloc_pd = verbs_engine_dealloc_pd,
		.reg_mr = verbs_engine_reg_mr,
		.rereg_mr = verbs_engine_rereg_mr,
		.dereg_mr = verbs_engine_dereg_mr,
		.alloc_mw = verbs_engine_alloc_mw,
		.dealloc_mw = verbs_engine_dealloc_mw,
		.set_mr_lease = verbs_engine_set_mr_lease,
		.set_mw_lease = verbs_engine_set_mw_lease,
		.renew_mr = verbs_engine_renew_mr,
		.renew_mw = verbs_engine_renew_mw,
		.query_mr_lease = verbs_engine_query_mr_lease,
		.query_mw_lease = verbs_engine_query_mw_lease,
#ifdef VERBS_ENGINE_TRANSPORT
		.post_send = verbs_engine_post_send,
		.post_recv = verbs_engine_post_recv,
		.poll_cq = verbs_engine_poll_cq,
		.post_srq_recv = verbs_engine_post_srq_recv,
		.req_notify_cq = verbs_engine_req_notify_cq,
		.query_device_ex = verbs_engine_query_device_ex,
		.query_port = verbs_engine_query_port,
		.query_gid = verbs_engine_query_gid,
		.query_pkey = verbs_engine_query_pkey,
		.get_counter = verbs_engine_get_counter,
		.progress = verbs_engine_progress,
		.self_driven = verbs_engine_self_driven,
		.event_take = verbs_engine_event_take,
		.alloc_buf = verbs_engine_alloc_buf,
		.free_buf = verbs_engine_free_buf,
		.create_channel = verbs_engine_create_channel,
		.cq_take_event = verbs_engine_cq_take_event,
		.create_cq = verbs_engine_create_cq,
		.destroy_cq = verbs_engine_destroy_cq,
		.create_qp = verbs_engine_create_qp,
		.modify_qp = verbs_engine_modify_qp,
		.query_qp = verbs_engine_query_qp,
		.destroy_qp = verbs_engine_destroy_qp,
		.set_qp_cc = verbs_engine_set_qp_cc,
		.set_qp_sr = verbs_engine_set_qp_sr,
		.create_srq = verbs_engine_create_srq,
		.modify_srq = verbs_engine_modify_srq,
		.query_srq = verbs_engine_query_srq,
		.destroy_srq = verbs_engine_destroy_srq,
		.create_ah = verbs_engine_create_ah,
		.destroy_ah = verbs_engine_destroy_ah,
		.attach_mcast = verbs_engine_attach_mcast,
		.detach_mcast = verbs_engine_detach_mcast,
#endif
	},
};

/* 0, or -EBUSY while PDs are still allocated (the engine detached first). */
static int
engine_close_context(struct droce_context *ctx)
{
	struct engine_context *e = engine_ctx(ctx);
	int ret = prot_tables_destroy(e->prot);

	if (ret != 0)
		return ret;
	verbs_context_fini(&e->vctx);
	free(e);
	return 0;
}

VERBS_PROVIDER_REGISTER(engine_provider)

struct droce_context *
droce_open_context(const struct droce_context_attr *attr)
{
	struct prot_config cfg = { .socket_id = DROCE_SOCKET_ID_ANY };
	struct engine_context *e;
	int ret;

	if (attr != NULL) {
		cfg.max_pd = attr->max_pd;
		cfg.max_mr = attr->max_mr;
		cfg.max_mw = attr->max_mw;
		cfg.socket_id = attr->socket_id;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	e->socket_id = cfg.socket_id;
	ret = verbs_context_init(&e->vctx, &engine_provider, NULL);
	if (ret != 0) {
		free(e);
		errno = ret;
		return NULL;
	}
	ret = prot_tables_create(&cfg, verbs_alloc_ops(), &e->prot);
	if (ret != 0) {
		verbs_context_fini(&e->vctx);
		free(e);
		errno = -ret;
		return NULL;
	}
	return &e->vctx.pub;
}

/* Whether ctx is one of this provider's. */
static bool
is_engine(const struct droce_context *ctx)
{
	return ctx != NULL && ctx->ops == &engine_provider.ops;
}

struct tp_dev *
verbs_tp(struct droce_context *ctx)
{
	return is_engine(ctx) ? engine_ctx(ctx)->tp : NULL;
}

struct prot_tables *
verbs_prot(struct droce_context *ctx)
{
	return is_engine(ctx) ? engine_ctx(ctx)->prot : NULL;
}

bool
verbs_dedicated(struct droce_context *ctx)
{
	return is_engine(ctx) && engine_ctx(ctx)->dedicated;
}

void
verbs_set_port_query(struct droce_context *ctx, verbs_port_query_t query)
{
	if (is_engine(ctx))
		engine_ctx(ctx)->query_port = query;
}
