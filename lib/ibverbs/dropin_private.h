/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_private.h - libibverbs.so.1 on droce: the ibv_* objects the
 * drop-in hands out, each an rdma-core structure (from the system's
 * <infiniband/verbs.h>) with the droce object behind it.
 */
#ifndef DROCE_DROPIN_PRIVATE_H
#define DROCE_DROPIN_PRIVATE_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "droce.h"

#define DROPIN_CONTAINER_OF(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* droce has one context per device; every ibv_context opened on the
 * device (the program's, the drop-in librdmacm's) shares it (nctx), and
 * its events, which the router hands to each (dropin_async.c). */
struct dropin_router;
struct dropin_device {
	struct ibv_device ibv;
	struct droce_device *d;
	struct droce_context *ctx;
	unsigned int nctx;
	struct dropin_router *router;	/* while nctx > 0: the new contexts' */
};

/* A context's asynchronous events (dropin_async.c): async_fd, an eventfd
 * counting the queued events (oldest first). */
struct dropin_events {
	int fd;
	struct ibv_async_event *ev;
	size_t n;
	size_t cap;
};

/* The ibv_context lies inside the verbs_context (its last field), so the
 * inline _ex verbs of verbs.h find the extended ops (verbs_get_ctx). */
struct dropin_context {
	struct verbs_context vctx;
	struct droce_context *d;
	struct dropin_context *next_open;	/* the open contexts (dropin_device.c) */
	struct dropin_context *next_dev;	/* its device's (dropin_async.c) */
	struct dropin_router *router;		/* its events' (dropin_async.c) */
	/* a parent's context in a child of fork(): its router thread-less,
	 * its droce context the parent's (dropin_device.c, "fork") */
	bool stale;
	struct dropin_events events;
};

/* A PD, or a parent domain (protection != NULL): a second ibv_pd on the
 * protection domain's droce PD, so everything made on it is that PD's. */
struct dropin_pd {
	struct ibv_pd ibv;
	struct droce_pd *d;
	struct dropin_pd *protection;
	unsigned int nparents;	/* parent domains on this PD */
};

struct dropin_mr {
	struct ibv_mr ibv;
	struct droce_mr *d;
};

struct dropin_mw {
	struct ibv_mw ibv;
	struct droce_mw *d;
};

/* A CQ; one made by ibv_create_cq_ex is an ibv_cq_ex (which begins with
 * an ibv_cq's fields) whose poll functions read wc (dropin_cq_ex.c). */
struct dropin_cq {
	union {
		struct ibv_cq ibv;
		struct ibv_cq_ex ex;
	};
	struct droce_cq *d;
	struct ibv_wc wc;	/* the completion start/next_poll took */
	uint32_t events_reported;	/* async events taken (dropin_async.c) */
};

/* A completion channel: droce's; ibv.fd is its eventfd. */
struct dropin_channel {
	struct ibv_comp_channel ibv;
	struct droce_comp_channel *d;
};

/*
 * The ibv_wr_* post API of a QP (dropin_wr.c): work requests built between
 * wr_start and wr_complete, posted together; a batch that fills up is
 * posted early (in order; its error is returned by wr_complete).
 */
#define DROPIN_WR_BATCH_MAX 32

struct dropin_wr_batch {
	unsigned int n;
	int err;
	struct droce_send_wr wr[DROPIN_WR_BATCH_MAX];
	struct droce_sge sge[DROPIN_WR_BATCH_MAX][DROCE_MAX_SGE];
	uint8_t inline_data[DROPIN_WR_BATCH_MAX][DROCE_MAX_INLINE_DATA];
};

struct dropin_qp {
	union {
		struct ibv_qp ibv;
		struct ibv_qp_ex qpx;	/* qp_base is ibv */
	};
	struct droce_qp *d;
	struct dropin_wr_batch *batch;	/* NULL: no ibv_wr_* API */
	/* the CM id driving this QP (the drop-in librdmacm's rdma_create_qp),
	 * which forgets it before ibv_destroy_qp frees it */
	struct droce_rdma_cm_id *cm_id;
	uint32_t events_reported;	/* async events taken (dropin_async.c) */
};

struct dropin_srq {
	struct ibv_srq ibv;
	struct droce_srq *d;
	uint32_t events_reported;	/* async events taken (dropin_async.c) */
};

