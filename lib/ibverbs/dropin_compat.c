/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * dropin_compat.c - libibverbs' pre-1.1 ABI (the IBVERBS_1.0 versions of
 * ibv_get_device_list, ibv_open_device, ibv_create_qp...), which programs
 * linked against libibverbs 1.0 still call, and ibv_register_driver@1.1.
 *
 * The 1.0 objects had other layouts (no ibv_context_ops for the _ex verbs,
 * work requests without the bind/TSO unions, objects without the fields
 * added since).  Each 1.0 object here is that layout with the current
 * object behind it (real), and each 1.0 call a translation to the current
 * call: the same results and errors, since the work is the current
 * call's.  The current objects' user contexts (cq_context, qp_context,
 * srq_context) point at the 1.0 objects, so that completion and async
 * events lead back to them.  The structures below are the 1.0 ABI, field
 * for field; rdma-core's libibverbs/compat-1_0.c is the reference.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dropin_private.h"

/* Binds fn to name@IBVERBS_1.0, the version of the pre-1.1 ABI. */
#define COMPAT_1_0(fn, name) __asm__(".symver " #fn ", " #name "@IBVERBS_1.0")

/* Work requests translated on the stack per call of a 1.0 post. */
#define COMPAT_WR_BATCH 16

struct compat_context;

struct compat_device {
	void *obsolete_sysfs_dev;
	void *obsolete_sysfs_ibdev;
	struct ibv_device *real;
	struct _ibv_device_ops ops;
};

struct compat_pd {
	struct compat_context *context;
	uint32_t handle;
	struct ibv_pd *real;
};

struct compat_mr {
	struct compat_context *context;
	struct compat_pd *pd;
	uint32_t handle;
	uint32_t lkey;
	uint32_t rkey;
	struct ibv_mr *real;
};

struct compat_srq {
	struct compat_context *context;
	void *srq_context;
	struct compat_pd *pd;
	uint32_t handle;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
	struct ibv_srq *real;
};

struct compat_cq {
	struct compat_context *context;
	void *cq_context;
	uint32_t handle;
	int cqe;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t comp_events_completed;
	uint32_t async_events_completed;
	struct ibv_cq *real;
};

struct compat_qp {
	struct compat_context *context;
	void *qp_context;
	struct compat_pd *pd;
	struct compat_cq *send_cq;
	struct compat_cq *recv_cq;
	struct compat_srq *srq;
	uint32_t handle;
	uint32_t qp_num;
	enum ibv_qp_state state;
	enum ibv_qp_type qp_type;
	pthread_mutex_t mutex;
	pthread_cond_t cond;
	uint32_t events_completed;
	struct ibv_qp *real;
};

struct compat_ah {
	struct compat_context *context;
	struct compat_pd *pd;
	uint32_t handle;
	struct ibv_ah *real;
};

struct compat_qp_init_attr {
	void *qp_context;
	struct compat_cq *send_cq;
	struct compat_cq *recv_cq;
	struct compat_srq *srq;
	struct ibv_qp_cap cap;
	enum ibv_qp_type qp_type;
	int sq_sig_all;
};

struct compat_recv_wr {
	struct compat_recv_wr *next;
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
};

