/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * droce_provider.h - the provider interface behind struct droce_context
 * (lib/verbs/README.md, "Providers"): the one table of operations each
 * provider fills (the in-process engine, droced's client, ...).  droce.h
 * includes it for its inline data-path calls; an application never calls
 * an op itself.
 *
 * Every op returns 0 (or a count) on success and -errno on failure;
 * creators return their object through the last argument.  The droce_*
 * functions check their arguments, call the op and convert to ibverbs'
 * conventions.  An op a provider leaves NULL answers -EOPNOTSUPP: lib/verbs
 * fills it with its default when the provider registers.
 *
 * DROCE_CONTEXT_OPS is the list, once: X(name, parameters) per op.  The
 * data-path ops come first and keep their places (droce.h's inline calls
 * are compiled into programs); a new op goes at the end.
 */
#ifndef DROCE_PROVIDER_H
#define DROCE_PROVIDER_H

#include <stddef.h>
#include <stdint.h>

struct droce_ah;
struct droce_ah_attr;
struct droce_async_event;
struct droce_comp_channel;
struct droce_context;
struct droce_cq;
struct droce_device_attr_ex;
struct droce_lease_attr;
struct droce_mr;
struct droce_mw;
struct droce_pd;
struct droce_port_attr;
struct droce_qp;
struct droce_qp_attr;
struct droce_qp_init_attr;
struct droce_recv_wr;
struct droce_send_wr;
struct droce_srq;
struct droce_srq_attr;
struct droce_srq_init_attr;
struct droce_wc;
union droce_gid;

/*
 * lib/cm's seam for a provider whose contexts cannot own the port's GSI QP
 * (droced's clients: droced owns QP1 and relays CM MADs, app/droced/README.md
 * "RDMA CM").  One op, r->op saying what: 0 (RECV: 1 when a MAD was
 * returned, 0 when none waits) or -errno.
 */
enum droce_cm_relay_op {
	DROCE_CM_RELAY_OPEN,		/* fd: an eventfd counting MADs waiting */
	DROCE_CM_RELAY_CLOSE,
	DROCE_CM_RELAY_SEND,		/* mad to QP1 at dgid */
	DROCE_CM_RELAY_RECV,		/* the oldest MAD waiting: sgid, dgid, mad */
	DROCE_CM_RELAY_LISTEN,		/* port's REQs to this context (EADDRINUSE) */
	DROCE_CM_RELAY_UNLISTEN,
	DROCE_CM_RELAY_COMM_ID,		/* a new local communication ID: comm_id */
	DROCE_CM_RELAY_COMM_ID_FREE,
};

#define DROCE_CM_MAD_LEN 256

struct droce_cm_relay {
	uint32_t op;			/* enum droce_cm_relay_op */
	int32_t fd;
	uint32_t comm_id;
	uint16_t port;
	uint8_t sgid[16];
	uint8_t dgid[16];
	uint8_t mad[DROCE_CM_MAD_LEN];
};

#define DROCE_CONTEXT_OPS(X)							\
	/* the data path (droce.h inline) */					\
	X(post_send, (struct droce_qp *qp, struct droce_send_wr *wr,		\
		      struct droce_send_wr **bad_wr))				\
	X(post_recv, (struct droce_qp *qp, struct droce_recv_wr *wr,		\
		      struct droce_recv_wr **bad_wr))				\
	X(poll_cq, (struct droce_cq *cq, int num_entries, struct droce_wc *wc))	\
	X(post_srq_recv, (struct droce_srq *srq, struct droce_recv_wr *wr,	\
			  struct droce_recv_wr **bad_wr))			\
	X(req_notify_cq, (struct droce_cq *cq, int solicited_only))		\
	/* the context (close: after its objects are gone) */			\
	X(close_context, (struct droce_context *ctx))				\
	X(query_device_ex, (struct droce_context *ctx,				\
			    struct droce_device_attr_ex *attr))			\
	X(query_port, (struct droce_context *ctx, uint8_t port_num,		\
		       struct droce_port_attr *attr))				\
	X(query_gid, (struct droce_context *ctx, uint8_t port_num, int index,	\
		      union droce_gid *gid))					\
	X(query_pkey, (struct droce_context *ctx, uint8_t port_num, int index,	\
		       uint16_t *pkey))						\
	X(get_counter, (struct droce_context *ctx, const char *name,		\
			uint64_t *value))					\
	/* one round of the engine: how many packets it handled */		\
	X(progress, (struct droce_context *ctx))				\
	/* 1: something else runs the engine (waiters sleep on fds); 0: only	\
	 * the application's droce_progress does */				\
	X(self_driven, (struct droce_context *ctx))				\
	/* the next asynchronous event raised for ctx (lib/verbs counts it) */	\
	X(event_take, (struct droce_context *ctx, struct droce_async_event *ev))	\
	X(alloc_buf, (struct droce_context *ctx, size_t len, void **buf))	\
	X(free_buf, (struct droce_context *ctx, void *buf))			\
	/* completion channels: the channel's eventfd fd, *handle the		\
	 * provider's name for it (0: none, no destroy_channel) */		\
	X(create_channel, (struct droce_context *ctx, int fd, uint64_t *handle))	\
	X(destroy_channel, (uint64_t handle))					\
	/* 1 and one ready completion event of cq taken, or 0: none */		\
	X(cq_take_event, (struct droce_cq *cq))					\
	/* protection domains, memory regions and windows */			\
	X(alloc_pd, (struct droce_context *ctx, struct droce_pd **pd))		\
	X(dealloc_pd, (struct droce_pd *pd))					\
	X(reg_mr, (struct droce_pd *pd, void *addr, size_t length,		\
		   uint64_t iova, int access, struct droce_mr **mr))		\
	X(rereg_mr, (struct droce_mr *mr, int flags, struct droce_pd *pd,	\
		     void *addr, size_t length, int access))			\
	X(dereg_mr, (struct droce_mr *mr))					\
	X(alloc_mw, (struct droce_pd *pd, int type, struct droce_mw **mw))	\
	X(dealloc_mw, (struct droce_mw *mw))					\
	X(set_mr_lease, (struct droce_mr *mr, uint32_t lease_ms))		\
	X(set_mw_lease, (struct droce_mw *mw, uint32_t lease_ms))		\
	X(renew_mr, (struct droce_mr *mr))					\
	X(renew_mw, (struct droce_mw *mw))					\
	X(query_mr_lease, (struct droce_mr *mr, struct droce_lease_attr *attr))	\
	X(query_mw_lease, (struct droce_mw *mw, struct droce_lease_attr *attr))	\
	X(persist_mr, (struct droce_mr *mr, const char *name, uint32_t lease_ms))	\
	X(attach_mr, (struct droce_context *ctx, const char *name,		\
		      struct droce_mr **mr))					\
	X(release, (struct droce_context *ctx, const char *name))		\
	/* completion queues, queue pairs, SRQs, address handles */		\
	X(create_cq, (struct droce_context *ctx, int cqe, void *cq_context,	\
		      struct droce_comp_channel *channel, struct droce_cq **cq))	\
	X(destroy_cq, (struct droce_cq *cq))					\
	X(create_qp, (struct droce_pd *pd, struct droce_qp_init_attr *init,	\
		      struct droce_qp **qp))					\
	X(modify_qp, (struct droce_qp *qp, struct droce_qp_attr *attr,		\
		      int attr_mask))						\
	X(query_qp, (struct droce_qp *qp, struct droce_qp_attr *attr,		\
		     struct droce_qp_init_attr *init))				\
	X(destroy_qp, (struct droce_qp *qp))					\
	X(create_srq, (struct droce_pd *pd, struct droce_srq_init_attr *init,	\
		       struct droce_srq **srq))					\
	X(modify_srq, (struct droce_srq *srq, struct droce_srq_attr *attr,	\
		       int mask))						\
	X(query_srq, (struct droce_srq *srq, struct droce_srq_attr *attr))	\
	X(destroy_srq, (struct droce_srq *srq))					\
	X(create_ah, (struct droce_pd *pd, struct droce_ah_attr *attr,		\
		      struct droce_ah **ah))					\
	X(destroy_ah, (struct droce_ah *ah))					\
	X(set_qp_cc, (struct droce_qp *qp, const char *algo))			\
	X(set_qp_sr, (struct droce_qp *qp, bool on))				\
	/* lib/cm's GSI relay, for a context with no QP1 of its own */		\
	X(cm_relay, (struct droce_context *ctx, struct droce_cm_relay *r))	\
	/* multicast: qp UD and gid a group (checked by lib/verbs) */		\
	X(attach_mcast, (struct droce_qp *qp, const union droce_gid *gid))	\
	X(detach_mcast, (struct droce_qp *qp, const union droce_gid *gid))

/* Every op returns int: 0 / a count, or -errno. */
#define DROCE_CONTEXT_OP_MEMBER(name, params) int (*name) params;

struct droce_context_ops {
	DROCE_CONTEXT_OPS(DROCE_CONTEXT_OP_MEMBER)
};

#endif /* DROCE_PROVIDER_H */
