/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dqv.h - the queue-region provider (lib/verbs/README.md "Providers",
 * app/droced/README.md "Queue regions"): an application of droced that is
 * a plain process.  No EAL, no hugepages, no mapping of droced's memory:
 * the control verbs are droced's client's requests on its socket
 * (provider_droced), the application's buffers are its own pages moved
 * onto memfds (provider_droced's droced_mem.c), and the data path is
 * lib/dq's rings in the region droced made for this process.
 *
 * One region per process, opened with the first context (droced allows
 * one per connection); its QP and CQ slots are handed out to the
 * process's objects (an SRQ takes a QP slot and uses its receive ring).
 * Each context has an event ring of its own in the region (lib/dq
 * dq_evq), its index droced's (DQ_OPEN's 0, DQ_CTX_OPEN's), which droced
 * counts on that context's async_fd.
 */
#ifndef DQV_H
#define DQV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "dq.h"
#include "verbs_daemon.h"

/* The region's shape: every slot droced allows, rings as deep as lib/dq
 * allows (a QP's max_send_wr / max_recv_wr must fit its ring).  Pages
 * are touched only where rings are used. */
#define DQV_QPS DQ_MAX_QPS
#define DQV_CQS DQ_MAX_CQS
#define DQV_DEPTH DQ_MAX_DEPTH

struct dqv_region {
	void *base;
	size_t size;
	struct dq_geom g;
	struct dq_bell *bell;
	int bell_fd;			/* the application's end of the doorbell */
	pthread_mutex_t lock;		/* slots, opening: the control path */
	uint64_t qp_used, cq_used;	/* slot bitmaps */
	/* bumped by a fork's child: a context of the parent's names a ring
	 * of the parent's region, not of any region the child opens */
	uint32_t gen;
	/* per QP slot, the process's own: its QP's number (0: none) and the
	 * receive completions polled (a post's room: max_recv_wr less
	 * those posted and not yet polled, as in process) */
	uint32_t slot_qpn[DQV_QPS];
	uint32_t rq_done[DQV_QPS];
};

/* A context of this provider: its event ring's index and consumer index
 * (read under the context's event lock), in the region of generation gen. */
struct dqv_context {
	struct verbs_context vctx;
	uint32_t ev_ctx;
	uint32_t ev_cons;
	uint32_t gen;
};

static inline struct dqv_context *
dqv_ctx(const struct droce_context *ctx)
{
	return (struct dqv_context *)verbs_ctx((struct droce_context *)ctx);
}

/* A CQ: droced's client's proxy first (the handle), then its slot. */
struct dqv_cq {
	struct verbs_dmn_cq d;
	uint32_t slot;
	uint32_t depth;
	uint32_t cons;			/* our own index */
	uint32_t arm_sn;		/* the last arm's sequence number */
	uint32_t taken;			/* fired events taken (cq_take_event) */
	uint32_t last_slot;		/* the QP slot of its last receive completion */
	struct dq_ring *ring;
	struct dq_notify *notify;
};

struct dqv_qp {
	struct verbs_dmn_qp d;
	uint32_t slot;
	uint32_t sq_depth, rq_depth;
	uint32_t sq_prod, rq_prod;	/* our own indices */
	uint16_t sig_all;		/* DQ_SEND_SIGNALED when sq_sig_all */
	uint32_t max_inline;		/* the QP's max_inline_data */
	uint32_t max_send_sge, max_recv_sge;	/* as droced granted: more is EINVAL */
	uint32_t max_recv_wr;		/* as droced granted */
	uint32_t rq_posted;		/* receives posted (dqv_recv_done: completed) */
	struct dq_ring *sq, *rq;
	struct dqv_region *r;
};

/* An SRQ: droced's client's proxy first, then the QP slot whose receive
 * ring is its. */
struct dqv_srq {
	struct verbs_dmn_srq d;
	uint32_t slot;
	uint32_t depth;
	uint32_t prod;			/* our own index */
	uint32_t max_sge;		/* as droced granted: more is EINVAL */
	struct dq_ring *ring;
	struct dqv_region *r;
};

extern struct dqv_region dqv_region;

/* dqv_objects.c: the object ops. */
int dqv_alloc_buf(struct droce_context *ctx, size_t len, void **buf);
int dqv_free_buf(struct droce_context *ctx, void *buf);
int dqv_rereg_mr(struct droce_mr *mr, int flags, struct droce_pd *pd, void *addr, size_t length,
		 int access);
int dqv_reg_mr(struct droce_pd *pd, void *addr, size_t len, uint64_t iova, int access,
	       struct droce_mr **mr);
int dqv_alloc_mw(struct droce_pd *pd, int type, struct droce_mw **mw);
int dqv_create_channel(struct droce_context *ctx, int fd, uint64_t *handle);
int dqv_create_cq(struct droce_context *ctx, int cqe, void *cq_context,
		  struct droce_comp_channel *channel, struct droce_cq **cq);
int dqv_destroy_cq(struct droce_cq *cq);
int dqv_create_qp(struct droce_pd *pd, struct droce_qp_init_attr *init, struct droce_qp **qp);
int dqv_modify_qp(struct droce_qp *qp, struct droce_qp_attr *attr, int mask);
int dqv_query_qp(struct droce_qp *qp, struct droce_qp_attr *attr,
		 struct droce_qp_init_attr *init);
int dqv_destroy_qp(struct droce_qp *qp);
int dqv_create_srq(struct droce_pd *pd, struct droce_srq_init_attr *init, struct droce_srq **srq);
int dqv_modify_srq(struct droce_srq *srq, struct droce_srq_attr *attr, int mask);
int dqv_destroy_srq(struct droce_srq *srq);
/* The name droced gives obj's events: obj (droced routes them to its context). */
uint64_t dqv_event_name(const struct droce_context *ctx, const void *obj);
int dqv_alloc_pd(struct droce_context *ctx, struct droce_pd **pd);

/* dqv_data.c: the data path and the events. */
int dqv_post_send(struct droce_qp *qp, struct droce_send_wr *wr, struct droce_send_wr **bad);
int dqv_post_recv(struct droce_qp *qp, struct droce_recv_wr *wr, struct droce_recv_wr **bad);
int dqv_post_srq_recv(struct droce_srq *srq, struct droce_recv_wr *wr, struct droce_recv_wr **bad);
int dqv_poll_cq(struct droce_cq *cq, int n, struct droce_wc *wc);
/* The receive completions polled of the QP in slot (dqv_region.rq_done). */
uint32_t dqv_recv_done(uint32_t slot);
/* qpn's completions not yet polled taken out of cq (its QP reset). */
void dqv_cq_clean(struct droce_cq *cq, uint32_t qpn);
int dqv_req_notify_cq(struct droce_cq *cq, int solicited_only);
int dqv_cq_take_event(struct droce_cq *cq);
int dqv_event_take(struct droce_context *ctx, struct droce_async_event *ev);

#endif /* DQV_H */