struct compat_send_wr {
	struct compat_send_wr *next;
	uint64_t wr_id;
	struct ibv_sge *sg_list;
	int num_sge;
	enum ibv_wr_opcode opcode;
	int send_flags;
	uint32_t imm_data;		/* network byte order */
	union {
		struct {
			uint64_t remote_addr;
			uint32_t rkey;
		} rdma;
		struct {
			uint64_t remote_addr;
			uint64_t compare_add;
			uint64_t swap;
			uint32_t rkey;
		} atomic;
		struct {
			struct compat_ah *ah;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
	} wr;
};

/* The 1.0 ops: only the data path's entries are set, as libibverbs'
 * compat layer does; the rest were never called by programs (their
 * verbs are the ibv_* functions). */
struct compat_context_ops {
	void *query_device, *query_port, *alloc_pd, *dealloc_pd, *reg_mr,
	     *dereg_mr, *create_cq;
	int (*poll_cq)(struct compat_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*req_notify_cq)(struct compat_cq *cq, int solicited_only);
	void *cq_event, *resize_cq, *destroy_cq, *create_srq, *modify_srq,
	     *query_srq, *destroy_srq;
	int (*post_srq_recv)(struct compat_srq *srq, struct compat_recv_wr *wr,
			     struct compat_recv_wr **bad_wr);
	void *create_qp, *query_qp, *modify_qp, *destroy_qp;
	int (*post_send)(struct compat_qp *qp, struct compat_send_wr *wr,
			 struct compat_send_wr **bad_wr);
	int (*post_recv)(struct compat_qp *qp, struct compat_recv_wr *wr,
			 struct compat_recv_wr **bad_wr);
	void *create_ah, *destroy_ah, *attach_mcast, *detach_mcast;
};
_Static_assert(sizeof(struct compat_context_ops) == 27 * sizeof(void *), "1.0 ops");

struct compat_context {
	struct compat_device *device;
	struct compat_context_ops ops;
	int cmd_fd;
	int async_fd;
	int num_comp_vectors;
	struct ibv_context *real;
	/* not in the 1.0 layout: the device, which outlives the list */
	struct compat_device device_copy;
};

/* The 1.0 RDMA and atomic members lie where the current ones do. */
_Static_assert(offsetof(struct compat_send_wr, wr) + sizeof(((struct compat_send_wr *)0)->wr) ==
	       sizeof(struct compat_send_wr), "wr last");
_Static_assert(sizeof(((struct compat_send_wr *)0)->wr.atomic) ==
	       sizeof(((struct ibv_send_wr *)0)->wr.atomic), "atomic");

/* A device list of the 1.0 ABI: the 1.0 devices, NULL-terminated, and the
 * current list behind them, in one allocation. */
struct compat_list {
	struct ibv_device **real;
	struct compat_device *dev;		/* n of them */
	struct compat_device *list[];		/* n + 1, the last NULL */
};

struct compat_device **dropin_get_device_list_1_0(int *num);
void dropin_free_device_list_1_0(struct compat_device **list);
const char *dropin_get_device_name_1_0(struct compat_device *device);
__be64 dropin_get_device_guid_1_0(struct compat_device *device);
struct compat_context *dropin_open_device_1_0(struct compat_device *device);
int dropin_close_device_1_0(struct compat_context *context);
int dropin_get_async_event_1_0(struct compat_context *context,
			       struct ibv_async_event *event);
void dropin_ack_async_event_1_0(struct ibv_async_event *event);
int dropin_query_device_1_0(struct compat_context *context,
			    struct ibv_device_attr *device_attr);
int dropin_query_port_1_0(struct compat_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
int dropin_query_gid_1_0(struct compat_context *context, uint8_t port_num,
			 int index, union ibv_gid *gid);
int dropin_query_pkey_1_0(struct compat_context *context, uint8_t port_num,
			  int index, __be16 *pkey);
struct compat_pd *dropin_alloc_pd_1_0(struct compat_context *context);
int dropin_dealloc_pd_1_0(struct compat_pd *pd);
struct compat_mr *dropin_reg_mr_1_0(struct compat_pd *pd, void *addr,
				    size_t length, int access);
int dropin_dereg_mr_1_0(struct compat_mr *mr);
struct compat_cq *dropin_create_cq_1_0(struct compat_context *context, int cqe,
				       void *cq_context,
				       struct ibv_comp_channel *channel,
				       int comp_vector);
int dropin_resize_cq_1_0(struct compat_cq *cq, int cqe);
int dropin_destroy_cq_1_0(struct compat_cq *cq);
int dropin_get_cq_event_1_0(struct ibv_comp_channel *channel,
			    struct compat_cq **cq, void **cq_context);
void dropin_ack_cq_events_1_0(struct compat_cq *cq, unsigned int nevents);
struct compat_srq *dropin_create_srq_1_0(struct compat_pd *pd,
					 struct ibv_srq_init_attr *attr);
int dropin_modify_srq_1_0(struct compat_srq *srq, struct ibv_srq_attr *attr,
			  int attr_mask);
int dropin_query_srq_1_0(struct compat_srq *srq, struct ibv_srq_attr *attr);
int dropin_destroy_srq_1_0(struct compat_srq *srq);
struct compat_qp *dropin_create_qp_1_0(struct compat_pd *pd,
				       struct compat_qp_init_attr *attr);
int dropin_query_qp_1_0(struct compat_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct compat_qp_init_attr *init_attr);
int dropin_modify_qp_1_0(struct compat_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
int dropin_destroy_qp_1_0(struct compat_qp *qp);
struct compat_ah *dropin_create_ah_1_0(struct compat_pd *pd,
				       struct ibv_ah_attr *attr);
int dropin_destroy_ah_1_0(struct compat_ah *ah);
int dropin_attach_mcast_1_0(struct compat_qp *qp, union ibv_gid *gid,
			    uint16_t lid);
int dropin_detach_mcast_1_0(struct compat_qp *qp, union ibv_gid *gid,
			    uint16_t lid);
void dropin_register_driver_1_1(const char *name, void *init_func);

/* ---- devices and contexts ------------------------------------------------------------ */

struct compat_device **
dropin_get_device_list_1_0(int *num)
{
	struct compat_list *l;
	struct ibv_device **real;
	int n;

	real = ibv_get_device_list(&n);
	if (real == NULL)
		return NULL;
	l = calloc(1, sizeof(*l) + (size_t)(n + 1) * sizeof(l->list[0]) +
		   (size_t)n * sizeof(*l->dev));
	if (l == NULL) {
		ibv_free_device_list(real);
		return NULL;		/* errno: ENOMEM (calloc) */
	}
	l->real = real;
	l->dev = (struct compat_device *)(void *)&l->list[n + 1];
	for (int i = 0; i < n; i++) {
		l->dev[i].real = real[i];
		l->list[i] = &l->dev[i];
	}
	if (num != NULL)
		*num = n;
	return l->list;
}
COMPAT_1_0(dropin_get_device_list_1_0, ibv_get_device_list);

void
dropin_free_device_list_1_0(struct compat_device **list)
{
	struct compat_list *l = DROPIN_CONTAINER_OF(list, struct compat_list, list);

	ibv_free_device_list(l->real);
	free(l);
}
COMPAT_1_0(dropin_free_device_list_1_0, ibv_free_device_list);

const char *
dropin_get_device_name_1_0(struct compat_device *device)
{
	return ibv_get_device_name(device->real);
}
COMPAT_1_0(dropin_get_device_name_1_0, ibv_get_device_name);

__be64
dropin_get_device_guid_1_0(struct compat_device *device)
{
	return ibv_get_device_guid(device->real);
}
COMPAT_1_0(dropin_get_device_guid_1_0, ibv_get_device_guid);

static int
compat_poll_cq(struct compat_cq *cq, int num_entries, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq->real, num_entries, wc);
}

static int
compat_req_notify_cq(struct compat_cq *cq, int solicited_only)
{
	return ibv_req_notify_cq(cq->real, solicited_only);
}

/* The current receive list of up to COMPAT_WR_BATCH 1.0 ones from wr
 * (into real[], linked); how many. */
static int
compat_recv_batch(struct compat_recv_wr *wr, struct ibv_recv_wr *real)
{
	int n = 0;

	for (; wr != NULL && n < COMPAT_WR_BATCH; wr = wr->next, n++) {
		real[n] = (struct ibv_recv_wr){
			.wr_id = wr->wr_id, .sg_list = wr->sg_list, .num_sge = wr->num_sge,
		};
		if (n > 0)
			real[n - 1].next = &real[n];
	}
	return n;
}

/* Posts a 1.0 receive list, COMPAT_WR_BATCH at a time, to the QP or SRQ;
 * *bad_wr the 1.0 request that failed. */
static int
compat_post_recv_list(struct ibv_qp *qp, struct ibv_srq *srq,
		      struct compat_recv_wr *wr, struct compat_recv_wr **bad_wr)
{
	while (wr != NULL) {
		struct ibv_recv_wr real[COMPAT_WR_BATCH], *bad = NULL;
		int n = compat_recv_batch(wr, real);
		int rc = qp != NULL ? ibv_post_recv(qp, real, &bad) :
			 ibv_post_srq_recv(srq, real, &bad);

		if (rc != 0) {
			for (int i = 0; i < n && &real[i] != bad; i++)
				wr = wr->next;
			*bad_wr = wr;
			return rc;
		}
		for (int i = 0; i < n; i++)
			wr = wr->next;
	}
	return 0;
}

static int
compat_post_recv(struct compat_qp *qp, struct compat_recv_wr *wr,
		 struct compat_recv_wr **bad_wr)
{
	return compat_post_recv_list(qp->real, NULL, wr, bad_wr);
}

static int
compat_post_srq_recv(struct compat_srq *srq, struct compat_recv_wr *wr,
		     struct compat_recv_wr **bad_wr)
{
	return compat_post_recv_list(NULL, srq->real, wr, bad_wr);
}

/* The current form of a 1.0 send request (next: NULL). */
static void
compat_send_wr(const struct compat_send_wr *w, bool ud, struct ibv_send_wr *real)
{
	*real = (struct ibv_send_wr){
		.wr_id = w->wr_id, .sg_list = w->sg_list, .num_sge = w->num_sge,
		.opcode = w->opcode, .send_flags = (unsigned int)w->send_flags,
		.imm_data = w->imm_data,
	};
	if (ud) {
		real->wr.ud.ah = w->wr.ud.ah->real;
		real->wr.ud.remote_qpn = w->wr.ud.remote_qpn;
		real->wr.ud.remote_qkey = w->wr.ud.remote_qkey;
	} else {
		/* the atomic member spans the RDMA one in both layouts */
		real->wr.atomic.remote_addr = w->wr.atomic.remote_addr;
		real->wr.atomic.compare_add = w->wr.atomic.compare_add;
		real->wr.atomic.swap = w->wr.atomic.swap;
		real->wr.atomic.rkey = w->wr.atomic.rkey;
	}
}

static int
compat_post_send(struct compat_qp *qp, struct compat_send_wr *wr,
		 struct compat_send_wr **bad_wr)
{
	bool ud = qp->qp_type == IBV_QPT_UD;

	while (wr != NULL) {
		struct ibv_send_wr real[COMPAT_WR_BATCH], *bad = NULL;
		struct compat_send_wr *w = wr;
		int n = 0, rc;

		for (; w != NULL && n < COMPAT_WR_BATCH; w = w->next, n++) {
			compat_send_wr(w, ud, &real[n]);
			if (n > 0)
				real[n - 1].next = &real[n];
		}
		rc = ibv_post_send(qp->real, real, &bad);
		if (rc != 0) {
			for (int i = 0; i < n && &real[i] != bad; i++)
				wr = wr->next;
			*bad_wr = wr;
			return rc;
		}
		wr = w;
	}
	return 0;
}

struct compat_context *
dropin_open_device_1_0(struct compat_device *device)
{
	struct compat_context *ctx = calloc(1, sizeof(*ctx));

	if (ctx == NULL)
		return NULL;		/* errno: ENOMEM (calloc) */
	ctx->real = ibv_open_device(device->real);
	if (ctx->real == NULL)
		return dropin_undo_alloc(ctx);
	ctx->device_copy = *device;
	ctx->device = &ctx->device_copy;
	ctx->cmd_fd = ctx->real->cmd_fd;
	ctx->async_fd = ctx->real->async_fd;
	ctx->num_comp_vectors = ctx->real->num_comp_vectors;
	ctx->ops.poll_cq = compat_poll_cq;
	ctx->ops.req_notify_cq = compat_req_notify_cq;
	ctx->ops.post_send = compat_post_send;
	ctx->ops.post_recv = compat_post_recv;
	ctx->ops.post_srq_recv = compat_post_srq_recv;
	return ctx;
}
COMPAT_1_0(dropin_open_device_1_0, ibv_open_device);

int
dropin_close_device_1_0(struct compat_context *context)
{
	int rc = ibv_close_device(context->real);

	if (rc == 0)
		free(context);
	return rc;
}
COMPAT_1_0(dropin_close_device_1_0, ibv_close_device);

/* The element of an event: the 1.0 object (the current one's user
 * context) on the way out, the current one on the way back. */
int
dropin_get_async_event_1_0(struct compat_context *context, struct ibv_async_event *event)
{
	if (ibv_get_async_event(context->real, event) != 0)
		return -1;
	switch (dropin_event_element(event->event_type)) {
	case EL_CQ:
		event->element.cq = event->element.cq->cq_context;
		break;
	case EL_QP:
		event->element.qp = event->element.qp->qp_context;
		break;
	case EL_SRQ:
		event->element.srq = event->element.srq->srq_context;
		break;
	case EL_WQ: case EL_PORT: case EL_NONE:
		break;
	}
	return 0;
}
COMPAT_1_0(dropin_get_async_event_1_0, ibv_get_async_event);

void
dropin_ack_async_event_1_0(struct ibv_async_event *event)
{
	struct ibv_async_event real = *event;

	switch (dropin_event_element(event->event_type)) {
	case EL_CQ:
		real.element.cq = ((struct compat_cq *)(void *)event->element.cq)->real;
		break;
	case EL_QP:
		real.element.qp = ((struct compat_qp *)(void *)event->element.qp)->real;
		break;
	case EL_SRQ:
		real.element.srq = ((struct compat_srq *)(void *)event->element.srq)->real;
		break;
	case EL_WQ: case EL_PORT: case EL_NONE:
		break;
	}
	ibv_ack_async_event(&real);
}
COMPAT_1_0(dropin_ack_async_event_1_0, ibv_ack_async_event);

int
dropin_query_device_1_0(struct compat_context *context, struct ibv_device_attr *device_attr)
{
	return ibv_query_device(context->real, device_attr);
}
COMPAT_1_0(dropin_query_device_1_0, ibv_query_device);

/* The 1.0 port attributes end before link_layer (the _compat_ibv_port_attr
 * entry's layout). */
#undef ibv_query_port
int
dropin_query_port_1_0(struct compat_context *context, uint8_t port_num,
		      struct ibv_port_attr *port_attr)
{
	return ibv_query_port(context->real, port_num,
			      (struct _compat_ibv_port_attr *)(void *)port_attr);
}
COMPAT_1_0(dropin_query_port_1_0, ibv_query_port);

int
dropin_query_gid_1_0(struct compat_context *context, uint8_t port_num, int index,
		     union ibv_gid *gid)
{
	return ibv_query_gid(context->real, port_num, index, gid);
}
COMPAT_1_0(dropin_query_gid_1_0, ibv_query_gid);

int
dropin_query_pkey_1_0(struct compat_context *context, uint8_t port_num, int index,
		      __be16 *pkey)
{
	return ibv_query_pkey(context->real, port_num, index, pkey);
}
COMPAT_1_0(dropin_query_pkey_1_0, ibv_query_pkey);

/* ---- PDs, MRs, CQs ---------------------------------------------------------------- */

struct compat_pd *
dropin_alloc_pd_1_0(struct compat_context *context)
{
	struct compat_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL)
		return NULL;
	pd->real = ibv_alloc_pd(context->real);
	if (pd->real == NULL)
		return dropin_undo_alloc(pd);
	pd->context = context;
	pd->handle = pd->real->handle;
	return pd;
}
COMPAT_1_0(dropin_alloc_pd_1_0, ibv_alloc_pd);

int
dropin_dealloc_pd_1_0(struct compat_pd *pd)
{
	int rc = ibv_dealloc_pd(pd->real);

	if (rc == 0)
		free(pd);
	return rc;
}
COMPAT_1_0(dropin_dealloc_pd_1_0, ibv_dealloc_pd);

#undef ibv_reg_mr
struct compat_mr *
dropin_reg_mr_1_0(struct compat_pd *pd, void *addr, size_t length, int access)
{
	struct compat_mr *mr = calloc(1, sizeof(*mr));

	if (mr == NULL)
		return NULL;
	mr->real = ibv_reg_mr(pd->real, addr, length, access);
	if (mr->real == NULL)
		return dropin_undo_alloc(mr);
	mr->context = pd->context;
	mr->pd = pd;
	mr->handle = mr->real->handle;
	mr->lkey = mr->real->lkey;
	mr->rkey = mr->real->rkey;
	return mr;
}
COMPAT_1_0(dropin_reg_mr_1_0, ibv_reg_mr);

int
dropin_dereg_mr_1_0(struct compat_mr *mr)
{
	int rc = ibv_dereg_mr(mr->real);

	if (rc == 0)
		free(mr);
	return rc;
}
COMPAT_1_0(dropin_dereg_mr_1_0, ibv_dereg_mr);

struct compat_cq *
dropin_create_cq_1_0(struct compat_context *context, int cqe, void *cq_context,
		     struct ibv_comp_channel *channel, int comp_vector)
{
	struct compat_cq *cq = calloc(1, sizeof(*cq));

