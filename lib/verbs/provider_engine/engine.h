/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * engine.h - the in-process engine provider: its context and ops.  The
 * verbs run on this process's lib/protection tables and lib/transport
 * engine (run-to-completion, a progress thread or transport lcores).
 */
#ifndef DROCE_VERBS_ENGINE_PRIVATE_H
#define DROCE_VERBS_ENGINE_PRIVATE_H

#include <stdbool.h>

#include "droce.h"
#include "prot.h"
#include "verbs_engine.h"
#include "verbs_private.h"

struct engine_context {
	struct verbs_context vctx;
	struct prot_tables *prot;	/* PD/MR/MW tables */
	struct tp_dev *tp;		/* transport engine; NULL until a link */
	int socket_id;
	bool dedicated;			/* tp runs on a transport lcore */
	verbs_port_query_t query_port;	/* the device's (lib/device), or NULL */
};

/* ctx's engine context (ctx is one: its ops are this provider's). */
static inline struct engine_context *
engine_ctx(struct droce_context *ctx)
{
	return (struct engine_context *)((char *)verbs_ctx(ctx) -
					 offsetof(struct engine_context, vctx));
}

/* engine_prot.c (no DPDK needed): PDs, MRs, MWs and their leases. */
int verbs_engine_alloc_pd(struct droce_context *ctx, struct droce_pd **out);
int verbs_engine_dealloc_pd(struct droce_pd *pd);
int verbs_engine_reg_mr(struct droce_pd *pd, void *addr, size_t length, uint64_t iova,
		  int access, struct droce_mr **out);
int verbs_engine_rereg_mr(struct droce_mr *mr, int flags, struct droce_pd *pd, void *addr,
		    size_t length, int access);
int verbs_engine_dereg_mr(struct droce_mr *mr);
int verbs_engine_alloc_mw(struct droce_pd *pd, int type, struct droce_mw **out);
int verbs_engine_dealloc_mw(struct droce_mw *mw);
int verbs_engine_set_mr_lease(struct droce_mr *mr, uint32_t lease_ms);
int verbs_engine_set_mw_lease(struct droce_mw *mw, uint32_t lease_ms);
int verbs_engine_renew_mr(struct droce_mr *mr);
int verbs_engine_renew_mw(struct droce_mw *mw);
int verbs_engine_query_mr_lease(struct droce_mr *mr, struct droce_lease_attr *attr);
int verbs_engine_query_mw_lease(struct droce_mw *mw, struct droce_lease_attr *attr);

/* engine_qp.c, engine_device.c, engine_buf.c (DPDK): the transport's verbs. */
int verbs_engine_post_send(struct droce_qp *qp, struct droce_send_wr *wr,
		     struct droce_send_wr **bad_wr);
int verbs_engine_post_recv(struct droce_qp *qp, struct droce_recv_wr *wr,
		     struct droce_recv_wr **bad_wr);
int verbs_engine_poll_cq(struct droce_cq *cq, int num_entries, struct droce_wc *wc);
int verbs_engine_post_srq_recv(struct droce_srq *srq, struct droce_recv_wr *wr,
			 struct droce_recv_wr **bad_wr);
int verbs_engine_req_notify_cq(struct droce_cq *cq, int solicited_only);
int verbs_engine_cq_take_event(struct droce_cq *cq);
int verbs_engine_create_cq(struct droce_context *ctx, int cqe, void *cq_context,
		     struct droce_comp_channel *channel, struct droce_cq **out);
int verbs_engine_destroy_cq(struct droce_cq *cq);
int verbs_engine_create_qp(struct droce_pd *pd, struct droce_qp_init_attr *init,
		     struct droce_qp **out);
int verbs_engine_modify_qp(struct droce_qp *qp, struct droce_qp_attr *attr, int mask);
int verbs_engine_set_qp_cc(struct droce_qp *qp, const char *algo);
int verbs_engine_set_qp_sr(struct droce_qp *qp, bool on);
int verbs_engine_query_qp(struct droce_qp *qp, struct droce_qp_attr *attr,
		    struct droce_qp_init_attr *init);
int verbs_engine_destroy_qp(struct droce_qp *qp);
int verbs_engine_create_srq(struct droce_pd *pd, struct droce_srq_init_attr *init,
		      struct droce_srq **out);
int verbs_engine_modify_srq(struct droce_srq *srq, struct droce_srq_attr *attr, int mask);
int verbs_engine_query_srq(struct droce_srq *srq, struct droce_srq_attr *attr);
int verbs_engine_destroy_srq(struct droce_srq *srq);
int verbs_engine_create_ah(struct droce_pd *pd, struct droce_ah_attr *attr,
		     struct droce_ah **out);
int verbs_engine_destroy_ah(struct droce_ah *ah);
int verbs_engine_attach_mcast(struct droce_qp *qp, const union droce_gid *gid);
int verbs_engine_detach_mcast(struct droce_qp *qp, const union droce_gid *gid);
int verbs_engine_query_device_ex(struct droce_context *ctx, struct droce_device_attr_ex *attr);
int verbs_engine_query_port(struct droce_context *ctx, uint8_t port_num,
		      struct droce_port_attr *attr);
int verbs_engine_query_gid(struct droce_context *ctx, uint8_t port_num, int index,
		     union droce_gid *gid);
int verbs_engine_query_pkey(struct droce_context *ctx, uint8_t port_num, int index,
		      uint16_t *pkey);
int verbs_engine_get_counter(struct droce_context *ctx, const char *name, uint64_t *value);
int verbs_engine_progress(struct droce_context *ctx);
int verbs_engine_self_driven(struct droce_context *ctx);
int verbs_engine_event_take(struct droce_context *ctx, struct droce_async_event *ev);
int verbs_engine_create_channel(struct droce_context *ctx, int fd, uint64_t *handle);
int verbs_engine_alloc_buf(struct droce_context *ctx, size_t len, void **buf);
int verbs_engine_free_buf(struct droce_context *ctx, void *buf);

#endif /* DROCE_VERBS_ENGINE_PRIVATE_H */