struct dropin_ah {
	struct ibv_ah ibv;
	struct droce_ah *d;
};

static inline struct dropin_context *
dropin_context_of(struct ibv_context *c)
{
	return DROPIN_CONTAINER_OF(c, struct dropin_context, vctx.context);
}

static inline struct droce_context *
dropin_dctx(struct ibv_context *c)
{
	return dropin_context_of(c)->d;
}

#define DROPIN_OBJ_OF(type, p) DROPIN_CONTAINER_OF(p, struct type, ibv)

/* droce's MR of an ibv_mr (NULL: none, as an unbinding BIND_MW names). */
static inline struct droce_mr *
droce_mr_of(struct ibv_mr *mr)
{
	return mr != NULL ? DROPIN_OBJ_OF(dropin_mr, mr)->d : NULL;
}

/* A creator's failure after its allocation: free it, keep errno, NULL. */
static inline void *
dropin_undo_alloc(void *obj)
{
	int err = errno;

	free(obj);
	errno = err;
	return NULL;
}

/* The ops of a new context: dropin_device.c's (query_port, query_device_ex)
 * and dropin_verbs.c's (the data path, the _ex creators). */
void dropin_set_device_ops(struct dropin_context *ctx);
void dropin_set_ops(struct dropin_context *ctx);
void dropin_set_forked_ops(struct dropin_context *ctx);
/* ibv_create_cq's work (dropin_verbs.c); NULL with errno on failure */
struct dropin_cq *dropin_cq_new(struct ibv_context *context, int cqe, void *cq_context,
				struct ibv_comp_channel *channel, int comp_vector);
struct ibv_pd *dropin_alloc_parent_domain(struct ibv_context *context,
					  struct ibv_parent_domain_init_attr *attr);
/* the extended CQ (dropin_cq_ex.c) */
struct ibv_cq_ex *dropin_create_cq_ex(struct ibv_context *context,
				      struct ibv_cq_init_attr_ex *attr);
/* device memory (dropin_dm.c) */
void dropin_set_dm_ops(struct dropin_context *ctx);
size_t dropin_dm_max_size(void);
/* dropin_wr.c: the ibv_wr_* API for send_ops_flags (0 or EOPNOTSUPP). */
int dropin_wr_init(struct dropin_qp *qp, uint64_t send_ops_flags);

/* dropin_event.c: poll_cq, req_notify_cq; droce's channel of a channel (or NULL). */
int dropin_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int dropin_req_notify_cq(struct ibv_cq *cq, int solicited_only);
struct droce_comp_channel *dropin_channel_of(struct ibv_comp_channel *channel);
/* The member of an async event's element union its type uses (verbs.h). */
enum dropin_element { EL_NONE, EL_CQ, EL_QP, EL_SRQ, EL_WQ, EL_PORT };
enum dropin_element dropin_event_element(enum ibv_event_type t);
/*
 * dropin_async.c: each context's asynchronous events.  Under dropin.lock:
 * open (its eventfd, then attach: 0 or -errno), detach (its device's
 * router forgets it, and stops with the last), attach again (a close that
 * failed), free (the fd and queue).  forget: after droce destroyed a QP,
 * CQ or SRQ, its events not taken dropped, those taken waited for (the
 * object's mutex, cond, acked count and dropin_*'s events_reported).
 */
enum dropin_fork_stage { DROPIN_FORK_PREPARE, DROPIN_FORK_PARENT, DROPIN_FORK_CHILD };
int dropin_async_open(struct dropin_device *dd, struct dropin_context *ctx);
int dropin_async_attach(struct dropin_device *dd, struct dropin_context *ctx);
void dropin_async_detach(struct dropin_device *dd, struct dropin_context *ctx);
void dropin_async_free(struct dropin_context *ctx);
void dropin_async_fork(struct dropin_device *dd, enum dropin_fork_stage stage);
void dropin_async_forget(struct ibv_context *context, const void *obj, pthread_mutex_t *m,
			 pthread_cond_t *c, const uint32_t *done, const uint32_t *reported);
/* dropin_sysfs.c: the device's tree under root (the kernel's sysfs layout),
 * its ibdev_path then root/NAME; 0 or -errno. */
int dropin_sysfs_write(struct dropin_device *dd, const char *root);

#endif /* DROCE_DROPIN_PRIVATE_H */