	if (cq == NULL)
		return NULL;
	/* its events name the 1.0 CQ (ibv_get_cq_event's cq_context) */
	cq->real = ibv_create_cq(context->real, cqe, cq, channel, comp_vector);
	if (cq->real == NULL)
		return dropin_undo_alloc(cq);
	cq->context = context;
	cq->cq_context = cq_context;
	cq->handle = cq->real->handle;
	cq->cqe = cq->real->cqe;
	pthread_mutex_init(&cq->mutex, NULL);
	pthread_cond_init(&cq->cond, NULL);
	return cq;
}
COMPAT_1_0(dropin_create_cq_1_0, ibv_create_cq);

int
dropin_resize_cq_1_0(struct compat_cq *cq, int cqe)
{
	return ibv_resize_cq(cq->real, cqe);
}
COMPAT_1_0(dropin_resize_cq_1_0, ibv_resize_cq);

int
dropin_destroy_cq_1_0(struct compat_cq *cq)
{
	int rc = ibv_destroy_cq(cq->real);

	if (rc != 0)
		return rc;
	pthread_cond_destroy(&cq->cond);
	pthread_mutex_destroy(&cq->mutex);
	free(cq);
	return 0;
}
COMPAT_1_0(dropin_destroy_cq_1_0, ibv_destroy_cq);

int
dropin_get_cq_event_1_0(struct ibv_comp_channel *channel, struct compat_cq **cq,
			void **cq_context)
{
	struct ibv_cq *real;
	void *ctx;

	if (ibv_get_cq_event(channel, &real, &ctx) != 0)
		return -1;
	*cq = ctx;
	*cq_context = (*cq)->cq_context;
	return 0;
}
COMPAT_1_0(dropin_get_cq_event_1_0, ibv_get_cq_event);

void
dropin_ack_cq_events_1_0(struct compat_cq *cq, unsigned int nevents)
{
	ibv_ack_cq_events(cq->real, nevents);
}
COMPAT_1_0(dropin_ack_cq_events_1_0, ibv_ack_cq_events);

/* ---- SRQs, QPs, AHs --------------------------------------------------------------- */

struct compat_srq *
dropin_create_srq_1_0(struct compat_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct compat_srq *srq = calloc(1, sizeof(*srq));

	if (srq == NULL)
		return NULL;
	srq->real = ibv_create_srq(pd->real, attr);
	if (srq->real == NULL)
		return dropin_undo_alloc(srq);
	srq->real->srq_context = srq;
	srq->context = pd->context;
	srq->srq_context = attr->srq_context;
	srq->pd = pd;
	srq->handle = srq->real->handle;
	pthread_mutex_init(&srq->mutex, NULL);
	pthread_cond_init(&srq->cond, NULL);
	return srq;
}
COMPAT_1_0(dropin_create_srq_1_0, ibv_create_srq);

int
dropin_modify_srq_1_0(struct compat_srq *srq, struct ibv_srq_attr *attr, int attr_mask)
{
	return ibv_modify_srq(srq->real, attr, attr_mask);
}
COMPAT_1_0(dropin_modify_srq_1_0, ibv_modify_srq);

int
dropin_query_srq_1_0(struct compat_srq *srq, struct ibv_srq_attr *attr)
{
	return ibv_query_srq(srq->real, attr);
}
COMPAT_1_0(dropin_query_srq_1_0, ibv_query_srq);

int
dropin_destroy_srq_1_0(struct compat_srq *srq)
{
	int rc = ibv_destroy_srq(srq->real);

	if (rc != 0)
		return rc;
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	free(srq);
	return 0;
}
COMPAT_1_0(dropin_destroy_srq_1_0, ibv_destroy_srq);

struct compat_qp *
dropin_create_qp_1_0(struct compat_pd *pd, struct compat_qp_init_attr *attr)
{
	struct ibv_qp_init_attr real_attr = {
		.qp_context = attr->qp_context,
		.send_cq = attr->send_cq->real,
		.recv_cq = attr->recv_cq->real,
		.srq = attr->srq != NULL ? attr->srq->real : NULL,
		.cap = attr->cap,
		.qp_type = attr->qp_type,
		.sq_sig_all = attr->sq_sig_all,
	};
	struct compat_qp *qp = calloc(1, sizeof(*qp));

	if (qp == NULL)
		return NULL;
	qp->real = ibv_create_qp(pd->real, &real_attr);
	if (qp->real == NULL)
		return dropin_undo_alloc(qp);
	qp->real->qp_context = qp;
	qp->context = pd->context;
	qp->qp_context = attr->qp_context;
	qp->pd = pd;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->srq = attr->srq;
	qp->handle = qp->real->handle;
	qp->qp_num = qp->real->qp_num;
	qp->state = IBV_QPS_RESET;
	qp->qp_type = attr->qp_type;
	pthread_mutex_init(&qp->mutex, NULL);
	pthread_cond_init(&qp->cond, NULL);
	attr->cap = real_attr.cap;	/* the capacities granted */
	return qp;
}
COMPAT_1_0(dropin_create_qp_1_0, ibv_create_qp);

int
dropin_query_qp_1_0(struct compat_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		    struct compat_qp_init_attr *init_attr)
{
	struct ibv_qp_init_attr real_init;
	int rc = ibv_query_qp(qp->real, attr, attr_mask, &real_init);

	if (rc != 0)
		return rc;
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->cap = real_init.cap;
	init_attr->qp_type = real_init.qp_type;
	init_attr->sq_sig_all = real_init.sq_sig_all;
	return 0;
}
COMPAT_1_0(dropin_query_qp_1_0, ibv_query_qp);

int
dropin_modify_qp_1_0(struct compat_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	int rc = ibv_modify_qp(qp->real, attr, attr_mask);

	if (rc == 0 && (attr_mask & IBV_QP_STATE))
		qp->state = attr->qp_state;
	return rc;
}
COMPAT_1_0(dropin_modify_qp_1_0, ibv_modify_qp);

int
dropin_destroy_qp_1_0(struct compat_qp *qp)
{
	int rc = ibv_destroy_qp(qp->real);

	if (rc != 0)
		return rc;
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	free(qp);
	return 0;
}
COMPAT_1_0(dropin_destroy_qp_1_0, ibv_destroy_qp);

struct compat_ah *
dropin_create_ah_1_0(struct compat_pd *pd, struct ibv_ah_attr *attr)
{
	struct compat_ah *ah = calloc(1, sizeof(*ah));

	if (ah == NULL)
		return NULL;
	ah->real = ibv_create_ah(pd->real, attr);
	if (ah->real == NULL)
		return dropin_undo_alloc(ah);
	ah->context = pd->context;
	ah->pd = pd;
	ah->handle = ah->real->handle;
	return ah;
}
COMPAT_1_0(dropin_create_ah_1_0, ibv_create_ah);

int
dropin_destroy_ah_1_0(struct compat_ah *ah)
{
	int rc = ibv_destroy_ah(ah->real);

	if (rc == 0)
		free(ah);
	return rc;
}
COMPAT_1_0(dropin_destroy_ah_1_0, ibv_destroy_ah);

int
dropin_attach_mcast_1_0(struct compat_qp *qp, union ibv_gid *gid, uint16_t lid)
{
	return ibv_attach_mcast(qp->real, gid, lid);
}
COMPAT_1_0(dropin_attach_mcast_1_0, ibv_attach_mcast);

int
dropin_detach_mcast_1_0(struct compat_qp *qp, union ibv_gid *gid, uint16_t lid)
{
	return ibv_detach_mcast(qp->real, gid, lid);
}
COMPAT_1_0(dropin_detach_mcast_1_0, ibv_detach_mcast);

/*
 * The provider registration of libibverbs before rdma-core 13, which old
 * usnic providers of libfabric still call: nothing to register (as in
 * rdma-core, where it is a stub too).
 */
void
dropin_register_driver_1_1(const char *name, void *init_func)
{
	(void)name;
	(void)init_func;
}
__asm__(".symver dropin_register_driver_1_1, ibv_register_driver@IBVERBS_1.1");
